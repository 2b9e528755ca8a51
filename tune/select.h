/* SPDX-License-Identifier: MIT */
/*
 * From measured points to rules. At every measured size the fastest algorithm (its best
 * parameters: the fastest variant, unless it does not beat the defaults beyond both
 * intervals and by more than the margin) wins only when its interval lies entirely below
 * every other algorithm's, by the margin (ct_select_wins); otherwise the size's decision is
 * a tie among the acceptable algorithms (the leader and every one it does not win over).
 * Ties are decided over the whole curve, not size by size: the fewest ranges whose
 * algorithm is acceptable at each of their sizes, the simplest algorithms among those
 * (simplicity = position in the algorithm table, earlier = simpler). A tie reports gain 1
 * and its confidence that the simpler choice costs at most the margin
 * (ct_select_tie_confidence). Runs of sizes with the
 * same choice become one range; thresholds sit where the two curves cross, interpolated in
 * log space between the grid sizes; the ranges cover 0..infinity.
 */
#ifndef CT_SELECT_H
#define CT_SELECT_H

#include <stdbool.h>
#include <stddef.h>

#include "tune.h"

/* a beats b beyond both intervals: a's upper bound is below b's lower bound. */
bool ct_select_beats(const struct ct_stats *a, const struct ct_stats *b);

/* a wins over b: beyond both intervals by margin (a->hi * (1 + margin) < b->lo). A size's
 * fastest algorithm is its winner only if it wins over every other; else it is a tie. */
bool ct_select_wins(const struct ct_stats *a, const struct ct_stats *b, double margin);

/* cand is clearly losing to leader: its whole interval lies above the leader's upper bound
 * grown by margin (0.05 = 5%). Such points are not refined further. */
bool ct_select_prunable(const struct ct_stats *cand, const struct ct_stats *leader, double margin);

/* A parameter variant replaces the current values: faster beyond both intervals and by
 * more than margin (0.05 = 5%). Parameters do not move for noise or for crumbs. */
bool ct_select_better_params(const struct ct_stats *variant, const struct ct_stats *current,
                             double margin);

/* Probability-like confidence (0..1) that a is faster than b: normal approximation of the
 * difference of medians, standard errors from the 95% intervals. 0.5 = no idea. */
double ct_select_confidence(const struct ct_stats *a, const struct ct_stats *b);

/* Confidence (0..1) in a tie decided for a (the simpler) over b: that a's median is not
 * above b's by more than margin (of the smaller), i.e. that keeping a costs at most the
 * margin; normal approximation as for ct_select_confidence. A tie where a is in fact faster
 * is near 1, not 0. */
double ct_select_tie_confidence(const struct ct_stats *a, const struct ct_stats *b, double margin);

/* Position of the algorithm in the table (earlier = simpler); unknown names sort last, a
 * library engine's own decision ("LIB:default") first among them. */
int ct_select_simplicity(const char *algo);
/* algo is a library engine's own decision ("LIB:default"): what runs with no rule at all,
 * the reference every other row of that library is an export's change from. */
bool ct_select_library_default(const char *algo);
/* p runs at its algorithm's default parameters (tuned ones make it a choice of its own). */
bool ct_select_default_params(const struct ct_sweep_point *p);

/* Same algorithm and the same values of the parameters that matter to it. */
bool ct_select_same_choice(const char *algo_a, const struct ct_params *a, const char *algo_b,
                           const struct ct_params *b);
/*
 * Point i was measured again as another point (same collective, size, algorithm and
 * parameters, from another phase of the plan) with more samples, or as many and later.
 * Only that one counts, here and in the planner: taking the fastest of several
 * measurements of one setting would favour whatever was measured most often (the minimum
 * of noisy medians is biased low).
 */
bool ct_select_superseded(const struct ct_sweep_point *pts, size_t n, size_t i);

/* The decision at one size (indices into the points array). */
struct ct_select_choice {
    uint64_t size;
    size_t chosen;           /* the chosen algorithm's best point */
    long leader;             /* the fastest point by median */
    long runner;             /* best point of the closest other algorithm; -1 if there is none */
    bool tie;                /* the fastest did not win over all others (ct_select_wins) */
    double confidence, gain; /* vs runner: ct_select_confidence, runner median / chosen */
};

/* Decisions at every size where coll has valid points (wrong == 0, samples > 0), by size
 * ascending; margin as for ct_select_better_params. *out is new memory (caller frees with
 * free()); returns the count. */
size_t ct_select_choices(const struct ct_sweep_point *pts, size_t n, enum ct_coll coll,
                         double margin, struct ct_select_choice **out);

/*
 * Rules of coll: fills out->coll, out->rules (new memory, ct_ruleset_release) and
 * out->nrules; leaves the shape fields (nnodes, ranks, dtype, op) to the caller.
 * Per range: confidence = the lowest over its sizes, tie = some size was a tie,
 * runner_up = the runner-up where confidence was lowest, gain = geometric mean, tied = the
 * other algorithms acceptable at every size of it.
 * CT_EINVAL when coll has no valid point.
 */
int ct_select_rules(const struct ct_sweep_point *pts, size_t n, enum ct_coll coll, double margin,
                    struct ct_ruleset *out, struct ct_err *err);

/* Set pts[i].pruned for every point that is prunable against the fastest point of its
 * collective and size. */
void ct_select_mark_pruned(struct ct_sweep_point *pts, size_t n, double margin);

#endif
