/* SPDX-License-Identifier: MIT */
/* The NCCL engine (see nccl.h). No CUDA or NCCL header is needed to build it: the few
 * declarations used are restated from NCCL 2.28's nccl.h and CUDA 13's cuda_runtime_api.h. */
#include "nccl.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../lib/clock.h"
#include "../lib/file.h"
#include "bench.h"
#include "comm.h"
#include "nccl_abi.h"
#include "verify.h"

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

/* The choices a tuner sets (nccl.h NCCL_ALGO_* and NCCL_PROTO_* order and the names colltune's
 * plugin reads, plugin/nccl_rules.c), and the collectives NCCL 2.28 lets each algorithm run
 * (src/enqueue.cc: pat for allgather and reducescatter, the trees for allreduce alone). */
static const char *const algo_names[] = {
    "tree", "ring", "collnet_direct", "collnet_chain", "nvls", "nvls_tree", "pat"};
#define AR CT_COLL_BIT(CT_ALLREDUCE)
#define AG (CT_COLL_BIT(CT_ALLGATHER) | CT_COLL_BIT(CT_REDUCESCATTER))
static const unsigned algo_colls[] = {AR, AR | AG, AR | AG, AR, AR | AG, AR, AG};
#undef AR
#undef AG
static const char *const proto_names[] = {"LL", "LL128", "Simple"};
enum { NALGOS = 7, NPROTOS = 3 };

struct nccl_id { /* ncclUniqueId, passed by value to ncclCommInitRank */
    char b[CT_NCCL_UNIQUE_ID_BYTES];
};

struct ct_nccl {
    struct ct_boot *boot;
    struct ct_shape shape;
    struct ct_mem mem;
    void *lib, *comm, *stream;
    int version;
    int (*getUniqueId)(void *);
    int (*commInitRank)(void **, int, struct nccl_id, int);
    int (*commInitRankConfig)(void **, int, struct nccl_id, int, struct ct_nccl_config *);
    int (*commDestroy)(void *), (*commAbort)(void *), (*commGetAsyncError)(void *, int *);
    int (*allReduce)(const void *, void *, size_t, int, int, void *, void *);
    int (*allGather)(const void *, void *, size_t, int, void *, void *);
    int (*reduceScatter)(const void *, void *, size_t, int, int, void *, void *);
    int (*send)(const void *, size_t, int, int, void *, void *);
    int (*recv)(void *, size_t, int, int, void *, void *);
    int (*groupStart)(void), (*groupEnd)(void);
    const char *(*errstr)(int);
    int (*getVersion)(int *);
    char library[32]; /* "NCCL 2.28.9" */
    /* colltune's tuner plugin, where NCCL loaded it (its handle keeps it loaded) */
    void *plugin;
    int (*force)(const char *, const char *, int);
    long (*missed)(void);
    int (*bypass)(int);
    int (*own)(int *, int *);
    bool own_now; /* the point begun runs NCCL's own choice on every rank (nccl_own_choice) */
    struct ct_nccl_rows rows;
    int (*streamCreate)(void **), (*streamDestroy)(void *), (*streamQuery)(void *);
    int (*eventCreate)(void **), (*eventDestroy)(void *), (*eventRecord)(void *, void *);
    int (*eventQuery)(void *), (*eventElapsed)(float *, void *, void *);
    /* a wait failed and the communicator was aborted (await): what, for every later call */
    char broken[200];
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

void ct_nccl_rows(enum ct_coll coll, struct ct_nccl_rows *r)
{
    memset(r, 0, sizeof *r);
    for (int i = -1; i < NALGOS * NPROTOS; i++) {
        int a = i / NPROTOS;
        if (i >= 0 && !(algo_colls[a] & CT_COLL_BIT(coll)))
            continue;
        struct ct_algo *x = &r->a[r->n];
        if (i < 0)
            snprintf(r->name[r->n], sizeof r->name[0], "nccl:default");
        else
            snprintf(r->name[r->n], sizeof r->name[0], "nccl:%s/%s", algo_names[a],
                     proto_names[i % NPROTOS]);
        x->name = r->name[r->n];
        x->summary = i < 0 ? "NCCL's own choice" : "forced through colltune's tuner plugin";
        x->colls = CT_COLL_BIT(coll);
        x->lib_id = i + 1;
        /* a forced row's channel count: NCCL's own, or one forced (the sweep searches it); not
         * CollNet's, whose plan takes a tuner's count unchecked as its last channel
         * (src/enqueue.cc: channelHi = nMaxChannels - 1, where ring and tree are capped at the
         * communicator's channels) */
        bool collnet = a == 2 || a == 3;
        x->params = x->own = i < 0 || collnet ? 0u : CT_PBIT(CT_P_CHANNELS);
        r->n++;
    }
}

int ct_nccl_plugin_path(char *buf, size_t len, struct ct_err *err)
{
    static const char file[] = "libnccl-tuner-colltune.so";
    const char *env = getenv("COLLTUNE_NCCL_PLUGIN");
    if (env && *env) {
        char *abs = ct_path_absolute(env);
        snprintf(buf, len, "%s", abs);
        free(abs);
        if (access(buf, R_OK) == 0)
            return 0;
        return ct_err_set(err, CT_EUNSUPP, "COLLTUNE_NCCL_PLUGIN=%s: cannot read %s", env, buf);
    }
    char exe[PATH_MAX / 2];
    if (ct_self_path(exe, sizeof exe, 1) < 0)
        return ct_err_set(err, CT_EUNSUPP, "cannot find the colltune binary (/proc/self/exe)");
    static const char *const where[] = {"", "/build", "/../lib/colltune"};
    for (size_t i = 0; i < sizeof where / sizeof where[0]; i++) {
        snprintf(buf, len, "%s%s/%s", exe, where[i], file);
        char *real = access(buf, R_OK) == 0 ? realpath(buf, NULL) : NULL;
        if (real) {
            snprintf(buf, len, "%s", real);
            free(real);
            return 0;
        }
    }
    return ct_err_set(err, CT_EUNSUPP,
                      "colltune's NCCL tuner plugin %s is not in %s, %s/build or "
                      "%s/../lib/colltune: build it (make) or set COLLTUNE_NCCL_PLUGIN",
                      file, exe, exe, exe);
}

/* colltune's tuner plugin as NCCL loaded it (NCCL_TUNER_PLUGIN): a handle of our own and its
 * forcing calls. CT_EUNSUPP when it is not loaded or is not colltune's. */
static int plugin_open(void **h, int (**force)(const char *, const char *, int),
                       long (**missed)(void), struct ct_err *err)
{
    const char *path = getenv("NCCL_TUNER_PLUGIN");
    if (!path || !*path)
        return ct_err_set(err, CT_EUNSUPP,
                          "forcing NCCL's choice needs colltune's tuner plugin: "
                          "NCCL_TUNER_PLUGIN is not set");
    if (!(*h = dlopen(path, RTLD_NOW | RTLD_NOLOAD)))
        return ct_err_set(err, CT_EUNSUPP, "NCCL_TUNER_PLUGIN=%s is not loaded (yet)", path);
    *(void **)force = dlsym(*h, "colltune_tuner_force");
    *(void **)missed = dlsym(*h, "colltune_tuner_force_misses");
    if (*force && *missed)
        return 0;
    dlclose(*h);
    *h = NULL;
    return ct_err_set(err, CT_EUNSUPP, "NCCL_TUNER_PLUGIN=%s is not colltune's tuner plugin", path);
}

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
    SYM(n->lib, n->commAbort, "ncclCommAbort", nccl);
    SYM(n->lib, n->commGetAsyncError, "ncclCommGetAsyncError", nccl);
    /* NCCL 2.14 and later: a config (nccl-tests' settings, ct_nccl_open) */
    *(void **)&n->commInitRankConfig = dlsym(n->lib, "ncclCommInitRankConfig");
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
    int v = n->version; /* NCCL_VERSION_CODE: X*10000+Y*100+Z from 2.9, X*1000+Y*100+Z before */
    snprintf(n->library, sizeof n->library, "NCCL %d.%d.%d", v >= 20900 ? v / 10000 : v / 1000,
             v >= 20900 ? v / 100 % 100 : v / 100 % 10, v % 100);
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
    SYM(rt, n->streamQuery, "cudaStreamQuery", "libcudart");
    SYM(rt, n->eventCreate, "cudaEventCreate", "libcudart");
    SYM(rt, n->eventDestroy, "cudaEventDestroy", "libcudart");
    SYM(rt, n->eventRecord, "cudaEventRecord", "libcudart");
    SYM(rt, n->eventQuery, "cudaEventQuery", "libcudart");
    SYM(rt, n->eventElapsed, "cudaEventElapsedTime", "libcudart");
    return 0;
}

static void release(struct ct_nccl *n)
{
    for (int i = 0; i < n->nev; i++)
        n->eventDestroy(n->ev[i]);
    n->nev = 0;
    if (n->force)
        n->force(NULL, NULL, 0);
    if (n->stream)
        n->streamDestroy(n->stream);
    if (n->comm)
        n->commDestroy(n->comm);
    if (n->plugin)
        dlclose(n->plugin);
    /* libnccl stays loaded: NCCL detaches threads it never joins (its InfiniBand async-event
     * thread, src/transport/net_ib.cc), which would wake in unmapped code */
    ct_mem_close(&n->mem);
    free(n);
}

static int probe_in_child(void *arg, struct ct_err *err)
{
    struct ct_nccl *n = calloc(1, sizeof *n);
    int rc = n ? open_local(n, *(int *)arg, err) : ct_err_set(err, CT_ENOMEM, "out of memory");
    if (n)
        release(n);
    return rc;
}

/* In a child process: CUDA does not survive fork, and the caller forks its ranks after. */
int ct_nccl_probe(int gpu, struct ct_err *err)
{
    return ct_err_in_child("NCCL engine", probe_in_child, &gpu, 120, err);
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

/* A wait given up: the communicator aborted (ncclCommAbort stops its kernels, which a dead
 * peer leaves spinning), and every later call fails with the same words. */
static int give_up(struct ct_nccl *n, struct ct_err *err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(n->broken, sizeof n->broken, fmt, ap);
    va_end(ap);
    if (n->comm)
        n->commAbort(n->comm);
    n->comm = NULL;
    return ct_err_set(err, CT_EIO, "NCCL engine: rank %d: %s", n->boot->rank, n->broken);
}

static int still_usable(struct ct_nccl *n, struct ct_err *err)
{
    if (!n->broken[0])
        return 0;
    return ct_err_set(err, CT_EIO, "NCCL engine: rank %d: the communicator was aborted after: %s",
                      n->boot->rank, n->broken);
}

/*
 * Wait until the GPU finished work queued on the engine's stream, as nccl-tests does
 * (testStreamSynchronize): poll and NCCL's asynchronous error, yielding the CPU between
 * polls. A blocking synchronize never returns when a peer dies or stalls: NCCL's kernels keep
 * waiting for its data. --timeout (the bootstrap's op timeout) bounds the time without
 * progress, as for the native engine: the work is the nev events ev[] recorded in order, each
 * after `calls` calls (each one done restarts the clock), or with ev NULL the whole stream of
 * `calls` calls; --timeout per call. The timed region is unaffected: its times are the GPU's
 * events.
 */
static int await(struct ct_nccl *n, void *const *ev, int nev, int calls, const char *what,
                 struct ct_err *err)
{
    int64_t step = n->boot->op_timeout_ns > 0 ? n->boot->op_timeout_ns : (int64_t)30 * 1000000000,
            limit =
                calls > 1 && step > INT64_MAX / calls ? INT64_MAX : step * (calls > 1 ? calls : 1),
            t0 = ct_now_ns();
    if (ev && nev < 1)
        return 0;
    for (int k = 0;;) {
        int q = ev ? n->eventQuery(ev[k]) : n->streamQuery(n->stream), st = CT_NCCL_SUCCESS;
        if (q == CT_CUDA_SUCCESS && (!ev || ++k == nev))
            return 0;
        if (q == CT_CUDA_SUCCESS) { /* one more event done: progress */
            t0 = ct_now_ns();
            continue;
        }
        if (q != CT_CUDA_NOT_READY)
            return give_up(n, err, "%s: CUDA error %d", what, q);
        if (n->commGetAsyncError(n->comm, &st) == CT_NCCL_SUCCESS && st != CT_NCCL_SUCCESS &&
            st != CT_NCCL_IN_PROGRESS)
            return give_up(n, err, "%s: NCCL reports %s (ncclResult %d; a peer failed)", what,
                           n->errstr(st), st);
        if (ct_now_ns() - t0 > limit)
            return give_up(n, err, "%s: no progress for %.0f s (a peer died or stalled; --timeout)",
                           what, (double)limit * 1e-9);
        sched_yield();
    }
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

/* A forced row (id > 0): did NCCL run it on every rank? The plugin counts a miss for each
 * call whose forced cell NCCL marked -1 (it cannot run that choice there, so NCCL chose);
 * missed0 is the count before this point's first call, which launched says was made. A row at
 * NCCL's own channel count (own_ch) that is what NCCL itself chose for the call on every rank
 * (the plugin's colltune_tuner_own_choice) runs what the default row runs: it is measured all
 * the same, as the start of the sweep's search over channel counts, and n->own_now says so. */
static int forced_ran(struct ct_nccl *n, int id, bool own_ch, long missed0, bool launched,
                      struct ct_err *err)
{
    n->own_now = false;
    if (id <= 0)
        return 0;
    int e = launched ? 0 : launch(n);
    if (e)
        return ct_err_set(err, CT_EIO, "NCCL engine: the forced choice's first call failed (%d)",
                          e);
    CT_TRY(await(n, NULL, 0, 1, "the forced choice's first call", err));
    int a = (id - 1) / NPROTOS, p = (id - 1) % NPROTOS, oa = -1, op = -1, *all;
    /* bit 0: a miss here; bit 1: the forced choice is not NCCL's own here */
    int mine = (n->missed() > missed0) |
               (!own_ch || !n->own || n->own(&oa, &op) < 0 || oa != a || op != p) << 1;
    if (!(all = calloc((size_t)n->boot->size, sizeof *all)))
        return ct_err_set(err, CT_ENOMEM, "NCCL engine: out of memory");
    int rc = ct_boot_allgather(n->boot, &mine, sizeof mine, all, err), any_other = 0;
    for (int r = 0; rc == 0 && r < n->boot->size; r++) {
        any_other |= all[r] & 2;
        if (all[r] & 1)
            rc = ct_err_set(err, CT_EUNSUPP,
                            "NCCL does not run %s/%s for this call (its cost table excludes it "
                            "on rank %d)",
                            algo_names[a], proto_names[p], r);
    }
    free(all);
    n->own_now = rc == 0 && !any_other;
    return rc;
}

#define SEED 0x5eed /* of the checked inputs (pass k of -c N: SEED + k) */

/* One call of the prepared point (n->j, its buffers) checked, on the inputs of seed, the
 * output poisoned first (all ones, NaN for floats), as the MPI engines do: a call that writes
 * nothing fails the check, never passes on what an earlier point left in memory the allocator
 * handed out again. The inputs go in after the poison (in place, allgather's is a block of the
 * output). Wrong elements summed over ranks, as the native engine reports them. */
static int checked_call(struct ct_nccl *n, uint64_t seed, const char *what, long *wrong,
                        struct ct_err *err)
{
    const struct ct_job *j = &n->j;
    size_t es = ct_dtype_size(j->dtype);
    uint64_t sb = ct_job_send_bytes(j), rb = ct_job_recv_bytes(j);
    size_t hl = sb > rb ? sb : rb;
    void *h = malloc(hl ? hl : 1), *want = malloc((256u << 10) * es);
    int rc = h && want ? 0 : ct_err_set(err, CT_ENOMEM, "NCCL engine: host staging");
    if (rc == 0 && n->out == n->recv_buf) { /* in place otherwise: the inputs overwrite it */
        memset(h, 0xff, rb);
        rc = ct_mem_from_host(&n->mem, n->recv_buf, h, rb, err);
    }
    if (rc == 0) {
        ct_verify_fill_job(j, seed, h);
        rc = ct_mem_from_host(&n->mem, (void *)n->in, h, sb, err);
    }
    int e = rc == 0 ? launch(n) : 0;
    if (e)
        rc = nccl_fail(n, err, "collective", e);
    if (rc == 0)
        rc = await(n, NULL, 0, 1, what, err);
    if (rc == 0)
        rc = ct_mem_to_host(&n->mem, h, n->out, rb, err);
    if (rc == 0)
        *wrong = ct_verify_job(j, seed, h, want, 256u << 10);
    free(h);
    free(want);
    if (rc == 0) {
        long *all = calloc((size_t)n->boot->size, sizeof *all);
        rc = all ? ct_boot_allgather(n->boot, wrong, sizeof *wrong, all, err) : CT_ENOMEM;
        long total = 0;
        for (int i = 0; rc == 0 && i < n->boot->size; i++)
            total += all[i];
        if (rc == 0)
            *wrong = total;
        free(all);
    }
    return rc;
}

/* The prepared point checked again after its timed calls (pass k: seed + k; backend.h). */
static int nccl_recheck(void *ctx, int pass, long *wrong, struct ct_err *err)
{
    struct ct_nccl *n = ctx;
    CT_TRY(still_usable(n, err));
    if (!n->recv_buf)
        return ct_err_set(err, CT_EINVAL, "NCCL engine: no point prepared");
    return checked_call(n, SEED + (uint64_t)pass, "a check after the timed calls", wrong, err);
}

static int nccl_begin(void *ctx, const struct ct_algo *a, const struct ct_job *j, bool verify,
                      long *wrong, struct ct_err *err)
{
    struct ct_nccl *n = ctx;
    size_t es = ct_dtype_size(j->dtype);
    uint64_t sb = ct_job_send_bytes(j), rb = ct_job_recv_bytes(j);
    int id = a ? a->lib_id : 0;
    uint64_t ch = id > 0 ? j->params.v[CT_P_CHANNELS] : 0;
    bool own_ch = ch == CT_PARAM_OWN || ch == 0;
    long missed0 = 0;
    n->j = *j;
    *wrong = 0;
    CT_TRY(still_usable(n, err));
    if (j->quant)
        return ct_err_set(err, CT_EUNSUPP, "NCCL engine: no quantized formats");
    if (j->in_place && j->coll == CT_ALLTOALL)
        return ct_err_set(err, CT_EUNSUPP, "NCCL engine: alltoall runs out of place only");
    if (id > 0 && !n->force)
        return ct_err_set(err, CT_EUNSUPP, "NCCL engine: %s needs colltune's tuner plugin loaded",
                          a->name);
    if (n->force) { /* this point's choice, or NCCL's own, for every following call */
        missed0 = n->missed();
        if (n->force(id > 0 ? algo_names[(id - 1) / NPROTOS] : NULL,
                     id > 0 ? proto_names[(id - 1) % NPROTOS] : NULL,
                     own_ch || ch > 64 ? 0 : (int)ch) < 0)
            return ct_err_set(err, CT_EINVAL, "NCCL engine: the plugin refused %s", a->name);
    }
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
    if (!verify) {
        if ((rc = forced_ran(n, id, own_ch, missed0, false, err)) < 0)
            free_bufs(n);
        return rc;
    }
    rc = checked_call(n, SEED, "the checked call", wrong, err);
    if (rc == 0)
        rc = forced_ran(n, id, own_ch, missed0, true, err);
    if (rc < 0)
        free_bufs(n);
    return rc;
}

static bool nccl_own_choice(void *ctx)
{
    return ((struct ct_nccl *)ctx)->own_now;
}

static int nccl_candidates(void *ctx, enum ct_coll coll, const struct ct_algo **rows, int max,
                           struct ct_err *err)
{
    struct ct_nccl *n = ctx;
    (void)err;
    ct_nccl_rows(coll, &n->rows);
    /* NCCL's own choice only without the plugin, and on one rank: there NCCL copies locally and
     * consults no algorithm or tuner (src/enqueue.cc taskAppend, ncclLaunchOneRank), so a forced
     * row would time that copy under its name */
    int k = n->force && n->boot->size > 1 ? n->rows.n : 1;
    for (int i = 0; i < k && i < max; i++)
        rows[i] = &n->rows.a[i];
    return k < max ? k : max;
}

static int nccl_time(void *ctx, int warmup, int iters, int reps, double *out_us, struct ct_err *err)
{
    struct ct_nccl *n = ctx;
    reps = reps > 1 ? reps : 1;
    CT_TRY(still_usable(n, err));
    if (iters + 1 > MAX_EVENTS)
        return ct_err_set(err, CT_EINVAL, "NCCL engine: at most %d iterations", MAX_EVENTS - 1);
    for (; n->nev < iters + 1; n->nev++)
        if (n->eventCreate(&n->ev[n->nev]))
            return ct_err_set(err, CT_EIO, "NCCL engine: cudaEventCreate failed");
    int e = 0;
    for (int i = 0; !e && i < warmup; i++)
        e = launch(n);
    if (e)
        return nccl_fail(n, err, "warmup", e);
    CT_TRY(await(n, NULL, 0, warmup, "the warmup", err));
    CT_TRY(ct_boot_barrier(n->boot, err)); /* start together, as nccl-tests does */
    e = e ? e : n->eventRecord(n->ev[0], n->stream);
    for (int i = 0; !e && i < iters; i++) {
        for (int r = 0; !e && r < reps; r++)
            e = launch(n);
        if (!e)
            e = n->eventRecord(n->ev[i + 1], n->stream);
    }
    if (e)
        return ct_err_set(err, CT_EIO, "NCCL engine: timed runs failed (error %d)", e);
    CT_TRY(await(n, n->ev + 1, iters, reps, "the timed calls", err));
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
    /* nccl-tests' communicator: blocking (a non-blocking one starts a thread per call), with
     * NVLink-utilization-centric scheduling from 2.28 (src/common.cu initComms) */
    struct ct_nccl_config cfg = ct_nccl_config_default();
    if (n->version >= 22800)
        cfg.nvlinkCentricSched = 1;
    if (rc == 0 && (e = n->commInitRankConfig && n->version >= 21400
                            ? n->commInitRankConfig(&n->comm, boot->size, id, boot->rank, &cfg)
                            : n->commInitRank(&n->comm, boot->size, id, boot->rank)))
        rc = nccl_fail(n, err, "ncclCommInitRank", e);
    if (rc == 0 && (e = n->streamCreate(&n->stream)))
        rc = ct_err_set(err, CT_EIO, "NCCL engine: cudaStreamCreate: cudaError %d", e);
    if (rc < 0) {
        release(n);
        return rc;
    }
    struct ct_err ignore = {0}; /* no plugin: NCCL's own choice is the only row */
    int have = plugin_open(&n->plugin, &n->force, &n->missed, &ignore) == 0, *all;
    all = calloc((size_t)boot->size, sizeof *all); /* the same rows on every rank */
    if (!all || ct_boot_allgather(boot, &have, sizeof have, all, err) < 0) {
        free(all);
        release(n);
        return err->code ? err->code : ct_err_set(err, CT_ENOMEM, "NCCL engine: out of memory");
    }
    for (int r = 0; r < boot->size; r++)
        if (!all[r]) {
            n->force = NULL;
            n->missed = NULL;
        }
    free(all);
    if (n->force) {
        *(void **)&n->bypass = dlsym(n->plugin, "colltune_tuner_bypass");
        *(void **)&n->own = dlsym(n->plugin, "colltune_tuner_own_choice");
    }
    memset(be, 0, sizeof *be);
    be->name = "nccl";
    be->begin = nccl_begin;
    be->time = nccl_time;
    be->recheck = nccl_recheck;
    be->end = nccl_end;
    be->now_s = nccl_now;
    be->bcast = nccl_bcast;
    be->candidates = nccl_candidates;
    be->own_choice = nccl_own_choice;
    /* the channel grid up to NCCL's MAXCHANNELS: 32 before 2.25, 64 from (src/graph/connect.cc;
     * version codes X*10000+Y*100+Z from 2.9) */
    be->max_channels = n->version >= 22500 ? 64 : 32;
    be->library = n->library;
    be->root = boot->rank == 0;
    be->shape = *shape;
    *out = n;
    return 0;
}

int ct_nccl_tuner_force(const char *algo, const char *proto, int channels, long *misses,
                        struct ct_err *err)
{
    void *h;
    int (*force)(const char *, const char *, int);
    long (*missed)(void);
    CT_TRY(plugin_open(&h, &force, &missed, err));
    int rc = 0;
    if (force(algo, algo ? proto : NULL, channels) < 0)
        rc = ct_err_set(err, CT_EINVAL, "cannot force NCCL algorithm '%s', protocol '%s', %d "
                                        "channels",
                        algo, proto ? proto : "", channels);
    else if (misses)
        *misses = missed();
    dlclose(h); /* drops the reference RTLD_NOLOAD took; NCCL's stays */
    return rc;
}

int ct_nccl_tuner_bypass(void *ctx, bool on, struct ct_err *err)
{
    struct ct_nccl *n = ctx;
    if (!n->bypass)
        return ct_err_set(err, CT_EUNSUPP,
                          "NCCL engine: NCCL did not load colltune's tuner plugin on every rank "
                          "(NCCL_TUNER_PLUGIN=%s)",
                          getenv("NCCL_TUNER_PLUGIN") ? getenv("NCCL_TUNER_PLUGIN") : "");
    n->bypass(on);
    return 0;
}

int ct_nccl_point(struct ct_nccl *n, struct ct_job *j, const struct ct_bench_cfg *cfg,
                  struct ct_point *out, struct ct_err *err)
{
    const struct ct_backend be = {.begin = nccl_begin, .time = nccl_time, .end = nccl_end};
    j->shape = n->shape;
    return ct_backend_point(&be, n, NULL, j, cfg, out, err);
}

struct ct_mem *ct_nccl_mem(struct ct_nccl *n)
{
    return &n->mem;
}

void ct_nccl_close(struct ct_nccl *n)
{
    if (n) {
        free_bufs(n);
        release(n);
    }
}
