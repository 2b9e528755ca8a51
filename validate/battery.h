/* SPDX-License-Identifier: MIT */
/* One rank's validation battery and rank 0's report (see battery.c). */
#ifndef CT_VAL_BATTERY_H
#define CT_VAL_BATTERY_H

#include <stdbool.h>
#include <stdint.h>

#include "../backend/bench.h"
#include "../backend/comm.h"
#include "validate.h"

/* What the battery needs to know of the command line. */
struct ct_val_cfg {
    struct ct_comm_cfg comm;            /* how the job's communicator was opened: a rail's
                                           communicator is opened alike, over tcp */
    struct ct_probe_cfg probe;          /* where each rank probes (sysfs root) */
    struct ct_job job;                  /* shape and parameters: the collectives run on it */
    const struct ct_val_baseline *base; /* NULL: none */
    double link_gbps;                   /* stated rate, 0: from the probe */
    double min_pct;                     /* with min_pct_set: the pass threshold */
    bool min_pct_set, no_coll;
    bool no_gpu; /* skip the GPU copies */
    uint64_t p2p_bytes, coll_bytes;
    int iters;
    int repeats;    /* re-measurements of a pair or collective below the threshold (0: none) */
    bool settle;    /* saving a baseline: every collective is measured again, repeats times */
    int dip_round;  /* test hook: the first rail's pairs of this round read 20x slow; -1 none */
    const char *dip_coll; /* test hook: this collective's first measure reads 20x slow */
};

enum ct_val_stage {
    CT_VAL_SETUP,   /* failed before any measurement (topologies, rails) */
    CT_VAL_BATTERY, /* failed while measuring: rank 0's report says what ran */
};

/*
 * Every rank of the job on comm. Rank 0 receives the finished report in *out (diagnosed;
 * release with ct_val_report_release) also when the battery broke (rc < 0 with
 * *stage == CT_VAL_BATTERY); CT_EINVAL when the job has fewer than 2 units.
 */
int ct_val_run(const struct ct_val_cfg *cfg, struct ct_boot *boot, struct ct_comm *comm,
               struct ct_val_report *out, enum ct_val_stage *stage, struct ct_err *err);
/* Rank 0's exit code to every rank (one bootstrap exchange: each node of a job of one
 * colltune a node ends with the job's verdict), once rank 0's report is out: every rank
 * passes its own in *code and gets rank 0's; where the exchange fails (rank 0 gone, or its
 * report held up past the timeout), < 0 with err, *code unchanged. */
int ct_val_verdict(struct ct_boot *boot, int *code, struct ct_err *err);

#endif
