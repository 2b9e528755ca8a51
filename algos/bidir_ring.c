/* SPDX-License-Identifier: MIT */
/*
 * Bidirectional-AllGather ring (CTRING): a clockwise ReduceScatter, then an AllGather
 * that runs both ways around the ring at once.
 *
 * Summary   AllReduce: the ring ReduceScatter r -> r+1 leaves rank r owning shard
 *           (r+1) mod N. The AllGather then sends the owned shard both ways: the
 *           forward direction (r -> r+1) runs ceil((N-1)/2) steps starting from shard
 *           r+1, the reverse direction (r -> r-1) floor((N-1)/2) steps, also starting
 *           from shard (r+1) mod N, so every rank gets the shards of its nearest
 *           ceil((N-1)/2) upstream and floor((N-1)/2) downstream owners. AllGather
 *           alone: the same two-way gather of the blocks, rank r starting from block r.
 *           `channels` segments advance in the same steps, as in ring.
 * Cost      AllReduce (N-1) + ceil((N-1)/2) steps: (N-1 + ceil((N-1)/2)) a
 *           + 2(N-1)/N n b (two sends per step in the gather, on opposite links).
 *           AllGather ceil((N-1)/2) steps: ceil((N-1)/2) a + (N-1)/N n b. Saves
 *           floor((N-1)/2) steps over the ring.
 * Requires  full-duplex neighbour links to gain anything (any N, any count works).
 * Limits    the gather doubles the per-step load on each rank's two links.
 *
 *   AllGather phase of AllReduce, N = 5 (rank r owns shard r+1):
 *     step 0: r sends r+1 to r+1 and to r-1; gets r (from r-1) and r+2 (from r+1)
 *     step 1: r sends r to r+1 and r+2 to r-1; gets r-1 and r+3
 */
#include "algo.h"

struct seg {
    uint64_t off, n; /* elements */
};

static int mod(int a, int n)
{
    return ((a % n) + n) % n;
}

static struct seg seg_of(uint64_t count, uint64_t nch, uint64_t c, uint64_t es)
{
    struct seg s = {ct_part_off_line(count, nch, c, es), ct_part_len_line(count, nch, c, es)};
    return s;
}

/* Byte offset / length of block b (mod N) of segment g. */
static uint64_t boff(struct seg g, int N, int b, uint64_t es)
{
    return (g.off + ct_part_off_line(g.n, (uint64_t)N, (uint64_t)mod(b, N), es)) * es;
}

static uint64_t blen(struct seg g, int N, int b, uint64_t es)
{
    return ct_part_len_line(g.n, (uint64_t)N, (uint64_t)mod(b, N), es) * es;
}

static int build_allreduce(const struct ct_job *j, struct ct_sched *s)
{
    int N = j->shape.nranks, r = j->shape.rank, nch = (int)j->params.v[CT_P_CHANNELS];
    int next = mod(r + 1, N), prev = mod(r - 1, N);
    int fwd = N / 2, rev = (N - 1) / 2; /* ceil((N-1)/2), floor((N-1)/2) */
    uint64_t es = ct_dtype_size(j->dtype);
    if (N == 1) {
        ct_sched_copy(s, ct_loc(CT_BUF_RECV, 0), ct_loc(CT_BUF_SEND, 0), j->count * es);
        return 0;
    }
    /* clockwise ReduceScatter: step k sends block r-k, reduces block r-k-1 */
    for (int k = 0; k < N - 1; k++) {
        ct_sched_step(s);
        for (int c = 0; c < nch; c++) {
            struct seg g = seg_of(j->count, (uint64_t)nch, (uint64_t)c, es);
            int sb = r - k, rb = r - k - 1;
            enum ct_bufid from = k == 0 ? CT_BUF_SEND : CT_BUF_RECV;
            ct_sched_send(s, next, ct_loc(from, boff(g, N, sb, es)), blen(g, N, sb, es));
            ct_sched_recv_reduce(s, prev, ct_loc(CT_BUF_RECV, boff(g, N, rb, es)),
                                 ct_loc(CT_BUF_SEND, boff(g, N, rb, es)), blen(g, N, rb, es));
        }
    }
    /* two-way AllGather from the owned shard r+1 */
    for (int k = 0; k < fwd; k++) {
        ct_sched_step(s);
        for (int c = 0; c < nch; c++) {
            struct seg g = seg_of(j->count, (uint64_t)nch, (uint64_t)c, es);
            int fs = r + 1 - k, fr = r - k;
            ct_sched_send(s, next, ct_loc(CT_BUF_RECV, boff(g, N, fs, es)), blen(g, N, fs, es));
            ct_sched_recv(s, prev, ct_loc(CT_BUF_RECV, boff(g, N, fr, es)), blen(g, N, fr, es));
            if (k < rev) {
                int bs = r + 1 + k, br = r + 2 + k;
                ct_sched_send(s, prev, ct_loc(CT_BUF_RECV, boff(g, N, bs, es)), blen(g, N, bs, es));
                ct_sched_recv(s, next, ct_loc(CT_BUF_RECV, boff(g, N, br, es)), blen(g, N, br, es));
            }
        }
    }
    return 0;
}

static int build_allgather(const struct ct_job *j, struct ct_sched *s)
{
    int N = j->shape.nranks, r = j->shape.rank, nch = (int)j->params.v[CT_P_CHANNELS];
    int next = mod(r + 1, N), prev = mod(r - 1, N);
    int fwd = N / 2, rev = (N - 1) / 2;
    uint64_t es = ct_dtype_size(j->dtype), bb = j->count * es;
    for (int k = 0; k < fwd; k++) {
        ct_sched_step(s);
        for (int c = 0; c < nch; c++) {
            struct seg g = seg_of(j->count, (uint64_t)nch, (uint64_t)c, es);
            uint64_t so = g.off * es, len = g.n * es;
            /* forward: send block r-k, receive r-k-1; k = 0 reads the send buffer */
            struct ct_loc fs = k == 0 ? ct_loc(CT_BUF_SEND, so)
                                      : ct_loc(CT_BUF_RECV, (uint64_t)mod(r - k, N) * bb + so);
            ct_sched_send(s, next, fs, len);
            ct_sched_recv(s, prev, ct_loc(CT_BUF_RECV, (uint64_t)mod(r - k - 1, N) * bb + so), len);
            if (k < rev) {
                /* reverse: send block r+k, receive r+k+1 */
                struct ct_loc bs = k == 0 ? ct_loc(CT_BUF_SEND, so)
                                          : ct_loc(CT_BUF_RECV, (uint64_t)mod(r + k, N) * bb + so);
                ct_sched_send(s, prev, bs, len);
                ct_sched_recv(s, next, ct_loc(CT_BUF_RECV, (uint64_t)mod(r + k + 1, N) * bb + so),
                              len);
            }
        }
        if (k == 0 && !j->in_place) /* the own block, once the first sends are under way */
            ct_sched_copy(s, ct_loc(CT_BUF_RECV, (uint64_t)r * bb), ct_loc(CT_BUF_SEND, 0), bb);
    }
    if (fwd == 0 && !j->in_place) {
        ct_sched_step(s);
        ct_sched_copy(s, ct_loc(CT_BUF_RECV, (uint64_t)r * bb), ct_loc(CT_BUF_SEND, 0), bb);
    }
    return 0;
}

static int build(const struct ct_job *j, struct ct_sched *s, struct ct_err *err)
{
    switch (j->coll) {
    case CT_ALLREDUCE: return build_allreduce(j, s);
    case CT_ALLGATHER: return build_allgather(j, s);
    default:
        return ct_err_set(err, CT_EUNSUPP, "bidir-ring does not implement %s",
                          ct_coll_name(j->coll));
    }
}

const struct ct_algo ct_algo_bidir_ring = {
    .name = "bidir-ring",
    .summary = "ring reduce-scatter + all-gather split over both directions (CTRING)",
    .colls = CT_COLL_BIT(CT_ALLREDUCE) | CT_COLL_BIT(CT_ALLGATHER),
    .params = CT_PBIT(CT_P_CHUNK) | CT_PBIT(CT_P_PIPELINE) | CT_PBIT(CT_P_CHANNELS) |
              CT_PBIT(CT_P_STREAMS),
    .build = build,
};
