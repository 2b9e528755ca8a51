/* SPDX-License-Identifier: MIT */
/* The native backend (colltune's executor over a communicator) behind backend.h. */
#ifndef CT_NATIVE_H
#define CT_NATIVE_H

#include "backend.h"
#include "bench.h"
#include "comm.h"

/* A rank's tcp connections: its communicator and the in-flight ones (bench.h). */
struct ct_conns {
    struct ct_comm **comm;  /* the communicator, reopened in place */
    struct ct_comm *flight; /* nflight more, for in-flight parts (NULL: none) */
    int nflight;
    int streams;            /* tcp streams per peer of each of them */
};

/* Make *c `streams` streams per peer, with `inflight` in-flight communicators when it is
 * above 1 (none otherwise): reopen what differs. Collective: every rank calls it at the
 * same point. On failure *c holds what is open. */
typedef int (*ct_native_conns_fn)(void *arg, int streams, int inflight, struct ct_conns *c,
                                  struct ct_err *err);

struct ct_native {
    struct ct_comm **comm;
    ct_native_conns_fn set_conns;
    void *arg;
    struct ct_conns conns;
    struct ct_bench b;
    struct ct_bench_prep p;
    bool prepared;
    struct ct_mem *mem; /* the job's memory (ct_native_set_mem), NULL: host */
};

/* Fill be to measure on *comm, opened with `streams` streams per peer; n is the backend's
 * context (pass it as ctx). set_conns may be NULL (streams and in-flight communicators are
 * then fixed: none). */
void ct_native_open(struct ct_backend *be, struct ct_native *n, struct ct_comm **comm,
                    int streams, ct_native_conns_fn set_conns, void *arg);
/* The job's buffers in memory kind mem (borrowed; NULL: host): ct_bench_set_mem, kept when
 * the communicators are reopened. */
void ct_native_set_mem(struct ct_native *n, struct ct_mem *mem);
void ct_native_close(struct ct_native *n);
/* The transports of comm as tables name them, with the memory and how it moves when it is
 * not theirs: "shm", "tcp; cuda memory staged through host". Returns buf. */
const char *ct_native_tp_label(const struct ct_comm *comm, const struct ct_mem *mem, char *buf,
                               size_t len);
/* The memory kind staged through the transports ("cuda"), or NULL for host memory. */
const char *ct_native_staged_kind(const struct ct_mem *mem);
/* How jobs on memory kind `kind` move: "staged through host", or where the kind is shared
 * between processes and the job on one host (bench.h, the resident path) "in place over IPC
 * where points allow, else staged through host" (run prints after its table how many points
 * went each way). */
const char *ct_native_mem_words(const char *kind, bool one_host);

#endif
