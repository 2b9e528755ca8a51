/* SPDX-License-Identifier: MIT */
/*
 * The sweep report: points.csv (every measured point) and report.html (a self-contained page
 * with one busbw-vs-size SVG plot per collective, the rules and the winning parameters).
 */
#ifndef CT_REPORT_H
#define CT_REPORT_H

#include <stddef.h>

#include "../tune/tune.h"
#include "../lib/err.h"

/*
 * Write dir/points.csv and dir/report.html, each atomically (dir must exist). cfg may be NULL
 * (no fingerprint, settings or rules); pts may be NULL when n is 0, which gives a page that
 * says nothing was measured. Borrows everything; keeps no reference.
 *
 * points.csv: a header row, then one row per point in the given order:
 *   coll,algo,<one column per parameter (ct_param_desc names)>,intra,inter,size,count,
 *   median_us,ci_lo_us,ci_hi_us,samples,converged,busbw_GBps,pruned
 * Fields are quoted per RFC 4180 when they hold a comma, quote or line break; lines end in
 * "\n"; non-finite numbers are empty fields; booleans are 0/1.
 */
int ct_report_write(const char *dir, const struct ct_config *cfg, const struct ct_sweep_point *pts,
                    size_t n, struct ct_err *err);

#endif
