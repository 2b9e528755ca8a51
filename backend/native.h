/* SPDX-License-Identifier: MIT */
/* The native backend (colltune's executor over a communicator) behind backend.h. */
#ifndef CT_NATIVE_H
#define CT_NATIVE_H

#include "backend.h"
#include "bench.h"
#include "comm.h"

/* Reopen the communicator with `streams` tcp streams per peer. Collective: every rank
 * calls it at the same point. *comm may change. */
typedef int (*ct_native_streams_fn)(void *arg, int streams, struct ct_comm **comm,
                                    struct ct_err *err);

struct ct_native {
    struct ct_comm **comm;
    ct_native_streams_fn set_streams;
    void *arg;
    struct ct_bench b;
    struct ct_bench_prep p;
    bool prepared;
};

/* Fill be to measure on *comm; n is the backend's context (pass it as ctx). set_streams
 * may be NULL (the stream count is then fixed). */
void ct_native_open(struct ct_backend *be, struct ct_native *n, struct ct_comm **comm,
                    ct_native_streams_fn set_streams, void *arg);
void ct_native_close(struct ct_native *n);

#endif
