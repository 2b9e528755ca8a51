/* SPDX-License-Identifier: MIT */
/*
 * One-shot collectives through a mailbox: every rank publishes its input once into its own
 * small region of shared memory and reads every peer's publish in place. No fences and no
 * message slots: the latency path for small collectives (NCCL's one-shot AllReduce, and
 * the flag line with its payload inline that the reference limit kernel's barrier is).
 *
 * Summary   One step: publish the input (a sequence number after the data, so a publish of
 *           up to 56 bytes is one cache line), then read each peer's publish as it appears.
 *   AllReduce      y = x0 (op) x1 (op) ... (op) x(N-1) in rank order on every rank (own input
 *                  from its buffer, the others from their publishes): every rank the same bits.
 *   AllGather      block q of y = peer q's publish; the own block copied.
 *   ReduceScatter  the whole input published; y = block r of every rank's, in rank order.
 *   AllToAll       the whole input published; block q of y = block r of peer q's publish.
 * Cost      1 step: a one-way flag latency + a copy of the input into the mailbox + (N-1)
 *           reads of a publish (N-1 times the ring's traffic per rank).
 * Requires  one node over shared memory (the executor refuses it over tcp or fabric, and the
 *           sweep skips it there); the publish (the input) at most CT_MBOX_MAX bytes.
 *           Registered buffers are not needed: the publish is a copy.
 * Limits    every rank reads every publish: small collectives only.
 *
 *   N = 2, AllReduce:  rank0: publish x0; y = x0 + x1 (x1 read in rank 1's mailbox)
 *                      rank1: publish x1; y = x0 + x1 (x0 read in rank 0's mailbox)
 */
#include "algo.h"

#include "../transport/tp.h"

/* y = x0 (op) ... (op) x(N-1) over len bytes at offset off of each rank's input (own: x),
 * into y; in place (x is y), the own input is kept in scratch before y first overwrites it. */
static void reduce_in_rank_order(const struct ct_job *j, struct ct_sched *s, struct ct_loc x,
                                 struct ct_loc y, uint64_t off, uint64_t len)
{
    int N = j->shape.nranks, r = j->shape.rank;
    if (r >= 2 && j->in_place) {
        ct_sched_copy(s, ct_loc(CT_BUF_SCRATCH, 0), x, len);
        x = ct_loc(CT_BUF_SCRATCH, 0);
    }
    if (r == 0)
        ct_sched_mget_reduce(s, 1, y, x, off, false, len);
    else if (r == 1)
        ct_sched_mget_reduce(s, 0, y, x, off, true, len);
    else {
        ct_sched_mget(s, 0, y, off, len);
        ct_sched_mget_reduce(s, 1, y, y, off, false, len);
    }
    for (int q = 2; q < N; q++)
        if (q == r)
            ct_sched_reduce(s, y, y, x, len);
        else
            ct_sched_mget_reduce(s, q, y, y, off, false, len);
}

static int build(const struct ct_job *j, struct ct_sched *s, struct ct_err *err)
{
    int N = j->shape.nranks, r = j->shape.rank;
    uint64_t blk = j->count * ct_dtype_size(j->dtype), R = (uint64_t)r;
    struct ct_loc x = ct_loc(CT_BUF_SEND, 0), y = ct_loc(CT_BUF_RECV, 0);
    (void)err;
    ct_sched_step(s);
    if (N == 1) {
        ct_sched_copy(s, y, x, ct_job_send_bytes(j));
        return 0;
    }
    ct_sched_publish(s, x, ct_job_send_bytes(j));
    switch (j->coll) {
    case CT_ALLREDUCE: reduce_in_rank_order(j, s, x, y, 0, blk); break;
    case CT_REDUCESCATTER:
        reduce_in_rank_order(j, s, ct_loc(CT_BUF_SEND, R * blk), y, R * blk, blk);
        break;
    case CT_ALLGATHER:
        for (int k = 1; k < N; k++) {
            uint64_t q = (uint64_t)((r + k) % N);
            ct_sched_mget(s, (int)q, ct_loc(CT_BUF_RECV, q * blk), 0, blk);
        }
        ct_sched_copy(s, ct_loc(CT_BUF_RECV, R * blk), x, blk);
        break;
    case CT_ALLTOALL: /* in place too: what the peers read was copied out at the publish */
        for (int k = 1; k < N; k++) {
            uint64_t q = (uint64_t)((r + k) % N);
            ct_sched_mget(s, (int)q, ct_loc(CT_BUF_RECV, q * blk), R * blk, blk);
        }
        ct_sched_copy(s, ct_loc(CT_BUF_RECV, R * blk), ct_loc(CT_BUF_SEND, R * blk), blk);
        break;
    default: break;
    }
    return 0;
}

static int supports(const struct ct_job *j, struct ct_err *why)
{
    if (ct_job_send_bytes(j) > CT_MBOX_MAX)
        return ct_err_set(why, CT_EUNSUPP,
                          "oneshot publishes the input, %llu bytes here, into a mailbox of %u",
                          (unsigned long long)ct_job_send_bytes(j), CT_MBOX_MAX);
    return 0;
}

const struct ct_algo ct_algo_oneshot = {
    .name = "oneshot",
    .summary = "small collectives through a mailbox: publish the input, read every peer's",
    .colls = CT_COLL_BIT(CT_ALLREDUCE) | CT_COLL_BIT(CT_ALLGATHER) | CT_COLL_BIT(CT_REDUCESCATTER) |
             CT_COLL_BIT(CT_ALLTOALL),
    .params = 0,
    .onesided = true, /* one node only (ct_algo_supports) */
    .supports = supports,
    .build = build,
};
