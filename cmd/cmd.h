/* SPDX-License-Identifier: MIT */
/* Subcommands: one file each, one row in cmd/commands.c. Only cmd/ prints and exits. */
#ifndef CT_CMD_H
#define CT_CMD_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>

#include "../lib/parse.h"

/* "0.1.0-<git describe>" (build/gen/version.c, written by make) */
const char *ct_version(void);
#define CT_VERSION ct_version()

enum ct_exit {
    CT_EXIT_OK = 0,
    CT_EXIT_FAIL = 1,  /* runtime failure (peer died, I/O, timeout) */
    CT_EXIT_USAGE = 2, /* bad command line or unusable input */
    CT_EXIT_CHECK = 3, /* ran, but a check or threshold failed (wrong results, regret, validate) */
};

struct ct_cmd {
    const char *name;
    int (*fn)(int argc, char **argv); /* argv[0] is the subcommand name; returns enum ct_exit */
    const char *summary;
    const char *usage; /* SYNOPSIS line(s) after "colltune " */
};

const struct ct_cmd *ct_cmd_find(const char *name);
const struct ct_cmd *ct_cmd_at(int i);

/* "colltune <cmd>: error: <msg>" on stderr; returns code. */
int ct_cmd_fail(const char *cmd, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
struct option;
/* getopt_long's '?' for arg (argv[optind - 1]) among the long options lo: "unknown option",
 * or "ambiguous option '--ma' (--maxbytes, --max-time)" where it abbreviates several. Exit 2,
 * said. */
int ct_cmd_bad_option(const char *cmd, const struct option *lo, const char *arg);
/* A rank's failure to open the job's transports said ("rank R (host): why"), and its exit code:
 * 2 where the request cannot be met here (CT_EINVAL, CT_EUNSUPP: shm between hosts, a
 * libfabric provider the host lacks; said by the first rank of each host alone, the others
 * being refused alike), else 1 (a peer or the network failed; said by every rank). */
struct ct_err;
struct ct_boot;
int ct_cmd_open_fail(const char *cmd, const struct ct_boot *boot, const struct ct_err *err);
/* "colltune <cmd>: warning: <msg>" on stderr. */
void ct_cmd_warn(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* An output file named by --opt (NULL: none; "-" for --json: standard output) must be
 * writable before anything runs: 0, or exit 2 after "--opt: cannot write 'path': why".
 * launched: cmd runs in every rank of a launched job (run, validate, sweep), where rank 0
 * alone writes its outputs; the others neither check nor make them (a path may exist on
 * rank 0's host alone). ct_cmd_out_dir: the same for a sweep's output folder, made when
 * missing (and removed when the process exits, if it is still empty: a job that failed before
 * writing anything leaves no folder behind), and the files a sweep writes there (none may be a
 * folder). Rank 0 of a job of more than one task that a launcher started (mpirun, srun,
 * hydra), or node 0's colltune of a job of one a node (COLLTUNE_NODE_RANK), says its
 * refusal and returns 0: the job forms, and every rank leaves with ct_cmd_refused()'s code
 * at once (its peers would else wait for it until their bootstrap timed out). */
int ct_cmd_out_check(const char *cmd, const char *opt, const char *path, bool launched);
int ct_cmd_out_dir(const char *cmd, const char *opt, const char *dir, bool launched);
/* The exit code of a refusal ct_cmd_out_check or ct_cmd_out_dir kept for the job, else 0. */
int ct_cmd_refused(void);
/* launched, and this process does not write the job's outputs: a rank other than 0 of a job a
 * launcher started, or the colltune of a node other than the first in a job of one colltune
 * --local N a node (COLLTUNE_NODE_RANK), whose node 0 keeps its refusal as rank 0 does. */
bool ct_cmd_not_first(bool launched);
/* Whether this command forks its ranks with --local N (colltune's own launch, NCCL's engine
 * included; not an MPI library's launcher): only then is it one node of such a job. Set by
 * ct_opts_check, before the outputs are checked. */
void ct_cmd_forks_ranks(bool forks);
/* The ranks a sweep runs on this host where none are asked (--local, --hosts): one per usable
 * CPU (2..1024); 0 in a job of more than one task a launcher started (its ranks). */
int ct_cmd_local_ranks(void);

/* An input file named by --opt (NULL: none) must be readable: 0, or exit 2 (unusable
 * input) after "--opt: cannot read 'path': why". launched: a file rank 0 of a launched job
 * alone reads (validate's --baseline): the others do not check it, and rank 0 of a job a
 * launcher started refuses as ct_cmd_out_check does. ct_cmd_refuse: why said and refused so. */
int ct_cmd_in_check(const char *cmd, const char *opt, const char *path, bool launched);
int ct_cmd_refuse(const char *cmd, bool launched, const char *why);
/* Where the human-readable report goes: stderr when --json is "-" (standard output then
 * carries the JSON document alone, for json.load or jq), else stdout. */
FILE *ct_cmd_report_stream(const char *json);
/* argv[0..argc) joined by spaces into buf (truncated to len). */
void ct_cmd_line(char *buf, size_t len, int argc, char **argv);

/* Return the exit code x when it is not 0. */
#define CT_TRY_OPT(x)                                                                              \
    do {                                                                                           \
        int rc__ = (x);                                                                            \
        if (rc__)                                                                                  \
            return rc__;                                                                           \
    } while (0)

struct ct_algo;

/* Option values (cmd/args.c): 0, or the exit code after printing the error. */
int ct_arg_num(const char *cmd, const char *opt, const char *arg, double lo, double hi,
               double *out);
int ct_arg_iters(const char *cmd, const char *opt, const char *arg, long lo, int *out);
/* A size with a K/M/G suffix (ct_parse_size). */
int ct_arg_size(const char *cmd, const char *opt, const char *arg, unsigned long long *out);
/* An integer in lo..hi. */
int ct_arg_int(const char *cmd, const char *opt, const char *arg, long lo, long hi, int *out);
struct ct_push_opts;
/* export's push options into po, `which` in the order --push-method, --header, --cacert,
 * --insecure (arg unused), --push-timeout, --push-retries (a whole number, 0..20). */
int ct_arg_push(int which, const char *arg, struct ct_push_opts *po);
/* arg one of words (NULL-ended): *out its index; else the one-line error listing them */
int ct_arg_word(const char *cmd, const char *opt, const char *arg, const char *const *words,
                int *out);
/* run --quant FMT into o->quant */
struct ct_opts;
int ct_arg_quant(const char *cmd, const char *arg, struct ct_opts *o);
/* run --place out|in|both: *place, CT_PLACE_OUT | CT_PLACE_IN (the halves a size runs) */
#define CT_PLACE_OUT 1
#define CT_PLACE_IN 2
int ct_arg_place(const char *cmd, const char *arg, int *place);
/* run --batch N|auto: calls back to back per timed iteration (auto: CT_BENCH_REPS_AUTO) */
int ct_arg_batch(const char *cmd, const char *arg, int *batch);
/* Comma-separated collectives into the CT_COLL_BIT set *colls. */
int ct_arg_colls(const char *cmd, const char *arg, unsigned *colls);
/* sweep --algos: colltune's algorithms appended to v (at most CT_ARG_MAX_ALGOS), or a
 * library's rows (LIB:NAME,...) kept whole in o->lib_algo, which ct_opts_check and the engine
 * check. */
#define CT_ARG_MAX_ALGOS 64
int ct_arg_algos(struct ct_opts *o, const char *arg, const struct ct_algo **v, size_t *n);
/* A list of colltune's algorithms (--algos) appended to v (*n of them, at most max), each
 * once however often named: 0, or exit 2 after one line (an empty entry, an unknown name,
 * more than max). cmd: the command that says it. */
struct ct_algo;
int ct_arg_algo_list(const char *cmd, const char *arg, const struct ct_algo **v, size_t *n,
                     size_t max);

/* Help texts, generated from the files in cmd/help/. */
extern const char ct_help_run[], ct_help_sweep[], ct_help_validate[], ct_help_export[],
    ct_help_show[], ct_help_top[], ct_help_model[], ct_help_join[];

/* Subcommand entry points. */
int cmd_run(int argc, char **argv);
int cmd_list(int argc, char **argv);
int cmd_probe(int argc, char **argv);
int cmd_help(int argc, char **argv);
int cmd_sweep(int argc, char **argv);
int cmd_show(int argc, char **argv);
int cmd_join(int argc, char **argv);
int cmd_top(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_validate(int argc, char **argv);
int cmd_model(int argc, char **argv);

/* main: the command line; every rank of a job must share it (after the program's path). */
void ct_cmd_set_argv(int argc, char **argv);
/* Every rank of boot, once a job: ct_boot_same_args of the command line set by main, less
 * what a host may set its own way (--ifname, --sysfs-root) or rank 0 alone reads (--json,
 * --out, --save-baseline). */
struct ct_boot;
int ct_cmd_same_line(struct ct_boot *boot, struct ct_err *err);

/* A sweep's rank 0 of nranks >= 1 (0: catch nothing): SIGINT, SIGTERM and SIGHUP (a launcher
 * forwards them, then kills after 2 s) are caught once and remembered, so that what was
 * measured is saved whole as the peers they end stop, or with one rank, after the point it
 * measures (ct_cmd_stop_alone) (the last save of every 2 s lost the rest); a second signal
 * (not the launcher's copy of the first), or 3 s, ends it by that signal as before.
 * ct_cmd_stop_sig: the signal caught, 0 none. */
void ct_cmd_catch_stop(int nranks);
int ct_cmd_stop_sig(void);
/* One rank, after each point: once a signal was caught, save every point as "interrupted"
 * and end by that signal. */
struct ct_sweep_job;
struct ct_sweep_point;
void ct_cmd_stop_alone(const char *out, struct ct_sweep_job *j, const struct ct_sweep_point *pts,
                       size_t n);
/* Rank 0: the points so far saved in out (results.json, "running"). */
int ct_cmd_sweep_save(const char *out, struct ct_sweep_job *j, const struct ct_sweep_point *pts,
                      size_t n, struct ct_err *err);

#endif
