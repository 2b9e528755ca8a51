/* SPDX-License-Identifier: MIT */
/* Routing on the topology model (link ids, capacities, latency) and max-min fair sharing. */
#include <stdlib.h>
#include <string.h>

#include "model_int.h"

static int npl_of(const struct ct_mtopo *t)
{
    return t->nodes_per_leaf > 0 && t->nodes_per_leaf < t->nodes ? t->nodes_per_leaf : t->nodes;
}

static bool torus(const struct ct_mtopo *t)
{
    return t->torus_rows > 0 && t->torus_cols > 0;
}

void ct_mnet_init(struct ct_mnet *n, const struct ct_mtopo *t, int nranks)
{
    memset(n, 0, sizeof *n);
    n->t = t;
    n->nranks = nranks;
    int nodes = (nranks + t->ranks_per_node - 1) / t->ranks_per_node;
    int npl = npl_of(t);
    n->nic_base = (torus(t) ? 4 : 2) * nranks;
    n->leaves = (nodes + npl - 1) / npl;
    n->leaf_base = n->nic_base + 2 * nodes * t->rails;
    n->nlinks = n->leaf_base + 2 * t->rails * n->leaves;
}

double ct_mnet_cap(const struct ct_mnet *n, int32_t l)
{
    const struct ct_mtopo *t = n->t;
    if (l < n->nic_base)
        return t->intra.gbps;
    if (l < n->leaf_base)
        return t->nic.gbps;
    int leaf = (l - n->leaf_base) % n->leaves;
    int nodes = (n->nranks + t->ranks_per_node - 1) / t->ranks_per_node, npl = npl_of(t);
    int under = nodes - leaf * npl < npl ? nodes - leaf * npl : npl;
    double cap = under * t->nic.gbps / (t->oversub > 0 ? t->oversub : 1);
    /* one leaf: every shift fixes its links (the others' orbits have p/S members) */
    return n->quotient && n->leaves == 1 ? cap * n->quotient / n->nranks : cap;
}

static void add(struct ct_mroute *r, int32_t l)
{
    if (r->n < CT_MROUTE_MAX)
        r->link[r->n++] = l;
}

/* Dimension-order (columns, then rows) shortest-way walk on the node's torus. */
static int torus_walk(const struct ct_mtopo *t, int base, int la, int lb, struct ct_mroute *r)
{
    int R = t->torus_rows, C = t->torus_cols, row = la / C, col = la % C;
    int trow = lb / C, tcol = lb % C, hops = 0;
    while (col != tcol) {
        int fwd = ((tcol - col) % C + C) % C, dir = fwd <= C - fwd ? 0 : 1;
        add(r, (int32_t)(4 * (base + row * C + col) + dir));
        col = ((col + (dir ? -1 : 1)) % C + C) % C;
        hops++;
    }
    while (row != trow) {
        int fwd = ((trow - row) % R + R) % R, dir = fwd <= R - fwd ? 2 : 3;
        add(r, (int32_t)(4 * (base + row * C + col) + dir));
        row = ((row + (dir == 3 ? -1 : 1)) % R + R) % R;
        hops++;
    }
    return hops;
}

void ct_mnet_route(const struct ct_mnet *n, int a, int b, struct ct_mroute *r)
{
    const struct ct_mtopo *t = n->t;
    int rpn = t->ranks_per_node, na = a / rpn, nb = b / rpn, la = a % rpn, lb = b % rpn;
    r->n = 0;
    r->intra = na == nb;
    if (na == nb) {
        r->alpha_us = t->intra.alpha_us;
        r->solo_gbps = t->intra.gbps;
        if (t->full_mesh)
            return;
        if (torus(t)) {
            int hops = torus_walk(t, na * rpn, la, lb, r);
            if (hops > 1)
                r->alpha_us += (hops - 1) * t->hop_us;
        } else {
            add(r, a);
            add(r, n->nranks + b);
        }
        return;
    }
    r->alpha_us = t->nic.alpha_us;
    r->solo_gbps = t->nic.gbps;
    int rails = t->rails, ra = la * rails / rpn, rb = lb * rails / rpn, npl = npl_of(t);
    int fa = na / npl, fb = nb / npl;
    bool spine = fa != fb || ra != rb;
    if (spine)
        r->alpha_us += 2 * t->hop_us;
    if (t->full_mesh)
        return;
    int nodes = n->leaf_base - n->nic_base;
    nodes /= 2 * rails;
    add(r, n->nic_base + na * rails + ra);
    if (spine) {
        add(r, n->leaf_base + ra * n->leaves + fa);
        add(r, n->leaf_base + rails * n->leaves + rb * n->leaves + fb);
    }
    add(r, n->nic_base + nodes * rails + nb * rails + rb);
}

int ct_mnet_period(const struct ct_mnet *n)
{
    const struct ct_mtopo *t = n->t;
    int rpn = t->ranks_per_node, nodes = n->nranks / rpn, npl = npl_of(t);
    if (t->full_mesh || nodes < 2 || n->nranks % rpn)
        return 0;
    int g = npl >= nodes ? 1 : npl; /* nodes per shift: one, or a whole leaf */
    if (nodes % g || (npl < nodes && nodes % npl))
        return 0;
    return g * rpn < n->nranks ? g * rpn : 0;
}

int32_t ct_mnet_orbit(const struct ct_mnet *n, int32_t l, int S)
{
    const struct ct_mtopo *t = n->t;
    int rpn = t->ranks_per_node, rails = t->rails, nodes = n->nranks / rpn, g = S / rpn;
    if (l < n->nic_base) /* ports of ranks (sending, receiving) or torus links, 4 per rank */
        return torus(t) ? 4 * ((l / 4) % S) + l % 4
                        : (l < n->nranks ? l % S : n->nranks + (l - n->nranks) % S);
    if (l < n->leaf_base) { /* NICs: out then in, node-major */
        int32_t x = l - n->nic_base, half = nodes * rails, side = x >= half ? half : 0;
        x -= side;
        return n->nic_base + side + (x / rails) % g * rails + x % rails;
    }
    /* leaf uplinks then downlinks, rail-major: a shift moves every leaf by g / npl */
    int32_t x = l - n->leaf_base, half = rails * n->leaves, side = x >= half ? half : 0;
    x -= side;
    int shift = n->leaves > 1 ? g / npl_of(t) : 1;
    return n->leaf_base + side + x / n->leaves * n->leaves + x % n->leaves % shift;
}

void ct_maxmin_init(struct ct_maxmin *mm, int32_t nlinks)
{
    memset(mm, 0, sizeof *mm);
    mm->nlinks = nlinks;
    size_t n = nlinks > 0 ? (size_t)nlinks : 1;
    mm->rem = ct_xcalloc(n, sizeof *mm->rem);
    mm->cnt = ct_xcalloc(n, sizeof *mm->cnt);
    mm->touched = ct_xcalloc(n, sizeof *mm->touched);
    mm->seen = ct_xcalloc(n, 1);
}

void ct_maxmin_release(struct ct_maxmin *mm)
{
    free(mm->rem);
    free(mm->cnt);
    free(mm->touched);
    free(mm->seen);
    memset(mm, 0, sizeof *mm);
}

void ct_maxmin_solve(struct ct_maxmin *mm, const struct ct_mnet *net, size_t nflows,
                     const uint32_t *off, const int32_t *link, const double *solo, double *rate)
{
    size_t left = 0;
    mm->ntouched = 0;
    for (size_t f = 0; f < nflows; f++) {
        if (off[f] == off[f + 1]) {
            rate[f] = solo[f];
            continue;
        }
        rate[f] = -1;
        left++;
        for (uint32_t i = off[f]; i < off[f + 1]; i++) {
            int32_t l = link[i];
            if (!mm->seen[l]) {
                mm->seen[l] = 1;
                mm->touched[mm->ntouched++] = l;
                mm->rem[l] = ct_mnet_cap(net, l);
                mm->cnt[l] = 0;
            }
            mm->cnt[l]++;
        }
    }
    while (left) {
        double best = -1;
        for (int32_t i = 0; i < mm->ntouched; i++) {
            int32_t l = mm->touched[i];
            if (mm->cnt[l] > 0) {
                double s = mm->rem[l] / mm->cnt[l];
                if (best < 0 || s < best)
                    best = s;
            }
        }
        if (best < 0)
            best = 0;
        for (int32_t i = 0; i < mm->ntouched; i++) {
            int32_t l = mm->touched[i];
            mm->seen[l] = mm->cnt[l] > 0 && mm->rem[l] / mm->cnt[l] <= best * (1 + 1e-12) ? 2 : 1;
        }
        for (size_t f = 0; f < nflows; f++) {
            if (rate[f] >= 0)
                continue;
            bool hit = false;
            for (uint32_t i = off[f]; i < off[f + 1] && !hit; i++)
                hit = mm->seen[link[i]] == 2;
            if (!hit)
                continue;
            rate[f] = best;
            left--;
            for (uint32_t i = off[f]; i < off[f + 1]; i++) {
                mm->rem[link[i]] -= best;
                mm->cnt[link[i]]--;
            }
        }
    }
    for (int32_t i = 0; i < mm->ntouched; i++)
        mm->seen[mm->touched[i]] = 0;
}
