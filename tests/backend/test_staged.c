/* SPDX-License-Identifier: MIT */
/*
 * A job whose buffers are in another memory kind (run/sweep --mem cuda): staged through
 * host buffers the transports move (backend/bench.h). Without a GPU the staged path runs on
 * host memory through a kind that says it is not host-visible (so the bench stages it, as it
 * does cuda) and counts the bytes copied each way: every collective and type, in and out of
 * place, is exact; each run copies its inputs in and its output out; a check reads the job's
 * buffer, not the host copy. Suite gpu: the same on CUDA memory where a GPU is (SKIP, with
 * the reason, elsewhere; `make test-gpu`).
 */
#include <criterion/criterion.h>
#include <stdatomic.h>

#include "device/device.h"
#include "tests/loopworld.h"

static _Atomic unsigned long long g_in, g_out; /* bytes to host, from host (every rank) */
static size_t g_drop;                          /* copies of this size from host are lost */
static size_t g_alloc_max;                     /* allocations above this fail (0: none) */
static struct ct_mem_kind g_kind;              /* host memory, staged */

static int count_to_host(struct ct_mem *m, void *h, const void *src, size_t n, struct ct_err *e)
{
    g_in += n;
    return ct_mem_kind_find("host")->to_host(m, h, src, n, e);
}

static int count_from_host(struct ct_mem *m, void *dst, const void *h, size_t n, struct ct_err *e)
{
    g_out += n;
    if (n == g_drop)
        return 0;
    return ct_mem_kind_find("host")->from_host(m, dst, h, n, e);
}

static int limited_alloc(struct ct_mem *m, size_t bytes, void **p, struct ct_err *e)
{
    if (g_alloc_max && bytes > g_alloc_max)
        return ct_err_set(e, CT_ENOMEM, "host-staged: %zu bytes: out of device memory", bytes);
    CT_TRY(ct_mem_kind_find("host")->alloc(m, bytes, p, e));
    memset(*p, 0, bytes); /* what a lost copy leaves is known */
    return 0;
}

static void staged_kind(void)
{
    g_kind = *ct_mem_kind_find("host");
    g_kind.name = "host-staged";
    g_kind.host_visible = false;
    g_kind.to_host = count_to_host;
    g_kind.from_host = count_from_host;
    g_kind.alloc = limited_alloc;
    g_drop = 0;
    g_alloc_max = 0;
}

struct sjob {
    const char *kind; /* NULL: g_kind */
    const char *algo;
    enum ct_coll coll;
    enum ct_dtype dtype;
    enum ct_redop op;
    bool in_place;
    uint64_t count;
    int warmup, iters;
    long wrong;
    size_t reserve; /* bench reserve of the receive buffer (a sweep's), 0 none */
};

static int open_kind(struct sjob *s, struct ct_mem *m, struct ct_err *err)
{
    if (s->kind)
        return ct_mem_open(m, s->kind, 0, err);
    memset(m, 0, sizeof *m);
    m->kind = &g_kind;
    m->gpu = -1;
    return 0;
}

static int staged_rank(struct ct_comm *c, void *arg, struct ct_err *err)
{
    struct sjob *s = arg;
    struct ct_mem m;
    CT_TRY(open_kind(s, &m, err));
    struct ct_bench b;
    ct_bench_init(&b, c, 7);
    ct_bench_set_mem(&b, &m);
    b.reserve[CT_BUF_RECV] = s->reserve;
    struct ct_job j;
    memset(&j, 0, sizeof j);
    j.coll = s->coll;
    j.dtype = s->dtype;
    j.op = s->op;
    j.count = s->count;
    j.in_place = s->in_place;
    struct ct_bench_cfg cfg = {s->iters, s->warmup, 1, 1, 0};
    struct ct_point p;
    int rc = ct_bench_point(&b, ct_algo_find(s->algo), &j, &cfg, &p, err);
    if (rc == 0 && c->rank == 0)
        s->wrong = p.wrong;
    ct_bench_release(&b);
    if (s->kind)
        ct_mem_close(&m);
    return rc;
}

/* Every collective in and out of place at 1 and 70001 elements: every type (each with one
 * of the reductions in turn) under ring (mesh for AllToAll), and float32 sums under a second
 * set of algorithms, as nccl-tests checks every type. */
static void run_all(const char *kind)
{
    static const char *const algos[][CT_COLL_COUNT] = {
        {"ring", "ring", "ring", "mesh"}, /* allreduce, allgather, reducescatter, alltoall */
        {"rdh", "mesh", "mesh", "bruck"},
    };
    for (int t = 0; t < CT_DTYPE_COUNT + 1; t++)
        for (int coll = 0; coll < CT_COLL_COUNT; coll++)
            for (int ip = 0; ip < 2; ip++)
                for (uint64_t count = 1; count <= 70001; count += 70000) {
                    bool second = t == CT_DTYPE_COUNT;
                    const char *al = algos[second][coll];
                    struct sjob s = {kind,
                                     al,
                                     (enum ct_coll)coll,
                                     second ? CT_FLOAT32 : (enum ct_dtype)t,
                                     second ? CT_SUM : (enum ct_redop)(t % CT_REDOP_COUNT),
                                     ip,
                                     count,
                                     1,
                                     2,
                                     -1,
                                     0};
                    struct ct_err err = {0};
                    cr_assert_eq(lw_run(4, 0, staged_rank, &s, &err), 0, "%s %s: %s", al,
                                 ct_coll_name(s.coll), err.msg);
                    cr_assert_eq(s.wrong, 0, "%s %s %s %s %s count %llu: %ld wrong", al,
                                 ct_coll_name(s.coll), ct_dtype_name(s.dtype), ct_redop_name(s.op),
                                 ip ? "in place" : "out of place", (unsigned long long)count,
                                 s.wrong);
                }
}

Test(staged, every_collective_exact)
{
    staged_kind();
    run_all(NULL);
}

/* Every run moves the job's inputs in and its output out: warmup + iters timed runs, one
 * checked run, and the check's fill, poison and read-back, on each of the 4 ranks. */
Test(staged, every_run_copies_in_and_out)
{
    staged_kind();
    const uint64_t count = 1000;
    struct sjob s = {NULL, "ring", CT_ALLGATHER, CT_FLOAT32, CT_SUM, false, count, 3, 5, -1, 0};
    struct ct_err err = {0};
    g_in = g_out = 0;
    cr_assert_eq(lw_run(4, 0, staged_rank, &s, &err), 0, "%s", err.msg);
    cr_assert_eq(s.wrong, 0);
    unsigned long long sb = count * 4, rb = 4 * count * 4, runs = 3 + 5 + 1;
    /* in: each run's inputs, and the checked run's output read back */
    cr_assert_eq(g_in, 4 * (runs * sb + rb), "to host: %llu bytes", (unsigned long long)g_in);
    /* out: each run's output, the fills of the timed and the checked runs, the poison */
    cr_assert_eq(g_out, 4 * (runs * rb + 2 * sb + rb), "from host: %llu bytes",
                 (unsigned long long)g_out);
}

/* The check reads the job's output where the job has it: an output that never reaches the
 * job's buffer is wrong, though the host copy the schedule wrote is right. */
Test(staged, check_reads_the_jobs_buffer)
{
    staged_kind();
    const uint64_t count = 1000;
    struct sjob s = {NULL, "ring", CT_ALLGATHER, CT_FLOAT32, CT_SUM, false, count, 0, 1, -1, 0};
    struct ct_err err = {0};
    g_drop = 4 * count * 4; /* the output (and the poison) never arrive */
    cr_assert_eq(lw_run(4, 0, staged_rank, &s, &err), 0, "%s", err.msg);
    cr_assert_gt(s.wrong, 0, "an output lost on its way back must be counted wrong");
}

/* A sweep's reserve whose twin does not fit in device memory: the point is made at its own
 * size instead (as a host buffer that does not fit), and is exact. */
Test(staged, reserve_falls_back_when_the_twin_does_not_fit)
{
    staged_kind();
    g_alloc_max = 256u << 10;
    struct sjob s = {NULL, "ring", CT_ALLREDUCE, CT_FLOAT32, CT_SUM, false, 1000,
                     1,    2,      -1,           64u << 20};
    struct ct_err err = {0};
    cr_assert_eq(lw_run(2, 0, staged_rank, &s, &err), 0, "%s", err.msg);
    cr_expect_eq(s.wrong, 0);
    s.count = 1u << 20; /* 4 MiB: neither fits; said, not crashed */
    s.reserve = 0;
    cr_expect_lt(lw_run(2, 0, staged_rank, &s, &err), 0);
    cr_expect(strstr(err.msg, "out of device memory"), "%s", err.msg);
}

Test(gpu, staged_cuda_every_collective)
{
    struct ct_mem m;
    struct ct_err err = {0};
    if (ct_mem_open(&m, "cuda", 0, &err) < 0) {
        cr_assert_eq(err.code, CT_EUNSUPP, "%s", err.msg);
        cr_skip_test("cuda memory cannot run here: %s", err.msg);
    }
    ct_mem_close(&m);
    run_all("cuda");
}
