/* SPDX-License-Identifier: MIT */
/*
 * The native backend: colltune's own schedules run by its executor over a communicator
 * (shm, tcp, fabric, loop). Every rank prepares each point, all ranks agree whether it
 * could (a point one rank refuses is refused by all), verify it once, and time it with the
 * slowest rank's time per iteration.
 */
#include "native.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/clock.h"

struct ct_native_status {
    int32_t rc;
    char msg[236];
};

static int native_begin(void *ctx, const struct ct_algo *a, const struct ct_job *j, bool verify,
                      long *wrong, struct ct_err *err)
{
    struct ct_native *l = ctx;
    struct ct_comm *c = *l->comm;
    struct ct_err e = {0};
    struct ct_native_status mine = {0}, *all = ct_xcalloc((size_t)c->size, sizeof *all);
    mine.rc = ct_bench_prepare(&l->b, a, j, &l->p, &e);
    if (mine.rc < 0)
        snprintf(mine.msg, sizeof mine.msg, "%.235s", e.msg);
    l->prepared = mine.rc == 0;
    /* every rank learns whether every rank could prepare the point */
    int rc = ct_boot_allgather(c->boot, &mine, sizeof mine, all, err);
    int bad = -1;
    bool unsupp = true;
    for (int q = 0; rc == 0 && q < c->size; q++)
        if (all[q].rc < 0) {
            bad = bad < 0 ? q : bad;
            unsupp = unsupp && all[q].rc == CT_EUNSUPP;
        }
    if (rc == 0 && bad >= 0)
        rc = ct_err_set(err, unsupp ? CT_EUNSUPP : all[bad].rc, "rank %d (%s): %s", bad,
                        c->boot->hosts ? c->boot->hosts[bad] : "?", all[bad].msg);
    free(all);
    if (rc == 0 && verify)
        rc = ct_bench_check(&l->b, &l->p, wrong, err);
    if (rc < 0 && l->prepared) {
        ct_bench_prep_release(&l->p);
        l->prepared = false;
    }
    return rc;
}

static int native_time(void *ctx, int warmup, int iters, int reps, double *out_us,
                       struct ct_err *err)
{
    struct ct_native *l = ctx;
    return ct_bench_time(&l->b, &l->p, warmup, iters, reps, out_us, err);
}

static void native_end(void *ctx)
{
    struct ct_native *l = ctx;
    if (l->prepared)
        ct_bench_prep_release(&l->p);
    l->prepared = false;
}

static double native_now(void *ctx)
{
    return (double)ct_now_ns() * 1e-9;
}

/* The sweep's bench on the current communicator: every candidate of a size expects the
 * same output, large ones are checked on samples; reserve (may be NULL) carried over. */
static void bench_open(struct ct_native *l, const size_t *reserve)
{
    ct_bench_init(&l->b, *l->comm, 0x5eed);
    l->b.keep_expected = l->b.sample_checks = true;
    if (reserve)
        memcpy(l->b.reserve, reserve, sizeof l->b.reserve);
}

static int native_conns(void *ctx, int streams, int inflight, struct ct_err *err)
{
    struct ct_native *l = ctx;
    size_t reserve[CT_BUF_COUNT];
    memcpy(reserve, l->b.reserve, sizeof reserve);
    ct_bench_release(&l->b);
    int rc = l->set_conns(l->arg, streams, inflight, &l->conns, err);
    bench_open(l, reserve);
    ct_bench_set_mem(&l->b, l->mem);
    ct_bench_set_flight(&l->b, l->conns.nflight, l->conns.flight);
    return rc;
}

static int native_bcast(void *ctx, void *buf, size_t len, struct ct_err *err)
{
    struct ct_native *l = ctx;
    return ct_boot_bcast0((*l->comm)->boot, buf, len, err);
}

static void native_shape(struct ct_shape *s, const struct ct_comm *comm)
{
    s->nranks = comm->size;
    s->rank = comm->rank;
    if (comm->nnodes > 0 && comm->local_size * comm->nnodes == comm->size)
        s->ranks_per_node = comm->local_size;
}

void ct_native_open(struct ct_backend *be, struct ct_native *n, struct ct_comm **comm,
                    int streams, ct_native_conns_fn set_conns, void *arg)
{
    memset(n, 0, sizeof *n);
    n->comm = comm;
    n->set_conns = set_conns;
    n->arg = arg;
    n->conns.comm = comm;
    n->conns.streams = streams;
    bench_open(n, NULL);
    memset(be, 0, sizeof *be);
    be->name = "native";
    be->begin = native_begin;
    be->time = native_time;
    be->end = native_end;
    be->now_s = native_now;
    be->conns = set_conns ? native_conns : NULL;
    be->bcast = native_bcast;
    be->root = (*comm)->rank == 0;
    native_shape(&be->shape, *comm);
}

void ct_native_set_mem(struct ct_native *n, struct ct_mem *mem)
{
    n->mem = mem;
    ct_bench_set_mem(&n->b, mem);
}

void ct_native_close(struct ct_native *n)
{
    native_end(n);
    ct_bench_release(&n->b);
    for (int i = 0; i < n->conns.nflight; i++)
        ct_comm_close(&n->conns.flight[i]);
    free(n->conns.flight);
    n->conns.flight = NULL;
    n->conns.nflight = 0;
}

const char *ct_native_tp_label(const struct ct_comm *comm, const struct ct_mem *mem, char *buf,
                               size_t len)
{
    char tp[64];
    ct_comm_tp_names(comm, tp, sizeof tp);
    const char *kind = ct_native_staged_kind(mem);
    if (kind)
        snprintf(buf, len, "%s; %s memory %s", tp, kind,
                 ct_native_mem_words(kind, comm->nnodes <= 1));
    else
        snprintf(buf, len, "%s", tp);
    return buf;
}

const char *ct_native_mem_words(const char *kind, bool one_host)
{
    return ct_mem_kind_shares(ct_mem_kind_find(kind)) && one_host
               ? "in place over IPC where points allow, else staged through host"
               : "staged through host";
}

const char *ct_native_staged_kind(const struct ct_mem *mem)
{
    return mem && mem->kind && !mem->kind->host_visible ? mem->kind->name : NULL;
}
