/* SPDX-License-Identifier: MIT */
/*
 * Quantization kernels and the quantized ring AllReduce (see quant.h).
 *
 * Schedule of rank r (N ranks, per channel c; S0/S1/R are wire slots in scratch):
 *   pre      S0 = enc(SEND[r])
 *   RS k     send S[k%2] -> r+1, recv R <- r-1;  then RECV[r-k-1] = SEND[r-k-1] + dec(R),
 *            S[(k+1)%2] = enc(RECV[r-k-1])
 *   last RS  RECV[r+1] = dec(S[(N-1)%2])  (the owner takes its block as peers will see it)
 *   AG k     send S[(N-1+k)%2] -> r+1, recv S[(N+k)%2] <- r-1 (codes forwarded unchanged);
 *            then RECV[r-k] = dec(S[(N+k)%2])
 * Wire bytes per element: 1 + 4/CT_QUANT_BLOCK (3.94x fewer than float32).
 */
#include "quant.h"

#include <math.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "algo.h"

static const char *const names[CT_QUANT_COUNT] = {"none", "int8", "fp8e4m3", "fp8e5m2"};

const char *ct_quant_name(enum ct_quant q)
{
    return (unsigned)q < CT_QUANT_COUNT ? names[q] : "?";
}

int ct_quant_find(const char *name)
{
    for (int i = 0; i < CT_QUANT_COUNT; i++)
        if (!strcmp(names[i], name))
            return i;
    return -1;
}

static uint64_t nblocks(uint64_t n)
{
    return (n + CT_QUANT_BLOCK - 1) / CT_QUANT_BLOCK;
}


/* Largest finite value of each format. */
static float fmax_of(enum ct_quant q)
{
    return q == CT_QUANT_INT8 ? 127.0f : q == CT_QUANT_FP8E4M3 ? 448.0f : 57344.0f;
}

static inline uint32_t fbits(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

static inline float bitsf(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* |y| <= the format's max, finite: the fp8 code (sign separate) with M mantissa bits and
 * exponent bias B, round to nearest even. */
static inline uint8_t fp8_mag(float a, int M, int B)
{
    float minnorm = bitsf((uint32_t)(127 + 1 - B) << 23);
    if (a < minnorm) /* subnormal: multiples of 2^(1-B-M) */
        return (uint8_t)nearbyintf(a * bitsf((uint32_t)(127 + M + B - 1) << 23));
    uint32_t u = fbits(a), sh = (uint32_t)(23 - M);
    u += ((1u << (sh - 1)) - 1) + ((u >> sh) & 1);
    int e = (int)(u >> 23) - 127 + B;
    return (uint8_t)(((uint32_t)e << M) | ((u >> sh) & ((1u << M) - 1)));
}

static inline float fp8_val(uint8_t c, int M, int B)
{
    uint32_t e = (c >> M) & ((1u << (7 - M)) - 1), m = c & ((1u << M) - 1);
    float v = e ? bitsf(((e - (uint32_t)B + 127) << 23) | (m << (23 - M)))
                : (float)m * bitsf((uint32_t)(127 + 1 - B - M) << 23);
    return c & 0x80 ? -v : v;
}

static inline uint8_t enc1(enum ct_quant q, float y, float fm)
{
    float a = fabsf(y);
    if (!(a <= fm)) /* saturate (also NaN -> max: a broken input must not poison a block) */
        a = fm;
    if (q == CT_QUANT_INT8) {
        int v = (int)(a + 0.5f);
        return (uint8_t)(int8_t)(y < 0 ? -v : v);
    }
    uint8_t m = q == CT_QUANT_FP8E4M3 ? fp8_mag(a, 3, 7) : fp8_mag(a, 2, 15);
    return (uint8_t)(m | (y < 0 && m ? 0x80 : 0));
}

static inline float dec1(enum ct_quant q, uint8_t c)
{
    if (q == CT_QUANT_INT8)
        return (float)(int8_t)c;
    return q == CT_QUANT_FP8E4M3 ? fp8_val(c, 3, 7) : fp8_val(c, 2, 15);
}

/* Largest |x| of len values (NaN ignored). The SSE2 path gives the same bits: max is
 * exact in any order. */
static float block_amax(const float *x, uint64_t len)
{
    float amax = 0;
    uint64_t i = 0;
#if defined(__SSE2__)
    __m128 m = _mm_setzero_ps(), abs = _mm_castsi128_ps(_mm_set1_epi32(0x7fffffff));
    for (; i + 4 <= len; i += 4) /* max(a, m) returns m when a is NaN */
        m = _mm_max_ps(_mm_and_ps(_mm_loadu_ps(x + i), abs), m);
    float t[4];
    _mm_storeu_ps(t, m);
    for (int k = 0; k < 4; k++)
        amax = t[k] > amax ? t[k] : amax;
#endif
    for (; i < len; i++) {
        float a = fabsf(x[i]);
        amax = a > amax ? a : amax;
    }
    return amax;
}

/* int8 codes of len values: v = x * inv clamped to [-127, 127] (NaN -> 127), rounded half
 * away from zero by truncating v +- 0.5. The SSE2 path does the same operations. */
static void enc_int8(uint8_t *codes, const float *x, uint64_t len, float inv)
{
    const float fm = 127.0f;
    uint64_t i = 0;
#if defined(__SSE2__)
    __m128 vi = _mm_set1_ps(inv), hi = _mm_set1_ps(fm), lo = _mm_set1_ps(-fm),
           half = _mm_set1_ps(0.5f), zero = _mm_setzero_ps();
    __m128 sign = _mm_castsi128_ps(_mm_set1_epi32((int)0x80000000u));
    for (; i + 16 <= len; i += 16) {
        __m128i r[4];
        for (int k = 0; k < 4; k++) {
            __m128 v = _mm_mul_ps(_mm_loadu_ps(x + i + 4 * k), vi);
            v = _mm_min_ps(v, hi); /* NaN -> hi (minps returns the second operand) */
            v = _mm_max_ps(v, lo);
            __m128 h = _mm_or_ps(half, _mm_and_ps(_mm_cmplt_ps(v, zero), sign));
            r[k] = _mm_cvttps_epi32(_mm_add_ps(v, h));
        }
        __m128i w = _mm_packs_epi16(_mm_packs_epi32(r[0], r[1]), _mm_packs_epi32(r[2], r[3]));
        _mm_storeu_si128((__m128i *)(codes + i), w);
    }
#endif
    for (; i < len; i++) {
        float v = x[i] * inv;
        v = v < fm ? v : fm;
        v = v > -fm ? v : -fm;
        codes[i] = (uint8_t)(int8_t)(int)(v + (v < 0 ? -0.5f : 0.5f));
    }
}

/* dst = a + code * s (a may be NULL: dst = code * s) for int8 codes. */
static void dec_int8(float *dst, const float *a, const uint8_t *codes, uint64_t len, float s)
{
    uint64_t i = 0;
#if defined(__SSE2__)
    __m128 vs = _mm_set1_ps(s);
    for (; i + 16 <= len; i += 16) {
        __m128i c = _mm_loadu_si128((const __m128i *)(codes + i));
        __m128i w[2] = {_mm_srai_epi16(_mm_unpacklo_epi8(c, c), 8),
                        _mm_srai_epi16(_mm_unpackhi_epi8(c, c), 8)};
        for (int h = 0; h < 2; h++) {
            __m128i d[2] = {_mm_srai_epi32(_mm_unpacklo_epi16(w[h], w[h]), 16),
                            _mm_srai_epi32(_mm_unpackhi_epi16(w[h], w[h]), 16)};
            for (int k = 0; k < 2; k++) {
                uint64_t o = i + 8 * (uint64_t)h + 4 * (uint64_t)k;
                __m128 v = _mm_mul_ps(_mm_cvtepi32_ps(d[k]), vs);
                if (a)
                    v = _mm_add_ps(_mm_loadu_ps(a + o), v);
                _mm_storeu_ps(dst + o, v);
            }
        }
    }
#endif
    for (; i < len; i++) {
        float v = (float)(int8_t)codes[i] * s;
        dst[i] = a ? a[i] + v : v;
    }
}

void ct_quant_encode(enum ct_quant q, void *wire, const float *src, uint64_t n)
{
    uint64_t nb = nblocks(n);
    float *scales = wire;
    uint8_t *codes = (uint8_t *)wire + nb * 4;
    float fm = fmax_of(q);
    for (uint64_t b = 0; b < nb; b++) {
        uint64_t o = b * CT_QUANT_BLOCK, len = n - o < CT_QUANT_BLOCK ? n - o : CT_QUANT_BLOCK;
        float amax = block_amax(src + o, len);
        float scale = amax > 0 && isfinite(amax) ? amax / fm : 0;
        float inv = scale > 0 ? fm / amax : 0;
        scales[b] = scale;
        if (q == CT_QUANT_INT8)
            enc_int8(codes + o, src + o, len, inv);
        else
            for (uint64_t i = 0; i < len; i++)
                codes[o + i] = enc1(q, src[o + i] * inv, fm);
    }
}

void ct_quant_decode_add(enum ct_quant q, float *dst, const float *a, const void *wire,
                         uint64_t n)
{
    uint64_t nb = nblocks(n);
    const float *scales = wire;
    const uint8_t *codes = (const uint8_t *)wire + nb * 4;
    float lut[256];
    for (int c = 0; c < 256; c++)
        lut[c] = dec1(q, (uint8_t)c);
    for (uint64_t b = 0; b < nb; b++) {
        uint64_t o = b * CT_QUANT_BLOCK, len = n - o < CT_QUANT_BLOCK ? n - o : CT_QUANT_BLOCK;
        float s = scales[b];
        if (q == CT_QUANT_INT8)
            dec_int8(dst + o, a ? a + o : NULL, codes + o, len, s);
        else if (a)
            for (uint64_t i = 0; i < len; i++)
                dst[o + i] = a[o + i] + lut[codes[o + i]] * s;
        else
            for (uint64_t i = 0; i < len; i++)
                dst[o + i] = lut[codes[o + i]] * s;
    }
}

void ct_quant_decode(enum ct_quant q, float *dst, const void *wire, uint64_t n)
{
    ct_quant_decode_add(q, dst, NULL, wire, n);
}

void ct_qring_block(uint64_t count, int nch, int nranks, int c, int b, uint64_t *off,
                    uint64_t *n)
{
    uint64_t nb = nblocks(count);
    uint64_t cb = ct_part_off(nb, (uint64_t)nch, (uint64_t)c),
             cn = ct_part_len(nb, (uint64_t)nch, (uint64_t)c);
    uint64_t first = (cb + ct_part_off(cn, (uint64_t)nranks, (uint64_t)b)) * CT_QUANT_BLOCK;
    uint64_t last = first + ct_part_len(cn, (uint64_t)nranks, (uint64_t)b) * CT_QUANT_BLOCK;
    if (first > count)
        first = count;
    if (last > count)
        last = count;
    *off = first;
    *n = last - first;
}

/* Which ring block (its first rank of the chain) holds element i. */
static int block_of(uint64_t count, int nch, int nranks, uint64_t i, uint64_t *end)
{
    for (int c = 0; c < nch; c++)
        for (int b = 0; b < nranks; b++) {
            uint64_t off, n;
            ct_qring_block(count, nch, nranks, c, b, &off, &n);
            if (i >= off && i < off + n) {
                *end = off + n;
                return b;
            }
        }
    *end = count;
    return 0;
}

#define REF_PIECE (64u * CT_QUANT_BLOCK)

void ct_qring_reference(enum ct_quant q, int nranks, int nch, uint64_t count, uint64_t first,
                        uint64_t n, ct_qring_fill_fn fill, void *ctx, float *out)
{
    float acc[REF_PIECE], x[REF_PIECE];
    uint32_t wire[REF_PIECE / 4 + REF_PIECE / CT_QUANT_BLOCK + 1];
    uint64_t i = first, stop = first + n;
    while (i < stop) {
        uint64_t bend;
        int b = block_of(count, nch, nranks, i, &bend);
        /* ring blocks start on quantization-block boundaries, so do pieces */
        uint64_t blk0 = i / CT_QUANT_BLOCK * CT_QUANT_BLOCK;
        uint64_t pend = blk0 + REF_PIECE < bend ? blk0 + REF_PIECE : bend;
        uint64_t len = pend - blk0;
        fill(ctx, b, blk0, len, acc);
        for (int t = 1; t < nranks; t++) {
            ct_quant_encode(q, wire, acc, len);
            fill(ctx, (b + t) % nranks, blk0, len, x);
            ct_quant_decode_add(q, acc, x, wire, len);
        }
        ct_quant_encode(q, wire, acc, len);
        ct_quant_decode(q, acc, wire, len);
        uint64_t to = pend < stop ? pend : stop;
        memcpy(out + (i - first), acc + (i - blk0), (to - i) * sizeof(float));
        i = to;
    }
}

static uint64_t align64(uint64_t x)
{
    return (x + 63) & ~(uint64_t)63;
}

static void quant_op(struct ct_sched *s, enum ct_opk kind, enum ct_quant q, struct ct_loc dst,
                     struct ct_loc src, struct ct_loc src2, uint64_t n)
{
    if (n)
        ct_sched_quant(s, kind, (int)q, dst, src, src2, n * 4);
}

int ct_qring_build(const struct ct_job *j, struct ct_sched *s, struct ct_err *err)
{
    int N = j->shape.nranks, r = j->shape.rank, nch = (int)j->params.v[CT_P_CHANNELS];
    int next = (r + 1) % N, prev = (r + N - 1) % N;
    enum ct_quant q = j->quant;
    if (nch < 1)
        nch = 1;
    uint64_t W = 0;
    for (int c = 0; c < nch; c++)
        for (int b = 0; b < N; b++) {
            uint64_t off, n;
            ct_qring_block(j->count, nch, N, c, b, &off, &n);
            if (ct_quant_wire_bytes(q, n) > W)
                W = ct_quant_wire_bytes(q, n);
        }
    W = align64(W);
    /* slot k (0, 1: send/forward slots; 2: RS receive) of channel c */
#define SLOT(k, c) ct_loc(CT_BUF_SCRATCH, ((uint64_t)(k) * (uint64_t)nch + (uint64_t)(c)) * W)
#define FL(buf, off) ct_loc((buf), (off) * 4)
#define MOD(a) ((((a) % N) + N) % N)
    struct ct_loc none = {0, 0};
    uint64_t off, n, off2, n2;
    ct_sched_step(s);
    for (int c = 0; c < nch; c++) {
        ct_qring_block(j->count, nch, N, c, r, &off, &n);
        quant_op(s, CT_OP_QUANT, q, SLOT(0, c), FL(CT_BUF_SEND, off), none, n);
    }
    for (int k = 0; k < N - 1; k++) {
        ct_sched_step(s);
        for (int c = 0; c < nch; c++) {
            ct_qring_block(j->count, nch, N, c, MOD(r - k), &off, &n);
            ct_qring_block(j->count, nch, N, c, MOD(r - k - 1), &off2, &n2);
            ct_sched_send(s, next, SLOT(k % 2, c), ct_quant_wire_bytes(q, n));
            ct_sched_recv(s, prev, SLOT(2, c), ct_quant_wire_bytes(q, n2));
        }
        for (int c = 0; c < nch; c++) {
            ct_qring_block(j->count, nch, N, c, MOD(r - k - 1), &off2, &n2);
            quant_op(s, CT_OP_DEQUANT_ADD, q, FL(CT_BUF_RECV, off2), SLOT(2, c),
                     FL(CT_BUF_SEND, off2), n2);
            quant_op(s, CT_OP_QUANT, q, SLOT((k + 1) % 2, c), FL(CT_BUF_RECV, off2), none, n2);
        }
    }
    /* the owned block (r+1; r itself when N = 1) as every peer will decode it */
    ct_sched_step(s);
    for (int c = 0; c < nch; c++) {
        ct_qring_block(j->count, nch, N, c, MOD(r + 1), &off, &n);
        quant_op(s, CT_OP_DEQUANT, q, FL(CT_BUF_RECV, off), SLOT((N - 1) % 2, c), none, n);
    }
    for (int k = 0; k < N - 1; k++) {
        ct_sched_step(s);
        for (int c = 0; c < nch; c++) {
            ct_qring_block(j->count, nch, N, c, MOD(r + 1 - k), &off, &n);
            ct_qring_block(j->count, nch, N, c, MOD(r - k), &off2, &n2);
            ct_sched_send(s, next, SLOT((N - 1 + k) % 2, c), ct_quant_wire_bytes(q, n));
            ct_sched_recv(s, prev, SLOT((N + k) % 2, c), ct_quant_wire_bytes(q, n2));
        }
        for (int c = 0; c < nch; c++) {
            ct_qring_block(j->count, nch, N, c, MOD(r - k), &off2, &n2);
            quant_op(s, CT_OP_DEQUANT, q, FL(CT_BUF_RECV, off2), SLOT((N + k) % 2, c), none, n2);
        }
    }
#undef SLOT
#undef FL
#undef MOD
    s->scratch_bytes = 3 * (uint64_t)nch * W;
    (void)err;
    return 0;
}
