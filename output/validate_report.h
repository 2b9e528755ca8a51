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

/* Expected numbers: per host point-to-point GB/s (name -> value, "*" for every other host),
 * per collective busbw GB/s, and optionally the pass threshold and per-transport efficiency
 * factors that replace the defaults in probe-derived ceilings. */
struct ct_val_baseline {
    char (*host)[64];
    double *host_gbs;
    size_t n_host;
    double default_gbs; /* "*", 0 none */
    char (*coll)[16];
    double *coll_gbs;
    size_t n_coll;
    double min_pct; /* 0 = not set */
    struct ct_val_eff eff[8]; /* "efficiency": {"tcp": 0.85, ...} */
    size_t n_eff;
    char path[256];
};
/* Read a baseline (CT_EINVAL naming what was wrong, CT_EIO when it cannot be read). */
int ct_val_baseline_read(struct ct_val_baseline *b, const char *path, struct ct_err *err);
void ct_val_baseline_release(struct ct_val_baseline *b);
/* Write r's measurements as a baseline (hosts' median pair GB/s, "*" = median of those,
 * collectives' busbw, r->min_pct). */
int ct_val_baseline_write(const struct ct_val_report *r, const char *path, struct ct_err *err);
/* Replace r's ceilings with the baseline's (hosts by name, else "*"; collectives by name),
 * with formulas naming the file. */
void ct_val_baseline_apply(const struct ct_val_baseline *b, struct ct_val_report *r);

#endif
