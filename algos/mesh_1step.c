/* SPDX-License-Identifier: MIT */
/*
 * Single-step mesh AllReduce: every rank sends its whole buffer to every peer and
 * reduces all N copies itself.
 *
 * Summary   One communication step: send the whole buffer to each of the N-1 peers,
 *           receive theirs into scratch, then reduce x0 (+) x1 (+) ... (+) x(N-1) in
 *           rank order. Every rank performs the same operations on the same operands in
 *           the same order, so all ranks hold the same bits.
 * Cost      1 step: a + (N-1) n b per rank (N-1 times the ring's traffic), plus N-1
 *           local reductions of n bytes.
 * Requires  nothing (any N, any count). Scratch: N buffers (N = 2: none).
 * N = 2     fused: each rank reduces the peer's buffer as it arrives (x0 (+) x1 on both
 *           ranks), one pass over the data; over shm the peer's buffer is read in place.
 *           In place (the result overwrites what the peer reads): each rank reduces one
 *           half in place, then the halves are exchanged.
 * Limits    traffic and scratch grow with N: tiny buffers on full-bisection fabrics
 *           (NVSwitch, shared memory) only.
 *
 *   N = 3:   rank0 -> x0 to 1, x0 to 2   rank1 -> x1 to 0, x1 to 2   rank2 -> ...
 *            every rank: y = (x0 + x1) + x2
 */
#include "algo.h"

static int build(const struct ct_job *j, struct ct_sched *s, struct ct_err *err)
{
    int N = j->shape.nranks, r = j->shape.rank;
    uint64_t bytes = j->count * ct_dtype_size(j->dtype);
    struct ct_loc recv = ct_loc(CT_BUF_RECV, 0), own = ct_loc(CT_BUF_SEND, 0);
    if (j->coll != CT_ALLREDUCE)
        return ct_err_set(err, CT_EUNSUPP, "mesh-1step only implements allreduce");
    ct_sched_step(s);
    if (N == 1) {
        ct_sched_copy(s, recv, own, bytes);
        return 0;
    }
    if (N == 2) {
        /* fused: the peer's buffer is reduced as it arrives (over shm straight from the
         * peer's memory), x0 first on both ranks; in place our input is kept in scratch
         * first, since the result overwrites it while the peer still reads it */
        if (j->in_place) {
            /* the result overwrites the input the peer reads: reduce our half in place while
             * the peer reduces the other, then exchange the halves (no scratch) */
            uint64_t es = ct_dtype_size(j->dtype), h0 = ct_part_len_line(j->count, 2, 0, es) * es;
            uint64_t off[2] = {0, h0}, len[2] = {h0, bytes - h0};
            int p = 1 - r;
            ct_sched_send(s, p, ct_loc(CT_BUF_SEND, off[p]), len[p]);
            if (r == 0)
                ct_sched_recv_reduce(s, p, ct_loc(CT_BUF_RECV, off[r]), ct_loc(CT_BUF_SEND, off[r]),
                                     len[r]);
            else
                ct_sched_recv_reduce_rev(s, p, ct_loc(CT_BUF_RECV, off[r]),
                                         ct_loc(CT_BUF_SEND, off[r]), len[r]);
            ct_sched_step(s);
            ct_sched_send(s, p, ct_loc(CT_BUF_RECV, off[r]), len[r]);
            ct_sched_recv(s, p, ct_loc(CT_BUF_RECV, off[p]), len[p]);
            return 0;
        }
        ct_sched_send(s, 1 - r, own, bytes);
        if (r == 0)
            ct_sched_recv_reduce(s, 1, recv, own, bytes);
        else
            ct_sched_recv_reduce_rev(s, 0, recv, own, bytes);
        return 0;
    }
    uint64_t slot = (bytes + 63) / 64 * 64; /* scratch slots start on cache lines */
    for (int k = 1; k < N; k++)
        ct_sched_send(s, (r + k) % N, own, bytes);
    for (int k = 1; k < N; k++) {
        int q = (r - k + N) % N;
        ct_sched_recv(s, q, ct_loc(CT_BUF_SCRATCH, (uint64_t)q * slot), bytes);
    }
    if (j->in_place) {
        /* the result overwrites the input: keep our copy in slot r */
        own = ct_loc(CT_BUF_SCRATCH, (uint64_t)r * slot);
        ct_sched_copy(s, own, ct_loc(CT_BUF_SEND, 0), bytes);
    }
    struct ct_loc x[2];
    for (int q = 0; q < 2; q++)
        x[q] = q == r ? own : ct_loc(CT_BUF_SCRATCH, (uint64_t)q * slot);
    ct_sched_reduce(s, recv, x[0], x[1], bytes);
    for (int q = 2; q < N; q++)
        ct_sched_reduce(s, recv, recv, q == r ? own : ct_loc(CT_BUF_SCRATCH, (uint64_t)q * slot),
                        bytes);
    return 0;
}

const struct ct_algo ct_algo_mesh_1step = {
    .name = "mesh-1step",
    .summary = "one-step mesh allreduce: whole buffer to every peer, reduce locally",
    .colls = CT_COLL_BIT(CT_ALLREDUCE),
    .params = CT_PBIT(CT_P_CHUNK) | CT_PBIT(CT_P_PIPELINE) | CT_PBIT(CT_P_STREAMS) |
              CT_PBIT(CT_P_THREADS),
    .build = build,
};
