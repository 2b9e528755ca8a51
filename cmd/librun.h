/* SPDX-License-Identifier: MIT */
/* run|sweep --lib LIB: launching under the library's launcher, and the engine in a rank. */
#ifndef CT_CMD_LIBRUN_H
#define CT_CMD_LIBRUN_H

#include "../backend/backend.h"
#include "../output/export.h"
#include "../tune/libverify.h"
#include "../tune/sweep.h"
#include "opts.h"

/* Start argv (argv[0]: the subcommand) again under the library's launcher with --local
 * ranks; returns only on failure (an exit code, the line printed). */
int ct_lib_launch(const struct ct_opts *o, const char *cmd, unsigned colls, uint64_t top, int argc,
                  char **argv);
/* What ct_lib_launch needs before it starts anything: --local N or --hosts LIST, the module,
 * the launcher, and with --local N the buffers of the largest size top of the collectives colls
 * in the memory this host has available; 0, or an exit code (said). */
int ct_lib_launch_check(const struct ct_opts *o, const char *cmd, unsigned colls, uint64_t top);
/* --local N and --hosts LIST not both (run, sweep, verify): 0, or exit 2 (said). */
int ct_lib_place_check(const struct ct_opts *o, const char *cmd);
/* Run argv (argv[0]: the subcommand) under the library's launcher on nranks ranks (0: --local
 * N or --hosts' count) and wait, bounded (ct_libmod_start); its standard output in *out (new
 * memory or NULL) when out is not NULL, its standard error passed on to colltune's. Returns 0,
 * the ranks' own exit code where one of them said why (1..3), or an exit code for a failure
 * said here in one line: 1, 2 (the launcher cannot be started), 128 + N (interrupted by
 * signal N). *said: that line says it all (the launcher could not bring the job up, ended
 * with a code of its own, or was interrupted); false where the ranks said theirs, or where the
 * line says only that the launcher ended nonzero with no rank's line (a library that ended a
 * rank in MPI_Init, a rank killed): the caller may add what the run was. */
int ct_lib_job(const struct ct_opts *o, const char *cmd, int nranks, int argc, char **argv,
               char **out, bool *said);
/* In a rank: load the engine; 0 or an exit code (printed). */
int ct_lib_engine_open(const struct ct_opts *o, const char *cmd, struct ct_backend *be, void **ctx);
/* sweep --algos LIB:NAME,...: 0 when each names a row of a collective swept (colls), and a
 * --chunk some row asked for reads, else CT_EXIT_USAGE after rank 0 said why (cmd/librows.c). */
int ct_lib_rows_check(const struct ct_opts *o, unsigned colls, const struct ct_backend *be,
                      void *ctx);
/* The engine's row for --algo (LIB:default without one); NULL after printing (root): a row
 * it lacks, or LIB:list (the rows' names printed). */
const struct ct_algo *ct_lib_candidate(const struct ct_opts *o, const char *cmd,
                                       const struct ct_backend *be, void *ctx);
/* Close the engine (MPI_Finalize) within a bound, the rank leaving with code if it does not
 * return; returns code (cmd/libopen.c). */
int ct_lib_close_bounded(const struct ct_backend *be, void *ctx, int code, double timeout_s);

struct ct_librun_cfg {
    unsigned long long minb, maxb;
    double factor;
    int iters, warmup, check;
    const char *cmdline;
    const char *sizes; /* "S1,S2,...": exactly these sizes instead of minb..maxb x factor */
    const char *json;  /* --json FILE (colltune-results/1), "-": stdout, the table on stderr */
    int place;         /* CT_PLACE_OUT | CT_PLACE_IN: the halves each size runs */
    double max_s;      /* --max-time: 0, iters calls per size (struct ct_bench_cfg) */
    int batch;         /* --batch: calls back to back per iteration (0: one), auto -1 */
};
/* colltune run --lib: launch, or in a rank measure and (root) print the table. */
int ct_librun(const struct ct_opts *o, const struct ct_librun_cfg *r, int argc, char **argv);
/* run --lib --sizes LIST: its count, the sizes in *list (new memory), or -1 after one line
 * (by rank 0 alone where every rank reads it: a bad size, an empty entry). */
long ct_lib_sizes(const struct ct_opts *o, const char *sizes, uint64_t **list);
/* Whether each of list[0..n) is a size the collective runs exactly on nranks (AllToAll and
 * ReduceScatter: whole elements for each rank): 0, or exit 2 (said where root). */
int ct_lib_sizes_exact(const struct ct_opts *o, const uint64_t *list, long n, int nranks,
                       bool root);

/* colltune sweep --lib: launch, or in a rank sweep the engine's candidates with cfg (the
 * planner as for native sweeps); the root writes out/ (the config's library section). With
 * a verify_path (verify: the config read from it): ct_libverify instead. */
int ct_libsweep(const struct ct_opts *o, const struct ct_sweep_cfg *cfg, const char *out,
                const struct ct_config *verify, const char *verify_path, int argc, char **argv);
/* sweep --lib --env-search NAME[=V1,V2,...] (cmd/libsearch.c): ct_libverify_search of o's
 * --env-search variables on cfg's collectives, with verify's hooks, its tables printed; what it
 * found set in this environment for the sweep's launch. 0, or a failure code (said). */
int ct_libsearch(const struct ct_opts *o, const struct ct_sweep_cfg *cfg);
/* The hooks of a verify started from colltune's command line (cmd/verify_judge.c): its jobs
 * under the library's launcher (ct_lib_job with o), its failures said and its tables printed. */
void ct_verify_hooks_init(struct ct_verify_hooks *h, const struct ct_opts *o);
/* What the file hooks of a verify of CONFIG (at path) started from colltune's command line
 * know: its options, the export of the library m (e), the collectives asked for (colls). */
struct ct_verify_cmd {
    const struct ct_opts *o;
    const struct ct_libmod *m;
    const struct ct_emitter *e;
    const char *path;
    unsigned colls;
};
/* Those hooks (cmd/verify_export.c): the export written by e for the verify to load (across
 * hosts beside path), CONFIG's copies through its document, the verdicts applied
 * (ct_config_lib_judged) and the copy written as NAME.verified.json and said
 * (cmd/verify_out.c). */
void ct_verify_files_init(struct ct_verify_files *f, const struct ct_verify_cmd *x);
/* Its copy and apply hooks (ct_config_copy; ct_config_lib_judged), NCCL's verify's too */
struct ct_config *ct_verify_hook_copy(const void *ctx, const struct ct_config *c);
void ct_verify_hook_apply(const void *ctx, struct ct_config *c, const char *lib, int i,
                          const struct ct_ruleset *s, const bool *slow, const bool *nogain,
                          const struct ct_paired_cut *cut, int n[CT_JUDGED_N]);
/* Why verify does not run set s of a section here (--hosts places other ranks than it has,
 * or more ranks than this host's cores), or NULL. */
const char *ct_verify_set_elsewhere(const struct ct_opts *o, const struct ct_ruleset *s);
/* The file the export of cfg by e writes, for a verify to load: in a new file (across hosts
 * beside path, which every host reads; else in /tmp) with what goes beside it (MPICH's CH4
 * tree), and its loader (the variables that point the library at it). 0; CT_EIO, not
 * written (err says why); CT_EINVAL, its loader sets more than CT_LOADER_MAX variables; or
 * ct_export_run's failure (out.unchanged: it would change nothing). ct_verify_export_release
 * removes the files and frees x, whatever it returned. */
struct ct_verify_export {
    char *tmp;
    struct ct_export_out out;
    struct ct_export_files f;
    struct ct_loader *ld;
};
struct ct_emitter;
int ct_verify_export(const struct ct_opts *o, const struct ct_emitter *e, const char *path,
                     const struct ct_config *cfg, struct ct_verify_export *x, struct ct_err *err);
void ct_verify_export_release(struct ct_verify_export *x);
/* No set of section l that --coll and --local N (colls, o) ask for on this host or the ranks
 * --hosts places: one line naming what it has (title the library's, path CONFIG's),
 * CT_EXIT_USAGE (cmd/verify_out.c). */
int ct_verify_no_set(const struct ct_opts *o, const struct ct_librules *l, const char *title,
                     const char *path, unsigned colls);
/* sweep --verify CONFIG --lib (--reverify N): the exported file against the library's defaults
 * (cmd/libverify.c: its input checked, then ct_libverify_rounds with the hooks above); 0,
 * CT_EXIT_CHECK when slower somewhere, or a failure code (printed). */
int ct_libverify(const struct ct_opts *o, const struct ct_config *c, const char *path,
                 unsigned colls);
/* Watch a library engine's progress (cmd/libwatch.c): no call returning for timeout_s
 * seconds ends the rank with one line and exit 1. Stopped before the engine closes. */
void ct_lib_watch(const struct ct_backend *be, void *ctx, double timeout_s);
/* --timeout as the whole seconds the watchdog and the teardown's alarm count (at least 1). */
int ct_lib_bound_s(double timeout_s);
void ct_lib_watch_stop(void);
/* Until ct_lib_deadline_off: s seconds on, msg on stderr and _exit(code) (SIGALRM). */
void ct_lib_deadline(unsigned s, int code, const char *msg);
void ct_lib_deadline_off(void);
/* be->close(ctx) within s seconds, else msg on stderr and _exit(code); returns code. */
int ct_lib_close_within(const struct ct_backend *be, void *ctx, int code, unsigned s,
                        const char *msg);
/* CONFIG (at path) with the ranges verify found slower and those that showed no gain set back
 * to lib's own choice, those found slower only at an edge cut to the sizes that gained
 * (ct_paired_trim), the rows --try-ties tried kept where they gained (n: counts by
 * CT_JUDGED_*), and nstamped sets marked verified (a set with a slower range is not: the
 * file changed; one that lost only ranges with no gain is, since those sizes now run what
 * side B ran), and nown sets found slower only at sizes CONFIG keeps at lib's own choice
 * (no rule found slower: not marked), nunmarked of them with the verified mark an earlier
 * verify gave them cleared (dropped: --each-setting left a launch setting out of it;
 * env_marked: its launch settings marked verified), written
 * beside it as NAME.verified.json (CONFIG itself when it is one) and said on stderr
 * (cmd/verify_out.c). Returns code (verify's exit code so far), or
 * CT_EXIT_FAIL when code is 0 and the file could not be written (said). */
int ct_verify_write_fixed(const struct ct_config *fixed, const char *path, const int *n,
                          int nstamped, int nown, int nunmarked, bool dropped, bool env_marked,
                          bool keeps_own, const char *lib, int code);
/* Verify's exit 3 said on stderr: the file slower than lib's defaults at a size, where a rule
 * was judged (rules: one set back or cut), else only at sizes it keeps at lib's own choice. */
void ct_verify_say_slower(const char *lib, bool rules);
/* Exit 3 with nothing to write (no rule found slower, no verified mark cleared): said. */
void ct_verify_say_unchanged(void);
/* The same for a CONFIG whose launch settings verify found slower than the defaults (slow) or
 * without a gain: fixed is CONFIG without them (ct_config_lib_env_drop); nenv of them were
 * judged together (two or more: the message names how to judge each, with --lib lib), and,
 * each_ran, with each left out in turn (--each-setting). Returns code, or a failure code
 * (said). */
int ct_verify_write_env_dropped(const struct ct_config *fixed, const char *path, bool slow,
                                int nenv, bool each_ran, const char *lib, int code);
/* The export as a whole found slower than the plain defaults though its settings and rules
 * each held apart (ct_libverify_whole): CONFIG (fixed) with none of lib's verified marks,
 * written as NAME.verified.json over an older copy and said; code, or a failure code (said). */
int ct_verify_write_unmarked(const struct ct_config *fixed, const char *path, const char *lib,
                             int code);
/* sweep --verify PATH --lib nccl (cmd/ncclverify.c): before anything starts, whether PATH has
 * a measured NCCL section with a rule for `ranks` ranks on one host (--local N or its default;
 * 0: any, under another launcher) (0, or the exit code, said); then the verify itself in
 * --local N ranks, as ct_libverify's. */
int ct_nccl_verify_check(const struct ct_opts *o, const char *path, int ranks);
int ct_nccl_verify(const struct ct_opts *o, const struct ct_config *c, const char *path);

/* The end of a sweep on the root (native, --lib, --model; in cmd/sweep_model.c): the failure
 * said, results, config and report written to out, the table printed; the exit code. */
struct ct_sweep_job;
int ct_sweep_finish(const char *out, const struct ct_sweep_job *j, int rc,
                    const struct ct_err *serr, uint64_t maxbytes);

/* sweep --model TOPOLOGY (cmd/sweep_model.c): --model (which 0), --nodes (1) and --net (2)
 * into m (0, or an exit code, printed); then the sweep priced on the model. */
struct ct_mtopo_spec;
/* malloc settings for the pricer (model, sweep --model): freed schedules stay mapped. */
void ct_model_malloc_policy(void);
/* Options the model cannot use (it prices a topology, starts no ranks): 0, or exit 2 after
 * one line naming the first. all: also --streams (model; sweep --model's planner takes it as
 * a parameter). who: "--model" or "model". */
int ct_model_opts_moot(const struct ct_opts *o, const char *cmd, const char *who, bool all);
/* sweep's options that only some of its modes read, refused elsewhere (one line, exit 2):
 * --pairs (verify, --env-search), -b/-e/-f/--out (sweep_only: not --verify), --max-regret
 * (regret: the native verify), the planner's -w/--budget/--target-ci/--margin/--min-iters/
 * --max-iters (planner & 1: not a library's verify), -d/-o (planner & 2: a sweep's alone);
 * --streams and --provider where no link reads them (ct_opts_links_check) but for a model's
 * sweep (planner & 4: the model's links). */
int ct_sweep_opts_moot(const struct ct_opts *o, bool sweep_only, bool regret, int planner);
int ct_sweep_model_opt(struct ct_mtopo_spec *m, int which, const char *arg);
int ct_sweep_model(const struct ct_mtopo_spec *spec, const struct ct_opts *o,
                   const struct ct_sweep_cfg *cfg, const char *out, const char *verify);

#endif
