/* SPDX-License-Identifier: MIT */
/* What `colltune sweep` leaves behind and prints: its output files and the regret table. */
#ifndef CT_SWEEP_OUT_H
#define CT_SWEEP_OUT_H

#include <stdbool.h>
#include <stdio.h>

#include "../tune/libverify.h"
#include "../tune/stats.h"
#include "../tune/sweep.h"

/* Whether the files ct_sweep_outputs_write writes in dir can be written there (none is a
 * folder): 0, or the first that cannot, in err. Before a sweep runs, so that a sweep does not
 * measure for its whole budget and then fail to save. */
int ct_sweep_outputs_check(const char *dir, struct ct_err *err);
/* While a sweep runs: dir/results.json with status "running"; at the first (first), what an
 * earlier sweep left in a folder reused (config.json, its config.verified.json, the report)
 * is removed, so that an interrupted sweep never leaves a config beside results it does not
 * come from. */
int ct_sweep_outputs_running(const char *dir, const struct ct_config *meta,
                             const struct ct_sweep_point *pts, size_t n, bool first,
                             struct ct_err *err);
/* After a sweep whose ranks a signal stopped (code 128 + the signal): dir/results.json,
 * left "running", says "interrupted" and by which signal. Best effort. */
void ct_sweep_outputs_stopped(const char *dir, int code);
/* The same as the launcher stops the job (ct_launch_opts.stopped; dir is the folder): note is
 * what the line saying so adds, "; its N points are kept in DIR/results.json", or "". */
void ct_sweep_outputs_stop_note(void *dir, int sig, char *note, size_t len);
/* dir/results.json (status "done" or "failed" with msg), dir/config.json when meta has
 * rules, and the report (dir/report.html, dir/points.csv). */
int ct_sweep_outputs_write(const char *dir, const struct ct_config *meta,
                           const struct ct_sweep_point *pts, size_t n, const char *status,
                           const char *msg, struct ct_err *err);
/* After a sweep (failed: it stopped early): the crossover table, what was saved, whether
 * the budget was short, and the files written. */
void ct_sweep_summary_print(FILE *out, FILE *errf, const char *dir, const struct ct_config *meta,
                            const struct ct_sweep_result *res, bool failed, uint64_t maxbytes);
/* The table of `sweep --verify`: one row per re-measured range of conf (read from path),
 * then the worst regret; algos: the candidates --algos narrowed the alternatives to (nalgos 0:
 * every one). Returns the number of rows slower than max_regret beyond both intervals. */
int ct_regret_print(FILE *f, const char *path, const struct ct_config *conf, int nranks,
                    const struct ct_sweep_regret *g, size_t n, double max_regret,
                    const struct ct_algo *const *algos, size_t nalgos);
/* The table of `sweep --verify --lib` for ruleset s (output/paired_table.c): per size the
 * file's rule, each side's geomean time, the pairs, the ratio as measured and against the
 * controls with their intervals, SLOWER where slower; then the geomean and the worst size,
 * the controls' and the tuned sizes' lines. lib: the library's title; how: how the sides
 * alternated ("alternating launches (A B B A A B ...)"). */
void ct_paired_print(FILE *f, const char *lib, const char *how, const struct ct_ruleset *s,
                     const uint64_t *sz, int nsz, const struct ct_rule *const *rule,
                     const struct ct_paired *pr, const struct ct_paired_row *w,
                     const struct ct_paired_sum *t);
/* Then, per rule of s the file changes (not the library's own choice), its gain over the
 * rounds (ct_paired_gain: gain[r] over rounds[r], 0: none) and the verdict: slower at a size
 * (slow[r]), no gain shown (nogain[r]; said "slower over its sizes" where the rule's own
 * interval lies above CT_PAIRED_TOL though no single size's does), both setting it back to
 * lib's choice, or kept; a slower rule with a cut (cut[r].rounds > 0; cut may be NULL) is
 * kept on the cut's range, with the kept sizes' gain. A blank line ends the table. */
struct ct_paired_cut;
void ct_paired_print_gains(FILE *f, const char *lib, const struct ct_ruleset *s,
                           const struct ct_ratio *gain, const int *rounds, const bool *slow,
                           const bool *nogain, const struct ct_paired_cut *cut);
/* Then, where sizes the file keeps at lib's own choice (own[k]) read slower (w[k].slower, the
 * same code on both sides), a line naming them and a blank line: no rule of the file's is to
 * blame there, and none is set back. Nothing when there are none. */
void ct_paired_print_own_slow(FILE *f, const char *lib, const uint64_t *sz, int nsz,
                              const bool *own, const struct ct_paired_row *w);

/* After a verify's sizes found slower (w[k].slower) were measured again (r, ct_paired_again;
 * nothing when none was): one line of each such size's ratio as measured and against its
 * controls, its pairs and SLOWER where slower again, then whether any was (counted) or none
 * (not counted) and, with groups, that their rules' other sizes were measured with them.
 * where: "in the table below"; again: how ("fresh launches"). */
void ct_paired_print_again(FILE *f, const uint64_t *sz, const struct ct_paired_row *w,
                           const struct ct_paired_redo *r, bool groups, const char *where,
                           const char *again);

/* sweep --lib --env-search's table (tune/libverify_search.c): per value of the variable name,
 * its row (struct ct_search_row, tune/libverify.h); the rows from coarse on the finer step's.
 * base: what both sides ran with ("" none). */
void ct_search_print(FILE *f, const char *name, const char *base, const struct ct_ruleset *sets,
                     int nsets, const struct ct_search_row *rows, int nrows, int coarse);
/* Then the value found (pick; NULL: none, the library's (lib's) own), the one the sweep runs
 * with where it is the only variable searched (alone), and where it is at an end of the
 * values judged (ends[0] none below it, ends[1] none above), that one past it may be faster
 * still. */
void ct_search_print_pick(FILE *f, const char *name, const char *lib,
                          const struct ct_search_row *pick, const bool ends[2], bool alone);
/* Of two or more variables searched: the values the sweep runs with (found[0..n), value ""
 * none found); was: where the first was searched again with the second's value found, its
 * value found before ("" none), else NULL: whether the search settled. */
void ct_search_print_found(FILE *f, const struct ct_lib_env *found, int n, const char *was);

#endif
