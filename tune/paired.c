/* SPDX-License-Identifier: MIT */
/*
 * Paired launches: side A (a change: an exported file loaded) against side B (without it),
 * one launch each per pair, the pairs' order alternating (A B, B A, A B, ...) so a machine
 * that drifts over the launches favours neither side. CT_PAIRED_MIN pairs at every size;
 * then, while a size is open, more pairs of the open sizes only, up to CT_PAIRED_MAX.
 */
#include <stdlib.h>

#include "../algos/coll.h"
#include "../lib/err.h"
#include "../lib/parse.h"
#include "stats.h"
#include "sweep.h"

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

/* Sizes verify checks for s (at most max): the sweep's sizes, as run measures them (whole
 * elements of the collective's buffers), and every range's geometric midpoint, where the
 * native verify checks a rule (ct_sweep_check_count), the last range's taken to the largest
 * swept size; sorted, unique. */
int ct_paired_sizes(const struct ct_sweep_settings *w, const struct ct_ruleset *s, uint64_t *out,
                    int max)
{
    size_t es = ct_dtype_size(s->dtype);
    const struct ct_coll_desc *d = ct_coll_desc(s->coll);
    int n = 0;
    for (double sz = (double)w->minbytes;
         sz <= (double)w->maxbytes && n<max / 2; sz *= w->stepfactor> 1 ? w->stepfactor : 2) {
        uint64_t c = d->count_for((uint64_t)sz, es, s->nranks);
        if (c)
            out[n++] = d->size_bytes(c, es, s->nranks);
    }
    for (int i = 0; i < s->nrules && n < max; i++) {
        struct ct_rule r = s->rules[i];
        if (r.max_bytes == CT_BYTES_INF)
            r.max_bytes = w->maxbytes;
        out[n++] =
            d->size_bytes(ct_sweep_check_count(s, &r, w->minbytes, w->maxbytes), es, s->nranks);
    }
    return (int)ct_sizes_sort_unique(out, (size_t)n);
}
