/* SPDX-License-Identifier: MIT */
/*
 * tune/: the planner. Sweep configuration and space (measure.c), the plan (plan.c,
 * survey.c, plan_tune.c, sweep.c), statistics (stats.c), decisions: crossovers and ties
 * (select.c), verify/regret (regret.c), the config built from the points (config.c) and a
 * rank's sweep on a communicator (job.c). It knows engines only through backend/backend.h
 * (job.c alone opens the native one); it may include backend/, algos/, lib/; it never
 * prints.
 *
 * The sweep: a planner on rank 0 decides which point (collective, size, algorithm,
 * parameters) to measure next and broadcasts it as a small command; every rank measures
 * it in lockstep (verify once, then batches of timed iterations until the median's 95%
 * interval is narrow enough or the point's budget is spent). The stopping rule reads only
 * the gathered per-iteration times, identical on every rank, so all ranks always agree;
 * wall-clock decisions (the whole-sweep budget) are taken by rank 0 and travel in the
 * command.
 *
 * Plan (all budgets on rank 0's clock, from the start of the sweep):
 *   1. survey: every algorithm at its default parameters at every size (sizes ascending,
 *      collectives interleaved); an algorithm clearly losing at two sizes in a row is
 *      skipped at the next ones and re-probed every fourth size;
 *   2. tune: coordinate descent per size bucket (factor 16) for the algorithms still in
 *      contention, one parameter at a time over a small grid, starting from the defaults;
 *      the best parameters are then measured at the bucket's other sizes;
 *   3. refine: where the fastest two algorithms of a size overlap and have not reached the
 *      target width, both get more samples;
 *   4. confirm: chosen algorithms at neighbouring sizes they skipped, and both contenders of
 *      every boundary again, interleaved;
 *   5. check: the draft rules measured where `sweep --verify` will check them (plan.h).
 * Until the budget runs out; then rules are selected from everything measured.
 */
#ifndef CT_SWEEP_H
#define CT_SWEEP_H

#include <stdbool.h>
#include <stddef.h>

#include "../backend/backend.h"
#include "tune.h"

/* The default whole-sweep budget: the default plan (4 collectives, 8 B..256 MiB x2, 2 ranks)
 * fits it on a 2-core VM with room to spare. */
#define CT_SWEEP_BUDGET_S 120.0

struct ct_sweep_progress {
    enum ct_coll coll;
    const char *algo;
    uint64_t size;
    const char *phase; /* "survey", "tune", "refine", "confirm", "check", "verify" */
    long done, total;  /* points measured so far, estimated total */
    double elapsed_s, remaining_s;
};

/* Rank 0 only, before each point. */
typedef void (*ct_sweep_progress_fn)(void *arg, const struct ct_sweep_progress *p);
/* Rank 0 only, after each point: every point so far (for incremental saving). */
typedef void (*ct_sweep_points_fn)(void *arg, const struct ct_sweep_point *pts, size_t n);

#define CT_SWEEP_MAX_CANDS 64

struct ct_sweep_cfg {
    unsigned colls;                     /* CT_COLL_BIT set */
    const struct ct_algo *const *algos; /* candidates (NULL: the whole table); each is */
    size_t nalgos;                      /* used where ct_algo_supports accepts the job */
    const struct ct_algo *cands[CT_SWEEP_MAX_CANDS]; /* the backend's own rows (library */
    size_t ncands; /* engines), filled by ct_sweep_cfg_shaped; 0: the algorithm table */
    const char *lib_rows; /* the library engine's rows to measure ("LIB:NAME,..."; NULL: all),
                             its default row always (the rules' baseline) */
    const struct ct_lib_env *lib_env;   /* the library's launch settings the ranks ran under */
    int nlib_env;                       /* (at most CT_LIB_ENV_MAX): recorded in its section */
    struct ct_job job;                  /* template: dtype, op, shape; params != 0 are fixed (not
                                           searched); intra/inter for hier */
    uint64_t minbytes, maxbytes;
    double stepfactor;
    double budget_s;  /* whole sweep, rank 0's wall clock */
    double target_ci; /* relative width of the median's 95% interval */
    double margin;    /* pruning margin */
    double max_regret; /* --verify: a choice fails where slower than this ratio (1.10) */
    int warmup;       /* most warmup iterations per point (fewer for slow points) */
    int min_iters, max_iters;
    bool tcp;        /* tcp carries traffic and the backend can switch streams: search them */
    int max_threads; /* cap of the threads grid (cores per rank); <= 1: no search */
    int max_channels; /* top of the channels grid; 0: colltune's own, 4 (set by
                         ct_sweep_cfg_shaped from the backend: NCCL's reach 32) */
    ct_sweep_progress_fn progress;
    ct_sweep_points_fn on_points;
    void *arg; /* passed to the two callbacks */
};

/* Defaults: all collectives, 8 B..256 MiB x2, float32 sum, budget 100 s, target 0.05,
 * margin 0.05, warmup 2, iterations 6..1000. */
void ct_sweep_cfg_init(struct ct_sweep_cfg *c);

#define CT_REFUSED_SIZES 64
struct ct_sweep_result {
    struct ct_sweep_point *pts; /* every distinct point measured, in order */
    size_t n;
    long full_points; /* the full cross product over the same grid */
    char search[96], space[160], folded[1024];
    double elapsed_s;
    double measuring_s; /* inside timed collective iterations (the samples' sum) */
    double checking_s;  /* preparing and checking points (the backend's begin and end) */
    double timing_s;    /* inside the timing calls: measuring, warmup, barriers, gathering */
    bool budget_out; /* the budget ran out before the plan was done */
    /* candidates the backend refused at some points (CT_EUNSUPP from begin: the library
     * cannot run it there, or it runs the library's own choice there): per collective and
     * candidate (names repeat across collectives) the first reason, said after the
     * collective's name, and the distinct sizes (n; the first CT_REFUSED_SIZES kept to tell
     * them apart), for the first 16; varied: a later size gave another reason (the library's
     * own choice runs another function there) */
    struct ct_sweep_refusal {
        char algo[64], why[224];
        int coll;
        uint64_t sizes[CT_REFUSED_SIZES];
        int n;
        bool varied;
    } refused[16];
    int nrefused;
    int checked, ranges; /* final ranges measured at verify's points, of all */
};

void ct_sweep_result_release(struct ct_sweep_result *r);

/* Note a point of coll that algo cannot run (the engine's CT_EUNSUPP, or ct_algo_supports
 * refusing it before it is asked) at size bytes, why: the reason. Per collective and
 * candidate the first reason and the distinct sizes (counted once when asked again). */
void ct_sweep_note_refused(struct ct_sweep_result *res, enum ct_coll coll, const char *algo,
                           uint64_t size, const char *why);

/* The largest size (coll's bytes, as points and ranges count them) at which a runs coll on
 * cfg's job with params (NULL: the job's); UINT64_MAX when it runs at CT_SWEEP_SIZE_CEIL
 * (an algorithm that runs at some size runs at every smaller one: the checks are upper
 * bounds, a mailbox's size); 0 when it runs at no positive count. why: the reason it
 * refuses the next size. */
#define CT_SWEEP_SIZE_CEIL (1ull << 40)
uint64_t ct_sweep_support_top(const struct ct_sweep_cfg *cfg, enum ct_coll coll,
                              const struct ct_algo *a, const struct ct_params *params,
                              struct ct_err *why);

/* Candidate algorithms of coll under cfg: supported on the job's shape, and not the same
 * schedule as a simpler candidate (see ct_sweep_folds). Count, and the first `max` of
 * them in out (may be NULL). */
size_t ct_sweep_algos(const struct ct_sweep_cfg *cfg, enum ct_coll coll, const struct ct_algo **out,
                      size_t max);

/* A candidate measured under a simpler name: at this shape (and at the sweep's smallest,
 * middle and largest size) it builds exactly the same schedule as same_as, so measuring
 * both would only rank noise. */
struct ct_sweep_fold {
    const struct ct_algo *algo, *same_as;
};
size_t ct_sweep_folds(const struct ct_sweep_cfg *cfg, enum ct_coll coll, struct ct_sweep_fold *out,
                      size_t max);

/* The candidate universe of cfg (the backend's rows, else the algorithm table): row i, the index of
 * coll's row of a name (-1: none), that row (NULL: none). A library engine has a row of each
 * name for each collective ("ompi:default", "ompi:ring", each with that collective's id), so
 * its rows are found within coll only; in the algorithm table a name no row of coll has
 * gives its row. Sweep commands name rows by their index here. */
const struct ct_algo *ct_sweep_algo_at(const struct ct_sweep_cfg *cfg, int i);
int ct_sweep_algo_index(const struct ct_sweep_cfg *cfg, enum ct_coll coll, const char *name);
const struct ct_algo *ct_sweep_algo_find(const struct ct_sweep_cfg *cfg, enum ct_coll coll,
                                         const char *name);

/* Rough seconds needed to measure one point of every requested collective at minbytes
 * (for refusing a budget that cannot cover even that). */
double ct_sweep_min_budget(const struct ct_sweep_cfg *cfg);

/*
 * Run the sweep over backend be (ctx: its context) on every rank of the job: the planner on
 * the backend's root, the follower loop elsewhere. The job's shape comes from the backend.
 * res receives the points (on every rank; the root's copy is the one to write) also when
 * the sweep fails: then it holds what was measured before the failure. Errors: CT_EVERIFY
 * for a wrong result (the message names the collective, algorithm, size and rank count),
 * CT_EPEER/CT_ETIMEDOUT when a rank dies or stalls (the message names the rank), CT_EINVAL
 * when no collective has a candidate.
 */
int ct_sweep_run(const struct ct_sweep_cfg *cfg, const struct ct_backend *be, void *ctx,
                 struct ct_sweep_result *res, struct ct_err *err);

/* cfg with the job's shape taken from the backend (into *tmp), and the backend's candidates
 * when it has its own (be->candidates: every requested collective's rows become tmp's
 * algos); returns tmp. */
/* Whether a library engine's row `name` is measured under lib_rows (ct_sweep_cfg). */
bool ct_sweep_row_asked(const char *rows, const char *name);
const struct ct_sweep_cfg *ct_sweep_cfg_shaped(const struct ct_sweep_cfg *cfg,
                                               const struct ct_backend *be, void *ctx,
                                               struct ct_sweep_cfg *tmp);

/* A loss at a check point is measured again up to this many rounds in all (the first, which
 * triggered it, not counted), chosen and best interleaved in alternating order; it counts
 * where the regret's interval over the rounds measured again lies above the limit (a
 * sequential test's: 99.5% at 3..7 rounds, 96.0% at 8). */
#define CT_VERIFY_ROUNDS 9

/* One range of a config re-measured by ct_sweep_verify. */
struct ct_sweep_regret {
    int set, rule;                      /* indices into the config */
    uint64_t size;                      /* where it was measured */
    struct ct_sweep_point chosen, best; /* best: fastest measured, chosen included (the
                                           first round's points) */
    double chosen_us, best_us;          /* their times: geometric means over the rounds */
    double regret, lo, hi;              /* chosen_us / best_us (>= 1) and its 95% interval over the
                                           rounds (after one round: from the two
                                           measurements' intervals) */
    bool significant; /* lo > cfg->max_regret: slower than the limit beyond the noise */
    int rounds;       /* times chosen and best were measured (1 unless chosen lost) */
};

/* The count at which a rule of s is checked, by ct_sweep_verify and by the sweep's own check
 * before it writes the config: the geometric midpoint of the rule's range (its low end
 * clamped to minbytes), maxbytes for the unbounded last range. */
uint64_t ct_sweep_check_count(const struct ct_ruleset *s, const struct ct_rule *r,
                              uint64_t minbytes, uint64_t maxbytes);

/*
 * Re-measure each rule of conf (rulesets of the collectives in cfg->colls) at its range's
 * geometric midpoint (the largest swept size for the last range): the rule's choice and
 * every other candidate at its defaults, over backend be. *out is new memory (free()).
 * Collective.
 */
int ct_sweep_verify(const struct ct_sweep_cfg *cfg, const struct ct_backend *be, void *ctx,
                    const struct ct_config *conf, struct ct_sweep_regret **out, size_t *nout,
                    struct ct_err *err);

#endif
