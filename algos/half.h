/* SPDX-License-Identifier: MIT */
/*
 * Portable bit-level conversions between float and IEEE binary16 (float16) or bfloat16,
 * carried as uint16_t. Branch-free so that loops over them vectorise.
 */
#ifndef CT_HALF_H
#define CT_HALF_H

#include <stdint.h>
#include <string.h>

static inline uint32_t ct_f32_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static inline float ct_f32_from_bits(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* Bit mask of all ones when c is true. */
static inline uint32_t ct_mask32(int c)
{
    return 0u - (uint32_t)(c != 0);
}

/*
 * Exact: every float16 value (subnormals, infinities, NaN payloads) is a float. Cases
 * are merged with masks, not branches or ?:, so that GCC never moves a float operation
 * under a condition (it would not if-convert it back and the loop would stay scalar).
 * Compares are on int32_t: SSE2 has no unsigned vector compare.
 */
static inline float ct_f16_to_f32(uint16_t h)
{
    uint32_t em = h & 0x7fffu;
    uint32_t o = (em << 13) + (112u << 23);                    /* rebias 15 -> 127 */
    o += ct_mask32((int32_t)em >= 0x7c00) & (112u << 23);      /* inf/NaN: exponent 255 */
    uint32_t sub = ct_f32_bits((float)(int32_t)em * 0x1p-24f); /* exact, no denormal math */
    uint32_t is_sub = ct_mask32((int32_t)em < 0x400);
    o = (sub & is_sub) | (o & ~is_sub);
    return ct_f32_from_bits(o | ((uint32_t)(h & 0x8000u) << 16));
}

/*
 * ct_f32_to_f16 with the result in a uint32_t: loops that store these into a uint32_t
 * array and narrow in a second pass vectorise better (GCC otherwise narrows early and
 * shuffles every mask).
 */
static inline uint32_t ct_f32_to_f16_wide(float f)
{
    uint32_t u = ct_f32_bits(f);
    uint32_t sign = (u >> 16) & 0x8000u;
    uint32_t a = u & 0x7fffffffu;
    /* Normal: rebias the exponent, round the 13 dropped bits half-to-even by carrying. */
    uint32_t normal = (a - (112u << 23) + 0xfffu + ((a >> 13) & 1u)) >> 13;
    /* Subnormal: adding 0.5 leaves the float16 quantum (2^-24) as the float ulp. */
    uint32_t sub = ct_f32_bits(ct_f32_from_bits(a) + 0.5f) - 0x3f000000u;
    uint32_t nan = 0x7e00u | ((a >> 13) & 0x3ffu);
    uint32_t is_sub = ct_mask32((int32_t)a < (int32_t)(113u << 23));  /* below 2^-14 */
    uint32_t is_inf = ct_mask32((int32_t)a >= (int32_t)(143u << 23)); /* 2^16 up, NaN */
    uint32_t is_nan = ct_mask32((int32_t)a > 0x7f800000);
    uint32_t r = (sub & is_sub) | (normal & ~(is_sub | is_inf));
    r |= (0x7c00u & is_inf & ~is_nan) | (nan & is_nan);
    return sign | r;
}

/*
 * Round to nearest even. Overflow gives infinity, NaN stays NaN (quieted, sign and top
 * payload bits kept). The subnormal range uses a float addition, so it assumes the
 * default rounding mode (the whole project does).
 */
static inline uint16_t ct_f32_to_f16(float f)
{
    return (uint16_t)ct_f32_to_f16_wide(f);
}

/* Exact: bfloat16 is the top half of a float. */
static inline float ct_bf16_to_f32(uint16_t h)
{
    return ct_f32_from_bits((uint32_t)h << 16);
}

/* ct_f32_to_bf16 with the result in a uint32_t (see ct_f32_to_f16_wide). */
static inline uint32_t ct_f32_to_bf16_wide(float f)
{
    uint32_t u = ct_f32_bits(f);
    uint32_t rounded = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
    uint32_t nan = (u >> 16) | 0x40u;
    uint32_t is_nan = ct_mask32((int32_t)(u & 0x7fffffffu) > 0x7f800000);
    return (nan & is_nan) | (rounded & ~is_nan);
}

/* Round to nearest even; overflow gives infinity; NaN stays NaN (quieted, sign kept). */
static inline uint16_t ct_f32_to_bf16(float f)
{
    return (uint16_t)ct_f32_to_bf16_wide(f);
}

#endif
