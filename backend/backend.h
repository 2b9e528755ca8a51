/* SPDX-License-Identifier: MIT */
/*
 * backend/: the engines that measure collectives. This header is the one interface the
 * planner (tune/), validate and verify know an engine by; nothing above backend/ asks
 * which engine it runs on.
 *
 * What backend/ owns: the engine interface (this file); native.c, colltune's own
 * executor as an engine (exec: the schedule executor, pool: reduction threads, bench:
 * buffers, timing and barriers, verify: result checks, comm: the communicator over a
 * transport); library engines (Open MPI, MPICH, NCCL) as they arrive, each one table of
 * these functions (a module loaded by dlopen fills the same table).
 * It may include: algos/, transport/, device/, lib/. Never tune/, validate/, output/,
 * tui/ or cmd/; it never prints.
 *
 * A backend measures points. A point is a collective of one size with one candidate
 * (a row of the algorithm table, which names its parameter space) and parameter values:
 * begin() prepares it (and verifies it once when asked), time() runs warmup then timed
 * iterations and returns the slowest rank's time of each, end() releases it. Every rank
 * of the job calls these in lockstep; bcast() carries the root's plan to the others.
 */
#ifndef CT_BACKEND_H
#define CT_BACKEND_H

#include <stdbool.h>
#include <stddef.h>

#include "../algos/algo.h"
#include "../lib/alive.h"
#include "../lib/err.h"

/* A rank's place, as the table's "Using devices" block prints it. */
struct ct_rank_info {
    int rank, node, local_rank;
    long pid;
    char host[64];
    char device[128]; /* after "device": nccl-tests' "%2d [bus] name", " 0 [cpu]" for host memory */
    char reach[CT_ALIVE_LEN]; /* where it answers whether it runs (lib/alive.h), "" unknown */
};

/* How many nodes ranks[0..n) name (their highest node number, plus one). */
static inline int ct_rank_info_nodes(const struct ct_rank_info *ranks, int n)
{
    int nodes = 0;
    for (int r = 0; r < n; r++)
        nodes = ranks[r].node >= nodes ? ranks[r].node + 1 : nodes;
    return nodes;
}

struct ct_backend {
    const char *name; /* "native", ... */
    /* Prepare the point (and verify it when asked: wrong elements summed over ranks).
     * CT_EUNSUPP when every rank refused it alike: the point is skipped. */
    int (*begin)(void *ctx, const struct ct_algo *a, const struct ct_job *j, bool verify,
                 long *wrong, struct ct_err *err);
    /* warmup, then iters timed samples, each of reps runs back to back after a barrier:
     * per-sample slowest-rank times in microseconds per run, identical on every rank. */
    int (*time)(void *ctx, int warmup, int iters, int reps, double *out_us, struct ct_err *err);
    /* After time(): the prepared point verified again, pass k (1, 2, ...) on fresh inputs of
     * its own, its output poisoned first; wrong elements summed over ranks. Collective. NULL:
     * begin()'s check is the only one (ct_backend_point runs passes 1..check-1 here). */
    int (*recheck)(void *ctx, int pass, long *wrong, struct ct_err *err);
    void (*end)(void *ctx);
    double (*now_s)(void *ctx); /* read by the root only */
    /* tcp: reopen with `streams` streams per peer and `inflight` in-flight communicators
     * (AllReduce parts, bench.h). Collective. NULL: they cannot change. */
    int (*conns)(void *ctx, int streams, int inflight, struct ct_err *err);
    /* Give every rank the root's len bytes at buf. NULL in a single-process backend. */
    int (*bcast)(void *ctx, void *buf, size_t len, struct ct_err *err);
    /* Library engines (backend/lib/, loaded by backend/libmod.c): the candidates of coll,
     * rows built at run time from the library ("ompi:ring"; supports and build are NULL,
     * params names what the library lets one set). Up to max rows into rows; their count.
     * The rows live until close(). NULL: the native algorithm table. */
    int (*candidates)(void *ctx, enum ct_coll coll, const struct ct_algo **rows, int max,
                      struct ct_err *err);
    void (*close)(void *ctx); /* NULL: nothing to release (a library engine finalizes) */
    /* Library engines, in a sweep: begin refuses (CT_EUNSUPP) a forced row that runs what
     * the library's own decision runs at that point, which the default row measures. NULL:
     * every row is its own. */
    void (*distinct)(void *ctx, bool on);
    /* Library engines, after begin of a forced row at the library's own values of its
     * parameters (CT_PARAM_OWN): true when it runs what the library's own decision runs, on
     * every rank (NCCL: the same algorithm and protocol). Such a point is measured all the
     * same, as the start of the search over the row's parameters, and is never a rule's
     * choice (the default row measures it). NULL: never. */
    bool (*own_choice)(void *ctx);
    /* Library engines: a count that grows as the library's calls return (every collective
     * and broadcast, every entry above), read from another thread: a rank whose peer died
     * stays blocked in MPI, and only mpirun ends such a job (srun without
     * --kill-on-bad-exit does not), so the caller watches it (cmd/librun.c). NULL: none
     * (the native engine has its own timeouts). */
    unsigned long (*progress)(void *ctx);
    const char *library;   /* library engines: "Open MPI 4.1.4"; NULL for native */
    /* Library engines: every rank's place in rank order, the same on every rank, until
     * close(). NULL: the caller gathers them (the native engine: over its bootstrap). */
    const struct ct_rank_info *ranks;
    const char *predicted; /* an engine that prices instead of running (model/engine.c):
                              what it prices ("1024 ranks on 128 x dgx-h100, ..."); the
                              config's rules are predictions. NULL: measured */
    int max_channels;      /* the most channels a row can use (NCCL: its MAXCHANNELS); 0: 4 */
    bool root;             /* this rank plans */
    /* Library engines whose open failed after MPI_Init, the ranks agreed: root's message is
     * the one to say (the failing rank's, naming it where it is not root), root, shape and
     * close are set; root says it alone. false: each rank has its own (a module that did not
     * load, MPI_Init failed). */
    bool agreed;
    /* In, set by ct_libmod_open before a library module's entry (which copies it to this
     * rank's place in ranks): where this rank answers whether it runs (lib/alive.h), NULL
     * none */
    const char *reach;
    /* In, likewise: rank 0 of a launcher's job refused it before it started (and said why,
     * cmd/util.c): its open fails, agreed, on every rank at once (0: none) */
    int refused;
    struct ct_shape shape; /* this rank's place in the job (rank, nranks, ranks per node) */
};

#endif
