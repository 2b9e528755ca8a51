/* SPDX-License-Identifier: MIT */
/*
 * Mesh: every rank talks to every peer at once.
 *
 * Summary   ReduceScatter: each rank sends block p to rank p and reduces the N-1 blocks
 *           it receives (in scratch) into its own, in a fixed order, so every run gives
 *           the same bits. AllGather: each rank sends its block to every peer.
 *           AllReduce = ReduceScatter + AllGather. AllToAll = pairwise exchange with
 *           every peer posted together.
 * Cost      AllReduce 2 steps: 2a + 2(N-1)/N n b, with N-1 concurrent peers per step
 *           (link sharing makes b effectively N-1 times worse on a ring-like fabric).
 *           AllGather, ReduceScatter, AllToAll: 1 step, a + (N-1)/N n b.
 * Requires  nothing (any N, any count). Scratch: N-1 blocks.
 * Limits    N-1 simultaneous connections per rank; best for small N or full-bisection
 *           fabrics (NVSwitch, shared memory).
 *
 *   ReduceScatter, N = 3:   rank0 -> B to 1, C to 2;  rank1 -> A to 0, C to 2; ...
 *                           rank0 reduces A0 (+) A1 (+) A2 locally.
 */
#include "algo.h"

/* Reduce-scatter of blocks (elements off_of(b), len_of(b)) of SEND into RECV at dst_off.
 * Received blocks land in scratch slot q (size maxlen each). */
static void mesh_rs(struct ct_sched *s, int N, int r, uint64_t es, uint64_t count, int even,
                    struct ct_loc dst)
{
    /* even: blocks of exactly count elements (ReduceScatter); else count split N ways */
    uint64_t maxlen = even ? count : ct_part_len_line(count, N, 0, es);
    uint64_t mine_off = even ? (uint64_t)r * count : ct_part_off_line(count, N, r, es);
    uint64_t mine_len = even ? count : ct_part_len_line(count, N, r, es);
    ct_sched_step(s);
    for (int k = 1; k < N; k++) {
        int p = (r + k) % N;
        uint64_t off = even ? (uint64_t)p * count : ct_part_off_line(count, N, p, es);
        uint64_t len = even ? count : ct_part_len_line(count, N, p, es);
        ct_sched_send(s, p, ct_loc(CT_BUF_SEND, off * es), len * es);
    }
    for (int k = 1; k < N; k++) {
        int q = (r - k + N) % N;
        ct_sched_recv(s, q, ct_loc(CT_BUF_SCRATCH, (uint64_t)q * maxlen * es), mine_len * es);
    }
    /* acc = own block, then (+) each peer's in rank order */
    struct ct_loc acc = ct_loc(CT_BUF_SEND, mine_off * es);
    for (int q = 0; q < N; q++) {
        if (q == r)
            continue;
        ct_sched_reduce(s, dst, acc, ct_loc(CT_BUF_SCRATCH, (uint64_t)q * maxlen * es),
                        mine_len * es);
        acc = dst;
    }
    if (N == 1)
        ct_sched_copy(s, dst, acc, mine_len * es);
}

static int build_allreduce(const struct ct_job *j, struct ct_sched *s)
{
    int N = j->shape.nranks, r = j->shape.rank;
    uint64_t es = ct_dtype_size(j->dtype), n = j->count;
    mesh_rs(s, N, r, es, n, 0, ct_loc(CT_BUF_RECV, ct_part_off_line(n, N, r, es) * es));
    if (N == 1)
        return 0; /* mesh_rs copied the whole buffer */
    ct_sched_step(s);
    for (int k = 1; k < N; k++) {
        int p = (r + k) % N;
        ct_sched_send(s, p, ct_loc(CT_BUF_RECV, ct_part_off_line(n, N, r, es) * es),
                      ct_part_len_line(n, N, r, es) * es);
    }
    for (int k = 1; k < N; k++) {
        int q = (r - k + N) % N;
        ct_sched_recv(s, q, ct_loc(CT_BUF_RECV, ct_part_off_line(n, N, q, es) * es),
                      ct_part_len_line(n, N, q, es) * es);
    }
    return 0;
}

static int build_reducescatter(const struct ct_job *j, struct ct_sched *s)
{
    mesh_rs(s, j->shape.nranks, j->shape.rank, ct_dtype_size(j->dtype), j->count, 1,
            ct_loc(CT_BUF_RECV, 0));
    return 0;
}

static int build_allgather(const struct ct_job *j, struct ct_sched *s)
{
    int N = j->shape.nranks, r = j->shape.rank;
    uint64_t bb = j->count * ct_dtype_size(j->dtype);
    ct_sched_step(s);
    for (int k = 1; k < N; k++)
        ct_sched_send(s, (r + k) % N, ct_loc(CT_BUF_SEND, 0), bb);
    for (int k = 1; k < N; k++) {
        int q = (r - k + N) % N;
        ct_sched_recv(s, q, ct_loc(CT_BUF_RECV, (uint64_t)q * bb), bb);
    }
    ct_sched_copy(s, ct_loc(CT_BUF_RECV, (uint64_t)r * bb), ct_loc(CT_BUF_SEND, 0), bb);
    return 0;
}

static int build_alltoall(const struct ct_job *j, struct ct_sched *s)
{
    int N = j->shape.nranks, r = j->shape.rank;
    uint64_t bb = j->count * ct_dtype_size(j->dtype);
    enum ct_bufid land = j->in_place ? CT_BUF_SCRATCH : CT_BUF_RECV;
    ct_sched_step(s);
    for (int k = 1; k < N; k++) {
        int p = (r + k) % N;
        ct_sched_send(s, p, ct_loc(CT_BUF_SEND, (uint64_t)p * bb), bb);
    }
    for (int k = 1; k < N; k++) {
        int q = (r - k + N) % N;
        ct_sched_recv(s, q, ct_loc(land, (uint64_t)q * bb), bb);
    }
    ct_sched_copy(s, ct_loc(CT_BUF_RECV, (uint64_t)r * bb), ct_loc(CT_BUF_SEND, (uint64_t)r * bb),
                  bb);
    if (j->in_place)
        for (int q = 0; q < N; q++)
            if (q != r)
                ct_sched_copy(s, ct_loc(CT_BUF_RECV, (uint64_t)q * bb),
                              ct_loc(CT_BUF_SCRATCH, (uint64_t)q * bb), bb);
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

const struct ct_algo ct_algo_mesh = {
    .name = "mesh",
    .summary = "direct exchange with every peer in one step (AllToAll: pairwise exchange)",
    .colls = CT_COLLS_ALL,
    .params = CT_PBIT(CT_P_CHUNK) | CT_PBIT(CT_P_PIPELINE) | CT_PBIT(CT_P_STREAMS),
    .build = build,
};
