/* SPDX-License-Identifier: MIT */
/*
 * Bringing up ranks. `--local N`: fork N ranks on this host that rendezvous through a
 * listening socket made before the fork. Launchers: COLLTUNE_ROOT=host:port plus rank and
 * size from COLLTUNE_RANK/SIZE, OMPI_COMM_WORLD_RANK/SIZE, PMI_RANK/SIZE or
 * SLURM_PROCID/NTASKS (first found, in that order). Otherwise a single rank.
 */
#ifndef CT_LAUNCH_H
#define CT_LAUNCH_H

#include <stdint.h>

#include "boot.h"

struct ct_launch_cfg {
    int local;          /* --local N (0 = not local) */
    int ranks_per_node; /* virtual nodes for --local: hosts "<host>/nodeK" (0 = one node) */
    int64_t timeout_ns; /* bootstrap timeout */
};

/* Called in every rank with its bootstrap; returns an exit code (0 ok). */
typedef int (*ct_rank_fn)(struct ct_boot *boot, void *arg);

/*
 * Run fn in every rank. With cfg->local: fork, run, wait; the return value is the worst
 * exit code of the ranks, and *dead_rank is set (>= 0) to the first rank that died by a
 * signal (-1 if none), with its signal in *dead_sig. Shared-memory objects of the job are
 * removed afterwards. Otherwise: bootstrap from the environment (or a single rank) and
 * run fn in this process.
 * Returns < 0 (with err) when ranks could not be brought up.
 */
int ct_launch(const struct ct_launch_cfg *cfg, ct_rank_fn fn, void *arg, int *dead_rank,
              int *dead_sig, struct ct_err *err);

/* What the environment says about the launch, for --print-bootstrap. */
int ct_launch_describe(char *buf, size_t len);

#endif
