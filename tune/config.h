/* SPDX-License-Identifier: MIT */
/* A sweep's result as a tuned config, and the checks of a sweep configuration. */
#ifndef CT_TUNE_CONFIG_H
#define CT_TUNE_CONFIG_H

#include "sweep.h"

/* A config's header for a sweep of cfg: version, date (now, UTC), fingerprint of the job
 * (hosts, the transports carrying it, rank 0's host) and the settings. */
void ct_sweep_meta_init(struct ct_config *m, const struct ct_sweep_cfg *cfg, const char *version,
                        int hosts, const char *transport, const char *host);
/* The sweep settings a config records, from cfg. */
void ct_sweep_settings_fill(struct ct_sweep_settings *s, const struct ct_sweep_cfg *cfg);
/* Rules of every swept collective from res's points (collectives without points are left
 * out) and res's accounting, into m (fingerprint and settings already filled). */
void ct_sweep_config_build(struct ct_config *m, const struct ct_sweep_cfg *cfg,
                           const struct ct_sweep_result *res, bool partial);
/* Ranges of s (from ct_select_rules over pts) cut where their algorithm stops being able to
 * run (ct_sweep_support_top): the sizes above go to the next range, or after the last to
 * the algorithm that runs at every size and was fastest at the largest size measured (none
 * measured: the simplest candidate that runs there). A config never names an algorithm for
 * a size it cannot run. */
void ct_sweep_rules_fit(const struct ct_sweep_cfg *cfg, const struct ct_sweep_point *pts, size_t n,
                        struct ct_ruleset *s);
/* Some candidate of every collective runs at every size (a tuned config covers 0..inf):
 * CT_EINVAL naming the largest size any of them runs at and why not above (selected: the
 * user named the candidates). */
int ct_sweep_cfg_check_cover(const struct ct_sweep_cfg *cfg, bool selected, struct ct_err *err);
/* Sizes and iteration bounds: CT_EINVAL with a one-line message. */
int ct_sweep_cfg_check(const struct ct_sweep_cfg *cfg, struct ct_err *err);
/* The budget covers at least one point of each collective. */
int ct_sweep_cfg_check_budget(const struct ct_sweep_cfg *cfg, struct ct_err *err);
/* On the job's shape (cfg->job.shape): a candidate for every collective (selected: the user
 * named the candidates). */
int ct_sweep_cfg_check_shape(const struct ct_sweep_cfg *cfg, bool selected, struct ct_err *err);
/* Before a sweep starts: the shape's candidates (when the shape is known), and with an
 * output folder out (NULL for --verify) their cover of every size (ct_sweep_cfg_check_cover,
 * when the shape is known) and the budget; the folder itself is the caller's (cmd/). */
int ct_sweep_cfg_check_start(const struct ct_sweep_cfg *cfg, bool shape_known, bool selected,
                             const char *out, struct ct_err *err);

#endif
