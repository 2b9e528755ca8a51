/* SPDX-License-Identifier: MIT */
/*
 * KangaRing: a ring over pairs of ranks. Ranks 2i and 2i+1 (same node) form pair i;
 * only one of them, the primary, is on the ring; the other, the secondary, feeds it.
 *
 * Summary   Two rings run at once with the roles swapped: in even rings the even rank
 *           of each pair is primary, in odd rings the odd one, so both ranks of a pair
 *           work all the time. AllReduce: each ring reduces its segment of the buffer.
 *           The secondary streams its blocks to the primary one per step; the primary
 *           reduces its own block, its secondary's and the incoming partial (3 reads,
 *           1 write) and passes the sum on. In the AllGather half the primary forwards
 *           every finished block once to the next primary and once to its secondary
 *           (1 read, 2 writes). AllGather: ring q carries the blocks of the parity-q
 *           ranks, which are its primaries, and each primary forwards them to its
 *           secondary. ReduceScatter: ring q reduces the blocks destined to the
 *           parity-q ranks, the secondaries streaming their contributions. `channels`
 *           pairs of rings split the data further.
 * Cost      P = N/2 pairs. AllReduce N steps: N a + 2(P-1)/P (n/2) b on the ring links
 *           (each rank is primary for half the data) plus n b each way on the pair
 *           link (contributions up as secondary, results down as primary). AllGather /
 *           ReduceScatter P steps.
 * Requires  an even number of ranks per node (pairs never span nodes).
 * Limits    the pair link carries more than a ring link: it pays off where the pair
 *           shares a device or host (a cheap link) and the ring crosses a slow fabric.
 *
 *   AllReduce, N = 4, pairs (0,1) (2,3), even ring over 0 -> 2 -> 0:
 *     pre:    1 -> 0 block 0, 3 -> 2 block 1; primaries add own + secondary
 *     RS k=0: 0 -> 2 block 0 partial; 2 adds own + 3's block 0 (+) incoming
 *     AG k=0: 2 -> 0 and 2 -> 3 block 0; 0 -> 2 and 0 -> 1 block 1
 *     tail:   0 -> 1 block 0, 2 -> 3 block 1  (the odd ring does the same, 1 <-> 3)
 */
#include "algo.h"

struct kr {
    int N, r, P, i;  /* ranks, rank, pairs, my pair */
    int partner;     /* r ^ 1 */
    int nrings;      /* 2 x channels */
    uint64_t es, bb; /* element bytes, block bytes (count * es) */
};

static int mod(int a, int n)
{
    return ((a % n) + n) % n;
}

static int is_primary(const struct kr *k, int g)
{
    return k->r % 2 == g % 2;
}

static int next_primary(const struct kr *k, int g)
{
    return 2 * mod(k->i + 1, k->P) + g % 2;
}

static int prev_primary(const struct kr *k, int g)
{
    return 2 * mod(k->i - 1, k->P) + g % 2;
}

static struct kr kr_of(const struct ct_job *j)
{
    struct kr k = {.N = j->shape.nranks, .r = j->shape.rank};
    k.P = k.N / 2;
    k.i = k.r / 2;
    k.partner = k.r ^ 1;
    k.nrings = 2 * (int)j->params.v[CT_P_CHANNELS];
    k.es = ct_dtype_size(j->dtype);
    k.bb = j->count * k.es;
    return k;
}

/* AllReduce: ring g owns segment g of the buffer, cut into P blocks by pair position. */
static uint64_t ar_off(const struct ct_job *j, const struct kr *k, int g, int b)
{
    uint64_t so = ct_part_off_line(j->count, (uint64_t)k->nrings, (uint64_t)g, k->es);
    uint64_t sn = ct_part_len_line(j->count, (uint64_t)k->nrings, (uint64_t)g, k->es);
    return (so + ct_part_off_line(sn, (uint64_t)k->P, (uint64_t)mod(b, k->P), k->es)) * k->es;
}

static uint64_t ar_len(const struct ct_job *j, const struct kr *k, int g, int b)
{
    uint64_t sn = ct_part_len_line(j->count, (uint64_t)k->nrings, (uint64_t)g, k->es);
    return ct_part_len_line(sn, (uint64_t)k->P, (uint64_t)mod(b, k->P), k->es) * k->es;
}

static void build_allreduce(const struct ct_job *j, struct ct_sched *s, const struct kr *k)
{
#define AT(buf, b) ct_loc((buf), ar_off(j, k, g, (b)))
    /* pre: each secondary hands its block i; the primary adds it to its own */
    ct_sched_step(s);
    for (int g = 0; g < k->nrings; g++) {
        if (is_primary(k, g))
            ct_sched_recv(s, k->partner, AT(CT_BUF_SCRATCH, k->i), ar_len(j, k, g, k->i));
        else
            ct_sched_send(s, k->partner, AT(CT_BUF_SEND, k->i), ar_len(j, k, g, k->i));
    }
    for (int g = 0; g < k->nrings; g++)
        if (is_primary(k, g))
            ct_sched_reduce(s, AT(CT_BUF_RECV, k->i), AT(CT_BUF_SEND, k->i),
                            AT(CT_BUF_SCRATCH, k->i), ar_len(j, k, g, k->i));
    /* ReduceScatter over the primaries: send block i-st, reduce block i-st-1 */
    for (int st = 0; st < k->P - 1; st++) {
        int sb = k->i - st, rb = k->i - st - 1;
        ct_sched_step(s);
        for (int g = 0; g < k->nrings; g++) {
            uint64_t rl = ar_len(j, k, g, rb);
            if (!is_primary(k, g)) {
                ct_sched_send(s, k->partner, AT(CT_BUF_SEND, rb), rl);
                continue;
            }
            ct_sched_send(s, next_primary(k, g), AT(CT_BUF_RECV, sb), ar_len(j, k, g, sb));
            ct_sched_recv_reduce(s, prev_primary(k, g), AT(CT_BUF_RECV, rb), AT(CT_BUF_SEND, rb),
                                 rl);
            ct_sched_recv(s, k->partner, AT(CT_BUF_SCRATCH, rb), rl);
        }
        for (int g = 0; g < k->nrings; g++)
            if (is_primary(k, g))
                ct_sched_reduce(s, AT(CT_BUF_RECV, rb), AT(CT_BUF_RECV, rb), AT(CT_BUF_SCRATCH, rb),
                                ar_len(j, k, g, rb));
    }
    /* AllGather: the primary owns block i+1; each block goes downstream and to the
     * secondary; the last one received goes to the secondary in a tail step */
    for (int st = 0; st <= k->P - 1; st++) {
        int sb = k->i + 1 - st, rb = k->i - st, tail = st == k->P - 1;
        ct_sched_step(s);
        for (int g = 0; g < k->nrings; g++) {
            uint64_t sl = ar_len(j, k, g, sb);
            if (!is_primary(k, g)) {
                ct_sched_recv(s, k->partner, AT(CT_BUF_RECV, sb), sl);
                continue;
            }
            if (!tail)
                ct_sched_send(s, next_primary(k, g), AT(CT_BUF_RECV, sb), sl);
            ct_sched_send(s, k->partner, AT(CT_BUF_RECV, sb), sl);
            if (!tail)
                ct_sched_recv(s, prev_primary(k, g), AT(CT_BUF_RECV, rb), ar_len(j, k, g, rb));
        }
    }
#undef AT
}

/* AllGather / ReduceScatter: ring g carries slice g/2 of the blocks of the ranks of
 * parity g%2; unit b is the slice in the block of pair b's rank of that parity. */
static uint64_t slice_off(const struct ct_job *j, const struct kr *k, int g)
{
    return ct_part_off_line(j->count, (uint64_t)k->nrings / 2, (uint64_t)g / 2, k->es) * k->es;
}

static uint64_t slice_len(const struct ct_job *j, const struct kr *k, int g)
{
    return ct_part_len_line(j->count, (uint64_t)k->nrings / 2, (uint64_t)g / 2, k->es) * k->es;
}

static uint64_t unit_off(const struct ct_job *j, const struct kr *k, int g, int b)
{
    return (uint64_t)(2 * mod(b, k->P) + g % 2) * k->bb + slice_off(j, k, g);
}

static void build_allgather(const struct ct_job *j, struct ct_sched *s, const struct kr *k)
{
    for (int st = 0; st <= k->P - 1; st++) {
        int sb = k->i - st, rb = k->i - st - 1, tail = st == k->P - 1;
        ct_sched_step(s);
        for (int g = 0; g < k->nrings; g++) {
            uint64_t len = slice_len(j, k, g);
            if (!is_primary(k, g)) {
                ct_sched_recv(s, k->partner, ct_loc(CT_BUF_RECV, unit_off(j, k, g, sb)), len);
                continue;
            }
            struct ct_loc blk = st == 0 ? ct_loc(CT_BUF_SEND, slice_off(j, k, g))
                                        : ct_loc(CT_BUF_RECV, unit_off(j, k, g, sb));
            if (!tail)
                ct_sched_send(s, next_primary(k, g), blk, len);
            ct_sched_send(s, k->partner, blk, len);
            if (!tail)
                ct_sched_recv(s, prev_primary(k, g), ct_loc(CT_BUF_RECV, unit_off(j, k, g, rb)),
                              len);
        }
        if (st == 0 && !j->in_place)
            ct_sched_copy(s, ct_loc(CT_BUF_RECV, (uint64_t)k->r * k->bb), ct_loc(CT_BUF_SEND, 0),
                          k->bb);
    }
}

/* Scratch slot t (0, 1: partial sums; 2: the secondary's contribution) of ring g. */
static struct ct_loc slot(const struct ct_job *j, const struct kr *k, int g, int t)
{
    return ct_loc(CT_BUF_SCRATCH, (uint64_t)t * k->bb + slice_off(j, k, g));
}

/*
 * ReduceScatter: step st sends the partial of unit i-st-1 (slot st%2) and reduces unit
 * i-st-2 into slot (st+1)%2, RECV on the last step, so the primary ends with its own
 * block. The secondary's contribution to that unit arrives in the same step.
 */
static void build_reducescatter(const struct ct_job *j, struct ct_sched *s, const struct kr *k)
{
    int P = k->P;
    /* pre: the secondary hands unit i-1, the primary starts its partial in slot 0 */
    ct_sched_step(s);
    for (int g = 0; g < k->nrings; g++) {
        uint64_t len = slice_len(j, k, g);
        if (is_primary(k, g))
            ct_sched_recv(s, k->partner, slot(j, k, g, 2), len);
        else
            ct_sched_send(s, k->partner, ct_loc(CT_BUF_SEND, unit_off(j, k, g, k->i - 1)), len);
    }
    for (int g = 0; g < k->nrings; g++)
        if (is_primary(k, g)) {
            struct ct_loc dst = P == 1 ? ct_loc(CT_BUF_RECV, slice_off(j, k, g)) : slot(j, k, g, 0);
            ct_sched_reduce(s, dst, ct_loc(CT_BUF_SEND, unit_off(j, k, g, k->i - 1)),
                            slot(j, k, g, 2), slice_len(j, k, g));
        }
    for (int st = 0; st < P - 1; st++) {
        int rb = k->i - st - 2;
        ct_sched_step(s);
        for (int g = 0; g < k->nrings; g++) {
            uint64_t len = slice_len(j, k, g);
            struct ct_loc own = ct_loc(CT_BUF_SEND, unit_off(j, k, g, rb));
            if (!is_primary(k, g)) {
                ct_sched_send(s, k->partner, own, len);
                continue;
            }
            struct ct_loc dst =
                st == P - 2 ? ct_loc(CT_BUF_RECV, slice_off(j, k, g)) : slot(j, k, g, (st + 1) % 2);
            ct_sched_send(s, next_primary(k, g), slot(j, k, g, st % 2), len);
            ct_sched_recv_reduce(s, prev_primary(k, g), dst, own, len);
            ct_sched_recv(s, k->partner, slot(j, k, g, 2), len);
        }
        for (int g = 0; g < k->nrings; g++)
            if (is_primary(k, g)) {
                struct ct_loc dst = st == P - 2 ? ct_loc(CT_BUF_RECV, slice_off(j, k, g))
                                                : slot(j, k, g, (st + 1) % 2);
                ct_sched_reduce(s, dst, dst, slot(j, k, g, 2), slice_len(j, k, g));
            }
    }
}

static int supports(const struct ct_job *j, struct ct_err *why)
{
    int rpn = ct_shape_rpn(&j->shape);
    if (rpn % 2)
        return ct_err_set(why, CT_EUNSUPP,
                          "kangaring needs an even number of ranks per node (got %d)", rpn);
    return 0;
}

static int build(const struct ct_job *j, struct ct_sched *s, struct ct_err *err)
{
    struct kr k = kr_of(j);
    switch (j->coll) {
    case CT_ALLREDUCE: build_allreduce(j, s, &k); return 0;
    case CT_ALLGATHER: build_allgather(j, s, &k); return 0;
    case CT_REDUCESCATTER: build_reducescatter(j, s, &k); return 0;
    default:
        return ct_err_set(err, CT_EUNSUPP, "kangaring does not implement %s",
                          ct_coll_name(j->coll));
    }
}

const struct ct_algo ct_algo_kangaring = {
    .name = "kangaring",
    .summary = "ring over rank pairs, primaries reduce for their secondaries, roles swap",
    .colls = CT_COLL_BIT(CT_ALLREDUCE) | CT_COLL_BIT(CT_ALLGATHER) | CT_COLL_BIT(CT_REDUCESCATTER),
    .params = CT_PBIT(CT_P_CHUNK) | CT_PBIT(CT_P_PIPELINE) | CT_PBIT(CT_P_CHANNELS) |
              CT_PBIT(CT_P_STREAMS) | CT_PBIT(CT_P_THREADS),
    .supports = supports,
    .build = build,
};
