/* SPDX-License-Identifier: MIT */
/*
 * Building schedules from parts: an algorithm run on a sub-communicator with its buffers
 * remapped into the parent's (hier), rings over explicit rank orders run in lock-step
 * (flat-ring, rail-ring, torus-ring), and torus rank geometry (torus-ring, torus-rdh).
 */
#ifndef CT_COMPOSE_H
#define CT_COMPOSE_H

#include "algo.h"

/* ---- Sub-communicators ---------------------------------------------------------- */

/*
 * A job for a sub-communicator of nranks ranks in which this rank is `rank`: dtype, op
 * and the tunable values come from the parent; the sub-algorithm names (intra/inter)
 * are cleared so that a composed algorithm never recurses; there is no torus.
 * ranks_per_node describes the sub-communicator (0: all on one node, 1: one per node).
 */
struct ct_job ct_compose_subjob(const struct ct_job *parent, enum ct_coll coll, uint64_t count,
                                bool in_place, int nranks, int rank, int ranks_per_node);

/* Where a sub-job's SEND, RECV and SCRATCH start in the parent's buffers. */
struct ct_compose_map {
    struct ct_loc at[CT_BUF_COUNT];
};

/*
 * Build algorithm a for sub (checked with ct_algo_supports, so a refusal keeps its
 * reason) and append its steps to s as new steps: peer i becomes ranks[i] (ranks has
 * sub->shape.nranks entries, ranks[sub->shape.rank] is this rank) and every buffer
 * offset is shifted to map->at[buf]. The caller declares sub->in_place truthfully:
 * whether the mapped SEND and RECV alias in the parent as algo.h's in-place layout says.
 * Appended steps run after the steps already in s, so sequential phases may share
 * scratch. A refusal or build error comes back as the sub-algorithm reported it.
 */
int ct_compose_append(struct ct_sched *s, const struct ct_algo *a, const struct ct_job *sub,
                      const int *ranks, const struct ct_compose_map *map, struct ct_err *err);

/* ---- Shared generators ---------------------------------------------------------- */

/*
 * Schedule j over nrings rings at once. Ring i visits orders[i*N + 0 .. N-1] (each a
 * permutation of the N ranks) and sends to the next rank in that order. Ring i carries
 * slice i of the data: of the whole buffer for AllReduce, of every rank's block for
 * AllGather and ReduceScatter. All rings advance in the same steps, so every message
 * is sent and received at the same step index and the per-pair order always matches:
 * AllReduce 2(N-1) steps, AllGather and ReduceScatter N-1 (plus local copies).
 * Scratch: ReduceScatter two blocks. Supports AllReduce, AllGather, ReduceScatter.
 */
int ct_rings_build(const struct ct_job *j, struct ct_sched *s, const int *orders, int nrings,
                   struct ct_err *err);

/* Fill order[0..n-1] with the reverse of src (same cycle, opposite direction). */
void ct_order_reverse(int *order, const int *src, int n);

/*
 * Recursive halving / doubling (algos/rdh.c) for AllReduce, AllGather, ReduceScatter.
 * real == NULL: the standard fold for any N. Otherwise N must be a power of two and
 * real[v] is the rank at hypercube index v (a permutation): the partner at distance m
 * of index v is real[v ^ m], so the labelling decides which ranks pair up.
 */
int ct_rdh_build(const struct ct_job *j, struct ct_sched *s, const int *real, struct ct_err *err);

/* ---- Torus geometry ------------------------------------------------------------- */

/*
 * Check that the job names a torus that covers its ranks: rows * cols == nranks, both
 * at least 1. Ranks map onto it row-major: rank = row * cols + col. CT_EUNSUPP with a
 * reason naming `who` otherwise.
 */
int ct_torus_check(const struct ct_job *j, const char *who, struct ct_err *why);

/*
 * Two Hamiltonian cycles of the rows x cols torus (as rank orders of rows*cols entries).
 * Returns 1 when c2 is edge-disjoint from c1 (a decomposition of the torus: found when
 * rows and cols are at least 3 and have the same parity), 0 when c2 is c1 reversed (1-
 * or 2-wide tori, or mixed parity). c1 is a staircase: each row (or column) traversed
 * whole, then one step to the next.
 */
int ct_torus_cycles(int rows, int cols, int *c1, int *c2);

/* Binary-reflected Gray code and its inverse. */
static inline unsigned ct_gray(unsigned x)
{
    return x ^ (x >> 1);
}
static inline unsigned ct_gray_inv(unsigned g)
{
    unsigned x = g;
    for (unsigned s = 1; s < 32; s <<= 1)
        x ^= x >> s;
    return x;
}

#endif
