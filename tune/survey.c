/* SPDX-License-Identifier: MIT */
/*
 * Phase 1 of the sweep plan: every candidate at its default parameters at every size,
 * sizes ascending and collectives interleaved, clear losers skipped and re-probed.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan.h"
#include "select.h"
#include "stats.h"

#define SURVEY_SHARE 0.6 /* of the budget, for the survey (unless it needs more) */
#define SURVEY_MAX_K 3   /* survey points: at most 3 x min_iters iterations each */
#define RESERVE 0.1      /* of the budget, kept for tuning when the survey is tight */

/* ---- phase 1: survey ----------------------------------------------------------------- */

/*
 * Skip algorithm k at size i: it lost clearly at the last two sizes it was measured at (the
 * last one only, when the budget is tight), the last of them at most 3 sizes back: losers
 * are re-probed every fourth size. Under a tight budget the simplest candidate is never
 * skipped: a tie falls back to it.
 */
static bool skip_ahead(const struct ct_plan *pl, int c, int k, int i, bool tight)
{
    if (ct_select_library_default(pl->g[c].algos[k]->name))
        return false; /* the reference of every library rule: measured at every size */
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
 * A second visit to size i of c, once every candidate has had its first, for the
 * candidates that lose there for the second measured size in a row (skip_ahead would skip
 * them at the next size): the leader, then each of those, in the first visit's order, get samples
 * again, appended (the leader half as many as it has, a loser as many, so that each
 * visit holds half of its samples; a loser's stop once it still loses clearly over both).
 * A candidate is skipped only for losses over samples from two visits: on the emulated
 * cluster (four ranks on two cores) a spell of the host's noise made rdh 1.6x mesh over
 * its 6 samples at 4 and 8 KiB, the survey skipped it to 64 KiB, and 200 iterations in two
 * rounds measured it the fastest or tied there.
 */
static int revisit(struct ct_plan *pl, int c, int i, const int *order, struct ct_err *err)
{
    int n = pl->g[c].nalgos, rc = 0;
    bool any = false;
    for (int k = 0; k < n; k++)
        any = any || (ct_plan_best(pl, c, k, i) >= 0 && skip_ahead(pl, c, k, i + 1, false));
    if (any)
        rc = ct_plan_extend(pl, ct_plan_leader(pl, c, i), false, 0, 0, -1, err);
    for (int o = 0; o < n && any && rc == 0; o++) {
        long b = ct_plan_best(pl, c, order[o], i);
        if (b >= 0 && skip_ahead(pl, c, order[o], i + 1, false)) /* still, after the leader's */
            rc = ct_plan_extend(pl, b, false, 0, ct_plan_pt(pl, b)->st.n, ct_plan_leader(pl, c, i),
                                err);
    }
    return rc;
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
    /* not when the budget is tight (a loss there skips after one size) or spent */
    if (rc == 0 && !tight && !pl->run.res->budget_out)
        rc = revisit(pl, c, i, order, err);
    free(order);
    return rc;
}

/*
 * After the survey: measure what it left out while it judged the budget tight (sizes
 * thinned, candidates cut short or skipped after one loss), up to `until` (the 90% of the
 * budget a tight survey may use itself). Tightness is judged from the costs learned so
 * far, and costs learned in a slow spell of a shared machine made a survey thin sizes that
 * it then had time for. The sweep ran out (is coarser than planned) only if something the
 * untight survey would have measured is still missing.
 */
static int survey_fill(struct ct_plan *pl, double until, bool *gap, struct ct_err *err)
{
    *gap = false;
    for (int i = 0; i < pl->L; i++)
        for (int c = 0; c < CT_COLL_COUNT; c++) {
            struct ct_plan_grid *g = &pl->g[c];
            if (!g->count || !g->count[i])
                continue;
            int *order = ct_xmalloc(sizeof *order * (size_t)(g->nalgos ? g->nalgos : 1));
            promise_order(pl, c, i, order);
            int rc = 0;
            for (int o = 0; o < g->nalgos && rc == 0; o++) {
                int k = order[o];
                if (ct_plan_best(pl, c, k, i) >= 0 || skip_ahead(pl, c, k, i, false))
                    continue;
                double cost =
                    ct_plan_point_cost(pl, ct_plan_iter_s(pl, c, k, i), pl->cfg->min_iters);
                if (ct_plan_now(pl) + cost > until)
                    *gap = true;
                else
                    rc = survey_point(pl, c, k, i, pl->cfg->min_iters, err);
            }
            free(order);
            CT_TRY(rc);
        }
    return 0;
}

int ct_plan_survey(struct ct_plan *pl, struct ct_err *err)
{
    const struct ct_sweep_cfg *cfg = pl->cfg;
    double soft = SURVEY_SHARE * cfg->budget_s;
    bool prev_thinned = false;
    pl->phase = "survey";
    for (int i = 0; i < pl->L; i++) {
        /* tight: not even min_iters each in the survey's share. Then losers are skipped
         * after one loss, sizes get shares of what is left (keeping some for tuning), and
         * every other size is skipped when two candidates each would not fit either. Not
         * before a point has taught the overheads: the prior (5 ms a point) is 50 times
         * what a small point costs here, and judged the default sweep tight at its first
         * size, which then skipped candidates and reported "ran out" after 46 s of 120. */
        bool tight = pl->cost.sw > 0 && survey_allowance(pl, i, soft, false) < cfg->min_iters;
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
    if (pl->run.res->budget_out) {
        bool gap;
        CT_TRY(survey_fill(pl, (1 - RESERVE) * cfg->budget_s, &gap, err));
        pl->run.res->budget_out = gap;
    }
    return 0;
}
