/* SPDX-License-Identifier: MIT */
/* backend/point.c over an engine of known times: --batch N|auto (calls back to back per
 * sample, auto by the sweep's rule), --max-time counting an iteration's calls, and the
 * probe's samples kept where a sample is one call. backend/bench.c: the rule itself. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "backend/backend.h"
#include "backend/bench.h"

Test(batch, rule)
{
    cr_assert_eq(ct_bench_reps_for(0.78), 65 > CT_BENCH_REPS_MAX ? CT_BENCH_REPS_MAX : 65);
    cr_assert_eq(ct_bench_reps_for(0.5), CT_BENCH_REPS_MAX); /* 100, capped */
    cr_assert_eq(ct_bench_reps_for(5.0), 10);
    cr_assert_eq(ct_bench_reps_for(49.9), 2);
    cr_assert_eq(ct_bench_reps_for(CT_BENCH_REPS_US), 1);
    cr_assert_eq(ct_bench_reps_for(1e6), 1);
    cr_assert_eq(ct_bench_reps_for(INFINITY), 1);
    cr_assert_eq(ct_bench_reps_for(0), CT_BENCH_REPS_MAX);
    cr_assert_eq(ct_bench_reps_for(NAN), CT_BENCH_REPS_MAX);
    const double a[] = {3, 1, 2}, b[] = {1, 2, 3}, c[] = {2, 3, 1}, d[] = {5, 5, 1};
    cr_assert_eq(ct_bench_median3(a), 2);
    cr_assert_eq(ct_bench_median3(b), 2);
    cr_assert_eq(ct_bench_median3(c), 2);
    cr_assert_eq(ct_bench_median3(d), 5);
}

/* An engine whose one call takes call_us (the very first: first_us, where set); it records
 * each time() it is asked for. */
struct fake {
    double call_us, first_us;
    int n, warm[8], iters[8], reps[8];
};
static int f_begin(void *ctx, const struct ct_algo *a, const struct ct_job *j, bool verify,
                   long *wrong, struct ct_err *err)
{
    (void)ctx, (void)a, (void)j, (void)verify, (void)err;
    *wrong = 0;
    return 0;
}
static int f_time(void *ctx, int warmup, int iters, int reps, double *out, struct ct_err *err)
{
    struct fake *f = ctx;
    (void)err;
    cr_assert_lt(f->n, 8);
    f->warm[f->n] = warmup, f->iters[f->n] = iters, f->reps[f->n] = reps;
    f->n++;
    for (int i = 0; i < iters; i++)
        out[i] = f->call_us; /* per call, as the engines report */
    if (f->first_us > 0 && iters > 0 && f->n == 1)
        out[0] = f->first_us;
    return 0;
}
static void f_end(void *ctx)
{
    (void)ctx;
}

static struct ct_point point(struct fake *f, int iters, int reps, double max_s)
{
    struct ct_backend be = {.name = "fake", .begin = f_begin, .time = f_time, .end = f_end};
    struct ct_job j = {.coll = CT_ALLREDUCE, .dtype = CT_FLOAT32, .op = CT_SUM, .count = 2};
    j.shape = (struct ct_shape){.nranks = 2, .rank = 0, .ranks_per_node = 2};
    struct ct_bench_cfg cfg = {iters, 5, 0, reps, max_s};
    struct ct_point p;
    struct ct_err err = {0};
    cr_assert_eq(ct_backend_point(&be, f, NULL, &j, &cfg, &p, &err), 0, "%s", err.msg);
    return p;
}

Test(batch, fixed)
{
    struct fake f = {.call_us = 0.5};
    struct ct_point p = point(&f, 20, 8, 0);
    cr_assert_eq(f.n, 1);
    cr_assert(f.warm[0] == 5 && f.iters[0] == 20 && f.reps[0] == 8);
    cr_assert(p.iters == 20 && p.reps == 8 && p.time_us == 0.5);
    f = (struct fake){.call_us = 0.5};
    p = point(&f, 20, 0, 0); /* 0: one call per iteration */
    cr_assert(f.n == 1 && f.reps[0] == 1 && p.reps == 1);
}

Test(batch, auto_short)
{
    struct fake f = {.call_us = 5}; /* 50 us / 5 us: 10 calls a sample */
    struct ct_point p = point(&f, 20, CT_BENCH_REPS_AUTO, 0);
    cr_assert_eq(f.n, 2);
    cr_assert(f.warm[0] == 5 && f.iters[0] == CT_BENCH_REPS_PROBE && f.reps[0] == 1, "probe");
    cr_assert(f.warm[1] == 0 && f.iters[1] == 20 && f.reps[1] == 10, "samples");
    cr_assert(p.iters == 20 && p.reps == 10);
}

Test(batch, auto_long_keeps_the_probe)
{
    struct fake f = {.call_us = 80}; /* one call a sample: the probe's three are the first */
    struct ct_point p = point(&f, 20, CT_BENCH_REPS_AUTO, 0);
    cr_assert_eq(f.n, 2);
    cr_assert(f.iters[0] == CT_BENCH_REPS_PROBE && f.iters[1] == 20 - CT_BENCH_REPS_PROBE);
    cr_assert(p.iters == 20 && p.reps == 1);
    f = (struct fake){.call_us = 80};
    p = point(&f, 2, CT_BENCH_REPS_AUTO, 0); /* fewer asked than the probe took: those */
    cr_assert(f.n == 1 && p.iters == 2);
}

Test(batch, max_time_counts_the_calls)
{
    struct fake f = {.call_us = 0.5}; /* 4096 calls of 0.5 us: 2.048 ms a sample */
    struct ct_point p = point(&f, 20, 4096, 0.005);
    cr_assert_eq(f.n, 2); /* the first sample, two more (it says cut), kept: 3 fit 5 ms */
    cr_assert(f.iters[0] == 1 && f.reps[0] == 4096);
    cr_assert(f.iters[1] == 2 && f.warm[1] == 0 && p.iters == 3, "%d", f.iters[1]);
    /* a first call that is a hiccup (1 ms where the others take 1 us) cuts nothing: 20 */
    f = (struct fake){.call_us = 1, .first_us = 1000};
    p = point(&f, 20, 0, 0.005);
    cr_assert(f.n == 3 && f.iters[0] == 1 && f.iters[1] == 2 && f.iters[2] == 17, "%d %d", f.n,
              f.iters[2]);
    cr_assert(p.iters == 20 && p.time_us == 1, "%d %g", p.iters, p.time_us);
    f = (struct fake){.call_us = 1}; /* no cut asked for: the first call is not a sample */
    p = point(&f, 20, 0, 0.005);
    cr_assert(f.n == 2 && f.iters[1] == 20 && p.iters == 20);
    f = (struct fake){.call_us = 2e6}; /* auto, 2 s a call, 3 s: the probe's median decides */
    p = point(&f, 20, CT_BENCH_REPS_AUTO, 3);
    cr_assert_eq(f.n, 1, "no other first call");
    cr_assert(p.iters == CT_BENCH_REPS_PROBE && p.reps == 1);
}
