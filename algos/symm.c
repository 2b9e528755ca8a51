/* SPDX-License-Identifier: MIT */
/*
 * Symmetric (one-sided) collectives over shared memory: every rank reads and writes its
 * peers' buffers in place, between two fences, the shape of NCCL's symmetric-memory kernels
 * and of the reference limit kernel (../shared/bench/shm_limit.c).
 *
 * Summary   Fence with every peer (each rank has entered: its input is ready and its output
 *           may be written); one-sided work; fence again (every write into this rank's
 *           output has landed, and nobody reads its input any more).
 *   AllReduce      rank r owns slice r: reduces it from every rank's input straight into its
 *                  own output (own input (op) each peer's, read in place), then puts the
 *                  result into every peer's output.
 *   AllGather      rank r gets every peer's block into its output (and copies its own);
 *                  from PULL_MAX it puts its block into every peer's output instead.
 *   ReduceScatter  rank r reduces block r of every rank's input into its output.
 *   AllToAll       rank r gets block r of peer q's input into block q of its output; from
 *                  PULL_MAX, and in place, it puts block q of its input into block r of
 *                  peer q's output (in place from a copy of the N-1 leaving blocks in
 *                  scratch, taken before the first fence, since the peers overwrite the
 *                  buffer it reads).
 * Cost      2 fences (a flag line each way per pair) + the data moved once: (N-1)/N n read
 *           from peers and (N-1)/N n written to them per rank, no staging copy.
 * Requires  one node and a transport with shared memory (shm): the executor refuses the
 *           point otherwise (tcp, COLLTUNE_SHM_UNREGISTERED), and the sweep skips it. On a
 *           memory kind the processes share (--mem cuda: CUDA IPC; host-ipc) the executor
 *           runs it in place on that memory, the peers' mapped (backend/resident.h), as it
 *           does every schedule there.
 * Limits    every rank touches every peer's memory: the cores' shared cache is the fabric.
 *           Each slice's value is computed once, so every rank holds the same bits.
 *
 *   N = 2, AllReduce:  rank0: y[0:h]  = x0[0:h] + x1[0:h] (x1 read in rank 1's memory),
 *                             then y[0:h] written into rank 1's y;   rank1: the other half.
 */
#include "algo.h"

/*
 * AllGather and AllToAll move blocks below PULL_MAX with gets: then only this rank writes its
 * output. With puts, at a block size off a cache line the line between two blocks has two
 * writers, the peer's put and the own copy (2 ranks, AllGather, medians of 3 alternating
 * runs: 352 B 0.84 -> 0.73 us, 3000 B 0.81 -> 0.71, 64 KiB 2.86 -> 2.56; AllToAll 648 B
 * 0.83 -> 0.63). From 256 KiB blocks puts: equal there, and at 512 KiB blocks a get took
 * 47 us against 34.
 */
#define PULL_MAX (256u << 10)

static void fence_all(struct ct_sched *s, int N, int r)
{
    ct_sched_step(s);
    for (int k = 1; k < N; k++)
        ct_sched_sync(s, (r + k) % N);
}

static int build(const struct ct_job *j, struct ct_sched *s, struct ct_err *err)
{
    int N = j->shape.nranks, r = j->shape.rank;
    uint64_t es = ct_dtype_size(j->dtype), blk = j->count * es;
    (void)err;
    if (N == 1) {
        ct_sched_step(s);
        ct_sched_copy(s, ct_loc(CT_BUF_RECV, 0), ct_loc(CT_BUF_SEND, 0), blk);
        return 0;
    }
    if (j->coll == CT_ALLTOALL && j->in_place) {
        /* keep what the peers are owed before they may overwrite it: the N-1 blocks that
         * leave (the own block stays where it is); the scratch block of rank q is q's */
        ct_sched_step(s);
        for (int k = 1; k < N; k++) {
            uint64_t q = (uint64_t)((r + k) % N);
            ct_sched_copy(s, ct_loc(CT_BUF_SCRATCH, q * blk), ct_loc(CT_BUF_SEND, q * blk), blk);
        }
    }
    fence_all(s, N, r);
    switch (j->coll) {
    case CT_ALLREDUCE: {
        /* slices on cache lines: off a line, every vector store of a slice straddles two
         * lines and the boundary lines have two writers (2 ranks: 63.6 KiB took 6.5-7.1 us
         * against 2.6-2.7 at 64 KiB; 2.8 on lines; 257 KiB 21-26 us, now 8.2-8.4) */
        uint64_t R = (uint64_t)r;
        uint64_t off = ct_part_off_line(j->count, (uint64_t)N, R, es) * es,
                 len = ct_part_len_line(j->count, (uint64_t)N, R, es) * es;
        struct ct_loc y = ct_loc(CT_BUF_RECV, off);
        for (int k = 1; k < N; k++) /* y = x_r (op) x_r+1 (op) ... in ring order from r */
            ct_sched_get_reduce(s, (r + k) % N, y, k == 1 ? ct_loc(CT_BUF_SEND, off) : y,
                                ct_loc(CT_BUF_SEND, off), false, len);
        for (int k = 1; k < N; k++)
            ct_sched_put(s, (r + k) % N, y, y, len);
        break;
    }
    case CT_ALLGATHER: {
        struct ct_loc mine = ct_loc(CT_BUF_RECV, (uint64_t)r * blk);
        for (int k = 1; k < N; k++) {
            uint64_t q = (uint64_t)((r + k) % N);
            if (blk >= PULL_MAX)
                ct_sched_put(s, (int)q, mine, ct_loc(CT_BUF_SEND, 0), blk);
            else
                ct_sched_get(s, (int)q, ct_loc(CT_BUF_RECV, q * blk),
                             j->in_place ? ct_loc(CT_BUF_RECV, q * blk) : ct_loc(CT_BUF_SEND, 0),
                             blk);
        }
        if (!j->in_place)
            ct_sched_copy(s, ct_loc(CT_BUF_RECV, (uint64_t)r * blk), ct_loc(CT_BUF_SEND, 0), blk);
        break;
    }
    case CT_REDUCESCATTER: {
        struct ct_loc x = ct_loc(CT_BUF_SEND, (uint64_t)r * blk), y = ct_loc(CT_BUF_RECV, 0);
        for (int k = 1; k < N; k++)
            ct_sched_get_reduce(s, (r + k) % N, y, k == 1 ? x : y, x, false, blk);
        break;
    }
    case CT_ALLTOALL: {
        /* in place from scratch, which is private: puts */
        enum ct_bufid from = j->in_place ? CT_BUF_SCRATCH : CT_BUF_SEND;
        for (int k = 1; k < N; k++) {
            int q = (r + k) % N;
            if (blk >= PULL_MAX || j->in_place)
                ct_sched_put(s, q, ct_loc(CT_BUF_RECV, (uint64_t)r * blk),
                             ct_loc(from, (uint64_t)q * blk), blk);
            else /* block r of peer q's input into block q of the output */
                ct_sched_get(s, q, ct_loc(CT_BUF_RECV, (uint64_t)q * blk),
                             ct_loc(CT_BUF_SEND, (uint64_t)r * blk), blk);
        }
        if (!j->in_place)
            ct_sched_copy(s, ct_loc(CT_BUF_RECV, (uint64_t)r * blk),
                          ct_loc(CT_BUF_SEND, (uint64_t)r * blk), blk);
        break;
    }
    default: break;
    }
    fence_all(s, N, r);
    return 0;
}

const struct ct_algo ct_algo_symm = {
    .name = "symm",
    .summary = "one-sided over shared memory: read and write the peers' buffers between fences",
    .colls = CT_COLL_BIT(CT_ALLREDUCE) | CT_COLL_BIT(CT_ALLGATHER) | CT_COLL_BIT(CT_REDUCESCATTER) |
             CT_COLL_BIT(CT_ALLTOALL),
    .params = 0,
    .onesided = true, /* one node only (ct_algo_supports) */
    .build = build,
};
