/* SPDX-License-Identifier: MIT */
/*
 * Rail-aligned rings: several rings at once, one per NIC rail, each crossing between
 * nodes only through NICs of the same index (the Penny lesson).
 *
 * Summary   Ring k enters and leaves every node through local ranks a and a+1 (mod Y),
 *           a = k*Y/R, the ranks of rail k when Y/R >= 2. Inside a node it walks the
 *           local ranks a, a-1, ..., a+1 (neighbours only); every other node walks the
 *           chain backwards (a+1, ..., a), so each inter-node hop joins the same local
 *           index, i.e. the same rail, on both sides. Every other ring is reversed so
 *           links carry traffic both ways. The data is split across the R rings; R =
 *           the shape's rails, or `channels` where the topology gives none (then the
 *           rings are parallel rings over the available connections).
 * Cost      as one ring per slice: AllReduce 2(N-1) steps, 2(N-1) a + 2(N-1)/N n b
 *           spread over R rails; AllGather / ReduceScatter N-1 steps.
 * Requires  nothing (any N, any count, any ranks per node).
 * Limits    with an odd number of nodes the hop that closes the ring joins local ranks
 *           a+1 and a (different rails); with Y < 2R rings share NICs.
 *
 *   2 nodes of 4 ranks, R = 2. Ring 0 (a = 0): 0 3 2 1 | 5 6 7 4 -> 0
 *   (hops 1->5 and 4->0 each stay on one rail); ring 1 (a = 2, reversed):
 *   2 1 0 3 | 7 4 5 6, read backwards.
 */
#include "compose.h"

#include <stdlib.h>

static int rings_of(const struct ct_job *j)
{
    return j->shape.rails > 0 ? j->shape.rails : (int)j->params.v[CT_P_CHANNELS];
}

static int mod(int a, int n)
{
    return ((a % n) + n) % n;
}

static int build(const struct ct_job *j, struct ct_sched *s, struct ct_err *err)
{
    int N = j->shape.nranks, Y = ct_shape_rpn(&j->shape), M = ct_shape_nodes(&j->shape);
    int R = rings_of(j);
    int *orders = ct_xmalloc((size_t)N * (size_t)R * sizeof *orders);
    int *fwd = ct_xmalloc((size_t)N * sizeof *fwd);
    for (int k = 0; k < R; k++) {
        int a = (int)((long)k * Y / R) % Y;
        int *o = k % 2 ? fwd : orders + (size_t)k * (size_t)N;
        for (int m = 0; m < M; m++)
            for (int t = 0; t < Y; t++)
                o[m * Y + t] = m * Y + (m % 2 ? mod(a + 1 + t, Y) : mod(a - t, Y));
        if (k % 2)
            ct_order_reverse(orders + (size_t)k * (size_t)N, fwd, N);
    }
    int rc = ct_rings_build(j, s, orders, R, err);
    free(fwd);
    free(orders);
    return rc;
}

const struct ct_algo ct_algo_rail_ring = {
    .name = "rail-ring",
    .summary = "parallel rings, one per NIC rail, nodes joined through same-index NICs",
    .colls = CT_COLL_BIT(CT_ALLREDUCE) | CT_COLL_BIT(CT_ALLGATHER) | CT_COLL_BIT(CT_REDUCESCATTER),
    .params = CT_PBIT(CT_P_CHUNK) | CT_PBIT(CT_P_PIPELINE) | CT_PBIT(CT_P_CHANNELS) |
              CT_PBIT(CT_P_STREAMS),
    .rails = true,
    .build = build,
};
