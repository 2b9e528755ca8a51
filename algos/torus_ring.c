/* SPDX-License-Identifier: MIT */
/*
 * Torus rings: rings that follow Hamiltonian cycles of a 2D torus, two edge-disjoint
 * cycles at once, so every torus link carries one ring.
 *
 * Summary   Ranks map row-major onto the rows x cols torus. Cycle 1 is a staircase
 *           (walk a whole row, step to the next row, ...); cycle 2 is the complement,
 *           the torus links cycle 1 leaves unused, which is itself one Hamiltonian cycle
 *           when both sides are at least 3 and have the same parity (4x4, 8x8, 4x8,
 *           6x4, ...). Otherwise (1- or 2-wide, or mixed parity) cycle 2 is cycle 1 run
 *           backwards, disjoint as directed links only. The data is split across the
 *           rings: 2 x `channels` rings, ring g on cycle g%2, reversed when g/2 is odd.
 * Cost      each ring: AllReduce 2(N-1) steps, 2(N-1) a + 2(N-1)/N (n/rings) b; with
 *           the rings on disjoint links the slices move at the same time. AllGather /
 *           ReduceScatter N-1 steps.
 * Requires  a torus shape (--torus RxC) with rows * cols = N. Without a physical torus
 *           the ranks are mapped onto the requested shape.
 * Limits    latency is linear in N, like any ring.
 *
 *   3x3 torus, ranks 0..8 row-major:
 *     cycle 1: 0 1 2 | 5 3 4 | 7 8 6 -> 0  (rows, stepping down at the row's end)
 *     cycle 2: 0 3 6 | 7 1 4 | 5 8 2 -> 0  (the other 18 links: columns, sideways steps)
 */
#include "compose.h"

#include <stdlib.h>

static int supports(const struct ct_job *j, struct ct_err *why)
{
    return ct_torus_check(j, "torus-ring", why);
}

static int build(const struct ct_job *j, struct ct_sched *s, struct ct_err *err)
{
    int N = j->shape.nranks, nrings = 2 * (int)j->params.v[CT_P_CHANNELS];
    int *cyc = ct_xmalloc((size_t)N * 2 * sizeof *cyc);
    int *orders = ct_xmalloc((size_t)N * (size_t)nrings * sizeof *orders);
    ct_torus_cycles(j->shape.torus_rows, j->shape.torus_cols, cyc, cyc + N);
    for (int g = 0; g < nrings; g++) {
        const int *c = cyc + (size_t)(g % 2) * (size_t)N;
        int *o = orders + (size_t)g * (size_t)N;
        if ((g / 2) % 2)
            ct_order_reverse(o, c, N);
        else
            for (int p = 0; p < N; p++)
                o[p] = c[p];
    }
    int rc = ct_rings_build(j, s, orders, nrings, err);
    free(orders);
    free(cyc);
    return rc;
}

const struct ct_algo ct_algo_torus_ring = {
    .name = "torus-ring",
    .summary = "rings on two edge-disjoint Hamiltonian cycles of a 2D torus",
    .colls = CT_COLL_BIT(CT_ALLREDUCE) | CT_COLL_BIT(CT_ALLGATHER) | CT_COLL_BIT(CT_REDUCESCATTER),
    .params = CT_PBIT(CT_P_CHUNK) | CT_PBIT(CT_P_PIPELINE) | CT_PBIT(CT_P_CHANNELS) |
              CT_PBIT(CT_P_STREAMS),
    .torus = true,
    .supports = supports,
    .build = build,
};
