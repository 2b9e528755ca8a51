/* SPDX-License-Identifier: MIT */
/*
 * The sweep planner (rank 0): what is known about the grid, predictions, issuing points,
 * the survey phase and the whole plan; tuning and refinement are in sweep_tune.c. It talks
 * to the ranks only through commands (ct_sweep_issue), so the same code runs on a
 * synthetic backend in the tests.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "select.h"
#include "stats.h"
#include "sweep_int.h"

#define POINT_FLOOR 0.01 /* timed seconds any point may use, however cheap */
#define SURVEY_SHARE 0.6 /* of the budget, for the survey (unless it needs more) */
#define SURVEY_MAX_K 3   /* survey points: at most 3 x min_iters iterations each */
#define RESERVE 0.1      /* of the budget, kept for tuning when the survey is tight */

double ct_plan_now(const struct ct_plan *pl)
{
    return pl->run.be->now_s(pl->run.ctx) - pl->t0;
}

const struct ct_sweep_point *ct_plan_pt(const struct ct_plan *pl, long i)
{
    return &pl->run.res->pts[i];
}

/* ---- the grid and what is known about it -------------------------------------------- */

static void grid_build(struct ct_plan *pl)
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

static void grid_release(struct ct_plan *pl)
{
    for (int c = 0; c < CT_COLL_COUNT; c++) {
        free(pl->g[c].count);
        free(pl->g[c].size);
        free(pl->g[c].algos);
        free(pl->g[c].best);
    }
    free(pl->ext);
}

static int algo_slot(const struct ct_plan_grid *g, const char *name)
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
    int k = algo_slot(g, p->algo), i = ct_plan_size_index(pl, g, p->size);
    if (k < 0 || i < 0)
        return;
    long *b = &g->best[k * pl->L + i];
    if (*b < 0 || *b == idx || p->st.median < ct_plan_pt(pl, *b)->st.median)
        *b = idx;
    /* an extended point may have lost its place: rescan the size */
    for (size_t q = 0; q < pl->run.res->n; q++) {
        const struct ct_sweep_point *o = ct_plan_pt(pl, (long)q);
        if (o->coll == p->coll && o->size == p->size && !strcmp(o->algo, p->algo) && o->st.n > 0 &&
            o->st.median < ct_plan_pt(pl, *b)->st.median)
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

void ct_plan_params(const struct ct_plan *pl, const struct ct_params *in, uint64_t *out)
{
    struct ct_params p = *in;
    for (int q = 0; q < CT_P_COUNT; q++)
        if (pl->cfg->job.params.v[q])
            p.v[q] = pl->cfg->job.params.v[q];
    ct_params_defaults(&p);
    memcpy(out, p.v, sizeof p.v);
}

static int switch_streams(struct ct_plan *pl, int streams, struct ct_err *err)
{
    if (streams == pl->run.streams || !pl->run.be->streams)
        return 0;
    struct ct_sweep_cmd cmd;
    memset(&cmd, 0, sizeof cmd);
    cmd.op = CT_SWEEP_STREAMS;
    cmd.streams = streams;
    long dummy;
    return ct_sweep_issue(&pl->run, &cmd, &dummy, err);
}

/* Common command fields for algorithm a at size i of c with per-point budget budget_s. */
void ct_plan_cmd(const struct ct_plan *pl, int c, const struct ct_algo *a, int i,
                 const struct ct_params *params, double budget_s, struct ct_sweep_cmd *cmd)
{
    const struct ct_sweep_cfg *cfg = pl->cfg;
    int k = algo_slot(&pl->g[c], a->name);
    double t = ct_plan_predict_us(pl, c, k, i);
    t = t > 0.01 ? t : 0.01;
    memset(cmd, 0, sizeof *cmd);
    cmd->op = CT_SWEEP_MEASURE;
    cmd->coll = c;
    cmd->dtype = cfg->job.dtype;
    cmd->redop = cfg->job.op;
    cmd->algo = ct_select_simplicity(a->name);
    cmd->count = pl->g[c].count[i];
    ct_plan_params(pl, params, cmd->params);
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
    CT_TRY(switch_streams(pl, (int)cmd->params[CT_P_STREAMS], err));
    const struct ct_algo *a = ct_algo_at((size_t)cmd->algo);
    uint64_t size = ct_coll_desc((enum ct_coll)cmd->coll)
                        ->size_bytes(cmd->count, ct_dtype_size((enum ct_dtype)cmd->dtype),
                                     pl->cfg->job.shape.nranks);
    progress(pl, cmd->coll, a->name, size);
    int before = cmd->op == CT_SWEEP_EXTEND ? pl->run.smp[cmd->point].n : 0;
    double t0 = ct_plan_now(pl);
    CT_TRY(ct_sweep_issue(&pl->run, cmd, idx, err));
    if (*idx < 0)
        return 0;
    ct_sweep_cost_learn(&pl->cost, cmd, &pl->run.smp[*idx], before, ct_plan_now(pl) - t0);
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
    struct ct_sweep_cmd cmd;
    ct_plan_cmd(pl, c, pl->g[c].algos[k], i, params, budget_s, &cmd);
    if (ref >= 0)
        cmd.ref_hi = ct_plan_pt(pl, ref)->st.hi;
    struct ct_job j = pl->cfg->job;
    j.coll = (enum ct_coll)c;
    j.count = cmd.count;
    j.shape.rank = 0;
    memcpy(j.params.v, cmd.params, sizeof cmd.params);
    if (ct_algo_supports(pl->g[c].algos[k], &j, NULL) < 0) {
        *idx = -1;
        return 0;
    }
    return ct_plan_issue(pl, &cmd, idx, err);
}

/* ---- phase 1: survey ----------------------------------------------------------------- */

/*
 * Skip algorithm k at size i: it lost clearly at the last two sizes it was measured at (the
 * last one only, when the budget is tight), the last of them at most 3 sizes back: losers
 * are re-probed every fourth size. Under a tight budget the simplest candidate is never
 * skipped: a tie falls back to it.
 */
static bool skip_ahead(const struct ct_plan *pl, int c, int k, int i, bool tight)
{
    int need = tight && k > 0 ? 1 : 2, seen = 0, last = -1;
    for (int j = i - 1; j >= 0 && seen < need; j--) {
        if (ct_plan_best(pl, c, k, j) < 0)
            continue;
        if (!ct_plan_losing(pl, c, k, j))
            return false;
        if (last < 0)
            last = j;
        seen++;
    }
    return seen == need && i - last <= 3;
}

/* Predicted wall seconds per iteration summed over the survey points left from size
 * `from` on (those skip_ahead would measure now), and their count. */
static double survey_left(struct ct_plan *pl, int from, bool tight, long *npts)
{
    double sum = 0;
    *npts = 0;
    for (int i = from; i < pl->L; i++)
        for (int c = 0; c < CT_COLL_COUNT; c++)
            for (int k = 0; pl->g[c].count && pl->g[c].count[i] && k < pl->g[c].nalgos; k++)
                if (!skip_ahead(pl, c, k, from, tight)) {
                    sum += ct_plan_iter_s(pl, c, k, i);
                    (*npts)++;
                }
    return sum;
}

/* The survey's common iteration allowance K over what is left of it before `until`: a
 * point of t per iteration may spend K * t. */
static double survey_allowance(struct ct_plan *pl, int from, double until, bool tight)
{
    long npts;
    double sum_t = survey_left(pl, from, tight, &npts);
    pl->est_left = npts;
    double avail = until - ct_plan_now(pl) - (double)npts * pl->cost.fixed;
    return sum_t > 0 ? avail / sum_t : pl->cfg->max_iters;
}

static int survey_point(struct ct_plan *pl, int c, int k, int i, double K, struct ct_err *err)
{
    const struct ct_sweep_cfg *cfg = pl->cfg;
    double t = ct_plan_iter_s(pl, c, k, i);
    double hi = SURVEY_MAX_K * cfg->min_iters, iters = K < hi ? K : hi;
    iters = iters < cfg->min_iters   ? cfg->min_iters
            : iters > cfg->max_iters ? cfg->max_iters
                                     : iters;
    struct ct_params p;
    memset(&p, 0, sizeof p);
    long idx;
    return ct_plan_measure(pl, c, k, i, &p, iters * t, ct_plan_leader(pl, c, i), &idx, err);
}

static bool coll_measured(const struct ct_plan *pl, int c)
{
    for (int j = 0; pl->g[c].count && j < pl->L; j++)
        if (ct_plan_leader(pl, c, j) >= 0)
            return true;
    return false;
}

/* Every requested collective with a candidate has at least one point. */
static bool all_measured(const struct ct_plan *pl)
{
    for (int c = 0; c < CT_COLL_COUNT; c++)
        if (pl->g[c].count && pl->g[c].nalgos > 0 && !coll_measured(pl, c))
            return false;
    return true;
}

/* Cost at min_iters of measuring c's candidates at size i (those skip_ahead keeps). */
static double size_cost(struct ct_plan *pl, int c, int i, bool tight, int *n)
{
    double sum = 0;
    *n = 0;
    for (int k = 0; pl->g[c].count && pl->g[c].count[i] && k < pl->g[c].nalgos; k++)
        if (!skip_ahead(pl, c, k, i, tight)) {
            sum += ct_plan_point_cost(pl, ct_plan_iter_s(pl, c, k, i), pl->cfg->min_iters);
            (*n)++;
        }
    return sum;
}

/* Measuring order at size i: the simplest candidate, then by how close each came to the
 * leader where it was last measured; never measured ones after those, in table order. */
static void promise_order(const struct ct_plan *pl, int c, int i, int *order)
{
    int n = pl->g[c].nalgos;
    double *r = ct_xmalloc(sizeof *r * (size_t)(n ? n : 1));
    for (int k = 0; k < n; k++) {
        order[k] = k;
        r[k] = k == 0 ? -1 : INFINITY;
        for (int j = i - 1; k && j >= 0; j--)
            if (ct_plan_median(pl, c, k, j) > 0) {
                r[k] = ct_plan_median(pl, c, k, j) / ct_plan_median(pl, c, -1, j);
                break;
            }
    }
    for (int a = 1; a < n; a++) /* insertion sort: stable, n is small */
        for (int b = a; b > 0 && r[order[b]] < r[order[b - 1]]; b--) {
            int t = order[b];
            order[b] = order[b - 1];
            order[b - 1] = t;
        }
    free(r);
}

/*
 * One size of the survey for collective c. When the budget is tight, the size gets a share
 * of what is left in proportion to its cost, and candidates are measured in order of
 * promise until the share is spent (at least the simplest and the most promising).
 */
static int survey_size(struct ct_plan *pl, int c, int i, bool tight, double share, double K,
                       struct ct_err *err)
{
    const struct ct_sweep_cfg *cfg = pl->cfg;
    struct ct_plan_grid *g = &pl->g[c];
    int *order = ct_xmalloc(sizeof *order * (size_t)(g->nalgos ? g->nalgos : 1));
    promise_order(pl, c, i, order);
    int n;
    double allot = share * size_cost(pl, c, i, tight, &n), t0 = ct_plan_now(pl);
    int done = 0, rc = 0;
    for (int o = 0; o < g->nalgos && rc == 0; o++) {
        int k = order[o];
        if (skip_ahead(pl, c, k, i, tight))
            continue;
        /* out of budget (or the point would end past it): only a collective without any
         * point gets one */
        bool out =
            ct_plan_now(pl) + ct_plan_point_cost(pl, ct_plan_iter_s(pl, c, k, i), cfg->min_iters) >
            cfg->budget_s;
        if ((out && coll_measured(pl, c)) ||
            (tight && done >= 2 && ct_plan_now(pl) - t0 >= allot)) {
            pl->run.res->budget_out = true;
            break;
        }
        rc = survey_point(pl, c, k, i, K, err);
        done += ct_plan_best(pl, c, k, i) >= 0;
        if (rc < 0 || out || ct_plan_best(pl, c, k, i) < 0 || ct_plan_losing(pl, c, k, i))
            continue;
        /* back in contention after being skipped: fill the sizes it missed */
        for (int j = i - 1; rc == 0 && j >= 0 && ct_plan_best(pl, c, k, j) < 0; j--)
            if (g->count[j] && ct_plan_leader(pl, c, j) >= 0 && !tight)
                rc = survey_point(pl, c, k, j, K, err);
    }
    free(order);
    return rc;
}

static int survey(struct ct_plan *pl, struct ct_err *err)
{
    const struct ct_sweep_cfg *cfg = pl->cfg;
    double soft = SURVEY_SHARE * cfg->budget_s;
    bool prev_thinned = false;
    pl->phase = "survey";
    for (int i = 0; i < pl->L; i++) {
        /* tight: not even min_iters each in the survey's share. Then losers are skipped
         * after one loss, sizes get shares of what is left (keeping some for tuning), and
         * every other size is skipped when two candidates each would not fit either. */
        bool tight = survey_allowance(pl, i, soft, false) < cfg->min_iters;
        double K = survey_allowance(pl, i, soft, tight), share = 1;
        if (tight) {
            double need = 0, need2 = 0, rem = (1 - RESERVE) * cfg->budget_s - ct_plan_now(pl);
            for (int j = i; j < pl->L; j++)
                for (int c = 0; c < CT_COLL_COUNT; c++) {
                    int n;
                    double cost = size_cost(pl, c, j, true, &n);
                    need += cost;
                    need2 += n > 2 ? cost * 2 / n : cost;
                }
            share = need > rem ? (rem > 0 ? rem / need : 0) : 1;
            if (need2 > rem && all_measured(pl) && i + 1 < pl->L && !prev_thinned) {
                prev_thinned = true;
                pl->run.res->budget_out = true;
                continue;
            }
        }
        prev_thinned = false;
        if (ct_plan_now(pl) >= cfg->budget_s && all_measured(pl)) {
            pl->run.res->budget_out = true;
            return 0;
        }
        for (int c = 0; c < CT_COLL_COUNT; c++)
            if (pl->g[c].count && pl->g[c].count[i])
                CT_TRY(survey_size(pl, c, i, tight, share, K, err));
    }
    return 0;
}

/* ---- the whole plan ------------------------------------------------------------------ */

static void describe(struct ct_plan *pl)
{
    const struct ct_sweep_cfg *cfg = pl->cfg;
    struct ct_sweep_result *res = pl->run.res;
    snprintf(res->search, sizeof res->search, "survey, coordinate descent per x%.0f bucket, %s",
             CT_SWEEP_BUCKET, "refine ties");
    size_t off = 0;
    res->space[0] = 0;
    for (int p = 0; p < CT_P_COUNT && off < sizeof res->space; p++) {
        uint64_t vals[9];
        const struct ct_param_desc *d = ct_param_desc((enum ct_param_id)p);
        const char *sep = off ? ", " : "";
        if (cfg->job.params.v[p]) {
            off += (size_t)snprintf(res->space + off, sizeof res->space - off, "%s%s %llu (fixed)",
                                    sep, d->name, (unsigned long long)cfg->job.params.v[p]);
            continue;
        }
        int n = ct_sweep_grid(cfg, (enum ct_param_id)p, vals);
        if (n < 2)
            continue;
        if (p == CT_P_CHUNK)
            off += (size_t)snprintf(
                res->space + off, sizeof res->space - off, "%schunk %lluK..%lluM x4", sep,
                (unsigned long long)(vals[0] >> 10), (unsigned long long)(vals[n - 1] >> 20));
        else
            for (int i = 0; i < n && off < sizeof res->space; i++)
                off += (size_t)snprintf(res->space + off, sizeof res->space - off, "%s%s%s%llu",
                                        i ? "," : sep, i ? "" : d->name, i ? "" : " ",
                                        (unsigned long long)vals[i]);
    }
    /* the full cross product over the same sizes and candidates */
    res->full_points = 0;
    for (int c = 0; c < CT_COLL_COUNT; c++)
        for (int i = 0; pl->g[c].count && i < pl->L; i++)
            for (int k = 0; pl->g[c].count[i] && k < pl->g[c].nalgos; k++) {
                long prod = 1;
                unsigned s = ct_sweep_searched(cfg, pl->g[c].algos[k]);
                for (int p = 0; p < CT_P_COUNT; p++) {
                    uint64_t vals[9];
                    if (s & CT_PBIT(p))
                        prod *= ct_sweep_grid(cfg, (enum ct_param_id)p, vals);
                }
                res->full_points += prod;
            }
}

static int plan_run(struct ct_plan *pl, struct ct_err *err)
{
    bool any = false;
    for (int c = 0; c < CT_COLL_COUNT; c++)
        any = any || (pl->g[c].count && pl->g[c].nalgos > 0);
    if (!any)
        return ct_err_set(err, CT_EINVAL, "no algorithm supports these collectives on %d ranks",
                          pl->cfg->job.shape.nranks);
    CT_TRY(survey(pl, err));
    if (ct_plan_now(pl) < pl->cfg->budget_s)
        CT_TRY(ct_plan_tune(pl, err));
    if (ct_plan_now(pl) < pl->cfg->budget_s)
        CT_TRY(ct_plan_refine(pl, err));
    return 0;
}

int ct_sweep_drive(const struct ct_sweep_cfg *cfg, const struct ct_sweep_backend *be, void *ctx,
                   struct ct_sweep_result *res, struct ct_err *err)
{
    struct ct_plan pl;
    memset(&pl, 0, sizeof pl);
    memset(res, 0, sizeof *res);
    pl.cfg = cfg;
    pl.run.cfg = cfg;
    pl.run.be = be;
    pl.run.ctx = ctx;
    pl.run.res = res;
    struct ct_params p0 = cfg->job.params;
    ct_params_defaults(&p0);
    pl.run.streams = (int)p0.v[CT_P_STREAMS];
    int rc;
    if (be->root) {
        pl.t0 = be->now_s(ctx);
        ct_sweep_cost_init(&pl.cost);
        grid_build(&pl);
        describe(&pl);
        rc = plan_run(&pl, err);
        if (be->bcast && !pl.run.issue_failed) {
            /* DONE, or ABORT after a failure the other ranks did not see */
            struct ct_sweep_cmd fin;
            struct ct_err e2 = {0};
            memset(&fin, 0, sizeof fin);
            fin.op = rc == 0 ? CT_SWEEP_DONE : CT_SWEEP_ABORT;
            int rc2 = be->bcast(ctx, &fin, rc == 0 ? err : &e2);
            rc = rc == 0 ? rc2 : rc;
        }
        res->elapsed_s = ct_plan_now(&pl);
        grid_release(&pl);
    } else {
        rc = ct_sweep_follow(&pl.run, err);
    }
    for (size_t i = 0; i < pl.run.cap && i < res->n; i++)
        free(pl.run.smp[i].x);
    free(pl.run.smp);
    if (res->n)
        ct_select_mark_pruned(res->pts, res->n, cfg->margin);
    return rc;
}
