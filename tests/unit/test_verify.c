/* SPDX-License-Identifier: MIT */
/*
 * Verifiable inputs: for every dtype x op x rank count, reducing the filled inputs with
 * the real kernels in rank order and in reverse order gives exactly ct_verify_expected;
 * inputs vary with rank, index and seed, and a misplaced block is caught.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "algos/half.h"
#include "backend/verify.h"

static const int rank_counts[] = {1, 2, 3, 7, 16, 64, 300};
#define NCOUNTS (sizeof rank_counts / sizeof rank_counts[0])
#define N 1003
#define FIRST ((1ull << 40) + 12345) /* large global indices */

static bool differs(size_t sz, const char *a, const char *b)
{
    return memcmp(a, b, sz) != 0;
}

/* Fraction (in percent) of positions where x and y differ. */
static int pct_differ(size_t sz, const char *x, const char *y, size_t n)
{
    size_t d = 0;
    for (size_t i = 0; i < n; i++)
        d += differs(sz, x + i * sz, y + i * sz);
    return (int)(100 * d / (n ? n : 1));
}

struct fixture {
    char **in; /* in[r]: rank r's input */
    char *fwd, *rev, *want;
};

static void fixture_fill(struct fixture *f, enum ct_dtype t, enum ct_redop op, int nranks,
                         uint64_t seed, size_t n)
{
    size_t sz = ct_dtype_size(t);
    f->in = calloc((size_t)nranks, sizeof *f->in);
    for (int r = 0; r < nranks; r++) {
        f->in[r] = malloc(n * sz + 1);
        ct_verify_fill(t, op, r, nranks, seed, FIRST, f->in[r], n);
    }
    f->fwd = malloc(n * sz + 1);
    f->rev = malloc(n * sz + 1);
    f->want = malloc(n * sz + 1);
}

static void fixture_release(struct fixture *f, int nranks)
{
    for (int r = 0; r < nranks; r++)
        free(f->in[r]);
    free(f->in);
    free(f->fwd);
    free(f->rev);
    free(f->want);
}

/* acc = in[0] op in[1] op ... (dst == a); reverse: in[n-1] ... op in[0] (dst == b). */
static void reduce_both_orders(struct fixture *f, enum ct_dtype t, enum ct_redop op, int nranks,
                               size_t n)
{
    ct_reduce_fn fn = ct_reduce_fn_get(t, op);
    size_t sz = ct_dtype_size(t);
    memcpy(f->fwd, f->in[0], n * sz);
    for (int r = 1; r < nranks; r++)
        fn(f->fwd, f->fwd, f->in[r], n);
    memcpy(f->rev, f->in[nranks - 1], n * sz);
    for (int r = nranks - 2; r >= 0; r--)
        fn(f->rev, f->in[r], f->rev, n);
    if (op == CT_AVG) {
        ct_scale_fn_get(t)(f->fwd, n, nranks);
        ct_scale_fn_get(t)(f->rev, n, nranks);
    }
}

Test(verify, any_order_is_exact)
{
    for (int t = 0; t < CT_DTYPE_COUNT; t++) {
        for (int op = 0; op < CT_REDOP_COUNT; op++) {
            for (size_t k = 0; k < NCOUNTS; k++) {
                int nr = rank_counts[k];
                struct fixture f;
                fixture_fill(&f, t, op, nr, 99, N);
                reduce_both_orders(&f, t, op, nr, N);
                ct_verify_expected(t, op, nr, 99, FIRST, f.want, N);
                size_t wf = ct_verify_count_wrong(t, f.fwd, f.want, N);
                size_t wr = ct_verify_count_wrong(t, f.rev, f.want, N);
                cr_assert(wf == 0 && wr == 0,
                          "%s %s nranks %d: %zu wrong in rank order (first %zu), %zu reversed",
                          ct_dtype_name(t), ct_redop_name(op), nr, wf,
                          ct_verify_first_wrong(t, f.fwd, f.want, N), wr);
                /* exact means bit-identical too, not merely NaN == NaN */
                cr_assert(memcmp(f.fwd, f.want, N * ct_dtype_size(t)) == 0);
                fixture_release(&f, nr);
            }
        }
    }
}

/* Inputs vary between ranks, between neighbouring indices, and with the seed. */
Test(verify, inputs_vary)
{
    for (int t = 0; t < CT_DTYPE_COUNT; t++) {
        for (int op = 0; op < CT_REDOP_COUNT; op++) {
            size_t sz = ct_dtype_size(t);
            struct fixture f, g;
            fixture_fill(&f, t, op, 64, 5, N);
            fixture_fill(&g, t, op, 64, 6, N);
            const char *name = ct_dtype_name(t), *opn = ct_redop_name(op);
            cr_assert_gt(pct_differ(sz, f.in[0], f.in[1], N), 25, "%s %s ranks", name, opn);
            cr_assert_gt(pct_differ(sz, f.in[7], f.in[7] + sz, N - 1), 25, "%s %s index", name,
                         opn);
            cr_assert_gt(pct_differ(sz, f.in[0], g.in[0], N), 25, "%s %s seed", name, opn);
            /* and the same call gives the same bits */
            ct_verify_fill(t, op, 1, 64, 6, FIRST, f.fwd, N);
            cr_assert(memcmp(f.fwd, g.in[1], N * sz) == 0, "%s %s not deterministic", name, opn);
            /* the result itself is not constant */
            ct_verify_expected(t, op, 64, 5, FIRST, f.want, N);
            cr_assert_gt(pct_differ(sz, f.want, f.want + sz, N - 1), 10, "%s %s result", name, opn);
            fixture_release(&f, 64);
            fixture_release(&g, 64);
        }
    }
}

/* A rank's block taken from the wrong offset, or a rank missing, changes the result. */
Test(verify, misplaced_block_is_caught)
{
    for (int t = 0; t < CT_DTYPE_COUNT; t++) {
        for (int op = 0; op < CT_REDOP_COUNT; op++) {
            int nr = 7;
            size_t sz = ct_dtype_size(t);
            struct fixture f;
            fixture_fill(&f, t, op, nr, 11, N);
            ct_verify_expected(t, op, nr, 11, FIRST, f.want, N);

            ct_verify_fill(t, op, 3, nr, 11, FIRST + 1, f.in[3], N); /* shifted by one */
            reduce_both_orders(&f, t, op, nr, N);
            size_t wrong = ct_verify_count_wrong(t, f.fwd, f.want, N);
            cr_assert_gt(wrong, N / 20, "%s %s shifted block: %zu wrong", ct_dtype_name(t),
                         ct_redop_name(op), wrong);

            ct_verify_fill(t, op, 3, nr, 11, FIRST, f.in[3], N);
            memcpy(f.in[3], f.in[2], N * sz); /* rank 2's data twice */
            reduce_both_orders(&f, t, op, nr, N);
            wrong = ct_verify_count_wrong(t, f.fwd, f.want, N);
            cr_assert_gt(wrong, N / 20, "%s %s duplicated rank: %zu wrong", ct_dtype_name(t),
                         ct_redop_name(op), wrong);
            fixture_release(&f, nr);
        }
    }
}

/*
 * Leaving out any one rank changes a good share of the results, for min/max too: which
 * rank holds the extreme value moves with the index.
 */
Test(verify, missing_rank_is_caught)
{
    enum { NR = 7 };
    for (int t = 0; t < CT_DTYPE_COUNT; t++) {
        for (int op = 0; op < CT_REDOP_COUNT; op++) {
            if (op == CT_AVG)
                continue; /* the divisor would differ anyway */
            struct fixture f;
            fixture_fill(&f, t, op, NR, 12, N);
            ct_verify_expected(t, op, NR, 12, FIRST, f.want, N);
            ct_reduce_fn fn = ct_reduce_fn_get(t, op);
            size_t sz = ct_dtype_size(t);
            for (int skip = 0; skip < NR; skip++) {
                int first = skip == 0 ? 1 : 0;
                memcpy(f.fwd, f.in[first], N * sz);
                for (int r = first + 1; r < NR; r++)
                    if (r != skip)
                        fn(f.fwd, f.fwd, f.in[r], N);
                size_t wrong = ct_verify_count_wrong(t, f.fwd, f.want, N);
                cr_assert_gt(wrong, N / 30, "%s %s without rank %d: only %zu wrong",
                             ct_dtype_name(t), ct_redop_name(op), skip, wrong);
            }
            fixture_release(&f, NR);
        }
    }
}

/* A partial buffer is the matching slice of the whole one (global indices). */
Test(verify, slices_match_whole)
{
    for (int t = 0; t < CT_DTYPE_COUNT; t++) {
        size_t sz = ct_dtype_size(t);
        char *whole = malloc(N * sz), *part = malloc(N * sz);
        ct_verify_fill(t, CT_SUM, 2, 4, 3, FIRST, whole, N);
        ct_verify_fill(t, CT_SUM, 2, 4, 3, FIRST + 100, part, 200);
        cr_assert(memcmp(whole + 100 * sz, part, 200 * sz) == 0, "%s fill", ct_dtype_name(t));
        ct_verify_expected(t, CT_AVG, 4, 3, FIRST, whole, N);
        ct_verify_expected(t, CT_AVG, 4, 3, FIRST + 100, part, 200);
        cr_assert(memcmp(whole + 100 * sz, part, 200 * sz) == 0, "%s expected", ct_dtype_name(t));
        free(whole);
        free(part);
    }
}

Test(verify, compare)
{
    float a[6] = {1, 2, 3, 0.0f, 5, 6}, b[6] = {1, 2, 3, -0.0f, 5, 7};
    uint32_t nan1 = 0x7fc00000u, nan2 = 0xffc00123u;
    memcpy(&a[0], &nan1, 4);
    memcpy(&b[0], &nan2, 4);
    cr_assert_eq(ct_verify_count_wrong(CT_FLOAT32, a, b, 6), 2); /* -0 vs +0, 6 vs 7 */
    cr_assert_eq(ct_verify_first_wrong(CT_FLOAT32, a, b, 6), 3);
    cr_assert_eq(ct_verify_count_wrong(CT_FLOAT32, a, b, 3), 0);
    cr_assert_eq(ct_verify_first_wrong(CT_FLOAT32, a, b, 3), 3);
    /* the same bits as int32: a NaN pattern is just a number there */
    cr_assert_eq(ct_verify_count_wrong(CT_INT32, a, b, 1), 1);

    uint16_t h[3] = {0x7e00, 0x7c00, 0x3c00}, g[3] = {0xfd01, 0x7c00, 0x3c01};
    cr_assert_eq(ct_verify_count_wrong(CT_FLOAT16, h, g, 3), 1);
    cr_assert_eq(ct_verify_count_wrong(CT_BFLOAT16, h, g, 3), 2); /* 0xfd01 is finite there */
    double d[2] = {1.0, 2.0}, e[2] = {1.0, 2.0000000000000004};
    cr_assert_eq(ct_verify_count_wrong(CT_FLOAT64, d, e, 2), 1);
    uint8_t u[3] = {1, 2, 3}, v[3] = {1, 2, 4};
    cr_assert_eq(ct_verify_count_wrong(CT_UINT8, u, v, 3), 1);
    cr_assert_eq(ct_verify_count_wrong(CT_UINT8, u, v, 0), 0);
    /* long buffers are compared in pieces: differences in several pieces, at their edges,
     * and NaNs of other bits all count as before */
    size_t n = 100000;
    float *x = calloc(n, sizeof *x), *y = calloc(n, sizeof *y);
    cr_assert(x && y);
    size_t at[] = {0, 16383, 16384, 50000, n - 1};
    for (size_t k = 0; k < sizeof at / sizeof at[0]; k++)
        y[at[k]] = 1;
    memcpy(&x[70000], &nan1, 4);
    memcpy(&y[70000], &nan2, 4);
    cr_assert_eq(ct_verify_count_wrong(CT_FLOAT32, x, y, n), 5);
    cr_assert_eq(ct_verify_count_wrong(CT_FLOAT32, x, y, n - 1), 4);
    cr_assert_eq(ct_verify_count_wrong(CT_INT32, x, y, n), 6);
    free(x);
    free(y);
}

/* The float inputs are what the header promises: no NaN, no -0, prod mostly +-1. */
Test(verify, float_inputs_are_tame)
{
    float x[N];
    uint16_t h[N];
    for (int op = 0; op < CT_REDOP_COUNT; op++) {
        ct_verify_fill(CT_FLOAT32, op, 1, 16, 8, FIRST, x, N);
        ct_verify_fill(CT_BFLOAT16, op, 1, 16, 8, FIRST, h, N);
        for (size_t i = 0; i < N; i++) {
            cr_assert(x[i] == x[i] && (x[i] != 0 || !signbit(x[i])), "float32 %g", x[i]);
            float b = ct_bf16_to_f32(h[i]);
            cr_assert(b == b && (b != 0 || !signbit(b)), "bfloat16 %#x", h[i]);
            if (op == CT_SUM || op == CT_AVG)
                cr_assert(b >= -4 && b <= 4 && b == (int)b, "bfloat16 sum input %g", b);
        }
    }
    size_t ones = 0;
    ct_verify_fill(CT_FLOAT16, CT_PROD, 0, 16, 8, FIRST, h, N);
    for (size_t i = 0; i < N; i++)
        ones += ct_f16_to_f32(h[i]) == 1.0f || ct_f16_to_f32(h[i]) == -1.0f;
    cr_assert(ones > N * 3 / 4 && ones < N, "%zu of %d are +-1", ones, N);
}

/*
 * The exactness bound itself, which random data rarely tests: at every index the sum of
 * |input| over all ranks stays within the range where the dtype's quantum (1 for the
 * 16-bit floats, 1/8 otherwise) is exact, so every partial sum in every order is exact.
 */
Test(verify, sum_inputs_within_exact_range)
{
    static const struct {
        enum ct_dtype t;
        double limit, quantum;
    } lim[] = {{CT_FLOAT16, 2048, 1}, {CT_BFLOAT16, 256, 1}, {CT_FLOAT32, 0x1p21, 0.125}};
    static const int counts[] = {1, 64, 65, 300, 3000};
    enum { M = 64 };
    for (size_t k = 0; k < 3; k++) {
        for (size_t c = 0; c < 5; c++) {
            double total[M] = {0};
            uint16_t h[M];
            float f[M];
            for (int r = 0; r < counts[c]; r++) {
                void *buf = lim[k].t == CT_FLOAT32 ? (void *)f : (void *)h;
                ct_verify_fill(lim[k].t, CT_SUM, r, counts[c], 4, FIRST, buf, M);
                for (size_t i = 0; i < M; i++) {
                    double v = lim[k].t == CT_FLOAT32   ? f[i]
                               : lim[k].t == CT_FLOAT16 ? ct_f16_to_f32(h[i])
                                                        : ct_bf16_to_f32(h[i]);
                    cr_assert_eq(v / lim[k].quantum, floor(v / lim[k].quantum));
                    total[i] += fabs(v);
                }
            }
            for (size_t i = 0; i < M; i++)
                cr_assert_leq(total[i], lim[k].limit, "%s nranks %d: sum |x| = %g",
                              ct_dtype_name(lim[k].t), counts[c], total[i]);
        }
    }
}

/* The whole expected output (built once per job for a sweep's candidates) is what the
 * piecewise check compares with, for every collective and rank; one changed element of a
 * result is one wrong element either way. */
Test(verify, whole_expected_output_matches_the_piecewise_check)
{
    static const enum ct_coll colls[] = {CT_ALLREDUCE, CT_ALLGATHER, CT_REDUCESCATTER, CT_ALLTOALL};
    for (size_t c = 0; c < sizeof colls / sizeof colls[0]; c++)
        for (int r = 0; r < 3; r++) {
            struct ct_job j;
            memset(&j, 0, sizeof j);
            j.coll = colls[c];
            j.dtype = CT_FLOAT32;
            j.op = CT_SUM;
            j.count = 1000;
            j.shape.nranks = 3;
            j.shape.rank = r;
            uint64_t n = ct_verify_job_elems(&j);
            cr_assert_eq(n, colls[c] == CT_ALLGATHER || colls[c] == CT_ALLTOALL ? 3000 : 1000);
            float *want = malloc(n * sizeof *want), *scratch = malloc(64 * sizeof *scratch);
            ct_verify_job_expected(&j, 11, want);
            cr_assert_eq(ct_verify_job(&j, 11, want, scratch, 64), 0, "coll %d rank %d", c, r);
            want[n - 1] += 1;
            cr_assert_eq(ct_verify_job(&j, 11, want, scratch, 64), 1, "coll %d rank %d", c, r);
            cr_assert_gt(ct_verify_job(&j, 12, want, scratch, 64), 500, "another seed");
            free(want);
            free(scratch);
        }
}

/* The sampled check of a large output (a sweep's points of 16 MiB and more): it compares
 * exactly the elements it poisons, finds a wrong element in either edge, a wrong region of
 * a stride anywhere, and a single wrong element at every rank-block and chunk edge of a
 * 2-rank job whose edges are at odd offsets (the stride is prime); it passes a right one. */
Test(verify, sampled_check_covers_edges_and_every_region)
{
    static const enum ct_coll colls[] = {CT_ALLREDUCE, CT_ALLGATHER, CT_REDUCESCATTER, CT_ALLTOALL};
    for (size_t c = 0; c < sizeof colls / sizeof colls[0]; c++) {
        struct ct_job j;
        memset(&j, 0, sizeof j);
        j.coll = colls[c];
        j.dtype = CT_FLOAT32;
        j.op = CT_SUM;
        j.count = (1u << 20) + 777; /* 4 MiB a block, edges at odd offsets */
        j.shape.nranks = 2;
        j.shape.rank = 1;
        uint64_t n = ct_verify_job_elems(&j);
        float *out = malloc(n * sizeof *out), *want = malloc(CT_VERIFY_EDGE * sizeof *want);
        ct_verify_job_expected(&j, 11, out);
        cr_assert_eq(ct_verify_job_sampled(&j, 11, out, want), 0, "coll %zu", c);
        /* it compares what it poisons, and only that */
        ct_verify_job_poison_sampled(&j, out);
        long sampled = ct_verify_job_sampled(&j, 11, out, want);
        long poisoned = 0;
        for (uint64_t i = 0; i < n; i++)
            poisoned += isnan(out[i]);
        cr_assert_eq(sampled, poisoned, "coll %zu: %ld compared, %ld poisoned", c, sampled,
                     poisoned);
        cr_assert_lt(poisoned, (long)n / 4, "coll %zu: a sample, not the whole", c);
        ct_verify_job_expected(&j, 11, out);
        /* both edges of every block, and a region of one stride anywhere */
        uint64_t blocks = n / j.count,
                 at[] = {0, CT_VERIFY_EDGE - 1, j.count - CT_VERIFY_EDGE, j.count - 1};
        for (uint64_t q = 0; q < blocks; q++)
            for (size_t k = 0; k < sizeof at / sizeof at[0]; k++) {
                out[q * j.count + at[k]] += 1;
                cr_assert_eq(ct_verify_job_sampled(&j, 11, out, want), 1, "coll %zu at %llu", c,
                             (unsigned long long)(q * j.count + at[k]));
                out[q * j.count + at[k]] -= 1;
            }
        for (uint64_t start = 0; start + CT_VERIFY_STRIDE <= n; start += n / 16 + 4099) {
            for (uint64_t i = start; i < start + CT_VERIFY_STRIDE; i++)
                out[i] += 1;
            cr_assert_gt(ct_verify_job_sampled(&j, 11, out, want), 0, "coll %zu region %llu", c,
                         (unsigned long long)start);
            for (uint64_t i = start; i < start + CT_VERIFY_STRIDE; i++)
                out[i] -= 1;
        }
        /* chunk edges every 16 KiB from the start of a rank's half (an odd offset), away
         * from the block's edges: one wrong element at each; the prime stride puts about
         * one in 16 into a window (with a power-of-two stride, all or none) */
        long caught = 0, edges = 0;
        for (uint64_t e = j.count / 2; e + CT_VERIFY_EDGE < j.count; e += 4096, edges++) {
            out[e] += 1;
            caught += ct_verify_job_sampled(&j, 11, out, want) > 0;
            out[e] -= 1;
        }
        cr_assert(caught >= edges / 32 && caught <= edges / 8, "coll %zu: %ld of %ld chunk edges",
                  c, caught, edges);
        free(out);
        free(want);
    }
}
