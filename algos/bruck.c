/* SPDX-License-Identifier: MIT */
/*
 * Bruck: log-step AllToAll (and AllGather) for small messages (Bruck et al. 1997).
 *
 * Summary   AllToAll: rotate the send blocks so that slot i holds the block for rank
 *           r+i; in round k (distance d = 2^k) pack the slots whose index has bit k
 *           set, send them to r+d, receive the same slots from r-d and unpack them in
 *           place. After ceil(log2 N) rounds slot i holds the block from rank r-i,
 *           which an inverse rotation puts in place. AllGather: slot i collects the
 *           block of rank r+i; round k sends the first min(d, N-d) slots to r-d and
 *           receives the next ones from r+d.
 * Cost      ceil(log2 N) steps. AllToAll: ceil(log2 N) a + about (N/2) log2(N) blocks
 *           b per rank (each block travels once per set bit of its distance), plus
 *           local packing copies. AllGather: ceil(log2 N) a + (N-1)/N n b.
 * Requires  nothing (any N, any count). Scratch: AllToAll N + 2 ceil(N/2) blocks,
 *           AllGather N blocks.
 * Limits    AllToAll moves log2(N)/2 times the data of pairwise exchange: a win only
 *           while the per-message cost a dominates (small blocks).
 *
 *   AllToAll, N = 4, slot i = block for rank r+i:
 *     round 0 (d=1): slots 1, 3 go to r+1, arrive from r-1
 *     round 1 (d=2): slots 2, 3 go to r+2, arrive from r-2
 *     slot i now holds the block from rank r-i for rank r
 */
#include "algo.h"

/* Scratch layout (blocks): slots [0, N), pack area [N, N+h), unpack area [N+h, N+2h). */
static void pack_runs(struct ct_sched *s, int N, int d, uint64_t bb, uint64_t pack, int unpack)
{
    /* slots with bit d set form runs [d, 2d), [3d, 4d), ... */
    uint64_t at = 0;
    for (int i = d; i < N; i += 2 * d) {
        int len = i + d <= N ? d : N - i;
        struct ct_loc slot = ct_loc(CT_BUF_SCRATCH, (uint64_t)i * bb);
        struct ct_loc area = ct_loc(CT_BUF_SCRATCH, pack + at);
        if (unpack)
            ct_sched_copy(s, slot, area, (uint64_t)len * bb);
        else
            ct_sched_copy(s, area, slot, (uint64_t)len * bb);
        at += (uint64_t)len * bb;
    }
}

static uint64_t packed(int N, int d)
{
    uint64_t n = 0;
    for (int i = d; i < N; i += 2 * d)
        n += (uint64_t)(i + d <= N ? d : N - i);
    return n;
}

static void build_alltoall(const struct ct_job *j, struct ct_sched *s)
{
    int N = j->shape.nranks, r = j->shape.rank;
    uint64_t bb = j->count * ct_dtype_size(j->dtype), h = (uint64_t)(N + 1) / 2;
    uint64_t pack = (uint64_t)N * bb, unpack = pack + h * bb;
    /* rotate: slot i = send block (r + i) mod N */
    ct_sched_step(s);
    ct_sched_copy(s, ct_loc(CT_BUF_SCRATCH, 0), ct_loc(CT_BUF_SEND, (uint64_t)r * bb),
                  (uint64_t)(N - r) * bb);
    ct_sched_copy(s, ct_loc(CT_BUF_SCRATCH, (uint64_t)(N - r) * bb), ct_loc(CT_BUF_SEND, 0),
                  (uint64_t)r * bb);
    if (N > 1)
        pack_runs(s, N, 1, bb, pack, 0);
    for (int d = 1; d < N; d *= 2) {
        uint64_t bytes = packed(N, d) * bb;
        ct_sched_step(s);
        ct_sched_send(s, (r + d) % N, ct_loc(CT_BUF_SCRATCH, pack), bytes);
        ct_sched_recv(s, (r - d + N) % N, ct_loc(CT_BUF_SCRATCH, unpack), bytes);
        pack_runs(s, N, d, bb, unpack, 1);
        if (2 * d < N)
            pack_runs(s, N, 2 * d, bb, pack, 0);
    }
    /* inverse rotation: slot i came from rank r - i */
    for (int i = 0; i < N; i++)
        ct_sched_copy(s, ct_loc(CT_BUF_RECV, (uint64_t)((r - i + N) % N) * bb),
                      ct_loc(CT_BUF_SCRATCH, (uint64_t)i * bb), bb);
}

static void build_allgather(const struct ct_job *j, struct ct_sched *s)
{
    int N = j->shape.nranks, r = j->shape.rank;
    uint64_t bb = j->count * ct_dtype_size(j->dtype);
    /* slot i = block of rank (r + i) mod N */
    ct_sched_step(s);
    ct_sched_copy(s, ct_loc(CT_BUF_SCRATCH, 0), ct_loc(CT_BUF_SEND, 0), bb);
    for (int d = 1; d < N; d *= 2) {
        uint64_t c = (uint64_t)(d < N - d ? d : N - d);
        ct_sched_step(s);
        ct_sched_send(s, (r - d + N) % N, ct_loc(CT_BUF_SCRATCH, 0), c * bb);
        ct_sched_recv(s, (r + d) % N, ct_loc(CT_BUF_SCRATCH, (uint64_t)d * bb), c * bb);
    }
    ct_sched_copy(s, ct_loc(CT_BUF_RECV, (uint64_t)r * bb), ct_loc(CT_BUF_SCRATCH, 0),
                  (uint64_t)(N - r) * bb);
    ct_sched_copy(s, ct_loc(CT_BUF_RECV, 0), ct_loc(CT_BUF_SCRATCH, (uint64_t)(N - r) * bb),
                  (uint64_t)r * bb);
}

static int build(const struct ct_job *j, struct ct_sched *s, struct ct_err *err)
{
    switch (j->coll) {
    case CT_ALLTOALL: build_alltoall(j, s); return 0;
    case CT_ALLGATHER: build_allgather(j, s); return 0;
    default:
        return ct_err_set(err, CT_EUNSUPP, "bruck does not implement %s", ct_coll_name(j->coll));
    }
}

const struct ct_algo ct_algo_bruck = {
    .name = "bruck",
    .summary = "log-step alltoall and allgather for small messages (Bruck)",
    .colls = CT_COLL_BIT(CT_ALLTOALL) | CT_COLL_BIT(CT_ALLGATHER),
    .params = CT_PBIT(CT_P_CHUNK) | CT_PBIT(CT_P_PIPELINE) | CT_PBIT(CT_P_STREAMS),
    .build = build,
};
