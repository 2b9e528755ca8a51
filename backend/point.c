/* SPDX-License-Identifier: MIT */
/* One measured point from per-iteration times, and a point measured over any engine. */
#include <stdlib.h>
#include <string.h>

#include "../algos/coll.h"
#include "backend.h"
#include "bench.h"

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return a < b ? -1 : a > b;
}

void ct_point_from_times(struct ct_point *out, const struct ct_job *j, int nranks, double *t,
                         int iters)
{
    const struct ct_coll_desc *d = ct_coll_desc(j->coll);
    qsort(t, (size_t)iters, sizeof(double), cmp_double);
    out->count = j->count;
    out->size = d->size_bytes(j->count, ct_dtype_size(j->dtype), nranks);
    out->in_place = j->in_place;
    out->iters = iters;
    out->min_us = t[0];
    out->max_us = t[iters - 1];
    out->time_us = iters % 2 ? t[iters / 2] : (t[iters / 2 - 1] + t[iters / 2]) / 2;
    out->algbw = out->time_us > 0 ? (double)out->size / out->time_us / 1e3 : 0;
    out->busbw = out->algbw * d->bus_factor(nranks);
    out->wrong = out->diverged = -1;
}

int ct_backend_point(const struct ct_backend *be, void *ctx, const struct ct_algo *a,
                     const struct ct_job *j, const struct ct_bench_cfg *cfg, struct ct_point *out,
                     struct ct_err *err)
{
    int iters = cfg->iters > 0 ? cfg->iters : 1;
    long wrong = 0;
    memset(out, 0, sizeof *out);
    CT_TRY(be->begin(ctx, a, j, cfg->check > 0, &wrong, err));
    double *t = ct_xmalloc(sizeof(double) * (size_t)iters);
    int rc = be->time(ctx, cfg->warmup, iters, t, err);
    be->end(ctx);
    if (rc == 0) {
        ct_point_from_times(out, j, j->shape.nranks, t, iters);
        out->wrong = cfg->check > 0 ? wrong : -1;
    }
    free(t);
    return rc;
}
