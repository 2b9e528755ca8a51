/* SPDX-License-Identifier: MIT */
/*
 * tcp transport over loopback with real processes: exchanges of many sizes in both
 * directions with many messages in flight, fused reduce, length mismatch, a peer that dies
 * mid-message, garbage on a stream, and foreign connections during setup.
 */
#include <criterion/criterion.h>
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdbool.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/clock.h"
#include "lib/sock.h"
#include "transport/boot.h"
#include "transport/frame.h"
#include "transport/tp.h"
#include "tests/transport/tp_check.h"

#ifdef __SANITIZE_ADDRESS__
#include <sanitizer/lsan_interface.h>

/* Ranks check for leaks before _exit(); they are forks of a Criterion worker whose I/O
 * thread does not exist in the child, so what that thread allocated is not ours to judge.
 * (Every allocation of a test passes through libcriterion frames: do not suppress those.) */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void)
{
    return "leak:libnng\n";
}
#endif

extern const struct ct_tp_ops ct_tp_tcp_ops;

#define SEC 1000000000LL
#define MAXR 8

/* What one rank of a job does once its transport is open; returns its exit code. */
struct rank_ctx {
    int rank, n, streams;
    int boot_port;
    struct ct_boot *boot;
    struct ct_tp *tp;
    const void *arg;
};
typedef int (*scenario_fn)(struct rank_ctx *c);

struct job {
    int n, streams;
    scenario_fn fn;
    const void *arg;
    scenario_fn before_open;            /* optional, runs between bootstrap and open */
    const unsigned char (*peers)[MAXR]; /* optional cfg->peers per rank */
    const char *port_range;             /* optional COLLTUNE_PORT_RANGE */
    const char *const *hosts;           /* optional host name per rank (bootstrap override) */
    const char *ifname;                 /* optional cfg->ifname */
    const char *open_error;             /* open must fail with a message containing this */
};

#define FAIL(...)                                                                                  \
    do {                                                                                           \
        fprintf(stderr, "rank %d: ", c->rank);                                                     \
        fprintf(stderr, __VA_ARGS__);                                                              \
        fprintf(stderr, "\n");                                                                     \
        return 1;                                                                                  \
    } while (0)

/* Open the transport as the job says; an expected failure leaves c->tp NULL and returns 0. */
static int open_rank(const struct job *j, struct rank_ctx *c)
{
    struct ct_err err = {0};
    struct ct_tp_cfg cfg = {
        .streams = j->streams, .peers = j->peers ? j->peers[c->rank] : NULL, .ifname = j->ifname};
    int rc = ct_tp_tcp_ops.open(&c->tp, &cfg, c->boot, &err);
    if (rc < 0 && (!j->open_error || !strstr(err.msg, j->open_error)))
        FAIL("open: %s", err.msg);
    if (rc == 0 && j->open_error)
        FAIL("open succeeded, expected '%s'", j->open_error);
    return 0;
}

static int child_main(const struct job *j, int rank, int lfd, int port, uint64_t job_id)
{
    struct rank_ctx ctx = {
        .rank = rank, .n = j->n, .streams = j->streams, .boot_port = port, .arg = j->arg};
    struct rank_ctx *c = &ctx;
    struct ct_err err = {0};
    char root[64];
    snprintf(root, sizeof root, "127.0.0.1:%d", port);
    if (rank != 0)
        close(lfd);
    if (j->port_range)
        setenv("COLLTUNE_PORT_RANGE", j->port_range, 1);
    if (ct_boot_tcp_open(&c->boot, rank, j->n, root, rank == 0 ? lfd : -1, job_id,
                         j->hosts ? j->hosts[rank] : NULL, 10 * SEC, &err) < 0)
        FAIL("bootstrap: %s", err.msg);
    if (rank == 0)
        close(lfd);
    int code = j->before_open ? j->before_open(c) : 0;
    if (code == 0 && !c->tp)
        code = open_rank(j, c);
    if (code == 0 && c->tp)
        code = j->fn(c);
    if (c->tp)
        ct_tp_tcp_ops.close(c->tp);
    ct_boot_close(c->boot);
#ifdef __SANITIZE_ADDRESS__
    if (code == 0 && __lsan_do_recoverable_leak_check())
        code = 3;
#endif
    return code;
}

/* Fork the ranks, wait for all of them (killing them after timeout_s); codes[r] = exit code. */
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
            /* a rank holds nothing of the Criterion worker's (its pipes and sockets) */
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
            return;
        }
        usleep(2000);
    }
}

static void expect_all_ok(const struct job *j, double timeout_s)
{
    int codes[MAXR];
    run_job(j, codes, timeout_s);
    for (int r = 0; r < j->n; r++)
        cr_expect_eq(codes[r], 0, "rank %d exited with %d (99 = killed after %.0f s)", r, codes[r],
                     timeout_s);
}

/* ---------------------------------------------------------------- helpers in ranks */

/* ---------------------------------------------------------------- exchange */

enum kind { PLAIN, REDUCE, REDUCE_INPLACE };

struct msg {
    size_t bytes;
    enum kind kind;
};

#define NSMALL 48
#define NBIG 12
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
};

static struct msg msg_at(int idx)
{
    if (idx < NBIG)
        return big_msgs[idx];
    struct msg m = {(size_t)(idx * 37) % 300 + 1, PLAIN}; /* many small ones in flight */
    if (idx % 5 == 0)
        m = (struct msg){(size_t)(idx % 13 + 1) * 4, REDUCE};
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
    } else {
        for (size_t i = 0; i < m.bytes / 4; i++) {
            float want = fmine(c->rank, i) + fsend(src, c->rank, idx, i);
            if (((const float *)p)[i] != want)
                FAIL("reduce %d (%zu bytes) from %d: element %zu is %g, expected %g", idx, m.bytes,
                     src, i, (double)((const float *)p)[i], (double)want);
        }
    }
    return 0;
}

/* Post the receive of message idx from p into slot k (aux: separate reduce source). */
static int post_recv(struct rank_ctx *c, int p, int idx, struct ct_req *req, char **buf, char **aux,
                     struct ct_err *err)
{
    static const struct ct_red red = {sum_f32, 4, NULL, NULL};
    struct msg m = msg_at(idx);
    char *rb = c->tp->ops->alloc(c->tp, m.bytes, err);
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
    if (m.kind == REDUCE) { /* dst separate from src */
        src = *aux = c->tp->ops->alloc(c->tp, m.bytes, err);
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

/* Every rank sends every message to every peer and receives every message from every peer;
 * all posted before any is waited for. */
static int sc_exchange(struct rank_ctx *c)
{
    struct ct_err err = {0};
    int n = c->n, me = c->rank;
    int nreq = 2 * (n - 1) * NMSG;
    struct ct_req *reqs = calloc((size_t)nreq, sizeof *reqs);
    int *group = calloc((size_t)nreq, sizeof *group);
    char **buf = calloc((size_t)nreq, sizeof *buf);
    char **aux = calloc((size_t)nreq, sizeof *aux);
    int k = 0;
    for (int p = 0; p < n; p++)
        for (int idx = 0; p != me && idx < NMSG; idx++, k += 2) {
            size_t bytes = msg_at(idx).bytes;
            group[k] = 2 * p;
            if (post_recv(c, p, idx, &reqs[k], &buf[k], &aux[k], &err))
                return 1;
            group[k + 1] = 2 * p + 1;
            buf[k + 1] = c->tp->ops->alloc(c->tp, bytes, &err);
            if (!buf[k + 1])
                FAIL("alloc: %s", err.msg);
            fill_send(buf[k + 1], me, p, idx);
            if (c->tp->ops->isend(c->tp, p, buf[k + 1], bytes, &reqs[k + 1], &err) < 0)
                FAIL("isend: %s", err.msg);
        }
    if (tp_drive(c->tp, reqs, group, k, 20 * SEC, &err) < 0)
        FAIL("drive: %s", err.msg);
    k = 0;
    for (int p = 0; p < n; p++)
        for (int idx = 0; p != me && idx < NMSG; idx++, k += 2) {
            size_t bytes = msg_at(idx).bytes;
            if (reqs[k].status || reqs[k + 1].status)
                FAIL("request status %d/%d", reqs[k].status, reqs[k + 1].status);
            if (check_recv(c, buf[k], p, idx))
                return 1;
            c->tp->ops->free(c->tp, buf[k], bytes);
            c->tp->ops->free(c->tp, buf[k + 1], bytes);
            if (aux[k])
                c->tp->ops->free(c->tp, aux[k], bytes);
        }
    free(reqs);
    free(group);
    free(buf);
    free(aux);
    if (ct_tp_barrier(c->tp, 10 * SEC, &err) < 0)
        FAIL("barrier: %s", err.msg);
    return 0;
}

Test(tcp, exchange_2_ranks_1_stream)
{
    struct job j = {.n = 2, .streams = 1, .fn = sc_exchange};
    expect_all_ok(&j, 40);
}

Test(tcp, exchange_2_ranks_4_streams)
{
    struct job j = {.n = 2, .streams = 4, .fn = sc_exchange};
    expect_all_ok(&j, 40);
}

Test(tcp, exchange_4_ranks_1_stream)
{
    struct job j = {.n = 4, .streams = 1, .fn = sc_exchange};
    expect_all_ok(&j, 40);
}

Test(tcp, exchange_4_ranks_4_streams)
{
    struct job j = {.n = 4, .streams = 4, .fn = sc_exchange};
    expect_all_ok(&j, 40);
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
        int64_t end = ct_now_ns() + 2 * SEC; /* the receiver may stop reading: do not insist */
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
        /* the error is sticky */
        struct ct_req again = {0};
        if (c->tp->ops->isend(c->tp, 0, b, 1, &again, &err) != CT_EPEER)
            FAIL("isend after a failure did not report it");
    }
    c->tp->ops->free(c->tp, b, len);
    if (ct_boot_barrier(c->boot, &err) < 0)
        FAIL("boot barrier: %s", err.msg);
    return 0;
}

Test(tcp, length_mismatch_small)
{
    struct mismatch m = {100, 200};
    struct job j = {.n = 2, .streams = 1, .fn = sc_mismatch, .arg = &m};
    expect_all_ok(&j, 20);
}

Test(tcp, length_mismatch_striped)
{
    struct mismatch m = {(4u << 20) + 3, 4u << 20};
    struct job j = {.n = 2, .streams = 4, .fn = sc_mismatch, .arg = &m};
    expect_all_ok(&j, 20);
    struct mismatch m1 = {(4u << 20) + 3, 4u << 20};
    struct job j1 = {.n = 2, .streams = 1, .fn = sc_mismatch, .arg = &m1};
    expect_all_ok(&j1, 20);
}

/* ---------------------------------------------------------------- peer death */

#define DEATH_BYTES (64u << 20)

/*
 * Rank 1 starts sending DEATH_BYTES to every other rank, pushes what the socket buffers
 * take (less than the message), meets the others at a bootstrap barrier and exits without
 * closing anything. The others post their receives only after the barrier, so rank 1 dies
 * mid-message; each must report an error naming rank 1 within 5 s.
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
        for (int p = 0; p < c->n; p++)
            if (p != 1 && reqs[p].done)
                FAIL("send to %d completed before the receiver posted", p);
        _exit(0);
    }
    if (ct_boot_barrier(c->boot, &err) < 0)
        FAIL("boot barrier: %s", err.msg);
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

Test(tcp, peer_dies_mid_message_2_ranks)
{
    struct job j = {.n = 2, .streams = 1, .fn = sc_death};
    expect_all_ok(&j, 20);
}

Test(tcp, peer_dies_mid_message_4_ranks)
{
    struct job j = {.n = 4, .streams = 2, .fn = sc_death};
    expect_all_ok(&j, 20);
}

/* ---------------------------------------------------------------- garbage on a stream */

/* Whether fd is a connected TCP socket that is not a bootstrap connection; *peer_out gets
 * the peer's address. */
static int is_data_socket(int fd, int boot_port, struct sockaddr_in *peer_out)
{
    struct stat st;
    struct sockaddr_in peer, self;
    socklen_t sl = sizeof peer, ml = sizeof self;
    int type = 0;
    socklen_t tl = sizeof type;
    if (fstat(fd, &st) < 0 || !S_ISSOCK(st.st_mode) ||
        getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &tl) < 0 || type != SOCK_STREAM ||
        getpeername(fd, (struct sockaddr *)&peer, &sl) < 0 || peer.sin_family != AF_INET ||
        getsockname(fd, (struct sockaddr *)&self, &ml) < 0)
        return 0;
    if (peer_out)
        *peer_out = peer;
    return ntohs(peer.sin_port) != boot_port && ntohs(self.sin_port) != boot_port;
}

/* Rank 1 writes garbage into every data socket it has; rank 0's next receive must fail. */
static int sc_garbage(struct rank_ctx *c)
{
    struct ct_err err = {0};
    char b[100];
    if (c->rank == 1) {
        unsigned char junk[CT_FRAME_BYTES];
        memset(junk, 0x5a, sizeof junk);
        int hit = 0;
        for (int fd = 3; fd < 1024; fd++)
            if (is_data_socket(fd, c->boot_port, NULL) && write(fd, junk, sizeof junk) > 0)
                hit++;
        if (hit != c->streams)
            FAIL("found %d data sockets, expected %d", hit, c->streams);
    } else {
        struct ct_req req = {0};
        if (c->tp->ops->irecv(c->tp, 1, b, NULL, sizeof b, NULL, &req, &err) < 0)
            FAIL("irecv: %s", err.msg);
        int rc = ct_tp_wait_req(c->tp, &req, 5 * SEC, &err);
        if (rc != CT_EPEER || !strstr(err.msg, "peer rank 1 (") || !strstr(err.msg, "bad frame"))
            FAIL("expected a bad frame error naming rank 1, got %d '%s'", rc, err.msg);
    }
    if (ct_boot_barrier(c->boot, &err) < 0)
        FAIL("boot barrier: %s", err.msg);
    return 0;
}

Test(tcp, garbage_on_stream)
{
    struct job j = {.n = 2, .streams = 1, .fn = sc_garbage};
    expect_all_ok(&j, 20);
    j.streams = 3;
    expect_all_ok(&j, 20);
}

/* ---------------------------------------------------------------- foreign connections */

struct attack {
    int lo, hi; /* COLLTUNE_PORT_RANGE */
};

static int conn_closed_within(int fd, int ms)
{
    struct pollfd p = {fd, POLLIN, 0};
    if (poll(&p, 1, ms) <= 0)
        return 0;
    char tmp[256];
    ssize_t n = recv(fd, tmp, sizeof tmp, MSG_DONTWAIT);
    return n == 0 || (n < 0 && errno != EAGAIN);
}

/*
 * The last rank first plays attacker: it waits until every other rank listens inside the
 * port range, then connects to each of them three times: random bytes, a well-formed
 * handshake of another job, and a silent connection. Then it opens its own transport; the
 * job must work and every foreign connection must be closed by the acceptors.
 */
static int before_open_attack(struct rank_ctx *c)
{
    const struct attack *a = c->arg;
    if (c->rank != c->n - 1)
        return 0;
    int fds[MAXR][3], found = 0;
    int64_t end = ct_now_ns() + 5 * SEC;
    bool seen[64] = {false}; /* by port - a->lo */
    while (found < c->n - 1 && ct_now_ns() < end) {
        for (int port = a->lo; port <= a->hi && found < c->n - 1; port++) {
            if (seen[port - a->lo])
                continue;
            struct ct_err e = {0};
            int fd = ct_sock_connect("127.0.0.1", port, ct_now_ns(), &e);
            if (fd < 0)
                continue;
            seen[port - a->lo] = true;
            unsigned char junk[CT_HELLO_BYTES];
            for (size_t i = 0; i < sizeof junk; i++)
                junk[i] = (unsigned char)(i * 37 + 11);
            if (write(fd, junk, sizeof junk) != (ssize_t)sizeof junk)
                FAIL("write junk");
            struct ct_hello h = {.kind = CT_HELLO_CONNECT,
                                 .stream = 0,
                                 .nstreams = (uint16_t)c->streams,
                                 .from = (uint32_t)c->rank,
                                 .to = 0,
                                 .size = (uint32_t)c->n,
                                 .job_id = c->boot->job_id ^ 1};
            unsigned char wire[CT_HELLO_BYTES];
            ct_hello_encode(&h, wire);
            int fd2 = ct_sock_connect("127.0.0.1", port, ct_now_ns() + SEC, &e);
            int fd3 = ct_sock_connect("127.0.0.1", port, ct_now_ns() + SEC, &e);
            if (fd2 < 0 || fd3 < 0 || write(fd2, wire, sizeof wire) != (ssize_t)sizeof wire)
                FAIL("second connections to port %d: %s", port, e.msg);
            fds[found][0] = fd;
            fds[found][1] = fd2;
            fds[found][2] = fd3;
            found++;
        }
        usleep(10000);
    }
    if (found != c->n - 1)
        FAIL("found %d listening ranks in %d-%d, expected %d", found, a->lo, a->hi, c->n - 1);
    struct ct_err err = {0};
    struct ct_tp_cfg cfg = {.streams = c->streams};
    if (ct_tp_tcp_ops.open(&c->tp, &cfg, c->boot, &err) < 0)
        FAIL("open: %s", err.msg);
    for (int i = 0; i < found; i++)
        for (int k = 0; k < 3; k++) {
            if (!conn_closed_within(fds[i][k], 5000))
                FAIL("foreign connection %d/%d was not closed", i, k);
            close(fds[i][k]);
        }
    return 0;
}

/* After the attack: a small exchange among all ranks, then a barrier. */
static int sc_after_attack(struct rank_ctx *c)
{
    struct ct_err err = {0};
    for (int p = 0; p < c->n; p++) {
        if (p == c->rank)
            continue;
        char out[64], in[64];
        memset(out, c->rank, sizeof out);
        struct ct_req rr = {0}, sr = {0};
        if (c->tp->ops->irecv(c->tp, p, in, NULL, sizeof in, NULL, &rr, &err) < 0 ||
            c->tp->ops->isend(c->tp, p, out, sizeof out, &sr, &err) < 0 ||
            ct_tp_wait_req(c->tp, &rr, 5 * SEC, &err) < 0 ||
            ct_tp_wait_req(c->tp, &sr, 5 * SEC, &err) < 0)
            FAIL("exchange with %d: %s", p, err.msg);
        for (size_t i = 0; i < sizeof in; i++)
            if (in[i] != (char)p)
                FAIL("wrong byte from %d", p);
    }
    if (ct_tp_barrier(c->tp, 10 * SEC, &err) < 0)
        FAIL("barrier: %s", err.msg);
    return 0;
}

Test(tcp, foreign_connections_rejected)
{
    struct attack a;
    a.lo = 20000 + (int)(getpid() % 1500) * 8;
    a.hi = a.lo + 7;
    char range[32];
    snprintf(range, sizeof range, "%d-%d", a.lo, a.hi);
    struct job j = {.n = 3,
                    .streams = 2,
                    .fn = sc_after_attack,
                    .arg = &a,
                    .before_open = before_open_attack,
                    .port_range = range};
    expect_all_ok(&j, 20);
}

/* COLLTUNE_PORT_RANGE's helper: busy ports are skipped, a full range is a clear error. */
Test(tcp, port_range_skips_busy_ports)
{
    int lo = 12000 + (int)(getpid() % 1000) * 8, hi = lo + 2, port = 0;
    struct ct_err err = {0};
    int busy = ct_sock_listen("127.0.0.1", lo, 4, NULL, &err);
    if (busy < 0)
        cr_skip_test("port %d is taken: %s", lo, err.msg);
    int a = ct_sock_listen_range("127.0.0.1", lo, hi, 0, 4, 0, &port, &err);
    cr_assert_geq(a, 0, "%s", err.msg);
    cr_assert_eq(port, lo + 1);
    int b = ct_sock_listen_range("127.0.0.1", lo, hi, 1, 4, 0, &port, &err);
    cr_assert_geq(b, 0, "%s", err.msg);
    cr_assert_eq(port, lo + 2);
    int c = ct_sock_listen_range("127.0.0.1", lo, hi, 2, 4, 0, &port, &err);
    cr_assert_eq(c, CT_EIO);
    char want[96];
    snprintf(want, sizeof want, "every port in %d-%d is in use", lo, hi);
    cr_assert(strstr(err.msg, want), "%s", err.msg);
    close(busy);
    close(a);
    close(b);
}

/* ---------------------------------------------------------------- peer subsets */

static int sc_subset(struct rank_ctx *c)
{
    struct ct_err err = {0};
    char x = (char)c->rank, y = 0;
    struct ct_req req = {0};
    if (c->rank == 2) {
        if (c->tp->ops->isend(c->tp, 0, &x, 1, &req, &err) != CT_EINVAL ||
            !strstr(err.msg, "not connected"))
            FAIL("send to an unconnected peer: '%s'", err.msg);
        return 0;
    }
    int p = 1 - c->rank;
    if (ct_tp_send(c->tp, p, &x, 1, 5 * SEC, &err) < 0 ||
        ct_tp_recv(c->tp, p, &y, 1, 5 * SEC, &err) < 0 || y != (char)p)
        FAIL("exchange with %d: %s", p, err.msg);
    return 0;
}

Test(tcp, peer_subset)
{
    static const unsigned char peers[MAXR][MAXR] = {{0, 1, 0}, {1, 0, 0}, {0, 0, 0}};
    struct job j = {.n = 3, .streams = 2, .fn = sc_subset, .peers = peers};
    expect_all_ok(&j, 20);
}

/* ---------------------------------------------------------------- published address */

/* Exchange with the other rank, then check the address every data socket connects to. */
static int sc_check_addr(struct rank_ctx *c)
{
    const char *want = c->arg;
    struct ct_err err = {0};
    int p = 1 - c->rank;
    char x = (char)(c->rank + 10), y = 0;
    if (ct_tp_send(c->tp, p, &x, 1, 5 * SEC, &err) < 0 ||
        ct_tp_recv(c->tp, p, &y, 1, 5 * SEC, &err) < 0 || y != (char)(p + 10))
        FAIL("exchange with %d: %s", p, err.msg);
    int hit = 0;
    for (int fd = 3; fd < 1024; fd++) {
        struct sockaddr_in peer;
        char text[64];
        if (!is_data_socket(fd, c->boot_port, &peer))
            continue;
        inet_ntop(AF_INET, &peer.sin_addr, text, sizeof text);
        if (strcmp(text, want))
            FAIL("data socket to %s, expected %s", text, want);
        hit++;
    }
    if (hit != c->streams)
        FAIL("found %d data sockets, expected %d", hit, c->streams);
    return 0;
}

static const char *const two_nodes[] = {"ct-node-a", "ct-node-b"};

/* Ranks on different hosts must not publish 127.0.0.1; here (no resolvable host names) the
 * first interface that is up is used. */
Test(tcp, two_nodes_publish_routable_address)
{
    char want[64];
    if (ct_sock_first_addr(want, sizeof want, NULL) < 0)
        cr_skip_test("no non-loopback IPv4 interface is up");
    struct job j = {.n = 2, .streams = 2, .fn = sc_check_addr, .arg = want, .hosts = two_nodes};
    expect_all_ok(&j, 20);
}

Test(tcp, ifname_forces_address)
{
    struct job j = {.n = 2,
                    .streams = 1,
                    .fn = sc_check_addr,
                    .arg = "127.0.0.1",
                    .hosts = two_nodes,
                    .ifname = "lo"};
    expect_all_ok(&j, 20);
}

Test(tcp, ifname_missing_fails_open)
{
    struct job j = {.n = 2,
                    .streams = 1,
                    .fn = sc_check_addr,
                    .ifname = "ct-none0",
                    .open_error = "no interface 'ct-none0' on this host"};
    expect_all_ok(&j, 20);
}

Test(tcp, bad_port_range_fails_open)
{
    struct job j = {.n = 2,
                    .streams = 1,
                    .fn = sc_check_addr,
                    .port_range = "9-5",
                    .open_error = "COLLTUNE_PORT_RANGE: bad port range '9-5'"};
    expect_all_ok(&j, 20);
}
