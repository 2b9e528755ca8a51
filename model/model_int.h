/* SPDX-License-Identifier: MIT */
/* Internals of the cost model shared by its files: routing, max-min sharing. */
#ifndef CT_MODEL_INT_H
#define CT_MODEL_INT_H

#include "model.h"

#define CT_MROUTE_MAX 12 /* links one flow crosses at most */

/* The links flow a -> b crosses (ids into ct_mnet_caps) and its latency. */
struct ct_mroute {
    int n;
    int32_t link[CT_MROUTE_MAX];
    double alpha_us;
    double solo_gbps; /* rate when nothing else is on the path (full mesh: the class rate) */
    bool intra;       /* inside one node (the intra class) */
};

/* Link ids and capacities of a topology with nranks ranks. */
struct ct_mnet {
    const struct ct_mtopo *t;
    int nranks;
    int32_t nlinks;
    int32_t nic_base, leaf_base, leaves; /* leaves per rail */
    int quotient; /* S: links stand for their orbits under shifts by S (ct_mnet_orbit); a
                     link every shift fixes then counts its flows once for all p/S copies,
                     so its capacity is divided by p/S. 0: the links themselves */
};
void ct_mnet_init(struct ct_mnet *n, const struct ct_mtopo *t, int nranks);
double ct_mnet_cap(const struct ct_mnet *n, int32_t link);
void ct_mnet_route(const struct ct_mnet *n, int a, int b, struct ct_mroute *r);
/*
 * Symmetry of the network: the shift of ranks S (a leaf of nodes; a node when one leaf holds
 * them all) that maps every link onto a link of the same kind and capacity, so a pattern of
 * flows invariant under it has a max-min solution invariant under it. 0 when there is none
 * smaller than the job (a partial last leaf, one node, the full mesh).
 */
int ct_mnet_period(const struct ct_mnet *n);
/* The representative of link l's orbit under shifts by S = ct_mnet_period(). */
int32_t ct_mnet_orbit(const struct ct_mnet *n, int32_t l, int S);

/*
 * Max-min fair rates (progressive filling). Flow f crosses links
 * link[off[f] .. off[f+1]); solo[f] is its rate when it crosses none.
 * scratch must hold 2 * nlinks doubles/ints (kept zero between calls by this function).
 */
struct ct_maxmin {
    int32_t nlinks;
    double *rem;   /* remaining capacity per link (valid for touched links) */
    int32_t *cnt;  /* unfrozen flows per link */
    int32_t *touched;
    int32_t ntouched;
    uint8_t *seen;
};
void ct_maxmin_init(struct ct_maxmin *mm, int32_t nlinks);
void ct_maxmin_release(struct ct_maxmin *mm);
void ct_maxmin_solve(struct ct_maxmin *mm, const struct ct_mnet *net, size_t nflows,
                     const uint32_t *off, const int32_t *link, const double *solo, double *rate);

#endif
