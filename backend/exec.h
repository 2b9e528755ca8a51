/* SPDX-License-Identifier: MIT */
/*
 * The schedule executor: runs one rank's schedule over the communicator. Every
 * communication op is cut into slices of `chunk` bytes; per peer and direction up to
 * `depth` slices are in flight, posted in schedule order (the FIFO matching rule), so
 * the reduction of slice k (fused in the receive) overlaps the transfer of slice k+1.
 * A step's local ops run after its communication completes.
 */
#ifndef CT_EXEC_H
#define CT_EXEC_H

#include "../algos/algo.h"
#include "../device/device.h"
#include "comm.h"
#include "pool.h"

struct ct_resident;

struct ct_exec_group;
struct ct_exec_rpeer;
struct ct_exec_ctl;

/* Reusable executor state (grows to the largest step seen; no allocation per step once
 * warm). */
struct ct_exec {
    struct ct_exec_group *groups;
    size_t gcap;
    size_t opcap;
    struct ct_req *reqs; /* depth requests per group */
    size_t reqcap;
    uint32_t *order;
    size_t ordcap;
    struct ct_pool *pool; /* reduction threads, made on first use with threads > 1 */
    struct ct_red red_rev; /* the run's reduction with the operands swapped (rev receives) */
    uint64_t direct_max;   /* ops up to this size may be put (CT_POST_DIRECT) */
    struct ct_exec_rpeer *rpeer; /* resident path: per peer, its control messages (exec.c) */
    int nrpeer;
    struct ct_exec_ctl *out; /* resident path: a step's outgoing control messages */
    struct ct_req *outreq;
    uint8_t *taken;  /* resident path: a step's receives pulled and acknowledged */
    size_t outcap;   /* of out, outreq and taken */
    bool res_broken; /* a resident run failed: its control messages are out of step */
};

struct ct_exec_args {
    void *buf[CT_BUF_COUNT]; /* send, recv, scratch */
    const struct ct_red *red; /* NULL for collectives without reduction */
    uint64_t chunk;           /* slice bytes (multiple of the element size) */
    int depth;                /* slices in flight per peer and direction */
    int threads;              /* threads for local reductions (0 or 1: the caller only) */
    ct_scale_fn scale;        /* avg: scales this rank's reduced output after the run */
    /* The resident path (backend/resident.h): buf[] are res->mem's, the peers' mapped
     * through res, copies and reductions (by mred) the kind's, each step's done before its
     * next fence; NULL: host memory, the transports' */
    const struct ct_resident *res;
    const struct ct_mem_red *mred;
};

void ct_exec_init(struct ct_exec *x);
void ct_exec_release(struct ct_exec *x);
/* Whether this rank can run s's one-sided ops (fences, gets, puts): every such peer's
 * transport has them, and each buffer the peers reach is in shared memory (resident, a->res:
 * the kind's buffers, which the peers map by handle). 0, or CT_EUNSUPP
 * saying why (COLLTUNE_SHM_UNREGISTERED, tcp). */
int ct_exec_onesided_ok(struct ct_comm *c, const struct ct_sched *s, const struct ct_exec_args *a,
                        struct ct_err *err);
/* Whether the resident path runs s: fences, gets, puts, sends, receives (pulled by the
 * receiver from the sender's mapped buffer) and local copies and reductions; not mailboxes
 * (oneshot) nor quantized ops. 0, or CT_EUNSUPP saying which op it lacks. */
int ct_exec_resident_ok(const struct ct_sched *s, struct ct_err *err);
/* Run s on this rank. Errors name the step and peer; a stalled peer times out after
 * comm->timeout_ns without progress. */
int ct_exec_run(struct ct_exec *x, struct ct_comm *c, const struct ct_sched *s,
                const struct ct_exec_args *a, struct ct_err *err);

#endif
