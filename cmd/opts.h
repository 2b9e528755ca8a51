/* SPDX-License-Identifier: MIT */
/* Options shared by the subcommands that run collectives (run, sweep): the collective,
 * algorithm and parameters, the transport, and how ranks are launched. */
#ifndef CT_OPTS_H
#define CT_OPTS_H

#include "../algos/algo.h"
#include "../engine/bench.h"
#include "../engine/comm.h"
#include "../output/output.h"
#include "../transport/launch.h"

struct ct_opts {
    enum ct_coll coll;
    enum ct_dtype dtype;
    enum ct_redop op;
    const struct ct_algo *algo;
    struct ct_params params;
    const char *transport;
    int local, ranks_per_node, torus_rows, torus_cols, rails;
    enum ct_wait_mode wait;
    double timeout_s;      /* --timeout: data path, no progress for this long fails */
    double boot_timeout_s; /* --boot-timeout: bring-up (bootstrap, connection setup) */
    const char *ifname;    /* --ifname, else COLLTUNE_SOCKET_IFNAME */
    const char *provider;  /* --provider (fabric transport) */
    const char *port_range; /* --port-range, else COLLTUNE_PORT_RANGE */
    int port_lo, port_hi;
    bool no_bind;          /* --no-bind: leave --local ranks unpinned */
};

#define CT_OPTS_FIRST 2000
enum {
    CT_O_COLL = CT_OPTS_FIRST, CT_O_ALGO, CT_O_CHUNK, CT_O_PIPELINE, CT_O_CHANNELS, CT_O_STREAMS,
    CT_O_THREADS, CT_O_TRANSPORT, CT_O_LOCAL, CT_O_RPN, CT_O_INTRA, CT_O_INTER, CT_O_TORUS,
    CT_O_RAILS, CT_O_WAIT, CT_O_TIMEOUT, CT_O_BOOT_TIMEOUT, CT_O_IFNAME, CT_O_PORT_RANGE, CT_O_PROVIDER,
    CT_O_NO_BIND
};

#define CT_OPTS_LONG                                                                               \
    {"coll", 1, 0, CT_O_COLL}, {"algo", 1, 0, CT_O_ALGO}, {"chunk", 1, 0, CT_O_CHUNK},             \
        {"pipeline", 1, 0, CT_O_PIPELINE}, {"channels", 1, 0, CT_O_CHANNELS},                      \
        {"streams", 1, 0, CT_O_STREAMS}, {"threads", 1, 0, CT_O_THREADS},                          \
        {"transport", 1, 0, CT_O_TRANSPORT}, {"local", 1, 0, CT_O_LOCAL},                          \
        {"ranks-per-node", 1, 0, CT_O_RPN}, {"intra", 1, 0, CT_O_INTRA},                           \
        {"inter", 1, 0, CT_O_INTER}, {"torus", 1, 0, CT_O_TORUS}, {"rails", 1, 0, CT_O_RAILS},     \
        {"wait", 1, 0, CT_O_WAIT}, {"timeout", 1, 0, CT_O_TIMEOUT},                                \
        {"boot-timeout", 1, 0, CT_O_BOOT_TIMEOUT}, {"ifname", 1, 0, CT_O_IFNAME}, {"provider", 1, 0, CT_O_PROVIDER},                  \
        {"port-range", 1, 0, CT_O_PORT_RANGE}, {"no-bind", 0, 0, CT_O_NO_BIND}

#define CT_OPTS_HELP                                                                               \
    "\n"                                                                                           \
    "collective and algorithm:\n"                                                                  \
    "  --coll C                allreduce, allgather, reducescatter, alltoall (default\n"           \
    "                          allreduce)\n"                                                       \
    "  --algo A                algorithm (default ring; 'colltune list algos')\n"                  \
    "  --chunk BYTES           bytes per pipelined slice (default 128K)\n"                         \
    "  --pipeline N            slices in flight per peer (default 4)\n"                            \
    "  --channels N            parallel rings/channels (default 1)\n"                              \
    "  --streams N             tcp streams per peer connection (default 1)\n"                      \
    "  --threads N             reduction threads (default 1)\n"                                    \
    "  --intra A, --inter A    sub-algorithms of hier\n"                                           \
    "  --torus RxC             map ranks onto an R x C torus (torus algorithms)\n"                 \
    "  --rails N               NIC rails per node (rail-ring)\n"                                   \
    "\n"                                                                                           \
    "ranks and transport:\n"                                                                       \
    "  --local N               fork N ranks on this host\n"                                        \
    "  --ranks-per-node N      with --local: split the ranks into virtual nodes of N\n"            \
    "  --transport T           auto, shm, tcp, loop (default auto: shm within a host, tcp\n"       \
    "                          across hosts)\n"                                                    \
    "  --wait auto|spin|block  how idle ranks wait (default auto: block when ranks > cores)\n"     \
    "  --no-bind               leave --local ranks unpinned (default: rank i on the i-th\n"      \
    "                          allowed core when there are no more ranks than cores)\n"          \
    "  --timeout SEC           fail when a peer makes no progress for SEC (default 30)\n"          \
    "  --boot-timeout SEC      fail when ranks have not all met within SEC (default 60)\n"         \
    "  --provider NAME         libfabric provider for --transport fabric (default: the\n"           \
    "                          first of verbs;ofi_rxm, efa, tcp;ofi_rxm, tcp, shm, sockets)\n"    \
    "  --ifname IF             publish IF's address (default: the route to the other\n"            \
    "                          hosts; also COLLTUNE_SOCKET_IFNAME)\n"                              \
    "  --port-range LO-HI      listen only on these ports (firewalls; also\n"                      \
    "                          COLLTUNE_PORT_RANGE)\n"

#define CT_TRY_OPT(x)                                                                              \
    do {                                                                                           \
        int rc__ = (x);                                                                            \
        if (rc__)                                                                                  \
            return rc__;                                                                           \
    } while (0)

void ct_opts_init(struct ct_opts *o);
/* Each returns 0 or an exit code after printing the error. */
int ct_opts_parse_long(struct ct_opts *o, const char *cmd, int id, const char *arg);
int ct_opts_set_op(struct ct_opts *o, const char *cmd, const char *arg);
int ct_opts_set_dtype(struct ct_opts *o, const char *cmd, const char *arg);
/* After parsing: parameter ranges and combinations. */
int ct_opts_check(const struct ct_opts *o, const char *cmd);
/* Before launching: does the algorithm support this request on the launch shape? */
int ct_opts_precheck(const struct ct_opts *o, const char *cmd);
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
void ct_opts_job(const struct ct_opts *o, const struct ct_comm *c, uint64_t count,
                 struct ct_job *j);
struct ct_rank_info *ct_opts_rank_infos(struct ct_comm *c, struct ct_err *err);
void ct_opts_params_str(const struct ct_opts *o, char *buf, size_t len);

#endif
