/* SPDX-License-Identifier: MIT */
/*
 * The communicator: rank layout from the bootstrap plus the transport serving each peer
 * (same host: the intra-node transport; other hosts: the inter-node one).
 */
#ifndef CT_COMM_H
#define CT_COMM_H

#include "../transport/boot.h"
#include "../transport/tp.h"

#define CT_COMM_MAX_TP 2

struct ct_comm {
    struct ct_boot *boot; /* borrowed */
    int rank, size, local_rank, local_size, node, nnodes;
    struct ct_tp *tps[CT_COMM_MAX_TP];
    int ntp;
    struct ct_tp **tp_of; /* per peer (NULL for self) */
    int64_t timeout_ns;   /* data timeout */
    enum ct_wait_mode wait;
};

struct ct_comm_cfg {
    const char *transport; /* "auto", "shm", "tcp", "loop" */
    struct ct_tp_cfg tp;
    int64_t timeout_ns; /* 0 = 30 s */
};

/* Open transports over boot (collective). "auto": shm within a host, tcp across hosts
 * (loop when boot is in-process). A named transport serves cfg->tp.peers (NULL: all). */
int ct_comm_open(struct ct_comm *c, struct ct_boot *boot, const struct ct_comm_cfg *cfg,
                 struct ct_err *err);
/* streams above 1 where no connection streams (transport "shm", or "auto" with every rank on
 * one host; "fabric", one endpoint a peer): CT_EINVAL saying so; else 0. ct_comm_open refuses them
 * so (every rank alike, after the bootstrap); a caller that knows the host before a launch refuses
 * them sooner. */
int ct_comm_streams_check(const char *transport, bool one_host, int streams, struct ct_err *err);
/* The ranks meet in shared memory alone: transport "shm", or "auto" with every rank on one host
 * (nothing a tcp setting such as --sockbuf or --streams acts on). */
bool ct_comm_shm_alone(const char *transport, bool one_host);
void ct_comm_close(struct ct_comm *c);
/* Allocate / free a benchmark buffer through the intra-node transport (symmetric heap). */
void *ct_comm_alloc(struct ct_comm *c, size_t bytes, struct ct_err *err);
void ct_comm_free(struct ct_comm *c, void *p, size_t bytes);
/* Give every rank of boot rank 0's len bytes at buf (over the bootstrap's allgather). */
int ct_boot_bcast0(struct ct_boot *boot, void *buf, size_t len, struct ct_err *err);
/* A collective that failed on a peer (err: CT_EPEER or CT_ETIMEDOUT naming "peer rank P"), on
 * a rank that leaves on it: the job told (ct_boot_first_failure), and where the rank that
 * failed first is another ("rank 1 exited" on rank 0, where rank 1 had left on rank 2's
 * death), err says so: "...; rank 2 (host) failed first, as its peers found". The --local
 * launcher's word counts first where a signal ended that rank. Rank 0 waits up to 0.2 s for
 * P's word on a peer's error (CT_EPEER), not on a stall. Jobs of 2 ranks: nothing. */
void ct_comm_first_failure(struct ct_comm *c, struct ct_err *err);
/* Names of the transports in use, e.g. "shm" or "shm+tcp". */
const char *ct_comm_tp_names(const struct ct_comm *c, char *buf, size_t len);

#endif
