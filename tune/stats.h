/* SPDX-License-Identifier: MIT */
/*
 * Sample statistics of timed iterations: the median with a distribution-free 95%
 * confidence interval taken from order statistics (no normality assumed), and the rules
 * that say when a point has been measured well enough.
 */
#ifndef CT_STATS_H
#define CT_STATS_H

#include <stdbool.h>
#include <stdint.h>

#include "tune.h"

/* Fewest samples whose order-statistic interval reaches 95% coverage (min..max of 6). */
#define CT_STATS_MIN_CI 6

/*
 * 1-based ranks (lo, hi) of the order statistics X(lo) <= median <= X(hi) with at least
 * 95% coverage: the largest lo with P(Binomial(n, 1/2) <= lo - 1) <= 0.025, hi = n + 1 - lo.
 * Exact binomial up to n = 1000, normal approximation beyond. Returns false when n is too
 * small for 95% (n < 6); then lo = 1, hi = n (the whole range).
 */
bool ct_stats_ci_ranks(int n, int *lo, int *hi);

/* Summary of n >= 1 samples in any order (x is not modified): median, its 95% interval,
 * min, max, mean, sample standard deviation. converged and spent_s are left at 0. */
void ct_stats_compute(const double *x, int n, struct ct_stats *st);

/* (hi - lo) / median; INFINITY when the median is not positive or n is too small for a
 * 95% interval. */
double ct_stats_rel_width(const struct ct_stats *st);

/* The interval is a 95% one and its relative width is at most target. */
bool ct_stats_converged(const struct ct_stats *st, double target);

/*
 * Samples still needed to reach target, assuming the interval narrows as 1/sqrt(n):
 * n * (width / target)^2 - n, at least 1 (CT_STATS_MIN_CI - n while below that).
 * 0 when already converged.
 */
int ct_stats_more(const struct ct_stats *st, double target);

/*
 * Ratio of geometric means a/b of two small sets of run times (alternating launches, one
 * time each) with a 95% interval: Welch's difference of mean log times, Student's t for the
 * smaller set's degrees of freedom. n >= 2 each, times > 0; all 0 when undefined.
 */
struct ct_ratio {
    double ratio, lo, hi;
};
void ct_stats_ratio(const double *a, int na, const double *b, int nb, struct ct_ratio *r);

/*
 * The same for n >= 2 pairs (a[i], b[i]) measured side by side (one launch each, in turn):
 * the mean of the pairs' log ratios with Student's t for n - 1 degrees of freedom, so a
 * machine whose speed moves between pairs widens the interval only as much as it moves
 * within them. Its ratio is the ratio of the geometric means, as ct_stats_ratio's.
 */
void ct_stats_ratio_paired(const double *a, const double *b, int n, struct ct_ratio *r);
/* The same with the interval mean +- t se, t Student's for a one-sided tail (0 < tail < 0.5:
 * 0.025 is the 95% above); a sequential look's wider interval (ct_paired_gain). */
void ct_stats_ratio_paired_at(const double *a, const double *b, int n, double tail,
                              struct ct_ratio *r);
/* Student's t on df >= 1 degrees of freedom: P(T > t), and the t with P(T > t) = tail
 * (0 < tail <= 0.5; NAN outside). */
double ct_stats_t_tail(double t, int df);
double ct_stats_t_quantile(double tail, int df);

/*
 * Paired launches (tune/paired.c) of side A against side B over sizes sz[0..nsz): the
 * pairs alternate their order (A B, B A, ...); CT_PAIRED_MIN pairs at every size, then more
 * of the sizes where A may be more than CT_PAIRED_TOL slower (the ratio above it), up to
 * CT_PAIRED_MAX (or the pairs asked for, p->max), so that a size is judged slower on all of them
 * (unless settled, below). launch runs one side over the n sizes given, writes their times into t
 * and returns 0 or a code, which stops the measure and is returned. control (NULL: none) marks the
 * sizes where both sides run the same code (the file keeps the library's own choice there). A
 * launch's state (the VM's speed, another process) moves all its sizes, by an amount that depends
 * on the size (5x at 8 B, 1.7x at 32 KiB between launches of one verify here), and three pairs do
 * not cancel it. So each other size gets the controls nearest it, up to CT_PAIRED_NCTL / 2 below
 * and as many above within CT_PAIRED_NEAR (x or /), and ct_paired_local gives its ratio pair by
 * pair against their geomean in the same two launches: what A's choice gains over the library's own
 * at that size, the launches' state taken out (several controls, because each one's own noise adds
 * to that ratio's). A size that takes extra pairs carries its controls along.
 * A size settled slower, its interval (and against its controls, where it has them) wholly
 * above CT_PAIRED_SETTLED, takes no more pairs: the noise the extra pairs guard against read
 * 1.13x, and a 2x loss beyond a 3-pair interval is certain (6x slower segments, 4-15x slower
 * TCP at 2 KiB took 8 pairs, then 8 again in fresh launches, to say what 3 said).
 * ct_paired_slower: A is slower than B by more than CT_PAIRED_TOL beyond the interval (a
 * 0.97x bound: where both sides ran the same setting, three sizes of 28 read 1.05-1.09
 * with intervals just above 1, and a 1-3% loss at one size cannot be told from that).
 */
#define CT_PAIRED_MIN 3
#define CT_PAIRED_MAX 8
/* A measure may ask for more pairs at every size (sweep --pairs N, N <= CT_PAIRED_CAP): then
 * N at every size, and up to the larger of N and CT_PAIRED_MAX where a size is open. Each
 * size's interval narrows with the pairs as Student's t over sqrt(n) does (3 pairs: 2.48
 * standard deviations of a pair's log ratio each side; 8: 0.84; 16: 0.53; 32: 0.36): the
 * verify's power bought with launches. */
#define CT_PAIRED_CAP 32
#define CT_PAIRED_TOL 1.03
#define CT_PAIRED_SETTLED 2.0
#define CT_PAIRED_NEAR 16
#define CT_PAIRED_NCTL 8
typedef int (*ct_paired_launch_fn)(void *ctx, bool with, const uint64_t *sz, int n, double *t);
struct ct_paired {
    int rounds;
    int min, max;                                    /* pairs at every size, at most */
    double (*a)[CT_PAIRED_CAP], (*b)[CT_PAIRED_CAP]; /* [size][pair] */
    int (*round)[CT_PAIRED_CAP];                     /* [size][pair]: the round it came from */
    int *n;                                          /* pairs measured per size */
    int (*near)[CT_PAIRED_NCTL]; /* [size]: its controls, nearest first below, then above; -1
                                    ends the list (none for a control) */
    int nsz;
    int *group; /* [size]: its group (the exported rule it checks), < 0 none; NULL: no groups */
};
/* sz: sorted ascending (the parts and each size's controls are found in that order).
 * pairs: the pairs at every size (CT_PAIRED_MIN where fewer, 0 too; at most CT_PAIRED_CAP), more up
 * to CT_PAIRED_MAX or pairs, the larger, where a size is open (p->min, p->max). split: the launch
 * fn is given the sizes up to split and those above in separate launches (0: one for all), each
 * part's two sides back to back (A B for the small, A B for the large; B A, B A the next round): a
 * pair's launches moments apart, since this VM's speed moves within seconds (12 pairs at 8 B-32 KiB
 * read a pair's log ratio 0.09-0.23 apart with the sides back to back, 0.36-0.57 with the first
 * side's 8-128 MiB launch between them, 0.21-0.42 with 5 s between them); a size's controls are
 * taken on its own side, where the same process ran them. group (NULL: none) puts sizes in groups
 * (>= 0; < 0: in none): the sizes of one exported rule, judged together by ct_paired_gain. A
 * group's sizes also take more pairs, up to p->max, while its gain reads below 1 and is not yet
 * shown (ct_paired_gains). */
int ct_paired_measure(const uint64_t *sz, int nsz, const bool *control, const int *group, int pairs,
                      uint64_t split, ct_paired_launch_fn launch, void *ctx, struct ct_paired *p);
void ct_paired_release(struct ct_paired *p);
/* Size k's ratio A/B divided, pair by pair, by the geomean of its controls' ratios in
 * the same round, with a 95% interval over those pairs: the pairs used, 0 (q zeroed) when k
 * has no control near it or fewer than 2 such pairs. */
int ct_paired_local(const struct ct_paired *p, int k, struct ct_ratio *q);
bool ct_paired_slower(const struct ct_ratio *q);
/* A is faster than B by more than CT_PAIRED_TOL beyond the interval (hi below 1 / 1.03): the
 * mirror of ct_paired_slower. One size's gain, not a rule's: where both sides ran the same
 * setting a size reads so about as often as slower, so it counts only when fresh launches show
 * it again at the same size (tune/libverify_env.c, a launch setting's gain at a size). */
bool ct_paired_faster(const struct ct_ratio *q);
/* Group g's ratio A/B: in each round where all of its sizes ran, the geomean of their ratios,
 * each against its controls where it has any (ct_paired_local's pair), else as measured; an
 * interval over those rounds (ct_paired_gain_tail, below). Returns the rounds used, 0 (q
 * zeroed) when fewer than 2.
 * ct_paired_gains: A is faster than B beyond that interval (hi < 1) and by more than
 * CT_PAIRED_TOL (ratio < 1 / 1.03), the bound a change must clear to be worth shipping: a
 * rule that gains less, or cannot show it, changes nothing a job would notice, and a file
 * whose every rule is such changes nothing at all.
 * The interval is a sequential test's (Haybittle-Peto): a group takes pairs until its gain
 * is shown (ct_paired_measure), so the gain is looked at after each pair from p->min to
 * p->max, and a 95% interval at each look kept a rule without any gain 5.7-6.9% of the time
 * over the six looks of the default 3..8 pairs where a size's noise is above the 3% bound
 * (2.2-3.0% below it; the verify's own code under a null rule, as tests/tune/test_paired_seq.c
 * runs it; 2.5% is one look's). So a look before p->max takes the one-sided tail
 * CT_PAIRED_EARLY (t 14.1 on 3 pairs, 4.8 on 6: only a gain far beyond the noise stops early)
 * and the last look the tail that keeps the looks together at 2.5% (ct_paired_gain_tail(p, n,
 * false) for n rounds: 0.0199 after the default's six looks, 0.025 for one look, p->min ==
 * p->max), found by simulating the looks (t on normal log ratios, 400,000 runs each) and
 * checked on the verify's own code. A group measured again (ct_paired_gain_both: both
 * measures' rounds together, whose count the second measure's own looks set) is outside
 * that calibration: it is judged at the early tail, the strict one (again true). What stops
 * a group for want of a gain (a 95% interval) and a rule "slower over its sizes" (95%) take
 * no look's tail: neither keeps a rule. ct_paired_group: group g's ratio over p's rounds and
 * again's (NULL: none) with the interval for a one-sided tail (0: the look's, as above). */
#define CT_PAIRED_EARLY 0.0025
int ct_paired_gain(const struct ct_paired *p, int g, struct ct_ratio *q);
bool ct_paired_gains(const struct ct_ratio *q);
double ct_paired_gain_tail(const struct ct_paired *p, int n, bool again);
int ct_paired_group(const struct ct_paired *p, const struct ct_paired *again, int g, double tail,
                    struct ct_ratio *q);
/* The verdict of a paired measure, size by size: the geomeans of each side, the ratio as
 * measured and against the controls near it (nl pairs, 0: none), and whether each says A
 * is slower (ct_paired_slower); slower when either does. As measured is what a job loading
 * the file sees at that size (a file that slows every size alike, a rules lookup on each
 * call, shows there and not against the controls); against the controls is whether the
 * file's choice beats the library's own in the same launches (a launch's state, which
 * widens the ratio as measured, is taken out). The summary: the geomean of the ratios, the
 * worst, the controls' geomean (n_own sizes), the other sizes' (as measured) and, over the
 * n_loc of them with controls near, their geomean against those.
 * What the measure could tell: a row's tell is the true ratio A/B at which its interval's
 * low end would sit at CT_PAIRED_TOL, at this spread and its pairs (ct_paired_tell: CT_PAIRED_TOL x
 * hi / ratio of its interval, the narrower of as measured and against its controls); the summary's
 * tell is their median over the sizes the file tunes (all of them where it tunes none: a measure of
 * launch settings), tell_k the size of the widest (rows[tell_k].tell). A true loss at a size's tell
 * puts its interval's low end at the bound: one measure finds it about half the time, a smaller
 * loss less often, and a size found slower counts only when found again; so a verdict of no size
 * slower does not bound a loss at the tell: the tell says how coarse the measure's sieve was, at
 * the pairs each size took. */
struct ct_paired_row {
    double ma, mb, tell;
    struct ct_ratio q, ql;
    int n, nl;
    bool slow_measured, slow_local, slower;
};
struct ct_paired_sum {
    double geo, worst, own, tuned, local, swept, tell;
    int worst_k, n_own, n_loc, slower, n_swept, tell_k, n_tell;
};
double ct_paired_tell(const struct ct_ratio *q);
void ct_paired_judge(const struct ct_paired *p, const bool *control, int nsz,
                     struct ct_paired_row *rows, struct ct_paired_sum *sum);
/* sum->swept: the geomean of rows' ratios over the n_swept sizes k where swept[k] (NULL: all,
 * as ct_paired_judge leaves it): the sweep's own sizes, without the ranges' midpoints verify
 * adds (ct_paired_sizes). The figure a verify records: its sizes stand evenly on the sweep's
 * log-spaced grid, where the midpoints crowd about the rules and would weigh what the rules
 * change more than the grid does. Where none is swept (none of the sweep's sizes has a whole
 * element per rank), all of them; 0 where nsz is 0. */
void ct_paired_swept(const struct ct_paired_row *rows, const bool *swept, int nsz,
                     struct ct_paired_sum *sum);
/* Group g's ratio as ct_paired_gain gives it, over the rounds of p and of again (a second
 * measure whose groups are p's, ct_paired_again's r->q; NULL, or none of g's sizes in it:
 * p's rounds alone, as ct_paired_gain). */
int ct_paired_gain_both(const struct ct_paired *p, const struct ct_paired *again, int g,
                        struct ct_ratio *q);
/* The verdict per rule of s the file changes, from the measure p (groups: the rules' indices)
 * and its rows: slow[r], slower at one of its sizes (rows[k].slower); its gain over the
 * rounds (gain[r] over rounds[r], ct_paired_gain) and nogain[r], not shown
 * (ct_paired_gains). A rule whose sizes were measured again (again, NULL: none; a size of
 * its found slower) is judged on both measures' rounds (ct_paired_gain_both): the second
 * one is why its slower size no longer counts, and its first readings alone would still
 * count against its gain. rule[k]: the rule at size k; control[k]: the library's own choice
 * there (no rule judged). slow, nogain, gain and rounds have s->nrules entries, zeroed. */
void ct_paired_rules(const struct ct_paired *p, const struct ct_paired *again,
                     const struct ct_ruleset *s, const struct ct_rule *const *rule,
                     const bool *control, const struct ct_paired_row *rows, int nsz, bool *slow,
                     bool *nogain, struct ct_ratio *gain, int *rounds);
/* The sizes of p at sz that its rows found slower (rows[k].slower) measured again in fresh
 * paired launches (launch, split as for ct_paired_measure), each with its controls (p->near,
 * control as for the first measure), and with groups (p's groups: the rules' indices) every
 * size of a slower size's group too, in those groups, so that its rule's gain can be judged on
 * both measures (ct_paired_rules). A launch's state moves all of its sizes, and
 * alternating launches of the same code read slower beyond a size's interval (session 42), so
 * a size counts as slower only when found so again: cleared[k] (nsz entries) is set where
 * size k was slower and is not again. r gets the second measure (r->q, when r->measured) and
 * its rows: r->n sizes, r->map[j] the index in sz of its row r->rows[j]. Returns 0 (r->n 0
 * when no size was slower) or the launch's code; ct_paired_redo_release frees r either way. */
struct ct_paired_redo {
    int n;
    int *map;
    struct ct_paired_row *rows;
    struct ct_paired q;
    bool measured;
};
int ct_paired_again(const struct ct_paired *p, const uint64_t *sz, const bool *control,
                    const struct ct_paired_row *rows, bool groups, uint64_t split,
                    ct_paired_launch_fn launch, void *ctx, struct ct_paired_redo *r, bool *cleared);
void ct_paired_redo_release(struct ct_paired_redo *r);
/* Rule r of s found slower (ct_paired_rules) only at its first and/or last sizes: the
 * sizes between, none slower, kept when they show a gain by themselves (ct_paired_gain_both
 * over them alone, in p and in again's second measure where it measured them; again NULL or
 * not measured: p alone; ct_paired_gains). Then the rule's range cut to them: [lo, hi), each cut at
 * the geometric midpoint between the last size dropped and the first kept, the rule's own bound
 * where nothing was dropped; gain over rounds (> 0) the kept sizes'. rounds 0: no such cut
 * (a slower size between two that were not, nothing kept, or no gain shown). sz as measured
 * (sorted), rule and control as for ct_paired_rules; rows with the sizes not slower again
 * cleared (ct_verify_judge); p's and again's groups are r's indices, left as they were. The
 * second measure ran the rule's other sizes beside its slower ones (ct_paired_again with
 * groups), so the kept sizes' gain is judged on both, as a whole rule's is: the first
 * measure's readings alone would decide a cut that fresh launches also measured. A range's edge is
 * where the sweep put a crossover, which can sit a step before the gain begins (Open MPI's
 * segmented_ring at 16 MiB read 1.02 against its controls, a tie, in a rule faster as a whole from
 * 32 MiB): the gain beyond it is kept, the edge given back. */
struct ct_paired_cut {
    uint64_t lo, hi;
    struct ct_ratio gain;
    int rounds;
};
void ct_paired_trim(struct ct_paired *p, struct ct_paired_redo *again, const struct ct_ruleset *s,
                    int r, const uint64_t *sz, const struct ct_rule *const *rule,
                    const bool *control, const struct ct_paired_row *rows, int nsz,
                    struct ct_paired_cut *cut);
/* The same measure over an engine in this process (sweep --verify --lib nccl), every rank in
 * lockstep: side(arg, with) switches the engine to A or B (a tuner plugin reading the file or
 * left out, on the same communicators); a "launch" runs the sizes once each, out of place,
 * warmup then iters timed calls (the median; the slowest rank's, the same on every rank, so
 * that every rank takes the same extra pairs). A failure's code is returned (err says why). */
struct ct_backend;
struct ct_paired_engine {
    const struct ct_backend *be;
    void *ctx;
    struct ct_job job; /* coll, dtype, op, shape; the count is set per size */
    int warmup, iters;
    int reps;  /* calls back to back per sample (ct_bench_cfg: 0 one, CT_BENCH_REPS_AUTO) */
    int pairs; /* at every size (0: CT_PAIRED_MIN), as ct_paired_measure's */
    int (*side)(void *arg, bool with, struct ct_err *err);
    void *arg;
    struct ct_err *err;
};
int ct_paired_engine_measure(struct ct_paired_engine *e, const uint64_t *sz, int nsz,
                             const bool *control, const int *group, struct ct_paired *p);
/* The sizes p found slower (rows) measured again over the engine, as ct_paired_again does
 * with groups (its rules' other sizes with them): fresh passes on the same communicators,
 * every rank deciding alike from the same (slowest rank's) times. */
int ct_paired_engine_again(struct ct_paired_engine *e, const struct ct_paired *p,
                           const uint64_t *sz, const bool *control,
                           const struct ct_paired_row *rows, struct ct_paired_redo *r,
                           bool *cleared);
/* The sizes a library's exported rules are verified at (sweep --verify --lib): the sweep's
 * sizes and every range's geometric midpoint (ct_sweep_check_count, the last range's to the
 * largest swept size), as whole elements; sorted, unique, <= max. swept (NULL: not wanted):
 * swept[k], out[k] is one of the sweep's own sizes (ct_paired_swept). */
int ct_paired_sizes(const struct ct_sweep_settings *w, const struct ct_ruleset *s, uint64_t *out,
                    bool *swept, int max);

/* Geometric mean of n >= 1 times > 0 (the center of ct_stats_ratio's ratio). */
double ct_stats_geomean(const double *x, int n);

#endif
