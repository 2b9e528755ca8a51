/* SPDX-License-Identifier: MIT */
/*
 * Reduction kernels (dst = a op b) for every datatype x op, the avg scale step and the copy
 * kernel, in one table per instruction set: the same plain C (shaped so that GCC -O2
 * vectorises it; float16/bfloat16 go through float) is compiled three times by
 * algos/reduce_kern.h, for generic x86-64 (or the build's target), AVX2 and AVX-512, with
 * per-function target pragmas so the rest of the build stays generic. ct_kernels_isa()
 * picks the widest set the CPU has, once per lookup (COLLTUNE_ISA can lower it).
 * Element-wise kernels do the same operation on the same operands in every variant, so the
 * variants give identical bits (tests/unit/test_reduce.c checks every type and op).
 */
#include "algo.h"
#include "half.h"
#include "../lib/memnt.h"

#include <math.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

/*
 * Loop shape. GCC 12 at -O2 vectorises with its "very cheap" cost model only: no runtime
 * alias checks and no scalar epilogue. So every kernel walks whole blocks of BLK
 * elements through restrict pointers (a constant trip count, a multiple of every vector
 * width) and finishes the last n % BLK elements with scalar code. restrict forbids dst
 * aliasing a source, so the exact in-place cases (dst == a, dst == b) get their own
 * two-pointer loops, and any other overlap takes a plain element-by-element loop.
 */
#define BLK 64

/*
 * Element operations. Integers wrap: the arithmetic is done in the unsigned type (no
 * signed overflow) and converted back (GCC defines that conversion as modulo 2^N).
 */
#define INT_OPS(S, T, U)                                                                           \
    static inline T add_##S(T x, T y)                                                              \
    {                                                                                              \
        return (T)((U)x + (U)y);                                                                   \
    }                                                                                              \
    static inline T mul_##S(T x, T y)                                                              \
    {                                                                                              \
        return (T)((U)x * (U)y);                                                                   \
    }                                                                                              \
    static inline T min_##S(T x, T y)                                                              \
    {                                                                                              \
        return x < y ? x : y;                                                                      \
    }                                                                                              \
    static inline T max_##S(T x, T y)                                                              \
    {                                                                                              \
        return x > y ? x : y;                                                                      \
    }

INT_OPS(i8, int8_t, uint8_t)
INT_OPS(u8, uint8_t, uint8_t)
INT_OPS(i32, int32_t, uint32_t)
INT_OPS(u32, uint32_t, uint32_t)
INT_OPS(i64, int64_t, uint64_t)
INT_OPS(u64, uint64_t, uint64_t)

/*
 * Float min/max. A NaN operand propagates: the result is that operand unchanged (x if
 * both are NaN; a NaN y already comes through the compare, which is false). Signed zeros are
 * ordered -0 < +0 as in IEEE 754-2019 minimum/maximum, so both ops are commutative bit for bit on
 * non-NaN input: min(+0, -0) = min(-0, +0) = -0 and max gives +0. Equal operands are merged bitwise
 * (OR keeps a sign bit, AND drops it), which is the identity when the bits are equal and the zero
 * rule otherwise. Only selects and bit operations, no float arithmetic: GCC will not if-convert a
 * possibly trapping float operation, and the loop would stay scalar.
 */
#define FLOAT_OPS(S, F, U)                                                                         \
    static inline U bits_##S(F f)                                                                  \
    {                                                                                              \
        U u;                                                                                       \
        memcpy(&u, &f, sizeof u);                                                                  \
        return u;                                                                                  \
    }                                                                                              \
    static inline F from_##S(U u)                                                                  \
    {                                                                                              \
        F f;                                                                                       \
        memcpy(&f, &u, sizeof f);                                                                  \
        return f;                                                                                  \
    }                                                                                              \
    static inline F add_##S(F x, F y)                                                              \
    {                                                                                              \
        return x + y;                                                                              \
    }                                                                                              \
    static inline F mul_##S(F x, F y)                                                              \
    {                                                                                              \
        return x * y;                                                                              \
    }                                                                                              \
    static inline F min_##S(F x, F y)                                                              \
    {                                                                                              \
        F m = x < y ? x : y;                                                                       \
        m = x == y ? from_##S(bits_##S(x) | bits_##S(y)) : m;                                      \
        return isnan(x) ? x : m;                                                                   \
    }                                                                                              \
    static inline F max_##S(F x, F y)                                                              \
    {                                                                                              \
        F m = x > y ? x : y;                                                                       \
        m = x == y ? from_##S(bits_##S(x) & bits_##S(y)) : m;                                      \
        return isnan(x) ? x : m;                                                                   \
    }

FLOAT_OPS(f32, float, uint32_t)
FLOAT_OPS(f64, double, uint64_t)

/* Function names carry the instruction set being compiled (ISA). */
#define PASTE3_(a, b, c) a##b##c
#define PASTE3(a, b, c) PASTE3_(a, b, c)
#define FN(name) PASTE3(name, _, ISA)

static void check_divisor(int divisor)
{
    if (divisor < 1)
        CT_BUG("avg divisor %d is not positive", divisor);
}

static inline int disjoint(const void *x, const void *y, size_t bytes)
{
    uintptr_t p = (uintptr_t)x, q = (uintptr_t)y;
    return p + bytes <= q || q + bytes <= p;
}

/*
 * One kernel: NAME(dst, a, b, n) dispatching to the three-pointer loop, the in-place
 * loops (d = d op s and d = s op d, so the operand order is kept bit for bit) or the
 * plain loop for any other overlap.
 */
#define KERNEL(NAME, T, OP)                                                                        \
    static void FN(NAME##_3)(T *restrict d, const T *restrict a, const T *restrict b, size_t n)    \
    {                                                                                              \
        size_t i = 0;                                                                              \
        for (; i + BLK <= n; i += BLK)                                                             \
            for (size_t j = 0; j < BLK; j++)                                                       \
                d[i + j] = OP(a[i + j], b[i + j]);                                                 \
        for (; i < n; i++)                                                                         \
            d[i] = OP(a[i], b[i]);                                                                 \
    }                                                                                              \
    static void FN(NAME##_2l)(T *restrict d, const T *restrict b, size_t n)                        \
    {                                                                                              \
        size_t i = 0;                                                                              \
        for (; i + BLK <= n; i += BLK)                                                             \
            for (size_t j = 0; j < BLK; j++)                                                       \
                d[i + j] = OP(d[i + j], b[i + j]);                                                 \
        for (; i < n; i++)                                                                         \
            d[i] = OP(d[i], b[i]);                                                                 \
    }                                                                                              \
    static void FN(NAME##_2r)(T *restrict d, const T *restrict a, size_t n)                        \
    {                                                                                              \
        size_t i = 0;                                                                              \
        for (; i + BLK <= n; i += BLK)                                                             \
            for (size_t j = 0; j < BLK; j++)                                                       \
                d[i + j] = OP(a[i + j], d[i + j]);                                                 \
        for (; i < n; i++)                                                                         \
            d[i] = OP(a[i], d[i]);                                                                 \
    }                                                                                              \
    static void FN(NAME##_d2)(T *restrict d, T *restrict e, const T *restrict a,                   \
                              const T *restrict b, size_t n)                                       \
    {                                                                                              \
        size_t i = 0;                                                                              \
        for (; i + BLK <= n; i += BLK)                                                             \
            for (size_t j = 0; j < BLK; j++) {                                                     \
                T v = OP(a[i + j], b[i + j]);                                                      \
                d[i + j] = v;                                                                      \
                e[i + j] = v;                                                                      \
            }                                                                                      \
        for (; i < n; i++)                                                                         \
            d[i] = e[i] = OP(a[i], b[i]);                                                          \
    }                                                                                              \
    static void FN(NAME)(void *dst, const void *a, const void *b, size_t n);                       \
    static void FN(NAME##_2)(void *dst, void *dst2, const void *a, const void *b, size_t n)        \
    {                                                                                              \
        size_t bytes = n * sizeof(T);                                                              \
        if (disjoint(dst, a, bytes) && disjoint(dst, b, bytes) && disjoint(dst2, a, bytes) &&      \
            disjoint(dst2, b, bytes) && disjoint(dst, dst2, bytes)) {                              \
            FN(NAME##_d2)(dst, dst2, a, b, n);                                                     \
        } else {                                                                                   \
            FN(NAME)(dst, a, b, n);                                                                \
            memcpy(dst2, dst, bytes);                                                              \
        }                                                                                          \
    }                                                                                              \
    static void FN(NAME)(void *dst, const void *a, const void *b, size_t n)                        \
    {                                                                                              \
        T *d = dst;                                                                                \
        const T *x = a, *y = b;                                                                    \
        size_t bytes = n * sizeof(T);                                                              \
        if (d == x && d != y && disjoint(d, y, bytes)) {                                           \
            FN(NAME##_2l)(d, y, n);                                                                \
        } else if (d == y && d != x && disjoint(d, x, bytes)) {                                    \
            FN(NAME##_2r)(d, x, n);                                                                \
        } else if (disjoint(d, x, bytes) && disjoint(d, y, bytes)) {                               \
            FN(NAME##_3)(d, x, y, n);                                                              \
        } else {                                                                                   \
            for (size_t i = 0; i < n; i++)                                                         \
                d[i] = OP(x[i], y[i]);                                                             \
        }                                                                                          \
    }

#define KERNELS(S, T)                                                                              \
    KERNEL(k_sum_##S, T, add_##S)                                                                  \
    KERNEL(k_prod_##S, T, mul_##S)                                                                 \
    KERNEL(k_min_##S, T, min_##S)                                                                  \
    KERNEL(k_max_##S, T, max_##S)

/*
 * float16/bfloat16: each block is widened into float arrays on the stack, reduced there
 * and rounded back (into uint32_t first, then narrowed: see ct_f32_to_f16_wide). One
 * rounding from float is the correctly rounded result for + and * (float has at least
 * 2p+2 significand bits for both formats); for the avg division it is, except for
 * bfloat16 results in the subnormal range. Whole blocks are read before dst is written,
 * so exact aliasing is harmless. The block helper is always inlined so that the
 * whole-block calls see the constant BLK and vectorise.
 */
#define HALF_KERNEL(NAME, TO, FROM, OP)                                                            \
    static inline __attribute__((always_inline)) void FN(NAME##_blk)(                              \
        uint16_t * d, const uint16_t *x, const uint16_t *y, size_t m)                              \
    {                                                                                              \
        float fx[BLK], fy[BLK];                                                                    \
        uint32_t r[BLK];                                                                           \
        for (size_t j = 0; j < m; j++)                                                             \
            fx[j] = TO(x[j]);                                                                      \
        for (size_t j = 0; j < m; j++)                                                             \
            fy[j] = TO(y[j]);                                                                      \
        for (size_t j = 0; j < m; j++)                                                             \
            fx[j] = OP(fx[j], fy[j]);                                                              \
        for (size_t j = 0; j < m; j++)                                                             \
            r[j] = FROM(fx[j]);                                                                    \
        for (size_t j = 0; j < m; j++)                                                             \
            d[j] = (uint16_t)r[j];                                                                 \
    }                                                                                              \
    static void FN(NAME)(void *dst, const void *a, const void *b, size_t n)                        \
    {                                                                                              \
        uint16_t *d = dst;                                                                         \
        const uint16_t *x = a, *y = b;                                                             \
        size_t i = 0;                                                                              \
        for (; i + BLK <= n; i += BLK)                                                             \
            FN(NAME##_blk)(d + i, x + i, y + i, BLK);                                              \
        if (i < n)                                                                                 \
            FN(NAME##_blk)(d + i, x + i, y + i, n - i);                                            \
    }

/* float16/bfloat16 write their second place after the first (no fused pass). */
#define HALF_KERNEL2(NAME)                                                                         \
    static void FN(NAME##_2)(void *dst, void *dst2, const void *a, const void *b, size_t n)        \
    {                                                                                              \
        FN(NAME)(dst, a, b, n);                                                                    \
        memcpy(dst2, dst, n * 2);                                                                  \
    }

#define HALF_KERNELS(S, TO, FROM)                                                                  \
    HALF_KERNEL(k_sum_##S, TO, FROM, add_f32)                                                      \
    HALF_KERNEL(k_prod_##S, TO, FROM, mul_f32)                                                     \
    HALF_KERNEL(k_min_##S, TO, FROM, min_f32)                                                      \
    HALF_KERNEL(k_max_##S, TO, FROM, max_f32)                                                      \
    HALF_KERNEL2(k_sum_##S) HALF_KERNEL2(k_prod_##S) HALF_KERNEL2(k_min_##S) HALF_KERNEL2(k_max_##S)

/*
 * avg scale: integers use C's truncating division (toward zero, as NCCL's
 * FuncSumPostDiv); float16/bfloat16/float32 divide in float, float64 in double.
 */

/* Scalar truncating division: the unsigned 32-bit and the 64-bit types. */
#define INT_SCALE(S, T)                                                                            \
    static void FN(scale_##S)(void *dst, size_t n, int divisor)                                    \
    {                                                                                              \
        T *d = dst;                                                                                \
        check_divisor(divisor);                                                                    \
        for (size_t i = 0; i < n; i++)                                                             \
            d[i] = (T)(d[i] / (T)divisor);                                                         \
    }

/*
 * 8-bit and int32 quotients go through a float (double for int32) division and a
 * truncating conversion, which vectorise (x86 has no vector integer division) and are
 * exact: when x / q is not an integer it is at least 1/q away from one, and the rounding
 * error, at most 2^-24 * 2^8 / q (2^-53 * 2^31 / q), is smaller. (float)q is inexact only
 * above 2^24, where every 8-bit quotient is 0 either way.
 */
#define FAST_INT_SCALE(S, T, F)                                                                    \
    static void FN(scale_##S)(void *dst, size_t n, int divisor)                                    \
    {                                                                                              \
        T *d = dst;                                                                                \
        F q = (F)divisor;                                                                          \
        size_t i = 0;                                                                              \
        check_divisor(divisor);                                                                    \
        for (; i + BLK <= n; i += BLK)                                                             \
            for (size_t j = 0; j < BLK; j++)                                                       \
                d[i + j] = (T)(int32_t)((F)d[i + j] / q);                                          \
        for (; i < n; i++)                                                                         \
            d[i] = (T)(int32_t)((F)d[i] / q);                                                      \
    }

#define FLOAT_SCALE(S, F)                                                                          \
    static void FN(scale_##S)(void *dst, size_t n, int divisor)                                    \
    {                                                                                              \
        F *d = dst, q = (F)divisor;                                                                \
        size_t i = 0;                                                                              \
        check_divisor(divisor);                                                                    \
        for (; i + BLK <= n; i += BLK)                                                             \
            for (size_t j = 0; j < BLK; j++)                                                       \
                d[i + j] = d[i + j] / q;                                                           \
        for (; i < n; i++)                                                                         \
            d[i] = d[i] / q;                                                                       \
    }

#define HALF_SCALE(S, TO, FROM)                                                                    \
    static inline __attribute__((always_inline)) void FN(scale_##S##_blk)(uint16_t * d, size_t m,  \
                                                                          float q)                 \
    {                                                                                              \
        uint32_t r[BLK];                                                                           \
        for (size_t j = 0; j < m; j++)                                                             \
            r[j] = FROM(TO(d[j]) / q);                                                             \
        for (size_t j = 0; j < m; j++)                                                             \
            d[j] = (uint16_t)r[j];                                                                 \
    }                                                                                              \
    static void FN(scale_##S)(void *dst, size_t n, int divisor)                                    \
    {                                                                                              \
        uint16_t *d = dst;                                                                         \
        float q = (float)divisor;                                                                  \
        size_t i = 0;                                                                              \
        check_divisor(divisor);                                                                    \
        for (; i + BLK <= n; i += BLK)                                                             \
            FN(scale_##S##_blk)(d + i, BLK, q);                                                    \
        if (i < n)                                                                                 \
            FN(scale_##S##_blk)(d + i, n - i, q);                                                  \
    }

#define ISA generic
#include "reduce_kern.h"
#undef ISA

#if defined(__x86_64__) && defined(__GNUC__)
#pragma GCC push_options
#pragma GCC target("avx2")
#define ISA avx2
#include "reduce_kern.h"
#undef ISA
#pragma GCC pop_options

#pragma GCC push_options
#pragma GCC target("avx512f,avx512bw,avx512vl,avx512dq,prefer-vector-width=512")
#define ISA avx512
#include "reduce_kern.h"
#undef ISA
#pragma GCC pop_options
#define HAVE_X86_VARIANTS 1
#endif

static const char *const isa_names[CT_ISA_COUNT] = {"generic", "avx2", "avx512"};

const char *ct_isa_name(enum ct_isa isa)
{
    return (unsigned)isa < CT_ISA_COUNT ? isa_names[isa] : "?";
}

bool ct_isa_supported(enum ct_isa isa)
{
    switch (isa) {
    case CT_ISA_GENERIC: return true;
#ifdef HAVE_X86_VARIANTS
    case CT_ISA_AVX2: __builtin_cpu_init(); return __builtin_cpu_supports("avx2");
    case CT_ISA_AVX512:
        __builtin_cpu_init();
        return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
               __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq");
#endif
    default: return false;
    }
}

enum ct_isa ct_isa_best(void)
{
    enum ct_isa cap = CT_ISA_COUNT - 1;
    const char *e = getenv("COLLTUNE_ISA");
    for (int i = 0; e && i < CT_ISA_COUNT; i++)
        if (!strcmp(e, isa_names[i]))
            cap = (enum ct_isa)i;
    for (int i = (int)cap; i > 0; i--)
        if (ct_isa_supported((enum ct_isa)i))
            return (enum ct_isa)i;
    return CT_ISA_GENERIC;
}

const struct ct_kernels *ct_kernels_for(enum ct_isa isa)
{
    if (!ct_isa_supported(isa))
        return NULL;
    switch (isa) {
#ifdef HAVE_X86_VARIANTS
    case CT_ISA_AVX2: return &table_avx2;
    case CT_ISA_AVX512: return &table_avx512;
#endif
    default: return &table_generic;
    }
}

const struct ct_kernels *ct_kernels_isa(void)
{
    return ct_kernels_for(ct_isa_best());
}

ct_reduce_fn ct_reduce_fn_get(enum ct_dtype t, enum ct_redop op)
{
    if ((unsigned)t >= CT_DTYPE_COUNT || (unsigned)op >= CT_REDOP_COUNT)
        return NULL;
    return ct_kernels_isa()->red[t][op == CT_AVG ? CT_SUM : op];
}

ct_reduce_fn ct_reduce_fn_rev_get(enum ct_dtype t, enum ct_redop op)
{
    if ((unsigned)t >= CT_DTYPE_COUNT || (unsigned)op >= CT_REDOP_COUNT)
        return NULL;
    return ct_kernels_isa()->rev[t][op == CT_AVG ? CT_SUM : op];
}

ct_reduce2_fn ct_reduce2_fn_get(enum ct_dtype t, enum ct_redop op)
{
    if ((unsigned)t >= CT_DTYPE_COUNT || (unsigned)op >= CT_REDOP_COUNT)
        return NULL;
    return ct_kernels_isa()->red2[t][op == CT_AVG ? CT_SUM : op];
}

ct_scale_fn ct_scale_fn_get(enum ct_dtype t)
{
    return (unsigned)t < CT_DTYPE_COUNT ? ct_kernels_isa()->scale[t] : NULL;
}
