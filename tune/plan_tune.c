/* SPDX-License-Identifier: MIT */
/*
 * The sweep planner's later phases: coordinate descent of the parameters per size bucket
 * for the algorithms still in contention, then refinement of close decisions.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../algos/coll.h"
#include "config.h"
#include "select.h"
#include "stats.h"
#include "plan.h"

/* The check keeps the last 14% (measured, default sweep: with no share of its own it reached
 * 1 of 7 and 10 of 17 final ranges, with this one 15-17 of 17-18). */
#define MAX_EXTEND 3       /* refinement rounds per point */
#define TUNE_SHARE 0.68    /* of the budget: survey and tuning together */
#define REFINE_SHARE 0.78  /* of the budget: then refinement */
#define CONFIRM_SHARE 0.86 /* then confirmation; the rest checks the rules */
#define LIBRARY_SHARE 0.68 /* a library's wins over its own decision, confirmed after the survey   \
                            */

/* The connections first: where they matter (a long link) they matter most. */
static const enum ct_param_id search_order[] = {CT_P_STREAMS,  CT_P_INFLIGHT, CT_P_CHUNK,
                                                CT_P_PIPELINE, CT_P_CHANNELS, CT_P_THREADS};

/* The connection parameters (tcp streams, collectives in flight) are walked upwards and the
 * walk stops at the first value that is clearly worse than the best so far (its interval
 * above the best's): each step adds connections, and on a LAN the first one already shows
 * they cost more than they bring. A setting there moves on a smaller, interval-confirmed
 * gain than the other parameters: on a long link the differences between settings are
 * the link's (a window, a queue), not the host's noise. */
#define CONN_MARGIN 0.03
static bool is_conn(enum ct_param_id p)
{
    return p == CT_P_STREAMS || p == CT_P_INFLIGHT;
}

/* ct_plan_extend, counted as one refinement round of idx when it adds samples. */
static int extend(struct ct_plan *pl, long idx, bool fresh, double budget_s, struct ct_err *err)
{
    pl->ext[idx] += !fresh;
    return ct_plan_extend(pl, idx, fresh, budget_s, 0, -1, err);
}

/* Fits the phase's share of the budget: now plus cost seconds. */
static bool fits(const struct ct_plan *pl, double cost, double share)
{
    return ct_plan_now(pl) + cost <= share * pl->cfg->budget_s;
}

/* Points pa and pb again, fresh samples, interleaved (A B A B: each takes half its samples
 * next to the other's), where the phase's share of the budget allows. This VM's vCPUs
 * move between sibling and separate cores: small-message times flip 2.5x (AllToAll ring
 * at 16 B: 0.51 us, then 0.18 us on the next point) within a phase, so only points
 * measured side by side compare. */
static int interleave(struct ct_plan *pl, long pa, long pb, double share, struct ct_err *err)
{
    double half = ct_plan_pt(pl, pa)->st.spent_s + ct_plan_pt(pl, pb)->st.spent_s;
    if (!fits(pl, 2 * half + 4 * pl->cost.fixed, share))
        return 0;
    CT_TRY(extend(pl, pa, true, ct_plan_pt(pl, pa)->st.spent_s / 2, err));
    CT_TRY(extend(pl, pb, true, ct_plan_pt(pl, pb)->st.spent_s / 2, err));
    CT_TRY(extend(pl, pa, false, 0, err));
    return extend(pl, pb, false, 0, err);
}

/* ---- phase 2: tune ------------------------------------------------------------------- */

struct task {
    int c, k, lo, hi, rep; /* bucket [lo, hi) of size indices, descent at rep */
    int rank;              /* 0 = the bucket's leader, 1 = runner-up, ... */
    double ratio, cost;
};

static int cmp_task(const void *a, const void *b)
{
    const struct task *x = a, *y = b;
    if (x->rank != y->rank)
        return x->rank - y->rank;
    return x->cost < y->cost ? -1 : x->cost > y->cost;
}

/* Largest communication op of rank 0's schedule: chunks at or above it do not slice. */
static uint64_t max_op_bytes(const struct ct_plan *pl, int c, const struct ct_algo *a,
                             uint64_t count, const uint64_t *params)
{
    struct ct_job j = pl->cfg->job;
    j.coll = (enum ct_coll)c;
    j.count = count;
    j.shape.rank = 0;
    memcpy(j.params.v, params, sizeof j.params.v);
    struct ct_sched s;
    if (ct_algo_build(a, &j, &s, NULL) < 0)
        return UINT64_MAX;
    uint64_t m = 0;
    for (uint32_t i = 0; i < s.nops; i++)
        if (s.ops[i].kind <= CT_OP_RECV_REDUCE && s.ops[i].bytes > m)
            m = s.ops[i].bytes;
    ct_sched_release(&s);
    return m;
}

/* Per-point timed budget in the tune and refine phases. */
static double tune_allowance(const struct ct_plan *pl, double t_s)
{
    double b = 30 * t_s, cap = 0.01 * pl->cfg->budget_s;
    double min = pl->cfg->min_iters * t_s;
    b = b > cap ? cap : b;
    return b < min ? min : b;
}

static int bucket_width(const struct ct_plan *pl)
{
    double f = pl->cfg->stepfactor > 1 ? pl->cfg->stepfactor : 2;
    int w = (int)lround(log(CT_SWEEP_BUCKET) / log(f));
    return w < 1 ? 1 : w;
}

static size_t make_tasks(struct ct_plan *pl, struct task **out)
{
    int W = bucket_width(pl);
    size_t n = 0, cap = 16;
    struct task *t = ct_xmalloc(sizeof *t * cap);
    for (int c = 0; c < CT_COLL_COUNT; c++) {
        struct ct_plan_grid *g = &pl->g[c];
        for (int lo = 0; g->count && lo < pl->L; lo += W) {
            int hi = lo + W > pl->L ? pl->L : lo + W;
            size_t first = n;
            for (int k = 0; k < g->nalgos; k++) {
                unsigned searched = ct_sweep_searched(pl->cfg, (enum ct_coll)c, g->algos[k]);
                int meas[64], nm = 0;
                double ratio = INFINITY;
                bool contender = false;
                for (int i = lo; i < hi && nm < 64; i++)
                    if (ct_plan_best(pl, c, k, i) >= 0) {
                        meas[nm++] = i;
                        contender = contender || !ct_plan_losing(pl, c, k, i);
                        double r = ct_plan_median(pl, c, k, i) / ct_plan_median(pl, c, -1, i);
                        ratio = r < ratio ? r : ratio;
                    }
                if (!searched || !contender || !nm)
                    continue;
                if (n == cap)
                    t = ct_xrealloc(t, sizeof *t * (cap *= 2));
                struct task *x = &t[n++];
                x->c = c;
                x->k = k;
                x->lo = lo;
                x->hi = hi;
                x->rep = meas[nm > 1 ? 1 : 0];
                x->ratio = ratio;
                int variants = nm - 1; /* the tuned values carried to the other sizes */
                uint64_t vals[9];
                for (int p = 0; p < CT_P_COUNT; p++)
                    if (searched & CT_PBIT(p)) /* a connection walk: expect two steps */
                        variants += is_conn((enum ct_param_id)p)
                                        ? 2
                                        : ct_sweep_grid(pl->cfg, (enum ct_param_id)p, vals) -
                                              !(g->algos[k]->own & CT_PBIT(p));
                double ts = ct_plan_iter_s(pl, c, k, x->rep);
                x->cost = variants * ct_plan_point_cost(pl, ts, (int)(tune_allowance(pl, ts) / ts));
            }
            /* rank contenders by how close they came to the leader */
            for (size_t a = first; a < n; a++) {
                t[a].rank = 0;
                for (size_t b = first; b < n; b++)
                    if (t[b].ratio < t[a].ratio || (t[b].ratio == t[a].ratio && b < a))
                        t[a].rank++;
            }
        }
    }
    qsort(t, n, sizeof *t, cmp_task);
    *out = t;
    return n;
}

static bool chunk_relevant(uint64_t v, uint64_t cur, uint64_t maxop, const uint64_t *grid)
{
    if (v >= maxop && cur >= maxop)
        return false; /* both leave the ops whole */
    if (v < maxop)
        return true;
    for (int i = 0; grid[i]; i++)
        if (grid[i] >= maxop)
            return grid[i] == v; /* the smallest unsliced value stands for all */
    return false;
}

static bool better_params(const struct ct_plan *pl, long a, long b, double margin)
{
    return ct_select_better_params(&ct_plan_pt(pl, a)->st, &ct_plan_pt(pl, b)->st, margin);
}

/* One coordinate-descent pass at the bucket's representative size. */
static int descend(struct ct_plan *pl, const struct task *t, double until, struct ct_params *cur,
                   struct ct_err *err)
{
    const struct ct_algo *a = pl->g[t->c].algos[t->k];
    unsigned searched = ct_sweep_searched(pl->cfg, (enum ct_coll)t->c, a);
    uint64_t count = pl->g[t->c].count[t->rep];
    uint64_t v0[CT_P_COUNT];
    ct_plan_params(pl, t->c, a, cur, v0);
    memcpy(cur->v, v0, sizeof v0);
    long best = -1;
    for (size_t q = 0; q < pl->run.res->n; q++) {
        const struct ct_sweep_point *p = ct_plan_pt(pl, (long)q);
        if ((int)p->coll == t->c && p->size == pl->g[t->c].size[t->rep] &&
            !strcmp(p->algo, a->name) && ct_select_same_choice(a->name, &p->params, a->name, cur))
            best = (long)q;
    }
    double tu = ct_plan_iter_s(pl, t->c, t->k, t->rep);
    if (best < 0)
        CT_TRY(
            ct_plan_measure(pl, t->c, t->k, t->rep, cur, tune_allowance(pl, tu), -1, &best, err));
    else /* load drifts: compare the variants with a baseline measured now */
        CT_TRY(extend(pl, best, true, tune_allowance(pl, tu), err));
    if (best < 0)
        return 0;
    for (size_t o = 0; o < sizeof search_order / sizeof search_order[0]; o++) {
        enum ct_param_id p = search_order[o];
        if (!(searched & CT_PBIT(p)))
            continue;
        uint64_t grid[9];
        ct_sweep_grid(pl->cfg, p, grid);
        uint64_t maxop = max_op_bytes(pl, t->c, a, count, cur->v);
        if (p == CT_P_PIPELINE && cur->v[CT_P_CHUNK] >= maxop)
            continue; /* one slice per op: depth cannot matter */
        uint64_t s0 = cur->v[CT_P_STREAMS];
        for (int g = 0; grid[g]; g++) {
            if (grid[g] == cur->v[p] ||
                (p == CT_P_CHUNK && !chunk_relevant(grid[g], cur->v[p], maxop, grid)))
                continue;
            /* K collectives in flight: at the streams found, and at 1/K of them (the same
             * connections in all: too many overflow the path's queue) */
            struct ct_params cand[2] = {*cur, *cur};
            int nc = 1;
            cand[0].v[p] = grid[g];
            if (p == CT_P_INFLIGHT && s0 / grid[g] >= 1 && (searched & CT_PBIT(CT_P_STREAMS))) {
                cand[1] = cand[0];
                cand[0].v[CT_P_STREAMS] = s0 / grid[g];
                nc = 2;
            }
            bool won = false, worse = true;
            for (int q = 0; q < nc; q++) {
                if (ct_plan_now(pl) >= until)
                    return 0;
                long idx;
                CT_TRY(ct_plan_measure(pl, t->c, t->k, t->rep, &cand[q], tune_allowance(pl, tu),
                                       best, &idx, err));
                /* a new value must win clearly: noise and crumbs do not move parameters; and
                 * again next to the baseline, interleaved (the machine may have changed
                 * state between the two), but for connections, where each switch reconnects */
                double m = is_conn(p) ? CONN_MARGIN : pl->cfg->margin;
                if (idx >= 0 && better_params(pl, idx, best, m)) {
                    if (!is_conn(p))
                        CT_TRY(interleave(pl, idx, best, TUNE_SHARE, err));
                    if (better_params(pl, idx, best, m)) {
                        best = idx;
                        won = true;
                    }
                }
                worse = worse && idx >= 0 &&
                        ct_select_beats(&ct_plan_pt(pl, best)->st, &ct_plan_pt(pl, idx)->st);
            }
            if (is_conn(p) && !won && worse && grid[g] > cur->v[p])
                break;
        }
        *cur = ct_plan_pt(pl, best)->params;
    }
    return 0;
}

static long point_at(const struct ct_plan *pl, int c, uint64_t size, int k,
                     const struct ct_params *params);

/*
 * The seam between two tuned buckets of one algorithm (x below y) whose settings differ: the
 * descent tuned each at one size and carried it to the rest of its bucket, so near the seam
 * the neighbour's setting may be the better one (a model of NCCL's channels, 0.5 us and
 * 0.5 GB/s each: 8 channels tuned at 16 KiB and carried to 128 KiB, where 16 run 1.4x
 * faster). From the seam inwards, each size of x tries y's setting, and each size of y
 * x's, while it wins clearly, as a value wins in the descent (interleaved, then again). Not
 * where the two differ in connections: each switch reconnects, and the descent walks those
 * apart at each bucket.
 */
static int seam_walk(struct ct_plan *pl, const struct task *t, const struct ct_params *own,
                     const struct ct_params *other, bool down, double until, struct ct_err *err)
{
    int c = t->c, k = t->k;
    for (int i = down ? t->hi - 1 : t->lo; i >= t->lo && i < t->hi; i += down ? -1 : 1) {
        if (!pl->g[c].count[i] || ct_plan_leader(pl, c, i) < 0)
            continue;
        long base = point_at(pl, c, pl->g[c].size[i], k, own), idx;
        if (base < 0 || ct_plan_now(pl) >= until)
            return 0;
        double tu = ct_plan_iter_s(pl, c, k, i);
        CT_TRY(ct_plan_measure(pl, c, k, i, other, tune_allowance(pl, tu), base, &idx, err));
        if (idx < 0 || !better_params(pl, idx, base, pl->cfg->margin))
            return 0;
        CT_TRY(interleave(pl, idx, base, TUNE_SHARE, err));
        if (!better_params(pl, idx, base, pl->cfg->margin))
            return 0;
    }
    return 0;
}

int ct_plan_tune(struct ct_plan *pl, struct ct_err *err)
{
    double until = TUNE_SHARE * pl->cfg->budget_s;
    struct task *t;
    size_t n = make_tasks(pl, &t);
    pl->phase = "tune";
    int rc = 0;
    bool *ran = ct_xcalloc(n ? n : 1, sizeof *ran);
    struct ct_params *tuned = ct_xcalloc(n ? n : 1, sizeof *tuned); /* each bucket's setting */
    /* pass 0 in order, deferring a bucket too dear for what is left (a cheaper one may
     * still fit); pass 1 the deferred ones, as far as the time goes (the descent stops at
     * the phase's end, connections first) */
    for (size_t it = 0; it < 2 * n && rc == 0; it++) {
        size_t x = it % n;
        bool pass1 = it >= n;
        if (ran[x] || (pass1 && ct_plan_now(pl) >= until))
            continue;
        pl->est_left = 0;
        for (size_t y = x; y < n; y++)
            pl->est_left += 12;
        if (!pass1 && ct_plan_now(pl) + t[x].cost > until)
            continue;
        ran[x] = true;
        struct ct_params cur;
        memset(&cur, 0, sizeof cur);
        rc = descend(pl, &t[x], until, &cur, err);
        tuned[x] = cur;
        uint64_t def[CT_P_COUNT];
        struct ct_params zero;
        memset(&zero, 0, sizeof zero);
        ct_plan_params(pl, t[x].c, pl->g[t[x].c].algos[t[x].k], &zero, def);
        if (rc < 0 || !memcmp(def, cur.v, sizeof def))
            continue;
        /* carry the tuned parameters to the bucket's other sizes */
        for (int i = t[x].lo; i < t[x].hi && rc == 0 && ct_plan_now(pl) < until; i++) {
            if (i == t[x].rep || !pl->g[t[x].c].count[i] || ct_plan_leader(pl, t[x].c, i) < 0)
                continue;
            double tu = ct_plan_iter_s(pl, t[x].c, t[x].k, i);
            long idx;
            rc = ct_plan_measure(pl, t[x].c, t[x].k, i, &cur, tune_allowance(pl, tu),
                                 ct_plan_leader(pl, t[x].c, i), &idx, err);
        }
    }
    for (size_t x = 0; x < n && rc == 0; x++) /* x below y, tuned apart */
        for (size_t y = 0; y < n && rc == 0; y++)
            if (ran[x] && ran[y] && t[x].c == t[y].c && t[x].k == t[y].k && t[x].hi == t[y].lo &&
                memcmp(tuned[x].v, tuned[y].v, sizeof tuned[x].v) &&
                tuned[x].v[CT_P_STREAMS] == tuned[y].v[CT_P_STREAMS] &&
                tuned[x].v[CT_P_INFLIGHT] == tuned[y].v[CT_P_INFLIGHT] &&
                (rc = seam_walk(pl, &t[x], &tuned[x], &tuned[y], true, until, err)) == 0)
                rc = seam_walk(pl, &t[y], &tuned[y], &tuned[x], false, until, err);
    free(tuned);
    free(ran);
    free(t);
    return rc;
}

/* ---- phase 3: refine ----------------------------------------------------------------- */

struct pair {
    long a, b;
    double cost;
};

static int cmp_pair(const void *x, const void *y)
{
    const struct pair *a = x, *b = y;
    return a->cost < b->cost ? -1 : a->cost > b->cost;
}

/* The decisions at every size of collective c from every point so far (ct_select_choices). */
static size_t choices_of(const struct ct_plan *pl, int c, struct ct_select_choice **ch)
{
    return ct_select_choices(pl->run.res->pts, pl->run.res->n, (enum ct_coll)c, pl->cfg->margin,
                             ch);
}

int ct_plan_refine(struct ct_plan *pl, struct ct_err *err)
{
    pl->phase = "refine";
    const double target = pl->cfg->target_ci;
    for (int round = 0; round < MAX_EXTEND; round++) {
        size_t np = 0, cap = 16;
        struct pair *v = ct_xmalloc(sizeof *v * cap);
        for (int c = 0; c < CT_COLL_COUNT; c++) {
            if (!pl->g[c].count)
                continue;
            struct ct_select_choice *ch;
            size_t n = choices_of(pl, c, &ch);
            for (size_t s = 0; s < n; s++) {
                long a = (long)ch[s].chosen;
                long b = ch[s].leader != a ? ch[s].leader : ch[s].runner;
                if (!ch[s].tie || b < 0 || pl->ext[a] >= MAX_EXTEND || pl->ext[b] >= MAX_EXTEND)
                    continue;
                if (ct_stats_converged(&ct_plan_pt(pl, a)->st, target) &&
                    ct_stats_converged(&ct_plan_pt(pl, b)->st, target))
                    continue;
                if (np == cap)
                    v = ct_xrealloc(v, sizeof *v * (cap *= 2));
                v[np].a = a;
                v[np].b = b;
                v[np++].cost = 2 * (ct_plan_pt(pl, a)->st.spent_s + ct_plan_pt(pl, b)->st.spent_s) +
                               2 * pl->cost.fixed;
            }
            free(ch);
        }
        qsort(v, np, sizeof *v, cmp_pair);
        size_t did = 0;
        for (size_t x = 0; x < np; x++) {
            pl->est_left = (long)(2 * (np - x));
            if (ct_plan_now(pl) + v[x].cost > REFINE_SHARE * pl->cfg->budget_s)
                continue;
            int rc = extend(pl, v[x].a, false, 0, err);
            if (rc == 0)
                rc = extend(pl, v[x].b, false, 0, err);
            if (rc < 0) {
                free(v);
                return rc;
            }
            did++;
        }
        free(v);
        if (!did)
            break;
    }
    return 0;
}

/* ---- phase 4: confirm ----------------------------------------------------------------- */

/* Every algorithm chosen at a size, measured at the two sizes on either side where it has
 * no point (the survey skipped it there), with the chosen point's parameters: a winner
 * nearby is never missing from a size's decision. */
static int fill_gaps(struct ct_plan *pl, int c, const struct ct_select_choice *ch, size_t n,
                     struct ct_err *err)
{
    struct ct_plan_grid *g = &pl->g[c];
    for (size_t s = 0; s < n; s++) {
        const struct ct_sweep_point *p = ct_plan_pt(pl, (long)ch[s].chosen);
        int k = ct_plan_slot(g, p->algo), i = ct_plan_size_index(pl, g, ch[s].size);
        for (int d = -2; k >= 0 && i >= 0 && d <= 2; d++) {
            int j = i + d;
            if (!d || j < 0 || j >= pl->L || !g->count[j] || ct_plan_best(pl, c, k, j) >= 0)
                continue;
            double cost = ct_plan_point_cost(pl, ct_plan_iter_s(pl, c, k, j), pl->cfg->min_iters);
            if (!fits(pl, cost, CONFIRM_SHARE))
                continue;
            long idx;
            CT_TRY(ct_plan_measure(pl, c, k, j, &p->params, cost, -1, &idx, err));
        }
    }
    return 0;
}

/* Both contenders of every boundary, at both sizes of it: fresh samples, interleaved. */
static int confirm_edges(struct ct_plan *pl, int c, const struct ct_select_choice *ch, size_t n,
                         struct ct_err *err)
{
    for (size_t s = 0; s + 1 < n; s++) {
        const struct ct_sweep_point *a = ct_plan_pt(pl, (long)ch[s].chosen);
        const struct ct_sweep_point *b = ct_plan_pt(pl, (long)ch[s + 1].chosen);
        if (!strcmp(a->algo, b->algo))
            continue;
        for (size_t t = s; t <= s + 1; t++) {
            long pa = -1, pb = -1;
            for (size_t i = 0; i < pl->run.res->n; i++) {
                const struct ct_sweep_point *q = ct_plan_pt(pl, (long)i);
                if (q->coll != (enum ct_coll)c || q->size != ch[t].size || q->wrong)
                    continue;
                if (ct_select_same_choice(q->algo, &q->params, a->algo, &a->params))
                    pa = (long)i;
                if (ct_select_same_choice(q->algo, &q->params, b->algo, &b->params))
                    pb = (long)i;
            }
            if (pa >= 0 && pb >= 0)
                CT_TRY(interleave(pl, pa, pb, CONFIRM_SHARE, err));
        }
    }
    return 0;
}

/* A clear win of a less simple algorithm at one size makes a range of its own, or stretches
 * one over the tied sizes around it (the whole-curve tie rule); measured once, it may be the
 * machine's state at that moment (2 ranks, AllGather 32 KiB: kangaring 1.28 us against
 * mesh's 1.61 in one sweep, 1.43 against 1.47 in the next, and the two configs disagreed
 * over 3-90 KiB). Each such win that the sizes beside it do not repeat is measured again,
 * interleaved with the simpler runner-up; so is a win of tuned parameters over any
 * runner-up (the tune phase measured it, the runner was measured in the survey: 2 ranks,
 * AllGather 256 B, ring with 4 channels at 0.29 us "2.00x" bruck's 0.58; verify: 0.67
 * against 0.54). */
static bool clear_win(const struct ct_plan *pl, const struct ct_select_choice *ch, size_t n,
                      size_t s, const char *algo)
{
    return s < n && !ch[s].tie && !strcmp(ct_plan_pt(pl, (long)ch[s].chosen)->algo, algo);
}

static int confirm_wins(struct ct_plan *pl, const struct ct_select_choice *ch, size_t n, bool *done,
                        struct ct_err *err)
{
    for (size_t s = 0; s < n; s++) {
        if (ch[s].tie || ch[s].runner < 0)
            continue;
        const struct ct_sweep_point *a = ct_plan_pt(pl, (long)ch[s].chosen),
                                    *b = ct_plan_pt(pl, ch[s].runner);
        if ((ct_select_simplicity(b->algo) >= ct_select_simplicity(a->algo) &&
             ct_select_default_params(a)) ||
            (s > 0 && clear_win(pl, ch, n, s - 1, a->algo)) || clear_win(pl, ch, n, s + 1, a->algo))
            continue;
        CT_TRY(interleave(pl, (long)ch[s].chosen, ch[s].runner, CONFIRM_SHARE, err));
        done[s] = true; /* with its runner-up */
    }
    return 0;
}

/* Every size where a library row other than the library's own decision won is measured
 * again next to that decision, interleaved: there the export changes what the library runs,
 * and the decision was perhaps measured in another moment of a shared machine. Also where
 * confirm_wins passed over it: a run of wins in a row is what a slow spell during the
 * survey leaves, and the winner's runner-up need not be the decision. done (NULL: none):
 * the sizes confirm_wins just measured next to their runner-up, not measured again when the
 * runner-up is the decision. */
static int confirm_default(struct ct_plan *pl, int c, const struct ct_select_choice *ch, size_t n,
                           double share, const bool *done, struct ct_err *err)
{
    for (size_t s = 0; s < n; s++) {
        const struct ct_sweep_point *a = ct_plan_pt(pl, (long)ch[s].chosen);
        if (!strchr(a->algo, ':') || ct_select_library_default(a->algo))
            continue;
        for (size_t i = 0; i < pl->run.res->n; i++) {
            const struct ct_sweep_point *q = ct_plan_pt(pl, (long)i);
            if (q->coll == (enum ct_coll)c && q->size == ch[s].size && !q->wrong && q->st.n > 0 &&
                ct_select_library_default(q->algo) &&
                !ct_select_superseded(pl->run.res->pts, pl->run.res->n, i)) {
                if (!done || !done[s] || (long)i != ch[s].runner)
                    CT_TRY(interleave(pl, (long)ch[s].chosen, (long)i, share, err));
                break;
            }
        }
    }
    return 0;
}

/* A clear loss that the sizes beside it do not repeat: an algorithm within the margin of the
 * leader at the grid sizes on either side but clearly behind at one between them is measured
 * again there, next to the leader, interleaved. A time curve is smooth in size; such a loss
 * was a burst of load (2 ranks, AllGather 128 KiB: mesh 1.67x and rdh 2.64x the leader,
 * within 1-7% at 64 and 256 KiB), and it took the algorithm out of every tie around it. */
static int confirm_losses(struct ct_plan *pl, int c, struct ct_err *err)
{
    const struct ct_plan_grid *g = &pl->g[c];
    for (int k = 0; k < g->nalgos; k++)
        for (int i = 0; i < pl->L; i++) {
            if (!g->count[i] || !ct_plan_losing(pl, c, k, i))
                continue;
            int lo = i - 1, hi = i + 1;
            while (lo >= 0 && !g->count[lo])
                lo--;
            while (hi < pl->L && !g->count[hi])
                hi++;
            if (lo < 0 || hi >= pl->L || ct_plan_best(pl, c, k, lo) < 0 ||
                ct_plan_best(pl, c, k, hi) < 0 || ct_plan_losing(pl, c, k, lo) ||
                ct_plan_losing(pl, c, k, hi))
                continue;
            CT_TRY(interleave(pl, ct_plan_best(pl, c, k, i), ct_plan_leader(pl, c, i),
                              CONFIRM_SHARE, err));
        }
    return 0;
}

int ct_plan_confirm(struct ct_plan *pl, struct ct_err *err)
{
    pl->phase = "confirm";
    for (int pass = 0; pass < 4; pass++)
        for (int c = 0; c < CT_COLL_COUNT; c++) {
            if (!pl->g[c].count)
                continue;
            if (pass == 3) {
                CT_TRY(confirm_losses(pl, c, err));
                continue;
            }
            struct ct_select_choice *ch;
            size_t n = choices_of(pl, c, &ch);
            bool *done = ct_xcalloc(n ? n : 1, sizeof *done);
            int rc = pass == 0   ? fill_gaps(pl, c, ch, n, err)
                     : pass == 1 ? confirm_edges(pl, c, ch, n, err)
                                 : confirm_wins(pl, ch, n, done, err);
            if (rc == 0 && pass == 2)
                rc = confirm_default(pl, c, ch, n, CONFIRM_SHARE, done, err);
            free(done);
            free(ch);
            CT_TRY(rc);
        }
    return 0;
}

int ct_plan_confirm_library(struct ct_plan *pl, struct ct_err *err)
{
    pl->phase = "confirm";
    for (int c = 0; c < CT_COLL_COUNT; c++) {
        if (!pl->g[c].count)
            continue;
        struct ct_select_choice *ch;
        size_t n = choices_of(pl, c, &ch);
        int rc = confirm_default(pl, c, ch, n, LIBRARY_SHARE, NULL, err);
        free(ch);
        CT_TRY(rc);
    }
    return 0;
}

/* ---- phase 5: check ------------------------------------------------------------------- */

#define CHECK_ROUNDS 8 /* a check moves its neighbours' thresholds: check the moved rules again */

/* The checks made: a rule's choice at its check size. */
struct checked {
    int c;
    uint64_t size;
    char algo[sizeof(((struct ct_rule *)0)->algo)];
    struct ct_params params;
};

/* The measurement that counts for algorithm k of c with params at size; -1 if none. */
static long point_at(const struct ct_plan *pl, int c, uint64_t size, int k,
                     const struct ct_params *params)
{
    const struct ct_sweep_point *pts = pl->run.res->pts;
    const char *algo = pl->g[c].algos[k]->name;
    struct ct_params want = *params;
    ct_plan_params(pl, c, pl->g[c].algos[k], params, want.v);
    size_t n = pl->run.res->n;
    for (size_t q = 0; q < n; q++)
        if ((int)pts[q].coll == c && pts[q].size == size && !pts[q].wrong && pts[q].st.n > 0 &&
            ct_select_same_choice(pts[q].algo, &pts[q].params, algo, &want) &&
            !ct_select_superseded(pts, n, q))
            return (long)q;
    return -1;
}

/* Size (bytes) and count where rule r of s is checked. */
static uint64_t check_size(const struct ct_plan *pl, const struct ct_ruleset *s,
                           const struct ct_rule *r, uint64_t *count)
{
    *count = ct_sweep_check_count(s, r, pl->cfg->minbytes, pl->cfg->maxbytes);
    return ct_coll_desc(s->coll)->size_bytes(*count, ct_dtype_size(s->dtype), s->nranks);
}

static bool was_checked(const struct ct_plan *pl, int c, const struct ct_ruleset *s,
                        const struct ct_rule *r, const struct checked *done, size_t ndone)
{
    uint64_t count, size = check_size(pl, s, r, &count);
    for (size_t q = 0; q < ndone; q++)
        if (done[q].c == c && done[q].size == size &&
            ct_select_same_choice(done[q].algo, &done[q].params, r->algo, &r->params))
            return true;
    return false;
}

/* The fastest setting at a check size, measured at the grid sizes on either side where it
 * has no point (the survey skipped it there). Otherwise a winner between two grid sizes
 * loses them to the algorithms measured there: 2 ranks, AllGather, symm was skipped at
 * 512 B-2 KiB after losing at 256 B, won every check size between them by 1.2-1.4x, and
 * ring or kangaring kept narrow ranges around 1 and 2 KiB that verify failed (1.46). */
static int beside(struct ct_plan *pl, int c, uint64_t size, long fast, bool *did,
                  struct ct_err *err)
{
    const struct ct_plan_grid *g = &pl->g[c];
    const struct ct_sweep_point *f = ct_plan_pt(pl, fast);
    int k = ct_plan_slot(g, f->algo), lo = -1, hi = -1;
    for (int i = 0; k >= 0 && i < pl->L; i++) {
        if (!g->count[i])
            continue;
        if (g->size[i] < size)
            lo = i;
        else if (g->size[i] > size && hi < 0)
            hi = i;
    }
    int side[2] = {lo, hi};
    struct ct_params params = f->params;
    for (int q = 0; q < 2; q++) {
        int i = side[q];
        if (i < 0 || ct_plan_best(pl, c, k, i) >= 0)
            continue;
        double ts = ct_plan_iter_s(pl, c, k, i);
        double cost = ct_plan_point_cost(pl, ts, (int)(tune_allowance(pl, ts) / ts));
        if (!fits(pl, cost, 1.0))
            continue;
        long idx;
        CT_TRY(ct_plan_measure(pl, c, k, i, &params, tune_allowance(pl, ts),
                               ct_plan_leader(pl, c, i), &idx, err));
        *did = true;
    }
    return 0;
}

/*
 * A rule's choice beaten clearly at its check size rests on the grid sizes of its range where
 * it was measured: those are measured afresh, the choice and the check's winner one after the
 * other. Their samples may be from another state of the machine than the check's, and each
 * check would otherwise only narrow the range around them (2 ranks, AllReduce: mesh kept
 * 4.00 KiB..4.00 KiB from a survey that took 0.60 us at 4 KiB, against 1.4-2.4 us at 4,092 and
 * 4,100 B measured later, and verify measured it 2.3x behind symm).
 */
static int support_again(struct ct_plan *pl, int c, const struct ct_rule *r, long chosen, long fast,
                         struct ct_err *err)
{
    const struct ct_plan_grid *g = &pl->g[c];
    const struct ct_sweep_point *x = ct_plan_pt(pl, chosen), *y = ct_plan_pt(pl, fast);
    int kx = ct_plan_slot(g, x->algo), ky = ct_plan_slot(g, y->algo);
    struct ct_params px = x->params, py = y->params;
    for (int i = 0; kx >= 0 && ky >= 0 && i < pl->L; i++) {
        if (!g->count[i] || g->size[i] < r->min_bytes || g->size[i] >= r->max_bytes)
            continue;
        long a = point_at(pl, c, g->size[i], kx, &px), b = point_at(pl, c, g->size[i], ky, &py);
        if (a < 0 || b < 0)
            continue;
        double ta = ct_plan_iter_s(pl, c, kx, i), tb = ct_plan_iter_s(pl, c, ky, i);
        double need = ct_plan_point_cost(pl, ta, (int)(tune_allowance(pl, ta) / ta)) +
                      ct_plan_point_cost(pl, tb, (int)(tune_allowance(pl, tb) / tb));
        if (!fits(pl, need, 1.0))
            return 0;
        CT_TRY(extend(pl, a, true, tune_allowance(pl, ta), err));
        CT_TRY(extend(pl, b, true, tune_allowance(pl, tb), err));
    }
    return 0;
}

/* One draft rule where verify will check it: its choice, every other candidate at its
 * defaults (stopping early once clearly slower than the choice), then each candidate still
 * close, again right after the choice (A B A B); a library's own decision always, afresh
 * (interleave: in a library sweep it is what the rule changes, and samples taken in another
 * moment of the machine said 2.8 us against 1.5 where both ran 1.3-1.5 side by side). A setting
 * already measured at that size (a grid size) is measured afresh, its old samples dropped
 * (support_again). Once per choice and size (a rule that did not move is not checked again). *did:
 * something was measured. */
static int check_rule(struct ct_plan *pl, int c, const struct ct_ruleset *s,
                      const struct ct_rule *r, struct checked **done, size_t *ndone, bool *did,
                      struct ct_err *err)
{
    const struct ct_plan_grid *g = &pl->g[c];
    uint64_t count, size = check_size(pl, s, r, &count);
    int i = ct_plan_nearest(pl, c, size), kc = ct_plan_slot(g, r->algo);
    if (i < 0 || kc < 0 || was_checked(pl, c, s, r, *done, *ndone))
        return 0;
    struct ct_params def;
    memset(&def, 0, sizeof def);
    long have[CT_SWEEP_MAX_CANDS]; /* the settings verify measures, where already measured */
    double need = 0;
    int nk = g->nalgos < CT_SWEEP_MAX_CANDS ? g->nalgos : CT_SWEEP_MAX_CANDS;
    for (int k = 0; k < nk; k++) {
        double ts = ct_plan_iter_s(pl, c, k, i);
        have[k] = point_at(pl, c, size, k, k == kc ? &r->params : &def);
        need += ct_plan_point_cost(pl, ts, (int)(tune_allowance(pl, ts) / ts));
    }
    if (kc >= nk || !fits(pl, need, 1.0))
        return 0;
    *did = true;
    *done = ct_xrealloc(*done, sizeof **done * (*ndone + 1));
    struct checked *mark = &(*done)[(*ndone)++];
    mark->c = c;
    mark->size = size;
    snprintf(mark->algo, sizeof mark->algo, "%s", r->algo);
    mark->params = r->params;
    long chosen = have[kc], alt[CT_SWEEP_MAX_CANDS];
    int na = 0;
    double tc = ct_plan_iter_s(pl, c, kc, i);
    if (chosen < 0)
        CT_TRY(ct_plan_measure_at(pl, c, kc, i, count, &r->params, tune_allowance(pl, tc), -1,
                                  &chosen, err));
    else
        CT_TRY(extend(pl, chosen, true, tune_allowance(pl, tc), err));
    if (chosen < 0)
        return 0;
    for (int k = 0; k < nk; k++) {
        double ts = ct_plan_iter_s(pl, c, k, i);
        long idx = have[k];
        if (k == kc)
            continue;
        if (idx < 0)
            CT_TRY(ct_plan_measure_at(pl, c, k, i, count, &def, tune_allowance(pl, ts), chosen,
                                      &idx, err));
        else
            CT_TRY(extend(pl, idx, true, tune_allowance(pl, ts), err));
        if (idx >= 0)
            alt[na++] = idx;
    }
    for (int q = 0; q < na; q++) {
        const struct ct_sweep_point *a = ct_plan_pt(pl, alt[q]), *b = ct_plan_pt(pl, chosen);
        if (ct_select_library_default(a->algo)) { /* what the rule changes: side by side */
            CT_TRY(interleave(pl, chosen, alt[q], 1.0, err));
            continue;
        }
        if (ct_select_prunable(&a->st, &b->st, pl->cfg->margin) ||
            !fits(pl, 2 * (a->st.spent_s + b->st.spent_s) + 2 * pl->cost.fixed, 1.0))
            continue;
        CT_TRY(extend(pl, chosen, false, 0, err));
        CT_TRY(extend(pl, alt[q], false, 0, err));
    }
    long fast = chosen;
    for (int q = 0; q < na; q++)
        if (ct_plan_pt(pl, alt[q])->st.median < ct_plan_pt(pl, fast)->st.median)
            fast = alt[q];
    if (fast != chosen &&
        ct_select_wins(&ct_plan_pt(pl, fast)->st, &ct_plan_pt(pl, chosen)->st, pl->cfg->margin))
        CT_TRY(support_again(pl, c, r, chosen, fast, err));
    return beside(pl, c, size, fast, did, err);
}

/* The rules of collective c selected from every point so far, shaped as the config's. */
static bool draft_rules(const struct ct_plan *pl, int c, struct ct_ruleset *s)
{
    const struct ct_sweep_cfg *cfg = pl->cfg;
    if (!pl->g[c].count || ct_select_rules(pl->run.res->pts, pl->run.res->n, (enum ct_coll)c,
                                           cfg->margin, s, NULL) < 0)
        return false;
    ct_sweep_rules_fit(cfg, pl->run.res->pts, pl->run.res->n, s); /* as the config's */
    s->nranks = cfg->job.shape.nranks;
    s->dtype = cfg->job.dtype;
    return true;
}

int ct_plan_check(struct ct_plan *pl, struct ct_err *err)
{
    pl->phase = "check";
    struct checked *done = NULL;
    size_t ndone = 0;
    int rc = 0;
    for (int round = 0; round < CHECK_ROUNDS && rc == 0; round++) {
        bool did = false;
        for (int c = 0; c < CT_COLL_COUNT; c++) {
            struct ct_ruleset s;
            if (!draft_rules(pl, c, &s))
                continue;
            pl->est_left = (long)s.nrules * pl->g[c].nalgos;
            for (int r = 0; r < s.nrules && rc == 0; r++)
                rc = check_rule(pl, c, &s, &s.rules[r], &done, &ndone, &did, err);
            ct_ruleset_release(&s);
        }
        if (!did)
            break;
    }
    /* the final rules: how many were measured where verify will check them */
    struct ct_sweep_result *res = pl->run.res;
    res->checked = res->ranges = 0;
    for (int c = 0; c < CT_COLL_COUNT && rc == 0; c++) {
        struct ct_ruleset s;
        if (!draft_rules(pl, c, &s))
            continue;
        for (int r = 0; r < s.nrules; r++) {
            res->ranges++;
            res->checked += was_checked(pl, c, &s, &s.rules[r], done, ndone);
        }
        ct_ruleset_release(&s);
    }
    free(done);
    return rc;
}
