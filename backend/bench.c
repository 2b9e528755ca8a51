/* SPDX-License-Identifier: MIT */
/* One measured point: buffers, inputs, warmup, timed iterations, verification. */
#include "bench.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/clock.h"
#include "../lib/cpus.h"
#include "../lib/parse.h"
#include "qcheck.h"
#include "verify.h"

static void build_barrier(struct ct_bench *b)
{
    int n = b->comm->size, r = b->comm->rank;
    ct_sched_init(&b->barrier);
    for (int d = 1; d < n; d <<= 1) {
        ct_sched_step(&b->barrier);
        ct_sched_send(&b->barrier, (r + d) % n, ct_loc(CT_BUF_SEND, 0), 1);
        ct_sched_recv(&b->barrier, (r - d + n) % n, ct_loc(CT_BUF_RECV, 0), 1);
    }
    ct_sched_finish(&b->barrier);
}

void ct_bench_init(struct ct_bench *b, struct ct_comm *c, uint64_t seed)
{
    memset(b, 0, sizeof *b);
    b->comm = c;
    b->seed = seed;
    b->rank_time = CT_RANK_TIME_MAX;
    b->name_first = true;
    ct_exec_init(&b->exec);
    build_barrier(b);
}

/* Staged buffers: buffer i's (send, receive) twin in b->mem, and its host copy pinned. */
static int stage_attach(struct ct_bench *b, int i, struct ct_err *err)
{
    if (!b->stage || !b->buf[i])
        return 0;
    b->dev_shared[i] = false;
    if (i == CT_BUF_SCRATCH) /* never staged: the resident path's own */
        return b->shares ? ct_mem_alloc(b->mem, b->cap[i], &b->dev[i], err) : 0;
    CT_TRY(ct_mem_pin(b->mem, b->buf[i], b->cap[i], err));
    int rc = ct_mem_alloc(b->mem, b->cap[i], &b->dev[i], err);
    if (rc < 0) {
        ct_mem_unpin(b->mem, b->buf[i]);
        b->dev[i] = NULL;
    }
    return rc;
}

/* A twin let go: freed now, or, handed to the peers, kept until they have let it go. */
static void dev_free(struct ct_bench *b, int i)
{
    void *p = b->dev[i];
    bool shared = b->dev_shared[i];
    b->dev_shared[i] = false;
    if (!shared) {
        ct_mem_free(b->mem, p);
        return;
    }
    if (b->nretired == b->capretired) {
        b->capretired = b->capretired ? 2 * b->capretired : 8;
        b->retired = ct_xrealloc(b->retired, b->capretired * sizeof *b->retired);
    }
    b->retired[b->nretired++] = p;
}

static void retired_free(struct ct_bench *b)
{
    for (size_t i = 0; i < b->nretired; i++)
        ct_mem_free(b->mem, b->retired[i]);
    b->nretired = 0;
}

/* Before this rank's shared twins go (release, another memory): its mappings of the peers'
 * let go, then a barrier, so no peer still maps what is freed next (collective: every rank
 * releases; a peer that died fails the barrier at once, and the twins go all the same). */
static void shared_let_go(struct ct_bench *b)
{
    if (b->res.exchanges) {
        ct_resident_release(&b->res);
        struct ct_err e = {0};
        ct_boot_barrier(b->comm->boot, &e);
    }
    retired_free(b);
    memset(b->dev_shared, 0, sizeof b->dev_shared); /* every peer has let them go */
}

static void stage_detach(struct ct_bench *b, int i)
{
    if (!b->dev[i])
        return;
    dev_free(b, i);
    if (i != CT_BUF_SCRATCH)
        ct_mem_unpin(b->mem, b->buf[i]);
    b->dev[i] = NULL;
}

void ct_bench_set_mem(struct ct_bench *b, struct ct_mem *mem)
{
    shared_let_go(b);
    for (int i = 0; i < CT_BUF_COUNT; i++) { /* made again, with twins where staged */
        stage_detach(b, i);
        ct_comm_free(b->comm, b->buf[i], b->cap[i]);
        b->buf[i] = NULL;
        b->cap[i] = 0;
    }
    ct_resident_release(&b->res);
    free(b->retired);
    b->retired = NULL;
    b->nretired = b->capretired = 0;
    b->res_why[0] = 0;
    b->mem = mem;
    b->stage = mem && !mem->kind->host_visible;
    b->shares = b->stage && ct_mem_shares(mem);
    ct_resident_init(&b->res, mem);
    b->held.valid = false;
}

/* The twin in b->mem of host location h (in buf[SEND], buf[RECV], or shared, buf[SCRATCH]). */
static void *dev_of(const struct ct_bench *b, const void *h)
{
    for (int i = 0; i < CT_BUF_COUNT; i++) {
        const char *base = b->buf[i];
        if (b->dev[i] && base && (const char *)h >= base && (const char *)h < base + b->cap[i])
            return (char *)b->dev[i] + ((const char *)h - base);
    }
    return NULL;
}

/* Staged: bytes at host location h from its twin (to_host) or to it. */
static int stage_copy(struct ct_bench *b, void *h, uint64_t bytes, bool to_host, struct ct_err *err)
{
    if (!b->stage || !bytes)
        return 0;
    void *d = dev_of(b, h);
    if (!d) /* a buffer made before the memory was set: ct_bench_set_mem's order broken */
        return ct_err_set(err, CT_EINVAL, "staged buffers: %p has no %s twin", h,
                          b->mem->kind->name);
    return to_host ? ct_mem_to_host(b->mem, h, d, (size_t)bytes, err)
                   : ct_mem_from_host(b->mem, d, h, (size_t)bytes, err);
}

void ct_bench_release(struct ct_bench *b)
{
    shared_let_go(b); /* the peers' buffers unmapped, everywhere, before this rank's go */
    for (int i = 0; i < CT_BUF_COUNT; i++) {
        stage_detach(b, i);
        ct_comm_free(b->comm, b->buf[i], b->cap[i]);
    }
    free(b->retired);
    free(b->check);
    free(b->times);
    free(b->all_times);
    ct_sched_release(&b->barrier);
    ct_exec_release(&b->exec);
    memset(b, 0, sizeof *b);
}

int ct_bench_barrier(struct ct_bench *b, struct ct_err *err)
{
    struct ct_exec_args a = {.buf = {b->barrier_buf, b->barrier_buf + 1, NULL},
                             .chunk = 1,
                             .depth = 1,
                             .threads = 1};
    int rc = ct_exec_run(&b->exec, b->comm, &b->barrier, &a, err);
    if (rc < 0 && b->name_first)
        ct_comm_first_failure(b->comm, err);
    return rc;
}

/* Buffer i of bytes, with its twin when staged; nothing left of it on failure. */
static int make(struct ct_bench *b, int i, size_t bytes, struct ct_err *err)
{
    if (!(b->buf[i] = ct_comm_alloc(b->comm, bytes, err)))
        return ct_err_wrap(err, "buffer of %zu bytes: ", bytes);
    b->cap[i] = bytes;
    int rc = stage_attach(b, i, err);
    if (rc < 0) {
        ct_comm_free(b->comm, b->buf[i], b->cap[i]);
        b->buf[i] = NULL;
        b->cap[i] = 0;
    }
    return rc;
}

static int ensure(struct ct_bench *b, int i, size_t bytes, struct ct_err *err)
{
    if (bytes <= b->cap[i] && b->buf[i])
        return 0;
    if (i == CT_BUF_SEND)
        b->held.valid = false;
    stage_detach(b, i);
    ct_comm_free(b->comm, b->buf[i], b->cap[i]);
    b->buf[i] = NULL;
    b->cap[i] = 0;
    size_t want = bytes < 4096 ? 4096 : bytes;
    if (bytes > 0 && want < b->reserve[i]) { /* an unused scratch stays small */
        struct ct_err e = {0};
        if (make(b, i, b->reserve[i], &e) == 0)
            return 0;
        /* no room for the largest point (bruck's scratch at -e 4G; its GPU twin): this one
           may fit, and later ones grow as they need, without trying the reserve again */
        b->reserve[i] = 0;
    }
    return make(b, i, want, err);
}

/* Executor arguments for job j: buffers (with the in-place aliasing), reducer, slicing. */
static int setup(struct ct_bench *b, const struct ct_job *j, const struct ct_sched *s,
                 struct ct_exec_args *a, struct ct_red *red, struct ct_err *err)
{
    size_t es = ct_dtype_size(j->dtype);
    uint64_t sb = ct_job_send_bytes(j), rb = ct_job_recv_bytes(j);
    CT_TRY(ensure(b, CT_BUF_RECV, rb > sb ? rb : sb, err));
    if (!j->in_place)
        CT_TRY(ensure(b, CT_BUF_SEND, sb, err));
    CT_TRY(ensure(b, CT_BUF_SCRATCH, s->scratch_bytes, err));
    char *recv = b->buf[CT_BUF_RECV];
    uint64_t blk = j->count * es * (uint64_t)j->shape.rank;
    memset(a, 0, sizeof *a);
    a->buf[CT_BUF_SCRATCH] = b->buf[CT_BUF_SCRATCH];
    if (!j->in_place) {
        a->buf[CT_BUF_SEND] = b->buf[CT_BUF_SEND];
        a->buf[CT_BUF_RECV] = recv;
    } else if (j->coll == CT_ALLGATHER) {
        a->buf[CT_BUF_RECV] = recv;
        a->buf[CT_BUF_SEND] = recv + blk;
    } else if (j->coll == CT_REDUCESCATTER) {
        a->buf[CT_BUF_SEND] = recv;
        a->buf[CT_BUF_RECV] = recv + blk;
    } else {
        a->buf[CT_BUF_SEND] = a->buf[CT_BUF_RECV] = recv;
    }
    red->fn = ct_reduce_fn_get(j->dtype, j->op);
    red->rev = ct_reduce_fn_rev_get(j->dtype, j->op);
    red->fn2 = ct_reduce2_fn_get(j->dtype, j->op);
    red->esize = es;
    a->red = ct_coll_desc(j->coll)->needs_op ? red : NULL;
    a->scale = a->red && j->op == CT_AVG ? ct_scale_fn_get(j->dtype) : NULL;
    uint64_t chunk = j->params.v[CT_P_CHUNK] / es * es;
    a->chunk = chunk ? chunk : es;
    a->depth = (int)j->params.v[CT_P_PIPELINE];
    a->threads = (int)j->params.v[CT_P_THREADS];
    return 0;
}

/* Output elements of this rank that are reduced (avg needs scaling). */
static void finish_avg(const struct ct_job *j, const struct ct_exec_args *a)
{
    if (a->scale)
        a->scale(a->buf[CT_BUF_RECV], j->count, j->shape.nranks);
}

/* One run; staged, the inputs come from the job's buffers and the output goes back;
 * resident, it runs on them in place. */
static int run_once_(struct ct_bench *b, struct ct_bench_prep *p, struct ct_err *err)
{
    const struct ct_job *j = &p->j;
    const struct ct_sched *s = &p->s;
    const struct ct_exec_args *a = &p->a;
    struct ct_inflight *fl = &p->fl;
    if (p->resident)
        return ct_exec_run(&b->exec, b->comm, s, &p->ra, err);
    CT_TRY(stage_copy(b, a->buf[CT_BUF_SEND], ct_job_send_bytes(j), true, err));
    if (fl && fl->k > 1)
        CT_TRY(ct_inflight_run(fl, err));
    else
        CT_TRY(ct_exec_run(&b->exec, b->comm, s, a, err));
    finish_avg(j, a);
    return stage_copy(b, a->buf[CT_BUF_RECV], ct_job_recv_bytes(j), false, err);
}

static int run_once(struct ct_bench *b, struct ct_bench_prep *p, struct ct_err *err)
{
    int rc = run_once_(b, p, err);
    if (rc < 0 && b->name_first)
        ct_comm_first_failure(b->comm, err);
    return rc;
}

/* Some op of s writes into buffer id (a put: the peer's). Sends, fences and publishes write
 * nothing of the run's: their dst is no location (a fence's read as SEND, so every symm
 * point dropped the held inputs and the next point filled them again). */
static bool writes_buf(const struct ct_sched *s, enum ct_bufid id)
{
    for (uint32_t i = 0; i < s->nops; i++) {
        uint8_t k = s->ops[i].kind;
        if (k != CT_OP_SEND && k != CT_OP_SYNC && k != CT_OP_PUBLISH && s->ops[i].dst.buf == id)
            return true;
    }
    return false;
}

/* Elements of the check sequence a rank's inputs of j are: every collective numbers them
 * from 0 whatever its count (ReduceScatter and AllToAll N blocks of count, block q from
 * q x count), so those of a point are the first of those of any point that needs more, of
 * any collective: a sweep fills once for its largest inputs and checks every smaller point
 * on them (filling and building the expected output took a fifth of the CPU time of a
 * sweep's large sizes; with one fill per collective, switching collectives at a size, 18%
 * of a 64-256 MiB sweep's). */
static uint64_t input_elems(const struct ct_job *j)
{
    return ct_job_send_bytes(j) / ct_dtype_size(j->dtype);
}

/*
 * Write this rank's inputs of j. The send buffer is left alone when it already holds them:
 * an out-of-place point of the same collective, type, op, count (or, nested, a larger one)
 * and seed, and no schedule
 * run since wrote into it (the executor writes only where an op's destination says, and
 * the transports never write into a sender's buffer). A point whose schedule writes it is
 * filled afresh and leaves nothing held.
 */
/* The send buffer of this point can hold inputs across points: the bench's own, out of
 * place, one part, exact, and no op of the schedule writes it. */
static bool can_hold(const struct ct_bench *b, const struct ct_job *j, const struct ct_sched *s,
                     const struct ct_exec_args *a, bool parts)
{
    return a->buf[CT_BUF_SEND] == b->buf[CT_BUF_SEND] && !j->in_place && !parts &&
           j->quant == CT_QUANT_NONE && !writes_buf(s, CT_BUF_SEND);
}

/* Held inputs of j's type, at least as many as j needs (of any op and seed). */
static bool holds_for(const struct ct_bench *b, const struct ct_job *j)
{
    return b->held.valid && b->held.dtype == j->dtype && b->held.elems >= input_elems(j);
}

/* Staged, the inputs are written to the job's buffer (through buf[], which every run then
 * overwrites with the same); what is held is held there. */
static int fill_inputs(struct ct_bench *b, const struct ct_job *j, const struct ct_sched *s,
                       const struct ct_exec_args *a, bool parts, uint64_t seed, struct ct_err *err)
{
    bool own = a->buf[CT_BUF_SEND] == b->buf[CT_BUF_SEND];
    bool keep = can_hold(b, j, s, a, parts);
    if (keep && holds_for(b, j) && b->held.op == j->op && b->held.seed == seed)
        return 0;
    ct_verify_fill_job(j, seed, a->buf[CT_BUF_SEND]);
    if (own) {
        b->held.valid = false;
        CT_TRY(stage_copy(b, a->buf[CT_BUF_SEND], ct_job_send_bytes(j), false, err));
        b->held.valid = keep;
        b->held.dtype = j->dtype;
        b->held.op = j->op;
        b->held.elems = input_elems(j);
        b->held.seed = seed;
        return 0;
    }
    return stage_copy(b, a->buf[CT_BUF_SEND], ct_job_send_bytes(j), false, err);
}

/*
 * Out of place, the receive buffer may hold this very result already: the points of a
 * sweep at one size share the buffers and (held) inputs, so an algorithm that wrote
 * nothing passed its check on what the previous one left. All ones (NaN for floats) first.
 * In place, the inputs are written over it right before the run.
 */
/* A sweep's output of CT_BENCH_SAMPLED_MIN bytes or more is poisoned and compared on the
 * samples of ct_verify_job_sampled only (a quantized one is checked whole by ct_qcheck). */
static bool sampled(const struct ct_bench *b, const struct ct_job *j)
{
    return b->sample_checks && j->quant == CT_QUANT_NONE &&
           ct_job_recv_bytes(j) >= CT_BENCH_SAMPLED_MIN;
}

static int poison_output(struct ct_bench *b, const struct ct_job *j, const struct ct_exec_args *a,
                         struct ct_err *err)
{
    if (j->in_place)
        return 0;
    if (sampled(b, j))
        ct_verify_job_poison_sampled(j, a->buf[CT_BUF_RECV]);
    else
        memset(a->buf[CT_BUF_RECV], 0xff, (size_t)ct_job_recv_bytes(j));
    return stage_copy(b, a->buf[CT_BUF_RECV], ct_job_recv_bytes(j), false, err);
}

/* Staged: what the check reads is the job's output where the job has it, not the host
 * copy the schedule wrote (a run that did not copy it back leaves the poison there). */
static int output_back(struct ct_bench *b, const struct ct_job *j, const struct ct_exec_args *a,
                       struct ct_err *err)
{
    return stage_copy(b, a->buf[CT_BUF_RECV], ct_job_recv_bytes(j), true, err);
}

#define CHECK_ELEMS (256u << 10) /* expected values are built this many at a time */

/* The expected output built for x serves y: the same collective, types, count (for
 * AllReduce, x's at least: y's is its beginning) and ranks. */
static bool same_expected(const struct ct_job *x, const struct ct_job *y)
{
    bool count_ok = x->count == y->count || (y->coll == CT_ALLREDUCE && x->count >= y->count);
    return x->coll == y->coll && x->dtype == y->dtype && x->op == y->op && count_ok &&
           x->shape.nranks == y->shape.nranks && x->shape.rank == y->shape.rank;
}

static long count_wrong(struct ct_bench *b, const struct ct_job *j, const struct ct_exec_args *a,
                        uint64_t seed)
{
    if (sampled(b, j)) {
        void *want = ct_xmalloc((size_t)CT_VERIFY_EDGE * ct_dtype_size(j->dtype));
        long wrong = ct_verify_job_sampled(j, seed, a->buf[CT_BUF_RECV], want);
        free(want);
        return wrong;
    }
    if (b->keep_expected) {
        uint64_t elems = ct_verify_job_elems(j);
        size_t bytes = (size_t)elems * ct_dtype_size(j->dtype);
        if (!b->expected.valid || b->expected.seed != seed || !same_expected(&b->expected.j, j)) {
            if (bytes > b->check_cap) {
                free(b->check);
                b->check = ct_xmalloc(bytes);
                b->check_cap = bytes;
            }
            ct_verify_job_expected(j, seed, b->check);
            b->expected.valid = true;
            b->expected.j = *j;
            b->expected.seed = seed;
        }
        return (long)ct_verify_count_wrong(j->dtype, a->buf[CT_BUF_RECV], b->check, (size_t)elems);
    }
    size_t cap = CHECK_ELEMS * ct_dtype_size(j->dtype);
    if (cap > b->check_cap) {
        free(b->check);
        b->check = ct_xmalloc(cap);
        b->check_cap = cap;
    }
    return ct_verify_job(j, seed, a->buf[CT_BUF_RECV], b->check, CHECK_ELEMS);
}

static int sum_over_ranks(struct ct_bench *b, long mine, long *total, struct ct_err *err)
{
    int n = b->comm->size;
    long *all = ct_xmalloc(sizeof(long) * (size_t)n);
    int rc = ct_boot_allgather(b->comm->boot, &mine, sizeof mine, all, err);
    *total = 0;
    for (int i = 0; rc == 0 && i < n; i++)
        *total += all[i];
    free(all);
    return rc;
}

static void job_shape(const struct ct_bench *b, struct ct_job *j)
{
    j->shape.nranks = b->comm->size;
    j->shape.rank = b->comm->rank;
    ct_params_defaults(&j->params);
}

static void raise_to(size_t *r, uint64_t bytes)
{
    *r = bytes > *r ? (size_t)bytes : *r;
}

void ct_bench_reserve(struct ct_bench *b, const struct ct_algo *const *algos, size_t n,
                      const struct ct_job *j)
{
    struct ct_job x = *j;
    job_shape(b, &x);
    uint64_t sb = ct_job_send_bytes(&x), rb = ct_job_recv_bytes(&x);
    raise_to(&b->reserve[CT_BUF_RECV], rb > sb ? rb : sb);
    raise_to(&b->reserve[CT_BUF_SEND], sb);
    for (size_t i = 0; i < n; i++) {
        struct ct_sched s;
        struct ct_err e = {0};
        memset(&s, 0, sizeof s);
        if (ct_algo_supports(algos[i], &x, NULL) < 0 || ct_algo_build(algos[i], &x, &s, &e) < 0)
            continue;
        raise_to(&b->reserve[CT_BUF_SCRATCH], s.scratch_bytes);
        ct_sched_release(&s);
    }
}

int ct_bench_verify(struct ct_bench *b, const struct ct_algo *al, struct ct_job *j, long *wrong,
                    struct ct_err *err)
{
    struct ct_qstats q;
    CT_TRY(ct_bench_verify_q(b, al, j, wrong, &q, err));
    *wrong += q.diverged;
    return 0;
}

/* The job's inflight parameter K > 1 (AllReduce): K parts on the in-flight communicators. */
static int flight_prepare(struct ct_bench *b, const struct ct_algo *al, const struct ct_job *j,
                          const struct ct_exec_args *a, struct ct_inflight *fl, struct ct_err *err)
{
    int k = (int)j->params.v[CT_P_INFLIGHT];
    if (k <= 1 || j->coll != CT_ALLREDUCE)
        return 0;
    if (k > b->nflight)
        return ct_err_set(err, CT_EUNSUPP,
                          "inflight=%d needs %d in-flight communicators (%d open: tcp only)", k,
                          k, b->nflight);
    return ct_inflight_prepare(fl, k, b->flight_comms, al, j, a, err);
}

int ct_bench_verify_q(struct ct_bench *b, const struct ct_algo *al, struct ct_job *j, long *wrong,
                      struct ct_qstats *q, struct ct_err *err)
{
    memset(q, 0, sizeof *q);
    job_shape(b, j);
    struct ct_bench_prep p;
    CT_TRY(ct_bench_prepare(b, al, j, &p, err));
    int rc;
    if (j->quant == CT_QUANT_NONE) {
        rc = ct_bench_check(b, &p, wrong, err);
    } else { /* a quantized result is checked against the quantized ring's model */
        uint64_t seed = b->seed; /* every count and collective (input_elems) */
        rc = poison_output(b, &p.j, &p.a, err);
        if (rc == 0)
            rc = fill_inputs(b, &p.j, &p.s, &p.a, p.fl.k > 1, seed, err);
        if (rc == 0)
            rc = ct_bench_barrier(b, err);
        if (rc == 0)
            rc = run_once(b, &p, err);
        if (rc == 0)
            rc = output_back(b, &p.j, &p.a, err);
        if (rc == 0)
            rc = ct_qcheck(b->comm, &p.j, p.a.buf[CT_BUF_RECV], seed, q, err);
        *wrong = q->wrong;
    }
    ct_bench_prep_release(&p);
    return rc;
}

/* Every rank on this host, in processes of their own (a handle maps another process's
 * buffer: CUDA refuses its own). */
static bool one_host(const struct ct_comm *c)
{
    return c->nnodes <= 1 && !(c->ntp && (c->tps[0]->ops->caps & CT_TP_IN_PROCESS));
}

/* The resident path takes a point when the memory is shared, every rank is on this host, the
 * point is in one part, without avg's scaling (no such kernel) or quantization (all the same
 * on every rank), and on every rank the kind has the reduction's kernel and the executor's
 * resident path every op of its schedule (a rank's own answer: the exchange agrees them). */
static void resident_prepare(struct ct_bench *b, struct ct_bench_prep *p)
{
    struct ct_err e = {0};
    bool parts = p->j.coll == CT_ALLREDUCE && p->j.params.v[CT_P_INFLIGHT] > 1;
    p->mred = (struct ct_mem_red){ct_dtype_name(p->j.dtype), ct_redop_name(p->j.op),
                                  ct_dtype_size(p->j.dtype), p->red.fn};
    /* the job's and the algorithm's: the same on every rank */
    p->res_want = b->shares && !b->res_why[0] && !parts && !p->a.scale &&
                  p->j.quant == CT_QUANT_NONE && one_host(b->comm);
    /* this rank's (its schedule; its GPU's kernels): agreed in the exchange */
    p->res_local = p->res_want && (!p->a.red || ct_mem_has_kernel(b->mem, &p->mred)) &&
                   ct_exec_resident_ok(&p->s, &e) == 0;
    if (!p->res_local)
        return;
    p->ra = p->a;
    for (int i = 0; i < CT_BUF_COUNT; i++)
        p->ra.buf[i] = p->a.buf[i] ? dev_of(b, p->a.buf[i]) : NULL;
    p->ra.res = &b->res;
    p->ra.mred = p->a.red ? &p->mred : NULL;
}

/* Before a resident point runs: every peer's twins mapped here as they are now (collective:
 * ct_bench_check and ct_bench_time are). Where a buffer cannot be shared or mapped (every
 * rank learns it), the point runs staged, and so do the job's later ones. */
static int resident_exchange(struct ct_bench *b, struct ct_bench_prep *p, struct ct_err *err)
{
    if (!p->res_want)
        return 0;
    struct ct_resident_mine me = {.ok = p->res_local};
    for (int i = 0; i < CT_BUF_COUNT; i++) {
        me.base[i] = b->dev[i];
        me.cap[i] = b->dev[i] ? b->cap[i] : 0;
    }
    for (int i = 0; i < CT_BUF_COUNT; i++) {
        const char *d = p->ra.buf[i];
        me.buf[i] = p->ra.buf[i];
        for (int k = 0; d && k < CT_BUF_COUNT; k++)
            if (b->dev[k] && d >= (char *)b->dev[k] && d < (char *)b->dev[k] + b->cap[k])
                me.len[i] = (uint64_t)((char *)b->dev[k] + b->cap[k] - d);
    }
    int rc = ct_resident_exchange(&b->res, b->comm, &me, err);
    p->resident = rc == 0;
    if (rc == 0) { /* every peer has mapped the current twins and let the old go */
        retired_free(b);
        for (int i = 0; i < CT_BUF_COUNT; i++)
            b->dev_shared[i] = b->dev[i] != NULL;
        return 0;
    }
    if (rc == CT_EUNSUPP) /* refused alike on every rank: this and later points stage */
        snprintf(b->res_why, sizeof b->res_why, "%.199s", err->msg);
    if (rc < 0 && rc != CT_EUNSUPP)
        return rc;
    /* staged (some rank could not run it in place, or the buffers cannot be shared): what
     * prepare checked for the resident path, checked again for the staged one (symm reads
     * the transports' shared heap there), the same refusal on every rank */
    return ct_exec_onesided_ok(b->comm, &p->s, &p->a, err);
}

int ct_bench_check(struct ct_bench *b, struct ct_bench_prep *p, long *wrong, struct ct_err *err)
{
    uint64_t seed = b->seed; /* every count and collective (input_elems) */
    CT_TRY(resident_exchange(b, p, err));
    CT_TRY(poison_output(b, &p->j, &p->a, err));
    CT_TRY(fill_inputs(b, &p->j, &p->s, &p->a, p->fl.k > 1, seed, err));
    p->filled = true;
    int rc = ct_bench_barrier(b, err);
    if (rc == 0)
        rc = run_once(b, p, err);
    if (rc == 0)
        rc = output_back(b, &p->j, &p->a, err);
    long mine = rc == 0 ? count_wrong(b, &p->j, &p->a, seed) : 0;
    CT_TRY(rc);
    return sum_over_ranks(b, mine, wrong, err);
}

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return a < b ? -1 : a > b;
}

int ct_bench_prepare(struct ct_bench *b, const struct ct_algo *al, const struct ct_job *j,
                     struct ct_bench_prep *p, struct ct_err *err)
{
    memset(p, 0, sizeof *p);
    p->j = *j;
    p->algo = al;
    job_shape(b, &p->j);
    CT_TRY(ct_algo_build(al, &p->j, &p->s, err));
    int rc = setup(b, &p->j, &p->s, &p->a, &p->red, err);
    if (rc < 0) {
        ct_sched_release(&p->s);
        return rc;
    }
    p->a.red = ct_coll_desc(p->j.coll)->needs_op ? &p->red : NULL;
    resident_prepare(b, p);
    if ((rc = ct_exec_onesided_ok(b->comm, &p->s, p->res_local ? &p->ra : &p->a, err)) < 0 ||
        (rc = flight_prepare(b, al, &p->j, &p->a, &p->fl, err)) < 0) {
        ct_sched_release(&p->s);
        return rc;
    }
    return 0;
}

/* nccl-tests' steps: minb, minb x factor, ... up to maxb, each rounded down to a multiple of
 * es, a size the step before gave once (-f 1.01 from 8: 8, then 12, not 8 forty times); from
 * minb 0 (which no factor leaves): 0, then first, then by factor. The first cap go to v (NULL:
 * counted only); returns the count, at most cap + 1. */
static size_t steps(uint64_t minb, uint64_t maxb, double factor, size_t es, uint64_t first,
                    uint64_t *v, size_t cap)
{
    size_t n = 0;
    double sz = (double)minb;
    if (minb == 0 && maxb > 0) {
        if (v)
            v[n] = 0;
        n++;
        sz = (double)first;
    }
    for (uint64_t last = UINT64_MAX; sz <= (double)maxb && n <= cap; sz *= factor) {
        uint64_t s = (uint64_t)sz / es * es;
        if (s != last) {
            if (v && n < cap)
                v[n] = s;
            n++;
        }
        last = s;
        if (factor * sz <= sz) /* 0 (from -b 0 -e 0), or no longer growing */
            break;
    }
    return n;
}

int ct_bench_sizes_check(uint64_t minb, uint64_t maxb, double factor, enum ct_dtype dtype,
                         struct ct_err *err)
{
    size_t es = ct_dtype_size(dtype);
    if (minb > maxb)
        return ct_err_set(err, CT_EINVAL, "--minbytes %llu is larger than --maxbytes %llu",
                          (unsigned long long)minb, (unsigned long long)maxb);
    if (maxb > CT_BENCH_BYTES_MAX)
        return ct_err_set(err, CT_EINVAL, "--maxbytes %llu is beyond 1 TiB",
                          (unsigned long long)maxb);
    if (minb % es || maxb % es)
        return ct_err_set(err, CT_EINVAL, "sizes must be multiples of the %s size (%zu bytes)",
                          ct_dtype_name(dtype), es);
    /* counted as ct_bench_sizes steps them, from the smallest start any collective has after
     * 0 (one element) */
    if (steps(minb, maxb, factor, es, es, NULL, CT_BENCH_SIZES_MAX) > CT_BENCH_SIZES_MAX)
        return ct_err_set(err, CT_EINVAL,
                          "--stepfactor %g from %llu to %llu bytes is more than %d sizes", factor,
                          (unsigned long long)minb, (unsigned long long)maxb, CT_BENCH_SIZES_MAX);
    return 0;
}

size_t ct_bench_sizes(enum ct_coll coll, uint64_t minb, uint64_t maxb, double factor, size_t es,
                      int nranks, uint64_t **out)
{
    *out = ct_xmalloc(sizeof **out * CT_BENCH_SIZES_MAX);
    size_t n = steps(minb, maxb, factor, es,
                     ct_coll_desc(coll)->size_bytes(1, es, nranks > 0 ? nranks : 1), *out,
                     CT_BENCH_SIZES_MAX);
    return n < CT_BENCH_SIZES_MAX ? n : CT_BENCH_SIZES_MAX;
}

uint64_t ct_sizes_min(const uint64_t *sizes, size_t n)
{
    uint64_t v = n ? sizes[0] : 0;
    for (size_t i = 1; i < n; i++)
        v = sizes[i] < v ? sizes[i] : v;
    return v;
}

uint64_t ct_sizes_max(const uint64_t *sizes, size_t n)
{
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++)
        v = sizes[i] > v ? sizes[i] : v;
    return v;
}

struct can_status {
    int32_t rc;
    char msg[236];
};

/* Whether per_rank bytes of host memory for each rank of this machine (virtual nodes' ranks
 * included) fit in what it has available; what names the point ("allreduce 1 TiB"). Buffers
 * in another memory kind are not host memory (0). */
static int mem_fits(const struct ct_bench *b, uint64_t per_rank, const char *what,
                    struct ct_err *err)
{
    if (b->mem)
        return 0;
    const struct ct_boot *bt = b->comm->boot;
    int here = 0;
    size_t mine = bt && bt->hosts ? strcspn(bt->hosts[bt->rank], "/") : 0;
    for (int q = 0; q < b->comm->size; q++) /* "vm/node1": virtual node 1 of vm */
        here += !bt || !bt->hosts ||
                (strcspn(bt->hosts[q], "/") == mine &&
                 !strncmp(bt->hosts[q], bt->hosts[bt->rank], mine));
    return ct_mem_fits(per_rank, here, what, "a smaller -e", err);
}

/* Every rank's answer rc (with its line e) agreed: 0, or the same error on every rank, as
 * rank 0's where all refused, else naming the first rank that did. Collective. */
static int agree(struct ct_bench *b, int rc, const struct ct_err *e, struct ct_err *err)
{
    struct ct_comm *c = b->comm;
    struct can_status mine = {.rc = rc}, *all = ct_xcalloc((size_t)c->size, sizeof *all);
    if (mine.rc < 0)
        snprintf(mine.msg, sizeof mine.msg, "%.235s", e->msg);
    rc = ct_boot_allgather(c->boot, &mine, sizeof mine, all, err);
    int bad = -1, nbad = 0;
    bool unsupp = true;
    for (int q = 0; rc == 0 && q < c->size; q++)
        if (all[q].rc < 0) {
            bad = bad < 0 ? q : bad;
            nbad++;
            unsupp = unsupp && all[q].rc == CT_EUNSUPP;
        }
    if (rc == 0 && bad >= 0 && nbad == c->size) /* refused alike: said once, as rank 0's */
        rc = ct_err_set(err, unsupp ? CT_EUNSUPP : all[bad].rc, "%s", all[0].msg);
    else if (rc == 0 && bad >= 0)
        rc = ct_err_set(err, unsupp ? CT_EUNSUPP : all[bad].rc, "rank %d (%s): %s", bad,
                        c->boot->hosts ? c->boot->hosts[bad] : "?", all[bad].msg);
    free(all);
    return rc;
}

/* This rank's answer for the run (its first refusal, with the size). */
static int can_run_here(struct ct_bench *b, const struct ct_algo *al, const struct ct_job *j0,
                        const uint64_t *sizes, size_t n, struct ct_err *err)
{
    const struct ct_coll_desc *d = ct_coll_desc(j0->coll);
    size_t es = ct_dtype_size(j0->dtype);
    bool prepared = false;
    for (size_t i = 0; i < n; i++) {
        struct ct_job j = *j0;
        job_shape(b, &j);
        j.count = d->count_for(sizes[i], es, j.shape.nranks);
        for (int k = 0; k < 2; k++) {
            j.in_place = k;
            struct ct_sched s;
            int rc = ct_algo_build(al, &j, &s, err);
            if (rc == 0)
                ct_sched_release(&s);
            /* transports and shared buffers: at the first size with data, in and out of
             * place (buffers for the largest are not taken before it is measured) */
            struct ct_bench_prep p;
            if (rc == 0 && !prepared && j.count > 0 &&
                (rc = ct_bench_prepare(b, al, &j, &p, err)) == 0)
                ct_bench_prep_release(&p);
            if (rc < 0) /* the size its row would show (whole elements per rank) */
                return ct_err_wrap(err, "%s %llu bytes: ", d->name,
                                   (unsigned long long)d->size_bytes(j.count, es, j.shape.nranks));
        }
        prepared = prepared || j.count > 0;
    }
    /* the largest size's send and receive buffers in host memory on every rank of this
     * machine, at least: refused before they are taken (1 TiB had the OOM killer end a rank
     * mid-run) */
    if (n) {
        struct ct_job j = *j0;
        job_shape(b, &j);
        j.count = d->count_for(sizes[n - 1], es, j.shape.nranks);
        char m[32], what[64];
        snprintf(what, sizeof what, "%s %s", d->name, ct_bytes_str(sizes[n - 1], m, sizeof m));
        CT_TRY(mem_fits(b, ct_job_send_bytes(&j) + ct_job_recv_bytes(&j), what, err));
    }
    return 0;
}

int ct_bench_can_run(struct ct_bench *b, const struct ct_algo *al, const struct ct_job *j,
                     const uint64_t *sizes, size_t n, struct ct_err *err)
{
    struct ct_err e = {0};
    return agree(b, can_run_here(b, al, j, sizes, n, &e), &e, err);
}

int ct_bench_mem_check(struct ct_bench *b, const char *what, struct ct_err *err)
{
    struct ct_err e = {0};
    return agree(b, mem_fits(b, b->reserve[CT_BUF_RECV] + b->reserve[CT_BUF_SEND], what, &e), &e,
                 err);
}

void ct_bench_prep_release(struct ct_bench_prep *p)
{
    ct_inflight_release(&p->fl);
    ct_sched_release(&p->s);
}

/* A point that is only timed needs inputs of its type, not a check's exact ones: held ones
 * of any op and seed serve. */
static bool timing_inputs_held(const struct ct_bench *b, const struct ct_bench_prep *p)
{
    return can_hold(b, &p->j, &p->s, &p->a, p->fl.k > 1) && holds_for(b, &p->j);
}

int ct_bench_reps_for(double median_us)
{
    double n = median_us > 0 ? ceil(CT_BENCH_REPS_US / median_us) : CT_BENCH_REPS_MAX;
    return n > CT_BENCH_REPS_MAX ? CT_BENCH_REPS_MAX : n < 1 ? 1 : (int)n;
}

double ct_bench_median3(const double *t)
{
    double lo = fmin(t[0], t[1]), hi = fmax(t[0], t[1]);
    return fmax(lo, fmin(hi, t[2]));
}

int ct_bench_reps_auto(const double *pr, int iters, double *t, int *have)
{
    int reps = ct_bench_reps_for(ct_bench_median3(pr));
    *have = reps > 1 ? 0 : iters < CT_BENCH_REPS_PROBE ? iters : CT_BENCH_REPS_PROBE;
    memcpy(t, pr, sizeof(double) * (size_t)*have);
    return reps;
}

int ct_bench_time(struct ct_bench *b, struct ct_bench_prep *p, int warmup, int iters, int reps,
                  double *out_us, struct ct_err *err)
{
    reps = reps > 1 ? reps : 1;
    int n = b->comm->size;
    if ((size_t)iters > b->times_cap) {
        free(b->times);
        free(b->all_times);
        b->times = ct_xmalloc(sizeof(double) * (size_t)iters);
        b->all_times = ct_xmalloc(sizeof(double) * (size_t)iters * (size_t)n);
        b->times_cap = (size_t)iters;
    }
    CT_TRY(resident_exchange(b, p, err));
    if (b->stage)
        *(p->resident ? &b->points_resident : &b->points_staged) += 1;
    if (!p->filled) {
        if (!timing_inputs_held(b, p))
            CT_TRY(fill_inputs(b, &p->j, &p->s, &p->a, p->fl.k > 1, b->seed, err));
        p->filled = true;
    }
    for (int i = 0; i < warmup; i++) {
        CT_TRY(ct_bench_barrier(b, err));
        CT_TRY(run_once(b, p, err));
    }
    for (int i = 0; i < iters; i++) {
        CT_TRY(ct_bench_barrier(b, err));
        int64_t t0 = ct_now_ns();
        for (int r = 0; r < reps; r++)
            CT_TRY(run_once(b, p, err));
        b->times[i] = (double)(ct_now_ns() - t0) / 1e3 / reps;
    }
    CT_TRY(ct_boot_allgather(b->comm->boot, b->times, sizeof(double) * (size_t)iters,
                             b->all_times, err));
    ct_rank_times_combine(b->all_times, n, iters, b->rank_time, out_us);
    return 0;
}

void ct_rank_times_combine(const double *all, int nranks, int iters, int rank_time, double *out)
{
    for (int i = 0; i < iters; i++) {
        double m = all[i], sum = 0;
        for (int r = 0; r < nranks; r++) {
            double v = all[(size_t)r * (size_t)iters + (size_t)i];
            sum += v;
            if (rank_time == CT_RANK_TIME_MIN ? v < m : v > m)
                m = v;
        }
        out[i] = rank_time == CT_RANK_TIME_RANK0  ? all[i]
                 : rank_time == CT_RANK_TIME_MEAN ? sum / nranks
                                                  : m;
    }
}

const char *ct_rank_time_name(int rank_time)
{
    static const char *const names[] = {"rank 0's", "the mean of the ranks'", "the fastest rank's",
                                        "the slowest rank's"};
    return rank_time >= 0 && rank_time <= CT_RANK_TIME_MAX ? names[rank_time] : "?";
}

void ct_point_stats(struct ct_point *out, const struct ct_job *j, int nranks, double *t,
                    int iters)
{
    const struct ct_coll_desc *d = ct_coll_desc(j->coll);
    qsort(t, (size_t)iters, sizeof(double), cmp_double);
    out->count = j->count;
    out->size = d->size_bytes(j->count, ct_dtype_size(j->dtype), nranks);
    out->in_place = j->in_place;
    out->iters = iters;
    out->min_us = t[0];
    out->max_us = t[iters - 1];
    out->time_us = iters % 2 ? t[iters / 2] : (t[iters / 2 - 1] + t[iters / 2]) / 2;
    out->algbw = out->time_us > 0 ? (double)out->size / out->time_us / 1e3 : 0;
    out->busbw = out->algbw * d->bus_factor(nranks);
    out->wrong = out->diverged = -1;
}

int ct_bench_point(struct ct_bench *b, const struct ct_algo *al, struct ct_job *j,
                   const struct ct_bench_cfg *cfg, struct ct_point *out, struct ct_err *err)
{
    int n = b->comm->size, iters = cfg->iters > 0 ? cfg->iters : 1;
    struct ct_bench_prep p;
    CT_TRY(ct_bench_prepare(b, al, j, &p, err));
    double *t = ct_xmalloc(sizeof(double) * (size_t)iters);
    int rc = 0, warmup = cfg->warmup, reps = cfg->reps, have = 0; /* samples the probe gave */
    if (reps == CT_BENCH_REPS_AUTO) { /* the samples are alike on every rank (the combined) */
        double pr[CT_BENCH_REPS_PROBE];
        unsigned long long res = b->points_resident, st = b->points_staged; /* one point */
        rc = ct_bench_time(b, &p, warmup, CT_BENCH_REPS_PROBE, 1, pr, err);
        b->points_resident = res;
        b->points_staged = st;
        warmup = 0;
        reps = rc ? 1 : ct_bench_reps_auto(pr, iters, t, &have);
    }
    if (rc == 0 && iters > have)
        rc = ct_bench_time(b, &p, warmup, iters - have, reps, t + have, err);
    memset(out, 0, sizeof *out);
    out->steps = ct_sched_comm_steps(&p.s);
    out->bytes_sent = p.s.bytes_sent;
    *j = p.j;
    ct_bench_prep_release(&p);
    if (rc < 0) {
        free(t);
        return rc;
    }
    ct_point_stats(out, j, n, t, iters);
    out->reps = reps > 1 ? reps : 1;
    free(t);
    for (int k = 0; k < cfg->check; k++) {
        long w;
        struct ct_qstats q;
        uint64_t saved = b->seed;
        b->seed += (uint64_t)k + 1;
        rc = ct_bench_verify_q(b, al, j, &w, &q, err);
        b->seed = saved;
        CT_TRY(rc);
        out->wrong = (out->wrong < 0 ? 0 : out->wrong) + w;
        if (j->quant != CT_QUANT_NONE) {
            out->diverged = (out->diverged < 0 ? 0 : out->diverged) + q.diverged;
            out->max_err = q.max_err > out->max_err ? q.max_err : out->max_err;
            out->rms_err = q.rms_err > out->rms_err ? q.rms_err : out->rms_err;
        }
    }
    return 0;
}
