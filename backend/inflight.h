/* SPDX-License-Identifier: MIT */
/*
 * Several collectives in flight (run --inflight K, PCCL's concurrent collectives): one
 * AllReduce buffer is split into K contiguous parts, each reduced by its own schedule on
 * its own communicator (own tcp connections: disjoint), the K running at once in K
 * threads. On a long link one collective's step boundaries cost a round trip each; K
 * independent ones fill each other's gaps.
 */
#ifndef CT_INFLIGHT_H
#define CT_INFLIGHT_H

#include "exec.h"

struct ct_inflight {
    int k;
    struct ct_comm *comms;      /* k communicators, borrowed (comms[0] may be the bench's) */
    struct ct_exec *execs;      /* k */
    struct ct_sched *scheds;    /* k */
    struct ct_exec_args *args;  /* k */
    void **scratch;             /* k, malloc'd */
};

/* Schedules for the k parts of AllReduce job j over the whole buffers of a. */
int ct_inflight_prepare(struct ct_inflight *f, int k, struct ct_comm *comms,
                        const struct ct_algo *al, const struct ct_job *j,
                        const struct ct_exec_args *a, struct ct_err *err);
/* Run the k parts at once; the first failure is returned. */
int ct_inflight_run(struct ct_inflight *f, struct ct_err *err);
void ct_inflight_release(struct ct_inflight *f);

#endif
