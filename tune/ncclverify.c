/* SPDX-License-Identifier: MIT */
/*
 * sweep --verify CONFIG --lib nccl, on each rank of the job: NCCL with colltune's tuner plugin
 * reading CONFIG's measured NCCL section (A: what `export --format nccl-plugin` makes a job
 * load) against NCCL's own choices (B), on the same communicators in this process: the
 * plugin's bypass switches the sides between passes over the sizes (A B, B A, ...:
 * tune/paired.c), so each pair runs on the same GPUs and links moments apart. The sizes,
 * controls, verdict and table are those of the MPI libraries' verify (tune/libverify.c), a
 * size found slower measured again (with its controls and its rule's other sizes) in fresh
 * passes and counted only when slower again; CT_VERIFY_SLOWER when a size is slower beyond
 * the intervals, and CONFIG with the ranges found slower set back to NCCL's own choice is
 * written beside it (NAME.verified.json, through the caller's hooks); on 0 that copy marks
 * each rule verified ("verified": {"at", "geomean", "tell"} in the rule), as for the MPI
 * libraries.
 */
#include <stdio.h>
#include <stdlib.h>

#include "../backend/bench.h"
#include "../backend/comm.h"
#include "../backend/nccl.h"
#include "libverify.h"

#define MAXSZ 128
#define MAXRANGES 64 /* said as such where a set has more */
#define HOW "alternating passes on the same communicators (A B B A A B ...)"

/* A with the plugin's config, B with NCCL's own choices (the plugin's bypass). */
static int side(void *n, bool with, struct ct_err *err)
{
    return ct_nccl_tuner_bypass(n, !with, err);
}

/* One rule set s: slow[r], range r of s was slower than NCCL's defaults at a size it tunes;
 * nogain[r], it showed no gain; cut[r], a slower range's cut to the sizes that gained
 * (ct_verify_judge); *geo, the sizes' geomean (0 on a failure), *tell what it could tell. */
static int verify_set(const struct ct_ncclverify_in *in, const struct ct_ruleset *s, bool *slow,
                      bool *nogain, struct ct_paired_cut *cut, double *geo, double *tell)
{
    const struct ct_verify_hooks *h = in->root ? in->h : NULL; /* what the root shows */
    uint64_t sz[MAXSZ];
    bool own[MAXSZ], swept[MAXSZ]; /* own: NCCL's own choice on both sides there, a control */
    const struct ct_rule *rule[MAXSZ];
    int group[MAXSZ], nsz = ct_paired_sizes(&in->c->sweep, s, sz, swept, MAXSZ);
    ct_verify_rules(s, sz, nsz, rule, own, group);
    struct ct_err err = {0};
    struct ct_paired_engine e = {.be = in->be,
                                 .ctx = in->ctx,
                                 .job = in->job,
                                 .warmup = 20,
                                 .iters = 20,
                                 .reps = CT_BENCH_REPS_AUTO, /* as the sweep timed them */
                                 .pairs = in->pairs,
                                 .side = in->side ? in->side : side,
                                 .arg = in->side ? in->arg : in->ctx,
                                 .err = &err};
    e.job.coll = s->coll;
    e.job.dtype = s->dtype;
    e.job.op = s->op;
    struct ct_paired pr;
    struct ct_paired_redo r = {0};
    bool cleared[MAXSZ] = {false}; /* slower, but not again in fresh passes */
    int rc = ct_paired_engine_measure(&e, sz, nsz, own, group, &pr), code = 0;
    *geo = *tell = 0;
    if (rc >= 0) { /* a size found slower measured again, with its controls and rule */
        struct ct_paired_row w[MAXSZ];
        struct ct_paired_sum t;
        ct_paired_judge(&pr, own, nsz, w, &t);
        rc = t.slower ? ct_paired_engine_again(&e, &pr, sz, own, w, &r, cleared) : 0;
        if (rc >= 0 && h)
            h->again(h->ctx, sz, w, &r, true, "in the table below");
    }
    if (rc < 0) {
        char line[sizeof err.msg + 64];
        snprintf(line, sizeof line, "rank %d: --verify: %s", in->comm->rank, err.msg);
        code = in->h->failed(in->h->ctx, err.code == CT_EUNSUPP ? CT_VERIFY_USAGE : 1, line);
    } else {
        code = ct_verify_judge(h, "NCCL", HOW, s, sz, nsz, swept, rule, own, cleared, &r, &pr, slow,
                               nogain, cut, geo, tell);
    }
    ct_paired_redo_release(&r);
    ct_paired_release(&pr);
    return code;
}

int ct_ncclverify(const struct ct_ncclverify_in *in, int *verified)
{
    const struct ct_verify_files *f = in->f;
    int code = 0, nstamped = 0, nown = 0, nunmarked = 0, nj[CT_JUDGED_N] = {0};
    /* CONFIG with the slower ranges and those with no gain set back to NCCL's own, those
     * slower only at an edge cut, and the rules found no slower marked verified */
    struct ct_config *fixed = NULL;
    *verified = 0;
    for (int i = 0; (!code || code == CT_VERIFY_SLOWER) && i < in->nsets; i++) {
        const struct ct_ruleset *s = &in->sets[i];
        /* alltoall is grouped send/receive, which NCCL asks no tuner about */
        if (s->nranks != in->comm->size || s->nnodes != 1 || s->coll == CT_ALLTOALL ||
            s->nrules > MAXRANGES) {
            if (in->root)
                ct_verify_say(in->h, "%s on %d ranks, %d nodes: not verified here (%s)\n\n",
                              ct_coll_name(s->coll), s->nranks, s->nnodes,
                              s->coll == CT_ALLTOALL  ? "no tuner is asked about it"
                              : s->nrules > MAXRANGES ? "more than 64 ranges, more than it measures"
                                                      : "another shape");
            continue;
        }
        bool *slow = ct_xcalloc((size_t)s->nrules, sizeof *slow),
             *nogain = ct_xcalloc((size_t)s->nrules, sizeof *nogain);
        struct ct_paired_cut *cut = ct_xcalloc((size_t)s->nrules, sizeof *cut);
        double geo, tell;
        int r = verify_set(in, s, slow, nogain, cut, &geo, &tell);
        if (r && (r != CT_VERIFY_SLOWER || !code)) /* a failure outweighs exit 3 */
            code = r;
        (*verified)++;
        if (!fixed && in->root) /* the root writes the copy */
            fixed = f->copy(f->ctx, in->c);
        int was = nj[CT_JUDGED_SLOW] + nj[CT_JUDGED_CUT];
        if (fixed)
            f->apply(f->ctx, fixed, "nccl", -1, s, slow, nogain, cut, nj);
        bool own = r == CT_VERIFY_SLOWER && nj[CT_JUDGED_SLOW] + nj[CT_JUDGED_CUT] == was;
        /* after the demotions, which clear it: a rule found slower loses a record it had from
         * an earlier verify; one that only lost ranges with no gain keeps this one */
        bool stamped = fixed && f->stamp(f->ctx, fixed, "nccl", s, r ? 0 : geo, tell);
        nstamped += stamped;
        nown += fixed && own; /* slower only where it keeps NCCL's own choice */
        nunmarked += fixed && own && s->verified.at[0];
        free(slow);
        free(nogain);
        free(cut);
    }
    bool judged = nj[CT_JUDGED_SLOW] || nj[CT_JUDGED_NOGAIN] || nj[CT_JUDGED_CUT];
    if (code == CT_VERIFY_SLOWER && in->root)
        f->end(f->ctx, in->path,
               &(struct ct_verify_end){.kind = CT_VEND_SLOWER,
                                       .slow = nj[CT_JUDGED_SLOW] || nj[CT_JUDGED_CUT]},
               code);
    if (in->root && fixed && (nstamped || judged || nunmarked) &&
        (code == 0 || code == CT_VERIFY_SLOWER))
        code = f->end(f->ctx, in->path,
                      &(struct ct_verify_end){.kind = CT_VEND_FIXED,
                                              .fixed = fixed,
                                              .n = nj,
                                              .nstamped = nstamped,
                                              .nown = nown,
                                              .nunmarked = nunmarked},
                      code);
    else if (in->root && code == CT_VERIFY_SLOWER)
        f->end(f->ctx, in->path, &(struct ct_verify_end){.kind = CT_VEND_UNCHANGED}, code);
    if (fixed)
        ct_config_release(fixed);
    free(fixed);
    return code;
}
