/* SPDX-License-Identifier: MIT */
/* The verdict of `colltune validate`: text table, JSON ("colltune-validate/1") and the
 * baseline file ("colltune-validate-baseline/1") a later run is compared against. */
#ifndef CT_VALIDATE_REPORT_H
#define CT_VALIDATE_REPORT_H

#include <stdio.h>

#include "../validate/validate.h"

/* Per-host and per-NIC table, collectives, findings and the summary line. */
int ct_val_report_text(const struct ct_val_report *r, FILE *out, struct ct_err *err);
/* The whole report as JSON to path ("-" = stdout). */
int ct_val_report_json_write(const struct ct_val_report *r, const char *path, struct ct_err *err);

/* Read a baseline (CT_EINVAL naming what was wrong, CT_EIO when it cannot be read). */
int ct_val_baseline_read(struct ct_val_baseline *b, const char *path, struct ct_err *err);
/* The baseline b read holds at this run's sizes (coll_bytes 0: no collectives run): 0, or
 * CT_EINVAL saying which size it holds at (another size reads other GB/s: a 64 KiB pair half
 * a 4 MiB one's, a shortfall that is none). A baseline that states no size fits any. */
int ct_val_baseline_fits(const struct ct_val_baseline *b, uint64_t p2p_bytes, uint64_t coll_bytes,
                         struct ct_err *err);
void ct_val_baseline_release(struct ct_val_baseline *b);
/* Write r's measurements as a baseline (hosts' median pair GB/s, "*" = median of those,
 * collectives' busbw, r->min_pct, the sizes they were measured at). */
int ct_val_baseline_write(const struct ct_val_report *r, const char *path, struct ct_err *err);

#endif
