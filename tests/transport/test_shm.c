/* SPDX-License-Identifier: MIT */
/*
 * Shared-memory transport tests with real processes: the parent forks N ranks that bring
 * up the TCP bootstrap and the shm transport; each child reports pass/fail by exit status.
 */
#include <criterion/criterion.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/membarrier.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/clock.h"
#include "lib/cpus.h"
#include "lib/sock.h"
#include "transport/boot.h"
#include "transport/shm.h"
#include "transport/tp.h"

#define MAXR 8
#define SEC 1000000000LL

struct ctx;

struct job {
    int n;
    enum ct_wait_mode wait;
    size_t slot_bytes;
    int map_bufs;                     /* cfg.map_bufs */
    const char *hosts[MAXR];          /* host override per rank (NULL: real host name) */
    const unsigned char *peers[MAXR]; /* cfg->peers per rank (NULL: all) */
    int expect_open_fail;             /* open must fail with a message naming another host */
    int direct; /* post every message with CT_POST_DIRECT (2: and CT_POST_COPY, messages from
                   260 B) */
    const char *doorbell[MAXR]; /* COLLTUNE_SHM_DOORBELL per rank (NULL: unset) */
    int (*fn)(struct ctx *c);
};

struct ctx {
    const struct job *job;
    struct ct_tp *tp;
    struct ct_boot *boot;
    int rank, n;
    struct ct_err err;
};

struct outcome {
    int code[MAXR]; /* exit status, -1 if killed by a signal, -2 if it timed out */
    int sig[MAXR];
    int leftovers;
    uint64_t job;
};

/* ---------------------------------------------------------------- harness */

static int count_leftovers(uint64_t job)
{
    char pre[32];
    int n = snprintf(pre, sizeof pre, "ct-%016" PRIx64 "-", job), count = 0;
    DIR *d = opendir("/dev/shm");
    if (!d)
        return -1;
    struct dirent *e;
    while ((e = readdir(d)))
        count += !strncmp(e->d_name, pre, (size_t)n);
    closedir(d);
    return count;
}

static int fail(struct ctx *c, const char *what)
{
    fprintf(stderr, "rank %d: %s: %s\n", c->rank, what, c->err.msg);
    return 1;
}

static int child(const struct job *j, int rank, int lfd, int port, uint64_t jobid)
{
    struct ctx c = {.job = j, .rank = rank, .n = j->n};
    char root[64];
    snprintf(root, sizeof root, "127.0.0.1:%d", port);
    if (ct_boot_tcp_open(&c.boot, rank, j->n, root, rank == 0 ? lfd : -1, jobid, j->hosts[rank],
                         10 * SEC, &c.err) < 0)
        return fail(&c, "bootstrap");
    struct ct_tp_cfg cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.wait = j->wait;
    cfg.slot_bytes = j->slot_bytes;
    cfg.map_bufs = j->map_bufs;
    cfg.peers = j->peers[rank];
    if (j->doorbell[rank])
        setenv("COLLTUNE_SHM_DOORBELL", j->doorbell[rank], 1);
    else
        unsetenv("COLLTUNE_SHM_DOORBELL");
    int rc = ct_tp_shm_ops.open(&c.tp, &cfg, c.boot, &c.err);
    int res;
    if (j->expect_open_fail) {
        res = rc == CT_EINVAL && strstr(c.err.msg, "is on host") ? 0 : 1;
        if (rc == CT_EPEER && strstr(c.err.msg, "could not open"))
            res = 0; /* another rank found the problem first */
        if (res)
            fail(&c, "open should fail naming the other host");
        if (rc == 0)
            c.tp->ops->close(c.tp);
    } else if (rc < 0) {
        res = fail(&c, "open");
    } else {
        c.tp->post_flags = j->direct ? CT_POST_DIRECT | (j->direct == 2 ? CT_POST_COPY : 0) : 0;
        res = j->fn(&c);
        c.tp->ops->close(c.tp);
        /* the process that would remove what a killed rank leaves (transport/shm_own.c) is
         * ended and reaped with the transport: no child left, no zombie */
        if (!res && (waitpid(-1, NULL, WNOHANG) != -1 || errno != ECHILD)) {
            snprintf(c.err.msg, sizeof c.err.msg, "a child is left after close");
            res = fail(&c, "close");
        }
    }
    ct_boot_close(c.boot);
    return res;
}

static struct outcome run_job(const struct job *j)
{
    struct outcome o;
    memset(&o, 0, sizeof o);
    struct ct_err err;
    memset(&err, 0, sizeof err);
    int port = 0;
    int lfd = ct_sock_listen(NULL, 0, 16, &port, &err);
    cr_assert(lfd >= 0, "listen: %s", err.msg);
    o.job = ((uint64_t)getpid() << 40) ^ (uint64_t)ct_now_ns() ^ 0x5a5a5a5a00000000ull;
    pid_t pids[MAXR];
    fflush(stdout);
    fflush(stderr);
    for (int r = 0; r < j->n; r++) {
        pids[r] = fork();
        cr_assert(pids[r] >= 0);
        if (pids[r] == 0) {
            if (r != 0)
                close(lfd);
            _exit(child(j, r, lfd, port, o.job));
        }
    }
    close(lfd);
    int64_t deadline = ct_now_ns() + 20 * SEC;
    int left = j->n;
    bool reaped[MAXR] = {false};
    while (left) {
        for (int r = 0; r < j->n; r++) {
            int st;
            if (reaped[r] || waitpid(pids[r], &st, WNOHANG) != pids[r])
                continue;
            reaped[r] = true;
            left--;
            o.code[r] = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
            o.sig[r] = WIFSIGNALED(st) ? WTERMSIG(st) : 0;
        }
        if (left && ct_now_ns() > deadline) {
            for (int r = 0; r < j->n; r++)
                if (!reaped[r]) {
                    kill(pids[r], SIGKILL);
                    waitpid(pids[r], NULL, 0);
                    o.code[r] = -2;
                }
            break;
        }
        if (left)
            usleep(2000);
    }
    o.leftovers = count_leftovers(o.job);
    return o;
}

static void expect_all_pass(const struct job *j)
{
    struct outcome o = run_job(j);
    for (int r = 0; r < j->n; r++)
        cr_expect_eq(o.code[r], 0, "rank %d: exit %d (-1 signal %d, -2 timed out)", r, o.code[r],
                     o.sig[r]);
    cr_expect_eq(o.leftovers, 0, "%d objects left in /dev/shm", o.leftovers);
    ct_shm_cleanup_job(o.job);
}

/* Progress until every request is done; groups of m requests (one peer and direction each)
 * must complete in FIFO order. */
static int drive(struct ctx *c, struct ct_req *reqs, int ngroups, int m)
{
    int64_t deadline = ct_now_ns() + 15 * SEC;
    int idle = 0;
    for (;;) {
        int rc = c->tp->ops->progress(c->tp, &c->err);
        if (rc < 0)
            return fail(c, "progress");
        bool all = true;
        for (int g = 0; g < ngroups; g++) {
            bool hole = false;
            for (int k = 0; k < m; k++) {
                struct ct_req *q = &reqs[g * m + k];
                if (!q->done) {
                    hole = true;
                    all = false;
                } else if (hole) {
                    snprintf(c->err.msg, sizeof c->err.msg, "group %d: request %d before %d", g, k,
                             k - 1);
                    return fail(c, "FIFO completion");
                } else if (q->status < 0) {
                    return fail(c, "request status");
                }
            }
        }
        if (all)
            return 0;
        if (ct_now_ns() > deadline)
            return fail(c, "timed out");
        if (rc == 0 && ++idle > 200) {
            idle = 0;
            if (c->tp->ops->wait(c->tp, 1000000, &c->err) < 0)
                return fail(c, "wait");
        }
    }
}

/* ---------------------------------------------------------------- exchange */

#define NBIG 10
#define NSMALL 40
#define NMSG (NBIG + NSMALL)
static const size_t big_sizes[] = {0, 1, 7, 4096, (1u << 20) + 3};

static size_t msg_size(int k)
{
    return k < NBIG ? big_sizes[k % 5] : (size_t)(k * 13) % 97;
}

static bool msg_heap(int k)
{
    return k < NBIG ? k < 5 : k & 1;
}

static unsigned char pattern(int from, int to, int k, size_t i, int round)
{
    return (unsigned char)(from * 31 + to * 7 + k * 13 + round * 101 + i * 3 + (i >> 8));
}

/* Every rank exchanges NMSG messages with every other, all outstanding at once: receives
 * first then sends (round 0), sends first then receives (round 1). */
static int exchange(struct ctx *c)
{
    struct ct_tp *tp = c->tp;
    int n = c->n, me = c->rank;
    size_t off[NMSG + 1];
    off[0] = 0;
    for (int k = 0; k < NMSG; k++)
        off[k + 1] = off[k] + msg_size(k);
    size_t total = off[NMSG];
    char *heap = tp->ops->alloc(tp, total * (size_t)n, &c->err);
    if (!heap)
        return fail(c, "alloc");
    char *plain = malloc(total * (size_t)n);
    char *in = malloc(total * (size_t)n);
    struct ct_req *sreq = calloc((size_t)(n * NMSG), sizeof *sreq);
    struct ct_req *rreq = calloc((size_t)(n * NMSG), sizeof *rreq);
    int res = 0;
    for (int round = 0; round < 2 && !res; round++) {
        for (int q = 0; q < n; q++)
            for (int k = 0; k < NMSG; k++) {
                char *b = (msg_heap(k) ? heap : plain) + (size_t)q * total + off[k];
                for (size_t i = 0; i < msg_size(k); i++)
                    b[i] = (char)pattern(me, q, k, i, round);
            }
        memset(in, 0xee, total * (size_t)n);
        for (int phase = 0; phase < 2 && !res; phase++) {
            bool post_recv = (phase == 0) == (round == 0);
            for (int q = 0; q < n && !res; q++) {
                if (q == me)
                    continue;
                for (int k = 0; k < NMSG && !res; k++) {
                    size_t o = (size_t)q * total + off[k];
                    struct ct_req *rq = &rreq[q * NMSG + k], *sq = &sreq[q * NMSG + k];
                    int rc = post_recv ? tp->ops->irecv(tp, q, in + o, NULL, msg_size(k), NULL, rq,
                                                        &c->err)
                                       : tp->ops->isend(tp, q, (msg_heap(k) ? heap : plain) + o,
                                                        msg_size(k), sq, &c->err);
                    if (rc < 0)
                        res = fail(c, post_recv ? "irecv" : "isend");
                }
            }
            if (!res && phase == 0 && ct_boot_barrier(c->boot, &c->err) < 0)
                res = fail(c, "barrier");
        }
        for (int k = 0; k < NMSG; k++) { /* own slots: nothing posted, mark done */
            sreq[me * NMSG + k].done = 1;
            rreq[me * NMSG + k].done = 1;
        }
        if (!res)
            res = drive(c, sreq, n, NMSG);
        if (!res)
            res = drive(c, rreq, n, NMSG);
        for (int q = 0; q < n && !res; q++) {
            if (q == me)
                continue;
            for (int k = 0; k < NMSG && !res; k++) {
                const char *b = in + (size_t)q * total + off[k];
                for (size_t i = 0; i < msg_size(k); i++)
                    if ((unsigned char)b[i] != pattern(q, me, k, i, round)) {
                        snprintf(c->err.msg, sizeof c->err.msg,
                                 "from %d msg %d (%zu bytes) byte %zu", q, k, msg_size(k), i);
                        res = fail(c, "wrong data");
                        break;
                    }
            }
        }
        if (!res && ct_tp_barrier(tp, 10 * SEC, &c->err) < 0)
            res = fail(c, "tp barrier");
    }
    tp->ops->free(tp, heap, total * (size_t)n);
    free(plain);
    free(in);
    free(sreq);
    free(rreq);
    return res;
}

/* The launcher's check: a few ranks' channels fit anywhere, 1,024's (514 GiB) nowhere. */
Test(shm, host_fits)
{
    struct ct_err err = {0};
    cr_assert_eq(ct_shm_host_fits(4, 4, &err), 0, "%s", err.msg);
    if (ct_mem_available() > (600ull << 30)) /* 1,024 ranks' 514 GiB fit there */
        cr_skip_test("this host has more than 600 GiB available");
    cr_assert_eq(ct_shm_host_fits(1024, 1024, &err), CT_EUNSUPP);
    cr_assert(strstr(err.msg, "1024 ranks meeting in shared memory need") &&
                  strstr(err.msg, "1024 x 514 MiB"),
              "%s", err.msg);
    cr_assert_eq(ct_shm_host_fits(1024, 2, &err), 0, "virtual nodes of 2: 1 MiB a rank");
}

Test(shm, exchange_2_auto)
{
    struct job j = {.n = 2, .wait = CT_WAIT_AUTO, .fn = exchange};
    expect_all_pass(&j);
}

Test(shm, exchange_2_spin)
{
    struct job j = {.n = 2, .wait = CT_WAIT_SPIN, .fn = exchange};
    expect_all_pass(&j);
}

Test(shm, exchange_4_block_small_slots)
{
    struct job j = {.n = 4, .wait = CT_WAIT_BLOCK, .slot_bytes = 1024, .fn = exchange};
    expect_all_pass(&j);
}

Test(shm, exchange_4_auto)
{
    struct job j = {.n = 4, .wait = CT_WAIT_AUTO, .fn = exchange};
    expect_all_pass(&j);
}

/* ---------------------------------------------------------------- the doorbell */

/*
 * A receiver asleep in wait() (spin mode too sleeps after its idle spin) is woken by the
 * sender's doorbell, not by its sleep's end (at most 20 ms, LIVE_NS): over rounds in which
 * the sender posts 2 ms after the receiver starts waiting, the median delay from the send to
 * the receive's completion stays far below that. Both ranks first check which doorbell the
 * job agreed on (want: "membarrier" where every rank could take it, else "fence").
 */
#define WAKE_ROUNDS 21
static const char *want_doorbell;

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static int woken(struct ctx *c)
{
    struct ct_tp *tp = c->tp;
    if (strcmp(ct_shm_doorbell(tp), want_doorbell)) {
        snprintf(c->err.msg, sizeof c->err.msg, "%s, want %s", ct_shm_doorbell(tp), want_doorbell);
        return fail(c, "doorbell");
    }
    int64_t lat[WAKE_ROUNDS];
    for (int round = 0; round < WAKE_ROUNDS; round++) {
        if (ct_tp_barrier(tp, 10 * SEC, &c->err) < 0)
            return fail(c, "barrier");
        int64_t stamp = 0;
        struct ct_req req;
        memset(&req, 0, sizeof req);
        if (c->rank == 1) {
            usleep(2000);
            stamp = ct_now_ns();
            if (tp->ops->isend(tp, 0, &stamp, sizeof stamp, &req, &c->err) < 0)
                return fail(c, "isend");
        } else if (tp->ops->irecv(tp, 1, &stamp, NULL, sizeof stamp, NULL, &req, &c->err) < 0) {
            return fail(c, "irecv");
        }
        int64_t deadline = ct_now_ns() + 10 * SEC;
        while (!req.done) {
            int rc = tp->ops->progress(tp, &c->err);
            if (rc < 0)
                return fail(c, "progress");
            if (rc == 0 && !req.done && tp->ops->wait(tp, SEC, &c->err) < 0)
                return fail(c, "wait");
            if (ct_now_ns() > deadline)
                return fail(c, "timed out");
        }
        lat[round] = ct_now_ns() - stamp;
    }
    qsort(lat, WAKE_ROUNDS, sizeof lat[0], cmp_i64);
    if (c->rank == 0 && lat[WAKE_ROUNDS / 2] > 5000000) {
        snprintf(c->err.msg, sizeof c->err.msg, "median %.2f ms from send to receive",
                 (double)lat[WAKE_ROUNDS / 2] / 1e6);
        return fail(c, "not woken by the doorbell");
    }
    return 0;
}

static bool kernel_has_membarrier(void)
{
    long q = syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
    return q > 0 && (q & MEMBARRIER_CMD_GLOBAL_EXPEDITED);
}

Test(shm, asleep_in_spin_mode_woken_by_the_membarrier_doorbell)
{
    want_doorbell = kernel_has_membarrier() ? "membarrier" : "fence";
    struct job j = {.n = 2, .wait = CT_WAIT_SPIN, .fn = woken};
    expect_all_pass(&j);
}

Test(shm, asleep_woken_by_the_fence_doorbell)
{
    want_doorbell = "fence";
    struct job j = {.n = 2, .wait = CT_WAIT_SPIN, .fn = woken, .doorbell = {"fence", "fence"}};
    expect_all_pass(&j);
}

Test(shm, one_rank_without_membarrier_makes_the_job_fence)
{
    want_doorbell = "fence";
    struct job j = {.n = 2, .wait = CT_WAIT_SPIN, .fn = woken, .doorbell = {NULL, "fence"}};
    expect_all_pass(&j);
}

Test(shm, block_mode_fences)
{
    want_doorbell = "fence";
    struct job j = {.n = 2, .wait = CT_WAIT_BLOCK, .fn = woken};
    expect_all_pass(&j);
}

/* ---------------------------------------------------------------- fused reduction */

static void sum_f32(void *dst, const void *a, const void *b, size_t n)
{
    float *d = dst;
    const float *x = a, *y = b;
    for (size_t i = 0; i < n; i++)
        d[i] = x[i] + y[i];
}

static const struct ct_red red_f32 = {sum_f32, sizeof(float), NULL, NULL};
static const size_t red_counts[] = {1, 7, 1024, 4096, 4097, 262145};
#define NRED (sizeof red_counts / sizeof red_counts[0])

/* Pairs (0,1), (2,3): each sends float arrays (heap and plain sources) that the other
 * reduces into its own data, out of place and in place. */
static int reduce(struct ctx *c)
{
    struct ct_tp *tp = c->tp;
    int peer = c->rank ^ 1;
    size_t total = 0;
    for (size_t k = 0; k < NRED; k++)
        total += red_counts[k];
    float *heap = tp->ops->alloc(tp, total * sizeof(float), &c->err);
    if (!heap)
        return fail(c, "alloc");
    float *plain = malloc(total * sizeof(float));
    float *mine = malloc(total * sizeof(float));
    float *out = malloc(total * sizeof(float));
    int res = 0;
    for (int variant = 0; variant < 4 && !res; variant++) {
        bool from_heap = variant & 1, in_place = variant & 2;
        float *src = from_heap ? heap : plain;
        for (size_t i = 0; i < total; i++) {
            src[i] = (float)(i % 1000 + (size_t)c->rank * 1000 + (size_t)variant);
            mine[i] = (float)(i % 77);
        }
        struct ct_req sr[NRED], rr[NRED];
        memset(sr, 0, sizeof sr);
        memset(rr, 0, sizeof rr);
        size_t o = 0;
        for (size_t k = 0; k < NRED && !res; k++) {
            float *dst = in_place ? mine + o : out + o;
            if (tp->ops->irecv(tp, peer, dst, mine + o, red_counts[k] * sizeof(float), &red_f32,
                               &rr[k], &c->err) < 0 ||
                tp->ops->isend(tp, peer, src + o, red_counts[k] * sizeof(float), &sr[k], &c->err) <
                    0)
                res = fail(c, "post");
            o += red_counts[k];
        }
        if (!res)
            res = drive(c, sr, 1, NRED);
        if (!res)
            res = drive(c, rr, 1, NRED);
        const float *got = in_place ? mine : out;
        for (size_t i = 0; i < total && !res; i++) {
            float want =
                (float)(i % 77) + (float)(i % 1000 + (size_t)peer * 1000 + (size_t)variant);
            if (got[i] != want) {
                snprintf(c->err.msg, sizeof c->err.msg, "variant %d element %zu: %g != %g", variant,
                         i, (double)got[i], (double)want);
                res = fail(c, "wrong sum");
            }
        }
        if (!res && ct_boot_barrier(c->boot, &c->err) < 0)
            res = fail(c, "barrier");
    }
    tp->ops->free(tp, heap, total * sizeof(float));
    free(plain);
    free(mine);
    free(out);
    return res;
}

Test(shm, fused_reduce_2)
{
    struct job j = {.n = 2, .fn = reduce};
    expect_all_pass(&j);
}

Test(shm, fused_reduce_4_block)
{
    struct job j = {.n = 4, .wait = CT_WAIT_BLOCK, .fn = reduce};
    expect_all_pass(&j);
}

/* ---------------------------------------------------------------- direct (PUT) */

static int mismatch_rdv(struct ctx *c);

#define DMSG 40 /* per peer, all outstanding: more than the clear-to-send lines */

/* floats: 1088 bytes and up, all above put_min (small: from 260 bytes, above put_copy_min,
 * and through rdv_min); the messages start and end at every offset in a line (4-byte
 * steps), so a put's edges take the slot's header line (up to 40 bytes) and its data (more) */
static size_t dcount_of(int k, bool small)
{
    return (small ? 65 : 272) + (size_t)k * 67;
}

static float dval(int from, int to, int k, size_t i, int round)
{
    return (float)(from * 1000 + to * 100 + k * 10 + round * 5 + (int)(i % 7));
}

/* CT_POST_DIRECT: every rank has DMSG messages to and from every peer in flight at once,
 * received into heap buffers. Sources alternate between the heap (a PUT when the receive
 * copies) and plain memory (RDV is not possible: the sender goes eager or pipelined without
 * waiting); every fourth receive reduces (the receiver answers "not in the heap"). Round 0
 * posts receives first, round 1 sends first. */
static int direct(struct ctx *c)
{
    bool small = c->job->direct == 2;
#define dcount(k) dcount_of(k, small)
    struct ct_tp *tp = c->tp;
    int n = c->n, me = c->rank;
    size_t off[DMSG + 1];
    off[0] = 0;
    for (int k = 0; k < DMSG; k++)
        off[k + 1] = off[k] + dcount(k);
    size_t total = off[DMSG] * (size_t)n, bytes = total * sizeof(float);
    float *hsrc = tp->ops->alloc(tp, bytes, &c->err);
    float *dst = tp->ops->alloc(tp, bytes, &c->err);
    float *psrc = malloc(bytes), *mine = malloc(bytes);
    struct ct_req *sreq = calloc((size_t)(n * DMSG), sizeof *sreq);
    struct ct_req *rreq = calloc((size_t)(n * DMSG), sizeof *rreq);
    int res = hsrc && dst ? 0 : fail(c, "alloc");
    for (int round = 0; round < 2 && !res; round++) {
        for (int q = 0; q < n; q++)
            for (int k = 0; k < DMSG; k++)
                for (size_t i = 0; i < dcount(k); i++) {
                    size_t o = (size_t)q * off[DMSG] + off[k] + i;
                    hsrc[o] = psrc[o] = dval(me, q, k, i, round);
                    mine[o] = (float)(i % 5);
                    dst[o] = -1;
                }
        for (int phase = 0; phase < 2 && !res; phase++) {
            bool post_recv = (phase == 0) == (round == 0);
            for (int q = 0; q < n && !res; q++)
                for (int k = 0; k < DMSG && q != me && !res; k++) {
                    size_t o = (size_t)q * off[DMSG] + off[k], len = dcount(k) * sizeof(float);
                    bool red = k % 4 == 3;
                    int rc = post_recv ? tp->ops->irecv(tp, q, dst + o, red ? mine + o : NULL, len,
                                                        red ? &red_f32 : NULL, &rreq[q * DMSG + k],
                                                        &c->err)
                                       : tp->ops->isend(tp, q, (k % 3 ? hsrc : psrc) + o, len,
                                                        &sreq[q * DMSG + k], &c->err);
                    if (rc < 0)
                        res = fail(c, post_recv ? "irecv" : "isend");
                }
        }
        for (int k = 0; k < DMSG; k++)
            sreq[me * DMSG + k].done = rreq[me * DMSG + k].done = 1;
        if (!res)
            res = drive(c, sreq, n, DMSG);
        if (!res)
            res = drive(c, rreq, n, DMSG);
        for (int q = 0; q < n && !res; q++)
            for (int k = 0; k < DMSG && q != me && !res; k++)
                for (size_t i = 0; i < dcount(k); i++) {
                    size_t o = (size_t)q * off[DMSG] + off[k] + i;
                    float want = dval(q, me, k, i, round) + (k % 4 == 3 ? mine[o] : 0);
                    if (dst[o] != want) {
                        snprintf(c->err.msg, sizeof c->err.msg,
                                 "round %d from %d msg %d element %zu: %g != %g", round, q, k, i,
                                 (double)dst[o], (double)want);
                        res = fail(c, "wrong data");
                        break;
                    }
                }
        if (!res && ct_tp_barrier(tp, 10 * SEC, &c->err) < 0)
            res = fail(c, "tp barrier");
    }
    if (hsrc)
        tp->ops->free(tp, hsrc, bytes);
    if (dst)
        tp->ops->free(tp, dst, bytes);
    free(psrc);
    free(mine);
    free(sreq);
    free(rreq);
    return res;
#undef dcount
}

Test(shm, direct_put_2)
{
    struct job j = {.n = 2, .direct = 1, .fn = direct};
    expect_all_pass(&j);
}

Test(shm, direct_put_4_block_small_slots)
{
    struct job j = {.n = 4, .wait = CT_WAIT_BLOCK, .slot_bytes = 1024, .direct = 1, .fn = direct};
    expect_all_pass(&j);
}

/* CT_POST_COPY: messages from 260 B are put, below rdv_min too; the reducing receives among
 * them answer "not in the heap" and their messages go eager (or RDV above rdv_min) */
Test(shm, direct_copy_puts_small_messages_3)
{
    struct job j = {.n = 3, .direct = 2, .fn = direct};
    expect_all_pass(&j);
}

/* Rank 1 posts a receive into the heap and then does not progress: rank 0's send of a heap
 * buffer completes on its own, and the bytes are in rank 1's buffer before rank 1 looks at
 * its channel (a zero-copy get could not complete the send without the receiver). */
static int put_lands(struct ctx *c)
{
    struct ct_tp *tp = c->tp;
    size_t len = 64u << 10;
    unsigned char *buf = tp->ops->alloc(tp, len, &c->err);
    if (!buf)
        return fail(c, "alloc");
    memset(buf, c->rank ? 0 : 0x5a, len);
    struct ct_req r;
    memset(&r, 0, sizeof r);
    int res = 0;
    if (c->rank == 1 && tp->ops->irecv(tp, 0, buf, NULL, len, NULL, &r, &c->err) < 0)
        res = fail(c, "irecv");
    if (!res && ct_boot_barrier(c->boot, &c->err) < 0)
        res = fail(c, "boot barrier");
    if (!res && c->rank == 0 && ct_tp_send(tp, 1, buf, len, 10 * SEC, &c->err) < 0)
        res = fail(c, "send (a put completes without the receiver)");
    if (!res && ct_boot_barrier(c->boot, &c->err) < 0)
        res = fail(c, "boot barrier");
    if (!res && c->rank == 1) {
        size_t i = 0;
        while (i < len && buf[i] == 0x5a)
            i++;
        if (i < len) {
            snprintf(c->err.msg, sizeof c->err.msg, "byte %zu is %#x before progress", i, buf[i]);
            res = fail(c, "not put");
        } else if (ct_tp_wait_req(tp, &r, 10 * SEC, &c->err) < 0) {
            res = fail(c, "receive");
        }
    }
    tp->ops->free(tp, buf, len);
    return res;
}

Test(shm, direct_put_lands_before_the_receiver_progresses)
{
    struct job j = {.n = 2, .direct = 1, .fn = put_lands};
    expect_all_pass(&j);
}

Test(shm, direct_length_mismatch)
{
    /* the receive advertises 512 KiB, the sender has 1 MiB: it sends RDV, the receiver
     * reports the mismatch */
    struct job j = {.n = 2, .direct = 1, .fn = mismatch_rdv};
    expect_all_pass(&j);
}

/* ---------------------------------------------------------------- heap reuse */

/* Rank 0 sends zero-copy from a buffer, frees it, allocates another (same table slot, new
 * object) and sends again: rank 1 must not read through a stale mapping. */
static int heap_reuse(struct ctx *c)
{
    struct ct_tp *tp = c->tp;
    size_t len = 3u << 20;
    char *in = malloc(len);
    int res = 0;
    for (int it = 0; it < 4 && !res; it++) {
        if (c->rank == 0) {
            char *b = tp->ops->alloc(tp, len + (size_t)it * 4096, &c->err);
            if (!b)
                return fail(c, "alloc");
            memset(b, 'a' + it, len);
            if (ct_tp_send(tp, 1, b, len, 10 * SEC, &c->err) < 0)
                res = fail(c, "send");
            tp->ops->free(tp, b, len + (size_t)it * 4096);
        } else {
            if (ct_tp_recv(tp, 0, in, len, 10 * SEC, &c->err) < 0)
                res = fail(c, "recv");
            for (size_t i = 0; i < len && !res; i += 4093)
                if (in[i] != 'a' + it) {
                    snprintf(c->err.msg, sizeof c->err.msg, "iteration %d byte %zu", it, i);
                    res = fail(c, "stale data");
                }
        }
        if (!res && ct_tp_barrier(tp, 10 * SEC, &c->err) < 0)
            res = fail(c, "tp barrier");
    }
    free(in);
    return res;
}

Test(shm, heap_free_realloc)
{
    struct job j = {.n = 2, .fn = heap_reuse};
    expect_all_pass(&j);
}

/* ---------------------------------------------------------------- peer pages kept mapped */

/* This process's resident pages of shared memory (RssShmem), in MiB; -1 unknown. */
static long rss_shmem_mib(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kb = -1;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "RssShmem: %ld kB", &kb) == 1)
            break;
    if (f)
        fclose(f);
    return kb < 0 ? -1 : kb >> 10;
}

/* Rank 1 sends from three heap buffers of 40 MiB in turn, twice; rank 0 receives into
 * private memory, so the peer's pages it reads in place are the shared memory it holds:
 * at most one buffer plus 32 MiB by default (80 MiB), all three with map_bufs 3. */
#define KEEP_MIB 40
static int read_three_peer_buffers(struct ctx *c)
{
    struct ct_tp *tp = c->tp;
    size_t len = (size_t)KEEP_MIB << 20;
    char *buf[3] = {NULL, NULL, NULL}, *in = c->rank == 0 ? malloc(len) : NULL;
    int res = 0;
    for (int i = 0; c->rank == 1 && i < 3; i++) {
        if (!(buf[i] = tp->ops->alloc(tp, len, &c->err)))
            return fail(c, "alloc");
        memset(buf[i], 'a' + i, len);
    }
    for (int k = 0; k < 6 && !res; k++) {
        if (c->rank == 1 && ct_tp_send(tp, 0, buf[k % 3], len, 20 * SEC, &c->err) < 0)
            res = fail(c, "send");
        if (c->rank == 0 && ct_tp_recv(tp, 1, in, len, 20 * SEC, &c->err) < 0)
            res = fail(c, "recv");
        if (!res && c->rank == 0 && (in[0] != 'a' + k % 3 || in[len - 1] != 'a' + k % 3)) {
            snprintf(c->err.msg, sizeof c->err.msg, "message %d: wrong bytes", k);
            res = fail(c, "data");
        }
    }
    if (!res && c->rank == 0) {
        long mib = rss_shmem_mib();
        bool keep = c->job->map_bufs >= 3;
        if (mib < 0 || (keep ? mib < 3 * KEEP_MIB - 4 : mib > KEEP_MIB + 32 + 8)) {
            snprintf(c->err.msg, sizeof c->err.msg, "%ld MiB of shared memory resident (%s)", mib,
                     keep ? "all three buffers kept: at least 116" : "at most 80");
            res = fail(c, "peer pages");
        }
    }
    if (!res && ct_tp_barrier(tp, 20 * SEC, &c->err) < 0)
        res = fail(c, "tp barrier");
    for (int i = 0; i < 3; i++)
        if (buf[i])
            tp->ops->free(tp, buf[i], len);
    free(in);
    return res;
}

Test(shm, peer_pages_bounded_to_one_buffer_by_default)
{
    struct job j = {.n = 2, .fn = read_three_peer_buffers};
    expect_all_pass(&j);
}

/* a sweep alternates algorithms that read different peer buffers: it keeps all three */
Test(shm, peer_pages_of_every_buffer_kept_with_map_bufs)
{
    struct job j = {.n = 2, .map_bufs = 3, .fn = read_three_peer_buffers};
    expect_all_pass(&j);
}

/* ---------------------------------------------------------------- many ranks, blocking */

/* 4 ranks on 2 cores, forced blocking: many small ring steps and barriers. */
static int ring_steps(struct ctx *c)
{
    struct ct_tp *tp = c->tp;
    int next = (c->rank + 1) % c->n, prev = (c->rank + c->n - 1) % c->n;
    uint64_t v = (uint64_t)c->rank, got = 0;
    for (int it = 0; it < 300; it++) {
        struct ct_req s, r;
        memset(&s, 0, sizeof s);
        memset(&r, 0, sizeof r);
        if (tp->ops->irecv(tp, prev, &got, NULL, sizeof got, NULL, &r, &c->err) < 0 ||
            tp->ops->isend(tp, next, &v, sizeof v, &s, &c->err) < 0 ||
            ct_tp_wait_req(tp, &s, 10 * SEC, &c->err) < 0 ||
            ct_tp_wait_req(tp, &r, 10 * SEC, &c->err) < 0)
            return fail(c, "ring step");
        if (got != (uint64_t)(prev + it)) {
            snprintf(c->err.msg, sizeof c->err.msg, "step %d got %" PRIu64, it, got);
            return fail(c, "ring data");
        }
        v = (uint64_t)c->rank + (uint64_t)it + 1;
        if (it % 50 == 0 && ct_tp_barrier(tp, 10 * SEC, &c->err) < 0)
            return fail(c, "barrier");
    }
    return 0;
}

Test(shm, ring_4_block)
{
    struct job j = {.n = 4, .wait = CT_WAIT_BLOCK, .fn = ring_steps};
    expect_all_pass(&j);
}

/* ---------------------------------------------------------------- errors */

/* Rank 1 posts a receive of a different length than rank 0 sends. */
static int mismatch(struct ctx *c, size_t send_len, bool heap_src)
{
    struct ct_tp *tp = c->tp;
    size_t recv_len = send_len / 2;
    char *buf = heap_src ? tp->ops->alloc(tp, send_len, &c->err) : malloc(send_len);
    if (!buf)
        return fail(c, "alloc");
    memset(buf, 1, send_len);
    int rc, res = 0;
    if (c->rank == 0) {
        rc = ct_tp_send(tp, 1, buf, send_len, 10 * SEC, &c->err);
        /* eager: completes at once; otherwise the receiver's rejection (or exit) fails it */
        bool ok = send_len > 100 ? rc == CT_EPEER && strstr(c->err.msg, "peer rank 1") : rc == 0;
        if (!ok)
            res = fail(c, "send side of a length mismatch");
    } else {
        rc = ct_tp_recv(tp, 0, buf, recv_len, 10 * SEC, &c->err);
        if (rc != CT_EPEER || !strstr(c->err.msg, "peer rank 0") ||
            !strstr(c->err.msg, "does not match"))
            res = fail(c, "length mismatch not reported");
        usleep(100000); /* let the sender see the rejection rather than the exit */
    }
    if (heap_src)
        tp->ops->free(tp, buf, send_len);
    else
        free(buf);
    return res;
}

static int mismatch_eager(struct ctx *c)
{
    return mismatch(c, 100, false);
}

static int mismatch_rdv(struct ctx *c)
{
    return mismatch(c, 1u << 20, true);
}

static int mismatch_frag(struct ctx *c)
{
    return mismatch(c, 1u << 20, false);
}

Test(shm, length_mismatch_eager)
{
    struct job j = {.n = 2, .fn = mismatch_eager};
    expect_all_pass(&j);
}

Test(shm, length_mismatch_zero_copy)
{
    struct job j = {.n = 2, .fn = mismatch_rdv};
    expect_all_pass(&j);
}

Test(shm, length_mismatch_pipelined)
{
    struct job j = {.n = 2, .fn = mismatch_frag};
    expect_all_pass(&j);
}

/* The last rank allocates, exchanges a little, then dies by SIGKILL while every other rank
 * waits on it (a receive and a zero-copy send). They must fail within 5 s naming it. */
static int dead_peer(struct ctx *c)
{
    struct ct_tp *tp = c->tp;
    int victim = c->n - 1;
    size_t len = 1u << 20;
    char *buf = tp->ops->alloc(tp, len, &c->err);
    char *in = malloc(len);
    if (!buf)
        return fail(c, "alloc");
    memset(buf, 7, len);
    if (ct_tp_barrier(tp, 10 * SEC, &c->err) < 0)
        return fail(c, "barrier");
    if (c->rank == victim) {
        if (ct_boot_barrier(c->boot, &c->err) < 0)
            return fail(c, "boot barrier");
        raise(SIGKILL);
    }
    struct ct_req s, r;
    memset(&s, 0, sizeof s);
    memset(&r, 0, sizeof r);
    int res = 0;
    if (tp->ops->irecv(tp, victim, in, NULL, len, NULL, &r, &c->err) < 0 ||
        tp->ops->isend(tp, victim, buf, len, &s, &c->err) < 0)
        res = fail(c, "post");
    if (!res && ct_boot_barrier(c->boot, &c->err) < 0)
        res = fail(c, "boot barrier");
    int64_t t0 = ct_now_ns();
    int rc = res ? 0 : ct_tp_wait_req(tp, &r, 30 * SEC, &c->err);
    double secs = (double)(ct_now_ns() - t0) / 1e9;
    char want[64];
    snprintf(want, sizeof want, "peer rank %d (", victim);
    if (!res && (rc != CT_EPEER || !strstr(c->err.msg, want) || !strstr(c->err.msg, "exited")))
        res = fail(c, "death not reported");
    if (!res && secs > 5.0) {
        snprintf(c->err.msg, sizeof c->err.msg, "took %.1f s", secs);
        res = fail(c, "death reported too late");
    }
    /* pending requests must stay failed, not hang */
    if (!res && ct_tp_wait_req(tp, &s, 30 * SEC, &c->err) != CT_EPEER)
        res = fail(c, "send to a dead peer");
    tp->ops->free(tp, buf, len);
    free(in);
    return res;
}

static void expect_death(int n, enum ct_wait_mode wait, int direct)
{
    struct job j = {.n = n, .wait = wait, .direct = direct, .fn = dead_peer};
    struct outcome o = run_job(&j);
    for (int r = 0; r < n - 1; r++)
        cr_expect_eq(o.code[r], 0, "rank %d: exit %d", r, o.code[r]);
    cr_expect_eq(o.sig[n - 1], SIGKILL, "victim: exit %d signal %d", o.code[n - 1], o.sig[n - 1]);
    /* the victim's objects: removed, a moment after it is gone, by the process it forked as
     * its transport opened (transport/shm_own.c; they stayed until a launcher cleaned up) */
    for (int i = 0; i < 200 && count_leftovers(o.job) > 0; i++)
        usleep(10000);
    cr_expect_eq(count_leftovers(o.job), 0, "%d of the victim's objects left", o.leftovers);
}

Test(shm, dead_peer_spin)
{
    expect_death(2, CT_WAIT_SPIN, 0);
}

Test(shm, dead_peer_while_waiting_to_put)
{
    /* the send waits for a clear-to-send the dead peer never writes */
    expect_death(2, CT_WAIT_BLOCK, 1);
}

Test(shm, dead_peer_block_4)
{
    expect_death(4, CT_WAIT_BLOCK, 0);
}

/* ---------------------------------------------------------------- fences (one-sided) */

/* Post a fence to every peer, then wait for all of theirs (progress, then wait()). */
static int fence_all(struct ctx *c, void *const bufs[], int64_t timeout_ns)
{
    struct ct_tp *tp = c->tp;
    for (int p = 0; p < c->n; p++) {
        int rc = p == c->rank ? 0 : tp->ops->fence_post(tp, p, bufs, CT_FENCE_BUFS, &c->err);
        if (rc < 0)
            return rc;
    }
    int64_t t0 = ct_now_ns();
    for (;;) {
        int left = 0;
        for (int p = 0; p < c->n; p++) {
            if (p == c->rank)
                continue;
            int rc = tp->ops->fence_test(tp, p, &c->err);
            if (rc < 0)
                return rc;
            left += rc == 0;
        }
        if (!left)
            return 0;
        int rc = tp->ops->progress(tp, &c->err);
        if (rc < 0)
            return rc;
        if (ct_now_ns() - t0 > timeout_ns)
            return ct_err_set(&c->err, CT_ETIMEDOUT, "fence timed out");
        if ((rc = tp->ops->wait(tp, 1000000, &c->err)) < 0)
            return rc;
    }
}

/* Rounds of: fence; read every peer's input in place (it holds the peer's round value) and
 * write this rank's value into slot `rank` of every peer's output; fence; check the own
 * output's slots; change the input. Buffers move between rounds (freed and allocated again)
 * so that a fence publishes new objects. */
static int fences(struct ctx *c)
{
    struct ct_tp *tp = c->tp;
    const size_t L = 4096 + 64;
    for (int round = 0; round < 40; round++) {
        char *in = tp->ops->alloc(tp, L, &c->err),
             *out = tp->ops->alloc(tp, L * (size_t)c->n, &c->err);
        if (!in || !out)
            return fail(c, "alloc");
        memset(in, 'a' + (c->rank * 7 + round) % 26, L);
        void *bufs[CT_FENCE_BUFS] = {in, out, NULL};
        if (fence_all(c, bufs, 10 * SEC) < 0)
            return fail(c, "fence 1");
        for (int p = 0; p < c->n; p++) {
            if (p == c->rank)
                continue;
            const char *pin = tp->ops->peer_addr(tp, p, 0, 0, L, &c->err);
            char *pout = tp->ops->peer_addr(tp, p, 1, (uint64_t)c->rank * L, L, &c->err);
            if (!pin || !pout)
                return fail(c, "peer_addr");
            char want = (char)('a' + (p * 7 + round) % 26);
            for (size_t i = 0; i < L; i++)
                if (pin[i] != want) {
                    snprintf(c->err.msg, sizeof c->err.msg, "round %d: peer %d byte %zu is %c",
                             round, p, i, pin[i]);
                    return fail(c, "get");
                }
            memset(pout, 'A' + (c->rank * 5 + round) % 26, L);
            /* what the peer did not publish, or beyond its shared object, is refused */
            if (tp->ops->peer_addr(tp, p, 2, 0, 1, &c->err) || c->err.code != CT_EUNSUPP ||
                tp->ops->peer_addr(tp, p, 0, 1u << 20, 1, &c->err))
                return fail(c, "unpublished or out-of-range buffer given out");
        }
        if (fence_all(c, bufs, 10 * SEC) < 0)
            return fail(c, "fence 2");
        for (int p = 0; p < c->n; p++)
            for (size_t i = 0; p != c->rank && i < L; i++)
                if (out[(size_t)p * L + i] != (char)('A' + (p * 5 + round) % 26)) {
                    snprintf(c->err.msg, sizeof c->err.msg, "round %d: slot of %d byte %zu", round,
                             p, i);
                    return fail(c, "put");
                }
        tp->ops->free(tp, in, L);
        tp->ops->free(tp, out, L * (size_t)c->n);
    }
    return 0;
}

Test(shm, fences_2_spin)
{
    struct job j = {.n = 2, .wait = CT_WAIT_SPIN, .fn = fences};
    expect_all_pass(&j);
}

Test(shm, fences_5_block)
{
    struct job j = {.n = 5, .wait = CT_WAIT_BLOCK, .fn = fences};
    expect_all_pass(&j);
}

/* A rank waiting at a fence (or for a publish: at_mailbox) for a peer that died: CT_EPEER
 * naming it, within 5 s. */
static int at_mailbox;
static int mbox_wait(struct ctx *c, int peer, size_t need, const unsigned char **data,
                     int64_t timeout_ns);

static int dead_at_fence(struct ctx *c)
{
    int victim = c->n - 1;
    if (ct_tp_barrier(c->tp, 10 * SEC, &c->err) < 0)
        return fail(c, "barrier");
    if (c->rank == victim)
        raise(SIGKILL);
    void *bufs[CT_FENCE_BUFS] = {NULL, NULL, NULL};
    unsigned char x = 1;
    const unsigned char *d;
    if (at_mailbox && c->tp->ops->mbox_post(c->tp, &x, 1, &c->err) < 0)
        return fail(c, "post");
    int64_t t0 = ct_now_ns();
    int rc = 0;
    for (int k = 1; at_mailbox && k < c->n && rc == 0; k++)
        rc = mbox_wait(c, (c->rank + k) % c->n, 1, &d, 30 * SEC);
    if (!at_mailbox)
        rc = fence_all(c, bufs, 30 * SEC);
    double secs = (double)(ct_now_ns() - t0) / 1e9;
    char want[64];
    snprintf(want, sizeof want, "peer rank %d (", victim);
    if (rc != CT_EPEER || !strstr(c->err.msg, want) || !strstr(c->err.msg, "exited"))
        return fail(c, at_mailbox ? "death at the mailbox not reported"
                                  : "death at a fence not reported");
    if (secs > 5.0) {
        snprintf(c->err.msg, sizeof c->err.msg, "took %.1f s", secs);
        return fail(c, "death reported too late");
    }
    return 0;
}

Test(shm, dead_peer_at_fence)
{
    struct job j = {.n = 3, .wait = CT_WAIT_BLOCK, .fn = dead_at_fence};
    struct outcome o = run_job(&j);
    for (int r = 0; r < 2; r++)
        cr_expect_eq(o.code[r], 0, "rank %d: exit %d", r, o.code[r]);
    cr_expect_eq(o.sig[2], SIGKILL);
    ct_shm_cleanup_job(o.job);
}

/* ---------------------------------------------------------------- mailbox */

/* Wait for peer's publish of this rank's last ordinal (progress, then wait()). */
static int mbox_wait(struct ctx *c, int peer, size_t need, const unsigned char **data,
                     int64_t timeout_ns)
{
    struct ct_tp *tp = c->tp;
    int64_t deadline = ct_now_ns() + timeout_ns;
    int rc;
    while ((rc = tp->ops->mbox_test(tp, peer, need, (const void **)data, &c->err)) == 0) {
        if (ct_now_ns() > deadline)
            return ct_err_set(&c->err, CT_ETIMEDOUT, "publish of peer %d never came", peer);
        int p = tp->ops->progress(tp, &c->err);
        if (p == 0)
            p = tp->ops->wait(tp, 1000000, &c->err);
        if (p < 0)
            return p;
    }
    return rc < 0 ? rc : 0;
}

static unsigned char mbox_byte(int rank, int round, size_t i)
{
    return (unsigned char)(rank * 37 + round * 11 + i * 7 + (i >> 9));
}

/*
 * Rounds of publish-then-read-every-peer without a barrier between them, so fast ranks run a
 * round ahead into the other of the two mailboxes: sizes inline (up to 56 bytes), just past
 * it, and up to CT_MBOX_MAX; every byte checked. Too large a publish is refused.
 */
static int mailbox(struct ctx *c)
{
    struct ct_tp *tp = c->tp;
    static const size_t sizes[] = {0, 1, 8, 56, 57, 64, 1000, 4096, CT_MBOX_MAX};
    size_t ns = sizeof sizes / sizeof sizes[0];
    unsigned char *buf = malloc(CT_MBOX_MAX + 1);
    int res = 0;
    for (int round = 0; round < 300 && !res; round++) {
        size_t len = sizes[(size_t)round % ns];
        for (size_t i = 0; i < len; i++)
            buf[i] = mbox_byte(c->rank, round, i);
        if (tp->ops->mbox_post(tp, buf, len, &c->err) < 0) {
            res = fail(c, "post");
            break;
        }
        for (int k = 1; k < c->n && !res; k++) {
            int q = (c->rank + k) % c->n;
            const unsigned char *d = NULL;
            if (mbox_wait(c, q, len, &d, 10 * SEC) < 0) {
                res = fail(c, "wait");
                break;
            }
            for (size_t i = 0; i < len; i++)
                if (d[i] != mbox_byte(q, round, i)) {
                    snprintf(c->err.msg, sizeof c->err.msg, "round %d: peer %d byte %zu of %zu",
                             round, q, i, len);
                    res = fail(c, "wrong data");
                    break;
                }
        }
    }
    if (!res && (tp->ops->mbox_post(tp, buf, CT_MBOX_MAX + 1, &c->err) != CT_EINVAL ||
                 !strstr(c->err.msg, "at most")))
        res = fail(c, "too large a publish taken");
    free(buf);
    return res;
}

Test(shm, mailbox_rounds_3_spin)
{
    struct job j = {.n = 3, .wait = CT_WAIT_SPIN, .fn = mailbox};
    expect_all_pass(&j);
}

Test(shm, mailbox_rounds_4_block)
{
    struct job j = {.n = 4, .wait = CT_WAIT_BLOCK, .fn = mailbox};
    expect_all_pass(&j);
}

Test(shm, dead_peer_at_mailbox)
{
    at_mailbox = 1;
    for (int w = CT_WAIT_SPIN; w <= CT_WAIT_BLOCK; w++) {
        struct job j = {.n = 3, .wait = (enum ct_wait_mode)w, .fn = dead_at_fence};
        struct outcome o = run_job(&j);
        for (int r = 0; r < 2; r++)
            cr_expect_eq(o.code[r], 0, "wait mode %d, rank %d: exit %d", w, r, o.code[r]);
        cr_expect_eq(o.sig[2], SIGKILL);
        ct_shm_cleanup_job(o.job);
    }
}

/* ---------------------------------------------------------------- hosts and peer sets */

static const unsigned char mask_a[4] = {1, 1, 0, 0}, mask_b[4] = {0, 0, 1, 1};

Test(shm, peers_on_other_hosts_refused)
{
    struct job j = {.n = 4, .hosts = {"nodeA", "nodeA", "nodeB", "nodeB"}, .expect_open_fail = 1};
    expect_all_pass(&j);
}

Test(shm, peer_subset_per_host)
{
    struct job j = {.n = 4,
                    .hosts = {"nodeA", "nodeA", "nodeB", "nodeB"},
                    .peers = {mask_a, mask_a, mask_b, mask_b},
                    .fn = reduce};
    expect_all_pass(&j);
}

Test(shm, cleanup_without_job_objects)
{
    cr_expect_eq(ct_shm_cleanup_job(0x0123456789abcdefull), 0);
}

/* A launcher's clean-up: a job's objects (as a rank killed before its remover ran left them),
 * and no other job's. */
Test(shm, cleanup_removes_the_jobs_objects)
{
    uint64_t job = 0x0123456789abcde1ull ^ (uint64_t)getpid(), other = job ^ 1;
    char name[96];
    for (int i = 0; i < 3; i++) {
        snprintf(name, sizeof name, "/ct-%016" PRIx64 "-h%d-1-1", i < 2 ? job : other, i);
        int fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
        cr_assert_geq(fd, 0, "shm_open %s", name);
        close(fd);
    }
    cr_expect_eq(ct_shm_cleanup_job(job), 2);
    cr_expect_eq(count_leftovers(job), 0);
    cr_expect_eq(count_leftovers(other), 1);
    cr_expect_eq(ct_shm_cleanup_job(other), 1);
}
