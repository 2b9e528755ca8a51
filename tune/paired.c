/* SPDX-License-Identifier: MIT */
/*
 * Paired launches: side A (a change: an exported file loaded) against side B (without it),
 * one launch each per pair, the pairs' order alternating (A B, B A, A B, ...) so a machine
 * that drifts over the launches favours neither side. CT_PAIRED_MIN pairs at every size;
 * then, while a size is open, more pairs of the open sizes only, up to CT_PAIRED_MAX.
 */
#include <stdlib.h>

#include "../lib/err.h"
#include "stats.h"

bool ct_paired_slower(const struct ct_ratio *q)
{
    return q->lo > CT_PAIRED_TOL;
}

/* Open: the ratio says A is more than CT_PAIRED_TOL slower. Such a size takes pairs up to
 * CT_PAIRED_MAX, whatever its interval says before: an AllGather verify flagged 8 B, both
 * sides Open MPI's default, at 1.130 [1.070, 1.193] after 3 pairs, and 6 alternating
 * launches of 20,000 iterations each then read 0.57 us on both sides. */
static bool open_size(const double *a, const double *b, int n)
{
    struct ct_ratio q;
    ct_stats_ratio_paired(a, b, n, &q);
    return q.ratio > CT_PAIRED_TOL;
}

int ct_paired_measure(const uint64_t *sz, int nsz, ct_paired_launch_fn launch, void *ctx,
                     struct ct_paired *p)
{
    size_t m = nsz > 0 ? (size_t)nsz : 1;
    p->rounds = 0;
    p->a = ct_xcalloc(m, sizeof *p->a);
    p->b = ct_xcalloc(m, sizeof *p->b);
    p->n = ct_xcalloc(m, sizeof *p->n);
    uint64_t *run = ct_xcalloc(m, sizeof *run);
    double *t = ct_xcalloc(m, sizeof *t);
    int *idx = ct_xcalloc(m, sizeof *idx), code = 0;
    for (int r = 0; r < CT_PAIRED_MAX && !code; r++) {
        int nrun = 0;
        for (int k = 0; k < nsz; k++)
            if (r < CT_PAIRED_MIN || open_size(p->a[k], p->b[k], p->n[k]))
                idx[nrun++] = k;
        if (!nrun)
            break;
        for (int i = 0; i < nrun; i++)
            run[i] = sz[idx[i]];
        for (int i = 0; i < 2 && !code; i++) {
            bool with = (i == 0) == (r % 2 == 0);
            code = launch(ctx, with, run, nrun, t);
            for (int j = 0; j < nrun && !code; j++)
                (with ? p->a : p->b)[idx[j]][p->n[idx[j]]] = t[j];
        }
        for (int j = 0; j < nrun && !code; j++)
            p->n[idx[j]]++;
        p->rounds++;
    }
    free(run);
    free(t);
    free(idx);
    return code;
}

void ct_paired_release(struct ct_paired *p)
{
    free(p->a);
    free(p->b);
    free(p->n);
    p->a = p->b = NULL;
    p->n = NULL;
}
