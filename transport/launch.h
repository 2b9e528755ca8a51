/* SPDX-License-Identifier: MIT */
/*
 * Bringing up ranks: detect how this process was started and open its bootstrap.
 *
 * Detection order (the first that applies wins; COLLTUNE_BOOTSTRAP=local|pmix|pmi1|env|
 * single forces one):
 *   1. --local N: fork N ranks on this host (with COLLTUNE_ROOT or MASTER_ADDR/MASTER_PORT
 *      plus COLLTUNE_NNODES and COLLTUNE_NODE_RANK: N ranks of a job spanning nodes, one
 *      `colltune --local N` per node).
 *   2. PMIx: PMIX_RANK is set (mpirun, srun --mpi=pmix, prterun) and PMIx was built in.
 *   3. PMI-1: PMI_FD is set (MPICH hydra's mpiexec).
 *   4. Environment rendezvous: the root from COLLTUNE_ROOT=host:port, else
 *      MASTER_ADDR/MASTER_PORT (torchrun); rank and size from the first pair found of
 *      COLLTUNE_RANK/SIZE, OMPI_COMM_WORLD_RANK/SIZE, PMI_RANK/SIZE,
 *      SLURM_PROCID/NTASKS (inside an srun step), RANK/WORLD_SIZE (with MASTER_ADDR).
 *   5. A single process (rank 0 of 1).
 * Mis-launches are refused with an explanation: launcher variables that promise several
 * processes while no bootstrap can join them (each would run alone as rank 0 of 1, the
 * nccl-tests "busbw 0" trap), --local under a multi-process launcher, sizes that disagree.
 *
 * Token: COLLTUNE_TOKEN (at least 16 characters) when set, on every rank; else the
 * --local parent or rank 0 draws one (PMIx, PMI-1: passed through the launcher's store;
 * environment rendezvous: sent to each rank as it joins).
 */
#ifndef CT_LAUNCH_H
#define CT_LAUNCH_H

#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>

#include "boot.h"

struct ct_launch_cfg {
    int local;          /* --local N (0 = not local) */
    int ranks_per_node; /* virtual nodes for --local: hosts "<host>/nodeK" (0 = one node) */
    int64_t timeout_ns; /* bootstrap bring-up timeout (0 = 60 s) */
};

/* Further launch settings (NULL everywhere = these defaults: zeros, no hooks). */
struct ct_launch_opts {
    int64_t op_timeout_ns; /* bootstrap collectives after bring-up, and the grace a forked
                              job gets after a rank failed (0 = 30 s) */
    const char *ifname;    /* interface rank 0 publishes (PMIx, PMI-1); NULL = all */
    int port_lo, port_hi;  /* ports rank 0 may listen on (PMIx, PMI-1); 0 = any */
    ct_notice_fn notice;   /* notices (rejected connections ...); may be NULL */
    ct_notice_fn fatal;    /* a forked rank's fatal error, "rank 3: ..."; may be NULL */
    void *ctx;             /* for notice and fatal */
    bool no_bind;          /* forked ranks: leave them unpinned (else rank i of this host runs
                              on the i-th allowed CPU when ranks <= CPUs) */
    int refused;           /* a launcher's job, or node 0's colltune of a job of one --local N a
                              node: rank 0 refused it before it started (and said why): every rank
                              leaves with rank 0's code once the bootstrap has formed, not after
                              waiting for a rank 0 that left (0: none; others' is not read); a
                              --local N job of one host starts no rank for it */
    /* a forked job a signal stopped, once its ranks are gone: what the line saying so adds
     * (what the job kept); may be NULL */
    void (*stopped)(void *ctx, int sig, char *note, size_t len);
    void *stopped_ctx;
};

/* Called in every rank with its bootstrap; returns an exit code (0 ok). */
typedef int (*ct_rank_fn)(struct ct_boot *boot, void *arg);

enum ct_launch_kind {
    CT_LAUNCH_SINGLE,
    CT_LAUNCH_LOCAL,
    CT_LAUNCH_LOCAL_NODES, /* --local N as one node of a multi-node job */
    CT_LAUNCH_PMIX,
    CT_LAUNCH_PMI1,
    CT_LAUNCH_ENV,
    CT_LAUNCH_MISLAUNCH, /* refused: why says so */
};

/* What the environment and options say about the launch. */
struct ct_launch_info {
    enum ct_launch_kind kind;
    const char *method; /* "single", "local", "pmix", "pmi1", "env" */
    int rank, size;     /* -1 where only the bootstrap will tell */
    const char *rank_var, *size_var;
    char root[300];        /* env, local nodes: the root address */
    const char *root_src;  /* "COLLTUNE_ROOT", "MASTER_ADDR/MASTER_PORT" */
    int nnodes, node_rank; /* local nodes */
    int have_token;        /* COLLTUNE_TOKEN given */
    unsigned char token[CT_BOOT_TOKEN_BYTES];
    int launcher_size; /* most processes any launcher variable promises (0: none) */
    char launcher_var[40];
    const char *forced; /* COLLTUNE_BOOTSTRAP, if set */
    char why[480];      /* CT_LAUNCH_MISLAUNCH: the explanation */
};

/* Detect; returns 0, or CT_EINVAL for a mis-launch (li->why and err say why). */
int ct_launch_detect(const struct ct_launch_cfg *cfg, struct ct_launch_info *li,
                     struct ct_err *err);
/* This process's rank as its launcher's variables give it (COLLTUNE_RANK, mpirun's, PMI's,
 * srun's within a step, torchrun's, PMIX_RANK), before any bootstrap; -1 when none does. */
int ct_launch_env_rank(void);
/* The size of the job whose rank that is (its launcher's variables); -1 when none says, or
 * there is no such rank. */
int ct_launch_env_size(void);
/* This process's node in a job of one colltune --local N a node (COLLTUNE_ROOT or
 * MASTER_ADDR, COLLTUNE_NNODES, COLLTUNE_NODE_RANK): 0..nodes-1, or -1, as --local N would
 * read the variables (a command without --local is no such job, whatever they say). */
int ct_launch_env_node(void);

/*
 * Run fn in every rank. Local kinds: fork, run, wait; the return value is the worst exit
 * code of the ranks, and *dead_rank is set (>= 0) to the first rank that died by a signal
 * (-1 if none), with its signal in *dead_sig. Once a rank fails, the others are told at once
 * (ct_launch_lost_rank) and get the data timeout (x->op_timeout_ns) plus 5 s to exit before
 * they are killed (reported through cfg->fatal). Ranks die with the parent (no orphans); SIGINT,
 * SIGTERM and SIGHUP to the parent are forwarded to them (the return value is then 128 + the
 * signal), and the job's shared-memory objects are removed afterwards. A rank whose standard
 * output's reader left (| head) runs to its end and exits CT_LAUNCH_READER_LEFT (128 +
 * SIGPIPE, as a killed producer's shell status), not a failure. Other kinds: bootstrap in
 * this process and run fn; when fn fails (non-zero), the job's shared-memory objects on this host
 * are removed (a dead rank's). Returns < 0 (with err) when ranks could not be brought up or the
 * launch is refused.
 */
#define CT_LAUNCH_READER_LEFT 141
int ct_launch(const struct ct_launch_cfg *cfg, ct_rank_fn fn, void *arg, int *dead_rank,
              int *dead_sig, struct ct_err *err);
/* The same with further settings (x may be NULL). */
int ct_launch_ext(const struct ct_launch_cfg *cfg, const struct ct_launch_opts *x, ct_rank_fn fn,
                  void *arg, int *dead_rank, int *dead_sig, struct ct_err *err);

/* In a rank of the fork launcher: the rank the launcher saw fail first (one a signal killed
 * before one reaped with it that exited with an error, as a peer leaving on its death), -1
 * while none has
 * (or under another launcher). A long operation with healthy peers checks it to stop and
 * report instead of being killed at the end of the grace. */
int ct_launch_lost_rank(void);
/* The same, after waiting up to wait_ns for the launcher's word in a rank of the fork
 * launcher (a peer's closed connection can be seen before the launcher reaps the peer);
 * under another launcher it returns at once. */
int ct_launch_lost_rank_wait(int64_t wait_ns);
/* How that rank ended: -signal when a signal killed it (a death), -255 when a peer found it
 * stalled (ct_launch_tell_stalled: it may still be there, stopped or hung), else its exit code
 * (a rank that left on purpose: rank 0 after its report exits 3); 0 while none failed. */
int ct_launch_lost_how(void);
/* In a rank of the fork launcher of one host (--local N, not a node of several): rank
 * (another of the job) made no progress for the data timeout; the launcher tells the other
 * ranks, once, as of a rank that died (their ct_launch_lost_rank, how -255), so that a long
 * operation with healthy peers (validate's pair rounds) stops and reports it, not after its
 * end. Nothing elsewhere. ct_launch_lost_clear_stalled: that word forgotten, where the
 * stalled rank has since answered (the round it cut short is over). */
void ct_launch_tell_stalled(int rank);
/* This process is a rank of the fork launcher (--local N): 1 of a job of one launcher, 2 of a
 * job of one launcher a node (COLLTUNE_NNODES: each node's exit, the worst of its ranks', is
 * its own), 0 not. */
int ct_launch_forked(void);
void ct_launch_lost_clear_stalled(void);
#define CT_LAUNCH_LOST_STALLED (-255) /* ct_launch_lost_how of a rank a peer found stalled */

/* What was detected, as text for --print-bootstrap: the method, rank and size and where
 * they came from, the root, the token source, or the mis-launch; then the detection order.
 * Returns the length snprintf would have written. */
int ct_launch_describe_cfg(const struct ct_launch_cfg *cfg, const struct ct_launch_opts *x,
                           char *buf, size_t len);
/* The same with default options (COLLTUNE_SOCKET_IFNAME only). */
int ct_launch_describe(char *buf, size_t len);

#endif
