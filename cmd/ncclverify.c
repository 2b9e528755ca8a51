/* SPDX-License-Identifier: MIT */
/*
 * sweep --verify CONFIG --lib nccl: NCCL with colltune's tuner plugin reading CONFIG's measured
 * NCCL section (A: what `export --format nccl-plugin` makes a job load) against NCCL's own
 * choices (B), on the same communicators in this process: the plugin's bypass switches the
 * sides between passes over the sizes (A B, B A, ...: tune/paired.c), so each pair runs on
 * the same GPUs and links moments apart. The sizes, controls, verdict and table are those of
 * the MPI libraries' verify, a size found slower measured again (with its controls and its
 * rule's other sizes) in fresh passes and counted only when slower again; exit 3 when a size is
 * slower beyond the intervals, and CONFIG with the ranges found slower set back to NCCL's own
 * choice is written beside it (NAME.verified.json); on exit 0 that copy marks each rule
 * verified ("verified": {"at", "geomean", "tell"} in the rule), as for the MPI libraries. The
 * measures and verdicts are tune/ncclverify.c's; here each rank opens the communicators and
 * NCCL, and what the verify shows and writes is printed and written. Run on one GPU, one
 * rank, before the move into tune/ (README, "GPU clusters").
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../backend/nccl.h"
#include "../lib/file.h"
#include "../output/config.h"
#include "../output/sweep_out.h"
#include "../plugin/nccl_rules.h"
#include "cmd.h"
#include "librun.h"
#include "opts.h"

struct nv {
    const struct ct_opts *o;
    const struct ct_config *c;
    const char *path;
    struct ct_nr_table t;
};

static void again(const void *ctx, const uint64_t *sz, const struct ct_paired_row *w,
                  const struct ct_paired_redo *r, bool groups, const char *where)
{
    (void)ctx;
    ct_paired_print_again(stdout, sz, w, r, groups, where,
                          "fresh passes on the same communicators");
}

static bool stamp(const void *ctx, struct ct_config *c, const char *lib, const struct ct_ruleset *s,
                  double geo, double tell)
{
    (void)ctx;
    return ct_config_lib_verified_at(c, lib, s->coll, s->nranks, s->nnodes, geo, tell);
}

static int end(const void *ctx, const char *path, const struct ct_verify_end *w, int code)
{
    (void)ctx;
    fflush(stdout); /* what was said before: the lines below go to stderr */
    if (w->kind == CT_VEND_FIXED)
        return ct_verify_write_fixed(w->fixed, path, w->n, w->nstamped, w->nown, w->nunmarked,
                                     false, false, ct_config_lib_keeps_own(w->fixed, "nccl"),
                                     "NCCL", code);
    if (w->kind == CT_VEND_SLOWER)
        ct_verify_say_slower("NCCL", w->slow);
    else if (w->kind == CT_VEND_UNCHANGED)
        ct_verify_say_unchanged();
    return code;
}

static int verify_rank(struct ct_boot *boot, void *arg)
{
    struct nv *x = arg;
    struct ct_err err = {0};
    struct ct_comm comm;
    struct ct_backend be;
    struct ct_nccl *n = NULL;
    if (ct_opts_comm_open(x->o, boot, &comm, &err) < 0)
        return ct_cmd_open_fail("sweep", boot, &err);
    int code = 0, verified = 0;
    if (ct_opts_engine_open(x->o, boot, &comm, &be, &n, &err) < 0 ||
        ct_nccl_tuner_bypass(n, false, &err) < 0)
        code =
            ct_cmd_fail("sweep", CT_EXIT_FAIL, "rank %d (%s): %s", boot->rank, boot->host, err.msg);
    if (!code && comm.rank == 0)
        printf("verify %s (its NCCL section, measured with NCCL %s) on %s against its "
               "defaults\n  with the export: NCCL_TUNER_PLUGIN=%s\n"
               "  with the export: COLLTUNE_CONFIG=%s\n\n",
               x->path, x->t.version, be.library, getenv("NCCL_TUNER_PLUGIN"),
               getenv("COLLTUNE_CONFIG"));
    /* the section's rules as rulesets ("ring/LL128" or "default", id 0 where NCCL keeps its
     * own), as `show` prints them; the plugin's reader accepted the section (ct_nr_load) */
    struct ct_ruleset *sets = NULL;
    const struct ct_librules *l = ct_config_lib(x->c, "nccl");
    int nsets = l ? ct_config_lib_raw_sets(l, &sets) : 0;
    struct ct_verify_hooks h;
    ct_verify_hooks_init(&h, x->o);
    h.again = again;
    struct ct_verify_files f = {.ctx = x,
                                .copy = ct_verify_hook_copy,
                                .apply = ct_verify_hook_apply,
                                .stamp = stamp,
                                .end = end};
    struct ct_ncclverify_in in = {.h = &h,
                                  .f = &f,
                                  .c = x->c,
                                  .path = x->path,
                                  .sets = sets,
                                  .nsets = nsets,
                                  .comm = &comm,
                                  .be = &be,
                                  .ctx = n,
                                  .root = comm.rank == 0,
                                  .pairs = x->o->pairs};
    ct_opts_job(x->o, &comm, 1, &in.job);
    if (!code)
        code = ct_ncclverify(&in, &verified);
    for (int i = 0; i < nsets; i++)
        ct_ruleset_release(&sets[i]);
    free(sets);
    if (!code && !verified)
        code = comm.rank ? CT_EXIT_USAGE
                         : ct_cmd_fail("sweep", CT_EXIT_USAGE,
                                       "--verify: '%s' has no NCCL rule for %d ranks on one host",
                                       x->path, comm.size);
    code = ct_opts_engine_close(x->o, n, comm.rank, code);
    ct_comm_close(&comm);
    return code;
}

int ct_nccl_verify_check(const struct ct_opts *o, const char *path, int ranks)
{
    struct ct_nr_table t;
    struct ct_config c;
    struct ct_err err = {0};
    char msg[512];
    int match = 0;
    if (ct_config_json_read(path, &c, &err) < 0) /* as every --verify says it */
        return ct_cmd_fail("sweep", CT_EXIT_USAGE, "%s", err.msg);
    ct_config_release(&c);
    if (ct_nr_load(path, &t, msg, sizeof msg) < 0)
        return ct_cmd_fail("sweep", CT_EXIT_USAGE,
                           "--verify: '%s': its NCCL section, as colltune's tuner plugin reads "
                           "it: %s",
                           path, msg);
    for (int i = 0; i < t.nrules; i++)
        match += t.rules[i].func >= 0 && t.rules[i].nnodes == 1 &&
                 (!ranks || t.rules[i].nranks == ranks);
    bool found = t.found;
    ct_nr_free(&t);
    if (!found)
        return ct_cmd_fail("sweep", CT_EXIT_USAGE,
                           "--verify: '%s' has no measured NCCL section (colltune sweep --lib "
                           "nccl on a GPU host)",
                           path);
    if (!match)
        return ct_cmd_fail("sweep", CT_EXIT_USAGE,
                           "--verify: '%s' has no NCCL rule for %d ranks on one host (--local "
                           "N: the ranks, one per GPU)",
                           path, ranks);
    return 0;
}

int ct_nccl_verify(const struct ct_opts *o, const struct ct_config *c, const char *path)
{
    struct nv x = {o, c, path, {0}};
    char msg[512];
    if (ct_nr_load(path, &x.t, msg, sizeof msg) < 0)
        return ct_cmd_fail("sweep", CT_EXIT_USAGE, "--verify: %s", msg);
    char *abs = ct_path_absolute(path);
    setenv("COLLTUNE_CONFIG", abs, 1); /* read by the plugin at each communicator's creation */
    free(abs);
    int code = ct_opts_launch(o, "sweep", verify_rank, &x);
    ct_nr_free(&x.t);
    fflush(stdout);
    return code;
}
