/* SPDX-License-Identifier: MIT */
/*
 * sweep --verify CONFIG --lib LIB, one rule set (cmd/libverify.c): paired launches
 * (tune/paired.c) of `colltune run --lib LIB --sizes ...` with the export's loader variables
 * set (A, run --keep-rules) and cleared (B), warmed up past the library's one-time costs,
 * then the judgement and its table (ct_verify_judge).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../algos/coll.h"
#include "../backend/libmod.h"
#include "../lib/file.h"
#include "../output/config.h"
#include "../output/export.h"
#include "../output/sweep_out.h"
#include "../tune/stats.h"
#include "cmd.h"
#include "librun.h"

/* One run of `run --lib` over the sizes with -w warm, the export's loader variables set (A)
 * or not (B); t[k] = out-of-place time at size k. */
static int run_part(const struct ct_verify_side *x, bool with, const uint64_t *sz, int nsz,
                    double *t, char *warm)
{
    const struct ct_ruleset *s = x->s;
    char n[16], sizes[CT_VERIFY_MAXSZ * 24];
    size_t off = 0;
    for (int k = 0; k < nsz; k++)
        off += (size_t)snprintf(sizes + off, sizeof sizes - off, "%s%llu", k ? "," : "",
                                (unsigned long long)sz[k]);
    snprintf(n, sizeof n, "%d", s->nranks);
    char *args[] = {"run",
                    "--lib",
                    (char *)x->m->name,
                    "--coll",
                    (char *)ct_coll_name(s->coll),
                    "--sizes",
                    (char *)sizes,
                    "-n",
                    "20",
                    "-w",
                    warm,
                    "-c",
                    "0",
                    "-d",
                    (char *)ct_dtype_name(s->dtype),
                    "-o",
                    (char *)ct_redop_name(s->op),
                    "--timeout",
                    (char *)x->timeout,
                    "--place",
                    "out",
                    "--max-time",
                    CT_VERIFY_SPAN,
                    "--keep-rules"}; /* A: the file the loader variables name */
    bool rules = with && !(x->env && x->env_alone);
    ct_verify_side_env(x->m, x->ld, rules);
    for (int i = 0; x->env && i < x->env->nenv; i++) /* after: the loader names them too */
        ct_libmod_env_put(x->m, x->env->env[i].name,
                          with || (!x->env_alone && !x->whole) ? x->env->env[i].value : NULL);
    char *out;
    bool said;
    int rc = ct_lib_job(x->o, "sweep", s->nranks, (int)(sizeof args / sizeof args[0]) - !rules,
                        args, &out, &said),
        got = 0;
    for (char *line = out && !rc ? strtok(out, "\n") : NULL; line; line = strtok(NULL, "\n")) {
        unsigned long long size;
        double us;
        if (line[0] != '#' && sscanf(line, "%llu %*s %*s %*s %*s %*s %lf", &size, &us) == 2)
            for (int k = 0; k < nsz; k++)
                if (sz[k] == size) {
                    t[k] = us;
                    got++;
                }
    }
    free(out);
    if (said) /* interrupted, or the launcher could not bring the job up: said */
        return rc;
    if (rc != 0 || got != nsz)
        return ct_cmd_fail("sweep", rc == 2 ? CT_EXIT_USAGE : CT_EXIT_FAIL,
                           "%s: a run with %s %s failed (exit %d, %d of %d sizes)",
                           x->what ? x->what : "--verify", x->m->title,
                           !with                    ? "defaults"
                           : x->env && x->env_alone ? "and the launch settings"
                                                    : "and the exported file",
                           rc, got, nsz);
    return 0;
}

/* One launch (ct_paired_launch_fn): the sizes up to CT_VERIFY_WARM_MAX after 200 warmup calls each,
 * the larger ones after 3. A library's one-time costs (MPICH 4.0.2's recursive doubling read
 * 18 us at 128 B on 2 ranks after 3 warmup calls, 0.7 us after 100) are not what a job's
 * calls cost; 200 calls at 256 KiB take about 10 ms here. */
int ct_libverify_launch(void *ctx, bool with, const uint64_t *sz, int nsz, double *t)
{
    int small = 0, code;
    while (small < nsz && sz[small] <= CT_VERIFY_WARM_MAX) /* sz is sorted */
        small++;
    code = small ? run_part(ctx, with, sz, small, t, "200") : 0;
    return code || small == nsz ? code
                                : run_part(ctx, with, sz + small, nsz - small, t + small, "3");
}

int ct_verify_again(struct ct_verify_side *x, const uint64_t *sz, const bool *own,
                    const struct ct_paired *pr, const struct ct_paired_row *w, bool groups,
                    const char *where, struct ct_paired_redo *r, bool *cleared)
{
    int code = ct_paired_again(pr, sz, own, w, groups, CT_VERIFY_WARM_MAX, ct_libverify_launch, x,
                               r, cleared);
    if (!code)
        ct_paired_print_again(stdout, sz, w, r, groups, where, "fresh launches");
    return code;
}

int ct_libverify_set(const struct ct_verify_side *base, const struct ct_config *c,
                     const struct ct_ruleset *s, bool *slow, bool *nogain,
                     struct ct_paired_cut *cut, double *geo)
{
    uint64_t sz[CT_VERIFY_MAXSZ];
    /* own: the file keeps the library's choice there, both sides run the same */
    bool own[CT_VERIFY_MAXSZ], swept[CT_VERIFY_MAXSZ];
    const struct ct_rule *rule[CT_VERIFY_MAXSZ];
    int group[CT_VERIFY_MAXSZ], nsz = ct_paired_sizes(&c->sweep, s, sz, swept, CT_VERIFY_MAXSZ);
    ct_verify_rules(s, sz, nsz, rule, own, group);
    struct ct_verify_side x = *base;
    x.s = s;
    struct ct_paired pr;
    int code =
        ct_paired_measure(sz, nsz, own, group, CT_VERIFY_WARM_MAX, ct_libverify_launch, &x, &pr);
    *geo = 0;
    bool cleared[CT_VERIFY_MAXSZ] = {false}; /* slower, but not again in fresh launches */
    struct ct_paired_redo r = {0};
    if (!code) {
        struct ct_paired_row w[CT_VERIFY_MAXSZ];
        struct ct_paired_sum t;
        ct_paired_judge(&pr, own, nsz, w, &t);
        if (t.slower)
            code = ct_verify_again(&x, sz, own, &pr, w, true, "in the table below", &r, cleared);
    }
    if (!code)
        code = ct_verify_judge(base->m->title, "alternating launches (A B B A A B ...)", s, sz, nsz,
                               swept, rule, own, cleared, &r, &pr, true, slow, nogain, cut, geo);
    ct_paired_redo_release(&r);
    ct_paired_release(&pr);
    return code;
}

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
    if (rc == 0)
        ct_export_loader(&x->out, x->ld);
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
