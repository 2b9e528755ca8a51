/* SPDX-License-Identifier: MIT */
/*
 * Flat ring: one ring over all ranks, ordered node by node so that each node's ranks
 * form a chain and only the chain ends cross to the next node.
 *
 * Summary   The ring visits node 0's ranks in local order, then node 1's, and so on,
 *           and closes from the last rank of the last node back to rank 0. With the
 *           node-major rank layout of ct_shape that is the order 0, 1, ..., N-1; the
 *           ring crosses the network M times (M nodes) whatever the ranks per node.
 *           AllReduce = ReduceScatter + AllGather; `channels` rings run on the same
 *           order, each with its slice of the data.
 * Cost      AllReduce 2(N-1) steps: 2(N-1) a + 2(N-1)/N n b; AllGather /
 *           ReduceScatter N-1 steps: (N-1) a + (N-1)/N n b. Each inter-node link
 *           carries one ring hop's traffic per step.
 * Requires  nothing (any N, any count, any ranks per node).
 * Limits    the slowest hop (an inter-node one) paces every step; latency is linear in
 *           N. Compare hier, which crosses nodes with Y parallel rings of 1/Y the data.
 *
 *   2 nodes of 3 ranks:   [0 -> 1 -> 2] -> [3 -> 4 -> 5] -> back to 0
 *                          chain node 0     chain node 1    (2 network hops)
 */
#include "compose.h"

#include <stdlib.h>

static int build(const struct ct_job *j, struct ct_sched *s, struct ct_err *err)
{
    int N = j->shape.nranks, nch = (int)j->params.v[CT_P_CHANNELS];
    int *orders = ct_xmalloc((size_t)N * (size_t)nch * sizeof *orders);
    for (int c = 0; c < nch; c++)
        for (int p = 0; p < N; p++)
            orders[(size_t)c * (size_t)N + (size_t)p] = p; /* node-major: chains in order */
    int rc = ct_rings_build(j, s, orders, nch, err);
    free(orders);
    return rc;
}

const struct ct_algo ct_algo_flat_ring = {
    .name = "flat-ring",
    .summary = "one ring over all ranks, each node's ranks chained, only chain ends cross",
    .colls = CT_COLL_BIT(CT_ALLREDUCE) | CT_COLL_BIT(CT_ALLGATHER) | CT_COLL_BIT(CT_REDUCESCATTER),
    .params = CT_PBIT(CT_P_CHUNK) | CT_PBIT(CT_P_PIPELINE) | CT_PBIT(CT_P_CHANNELS) |
              CT_PBIT(CT_P_STREAMS),
    .build = build,
};
