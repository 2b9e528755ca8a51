/* SPDX-License-Identifier: MIT */
/*
 * libfabric transport over the providers this host has (tcp;ofi_rxm, shm, sockets) with real
 * processes: exchanges of many sizes both ways with many messages in flight, fused reduce,
 * registration of foreign buffers, the untagged mode, peer subsets, provider choice, length
 * mismatches and a peer that dies mid-message.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/clock.h"
#include "lib/sock.h"
#include "transport/boot.h"
#include "transport/tp.h"
#include "tests/transport/tp_check.h"

#ifdef HAVE_LIBFABRIC
#include "transport/fabric_int.h"

#include "transport/fabric_int.h"
#endif

#ifdef __SANITIZE_ADDRESS__
#include <sanitizer/lsan_interface.h>

/* Ranks check for leaks before _exit(); they are forks of a Criterion worker whose I/O
 * thread does not exist in the child, so what that thread allocated is not ours to judge. */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void)
{
    return "leak:libnng\n";
}
#endif

extern const struct ct_tp_ops ct_tp_fabric_ops;

#define SEC 1000000000LL
#define MAXR 8

struct rank_ctx {
    int rank, n;
    bool foreign; /* scenario buffers from malloc(), not alloc() */
    struct ct_boot *boot;
    struct ct_tp *tp;
    const void *arg;
};
typedef int (*scenario_fn)(struct rank_ctx *c);

struct job {
    int n;
    const char *prov; /* COLLTUNE_FI_PROVIDER (NULL: automatic choice) */
    bool mr_local;    /* COLLTUNE_FI_MR_LOCAL=1 */
    bool msg;         /* COLLTUNE_FI_MSG=1 */
    bool foreign;     /* scenario buffers from malloc(), not alloc() */
    scenario_fn fn;
    const void *arg;
    const unsigned char (*peers)[MAXR]; /* optional cfg->peers per rank */
    const char *const *prov_of;         /* optional provider per rank (overrides prov) */
    const char *open_error;             /* open must fail with a message containing this */
    int dies;                           /* rank expected to die of SIGTERM (0: none) */
};

#define FAIL(...)                                                                                  \
    do {                                                                                           \
        fprintf(stderr, "rank %d: ", c->rank);                                                     \
        fprintf(stderr, __VA_ARGS__);                                                              \
        fprintf(stderr, "\n");                                                                     \
        return 1;                                                                                  \
    } while (0)

static void *buf_alloc(struct rank_ctx *c, size_t n, struct ct_err *err)
{
    if (c->foreign) {
        char *p = malloc(n + 64); /* +64: never page aligned the way alloc() is */
        return p ? p + 64 : NULL;
    }
    return c->tp->ops->alloc(c->tp, n, err);
}

static void buf_free(struct rank_ctx *c, void *p, size_t n)
{
    if (!p)
        return;
    if (c->foreign)
        free((char *)p - 64);
    else
        c->tp->ops->free(c->tp, p, n);
}

static int child_main(const struct job *j, int rank, int lfd, int port, uint64_t job_id)
{
    struct rank_ctx ctx = {.rank = rank, .n = j->n, .foreign = j->foreign, .arg = j->arg};
    struct rank_ctx *c = &ctx;
    struct ct_err err = {0};
    char root[64];
    snprintf(root, sizeof root, "127.0.0.1:%d", port);
    /* load libfabric (dlopen) before resetting signals, as linking it used to: its
     * constructors install handlers the rest of this file expects to be replaced */
    ct_fi_load(NULL);
    signal(SIGTERM, SIG_DFL); /* not the Criterion worker's handler */
    if (rank != 0)
        close(lfd);
    const char *prov = j->prov_of ? j->prov_of[rank] : j->prov;
    if (prov)
        setenv("COLLTUNE_FI_PROVIDER", prov, 1);
    if (j->mr_local)
        setenv("COLLTUNE_FI_MR_LOCAL", "1", 1);
    if (j->msg)
        setenv("COLLTUNE_FI_MSG", "1", 1);
    if (ct_boot_tcp_open(&c->boot, rank, j->n, root, rank == 0 ? lfd : -1, job_id, NULL, 10 * SEC,
                         &err) < 0)
        FAIL("bootstrap: %s", err.msg);
    if (rank == 0)
        close(lfd);
    struct ct_tp_cfg cfg = {.peers = j->peers ? j->peers[rank] : NULL};
    int rc = ct_tp_fabric_ops.open(&c->tp, &cfg, c->boot, &err);
    int code = 0;
    if (j->open_error) {
        if (rc == 0 || !strstr(err.msg, j->open_error)) {
            fprintf(stderr, "rank %d: open: expected '%s', got %d '%s'\n", rank, j->open_error, rc,
                    err.msg);
            code = 1;
        }
    } else if (rc < 0) {
        fprintf(stderr, "rank %d: open: %s\n", rank, err.msg);
        code = 1;
    } else {
        code = j->fn(c);
    }
    if (rc == 0)
        ct_tp_fabric_ops.close(c->tp);
    ct_boot_close(c->boot);
#ifdef __SANITIZE_ADDRESS__
    if (code == 0 && __lsan_do_recoverable_leak_check())
        code = 3;
#endif
    return code;
}

/* Shared-memory regions of the libfabric shm provider named after one of the pids. */
static int shm_leftovers(const pid_t *pids, int n)
{
    int count = 0;
    DIR *d = opendir("/dev/shm");
    struct dirent *e;
    while (d && (e = readdir(d)))
        for (int r = 0; r < n; r++) {
            char pre[32];
            int len = snprintf(pre, sizeof pre, "%d:", (int)pids[r]);
            count += !strncmp(e->d_name, pre, (size_t)len);
        }
    if (d)
        closedir(d);
    return count;
}

/* Fork the ranks, wait for all of them (killing them after timeout_s); codes[r] = exit code,
 * codes[n] = shared-memory regions they left behind. */
static void run_job(const struct job *j, int *codes, double timeout_s)
{
    int port = 0;
    int lfd = ct_sock_listen("127.0.0.1", 0, 64, &port, NULL);
    cr_assert_geq(lfd, 0);
    uint64_t job_id = ((uint64_t)getpid() << 32) ^ (uint64_t)ct_now_ns();
    pid_t pids[MAXR];
    fflush(NULL);
    for (int r = 0; r < j->n; r++) {
        pids[r] = fork();
        cr_assert_geq(pids[r], 0);
        if (pids[r] == 0) {
            for (int fd = 3; fd < 1024; fd++)
                if (fd != lfd)
                    close(fd);
            _exit(child_main(j, r, lfd, port, job_id));
        }
    }
    close(lfd);
    int left = j->n;
    int64_t deadline = ct_now_ns() + (int64_t)(timeout_s * 1e9);
    for (int r = 0; r < j->n; r++)
        codes[r] = -1;
    while (left > 0) {
        int st;
        pid_t p = waitpid(-1, &st, WNOHANG);
        if (p > 0) {
            for (int r = 0; r < j->n; r++)
                if (pids[r] == p)
                    codes[r] = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
            left--;
            continue;
        }
        if (ct_now_ns() > deadline) {
            for (int r = 0; r < j->n; r++)
                if (codes[r] < 0)
                    kill(pids[r], SIGKILL);
            while (waitpid(-1, NULL, 0) > 0)
                ;
            for (int r = 0; r < j->n; r++)
                if (codes[r] < 0)
                    codes[r] = 99; /* hung */
            codes[j->n] = shm_leftovers(pids, j->n);
            return;
        }
        usleep(2000);
    }
    codes[j->n] = shm_leftovers(pids, j->n);
}

/* Whether libfabric offers prov here (asked in a child: the worker never loads providers). */
static bool have_provider(const char *prov)
{
#ifdef HAVE_LIBFABRIC
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        if (ct_fi_load(NULL) < 0)
            _exit(1);
        struct fi_info *h = fi_allocinfo(), *list = NULL;
        h->ep_attr->type = FI_EP_RDM;
        h->caps = FI_TAGGED | FI_SEND | FI_RECV;
        h->fabric_attr->prov_name = strdup(prov);
        _exit(fi_getinfo(FI_VERSION(1, 10), NULL, NULL, 0, h, &list) == 0 ? 0 : 1);
    }
    int st = 1;
    return pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0;
#else
    return false;
#endif
}

static void expect_all_ok(const struct job *j, double timeout_s)
{
    if (!ct_tp_fabric_ops.built)
        cr_skip_test("the fabric transport was not built (no libfabric)");
    if (j->prov && !j->open_error && !have_provider(j->prov))
        cr_skip_test("libfabric has no '%s' provider here", j->prov);
    int codes[MAXR + 1];
    run_job(j, codes, timeout_s);
    for (int r = 0; r < j->n; r++)
        cr_expect_eq(codes[r], j->dies && r == j->dies ? 128 + SIGTERM : 0,
                     "rank %d exited with %d (99 = killed after %.0f s)", r, codes[r], timeout_s);
    cr_expect_eq(codes[j->n], 0, "%d shared-memory regions left in /dev/shm", codes[j->n]);
}

/* ---------------------------------------------------------------- helpers in ranks */

/* ---------------------------------------------------------------- exchange */

enum kind { PLAIN, REDUCE, REDUCE_INPLACE };

struct msg {
    size_t bytes;
    enum kind kind;
};

#define NBIG 13
#define NSMALL 48
#define NMSG (NBIG + NSMALL)

static const struct msg big_msgs[NBIG] = {
    {0, PLAIN},
    {1, PLAIN},
    {7, PLAIN},
    {65536, PLAIN},
    {(4u << 20) + 3, PLAIN},
    {0, REDUCE},
    {4, REDUCE},
    {28, REDUCE},
    {65536, REDUCE},
    {(4u << 20) + 4, REDUCE},
    {28, REDUCE_INPLACE},
    {300000, REDUCE_INPLACE},
    {(3u << 20) + 8, REDUCE_INPLACE}, /* several bounce buffers at once */
};

static struct msg msg_at(int idx)
{
    if (idx < NBIG)
        return big_msgs[idx];
    struct msg m = {(size_t)(idx * 37) % 300 + 1, PLAIN}; /* many small ones in flight */
    if (idx % 5 == 0)
        m = (struct msg){(size_t)(idx % 13 + 1) * 4, REDUCE};
    if (idx % 7 == 0)
        m = (struct msg){(size_t)(idx % 11 + 1) * 4, REDUCE_INPLACE};
    return m;
}

static void fill_send(char *p, int src, int dst, int idx)
{
    struct msg m = msg_at(idx);
    if (m.kind == PLAIN)
        for (size_t i = 0; i < m.bytes; i++)
            p[i] = (char)pattern(src, dst, idx, i);
    else
        for (size_t i = 0; i < m.bytes / 4; i++)
            ((float *)p)[i] = fsend(src, dst, idx, i);
}

static int check_recv(struct rank_ctx *c, const char *p, int src, int idx)
{
    struct msg m = msg_at(idx);
    if (m.kind == PLAIN) {
        for (size_t i = 0; i < m.bytes; i++)
            if ((unsigned char)p[i] != pattern(src, c->rank, idx, i))
                FAIL("message %d (%zu bytes) from %d: byte %zu wrong", idx, m.bytes, src, i);
        return 0;
    }
    for (size_t i = 0; i < m.bytes / 4; i++) {
        float want = fmine(c->rank, i) + fsend(src, c->rank, idx, i);
        if (((const float *)p)[i] != want)
            FAIL("reduce %d (%zu bytes) from %d: element %zu is %g, expected %g", idx, m.bytes, src,
                 i, (double)((const float *)p)[i], (double)want);
    }
    return 0;
}

/* Post the receive of message idx from p (aux: separate reduce source). */
static int post_recv(struct rank_ctx *c, int p, int idx, struct ct_req *req, char **buf, char **aux,
                     struct ct_err *err)
{
    static const struct ct_red red = {sum_f32, 4, NULL, NULL};
    struct msg m = msg_at(idx);
    char *rb = buf_alloc(c, m.bytes, err);
    if (!rb)
        FAIL("alloc: %s", err->msg);
    *buf = rb;
    if (m.kind == PLAIN) {
        memset(rb, 0xee, m.bytes);
        if (c->tp->ops->irecv(c->tp, p, rb, NULL, m.bytes, NULL, req, err) < 0)
            FAIL("irecv: %s", err->msg);
        return 0;
    }
    char *src = rb;
    if (m.kind == REDUCE) {
        src = *aux = buf_alloc(c, m.bytes, err);
        if (!src)
            FAIL("alloc: %s", err->msg);
        memset(rb, 0xee, m.bytes);
    }
    for (size_t i = 0; i < m.bytes / 4; i++)
        ((float *)src)[i] = fmine(c->rank, i);
    if (c->tp->ops->irecv(c->tp, p, rb, src, m.bytes, &red, req, err) < 0)
        FAIL("irecv reduce: %s", err->msg);
    return 0;
}

/* Every rank sends every message to every linked peer and receives every message from it;
 * all posted before any is waited for. */
static int exchange_once(struct rank_ctx *c, const unsigned char *peers)
{
    struct ct_err err = {0};
    int n = c->n, me = c->rank;
    int nreq = 2 * (n - 1) * NMSG;
    struct ct_req *reqs = calloc((size_t)nreq, sizeof *reqs);
    int *group = calloc((size_t)nreq, sizeof *group);
    char **buf = calloc((size_t)nreq, sizeof *buf);
    char **aux = calloc((size_t)nreq, sizeof *aux);
    int k = 0;
    for (int p = 0; p < n; p++) {
        if (p == me || (peers && !peers[p]))
            continue;
        for (int idx = 0; idx < NMSG; idx++, k += 2) {
            size_t bytes = msg_at(idx).bytes;
            group[k] = 2 * p;
            if (post_recv(c, p, idx, &reqs[k], &buf[k], &aux[k], &err))
                return 1;
            group[k + 1] = 2 * p + 1;
            buf[k + 1] = buf_alloc(c, bytes, &err);
            if (!buf[k + 1])
                FAIL("alloc: %s", err.msg);
            fill_send(buf[k + 1], me, p, idx);
            if (c->tp->ops->isend(c->tp, p, buf[k + 1], bytes, &reqs[k + 1], &err) < 0)
                FAIL("isend: %s", err.msg);
        }
    }
    if (tp_drive(c->tp, reqs, group, k, 20 * SEC, &err) < 0)
        FAIL("drive: %s", err.msg);
    k = 0;
    for (int p = 0; p < n; p++) {
        if (p == me || (peers && !peers[p]))
            continue;
        for (int idx = 0; idx < NMSG; idx++, k += 2) {
            size_t bytes = msg_at(idx).bytes;
            if (reqs[k].status || reqs[k + 1].status)
                FAIL("request status %d/%d", reqs[k].status, reqs[k + 1].status);
            if (check_recv(c, buf[k], p, idx))
                return 1;
            buf_free(c, buf[k], bytes);
            buf_free(c, buf[k + 1], bytes);
            buf_free(c, aux[k], bytes);
        }
    }
    free(reqs);
    free(group);
    free(buf);
    free(aux);
    return 0;
}

/* Two rounds with two ranks (sequence numbers, buffers and registrations carry over), one
 * with more (they take long enough on two cores). */
static int sc_exchange(struct rank_ctx *c)
{
    struct ct_err err = {0};
    if (exchange_once(c, NULL) || (c->n == 2 && exchange_once(c, NULL)))
        return 1;
    if (ct_tp_barrier(c->tp, 10 * SEC, &err) < 0)
        FAIL("barrier: %s", err.msg);
    return 0;
}

Test(fabric, exchange_tcp_2_ranks)
{
    struct job j = {.n = 2, .prov = "tcp;ofi_rxm", .fn = sc_exchange};
    expect_all_ok(&j, 60);
}

Test(fabric, exchange_tcp_4_ranks)
{
    struct job j = {.n = 4, .prov = "tcp;ofi_rxm", .fn = sc_exchange};
    expect_all_ok(&j, 60);
}

Test(fabric, exchange_shm_2_ranks)
{
    struct job j = {.n = 2, .prov = "shm", .fn = sc_exchange};
    expect_all_ok(&j, 60);
}

Test(fabric, exchange_shm_4_ranks)
{
    struct job j = {.n = 4, .prov = "shm", .fn = sc_exchange};
    expect_all_ok(&j, 60);
}

Test(fabric, exchange_sockets_4_ranks)
{
    struct job j = {.n = 4, .prov = "sockets", .fn = sc_exchange};
    expect_all_ok(&j, 60);
}

/* Every buffer needs a descriptor, and the buffers are not alloc()'d: the registration
 * cache registers, reuses and evicts ranges (more live buffers than its soft size). */
Test(fabric, exchange_registration_cache_foreign_buffers)
{
    struct job j = {
        .n = 2, .prov = "tcp;ofi_rxm", .mr_local = true, .foreign = true, .fn = sc_exchange};
    expect_all_ok(&j, 60);
    j.foreign = false; /* alloc()'d buffers registered once each */
    expect_all_ok(&j, 60);
}

/* Untagged messages over directed receives with send-after-send order. */
Test(fabric, exchange_untagged)
{
    struct job j = {.n = 4, .prov = "tcp;ofi_rxm", .msg = true, .fn = sc_exchange};
    expect_all_ok(&j, 60);
}

/* ---------------------------------------------------------------- many in flight */

#define NFLOOD 3000 /* more than the provider's queue depths (capped at 512) */

/* Rank pairs (0,1), (2,3): NFLOOD small messages each way, all posted before any wait. */
static int sc_flood(struct rank_ctx *c)
{
    struct ct_err err = {0};
    int p = c->rank ^ 1;
    struct ct_req *reqs = calloc(2 * NFLOOD, sizeof *reqs);
    int *group = calloc(2 * NFLOOD, sizeof *group);
    uint32_t *out = calloc(NFLOOD, sizeof *out), *in = calloc(NFLOOD, sizeof *in);
    for (int i = 0; i < NFLOOD; i++) {
        out[i] = (uint32_t)(c->rank * 1000003 + i);
        group[2 * i] = 0;
        group[2 * i + 1] = 1;
        if (c->tp->ops->isend(c->tp, p, &out[i], sizeof out[i], &reqs[2 * i + 1], &err) < 0 ||
            c->tp->ops->irecv(c->tp, p, &in[i], NULL, sizeof in[i], NULL, &reqs[2 * i], &err) < 0)
            FAIL("post %d: %s", i, err.msg);
    }
    if (tp_drive(c->tp, reqs, group, 2 * NFLOOD, 20 * SEC, &err) < 0)
        FAIL("drive: %s", err.msg);
    for (int i = 0; i < NFLOOD; i++)
        if (in[i] != (uint32_t)(p * 1000003 + i))
            FAIL("message %d: got %u", i, in[i]);
    /* a peer outside the subset is refused */
    struct ct_req r = {0};
    if (c->n > 2 && c->tp->ops->isend(c->tp, (c->rank + 2) % c->n, out, 4, &r, &err) != CT_EINVAL)
        FAIL("isend to a rank outside cfg->peers was accepted");
    free(reqs);
    free(group);
    free(out);
    free(in);
    return 0;
}

static const unsigned char pairs[MAXR][MAXR] = {
    {0, 1, 0, 0}, {1, 0, 0, 0}, {0, 0, 0, 1}, {0, 0, 1, 0}};

Test(fabric, many_in_flight_peer_subsets)
{
    struct job j = {.n = 4, .prov = "tcp;ofi_rxm", .fn = sc_flood, .peers = pairs};
    expect_all_ok(&j, 40);
    j.prov = "shm";
    expect_all_ok(&j, 40);
}

/* ---------------------------------------------------------------- provider choice */

static int sc_which(struct rank_ctx *c)
{
#ifdef HAVE_LIBFABRIC
    const struct fab_tp *f = (const struct fab_tp *)c->tp;
    const char *want = c->arg;
    if (!strstr(f->prov, want))
        FAIL("provider '%s', expected '%s'", f->prov, want);
#endif
    struct ct_err err = {0};
    if (ct_tp_barrier(c->tp, 10 * SEC, &err) < 0)
        FAIL("barrier: %s", err.msg);
    return 0;
}

Test(fabric, provider_choice)
{
    /* the automatic choice is the first of the preference list this host has */
    static const char *const pref[] = {"verbs;ofi_rxm", "efa", "tcp;ofi_rxm", "tcp", "shm"};
    const char *first = NULL;
    for (size_t i = 0; !first && i < sizeof pref / sizeof pref[0]; i++)
        if (have_provider(pref[i]))
            first = pref[i];
    if (!first)
        cr_skip_test("no libfabric provider here");
    struct job j = {.n = 2, .fn = sc_which, .arg = first};
    expect_all_ok(&j, 20);
    if (have_provider("tcp")) {
        j.prov = "tcp"; /* libfabric layers rxm over tcp for reliable datagrams */
        j.arg = "tcp";
        expect_all_ok(&j, 20);
    }
    struct job bad = {
        .n = 2, .prov = "no-such-provider", .open_error = "provider 'no-such-provider' is not"};
    expect_all_ok(&bad, 20);
    static const char *const mixed[] = {"tcp;ofi_rxm", "shm"};
    struct job mix = {.n = 2, .prov_of = mixed, .open_error = "sets COLLTUNE_FI_PROVIDER"};
    expect_all_ok(&mix, 20);
}

/* ---------------------------------------------------------------- length mismatch */

struct mismatch {
    size_t sent, posted;
};

/* Rank 0 sends m->sent bytes, rank 1 posts a receive of m->posted: rank 1 must fail. */
static int sc_mismatch(struct rank_ctx *c)
{
    const struct mismatch *m = c->arg;
    struct ct_err err = {0};
    size_t len = c->rank == 0 ? m->sent : m->posted;
    char *b = c->tp->ops->alloc(c->tp, len, &err);
    memset(b, 1, len);
    struct ct_req req = {0};
    if (c->rank == 0) {
        if (c->tp->ops->isend(c->tp, 1, b, len, &req, &err) < 0)
            FAIL("isend: %s", err.msg);
        int64_t end = ct_now_ns() + SEC / 2; /* the receiver may stop reading: do not insist */
        while (!req.done && ct_now_ns() < end && c->tp->ops->progress(c->tp, &err) >= 0)
            c->tp->ops->wait(c->tp, SEC / 100, NULL);
    } else {
        if (c->tp->ops->irecv(c->tp, 0, b, NULL, len, NULL, &req, &err) < 0)
            FAIL("irecv: %s", err.msg);
        int rc = ct_tp_wait_req(c->tp, &req, 5 * SEC, &err);
        if (rc != CT_EPEER || !strstr(err.msg, "peer rank 0") ||
            !strstr(err.msg, "length mismatch"))
            FAIL("expected a length mismatch naming rank 0, got %d '%s'", rc, err.msg);
        if (!req.done || req.status != CT_EPEER)
            FAIL("the failed request is not completed with the error");
        struct ct_req again = {0};
        if (c->tp->ops->isend(c->tp, 0, b, 1, &again, &err) != CT_EPEER)
            FAIL("isend after a failure did not report it");
    }
    c->tp->ops->free(c->tp, b, len);
    if (ct_boot_barrier(c->boot, &err) < 0)
        FAIL("boot barrier: %s", err.msg);
    return 0;
}

Test(fabric, length_mismatch)
{
    static const struct mismatch cases[] = {
        {100, 200},                       /* shorter, one piece */
        {200, 100},                       /* longer, one piece (truncation) */
        {(4u << 20) + 3, 4u << 20},       /* one more piece than posted */
        {1u << 20, 2u << 20},             /* whole pieces: the sender's last comes too early */
        {(2u << 20) + 5, (2u << 20) + 6}, /* same piece count, last piece differs */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct job j = {.n = 2, .prov = "tcp;ofi_rxm", .fn = sc_mismatch, .arg = &cases[i]};
        expect_all_ok(&j, 20);
    }
    struct job s = {.n = 2, .prov = "shm", .fn = sc_mismatch, .arg = &cases[3]};
    expect_all_ok(&s, 20);
}

/* ---------------------------------------------------------------- peer death */

#define DEATH_BYTES (64u << 20)

/*
 * Rank 1 starts sending DEATH_BYTES to every other rank, meets them at a bootstrap barrier
 * and dies of SIGTERM without closing anything (libfabric's shm provider removes its region
 * from a SIGTERM handler; after SIGKILL it would stay in /dev/shm). The others post their receives
 * after the barrier, so rank 1 dies mid-message; each must report an error naming rank 1 within 5
 * s.
 */
static int sc_death(struct rank_ctx *c)
{
    struct ct_err err = {0};
    char *b = c->tp->ops->alloc(c->tp, DEATH_BYTES, &err);
    if (!b)
        FAIL("alloc: %s", err.msg);
    if (c->rank == 1) {
        struct ct_req reqs[MAXR] = {{0}};
        memset(b, 7, DEATH_BYTES);
        for (int p = 0; p < c->n; p++)
            if (p != 1 && c->tp->ops->isend(c->tp, p, b, DEATH_BYTES, &reqs[p], &err) < 0)
                FAIL("isend: %s", err.msg);
        for (int i = 0; i < 20; i++)
            if (c->tp->ops->progress(c->tp, &err) < 0)
                FAIL("progress: %s", err.msg);
        if (ct_boot_barrier(c->boot, &err) < 0)
            FAIL("boot barrier: %s", err.msg);
        raise(SIGTERM); /* dies without closing anything */
        _exit(0);
    }
    if (ct_boot_barrier(c->boot, &err) < 0)
        FAIL("boot barrier: %s", err.msg);
    usleep(20000); /* let rank 1 be gone */
    struct ct_req req = {0};
    int64_t t0 = ct_now_ns();
    if (c->tp->ops->irecv(c->tp, 1, b, NULL, DEATH_BYTES, NULL, &req, &err) < 0)
        FAIL("irecv: %s", err.msg);
    int rc = ct_tp_wait_req(c->tp, &req, 10 * SEC, &err);
    double s = (double)(ct_now_ns() - t0) / 1e9;
    if (rc != CT_EPEER || !strstr(err.msg, "peer rank 1 ("))
        FAIL("expected an error naming rank 1, got %d '%s'", rc, err.msg);
    if (s > 5)
        FAIL("the error took %.1f s", s);
    c->tp->ops->free(c->tp, b, DEATH_BYTES);
    return 0;
}

Test(fabric, peer_dies_mid_message)
{
    struct job j = {.n = 2, .prov = "tcp;ofi_rxm", .fn = sc_death, .dies = 1};
    expect_all_ok(&j, 20);
    j.n = 4;
    expect_all_ok(&j, 20);
    j.n = 3;
    j.prov = "shm";
    expect_all_ok(&j, 20);
}

/* A peer that stays alive but never sends: the wait times out naming it. */
static int sc_silent(struct rank_ctx *c)
{
    struct ct_err err = {0};
    if (c->rank == 0) {
        char b[16];
        struct ct_req req = {0};
        if (c->tp->ops->irecv(c->tp, 1, b, NULL, sizeof b, NULL, &req, &err) < 0)
            FAIL("irecv: %s", err.msg);
        int rc = ct_tp_wait_req(c->tp, &req, SEC / 3, &err);
        if (rc != CT_ETIMEDOUT || !strstr(err.msg, "waiting on peer rank 1 ("))
            FAIL("expected a timeout naming rank 1, got %d '%s'", rc, err.msg);
    }
    if (ct_boot_barrier(c->boot, &err) < 0)
        FAIL("boot barrier: %s", err.msg);
    return 0;
}

Test(fabric, silent_peer_times_out)
{
    struct job j = {.n = 2, .prov = "tcp;ofi_rxm", .fn = sc_silent};
    expect_all_ok(&j, 20);
}
