/* SPDX-License-Identifier: MIT */
/* Sample statistics: order-statistic CI of the median, summaries, convergence. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>

#include "backend/backend.h"
#include "tune/stats.h"
#include "output/config.h"
#include "tune/tune.h"

Test(stats, ci_ranks_match_binomial_tables)
{
    /* exact binomial: the largest lo with P(B(n,1/2) <= lo-1) <= 0.025 */
    static const int tab[][3] = {{6, 1, 6},   {7, 1, 7},     {10, 2, 9},      {11, 2, 10},
                                 {20, 6, 15}, {100, 40, 61}, {1000, 469, 532}};
    for (size_t i = 0; i < sizeof tab / sizeof tab[0]; i++) {
        int lo, hi;
        cr_assert(ct_stats_ci_ranks(tab[i][0], &lo, &hi), "n=%d", tab[i][0]);
        cr_assert_eq(lo, tab[i][1], "n=%d lo=%d", tab[i][0], lo);
        cr_assert_eq(hi, tab[i][2], "n=%d hi=%d", tab[i][0], hi);
    }
}

Test(stats, ci_ranks_too_few_and_large_n)
{
    int lo, hi;
    cr_assert_not(ct_stats_ci_ranks(5, &lo, &hi));
    cr_assert(lo == 1 && hi == 5);
    cr_assert_not(ct_stats_ci_ranks(1, &lo, &hi));
    /* normal approximation continues the exact table smoothly */
    cr_assert(ct_stats_ci_ranks(1001, &lo, &hi));
    cr_assert_eq(lo, 469);
    cr_assert_eq(hi, 533);
    cr_assert(ct_stats_ci_ranks(100000, &lo, &hi));
    cr_assert(lo > 49600 && lo < 49700 && hi == 100001 - lo);
}

Test(stats, summary_of_known_samples)
{
    /* 11 samples in scrambled order: 1..11 */
    double x[] = {7, 3, 11, 1, 9, 5, 2, 10, 4, 8, 6};
    double copy[11];
    memcpy(copy, x, sizeof x);
    struct ct_stats st;
    ct_stats_compute(x, 11, &st);
    cr_assert_eq(memcmp(copy, x, sizeof x), 0, "input must not be modified");
    cr_assert_eq(st.n, 11);
    cr_assert_float_eq(st.median, 6, 1e-12);
    cr_assert_float_eq(st.lo, 2, 1e-12);  /* X(2) */
    cr_assert_float_eq(st.hi, 10, 1e-12); /* X(10) */
    cr_assert_float_eq(st.min, 1, 1e-12);
    cr_assert_float_eq(st.max, 11, 1e-12);
    cr_assert_float_eq(st.mean, 6, 1e-12);
    cr_assert_float_eq(st.stdev, sqrt(11.0), 1e-12);
    cr_assert_float_eq(ct_stats_rel_width(&st), 8.0 / 6.0, 1e-12);
}

Test(stats, even_count_median_and_single_sample)
{
    double x[] = {4, 1, 3, 2, 100, 5};
    struct ct_stats st;
    ct_stats_compute(x, 6, &st);
    cr_assert_float_eq(st.median, 3.5, 1e-12);
    cr_assert_float_eq(st.lo, 1, 1e-12);
    cr_assert_float_eq(st.hi, 100, 1e-12);
    double one = 42;
    ct_stats_compute(&one, 1, &st);
    cr_assert_float_eq(st.median, 42, 1e-12);
    cr_assert_eq(st.stdev, 0);
    cr_assert(isinf(ct_stats_rel_width(&st)), "no 95%% interval from one sample");
    cr_assert_not(ct_stats_converged(&st, 1e9));
}

Test(stats, convergence_and_samples_needed)
{
    double x[40];
    for (int i = 0; i < 40; i++)
        x[i] = 100 + (i % 10); /* 100..109, median 104.5 */
    struct ct_stats st;
    ct_stats_compute(x, 40, &st);
    double w = ct_stats_rel_width(&st);
    cr_assert(w > 0 && w < 0.05, "width %g", w);
    cr_assert(ct_stats_converged(&st, 0.05));
    cr_assert_eq(ct_stats_more(&st, 0.05), 0);
    cr_assert_not(ct_stats_converged(&st, w / 2));
    /* halving the width takes about 4x the samples: 3n more */
    int more = ct_stats_more(&st, w / 2);
    cr_assert(more >= 3 * 40 - 1 && more <= 3 * 40 + 1, "more %d", more);
    ct_stats_compute(x, 4, &st);
    cr_assert_eq(ct_stats_more(&st, 0.05), CT_STATS_MIN_CI - 4);
}

/* xorshift64* and an exponential variate: deterministic heavy-ish tailed samples */
static double expo(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    double u = (double)((*s * 0x2545F4914F6CDD1DULL) >> 11) / 9007199254740992.0;
    return -log(1 - u);
}

Test(stats, interval_covers_the_true_median_95_percent)
{
    /* exponential(1): true median ln 2; the order-statistic interval is distribution-free */
    uint64_t seed = 0x1234567;
    for (int n = 6; n <= 60; n += 9) {
        int hit = 0, trials = 4000;
        double x[64];
        for (int t = 0; t < trials; t++) {
            for (int i = 0; i < n; i++)
                x[i] = 50 + 10 * expo(&seed);
            struct ct_stats st;
            ct_stats_compute(x, n, &st);
            double m = 50 + 10 * log(2.0);
            hit += st.lo <= m && m <= st.hi;
        }
        double cover = (double)hit / trials;
        cr_assert(cover >= 0.94 && cover <= 0.995, "n=%d coverage %.3f", n, cover);
    }
}

Test(stats, ratio_of_alternating_runs)
{
    struct ct_ratio r;
    double a[] = {2, 2, 2}, b[] = {1, 1, 1};
    ct_stats_ratio(a, 3, b, 3, &r);
    cr_assert_float_eq(r.ratio, 2, 1e-12);
    cr_assert_float_eq(r.lo, 2, 1e-12, "no spread, no width");
    double c[] = {1.0, 1.1, 0.9}, d[] = {0.95, 1.05, 1.0};
    ct_stats_ratio(c, 3, d, 3, &r);
    cr_assert(r.lo < r.ratio && r.ratio < r.hi && r.lo < 1 && r.hi > 1, "%g [%g, %g]", r.ratio,
              r.lo, r.hi);
    cr_assert(r.lo > 0, "the interval of a ratio stays positive");
    double z[] = {1, 0};
    ct_stats_ratio(z, 2, d, 3, &r);
    cr_assert_eq(r.ratio, 0, "a zero time: undefined");
}

/* Pairs measured side by side: a machine twice as fast in one pair moves both of its
 * times, so the pairs' ratios (1.1 each) give a point interval where the unpaired one holds
 * 1; the ratio is the ratio of the geometric means either way. */
Test(stats, ratio_of_pairs_cancels_what_moves_between_pairs)
{
    double a[] = {1.1, 0.55, 1.1}, b[] = {1.0, 0.5, 1.0};
    struct ct_ratio p, u;
    ct_stats_ratio_paired(a, b, 3, &p);
    ct_stats_ratio(a, 3, b, 3, &u);
    cr_assert_float_eq(p.ratio, 1.1, 1e-12);
    cr_assert_float_eq(u.ratio, 1.1, 1e-12);
    cr_assert(p.lo > 1.0999 && p.hi < 1.1001, "paired [%g, %g]", p.lo, p.hi);
    cr_assert(u.lo < 1 && u.hi > 1, "unpaired [%g, %g]", u.lo, u.hi);
    double c[] = {1.0, 1.2, 0.9}, d[] = {1.1, 1.0, 1.0};
    ct_stats_ratio_paired(c, d, 3, &p);
    cr_assert(p.lo < 1 && p.hi > 1 && p.lo > 0, "%g [%g, %g]", p.ratio, p.lo, p.hi);
    double z[] = {1, 0};
    ct_stats_ratio_paired(z, d, 2, &p);
    cr_assert_eq(p.ratio, 0, "a zero time: undefined");
    ct_stats_ratio_paired(c, d, 1, &p);
    cr_assert_eq(p.ratio, 0, "one pair: no interval");
}

/* A launcher of known times: size 0 the same on both sides, size 1 A 1.6x and 0.9x B in
 * turn (slower in the mean, 1 kept in its interval), size 2 A twice as slow: both of those
 * are more than 3% slower by their ratio, so both take all 8 pairs (2x is not beyond
 * CT_PAIRED_SETTLED); size 3 A 3x as slow with its own wobble, settled after 3 pairs. It
 * records the sides in order and how many sizes each launch ran. */
struct fake {
    int calls, side[2 * CT_PAIRED_CAP], sizes[2 * CT_PAIRED_CAP];
};

static int fake_launch(void *ctx, bool with, const uint64_t *sz, int n, double *t)
{
    struct fake *f = ctx;
    int c = f->calls++;
    f->side[c] = with;
    f->sizes[c] = n;
    for (int i = 0; i < n; i++) {
        double wobble = (c / 2) % 2 ? 1.5 : 0.75; /* moves both launches of a pair */
        if (sz[i] == 1)
            t[i] = with ? ((c / 2) % 2 ? 0.9 : 1.6) : 1.0;
        else if (sz[i] == 3)
            t[i] = wobble * (with ? 3.0 * (c % 4 == 0 ? 1.1 : 1.0) : 1.0);
        else
            t[i] = wobble * (sz[i] == 2 && with ? 2.0 : 1.0);
    }
    return 0;
}

Test(stats, paired_launches_alternate_and_add_pairs_where_a_may_be_slower)
{
    uint64_t sz[] = {0, 1, 2, 3};
    struct fake f = {0};
    struct ct_paired p;
    cr_assert_eq(ct_paired_measure(sz, 4, NULL, NULL, 0, 0, fake_launch, &f, &p), 0);
    cr_assert_eq(p.n[0], CT_PAIRED_MIN, "equal sides: %d pairs", p.n[0]);
    cr_assert_eq(p.n[3], CT_PAIRED_MIN, "3x slower beyond the interval: settled, %d pairs", p.n[3]);
    cr_assert_eq(p.n[2], CT_PAIRED_MAX, "slower: judged on all the pairs, %d", p.n[2]);
    cr_assert_eq(p.n[1], CT_PAIRED_MAX, "may be slower: %d pairs", p.n[1]);
    cr_assert_eq(p.rounds, CT_PAIRED_MAX);
    for (int c = 0; c < f.calls; c++) {
        int pair = c / 2, first = c % 2 == 0;
        cr_assert_eq(f.side[c], first == (pair % 2 == 0), "launch %d: side %d", c, f.side[c]);
        cr_assert_eq(f.sizes[c], pair < CT_PAIRED_MIN ? 4 : 2, "launch %d ran %d sizes", c,
                     f.sizes[c]);
    }
    struct ct_ratio q;
    ct_stats_ratio_paired(p.a[2], p.b[2], p.n[2], &q);
    cr_assert_float_eq(q.ratio, 2, 1e-9);
    cr_assert(q.lo > 1, "a wobble both sides share cancels: [%g, %g]", q.lo, q.hi);
    cr_assert(ct_paired_slower(&q), "twice as slow is slower");
    /* a steady 2% loss is within the 0.97x bound: no size fails on it */
    double a2[] = {1.02, 1.02 * 1.5, 1.02 * 0.75}, b2[] = {1, 1.5, 0.75};
    ct_stats_ratio_paired(a2, b2, 3, &q);
    cr_assert(q.lo > 1 && !ct_paired_slower(&q), "%g [%g, %g]", q.ratio, q.lo, q.hi);
    cr_assert(!ct_paired_faster(&q), "a loss is no gain");
    /* the mirror (a launch setting's gain at one size): twice as fast is faster, a steady 2%
     * gain is within the bound, and a ratio not measured is neither */
    ct_stats_ratio_paired(b2, a2, 3, &q);
    cr_assert(q.hi < 1 && !ct_paired_faster(&q), "%g [%g, %g]", q.ratio, q.lo, q.hi);
    double a3[] = {0.5, 0.75, 0.375};
    ct_stats_ratio_paired(a3, b2, 3, &q);
    cr_assert(ct_paired_faster(&q) && !ct_paired_slower(&q), "%g [%g, %g]", q.ratio, q.lo, q.hi);
    cr_assert(!ct_paired_faster(&(struct ct_ratio){0}), "not measured");
    ct_paired_release(&p);
}

/* Sizes split into two launches: each part's two sides back to back, small then large, the
 * side first alternating by round: A B A B, then B A B A (a pair's launches moments apart) */
struct order {
    int calls;
    char seq[64];
};

static int order_launch(void *ctx, bool with, const uint64_t *sz, int n, double *t)
{
    struct order *o = ctx;
    for (int i = 0; i < n; i++)
        t[i] = (double)sz[i] * (with ? 1 : 2); /* where each time lands, checked */
    if (o->calls < 31) {
        o->seq[2 * o->calls] = with ? 'A' : 'B';
        o->seq[2 * o->calls + 1] = sz[0] > 10 ? 'l' : 's';
    }
    o->calls++;
    return 0;
}

Test(stats, paired_split_launches_keep_each_pair_back_to_back)
{
    uint64_t sz[] = {1, 2, 100, 200};
    struct order o = {0};
    struct ct_paired p;
    cr_assert_eq(ct_paired_measure(sz, 4, NULL, NULL, 0, 10, order_launch, &o, &p), 0);
    cr_assert_eq(p.rounds, CT_PAIRED_MIN);
    cr_assert_str_eq(o.seq, "AsBsAlBlBsAsBlAlAsBsAlBl");
    for (int k = 0; k < 4; k++) {
        cr_assert_eq(p.n[k], CT_PAIRED_MIN);
        for (int i = 0; i < p.n[k]; i++)
            cr_assert(p.a[k][i] == (double)sz[k] && p.b[k][i] == 2.0 * (double)sz[k],
                      "size %d pair %d: %g %g", k, i, p.a[k][i], p.b[k][i]);
    }
    ct_paired_release(&p);
    for (int c = 0; c < 2; c++) { /* every size on one side of the split: one part */
        struct order q = {0};
        cr_assert_eq(ct_paired_measure(sz + 2 * c, 2, NULL, NULL, 0, 10, order_launch, &q, &p), 0);
        cr_assert_str_eq(q.seq, c ? "AlBlBlAlAlBl" : "AsBsBsAsAsBs");
        ct_paired_release(&p);
    }
}

/* --pairs N: N pairs at every size, and more up to 8 or N, the larger, where a size is open */
Test(stats, paired_launches_take_the_pairs_asked_for)
{
    uint64_t sz[] = {0, 1, 2, 3};
    for (int c = 0; c < 3; c++) {
        int pairs = c == 0 ? 5 : c == 1 ? 12 : CT_PAIRED_CAP;
        struct fake f = {0};
        struct ct_paired p;
        cr_assert_eq(ct_paired_measure(sz, 4, NULL, NULL, pairs, 0, fake_launch, &f, &p), 0);
        int most = pairs > CT_PAIRED_MAX ? pairs : CT_PAIRED_MAX;
        cr_assert(p.min == pairs && p.max == most, "%d pairs: %d..%d", pairs, p.min, p.max);
        cr_assert(p.n[0] == pairs && p.n[3] == pairs, "%d pairs: settled sizes %d, %d", pairs,
                  p.n[0], p.n[3]);
        cr_assert(p.n[1] == most && p.n[2] == most, "%d pairs: open sizes %d, %d", pairs, p.n[1],
                  p.n[2]);
        cr_assert_eq(f.calls, 2 * most);
        ct_paired_release(&p);
    }
}

/* Each size's log ratio A/B +s, -s, +s, ... pair by pair (s: 0.05, 0.02, 0.01 at sizes 1, 2,
 * 3; 0.05 at 4, moving with size 1), B the same in every launch, A's times x shift (0: 1):
 * what a verdict could see, and how more pairs narrow it */
struct noisy {
    int calls;
    double shift;
};

static int noisy_launch(void *ctx, bool with, const uint64_t *sz, int n, double *t)
{
    struct noisy *x = ctx;
    int pair = x->calls++ / 2;
    for (int i = 0; i < n; i++) {
        double s = sz[i] == 1 || sz[i] == 4 ? 0.05 : sz[i] == 2 ? 0.02 : 0.01;
        t[i] = with ? exp(pair % 2 ? -s : s) * (x->shift > 0 ? x->shift : 1) : 1.0;
    }
    return 0;
}

Test(stats, paired_tell_is_the_least_loss_a_verdict_sees)
{
    uint64_t sz[] = {1, 2, 3};
    bool control[] = {false, false, true};
    double tell3 = 0;
    for (int c = 0; c < 3; c++) {
        int pairs = c == 2 ? 12 : 0;
        struct noisy x = {0};
        struct ct_paired p;
        struct ct_paired_row w[3];
        struct ct_paired_sum t;
        cr_assert_eq(ct_paired_measure(sz, 3, NULL, NULL, pairs, 0, noisy_launch, &x, &p), 0);
        cr_assert_eq(p.n[0], pairs ? pairs : CT_PAIRED_MIN, "a ratio within 3%%: no extra pairs");
        ct_paired_judge(&p, c == 1 ? control : NULL, 3, w, &t);
        for (int k = 0; k < 3; k++) {
            cr_assert_float_eq(w[k].tell, CT_PAIRED_TOL * w[k].q.hi / w[k].q.ratio, 1e-12);
            cr_assert(!w[k].slower);
        }
        cr_assert(w[0].tell > w[1].tell && w[1].tell > w[2].tell, "%g %g %g", w[0].tell, w[1].tell,
                  w[2].tell);
        cr_assert_eq(t.tell_k, 0, "the widest");
        if (c == 1) /* the median over the sizes the file tunes, not its controls */
            cr_assert(t.n_tell == 2 && fabs(t.tell - (w[0].tell + w[1].tell) / 2) < 1e-12,
                      "%d sizes, %g", t.n_tell, t.tell);
        else
            cr_assert(t.n_tell == 3 && t.tell == w[1].tell, "%d sizes, %g", t.n_tell, t.tell);
        if (c == 0)
            tell3 = w[0].tell;
        else if (c == 2) /* t over sqrt(n) for 12 pairs against 3: more than 4x narrower */
            cr_assert(log(w[0].tell / CT_PAIRED_TOL) < log(tell3 / CT_PAIRED_TOL) / 4, "%g, %g",
                      w[0].tell, tell3);
        ct_paired_release(&p);
    }
    cr_assert_eq(ct_paired_tell(&(struct ct_ratio){0}), 0, "not measured: nothing told");
    /* what it means: at 8 pairs (none extra), A slower than B by 1% more than size 1's tell
     * is found slower there, by 1% less is not */
    double tell8 = 0;
    for (int c = 0; c < 3; c++) {
        struct noisy x = {0, c == 0 ? 1 : tell8 * (c == 1 ? 1.01 : 0.99)};
        struct ct_paired p;
        struct ct_paired_row w[3];
        struct ct_paired_sum t;
        cr_assert_eq(ct_paired_measure(sz, 3, NULL, NULL, 8, 0, noisy_launch, &x, &p), 0);
        cr_assert_eq(p.n[0], 8);
        ct_paired_judge(&p, NULL, 3, w, &t);
        if (c == 0)
            tell8 = w[0].tell;
        else
            cr_assert_eq(w[0].slower, c == 1, "shift %g of a tell %g: %g [%g, %g]", x.shift, tell8,
                         w[0].q.ratio, w[0].q.lo, w[0].q.hi);
        ct_paired_release(&p);
    }
}

/* A size whose control moves with it in every pair: its tell is the narrower one, against
 * the control (either verdict counts) */
Test(stats, paired_tell_takes_the_narrower_of_measured_and_vs_ctl)
{
    uint64_t sz[] = {1, 4};
    bool control[] = {false, true};
    struct noisy x = {0};
    struct ct_paired p;
    struct ct_paired_row w[2];
    struct ct_paired_sum t;
    cr_assert_eq(ct_paired_measure(sz, 2, control, NULL, 0, 0, noisy_launch, &x, &p), 0);
    ct_paired_judge(&p, control, 2, w, &t);
    cr_assert(w[0].nl == CT_PAIRED_MIN, "vs ctl over %d pairs", w[0].nl);
    cr_assert(ct_paired_tell(&w[0].q) > 1.1, "as measured: %g", ct_paired_tell(&w[0].q));
    cr_assert_float_eq(w[0].tell, CT_PAIRED_TOL, 1e-9, "vs ctl: the control cancels it: %g",
                       w[0].tell);
    cr_assert(t.n_tell == 1 && t.tell == w[0].tell, "the tuned size alone: %d", t.n_tell);
    ct_paired_release(&p);
}

/* Student's t by degrees of freedom: 12 pairs take t(11) = 2.201, 32 t(31) = 2.0395, not the
 * normal's 1.96 */
Test(stats, paired_interval_takes_students_t_past_ten_pairs)
{
    for (int c = 0; c < 3; c++) {
        int n = c == 0 ? 11 : c == 1 ? 12 : 32;
        double tq = c == 0 ? 2.228 : c == 1 ? 2.201 : 2.0395, a[32], b[32], m = 0, q = 0;
        for (int i = 0; i < n; i++)
            a[i] = exp(0.1 * (i % 3) - 0.05 * (i % 2)), b[i] = 1, m += log(a[i]);
        m /= n;
        for (int i = 0; i < n; i++)
            q += (log(a[i]) - m) * (log(a[i]) - m);
        double se = sqrt(q / (n - 1)) / sqrt(n);
        struct ct_ratio r;
        ct_stats_ratio_paired(a, b, n, &r);
        cr_assert_float_eq(log(r.hi) - m, tq * se, 2e-4 * se, "%d pairs: t %g", n,
                           (log(r.hi) - m) / se);
    }
}

/* ct_paired_again: size 2 reads A 1.5x slower in the first measure's launches only (the
 * state of those launches: the first 16), size 3 size3 times B's in every launch; size 1 is
 * their control. */
struct again {
    int calls;
    double size3;
};

static int again_launch(void *ctx, bool with, const uint64_t *sz, int n, double *t)
{
    struct again *a = ctx;
    int c = a->calls++;
    for (int i = 0; i < n; i++)
        t[i] = (double)sz[i] * (!with ? 1 : sz[i] == 3 ? a->size3 : sz[i] == 2 && c < 16 ? 1.5 : 1);
    return 0;
}

Test(stats, paired_again_counts_a_slower_size_only_when_slower_again)
{
    uint64_t sz[] = {1, 2, 3};
    bool control[] = {true, false, false}, cleared[3];
    struct again a = {0, 2}; /* size 3 twice as slow */
    struct ct_paired p;
    struct ct_paired_row w[3];
    struct ct_paired_sum t;
    struct ct_paired_redo r;
    cr_assert_eq(ct_paired_measure(sz, 3, control, NULL, 0, 0, again_launch, &a, &p), 0);
    cr_assert_eq(a.calls, 2 * CT_PAIRED_MAX, "slower sizes take every pair: %d launches", a.calls);
    ct_paired_judge(&p, control, 3, w, &t);
    cr_assert(!w[0].slower && w[1].slower && w[2].slower, "first: %d %d %d", w[0].slower,
              w[1].slower, w[2].slower);
    cr_assert_eq(ct_paired_again(&p, sz, control, w, true, 0, again_launch, &a, &r, cleared), 0);
    cr_assert_eq(r.n, 3, "the two slower sizes and their control: %d", r.n);
    cr_assert(r.map[0] == 0 && r.map[1] == 1 && r.map[2] == 2);
    cr_assert(!r.rows[1].slower && r.rows[2].slower, "again: %d %d", r.rows[1].slower,
              r.rows[2].slower);
    cr_assert(!cleared[0] && cleared[1] && !cleared[2], "cleared: %d %d %d", cleared[0], cleared[1],
              cleared[2]);
    ct_paired_redo_release(&r);
    /* measured with --pairs 10: the sizes found slower measured again with as many */
    struct again b = {0, 2};
    struct ct_paired p10;
    cr_assert_eq(ct_paired_measure(sz, 3, control, NULL, 10, 0, again_launch, &b, &p10), 0);
    ct_paired_judge(&p10, control, 3, w, &t);
    cr_assert_eq(ct_paired_again(&p10, sz, control, w, true, 0, again_launch, &b, &r, cleared), 0);
    cr_assert(r.n == 3 && r.q.min == 10 && r.rows[2].n == 10 && r.rows[0].n == 10,
              "again at %d pairs: %d, %d", r.q.min, r.rows[2].n, r.rows[0].n);
    ct_paired_redo_release(&r);
    ct_paired_release(&p10);
    w[1].slower = w[2].slower = false; /* none slower: nothing measured again */
    int before = a.calls;
    cr_assert_eq(ct_paired_again(&p, sz, control, w, true, 0, again_launch, &a, &r, cleared), 0);
    cr_assert(r.n == 0 && a.calls == before && !cleared[1] && !cleared[2]);
    ct_paired_redo_release(&r);
    ct_paired_release(&p);
}

/* A rule (sizes 2 and 3) whose size 2 read slower only in the first measure's launches
 * (again_launch: 1.5x there, 1.0 after; size 3 0.8x in every launch): measured again with
 * its rule's other size, and the rule's gain is over both measures' rounds, not over the
 * readings the second measure discounted alone. */
Test(stats, a_rule_measured_again_is_judged_on_both_measures)
{
    uint64_t sz[] = {1, 2, 3};
    bool control[] = {true, false, false}, cleared[3];
    int group[] = {-1, 0, 0};
    struct again a = {0, 0.8}; /* size 3 faster */
    struct ct_paired p;
    struct ct_paired_row w[3];
    struct ct_paired_sum t;
    struct ct_paired_redo r;
    cr_assert_eq(ct_paired_measure(sz, 3, control, group, 0, 0, again_launch, &a, &p), 0);
    ct_paired_judge(&p, control, 3, w, &t);
    cr_assert(w[1].slower && !w[2].slower);
    cr_assert_eq(ct_paired_again(&p, sz, control, w, false, 0, again_launch, &a, &r, cleared), 0);
    cr_assert_eq(r.n, 2, "without groups: the slower size and its control, %d", r.n);
    ct_paired_redo_release(&r);
    a.calls = 0; /* as the first measure's launches: slower again */
    cr_assert_eq(ct_paired_again(&p, sz, control, w, true, 0, again_launch, &a, &r, cleared), 0);
    cr_assert(r.measured && r.n == 3, "with its rule's size 3: %d", r.n);
    cr_assert(!cleared[1], "slower again");
    ct_paired_redo_release(&r);
    a.calls = 16; /* fresh launches in their usual state */
    cr_assert_eq(ct_paired_again(&p, sz, control, w, true, 0, again_launch, &a, &r, cleared), 0);
    cr_assert(r.n == 3 && cleared[1]);
    struct ct_rule u[2] = {{.id = 5}, {.id = 0}};
    struct ct_ruleset set = {.rules = u, .nrules = 2};
    const struct ct_rule *at[] = {&u[1], &u[0], &u[0]};
    struct ct_ratio gain[2] = {{0}}, first, second;
    bool slow[2] = {0}, nogain[2] = {0};
    int rounds[2] = {0}, n1 = ct_paired_gain(&p, 0, &first), n2 = ct_paired_gain(&r.q, 0, &second);
    w[1].slower = false; /* cleared, as ct_verify_judge does */
    cr_assert(n1 >= CT_PAIRED_MIN && n2 >= CT_PAIRED_MIN, "%d and %d rounds", n1, n2);
    cr_assert_float_eq(first.ratio, sqrt(1.5 * 0.8), 1e-9, "the first measure: no gain");
    cr_assert_float_eq(second.ratio, sqrt(0.8), 1e-9, "the second: the gain");
    ct_paired_rules(&p, &r.q, &set, at, control, w, 3, slow, nogain, gain, rounds);
    cr_assert_eq(rounds[0], n1 + n2, "%d rounds", rounds[0]);
    double lg = (n1 * log(sqrt(1.5 * 0.8)) + n2 * log(sqrt(0.8))) / (n1 + n2);
    cr_assert_float_eq(gain[0].ratio, exp(lg), 1e-9);
    cr_assert(!slow[0] && rounds[1] == 0);
    ct_paired_rules(&p, NULL, &set, at, control, w, 3, slow, nogain, gain, rounds);
    cr_assert_eq(rounds[0], n1, "no second measure: the first alone");
    ct_paired_redo_release(&r);
    ct_paired_release(&p);
}

/* Launches whose state moves every size of the launch alike (the VM's speed between
 * launches): A's launch of the first pair runs 1.6x slower than B's, of the second 0.6x,
 * then alike. Sizes 1 and 4 are controls (the same code on both sides), size 2 runs A's
 * choice at `slow` times B's, `bias` slows every size of A's launches (a file that costs
 * time on every call), size 1000 has no control within CT_PAIRED_NEAR and no launch state
 * (equal sides). */
struct shift {
    int calls;
    double slow, bias;
    const double *vary; /* NULL, or size 2's A/B in pair i: vary[i], for slow */
};

static int shift_launch(void *ctx, bool with, const uint64_t *sz, int n, double *t)
{
    struct shift *f = ctx;
    double st = f->calls == 0   ? 1.6
                : f->calls == 3 ? 0.6
                                : 1.0,
           slow = f->vary ? f->vary[f->calls / 2] : f->slow;
    f->calls++;
    for (int i = 0; i < n; i++)
        t[i] = sz[i] == 1000 ? 7.0
                             : st * sz[i] * (with ? f->bias : 1) * (sz[i] == 2 && with ? slow : 1);
    return 0;
}

Test(stats, paired_sizes_are_judged_as_measured_and_against_the_controls_near_them)
{
    uint64_t sz[] = {1, 2, 4, 1000};
    bool control[] = {true, false, true, false};
    struct shift f = {0, 1.0, 1.0, NULL};
    struct ct_paired p;
    struct ct_paired_row w[4];
    struct ct_paired_sum t;
    struct ct_ratio q;
    cr_assert_eq(ct_paired_measure(sz, 4, control, NULL, 0, 0, shift_launch, &f, &p), 0);
    cr_assert(p.near[1][0] == 0 && p.near[1][1] == 2, "size 2's controls: %d %d", p.near[1][0],
              p.near[1][1]);
    cr_assert(p.near[3][0] == -1 && p.near[3][1] == -1, "1000 B: none within 16x");
    cr_assert(p.near[0][0] == -1 && p.near[2][1] == -1, "a control has none");
    cr_assert_eq(ct_paired_local(&p, 3, &q), 0, "no control near 1000 B");
    cr_assert_eq(ct_paired_local(&p, 0, &q), 0, "a control has no controls");
    ct_paired_judge(&p, control, 4, w, &t);
    /* the same code everywhere: the launches' state widens the ratio as measured, and against
     * the controls in the same launches it is gone */
    cr_assert(w[1].q.lo < 0.5 && w[1].q.hi > 2, "as measured [%g, %g]", w[1].q.lo, w[1].q.hi);
    cr_assert_eq(w[1].nl, CT_PAIRED_MIN);
    cr_assert_float_eq(w[1].ql.ratio, 1, 1e-9);
    cr_assert(w[1].ql.hi < 1.0001, "vs ctl [%g, %g]", w[1].ql.lo, w[1].ql.hi);
    cr_assert(t.slower == 0 && t.n_own == 2 && t.n_loc == 1, "%d %d %d", t.slower, t.n_own,
              t.n_loc);
    for (int k = 0; k < 4; k++)
        cr_assert_eq(p.n[k], CT_PAIRED_MIN, "settled: size %d after %d pairs", k, p.n[k]);
    ct_paired_release(&p);

    /* the controls of size 4: the nearest below (3, 2, 1) and above within 16x (5, 40; not
     * 100), nearest first; size 0, more than 16x below, is not one either */
    uint64_t s7[] = {0, 1, 2, 3, 4, 5, 40, 100};
    bool c7[] = {true, true, true, true, false, true, true, true};
    const int want[CT_PAIRED_NCTL] = {3, 2, 1, 5, 6, -1, -1, -1};
    f = (struct shift){0, 1.0, 1.0, NULL};
    cr_assert_eq(ct_paired_measure(s7, 8, c7, NULL, 0, 0, shift_launch, &f, &p), 0);
    for (int e = 0; e < CT_PAIRED_NCTL; e++)
        cr_assert_eq(p.near[4][e], want[e], "control %d of size 4: %d", e, p.near[4][e]);
    cr_assert_eq(ct_paired_local(&p, 4, &q), CT_PAIRED_MIN);
    cr_assert_float_eq(q.ratio, 1, 1e-9);
    ct_paired_release(&p);
    /* the same with the sizes up to 4 and above it in separate launches (split 4): size 4's
     * controls are those below it only, which ran in its process */
    const int want_split[CT_PAIRED_NCTL] = {3, 2, 1, -1, -1, -1, -1, -1};
    f = (struct shift){0, 1.0, 1.0, NULL};
    cr_assert_eq(ct_paired_measure(s7, 8, c7, NULL, 0, 4, shift_launch, &f, &p), 0);
    for (int e = 0; e < CT_PAIRED_NCTL; e++)
        cr_assert_eq(p.near[4][e], want_split[e], "split: control %d of size 4: %d", e,
                     p.near[4][e]);
    ct_paired_release(&p);

    /* A's choice 4% slower at size 2: hidden in the interval as measured, slower against its
     * controls; all 8 pairs, its controls carried along into every extra launch though not
     * open themselves; 1000 B settled after 3 */
    f = (struct shift){0, 1.04, 1.0, NULL};
    cr_assert_eq(ct_paired_measure(sz, 4, control, NULL, 0, 0, shift_launch, &f, &p), 0);
    ct_paired_judge(&p, control, 4, w, &t);
    cr_assert(!w[1].slow_measured && w[1].slow_local && w[1].slower, "%g [%g, %g]", w[1].q.ratio,
              w[1].q.lo, w[1].q.hi);
    cr_assert_float_eq(w[1].ql.ratio, 1.04, 1e-9);
    cr_assert(p.n[1] == CT_PAIRED_MAX && w[1].nl == CT_PAIRED_MAX, "%d %d", p.n[1], w[1].nl);
    cr_assert(p.n[0] == CT_PAIRED_MAX && p.n[2] == CT_PAIRED_MAX, "controls: %d %d pairs", p.n[0],
              p.n[2]);
    cr_assert(!w[0].slower && !w[2].slower && w[0].q.ratio < CT_PAIRED_TOL, "controls %g",
              w[0].q.ratio);
    cr_assert_eq(p.n[3], CT_PAIRED_MIN);
    cr_assert_eq(t.slower, 1);
    for (int i = 0; i < p.n[1]; i++)
        cr_assert(p.round[1][i] == i && p.round[0][i] == i, "pair %d from round %d", i,
                  p.round[1][i]);
    ct_paired_release(&p);

    /* a file that costs 50% on every call: as measured it is slower at size 2 and at the
     * controls, which is what a job sees; against the controls size 2 is not */
    f = (struct shift){0, 1.0, 1.5, NULL};
    cr_assert_eq(ct_paired_measure(sz, 4, control, NULL, 0, 0, shift_launch, &f, &p), 0);
    ct_paired_judge(&p, control, 4, w, &t);
    cr_assert(w[1].slow_measured && !w[1].slow_local && w[1].slower);
    cr_assert(w[0].slower && w[2].slower && !w[3].slower && t.slower == 3, "%d", t.slower);
    cr_assert_float_eq(w[1].ql.ratio, 1, 1e-9);
    ct_paired_release(&p);
}

/* A rule's gain (ct_paired_gain): its sizes judged together round by round, each against the
 * controls near it. Sizes 2 and 3 are one rule (group 0), size 1000 another (group 1); 1 and
 * 4 are controls; the launches' state (shift_launch) moves every size alike. */
Test(stats, a_rule_ships_only_where_its_sizes_show_a_gain_together)
{
    uint64_t sz[] = {1, 2, 3, 4, 1000};
    bool control[] = {true, false, false, true, false};
    int group[] = {-1, 0, 0, -1, 1};
    struct ct_paired p;
    struct ct_ratio q;
    /* 20% faster at size 2, the same at 3: a steady gain of 1 - sqrt(0.8), shown in 3 pairs */
    struct shift f = {0, 0.8, 1.0, NULL};
    cr_assert_eq(ct_paired_measure(sz, 5, control, group, 0, 0, shift_launch, &f, &p), 0);
    cr_assert_eq(ct_paired_gain(&p, 0, &q), CT_PAIRED_MIN);
    cr_assert_float_eq(q.ratio, sqrt(0.8), 1e-9);
    cr_assert(ct_paired_gains(&q), "%g [%g, %g]", q.ratio, q.lo, q.hi);
    /* 1000 B runs the same on both sides: no gain, and nothing to wait for */
    cr_assert_eq(ct_paired_gain(&p, 1, &q), CT_PAIRED_MIN);
    cr_assert(!ct_paired_gains(&q), "%g", q.ratio);
    cr_assert_float_eq(q.ratio, 1, 1e-12);
    for (int k = 0; k < 5; k++)
        cr_assert_eq(p.n[k], CT_PAIRED_MIN, "size %d: %d pairs", k, p.n[k]);
    cr_assert_eq(ct_paired_gain(&p, 2, &q), 0, "a group with no sizes");
    /* the verdict per rule: rule 0 (sizes 2, 3) kept, rule 1 (1000 B) no gain, rule 2 (the
     * library's own choice at the controls) not judged, rule 3 (no size of it measured: the
     * sizes ran out) no gain shown, not kept as verified */
    struct ct_rule r[4] = {{.id = 5}, {.id = 6}, {.id = 0}, {.id = 7}};
    struct ct_ruleset set = {.rules = r, .nrules = 4};
    const struct ct_rule *at[] = {&r[2], &r[0], &r[0], &r[2], &r[1]};
    struct ct_paired_row w[5];
    struct ct_paired_sum t;
    struct ct_ratio gain[4] = {{0}};
    bool slow[4] = {0}, nogain[4] = {0};
    int rounds[4] = {0};
    ct_paired_judge(&p, control, 5, w, &t);
    ct_paired_rules(&p, NULL, &set, at, control, w, 5, slow, nogain, gain, rounds);
    cr_assert(!slow[0] && !slow[1] && !slow[2] && !slow[3]);
    cr_assert(!nogain[0] && nogain[1] && !nogain[2] && nogain[3], "%d %d %d %d", nogain[0],
              nogain[1], nogain[2], nogain[3]);
    cr_assert(rounds[0] == CT_PAIRED_MIN && rounds[1] == CT_PAIRED_MIN && rounds[2] == 0 &&
              rounds[3] == 0);
    cr_assert_float_eq(gain[0].ratio, sqrt(0.8), 1e-9);
    ct_paired_release(&p);

    /* a steady 3% gain at size 2 is 1.5% over the rule: below the bound, settled in 3 pairs */
    f = (struct shift){0, 0.97, 1.0, NULL};
    cr_assert_eq(ct_paired_measure(sz, 5, control, group, 0, 0, shift_launch, &f, &p), 0);
    cr_assert_eq(ct_paired_gain(&p, 0, &q), CT_PAIRED_MIN);
    cr_assert(!ct_paired_gains(&q) && q.hi < 1, "%g [%g, %g]", q.ratio, q.lo, q.hi);
    cr_assert_eq(p.n[1], CT_PAIRED_MIN);
    ct_paired_release(&p);

    /* a gain that comes and goes pair by pair: not shown after 3 pairs, nor at the stricter
     * bound of the looks before the last (it would be at 6 on a 95% interval, as it was up to
     * session 71), so the rule's sizes and their controls take pairs to the last look, where
     * it is; 1000 B still settled in 3 */
    const double vary[CT_PAIRED_MAX] = {0.80, 0.98, 0.82, 0.99, 0.81, 0.97, 0.80, 0.98};
    f = (struct shift){0, 1.0, 1.0, vary};
    cr_assert_eq(ct_paired_measure(sz, 5, control, group, 0, 0, shift_launch, &f, &p), 0);
    cr_assert(p.n[1] == CT_PAIRED_MAX && p.n[2] == CT_PAIRED_MAX, "%d %d", p.n[1], p.n[2]);
    cr_assert(p.n[0] == CT_PAIRED_MAX && p.n[3] == CT_PAIRED_MAX, "controls %d %d", p.n[0], p.n[3]);
    cr_assert_eq(p.n[4], CT_PAIRED_MIN);
    cr_assert_eq(ct_paired_gain(&p, 0, &q), CT_PAIRED_MAX);
    cr_assert(ct_paired_gains(&q), "%g [%g, %g]", q.ratio, q.lo, q.hi);
    ct_paired_release(&p);
    /* the same first 3 pairs alone do not show it */
    f = (struct shift){0, 1.0, 1.0, vary};
    cr_assert_eq(ct_paired_measure(sz, 5, control, NULL, 0, 0, shift_launch, &f, &p), 0);
    p.group = group; /* judged as groups, measured without them: 3 pairs */
    cr_assert_eq(ct_paired_gain(&p, 0, &q), CT_PAIRED_MIN);
    cr_assert(!ct_paired_gains(&q) && q.ratio < 1 / CT_PAIRED_TOL, "%g [%g, %g]", q.ratio, q.lo,
              q.hi);
    p.group = NULL;
    ct_paired_release(&p);
}

/* verify --lib's sizes: the sweep's and each range's geometric midpoint (the last range's to
 * the largest swept size), as whole elements per rank, sorted and unique */
Test(stats, paired_sizes_are_the_sweeps_and_the_ranges_midpoints)
{
    struct ct_rule r[2] = {{.min_bytes = 0, .max_bytes = 5000}, {.min_bytes = 5000}};
    r[1].max_bytes = CT_BYTES_INF;
    struct ct_ruleset s = {
        .coll = CT_REDUCESCATTER, .nranks = 2, .dtype = CT_FLOAT32, .rules = r, .nrules = 2};
    struct ct_sweep_settings w = {.minbytes = 8, .maxbytes = 65536, .stepfactor = 8};
    uint64_t got[32];
    bool swept[32];
    /* 8 64 512 4096 32768; sqrt(8 * 5000) = 200; sqrt(5000 * 65536) = 18101 -> 18096 */
    const uint64_t want[] = {8, 64, 200, 512, 4096, 18096, 32768};
    const bool grid[] = {true, true, false, true, true, false, true};
    int n = ct_paired_sizes(&w, &s, got, swept, 32);
    cr_assert_eq(n, 7);
    for (int i = 0; i < n; i++) {
        cr_assert_eq(got[i], want[i], "size %d: %llu", i, (unsigned long long)got[i]);
        cr_assert_eq(swept[i], grid[i], "size %d: one of the sweep's own: %d", i, swept[i]);
    }
    r[0].max_bytes = 8; /* a range below the sweep: its midpoint is the smallest size */
    cr_assert_eq(ct_paired_sizes(&w, &s, got, swept, 32), 6);
    cr_assert(swept[0], "a midpoint on a swept size is that size");
    cr_assert_eq(ct_paired_sizes(&w, &s, got, NULL, 4), 3,
                 "at most max: 2 swept sizes, 2 midpoints");
    /* --stepfactor 1.05, 8 B..128 MiB: 300-odd distinct sizes, 64 of them spread from the
     * smallest to the largest (the first 64 grid points stopped at 172 B) */
    struct ct_rule one = {.min_bytes = 0, .max_bytes = CT_BYTES_INF};
    struct ct_ruleset ar = {
        .coll = CT_ALLREDUCE, .nranks = 2, .dtype = CT_FLOAT32, .rules = &one, .nrules = 1};
    struct ct_sweep_settings fine = {.minbytes = 8, .maxbytes = 128u << 20, .stepfactor = 1.05};
    uint64_t many[128];
    bool mine[128];
    n = ct_paired_sizes(&fine, &ar, many, mine, 128);
    int grid_n = 0;
    for (int i = 0; i < n; i++)
        grid_n += mine[i];
    cr_assert_eq(grid_n, 64, "64 of the sweep's sizes");
    cr_assert_eq(many[0], 8);
    cr_assert(mine[n - 1] && many[n - 1] > (120u << 20), "the largest swept: %llu",
              (unsigned long long)many[n - 1]);
    cr_assert(many[32] > 4096 && many[32] < (16u << 20), "the middle in the middle: %llu",
              (unsigned long long)many[32]);
}

/* The figure a verify records is over the sweep's own sizes: two midpoints where a rule gains
 * 4x would make the geomean over all five sizes read 0.5 (2x) where the grid's three, one
 * of them the rule's, read 0.794 (1.26x) */
Test(stats, paired_swept_geomean_leaves_the_midpoints_out)
{
    struct ct_paired_row w[5] = {
        {.q.ratio = 1}, {.q.ratio = 0.25}, {.q.ratio = 0.5}, {.q.ratio = 0.25}, {.q.ratio = 1}};
    const bool swept[5] = {true, false, true, false, true};
    struct ct_paired_sum t = {0};
    ct_paired_swept(w, swept, 5, &t);
    cr_assert_eq(t.n_swept, 3);
    cr_assert_float_eq(t.swept, cbrt(0.5), 1e-12, "the grid's: %f", t.swept);
    ct_paired_swept(w, NULL, 5, &t);
    cr_assert_eq(t.n_swept, 5);
    cr_assert_float_eq(t.swept, 0.5, 1e-12, "all of them: %f", t.swept);
    const bool none[5] = {false};
    ct_paired_swept(w, none, 5, &t);
    cr_assert(t.n_swept == 5 && fabs(t.swept - 0.5) < 1e-12, "none swept: all of them");
    ct_paired_swept(w, none, 0, &t);
    cr_assert(t.n_swept == 0 && t.swept == 0, "no size: no figure");
}

/* ct_paired_engine_measure (sweep --verify --lib nccl) over an engine that takes 10 us per
 * KiB with side B and 10% less with side A above 64 KiB: the sides switch in the order of
 * the pairs (A B, B A, A B), each size runs once per pass with its count from the size, and
 * the verdict reads A faster above 64 KiB and the same below. */
struct eng {
    bool with;
    int switches, calls;
    char order[16];
    struct ct_job j;
    int slow_passes; /* A 1.2x slower at 1 MiB in the first slow_passes passes (sides set) */
    bool zero;       /* every time 0 (a timer that read nothing) */
};
static int eng_side(void *arg, bool with, struct ct_err *err)
{
    struct eng *e = arg;
    (void)err;
    e->with = with;
    if (e->switches < 15)
        e->order[e->switches] = with ? 'A' : 'B';
    e->switches++;
    return 0;
}
static int eng_begin(void *ctx, const struct ct_algo *a, const struct ct_job *j, bool verify,
                     long *wrong, struct ct_err *err)
{
    struct eng *e = ctx;
    (void)a, (void)verify, (void)err;
    e->j = *j;
    *wrong = 0;
    e->calls++;
    return 0;
}
static int eng_time(void *ctx, int warmup, int iters, int reps, double *out, struct ct_err *err)
{
    struct eng *e = ctx;
    (void)warmup, (void)reps, (void)err;
    double kib = (double)e->j.count * 4 / 1024; /* allreduce float32: size = count * 4 */
    for (int i = 0; i < iters; i++)
        out[i] = 10 * kib * (e->with && kib > 64 ? 0.9 : 1.0) * (1 + 0.001 * i) *
                 (e->with && kib == 1024 && e->switches <= e->slow_passes ? 1.2 / 0.9 : 1.0) *
                 !e->zero;
    return 0;
}
static void eng_end(void *ctx)
{
    (void)ctx;
}

/* An engine of known times (st) under a paired measure (e), AllReduce float32 sum on 2 ranks,
 * 1 warmup and 5 timed calls, over sizes 16 KiB and 32 KiB (controls), 1 MiB and 4 MiB */
struct eng_run {
    struct eng st;
    struct ct_backend be;
    struct ct_err err;
    struct ct_paired_engine e;
};
static const uint64_t eng_sz[] = {16 << 10, 32 << 10, 1 << 20, 4 << 20};
static const bool eng_own[] = {true, true, false, false};
static void eng_open(struct eng_run *r)
{
    r->be =
        (struct ct_backend){.name = "test", .begin = eng_begin, .time = eng_time, .end = eng_end};
    r->e = (struct ct_paired_engine){.be = &r->be,
                                     .ctx = &r->st,
                                     .warmup = 1,
                                     .iters = 5,
                                     .side = eng_side,
                                     .arg = &r->st,
                                     .err = &r->err};
    r->e.job.coll = CT_ALLREDUCE;
    r->e.job.dtype = CT_FLOAT32;
    r->e.job.op = CT_SUM;
    r->e.job.shape = (struct ct_shape){.nranks = 2, .rank = 0, .ranks_per_node = 2};
}

Test(stats, paired_engine_switches_sides_and_times_each_size)
{
    struct eng_run x = {0};
    eng_open(&x);
    struct ct_paired p;
    cr_assert_eq(ct_paired_engine_measure(&x.e, eng_sz, 4, eng_own, NULL, &p), 0, "%s", x.err.msg);
    cr_expect_eq(p.rounds, CT_PAIRED_MIN, "A is not slower anywhere: no extra pairs");
    cr_expect_str_eq(x.st.order, "ABBAAB");
    cr_expect_eq(x.st.calls, 4 * 2 * CT_PAIRED_MIN);
    struct ct_paired_row w[4];
    struct ct_paired_sum t;
    ct_paired_judge(&p, eng_own, 4, w, &t);
    cr_expect_float_eq(w[0].q.ratio, 1.0, 1e-9);
    cr_expect_float_eq(w[1].q.ratio, 1.0, 1e-9);
    cr_expect_float_eq(w[2].q.ratio, 0.9, 1e-9);
    cr_expect_float_eq(w[3].mb, 10 * 4096 * 1.002, 1e-6, "the median of 5 at 4 MiB: %g", w[3].mb);
    cr_expect(!t.slower);
    ct_paired_release(&p);
    struct eng_run y = {0}; /* --pairs 5: five pairs over the engine's sides */
    eng_open(&y);
    y.e.pairs = 5;
    cr_assert_eq(ct_paired_engine_measure(&y.e, eng_sz, 4, eng_own, NULL, &p), 0, "%s", y.err.msg);
    cr_expect(p.rounds == 5 && p.n[0] == 5 && p.n[3] == 5, "%d rounds", p.rounds);
    cr_expect_str_eq(y.st.order, "ABBAABBAAB");
    ct_paired_release(&p);
}

/* A time of 0 (or not finite) fails the measure, naming the size: a ratio of it would read
 * a geomean of 0 and a size never slower. */
Test(stats, paired_engine_refuses_a_time_of_0)
{
    struct eng_run x = {0};
    eng_open(&x);
    x.st.zero = true;
    struct ct_paired p = {0};
    cr_assert_lt(ct_paired_engine_measure(&x.e, eng_sz, 4, eng_own, NULL, &p), 0);
    cr_expect(strstr(x.err.msg, "allreduce 16384 bytes: a time of 0 us"), "%s", x.err.msg);
    ct_paired_release(&p);
}

/* sweep --verify --lib nccl: a size found slower is measured again over the engine (fresh
 * passes on the same communicators) with its controls and its rule's other sizes, and
 * counts only when slower again: 1 MiB reads 1.2x slower in the first measure's passes;
 * measured again after them it is not (cleared), and measured again while still in them it
 * is (not cleared). */
Test(stats, paired_engine_measures_a_slower_size_again)
{
    for (int c = 0; c < 2; c++) {
        struct eng_run x = {.st = {.slow_passes = c == 0 ? 2 * CT_PAIRED_MAX : 1000}};
        eng_open(&x);
        const int group[] = {-1, -1, 0, 0};
        bool cleared[4];
        struct ct_paired p;
        struct ct_paired_redo r;
        struct ct_paired_row w[4];
        struct ct_paired_sum t;
        cr_assert_eq(ct_paired_engine_measure(&x.e, eng_sz, 4, eng_own, group, &p), 0, "%s",
                     x.err.msg);
        cr_assert_eq(x.st.switches, 2 * CT_PAIRED_MAX, "the slower size takes every pair");
        ct_paired_judge(&p, eng_own, 4, w, &t);
        cr_assert(w[2].slower && !w[3].slower, "case %d: 1 MiB slower", c);
        cr_assert_eq(ct_paired_engine_again(&x.e, &p, eng_sz, eng_own, w, &r, cleared), 0, "%s",
                     x.err.msg);
        cr_expect(r.measured && r.n == 2 && r.map[0] == 2 && r.map[1] == 3,
                  "case %d: 1 MiB and its rule's 4 MiB (no control within 16x): %d", c, r.n);
        cr_expect(x.st.switches > 2 * CT_PAIRED_MAX, "case %d: through the engine's sides", c);
        cr_expect_eq(cleared[2], c == 0, "case %d: cleared only when not slower again", c);
        cr_expect(!cleared[3], "case %d: a size not slower is not cleared", c);
        ct_paired_redo_release(&r);
        ct_paired_release(&p);
    }
}

/* Sizes 1 KiB and 32 KiB run the library's own choice on both sides (controls); 2-16 KiB are
 * one exported rule, 0.7x the defaults' time except where slow[] says 1.3x. The launches'
 * state moves every size alike (the first pair's A 1.6x, the second's 0.6x). */
struct edge {
    int calls;
    bool slow[6];
    double later; /* > 0: the sizes that gain read so from the 17th launch on (a second measure) */
};

/* The file those sizes check: below the rule a rule of the file's, above it the library's
 * own choice; at[k], the rule at sz[k]. */
#define EDGE_FILE(sz, control, group, r, set, at)                                                  \
    uint64_t sz[] = {1024, 2048, 4096, 8192, 16384, 32768};                                        \
    bool control[] = {true, false, false, false, false, true};                                     \
    int group[] = {-1, 1, 1, 1, 1, -1};                                                            \
    struct ct_rule r[3] = {{.min_bytes = 0, .max_bytes = 1500, .algo = "linear", .id = 1},         \
                           {.min_bytes = 1500, .max_bytes = 20000, .algo = "ring", .id = 4},       \
                           {.min_bytes = 20000, .max_bytes = CT_BYTES_INF, .algo = "default"}};    \
    struct ct_ruleset set = {.rules = r, .nrules = 3};                                             \
    const struct ct_rule *at[] = {&r[0], &r[1], &r[1], &r[1], &r[1], &r[2]}

static int edge_launch(void *ctx, bool with, const uint64_t *sz, int n, double *t)
{
    struct edge *f = ctx;
    double st = f->calls == 0 ? 1.6 : f->calls == 3 ? 0.6 : 1.0;
    f->calls++;
    for (int i = 0; i < n; i++) {
        int k = 0;
        while ((1024u << k) < sz[i])
            k++;
        double gain = f->later > 0 && f->calls > 2 * CT_PAIRED_MAX ? f->later : 0.7;
        double a = k == 0 || k == 5 ? 1.0 : f->slow[k] ? 1.3 : gain;
        t[i] = st * (double)sz[i] / 1000 * (with ? a : 1);
    }
    return 0;
}

/* A rule slower than the defaults only at its first or last sizes is cut to the sizes
 * between, where it gains (ct_paired_trim), and the verdict applied to a config cuts it
 * there, the rest set back to the library's own choice (ct_config_lib_judged): the gain
 * beyond a crossover the sweep placed a step early is kept, the edge given back. A slower
 * size between two that gain, or no size that gains, leaves no cut. */
Test(stats, a_rule_slower_only_at_its_edge_is_cut_to_where_it_gains)
{
    EDGE_FILE(sz, control, group, r, set, at);
    static const struct {
        bool slow[6];
        uint64_t lo, hi; /* 0: no cut */
    } want[] = {
        {{0, 1, 0, 0, 0, 0}, 2896, 20000}, /* the first size: cut from the midpoint */
        {{0, 0, 0, 0, 1, 0}, 1500, 11585}, /* the last */
        {{0, 1, 0, 0, 1, 0}, 2896, 11585}, /* both */
        {{0, 0, 1, 0, 0, 0}, 0, 0},        /* between two that gain: set back whole */
        {{0, 1, 1, 1, 1, 0}, 0, 0},        /* every size */
    };
    for (size_t c = 0; c < sizeof want / sizeof want[0]; c++) {
        struct edge f = {0};
        memcpy(f.slow, want[c].slow, sizeof f.slow);
        struct ct_paired p;
        cr_assert_eq(ct_paired_measure(sz, 6, control, group, 0, 0, edge_launch, &f, &p), 0);
        struct ct_paired_row w[6];
        struct ct_paired_sum t;
        struct ct_ratio gain[3] = {{0}};
        bool slow[3] = {0}, nogain[3] = {0};
        int rounds[3] = {0};
        ct_paired_judge(&p, control, 6, w, &t);
        ct_paired_rules(&p, NULL, &set, at, control, w, 6, slow, nogain, gain, rounds);
        cr_assert(slow[1], "case %zu: the rule is slower at a size", c);
        struct ct_paired_cut cut[3] = {{0}};
        ct_paired_trim(&p, NULL, &set, 1, sz, at, control, w, 6, &cut[1]);
        for (int k = 0; k < 6; k++)
            cr_assert_eq(p.group[k], group[k], "case %zu: groups as they were", c);
        cr_expect_eq(cut[1].lo, want[c].lo, "case %zu: from %llu", c,
                     (unsigned long long)cut[1].lo);
        cr_expect_eq(cut[1].hi, want[c].hi, "case %zu: to %llu", c, (unsigned long long)cut[1].hi);
        cr_expect_eq(cut[1].rounds > 0, want[c].lo > 0, "case %zu: %d rounds", c, cut[1].rounds);
        if (want[c].lo)
            cr_expect_float_eq(cut[1].gain.ratio, 0.7, 1e-9, "case %zu: %g", c, cut[1].gain.ratio);
        /* the verdict applied to a config holding the rule set */
        struct ct_config cf;
        memset(&cf, 0, sizeof cf);
        struct ct_librules lr = {.library = "ompi", .nsets = 1};
        lr.sets = ct_xcalloc(1, sizeof *lr.sets);
        lr.sets[0].rules = ct_xcalloc(3, sizeof r);
        memcpy(lr.sets[0].rules, r, sizeof r);
        lr.sets[0].nrules = 3;
        snprintf(lr.sets[0].verified.at, sizeof lr.sets[0].verified.at, "2026-11-30");
        cf.libs = &lr;
        cf.nlibs = 1;
        int n[CT_JUDGED_N] = {0};
        ct_config_lib_judged(&cf, "ompi", 0, &set, slow, nogain, cut, n);
        const struct ct_ruleset *s = &lr.sets[0];
        struct ct_err err = {0};
        cr_expect_eq(ct_ruleset_check_lib(s, &err), 0, "case %zu: %s", c, err.msg);
        cr_expect_eq(s->verified.at[0], 0, "case %zu: a changed set is not verified", c);
        const struct ct_rule *kept = NULL;
        for (int k = 0; k < s->nrules; k++)
            kept = !strcmp(s->rules[k].algo, "ring") ? &s->rules[k] : kept;
        if (want[c].lo) {
            cr_expect(n[0] == 0 && n[2] == 1, "case %zu: %d set back, %d cut", c, n[0], n[2]);
            /* a part cut off below is a new rule; above, the neighbour takes it */
            cr_expect_eq(s->nrules, 3 + (want[c].lo > 1500), "case %zu: %d rules", c, s->nrules);
            cr_expect_eq(s->rules[s->nrules - 1].min_bytes, want[c].hi, "case %zu", c);
            cr_assert(kept, "case %zu: the rule is kept", c);
            cr_expect(kept->min_bytes == want[c].lo && kept->max_bytes == want[c].hi &&
                          !strcmp(kept->algo, "ring"),
                      "case %zu: %s %llu-%llu", c, kept->algo, (unsigned long long)kept->min_bytes,
                      (unsigned long long)kept->max_bytes);
            for (int k = 0; k < 6; k++) /* the slower sizes run the library's own choice */
                cr_expect_str_eq(ct_ruleset_find(s, sz[k])->algo,
                                 k == 0                          ? "linear"
                                 : want[c].slow[k] || control[k] ? "default"
                                                                 : "ring",
                                 "case %zu, %llu B", c, (unsigned long long)sz[k]);
        } else {
            cr_expect(n[0] == 1 && n[2] == 0, "case %zu: %d set back, %d cut", c, n[0], n[2]);
            cr_expect(!kept, "case %zu: set back whole", c);
        }
        ct_ruleset_release(&lr.sets[0]);
        free(lr.sets);
        ct_paired_release(&p);
    }
}

/* A rule slower again at its first size in fresh launches (ct_paired_again with groups, which
 * measures its other sizes with it) is cut on both measures' readings of the sizes it keeps:
 * a gain the first measure showed and the second does not is no cut (the rule set back
 * whole); one both show is cut, over both measures' rounds. */
Test(stats, a_cut_is_judged_on_both_measures)
{
    EDGE_FILE(sz, control, group, r, set, at);
    bool cleared[6];
    const double later[] = {1.0, 0.7};
    for (int c = 0; c < 2; c++) {
        struct edge f = {.slow = {0, 1, 0, 0, 0, 0}, .later = later[c]};
        struct ct_paired p;
        struct ct_paired_redo again;
        struct ct_paired_row w[6];
        struct ct_paired_sum t;
        cr_assert_eq(ct_paired_measure(sz, 6, control, group, 0, 0, edge_launch, &f, &p), 0);
        cr_assert_eq(f.calls, 2 * CT_PAIRED_MAX, "%d launches", f.calls);
        ct_paired_judge(&p, control, 6, w, &t);
        cr_assert_eq(ct_paired_again(&p, sz, control, w, true, 0, edge_launch, &f, &again, cleared),
                     0);
        cr_assert(again.measured && again.n == 6 && !cleared[1], "slower again, %d sizes", again.n);
        struct ct_paired_cut alone = {0}, both = {0};
        ct_paired_trim(&p, NULL, &set, 1, sz, at, control, w, 6, &alone);
        ct_paired_trim(&p, &again, &set, 1, sz, at, control, w, 6, &both);
        for (int k = 0; k < 6; k++)
            cr_assert_eq(p.group[k], group[k], "case %d: groups as they were", c);
        for (int j = 0; j < again.n; j++)
            cr_assert_eq(again.q.group[j], group[again.map[j]], "case %d: again's too", c);
        cr_expect(alone.rounds >= CT_PAIRED_MIN && alone.lo == 2896 && alone.hi == 20000,
                  "case %d: the first measure alone cuts", c);
        cr_expect_float_eq(alone.gain.ratio, 0.7, 1e-9);
        if (c == 0) { /* 0.7 in 3 rounds, 1.0 in as many: no gain shown over both */
            cr_expect(both.rounds == 0 && both.lo == 0 && both.hi == 0,
                      "case %d: no cut (%d rounds, gain %g [%g, %g])", c, both.rounds,
                      both.gain.ratio, both.gain.lo, both.gain.hi);
        } else {
            cr_expect(both.lo == 2896 && both.hi == 20000, "case %d: %llu-%llu", c,
                      (unsigned long long)both.lo, (unsigned long long)both.hi);
            cr_expect(both.rounds >= alone.rounds + CT_PAIRED_MIN, "case %d: %d rounds (%d alone)",
                      c, both.rounds, alone.rounds);
            cr_expect_float_eq(both.gain.ratio, 0.7, 1e-9);
        }
        ct_paired_redo_release(&again);
        ct_paired_release(&p);
    }
}
