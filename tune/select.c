/* SPDX-License-Identifier: MIT */
/* Crossovers: per-size decisions with tie handling, ranges, interpolated thresholds. */
#include "select.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/parse.h"

bool ct_select_beats(const struct ct_stats *a, const struct ct_stats *b)
{
    return a->hi < b->lo;
}

bool ct_select_wins(const struct ct_stats *a, const struct ct_stats *b, double margin)
{
    return a->hi * (1 + margin) < b->lo;
}

bool ct_select_prunable(const struct ct_stats *cand, const struct ct_stats *leader, double margin)
{
    return cand->lo > leader->hi * (1 + margin);
}

bool ct_select_better_params(const struct ct_stats *variant, const struct ct_stats *current,
                             double margin)
{
    return ct_select_beats(variant, current) && variant->median * (1 + margin) < current->median;
}

/* P(b's median - a's median >= -shift), the difference normal with standard errors from
 * the 95% intervals. */
static double p_not_worse(const struct ct_stats *a, const struct ct_stats *b, double shift)
{
    double sa = (a->hi - a->lo) / (2 * 1.96), sb = (b->hi - b->lo) / (2 * 1.96);
    double d = b->median - a->median + shift, s = sqrt(sa * sa + sb * sb);
    if (!(s > 0))
        return d > 0 ? 1.0 : d < 0 ? 0.0 : shift > 0 ? 1.0 : 0.5;
    return 0.5 * erfc(-d / s / sqrt(2.0));
}

double ct_select_confidence(const struct ct_stats *a, const struct ct_stats *b)
{
    return p_not_worse(a, b, 0);
}

double ct_select_tie_confidence(const struct ct_stats *a, const struct ct_stats *b, double margin)
{
    /* keeping a costs at most the margin (of the smaller median) */
    return p_not_worse(a, b, margin * fmin(a->median, b->median));
}

bool ct_select_library_default(const char *algo)
{
    const char *colon = strchr(algo, ':');
    return colon && !strcmp(colon + 1, "default");
}

int ct_select_simplicity(const char *algo)
{
    for (size_t i = 0; ct_algo_at(i); i++)
        if (!strcmp(ct_algo_at(i)->name, algo))
            return (int)i;
    /* a library engine's rows: its own decision is the simplest, so a tie keeps the
     * library's default */
    return (int)ct_algo_count() + (strchr(algo, ':') && !ct_select_library_default(algo));
}

static bool same_str(const char *a, const char *b)
{
    return (!a && !b) || (a && b && !strcmp(a, b));
}

bool ct_select_same_choice(const char *algo_a, const struct ct_params *a, const char *algo_b,
                           const struct ct_params *b)
{
    if (strcmp(algo_a, algo_b))
        return false;
    const struct ct_algo *al = ct_algo_find(algo_a);
    unsigned mask = al ? ct_algo_params(al, CT_ALLREDUCE) : ~0u;
    struct ct_params x = *a, y = *b; /* 0 is the default: a config omits inflight=1 */
    ct_params_defaults(&x);
    ct_params_defaults(&y);
    for (int p = 0; p < CT_P_COUNT; p++)
        if ((mask & CT_PBIT(p)) && x.v[p] != y.v[p])
            return false;
    return same_str(a->intra, b->intra) && same_str(a->inter, b->inter);
}

/* A point a rule can name: not a forced row that ran the library's own decision (the
 * library's default row measures that). */
static bool valid(const struct ct_sweep_point *p, enum ct_coll coll)
{
    return p->coll == coll && p->wrong == 0 && p->st.n > 0 && !p->own_choice;
}

/* Sizes of coll's valid points, sorted and unique; returns the count. */
static size_t sizes_of(const struct ct_sweep_point *pts, size_t n, enum ct_coll coll,
                       uint64_t **out)
{
    uint64_t *s = ct_xmalloc(sizeof *s * (n ? n : 1));
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (valid(&pts[i], coll))
            s[k++] = pts[i].size;
    *out = s;
    return ct_sizes_sort_unique(s, k);
}

bool ct_select_default_params(const struct ct_sweep_point *p)
{
    struct ct_params d;
    memset(&d, 0, sizeof d);
    for (int q = 0; q < CT_P_COUNT; q++) /* a library row's own value, where it has one */
        d.v[q] = p->own & CT_PBIT(q) ? CT_PARAM_OWN : 0;
    ct_params_defaults(&d);
    d.intra = p->params.intra;
    d.inter = p->params.inter;
    return ct_select_same_choice(p->algo, &p->params, p->algo, &d);
}

/* The selection's rule of one measurement per setting (select.h). */
bool ct_select_superseded(const struct ct_sweep_point *pts, size_t n, size_t i)
{
    for (size_t j = 0; j < n; j++)
        if (j != i && valid(&pts[j], pts[i].coll) && pts[j].size == pts[i].size &&
            (pts[j].st.n > pts[i].st.n || (pts[j].st.n == pts[i].st.n && j > i)) &&
            ct_select_same_choice(pts[j].algo, &pts[j].params, pts[i].algo, &pts[i].params))
            return true;
    return false;
}

/* Best point of each algorithm at one size (idx[] of point indices): its fastest variant,
 * unless that is not clearly better than the variant with default parameters. */
static size_t best_per_algo(const struct ct_sweep_point *pts, size_t n, enum ct_coll coll,
                            uint64_t size, double margin, size_t *idx)
{
    /* the points that count at this size, each setting once */
    size_t *at = ct_xmalloc(sizeof *at * (n ? n : 1)), m = 0, k = 0;
    for (size_t i = 0; i < n; i++)
        if (valid(&pts[i], coll) && pts[i].size == size && !ct_select_superseded(pts, n, i))
            at[m++] = i;
    for (size_t q = 0; q < m; q++) {
        size_t i = at[q], j;
        for (j = 0; j < k && strcmp(pts[idx[j]].algo, pts[i].algo); j++)
            ;
        if (j == k)
            idx[k++] = i;
        else if (pts[i].st.median < pts[idx[j]].st.median)
            idx[j] = i;
    }
    for (size_t q = 0; q < m; q++)
        for (size_t j = 0; j < k; j++)
            if (at[q] != idx[j] && !strcmp(pts[idx[j]].algo, pts[at[q]].algo) &&
                ct_select_default_params(&pts[at[q]]) &&
                !ct_select_better_params(&pts[idx[j]].st, &pts[at[q]].st, margin))
                idx[j] = at[q];
    free(at);
    return k;
}

/* The choice's closest rival (the best point of another algorithm), confidence and gain. */
static void describe(const struct ct_sweep_point *pts, const size_t *idx, size_t k, double margin,
                     size_t lead, size_t chosen, bool tie, struct ct_select_choice *c)
{
    long runner = -1;
    for (size_t j = 0; j < k; j++)
        if (strcmp(pts[idx[j]].algo, pts[chosen].algo) &&
            (runner < 0 || pts[idx[j]].st.median < pts[(size_t)runner].st.median))
            runner = (long)idx[j];
    c->size = pts[lead].size;
    c->leader = (long)lead;
    c->chosen = chosen;
    c->runner = runner;
    c->tie = tie;
    if (runner < 0) {
        c->confidence = 1.0;
        c->gain = 0;
    } else if (c->tie) { /* no gain to claim: how sure are we that it is a tie */
        c->confidence = ct_select_tie_confidence(&pts[chosen].st, &pts[(size_t)runner].st, margin);
        c->gain = 1.0;
    } else {
        const struct ct_stats *a = &pts[chosen].st, *b = &pts[(size_t)runner].st;
        c->confidence = ct_select_confidence(a, b);
        c->gain = a->median > 0 ? b->median / a->median : 0;
    }
}

/* One size: leader, tied set, the simplest tied algorithm (or `force` when it is tied),
 * and its closest rival. */
static void decide(const struct ct_sweep_point *pts, const size_t *idx, size_t k, double margin,
                   const char *force, struct ct_select_choice *c)
{
    size_t lead = idx[0];
    for (size_t j = 1; j < k; j++)
        if (pts[idx[j]].st.median < pts[lead].st.median)
            lead = idx[j];
    size_t chosen = lead;
    int tied = 0;
    for (size_t j = 0; j < k; j++) {
        const struct ct_sweep_point *p = &pts[idx[j]];
        if (idx[j] == lead || ct_select_wins(&pts[lead].st, &p->st, margin))
            continue;
        tied++;
        if (ct_select_simplicity(p->algo) < ct_select_simplicity(pts[chosen].algo))
            chosen = idx[j];
    }
    for (size_t j = 0; force && tied && j < k; j++)
        if (!strcmp(pts[idx[j]].algo, force) &&
            !ct_select_wins(&pts[lead].st, &pts[idx[j]].st, margin))
            chosen = idx[j];
    describe(pts, idx, k, margin, lead, chosen, tied > 0, c);
}

/*
 * The tie rule, over the whole curve: at each size the acceptable algorithms are the
 * leader and every algorithm it does not win over (ct_select_wins). The choice is the
 * fewest ranges such that each range's algorithm is acceptable at every size of it; among
 * those, the simplest algorithms (table order) win, earliest sizes first. So a clear
 * winner is always chosen (but at an island, drop_islands), a tie never picks an algorithm the
 * leader beats, and statistically tied neighbours become one range of the simplest tied algorithm
 * instead of alternating ranges. A library engine's own decision is no rule at all: its ranges are
 * not counted, so the fewest ranges that override the library are chosen, and one size
 * where the default loses does not hand the whole curve to another algorithm (2 ranks,
 * AllToAll: `pairwise` tied with Open MPI's default at 24 of 25 sizes took them all, and
 * verify measured it 4.6% slower over the curve). Dynamic program over (size, algorithm):
 * O(sizes x algorithms^2).
 */
/* Distinct algorithms of coll's valid points, simplest first: table order, then names
 * outside the table (a library engine's rows) in the order they were first measured. *out is
 * new memory; returns the count. */
static size_t algos_of(const struct ct_sweep_point *pts, size_t n, enum ct_coll coll,
                       const char ***out)
{
    const char **v = ct_xcalloc(n ? n : 1, sizeof *v);
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        bool seen = !valid(&pts[i], coll);
        for (size_t j = 0; j < k && !seen; j++)
            seen = !strcmp(v[j], pts[i].algo);
        if (seen)
            continue;
        size_t at = k++; /* insertion by simplicity; equal ones keep their order */
        while (at > 0 && ct_select_simplicity(v[at - 1]) > ct_select_simplicity(pts[i].algo)) {
            v[at] = v[at - 1];
            at--;
        }
        v[at] = pts[i].algo;
    }
    *out = v;
    return k;
}

static size_t name_index(const char *const *names, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(names[i], name))
            return i;
    return n;
}

static void smooth(const struct ct_sweep_point *pts, size_t n, enum ct_coll coll, double margin,
                   const uint64_t *sizes, size_t ns, size_t *idx, struct ct_select_choice *c)
{
    const char **names;
    size_t na = algos_of(pts, n, coll, &names);
    long *ok = ct_xcalloc(ns * na, sizeof *ok); /* point of algo a at size s, -1: unacceptable */
    /* cost: ranges x W + sizes, counting only what overrides a library's own decision (every
     * native range and size counts) */
    long *cost = ct_xcalloc(ns * na, sizeof *cost);
    int *from = ct_xcalloc(ns * na, sizeof *from);
    for (size_t s = 0; s < ns; s++) {
        size_t k = best_per_algo(pts, n, coll, sizes[s], margin, idx);
        for (size_t a = 0; a < na; a++)
            ok[s * na + a] = -1;
        for (size_t j = 0; j < k; j++) {
            const struct ct_sweep_point *p = &pts[idx[j]];
            size_t a = name_index(names, na, p->algo);
            if (a < na && ((long)idx[j] == c[s].leader ||
                           !ct_select_wins(&pts[c[s].leader].st, &p->st, margin)))
                ok[s * na + a] = (long)idx[j];
        }
    }
    const long inf = 1L << 50, W = 1L << 24;
    for (size_t s = 0; s < ns; s++)
        for (size_t a = 0; a < na; a++) {
            size_t i = s * na + a;
            cost[i] = inf;
            from[i] = -1;
            if (ok[i] < 0)
                continue;
            long own = !ct_select_library_default(names[a]); /* a rule of its own here */
            if (s == 0) {
                cost[i] = own * (W + 1);
                continue;
            }
            for (size_t b = 0; b < na; b++) { /* b ascending: the simplest wins a tie */
                long cb = cost[(s - 1) * na + b];
                long v = cb >= inf ? inf : cb + (b != a ? own * W : 0) + own;
                if (v < cost[i] || (v == cost[i] && b == a)) {
                    cost[i] = v;
                    from[i] = (int)b;
                }
            }
        }
    /* the end: fewest ranges, then the simplest last algorithm; walk back */
    if (ns) {
        size_t best = 0;
        for (size_t a = 1; a < na; a++)
            if (cost[(ns - 1) * na + a] < cost[(ns - 1) * na + best])
                best = a;
        for (size_t s = ns; s-- > 0;) {
            size_t i = s * na + best;
            if (ok[i] >= 0 && (size_t)ok[i] != c[s].chosen) {
                size_t k = best_per_algo(pts, n, coll, sizes[s], margin, idx);
                decide(pts, idx, k, margin, names[best], &c[s]);
            }
            if (s > 0 && from[i] >= 0)
                best = (size_t)from[i];
        }
    }
    free(ok);
    free(cost);
    free(from);
    free(names);
}

/* The point of setting (algo, params) of `like` at size, if it is acceptable there (the
 * leader, or not beaten by it); -1 otherwise. */
static long acceptable(const struct ct_sweep_point *pts, size_t n,
                       const struct ct_sweep_point *like, const struct ct_select_choice *c,
                       double margin)
{
    for (size_t i = 0; i < n; i++)
        if (valid(&pts[i], like->coll) && pts[i].size == c->size &&
            ct_select_same_choice(pts[i].algo, &pts[i].params, like->algo, &like->params) &&
            !ct_select_superseded(pts, n, i))
            return (long)i == c->leader || !ct_select_wins(&pts[c->leader].st, &pts[i].st, margin)
                       ? (long)i
                       : -1;
    return -1;
}

/* The last size of the run of sizes from s with the same setting as s. */
static size_t run_end(const struct ct_sweep_point *pts, const struct ct_select_choice *c, size_t ns,
                      size_t s)
{
    const struct ct_sweep_point *x = &pts[c[s].chosen];
    size_t e = s;
    while (e + 1 < ns && ct_select_same_choice(pts[c[e + 1].chosen].algo,
                                               &pts[c[e + 1].chosen].params, x->algo, &x->params))
        e++;
    return e;
}

/* Sizes s..e take the setting of `take`, acceptable at each of them. */
static void take_setting(const struct ct_sweep_point *pts, size_t n, enum ct_coll coll,
                         double margin, size_t *idx, struct ct_select_choice *c, size_t s, size_t e,
                         const struct ct_sweep_point *take)
{
    for (size_t t = s; t <= e; t++) {
        size_t k = best_per_algo(pts, n, coll, c[t].size, margin, idx);
        size_t q = (size_t)acceptable(pts, n, take, &c[t], margin);
        describe(pts, idx, k, margin, (size_t)c[t].leader, q, c[t].tie || (long)q != c[t].leader,
                 &c[t]);
    }
}

/*
 * The tie rule counts ranges by algorithm, but parameters split a range too: a run of sizes
 * with a setting of its own (ring with pipeline=8 between ring's defaults and symm) where a
 * neighbouring run's setting is acceptable at each of its sizes is a range the measurements
 * do not call for, one more for --verify to measure in fresh processes where the tie may
 * fall either way. Such a run takes that neighbour's setting (the simpler neighbour's when
 * both are acceptable); a clear winner is never replaced, since it beats every other setting,
 * and neither is a run of a library's own decision (no rule).
 */
static void absorb(const struct ct_sweep_point *pts, size_t n, enum ct_coll coll, double margin,
                   size_t ns, size_t *idx, struct ct_select_choice *c)
{
    for (bool moved = true; moved;) {
        moved = false;
        for (size_t s = 0, e; s < ns && !moved; s = e + 1) {
            e = run_end(pts, c, ns, s);
            if (ct_select_library_default(pts[c[s].chosen].algo))
                continue; /* no rule: nothing to absorb */
            const struct ct_sweep_point *side[2] = {s > 0 ? &pts[c[s - 1].chosen] : NULL,
                                                    e + 1 < ns ? &pts[c[e + 1].chosen] : NULL};
            const struct ct_sweep_point *take = NULL;
            for (int d = 0; d < 2; d++) {
                bool ok = side[d] != NULL;
                for (size_t t = s; ok && t <= e; t++)
                    ok = acceptable(pts, n, side[d], &c[t], margin) >= 0;
                if (ok && (!take ||
                           ct_select_simplicity(side[d]->algo) < ct_select_simplicity(take->algo)))
                    take = side[d];
            }
            if (!take)
                continue;
            take_setting(pts, n, coll, margin, idx, c, s, e, take);
            moved = true;
        }
    }
}

/* The setting of y is that of the run before s or after e. */
static bool neighbour_is(const struct ct_sweep_point *pts, const struct ct_select_choice *c,
                         size_t ns, size_t s, size_t e, const struct ct_sweep_point *y)
{
    const struct ct_sweep_point *l = s > 0 ? &pts[c[s - 1].chosen] : NULL,
                                *r = e + 1 < ns ? &pts[c[e + 1].chosen] : NULL;
    return (l && ct_select_same_choice(l->algo, &l->params, y->algo, &y->params)) ||
           (r && ct_select_same_choice(r->algo, &r->params, y->algo, &y->params));
}

/*
 * A range kept for simplicity where another acceptable algorithm is faster by median at
 * every size of it, by a geometric mean of at least half the margin, takes that algorithm
 * (the fastest such one, but first one that a neighbouring range has, which then grows
 * instead of a range being added: Open MPI ReduceScatter on 2 ranks, 128 MiB, butterfly
 * at 250 ms over 7 samples took a range of its own beside non-overlapping's, which ran
 * 265 ms there, and the best forced there in the oracle's runs). No single size called it a win,
 * but the whole range does, and verify judges the choice against it: 2 ranks, AllToAll 8.5-16 KiB,
 * mesh 3-12% ahead of ring at each of 12 sizes, ring kept and verify measured mesh 1.16x ahead. The
 * simpler one stays in the range's tie list (tied_with). A clear winner is the leader at every
 * size: never replaced.
 */
static void prefer_faster(const struct ct_sweep_point *pts, size_t n, enum ct_coll coll,
                          double margin, size_t ns, size_t *idx, struct ct_select_choice *c)
{
    size_t *cand = ct_xmalloc(sizeof *cand * (n ? n : 1));
    for (size_t s = 0, e; s < ns; s = e + 1) {
        const struct ct_sweep_point *x = &pts[c[s].chosen];
        e = run_end(pts, c, ns, s);
        size_t k = best_per_algo(pts, n, coll, c[s].size, margin, idx);
        memcpy(cand, idx, sizeof *cand * k);
        const struct ct_sweep_point *take = NULL;
        const double least = log(1 + margin / 2); /* the mean log gain to take a range */
        double best = 0;
        bool joins = false; /* take is a neighbouring run's setting: no range of its own */
        for (size_t j = 0; j < k; j++) {
            const struct ct_sweep_point *y = &pts[cand[j]];
            if (!strcmp(y->algo, x->algo))
                continue;
            double lg = 0;
            bool ok = true;
            for (size_t t = s; ok && t <= e; t++) {
                long q = acceptable(pts, n, y, &c[t], margin);
                double tx = pts[c[t].chosen].st.median, ty = q >= 0 ? pts[q].st.median : 0;
                ok = q >= 0 && ty > 0 && ty < tx;
                lg += ok ? log(tx / ty) : 0;
            }
            double g = lg / (double)(e - s + 1);
            if (!ok || g <= least)
                continue;
            bool join = neighbour_is(pts, c, ns, s, e, y);
            if (join > joins || (join == joins && g > best)) {
                best = g;
                take = y;
                joins = join;
            }
        }
        if (take)
            take_setting(pts, n, coll, margin, idx, c, s, e, take);
    }
    free(cand);
}

/*
 * A time curve is smooth in size: one size whose choice differs from the choice of the sizes
 * on both sides, where those agree and lie within ISLAND of each other, is the moment's
 * state, not the curve's, and takes their choice (where that was measured at the size). The
 * one exception to "a clear winner is always chosen". The check phase measures where
 * verify will, at range midpoints that move as it goes: 2 ranks, Open MPI ReduceScatter,
 * every algorithm ran 7.1-7.4 us at 19,480 B and 12.5-13.3 us at 19,464 B, the library's
 * own decision 9.5 us at 19,480 B, and recursive halving kept 19,466-19,481 B.
 */
#define ISLAND 1.19 /* a quarter octave */
static void drop_islands(const struct ct_sweep_point *pts, size_t n, enum ct_coll coll,
                         double margin, size_t ns, size_t *idx, struct ct_select_choice *c)
{
    for (size_t s = 1; s + 1 < ns; s++) {
        const struct ct_sweep_point *l = &pts[c[s - 1].chosen], *r = &pts[c[s + 1].chosen],
                                    *x = &pts[c[s].chosen];
        if ((double)c[s + 1].size > ISLAND * (double)c[s - 1].size ||
            !ct_select_same_choice(l->algo, &l->params, r->algo, &r->params) ||
            ct_select_same_choice(l->algo, &l->params, x->algo, &x->params))
            continue;
        for (size_t i = 0; i < n; i++)
            if (valid(&pts[i], coll) && pts[i].size == c[s].size &&
                ct_select_same_choice(pts[i].algo, &pts[i].params, l->algo, &l->params) &&
                !ct_select_superseded(pts, n, i)) {
                size_t k = best_per_algo(pts, n, coll, c[s].size, margin, idx);
                describe(pts, idx, k, margin, (size_t)c[s].leader, i, true, &c[s]);
                break;
            }
    }
}

size_t ct_select_choices(const struct ct_sweep_point *pts, size_t n, enum ct_coll coll,
                         double margin, struct ct_select_choice **out)
{
    uint64_t *sizes;
    size_t ns = sizes_of(pts, n, coll, &sizes);
    struct ct_select_choice *c = ct_xcalloc(ns ? ns : 1, sizeof *c);
    size_t *idx = ct_xmalloc(sizeof *idx * (n ? n : 1));
    for (size_t s = 0; s < ns; s++) {
        size_t k = best_per_algo(pts, n, coll, sizes[s], margin, idx);
        decide(pts, idx, k, margin, NULL, &c[s]);
    }
    smooth(pts, n, coll, margin, sizes, ns, idx, c);
    absorb(pts, n, coll, margin, ns, idx, c);
    prefer_faster(pts, n, coll, margin, ns, idx, c);
    drop_islands(pts, n, coll, margin, ns, idx, c);
    free(idx);
    free(sizes);
    *out = c;
    return ns;
}

/* Median of algo's best point at size, or 0 when it was not measured there. */
static double best_time(const struct ct_sweep_point *pts, size_t n, enum ct_coll coll,
                        const char *algo, uint64_t size)
{
    double t = 0;
    for (size_t i = 0; i < n; i++)
        if (valid(&pts[i], coll) && pts[i].size == size && !strcmp(pts[i].algo, algo) &&
            pts[i].st.median > 0 && (t == 0 || pts[i].st.median < t) && !ct_select_superseded(pts, n, i))
            t = pts[i].st.median;
    return t;
}

/* The size a fraction frac of the way from size a to size b > a in log space, in (a, b]. */
static uint64_t log_between(uint64_t a, uint64_t b, double frac)
{
    double la = log((double)(a ? a : 1)), lb = log((double)b);
    double t = exp(la + frac * (lb - la));
    uint64_t th = t >= (double)b ? b : (uint64_t)llround(t);
    if (th <= a)
        th = a + 1;
    return th > b ? b : th;
}

/*
 * Threshold between size a (algorithm A chosen) and size b > a (B chosen): where
 * ln(tA/tB) crosses zero, linear in ln(size); the geometric midpoint when the curves do
 * not cross between the two sizes (a tie decided by simplicity) or one is missing.
 * Always in (a, b]. Where A's time grows faster than the size (by more than CLIFF), A meets
 * a cliff somewhere in (a, b] that no interpolation places (a protocol switch: MPICH 4.0.2's
 * recursive doubling took 2.36 us at 8 KiB and 23.3 us at 16 KiB on 2 ranks, and an
 * interpolated 9.55 KiB left 8,308 B to it, where verify measured it 4x slower): A keeps
 * only the size it was measured at, a + 1.
 */
#define CLIFF 1.25
static uint64_t threshold(const struct ct_sweep_point *pts, size_t n, enum ct_coll coll,
                          const char *A, const char *B, uint64_t a, uint64_t b)
{
    double frac = 0.5;
    double ta = best_time(pts, n, coll, A, a), tb = best_time(pts, n, coll, B, a);
    double ua = best_time(pts, n, coll, A, b), ub = best_time(pts, n, coll, B, b);
    if (strcmp(A, B) && ta > 0 && tb > 0 && ua > 0 && ub > 0) {
        if (ua / ta > CLIFF * (double)b / (double)(a ? a : 1))
            return a + 1;
        double f0 = log(ta / tb), f1 = log(ua / ub);
        if (f0 <= 0 && f1 > 0)
            frac = f0 / (f0 - f1);
        /* a crossing hard by a grid size is within noise of it: keep each measured size
         * inside its own range by a tenth of the step */
        frac = frac < 0.1 ? 0.1 : frac > 0.9 ? 0.9 : frac;
    }
    return log_between(a, b, frac);
}

static void fill_rule(const struct ct_sweep_point *pts, const struct ct_select_choice *c,
                      size_t from, size_t to, struct ct_rule *r)
{
    const struct ct_sweep_point *p = &pts[c[from].chosen];
    memset(r, 0, sizeof *r);
    snprintf(r->algo, sizeof r->algo, "%s", p->algo);
    r->params = p->params;
    r->confidence = 1.0;
    r->tie = false;
    double lg = 0;
    int ng = 0;
    for (size_t s = from; s <= to; s++) {
        r->tie = r->tie || c[s].tie;
        if (c[s].runner >= 0 && (s == from || c[s].confidence <= r->confidence)) {
            r->confidence = c[s].confidence;
            snprintf(r->runner_up, sizeof r->runner_up, "%s", pts[(size_t)c[s].runner].algo);
        }
        if (c[s].gain > 0) {
            lg += log(c[s].gain);
            ng++;
        }
    }
    r->gain = ng ? exp(lg / ng) : 0;
}

/* Which algorithms (names[a], simplest first) were acceptable at each size s of from .. to:
 * the leader and every one it does not win over, with the log of its best median over the
 * chosen's in lr and that best point in best. New memory, [(s - from) * na + a]. */
static bool *acceptable_sets(const struct ct_sweep_point *pts, size_t n, enum ct_coll coll,
                             double margin, const struct ct_select_choice *c, size_t from,
                             size_t to, const char *const *names, size_t na, double **lr,
                             size_t **best)
{
    size_t *idx = ct_xmalloc(sizeof *idx * (n ? n : 1));
    bool *ok = ct_xcalloc((to - from + 1) * (na ? na : 1), sizeof *ok);
    *lr = ct_xcalloc((to - from + 1) * (na ? na : 1), sizeof **lr);
    *best = ct_xcalloc((to - from + 1) * (na ? na : 1), sizeof **best);
    for (size_t s = from; s <= to; s++) {
        size_t k = best_per_algo(pts, n, coll, c[s].size, margin, idx);
        for (size_t j = 0; j < k; j++)
            if ((long)idx[j] == c[s].leader ||
                !ct_select_wins(&pts[c[s].leader].st, &pts[idx[j]].st, margin)) {
                size_t a = name_index(names, na, pts[idx[j]].algo);
                if (a < na && pts[idx[j]].st.median > 0 && pts[c[s].chosen].st.median > 0) {
                    ok[(s - from) * na + a] = true;
                    (*best)[(s - from) * na + a] = idx[j];
                    (*lr)[(s - from) * na + a] =
                        log(pts[idx[j]].st.median / pts[c[s].chosen].st.median);
                }
            }
    }
    free(idx);
    return ok;
}

/* The parameters the best points best[s..e] ran at most often (the first so found). */
static struct ct_params mode_params(const struct ct_sweep_point *pts, const size_t *best, size_t s,
                                    size_t e, size_t stride)
{
    size_t top = s, most = 0;
    for (size_t i = s; i <= e; i++) {
        size_t k = 0;
        for (size_t j = s; j <= e; j++)
            k += !memcmp(pts[best[(j - s) * stride]].params.v, pts[best[(i - s) * stride]].params.v,
                         sizeof pts->params.v);
        if (k > most) {
            most = k;
            top = i;
        }
    }
    return pts[best[(top - s) * stride]].params;
}

/* r->tied: the algorithms other than r's acceptable at each size from .. to, simplest first;
 * r->ties: for each of them, the runs of those sizes where it was acceptable, as byte spans
 * within r's range (bounded at the geometric midpoints to the sizes beside a run; r's own
 * bounds lie outside its first and last sizes, so every span is inside r and not empty), with
 * the parameters its best point ran at most of the run's sizes (a segment size searched). */
static void record_ties(const struct ct_sweep_point *pts, size_t n, enum ct_coll coll,
                        double margin, const struct ct_select_choice *c, size_t from, size_t to,
                        struct ct_rule *r)
{
    const char **names;
    size_t na = algos_of(pts, n, coll, &names);
    double *lr;
    size_t *best;
    bool *ok = acceptable_sets(pts, n, coll, margin, c, from, to, names, na, &lr, &best);
    r->ntied = r->nties = 0;
    for (size_t a = 0; a < na; a++) {
        if (!strcmp(names[a], r->algo))
            continue;
        for (size_t s = from; s <= to; s++) {
            if (!ok[(s - from) * na + a])
                continue;
            size_t e = s;
            double sum = lr[(s - from) * na + a];
            while (e < to && ok[(e + 1 - from) * na + a])
                sum += lr[(++e - from) * na + a];
            if (s == from && e == to && r->ntied < CT_TIED_MAX)
                snprintf(r->tied[r->ntied++], sizeof r->tied[0], "%s", names[a]);
            if (r->nties < CT_TIES_MAX) {
                struct ct_tie_span *t = &r->ties[r->nties++];
                snprintf(t->algo, sizeof t->algo, "%s", names[a]);
                t->min_bytes =
                    s == from ? r->min_bytes : log_between(c[s - 1].size, c[s].size, 0.5);
                t->max_bytes = e == to ? r->max_bytes : log_between(c[e].size, c[e + 1].size, 0.5);
                t->ratio = exp(sum / (double)(e - s + 1));
                t->params = mode_params(pts, best + (s - from) * na + a, s, e, na);
            }
            s = e;
        }
    }
    free(lr);
    free(best);
    free(ok);
    free(names);
}

int ct_select_rules(const struct ct_sweep_point *pts, size_t n, enum ct_coll coll, double margin,
                    struct ct_ruleset *out, struct ct_err *err)
{
    struct ct_select_choice *c;
    size_t ns = ct_select_choices(pts, n, coll, margin, &c);
    out->coll = coll;
    out->rules = NULL;
    out->nrules = 0;
    if (!ns) {
        free(c);
        return ct_err_set(err, CT_EINVAL, "no valid measurement of %s", ct_coll_name(coll));
    }
    out->rules = ct_xcalloc(ns, sizeof *out->rules);
    size_t from = 0;
    uint64_t lo = 0;
    for (size_t s = 1; s <= ns; s++) {
        const struct ct_sweep_point *a = &pts[c[from].chosen];
        if (s < ns) {
            const struct ct_sweep_point *b = &pts[c[s].chosen];
            if (ct_select_same_choice(a->algo, &a->params, b->algo, &b->params))
                continue;
        }
        struct ct_rule *r = &out->rules[out->nrules++];
        fill_rule(pts, c, from, s - 1, r);
        r->min_bytes = lo;
        if (s < ns)
            r->max_bytes =
                threshold(pts, n, coll, a->algo, pts[c[s].chosen].algo, c[s - 1].size, c[s].size);
        else
            r->max_bytes = CT_BYTES_INF;
        record_ties(pts, n, coll, margin, c, from, s - 1, r);
        lo = r->max_bytes;
        from = s;
    }
    free(c);
    return 0;
}

void ct_select_mark_pruned(struct ct_sweep_point *pts, size_t n, double margin)
{
    for (size_t i = 0; i < n; i++) {
        pts[i].pruned = false;
        if (pts[i].wrong != 0 || pts[i].st.n == 0)
            continue;
        const struct ct_sweep_point *lead = NULL;
        for (size_t j = 0; j < n; j++)
            if (valid(&pts[j], pts[i].coll) && pts[j].size == pts[i].size &&
                (!lead || pts[j].st.median < lead->st.median) && !ct_select_superseded(pts, n, j))
                lead = &pts[j];
        pts[i].pruned = lead && ct_select_prunable(&pts[i].st, &lead->st, margin);
    }
}
