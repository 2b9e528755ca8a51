/* SPDX-License-Identifier: MIT */
/* Options shared by the subcommands that run collectives (run, sweep): the collective,
 * algorithm and parameters, the transport, and how ranks are launched. */
#ifndef CT_OPTS_H
#define CT_OPTS_H

#include "../algos/algo.h"
#include "../backend/bench.h"
#include "../backend/comm.h"
#include "../backend/native.h"
#include "../output/output.h"
#include "../transport/launch.h"
#include "../tune/tune.h"

struct ct_opts {
    enum ct_coll coll;
    enum ct_dtype dtype;
    enum ct_redop op;
    const struct ct_algo *algo;
    bool own_algos;       /* --algo (sweep: --algos) named colltune's own algorithms */
    const char *lib;      /* --lib: a library engine: "nccl" (run, in process) or an MPI
                             library's (backend/libmod.h, relaunched); NULL: colltune's own */
    const char *lib_algo; /* --algo LIB:NAME, resolved by the library engine */
    struct ct_params params;
    const char *transport;
    int local, ranks_per_node, torus_rows, torus_cols, rails;
    int local_set;     /* --local as given (0: not given; a sweep then picks the cores' count) */
    const char *hosts; /* --hosts: an MPI library's ranks on these hosts (HOST[:SLOTS],...) */
    int hosts_ranks;   /* the ranks --hosts places */
    enum ct_wait_mode wait;
    double timeout_s;      /* --timeout: data path, no progress for this long fails */
    double boot_timeout_s; /* --boot-timeout: bring-up (bootstrap, connection setup) */
    const char *ifname;    /* --ifname, else COLLTUNE_SOCKET_IFNAME */
    const char *provider;  /* --provider (fabric transport) */
    const char *port_range; /* --port-range, else COLLTUNE_PORT_RANGE */
    int port_lo, port_hi;
    enum ct_quant quant;   /* run --quant (CT_QUANT_NONE: exact) */
    unsigned long long sockbuf; /* --sockbuf: tcp socket buffers (0 = automatic) */
    bool no_bind;          /* --no-bind: leave --local ranks unpinned */
    bool keep_rules;       /* run --keep-rules: the library's rules as the environment loads them */
    const char *verify;    /* sweep --verify CONFIG (its launch settings judged there) */
    bool try_ties; /* sweep --verify --lib --try-ties: rows tied with the library's choice */
    bool each_setting; /* sweep --verify --lib --each-setting: each launch setting left out */
    int reverify; /* sweep --verify --lib --reverify N: the copy verified again, N rounds at most */
    int pairs;    /* sweep --lib --pairs N (--verify, --env-search): pairs at every size (0: 3) */
    struct ct_lib_env lib_env[CT_LIB_ENV_MAX]; /* sweep --lib --env NAME=VALUE: the library's */
    int nlib_env;                              /* launch settings */
    /* sweep --lib --env-search NAME[=V1,V2,...], each variable searched after the one before
     * (libsearch.c); value "": spaced around the library's own */
    struct ct_lib_env env_search[CT_ENV_SEARCH_VARS];
    int nenv_search;
    int map_bufs;          /* shm: peer buffers kept mapped (ct_tp_cfg); sweep: every one */
    const char *mem;       /* --mem: memory kind of the buffers (device/), NULL: host */
    const char *gpu_map;   /* --gpu-map: the GPU of each local rank, NULL: local rank i -> i */
    /* not an option: a sweep's folder, whose kept points the line about a job a signal
     * stopped names (ct_sweep_outputs_stop_note), NULL: none */
    const char *kept_in;
};

#define CT_OPTS_FIRST 2000
enum {
    CT_O_COLL = CT_OPTS_FIRST,
    CT_O_ALGO,
    CT_O_CHUNK,
    CT_O_PIPELINE,
    CT_O_CHANNELS,
    CT_O_STREAMS,
    CT_O_THREADS,
    CT_O_TRANSPORT,
    CT_O_LOCAL,
    CT_O_RPN,
    CT_O_INTRA,
    CT_O_INTER,
    CT_O_TORUS,
    CT_O_RAILS,
    CT_O_REVERIFY,
    CT_O_WAIT,
    CT_O_TIMEOUT,
    CT_O_BOOT_TIMEOUT,
    CT_O_IFNAME,
    CT_O_PORT_RANGE,
    CT_O_PROVIDER,
    CT_O_SOCKBUF,
    CT_O_NO_BIND,
    CT_O_MEM,
    CT_O_GPU_MAP,
    CT_O_LIB,
    CT_O_INFLIGHT,
    CT_O_HOSTS,
    CT_O_KEEP_RULES,
    CT_O_TRY_TIES,
    CT_O_EACH_SETTING,
    CT_O_ENV,
    CT_O_ENV_SEARCH,
    CT_O_PAIRS
};

#define CT_OPTS_LONG                                                                               \
    {"coll", 1, 0, CT_O_COLL}, {"algo", 1, 0, CT_O_ALGO}, {"chunk", 1, 0, CT_O_CHUNK},             \
        {"pipeline", 1, 0, CT_O_PIPELINE}, {"channels", 1, 0, CT_O_CHANNELS},                      \
        {"streams", 1, 0, CT_O_STREAMS}, {"threads", 1, 0, CT_O_THREADS},                          \
        {"transport", 1, 0, CT_O_TRANSPORT}, {"local", 1, 0, CT_O_LOCAL},                          \
        {"ranks-per-node", 1, 0, CT_O_RPN}, {"intra", 1, 0, CT_O_INTRA},                           \
        {"inter", 1, 0, CT_O_INTER}, {"torus", 1, 0, CT_O_TORUS}, {"rails", 1, 0, CT_O_RAILS},     \
        {"reverify", 1, 0, CT_O_REVERIFY}, {"wait", 1, 0, CT_O_WAIT},                              \
        {"timeout", 1, 0, CT_O_TIMEOUT}, {"boot-timeout", 1, 0, CT_O_BOOT_TIMEOUT},                \
        {"ifname", 1, 0, CT_O_IFNAME}, {"provider", 1, 0, CT_O_PROVIDER},                          \
        {"port-range", 1, 0, CT_O_PORT_RANGE}, {"sockbuf", 1, 0, CT_O_SOCKBUF},                    \
        {"no-bind", 0, 0, CT_O_NO_BIND}, {"mem", 1, 0, CT_O_MEM}, {"gpu-map", 1, 0, CT_O_GPU_MAP}, \
        {"lib", 1, 0, CT_O_LIB}, {"inflight", 1, 0, CT_O_INFLIGHT},                                \
        {"keep-rules", 0, 0, CT_O_KEEP_RULES}, {"try-ties", 0, 0, CT_O_TRY_TIES},                  \
        {"each-setting", 0, 0, CT_O_EACH_SETTING}, {"env", 1, 0, CT_O_ENV},                        \
        {"env-search", 1, 0, CT_O_ENV_SEARCH}, {"pairs", 1, 0, CT_O_PAIRS},                        \
    {                                                                                              \
        "hosts", 1, 0, CT_O_HOSTS                                                                  \
    }

void ct_opts_init(struct ct_opts *o);
/* Each returns 0 or an exit code after printing the error. */
int ct_opts_parse_long(struct ct_opts *o, const char *cmd, int id, const char *arg);
int ct_opts_set_op(struct ct_opts *o, const char *cmd, const char *arg);
int ct_opts_set_dtype(struct ct_opts *o, const char *cmd, const char *arg);
/* After parsing: parameter ranges and combinations. */
int ct_opts_check(const struct ct_opts *o, const char *cmd);
/* Before launching: does the algorithm support this request on the launch shape? */
int ct_opts_precheck(const struct ct_opts *o, const char *cmd);
/* --streams where the ranks meet in shared memory alone, --provider without --transport
 * fabric: refused (exit 2), not ignored (run, sweep but --model, validate; with --lib,
 * ct_opts_check refuses both). */
int ct_opts_links_check(const struct ct_opts *o, const char *cmd);
/* Bring up the ranks (transport/launch.h) and run fn in each; notices and forked ranks'
 * fatal errors are printed as "colltune <cmd>: notice: ..." / "error: ...". */
int ct_opts_launch(const struct ct_opts *o, const char *cmd, ct_rank_fn fn, void *arg);
/* The launch configuration these options ask for (for ct_launch_describe_cfg). */
void ct_opts_launch_cfg(const struct ct_opts *o, const char *cmd, struct ct_launch_cfg *lc,
                        struct ct_launch_opts *lx);
/* Print what --print-bootstrap shows, with these options, to stdout. */
void ct_opts_print_bootstrap(const struct ct_opts *o);

/* In a rank. */
/* The communicator configuration the options ask for. */
void ct_opts_comm_cfg(const struct ct_opts *o, struct ct_comm_cfg *cc);
int ct_opts_comm_open(const struct ct_opts *o, struct ct_boot *boot, struct ct_comm *c,
                      struct ct_err *err);
struct ct_nccl;
struct ct_backend;
struct ct_sweep_job;
/* --lib nccl: the NCCL engine on this rank's GPU (--gpu-map) into be and *n, or *n NULL
 * without --lib. Collective (cmd/engine.c). NCCL's set-up is bounded by --boot-timeout plus
 * --timeout: past that the rank says so and leaves with exit 1. */
int ct_opts_engine_open(const struct ct_opts *o, struct ct_boot *boot, const struct ct_comm *c,
                        struct ct_backend *be, struct ct_nccl **n, struct ct_err *err);
/* With --lib: what a library engine cannot honour refused (exit 2, said), not ignored:
 * colltune's own --algo(s), --quant, --transport. 0 otherwise. */
int ct_opts_lib_check(const struct ct_opts *o, const char *cmd);
/* The first of verify's own options given (--try-ties, --reverify, --each-setting), as its
 * name without the dashes; NULL: none (cmd/engine.c). */
const char *ct_opts_verify_only(const struct ct_opts *o);
/* --env NAME=VALUE (sweep --lib): one more launch setting, at most 8; search: --env-search
 * NAME[=V1,V2,...] instead, at most CT_ENV_SEARCH_VARS (NAME alone: value ""), 0 or exit 2
 * (said). */
int ct_opts_lib_env(struct ct_opts *o, const char *cmd, const char *arg, bool search);
/* --pairs N (sweep --lib with --verify or --env-search): the paired launches at every size,
 * CT_PAIRED_MIN..CT_PAIRED_CAP (tune/stats.h); 0 or exit 2 (said). */
int ct_opts_lib_pairs(struct ct_opts *o, const char *cmd, const char *arg);
#define CT_PAIRS_FOR                                                                               \
    "--pairs is for sweep --lib with --verify CONFIG or --env-search (the library's paired "       \
    "launches)"
/* Close n (NULL: nothing) within --timeout, else a warning naming rank and leave with code
 * (the results are out before); returns code. */
int ct_opts_engine_close(const struct ct_opts *o, struct ct_nccl *n, int rank, int code);
struct ct_mem;
/* --mem KIND other than host: this rank's memory of that kind on its GPU (--gpu-map of its
 * local rank) into *m; without, 0 and m->kind NULL. Close with ct_mem_close. */
int ct_opts_mem_open(const struct ct_opts *o, const struct ct_boot *boot, struct ct_mem *m,
                     struct ct_err *err);
/* A rank's sweep (or --verify) on the engine the options name: native (on --mem), or NCCL,
 * left open in *nccl for ct_opts_engine_close once the results are out. */
int ct_opts_sweep_run(const struct ct_opts *o, struct ct_boot *boot, struct ct_sweep_job *j,
                      struct ct_comm **comm, struct ct_nccl **nccl, struct ct_err *err);
/* Before sweep --lib nccl launches its ranks: NCCL_TUNER_PLUGIN names colltune's plugin (set
 * here; CT_EUNSUPP if it names another), and no config or forced choice of the environment
 * reaches the default row. */
int ct_opts_nccl_sweep_env(struct ct_err *err);
void ct_opts_job(const struct ct_opts *o, const struct ct_comm *c, uint64_t count,
                 struct ct_job *j);
struct ct_rank_info *ct_opts_rank_infos(struct ct_comm *c, struct ct_mem *mem, struct ct_err *err);
/* "chunk=131072,..." of o's parameters that row a reads (a library's row: what it lets one set) */
void ct_opts_params_str(const struct ct_opts *o, const struct ct_algo *a, char *buf, size_t len);

/* Reopen a rank's connections with other tcp streams and in-flight communicators (a
 * ct_native_conns_fn). */
struct ct_opts_reopen {
    const struct ct_opts *o;
    struct ct_boot *boot;
};
int ct_opts_reopen_conns(void *arg, int streams, int inflight, struct ct_conns *c,
                         struct ct_err *err);

/* --inflight K (the inflight parameter): K more communicators like the rank's own (tcp),
 * each carrying one part; *out is new (ct_opts_flight_close); the error names the one that
 * failed. */
int ct_opts_flight_open(const struct ct_opts *o, struct ct_boot *boot, struct ct_comm **out,
                        struct ct_err *err);
void ct_opts_flight_close(struct ct_comm *c, int n);

#endif
