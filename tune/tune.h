/* SPDX-License-Identifier: MIT */
/*
 * Sweep results and the tuned config: plain data, shared by engine/ (sweep planner,
 * statistics, selection), output/ (report, config JSON, exporters) and cmd/.
 *
 * A sweep measures points (collective x size x algorithm x parameters). Selection turns
 * the best point per (collective, size, algorithm) into rules: ordered size ranges
 * [min_bytes, max_bytes) covering 0..infinity, each naming an algorithm and parameters.
 */
#ifndef CT_TUNE_H
#define CT_TUNE_H

#include <stdbool.h>
#include <stdint.h>

#include "../algos/algo.h"

#define CT_BYTES_INF UINT64_MAX

/* Summary of a point's timed samples (per-iteration max over ranks, microseconds). */
struct ct_stats {
    int n;                 /* samples */
    double median, lo, hi; /* median and its 95% confidence interval */
    double min, max, mean, stdev;
    bool converged;        /* CI relative width <= target before the budget ran out */
    double spent_s;        /* measuring time spent on the point */
};

struct ct_sweep_point {
    enum ct_coll coll;
    char algo[64];           /* a library row: "<lib>:<its name>" (ct_mod_row.name) */
    struct ct_params params; /* resolved values (defaults filled) */
    uint64_t size;           /* bytes as nccl-tests prints them */
    uint64_t count;
    struct ct_stats st;
    double busbw; /* GB/s at the median */
    long wrong;
    bool pruned;  /* measured coarsely, then dropped from refinement: clearly losing */
    int reps;     /* runs back to back per sample (the times are per run) */
    unsigned own; /* the row's parameters whose default is the library's own (ct_algo.own) */
    bool own_choice; /* a forced library row that ran the library's own decision (backend.h
                        own_choice): the start of its parameters' search, never a choice */
};

/* One decision: [min_bytes, max_bytes) -> algorithm + parameters. */
#define CT_TIED_MAX 8
#define CT_TIES_MAX 16

/* Part of a range where another algorithm was acceptable at every measured size (not beaten
 * by the fastest beyond the margin): [min_bytes, max_bytes), the bounds between measured
 * sizes at their geometric midpoint, the range's own bounds at its ends. */
struct ct_tie_span {
    char algo[64];
    uint64_t min_bytes, max_bytes;
    int id;       /* a library section's span: the library's id of algo (always > 0) */
    double ratio; /* geomean over the span's sizes of algo's median / the choice's (0: not
                     known, a config before it) */
    struct ct_params params; /* algo's where it ran best at most of the span's sizes; a library
                                section's: the segment size (0: the library's own) */
};

struct ct_rule {
    uint64_t min_bytes, max_bytes; /* max_bytes == CT_BYTES_INF for the last range */
    char algo[64];
    struct ct_params params;
    double confidence;  /* 0..1: how clearly the choice beat the runner-up (1 = beyond CIs) */
    bool tie;           /* no winner beyond both intervals: the simpler algorithm was chosen */
    char runner_up[64]; /* "" if none */
    /* the other algorithms acceptable at every measured size of the range (not beaten by
     * the fastest beyond the margin), simplest first: any could replace the choice */
    char tied[CT_TIED_MAX][64];
    int ntied;
    /* the same per part of the range: where each other algorithm was acceptable (a choice of
     * it there is a tie, not a disagreement), by algorithm (simplest first), then size */
    struct ct_tie_span ties[CT_TIES_MAX];
    int nties;
    double gain;        /* runner-up median / chosen median at the range's measured sizes */
    int id;             /* a library section's rule: the library's id of algo (0: its own
                           default decision, kept for this range) */
    bool predicted;     /* chosen from the model's prices (sweep --model), not measured */
    bool tried;         /* sweep --verify --try-ties: a library's row the sweep found tied with the
                           library's own choice, put in its place to be tried (not in CONFIG) */
    /* a library's range sweep --verify set back to the library's own choice: CT_SET_BACK_SLOW
     * (its row, now runner_up, slower than the defaults) or CT_SET_BACK_NOGAIN (no gain shown);
     * "" where it was not */
    char set_back[12];
};
#define CT_SET_BACK_SLOW "slower"
#define CT_SET_BACK_NOGAIN "no gain"
/* r's set_back in words: "slower than the defaults", "no gain shown" ("" where not set back) */
const char *ct_set_back_words(const struct ct_rule *r);

/* sweep --verify --lib's record of what it found no slower than the library's defaults: at,
 * when (UTC, ISO 8601), "" never; geomean, exported/default over the sizes it measured; tell,
 * what the measure could tell (a rule set's: the median over its tuned sizes of the loss each
 * size's interval would show about half the time, ct_paired_sum.tell; 0: not recorded) */
struct ct_verified {
    char at[24];
    double geomean; /* within [CT_VERIFIED_GEO_MIN, CT_VERIFIED_GEO_MAX] */
    double tell;    /* 0, or within [1, CT_VERIFIED_GEO_MAX] */
};

/* Rules for one collective on one communicator shape. */
/* A library's row as its sweep read it (sweep --lib): its name and the library's id. */
#define CT_LIB_ROWS 32 /* as an engine module's rows per collective (backend/lib/mod.h) */
struct ct_lib_row {
    char name[64];
    int id;
};

struct ct_ruleset {
    enum ct_coll coll;
    int nnodes, ranks_per_node, nranks;
    enum ct_dtype dtype;
    enum ct_redop op;
    struct ct_rule *rules;
    int nrules;
    /* a library section's set as `sweep --verify --lib` last found it: no size slower than
     * the library's defaults beyond its intervals; at: when (UTC, ISO 8601), "" never;
     * geomean: exported/default over the sizes verify measured */
    struct ct_verified verified;
    /* a library section's set: the library's rows for its collective as the sweep read them,
     * which each range and tie must name (a name or id edited by hand would be exported as
     * such: MPICH stops in MPI_Init on an algorithm it lacks, Open MPI drops a rules file
     * whose id it lacks); none recorded (0): a config before 2026-12-06, not checked */
    struct ct_lib_row lib_rows[CT_LIB_ROWS];
    int nlib_rows;
};
#define CT_VERIFIED_GEO_MIN 1e-6
#define CT_VERIFIED_GEO_MAX 1e6

/* Where the config came from: enough to tell whether it applies to a cluster. */
struct ct_fingerprint {
    int hosts, ranks_per_host, nranks;
    char nic_kinds[64];  /* e.g. "ethernet", "infiniband+roce" */
    double nic_gbps;     /* per-port rate, 0 if unknown */
    int nics_per_host;
    char gpu_model[64];  /* "" without GPUs */
    char link_classes[64]; /* e.g. "shm", "nvlink+pcie", "tcp" */
    char transport[64];
    char mem[16];         /* the buffers' memory when the transports stage it through host
                             memory ("cuda": on each rank's GPU); "" host memory */
    char host[64];        /* rank 0's host */
};

struct ct_sweep_settings {
    uint64_t minbytes, maxbytes;
    double stepfactor;
    double budget_s;    /* whole-sweep budget */
    double target_ci;   /* relative CI width target, e.g. 0.05 */
    double margin;      /* pruning / tie margin, e.g. 0.05 */
    int min_iters, max_iters, warmup;
    char search[96];    /* description of the parameter search */
    char space[160];    /* the space searched: "chunk 16K..4M x4, pipeline 1,2,4,8, ..." */
    char folded[1024];  /* candidates measured once under a simpler name because their
                           schedules are the same at this shape: "allreduce: hier=ring" */
    char refused[1024]; /* candidates the engine refused at some points: per collective and
                           candidate its first reason and at how many sizes ("allgather:
                           ... (at 6 sizes)"); "" when none */
    long points;        /* distinct points measured */
    long full_points;   /* points of the full cross product (sizes x algorithms x grids) */
    double elapsed_s;   /* wall time of the measuring */
    double measuring_s; /* of which inside timed collective iterations */
    double timing_s;    /* inside the timing calls (measuring, warmup, barriers, gathering) */
    double checking_s;  /* preparing and checking points */
    bool budget_out;    /* the budget ran out before the planner was done */
    int checked, ranges; /* ranges measured where --verify checks them, of all (0: not run) */
    char predicted[160]; /* "": measured; else what the model priced (sweep --model) */
    int joined;          /* the sweeps' configs colltune join put in this one (0: one sweep's);
                            the fields above are then one of them's (ct_config_join) */
    enum ct_dtype dtype; /* datatype and reduction of every point */
    enum ct_redop op;
};

/* A library's own measured rules (sweep --lib): algo names are the library's (without the
 * "LIB:" prefix of the engine's rows), ids its own. */
#define CT_LIB_ENV_MAX 8
/* sweep --lib --env-search: values per variable at most, and variables searched (one after
 * the other) */
#define CT_ENV_SEARCH_MAX 8
#define CT_ENV_SEARCH_VARS 2
struct ct_lib_env {
    char name[96], value[160];
};

struct ct_librules {
    char library[16]; /* "ompi", "mpich" */
    char name[32];    /* "Open MPI" */
    char version[32]; /* "4.1.4" */
    struct ct_ruleset *sets;
    int nsets;
    /* launch settings (sweep --lib LIB --env NAME=VALUE): the library's variables the sweep's
     * ranks ran under, so its choices are against the defaults with them; the export sets
     * them beside its file, and sweep --verify judges them against the plain defaults first
     * (env_verified: found no slower there, and faster somewhere) */
    struct ct_lib_env env[CT_LIB_ENV_MAX];
    int nenv;
    struct ct_verified env_verified;
    /* then the export as a job runs it, the settings and the rules together, against the plain
     * defaults (whole_verified: found no slower there; its geomean over the sets); cleared by
     * any change to the section's rules or settings */
    struct ct_verified whole_verified;
    char *raw; /* a section of a library colltune's MPI engines do not own ("nccl": read by
                  its tuner plugin): the JSON object kept as text, sets empty */
};

struct ct_config {
    char version[48];
    char date[32];
    struct ct_fingerprint fp;
    struct ct_sweep_settings sweep;
    struct ct_ruleset *sets;
    int nsets;
    bool partial; /* the sweep stopped early; rules cover what was measured */
    bool report;  /* printed as a report of what was measured, not a config (a library sweep
                     on more ranks than cores): no file, nothing to verify */
    struct ct_librules *libs; /* measured library sections (none: NULL, 0) */
    int nlibs;
};

void ct_config_init(struct ct_config *c);
void ct_config_release(struct ct_config *c);
void ct_ruleset_release(struct ct_ruleset *s);
/* dst made a copy of src: its rules in new memory (ct_ruleset_release). */
void ct_ruleset_copy(struct ct_ruleset *dst, const struct ct_ruleset *src);
/* The rule whose range holds bytes; NULL if none (an invalid ruleset). */
const struct ct_rule *ct_ruleset_find(const struct ct_ruleset *s, uint64_t bytes);
/* The measured section of library lib ("ompi"); NULL if none. */
const struct ct_librules *ct_config_lib(const struct ct_config *c, const char *lib);
/* Set rule k of library lib's ruleset i back to the library's own choice (id 0, "default",
 * the library's segment size), as verify does with a range it found slower than the defaults
 * or without a gain (why: CT_SET_BACK_*, recorded in ct_rule.set_back; "" for a tried row,
 * which only goes back to what CONFIG had); the old choice becomes the runner-up, and its tie
 * spans go (they were ties with it), but a tried row's (ct_rule.tried: the library's choice's
 * spans). False when there is no such rule. */
bool ct_config_lib_demote(struct ct_config *c, const char *lib, int i, int k, const char *why);
/* Rule k of set i of lib's section cut to [lo, hi) (inside its range), what it loses set back
 * to the library's own choice (given to a neighbour that is that, else a rule inserted beside
 * it); the set loses its verified mark. False when there is no such rule, it is the library's own,
 * or [lo, hi) is empty or not inside it. */
bool ct_config_lib_trim(struct ct_config *c, const char *lib, int i, int k, uint64_t lo,
                        uint64_t hi);

/* Configs joined (colltune join): src's rule sets added to dst's, colltune's own and each
 * library section's (a section dst lacks copied whole), so that one config carries the shapes
 * of several sweeps. Refused (CT_EINVAL, naming nm's files; dst unchanged): another grid of
 * sizes, datatype or op (verify measures every set at the config's one grid), a collective
 * and rank count both have, colltune's own rules of two transports (or memories), a
 * library's two releases, names or lists of launch settings, two sections kept as their reader
 * wrote them (NCCL's). dst's fingerprint and sweep settings stay, but where src alone has
 * colltune's own rules (theirs then); a set's verified mark stays (it is of that set, the
 * library's release and settings), a section's settings' mark where both had one (the one
 * that found them least faster: the higher geomean), its whole export's goes where sets were
 * added. */
struct ct_join_names {
    const char *dst, *src; /* the files, as errors name them: "A", or "one of A, B"; "C" */
};
int ct_config_join(struct ct_config *dst, const struct ct_config *src,
                   const struct ct_join_names *nm, struct ct_err *err);
/* A set of c (colltune's own or a library section's) on another shape than its fingerprint's
 * (a config ct_config_join made of several sweeps'): the fingerprint's shape is not every
 * rule's. */
bool ct_config_other_shapes(const struct ct_config *c);

/* r's tie spans cut to r's range, those left outside it dropped. */
void ct_rule_clip_ties(struct ct_rule *r);
/* sweep --verify --try-ties: in library lib's ruleset i, each part of a range kept at the
 * library's own choice where the sweep found one of its rows tied with that choice (a span of
 * the range's ties; where two overlap, the one faster in the sweep by its ratio takes the
 * overlap and the other the parts outside it) made a rule of that row, with the library's
 * default segment size for it (the spans record no parameters), marked tried; the set loses
 * its verified mark. Returns how many rules were made. */
int ct_config_lib_try_ties(struct ct_config *c, const char *lib, int i);
/* Library lib's ruleset i of dst made a copy of src's (the same sets: src a copy of dst
 * changed by ct_config_lib_try_ties), its rules' tried marks with it (which config.json, and
 * so ct_config_copy, does not carry). dst or src NULL (a copy that failed): nothing. */
void ct_config_lib_set_copy(struct ct_config *dst, const struct ct_config *src, const char *lib,
                            int i);
/* Neighbouring rules of library lib's ruleset i that both keep the library's own choice made
 * one (as before ct_config_lib_try_ties split them): the ties of both, the lower confidence. */
void ct_config_lib_join_own(struct ct_config *c, const char *lib, int i); /* c NULL: nothing */

/* s (a library section's set) keeps the library's own choice at every size: it has rules and
 * none names an algorithm (id 0). An export writes nothing of it; a verify has nothing of it to
 * judge, the same code running on both sides. */
bool ct_ruleset_keeps_own(const struct ct_ruleset *s);
/* Whether section l (NULL: none) changes nothing a job runs: no launch settings, and every set
 * at the library's own choice at every size (ct_ruleset_keeps_own): an export of it is
 * refused, "nothing to export". */
bool ct_librules_keeps_own(const struct ct_librules *l);

/* What verify's verdict on a set did to its copy's rules (output/'s ct_config_lib_judged
 * counts them so): the rules of CONFIG set back as slower, set back with no gain, and cut; the
 * rules verify --try-ties tried (ct_rule.tried) kept, whole or cut to the sizes that gained
 * (counted in both TRIED_KEPT and TRIED_CUT), and set back. */
enum {
    CT_JUDGED_SLOW,
    CT_JUDGED_NOGAIN,
    CT_JUDGED_CUT,
    CT_JUDGED_TRIED_KEPT,
    CT_JUDGED_TRIED_CUT,
    CT_JUDGED_TRIED_BACK,
    CT_JUDGED_N
};

/* Mark library lib's ruleset i verified now (UTC) with that geomean (exported/default) and what
 * the measure could tell (tell; outside [1, CT_VERIFIED_GEO_MAX]: not recorded), as verify does
 * with a set it found no slower than the defaults; a geomean that is not a positive number
 * clears the record instead, as does a set at the library's own choice at every size
 * (ct_ruleset_keeps_own: it changes nothing to vouch for). False when there is no such set or
 * nothing was marked. */
bool ct_config_lib_verified(struct ct_config *c, const char *lib, int i, double geomean,
                            double tell);
/* The same for library lib's launch settings (env_verified): found no slower than the plain
 * defaults and faster somewhere (tell: the median over its collectives of what each one's
 * measure could tell). False when it has none (c NULL too) or nothing was marked. */
bool ct_config_lib_env_verified(struct ct_config *c, const char *lib, double geomean, double tell);
/* The same for the export as a whole (whole_verified): settings and rules together found no
 * slower than the plain defaults. A geomean that is not a positive number clears it. */
bool ct_config_lib_whole_verified(struct ct_config *c, const char *lib, double geomean,
                                  double tell);
/* Library lib's launch setting k taken out (k < 0: all of them), as verify does with settings
 * found slower or without a gain (sweep --verify --each-setting: the one the others held
 * without); every set of it loses its verified mark (it was measured with them), as do the
 * settings' and the whole export's records. False when it had none, or no setting k. */
bool ct_config_lib_env_drop(struct ct_config *c, const char *lib, int k);
/* Setting k (0 <= k < l->nenv) taken out of l's list, the others kept in their order; nothing
 * else of l changed (the marks: ct_config_lib_env_drop). */
void ct_librules_env_remove(struct ct_librules *l, int k);
/* Library lib's section taken out of c (its rules not kept: a sweep that timed the scheduler
 * more than the library); false when c has none. */
bool ct_config_lib_drop(struct ct_config *c, const char *lib);
/* The ruleset of coll for nranks ranks (nranks <= 0: any); NULL if none. */
const struct ct_ruleset *ct_config_find(const struct ct_config *c, enum ct_coll coll, int nranks);
/* Ranges ordered, non-empty, contiguous from 0 to CT_BYTES_INF, algorithms known. */
int ct_ruleset_check(const struct ct_ruleset *s, struct ct_err *err);
/* The reduction a ruleset's collective runs, "none" where it reduces nothing (AllGather,
 * AllToAll: configs said "sum"); ct_ruleset_op_find reads it back (-1: unknown, or "none"
 * for a reduction). */
const char *ct_ruleset_op_name(const struct ct_ruleset *s);
int ct_ruleset_op_find(enum ct_coll coll, const char *name);
/* The same for a library section's ruleset (algorithms named by the library: not looked up). */
int ct_ruleset_check_lib(const struct ct_ruleset *s, struct ct_err *err);

#endif
