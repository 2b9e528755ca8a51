/* SPDX-License-Identifier: MIT */
/* What `colltune sweep` leaves behind and prints: its output files and the regret table. */
#ifndef CT_SWEEP_OUT_H
#define CT_SWEEP_OUT_H

#include <stdio.h>

#include "../tune/sweep.h"

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
 * then the worst regret. Returns the number of rows slower than max_regret beyond both
 * intervals. */
int ct_regret_print(FILE *f, const char *path, const struct ct_config *conf, int nranks,
                    const struct ct_sweep_regret *g, size_t n, double max_regret);

#endif
