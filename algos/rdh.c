/* SPDX-License-Identifier: MIT */
/*
 * Recursive halving / doubling (Thakur, Rabenseifner, Gropp 2005).
 *
 * Summary   ReduceScatter by recursive halving: at distance p/2, p/4, ..., 1 each rank
 *           swaps half of its current range with the partner (rank xor distance) and
 *           reduces the half it keeps. AllGather by recursive doubling: distances 1, 2,
 *           ..., p/2, each rank swaps everything it has. AllReduce = the two
 *           (Rabenseifner). When N is not a power of two, the standard fold: with
 *           p = 2^floor(log2 N) and e = N - p, ranks 0..2e-1 pair up (2i, 2i+1); the
 *           even rank hands its data to the odd one and sits out, the p-rank core runs,
 *           and the odd rank hands the result back. The core may also run on a
 *           relabelled hypercube (torus-rdh) through ct_rdh_build.
 * Cost      power of two: AllReduce 2 log2 p steps: 2 log2(p) a + 2(p-1)/p n b;
 *           AllGather / ReduceScatter log2 p steps: log2(p) a + (p-1)/p n b. Otherwise
 *           two more steps of the whole buffer (n for AllReduce, the folded block(s)
 *           for AllGather, N blocks for ReduceScatter).
 * Requires  nothing (any N, any count). ReduceScatter scratch: the whole send buffer.
 * Limits    partners are log2 p hops apart on a ring-shaped fabric; the folded ranks
 *           idle during the core and the fold doubles the traffic of their partners.
 *
 *   AllReduce, N = 4, blocks A B C D:
 *     RS d=2: 0<->2, 1<->3 swap halves    (0,2 keep AB / CD; 1,3 keep AB / CD)
 *     RS d=1: 0<->1, 2<->3 swap quarters  -> rank r owns block r reduced
 *     AG d=1, d=2: the same exchanges in reverse order, swapping owned ranges
 */
#include "compose.h"

#include <stdlib.h>

struct rdh {
    int p;           /* core size, a power of two */
    int v;           /* my core index; -1 when folded out */
    int rem;         /* ranks folded out (N - p) */
    const int *real; /* core index -> rank; NULL: the fold's (core_rank) */
    /* unit u (one per core index): bytes [uoff(u), uoff(u) + ulen(u)). Back to back in
     * core order but where a relabelled hypercube's blocks lie in rank order (tab): then
     * tabled, else computed, so a rank's schedule costs O(log p), not O(p) (the model builds
     * every rank's: p^2 for a non-symmetric point, 51.9 s for 65,536 ranks at 4 KiB, now
     * 0.66 s) */
    uint64_t *tab_off, *tab_len; /* NULL: computed */
    uint64_t count, es, bb;
    bool reduce; /* AllReduce: units are the core's even split of the buffer */
};

static int core_rank(const struct rdh *h, int v)
{
    return h->real ? h->real[v] : v < h->rem ? 2 * v + 1 : v + h->rem;
}

/* Where unit u starts (u == p: the end), units laid back to back. */
static uint64_t unit_start(const struct rdh *h, int u)
{
    if (h->reduce)
        return ct_part_off_line(h->count, (uint64_t)h->p, (uint64_t)u, h->es) * h->es;
    /* blocks of the ranks folded into core index u: 2u, 2u+1 or u+rem */
    return (uint64_t)(u < h->rem ? 2 * u : u + h->rem) * h->bb;
}

static uint64_t uoff(const struct rdh *h, int u)
{
    return h->tab_off ? h->tab_off[u] : unit_start(h, u);
}

static uint64_t ulen(const struct rdh *h, int u)
{
    return h->tab_len ? h->tab_len[u] : unit_start(h, u + 1) - unit_start(h, u);
}

/*
 * Emit one op per run of units [a, b) that lie back to back in memory. Sender and
 * receiver walk the same units with the same layout, so their op sizes match.
 */
static void emit(struct ct_sched *s, enum ct_opk kind, int peer, enum ct_bufid dbuf,
                 enum ct_bufid sbuf, const struct rdh *h, int a, int b)
{
    for (int u = a; u < b;) {
        uint64_t off = uoff(h, u), len = ulen(h, u);
        if (h->tab_off) {
            for (u++; u < b && h->tab_off[u] == off + len; u++)
                len += h->tab_len[u];
        } else { /* back to back: one run */
            len = unit_start(h, b) - off;
            u = b;
        }
        if (kind == CT_OP_SEND)
            ct_sched_send(s, peer, ct_loc(sbuf, off), len);
        else if (kind == CT_OP_RECV)
            ct_sched_recv(s, peer, ct_loc(dbuf, off), len);
        else
            ct_sched_recv_reduce(s, peer, ct_loc(dbuf, off), ct_loc(sbuf, off), len);
    }
}

/* Recursive halving on working buffer w; the first step reads src. Ends owning unit v. */
static void core_rs(struct ct_sched *s, const struct rdh *h, enum ct_bufid w, enum ct_bufid src)
{
    int lo = 0, hi = h->p;
    for (int m = h->p / 2; m >= 1; m /= 2) {
        int mid = lo + m, peer = core_rank(h, h->v ^ m);
        ct_sched_step(s);
        if (h->v & m) {
            emit(s, CT_OP_SEND, peer, w, src, h, lo, mid);
            emit(s, CT_OP_RECV_REDUCE, peer, w, src, h, mid, hi);
            lo = mid;
        } else {
            emit(s, CT_OP_SEND, peer, w, src, h, mid, hi);
            emit(s, CT_OP_RECV_REDUCE, peer, w, src, h, lo, mid);
            hi = mid;
        }
        src = w;
    }
}

/*
 * Recursive doubling on working buffer w, starting from unit v. own (AllGather, unit v is
 * this rank's block alone): the first exchange sends it from the send buffer (in place, the
 * same bytes) and, out of place, copies it into w after posting, so the copy overlaps the
 * exchange instead of delaying it (as ring's own-block copy; on 2 ranks the two are one
 * schedule). copy: out of place.
 */
static void core_ag(struct ct_sched *s, const struct rdh *h, enum ct_bufid w, bool own, bool copy)
{
    int lo = h->v;
    for (int m = 1; m < h->p; m *= 2) {
        int plo = lo ^ m, peer = core_rank(h, h->v ^ m);
        ct_sched_step(s);
        if (own && m == 1)
            ct_sched_send(s, peer, ct_loc(CT_BUF_SEND, 0), ulen(h, lo));
        else
            emit(s, CT_OP_SEND, peer, w, w, h, lo, lo + m);
        emit(s, CT_OP_RECV, peer, w, w, h, plo, plo + m);
        if (own && copy && m == 1)
            ct_sched_copy(s, ct_loc(w, uoff(h, lo)), ct_loc(CT_BUF_SEND, 0), ulen(h, lo));
        lo = lo < plo ? lo : plo;
    }
}

static void build_allreduce(const struct ct_job *j, struct ct_sched *s, const struct rdh *h,
                            int folded)
{
    int r = j->shape.rank;
    uint64_t bytes = j->count * ct_dtype_size(j->dtype);
    enum ct_bufid src = CT_BUF_SEND;
    ct_sched_step(s);
    if (folded && r % 2 == 0) {
        ct_sched_send(s, r + 1, ct_loc(CT_BUF_SEND, 0), bytes);
    } else if (folded) {
        ct_sched_recv_reduce(s, r - 1, ct_loc(CT_BUF_RECV, 0), ct_loc(CT_BUF_SEND, 0), bytes);
        src = CT_BUF_RECV;
    }
    if (h->v >= 0) {
        core_rs(s, h, CT_BUF_RECV, src);
        core_ag(s, h, CT_BUF_RECV, false, false);
    }
    ct_sched_step(s);
    if (folded && r % 2 == 0)
        ct_sched_recv(s, r + 1, ct_loc(CT_BUF_RECV, 0), bytes);
    else if (folded)
        ct_sched_send(s, r - 1, ct_loc(CT_BUF_RECV, 0), bytes);
}

static void build_allgather(const struct ct_job *j, struct ct_sched *s, const struct rdh *h,
                            int folded)
{
    int N = j->shape.nranks, r = j->shape.rank;
    uint64_t bb = j->count * ct_dtype_size(j->dtype), all = (uint64_t)N * bb;
    ct_sched_step(s);
    if (folded && r % 2 == 0)
        ct_sched_send(s, r + 1, ct_loc(CT_BUF_SEND, 0), bb);
    else if (folded)
        ct_sched_recv(s, r - 1, ct_loc(CT_BUF_RECV, (uint64_t)(r - 1) * bb), bb);
    if (!j->in_place && folded)
        ct_sched_copy(s, ct_loc(CT_BUF_RECV, (uint64_t)r * bb), ct_loc(CT_BUF_SEND, 0), bb);
    if (h->v >= 0)
        core_ag(s, h, CT_BUF_RECV, !folded, !j->in_place);
    /* the even rank of a folded pair gets everything but its own block */
    ct_sched_step(s);
    int e = r % 2 == 0 ? r : r - 1;
    if (folded && r % 2 == 0) {
        ct_sched_recv(s, r + 1, ct_loc(CT_BUF_RECV, 0), (uint64_t)e * bb);
        ct_sched_recv(s, r + 1, ct_loc(CT_BUF_RECV, (uint64_t)(e + 1) * bb),
                      all - (uint64_t)(e + 1) * bb);
    } else if (folded) {
        ct_sched_send(s, r - 1, ct_loc(CT_BUF_RECV, 0), (uint64_t)e * bb);
        ct_sched_send(s, r - 1, ct_loc(CT_BUF_RECV, (uint64_t)(e + 1) * bb),
                      all - (uint64_t)(e + 1) * bb);
    }
}

static void build_reducescatter(const struct ct_job *j, struct ct_sched *s, const struct rdh *h,
                                int folded)
{
    int N = j->shape.nranks, r = j->shape.rank;
    uint64_t bb = j->count * ct_dtype_size(j->dtype), all = (uint64_t)N * bb;
    enum ct_bufid src = CT_BUF_SEND;
    /* partial sums live in scratch, laid out like the send buffer */
    ct_sched_step(s);
    if (folded && r % 2 == 0) {
        ct_sched_send(s, r + 1, ct_loc(CT_BUF_SEND, 0), all);
    } else if (folded) {
        ct_sched_recv_reduce(s, r - 1, ct_loc(CT_BUF_SCRATCH, 0), ct_loc(CT_BUF_SEND, 0), all);
        src = CT_BUF_SCRATCH;
    }
    if (h->v >= 0)
        core_rs(s, h, CT_BUF_SCRATCH, src);
    ct_sched_step(s);
    if (folded && r % 2 == 0) {
        ct_sched_recv(s, r + 1, ct_loc(CT_BUF_RECV, 0), bb);
        return;
    }
    if (folded)
        ct_sched_send(s, r - 1, ct_loc(CT_BUF_SCRATCH, (uint64_t)(r - 1) * bb), bb);
    ct_sched_copy(s, ct_loc(CT_BUF_RECV, 0), ct_loc(CT_BUF_SCRATCH, (uint64_t)r * bb), bb);
}

int ct_rdh_build(const struct ct_job *j, struct ct_sched *s, const int *real, struct ct_err *err)
{
    int N = j->shape.nranks, r = j->shape.rank;
    uint64_t es = ct_dtype_size(j->dtype), bb = j->count * es;
    if (j->coll == CT_ALLTOALL)
        return ct_err_set(err, CT_EUNSUPP, "rdh does not implement alltoall");
    if (N == 1) {
        ct_sched_copy(s, ct_loc(CT_BUF_RECV, 0), ct_loc(CT_BUF_SEND, 0), bb);
        return 0;
    }
    struct rdh h = {
        .p = 1, .count = j->count, .es = es, .bb = bb, .reduce = j->coll == CT_ALLREDUCE};
    while (h.p * 2 <= N)
        h.p *= 2;
    int rem = N - h.p;
    if (real && rem)
        return ct_err_set(err, CT_EINVAL, "relabelled rdh needs a power-of-two rank count");
    h.rem = rem;
    h.real = real;
    h.v = -1;
    if (real) {
        for (int v = 0; v < h.p; v++)
            if (real[v] == r)
                h.v = v;
    } else if (r >= 2 * rem || r % 2) { /* the fold: core index v is rank 2v+1 below rem */
        h.v = r < 2 * rem ? r / 2 : r - rem;
    }
    if (real && !h.reduce) { /* the blocks of a relabelled core lie in rank order */
        h.tab_off = ct_xmalloc((size_t)h.p * sizeof *h.tab_off);
        h.tab_len = ct_xmalloc((size_t)h.p * sizeof *h.tab_len);
        for (int u = 0; u < h.p; u++) {
            h.tab_off[u] = (uint64_t)real[u] * bb;
            h.tab_len[u] = bb;
        }
    }
    int folded = r < 2 * rem;
    switch (j->coll) {
    case CT_ALLREDUCE: build_allreduce(j, s, &h, folded); break;
    case CT_ALLGATHER: build_allgather(j, s, &h, folded); break;
    default: build_reducescatter(j, s, &h, folded); break;
    }
    free(h.tab_off);
    free(h.tab_len);
    return 0;
}

static int build(const struct ct_job *j, struct ct_sched *s, struct ct_err *err)
{
    return ct_rdh_build(j, s, NULL, err);
}

const struct ct_algo ct_algo_rdh = {
    .name = "rdh",
    .summary = "recursive halving reduce-scatter + recursive doubling all-gather (any N)",
    .colls = CT_COLL_BIT(CT_ALLREDUCE) | CT_COLL_BIT(CT_ALLGATHER) | CT_COLL_BIT(CT_REDUCESCATTER),
    .params = CT_PBIT(CT_P_CHUNK) | CT_PBIT(CT_P_PIPELINE) | CT_PBIT(CT_P_STREAMS),
    .build = build,
};
