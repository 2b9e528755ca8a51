/* SPDX-License-Identifier: MIT */
/*
 * Paired launches: side A (a change: an exported file loaded) against side B (without it),
 * one launch of each side per pair (per part, where the sizes are split: the two back to
 * back), the pairs' order alternating (A B, B A, A B, ...) so a machine
 * that drifts over the launches favours neither side. CT_PAIRED_MIN pairs at every size (or
 * as many as the caller asks for); then, while a size is open, more pairs of the open sizes
 * and the controls near them only, up to CT_PAIRED_MAX (or that many). A size with controls near it
 * is also judged against them pair by pair (ct_paired_local, stats.h).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../algos/coll.h"
#include "../backend/bench.h"
#include "../lib/err.h"
#include "../lib/parse.h"
#include "stats.h"
#include "sweep.h"

bool ct_paired_slower(const struct ct_ratio *q)
{
    return q->lo > CT_PAIRED_TOL;
}

bool ct_paired_faster(const struct ct_ratio *q)
{
    return q->ratio > 0 && q->hi * CT_PAIRED_TOL < 1;
}

/* Sizes a and b ran in one process: split is 0 (one for all) or both lie on one side of it. */
static bool same_launch(uint64_t a, uint64_t b, uint64_t split)
{
    return !split || (a <= split) == (b <= split);
}

/* Each other size's controls: the nearest up to CT_PAIRED_NCTL / 2 below it and as many
 * above, within CT_PAIRED_NEAR and on its side of split (sz sorted); -1 ends the list. */
static void find_near(const uint64_t *sz, int nsz, const bool *control, uint64_t split,
                      int (*near)[CT_PAIRED_NCTL])
{
    for (int k = 0; k < nsz; k++) {
        int n = 0, below = 0, above = 0;
        bool own = !control || control[k]; /* a control has none */
        for (int j = k - 1; !own && j >= 0 && below < CT_PAIRED_NCTL / 2; j--)
            if (control[j] && (double)sz[j] * CT_PAIRED_NEAR >= (double)sz[k] &&
                same_launch(sz[j], sz[k], split))
                near[k][n++] = j, below++;
        for (int j = k + 1; !own && j < nsz && above < CT_PAIRED_NCTL / 2; j++)
            if (control[j] && (double)sz[k] * CT_PAIRED_NEAR >= (double)sz[j] &&
                same_launch(sz[j], sz[k], split))
                near[k][n++] = j, above++;
        for (; n < CT_PAIRED_NCTL; n++)
            near[k][n] = -1;
    }
}

/* Size j's pair from round r: its index, -1 when j did not run in that round. */
static int pair_of(const struct ct_paired *p, int j, int r)
{
    for (int i = 0; i < p->n[j]; i++)
        if (p->round[j][i] == r)
            return i;
    return -1;
}

/* Size k's log ratio A/B in its pair i, less the mean log ratio of its controls in the same
 * round where it has any (nb of them): false when one of those did not run in that round. */
static bool local_log(const struct ct_paired *p, int k, int i, int nb, double *x)
{
    double lc = 0; /* the log of the controls' geomean ratio in this round */
    for (int e = 0; e < nb; e++) {
        int j = p->near[k][e], c = pair_of(p, j, p->round[k][i]);
        if (c < 0 || !(p->a[j][c] > 0) || !(p->b[j][c] > 0))
            return false;
        lc += log(p->a[j][c] / p->b[j][c]);
    }
    if (!(p->a[k][i] > 0) || !(p->b[k][i] > 0))
        return false;
    *x = log(p->a[k][i] / p->b[k][i]) - (nb ? lc / nb : 0);
    return true;
}

static int ncontrols(const struct ct_paired *p, int k)
{
    int nb = 0;
    while (nb < CT_PAIRED_NCTL && p->near[k][nb] >= 0)
        nb++;
    return nb;
}

/* exp(x[0..n)) against 1 with ct_stats_ratio_paired_at's interval for tail: n when it has
 * one, else 0 */
static int ratio_of_logs(const double *x, int n, double tail, struct ct_ratio *q)
{
    double a[2 * CT_PAIRED_CAP], one[2 * CT_PAIRED_CAP];
    for (int i = 0; i < n; i++)
        a[i] = exp(x[i]), one[i] = 1;
    memset(q, 0, sizeof *q);
    if (n >= 2)
        ct_stats_ratio_paired_at(a, one, n, tail, q);
    return q->ratio > 0 ? n : 0;
}

int ct_paired_local(const struct ct_paired *p, int k, struct ct_ratio *q)
{
    double x[CT_PAIRED_CAP];
    int n = 0, nb = ncontrols(p, k);
    for (int i = 0; nb && i < p->n[k]; i++)
        n += local_log(p, k, i, nb, &x[n]);
    memset(q, 0, sizeof *q);
    return nb ? ratio_of_logs(x, n, 0.025, q) : 0;
}

/* Group g's log ratio in each round of p where all of its sizes ran, appended to x[n..) */
static int gain_rounds(const struct ct_paired *p, int g, double *x, int n)
{
    for (int r = 0; p->group && r < p->rounds; r++) {
        double sum = 0;
        int got = 0, want = 0;
        for (int k = 0; k < p->nsz; k++) {
            if (p->group[k] != g)
                continue;
            int i = pair_of(p, k, r);
            double y;
            want++;
            if (i >= 0 && local_log(p, k, i, ncontrols(p, k), &y))
                sum += y, got++;
        }
        if (want && got == want)
            x[n++] = sum / got;
    }
    return n;
}

/* The last look's tails, by the looks after the first (p->max - p->min), found for
 * CT_PAIRED_MIN 3, CT_PAIRED_MAX 8 and CT_PAIRED_EARLY 0.0025 (stats.h): a change to any of
 * them wants the table found again (test_paired_seq checks it against them) */
_Static_assert(CT_PAIRED_MIN == 3 && CT_PAIRED_MAX == 8, "ct_paired_gain_tail's table");

double ct_paired_gain_tail(const struct ct_paired *p, int n, bool again)
{
    static const double final[] = {0.025, 0.0248, 0.0240, 0.0229, 0.0217, 0.0199};
    int k = p->max - p->min;
    return again || n < p->max ? CT_PAIRED_EARLY : final[k < 0 ? 0 : k > 5 ? 5 : k];
}

int ct_paired_group(const struct ct_paired *p, const struct ct_paired *again, int g, double tail,
                    struct ct_ratio *q)
{
    double x[2 * CT_PAIRED_CAP];
    int n = gain_rounds(p, g, x, 0), m = again ? gain_rounds(again, g, x, n) : n;
    return ratio_of_logs(x, m, tail > 0 ? tail : ct_paired_gain_tail(p, m, m > n), q);
}

int ct_paired_gain_both(const struct ct_paired *p, const struct ct_paired *again, int g,
                        struct ct_ratio *q)
{
    return ct_paired_group(p, again, g, 0, q);
}

int ct_paired_gain(const struct ct_paired *p, int g, struct ct_ratio *q)
{
    return ct_paired_gain_both(p, NULL, g, q);
}

bool ct_paired_gains(const struct ct_ratio *q)
{
    return q->ratio > 0 && q->hi < 1 && q->ratio * CT_PAIRED_TOL < 1;
}

/* Open: A may be more than CT_PAIRED_TOL slower, by its ratio as measured or against the
 * controls near it. Such a size takes pairs up to p->max, whatever its interval says
 * before: an AllGather verify flagged 8 B, both sides Open MPI's default, at 1.130 [1.070,
 * 1.193] after 3 pairs, and 6 alternating launches of 20,000 iterations each then read 0.57
 * us on both sides. Unless it is settled: its interval, and its interval against the controls
 * where it has them, wholly above CT_PAIRED_SETTLED (a loss of that size is no launch's noise,
 * and a size found slower is measured again in fresh launches before it counts). */
static bool open_size(const struct ct_paired *p, int k)
{
    struct ct_ratio q, ql;
    ct_stats_ratio_paired(p->a[k], p->b[k], p->n[k], &q);
    bool local = ct_paired_local(p, k, &ql) > 0;
    if (q.lo > CT_PAIRED_SETTLED && (!local || ql.lo > CT_PAIRED_SETTLED))
        return false;
    return q.ratio > CT_PAIRED_TOL || (local && ql.ratio > CT_PAIRED_TOL);
}

/* Group g may gain but has not shown it (at the look's tail): its ratio is below 1 and its
 * 95% interval still holds a gain past CT_PAIRED_TOL (a steady 2% gain is settled: too small
 * to ship). Giving up on a gain takes no chance of a false one, so the 95% interval, not the
 * look's wider one, says when there is none to wait for. */
static bool open_gain(const struct ct_paired *p, int g)
{
    struct ct_ratio q;
    if (ct_paired_gain(p, g, &q) < 2)
        return true;
    if (ct_paired_gains(&q))
        return false;
    ct_paired_group(p, NULL, g, 0.025, &q);
    return q.ratio < 1 && q.lo * CT_PAIRED_TOL < 1;
}

int ct_paired_measure(const uint64_t *sz, int nsz, const bool *control, const int *group, int pairs,
                      uint64_t split, ct_paired_launch_fn launch, void *ctx, struct ct_paired *p)
{
    size_t m = nsz > 0 ? (size_t)nsz : 1;
    p->rounds = 0;
    p->min = pairs < CT_PAIRED_MIN ? CT_PAIRED_MIN : pairs > CT_PAIRED_CAP ? CT_PAIRED_CAP : pairs;
    p->max = p->min > CT_PAIRED_MAX ? p->min : CT_PAIRED_MAX;
    p->nsz = nsz;
    p->group = NULL;
    if (group) {
        p->group = ct_xmalloc(m * sizeof *p->group);
        memcpy(p->group, group, (size_t)nsz * sizeof *p->group);
    }
    p->a = ct_xcalloc(m, sizeof *p->a);
    p->b = ct_xcalloc(m, sizeof *p->b);
    p->round = ct_xcalloc(m, sizeof *p->round);
    p->n = ct_xcalloc(m, sizeof *p->n);
    p->near = ct_xcalloc(m, sizeof *p->near);
    find_near(sz, nsz, control, split, p->near);
    uint64_t *run = ct_xcalloc(m, sizeof *run);
    double *t = ct_xcalloc(m, sizeof *t);
    int *idx = ct_xcalloc(m, sizeof *idx), code = 0;
    bool *go = ct_xcalloc(m, sizeof *go);
    int ngroups = 0;
    for (int k = 0; group && k < nsz; k++)
        ngroups = group[k] >= ngroups ? group[k] + 1 : ngroups;
    bool *gopen = ct_xcalloc(ngroups ? (size_t)ngroups : 1, sizeof *gopen);
    for (int r = 0; r < p->max && !code; r++) {
        int nrun = 0;
        for (int g = 0; r >= p->min && g < ngroups; g++) /* each group once a round */
            gopen[g] = open_gain(p, g);
        for (int k = 0; k < nsz; k++)
            go[k] = r < p->min || open_size(p, k) || (group && group[k] >= 0 && gopen[group[k]]);
        for (int k = 0; k < nsz; k++) /* an open size's controls run with it */
            for (int e = 0; e < CT_PAIRED_NCTL; e++)
                if (go[k] && p->near[k][e] >= 0)
                    go[p->near[k][e]] = true;
        for (int k = 0; k < nsz; k++) /* in order: the launch gets its sizes sorted */
            if (go[k])
                idx[nrun++] = k;
        if (!nrun)
            break;
        for (int i = 0; i < nrun; i++)
            run[i] = sz[idx[i]];
        int nlo = 0; /* the sizes up to split: run[0..nlo), sorted */
        while (split && nlo < nrun && run[nlo] <= split)
            nlo++;
        /* each part's two sides back to back (A B, or B A: a pair's launches moments apart,
         * the small sizes' pair not parted by the other side's large ones: this VM's speed
         * moves within seconds) */
        for (int part = 0; part < (split ? 2 : 1) && !code; part++) {
            int lo = part ? nlo : 0, hi = split && !part ? nlo : nrun;
            for (int i = 0; i < 2 && !code && lo < hi; i++) {
                bool with = (i == 0) == (r % 2 == 0);
                code = launch(ctx, with, run + lo, hi - lo, t + lo);
                for (int j = lo; j < hi && !code; j++)
                    (with ? p->a : p->b)[idx[j]][p->n[idx[j]]] = t[j];
            }
        }
        for (int j = 0; j < nrun && !code; j++)
            p->round[idx[j]][p->n[idx[j]]++] = r;
        p->rounds++;
    }
    free(run);
    free(t);
    free(idx);
    free(go);
    free(gopen);
    return code;
}

static int engine_launch(void *arg, bool with, const uint64_t *sz, int n, double *t)
{
    struct ct_paired_engine *e = arg;
    const struct ct_coll_desc *d = ct_coll_desc(e->job.coll);
    size_t es = ct_dtype_size(e->job.dtype);
    CT_TRY(e->side(e->arg, with, e->err));
    for (int k = 0; k < n; k++) {
        struct ct_job j = e->job;
        struct ct_bench_cfg bc = {e->iters, e->warmup, 0, e->reps, 0};
        struct ct_point pt;
        j.count = d->count_for(sz[k], es, j.shape.nranks);
        j.in_place = false;
        CT_TRY(ct_backend_point(e->be, e->ctx, NULL, &j, &bc, &pt, e->err));
        if (!isfinite(pt.time_us) || !(pt.time_us > 0)) /* a ratio of it means nothing */
            return ct_err_set(e->err, CT_EIO, "%s %llu bytes: a time of %g us measured", d->name,
                              (unsigned long long)sz[k], pt.time_us);
        t[k] = pt.time_us;
    }
    return 0;
}

int ct_paired_engine_measure(struct ct_paired_engine *e, const uint64_t *sz, int nsz,
                             const bool *control, const int *group, struct ct_paired *p)
{
    return ct_paired_measure(sz, nsz, control, group, e->pairs, 0, engine_launch, e,
                             p); /* one process */
}

int ct_paired_engine_again(struct ct_paired_engine *e, const struct ct_paired *p,
                           const uint64_t *sz, const bool *control,
                           const struct ct_paired_row *rows, struct ct_paired_redo *r,
                           bool *cleared)
{
    return ct_paired_again(p, sz, control, rows, true, 0, engine_launch, e, r, cleared);
}

double ct_paired_tell(const struct ct_ratio *q)
{
    return q->ratio > 0 && q->hi > 0 ? CT_PAIRED_TOL * q->hi / q->ratio : 0;
}

/* sum's tell: the median of rows' tells over the sizes the file tunes (all where none), and
 * where the widest is (ct_paired_row) */
static void tell_sum(const struct ct_paired_row *rows, const bool *control, int nsz,
                     struct ct_paired_sum *sum)
{
    double *t = ct_xcalloc(nsz > 0 ? (size_t)nsz : 1, sizeof *t);
    int n = 0;
    for (int pass = 0; pass < 2 && !n; pass++) /* a measure of settings: no size tuned */
        for (int k = 0; k < nsz; k++)
            if ((pass || !control || !control[k]) && rows[k].tell > 0) {
                if (!n++ || rows[k].tell > rows[sum->tell_k].tell)
                    sum->tell_k = k;
                t[n - 1] = rows[k].tell;
            }
    struct ct_stats st;
    ct_stats_compute(t, n, &st); /* n 0: zeroed */
    sum->n_tell = n;
    sum->tell = st.median;
    free(t);
}

void ct_paired_judge(const struct ct_paired *p, const bool *control, int nsz,
                     struct ct_paired_row *rows, struct ct_paired_sum *sum)
{
    double lg = 0, lg_own = 0, lg_loc = 0;
    memset(sum, 0, sizeof *sum);
    for (int k = 0; k < nsz; k++) {
        struct ct_paired_row *w = &rows[k];
        w->n = p->n[k];
        w->ma = ct_stats_geomean(p->a[k], w->n);
        w->mb = ct_stats_geomean(p->b[k], w->n);
        ct_stats_ratio_paired(p->a[k], p->b[k], w->n, &w->q); /* a pair's launches side by side */
        w->nl = ct_paired_local(p, k, &w->ql);                /* and against its controls */
        w->slow_measured = ct_paired_slower(&w->q);
        w->slow_local = w->nl && ct_paired_slower(&w->ql);
        w->slower = w->slow_measured || w->slow_local;
        double tl = w->nl ? ct_paired_tell(&w->ql) : 0;
        w->tell = ct_paired_tell(&w->q);
        if (tl > 0 && tl < w->tell)
            w->tell = tl; /* the narrower: either verdict counts */
        sum->slower += w->slower;
        lg += log(w->q.ratio);
        if (control && control[k]) {
            lg_own += log(w->q.ratio);
            sum->n_own++;
        } else if (w->nl) {
            lg_loc += log(w->ql.ratio);
            sum->n_loc++;
        }
        if (w->q.ratio > sum->worst) {
            sum->worst = w->q.ratio;
            sum->worst_k = k;
        }
    }
    sum->geo = sum->swept = nsz ? exp(lg / nsz) : 0;
    sum->n_swept = nsz;
    sum->own = sum->n_own ? exp(lg_own / sum->n_own) : 0;
    sum->tuned = sum->n_own < nsz ? exp((lg - lg_own) / (nsz - sum->n_own)) : 0;
    sum->local = sum->n_loc ? exp(lg_loc / sum->n_loc) : 0;
    tell_sum(rows, control, nsz, sum);
}

void ct_paired_swept(const struct ct_paired_row *rows, const bool *swept, int nsz,
                     struct ct_paired_sum *sum)
{
    double lg = 0;
    int n = 0;
    for (int pass = 0; pass < 2 && !n; pass++) /* none swept (no whole element there): all */
        for (int k = 0; k < nsz; k++)
            if (pass || !swept || swept[k])
                lg += log(rows[k].q.ratio), n++;
    sum->swept = n ? exp(lg / n) : 0;
    sum->n_swept = n;
}

void ct_paired_rules(const struct ct_paired *p, const struct ct_paired *again,
                     const struct ct_ruleset *s, const struct ct_rule *const *rule,
                     const bool *control, const struct ct_paired_row *rows, int nsz, bool *slow,
                     bool *nogain, struct ct_ratio *gain, int *rounds)
{
    for (int r = 0; r < s->nrules; r++) {
        bool checked = false, any = false; /* some size of the file's rule r: judged on its
                                            * gain, once */
        for (int k = 0; k < nsz; k++) {
            any |= rule[k] == &s->rules[r];
            if (!control[k] && rule[k] == &s->rules[r]) {
                checked = true;
                slow[r] |= rows[k].slower;
            }
        }
        if (checked) {
            rounds[r] = ct_paired_gain_both(p, again, r, &gain[r]);
            nogain[r] = !ct_paired_gains(&gain[r]);
        } else if (!any && s->rules[r].id != 0)
            nogain[r] = true; /* a rule no size measured (sizes ran out): no gain shown */
    }
}

int ct_paired_again(const struct ct_paired *p, const uint64_t *sz, const bool *control,
                    const struct ct_paired_row *rows, bool groups, uint64_t split,
                    ct_paired_launch_fn launch, void *ctx, struct ct_paired_redo *r, bool *cleared)
{
    int nsz = p->nsz, code;
    size_t m = nsz > 0 ? (size_t)nsz : 1;
    bool *in = ct_xcalloc(m, sizeof *in), *ctl = ct_xcalloc(m, sizeof *ctl);
    uint64_t *again = ct_xcalloc(m, sizeof *again);
    int *grp = ct_xcalloc(m, sizeof *grp);
    memset(r, 0, sizeof *r);
    r->map = ct_xcalloc(m, sizeof *r->map);
    r->rows = ct_xcalloc(m, sizeof *r->rows);
    for (int k = 0; k < nsz; k++) { /* a slower size, with the sizes of its group */
        cleared[k] = false;
        int g = groups && p->group && rows[k].slower ? p->group[k] : -1;
        for (int j = 0; j < nsz; j++)
            in[j] |= j == k ? rows[k].slower : g >= 0 && p->group[j] == g;
    }
    for (int k = 0; k < nsz; k++) /* and their controls, to run beside them */
        for (int e = 0; in[k] && e < CT_PAIRED_NCTL && p->near[k][e] >= 0; e++)
            in[p->near[k][e]] = true; /* a control has none of its own */
    for (int k = 0; k < nsz; k++)
        if (in[k]) {
            r->map[r->n] = k;
            grp[r->n] = p->group ? p->group[k] : -1;
            again[r->n] = sz[k];
            ctl[r->n++] = control && control[k];
        }
    struct ct_paired_sum t;
    code = r->n ? ct_paired_measure(again, r->n, ctl, groups && p->group ? grp : NULL, p->min,
                                    split, launch, ctx, &r->q)
                : 0;
    r->measured = r->n > 0;
    if (r->n && !code) {
        ct_paired_judge(&r->q, ctl, r->n, r->rows, &t);
        for (int j = 0; j < r->n; j++)
            cleared[r->map[j]] = rows[r->map[j]].slower && !r->rows[j].slower;
    }
    free(in);
    free(ctl);
    free(again);
    free(grp);
    return code;
}

void ct_paired_redo_release(struct ct_paired_redo *r)
{
    if (r->measured)
        ct_paired_release(&r->q);
    free(r->map);
    free(r->rows);
    memset(r, 0, sizeof *r);
}

/* The size a geometric half of the way from a to b > a, in (a, b]. */
static uint64_t mid_bytes(uint64_t a, uint64_t b)
{
    uint64_t m = (uint64_t)llround(sqrt((double)a * (double)b));
    return m <= a ? a + 1 : m > b ? b : m;
}

/* The sizes of q that drop marks (by their index in the first measure: map[j], or j where
 * map is NULL) taken out of their groups for now (was[] keeps each one's), or put back
 * (restore). */
static void hide_sizes(struct ct_paired *q, const int *map, const bool *drop, int *was,
                       bool restore)
{
    for (int j = 0; q->group && j < q->nsz; j++)
        if (drop[map ? map[j] : j]) {
            if (restore)
                q->group[j] = was[j];
            else
                was[j] = q->group[j], q->group[j] = -1;
        }
}

void ct_paired_trim(struct ct_paired *p, struct ct_paired_redo *again, const struct ct_ruleset *s,
                    int r, const uint64_t *sz, const struct ct_rule *const *rule,
                    const bool *control, const struct ct_paired_row *rows, int nsz,
                    struct ct_paired_cut *cut)
{
    const struct ct_rule *x = &s->rules[r];
    int *k = ct_xmalloc((nsz > 0 ? (size_t)nsz : 1) * sizeof *k), n = 0;
    memset(cut, 0, sizeof *cut);
    for (int i = 0; i < nsz; i++)
        if (!control[i] && rule[i] == x)
            k[n++] = i;
    int a = 0, b = n - 1; /* the kept sizes: k[a..b] */
    while (a < n && rows[k[a]].slower)
        a++;
    while (b >= a && rows[k[b]].slower)
        b--;
    bool inner = false; /* a slower size between kept ones */
    for (int i = a; i <= b; i++)
        inner |= rows[k[i]].slower;
    if (p->group && a <= b && (a > 0 || b < n - 1) && !inner) {
        struct ct_paired *q = again && again->measured ? &again->q : NULL;
        size_t m = (size_t)nsz, mq = q && q->nsz > 0 ? (size_t)q->nsz : 1;
        bool *drop = ct_xcalloc(m, sizeof *drop);
        int *was = ct_xmalloc(m * sizeof *was), *was_q = ct_xmalloc(mq * sizeof *was_q);
        for (int i = 0; i < n; i++)
            drop[k[i]] = i < a || i > b;
        hide_sizes(p, NULL, drop, was, false); /* judged over the kept sizes alone */
        if (q)
            hide_sizes(q, again->map, drop, was_q, false);
        int rounds = ct_paired_gain_both(p, q, r, &cut->gain);
        hide_sizes(p, NULL, drop, was, true);
        if (q)
            hide_sizes(q, again->map, drop, was_q, true);
        free(drop);
        free(was);
        free(was_q);
        if (ct_paired_gains(&cut->gain)) {
            cut->rounds = rounds;
            cut->lo = a > 0 ? mid_bytes(sz[k[a - 1]], sz[k[a]]) : x->min_bytes;
            cut->hi = b < n - 1 ? mid_bytes(sz[k[b]], sz[k[b + 1]]) : x->max_bytes;
        }
    }
    free(k);
}

void ct_paired_release(struct ct_paired *p)
{
    free(p->a);
    free(p->b);
    free(p->n);
    free(p->round);
    free(p->near);
    free(p->group);
    p->group = NULL;
    p->a = p->b = NULL;
    p->n = NULL;
    p->round = NULL;
    p->near = NULL;
}

/* Sizes verify checks for s (at most max): the sweep's sizes, as run measures them (whole
 * elements of the collective's buffers; where a small --stepfactor gives more than max / 2
 * distinct ones, max / 2 of them spread evenly on the log scale, the smallest and the largest
 * among them), and every range's geometric midpoint, where the native verify checks a rule
 * (ct_sweep_check_count), the last range's taken to the largest swept size; sorted, unique. */
int ct_paired_sizes(const struct ct_sweep_settings *w, const struct ct_ruleset *s, uint64_t *out,
                    bool *swept, int max)
{
    size_t es = ct_dtype_size(s->dtype);
    const struct ct_coll_desc *d = ct_coll_desc(s->coll);
    size_t g = 0, cap = 64;
    uint64_t *all = ct_xcalloc(cap, sizeof *all); /* every distinct size of the sweep's grid */
    for (double sz = (double)w->minbytes; sz <= (double)w->maxbytes;
         sz *= w->stepfactor > 1 ? w->stepfactor : 2) {
        uint64_t c = d->count_for((uint64_t)sz, es, s->nranks);
        uint64_t b = c ? d->size_bytes(c, es, s->nranks) : 0;
        if (!c || (g && all[g - 1] == b))
            continue;
        if (g == cap)
            all = ct_xrealloc(all, (cap *= 2) * sizeof *all);
        all[g++] = b;
    }
    int n = 0, k = max / 2;
    for (size_t i = 0; i < g; i++) /* all, or k spread over them (the first and the last) */
        if (g <= (size_t)k || (n < k && i == (size_t)n * (g - 1) / (size_t)(k - 1)))
            out[n++] = all[i];
    free(all);
    int ng = n; /* the sweep's own: out[0..ng) until the sort, kept for swept's marks */
    uint64_t *grid =
        swept && ng ? memcpy(ct_xcalloc((size_t)ng, sizeof *grid), out, (size_t)ng * sizeof *grid)
                    : NULL;
    for (int i = 0; i < s->nrules && n < max; i++) {
        struct ct_rule r = s->rules[i];
        if (r.max_bytes == CT_BYTES_INF)
            r.max_bytes = w->maxbytes;
        out[n++] =
            d->size_bytes(ct_sweep_check_count(s, &r, w->minbytes, w->maxbytes), es, s->nranks);
    }
    n = (int)ct_sizes_sort_unique(out, (size_t)n);
    for (int k = 0; swept && k < n; k++) {
        swept[k] = false;
        for (int j = 0; j < ng; j++)
            swept[k] |= out[k] == grid[j];
    }
    free(grid);
    return n;
}
