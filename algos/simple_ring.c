/* SPDX-License-Identifier: MIT */
/*
 * Simple ring: the latency variant of the ring. The whole buffer travels the ring once
 * to reduce (or gather) and once more to broadcast (or scatter); nothing is cut into
 * per-rank blocks.
 *
 * Summary   AllReduce: a reduce chain 0 -> 1 -> ... -> N-1 (rank r adds its buffer to
 *           the partial it receives and forwards the sum), then a broadcast chain
 *           N-1 -> 0 -> 1 -> ... -> N-2. AllGather: the gather chain accumulates the
 *           blocks of ranks 0..r; the broadcast chain then carries only what each rank
 *           still lacks. ReduceScatter: the reduce chain over all N blocks, then a
 *           scatter chain that drops each rank's block as it passes.
 * Cost      AllReduce 2(N-1) sequential hops of n bytes: 2(N-1)(a + n b); each rank
 *           sends at most 2n. AllGather / ReduceScatter 2(N-1) hops of at most n
 *           (the whole N-block buffer). No hop can start before the previous ends.
 * Requires  nothing (any N, any count). ReduceScatter scratch: the whole send buffer.
 * Limits    latency grows linearly in N and bandwidth is n b per hop, N times worse
 *           than the chunked ring: for small buffers and few ranks only.
 *
 *   AllReduce, N = 3 (x = own buffer, one line per hop):
 *     hop 1: rank0 x0 -> rank1            rank1 holds x0+x1
 *     hop 2: rank1 x0+x1 -> rank2         rank2 holds the sum S
 *     hop 3: rank2 S -> rank0;  hop 4: rank0 S -> rank1
 */
#include "algo.h"

/* Broadcast chain from N-1 through 0, 1, ..., N-2: rank r receives from r-1 (mod N). */
static int prev_of(int r, int N)
{
    return (r + N - 1) % N;
}

static int build_allreduce(const struct ct_job *j, struct ct_sched *s)
{
    int N = j->shape.nranks, r = j->shape.rank;
    uint64_t bytes = j->count * ct_dtype_size(j->dtype);
    struct ct_loc send = ct_loc(CT_BUF_SEND, 0), recv = ct_loc(CT_BUF_RECV, 0);
    if (N == 1) {
        ct_sched_copy(s, recv, send, bytes);
        return 0;
    }
    /* reduce chain */
    ct_sched_step(s);
    if (r == 0) {
        ct_sched_send(s, 1, send, bytes);
    } else {
        ct_sched_recv_reduce(s, r - 1, recv, send, bytes);
        if (r < N - 1) {
            ct_sched_step(s);
            ct_sched_send(s, r + 1, recv, bytes);
        }
    }
    /* broadcast chain */
    ct_sched_step(s);
    if (r == N - 1) {
        ct_sched_send(s, 0, recv, bytes);
    } else {
        ct_sched_recv(s, prev_of(r, N), recv, bytes);
        if (r < N - 2) {
            ct_sched_step(s);
            ct_sched_send(s, r + 1, recv, bytes);
        }
    }
    return 0;
}

static int build_allgather(const struct ct_job *j, struct ct_sched *s)
{
    int N = j->shape.nranks, r = j->shape.rank;
    uint64_t bb = j->count * ct_dtype_size(j->dtype), all = (uint64_t)N * bb;
    ct_sched_step(s);
    /* gather chain: rank r receives the blocks of ranks 0..r-1 */
    if (r > 0)
        ct_sched_recv(s, r - 1, ct_loc(CT_BUF_RECV, 0), (uint64_t)r * bb);
    else if (N > 1)
        ct_sched_send(s, 1, ct_loc(CT_BUF_SEND, 0), bb);
    if (!j->in_place)
        ct_sched_copy(s, ct_loc(CT_BUF_RECV, (uint64_t)r * bb), ct_loc(CT_BUF_SEND, 0), bb);
    if (N == 1)
        return 0;
    if (r > 0 && r < N - 1) {
        ct_sched_step(s);
        ct_sched_send(s, r + 1, ct_loc(CT_BUF_RECV, 0), (uint64_t)(r + 1) * bb);
    }
    /* broadcast chain: rank r < N-1 still lacks blocks r+1..N-1 */
    ct_sched_step(s);
    if (r == N - 1) {
        ct_sched_send(s, 0, ct_loc(CT_BUF_RECV, bb), all - bb);
    } else {
        ct_sched_recv(s, prev_of(r, N), ct_loc(CT_BUF_RECV, (uint64_t)(r + 1) * bb),
                      all - (uint64_t)(r + 1) * bb);
        if (r < N - 2) {
            ct_sched_step(s);
            ct_sched_send(s, r + 1, ct_loc(CT_BUF_RECV, (uint64_t)(r + 2) * bb),
                          all - (uint64_t)(r + 2) * bb);
        }
    }
    return 0;
}

/*
 * Scatter hop to rank q: its block (into its RECV), then the blocks q+1..N-2 that it
 * passes on (into its scratch, where the reduce chain left them).
 */
static void scatter_to(struct ct_sched *s, int q, int N, uint64_t bb)
{
    ct_sched_send(s, q, ct_loc(CT_BUF_SCRATCH, (uint64_t)q * bb), bb);
    ct_sched_send(s, q, ct_loc(CT_BUF_SCRATCH, (uint64_t)(q + 1) * bb), (uint64_t)(N - 2 - q) * bb);
}

static int build_reducescatter(const struct ct_job *j, struct ct_sched *s)
{
    int N = j->shape.nranks, r = j->shape.rank;
    uint64_t bb = j->count * ct_dtype_size(j->dtype), all = (uint64_t)N * bb;
    struct ct_loc scr = ct_loc(CT_BUF_SCRATCH, 0);
    if (N == 1) {
        ct_sched_copy(s, ct_loc(CT_BUF_RECV, 0), ct_loc(CT_BUF_SEND, 0), bb);
        return 0;
    }
    /* reduce chain over all N blocks, partial sums in scratch */
    ct_sched_step(s);
    if (r == 0) {
        ct_sched_send(s, 1, ct_loc(CT_BUF_SEND, 0), all);
    } else {
        ct_sched_recv_reduce(s, r - 1, scr, ct_loc(CT_BUF_SEND, 0), all);
        if (r < N - 1) {
            ct_sched_step(s);
            ct_sched_send(s, r + 1, scr, all);
        }
    }
    /* scatter chain N-1 -> 0 -> 1 -> ... -> N-2 */
    ct_sched_step(s);
    if (r == N - 1) {
        ct_sched_copy(s, ct_loc(CT_BUF_RECV, 0), ct_loc(CT_BUF_SCRATCH, (uint64_t)r * bb), bb);
        scatter_to(s, 0, N, bb);
        return 0;
    }
    int from = prev_of(r, N);
    ct_sched_recv(s, from, ct_loc(CT_BUF_RECV, 0), bb);
    ct_sched_recv(s, from, ct_loc(CT_BUF_SCRATCH, (uint64_t)(r + 1) * bb),
                  (uint64_t)(N - 2 - r) * bb);
    if (r < N - 2) {
        ct_sched_step(s);
        scatter_to(s, r + 1, N, bb);
    }
    return 0;
}

static int build(const struct ct_job *j, struct ct_sched *s, struct ct_err *err)
{
    switch (j->coll) {
    case CT_ALLREDUCE: return build_allreduce(j, s);
    case CT_ALLGATHER: return build_allgather(j, s);
    case CT_REDUCESCATTER: return build_reducescatter(j, s);
    default:
        return ct_err_set(err, CT_EUNSUPP, "simple-ring does not implement %s",
                          ct_coll_name(j->coll));
    }
}

const struct ct_algo ct_algo_simple_ring = {
    .name = "simple-ring",
    .summary = "unchunked ring: whole buffer reduced along a chain, then broadcast (latency)",
    .colls = CT_COLL_BIT(CT_ALLREDUCE) | CT_COLL_BIT(CT_ALLGATHER) | CT_COLL_BIT(CT_REDUCESCATTER),
    .params = CT_PBIT(CT_P_CHUNK) | CT_PBIT(CT_P_PIPELINE) | CT_PBIT(CT_P_STREAMS),
    .build = build,
};
