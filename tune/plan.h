/* SPDX-License-Identifier: MIT */
/*
 * Sweep internals shared by the controller (sweep.c), the planner (plan.c) and the
 * tests: the command rank 0 broadcasts, and the measuring backend. The live backend runs
 * the collective on the communicator; tests plug in a synthetic one (model curves and a
 * virtual clock), so the planner is tested deterministically with the same code.
 */
#ifndef CT_SWEEP_INT_H
#define CT_SWEEP_INT_H

#include <stdint.h>

#include "sweep.h"

enum ct_sweep_op {
    CT_SWEEP_DONE = 1, /* the plan is finished */
    CT_SWEEP_MEASURE,  /* verify a new point, then time it */
    CT_SWEEP_EXTEND,   /* more samples for point `point` (fresh: instead of its samples) */
    CT_SWEEP_CONNS,    /* reopen with `streams` tcp streams and `inflight` communicators */
    CT_SWEEP_ABORT,    /* rank 0 gave up before measuring (bad input): stop with an error */
};

/* Fixed-size, plain data: rank 0's copy is the one every rank acts on. */
struct ct_sweep_cmd {
    int32_t op, coll, algo; /* algo: index in the algorithm table */
    int32_t dtype, redop;
    int32_t point, fresh; /* EXTEND */
    int32_t streams, inflight; /* CONNS */
    int32_t warmup, first_batch, min_iters, max_iters;
    uint64_t count;
    uint64_t params[CT_P_COUNT];
    double budget_s;    /* seconds the point may use in total: samples + iter_cost_s each */
    double iter_cost_s; /* rank 0's estimate of the wall time an iteration costs beyond its
                           measured time (barrier, gathering) */
    double target;      /* relative CI width that stops it */
    double ref_hi;      /* > 0: stop early once the point is prunable against this bound */
    double margin;
};


/* Per-point samples, parallel to the result's points. */
struct ct_sweep_samples {
    double *x;
    int n, cap;
};

struct ct_sweep_run {
    const struct ct_sweep_cfg *cfg;
    const struct ct_backend *be;
    void *ctx;
    struct ct_sweep_result *res;
    struct ct_sweep_samples *smp;
    size_t cap;
    int streams, inflight; /* what the connections are now (ct_sweep_conns) */
    bool issue_failed; /* a command failed: every rank knows, no ABORT needed */
};

/* Rank 0: make the connections what point params need (tcp streams, in-flight
 * communicators) when they differ and the backend can change them. */
int ct_sweep_conns(struct ct_sweep_run *r, const uint64_t *params, struct ct_err *err);
/* Act on one command (every rank). *point receives the point's index, -1 when skipped. */
int ct_sweep_exec(struct ct_sweep_run *r, const struct ct_sweep_cmd *cmd, long *point,
                  struct ct_err *err);
/* Rank 0: broadcast cmd (when the backend has bcast), then ct_sweep_exec. */
int ct_sweep_issue(struct ct_sweep_run *r, struct ct_sweep_cmd *cmd, long *point,
                   struct ct_err *err);
/*
 * Rank 0's model of what measuring costs beyond the samples themselves, fitted online
 * (exponentially weighted least squares) to each command's wall time: a fixed part per
 * point (command, preparation, verification, gathers) and a part per iteration (barrier).
 */
struct ct_sweep_cost {
    double sw, sn, snn, sy, sny; /* weighted sums */
    double fixed, iter;          /* seconds per point, per iteration */
};
void ct_sweep_cost_init(struct ct_sweep_cost *c);
/* One command's wall time; s holds the point's samples, the command added those from
 * index before on. */
void ct_sweep_cost_learn(struct ct_sweep_cost *c, const struct ct_sweep_cmd *cmd,
                         const struct ct_sweep_samples *s, int before, int reps, double wall);
/* Root, at the end of a plan that returned rc: tell the followers DONE (rc == 0) or ABORT
 * (unless a failed command already told them). Returns rc, or the broadcast's failure. */
int ct_sweep_end(struct ct_sweep_run *r, int rc, struct ct_err *err);
/* Followers: act on rank 0's commands until DONE. */
int ct_sweep_follow(struct ct_sweep_run *r, struct ct_err *err);

/* The parameter grids: values of p searched (0-terminated, at most 8), given the sweep. */
int ct_sweep_grid(const struct ct_sweep_cfg *cfg, enum ct_param_id p, uint64_t *vals);
/* Parameters searched for algorithm a (CT_PBIT set): what matters to it, minus the ones the
 * user fixed, minus grids with a single value. */
unsigned ct_sweep_searched(const struct ct_sweep_cfg *cfg, enum ct_coll c, const struct ct_algo *a);

/* ---- the planner (rank 0), shared by plan.c and plan_tune.c ------------------ */

#define CT_SWEEP_BUCKET 16.0 /* size span of a tuning bucket */

struct ct_plan_grid {
    uint64_t *count, *size;       /* per requested size; count 0 = not measurable (or duplicate) */
    const struct ct_algo **algos; /* candidates */
    int nalgos;
    long *best; /* [algo * L + i]: best point of the algorithm at size i, -1 if none */
};

struct ct_plan {
    struct ct_sweep_run run;
    const struct ct_sweep_cfg *cfg;
    struct ct_plan_grid g[CT_COLL_COUNT]; /* count == NULL: collective not requested */
    int L;                                /* requested sizes */
    double t0;
    const char *phase;
    long done, est_left;       /* points measured, expected still (progress) */
    struct ct_sweep_cost cost; /* learned overheads */
    int *ext;                  /* refinement rounds per point */
    size_t extcap;
};

/* Seconds since the plan started (rank 0's clock). */
double ct_plan_now(const struct ct_plan *pl);
const struct ct_sweep_point *ct_plan_pt(const struct ct_plan *pl, long i);
/* Candidate index of the algorithm name in g; -1 if it is not a candidate. */
int ct_plan_slot(const struct ct_plan_grid *g, const char *name);
int ct_plan_size_index(const struct ct_plan *pl, const struct ct_plan_grid *g, uint64_t size);
/* Best point of candidate k of c at size i; the leader (any candidate); -1 if none. */
long ct_plan_best(const struct ct_plan *pl, int c, int k, int i);
long ct_plan_leader(const struct ct_plan *pl, int c, int i);
/* Candidate k was measured at size i and is prunable against the leader there. */
bool ct_plan_losing(const struct ct_plan *pl, int c, int k, int i);
/* Median of k's best point (k < 0: the leader's) at size i; 0 if unmeasured. */
double ct_plan_median(const struct ct_plan *pl, int c, int k, int i);
/* Predicted microseconds per iteration (see plan.c), and wall seconds with the
 * learned per-iteration overhead. */
double ct_plan_predict_us(const struct ct_plan *pl, int c, int k, int i);
double ct_plan_iter_s(const struct ct_plan *pl, int c, int k, int i);
/* Wall seconds of a point of iters iterations of t_s each, fixed overhead included. */
double ct_plan_point_cost(const struct ct_plan *pl, double t_s, int iters);
/* params of algorithm a on collective c with the user's fixed values (where they matter
 * to it: ct_algo_params) and the defaults filled in. */
void ct_plan_params(const struct ct_plan *pl, int c, const struct ct_algo *a,
                    const struct ct_params *in, uint64_t *out);
/* A MEASURE command for algorithm a at size i of c with a per-point budget. */
void ct_plan_cmd(const struct ct_plan *pl, int c, const struct ct_algo *a, int i,
                 const struct ct_params *params, double budget_s, struct ct_sweep_cmd *cmd);
/* Issue a MEASURE or EXTEND (switching streams first when needed) and note the point;
 * *idx = -1 when it was skipped as unsupported. */
int ct_plan_issue(struct ct_plan *pl, struct ct_sweep_cmd *cmd, long *idx, struct ct_err *err);
/* Measure candidate k of c at size i with params; ref >= 0: stop early once clearly losing
 * against that point. A library's own decision ("LIB:default") never stops early: it is
 * what every exported rule is a change from, and a few samples taken in a noisy moment
 * handed its ranges to rows no faster (Open MPI ReduceScatter 4 KiB: 26 samples at 3.02 us
 * against 1.41 measured whole). The same in ct_plan_extend. */
int ct_plan_measure(struct ct_plan *pl, int c, int k, int i, const struct ct_params *params,
                    double budget_s, long ref, long *idx, struct ct_err *err);
/* The same at count, off the grid (predicted from grid size i). */
int ct_plan_measure_at(struct ct_plan *pl, int c, int k, int i, uint64_t count,
                       const struct ct_params *params, double budget_s, long ref, long *idx,
                       struct ct_err *err);
/* More samples for point idx: twice what it has spent (a first batch of `first`, 0: half
 * its samples), or fresh ones (replacing its samples) within budget_s; ref >= 0: stop
 * once clearly losing against that point. */
int ct_plan_extend(struct ct_plan *pl, long idx, bool fresh, double budget_s, int first, long ref,
                   struct ct_err *err);
/* The measurable grid size of c nearest to size in log-size; -1 if none. */
int ct_plan_nearest(const struct ct_plan *pl, int c, uint64_t size);
/* The grid of sizes and candidates per collective, and its release. */
void ct_plan_grid_build(struct ct_plan *pl);
void ct_plan_grid_release(struct ct_plan *pl);
/* Phase 1 (survey.c), phase 2 (until 85% of the budget) and phase 3 (until the end). */
int ct_plan_survey(struct ct_plan *pl, struct ct_err *err);
int ct_plan_tune(struct ct_plan *pl, struct ct_err *err);
int ct_plan_refine(struct ct_plan *pl, struct ct_err *err);
/* Phase 4, with the budget's last share: before the config is written, every chosen
 * algorithm is measured at its neighbouring sizes where it was skipped, and the two
 * contenders of every range boundary are re-measured afresh, interleaved (A B A B), so a
 * crossover rests on samples taken side by side, not on one survey batch; so are a clear
 * win of a less simple algorithm and a clear loss that the sizes beside them do not
 * repeat, against the simpler runner-up and the leader. */
int ct_plan_confirm(struct ct_plan *pl, struct ct_err *err);
/* Right after the survey of a library sweep (the engine's own rows), within 68% of the
 * budget: each size where a row beat the library's own decision is measured again, the two
 * side by side (A B A B). That comparison is what an exported rule rests on, and the tune
 * and refine phases left no budget for it in the confirm phase (2 ranks, Open MPI
 * ReduceScatter, 100 s: five such pairs, and ties with butterfly and recursive_halving
 * took 9-478 B and 2-119 KiB from the default). */
int ct_plan_confirm_library(struct ct_plan *pl, struct ct_err *err);
/* Phase 5, the budget's last share: verify's own check before the config is written. The
 * draft rules are selected from the points so far and each is measured where `sweep
 * --verify` will check it (ct_sweep_check_count): its choice and every other candidate at
 * its defaults, the close ones again side by side, and the fastest there at the grid sizes
 * beside it where it has no point. The points join the result off the grid, the selection
 * decides again with them, and rules that moved are checked in turn. */
int ct_plan_check(struct ct_plan *pl, struct ct_err *err);

#endif
