/* SPDX-License-Identifier: MIT */
/*
 * Ring: the bandwidth-optimal ring for AllReduce, AllGather, ReduceScatter, and a
 * shifted pairwise exchange for AllToAll.
 *
 * Summary   AllReduce = ReduceScatter + AllGather around the ring r -> r+1. The buffer
 *           is cut into `channels` segments, each into N blocks; all channels advance
 *           in the same steps. The executor slices every transfer into `chunk` bytes
 *           and keeps `pipeline` slices in flight.
 * Cost      AllReduce 2(N-1) steps of n/N bytes: 2(N-1)a + 2(N-1)/N n b (+ reduction).
 *           AllGather / ReduceScatter (N-1)a + (N-1)/N n b. AllToAll (N-1) steps,
 *           one peer each: (N-1)a + (N-1)/N n b.
 * Requires  nothing (any N, any count; blocks differ by at most one element).
 * Limits    every rank sends to one neighbour only: latency grows linearly in N.
 *
 *   AllReduce, N = 3, blocks A B C; rank r starts by sending block r-1... (RS step k:
 *   send block r-k, receive block r-k-1 and reduce):
 *             rank0      rank1      rank2
 *   RS k=0    send A     send B     send C      recv+reduce C, A, B
 *   RS k=1    send C'    send A'    send B'     rank0 owns B, rank1 C, rank2 A
 *   AG k=0,1  circulate the owned blocks: send r+1-k, receive r-k
 */
#include "algo.h"

#define BLK(seg, i) (ct_part_off_line((seg).n, N, (i), es) + (seg).off)
#define BLEN(seg, i) ct_part_len_line((seg).n, N, (i), es)

struct seg {
    uint64_t off, n; /* elements */
};

static int mod(int a, int n)
{
    return ((a % n) + n) % n;
}

static int channels_of(const struct ct_job *j)
{
    return (int)j->params.v[CT_P_CHANNELS];
}

static struct seg seg_of(uint64_t count, int nch, int c, uint64_t es)
{
    struct seg s = {ct_part_off_line(count, nch, c, es), ct_part_len_line(count, nch, c, es)};
    return s;
}

/* ReduceScatter phase of AllReduce over RECV; rank r ends owning block r+1. */
static void ar_reduce_scatter(const struct ct_job *j, struct ct_sched *s, int nch)
{
    int N = j->shape.nranks, r = j->shape.rank, next = mod(r + 1, N), prev = mod(r - 1, N);
    uint64_t es = ct_dtype_size(j->dtype);
    for (int k = 0; k < N - 1; k++) {
        ct_sched_step(s);
        for (int c = 0; c < nch; c++) {
            struct seg g = seg_of(j->count, nch, c, es);
            int sb = mod(r - k, N), rb = mod(r - k - 1, N);
            enum ct_bufid from = k == 0 ? CT_BUF_SEND : CT_BUF_RECV;
            ct_sched_send(s, next, ct_loc(from, BLK(g, sb) * es), BLEN(g, sb) * es);
            ct_sched_recv_reduce(s, prev, ct_loc(CT_BUF_RECV, BLK(g, rb) * es),
                                 ct_loc(CT_BUF_SEND, BLK(g, rb) * es), BLEN(g, rb) * es);
        }
    }
}

/* AllGather phase of AllReduce over RECV: rank r starts owning block r+1. */
static void ar_allgather(const struct ct_job *j, struct ct_sched *s, int nch)
{
    int N = j->shape.nranks, r = j->shape.rank, next = mod(r + 1, N), prev = mod(r - 1, N);
    uint64_t es = ct_dtype_size(j->dtype);
    for (int k = 0; k < N - 1; k++) {
        ct_sched_step(s);
        for (int c = 0; c < nch; c++) {
            struct seg g = seg_of(j->count, nch, c, es);
            int sb = mod(r + 1 - k, N), rb = mod(r - k, N);
            ct_sched_send(s, next, ct_loc(CT_BUF_RECV, BLK(g, sb) * es), BLEN(g, sb) * es);
            ct_sched_recv(s, prev, ct_loc(CT_BUF_RECV, BLK(g, rb) * es), BLEN(g, rb) * es);
        }
    }
}

static int build_allreduce(const struct ct_job *j, struct ct_sched *s)
{
    int N = j->shape.nranks, nch = channels_of(j);
    uint64_t es = ct_dtype_size(j->dtype);
    if (j->quant != CT_QUANT_NONE)
        return ct_qring_build(j, s, NULL);
    if (N == 1) {
        ct_sched_copy(s, ct_loc(CT_BUF_RECV, 0), ct_loc(CT_BUF_SEND, 0), j->count * es);
        return 0;
    }
    ar_reduce_scatter(j, s, nch);
    ar_allgather(j, s, nch);
    return 0;
}

/*
 * AllGather: RECV holds N blocks of count elements; channels split each block.
 * Block b of rank-major layout: RECV offset b*count. Step k: send block r-k, receive r-k-1;
 * the own block is copied into RECV after the first step's messages.
 */
static int build_allgather(const struct ct_job *j, struct ct_sched *s)
{
    int N = j->shape.nranks, r = j->shape.rank, nch = channels_of(j);
    int next = mod(r + 1, N), prev = mod(r - 1, N);
    uint64_t es = ct_dtype_size(j->dtype), n = j->count;
    for (int k = 0; k < N - 1; k++) {
        ct_sched_step(s);
        for (int c = 0; c < nch; c++) {
            struct seg g = seg_of(n, nch, c, es);
            int sb = mod(r - k, N), rb = mod(r - k - 1, N);
            if (k == 0)
                ct_sched_send(s, next, ct_loc(CT_BUF_SEND, g.off * es), g.n * es);
            else
                ct_sched_send(s, next, ct_loc(CT_BUF_RECV, ((uint64_t)sb * n + g.off) * es),
                              g.n * es);
            ct_sched_recv(s, prev, ct_loc(CT_BUF_RECV, ((uint64_t)rb * n + g.off) * es),
                          g.n * es);
        }
        if (k == 0 && !j->in_place) /* the own block, once the first send is under way
                                       (in place, SEND is RECV block r already) */
            ct_sched_copy(s, ct_loc(CT_BUF_RECV, (uint64_t)r * n * es), ct_loc(CT_BUF_SEND, 0),
                          n * es);
    }
    if (N == 1 && !j->in_place) {
        ct_sched_step(s);
        ct_sched_copy(s, ct_loc(CT_BUF_RECV, 0), ct_loc(CT_BUF_SEND, 0), n * es);
    }
    return 0;
}

/*
 * ReduceScatter: SEND holds N blocks of count; partial sums travel through two scratch
 * blocks (double buffer) and the last step lands in RECV. Step k: send block r-k-1
 * (partial), receive block r-k-2 and reduce; rank r ends with block r.
 */
static int build_reducescatter(const struct ct_job *j, struct ct_sched *s)
{
    int N = j->shape.nranks, r = j->shape.rank, nch = channels_of(j);
    int next = mod(r + 1, N), prev = mod(r - 1, N);
    uint64_t es = ct_dtype_size(j->dtype), n = j->count;
    if (N == 1) {
        ct_sched_copy(s, ct_loc(CT_BUF_RECV, 0), ct_loc(CT_BUF_SEND, 0), n * es);
        return 0;
    }
    for (int k = 0; k < N - 1; k++) {
        ct_sched_step(s);
        for (int c = 0; c < nch; c++) {
            struct seg g = seg_of(n, nch, c, es);
            int sb = mod(r - k - 1, N), rb = mod(r - k - 2, N);
            struct ct_loc from = k == 0 ? ct_loc(CT_BUF_SEND, ((uint64_t)sb * n + g.off) * es)
                                        : ct_loc(CT_BUF_SCRATCH, ((k - 1) % 2 * n + g.off) * es);
            struct ct_loc to = k == N - 2 ? ct_loc(CT_BUF_RECV, g.off * es)
                                          : ct_loc(CT_BUF_SCRATCH, (k % 2 * n + g.off) * es);
            ct_sched_send(s, next, from, g.n * es);
            ct_sched_recv_reduce(s, prev, to, ct_loc(CT_BUF_SEND, ((uint64_t)rb * n + g.off) * es),
                                 g.n * es);
        }
    }
    return 0;
}

/*
 * AllToAll: step k = 1..N-1 sends block r+k to rank r+k and receives block r-k from
 * rank r-k; the own block is copied after the first of them. In place, received blocks
 * wait in scratch until the last step.
 */
static int build_alltoall(const struct ct_job *j, struct ct_sched *s)
{
    int N = j->shape.nranks, r = j->shape.rank;
    uint64_t es = ct_dtype_size(j->dtype), bb = j->count * es;
    for (int k = 1; k < N; k++) {
        int to = mod(r + k, N), from = mod(r - k, N);
        ct_sched_step(s);
        ct_sched_send(s, to, ct_loc(CT_BUF_SEND, (uint64_t)to * bb), bb);
        if (j->in_place)
            ct_sched_recv(s, from, ct_loc(CT_BUF_SCRATCH, (uint64_t)from * bb), bb);
        else
            ct_sched_recv(s, from, ct_loc(CT_BUF_RECV, (uint64_t)from * bb), bb);
        if (k == 1) /* the own block, once the first send is under way */
            ct_sched_copy(s, ct_loc(CT_BUF_RECV, (uint64_t)r * bb),
                          ct_loc(CT_BUF_SEND, (uint64_t)r * bb), bb);
    }
    if (N == 1) {
        ct_sched_step(s);
        ct_sched_copy(s, ct_loc(CT_BUF_RECV, 0), ct_loc(CT_BUF_SEND, 0), bb);
    }
    if (j->in_place)
        for (int q = 0; q < N; q++)
            if (q != r)
                ct_sched_copy(s, ct_loc(CT_BUF_RECV, (uint64_t)q * bb),
                              ct_loc(CT_BUF_SCRATCH, (uint64_t)q * bb), bb);
    return 0;
}

/* --quant: AllReduce of float32 sums (algos/quant.c). */
static int supports(const struct ct_job *j, struct ct_err *why)
{
    if (j->quant == CT_QUANT_NONE)
        return 0;
    if (j->coll != CT_ALLREDUCE)
        return ct_err_set(why, CT_EUNSUPP, "--quant is for allreduce (not %s)",
                          ct_coll_name(j->coll));
    if (j->dtype != CT_FLOAT32)
        return ct_err_set(why, CT_EUNSUPP, "--quant needs float32 data (not %s)",
                          ct_dtype_name(j->dtype));
    if (j->op != CT_SUM)
        return ct_err_set(why, CT_EUNSUPP, "--quant reduces with sum only (not %s)",
                          ct_redop_name(j->op));
    return 0;
}

static int build(const struct ct_job *j, struct ct_sched *s, struct ct_err *err)
{
    switch (j->coll) {
    case CT_ALLREDUCE: return build_allreduce(j, s);
    case CT_ALLGATHER: return build_allgather(j, s);
    case CT_REDUCESCATTER: return build_reducescatter(j, s);
    case CT_ALLTOALL: return build_alltoall(j, s);
    default: return ct_err_set(err, CT_EUNSUPP, "unknown collective");
    }
}

const struct ct_algo ct_algo_ring = {
    .name = "ring",
    .summary = "pipelined ring: reduce-scatter + all-gather, bandwidth-optimal",
    .colls = CT_COLLS_ALL,
    .params = CT_PBIT(CT_P_CHUNK) | CT_PBIT(CT_P_PIPELINE) | CT_PBIT(CT_P_CHANNELS) |
              CT_PBIT(CT_P_STREAMS),
    .quant = true,
    .supports = supports,
    .build = build,
};
