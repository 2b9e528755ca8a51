/* SPDX-License-Identifier: MIT */
/*
 * The model as an engine (sweep --model): a backend whose points are priced, not run. The
 * planner, the selection and the config are the measured sweep's own; only the engine
 * differs. Every iteration of a point takes its predicted time, so the point's interval is
 * empty and it stops at the minimum number of iterations. The plan revisits points
 * (refine, confirm, check), so prices are kept per point.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/clock.h"
#include "model_int.h"

struct priced {
    const struct ct_algo *a;
    struct ct_job j; /* shape and params resolved; intra/inter compared by name */
    int rc;          /* 0 or CT_EUNSUPP */
    double us;
    struct ct_err why; /* CT_EUNSUPP: why */
};

struct ct_model_engine {
    struct ct_model *m;
    struct ct_shape shape;
    struct priced *p;
    size_t n, cap;
    double us; /* the prepared point's price */
    char what[160];
};

static bool same_name(const char *a, const char *b)
{
    return a == b || (a && b && !strcmp(a, b));
}

static bool same_job(const struct ct_job *x, const struct ct_job *y)
{
    return x->coll == y->coll && x->dtype == y->dtype && x->op == y->op &&
           x->count == y->count && x->in_place == y->in_place && x->quant == y->quant &&
           !memcmp(x->params.v, y->params.v, sizeof x->params.v) &&
           same_name(x->params.intra, y->params.intra) &&
           same_name(x->params.inter, y->params.inter);
}

static int begin(void *ctx, const struct ct_algo *a, const struct ct_job *j, bool verify,
                 long *wrong, struct ct_err *err)
{
    (void)verify;
    struct ct_model_engine *e = ctx;
    *wrong = 0; /* nothing runs: there is no result to check */
    for (size_t i = e->n; i-- > 0;) {
        const struct priced *q = &e->p[i];
        if (q->a == a && same_job(&q->j, j)) {
            e->us = q->us;
            return q->rc ? ct_err_set(err, q->rc, "%s", q->why.msg) : 0;
        }
    }
    struct ct_job jj = *j;
    jj.shape = e->shape;
    struct ct_model_cost c;
    struct ct_err why = {0};
    int rc = ct_model_price(e->m, a, &jj, &c, &why);
    if (rc < 0 && rc != CT_EUNSUPP)
        return ct_err_set(err, rc, "%s", why.msg);
    if (e->n == e->cap) {
        e->cap = e->cap ? 2 * e->cap : 256;
        e->p = ct_xrealloc(e->p, e->cap * sizeof *e->p);
    }
    struct priced *q = &e->p[e->n++];
    memset(q, 0, sizeof *q);
    q->a = a;
    q->j = *j;
    q->rc = rc < 0 ? rc : 0;
    q->us = rc < 0 ? 0 : c.time_us;
    q->why = why;
    e->us = q->us;
    return rc < 0 ? ct_err_set(err, rc, "%s", why.msg) : 0;
}

static int timed(void *ctx, int warmup, int iters, int reps, double *out_us, struct ct_err *err)
{
    (void)warmup;
    (void)reps;
    (void)err;
    const struct ct_model_engine *e = ctx;
    for (int i = 0; i < iters; i++)
        out_us[i] = e->us;
    return 0;
}

static void end(void *ctx)
{
    (void)ctx;
}

static double now_s(void *ctx)
{
    (void)ctx;
    return (double)ct_now_ns() * 1e-9;
}

static void engine_close(void *ctx)
{
    struct ct_model_engine *e = ctx;
    ct_model_free(e->m);
    free(e->p);
    free(e);
}

int ct_model_engine_open(const struct ct_mtopo *t, int nranks, struct ct_backend *be, void **ctx,
                         struct ct_err *err)
{
    struct ct_shape s;
    CT_TRY(ct_mtopo_check(t, err));
    CT_TRY(ct_model_shape(t, nranks, &s, err));
    struct ct_model_engine *e = ct_xcalloc(1, sizeof *e);
    e->m = ct_model_new(t);
    e->shape = s;
    int nodes = ct_shape_nodes(&s);
    char net[64] = "";
    if (nodes > 1 && t->full_mesh)
        snprintf(net, sizeof net, ", full mesh");
    else if (nodes > 1)
        snprintf(net, sizeof net, ", rail-optimized fat tree %g:1", t->oversub);
    snprintf(e->what, sizeof e->what, "%d ranks on %d x %s%s", s.nranks, nodes, t->name, net);
    memset(be, 0, sizeof *be);
    be->name = "model";
    be->begin = begin;
    be->time = timed;
    be->end = end;
    be->now_s = now_s;
    be->close = engine_close;
    be->predicted = e->what;
    be->root = true;
    be->shape = s;
    *ctx = e;
    return 0;
}
