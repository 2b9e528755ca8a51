/* SPDX-License-Identifier: MIT */
/*
 * sweep --verify CONFIG --lib nccl: NCCL with colltune's tuner plugin reading CONFIG's measured
 * NCCL section (A: what `export --format nccl-plugin` makes a job load) against NCCL's own
 * choices (B), on the same communicators in this process: the plugin's bypass switches the
 * sides between passes over the sizes (A B, B A, ...: tune/paired.c), so each pair runs on
 * the same GPUs and links moments apart. The sizes, controls, verdict and table are those of
 * the MPI libraries' verify (cmd/libverify.c), a size found slower measured again (with its
 * controls and its rule's other sizes) in fresh passes and counted only when slower again;
 * exit 3 when a size is slower beyond the
 * intervals, and CONFIG with the ranges found slower set back to NCCL's own choice is written
 * beside it (NAME.verified.json); on exit 0 that copy marks each rule verified ("verified":
 * {"at", "geomean"} in the rule), as for the MPI libraries. Not yet run on a GPU (README,
 * "GPU clusters").
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

#define MAXSZ 128
#define MAXRANGES 64
#define HOW "alternating passes on the same communicators (A B B A A B ...)"

struct nv {
    const struct ct_opts *o;
    const struct ct_config *c;
    const char *path;
    struct ct_nr_table t;
};

/* A with the plugin's config, B with NCCL's own choices (the plugin's bypass). */
static int side(void *n, bool with, struct ct_err *err)
{
    return ct_nccl_tuner_bypass(n, !with, err);
}

/* slow[r]: range r of s was slower than NCCL's defaults at a size it tunes; nogain[r]: it
 * showed no gain; cut[r]: a slower range's cut to the sizes that gained (ct_verify_judge);
 * *geo: the sizes' geomean (0 on a failure). */
static int verify_rule(const struct nv *x, const struct ct_backend *be, struct ct_nccl *n,
                       const struct ct_comm *comm, const struct ct_ruleset *s, bool *slow,
                       bool *nogain, struct ct_paired_cut *cut, double *geo)
{
    uint64_t sz[MAXSZ];
    bool own[MAXSZ], swept[MAXSZ]; /* own: NCCL's own choice on both sides there, a control */
    const struct ct_rule *rule[MAXSZ];
    int group[MAXSZ], nsz = ct_paired_sizes(&x->c->sweep, s, sz, swept, MAXSZ);
    ct_verify_rules(s, sz, nsz, rule, own, group);
    struct ct_err err = {0};
    struct ct_paired_engine e = {.be = be,
                                 .ctx = n,
                                 .warmup = 20,
                                 .iters = 20,
                                 .pairs = x->o->pairs,
                                 .side = side,
                                 .arg = n,
                                 .err = &err};
    ct_opts_job(x->o, comm, 1, &e.job);
    e.job.coll = s->coll;
    e.job.dtype = s->dtype;
    e.job.op = s->op;
    struct ct_paired pr;
    struct ct_paired_redo r = {0};
    bool cleared[MAXSZ] = {false}; /* slower, but not again in fresh passes */
    int rc = ct_paired_engine_measure(&e, sz, nsz, own, group, &pr), code = 0;
    *geo = 0;
    if (rc >= 0) { /* a size found slower measured again, with its controls and rule */
        struct ct_paired_row w[MAXSZ];
        struct ct_paired_sum t;
        ct_paired_judge(&pr, own, nsz, w, &t);
        rc = t.slower ? ct_paired_engine_again(&e, &pr, sz, own, w, &r, cleared) : 0;
        if (rc >= 0 && comm->rank == 0)
            ct_paired_print_again(stdout, sz, w, &r, true, "in the table below",
                                  "fresh passes on the same communicators");
    }
    if (rc < 0)
        code = ct_cmd_fail("sweep", err.code == CT_EUNSUPP ? CT_EXIT_USAGE : CT_EXIT_FAIL,
                           "rank %d: --verify: %s", comm->rank, err.msg);
    else {
        struct ct_verify_hooks h; /* the root's tables */
        ct_verify_hooks_init(&h, x->o);
        code = ct_verify_judge(comm->rank == 0 ? &h : NULL, "NCCL", HOW, s, sz, nsz, swept, rule,
                               own, cleared, &r, &pr, slow, nogain, cut, geo);
    }
    ct_paired_redo_release(&r);
    ct_paired_release(&pr);
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
        return ct_cmd_fail("sweep", CT_EXIT_FAIL, "rank %d (%s): %s", boot->rank, boot->host,
                           err.msg);
    int code = 0, verified = 0, nstamped = 0, nown = 0, nunmarked = 0, nj[CT_JUDGED_N] = {0};
    /* CONFIG with the slower ranges and those with no gain set back to NCCL's own, those
     * slower only at an edge cut, and the rules found no slower marked verified */
    struct ct_config *fixed = NULL;
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
    for (int i = 0; (!code || code == CT_EXIT_CHECK) && i < nsets; i++) {
        const struct ct_ruleset s = sets[i];
        /* alltoall is grouped send/receive, which NCCL asks no tuner about */
        if (s.nranks != comm.size || s.nnodes != 1 || s.coll == CT_ALLTOALL ||
            s.nrules > MAXRANGES) {
            if (comm.rank == 0)
                printf("%s on %d ranks, %d nodes: not verified here (%s)\n\n", ct_coll_name(s.coll),
                       s.nranks, s.nnodes,
                       s.coll == CT_ALLTOALL ? "no tuner is asked about it" : "another shape");
            continue;
        }
        bool *slow = ct_xcalloc((size_t)s.nrules, sizeof *slow),
             *nogain = ct_xcalloc((size_t)s.nrules, sizeof *nogain);
        struct ct_paired_cut *cut = ct_xcalloc((size_t)s.nrules, sizeof *cut);
        double geo;
        int r = verify_rule(x, &be, n, &comm, &s, slow, nogain, cut, &geo);
        if (r && (r != CT_EXIT_CHECK || !code)) /* a failure outweighs exit 3 */
            code = r;
        verified++;
        fixed = fixed || comm.rank ? fixed : ct_config_copy(x->c); /* rank 0 writes it */
        int was = nj[CT_JUDGED_SLOW] + nj[CT_JUDGED_CUT];
        ct_config_lib_judged(fixed, "nccl", -1, &s, slow, nogain, cut, nj);
        bool own = r == CT_EXIT_CHECK && nj[CT_JUDGED_SLOW] + nj[CT_JUDGED_CUT] == was;
        /* after the demotions, which clear it: a rule found slower loses a record it had from
         * an earlier verify; one that only lost ranges with no gain keeps this one */
        bool stamped = fixed && ct_config_lib_verified_at(fixed, "nccl", s.coll, s.nranks, s.nnodes,
                                                          r ? 0 : geo);
        nstamped += stamped;
        nown += fixed && own; /* slower only where it keeps NCCL's own choice */
        nunmarked += fixed && own && s.verified.at[0];
        free(slow);
        free(nogain);
        free(cut);
    }
    for (int i = 0; i < nsets; i++)
        ct_ruleset_release(&sets[i]);
    free(sets);
    bool judged = nj[CT_JUDGED_SLOW] || nj[CT_JUDGED_NOGAIN] || nj[CT_JUDGED_CUT];
    if (code == CT_EXIT_CHECK && comm.rank == 0)
        ct_verify_say_slower("NCCL", nj[CT_JUDGED_SLOW] || nj[CT_JUDGED_CUT]);
    if (comm.rank == 0 && fixed && (nstamped || judged || nunmarked) &&
        (code == 0 || code == CT_EXIT_CHECK))
        code = ct_verify_write_fixed(fixed, x->path, nj, nstamped, nown, nunmarked, false, false,
                                     "NCCL", code);
    else if (comm.rank == 0 && code == CT_EXIT_CHECK)
        ct_verify_say_unchanged();
    if (fixed)
        ct_config_release(fixed);
    free(fixed);
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
