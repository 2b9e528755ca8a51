/* SPDX-License-Identifier: MIT */
/*
 * sweep --verify CONFIG --lib LIB: one rule set of a library's section against the library's
 * defaults in paired launches of `colltune run --lib LIB` (side A with the export's loader
 * variables, B without), and the judgement of a verify's paired measure (the MPI libraries'
 * and NCCL's); the verify of a whole CONFIG, its passes in order, the copy it writes and
 * --reverify's rounds. What a verify starts, exports, copies, writes and says goes through
 * hooks its caller passes in (cmd/ launches the jobs, exports with output/'s emitters, reads
 * and writes config files and prints).
 */
#ifndef CT_TUNE_LIBVERIFY_H
#define CT_TUNE_LIBVERIFY_H

#include <stdbool.h>
#include <stdint.h>

#include "stats.h"
#include "sweep.h"
#include "tune.h"

/* What a verdict of "slower than the defaults" returns: the value cmd/ exits with (its
 * CT_EXIT_CHECK, asserted equal there). */
#define CT_VERIFY_SLOWER 3
/* A failure the input is at fault for (the failed hook's rc; cmd/: exit 2, CT_EXIT_USAGE) */
#define CT_VERIFY_USAGE 2

/* A verify's sizes at most; those up to CT_VERIFY_WARM_MAX run in a launch of their own, after
 * 200 warmup calls each */
#define CT_VERIFY_MAXSZ 128
#define CT_VERIFY_WARM_MAX (256u << 10)
/* ... each size out of place only (the time verify reads), 20 timed calls, or as many as span
 * CT_VERIFY_SPAN seconds where those take longer, at least 3 (run --max-time) */
#define CT_VERIFY_SPAN "3"

/* One judgement of a verify's paired measure, as ct_verify_judge hands it to be shown: the
 * table (ct_paired_judge's rows w and sum t of pr at sz[0..nsz), each size's rule), then each
 * rule's gain over rounds and its verdict (slow, nogain, cut: NULL where not asked), then the
 * sizes own[k] (the library's choice on both sides) that read slower. A measure of launch
 * settings (no rules, no controls) shows the table alone: gain NULL. */
struct ct_verify_judged {
    const char *lib, *how;
    const struct ct_ruleset *s;
    const uint64_t *sz;
    int nsz;
    const struct ct_rule *const *rule;
    const bool *own;
    const struct ct_paired *pr;
    const struct ct_paired_row *w;
    const struct ct_paired_sum *t;
    const struct ct_ratio *gain;
    const int *rounds;
    const bool *slow, *nogain;
    const struct ct_paired_cut *cut;
};

/* sweep --lib --env-search, one value's row: its geomean with/without per set (geo[k]; 0: not
 * judged) and over them (all), and its verdict (failed: a run failed; slow: slower at a size;
 * gain: faster, no size slower; else no gain shown). */
struct ct_search_row {
    const char *value;
    double geo[CT_COLL_COUNT], all;
    bool slow, gain, failed;
};

/* What a verify needs from its caller; ctx is passed back to each. */
struct ct_verify_hooks {
    const void *ctx;
    /* Run argv (argv[0]: "run") under the library's launcher on nranks ranks and wait
     * (bounded); its standard output in *out (new memory or NULL). 0, the ranks' own exit code
     * (1..3), or a failure code; *said: that failure was said in full. */
    int (*job)(const void *ctx, int nranks, int argc, char **argv, char **out, bool *said);
    /* A run that failed (rc its code, 0 where it ran but its table lacked sizes;
     * CT_VERIFY_USAGE where the input is at fault): line said; returns the code the verify ends
     * with. */
    int (*failed)(const void *ctx, int rc, const char *line);
    /* A judgement to show (ct_verify_judge; gain NULL: the table alone). */
    void (*judged)(const void *ctx, const struct ct_verify_judged *j);
    /* Text to show as it is (lines ending in a newline). */
    void (*say)(const void *ctx, const char *text);
    /* A line for the user's attention beside what say shows (cmd/: stderr, after "colltune
     * sweep: "; text without its newline). */
    void (*warn)(const void *ctx, const char *text);
    /* The sizes found slower measured again (ct_paired_again's r over rows w; groups: with
     * their rules' other sizes); where: "in the table below", "above". */
    void (*again)(const void *ctx, const uint64_t *sz, const struct ct_paired_row *w,
                  const struct ct_paired_redo *r, bool groups, const char *where);
    /* sweep --lib --env-search (ct_libverify_search): one variable's table (rows[0..nrows), from
     * coarse on the finer step's; base: what both sides ran with, "" none), then the value found
     * (pick; NULL: none, the library's own; alone: the only variable searched; ends: none below
     * it, none above among the values judged), and of two or more variables the values the sweep
     * runs with (found[0..n), value "" none; was: the first's value before it was searched
     * again, NULL where it was not). */
    void (*search_table)(const void *ctx, const char *name, const char *base,
                         const struct ct_ruleset *sets, int nsets, const struct ct_search_row *rows,
                         int nrows, int coarse);
    void (*search_pick)(const void *ctx, const char *name, const char *lib,
                        const struct ct_search_row *pick, const bool ends[2], bool alone);
    void (*search_found)(const void *ctx, const struct ct_lib_env *found, int n, const char *was);
};

struct ct_libmod;
struct ct_loader;
/* One launch side of sweep --verify --lib */
struct ct_verify_side {
    const struct ct_libmod *m;
    const struct ct_verify_hooks *h;
    const struct ct_ruleset *s;
    const struct ct_loader *ld;
    const char *timeout; /* run's --timeout: verify's own */
    /* the section's launch settings (l->env): set on side A only, the loader's rules on
     * neither (env_alone: judging the settings themselves), or on both sides (the rules
     * judged against the library's defaults with them); NULL: none */
    const struct ct_librules *env;
    bool env_alone;
    const char *what; /* the option its failures are said under; NULL: "--verify" */
    bool whole;       /* the settings and the rules on side A, neither on B (ct_libverify_whole) */
    int pairs;        /* sweep --pairs N: pairs at every size (0: CT_PAIRED_MIN) */
    /* the section's release ("4.1.4"): the library a launch ran must be of its series (the
     * same major and minor: its algorithm ids and names are that release's); NULL: any */
    const char *version;
};

/* fmt's text shown through h->say; ct_verify_warn: through h->warn */
void ct_verify_say(const struct ct_verify_hooks *h, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void ct_verify_warn(const struct ct_verify_hooks *h, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* The environment of verify's side A (with: the export's loader variables ld set) or B (them
 * cleared, and the library's own-defaults setting, m->own_name, set). */
void ct_verify_side_env(const struct ct_libmod *m, const struct ct_loader *ld, bool with);
/* One paired launch of a verify (ct_paired_launch_fn; ctx: a struct ct_verify_side): side A
 * (with) or B at sizes sz[0..nsz), sorted; t[k], the time at sz[k]; the loader's variables
 * and the side's settings it set cleared after it. 0 or a failure (said). */
int ct_libverify_launch(void *ctx, bool with, const uint64_t *sz, int nsz, double *t);
/* One rule set s of CONFIG c: paired launches, then the judgement shown; 0, CT_VERIFY_SLOWER
 * or a failure code. slow[r]: rule r of s was slower than the defaults at a size it tunes;
 * nogain[r]: it showed no gain; cut[r]: a slower rule's cut to the sizes that gained
 * (ct_verify_judge); *geo: the geomean over the sweep's own sizes (ct_paired_swept); *tell
 * (NULL: not asked), what it could tell, where *geo is recorded (ct_verify_judge). */
int ct_libverify_set(const struct ct_verify_side *base, const struct ct_config *c,
                     const struct ct_ruleset *s, bool *slow, bool *nogain,
                     struct ct_paired_cut *cut, double *geo, double *tell);
/* The sizes of a verify's measure pr at sz found slower (w[k].slower), measured again with
 * their controls (own), and with groups the other sizes of their rules (pr's groups), in fresh
 * paired launches (ct_paired_again, into r: ct_paired_redo_release it), shown (x's hooks'
 * again; where: "in the table below"); cleared[k]: size k was not slower again, so it does not
 * count. 0 or a failure (said). */
int ct_verify_again(struct ct_verify_side *x, const uint64_t *sz, const bool *own,
                    const struct ct_paired *pr, const struct ct_paired_row *w, bool groups,
                    const char *where, struct ct_paired_redo *r, bool *cleared);

/* A section's launch settings alone (base->env) against the library's plain defaults at set
 * s's sizes, paired launches, the table and the verdict shown (tune/libverify_env.c): *slow, slower
 * than the defaults beyond a size's interval; *gain, faster over the sizes beyond theirs;
 * each only when fresh launches show it again; *geo, the geomean over the sweep's own sizes
 * (ct_paired_swept; not the ranges' midpoints), over the measures; *tell (NULL: not asked),
 * what the measure whose verdict stands (the last) could tell (ct_paired_sum.tell: the median
 * over the sizes), where *geo is set; else 0. 0, or a failure code (said). */
int ct_libverify_env(const struct ct_verify_side *base, const struct ct_config *c,
                     const struct ct_ruleset *s, bool *slow, bool *gain, double *geo, double *tell);
/* The median of tells[0..n) (0: none): a mark's tell over its collectives. */
double ct_libverify_tell_median(const double *tells, int n);
/* ct_libverify_env on each of sets[0..nsets) where want[i] (NULL: all): *slow, one slower;
 * *gain, one faster; *geo, the geomean over the sets judged (0: none); *tell (NULL: not
 * asked), the median of their tells where *geo is set, else 0; each[i] (NULL: not asked) the
 * set's own, 0 where not judged. Stops at the first failure: its code (said). */
int ct_libverify_env_sets(const struct ct_verify_side *base, const struct ct_config *c,
                          const struct ct_ruleset *sets, int nsets, const bool *want, bool *slow,
                          bool *gain, double *geo, double *tell, double *each);
/* The launch settings of base->env alone (ct_libverify_env_sets) on each set of it where
 * want[i]; their names first. *kept: no set slower, one faster at least; *slow: one slower;
 * *geo: the sets' geomean, *tell their tells' median; each_next: where not kept, each is
 * judged next (--each-setting), as said. 0, or a failure code (said). */
int ct_libverify_envs(const struct ct_verify_side *base, const struct ct_config *c,
                      const bool *want, bool each_next, bool *kept, bool *slow, double *geo,
                      double *tell, double *each);
/* One launch setting e alone on side A, against it unset on side B (the library's or glibc's
 * own value), whatever else this environment sets on both (--env-search's value beside the
 * --env settings and those found; --each-setting's one beside the others): ct_libverify_env_sets
 * on sets[0..nsets) with base's library, options and timeout, failures said under what
 * (tune/libverify_each.c). */
int ct_libverify_setting(const struct ct_verify_side *base, const struct ct_lib_env *e,
                         const char *what, const struct ct_config *c, const struct ct_ruleset *sets,
                         int nsets, const bool *want, bool *slow, bool *gain, double *geo,
                         double *tell, double *each);
/* The export as a job runs it (after the settings alone and the rules with them held): the
 * copy verify writes, fixed, exported with its settings (base->ld: its loader; side A) against
 * the plain defaults (B), as ct_libverify_env judges settings, on each set of it where want[i]
 * that has a rule of its own (one that keeps the library's choice everywhere takes
 * env_each[i], the settings' figure); then the geomean over them beside the two passes'
 * product (the rules' from fixed's verified marks), said. *slow: slower at a size, again in
 * fresh launches; *geo, the geomean over the sets (0: none measured); *tell, the median of
 * the tells of the sets measured in this pass (where *geo is set; else 0). 0, or a failure
 * code (said). ct_libverify_whole_any: whether any set of l has a rule of its own to measure
 * so. */
bool ct_libverify_whole_any(const struct ct_librules *l, const bool *want, const double *env_each);
int ct_libverify_whole_measure(const struct ct_verify_side *base, const struct ct_config *fixed,
                               const bool *want, const double *env_each, bool *slow, double *geo,
                               double *tell);
/* sweep --verify --each-setting, on the sets want names: which of side->env's settings to
 * leave out. Where they were not kept together, each left out in turn and the others judged
 * alone against the plain defaults; where they were (together), each judged against it unset
 * (the library's own value) with the others on both sides, and the others judged alone
 * without the one slower or without a gain there (*slow: it was slower). *best: the one
 * whose others held without it (the lowest geomean where several did), -1 none; *best_geo,
 * *best_tell and each[] (nsets) the others' figures. Where none held with one left out and
 * there are 3 or more (not together), each is judged alone against the plain defaults:
 * *alone, and *best the one that held alone (the lowest geomean), its figures. Said as
 * judged. 0, or a failure code (said). */
int ct_libverify_each_pick(const struct ct_verify_side *side, const struct ct_config *c,
                           bool together, const bool *want, int *best, bool *alone,
                           double *best_geo, double *best_tell, bool *slow, double *each);
/* The sizes sz[0..nsz) of a verify of s: each one's rule (NULL: none), whether the library's
 * own choice runs there on both sides (own: a control) and its group for ct_paired_measure
 * (its rule's index in s, -1 for a control). */
void ct_verify_rules(const struct ct_ruleset *s, const uint64_t *sz, int nsz,
                     const struct ct_rule **rule, bool *own, int *group);
/* The verdict of a verify's paired measure pr of s, shown through h (NULL: not shown; the
 * table, then each rule's gain), the sizes cleared[k] (NULL: none) not counted slower
 * (ct_verify_again) and the rules measured again, and a slower rule's cut, judged on both
 * measures (again, the second; NULL or not measured: none): slow[r], rule r was slower than the
 * defaults at a size it tunes; nogain[r], rule r changes the library's choice without showing a
 * gain (ct_paired_gains); cut[r] (cut NULL: not asked), a slower rule's cut to the sizes that
 * gained (ct_paired_trim; rounds 0: none); *geo, the geomean over the sweep's own sizes
 * (swept, ct_paired_sizes'; NULL: all), the figure recorded (ct_paired_swept); *tell (NULL:
 * not asked), what the measure could tell where *geo is recorded (the median over the tuned
 * sizes of ct_paired_tell, ct_paired_sum.tell; else 0). Returns 0 or CT_VERIFY_SLOWER. */
int ct_verify_judge(const struct ct_verify_hooks *h, const char *lib, const char *how,
                    const struct ct_ruleset *s, const uint64_t *sz, int nsz, const bool *swept,
                    const struct ct_rule *const *rule, const bool *own, const bool *cleared,
                    struct ct_paired_redo *again, struct ct_paired *pr, bool *slow, bool *nogain,
                    struct ct_paired_cut *cut, double *geo, double *tell);

/* The file a verify loads, as its caller's export wrote it (cmd/: output/'s emitter) */
struct ct_verify_file {
    const struct ct_loader *ld; /* the variables that point the library at it */
    bool unchanged;             /* the export would change nothing: no file (said) */
    void *priv;                 /* the caller's */
};

/* Which file a verify exports: CONFIG's (or, --try-ties, CONFIG with the tied rows tried);
 * CONFIG less the setting --each-setting left out; the copy verify writes (its whole export). */
enum ct_verify_export_kind { CT_VEXP_CONFIG, CT_VEXP_LESS_ONE, CT_VEXP_COPY };

/* How a verify of a CONFIG ends, as its caller writes and says it (ct_verify_files' end) */
enum ct_verify_end_kind {
    CT_VEND_ENV_DROPPED, /* the copy without its launch settings (slow: slower; else no gain) */
    CT_VEND_UNMARKED,    /* the copy's whole export slower: the copy with no verified marks */
    CT_VEND_FIXED,       /* the copy with the verdicts on its rules and its marks */
    CT_VEND_SLOWER,      /* exit 3 said (slow: a rule was set back or cut) */
    CT_VEND_UNCHANGED,   /* exit 3 with nothing to write */
    CT_VEND_NO_SET,      /* no set of l asked for here (CT_VERIFY_USAGE) */
};
struct ct_verify_end {
    enum ct_verify_end_kind kind;
    const struct ct_config *fixed; /* the copy (ENV_DROPPED, UNMARKED, FIXED) */
    const struct ct_librules *l;   /* NO_SET: CONFIG's section */
    const int *n;                  /* FIXED: the verdicts counted by CT_JUDGED_* */
    int nstamped, nown, nunmarked; /* FIXED: as ct_verify_write_fixed (cmd/) counts them */
    bool dropped, env_marked;      /* FIXED: settings left out (one, or all but one); the
                                      settings marked */
    bool slow;                     /* ENV_DROPPED, SLOWER */
    int nenv;                      /* ENV_DROPPED: how many were judged together */
    bool each_ran;                 /* ENV_DROPPED: and with each left out (--each-setting) */
};

/* What a verify of a CONFIG needs from its caller beside ct_verify_hooks: the export it loads,
 * copies of CONFIG, and what it writes; ctx is passed back to each. */
struct ct_verify_files {
    const void *ctx;
    /* c (of CONFIG at path) exported for a verify to load into f: 0 (f->unchanged, CONFIG's
     * own export only: it changes nothing, said); else a failure code (said). unexport releases
     * f whatever export returned. */
    int (*export)(const void *ctx, const char *path, const struct ct_config *c,
                  enum ct_verify_export_kind kind, struct ct_verify_file *f);
    void (*unexport)(const void *ctx, struct ct_verify_file *f);
    /* Why set s is not verified here (it runs on another shape of hosts, or on more ranks
     * than this host's cores); NULL: it is. */
    const char *(*elsewhere)(const void *ctx, const struct ct_ruleset *s);
    /* A copy of c (new memory: ct_config_release, then free); NULL if it cannot be made. */
    struct ct_config *(*copy)(const void *ctx, const struct ct_config *c);
    /* Verify's verdict on set s applied to its copy c, set i (ct_config_lib_judged, output/). */
    void (*apply)(const void *ctx, struct ct_config *c, const char *lib, int i,
                  const struct ct_ruleset *s, const bool *slow, const bool *nogain,
                  const struct ct_paired_cut *cut, int n[CT_JUDGED_N]);
    /* w (of CONFIG at path) written and said; returns code (the verify's so far), or a failure
     * code (said). */
    int (*end)(const void *ctx, const char *path, const struct ct_verify_end *w, int code);
    /* In a section colltune keeps as written (NCCL's), set s's rule in c marked verified now
     * with geomean geo and what the measure could tell (tell), or its record cleared (geo 0:
     * ct_config_lib_verified_at, output/); whether it was marked. NULL where the caller
     * verifies no such section. */
    bool (*stamp)(const void *ctx, struct ct_config *c, const char *lib, const struct ct_ruleset *s,
                  double geo, double tell);
    /* The config at path read (new memory: ct_config_release, then free); NULL where it cannot
     * be, said, *code the failure's. */
    struct ct_config *(*read)(const void *ctx, const char *path, int *code);
};

/* What a verify did beside its verdict: tried, --try-ties found ties to try (else CONFIG was
 * verified as it is); whole_slow, the export as a whole was slower (exit 3) though its
 * settings and rules each held apart; own_slow, slower (exit 3) only at sizes where it keeps
 * the library's own choice (in both, the copy runs as the file verified); dropped,
 * --each-setting left a setting out (the copy is CONFIG less it). */
struct ct_verify_did {
    bool tried, whole_slow, own_slow, dropped;
};

/* sweep --verify CONFIG --lib LIB: what the verify of CONFIG is asked */
struct ct_libverify_in {
    const struct ct_verify_hooks *h;
    const struct ct_verify_files *f;
    const struct ct_libmod *m;
    const char *path; /* CONFIG's, as said */
    unsigned colls;   /* --coll: the collectives asked for (CT_COLL_BIT) */
    int local;        /* --local N: the sets of N ranks only (0: any) */
    bool try_ties, each_setting;
    double timeout_s; /* run's --timeout */
    int pairs;        /* --pairs N: pairs at every size (0: CT_PAIRED_MIN) */
};
/* The exported file of CONFIG c's measured section of in->m (c has one) against the library's
 * defaults (tune/libverify_config.c): the launch settings alone, then each rule set asked for
 * with them on both sides, then the copy's whole export; the copy written through in->f.
 * 0, CT_VERIFY_SLOWER when slower somewhere, or a failure code (said). */
int ct_libverify_config(const struct ct_libverify_in *in, const struct ct_config *c,
                        struct ct_verify_did *did);
/* A copy of CONFIG c through in's hooks; NULL where it cannot be made, said ("--verify: cannot
 * copy", ct_libverify_copy_failed: the code to end with), *code the failure's
 * (tune/libverify.c). */
int ct_libverify_copy_failed(const struct ct_libverify_in *in);
struct ct_config *ct_libverify_copy(const struct ct_libverify_in *in, const struct ct_config *c,
                                    int *code);
/* ct_libverify_config, and with --reverify N (reverify) the copy it writes
 * (ct_verify_copy_path) verified again (tune/libverify_rounds.c), without --try-ties, while a
 * round exits 3, tried ties or left a setting out (--each-setting), up to N more rounds (a copy
 * that lost all its launch settings is not: its rules need a sweep): the last round's code. */
int ct_libverify_rounds(const struct ct_libverify_in *in, int reverify, const struct ct_config *c);
/* The copy verify writes for path: NAME.verified.json beside NAME.json (a .verified.json
 * itself: path), into out (len) */
void ct_verify_copy_path(const char *path, char *out, size_t len);
/* sweep --verify --each-setting, on the sets want names (tune/libverify_each.c): the setting
 * ct_libverify_each_pick finds to leave out (or to keep alone). Where the others hold without
 * one (or it alone holds): *own a new copy of *config without it (with it alone; the caller
 * releases it), *config it, *c it (--try-ties: tried, the settings taken out of it in place),
 * file exported again from *c (in's hooks), side->ld and
 * side->env *c's, *geo, *tell and each[] theirs; said. Else *own NULL. 0, or a failure code
 * (said). */
int ct_libverify_each(const struct ct_libverify_in *in, struct ct_verify_side *side, bool together,
                      const struct ct_config **config, const struct ct_config **c,
                      struct ct_config *tried, struct ct_verify_file *file, const bool *want,
                      double *geo, double *tell, double *each, struct ct_config **own);
/* The copy fixed's whole export (ct_libverify_whole_measure), exported through in's hooks; 0
 * where no set has a rule of its own to measure so (ct_libverify_whole_any). */
int ct_libverify_whole(const struct ct_verify_side *base, const struct ct_libverify_in *in,
                       const struct ct_config *fixed, const bool *want, const double *env_each,
                       bool *slow, double *geo, double *tell);

/* sweep --verify CONFIG --lib nccl, on one rank of the job (tune/ncclverify.c): the rule sets
 * of CONFIG's NCCL section against NCCL's own choices on the communicators of engine be (ctx:
 * its struct ct_nccl, the plugin loaded with CONFIG), in passes switched by the plugin's
 * bypass */
struct ct_comm;
struct ct_ncclverify_in {
    const struct ct_verify_hooks *h; /* every rank's failures; the root's tables and lines */
    const struct ct_verify_files *f; /* the root's copy of CONFIG: copy, apply, stamp, end */
    const struct ct_config *c;       /* CONFIG, at path */
    const char *path;
    const struct ct_ruleset *sets; /* its NCCL section's rule sets (as `show` prints them) */
    int nsets;
    const struct ct_comm *comm;
    const struct ct_backend *be;
    void *ctx;         /* be's (NCCL's: struct ct_nccl) */
    struct ct_job job; /* the job's shape; coll, dtype, op and count set here */
    bool root;         /* this rank shows and writes */
    int pairs;         /* --pairs N (0: CT_PAIRED_MIN) */
    /* switches the sides (with: A); NULL: the plugin's bypass on ctx (ct_nccl_tuner_bypass) */
    int (*side)(void *arg, bool with, struct ct_err *err);
    void *arg;
};
/* Each set of in's shape (nranks the job's, one node, not alltoall: NCCL asks no tuner about
 * it; the others said as not verified here) measured and judged (ct_verify_judge), the copy of
 * CONFIG with the verdicts written through in->f; *verified: the sets measured. 0,
 * CT_VERIFY_SLOWER, or a failure code (said). */
int ct_ncclverify(const struct ct_ncclverify_in *in, int *verified);

/* sweep --lib --env-search: the variables to search before a library sweep (the --env settings
 * already set in this environment: env_set) */
struct ct_libsearch_in {
    const struct ct_verify_hooks *h;
    const struct ct_libmod *m;
    const struct ct_lib_env *vars; /* values as given ("V1,V2,..."); "": spaced around its own */
    int nvars;                     /* at most CT_ENV_SEARCH_VARS */
    bool env_set;
    int nranks;
    double timeout_s; /* run's --timeout */
    int pairs;        /* --pairs N: pairs at every size (0: CT_PAIRED_MIN) */
};
/* Before the sweep, each value of vars[0] with the --env settings against the library's plain
 * defaults (ct_libverify_setting) on each collective of cfg, the tables and the verdicts shown;
 * the value found faster with no size slower at the lowest geomean (with a finer step between
 * it and its neighbours), or none. Each further variable searched the same way with the values
 * found before on both sides, then the first again (coordinate descent). Then each value found
 * set in this environment, for the sweep's launch, and a variable with none found unset. 0, or
 * a failure code (said; also when the runs of every value of a variable failed). */
int ct_libverify_search(const struct ct_libsearch_in *in, const struct ct_sweep_cfg *cfg);
/* --env-search's values e->value ("V1,V2,...") split into v (at most CT_ENV_SEARCH_MAX); how
 * many, or -1 when one is empty or given twice. */
int ct_lib_env_values(const struct ct_lib_env *e, char (*v)[sizeof e->value]);
/* The --env settings (n; or a config's) and each given value of each --env-search variable
 * (ns) beside them, with this environment's (but a searched variable's, which the search
 * unsets), leave room in the library's shared-memory segment (ct_libmod_shm_fits): 0, else
 * CT_EINVAL with its one line, and *by where the setting it names is from: "--env" (one of the
 * n: a config's read as --env's), "--env-search", or NULL (this environment's). A
 * variable searched without values, a finer step's value and one beside the other variable's
 * value found are judged by the search before its launches (passed over where the segment does
 * not hold them). */
int ct_lib_env_fits(const struct ct_libmod *m, const struct ct_lib_env *env, int n,
                    const struct ct_lib_env *search, int ns, const char **by, struct ct_err *err);
/* The --env settings (n) and --env-search variables (ns) are the library's: each one its own
 * list (m->info) lists, a number where its value is one (each value of a search), glibc's
 * allocator's variables whole numbers. 0 (also where the list cannot run: nothing judged),
 * else CT_EINVAL with its one line and *by, the option of the one it names. */
int ct_lib_env_known(const struct ct_libmod *m, const struct ct_lib_env *env, int n,
                     const struct ct_lib_env *search, int ns, const char **by, struct ct_err *err);
/* Both: ct_lib_env_known, then ct_lib_env_fits (sweep --lib's options). */
int ct_lib_env_ok(const struct ct_libmod *m, const struct ct_lib_env *env, int n,
                  const struct ct_lib_env *search, int ns, const char **by, struct ct_err *err);
/* A config's launch settings l (sweep --verify CONFIG) leave the shared-memory segment room on
 * both sides of its verify: A, with them and this environment for the rest; B, the plain
 * defaults', this environment with them unset (each launch sets them or unsets them). 0, else
 * CT_EINVAL with its one line, *theirs where it names one of l's settings (else this
 * environment's). */
int ct_lib_config_fits(const struct ct_libmod *m, const struct ct_librules *l, bool *theirs,
                       struct ct_err *err);

#endif
