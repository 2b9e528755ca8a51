/* SPDX-License-Identifier: MIT */
/*
 * The resident path (backend/resident.h, the executor's run_resident) with real processes:
 * the parent forks ranks that bring up the TCP bootstrap and the shm transport, put their
 * buffers in host-ipc memory (cuda's shape: peers map them by handle, work is queued until
 * sync), exchange handles and run hand-made schedules the algorithms never make:
 *  - several sends to one peer in one step, received over three steps of differing sizes,
 *    while the receiver waits for an acknowledgement of its own send: the descriptors queue
 *    up (two at once) and must be taken in order;
 *  - a rank that cannot map a peer's buffer: every rank learns it (CT_EUNSUPP, naming the
 *    rank), so the job can stage instead;
 *  - a failed run leaves the executor refusing later runs (CT_EIO, never CT_EUNSUPP).
 * Each child reports by its exit status.
 */
#include <criterion/criterion.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "backend/comm.h"
#include "backend/exec.h"
#include "backend/resident.h"
#include "lib/clock.h"
#include "lib/sock.h"
#include "transport/boot.h"
#include "transport/shm.h"

#define SEC 1000000000LL
#define BUF 4096

struct rank {
    int rank, n;
    struct ct_boot *boot;
    struct ct_comm comm;
    struct ct_mem mem;
    void *buf[CT_BUF_COUNT];
    struct ct_resident res;
    struct ct_err err;
};

typedef int (*rank_fn)(struct rank *r);

static int say(struct rank *r, const char *what)
{
    fprintf(stderr, "rank %d: %s: %s\n", r->rank, what, r->err.msg);
    return 1;
}

/* every byte of buffer i: a pattern of the rank and the offset */
static unsigned char pat(int rank, int i, size_t off)
{
    return (unsigned char)(rank * 71 + i * 13 + off * 7 + 1);
}

static int child(int rank, int n, int lfd, int port, rank_fn fn, const struct ct_mem_kind *kind)
{
    struct rank r = {.rank = rank, .n = n};
    char root[64];
    snprintf(root, sizeof root, "127.0.0.1:%d", port);
    if (ct_boot_tcp_open(&r.boot, rank, n, root, rank == 0 ? lfd : -1,
                         ((uint64_t)getppid() << 32) ^ 0x7e51de47ull, NULL, 10 * SEC, &r.err) < 0)
        return say(&r, "bootstrap");
    struct ct_comm_cfg cc;
    memset(&cc, 0, sizeof cc);
    cc.transport = "shm";
    cc.timeout_ns = 5 * SEC;
    if (ct_comm_open(&r.comm, r.boot, &cc, &r.err) < 0)
        return say(&r, "communicator");
    if (kind) {
        memset(&r.mem, 0, sizeof r.mem);
        r.mem.kind = kind;
        if (kind->open(&r.mem, &r.err) < 0)
            return say(&r, "memory");
    } else if (ct_mem_open(&r.mem, "host-ipc", 0, &r.err) < 0) {
        return say(&r, "memory");
    }
    unsigned char host[BUF];
    for (int i = 0; i < CT_BUF_COUNT; i++) {
        if (ct_mem_alloc(&r.mem, BUF, &r.buf[i], &r.err) < 0)
            return say(&r, "alloc");
        for (size_t k = 0; k < BUF; k++)
            host[k] = pat(rank, i, k);
        if (ct_mem_from_host(&r.mem, r.buf[i], host, BUF, &r.err) < 0)
            return say(&r, "fill");
    }
    ct_resident_init(&r.res, &r.mem);
    int rc = fn(&r);
    ct_resident_release(&r.res);
    ct_boot_barrier(r.boot, &r.err); /* the peers let go of this rank's buffers first */
    for (int i = 0; i < CT_BUF_COUNT; i++)
        ct_mem_free(&r.mem, r.buf[i]);
    r.mem.kind->close(&r.mem);
    ct_comm_close(&r.comm);
    ct_boot_close(r.boot);
    return rc;
}

/* Runs fn on n forked ranks (kind NULL: host-ipc); exit codes in code[]. */
static void run_ranks(int n, rank_fn fn, const struct ct_mem_kind *kind, int *code)
{
    struct ct_err err = {0};
    int port = 0, lfd = ct_sock_listen(NULL, 0, 16, &port, &err);
    cr_assert(lfd >= 0, "listen: %s", err.msg);
    pid_t pids[8];
    fflush(stdout);
    fflush(stderr);
    for (int r = 0; r < n; r++) {
        pids[r] = fork();
        cr_assert(pids[r] >= 0);
        if (pids[r] == 0) {
            alarm(30); /* nothing hangs: a stuck rank dies, and its exit says so */
            _exit(child(r, n, lfd, port, fn, kind));
        }
    }
    close(lfd);
    for (int r = 0; r < n; r++) {
        int st;
        cr_assert_eq(waitpid(pids[r], &st, 0), pids[r]);
        code[r] = WIFEXITED(st) ? WEXITSTATUS(st) : 100 + WTERMSIG(st);
    }
}

/* Every rank of fn on n forked ranks exits 0. */
static void expect_pass(int n, rank_fn fn, const struct ct_mem_kind *kind)
{
    int code[8];
    run_ranks(n, fn, kind, code);
    for (int r = 0; r < n; r++)
        cr_expect_eq(code[r], 0, "rank %d exited %d", r, code[r]);
}

/* The rank's three buffers offered (ok: it can run the point in place). */
static int exchange_ok(struct rank *r, bool ok)
{
    struct ct_resident_mine me = {.ok = ok};
    for (int i = 0; i < CT_BUF_COUNT; i++) {
        me.base[i] = me.buf[i] = r->buf[i];
        me.cap[i] = me.len[i] = BUF;
    }
    return ct_resident_exchange(&r->res, &r->comm, &me, &r->err);
}

static int exchange(struct rank *r)
{
    return exchange_ok(r, true);
}

static void host_sum(void *dst, const void *a, const void *b, size_t n)
{
    const float *x = a, *y = b;
    float *d = dst;
    for (size_t i = 0; i < n; i++)
        d[i] = x[i] + y[i];
}

/* s run in place on the rank's buffers by executor x (float32 sums). */
static int run_on(struct rank *r, struct ct_sched *s, struct ct_exec *x)
{
    static const struct ct_mem_red red = {"float32", "sum", 4, host_sum};
    struct ct_exec_args a = {.chunk = 4, .depth = 1, .threads = 1, .res = &r->res, .mred = &red};
    for (int i = 0; i < CT_BUF_COUNT; i++)
        a.buf[i] = r->buf[i];
    return ct_exec_run(x, &r->comm, s, &a, &r->err);
}

static int run(struct rank *r, struct ct_sched *s)
{
    struct ct_exec x;
    ct_exec_init(&x);
    int rc = run_on(r, s, &x);
    ct_exec_release(&x);
    return rc;
}

/*
 * Rank 0, one step: sends A (100 B), B (200 B), C (300 B) to rank 1, and receives X from it.
 * Rank 1: step 1 sends X and receives A; step 2 receives B; step 3 receives C. Rank 1 waits
 * in step 1 for X's acknowledgement, which comes after B's and C's descriptors: both queue.
 */
static int queued_descriptors(struct rank *r)
{
    struct ct_sched s;
    ct_sched_init(&s);
    ct_sched_step(&s);
    if (r->rank == 0) {
        ct_sched_send(&s, 1, ct_loc(CT_BUF_SEND, 0), 100);
        ct_sched_send(&s, 1, ct_loc(CT_BUF_SEND, 100), 200);
        ct_sched_send(&s, 1, ct_loc(CT_BUF_SEND, 300), 300);
        ct_sched_recv(&s, 1, ct_loc(CT_BUF_RECV, 1000), 64);
    } else {
        ct_sched_send(&s, 0, ct_loc(CT_BUF_SCRATCH, 8), 64);
        ct_sched_recv(&s, 0, ct_loc(CT_BUF_RECV, 0), 100);
        ct_sched_step(&s);
        ct_sched_recv(&s, 0, ct_loc(CT_BUF_RECV, 100), 200);
        ct_sched_step(&s);
        ct_sched_recv(&s, 0, ct_loc(CT_BUF_RECV, 300), 300);
    }
    ct_sched_finish(&s);
    int rc = exchange(r) == 0 ? run(r, &s) : -1;
    ct_sched_release(&s);
    if (rc < 0)
        return say(r, "run");
    unsigned char got[BUF];
    if (ct_mem_to_host(&r->mem, got, r->buf[CT_BUF_RECV], BUF, &r->err) < 0)
        return say(r, "read back");
    for (size_t k = 0; k < BUF; k++) {
        unsigned char want = pat(r->rank, CT_BUF_RECV, k); /* untouched */
        if (r->rank == 1 && k < 600)
            want = pat(0, CT_BUF_SEND, k);
        if (r->rank == 0 && k >= 1000 && k < 1064)
            want = pat(1, CT_BUF_SCRATCH, k - 1000 + 8);
        if (got[k] != want) {
            fprintf(stderr, "rank %d: byte %zu is %u, want %u\n", r->rank, k, got[k], want);
            return 1;
        }
    }
    return 0;
}

Test(resident, descriptors_queue_in_order_across_steps)
{
    expect_pass(2, queued_descriptors, NULL);
}

/* A reduction with the incoming operand first (rev) and a one-sided get, 3 ranks in a ring. */
static int ring_reduce(struct rank *r)
{
    int next = (r->rank + 1) % r->n, prev = (r->rank + r->n - 1) % r->n;
    struct ct_sched s;
    ct_sched_init(&s);
    ct_sched_step(&s);
    ct_sched_send(&s, next, ct_loc(CT_BUF_SEND, 0), 1024);
    ct_sched_recv_reduce_rev(&s, prev, ct_loc(CT_BUF_RECV, 0), ct_loc(CT_BUF_RECV, 0), 1024);
    ct_sched_step(&s);
    ct_sched_sync(&s, next);
    ct_sched_sync(&s, prev);
    ct_sched_get(&s, next, ct_loc(CT_BUF_SCRATCH, 2048), ct_loc(CT_BUF_SEND, 0), 512);
    ct_sched_step(&s);
    ct_sched_sync(&s, next);
    ct_sched_sync(&s, prev);
    ct_sched_finish(&s);
    /* float32 inputs: small integers, so the sums are exact */
    float v[BUF / 4];
    for (int k = 0; k < BUF / 4; k++)
        v[k] = (float)(r->rank * 10 + k % 7);
    if (ct_mem_from_host(&r->mem, r->buf[CT_BUF_SEND], v, BUF, &r->err) < 0 ||
        ct_mem_from_host(&r->mem, r->buf[CT_BUF_RECV], v, BUF, &r->err) < 0)
        return say(r, "fill");
    int rc = exchange(r) == 0 ? run(r, &s) : -1;
    ct_sched_release(&s);
    if (rc < 0)
        return say(r, "run");
    float got[BUF / 4], sc[BUF / 4];
    if (ct_mem_to_host(&r->mem, got, r->buf[CT_BUF_RECV], BUF, &r->err) < 0 ||
        ct_mem_to_host(&r->mem, sc, r->buf[CT_BUF_SCRATCH], BUF, &r->err) < 0)
        return say(r, "read back");
    for (int k = 0; k < 256; k++) {
        float want = (float)(prev * 10 + k % 7) + v[k];
        if (got[k] != want || sc[512 + k % 128] != (float)(next * 10 + (k % 128) % 7)) {
            fprintf(stderr, "rank %d: element %d: %g (want %g), get %g\n", r->rank, k, got[k], want,
                    sc[512 + k % 128]);
            return 1;
        }
    }
    return 0;
}

Test(resident, ring_reduce_and_get_on_three_ranks)
{
    expect_pass(3, ring_reduce, NULL);
}

/* host-ipc whose ipc_open fails in rank 1: the exchange fails alike everywhere. */
static struct ct_mem_kind g_broken;

static int broken_open(struct ct_mem *m, const struct ct_mem_ipc *h, void **p, struct ct_err *e)
{
    if (getenv("CT_TEST_RANK1"))
        return ct_err_set(e, CT_EPEER, "cannot map a peer's buffer here");
    return ct_mem_kind_find("host-ipc")->ipc_open(m, h, p, e);
}

static int refused(struct rank *r)
{
    if (r->rank == 1)
        setenv("CT_TEST_RANK1", "1", 1);
    int rc = exchange(r);
    if (rc != CT_EUNSUPP || !strstr(r->err.msg, "rank 1 (") ||
        !strstr(r->err.msg, "cannot map a peer's buffer here")) {
        fprintf(stderr, "rank %d: exchange gave %d: %s\n", r->rank, rc, r->err.msg);
        return 1;
    }
    return 0;
}

Test(resident, a_buffer_one_rank_cannot_map_is_refused_on_every_rank)
{
    g_broken = *ct_mem_kind_find("host-ipc");
    g_broken.ipc_open = broken_open;
    expect_pass(3, refused, &g_broken);
}

/* A run whose pulled receive fails (a descriptor longer than the receive): CT_EPEER on the
 * receiver; then the executor refuses every later run with CT_EIO. */
static int mismatch(struct rank *r)
{
    struct ct_sched s;
    ct_sched_init(&s);
    ct_sched_step(&s);
    if (r->rank == 0)
        ct_sched_send(&s, 1, ct_loc(CT_BUF_SEND, 0), 128);
    else
        ct_sched_recv(&s, 0, ct_loc(CT_BUF_RECV, 0), 64);
    ct_sched_finish(&s);
    if (exchange(r) < 0)
        return say(r, "exchange");
    struct ct_exec x;
    ct_exec_init(&x);
    int rc = run_on(r, &s, &x), ok = 0;
    if (r->rank == 1) {
        ok = rc == CT_EPEER && strstr(r->err.msg, "peer rank 0 sent 128 bytes where 64");
        int again = run_on(r, &s, &x);
        ok = ok && again == CT_EIO && strstr(r->err.msg, "an earlier in-place run");
    } else { /* never acknowledged: the sender times out naming rank 1 */
        ok = rc == CT_ETIMEDOUT && strstr(r->err.msg, "peer rank 1 (");
    }
    if (!ok)
        fprintf(stderr, "rank %d: run gave %d: %s\n", r->rank, rc, r->err.msg);
    ct_exec_release(&x);
    ct_sched_release(&s);
    return !ok;
}

/* A run that fails after queuing work (a get from the peer, then one beyond its buffer): the
 * queued get is done before the peer's buffer is unmapped and the buffers freed (else the
 * queue ran at free time, reading an unmapped address). */
static int fails_after_queued_work(struct rank *r)
{
    int peer = 1 - r->rank;
    struct ct_sched s;
    ct_sched_init(&s);
    ct_sched_step(&s);
    ct_sched_sync(&s, peer);
    ct_sched_step(&s);
    ct_sched_get(&s, peer, ct_loc(CT_BUF_RECV, 0), ct_loc(CT_BUF_SEND, 0), 256);
    ct_sched_get(&s, peer, ct_loc(CT_BUF_RECV, 256), ct_loc(CT_BUF_SEND, BUF - 8), 256);
    ct_sched_finish(&s);
    int rc = exchange(r) == 0 ? run(r, &s) : -1;
    ct_sched_release(&s);
    if (rc != CT_EIO || !strstr(r->err.msg, "is not mapped here")) {
        fprintf(stderr, "rank %d: run gave %d: %s\n", r->rank, rc, r->err.msg);
        return 1;
    }
    return 0; /* the teardown unmaps and frees: it must not crash */
}

Test(resident, a_run_failing_after_queued_work_leaves_nothing_queued)
{
    expect_pass(2, fails_after_queued_work, NULL);
}

/* One rank cannot run a point in place (mine.ok false: say its GPU lacks the kernel): every
 * rank hears it from the same exchange (1), nothing is mapped, and no collective is left
 * unmatched (a later exchange in place works). */
static int one_declines(struct rank *r)
{
    int rc = exchange_ok(r, r->rank != 1);
    if (rc != 1 || r->res.opened) {
        fprintf(stderr, "rank %d: a declined exchange gave %d, %llu mapped\n", r->rank, rc,
                (unsigned long long)r->res.opened);
        return 1;
    }
    if ((rc = exchange(r)) != 0 || r->res.opened != (uint64_t)(CT_BUF_COUNT * (r->n - 1)))
        return say(r, "the next exchange");
    return 0;
}

Test(resident, a_rank_that_cannot_run_a_point_in_place_stages_it_on_every_rank)
{
    expect_pass(3, one_declines, NULL);
}

Test(resident, a_failed_run_is_a_failure_and_later_runs_are_refused, .timeout = 60)
{
    expect_pass(2, mismatch, NULL);
}
