/* SPDX-License-Identifier: MIT */
/* A point measured over any engine (backend.h), as ct_bench_point over the native one. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "bench.h"

int ct_backend_point(const struct ct_backend *be, void *ctx, const struct ct_algo *a,
                     const struct ct_job *j, const struct ct_bench_cfg *cfg, struct ct_point *out,
                     struct ct_err *err)
{
    int iters = cfg->iters > 0 ? cfg->iters : 1;
    long wrong = 0;
    memset(out, 0, sizeof *out);
    CT_TRY(be->begin(ctx, a, j, cfg->check > 0, &wrong, err));
    double *t = ct_xmalloc(sizeof(double) * (size_t)iters), first = 0;
    int rc = 0, warmup = cfg->warmup, reps = cfg->reps, have = 0; /* samples the probe gave */
    if (reps == CT_BENCH_REPS_AUTO) { /* the samples are the slowest rank's: alike everywhere */
        double pr[CT_BENCH_REPS_PROBE];
        rc = be->time(ctx, warmup, CT_BENCH_REPS_PROBE, 1, pr, err);
        warmup = 0;
        reps = rc ? 1 : ct_bench_reps_auto(pr, iters, t, &have);
        first = have ? ct_bench_median3(pr) : 0; /* the call --max-time goes by */
    }
    reps = reps > 1 ? reps : 1;
    if (rc == 0 && cfg->max_s > 0 && iters > CT_BENCH_SPAN_MIN) { /* first: alike everywhere */
        if (!have) {
            rc = be->time(ctx, warmup, 1, reps, &first, err);
            warmup = 0;
            /* one call that says cut may be a hiccup (a first call 1000x the next ones cut
             * run's 20 samples of 8 B to 4): two more, kept as the first samples with it, and
             * their median decides */
            if (rc == 0 && first * reps * iters > cfg->max_s * 1e6) {
                t[0] = first;
                rc = be->time(ctx, 0, CT_BENCH_REPS_PROBE - 1, reps, t + 1, err);
                have = CT_BENCH_REPS_PROBE;
                first = ct_bench_median3(t);
            }
        }
        if (rc == 0 && first * reps * iters > cfg->max_s * 1e6) { /* at least the probe's 3 */
            double fit = ceil(cfg->max_s * 1e6 / (first * reps));
            iters = fit > CT_BENCH_SPAN_MIN ? (int)fit : CT_BENCH_SPAN_MIN;
        }
    }
    if (rc == 0 && iters > have)
        rc = be->time(ctx, warmup, iters - have, reps, t + have, err);
    for (int k = 1; rc == 0 && be->recheck && k < cfg->check; k++) { /* -c N: N passes */
        long w = 0;
        rc = be->recheck(ctx, k, &w, err);
        wrong += w;
    }
    be->end(ctx);
    if (rc == 0) {
        ct_point_stats(out, j, j->shape.nranks, t, iters);
        out->wrong = cfg->check > 0 ? wrong : -1;
        out->reps = reps;
    }
    free(t);
    return rc;
}
