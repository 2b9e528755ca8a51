/* SPDX-License-Identifier: MIT */
/*
 * Reduction kernels, avg scaling and float16/bfloat16 conversions against scalar
 * references written here (float16/bfloat16 through an independent decode + round),
 * plus the datatype/op/collective/parameter tables of algos/types.c.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "algos/algo.h"
#include "algos/half.h"

static const size_t sizes[] = {0, 1, 7, 1000, 1003};
#define NSIZES (sizeof sizes / sizeof sizes[0])

static uint64_t rng_next(uint64_t *s)
{
    uint64_t x = (*s += 0x9e3779b97f4a7c15ull);
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/* ---- Independent binary16/bfloat16 model: decode to double, round to nearest even ---- */

struct fmt {
    int p, emin, emax, ebits; /* significand bits with the hidden one */
};
static const struct fmt F16 = {11, -14, 15, 5}, BF16 = {8, -126, 127, 8};

static double decode(const struct fmt *f, uint16_t h)
{
    int mbits = f->p - 1, emask = (1 << f->ebits) - 1;
    int e = (h >> mbits) & emask, m = h & ((1 << mbits) - 1);
    double v;
    if (e == emask)
        v = m ? NAN : INFINITY;
    else if (e == 0)
        v = ldexp(m, f->emin - mbits);
    else
        v = ldexp(m + (1 << mbits), e - (1 << (f->ebits - 1)) + 1 - mbits);
    return (h & 0x8000) ? -v : v;
}

static double round_to(const struct fmt *f, double x)
{
    if (isnan(x) || isinf(x) || x == 0)
        return x;
    int e = ilogb(x);
    if (e < f->emin)
        e = f->emin;
    double q = ldexp(1.0, e - (f->p - 1));
    double r = nearbyint(x / q) * q;
    if (fabs(r) >= ldexp(1.0, f->emax + 1))
        return copysign(INFINITY, x);
    return r;
}

/* r must be representable (or inf/NaN). */
static uint16_t encode(const struct fmt *f, double r)
{
    int mbits = f->p - 1, emask = (1 << f->ebits) - 1, bias = (1 << (f->ebits - 1)) - 1;
    unsigned s = signbit(r) ? 0x8000u : 0;
    if (isnan(r))
        return (uint16_t)(s | (unsigned)(emask << mbits) | (1u << (mbits - 1)));
    if (isinf(r))
        return (uint16_t)(s | (unsigned)(emask << mbits));
    double a = fabs(r);
    if (a < ldexp(1.0, f->emin))
        return (uint16_t)(s | (unsigned)(a / ldexp(1.0, f->emin - mbits)));
    int e = ilogb(a);
    unsigned m = (unsigned)(ldexp(a, mbits - e)) - (1u << mbits);
    return (uint16_t)(s | (unsigned)((e + bias) << mbits) | m);
}

/* ---- Elements as bits ---- */

static uint64_t get_el(enum ct_dtype t, const void *buf, size_t i)
{
    size_t sz = ct_dtype_size(t);
    uint64_t v = 0;
    memcpy(&v, (const char *)buf + i * sz, sz); /* little endian */
    return v;
}

static void set_el(enum ct_dtype t, void *buf, size_t i, uint64_t v)
{
    size_t sz = ct_dtype_size(t);
    memcpy((char *)buf + i * sz, &v, sz);
}

static uint64_t el_mask(enum ct_dtype t)
{
    size_t sz = ct_dtype_size(t);
    return sz == 8 ? ~0ull : (1ull << (8 * sz)) - 1;
}

static bool nan_bits(enum ct_dtype t, uint64_t v)
{
    switch (t) {
    case CT_FLOAT16: return (v & 0x7fff) > 0x7c00;
    case CT_BFLOAT16: return (v & 0x7fff) > 0x7f80;
    case CT_FLOAT32: return (v & 0x7fffffffu) > 0x7f800000u;
    case CT_FLOAT64: return (v & 0x7fffffffffffffffull) > 0x7ff0000000000000ull;
    default: return false;
    }
}

static bool same_el(enum ct_dtype t, uint64_t a, uint64_t b)
{
    return a == b || (nan_bits(t, a) && nan_bits(t, b));
}

static float f32_of(uint64_t v)
{
    uint32_t u = (uint32_t)v;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static uint64_t bits_f32(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

static double f64_of(uint64_t v)
{
    double d;
    memcpy(&d, &v, 8);
    return d;
}

static uint64_t bits_f64(double d)
{
    uint64_t u;
    memcpy(&u, &d, 8);
    return u;
}

/* Reference min/max: NaN operand wins; -0 < +0. */
static double ref_min(double x, double y)
{
    if (isnan(x))
        return x;
    if (isnan(y))
        return y;
    if (x != y)
        return x < y ? x : y;
    return signbit(x) ? x : y;
}

static double ref_max(double x, double y)
{
    if (isnan(x))
        return x;
    if (isnan(y))
        return y;
    if (x != y)
        return x > y ? x : y;
    return signbit(x) ? y : x;
}

static double ref_fop(enum ct_redop op, double x, double y)
{
    switch (op) {
    case CT_PROD: return x * y;
    case CT_MIN: return ref_min(x, y);
    case CT_MAX: return ref_max(x, y);
    default: return x + y;
    }
}

static uint64_t ref_iop(enum ct_redop op, uint64_t x, uint64_t y, bool x_lt_y)
{
    switch (op) {
    case CT_PROD: return x * y;
    case CT_MIN: return x_lt_y ? x : y;
    case CT_MAX: return x_lt_y ? y : x;
    default: return x + y;
    }
}

/* One element of a (op) b, from the bits, as the reference. */
static uint64_t ref_op(enum ct_dtype t, enum ct_redop op, uint64_t x, uint64_t y)
{
    switch (t) {
    case CT_INT8: return ref_iop(op, x, y, (int8_t)x < (int8_t)y) & 0xff;
    case CT_UINT8: return ref_iop(op, x, y, (uint8_t)x < (uint8_t)y) & 0xff;
    case CT_INT32: return ref_iop(op, x, y, (int32_t)x < (int32_t)y) & 0xffffffffu;
    case CT_UINT32: return ref_iop(op, x, y, (uint32_t)x < (uint32_t)y) & 0xffffffffu;
    case CT_INT64: return ref_iop(op, x, y, (int64_t)x < (int64_t)y);
    case CT_UINT64: return ref_iop(op, x, y, x < y);
    case CT_FLOAT16:
        return encode(&F16, round_to(&F16, ref_fop(op, decode(&F16, (uint16_t)x),
                                                   decode(&F16, (uint16_t)y))));
    case CT_BFLOAT16:
        return encode(&BF16, round_to(&BF16, ref_fop(op, decode(&BF16, (uint16_t)x),
                                                     decode(&BF16, (uint16_t)y))));
    case CT_FLOAT32: {
        float a = f32_of(x), b = f32_of(y), r;
        switch (op) {
        case CT_PROD: r = a * b; break;
        case CT_MIN: r = (float)ref_min(a, b); break;
        case CT_MAX: r = (float)ref_max(a, b); break;
        default: r = a + b; break;
        }
        return bits_f32(r);
    }
    default: return bits_f64(ref_fop(op, f64_of(x), f64_of(y)));
    }
}

/* Random element: mostly random bits, one in eight a special value of the type. */
static uint64_t rand_el(enum ct_dtype t, uint64_t *s)
{
    static const uint64_t f16s[] = {0,      0x8000, 0x7c00, 0xfc00, 0x7e00, 0x7c01,
                                    0x0001, 0x83ff, 0x7bff, 0x3c00, 0xbc00, 0x0400};
    static const uint64_t bf16s[] = {0,      0x8000, 0x7f80, 0xff80, 0x7fc0, 0x7f81,
                                     0x0001, 0x807f, 0x7f7f, 0x3f80, 0xbf80};
    static const uint64_t f32s[] = {0,           0x80000000u, 0x7f800000u, 0xff800000u,
                                    0x7fc00000u, 0x7f800001u, 1,           0x807fffffu,
                                    0x7f7fffffu, 0x3f800000u};
    static const uint64_t f64s[] = {0,
                                    0x8000000000000000ull,
                                    0x7ff0000000000000ull,
                                    0xfff0000000000000ull,
                                    0x7ff8000000000000ull,
                                    1,
                                    0x7fefffffffffffffull,
                                    0x3ff0000000000000ull};
    static const uint64_t ints[] = {0,
                                    1,
                                    ~0ull,
                                    0x7f,
                                    0x80,
                                    0x7fffffff,
                                    0x80000000u,
                                    0x7fffffffffffffffull,
                                    0x8000000000000000ull};
    uint64_t r = rng_next(s);
    size_t k = (size_t)(r >> 40);
    if ((r & 7) == 0) {
        switch (t) {
        case CT_FLOAT16: return f16s[k % (sizeof f16s / 8)];
        case CT_BFLOAT16: return bf16s[k % (sizeof bf16s / 8)];
        case CT_FLOAT32: return f32s[k % (sizeof f32s / 8)];
        case CT_FLOAT64: return f64s[k % (sizeof f64s / 8)];
        default: r = ints[k % (sizeof ints / 8)]; break;
        }
    } else {
        r = rng_next(s);
    }
    return r & el_mask(t);
}

/*
 * Test buffers: room for n elements plus a sentinel, used one element into a malloc'd
 * block so that vector code meets data that is not 16-byte aligned.
 */
static char *tbuf_new(size_t n)
{
    char *m = calloc(n + 4, 8);
    cr_assert_not_null(m);
    return m;
}

static void *at(char *mem, enum ct_dtype t)
{
    return mem + ct_dtype_size(t);
}

#define SENTINEL 0x5a5a5a5a5a5a5a5aull

static void check_result(enum ct_dtype t, enum ct_redop op, size_t n, const char *how,
                         const void *got, const uint64_t *want)
{
    for (size_t i = 0; i < n; i++) {
        uint64_t g = get_el(t, got, i);
        cr_assert(same_el(t, g, want[i]), "%s %s n=%zu (%s): element %zu is %#llx, want %#llx",
                  ct_dtype_name(t), ct_redop_name(op), n, how, i, (unsigned long long)g,
                  (unsigned long long)want[i]);
    }
    cr_assert_eq(get_el(t, got, n), SENTINEL & el_mask(t), "%s %s n=%zu (%s): wrote past the end",
                 ct_dtype_name(t), ct_redop_name(op), n, how);
}

static void load(enum ct_dtype t, void *dst, const uint64_t *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        set_el(t, dst, i, v[i]);
    set_el(t, dst, n, SENTINEL);
}

static void check_kernel(enum ct_dtype t, enum ct_redop op, size_t n, uint64_t *seed)
{
    ct_reduce_fn fn = ct_reduce_fn_get(t, op);
    cr_assert_not_null(fn, "%s %s", ct_dtype_name(t), ct_redop_name(op));
    enum ct_redop rop = op == CT_AVG ? CT_SUM : op;
    uint64_t *va = calloc(n + 1, 8), *vb = calloc(n + 1, 8);
    uint64_t *want = calloc(n + 1, 8), *self = calloc(n + 1, 8);
    char *a = tbuf_new(n), *b = tbuf_new(n), *d = tbuf_new(n);
    for (size_t i = 0; i < n; i++) {
        va[i] = rand_el(t, seed);
        vb[i] = rand_el(t, seed);
        want[i] = ref_op(t, rop, va[i], vb[i]);
        self[i] = ref_op(t, rop, va[i], va[i]);
    }
    void *pa = at(a, t), *pb = at(b, t), *pd = at(d, t);
    load(t, pa, va, n);
    load(t, pb, vb, n);

    load(t, pd, vb, n); /* garbage in dst must not matter */
    fn(pd, pa, pb, n);
    check_result(t, op, n, "dst separate", pd, want);

    load(t, pd, va, n);
    fn(pd, pd, pb, n);
    check_result(t, op, n, "dst == a", pd, want);

    load(t, pd, vb, n);
    fn(pd, pa, pd, n);
    check_result(t, op, n, "dst == b", pd, want);

    load(t, pd, va, n);
    fn(pd, pd, pd, n);
    check_result(t, op, n, "dst == a == b", pd, self);

    free(a);
    free(b);
    free(d);
    free(va);
    free(vb);
    free(want);
    free(self);
}

Test(reduce, every_dtype_op_size_and_alias)
{
    uint64_t seed = 42;
    for (int t = 0; t < CT_DTYPE_COUNT; t++)
        for (int op = 0; op < CT_REDOP_COUNT; op++)
            for (size_t k = 0; k < NSIZES; k++)
                check_kernel((enum ct_dtype)t, (enum ct_redop)op, sizes[k], &seed);
}

Test(reduce, table_edges)
{
    for (int t = 0; t < CT_DTYPE_COUNT; t++) {
        cr_assert_eq(ct_reduce_fn_get(t, CT_AVG), ct_reduce_fn_get(t, CT_SUM));
        cr_assert_not_null(ct_scale_fn_get(t));
        for (int op = 0; op < CT_AVG; op++)
            for (int op2 = op + 1; op2 < CT_AVG; op2++)
                cr_assert_neq(ct_reduce_fn_get(t, op), ct_reduce_fn_get(t, op2));
    }
    cr_assert_null(ct_reduce_fn_get(CT_DTYPE_COUNT, CT_SUM));
    cr_assert_null(ct_reduce_fn_get(CT_FLOAT32, CT_REDOP_COUNT));
    cr_assert_null(ct_scale_fn_get(CT_DTYPE_COUNT));
}

Test(reduce, integer_wrap)
{
    int8_t i8a[] = {127, -128, 64, -1, 5}, i8b[] = {1, -1, 4, 1, -7}, i8[5];
    ct_reduce_fn_get(CT_INT8, CT_SUM)(i8, i8a, i8b, 5);
    cr_assert(i8[0] == -128 && i8[1] == 127 && i8[2] == 68 && i8[3] == 0 && i8[4] == -2);
    ct_reduce_fn_get(CT_INT8, CT_PROD)(i8, i8a, i8b, 5);
    cr_assert(i8[0] == 127 && i8[1] == -128 && i8[2] == 0 && i8[3] == -1 && i8[4] == -35);
    ct_reduce_fn_get(CT_INT8, CT_MIN)(i8, i8a, i8b, 5);
    cr_assert(i8[0] == 1 && i8[1] == -128 && i8[3] == -1 && i8[4] == -7);

    uint8_t u8a[] = {255, 16, 200}, u8b[] = {1, 16, 1}, u8[3];
    ct_reduce_fn_get(CT_UINT8, CT_SUM)(u8, u8a, u8b, 3);
    cr_assert(u8[0] == 0 && u8[1] == 32 && u8[2] == 201);
    ct_reduce_fn_get(CT_UINT8, CT_PROD)(u8, u8a, u8b, 3);
    cr_assert(u8[0] == 255 && u8[1] == 0 && u8[2] == 200);
    ct_reduce_fn_get(CT_UINT8, CT_MAX)(u8, u8a, u8b, 3);
    cr_assert(u8[0] == 255 && u8[2] == 200);

    int32_t i32a[] = {INT32_MAX, INT32_MIN, 65536}, i32b[] = {1, -1, 65536}, i32[3];
    ct_reduce_fn_get(CT_INT32, CT_SUM)(i32, i32a, i32b, 3);
    cr_assert(i32[0] == INT32_MIN && i32[1] == INT32_MAX);
    ct_reduce_fn_get(CT_INT32, CT_PROD)(i32, i32a, i32b, 3);
    cr_assert(i32[0] == INT32_MAX && i32[1] == INT32_MIN && i32[2] == 0);

    uint32_t u32a[] = {UINT32_MAX, 0x80000000u}, u32b[] = {2, 1}, u32[2];
    ct_reduce_fn_get(CT_UINT32, CT_SUM)(u32, u32a, u32b, 2);
    cr_assert(u32[0] == 1 && u32[1] == 0x80000001u);
    ct_reduce_fn_get(CT_UINT32, CT_MIN)(u32, u32a, u32b, 2);
    cr_assert(u32[0] == 2 && u32[1] == 1); /* unsigned compare */

    int64_t i64a[] = {INT64_MAX, INT64_MIN, -3}, i64b[] = {1, -1, 5}, i64[3];
    ct_reduce_fn_get(CT_INT64, CT_SUM)(i64, i64a, i64b, 3);
    cr_assert(i64[0] == INT64_MIN && i64[1] == INT64_MAX && i64[2] == 2);
    ct_reduce_fn_get(CT_INT64, CT_PROD)(i64, i64a, i64b, 3);
    cr_assert(i64[0] == INT64_MAX && i64[1] == INT64_MIN && i64[2] == -15);
    ct_reduce_fn_get(CT_INT64, CT_MAX)(i64, i64a, i64b, 3);
    cr_assert(i64[0] == INT64_MAX && i64[1] == -1 && i64[2] == 5);

    uint64_t u64a[] = {UINT64_MAX, 1ull << 32}, u64b[] = {1, 1ull << 32}, u64[2];
    ct_reduce_fn_get(CT_UINT64, CT_SUM)(u64, u64a, u64b, 2);
    cr_assert(u64[0] == 0 && u64[1] == 1ull << 33);
    ct_reduce_fn_get(CT_UINT64, CT_PROD)(u64, u64a, u64b, 2);
    cr_assert(u64[0] == UINT64_MAX && u64[1] == 0);
}

/* Encode a double (representable) as dtype bits. */
static uint64_t enc(enum ct_dtype t, double v)
{
    switch (t) {
    case CT_FLOAT16: return encode(&F16, v);
    case CT_BFLOAT16: return encode(&BF16, v);
    case CT_FLOAT32: return bits_f32((float)v);
    default: return bits_f64(v);
    }
}

static double dec(enum ct_dtype t, uint64_t v)
{
    switch (t) {
    case CT_FLOAT16: return decode(&F16, (uint16_t)v);
    case CT_BFLOAT16: return decode(&BF16, (uint16_t)v);
    case CT_FLOAT32: return f32_of(v);
    default: return f64_of(v);
    }
}

Test(reduce, float_min_max_nan_inf_zero)
{
    /* x, y, min, max; NAN in a result means any NaN */
    static const double cases[][4] = {
        {NAN, 1, NAN, NAN},
        {1, NAN, NAN, NAN},
        {NAN, NAN, NAN, NAN},
        {INFINITY, NAN, NAN, NAN},
        {-INFINITY, NAN, NAN, NAN},
        {INFINITY, 1, 1, INFINITY},
        {-INFINITY, 1, -INFINITY, 1},
        {-INFINITY, INFINITY, -INFINITY, INFINITY},
        {-0.0, 0.0, -0.0, 0.0},
        {0.0, -0.0, -0.0, 0.0},
        {-0.0, -0.0, -0.0, -0.0},
        {0.0, 0.0, 0.0, 0.0},
        {-2, 3, -2, 3},
        {0.5, 0.25, 0.25, 0.5},
    };
    enum { NC = sizeof cases / sizeof cases[0], REP = 150, N = NC * REP };
    static const enum ct_dtype fts[] = {CT_FLOAT16, CT_BFLOAT16, CT_FLOAT32, CT_FLOAT64};
    for (size_t k = 0; k < 4; k++) {
        enum ct_dtype t = fts[k];
        char *a = calloc(N, 8), *b = calloc(N, 8), *mn = calloc(N, 8), *mx = calloc(N, 8);
        for (size_t i = 0; i < N; i++) {
            set_el(t, a, i, enc(t, cases[i % NC][0]));
            set_el(t, b, i, enc(t, cases[i % NC][1]));
        }
        ct_reduce_fn_get(t, CT_MIN)(mn, a, b, N);
        ct_reduce_fn_get(t, CT_MAX)(mx, a, b, N);
        for (size_t i = 0; i < N; i++) {
            const double *c = cases[i % NC];
            double gmin = dec(t, get_el(t, mn, i)), gmax = dec(t, get_el(t, mx, i));
            for (int w = 0; w < 2; w++) {
                double got = w ? gmax : gmin, want = c[2 + w];
                if (isnan(want)) {
                    cr_assert(isnan(got), "%s %s(%g, %g) = %g, want NaN", ct_dtype_name(t),
                              w ? "max" : "min", c[0], c[1], got);
                } else {
                    cr_assert(got == want && !signbit(got) == !signbit(want),
                              "%s %s(%g, %g) = %g, want %g", ct_dtype_name(t), w ? "max" : "min",
                              c[0], c[1], got, want);
                }
            }
        }
        free(a);
        free(b);
        free(mn);
        free(mx);
    }
}

/* ---- avg scaling ---- */

static uint64_t ref_scale(enum ct_dtype t, uint64_t x, int d)
{
    switch (t) {
    case CT_INT8: return (uint64_t)((int8_t)x / d) & 0xff;
    case CT_UINT8: return (uint8_t)x / (unsigned)d;
    case CT_INT32: return (uint64_t)((int32_t)x / d) & 0xffffffffu;
    case CT_UINT32: return (uint32_t)x / (unsigned)d;
    case CT_INT64: return (uint64_t)((int64_t)x / d);
    case CT_UINT64: return x / (uint64_t)d;
    case CT_FLOAT16:
        return encode(&F16, round_to(&F16, (float)decode(&F16, (uint16_t)x) / (float)d));
    case CT_BFLOAT16:
        return encode(&BF16, round_to(&BF16, (float)decode(&BF16, (uint16_t)x) / (float)d));
    case CT_FLOAT32: return bits_f32(f32_of(x) / (float)d);
    default: return bits_f64(f64_of(x) / (double)d);
    }
}

Test(reduce, scale_every_dtype)
{
    static const int divisors[] = {1, 2, 3, 7, 64};
    uint64_t seed = 7;
    for (int t = 0; t < CT_DTYPE_COUNT; t++) {
        for (size_t k = 0; k < NSIZES; k++) {
            for (size_t di = 0; di < 5; di++) {
                size_t n = sizes[k];
                int dv = divisors[di];
                char *b = tbuf_new(n);
                void *p = at(b, t);
                uint64_t *v = calloc(n + 1, 8), *want = calloc(n + 1, 8);
                for (size_t i = 0; i < n; i++) {
                    v[i] = rand_el(t, &seed);
                    want[i] = ref_scale(t, v[i], dv);
                }
                load(t, p, v, n);
                ct_scale_fn_get(t)(p, n, dv);
                check_result(t, CT_AVG, n, dv == 1 ? "scale 1" : "scale", p, want);
                free(b);
                free(v);
                free(want);
            }
        }
    }
}

Test(reduce, scale_truncates_like_nccl)
{
    int8_t i8[] = {-7, 7, -128, 127};
    ct_scale_fn_get(CT_INT8)(i8, 4, 2);
    cr_assert(i8[0] == -3 && i8[1] == 3 && i8[2] == -64 && i8[3] == 63);
    int32_t i32[] = {-7, INT32_MIN};
    ct_scale_fn_get(CT_INT32)(i32, 2, 3);
    cr_assert(i32[0] == -2 && i32[1] == INT32_MIN / 3);
    uint64_t u64[] = {UINT64_MAX};
    ct_scale_fn_get(CT_UINT64)(u64, 1, 64);
    cr_assert(u64[0] == UINT64_MAX / 64);
    uint16_t h[] = {ct_f32_to_f16(1.0f), ct_f32_to_f16(-6.0f)};
    ct_scale_fn_get(CT_FLOAT16)(h, 2, 3);
    cr_assert(h[0] == ct_f32_to_f16(1.0f / 3.0f) && ct_f16_to_f32(h[1]) == -2.0f);
}

/* The 8-bit and int32 scales divide in float/double: exhaustive and edge checks. */
Test(reduce, scale_fast_paths_exact)
{
    static const int big[] = {1 << 23, (1 << 24) - 1, 1 << 24, (1 << 24) + 1, INT32_MAX};
    enum { M = 320 }; /* all 256 values, then some again, past one block */
    int8_t i8[M];
    uint8_t u8[M];
    for (int dv = 1; dv < 300 + 5; dv++) {
        int d = dv < 300 ? dv : big[dv - 300];
        for (int i = 0; i < M; i++) {
            i8[i] = (int8_t)(i % 256 - 128);
            u8[i] = (uint8_t)(i % 256);
        }
        ct_scale_fn_get(CT_INT8)(i8, M, d);
        ct_scale_fn_get(CT_UINT8)(u8, M, d);
        for (int i = 0; i < M; i++) {
            int v = i % 256;
            cr_assert_eq(i8[i], (v - 128) / d, "int8 %d / %d = %d", v - 128, d, i8[i]);
            cr_assert_eq(u8[i], v / d, "uint8 %d / %d = %d", v, d, u8[i]);
        }
    }
    uint64_t seed = 3;
    int32_t x[1024], w[1024];
    for (int dv = 1; dv < 70 + 5; dv++) {
        int d = dv < 70 ? dv * dv * dv : big[dv - 70];
        for (int i = 0; i < 1024; i++) {
            x[i] = i < 4 ? (int32_t[]){INT32_MIN, INT32_MAX, -1, d}[i]
                         : (int32_t)(uint32_t)rng_next(&seed) / (1 << (i % 31));
            w[i] = x[i] / d;
        }
        ct_scale_fn_get(CT_INT32)(x, 1024, d);
        for (int i = 0; i < 1024; i++)
            cr_assert_eq(x[i], w[i], "int32 element %d / %d = %d, want %d", i, d, x[i], w[i]);
    }
}

/* ---- float16 / bfloat16 conversions ---- */

Test(half, f16_to_f32_exhaustive)
{
    for (uint32_t h = 0; h < 0x10000; h++) {
        float f = ct_f16_to_f32((uint16_t)h);
        double want = decode(&F16, (uint16_t)h);
        if (isnan(want)) {
            uint32_t u = ct_f32_bits(f);
            cr_assert(isnan(f) && (u >> 31) == (h >> 15) && ((u >> 13) & 0x3ff) == (h & 0x3ff),
                      "f16 %#x: NaN payload or sign lost", h);
        } else {
            cr_assert((double)f == want && !signbit(f) == !signbit(want), "f16 %#x -> %g, want %g",
                      h, (double)f, want);
        }
    }
}

Test(half, bf16_to_f32_exhaustive)
{
    for (uint32_t h = 0; h < 0x10000; h++) {
        float f = ct_bf16_to_f32((uint16_t)h);
        double want = decode(&BF16, (uint16_t)h);
        if (isnan(want))
            cr_assert(isnan(f) && ct_f32_bits(f) == h << 16, "bf16 %#x", h);
        else
            cr_assert((double)f == want && !signbit(f) == !signbit(want), "bf16 %#x", h);
    }
}

Test(half, round_trip_and_nan)
{
    for (uint32_t h = 0; h < 0x10000; h++) {
        uint16_t f16 = ct_f32_to_f16(ct_f16_to_f32((uint16_t)h));
        uint16_t bf = ct_f32_to_bf16(ct_bf16_to_f32((uint16_t)h));
        if ((h & 0x7fff) > 0x7c00) /* NaN: quieted, payload and sign kept */
            cr_assert_eq(f16, h | 0x200, "f16 NaN %#x -> %#x", h, f16);
        else
            cr_assert_eq(f16, h, "f16 %#x -> %#x", h, f16);
        if ((h & 0x7fff) > 0x7f80)
            cr_assert_eq(bf, h | 0x40, "bf16 NaN %#x -> %#x", h, bf);
        else
            cr_assert_eq(bf, h, "bf16 %#x -> %#x", h, bf);
    }
}

/* For every pair of neighbours h, h+1 (same sign): the midpoint ties to even, a float
 * either side of it rounds to the nearer one. Covers subnormals and the overflow edge. */
Test(half, f16_halfway_cases)
{
    for (uint32_t s = 0; s < 2; s++) {
        for (uint32_t h = 0; h < 0x7c00; h++) {
            double lo = decode(&F16, (uint16_t)h);
            double hi = h == 0x7bff ? 65536.0 : decode(&F16, (uint16_t)(h + 1));
            float mid = (float)((lo + hi) / 2); /* exact: 12 significant bits */
            uint32_t sign = s << 15;
            float sg = s ? -1.0f : 1.0f;
            uint16_t even = (uint16_t)(sign | ((h & 1) ? h + 1 : h));
            cr_assert_eq(ct_f32_to_f16(sg * mid), even, "midpoint above %#x", h);
            cr_assert_eq(ct_f32_to_f16(sg * nextafterf(mid, 0)), sign | h, "below mid %#x", h);
            cr_assert_eq(ct_f32_to_f16(sg * nextafterf(mid, INFINITY)), sign | (h + 1),
                         "above mid %#x", h);
        }
    }
    cr_assert_eq(ct_f32_to_f16(65520.0f), 0x7c00);
    cr_assert_eq(ct_f32_to_f16(nextafterf(65520.0f, 0)), 0x7bff);
    cr_assert_eq(ct_f32_to_f16(1e10f), 0x7c00);
    cr_assert_eq(ct_f32_to_f16(-INFINITY), 0xfc00);
    cr_assert_eq(ct_f32_to_f16(0x1p-25f), 0);   /* tie to even 0 */
    cr_assert_eq(ct_f32_to_f16(0x1.8p-24f), 2); /* tie to even 2 */
    cr_assert_eq(ct_f32_to_f16(1e-40f), 0);     /* float subnormal */
    cr_assert_eq(ct_f32_to_f16(-1e-40f), 0x8000);
    cr_assert_eq(ct_f32_to_f16(0x1.ffcp-15f), 0x0400); /* 1023.5 quanta: tie up to min normal */
    cr_assert_eq(ct_f32_to_f16(nanf("")) & 0x7e00, 0x7e00);
}

Test(half, bf16_halfway_cases)
{
    for (uint32_t s = 0; s < 2; s++) {
        for (uint32_t h = 0; h < 0x7f80; h++) {
            uint32_t sign = s << 15, base = (sign | h) << 16;
            uint16_t even = (uint16_t)(sign | ((h & 1) ? h + 1 : h));
            cr_assert_eq(ct_f32_to_bf16(ct_f32_from_bits(base | 0x8000)), even, "mid %#x", h);
            cr_assert_eq(ct_f32_to_bf16(ct_f32_from_bits(base | 0x7fff)), sign | h, "%#x", h);
            cr_assert_eq(ct_f32_to_bf16(ct_f32_from_bits(base | 0x8001)), sign | (h + 1), "%#x", h);
        }
    }
    cr_assert_eq(ct_f32_to_bf16(3.4028235e38f), 0x7f80); /* FLT_MAX rounds to inf */
    cr_assert_eq(ct_f32_to_bf16(ct_f32_from_bits(0xff800000u)), 0xff80);
    cr_assert_eq(ct_f32_to_bf16(ct_f32_from_bits(0x7f800001u)), 0x7fc0); /* sNaN quieted */
}

#ifdef __FLT16_MANT_DIG__
/* Cross-check against the compiler's own float -> _Float16 conversion where it has one. */
Test(half, f32_to_f16_matches_compiler)
{
    uint64_t seed = 1;
    for (int i = 0; i < 1000000; i++) {
        uint32_t u = (uint32_t)rng_next(&seed);
        if (i & 1) /* half of them near the float16 range */
            u = (u & 0x81ffffffu) | ((uint32_t)(100 + (u >> 25) % 48) << 23);
        float f = ct_f32_from_bits(u);
        _Float16 c = (_Float16)f;
        uint16_t cb;
        memcpy(&cb, &c, 2);
        uint16_t mine = ct_f32_to_f16(f);
        if (isnan(f))
            cr_assert((mine & 0x7fff) > 0x7c00, "%#x", u);
        else
            cr_assert_eq(mine, cb, "float %#x: %#x, compiler %#x", u, mine, cb);
    }
}
#endif

/* The vectorised conversions inside the kernels, over every float16/bfloat16 value. */
Test(half, kernel_paths_exhaustive)
{
    static const enum ct_dtype hts[] = {CT_FLOAT16, CT_BFLOAT16};
    uint16_t *x = malloc(0x10000 * 2), *out = malloc(0x10000 * 2);
    for (uint32_t h = 0; h < 0x10000; h++)
        x[h] = (uint16_t)h;
    for (size_t k = 0; k < 2; k++) {
        enum ct_dtype t = hts[k];
        uint16_t qbit = t == CT_FLOAT16 ? 0x200 : 0x40;
        ct_reduce_fn_get(t, CT_MAX)(out, x, x, 0x10000);
        for (uint32_t h = 0; h < 0x10000; h++) {
            bool nan = nan_bits(t, h);
            cr_assert_eq(out[h], nan ? h | qbit : h, "%s max(%#x, itself) = %#x", ct_dtype_name(t),
                         h, out[h]);
        }
    }
    free(x);
    free(out);
}

/* ---- algos/types.c tables ---- */

Test(types, names_and_aliases)
{
    for (int t = 0; t < CT_DTYPE_COUNT; t++) {
        cr_assert_eq(ct_dtype_find(ct_dtype_name(t)), t);
        cr_assert(ct_dtype_size(t) == 1 || ct_dtype_size(t) == 2 || ct_dtype_size(t) == 4 ||
                  ct_dtype_size(t) == 8);
    }
    cr_assert_str_eq(ct_dtype_name(CT_BFLOAT16), "bfloat16");
    cr_assert_eq(ct_dtype_size(CT_FLOAT16), 2);
    cr_assert_eq(ct_dtype_size(CT_UINT64), 8);
    static const struct {
        const char *s;
        int t;
    } al[] = {{"char", CT_INT8},       {"int", CT_INT32},      {"half", CT_FLOAT16},
              {"float", CT_FLOAT32},   {"double", CT_FLOAT64}, {"bf16", CT_BFLOAT16},
              {"fp16", CT_FLOAT16},    {"fp32", CT_FLOAT32},   {"fp64", CT_FLOAT64},
              {"f16", CT_FLOAT16},     {"f32", CT_FLOAT32},    {"f64", CT_FLOAT64},
              {"FLOAT32", CT_FLOAT32}, {"uint8", CT_UINT8}};
    for (size_t i = 0; i < sizeof al / sizeof al[0]; i++)
        cr_assert_eq(ct_dtype_find(al[i].s), al[i].t, "%s", al[i].s);
    cr_assert_eq(ct_dtype_find("float128"), -1);
    cr_assert_eq(ct_dtype_find(""), -1);
    cr_assert_eq(ct_dtype_find(NULL), -1);

    for (int op = 0; op < CT_REDOP_COUNT; op++)
        cr_assert_eq(ct_redop_find(ct_redop_name(op)), op);
    cr_assert_eq(ct_redop_find("avg"), CT_AVG);
    cr_assert_eq(ct_redop_find("mean"), -1);

    for (int c = 0; c < CT_COLL_COUNT; c++)
        cr_assert_eq(ct_coll_find(ct_coll_name(c)), c);
    cr_assert_eq(ct_coll_find("all_reduce"), CT_ALLREDUCE);
    cr_assert_eq(ct_coll_find("reduce-scatter"), CT_REDUCESCATTER);
    cr_assert_eq(ct_coll_find("AllGather"), CT_ALLGATHER);
    cr_assert_eq(ct_coll_find("all_to_all"), CT_ALLTOALL);
    cr_assert_eq(ct_coll_find("allreduc"), -1);
    cr_assert_eq(ct_coll_find("allreducex"), -1);
    cr_assert_eq(ct_coll_find("broadcast"), -1);
    cr_assert_str_eq(ct_dtype_name(CT_DTYPE_COUNT), "?");
}

Test(types, params)
{
    cr_assert_str_eq(ct_param_desc(CT_P_CHUNK)->name, "chunk");
    cr_assert_eq(ct_param_desc(CT_P_CHUNK)->def, 131072);
    cr_assert_null(ct_param_desc(CT_P_COUNT));
    for (int p = 0; p < CT_P_COUNT; p++) {
        const struct ct_param_desc *d = ct_param_desc(p);
        cr_assert(d->min <= d->def && d->def <= d->max, "%s", d->name);
    }

    struct ct_params ps = {{0}, NULL, NULL};
    struct ct_err err = {0};
    cr_assert_eq(ct_params_check(&ps, 4, &err), 0); /* all defaults */
    ps.v[CT_P_PIPELINE] = 8;
    ct_params_defaults(&ps);
    cr_assert_eq(ps.v[CT_P_PIPELINE], 8);
    cr_assert_eq(ps.v[CT_P_CHUNK], 131072);
    cr_assert_eq(ps.v[CT_P_CHANNELS], 1);
    cr_assert_eq(ps.v[CT_P_THREADS], 1);
    cr_assert_eq(ct_params_check(&ps, 8, &err), 0);

    ps.v[CT_P_CHUNK] = 2;
    cr_assert_eq(ct_params_check(&ps, 4, &err), CT_EINVAL);
    cr_assert(strstr(err.msg, "chunk 2") && strstr(err.msg, "4 bytes"), "%s", err.msg);
    cr_assert_eq(ct_params_check(&ps, 2, &err), 0);
    ps.v[CT_P_CHUNK] = (1ull << 30) + 1;
    cr_assert_eq(ct_params_check(&ps, 1, &err), CT_EINVAL);
    ps.v[CT_P_CHUNK] = 1ull << 30;
    cr_assert_eq(ct_params_check(&ps, 1, &err), 0);
    ps.v[CT_P_STREAMS] = 257;
    cr_assert_eq(ct_params_check(&ps, 1, &err), CT_EINVAL);
    cr_assert(strstr(err.msg, "streams 257"), "%s", err.msg);
    cr_assert_eq(ct_params_check(&ps, 1, NULL), CT_EINVAL);
}

Test(types, job_bytes)
{
    struct ct_job j = {0};
    j.dtype = CT_FLOAT32;
    j.count = 10;
    j.shape.nranks = 4;
    static const uint64_t want[CT_COLL_COUNT][2] = {
        [CT_ALLREDUCE] = {40, 40},
        [CT_ALLGATHER] = {40, 160},
        [CT_REDUCESCATTER] = {160, 40},
        [CT_ALLTOALL] = {160, 160},
    };
    for (int c = 0; c < CT_COLL_COUNT; c++) {
        j.coll = c;
        cr_assert_eq(ct_job_send_bytes(&j), want[c][0], "%s", ct_coll_name(c));
        cr_assert_eq(ct_job_recv_bytes(&j), want[c][1], "%s", ct_coll_name(c));
    }
}

/* ---- Instruction-set variants: every one this CPU runs gives the generic kernel's bits ---- */

static const size_t vsizes[] = {0, 1, 7, 31, 63, 64, 65, 127, 1000, 4099};

/* Random bytes: every bit pattern, NaNs with payloads, infinities and subnormals included. */
static void fill_bytes(unsigned char *p, size_t n, uint64_t *seed)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (unsigned char)rng_next(seed);
}

/* One kernel of variant v against generic g on the same operands in the four aliasings. */
static void compare_variant(const struct ct_kernels *v, const struct ct_kernels *g, int t, int op,
                            size_t n, size_t mis, uint64_t *seed, const char *vname)
{
    size_t es = ct_dtype_size((enum ct_dtype)t), bytes = n * es;
    unsigned char *a = malloc(bytes + 64), *b = malloc(bytes + 64);
    unsigned char *d1 = malloc(bytes + 64), *d2 = malloc(bytes + 64);
    unsigned char *pa = a + mis * es, *pb = b + mis * es, *p1 = d1 + mis * es, *p2 = d2 + mis * es;
    fill_bytes(pa, bytes, seed);
    fill_bytes(pb, bytes, seed);
    for (int alias = 0; alias < 4; alias++) {
        memcpy(p1, alias == 2 ? pb : pa, bytes);
        memcpy(p2, p1, bytes);
        const void *x1 = alias == 1 || alias == 3 ? p1 : pa, *y1 = alias >= 2 ? p1 : pb;
        const void *x2 = alias == 1 || alias == 3 ? p2 : pa, *y2 = alias >= 2 ? p2 : pb;
        g->red[t][op](p1, x1, y1, n);
        v->red[t][op](p2, x2, y2, n);
        cr_assert(!memcmp(p1, p2, bytes), "%s %s %s n=%zu offset %zu alias %d: bits differ",
                  vname, ct_dtype_name((enum ct_dtype)t), ct_redop_name((enum ct_redop)op), n,
                  mis, alias);
        /* the swapped kernel is the kernel with its operands swapped */
        memcpy(p1, alias == 2 ? pb : pa, bytes);
        memcpy(p2, p1, bytes);
        g->red[t][op](p1, y1, x1, n);
        v->rev[t][op](p2, x2, y2, n);
        cr_assert(!memcmp(p1, p2, bytes), "%s %s %s swapped n=%zu alias %d: bits differ", vname,
                  ct_dtype_name((enum ct_dtype)t), ct_redop_name((enum ct_redop)op), n, alias);
        /* the two-place kernel writes the kernel's bits to both places */
        unsigned char *e2 = malloc(bytes + 64), *pe = e2 + mis * es;
        memcpy(p1, alias == 2 ? pb : pa, bytes);
        memcpy(p2, p1, bytes);
        memset(pe, 0x5c, bytes);
        g->red[t][op](p1, x1, y1, n);
        v->red2[t][op](p2, pe, x2, y2, n);
        cr_assert(!memcmp(p1, p2, bytes) && !memcmp(p1, pe, bytes),
                  "%s %s %s two places n=%zu alias %d: bits differ", vname,
                  ct_dtype_name((enum ct_dtype)t), ct_redop_name((enum ct_redop)op), n, alias);
        free(e2);
    }
    for (int div = 1; div <= 7; div += 3) {
        memcpy(p1, pa, bytes);
        memcpy(p2, pa, bytes);
        g->scale[t](p1, n, div);
        v->scale[t](p2, n, div);
        cr_assert(!memcmp(p1, p2, bytes), "%s scale %s n=%zu divisor %d: bits differ", vname,
                  ct_dtype_name((enum ct_dtype)t), n, div);
    }
    memset(p2, 0, bytes);
    v->copy(p2, pa, bytes);
    cr_assert(!memcmp(p2, pa, bytes), "%s copy of %zu bytes", vname, bytes);
    free(a);
    free(b);
    free(d1);
    free(d2);
}

Test(reduce, isa_variants_bit_identical)
{
    const struct ct_kernels *g = ct_kernels_for(CT_ISA_GENERIC);
    cr_assert_not_null(g);
    int ran = 0;
    for (int isa = 0; isa < CT_ISA_COUNT; isa++) {
        const struct ct_kernels *v = ct_kernels_for((enum ct_isa)isa);
        if (!v) {
            cr_log_info("%s: not supported by this CPU, not compared", ct_isa_name(isa));
            continue;
        }
        cr_assert(!isa || v->red[CT_FLOAT32][CT_SUM] != g->red[CT_FLOAT32][CT_SUM],
                  "%s has its own kernels", ct_isa_name(isa));
        uint64_t seed = 7 + (uint64_t)isa;
        for (int t = 0; t < CT_DTYPE_COUNT; t++)
            for (int op = 0; op < 4; op++)
                for (size_t k = 0; k < sizeof vsizes / sizeof vsizes[0]; k++)
                    compare_variant(v, g, t, op, vsizes[k], k % 3, &seed, ct_isa_name(isa));
        ran++;
    }
    cr_log_info("compared %d instruction-set variants (generic included) against generic", ran);
}

Test(reduce, isa_dispatch)
{
    /* the widest supported set is chosen, COLLTUNE_ISA lowers it, unknown names are ignored */
    enum ct_isa best = CT_ISA_GENERIC;
    for (int isa = 0; isa < CT_ISA_COUNT; isa++)
        if (ct_isa_supported((enum ct_isa)isa))
            best = (enum ct_isa)isa;
    unsetenv("COLLTUNE_ISA");
    cr_assert_eq(ct_isa_best(), best);
    cr_assert_eq(ct_kernels_isa(), ct_kernels_for(best));
    cr_assert_eq(ct_reduce_fn_get(CT_FLOAT32, CT_SUM), ct_kernels_for(best)->red[CT_FLOAT32][CT_SUM]);
    setenv("COLLTUNE_ISA", "generic", 1);
    cr_assert_eq(ct_isa_best(), CT_ISA_GENERIC);
    cr_assert_eq(ct_reduce_fn_get(CT_INT8, CT_MAX),
                 ct_kernels_for(CT_ISA_GENERIC)->red[CT_INT8][CT_MAX]);
    cr_assert_eq(ct_scale_fn_get(CT_FLOAT16), ct_kernels_for(CT_ISA_GENERIC)->scale[CT_FLOAT16]);
    setenv("COLLTUNE_ISA", "avx2", 1);
    cr_assert_eq(ct_isa_best(), best < CT_ISA_AVX2 ? best : CT_ISA_AVX2);
    setenv("COLLTUNE_ISA", "bogus", 1);
    cr_assert_eq(ct_isa_best(), best);
    unsetenv("COLLTUNE_ISA");
    cr_assert_str_eq(ct_isa_name(CT_ISA_AVX512), "avx512");
    cr_assert_null(ct_kernels_for(CT_ISA_COUNT));
}

/* ---- Streaming stores: the same bytes as memcpy and the kernel, any alignment, in place ---- */

#include "lib/memnt.h"

Test(reduce, streaming_copy_and_reduce_match)
{
    uint64_t seed = 99;
    static const size_t lens[] = {0, 1, 15, 16, 63, 64, 100, 4095, 4096, 4100, 20000};
    for (size_t k = 0; k < sizeof lens / sizeof lens[0]; k++)
        for (size_t mis = 0; mis < 3; mis++) {
            size_t n = lens[k];
            unsigned char *a = malloc(n + 64), *b = malloc(n + 64), *d = malloc(n + 64);
            unsigned char *w = malloc(n + 64);
            fill_bytes(a, n + 64, &seed);
            fill_bytes(b, n + 64, &seed);
            ct_copy_nt(d + mis * 4, a + mis, n);
            cr_assert(!memcmp(d + mis * 4, a + mis, n), "copy of %zu bytes, offset %zu", n, mis);
            /* float32 sum, dst separate and dst == a */
            struct ct_red red = {ct_reduce_fn_get(CT_FLOAT32, CT_SUM), 4,
                                 ct_reduce_fn_rev_get(CT_FLOAT32, CT_SUM), NULL};
            size_t m = n / 4 * 4;
            float *fa = (float *)(void *)(a + mis * 4), *fb = (float *)(void *)(b + mis * 4);
            red.fn(w, fa, fb, m / 4);
            ct_reduce_nt(&red, d, fa, fb, m);
            cr_assert(!memcmp(d, w, m), "reduce of %zu bytes", m);
            ct_reduce_nt(&red, fa, fa, fb, m);
            cr_assert(!memcmp(fa, w, m), "reduce in place of %zu bytes", m);
            free(a);
            free(b);
            free(d);
            free(w);
        }
}

/* ct_copy takes its own loop when the destination is 1..15 bytes past the source in page
 * offset (glibc's slow rep movsb case) and memcpy otherwise; ct_copy_handoff takes rep movsb
 * from CT_HANDOFF_MOVSB_MIN bytes, except in that case: the same bytes every way, at every
 * relative offset and around the sizes where the paths switch, with the bytes around the
 * destination untouched. */
Test(reduce, data_path_copy_every_relative_offset)
{
    uint64_t seed = 7;
    static const size_t lens[] = {
        0,    1,    63,   64,   65,   1023,  1024,  1025,           2047,
        2048, 2049, 2111, 2112, 4096, 16380, 65528, (2u << 20) - 4, 2u << 20};
    static void (*const copy[])(void *, const void *, size_t) = {ct_copy, ct_copy_handoff};
    size_t cap = (2u << 20) + 8192;
    unsigned char *src = aligned_alloc(4096, cap), *dst = aligned_alloc(4096, cap);
    unsigned char *ref = malloc(cap), *orig = malloc(cap);
    fill_bytes(src, cap, &seed);
    fill_bytes(orig, cap, &seed); /* the destination's bytes before each copy */
    memcpy(dst, orig, cap);
    memcpy(ref, orig, cap);
    for (int f = 0; f < 2; f++)
        for (size_t k = 0; k < sizeof lens / sizeof lens[0]; k++)
            for (size_t rel = 0; rel <= 80; rel += (lens[k] > 100000 ? 20 : 1)) {
                size_t n = lens[k], so = 4096 + 12, d0 = so + rel; /* dst - src offset = rel */
                memcpy(ref + d0, src + so, n);
                copy[f](dst + d0, src + so, n);
                cr_assert(!memcmp(dst, ref, cap),
                          "%s of %zu bytes, destination %zu past the source",
                          f ? "ct_copy_handoff" : "ct_copy", n, rel);
                memcpy(dst + d0, orig + d0, n); /* back to the bytes before */
                memcpy(ref + d0, orig + d0, n);
            }
    free(src);
    free(dst);
    free(ref);
    free(orig);
}
