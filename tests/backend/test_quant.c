/* SPDX-License-Identifier: MIT */
/* Quantized ring AllReduce (--quant): kernels, and live runs on the loop transport whose
 * results must be bitwise identical across ranks and equal to the serial model. */
#include <criterion/criterion.h>
#include <math.h>

#include "backend/qcheck.h"
#include "backend/verify.h"
#include "tests/loopworld.h"

Test(quant, names_and_wire_size)
{
    cr_assert_eq(ct_quant_find("int8"), CT_QUANT_INT8);
    cr_assert_eq(ct_quant_find("fp8e4m3"), CT_QUANT_FP8E4M3);
    cr_assert_eq(ct_quant_find("fp8e5m2"), CT_QUANT_FP8E5M2);
    cr_assert_eq(ct_quant_find("fp4"), -1);
    cr_assert_str_eq(ct_quant_name(CT_QUANT_NONE), "none");
    cr_assert_eq(ct_quant_wire_bytes(CT_QUANT_INT8, 0), 0);
    cr_assert_eq(ct_quant_wire_bytes(CT_QUANT_INT8, 1), 5);
    cr_assert_eq(ct_quant_wire_bytes(CT_QUANT_FP8E4M3, 256), 260);
    cr_assert_eq(ct_quant_wire_bytes(CT_QUANT_FP8E5M2, 257), 265);
}

/* Known codes: the block's amax maps to the format's largest value. */
Test(quant, codes)
{
    uint32_t w[4];
    uint8_t *codes = (uint8_t *)w + 4;
    float x[4] = {448, 1, -0.5f, 0x1p-9f}, y[4];
    ct_quant_encode(CT_QUANT_FP8E4M3, w, x, 4);
    float scale;
    memcpy(&scale, w, 4);
    cr_assert_eq(scale, 1.0f); /* = 448 / 448 */
    cr_assert_eq(codes[0], 0x7e);
    cr_assert_eq(codes[1], 0x38);
    cr_assert_eq(codes[2], 0xb0);
    cr_assert_eq(codes[3], 0x01); /* smallest subnormal */
    ct_quant_decode(CT_QUANT_FP8E4M3, y, w, 4);
    for (int i = 0; i < 4; i++)
        cr_assert_eq(y[i], x[i], "e4m3 %d: %g != %g", i, y[i], x[i]);
    float z[4] = {57344, 1, -1.25f, 0x1p-16f};
    ct_quant_encode(CT_QUANT_FP8E5M2, w, z, 4);
    cr_assert_eq(codes[0], 0x7b);
    cr_assert_eq(codes[1], 0x3c);
    cr_assert_eq(codes[2], 0xbd);
    cr_assert_eq(codes[3], 0x01);
    ct_quant_decode(CT_QUANT_FP8E5M2, y, w, 4);
    for (int i = 0; i < 4; i++)
        cr_assert_eq(y[i], z[i], "e5m2 %d: %g != %g", i, y[i], z[i]);
    float v[4] = {127, -127, 63.4f, 0.5f};
    ct_quant_encode(CT_QUANT_INT8, w, v, 4);
    cr_assert_eq((int8_t)codes[0], 127);
    cr_assert_eq((int8_t)codes[1], -127);
    cr_assert_eq((int8_t)codes[2], 63);
    cr_assert_eq((int8_t)codes[3], 1); /* half away from zero */
    /* ties to even in fp8: 1 + 1/16 lies halfway between 1 and 1.125 (e4m3) */
    float t[2] = {448, 1.0625f};
    ct_quant_encode(CT_QUANT_FP8E4M3, w, t, 2);
    cr_assert_eq(codes[1], 0x38);
}

/* Round trip error within half a step of the block's scale; zero blocks stay zero. */
Test(quant, roundtrip_bound)
{
    enum { N = 1000 };
    static float x[N], y[N];
    static uint32_t w[N];
    const double eps[] = {0, 0.5 / 127, 1.0 / 16, 1.0 / 8};
    for (int q = 1; q < CT_QUANT_COUNT; q++) {
        for (int i = 0; i < N; i++)
            x[i] = i >= 512 && i < 768 ? 0 : (float)sin(i * 0.37) * (float)(1 + i % 50) * 3.5f;
        ct_quant_encode((enum ct_quant)q, w, x, N);
        ct_quant_decode((enum ct_quant)q, y, w, N);
        for (int b = 0; b < N; b += 256) {
            double amax = 0;
            for (int i = b; i < N && i < b + 256; i++)
                amax = fmax(amax, fabs(x[i]));
            for (int i = b; i < N && i < b + 256; i++)
                cr_assert_leq(fabs(y[i] - x[i]), amax * eps[q] * 1.0001 + 1e-30, "%s i=%d %g %g",
                              ct_quant_name((enum ct_quant)q), i, x[i], y[i]);
        }
        for (int i = 512; i < 768; i++)
            cr_assert_eq(y[i], 0.0f);
    }
}

struct qjob {
    enum ct_quant q;
    uint64_t count;
    bool in_place;
    int channels;
    uint64_t chunk;
    long wrong, diverged;
    double max_err;
    float *out[8]; /* each rank's result */
};

static int qrank(struct ct_comm *c, void *arg, struct ct_err *err)
{
    struct qjob *v = arg;
    struct ct_bench b;
    ct_bench_init(&b, c, 7);
    struct ct_job j;
    memset(&j, 0, sizeof j);
    j.coll = CT_ALLREDUCE;
    j.dtype = CT_FLOAT32;
    j.op = CT_SUM;
    j.count = v->count;
    j.in_place = v->in_place;
    j.quant = v->q;
    j.params.v[CT_P_CHANNELS] = (uint64_t)v->channels;
    j.params.v[CT_P_CHUNK] = v->chunk;
    long wrong = -1;
    struct ct_qstats q;
    int rc = ct_bench_verify_q(&b, ct_algo_find("ring"), &j, &wrong, &q, err);
    if (rc == 0) {
        v->out[c->rank] = malloc(v->count * 4 + 4);
        memcpy(v->out[c->rank], b.buf[CT_BUF_RECV], v->count * 4);
    }
    if (c->rank == 0) {
        v->wrong = wrong;
        v->diverged = q.diverged;
        v->max_err = q.max_err;
    }
    ct_bench_release(&b);
    return rc;
}

static void qcheck(enum ct_quant q, int n, uint64_t count, bool in_place, int channels,
                   uint64_t chunk)
{
    struct qjob v;
    memset(&v, 0, sizeof v);
    v.q = q;
    v.count = count;
    v.in_place = in_place;
    v.channels = channels;
    v.chunk = chunk;
    struct ct_err err = {0};
    const char *name = ct_quant_name(q);
    int rc = lw_run(n, 0, qrank, &v, &err);
    cr_assert_eq(rc, 0, "%s n=%d count=%llu: %s", name, n, (unsigned long long)count, err.msg);
    cr_assert_eq(v.wrong, 0, "%s n=%d count=%llu: %ld differ from the model", name, n,
                 (unsigned long long)count, v.wrong);
    cr_assert_eq(v.diverged, 0, "%s n=%d count=%llu: %ld diverged", name, n,
                 (unsigned long long)count, v.diverged);
    /* directly: every rank's bits equal rank 0's */
    for (int r = 1; r < n; r++)
        cr_assert_eq(memcmp(v.out[r], v.out[0], count * 4), 0, "%s n=%d count=%llu: rank %d differs",
                     name, n, (unsigned long long)count, r);
    /* and the result is the sum up to the format's error: <= N hops of half a step of the
     * largest partial sum (N * the largest input) */
    double maxin = 0;
    float *in = malloc(count * 4 + 4), *exact = malloc(count * 4 + 4);
    uint64_t seed = 7; /* the check's: the bench's seed, for every collective */
    for (int r = 0; r < n; r++) {
        ct_verify_fill(CT_FLOAT32, CT_SUM, r, n, seed, 0, in, count);
        for (uint64_t i = 0; i < count; i++)
            maxin = fmax(maxin, fabs(in[i]));
    }
    ct_verify_expected(CT_FLOAT32, CT_SUM, n, seed, 0, exact, count);
    const double eps[] = {0, 0.5 / 127, 1.0 / 16, 1.0 / 8};
    double bound = n * eps[q] * n * maxin * 1.001;
    for (uint64_t i = 0; i < count; i++)
        cr_assert_leq(fabs((double)v.out[0][i] - exact[i]), bound, "%s n=%d i=%llu: %g vs %g",
                      name, n, (unsigned long long)i, v.out[0][i], exact[i]);
    cr_assert_leq(v.max_err, bound);
    free(in);
    free(exact);
    for (int r = 0; r < n; r++)
        free(v.out[r]);
}

Test(quant, ring_identical_across_ranks, .timeout = 120)
{
    for (int q = 1; q < CT_QUANT_COUNT; q++)
        for (int n = 2; n <= 8; n++) {
            uint64_t counts[] = {1, 3, 255, 257, (uint64_t)n * 256 - 1, 4099, 20011};
            for (size_t k = 0; k < sizeof counts / sizeof counts[0]; k++)
                qcheck((enum ct_quant)q, n, counts[k], k % 2, 1 + (int)(k % 3), k % 2 ? 1024 : 0);
        }
}

/* One rank: the result is its input as the format carries it. */
Test(quant, single_rank)
{
    qcheck(CT_QUANT_INT8, 1, 1000, false, 1, 0);
}

/* The algorithm table refuses what the quantized ring does not do. */
Test(quant, refusals)
{
    struct ct_job j;
    memset(&j, 0, sizeof j);
    j.coll = CT_ALLREDUCE;
    j.dtype = CT_FLOAT32;
    j.op = CT_SUM;
    j.count = 100;
    j.shape.nranks = 4;
    j.quant = CT_QUANT_INT8;
    struct ct_err why = {0};
    cr_assert_eq(ct_algo_supports(ct_algo_find("ring"), &j, &why), 0, "%s", why.msg);
    cr_assert_lt(ct_algo_supports(ct_algo_find("mesh"), &j, &why), 0);
    cr_assert(strstr(why.msg, "no quantized mode"), "%s", why.msg);
    j.dtype = CT_FLOAT16;
    cr_assert_lt(ct_algo_supports(ct_algo_find("ring"), &j, &why), 0);
    cr_assert(strstr(why.msg, "float32"), "%s", why.msg);
    j.dtype = CT_FLOAT32;
    j.op = CT_MAX;
    cr_assert_lt(ct_algo_supports(ct_algo_find("ring"), &j, &why), 0);
    j.op = CT_SUM;
    j.coll = CT_ALLGATHER;
    cr_assert_lt(ct_algo_supports(ct_algo_find("ring"), &j, &why), 0);
}

/* The vector int8 path computes exactly what the scalar rule says, NaN and clamps included. */
Test(quant, int8_matches_scalar_rule)
{
    enum { N = 300 };
    float x[N], y[N];
    uint32_t w[(N + 4 * 2 + N / 4) / 4 + 4];
    for (int i = 0; i < N; i++)
        x[i] = (float)((i * 7919) % 2001 - 1000) / 7.0f;
    x[5] = NAN;
    x[17] = 0.5f * 1000.0f / 127.0f; /* a tie after scaling */
    ct_quant_encode(CT_QUANT_INT8, w, x, N);
    const uint8_t *codes = (const uint8_t *)w + 2 * 4;
    for (int b = 0; b < 2; b++) {
        float scale, amax = 0;
        memcpy(&scale, (const char *)w + 4 * b, 4);
        for (int i = b * 256; i < N && i < b * 256 + 256; i++)
            if (fabsf(x[i]) > amax)
                amax = fabsf(x[i]);
        cr_assert_eq(scale, amax / 127.0f);
        float inv = 127.0f / amax;
        for (int i = b * 256; i < N && i < b * 256 + 256; i++) {
            float v = x[i] * inv;
            v = isnan(v) || v > 127 ? 127 : v < -127 ? -127 : v;
            int want = (int)(v + (v < 0 ? -0.5f : 0.5f));
            cr_assert_eq((int8_t)codes[i], want, "i=%d x=%g", i, x[i]);
        }
    }
    ct_quant_decode_add(CT_QUANT_INT8, y, x, w, N);
    for (int i = 0; i < N; i++) {
        float scale;
        memcpy(&scale, (const char *)w + 4 * (i / 256), 4);
        float want = x[i] + (float)(int8_t)codes[i] * scale;
        cr_assert(memcmp(&y[i], &want, 4) == 0 || (isnan(y[i]) && isnan(want)), "i=%d", i);
    }
}
