/* SPDX-License-Identifier: MIT */
/*
 * Torus-aware recursive halving / doubling: rdh on the 2D torus seen as a hypercube.
 *
 * Summary   Rank (row, col) of a rows x cols torus (row-major) gets hypercube label
 *           gray(row) . gray(col): the row bits above the column bits, each axis
 *           Gray-coded. Flipping one label bit moves along one torus axis, and on an
 *           axis of length 2 or 4 it moves to a direct neighbour (a 4-ring is a 2-cube
 *           under Gray code), so a 4x4 torus runs as a 4D hypercube W, X, Y, Z with
 *           every exchange between neighbours. Halving starts on the row axis.
 *           AllReduce = recursive-halving ReduceScatter + recursive-doubling AllGather.
 * Cost      as rdh with p = N: AllReduce 2 log2 N steps, 2 log2(N) a + 2(N-1)/N n b;
 *           AllGather / ReduceScatter log2 N steps. On axes longer than 4 the upper
 *           bits pair ranks up to L/2 hops apart (gray-adjacent, not neighbours).
 * Requires  a torus shape (--torus RxC) with rows * cols = N, both powers of two. On a
 *           host without a torus the ranks are simply mapped onto the requested shape.
 * Limits    blocks of AllGather/ReduceScatter follow hypercube labels, so an exchange
 *           is one op per run of rank-contiguous blocks (several ops per message).
 *
 *   2x4 torus, labels (row bit | col bits), col gray code 0 1 3 2:
 *     rank: 0 1 2 3 / 4 5 6 7   label: 0 1 3 2 / 4 5 7 6
 *     RS d=4: rank r <-> r+-4 (row axis); d=2: 0<->3, 1<->2 (wrap and middle);
 *     d=1: 0<->1, 2<->3 (neighbours)
 */
#include "compose.h"

#include <stdlib.h>

static int is_pow2(int x)
{
    return x > 0 && (x & (x - 1)) == 0;
}

static int log2i(int x)
{
    int l = 0;
    while ((1 << l) < x)
        l++;
    return l;
}

static int supports(const struct ct_job *j, struct ct_err *why)
{
    CT_TRY(ct_torus_check(j, "torus-rdh", why));
    int R = j->shape.torus_rows, C = j->shape.torus_cols;
    if (!is_pow2(R) || !is_pow2(C))
        return ct_err_set(why, CT_EUNSUPP,
                          "torus-rdh needs power-of-two torus sides to form a hypercube (got "
                          "%dx%d)",
                          R, C);
    return 0;
}

static int build(const struct ct_job *j, struct ct_sched *s, struct ct_err *err)
{
    int C = j->shape.torus_cols, N = j->shape.nranks;
    int cb = log2i(C);
    int *real = ct_xmalloc((size_t)N * sizeof *real);
    for (int rank = 0; rank < N; rank++) {
        unsigned label = ct_gray((unsigned)(rank / C)) << cb | ct_gray((unsigned)(rank % C));
        real[label] = rank;
    }
    int rc = ct_rdh_build(j, s, real, err);
    free(real);
    return rc;
}

const struct ct_algo ct_algo_torus_rdh = {
    .name = "torus-rdh",
    .summary = "recursive halving/doubling with partners along torus axes (Gray-coded)",
    .colls = CT_COLL_BIT(CT_ALLREDUCE) | CT_COLL_BIT(CT_ALLGATHER) | CT_COLL_BIT(CT_REDUCESCATTER),
    .params = CT_PBIT(CT_P_CHUNK) | CT_PBIT(CT_P_PIPELINE) | CT_PBIT(CT_P_STREAMS),
    .torus = true,
    .supports = supports,
    .build = build,
};
