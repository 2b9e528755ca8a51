/* SPDX-License-Identifier: MIT */
/*
 * sweep --verify CONFIG --lib LIB: the file the export writes for a verify to load (a new file,
 * beside CONFIG across hosts), and the variables that point the library at it; the hooks a
 * verify of CONFIG (tune/libverify_config.c) writes its files through.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../backend/libmod.h"
#include "../lib/file.h"
#include "../output/config.h"
#include "../output/export.h"
#include "cmd.h"
#include "librun.h"

int ct_verify_export(const struct ct_opts *o, const struct ct_emitter *e, const char *path,
                     const struct ct_config *cfg, struct ct_verify_export *x, struct ct_err *err)
{
    struct ct_export_opts eo;
    memset(x, 0, sizeof *x);
    x->ld = ct_xcalloc(1, sizeof *x->ld);
    x->tmp = o->hosts ? ct_path_sibling(path, ".colltune-verify-XXXXXX")
                      : ct_xstrdup("/tmp/colltune-verify-XXXXXX");
    int fd = mkstemp(x->tmp);
    if (fd < 0) {
        ct_err_set(err, CT_EIO, "cannot create %s: %s", x->tmp, strerror(errno));
        free(x->tmp);
        x->tmp = NULL; /* nothing made here to remove */
        return CT_EIO;
    }
    ct_export_opts_init(&eo);
    eo.path = x->tmp;
    int rc = ct_export_run(e, cfg, &eo, &x->out, err);
    if (rc == 0) {
        ct_export_files(e, &x->out, x->tmp, &x->f);
        rc = ct_export_files_write(&x->f, err) < 0 ? CT_EIO : 0;
    }
    close(fd);
    if (rc == 0 && ct_export_loader(&x->out, x->ld) < 0)
        rc = ct_err_set(err, CT_EINVAL, "the export's loader sets more than %d variables",
                        CT_LOADER_MAX);
    return rc;
}

void ct_verify_export_release(struct ct_verify_export *x)
{
    if (x->tmp)
        unlink(x->tmp);
    for (int i = 1; i < x->f.n; i++)
        unlink(x->f.path[i]);
    ct_export_files_release(&x->f);
    ct_export_out_release(&x->out);
    free(x->tmp);
    free(x->ld);
    memset(x, 0, sizeof *x);
}

static int export(const void *ctx, const char *path, const struct ct_config *c,
                  enum ct_verify_export_kind kind, struct ct_verify_file *f)
{
    const struct ct_verify_cmd *v = ctx;
    struct ct_verify_export *x = ct_xcalloc(1, sizeof *x);
    struct ct_err err = {0};
    *f = (struct ct_verify_file){.priv = x};
    int rc = ct_verify_export(v->o, v->e, path, c, x, &err);
    f->ld = x->ld;
    if (rc == 0)
        return 0;
    if (kind == CT_VEXP_CONFIG && rc == CT_EUNSUPP && x->out.unchanged) {
        printf("the export keeps %s's defaults everywhere: nothing to verify (%s)\n", v->m->title,
               err.msg);
        f->unchanged = true;
        return 0;
    }
    if (kind == CT_VEXP_COPY)
        return ct_cmd_fail("sweep", CT_EXIT_FAIL, "--verify: the copy's export: %s", err.msg);
    return ct_cmd_fail("sweep", rc == CT_EIO ? CT_EXIT_FAIL : CT_EXIT_USAGE, "%s%s",
                       rc == CT_EIO ? "" : "--verify: ", err.msg);
}

static void unexport(const void *ctx, struct ct_verify_file *f)
{
    (void)ctx;
    if (f->priv)
        ct_verify_export_release(f->priv);
    free(f->priv);
    memset(f, 0, sizeof *f);
}

static const char *elsewhere(const void *ctx, const struct ct_ruleset *s)
{
    const struct ct_verify_cmd *v = ctx;
    return ct_verify_set_elsewhere(v->o, s);
}

struct ct_config *ct_verify_hook_copy(const void *ctx, const struct ct_config *c)
{
    (void)ctx;
    return ct_config_copy(c);
}

void ct_verify_hook_apply(const void *ctx, struct ct_config *c, const char *lib, int i,
                          const struct ct_ruleset *s, const bool *slow, const bool *nogain,
                          const struct ct_paired_cut *cut, int n[CT_JUDGED_N])
{
    (void)ctx;
    ct_config_lib_judged(c, lib, i, s, slow, nogain, cut, n);
}

static int end(const void *ctx, const char *path, const struct ct_verify_end *w, int code)
{
    const struct ct_verify_cmd *v = ctx;
    const struct ct_libmod *m = v->m;
    fflush(stdout); /* what was said before: the lines below go to stderr */
    switch (w->kind) {
    case CT_VEND_ENV_DROPPED:
        return ct_verify_write_env_dropped(w->fixed, path, w->slow, w->nenv, w->each_ran, m->name,
                                           code);
    case CT_VEND_UNMARKED: return ct_verify_write_unmarked(w->fixed, path, m->title, code);
    case CT_VEND_FIXED:
        return ct_verify_write_fixed(w->fixed, path, w->n, w->nstamped, w->nown, w->nunmarked,
                                     w->dropped, w->env_marked,
                                     ct_config_lib_keeps_own(w->fixed, m->name), m->title, code);
    case CT_VEND_SLOWER: ct_verify_say_slower(m->title, w->slow); return code;
    case CT_VEND_UNCHANGED: ct_verify_say_unchanged(); return code;
    case CT_VEND_NO_SET: return ct_verify_no_set(v->o, w->l, m->title, path, v->colls);
    }
    return code;
}

static struct ct_config *read_config(const void *ctx, const char *path, int *code)
{
    (void)ctx;
    struct ct_config *r = ct_xcalloc(1, sizeof *r);
    struct ct_err err = {0};
    if (ct_config_json_read(path, r, &err) == 0)
        return r;
    ct_config_release(r);
    free(r);
    *code = ct_cmd_fail("sweep", CT_EXIT_FAIL, "--reverify: %s", err.msg);
    return NULL;
}

void ct_verify_files_init(struct ct_verify_files *f, const struct ct_verify_cmd *x)
{
    *f = (struct ct_verify_files){.ctx = x,
                                  .export = export,
                                  .unexport = unexport,
                                  .elsewhere = elsewhere,
                                  .copy = ct_verify_hook_copy,
                                  .apply = ct_verify_hook_apply,
                                  .end = end,
                                  .read = read_config};
}
