/* SPDX-License-Identifier: MIT */
/*
 * Verifiable inputs: values built from hashes of (seed, index) and (seed, slot) so that
 * every reduction order is exact and the reduced result has a closed form, plus the
 * comparison.
 *
 * Element i of rank r is a(i) + c(slot) where slot = (r + o(i)) mod nranks: a per-index
 * part, and one of nranks per-slot parts dealt to the ranks in an order rotated by the
 * per-index o(i). Sums, minima and maxima of the c(slot) over all slots are computed
 * once per call, so the expected value costs one hash per element, not one per rank,
 * while which rank holds the minimum (or the odd value out) still changes with i.
 * Integer products are c(slot), times an odd s(i) at one rank per index; float products
 * are +-1 signs from per-index bit words, one rank per index holding +-(1 + k/8) * 2^e.
 */
#include "verify.h"

#include <stdlib.h>
#include <string.h>

#include "../algos/half.h"

struct gen {
    enum ct_dtype t;
    enum ct_redop op; /* avg folded into sum */
    bool is_float;
    int nranks;
    uint64_t seed_idx, seed_slot, seed_sign; /* mixed seeds of the three hash families */
    /* float sum, min, max (in units): a in [a_lo, a_lo + a_span], c in [c_lo, c_lo + c_span] */
    int64_t a_lo, c_lo;
    uint64_t a_span, c_span;
    uint64_t slot_mask; /* float sum past the exact limit: c(slot) = 0 unless slot & mask == 0 */
    double unit;        /* float value = integer * unit */
    /* integers: dtype width in bits, the sign bit (0 if unsigned), min/max c span */
    unsigned bits;
    uint64_t sign_bit, type_max, int_span;
    /* over all slots */
    int64_t c_sum, c_min, c_max; /* floats, in units */
    uint64_t ic_sum, ic_prod;    /* integers, wrapping */
    uint64_t ic_min, ic_max;     /* integer min/max c */
};

/* splitmix64's finaliser. */
static inline uint64_t mix(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

static inline uint64_t hash_idx(const struct gen *g, uint64_t i)
{
    return mix(g->seed_idx + i * 0x9e3779b97f4a7c15ull);
}

static inline uint64_t hash_slot(const struct gen *g, uint64_t j)
{
    return mix(g->seed_slot + j * 0x9e3779b97f4a7c15ull);
}

/* Word w of the float prod sign bits at index i (rank r uses bit r % 64 of word r / 64). */
static inline uint64_t hash_sign(const struct gen *g, uint64_t i, uint64_t w)
{
    return mix(g->seed_sign + i * 0x9e3779b97f4a7c15ull + w * 0xd1b54a32d192ed03ull);
}

/* A uniform value in [0, m) from the top 32 bits of h (m <= 2^32, no division). */
static inline uint64_t pick(uint64_t h, uint64_t m)
{
    return ((h >> 32) * m) >> 32;
}

/* Rank r's slot at index i: ranks are dealt the slots rotated by o(i). */
static inline uint64_t slot_of(const struct gen *g, int rank, uint64_t hi)
{
    uint64_t s = (uint64_t)rank + pick(hi << 32, (uint64_t)g->nranks);
    return s >= (uint64_t)g->nranks ? s - (uint64_t)g->nranks : s;
}

/* Largest integer magnitude up to which every integer is exact: 2^(significand bits). */
static int64_t exact_int_limit(enum ct_dtype t)
{
    switch (t) {
    case CT_FLOAT16: return 1ll << 11;
    case CT_BFLOAT16: return 1ll << 8;
    case CT_FLOAT32: return 1ll << 24;
    default: return 1ll << 53;
    }
}

/* Float c(slot), in units. */
static inline int64_t float_c(const struct gen *g, uint64_t slot)
{
    if (slot & g->slot_mask)
        return 0;
    return g->c_lo + (int64_t)pick(hash_slot(g, slot), g->c_span + 1);
}

/* Integer c(slot): any bits (sum), odd (prod), or [0, int_span] (min, max). */
static inline uint64_t int_c(const struct gen *g, uint64_t slot)
{
    uint64_t h = hash_slot(g, slot);
    switch (g->op) {
    case CT_SUM: return h;
    case CT_PROD: return h | 1;
    default: return h & g->int_span;
    }
}

/*
 * Float sum: |a| + |c| <= k with nranks * k <= the exact limit, so every partial sum
 * is exact. With more ranks than that, a = 0 and only every stride-th slot is nonzero.
 * Float min/max: a + c within +-(limit - 1), capped at 2^24 - 1 units of 1/8.
 */
static void gen_init_float(struct gen *g)
{
    int64_t limit = exact_int_limit(g->t), n = g->nranks;
    g->unit = g->t == CT_FLOAT32 || g->t == CT_FLOAT64 ? 0.125 : 1.0;
    if (g->op == CT_SUM) {
        int64_t base = g->t == CT_BFLOAT16 ? 4 : g->t == CT_FLOAT16 ? 32 : 1000;
        int64_t k = limit / n < base ? limit / n : base;
        if (k == 0) {
            uint64_t stride = 1;
            while ((int64_t)stride * limit < n)
                stride *= 2;
            g->slot_mask = stride - 1;
            k = 1;
        }
        int64_t ka = k / 2, kc = k - ka;
        g->a_lo = -ka;
        g->a_span = (uint64_t)(2 * ka);
        g->c_lo = -kc;
        g->c_span = (uint64_t)(2 * kc);
    } else if (g->op != CT_PROD) {
        int64_t k = (limit > (1ll << 24) ? 1ll << 24 : limit) - 1, span = k / 8;
        g->a_lo = -k;
        g->a_span = (uint64_t)(2 * k - span);
        g->c_lo = 0;
        g->c_span = (uint64_t)span;
    }
    g->c_min = INT64_MAX;
    g->c_max = INT64_MIN;
    for (int j = 0; j < g->nranks; j++) {
        int64_t c = float_c(g, (uint64_t)j);
        g->c_sum += c;
        g->c_min = c < g->c_min ? c : g->c_min;
        g->c_max = c > g->c_max ? c : g->c_max;
    }
}

static void gen_init_int(struct gen *g)
{
    g->bits = 8 * (unsigned)ct_dtype_size(g->t);
    g->type_max = g->bits == 64 ? ~0ull : (1ull << g->bits) - 1;
    if (g->t == CT_INT8 || g->t == CT_INT32 || g->t == CT_INT64)
        g->sign_bit = 1ull << (g->bits - 1);
    g->int_span = g->bits == 8 ? 63 : g->bits == 32 ? (1ull << 20) - 1 : (1ull << 32) - 1;
    g->ic_prod = 1;
    g->ic_min = ~0ull;
    for (int j = 0; j < g->nranks; j++) {
        uint64_t c = int_c(g, (uint64_t)j);
        g->ic_sum += c;
        g->ic_prod *= c;
        g->ic_min = c < g->ic_min ? c : g->ic_min;
        g->ic_max = c > g->ic_max ? c : g->ic_max;
    }
}

static void gen_init(struct gen *g, enum ct_dtype t, enum ct_redop op, int nranks, uint64_t seed)
{
    if ((unsigned)t >= CT_DTYPE_COUNT || (unsigned)op >= CT_REDOP_COUNT || nranks < 1)
        CT_BUG("verify: bad dtype %d, op %d or nranks %d", (int)t, (int)op, nranks);
    memset(g, 0, sizeof *g);
    g->t = t;
    g->op = op == CT_AVG ? CT_SUM : op;
    g->is_float = t == CT_FLOAT16 || t == CT_BFLOAT16 || t == CT_FLOAT32 || t == CT_FLOAT64;
    g->nranks = nranks;
    g->seed_idx = mix(seed ^ 0x636f6c6c74756e65ull);
    g->seed_slot = mix(g->seed_idx ^ 0x736c6f7473ull);
    g->seed_sign = mix(g->seed_slot ^ 0x7369676e73ull);
    if (g->is_float)
        gen_init_float(g);
    else
        gen_init_int(g);
}

/* Float prod: the one rank per index with a magnitude other than 1, and that magnitude. */
static inline double prod_mag(uint64_t hi)
{
    uint64_t e = pick(hi << 32, 17); /* 2^-8 .. 2^8 */
    uint64_t bits = (1023 + e - 8) << 52;
    double pow2;
    memcpy(&pow2, &bits, sizeof pow2);
    return (1.0 + (double)(hi & 7) / 8.0) * pow2;
}

/* Rank rank's input at index i; tab: c(slot) of every slot (slot_table). */
static inline double fval(const struct gen *g, int rank, uint64_t i, const uint64_t *tab)
{
    uint64_t hi = hash_idx(g, i);
    if (g->op == CT_PROD) {
        uint64_t r = (uint64_t)rank;
        double sign = (hash_sign(g, i, r >> 6) >> (r & 63)) & 1 ? -1.0 : 1.0;
        return pick(hi, (uint64_t)g->nranks) == r ? sign * prod_mag(hi) : sign;
    }
    int64_t a = g->a_lo + (int64_t)pick(hi, g->a_span + 1);
    return (double)(a + (int64_t)tab[slot_of(g, rank, hi)]) * g->unit;
}

static inline double fexpect(const struct gen *g, uint64_t i)
{
    uint64_t hi = hash_idx(g, i);
    if (g->op == CT_PROD) {
        uint64_t n = (uint64_t)g->nranks, neg = 0;
        for (uint64_t w = 0; w * 64 < n; w++) {
            uint64_t word = hash_sign(g, i, w);
            if (n - w * 64 < 64)
                word &= (1ull << (n - w * 64)) - 1;
            neg += (uint64_t)__builtin_popcountll(word);
        }
        return (neg & 1 ? -1.0 : 1.0) * prod_mag(hi);
    }
    int64_t a = g->a_lo + (int64_t)pick(hi, g->a_span + 1);
    switch (g->op) {
    case CT_SUM: return (double)(a * g->nranks + g->c_sum) * g->unit;
    case CT_MIN: return (double)(a + g->c_min) * g->unit;
    default: return (double)(a + g->c_max) * g->unit;
    }
}

/* Integer per-index part: any bits; odd for prod (s(i)); for min/max (in the order-preserving
 * unsigned view, sign bit flipped) at most type_max - int_span so a + c cannot wrap. */
static inline uint64_t int_a(const struct gen *g, uint64_t hi)
{
    switch (g->op) {
    case CT_SUM: return hi;
    case CT_PROD: return hi | 1;
    default: {
        uint64_t a = hi & g->type_max;
        return a > g->type_max - g->int_span ? a - g->int_span - 1 : a;
    }
    }
}

static inline uint64_t ival(const struct gen *g, int rank, uint64_t i, const uint64_t *tab)
{
    uint64_t hi = hash_idx(g, i), a = int_a(g, hi), c = tab[slot_of(g, rank, hi)];
    switch (g->op) {
    case CT_SUM: return a + c;
    case CT_PROD: return pick(hi, (uint64_t)g->nranks) == (uint64_t)rank ? a * c : c;
    default: return (a + c) ^ g->sign_bit;
    }
}

static inline uint64_t iexpect(const struct gen *g, uint64_t i)
{
    uint64_t a = int_a(g, hash_idx(g, i)), n = (uint64_t)g->nranks;
    switch (g->op) {
    case CT_SUM: return a * n + g->ic_sum;
    case CT_PROD: return a * g->ic_prod;
    case CT_MIN: return (a + g->ic_min) ^ g->sign_bit;
    default: return (a + g->ic_max) ^ g->sign_bit;
    }
}

static inline void store_float(enum ct_dtype t, void *buf, size_t i, double v)
{
    switch (t) {
    case CT_FLOAT16: ((uint16_t *)buf)[i] = ct_f32_to_f16((float)v); break;
    case CT_BFLOAT16: ((uint16_t *)buf)[i] = ct_f32_to_bf16((float)v); break;
    case CT_FLOAT32: ((float *)buf)[i] = (float)v; break;
    default: ((double *)buf)[i] = v; break;
    }
}

static inline void store_int(unsigned bits, void *buf, size_t i, uint64_t v)
{
    switch (bits) {
    case 8: ((uint8_t *)buf)[i] = (uint8_t)v; break;
    case 32: ((uint32_t *)buf)[i] = (uint32_t)v; break;
    default: ((uint64_t *)buf)[i] = v; break;
    }
}

/* c(slot) of every slot (float: in units, as int64 bits), so that a fill hashes each index
 * once instead of twice. */
static uint64_t *slot_table(const struct gen *g)
{
    uint64_t *tab = ct_xmalloc(sizeof *tab * (size_t)g->nranks);
    for (int j = 0; j < g->nranks; j++)
        tab[j] = g->is_float ? (uint64_t)float_c(g, (uint64_t)j) : int_c(g, (uint64_t)j);
    return tab;
}

/* One loop per element type (the type switch stays outside the loop). */
#define FILL(T, EXPR)                                                                              \
    do {                                                                                           \
        T *o = buf;                                                                                \
        for (size_t i = 0; i < n; i++)                                                             \
            o[i] = (EXPR);                                                                         \
    } while (0)

void ct_verify_fill(enum ct_dtype t, enum ct_redop op, int rank, int nranks, uint64_t seed,
                    uint64_t first_index, void *buf, size_t n)
{
    struct gen g;
    gen_init(&g, t, op, nranks, seed);
    if (rank < 0 || rank >= nranks)
        CT_BUG("verify: rank %d of %d", rank, nranks);
    uint64_t *tab = slot_table(&g), f = first_index;
    if (g.is_float) {
        switch (t) {
        case CT_FLOAT16: FILL(uint16_t, ct_f32_to_f16((float)fval(&g, rank, f + i, tab))); break;
        case CT_BFLOAT16: FILL(uint16_t, ct_f32_to_bf16((float)fval(&g, rank, f + i, tab))); break;
        case CT_FLOAT32: FILL(float, (float)fval(&g, rank, f + i, tab)); break;
        default: FILL(double, fval(&g, rank, f + i, tab)); break;
        }
    } else {
        switch (g.bits) {
        case 8: FILL(uint8_t, (uint8_t)ival(&g, rank, f + i, tab)); break;
        case 32: FILL(uint32_t, (uint32_t)ival(&g, rank, f + i, tab)); break;
        default: FILL(uint64_t, ival(&g, rank, f + i, tab)); break;
        }
    }
    free(tab);
}
#undef FILL

void ct_verify_expected(enum ct_dtype t, enum ct_redop op, int nranks, uint64_t seed,
                        uint64_t first_index, void *out, size_t n)
{
    struct gen g;
    gen_init(&g, t, op, nranks, seed);
    for (size_t i = 0; i < n; i++) {
        if (g.is_float)
            store_float(t, out, i, fexpect(&g, first_index + i));
        else
            store_int(g.bits, out, i, iexpect(&g, first_index + i));
    }
    if (op == CT_AVG)
        ct_scale_fn_get(t)(out, n, nranks);
}

/* Bits of element i of an array of sz-byte elements. */
static inline uint64_t elem_bits(const void *p, size_t sz, size_t i)
{
    const unsigned char *b = (const unsigned char *)p + i * sz;
    uint8_t u8;
    uint16_t u16;
    uint32_t u32;
    uint64_t u64;
    switch (sz) {
    case 1: memcpy(&u8, b, 1); return u8;
    case 2: memcpy(&u16, b, 2); return u16;
    case 4: memcpy(&u32, b, 4); return u32;
    default: memcpy(&u64, b, 8); return u64;
    }
}

static inline bool is_nan_bits(enum ct_dtype t, uint64_t v)
{
    switch (t) {
    case CT_FLOAT16: return (v & 0x7fff) > 0x7c00;
    case CT_BFLOAT16: return (v & 0x7fff) > 0x7f80;
    case CT_FLOAT32: return (v & 0x7fffffffull) > 0x7f800000ull;
    case CT_FLOAT64: return (v & 0x7fffffffffffffffull) > 0x7ff0000000000000ull;
    default: return false;
    }
}

static inline bool elem_same(enum ct_dtype t, size_t sz, const void *got, const void *want,
                             size_t i)
{
    uint64_t a = elem_bits(got, sz, i), b = elem_bits(want, sz, i);
    return a == b || (is_nan_bits(t, a) && is_nan_bits(t, b));
}

#define SAME_PIECE (64u << 10) /* bytes compared at once before counting element by element */

size_t ct_verify_count_wrong(enum ct_dtype t, const void *got, const void *want, size_t n)
{
    size_t sz = ct_dtype_size(t), wrong = 0;
    if (!sz)
        CT_BUG("verify: bad dtype %d", (int)t);
    /* equal bits are equal elements: memcmp runs at memory speed, so only pieces that
     * differ (a wrong result, or NaNs of other bits) are counted element by element */
    size_t per = SAME_PIECE / sz;
    for (size_t i0 = 0; i0 < n; i0 += per) {
        size_t m = n - i0 < per ? n - i0 : per;
        const char *g = (const char *)got + i0 * sz, *w = (const char *)want + i0 * sz;
        if (memcmp(g, w, m * sz) == 0)
            continue;
        for (size_t i = 0; i < m; i++)
            wrong += !elem_same(t, sz, g, w, i);
    }
    return wrong;
}

size_t ct_verify_first_wrong(enum ct_dtype t, const void *got, const void *want, size_t n)
{
    size_t sz = ct_dtype_size(t);
    if (!sz)
        CT_BUG("verify: bad dtype %d", (int)t);
    for (size_t i = 0; i < n; i++)
        if (!elem_same(t, sz, got, want, i))
            return i;
    return n;
}

void ct_verify_fill_job(const struct ct_job *j, uint64_t seed, void *send)
{
    int n = j->shape.nranks, r = j->shape.rank;
    uint64_t c = j->count;
    if (j->coll == CT_ALLREDUCE || j->coll == CT_ALLGATHER)
        ct_verify_fill(j->dtype, j->op, r, n, seed, 0, send, c);
    else /* reducescatter, alltoall: N blocks; block q at global index q*count */
        ct_verify_fill(j->dtype, j->op, r, n, seed, 0, send, c * (uint64_t)n);
}

/* Blocks of j's output: one but for allgather and alltoall. */
static int out_blocks(const struct ct_job *j)
{
    return j->coll == CT_ALLGATHER || j->coll == CT_ALLTOALL ? j->shape.nranks : 1;
}

/* Elements i .. i+m of block q of j's expected output, into want. */
static void expected_piece(const struct ct_job *j, uint64_t seed, int q, uint64_t i, void *want,
                           size_t m)
{
    int n = j->shape.nranks, r = j->shape.rank;
    uint64_t c = j->count;
    switch (j->coll) {
    case CT_ALLREDUCE: ct_verify_expected(j->dtype, j->op, n, seed, i, want, m); break;
    case CT_REDUCESCATTER:
        ct_verify_expected(j->dtype, j->op, n, seed, (uint64_t)r * c + i, want, m);
        break;
    case CT_ALLGATHER: ct_verify_fill(j->dtype, j->op, q, n, seed, i, want, m); break;
    case CT_ALLTOALL:
        ct_verify_fill(j->dtype, j->op, q, n, seed, (uint64_t)r * c + i, want, m);
        break;
    default: break;
    }
}

long ct_verify_job(const struct ct_job *j, uint64_t seed, const void *recv, void *want,
                   size_t want_elems)
{
    uint64_t c = j->count;
    size_t es = ct_dtype_size(j->dtype);
    const char *got = recv;
    long wrong = 0;
    /* in pieces, so that the expected values never take more than want_elems elements */
    for (int q = 0; q < out_blocks(j); q++)
        for (uint64_t i = 0; i < c; i += want_elems) {
            size_t m = c - i < want_elems ? (size_t)(c - i) : want_elems;
            expected_piece(j, seed, q, i, want, m);
            wrong += (long)ct_verify_count_wrong(j->dtype, got + ((uint64_t)q * c + i) * es,
                                                 want, m);
        }
    return wrong;
}

/*
 * The sampled part of one output block of c elements, window by window from *pos: the first
 * and last CT_VERIFY_EDGE elements in full, and between them CT_VERIFY_WIN elements every
 * CT_VERIFY_STRIDE (a prime: chunk and rank-block edges at any offset fall into windows).
 */
static bool next_window(uint64_t c, uint64_t *pos, uint64_t *lo, uint64_t *hi)
{
    uint64_t p = *pos, tail = c > CT_VERIFY_EDGE ? c - CT_VERIFY_EDGE : 0;
    if (p >= c)
        return false;
    *lo = p;
    if (p < CT_VERIFY_EDGE || p >= tail) {
        *hi = p < CT_VERIFY_EDGE && CT_VERIFY_EDGE < c ? CT_VERIFY_EDGE : c;
        *pos = *hi;
    } else {
        *hi = p + CT_VERIFY_WIN < tail ? p + CT_VERIFY_WIN : tail;
        *pos = p + CT_VERIFY_STRIDE < tail ? p + CT_VERIFY_STRIDE : tail;
    }
    return true;
}

void ct_verify_job_poison_sampled(const struct ct_job *j, void *recv)
{
    uint64_t c = j->count, lo, hi;
    size_t es = ct_dtype_size(j->dtype);
    for (int q = 0; q < out_blocks(j); q++)
        for (uint64_t pos = 0; next_window(c, &pos, &lo, &hi);)
            memset((char *)recv + ((uint64_t)q * c + lo) * es, 0xff, (size_t)(hi - lo) * es);
}

long ct_verify_job_sampled(const struct ct_job *j, uint64_t seed, const void *recv, void *want)
{
    uint64_t c = j->count, lo, hi;
    size_t es = ct_dtype_size(j->dtype);
    long wrong = 0;
    for (int q = 0; q < out_blocks(j); q++)
        for (uint64_t pos = 0; next_window(c, &pos, &lo, &hi);) {
            expected_piece(j, seed, q, lo, want, (size_t)(hi - lo));
            wrong += (long)ct_verify_count_wrong(j->dtype,
                                                 (const char *)recv + ((uint64_t)q * c + lo) * es,
                                                 want, (size_t)(hi - lo));
        }
    return wrong;
}

uint64_t ct_verify_job_elems(const struct ct_job *j)
{
    return (uint64_t)out_blocks(j) * j->count;
}

void ct_verify_job_expected(const struct ct_job *j, uint64_t seed, void *want)
{
    for (int q = 0; q < out_blocks(j); q++)
        expected_piece(j, seed, q, 0,
                       (char *)want + (uint64_t)q * j->count * ct_dtype_size(j->dtype), j->count);
}
