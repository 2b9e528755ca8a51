/* SPDX-License-Identifier: MIT */
/* The NCCL engine (see nccl.h). No CUDA or NCCL header is needed to build it: the few
 * declarations used are restated from NCCL 2.28's nccl.h and CUDA 13's cuda_runtime_api.h. */
#include "nccl.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../lib/clock.h"
#include "bench.h"
#include "comm.h"
#include "verify.h"

#define NCCL_UNIQUE_ID_BYTES 128
/* ncclDataType_t of each enum ct_dtype (nccl.h: Int8 0, Uint8 1, Int32 2, Uint32 3, Int64 4,
 * Uint64 5, Float16 6, Float32 7, Float64 8, Bfloat16 9) */
static const int nccl_type[CT_DTYPE_COUNT] = {
    [CT_INT8] = 0,   [CT_UINT8] = 1,   [CT_INT32] = 2,    [CT_UINT32] = 3,  [CT_INT64] = 4,
    [CT_UINT64] = 5, [CT_FLOAT16] = 6, [CT_BFLOAT16] = 9, [CT_FLOAT32] = 7, [CT_FLOAT64] = 8,
};
/* ncclRedOp_t of each enum ct_redop (Sum 0, Prod 1, Max 2, Min 3, Avg 4) */
static const int nccl_op[CT_REDOP_COUNT] = {
    [CT_SUM] = 0, [CT_PROD] = 1, [CT_MIN] = 3, [CT_MAX] = 2, [CT_AVG] = 4};
enum { MAX_EVENTS = 4097 };

struct nccl_id { /* ncclUniqueId, passed by value to ncclCommInitRank */
    char b[NCCL_UNIQUE_ID_BYTES];
};

struct ct_nccl {
    struct ct_boot *boot;
    struct ct_shape shape;
    struct ct_mem mem;
    void *lib, *comm, *stream;
    int version;
    int (*getUniqueId)(void *);
    int (*commInitRank)(void **, int, struct nccl_id, int);
    int (*commDestroy)(void *);
    int (*allReduce)(const void *, void *, size_t, int, int, void *, void *);
    int (*allGather)(const void *, void *, size_t, int, void *, void *);
    int (*reduceScatter)(const void *, void *, size_t, int, int, void *, void *);
    int (*send)(const void *, size_t, int, int, void *, void *);
    int (*recv)(void *, size_t, int, int, void *, void *);
    int (*groupStart)(void), (*groupEnd)(void);
    const char *(*errstr)(int);
    int (*getVersion)(int *);
    int (*streamCreate)(void **), (*streamDestroy)(void *), (*streamSync)(void *);
    int (*eventCreate)(void **), (*eventDestroy)(void *), (*eventRecord)(void *, void *);
    int (*eventSync)(void *), (*eventElapsed)(float *, void *, void *);
    /* the prepared point */
    struct ct_job j;
    void *send_buf, *recv_buf, *out; /* out: recv_buf, or the in-place output */
    const void *in;
    void *ev[MAX_EVENTS];
    int nev;
};

#define SYM(lib, field, name, what)                                                                \
    do {                                                                                           \
        *(void **)&(field) = dlsym(lib, name);                                                     \
        if (!(field))                                                                              \
            return ct_err_set(err, CT_EUNSUPP, "NCCL engine: %s has no symbol %s", what, name);    \
    } while (0)

static int load(struct ct_nccl *n, struct ct_err *err)
{
    const char *env = getenv("COLLTUNE_LIBNCCL");
    const char *nccl = env && *env ? env : "libnccl.so.2";
    if (!(n->lib = dlopen(nccl, RTLD_NOW | RTLD_GLOBAL)))
        return ct_err_set(err, CT_EUNSUPP, "NCCL engine: cannot load NCCL %s (%s)", nccl,
                          dlerror());
    SYM(n->lib, n->getUniqueId, "ncclGetUniqueId", nccl);
    SYM(n->lib, n->commInitRank, "ncclCommInitRank", nccl);
    SYM(n->lib, n->commDestroy, "ncclCommDestroy", nccl);
    SYM(n->lib, n->allReduce, "ncclAllReduce", nccl);
    SYM(n->lib, n->allGather, "ncclAllGather", nccl);
    SYM(n->lib, n->reduceScatter, "ncclReduceScatter", nccl);
    SYM(n->lib, n->send, "ncclSend", nccl);
    SYM(n->lib, n->recv, "ncclRecv", nccl);
    SYM(n->lib, n->groupStart, "ncclGroupStart", nccl);
    SYM(n->lib, n->groupEnd, "ncclGroupEnd", nccl);
    SYM(n->lib, n->errstr, "ncclGetErrorString", nccl);
    SYM(n->lib, n->getVersion, "ncclGetVersion", nccl);
    n->getVersion(&n->version);
    return 0;
}

/* Local set-up: NCCL, then the GPU (device/), then the stream and event calls of the CUDA
 * runtime device/ loaded (the same library, so the same context). */
static int open_local(struct ct_nccl *n, int gpu, struct ct_err *err)
{
    CT_TRY(load(n, err));
    CT_TRY(ct_mem_open(&n->mem, "cuda", gpu, err));
    void *rt = n->mem.lib;
    SYM(rt, n->streamCreate, "cudaStreamCreate", "libcudart");
    SYM(rt, n->streamDestroy, "cudaStreamDestroy", "libcudart");
    SYM(rt, n->streamSync, "cudaStreamSynchronize", "libcudart");
    SYM(rt, n->eventCreate, "cudaEventCreate", "libcudart");
    SYM(rt, n->eventDestroy, "cudaEventDestroy", "libcudart");
    SYM(rt, n->eventRecord, "cudaEventRecord", "libcudart");
    SYM(rt, n->eventSync, "cudaEventSynchronize", "libcudart");
    SYM(rt, n->eventElapsed, "cudaEventElapsedTime", "libcudart");
    return 0;
}

static void release(struct ct_nccl *n)
{
    for (int i = 0; i < n->nev; i++)
        n->eventDestroy(n->ev[i]);
    n->nev = 0;
    if (n->stream)
        n->streamDestroy(n->stream);
    if (n->comm)
        n->commDestroy(n->comm);
    if (n->lib)
        dlclose(n->lib);
    ct_mem_close(&n->mem);
    free(n);
}

/* In a child process: CUDA does not survive fork, and the caller forks its ranks after. */
int ct_nccl_probe(int gpu, struct ct_err *err)
{
    int fd[2];
    if (pipe(fd) < 0)
        return ct_err_set(err, CT_EIO, "NCCL engine: pipe: %s", strerror(errno));
    pid_t pid = fork();
    if (pid < 0) {
        close(fd[0]);
        close(fd[1]);
        return ct_err_set(err, CT_EIO, "NCCL engine: fork: %s", strerror(errno));
    }
    if (pid == 0) {
        struct ct_nccl *n = calloc(1, sizeof *n);
        struct ct_err e = {0};
        int rc = n ? open_local(n, gpu, &e) : ct_err_set(&e, CT_ENOMEM, "out of memory");
        if (n)
            release(n);
        ssize_t w = write(fd[1], &e, sizeof e);
        _exit(rc == 0 && w == (ssize_t)sizeof e ? 0 : 1);
    }
    close(fd[1]);
    struct ct_err e = {0};
    ssize_t got = read(fd[0], &e, sizeof e);
    close(fd[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (got != (ssize_t)sizeof e)
        return ct_err_set(err, CT_EIO, "NCCL engine: the probe process died (status %d)", status);
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
        return 0;
    e.msg[sizeof e.msg - 1] = 0;
    return ct_err_set(err, e.code ? e.code : CT_EUNSUPP, "%s", e.msg);
}

/* Every rank's 0/-1 to all; on any failure, err says which rank (or keeps this rank's). */
static int agree(struct ct_nccl *n, int rc, struct ct_err *err)
{
    int *all = calloc((size_t)n->boot->size, sizeof *all);
    if (!all)
        return ct_err_set(err, CT_ENOMEM, "NCCL engine: out of memory");
    int mine = rc < 0, r = ct_boot_allgather(n->boot, &mine, sizeof mine, all, err);
    for (int i = 0; r == 0 && i < n->boot->size; i++)
        if (all[i] && !mine)
            r = ct_err_set(err, CT_EUNSUPP, "NCCL engine: rank %d could not set up NCCL", i);
    free(all);
    return r < 0 ? r : rc;
}

static int nccl_fail(struct ct_nccl *n, struct ct_err *err, const char *call, int e)
{
    return ct_err_set(err, CT_EIO, "NCCL engine: %s: %s (ncclResult %d)", call,
                      n->errstr ? n->errstr(e) : "?", e);
}

static int launch(struct ct_nccl *n)
{
    const struct ct_job *j = &n->j;
    int t = nccl_type[j->dtype], op = nccl_op[j->op];
    size_t es = ct_dtype_size(j->dtype);
    switch (j->coll) {
    case CT_ALLREDUCE: return n->allReduce(n->in, n->out, j->count, t, op, n->comm, n->stream);
    case CT_ALLGATHER: return n->allGather(n->in, n->out, j->count, t, n->comm, n->stream);
    case CT_REDUCESCATTER:
        return n->reduceScatter(n->in, n->out, j->count, t, op, n->comm, n->stream);
    case CT_ALLTOALL: { /* nccl-tests alltoall_perf: grouped send/recv of count per peer */
        int e = n->groupStart();
        for (int p = 0; !e && p < j->shape.nranks; p++) {
            e = n->send((const char *)n->in + (size_t)p * j->count * es, j->count, t, p, n->comm,
                        n->stream);
            if (!e)
                e = n->recv((char *)n->out + (size_t)p * j->count * es, j->count, t, p, n->comm,
                            n->stream);
        }
        int e2 = n->groupEnd();
        return e ? e : e2;
    }
    default: return 4; /* ncclInvalidArgument */
    }
}

static void free_bufs(struct ct_nccl *n)
{
    ct_mem_free(&n->mem, n->send_buf);
    ct_mem_free(&n->mem, n->recv_buf);
    n->send_buf = n->recv_buf = NULL;
}

static int nccl_begin(void *ctx, const struct ct_algo *a, const struct ct_job *j, bool verify,
                      long *wrong, struct ct_err *err)
{
    struct ct_nccl *n = ctx;
    size_t es = ct_dtype_size(j->dtype);
    uint64_t sb = ct_job_send_bytes(j), rb = ct_job_recv_bytes(j);
    n->j = *j;
    *wrong = 0;
    if (j->quant)
        return ct_err_set(err, CT_EUNSUPP, "NCCL engine: no quantized formats");
    if (j->in_place && j->coll == CT_ALLTOALL)
        return ct_err_set(err, CT_EUNSUPP, "NCCL engine: alltoall runs out of place only");
    CT_TRY(ct_mem_alloc(&n->mem, sb, &n->send_buf, err));
    int rc = ct_mem_alloc(&n->mem, rb, &n->recv_buf, err);
    if (rc < 0) {
        free_bufs(n);
        return rc;
    }
    /* nccl-tests in place: allreduce and alltoall share one buffer; allgather's input is the
     * rank's block of the output; reducescatter's output is the rank's block of the input */
    n->in = n->send_buf;
    n->out = n->recv_buf;
    if (j->in_place) {
        size_t off = (size_t)j->shape.rank * j->count * es;
        if (j->coll == CT_ALLGATHER)
            n->in = (char *)n->recv_buf + off;
        else if (j->coll == CT_REDUCESCATTER)
            n->out = (char *)n->send_buf + off;
        else
            n->out = n->send_buf;
    }
    if (!verify)
        return 0;
    void *h = malloc(sb ? sb : 1), *want = malloc((256u << 10) * es);
    if (!h || !want)
        rc = ct_err_set(err, CT_ENOMEM, "NCCL engine: host staging");
    if (rc == 0) {
        ct_verify_fill_job(j, 0x5eed, h);
        rc = ct_mem_from_host(&n->mem, (void *)n->in, h, sb, err);
    }
    int e = rc == 0 ? launch(n) : 0;
    if (e)
        rc = nccl_fail(n, err, "collective", e);
    if (rc == 0 && (e = n->streamSync(n->stream)))
        rc = ct_err_set(err, CT_EIO, "NCCL engine: cudaStreamSynchronize: cudaError %d", e);
    void *hr = rc == 0 ? realloc(h, rb ? rb : 1) : NULL;
    if (hr) {
        h = hr;
        rc = ct_mem_to_host(&n->mem, h, n->out, rb, err);
        if (rc == 0)
            *wrong = ct_verify_job(j, 0x5eed, h, want, 256u << 10);
    }
    free(h);
    free(want);
    if (rc == 0) { /* summed over ranks, as the native engine reports it */
        long *all = calloc((size_t)n->boot->size, sizeof *all);
        rc = all ? ct_boot_allgather(n->boot, wrong, sizeof *wrong, all, err) : CT_ENOMEM;
        long total = 0;
        for (int i = 0; rc == 0 && i < n->boot->size; i++)
            total += all[i];
        if (rc == 0)
            *wrong = total;
        free(all);
    }
    if (rc < 0)
        free_bufs(n);
    return rc;
}

static int nccl_time(void *ctx, int warmup, int iters, int reps, double *out_us, struct ct_err *err)
{
    struct ct_nccl *n = ctx;
    reps = reps > 1 ? reps : 1;
    if (iters + 1 > MAX_EVENTS)
        return ct_err_set(err, CT_EINVAL, "NCCL engine: at most %d iterations", MAX_EVENTS - 1);
    for (; n->nev < iters + 1; n->nev++)
        if (n->eventCreate(&n->ev[n->nev]))
            return ct_err_set(err, CT_EIO, "NCCL engine: cudaEventCreate failed");
    int e = 0;
    for (int i = 0; !e && i < warmup; i++)
        e = launch(n);
    if (!e)
        e = n->streamSync(n->stream);
    CT_TRY(ct_boot_barrier(n->boot, err)); /* start together, as nccl-tests does */
    e = e ? e : n->eventRecord(n->ev[0], n->stream);
    for (int i = 0; !e && i < iters; i++) {
        for (int r = 0; !e && r < reps; r++)
            e = launch(n);
        if (!e)
            e = n->eventRecord(n->ev[i + 1], n->stream);
    }
    if (e || (e = n->eventSync(n->ev[iters])))
        return ct_err_set(err, CT_EIO, "NCCL engine: timed runs failed (error %d)", e);
    double *all = calloc((size_t)iters * (size_t)n->boot->size, sizeof *all);
    if (!all)
        return ct_err_set(err, CT_ENOMEM, "NCCL engine: out of memory");
    for (int i = 0; i < iters; i++) {
        float ms = 0;
        n->eventElapsed(&ms, n->ev[i], n->ev[i + 1]);
        out_us[i] = ms * 1e3 / reps;
    }
    /* every rank gets the slowest rank's time of each iteration */
    int rc = ct_boot_allgather(n->boot, out_us, sizeof *out_us * (size_t)iters, all, err);
    for (int r = 1; rc == 0 && r < n->boot->size; r++)
        for (int i = 0; i < iters; i++)
            if (all[(size_t)r * (size_t)iters + (size_t)i] > out_us[i])
                out_us[i] = all[(size_t)r * (size_t)iters + (size_t)i];
    free(all);
    return rc;
}

static void nccl_end(void *ctx)
{
    free_bufs(ctx);
}

static double nccl_now(void *ctx)
{
    return (double)ct_now_ns() * 1e-9;
}

static int nccl_bcast(void *ctx, void *buf, size_t len, struct ct_err *err)
{
    struct ct_nccl *n = ctx;
    return ct_boot_bcast0(n->boot, buf, len, err);
}

int ct_nccl_open(struct ct_backend *be, struct ct_nccl **out, struct ct_boot *boot,
                 const struct ct_shape *shape, int gpu, struct ct_err *err)
{
    struct ct_nccl *n = calloc(1, sizeof *n);
    struct nccl_id id = {{0}};
    if (!n)
        return ct_err_set(err, CT_ENOMEM, "NCCL engine: out of memory");
    n->boot = boot;
    n->shape = *shape;
    int rc = agree(n, open_local(n, gpu, err), err), e;
    if (rc == 0 && boot->rank == 0 && (e = n->getUniqueId(&id)))
        rc = nccl_fail(n, err, "ncclGetUniqueId", e);
    rc = agree(n, rc, err);
    if (rc == 0)
        rc = nccl_bcast(n, &id, sizeof id, err);
    if (rc == 0 && (e = n->commInitRank(&n->comm, boot->size, id, boot->rank)))
        rc = nccl_fail(n, err, "ncclCommInitRank", e);
    if (rc == 0 && (e = n->streamCreate(&n->stream)))
        rc = ct_err_set(err, CT_EIO, "NCCL engine: cudaStreamCreate: cudaError %d", e);
    if (rc < 0) {
        release(n);
        return rc;
    }
    memset(be, 0, sizeof *be);
    be->name = "nccl";
    be->begin = nccl_begin;
    be->time = nccl_time;
    be->end = nccl_end;
    be->now_s = nccl_now;
    be->bcast = nccl_bcast;
    be->root = boot->rank == 0;
    be->shape = *shape;
    *out = n;
    return 0;
}

int ct_nccl_tuner_force(const char *algo, const char *proto, int channels, long *misses,
                        struct ct_err *err)
{
    const char *path = getenv("NCCL_TUNER_PLUGIN");
    if (!path || !*path)
        return ct_err_set(err, CT_EUNSUPP, "forcing NCCL's choice needs colltune's tuner plugin: "
                                           "NCCL_TUNER_PLUGIN is not set");
    void *h = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
    if (!h)
        return ct_err_set(err, CT_EUNSUPP, "NCCL_TUNER_PLUGIN=%s is not loaded (yet)", path);
    int (*force)(const char *, const char *, int);
    long (*missed)(void);
    *(void **)&force = dlsym(h, "colltune_tuner_force");
    *(void **)&missed = dlsym(h, "colltune_tuner_force_misses");
    int rc = 0;
    if (!force || !missed)
        rc = ct_err_set(err, CT_EUNSUPP, "NCCL_TUNER_PLUGIN=%s is not colltune's tuner plugin",
                        path);
    else if (force(algo, algo ? proto : NULL, channels) < 0)
        rc = ct_err_set(err, CT_EINVAL, "cannot force NCCL algorithm '%s', protocol '%s', %d "
                                        "channels",
                        algo, proto ? proto : "", channels);
    else if (misses)
        *misses = missed();
    dlclose(h); /* drops the reference RTLD_NOLOAD took; NCCL's stays */
    return rc;
}

int ct_nccl_point(struct ct_nccl *n, struct ct_job *j, const struct ct_bench_cfg *cfg,
                  struct ct_point *out, struct ct_err *err)
{
    const struct ct_backend be = {.begin = nccl_begin, .time = nccl_time, .end = nccl_end};
    j->shape = n->shape;
    return ct_backend_point(&be, n, NULL, j, cfg, out, err);
}

void ct_nccl_close(struct ct_nccl *n)
{
    if (n) {
        free_bufs(n);
        release(n);
    }
}
