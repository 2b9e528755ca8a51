/* SPDX-License-Identifier: MIT */
/*
 * The sweep planner (rank 0): what is known about the grid, predictions, issuing points,
 * the survey phase and the whole plan; tuning and refinement are in plan_tune.c. It talks
 * to the ranks only through commands (ct_sweep_issue), so the same code runs on a
 * synthetic backend in the tests.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../algos/coll.h"
#include "select.h"
#include "stats.h"
#include "plan.h"

#define POINT_FLOOR 0.01 /* timed seconds any point may use, however cheap */

double ct_plan_now(const struct ct_plan *pl)
{
    return pl->run.be->now_s(pl->run.ctx) - pl->t0;
}

const struct ct_sweep_point *ct_plan_pt(const struct ct_plan *pl, long i)
{
    return &pl->run.res->pts[i];
}

/* ---- the grid and what is known about it -------------------------------------------- */

void ct_plan_grid_build(struct ct_plan *pl)
{
    const struct ct_sweep_cfg *cfg = pl->cfg;
    double f = cfg->stepfactor > 1 ? cfg->stepfactor : 2;
    int L = 0;
    for (double s = (double)cfg->minbytes; s <= (double)cfg->maxbytes && L < 4096; s *= f) {
        L++;
        if (s * f <= s)
            break;
    }
    pl->L = L;
    size_t es = ct_dtype_size(cfg->job.dtype);
    int nr = cfg->job.shape.nranks;
    for (int c = 0; c < CT_COLL_COUNT; c++) {
        struct ct_plan_grid *g = &pl->g[c];
        if (!(cfg->colls & CT_COLL_BIT(c)))
            continue;
        const struct ct_coll_desc *d = ct_coll_desc((enum ct_coll)c);
        g->count = ct_xcalloc((size_t)L, sizeof *g->count);
        g->size = ct_xcalloc((size_t)L, sizeof *g->size);
        double s = (double)cfg->minbytes;
        uint64_t prev = UINT64_MAX;
        for (int i = 0; i < L; i++, s *= f) {
            uint64_t cnt = d->count_for((uint64_t)s / es * es, es, nr);
            uint64_t sz = d->size_bytes(cnt, es, nr);
            if (cnt && sz != prev) {
                g->count[i] = cnt;
                g->size[i] = sz;
                prev = sz;
            }
        }
        size_t na = ct_sweep_algos(cfg, (enum ct_coll)c, NULL, 0);
        g->algos = ct_xcalloc(na ? na : 1, sizeof *g->algos);
        g->nalgos = (int)ct_sweep_algos(cfg, (enum ct_coll)c, g->algos, na);
        g->best = ct_xmalloc(sizeof *g->best * (size_t)(g->nalgos * L + 1));
        for (int k = 0; k < g->nalgos * L; k++)
            g->best[k] = -1;
    }
}

void ct_plan_grid_release(struct ct_plan *pl)
{
    for (int c = 0; c < CT_COLL_COUNT; c++) {
        free(pl->g[c].count);
        free(pl->g[c].size);
        free(pl->g[c].algos);
        free(pl->g[c].best);
    }
    free(pl->ext);
}

int ct_plan_slot(const struct ct_plan_grid *g, const char *name)
{
    for (int k = 0; k < g->nalgos; k++)
        if (!strcmp(g->algos[k]->name, name))
            return k;
    return -1;
}

int ct_plan_size_index(const struct ct_plan *pl, const struct ct_plan_grid *g, uint64_t size)
{
    for (int i = 0; i < pl->L; i++)
        if (g->count[i] && g->size[i] == size)
            return i;
    return -1;
}

/* Record point idx as the best of its algorithm and size when it is. */
static void note_point(struct ct_plan *pl, long idx)
{
    const struct ct_sweep_point *p = ct_plan_pt(pl, idx);
    struct ct_plan_grid *g = &pl->g[p->coll];
    int k = ct_plan_slot(g, p->algo), i = ct_plan_size_index(pl, g, p->size);
    if (k < 0 || i < 0)
        return;
    /* the algorithm's fastest setting at the size, each setting by the measurement that
     * counts (as in the selection): rescan, since a new or extended point may supersede
     * the one that held the place */
    long *b = &g->best[k * pl->L + i];
    const struct ct_sweep_point *pts = pl->run.res->pts;
    size_t n = pl->run.res->n;
    *b = -1;
    for (size_t q = 0; q < n; q++) {
        const struct ct_sweep_point *o = &pts[q];
        if (o->coll == p->coll && o->size == p->size && !strcmp(o->algo, p->algo) && o->st.n > 0 &&
            (*b < 0 || o->st.median < pts[*b].st.median) && !ct_select_superseded(pts, n, q))
            *b = (long)q;
    }
}

long ct_plan_best(const struct ct_plan *pl, int c, int k, int i)
{
    return pl->g[c].best[k * pl->L + i];
}

long ct_plan_leader(const struct ct_plan *pl, int c, int i)
{
    long lead = -1;
    for (int k = 0; k < pl->g[c].nalgos; k++) {
        long b = ct_plan_best(pl, c, k, i);
        if (b >= 0 && (lead < 0 || ct_plan_pt(pl, b)->st.median < ct_plan_pt(pl, lead)->st.median))
            lead = b;
    }
    return lead;
}

/* Algorithm k is clearly losing at size i (measured there, prunable against the leader). */
bool ct_plan_losing(const struct ct_plan *pl, int c, int k, int i)
{
    long b = ct_plan_best(pl, c, k, i), lead = ct_plan_leader(pl, c, i);
    return b >= 0 && lead >= 0 && b != lead &&
           ct_select_prunable(&ct_plan_pt(pl, b)->st, &ct_plan_pt(pl, lead)->st, pl->cfg->margin);
}

/* Median of algorithm k (any algorithm when k < 0) at size i, 0 if unmeasured. */
double ct_plan_median(const struct ct_plan *pl, int c, int k, int i)
{
    long b = k >= 0 ? ct_plan_best(pl, c, k, i) : ct_plan_leader(pl, c, i);
    return b >= 0 ? ct_plan_pt(pl, b)->st.median : 0;
}

/*
 * Predicted microseconds per iteration of algorithm k (any when k < 0) at size i, from the
 * nearest measured sizes: log-log interpolation between neighbours, else extrapolation
 * with the last slope (clamped to 0.3..1), else an assumed 1 GB/s plus 20 us.
 */
double ct_plan_predict_us(const struct ct_plan *pl, int c, int k, int i)
{
    const struct ct_plan_grid *g = &pl->g[c];
    double s = (double)(g->size[i] ? g->size[i] : 1);
    if (ct_plan_median(pl, c, k, i) > 0)
        return ct_plan_median(pl, c, k, i);
    int j1 = -1, j0 = -1, up = -1;
    for (int j = i - 1; j >= 0 && j0 < 0; j--)
        if (ct_plan_median(pl, c, k, j) > 0) {
            if (j1 < 0)
                j1 = j;
            else
                j0 = j;
        }
    for (int j = i + 1; j < pl->L && up < 0; j++)
        if (ct_plan_median(pl, c, k, j) > 0)
            up = j;
    if (j1 >= 0 && up >= 0) {
        double a = log((double)g->size[j1]), b = log((double)g->size[up]);
        double ta = log(ct_plan_median(pl, c, k, j1)), tb = log(ct_plan_median(pl, c, k, up));
        return exp(ta + (tb - ta) * (log(s) - a) / (b - a));
    }
    if (j1 >= 0) {
        double e = g->size[j1] >= (64u << 10) ? 1.0 : 0.5;
        if (j0 >= 0)
            e = log(ct_plan_median(pl, c, k, j1) / ct_plan_median(pl, c, k, j0)) /
                log((double)g->size[j1] / (double)g->size[j0]);
        e = e < 0.3 ? 0.3 : e > 1 ? 1 : e;
        return ct_plan_median(pl, c, k, j1) * pow(s / (double)g->size[j1], e);
    }
    if (up >= 0)
        return ct_plan_median(pl, c, k, up) * pow(s / (double)g->size[up], 0.5);
    if (k >= 0)
        return ct_plan_predict_us(pl, c, -1, i);
    return 20 + s / 1e3;
}

/* Predicted wall seconds of one iteration: its time plus the learned overhead. */
double ct_plan_iter_s(const struct ct_plan *pl, int c, int k, int i)
{
    return ct_plan_predict_us(pl, c, k, i) * 1e-6 + pl->cost.iter;
}

/* Wall seconds of a point of iters iterations at t_s each (verification and warmup too). */
double ct_plan_point_cost(const struct ct_plan *pl, double t_s, int iters)
{
    return t_s * (1 + pl->cfg->warmup + iters) + pl->cost.fixed;
}

/* ---- issuing points ------------------------------------------------------------------ */

static void progress(struct ct_plan *pl, int c, const char *algo, uint64_t size)
{
    const struct ct_sweep_cfg *cfg = pl->cfg;
    if (!cfg->progress)
        return;
    struct ct_sweep_progress p = {(enum ct_coll)c, algo,     size,
                                  pl->phase,       pl->done, pl->done + pl->est_left,
                                  ct_plan_now(pl), 0};
    p.remaining_s = cfg->budget_s - p.elapsed_s;
    if (p.remaining_s < 0)
        p.remaining_s = 0;
    cfg->progress(cfg->arg, &p);
}

void ct_plan_params(const struct ct_plan *pl, int c, const struct ct_algo *a,
                    const struct ct_params *in, uint64_t *out)
{
    struct ct_params p = *in;
    unsigned matter = ct_algo_params(a, (enum ct_coll)c);
    for (int q = 0; q < CT_P_COUNT; q++)
        if (pl->cfg->job.params.v[q] && (matter & CT_PBIT(q)))
            p.v[q] = pl->cfg->job.params.v[q];
        else if (!p.v[q] && (a->own & CT_PBIT(q)))
            p.v[q] = CT_PARAM_OWN; /* the library's own value first: the search's baseline */
    ct_params_defaults(&p);
    memcpy(out, p.v, sizeof p.v);
}

/* Common command fields for algorithm a at size i of c with per-point budget budget_s. */
void ct_plan_cmd(const struct ct_plan *pl, int c, const struct ct_algo *a, int i,
                 const struct ct_params *params, double budget_s, struct ct_sweep_cmd *cmd)
{
    const struct ct_sweep_cfg *cfg = pl->cfg;
    int k = ct_plan_slot(&pl->g[c], a->name);
    double t = ct_plan_predict_us(pl, c, k, i);
    t = t > 0.01 ? t : 0.01;
    memset(cmd, 0, sizeof *cmd);
    cmd->op = CT_SWEEP_MEASURE;
    cmd->coll = c;
    cmd->dtype = cfg->job.dtype;
    cmd->redop = cfg->job.op;
    cmd->algo = ct_sweep_algo_index(cfg, c, a->name);
    cmd->count = pl->g[c].count[i];
    ct_plan_params(pl, c, a, params, cmd->params);
    int warm = (int)(0.02 / (t * 1e-6));
    cmd->warmup = warm < 1 ? 1 : warm > cfg->warmup ? cfg->warmup : warm;
    if (cfg->warmup <= 0)
        cmd->warmup = 0;
    /* the first batch is small: a wrong prediction must not cost much (later batches
     * are sized from the measured median) */
    cmd->first_batch = cfg->min_iters;
    cmd->min_iters = cfg->min_iters;
    cmd->max_iters = cfg->max_iters;
    cmd->budget_s = budget_s > POINT_FLOOR ? budget_s : POINT_FLOOR;
    cmd->target = cfg->target_ci;
    cmd->margin = cfg->margin;
    cmd->iter_cost_s = pl->cost.iter;
}

/* Issue a MEASURE or EXTEND; notes the point. *idx = -1 when skipped as unsupported. */
int ct_plan_issue(struct ct_plan *pl, struct ct_sweep_cmd *cmd, long *idx, struct ct_err *err)
{
    CT_TRY(ct_sweep_conns(&pl->run, cmd->params, err));
    const struct ct_algo *a = ct_sweep_algo_at(pl->cfg, cmd->algo);
    uint64_t size = ct_coll_desc((enum ct_coll)cmd->coll)
                        ->size_bytes(cmd->count, ct_dtype_size((enum ct_dtype)cmd->dtype),
                                     pl->cfg->job.shape.nranks);
    progress(pl, cmd->coll, a->name, size);
    int before = cmd->op == CT_SWEEP_EXTEND ? pl->run.smp[cmd->point].n : 0;
    double t0 = ct_plan_now(pl);
    CT_TRY(ct_sweep_issue(&pl->run, cmd, idx, err));
    if (*idx < 0)
        return 0;
    ct_sweep_cost_learn(&pl->cost, cmd, &pl->run.smp[*idx], before, ct_plan_pt(pl, *idx)->reps,
                        ct_plan_now(pl) - t0);
    if ((size_t)*idx >= pl->extcap) {
        size_t old = pl->extcap;
        pl->extcap = pl->extcap ? pl->extcap * 2 : 256;
        while (pl->extcap <= (size_t)*idx)
            pl->extcap *= 2;
        pl->ext = ct_xrealloc(pl->ext, sizeof *pl->ext * pl->extcap);
        memset(pl->ext + old, 0, sizeof *pl->ext * (pl->extcap - old));
    }
    if (cmd->op == CT_SWEEP_MEASURE)
        pl->done++;
    if (pl->est_left > 0)
        pl->est_left--;
    note_point(pl, *idx);
    if (pl->cfg->on_points)
        pl->cfg->on_points(pl->cfg->arg, pl->run.res->pts, pl->run.res->n);
    return 0;
}

/* Measure algorithm slot k of c at size i with params; ref: a point to prune against. */
int ct_plan_measure(struct ct_plan *pl, int c, int k, int i, const struct ct_params *params,
                    double budget_s, long ref, long *idx, struct ct_err *err)
{
    return ct_plan_measure_at(pl, c, k, i, pl->g[c].count[i], params, budget_s, ref, idx, err);
}

/* The same at count (off the grid), predicted from grid size i. */
int ct_plan_measure_at(struct ct_plan *pl, int c, int k, int i, uint64_t count,
                       const struct ct_params *params, double budget_s, long ref, long *idx,
                       struct ct_err *err)
{
    struct ct_sweep_cmd cmd;
    ct_plan_cmd(pl, c, pl->g[c].algos[k], i, params, budget_s, &cmd);
    cmd.count = count;
    if (ref >= 0 && !ct_select_library_default(pl->g[c].algos[k]->name))
        cmd.ref_hi = ct_plan_pt(pl, ref)->st.hi;
    struct ct_job j = pl->cfg->job;
    j.coll = (enum ct_coll)c;
    j.count = cmd.count;
    j.shape.rank = 0;
    memcpy(j.params.v, cmd.params, sizeof cmd.params);
    struct ct_err why = {0};
    if (ct_algo_supports(pl->g[c].algos[k], &j, &why) < 0) { /* said in the config and table */
        ct_sweep_note_refused(pl->run.res, (enum ct_coll)c, pl->g[c].algos[k]->name,
                              ct_coll_desc((enum ct_coll)c)
                                  ->size_bytes(j.count, ct_dtype_size(j.dtype), j.shape.nranks),
                              why.msg);
        *idx = -1;
        return 0;
    }
    return ct_plan_issue(pl, &cmd, idx, err);
}

/* More samples for point idx (twice what it has spent, the first batch `first` samples or,
 * when 0, half those it has); fresh: new samples replace the old ones, within budget_s,
 * so it compares with points measured now. ref >= 0: stop once clearly losing against
 * that point. */
int ct_plan_extend(struct ct_plan *pl, long idx, bool fresh, double budget_s, int first, long ref,
                   struct ct_err *err)
{
    const struct ct_sweep_point *p = ct_plan_pt(pl, idx);
    int i = ct_plan_nearest(pl, p->coll, p->size); /* off the grid: a check point */
    if (i < 0)
        return 0;
    struct ct_sweep_cmd cmd;
    ct_plan_cmd(pl, p->coll, ct_sweep_algo_find(pl->cfg, p->coll, p->algo), i, &p->params,
                fresh ? budget_s : 2 * p->st.spent_s, &cmd);
    cmd.count = p->count;
    cmd.op = CT_SWEEP_EXTEND;
    cmd.point = (int32_t)idx;
    cmd.fresh = fresh;
    cmd.warmup = cmd.warmup > 1 ? 1 : cmd.warmup;
    first = first > 0 ? first : p->st.n / 2;
    if (!fresh)
        cmd.first_batch = first > cmd.first_batch ? first : cmd.first_batch;
    if (ref >= 0 && !ct_select_library_default(p->algo))
        cmd.ref_hi = ct_plan_pt(pl, ref)->st.hi;
    long out;
    return ct_plan_issue(pl, &cmd, &out, err);
}

/* The measurable grid size of c nearest to size (in log-size); -1 if there is none. */
int ct_plan_nearest(const struct ct_plan *pl, int c, uint64_t size)
{
    const struct ct_plan_grid *g = &pl->g[c];
    int best = -1;
    double d = INFINITY;
    for (int i = 0; i < pl->L; i++) {
        if (!g->count[i])
            continue;
        double e = fabs(log((double)(g->size[i] ? g->size[i] : 1) / (double)(size ? size : 1)));
        if (e < d) {
            d = e;
            best = i;
        }
    }
    return best;
}
