/* SPDX-License-Identifier: MIT */
/*
 * The resident path: a job's buffers in a memory kind the processes of a host can share
 * (ct_mem_shares: cuda through CUDA IPC, host-ipc through memfd), and each rank's schedule
 * run on them in place, with the peers' buffers mapped into this process, by the kind's own
 * copies and reduction kernels (backend/exec.c): one-sided ops (symm, the shape of NCCL's
 * symmetric-memory kernels) on the peers' buffers between fences, and receives pulled from
 * the sender's buffer. Nothing is staged through host memory: on GPUs it is NVLink or PCIe
 * peer to peer. The transport still orders the ranks (fences, and the descriptors and
 * acknowledgements of sends: small messages in host memory).
 *
 * ct_resident_exchange maps every peer's current buffers: each rank sends the handles of
 * its buffers (and where the executor's send, receive and scratch lie in them: in place they
 * share one), and a handle already mapped is kept, so buffers that did not move cost two
 * allgathers (the handles, then whether every rank mapped them). Collective over the
 * communicator; every rank learns every rank's failure: CT_EUNSUPP where a buffer could not
 * be shared or mapped (the caller may stage instead), else the bootstrap's error.
 */
#ifndef CT_RESIDENT_H
#define CT_RESIDENT_H

#include "../algos/sched.h"
#include "../device/device.h"
#include "comm.h"

#define CT_RESIDENT_BASES 3 /* buffers a rank shares (send, receive, scratch twins) */

/* A peer's executor buffers, mapped here (NULL: not shared, or on another host). */
struct ct_resident_peer {
    void *buf[CT_BUF_COUNT];
    uint64_t len[CT_BUF_COUNT];
};

struct ct_resident_map;

struct ct_resident {
    struct ct_mem *mem; /* borrowed: the kind of every buffer */
    int size;
    struct ct_resident_peer *peer;   /* per rank (this rank's: unused) */
    struct ct_resident_map *maps;    /* per rank, the handles it mapped here */
    uint64_t exchanges, opened;      /* counts: allgathers made, handles mapped */
};

/* This rank's side: its shared buffers (base[k] of cap[k] bytes, k < nbase; NULL unused) and
 * the executor's buffers buf[i] of len[i] bytes, each inside one of them (or NULL). */
struct ct_resident_mine {
    bool ok; /* this rank can run the point in place (its schedule's ops, the kernel) */
    void *base[CT_RESIDENT_BASES];
    size_t cap[CT_RESIDENT_BASES];
    void *buf[CT_BUF_COUNT];
    uint64_t len[CT_BUF_COUNT];
};

void ct_resident_init(struct ct_resident *r, struct ct_mem *mem);
void ct_resident_release(struct ct_resident *r);
/* 0: every peer's buffers mapped, the point runs in place; 1: some rank cannot run it in
 * place (mine->ok false there): it runs staged, nothing mapped; CT_EUNSUPP: buffers that
 * cannot be shared or mapped; else the bootstrap's error. The same answer on every rank. */
int ct_resident_exchange(struct ct_resident *r, struct ct_comm *c,
                         const struct ct_resident_mine *mine, struct ct_err *err);

#endif
