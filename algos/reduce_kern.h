/* SPDX-License-Identifier: MIT */
/*
 * One instruction set's kernel table, included by algos/reduce.c once per set with ISA
 * defined (generic, avx2, avx512) under the matching target pragma. No include guard:
 * every inclusion instantiates the kernels again under new names (FN(x) = x_ISA).
 */
KERNELS(i8, int8_t)
KERNELS(u8, uint8_t)
KERNELS(i32, int32_t)
KERNELS(u32, uint32_t)
KERNELS(i64, int64_t)
KERNELS(u64, uint64_t)
KERNELS(f32, float)
KERNELS(f64, double)

HALF_KERNELS(f16, ct_f16_to_f32, ct_f32_to_f16_wide)
HALF_KERNELS(bf16, ct_bf16_to_f32, ct_f32_to_bf16_wide)

INT_SCALE(u32, uint32_t)
INT_SCALE(i64, int64_t)
INT_SCALE(u64, uint64_t)
FAST_INT_SCALE(i8, int8_t, float)
FAST_INT_SCALE(u8, uint8_t, float)
FAST_INT_SCALE(i32, int32_t, double)
FLOAT_SCALE(f32, float)
FLOAT_SCALE(f64, double)
HALF_SCALE(f16, ct_f16_to_f32, ct_f32_to_f16_wide)
HALF_SCALE(bf16, ct_bf16_to_f32, ct_f32_to_bf16_wide)

/* The kernels with their operands swapped: dst = b op a (rank order kept when the incoming
 * operand comes first). */
#define REV(NAME)                                                                                  \
    static void FN(NAME##_rev)(void *dst, const void *a, const void *b, size_t n)                  \
    {                                                                                              \
        FN(NAME)(dst, b, a, n);                                                                    \
    }
#define REVS(S) REV(k_sum_##S) REV(k_prod_##S) REV(k_min_##S) REV(k_max_##S)
REVS(i8)
REVS(u8)
REVS(i32)
REVS(u32)
REVS(i64)
REVS(u64)
REVS(f16)
REVS(bf16)
REVS(f32)
REVS(f64)
#undef REVS
#undef REV

/* Copy: glibc's memcpy (dispatched per CPU, non-temporal above its shared-cache threshold)
 * except where its rep movsb is slow (lib/memnt.h ct_copy); the row exists so every copy
 * goes through the same table as the reductions. */
static void *FN(copy)(void *dst, const void *src, size_t n)
{
    ct_copy(dst, src, n);
    return dst;
}

/* Indexed by dtype, then op (sum, prod, min, max); avg uses the sum kernel. */
static const struct ct_kernels
    FN(table) =
        {
            .red =
                {
                    [CT_INT8] = {FN(k_sum_i8), FN(k_prod_i8), FN(k_min_i8), FN(k_max_i8)},
                    [CT_UINT8] = {FN(k_sum_u8), FN(k_prod_u8), FN(k_min_u8), FN(k_max_u8)},
                    [CT_INT32] = {FN(k_sum_i32), FN(k_prod_i32), FN(k_min_i32), FN(k_max_i32)},
                    [CT_UINT32] = {FN(k_sum_u32), FN(k_prod_u32), FN(k_min_u32), FN(k_max_u32)},
                    [CT_INT64] = {FN(k_sum_i64), FN(k_prod_i64), FN(k_min_i64), FN(k_max_i64)},
                    [CT_UINT64] = {FN(k_sum_u64), FN(k_prod_u64), FN(k_min_u64), FN(k_max_u64)},
                    [CT_FLOAT16] = {FN(k_sum_f16), FN(k_prod_f16), FN(k_min_f16), FN(k_max_f16)},
                    [CT_BFLOAT16] = {FN(k_sum_bf16), FN(k_prod_bf16), FN(k_min_bf16),
                                     FN(k_max_bf16)},
                    [CT_FLOAT32] = {FN(k_sum_f32), FN(k_prod_f32), FN(k_min_f32), FN(k_max_f32)},
                    [CT_FLOAT64] = {FN(k_sum_f64), FN(k_prod_f64), FN(k_min_f64), FN(k_max_f64)},
                },
            .rev =
                {
                    [CT_INT8] = {FN(k_sum_i8_rev), FN(k_prod_i8_rev), FN(k_min_i8_rev),
                                 FN(k_max_i8_rev)},
                    [CT_UINT8] = {FN(k_sum_u8_rev), FN(k_prod_u8_rev), FN(k_min_u8_rev),
                                  FN(k_max_u8_rev)},
                    [CT_INT32] = {FN(k_sum_i32_rev), FN(k_prod_i32_rev), FN(k_min_i32_rev),
                                  FN(k_max_i32_rev)},
                    [CT_UINT32] = {FN(k_sum_u32_rev), FN(k_prod_u32_rev), FN(k_min_u32_rev),
                                   FN(k_max_u32_rev)},
                    [CT_INT64] = {FN(k_sum_i64_rev), FN(k_prod_i64_rev), FN(k_min_i64_rev),
                                  FN(k_max_i64_rev)},
                    [CT_UINT64] = {FN(k_sum_u64_rev), FN(k_prod_u64_rev), FN(k_min_u64_rev),
                                   FN(k_max_u64_rev)},
                    [CT_FLOAT16] = {FN(k_sum_f16_rev), FN(k_prod_f16_rev), FN(k_min_f16_rev),
                                    FN(k_max_f16_rev)},
                    [CT_BFLOAT16] = {FN(k_sum_bf16_rev), FN(k_prod_bf16_rev), FN(k_min_bf16_rev),
                                     FN(k_max_bf16_rev)},
                    [CT_FLOAT32] = {FN(k_sum_f32_rev), FN(k_prod_f32_rev), FN(k_min_f32_rev),
                                    FN(k_max_f32_rev)},
                    [CT_FLOAT64] = {FN(k_sum_f64_rev), FN(k_prod_f64_rev), FN(k_min_f64_rev),
                                    FN(k_max_f64_rev)},
                },
            .red2 =
                {
                    [CT_INT8] = {FN(k_sum_i8_2), FN(k_prod_i8_2), FN(k_min_i8_2), FN(k_max_i8_2)},
                    [CT_UINT8] = {FN(k_sum_u8_2), FN(k_prod_u8_2), FN(k_min_u8_2), FN(k_max_u8_2)},
                    [CT_INT32] = {FN(k_sum_i32_2), FN(k_prod_i32_2), FN(k_min_i32_2),
                                  FN(k_max_i32_2)},
                    [CT_UINT32] = {FN(k_sum_u32_2), FN(k_prod_u32_2), FN(k_min_u32_2),
                                   FN(k_max_u32_2)},
                    [CT_INT64] = {FN(k_sum_i64_2), FN(k_prod_i64_2), FN(k_min_i64_2),
                                  FN(k_max_i64_2)},
                    [CT_UINT64] = {FN(k_sum_u64_2), FN(k_prod_u64_2), FN(k_min_u64_2),
                                   FN(k_max_u64_2)},
                    [CT_FLOAT16] = {FN(k_sum_f16_2), FN(k_prod_f16_2), FN(k_min_f16_2),
                                    FN(k_max_f16_2)},
                    [CT_BFLOAT16] = {FN(k_sum_bf16_2), FN(k_prod_bf16_2), FN(k_min_bf16_2),
                                     FN(k_max_bf16_2)},
                    [CT_FLOAT32] = {FN(k_sum_f32_2), FN(k_prod_f32_2), FN(k_min_f32_2),
                                    FN(k_max_f32_2)},
                    [CT_FLOAT64] = {FN(k_sum_f64_2), FN(k_prod_f64_2), FN(k_min_f64_2),
                                    FN(k_max_f64_2)},
                },
            .scale =
                {
                    [CT_INT8] = FN(scale_i8),
                    [CT_UINT8] = FN(scale_u8),
                    [CT_INT32] = FN(scale_i32),
                    [CT_UINT32] = FN(scale_u32),
                    [CT_INT64] = FN(scale_i64),
                    [CT_UINT64] = FN(scale_u64),
                    [CT_FLOAT16] = FN(scale_f16),
                    [CT_BFLOAT16] = FN(scale_bf16),
                    [CT_FLOAT32] = FN(scale_f32),
                    [CT_FLOAT64] = FN(scale_f64),
                },
            .copy = FN(copy),
};
