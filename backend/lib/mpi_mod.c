/* SPDX-License-Identifier: MIT */
/*
 * The MPI part of a library engine, the same for every MPI library: MPI_Init, buffers of a
 * point, verification (backend/verify.c's inputs and closed-form results, as colltune's own
 * engines check theirs: every element checked, wrong elements summed over ranks), timing
 * (MPI_Barrier, then MPI_Wtime around each call; the slowest rank's time of each iteration by
 * MPI_Allreduce MAX) and the struct ct_backend it fills. Which algorithm runs is the library part's
 * business (ct_mod_lib_comm gives the communicator to run on).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* RTLD_DEFAULT */
#endif
#include <dlfcn.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../verify.h"
#include "mod.h"

#define OWN_MAX 256

struct mod_ctx {
    struct ct_mod_lib *lib;
    int rank, size;
    MPI_Comm comm; /* of the prepared point; MPI_COMM_NULL when none */
    struct ct_job j;
    MPI_Datatype dt;
    MPI_Op op;
    size_t es;
    void *send, *recv;
    size_t send_len, recv_len; /* of their mappings (buf_map) */
    bool held;                 /* send holds the point's inputs (a call reads, never writes it) */
    uint64_t seed;             /* of the inputs filled, which check() expects */
    int *rcounts;              /* reducescatter: count per rank */
    const struct ct_mod_row *row; /* of the prepared point */
    char library[96];
    struct ct_rank_info *ranks; /* every rank's place (places) */
    /* the library's spy (ct-spy-<lib>.so, loaded before the library by backend/libmod.c):
     * the entry point the last call ran, cleared by reading; NULL without one */
    const char *(*spy)(void);
    /* where the spy wraps every entry point a forced row can run (Open MPI's): why a forced
     * row's call that ran none of them did not run its algorithm; NULL otherwise */
    const char *spy_none;
    bool hosts;    /* the ranks are on more than one host */
    bool distinct; /* a sweep: a forced row that runs the library's own choice is refused */
    struct own {   /* what the library's own decision ran, per job (the last OWN_MAX) */
        struct ct_job j;
        const char *ran;
    } own[OWN_MAX];
    int nown;
};

int ct_mod_cvar_find(const char *name)
{
    int idx = -1;
    if (MPI_T_cvar_get_index(name, &idx) != MPI_SUCCESS)
        return -1;
    return idx;
}

int ct_mod_cvar_read_int(int idx, int *v)
{
    MPI_T_cvar_handle h;
    int count;
    if (idx < 0 || MPI_T_cvar_handle_alloc(idx, NULL, &h, &count) != MPI_SUCCESS)
        return -1;
    int rc = MPI_T_cvar_read(h, v);
    MPI_T_cvar_handle_free(&h);
    return rc == MPI_SUCCESS ? 0 : -1;
}

int ct_mod_cvar_write_int(int idx, int v, struct ct_err *err)
{
    MPI_T_cvar_handle h;
    int count = 0;
    if (MPI_T_cvar_handle_alloc(idx, NULL, &h, &count) != MPI_SUCCESS)
        return ct_err_set(err, CT_EUNSUPP, "MPI_T: cannot open control variable %d", idx);
    int rc = MPI_T_cvar_write(h, &v);
    MPI_T_cvar_handle_free(&h);
    if (rc != MPI_SUCCESS)
        return ct_err_set(err, CT_EUNSUPP, "MPI_T: control variable %d refused %d (error %d)", idx,
                          v, rc);
    return 0;
}

static MPI_Datatype mpi_type(enum ct_dtype t)
{
    switch (t) {
    case CT_INT8: return MPI_INT8_T;
    case CT_UINT8: return MPI_UINT8_T;
    case CT_INT32: return MPI_INT32_T;
    case CT_UINT32: return MPI_UINT32_T;
    case CT_INT64: return MPI_INT64_T;
    case CT_UINT64: return MPI_UINT64_T;
    case CT_FLOAT32: return MPI_FLOAT;
    case CT_FLOAT64: return MPI_DOUBLE;
    default: return MPI_DATATYPE_NULL;
    }
}

/* Elements of this rank's input, send and recv buffer lengths (elements). */
static void lengths(const struct mod_ctx *c, size_t *in, size_t *ns, size_t *nr)
{
    size_t n = c->j.count, p = (size_t)c->size;
    switch (c->j.coll) {
    case CT_ALLGATHER: *in = n, *ns = n, *nr = n * p; break;
    case CT_REDUCESCATTER: *in = n * p, *ns = n * p, *nr = c->j.in_place ? n * p : n; break;
    case CT_ALLTOALL: *in = n * p, *ns = n * p, *nr = n * p; break;
    default: *in = n, *ns = n, *nr = n; break;
    }
}

/* The job as backend/verify.c reads it: this rank of the world. */
static struct ct_job verify_job(const struct mod_ctx *c)
{
    struct ct_job j = c->j;
    j.shape.rank = c->rank;
    j.shape.nranks = c->size;
    return j;
}

#define SEED 0x5eedull
#define CHECK_ELEMS (64u << 10) /* expected values built this many at a time */

/* Fresh inputs of c->seed, as colltune's own engines fill theirs (exact in every reduction
 * order, so any algorithm's result is checked bit for bit): in place they go where the library
 * reads them from recv. Out of place they stay (held) for the point's timed calls: filling
 * 128 MiB takes 155 ms, once per batch of samples before. What the call must write and the
 * inputs do not is poisoned first (all ones, NaN for floats), as colltune's own engine does:
 * a call that writes nothing there fails its check, also where the expected value is 0. */
static void fill(struct mod_ctx *c)
{
    struct ct_job j = verify_job(c);
    if (!c->j.in_place || c->j.coll == CT_ALLGATHER)
        memset(c->recv, 0xff, c->recv_len);
    if (!c->j.in_place)
        ct_verify_fill_job(&j, c->seed, c->send);
    else if (c->j.coll == CT_ALLGATHER)
        ct_verify_fill(j.dtype, j.op, c->rank, c->size, c->seed, 0,
                       (char *)c->recv + (size_t)c->rank * c->j.count * c->es, c->j.count);
    else
        ct_verify_fill_job(&j, c->seed, c->recv);
    c->held = !c->j.in_place;
}

/*
 * Calls that returned (backend.h progress), read by colltune's watchdog thread. One writer
 * (the rank's thread), so a relaxed load and store, a plain move on x86: a locked add
 * (atomic_fetch_add) in every timed call waits for the library's earlier stores to leave
 * the store buffer (Open MPI 4.1.4's AllReduce, 2 ranks, Zen 5 VM, alternating runs: 16 B
 * 0.62-0.69 us with it, 0.60 without).
 */
static _Atomic unsigned long ticks;
#define TICK()                                                                                     \
    atomic_store_explicit(&ticks, atomic_load_explicit(&ticks, memory_order_relaxed) + 1,          \
                          memory_order_relaxed)

static unsigned long mod_progress(void *ctx)
{
    return atomic_load(&ticks);
}

static int call(struct mod_ctx *c)
{
    int n = (int)c->j.count, rc;
    const void *s = c->j.in_place ? MPI_IN_PLACE : c->send;
    switch (c->j.coll) {
    case CT_ALLGATHER: rc = MPI_Allgather(s, n, c->dt, c->recv, n, c->dt, c->comm); break;
    case CT_REDUCESCATTER:
        rc = MPI_Reduce_scatter(s, c->recv, c->rcounts, c->dt, c->op, c->comm);
        break;
    case CT_ALLTOALL: rc = MPI_Alltoall(s, n, c->dt, c->recv, n, c->dt, c->comm); break;
    default: rc = MPI_Allreduce(s, c->recv, n, c->dt, c->op, c->comm); break;
    }
    TICK();
    return rc;
}

/* Wrong elements of this rank's output: one hash per element, whatever the rank count. */
static long check(const struct mod_ctx *c)
{
    struct ct_job j = verify_job(c);
    void *want = ct_xmalloc(CHECK_ELEMS * c->es);
    long wrong = ct_verify_job(&j, c->seed, c->recv, want, CHECK_ELEMS);
    free(want);
    return wrong;
}

/*
 * A point's buffers are mappings of their own, page-aligned and zeroed, not heap memory.
 * Where the heap puts a buffer (its alignment against the other buffer and the cache's
 * sets) depends on what the library allocated before it: a library reading a rules file
 * at MPI_Init allocates differently than one that does not, and glibc serves a large calloc
 * from the heap once a freed mapping has raised its threshold. So verify's two kinds of
 * launch measured the same library code on buffers placed differently (Open MPI 4.1.4,
 * 2 ranks, AllReduce at 32 B, where the file keeps the default: 1.062 [1.035, 1.090] and
 * 1.059 [1.005, 1.116] over 8 pairs in two runs, 1.023 [0.867, 1.208] on these), and Open
 * MPI's default measured 14.6-14.8 us at 16 KiB and 29.3-29.7 at 128 KiB on heap buffers
 * against 12.1-12.6 and 24.6-26.3 on these (alternating runs).
 */
static void *buf_map(size_t len)
{
    void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

static void release_point(struct mod_ctx *c)
{
    if (c->comm != MPI_COMM_NULL)
        MPI_Comm_free(&c->comm);
    c->comm = MPI_COMM_NULL;
    if (c->send)
        munmap(c->send, c->send_len);
    if (c->recv)
        munmap(c->recv, c->recv_len);
    free(c->rcounts);
    c->send = c->recv = NULL;
    c->rcounts = NULL;
    c->held = false;
}

/* The row of a in coll's list: the names repeat across collectives with other ids (Open MPI
 * 4.1: allreduce's ring is 4, reduce_scatter's 3, where 4 is butterfly). */
static const struct ct_mod_row *row_of(struct mod_ctx *c, enum ct_coll coll,
                                       const struct ct_algo *a, struct ct_err *err)
{
    struct ct_mod_row *rows;
    int n = ct_mod_lib_rows(c->lib, coll, &rows, err);
    for (int i = 0; i < n; i++)
        if (!strcmp(rows[i].name, a->name))
            return &rows[i];
    ct_err_set(err, CT_EUNSUPP, "%s has no algorithm '%s' for this collective", ct_mod_lib_title(),
               a->name);
    return NULL;
}

static bool same_job(const struct ct_job *a, const struct ct_job *b)
{
    return a->coll == b->coll && a->count == b->count && a->dtype == b->dtype && a->op == b->op &&
           a->in_place == b->in_place;
}

static void own_note(struct mod_ctx *c, const char *ran)
{
    struct own *o = &c->own[c->nown++ % OWN_MAX];
    o->j = c->j;
    o->ran = ran;
}

/* The entry point the library's own decision runs for this point's job: remembered from
 * its own row's point, else one call on MPI_COMM_WORLD, which keeps the library's defaults
 * (collective; every rank asks alike). NULL when the spy saw none. */
static const char *own_choice(struct mod_ctx *c)
{
    for (int i = 0; i < OWN_MAX && i < c->nown; i++)
        if (same_job(&c->own[i].j, &c->j))
            return c->own[i].ran;
    MPI_Comm mine = c->comm;
    if (!c->held)
        fill(c);
    c->comm = MPI_COMM_WORLD;
    c->spy();
    const char *ran = call(c) == MPI_SUCCESS ? c->spy() : NULL;
    c->comm = mine;
    own_note(c, ran);
    return ran;
}

/* With the spy, in a sweep: a forced row that runs the same entry point as the library's own
 * decision at this point, and sets nothing the entry point reads (no segment size), is that
 * decision, measured as the library's default row; 1 when every rank saw so. Open MPI 4.1.4
 * on 2 ranks runs `two_proc` for AllGather at every size: measured as two rows, the noise
 * between them chose `two_proc` for 0-16 MiB, and the exported file changed nothing. */
static int runs_own_choice(struct mod_ctx *c, const struct ct_mod_row *r, const char *ran)
{
    if (!c->spy)
        return 0;
    if (r->id == 0) { /* the default row: what its own decision ran, for the other rows */
        own_note(c, ran);
        return 0;
    }
    if (!c->distinct || r->a.params)
        return 0;
    const char *own = own_choice(c);
    int same = ran && own && !strcmp(ran, own), all = 0;
    MPI_Allreduce(&same, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    return all;
}

/* With a spy that wraps every algorithm a forced row can run: 1 when forced row r's call ran
 * none of them on some rank (collective; every rank asks alike). On Open MPI 5.0, coll/han
 * (priority 35, above coll/tuned's 30) serves a communicator across hosts with several
 * ranks on a host, and runs its own hierarchical algorithms there: the forced coll/tuned
 * algorithm does not run, and every forced row measured han. */
static int ran_none(struct mod_ctx *c, const struct ct_mod_row *r, const char *ran)
{
    if (!c->spy || !c->spy_none || r->id == 0 || c->j.count == 0) /* 0: no algorithm runs */
        return 0;
    int none = ran == NULL, any = 0;
    MPI_Allreduce(&none, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    return any;
}

/* Where the reason of one line of an error string starts: after MPICH's "FUNC(LINE)....: ",
 * at b for a line without it (Open MPI's), NULL for a line cut in that head. */
static const char *line_reason(const char *b, const char *e, bool cut)
{
    const char *p = memchr(b, '(', (size_t)(e - b));
    if (!p || memchr(b, ' ', (size_t)(p - b)))
        return cut ? NULL : b;
    while (++p < e && *p >= '0' && *p <= '9')
        ;
    if (p < e && *p == ')')
        while (++p < e && *p == '.')
            ;
    if (p < e && *p == ':')
        return p + 1 < e ? p + 2 : e;
    return cut ? NULL : b;
}

/*
 * Why a call failed, from the library's error string es: the reason of its last line that
 * gives one (MPICH's stack of calls, "MPIR_Allgather_impl(2044): User set collective
 * algorithm is not usable for the provided arguments"; Open MPI's one line). MPICH's stack
 * can fill the string, cut mid-word (cut: mpich:smp on 2 ranks, "MPIR_Bcast_intra_binomial(
 * 174)..........: Failure during collecti"): that line keeps its whole words and *more is
 * set. Its length at *why, 0 when no line gives one.
 */
static int error_reason(const char *es, bool cut, const char **why, bool *more)
{
    const char *e = es + strlen(es);
    for (*more = cut; e > es; e--, *more = false) {
        const char *b = e;
        while (b > es && b[-1] != '\n')
            b--;
        const char *r = line_reason(b, e, *more), *w = e;
        if (r && *more) /* to the end of its last whole word */
            while (w > r && w[-1] != ' ')
                w--;
        while (r && w > r && w[-1] == ' ')
            w--;
        if (r && w > r) {
            *why = r;
            return (int)(w - r);
        }
        e = b;
        if (e == es)
            break;
    }
    return 0;
}

/* Whether a call of the prepared point (this rank's: rc) failed on some rank, every rank
 * taking the same way on (a refusal can reach some ranks only): 0 where none did, else the
 * library's error string says why; a forced algorithm that refuses a point is no candidate
 * there (CT_EUNSUPP: the planner skips it), the default is (CT_EIO). */
static int agreed(const struct mod_ctx *c, int rc, struct ct_err *err)
{
    int failed = rc != MPI_SUCCESS, any = 0;
    MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (!any)
        return 0;
    char es[MPI_MAX_ERROR_STRING] = "another rank failed";
    int el = 0;
    if (failed)
        MPI_Error_string(rc, es, &el);
    size_t n = strlen(es);
    bool cut = n + 2 >= sizeof es, more; /* filled: MPICH 4.0.2 cuts at 2 bytes short */
    while (n && (es[n - 1] == '\n' || es[n - 1] == ' ') && !cut)
        es[--n] = 0;
    const char *why = "(no reason given)";
    int wl = error_reason(es, cut, &why, &more);
    return ct_err_set(err, c->row->id > 0 ? CT_EUNSUPP : CT_EIO,
                      "%s cannot run this point in %s: %.*s%s", c->row->name, ct_mod_lib_title(),
                      wl ? wl : (int)strlen(why), why, more ? " ..." : "");
}

/* One call of the prepared point with its row's forcing on */
static int call_forced(struct mod_ctx *c)
{
    ct_mod_lib_force(c->lib, true);
    int rc = call(c);
    ct_mod_lib_force(c->lib, false);
    return rc;
}

/* Wrong elements of the last call's output, summed over the ranks */
static long wrong_sum(const struct mod_ctx *c)
{
    long mine = check(c), all = 0;
    MPI_Allreduce(&mine, &all, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    return all;
}

static int mod_begin(void *ctx, const struct ct_algo *a, const struct ct_job *j, bool verify,
                     long *wrong, struct ct_err *err)
{
    struct mod_ctx *c = ctx;
    TICK();
    release_point(c);
    c->j = *j;
    c->dt = mpi_type(j->dtype);
    c->es = ct_dtype_size(j->dtype);
    c->op = j->op == CT_SUM    ? MPI_SUM
            : j->op == CT_PROD ? MPI_PROD
            : j->op == CT_MIN  ? MPI_MIN
            : j->op == CT_MAX  ? MPI_MAX
                               : MPI_OP_NULL;
    bool reduces = j->coll == CT_ALLREDUCE || j->coll == CT_REDUCESCATTER;
    if (c->dt == MPI_DATATYPE_NULL || (c->op == MPI_OP_NULL && reduces) ||
        j->quant != CT_QUANT_NONE)
        return ct_err_set(err, CT_EUNSUPP, "%s engine: MPI has no %s %s", ct_mod_lib_title(),
                          c->dt == MPI_DATATYPE_NULL  ? "datatype for -d"
                          : j->quant != CT_QUANT_NONE ? "quantized"
                                                      : "reduction for --op",
                          c->dt == MPI_DATATYPE_NULL  ? ct_dtype_name(j->dtype)
                          : j->quant != CT_QUANT_NONE ? "wire format"
                                                      : ct_redop_name(j->op));
    if (j->count > (uint64_t)INT32_MAX / (uint64_t)c->size)
        return ct_err_set(err, CT_EUNSUPP, "%s engine: count beyond MPI's int", ct_mod_lib_title());
    const struct ct_mod_row *r = row_of(c, j->coll, a, err);
    if (!r)
        return CT_EUNSUPP;
    size_t in, ns, nr;
    lengths(c, &in, &ns, &nr);
    c->send_len = (ns ? ns : 1) * c->es;
    c->recv_len = (nr ? nr : 1) * c->es;
    c->send = buf_map(c->send_len);
    c->recv = buf_map(c->recv_len);
    c->rcounts = calloc((size_t)c->size, sizeof *c->rcounts);
    if (!c->send || !c->recv || !c->rcounts) {
        release_point(c);
        return ct_err_set(err, CT_ENOMEM, "%s engine: no memory for %zu elements",
                          ct_mod_lib_title(), nr);
    }
    for (int q = 0; q < c->size; q++)
        c->rcounts[q] = (int)j->count;
    c->row = r;
    c->seed = SEED;
    int rc = ct_mod_lib_comm(c->lib, r, j, &c->comm, err);
    if (rc < 0) {
        release_point(c);
        return rc;
    }
    if (!verify)
        return 0;
    bool filled = false;
    if (c->spy && c->hosts) {
        /* a first call sets up what the communicator's components set up on their first call:
         * coll/han's sub-communicators, through coll/tuned's own collectives on this one (the
         * spy saw a forced `ring` run han's 6-element set-up allreduce, not the point's); its
         * output is cleared, so that the checked call must write all of its own */
        fill(c);
        if ((rc = agreed(c, call_forced(c), err)) < 0) {
            release_point(c);
            return rc;
        }
        memset(c->recv, 0xff, c->recv_len); /* poisoned again, as fill() does */
        filled = !c->j.in_place; /* out of place, send still holds the inputs */
    }
    if (!filled)
        fill(c);
    if (c->spy)
        c->spy(); /* cleared: what this call runs */
    int crc = call_forced(c);
    const char *ran = c->spy ? c->spy() : NULL;
    if ((rc = agreed(c, crc, err)) < 0) {
        release_point(c);
        return rc;
    }
    long all = wrong_sum(c);
    *wrong = all;
    if (all == 0 && ran_none(c, r, ran)) {
        release_point(c);
        return ct_err_set(err, CT_EUNSUPP, "%s does not run here: %s", a->name, c->spy_none);
    }
    if (all == 0 && runs_own_choice(c, r, ran)) {
        release_point(c);
        return ct_err_set(err, CT_EUNSUPP, "%s runs %s here, as %s's own choice does", a->name, ran,
                          ct_mod_lib_title());
    }
    return 0;
}

static void mod_distinct(void *ctx, bool on)
{
    ((struct mod_ctx *)ctx)->distinct = on;
}

static int mod_time(void *ctx, int warmup, int iters, int reps, double *out_us, struct ct_err *err)
{
    TICK();
    reps = reps > 1 ? reps : 1;
    struct mod_ctx *c = ctx;
    if (c->comm == MPI_COMM_NULL)
        return ct_err_set(err, CT_EINVAL, "no point prepared");
    if (!c->held) /* in place, the last call left its output where the inputs go */
        fill(c);
    int rc = MPI_SUCCESS;
    ct_mod_lib_force(c->lib, true);
    for (int i = 0; i < warmup && rc == MPI_SUCCESS; i++)
        rc = call(c);
    for (int i = 0; i < iters && rc == MPI_SUCCESS; i++) {
        if ((rc = MPI_Barrier(c->comm)) != MPI_SUCCESS) /* its errors return, as the calls' */
            break;
        double t0 = MPI_Wtime();
        for (int r = 0; r < reps && rc == MPI_SUCCESS; r++)
            rc = call(c);
        out_us[i] = (MPI_Wtime() - t0) * 1e6 / reps;
    }
    ct_mod_lib_force(c->lib, false);
    CT_TRY(agreed(c, rc, err)); /* as mod_begin's check says it (it may not have run: -c 0) */
    MPI_Allreduce(MPI_IN_PLACE, out_us, iters, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return 0;
}

/* The prepared point checked again after its timed calls, on inputs of its own (pass k:
 * seed + k), the output poisoned first (backend.h recheck). */
static int mod_recheck(void *ctx, int pass, long *wrong, struct ct_err *err)
{
    TICK();
    struct mod_ctx *c = ctx;
    if (c->comm == MPI_COMM_NULL)
        return ct_err_set(err, CT_EINVAL, "no point prepared");
    c->seed = SEED + (uint64_t)pass;
    fill(c);
    CT_TRY(agreed(c, call_forced(c), err));
    *wrong = wrong_sum(c);
    return 0;
}

static void mod_end(void *ctx)
{
    TICK();
    release_point(ctx);
}

static double mod_now(void *ctx)
{
    return MPI_Wtime();
}

static int mod_bcast(void *ctx, void *buf, size_t len, struct ct_err *err)
{
    TICK();
    if (len > INT32_MAX || MPI_Bcast(buf, (int)len, MPI_BYTE, 0, MPI_COMM_WORLD) != MPI_SUCCESS)
        return ct_err_set(err, CT_EIO, "MPI_Bcast of %zu bytes failed", len);
    TICK();
    return 0;
}

static int mod_candidates(void *ctx, enum ct_coll coll, const struct ct_algo **out, int max,
                          struct ct_err *err)
{
    struct mod_ctx *c = ctx;
    struct ct_mod_row *rows;
    int n = ct_mod_lib_rows(c->lib, coll, &rows, err);
    for (int i = 0; i < n && i < max; i++)
        out[i] = &rows[i].a;
    return n;
}

static void mod_close(void *ctx)
{
    struct mod_ctx *c = ctx;
    release_point(c);
    ct_mod_lib_close(c->lib);
    MPI_T_finalize(); /* before MPI_Finalize: Open MPI 4.1 crashes the other way round */
    MPI_Finalize();
    free(c->ranks);
    free(c);
}

/* Every rank's host, pid, node and place on it: a node is a shared-memory communicator (the
 * library's own split), numbered in the order of its lowest rank. NULL when out of memory. */
static struct ct_rank_info *places(const struct mod_ctx *c, MPI_Comm node, const char *reach)
{
    struct ct_rank_info mine = {.rank = c->rank, .pid = (long)getpid()}, *all;
    snprintf(mine.reach, sizeof mine.reach, "%s", reach ? reach : "");
    int len = 0, lead = c->rank;
    char name[MPI_MAX_PROCESSOR_NAME];
    MPI_Get_processor_name(name, &len);
    snprintf(mine.host, sizeof mine.host, "%.*s", len, name);
    snprintf(mine.device, sizeof mine.device, "%2d [cpu]", 0); /* host memory */
    MPI_Comm_rank(node, &mine.local_rank);
    MPI_Bcast(&lead, 1, MPI_INT, 0, node); /* the node's lowest rank (key 0: world order) */
    mine.node = lead;
    all = calloc((size_t)c->size, sizeof *all);
    int ok = all != NULL, all_ok;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!all_ok) {
        free(all);
        return NULL;
    }
    MPI_Allgather(&mine, (int)sizeof mine, MPI_BYTE, all, (int)sizeof mine, MPI_BYTE,
                  MPI_COMM_WORLD);
    /* .node holds the node's lowest rank: its number is how many nodes' lowest ranks come
     * before it (from the last rank down, so that those below are still read as gathered) */
    for (int r = c->size - 1; r >= 0; r--) {
        int low = all[r].node;
        all[r].node = 0;
        for (int q = 0; q < low; q++)
            all[r].node += all[q].node == q;
    }
    return all;
}

enum { TAG_LOW = 0x7c01, TAG_LINE = 0x7c02 };

/* The least of every rank's v, on every rank: a binomial tree of point-to-point messages,
 * which no rules file reaches (a collective would run the very rules a rank refused: Open
 * MPI fails an MPI_Allreduce whose rule names an algorithm it does not have). */
static int least_p2p(int rank, int size, int v)
{
    int mask = 1, got;
    for (; mask < size; mask <<= 1) { /* up to rank 0 */
        if (rank & mask) {
            MPI_Send(&v, 1, MPI_INT, rank - mask, TAG_LOW, MPI_COMM_WORLD);
            break;
        }
        if (rank + mask < size) {
            MPI_Recv(&got, 1, MPI_INT, rank + mask, TAG_LOW, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            v = got < v ? got : v;
        }
    }
    if (rank) /* down from rank 0: from the rank that took this one's value */
        MPI_Recv(&v, 1, MPI_INT, rank - mask, TAG_LOW, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    for (mask >>= 1; mask > 0; mask >>= 1)
        if (rank + mask < size)
            MPI_Send(&v, 1, MPI_INT, rank + mask, TAG_LOW, MPI_COMM_WORLD);
    return v;
}

/* The library part opened on every rank, or none: where one rank refused (its rules file,
 * say, before MPI_Init (pre) or after it: the environment or file system may differ between
 * hosts, or between the ranks of an MPMD launch), every rank fails, rank 0 with that rank's
 * line (the lowest such rank's), naming it where it is not rank 0, rather than the others
 * waiting in a collective for it until a bound ends the job. Then the library's own
 * agreements (ct_mod_lib_agreed), once every rank's check has passed. */
static int agree_open(struct mod_ctx *c, int prc, const struct ct_err *pre, struct ct_err *err)
{
    int rc = prc < 0 ? prc : ct_mod_lib_open(&c->lib, err);
    if (prc < 0)
        *err = *pre;
    if (rc < 0)
        c->lib = NULL;
    int low = least_p2p(c->rank, c->size, rc < 0 ? c->rank : c->size);
    if (low == c->size)
        return ct_mod_lib_agreed(c->lib);
    char line[sizeof err->msg + MPI_MAX_PROCESSOR_NAME + 32], host[MPI_MAX_PROCESSOR_NAME];
    int len = 0;
    ct_mod_lib_close(c->lib);
    c->lib = NULL;
    if (c->rank == low && low) { /* to rank 0, which says it */
        MPI_Get_processor_name(host, &len);
        snprintf(line, sizeof line, "rank %d on %.*s: %s", c->rank, len, host, err->msg);
        MPI_Send(line, (int)strlen(line) + 1, MPI_CHAR, 0, TAG_LINE, MPI_COMM_WORLD);
    } else if (c->rank == 0 && low) {
        MPI_Recv(line, (int)sizeof line, MPI_CHAR, low, TAG_LINE, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
        return ct_err_set(err, CT_EUNSUPP, "%s", line);
    }
    return rc < 0 ? rc : ct_err_set(err, CT_EUNSUPP, "rank %d refused (rank 0 says why)", low);
}

__attribute__((visibility("default"))) int ct_libmod_entry(int abi, struct ct_backend *be,
                                                           void **ctx, struct ct_err *err);
int ct_libmod_entry(int abi, struct ct_backend *be, void **ctx, struct ct_err *err)
{
    if (abi != CT_LIBMOD_ABI)
        return ct_err_set(err, CT_EUNSUPP, "engine module of another colltune (ABI %d, not %d)",
                          CT_LIBMOD_ABI, abi);
    int provided;
    char reach[CT_ALIVE_LEN]; /* be's, which the entry clears */
    snprintf(reach, sizeof reach, "%s", be->reach ? be->reach : "");
    struct ct_err pre = {0};
    /* a refusal is said after MPI_Init, agreed (agree_open) */
    int prc = be->refused ? ct_err_set(&pre, CT_EINVAL, "refused before it started (said above)")
                          : ct_mod_preinit(&pre);
    if (MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) != MPI_SUCCESS ||
        MPI_Init(NULL, NULL) != MPI_SUCCESS)
        return ct_err_set(err, CT_EIO, "%s: MPI_Init failed", ct_mod_lib_title());
    struct mod_ctx *c = calloc(1, sizeof *c);
    if (!c)
        return ct_err_set(err, CT_ENOMEM, "no memory");
    c->comm = MPI_COMM_NULL;
    MPI_Comm_rank(MPI_COMM_WORLD, &c->rank);
    MPI_Comm_size(MPI_COMM_WORLD, &c->size);
    int rc = agree_open(c, prc, &pre, err);
    if (rc < 0) {
        /* rank 0 has the line to say (agree_open) and says it, then all close; finalizing
         * is collective, so no rank leaves, making the launcher stop the others, before
         * that line is out */
        memset(be, 0, sizeof *be);
        be->close = mod_close;
        be->agreed = true;
        be->root = c->rank == 0;
        be->shape.nranks = c->size;
        be->shape.rank = c->rank;
        *ctx = c;
        return rc;
    }
    char v[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    MPI_Get_library_version(v, &len);
    /* "Open MPI v4.1.4, package: ...", "MPICH Version:\t4.0.2\n...": the first number */
    char *num = v + strcspn(v, "0123456789");
    num[strspn(num, "0123456789.")] = 0;
    snprintf(c->library, sizeof c->library, "%s %.40s", ct_mod_lib_title(), num);
    memset(be, 0, sizeof *be);
    be->name = "library";
    be->begin = mod_begin;
    be->time = mod_time;
    be->recheck = mod_recheck;
    be->end = mod_end;
    be->now_s = mod_now;
    be->bcast = mod_bcast;
    be->candidates = mod_candidates;
    be->distinct = mod_distinct;
    be->progress = mod_progress;
    *(void **)&c->spy = dlsym(RTLD_DEFAULT, "colltune_shim_last");
    const char *(*none)(void);
    *(void **)&none = dlsym(RTLD_DEFAULT, "colltune_shim_none");
    c->spy_none = none ? none() : NULL;
    be->close = mod_close;
    be->library = c->library;
    be->root = c->rank == 0;
    be->shape.nranks = c->size;
    be->shape.rank = c->rank;
    MPI_Comm node;
    int local = 0;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_size(node, &local);
    c->ranks = places(c, node, reach);
    be->ranks = c->ranks;
    MPI_Comm_free(&node);
    int lo = local, hi = local;
    MPI_Allreduce(MPI_IN_PLACE, &lo, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, &hi, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    be->shape.ranks_per_node = lo == hi && c->size % lo == 0 ? lo : 0;
    c->hosts = lo < c->size;
    /* the spy's answers take collectives: used only where every rank has it (a host without
     * it, or another Open MPI, would pair them with the wrong calls) */
    int spy = c->spy != NULL;
    MPI_Allreduce(MPI_IN_PLACE, &spy, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!spy)
        c->spy = NULL;
    int all_none = c->spy_none != NULL; /* the same check on every rank */
    MPI_Allreduce(MPI_IN_PLACE, &all_none, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!all_none)
        c->spy_none = NULL;
    *ctx = c;
    return 0;
}
