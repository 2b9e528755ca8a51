/* SPDX-License-Identifier: MIT */
/*
 * The tcp star bootstrap: every rank connects to rank 0, which checks each hello (token,
 * size, rank), answers with the job id, token and tables, and relays allgathers.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/sockios.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../lib/clock.h"
#include "../lib/sock.h"
#include "boot_int.h"

/*
 * Wire. After the 128-byte hello and welcome (ct_boot_hello_*), the root sends the host
 * table (size x 64 bytes) and the address table (size x 48 bytes). Then every collective
 * message is a 16-byte header (magic "CTBM", kind, payload length; little endian) and its
 * payload: ranks send DATA with their blob, the root answers DATA with all blobs, or ABORT
 * with a reason (at most ABORT_MAX bytes) when a rank failed, so every rank learns which.
 * BEAT (no payload) may come before a DATA: its sender is alive and busy (ct_boot_beat); a
 * wait for that DATA then runs the timeout from the beat. STALL (no payload; the length field
 * is a rank) may come before a DATA too: its sender found that rank stalled
 * (ct_boot_tell_stalled); the root passes it on to the other ranks. FIRST (no payload; the
 * length field is a rank, or the job size for none) is rank 0's answer to the ranks that left
 * on a failure: the rank that failed first (ct_boot_first_failure).
 */
#define MSG_MAGIC 0x4d425443u /* "CTBM" */
#define MSG_BYTES 16
#define MSG_DATA 1u
#define MSG_ABORT 2u
#define MSG_BEAT 3u
#define MSG_STALL 4u
#define MSG_FIRST 5u /* rank 0's answer to tcp_first: the rank that failed first, size: none */
#define ABORT_MAX 400
#define MAX_BLOB (256ull << 20)
#define PENDING_MAX 64                    /* unidentified connections held by the root */
#define HELLO_WAIT_NS (10 * 1000000000LL) /* a connection must say hello within this */
#define SEC 1000000000LL

struct boot_tcp {
    struct ct_boot b;
    int *fds;         /* root: fd per rank (fds[0] = -1); others: fds[0] = link to root */
    _Atomic int *said; /* per fd: 1 + the rank its last STALL named, 0 none (tcp_first) */
    _Atomic int first_1; /* 1 + rank 0's FIRST (size + 1: none known), 0 none came */
    unsigned long op; /* collectives so far, for messages */
};

/* ---------------------------------------------------------------- sockets */

void ct_boot_peer_text(int fd, char *out, size_t len)
{
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    char host[64], serv[16];
    if (getpeername(fd, (struct sockaddr *)&ss, &sl) == 0 &&
        getnameinfo((struct sockaddr *)&ss, sl, host, sizeof host, serv, sizeof serv,
                    NI_NUMERICHOST | NI_NUMERICSERV) == 0)
        snprintf(out, len, "%s:%s", host, serv);
    else
        snprintf(out, len, "?");
}

static void peer_host(int fd, char *out, size_t len)
{
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    if (getpeername(fd, (struct sockaddr *)&ss, &sl) < 0 ||
        getnameinfo((struct sockaddr *)&ss, sl, out, (socklen_t)len, NULL, 0, NI_NUMERICHOST))
        out[0] = 0;
}

/* Non-blocking connect to host:port bounded by deadline. Sets *refused when the host
 * answered (refused or reset), so the caller can retry at once. */
static int connect_once(const char *host, int port, int64_t deadline, int *refused,
                        struct ct_err *err)
{
    struct addrinfo hints = {0}, *res, *ai;
    char ps[16];
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    snprintf(ps, sizeof ps, "%d", port);
    int g = getaddrinfo(host, ps, &hints, &res);
    if (g)
        return ct_err_set(err, CT_EINVAL, "cannot resolve '%s': %s", host, gai_strerror(g));
    int fd = -1;
    *refused = 0;
    ct_err_set(err, CT_EIO, "cannot connect to '%s:%d'", host, port);
    for (ai = res; ai && fd < 0; ai = ai->ai_next) {
        fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd < 0)
            continue;
        int rc = connect(fd, ai->ai_addr, ai->ai_addrlen), e = errno;
        if (rc < 0 && e == EINPROGRESS) {
            int64_t left = deadline - ct_now_ns();
            struct pollfd p = {fd, POLLOUT, 0};
            int ms = left > 0 ? (int)(left / 1000000) + 1 : 0;
            int n;
            while ((n = poll(&p, 1, ms)) < 0 && errno == EINTR)
                ;
            socklen_t sl = sizeof e;
            if (n <= 0) {
                e = ETIMEDOUT;
            } else if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &sl) < 0) {
                e = errno;
            }
            rc = e ? -1 : 0;
        }
        if (rc == 0)
            break;
        *refused |= e == ECONNREFUSED || e == ECONNRESET;
        errno = e;
        ct_err_sys(err, CT_EIO, "cannot connect to '%s:%d'", host, port);
        close(fd);
        fd = -1;
    }
    freeaddrinfo(res);
    if (fd >= 0) {
        ct_err_clear(err);
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    }
    return fd;
}

/* Connect to the first of "h:p,h:p,..." that answers, in turns, until deadline. */
static int connect_root(const char *list, int64_t deadline, char *used, size_t usedlen,
                        struct ct_err *err)
{
    int64_t delay_ms = 10;
    if (!list || !*list)
        return ct_err_set(err, CT_EINVAL, "no root address");
    for (;;) {
        const char *p = list;
        while (*p) {
            const char *e = strchr(p, ',');
            size_t l = e ? (size_t)(e - p) : strlen(p);
            char one[300], host[256];
            int port;
            snprintf(one, sizeof one, "%.*s", (int)(l < sizeof one ? l : sizeof one - 1), p);
            p += l + (e ? 1 : 0);
            CT_TRY(ct_sock_parse_addr(one, host, sizeof host, &port, err));
            /* several candidates share the time: a silent one must not eat it all */
            int64_t now = ct_now_ns(), step = deadline - now;
            if (e && step > 3 * SEC)
                step = 3 * SEC;
            int refused;
            int fd = connect_once(host, port, now + step, &refused, err);
            if (fd >= 0) {
                snprintf(used, usedlen, "%s", one);
                return fd;
            }
            if (err && err->code == CT_EINVAL)
                return err->code;
        }
        if (ct_now_ns() + delay_ms * 1000000 > deadline)
            return ct_err_wrap(err, "timed out: ");
        usleep((useconds_t)delay_ms * 1000);
        if (delay_ms < 200)
            delay_ms *= 2;
    }
}

/* ---------------------------------------------------------------- messages */

static void msg_encode(unsigned char *out, uint32_t kind, uint64_t len)
{
    ct_put32(out, MSG_MAGIC);
    ct_put32(out + 4, kind);
    ct_put64(out + 8, len);
}

static const char *host_of(const struct ct_boot *b, int r)
{
    return b->hosts && r >= 0 && r < b->size && b->hosts[r][0] ? b->hosts[r] : "?";
}

/* Root: tell every other live rank why this collective failed (best effort, brief). */
static void root_abort(struct boot_tcp *t, int bad, const char *why)
{
    struct ct_boot *b = &t->b;
    char text[ABORT_MAX];
    int n = snprintf(text, sizeof text, "%s", why);
    size_t len = n < 0 ? 0 : (size_t)n >= sizeof text ? sizeof text - 1 : (size_t)n;
    unsigned char hdr[MSG_BYTES];
    msg_encode(hdr, MSG_ABORT, len);
    int64_t dl = ct_now_ns() + SEC / 2;
    for (int r = 1; r < b->size; r++) {
        if (r == bad || t->fds[r] < 0)
            continue;
        if (ct_sock_write_all(t->fds[r], hdr, sizeof hdr, dl, NULL) == 0)
            ct_sock_write_all(t->fds[r], text, len, dl, NULL);
    }
}

/* A BEAT (or a STALL of rank arg) to fd, best effort: skipped where the socket's send queue is
 * a quarter full or more (its reader is far behind, and knows the sender alive; so a send
 * never goes out in part: 265k sends of 16 bytes to a reader that never read went out whole
 * or not at all), finished where it went out in part all the same. */
static void ctl_to(int fd, uint32_t kind, uint64_t arg)
{
    unsigned char hdr[MSG_BYTES];
    msg_encode(hdr, kind, arg);
    int queued = 0, room = 0;
    socklen_t sl = sizeof room;
    if (fd < 0 || ioctl(fd, SIOCOUTQ, &queued) < 0 ||
        getsockopt(fd, SOL_SOCKET, SO_SNDBUF, &room, &sl) < 0 || queued >= room / 4)
        return;
    ssize_t n = send(fd, hdr, sizeof hdr, MSG_DONTWAIT | MSG_NOSIGNAL);
    if (n > 0 && (size_t)n < sizeof hdr)
        ct_sock_write_all(fd, hdr + n, sizeof hdr - (size_t)n, ct_now_ns() + SEC, NULL);
}

static void tcp_beat(struct ct_boot *bb)
{
    struct boot_tcp *t = (struct boot_tcp *)bb;
    for (int r = bb->rank == 0 ? 1 : 0; t->fds && r < (bb->rank == 0 ? bb->size : 1); r++)
        ctl_to(t->fds[r], MSG_BEAT, 0);
}

/* The word that rank was found stalled: kept where none is (the first holds); the root passes
 * a new one on to every rank but the stalled one, at once. */
static void got_stall(struct boot_tcp *t, uint64_t rank)
{
    struct ct_boot *b = &t->b;
    int none = 0;
    if (rank >= (uint64_t)b->size || (b->rank == 0 && rank == 0) ||
        !atomic_compare_exchange_strong(&b->stalled_1, &none, (int)rank + 1) || b->rank != 0)
        return;
    for (int r = 1; t->fds && r < b->size; r++)
        if (r != (int)rank)
            ctl_to(t->fds[r], MSG_STALL, rank);
}

/* A STALL of rank that rank from's connection carried: kept as that connection's last word
 * (tcp_first follows them), and noted (got_stall); rank 0's FIRST, kept. */
static void heard(struct boot_tcp *t, int from, uint32_t kind, uint64_t rank)
{
    if (kind == MSG_FIRST) {
        if (rank <= (uint64_t)t->b.size)
            atomic_store(&t->first_1, (int)rank + 1);
        return;
    }
    if (t->said && rank < (uint64_t)t->b.size)
        atomic_store(&t->said[from], (int)rank + 1);
    got_stall(t, rank);
}

static void tcp_stall(struct ct_boot *bb, int rank)
{
    struct boot_tcp *t = (struct boot_tcp *)bb;
    if (rank < 0 || rank >= bb->size || !t->fds)
        return;
    if (bb->rank == 0)
        got_stall(t, (uint64_t)rank);
    else if (rank != 0) /* a stalled root passes nothing on */
        ctl_to(t->fds[0], MSG_STALL, (uint64_t)rank);
}

/* A header of a message without payload that may come before a collective's: BEAT, STALL,
 * FIRST. */
static bool is_ctl(const unsigned char *hdr)
{
    uint32_t kind = ct_get32(hdr + 4);
    return ct_get32(hdr) == MSG_MAGIC &&
           (kind == MSG_STALL || kind == MSG_FIRST || (kind == MSG_BEAT && ct_get64(hdr + 8) == 0));
}

/* Has rank r's connection been closed or reset by its end (the process is gone)? Used to blame
 * the dead rank, not a live one that was only slowed down by it. */
static int is_closed(struct boot_tcp *t, int r)
{
    if (t->fds[r] < 0)
        return 0;
    struct pollfd p = {t->fds[r], POLLIN | POLLRDHUP, 0};
    if (poll(&p, 1, 0) <= 0)
        return 0;
    char c;
    return (p.revents & (POLLHUP | POLLRDHUP | POLLERR)) ||
           recv(t->fds[r], &c, 1, MSG_PEEK | MSG_DONTWAIT) == 0;
}

/* The BEATs and STALLs at the front of rank from's connection, without waiting; stops at
 * anything else (a DATA or an ABORT: the collective's, read there) or at a header not yet
 * whole. Its end closed or reset (the rank died: a rank leaves only after the job's last
 * exchange), also behind a DATA it sent before, reads as that rank's STALL: the ranks busy in
 * long work stop for it (a dead root's word stays with the rank that found it: nobody passes
 * it on, and each rank finds it). */
static void drain(struct boot_tcp *t, int from)
{
    unsigned char hdr[MSG_BYTES];
    int fd = t->fds[from];
    while (fd >= 0 && recv(fd, hdr, sizeof hdr, MSG_PEEK | MSG_DONTWAIT) == MSG_BYTES &&
           is_ctl(hdr) && recv(fd, hdr, sizeof hdr, MSG_DONTWAIT) == MSG_BYTES)
        if (ct_get32(hdr + 4) != MSG_BEAT)
            heard(t, from, ct_get32(hdr + 4), ct_get64(hdr + 8));
    if (is_closed(t, from))
        got_stall(t, (uint64_t)from);
}

static void tcp_poll(struct ct_boot *bb)
{
    struct boot_tcp *t = (struct boot_tcp *)bb;
    for (int r = bb->rank == 0 ? 1 : 0; t->fds && r < (bb->rank == 0 ? bb->size : 1); r++)
        drain(t, r);
}

/* Read a message header; DATA must carry exactly want bytes. ABORT reasons are read and
 * returned as an error naming the root's verdict. A BEAT before it moves *dl to ext past
 * its arrival (the root passes it on: ranks waiting for the root wait on); a STALL before it
 * is noted (got_stall). At each, the root looks for STALLs on every connection: a rank busy in
 * its round beside the one it waits for learns of a stall within some three eighths of the
 * timeout (the beat of the rank waited for, every quarter; then its own look, every eighth). */
static int msg_read(struct boot_tcp *t, int fd, int from, uint64_t want, int64_t *dl, int64_t ext,
                    const char *what, struct ct_err *err)
{
    struct ct_boot *b = &t->b;
    unsigned char hdr[MSG_BYTES];
    uint32_t kind;
    uint64_t len;
    bool ctl;
    do {
        if (ct_sock_read_all(fd, hdr, sizeof hdr, *dl, err) < 0)
            return ct_err_wrap(err, "bootstrap %s #%lu: rank %d (%s): ", what, t->op, from,
                               host_of(b, from));
        kind = ct_get32(hdr + 4);
        len = ct_get64(hdr + 8);
        if ((ctl = is_ctl(hdr)) && kind == MSG_BEAT) {
            int64_t now = ct_now_ns();
            *dl = now + ext > *dl ? now + ext : *dl;
            if (b->rank == 0)
                ct_boot_beat(b, now);
        } else if (ctl) {
            heard(t, from, kind, len);
        }
        if (ctl && b->rank == 0)
            tcp_poll(b);
    } while (ctl);
    if (ct_get32(hdr) != MSG_MAGIC || (kind != MSG_DATA && kind != MSG_ABORT))
        return ct_err_set(err, CT_EPEER, "bootstrap %s #%lu: rank %d (%s) sent a bad header", what,
                          t->op, from, host_of(b, from));
    if (kind == MSG_ABORT && b->rank != 0 && len < ABORT_MAX) {
        char why[ABORT_MAX];
        if (ct_sock_read_all(fd, why, (size_t)len, *dl, err) < 0)
            len = 0;
        why[len] = 0;
        for (size_t i = 0; i < len; i++)
            if (why[i] < ' ' || why[i] > '~')
                why[i] = '?';
        return ct_err_set(err, CT_EPEER, "bootstrap %s #%lu: rank 0 (%s) gave up: %s", what, t->op,
                          host_of(b, 0), why);
    }
    if (kind != MSG_DATA || len != want)
        return ct_err_set(err, CT_EPEER,
                          "bootstrap %s #%lu: rank %d (%s) sent %llu bytes, expected %llu "
                          "(ranks disagree on the collective)",
                          what, t->op, from, host_of(b, from), (unsigned long long)len,
                          (unsigned long long)want);
    return 0;
}

/* Until the root's connection closes (what comes on it read and dropped) or ns pass. */
static void tcp_linger(struct ct_boot *bb, int64_t ns)
{
    struct boot_tcp *t = (struct boot_tcp *)bb;
    int64_t end = ct_now_ns() + ns;
    char junk[512];
    for (int64_t now = ct_now_ns(); t->fds && t->fds[0] >= 0 && now < end; now = ct_now_ns()) {
        struct pollfd p = {t->fds[0], POLLIN | POLLRDHUP, 0};
        int ms = (int)((end - now + 999999) / 1000000), n = poll(&p, 1, ms > 1000 ? 1000 : ms);
        if (n < 0 && errno != EINTR)
            return;
        ssize_t got = n > 0 ? recv(t->fds[0], junk, sizeof junk, MSG_DONTWAIT) : 1;
        if (got == 0 || (got < 0 && errno != EAGAIN && errno != EINTR))
            return;
    }
}

/* ---------------------------------------------------------------- collectives */

/* Reading rank skip failed: when skip's own connection is closed it is the one gone (-1);
 * else the first other rank whose connection closed (skip likely waited on it), -1 none. */
static int closed_rank(struct boot_tcp *t, int skip)
{
    if (is_closed(t, skip))
        return -1;
    for (int r = 1; r < t->b.size; r++)
        if (r != skip && is_closed(t, r))
            return r;
    return -1;
}

/* A timed-out wait on rank r said as the data path says a stall ("no progress for T s
 * waiting for peer rank R"); any other failure kept as it is. */
static int stalled(struct boot_tcp *t, const char *doing, int r, const char *what, int64_t to,
                   struct ct_err *err)
{
    if (!err || err->code != CT_ETIMEDOUT)
        return err ? err->code : CT_EIO;
    return ct_err_set(err, CT_ETIMEDOUT,
                      "bootstrap %s #%lu: no progress for %.1f s %s peer rank %d (%s)", what, t->op,
                      (double)to / 1e9, doing, r, host_of(&t->b, r));
}

static int tcp_allgather_impl(struct ct_boot *bb, const void *mine, size_t len, void *all,
                              const char *what, struct ct_err *err)
{
    struct boot_tcp *t = (struct boot_tcp *)bb;
    int64_t to = bb->op_timeout_ns;
    t->op++;
    if ((uint64_t)len * (uint64_t)bb->size > MAX_BLOB)
        return ct_err_set(err, CT_EINVAL, "bootstrap %s: %zu bytes from %d ranks is too much", what,
                          len, bb->size);
    unsigned char hdr[MSG_BYTES];
    if (bb->rank == 0) {
        memcpy(all, mine, len);
        for (int r = 1; r < bb->size; r++) {
            int64_t dl = ct_now_ns() + to;
            int rc = msg_read(t, t->fds[r], r, len, &dl, to, what, err);
            if (rc == 0 &&
                ct_sock_read_all(t->fds[r], (char *)all + (size_t)r * len, len, dl, err) < 0)
                rc = ct_err_wrap(err, "bootstrap %s #%lu: rank %d (%s): ", what, t->op, r,
                                 host_of(bb, r));
            if (rc < 0) {
                int dead = closed_rank(t, r);
                if (dead > 0) /* rank r likely waited on the dead one: name the dead one */
                    rc = ct_err_set(err, CT_EPEER,
                                    "bootstrap %s #%lu: rank %d (%s): connection closed "
                                    "(while waiting for rank %d)",
                                    what, t->op, dead, host_of(bb, dead), r);
                else
                    rc = stalled(t, "waiting for", r, what, to, err);
                root_abort(t, dead > 0 ? dead : r, err ? err->msg : "a rank failed");
                return rc;
            }
        }
        msg_encode(hdr, MSG_DATA, (uint64_t)len * (uint64_t)bb->size);
        for (int r = 1; r < bb->size; r++) {
            int64_t dl = ct_now_ns() + to;
            if (ct_sock_write_all(t->fds[r], hdr, sizeof hdr, dl, err) < 0 ||
                ct_sock_write_all(t->fds[r], all, len * (size_t)bb->size, dl, err) < 0) {
                ct_err_wrap(err, "bootstrap %s #%lu: rank %d (%s): ", what, t->op, r,
                            host_of(bb, r));
                int rc = stalled(t, "sending to", r, what, to, err);
                /* (a rank dead after its answer was read: the ranks after it got no answer and
                 * waited a timeout for a root that had left: "no report"; those before it read
                 * this at their next exchange) */
                root_abort(t, r, err->msg);
                return rc;
            }
        }
        atomic_store(&bb->stalled_1, 0); /* every rank answered: a stalled one came back */
        return 0;
    }
    int fd = t->fds[0];
    msg_encode(hdr, MSG_DATA, len);
    int64_t dl = ct_now_ns() + to;
    if (ct_sock_write_all(fd, hdr, sizeof hdr, dl, err) < 0 ||
        ct_sock_write_all(fd, mine, len, dl, err) < 0) {
        /* the root gave up and left before this rank's word (it was busy in long work): its
         * ABORT waits here, read before the reset ("rank 0: send: Broken pipe" read as a
         * root that died, "no report", where rank 0 had reported) */
        struct ct_err why = {0};
        int64_t soon = ct_now_ns() + SEC / 10;
        if (msg_read(t, fd, 0, (uint64_t)len * (uint64_t)bb->size, &soon, 0, what, &why) < 0 &&
            strstr(why.msg, ") gave up: "))
            return ct_err_set(err, CT_EPEER, "%s", why.msg);
        return ct_err_wrap(err, "bootstrap %s #%lu: rank 0 (%s): ", what, t->op, host_of(bb, 0));
    }
    /* the root may wait a full timeout for a silent rank before it aborts: wait longer */
    int64_t ext = to + (to / 4 > 2 * SEC ? to / 4 : 2 * SEC);
    dl = ct_now_ns() + ext;
    CT_TRY(msg_read(t, fd, 0, (uint64_t)len * (uint64_t)bb->size, &dl, ext, what, err));
    if (ct_sock_read_all(fd, all, len * (size_t)bb->size, dl, err) < 0)
        return ct_err_wrap(err, "bootstrap %s #%lu: rank 0 (%s): ", what, t->op, host_of(bb, 0));
    atomic_store(&bb->stalled_1, 0); /* the root had every rank's answer */
    return 0;
}

static int tcp_allgather(struct ct_boot *bb, const void *mine, size_t len, void *all,
                         struct ct_err *err)
{
    return tcp_allgather_impl(bb, mine, len, all, "allgather", err);
}

static int tcp_barrier(struct ct_boot *b, struct ct_err *err)
{
    char one = 1, *all = ct_xmalloc((size_t)b->size);
    int rc = tcp_allgather_impl(b, &one, 1, all, "barrier", err);
    free(all);
    return rc;
}

static void tcp_close(struct ct_boot *bb)
{
    struct boot_tcp *b = (struct boot_tcp *)bb;
    int n = bb->rank == 0 ? bb->size : 1;
    for (int i = 0; b->fds && i < n; i++)
        if (b->fds[i] >= 0)
            close(b->fds[i]);
    free(b->fds);
    free((void *)b->said);
    free(bb->hosts);
    free(bb->addrs);
    free(b);
}

/* Rank 0's side: the rank at the end of the words that start at peer (peer blamed x, x blamed y,
 * ...), where it is known: gone (its connection closed) or blamed by two ranks (both its
 * neighbours found it stalled); -1 else: a rank that has not said its word yet (it may time out
 * on another a moment later), a rank that blamed rank 0, a cycle. Each word is only whom its
 * sender found gone or stalled: the first to come was often a rank that had left on another's
 * failure (rank 0 named rank 2 where rank 3 was killed, 6 ranks). */
static int word_chain(struct boot_tcp *t, int peer)
{
    int n = t->b.size, x = peer, steps = 0, s = -1;
    for (; steps < n && (s = atomic_load(&t->said[x]) - 1) > 0 && s != x; steps++)
        x = s;
    if (steps == n || s == 0)
        return -1;
    int blamed = 0;
    for (int r = 1; r < n; r++)
        blamed += atomic_load(&t->said[r]) == x + 1; /* (x's own word is not x: see above) */
    return is_closed(t, x) || blamed >= 2 ? x : -1;
}

/* A non-root's side: rank 0's FIRST; else rank 0's close with nothing before it: rank 0 died
 * first (a close behind its ABORT is rank 0 giving up on another, behind a STALL it passed on
 * rank 0 knew of a failure: neither is rank 0's own). */
static int root_word(struct boot_tcp *t)
{
    drain(t, 0);
    unsigned char hdr[MSG_BYTES];
    int first = atomic_load(&t->first_1) - 1;
    if (first >= 0)
        return first < t->b.size ? first : -1;
    bool quiet = atomic_load(&t->said[0]) == 0 &&
                 recv(t->fds[0], hdr, sizeof hdr, MSG_PEEK | MSG_DONTWAIT) <= 0;
    return quiet && is_closed(t, 0) ? 0 : -1;
}

static int tcp_first(struct ct_boot *bb, int peer, int64_t wait_ns)
{
    struct boot_tcp *t = (struct boot_tcp *)bb;
    if (!t->fds || !t->said || peer == bb->rank)
        return -1;
    if (bb->rank != 0) {
        tcp_stall(bb, peer);
        return root_word(t);
    }
    /* what peer said before it left (its close) or timed out on another (its word) */
    for (int64_t end = ct_now_ns() + wait_ns; ct_now_ns() < end; usleep(5000)) {
        drain(t, peer);
        if (atomic_load(&t->said[peer]) || is_closed(t, peer))
            break;
    }
    tcp_poll(bb);
    int w = word_chain(t, peer);
    for (int r = 1; r < bb->size; r++) /* the named rank too, and where none is known: none */
        ctl_to(t->fds[r], MSG_FIRST, (uint64_t)(w >= 0 ? w : bb->size));
    return w;
}

static const struct ct_boot_ops tcp_ops = {tcp_allgather, tcp_barrier, tcp_close,  tcp_beat,
                                           tcp_stall,     tcp_poll,    tcp_linger, tcp_first};

/* ---------------------------------------------------------------- root: accepting */

struct pending {
    int fd;
    size_t got;
    int64_t since;
    char from[80];
    unsigned char buf[CT_BOOT_HELLO_BYTES];
};

struct accept_state {
    struct boot_tcp *t;
    int has_token; /* hellos must carry the job token */
    struct pending pend[PENDING_MAX];
    int npend;
    uint32_t *pids;
    int connected;
};

static void pend_drop(struct accept_state *a, int i)
{
    close(a->pend[i].fd);
    a->pend[i] = a->pend[--a->npend];
}

static void reply_reject(int fd, const struct ct_boot *b, uint32_t rank, uint16_t why)
{
    struct ct_boot_hello h = {.kind = CT_BOOT_REJECT, .status = why, .size = (uint32_t)b->size};
    h.rank = rank < (uint32_t)b->size ? rank : 0;
    h.pid = (uint32_t)getpid();
    snprintf(h.host, sizeof h.host, "%s", b->host);
    unsigned char wire[CT_BOOT_HELLO_BYTES];
    ct_boot_hello_encode(&h, wire);
    ct_sock_write_all(fd, wire, sizeof wire, ct_now_ns() + SEC / 2, NULL);
}

/* A whole hello arrived on pend[i]: admit the rank or reject the connection. */
static int admit(struct accept_state *a, int i, struct ct_err *err)
{
    struct boot_tcp *t = a->t;
    struct ct_boot *b = &t->b;
    struct pending *p = &a->pend[i];
    struct ct_boot_hello h;
    struct ct_err e = {0};
    if (ct_boot_hello_decode(p->buf, &h, &e) < 0 || h.kind != CT_BOOT_HELLO) {
        ct_boot_notice(b, "bootstrap: rejected a connection from %s: %s", p->from,
                       e.code ? e.msg : "not a hello");
        pend_drop(a, i);
        return 0;
    }
    if (a->has_token && (!(h.flags & CT_BOOT_F_TOKEN) || !ct_boot_token_equal(h.token, b->token))) {
        ct_boot_notice(b,
                       "bootstrap: rejected a connection from %s (claims rank %u on %s, pid %u): "
                       "%s job token",
                       p->from, h.rank, h.host, h.pid, h.flags & CT_BOOT_F_TOKEN ? "wrong" : "no");
        reply_reject(p->fd, b, h.rank, CT_BOOT_REJ_TOKEN);
        pend_drop(a, i);
        return 0;
    }
    if (h.size != (uint32_t)b->size) {
        ct_boot_notice(b,
                       "bootstrap: rejected rank %u of %u from %s (%s, pid %u): this job has %d "
                       "ranks",
                       h.rank, h.size, h.host, p->from, h.pid, b->size);
        reply_reject(p->fd, b, h.rank, CT_BOOT_REJ_SIZE);
        pend_drop(a, i);
        return 0;
    }
    if (h.rank == 0 || t->fds[h.rank] >= 0) {
        int r = (int)h.rank;
        char first[CT_BOOT_HOST_BYTES + 32];
        if (r == 0)
            snprintf(first, sizeof first, "%s, pid %d", b->host, (int)getpid());
        else
            snprintf(first, sizeof first, "%s, pid %u", b->hosts[r], a->pids[r]);
        reply_reject(p->fd, b, h.rank, CT_BOOT_REJ_DUP);
        pend_drop(a, i);
        /* with a shared secret this is our own job launched wrongly: stop now */
        if (a->has_token)
            return ct_err_set(err, CT_EINVAL,
                              "bootstrap: mis-launch: two processes claim rank %d (%s; and %s, pid "
                              "%u)",
                              r, first, h.host, h.pid);
        ct_boot_notice(b,
                       "bootstrap: rejected a second rank %d from %s (%s, pid %u); the first "
                       "is %s",
                       r, h.host, p->from, h.pid, first);
        return 0;
    }
    int r = (int)h.rank;
    t->fds[r] = p->fd;
    memcpy(b->hosts[r], h.host, sizeof h.host);
    peer_host(p->fd, b->addrs[r], sizeof b->addrs[r]);
    a->pids[r] = h.pid;
    a->connected++;
    a->pend[i] = a->pend[--a->npend];
    return 0;
}

static void accept_ready(struct accept_state *a, int lfd)
{
    struct ct_boot *b = &a->t->b;
    for (;;) {
        int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (fd < 0)
            return;
        if (a->npend == PENDING_MAX) {
            int old = 0;
            for (int i = 1; i < a->npend; i++)
                if (a->pend[i].since < a->pend[old].since)
                    old = i;
            ct_boot_notice(b, "bootstrap: dropped a silent connection from %s (too many pending)",
                           a->pend[old].from);
            pend_drop(a, old);
        }
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        struct pending *p = &a->pend[a->npend++];
        memset(p, 0, sizeof *p);
        p->fd = fd;
        p->since = ct_now_ns();
        ct_boot_peer_text(fd, p->from, sizeof p->from);
    }
}

static int accept_timeout(struct accept_state *a, struct ct_err *err)
{
    struct ct_boot *b = &a->t->b;
    char list[200] = "";
    size_t off = 0;
    int missing = 0;
    for (int r = 1; r < b->size; r++)
        if (a->t->fds[r] < 0) {
            if (off < sizeof list - 16)
                off +=
                    (size_t)snprintf(list + off, sizeof list - off, "%s%d", missing ? ", " : "", r);
            missing++;
        }
    if (off >= sizeof list - 16)
        snprintf(list + off, sizeof list - off, " ...");
    return ct_err_set(err, CT_ETIMEDOUT,
                      "bootstrap: timed out after %.1f s waiting for %d of %d ranks to connect "
                      "(missing rank %s)",
                      (double)b->timeout_ns / 1e9, missing, b->size, list);
}

/* Serve hellos on lfd until every rank is admitted. */
static int root_accept(struct boot_tcp *t, int lfd, int has_token, struct ct_err *err)
{
    struct ct_boot *b = &t->b;
    struct accept_state *a = ct_xcalloc(1, sizeof *a);
    a->t = t;
    a->has_token = has_token;
    a->pids = ct_xcalloc((size_t)b->size, sizeof *a->pids);
    a->connected = 1;
    ct_sock_set_nonblock(lfd, 1); /* accept_ready() drains it */
    int64_t dl = ct_now_ns() + b->timeout_ns;
    int rc = 0;
    struct pollfd pf[PENDING_MAX + 1];
    while (rc == 0 && a->connected < b->size) {
        int64_t now = ct_now_ns();
        if (now >= dl) {
            rc = accept_timeout(a, err);
            break;
        }
        for (int i = a->npend - 1; i >= 0; i--)
            if (now - a->pend[i].since > HELLO_WAIT_NS) {
                ct_boot_notice(b, "bootstrap: dropped a connection from %s: no hello within %d s",
                               a->pend[i].from, (int)(HELLO_WAIT_NS / SEC));
                pend_drop(a, i);
            }
        pf[0] = (struct pollfd){lfd, POLLIN, 0};
        for (int i = 0; i < a->npend; i++)
            pf[i + 1] = (struct pollfd){a->pend[i].fd, POLLIN, 0};
        int64_t left = (dl - now) / 1000000 + 1;
        int n = poll(pf, (nfds_t)a->npend + 1, left > 100 ? 100 : (int)left);
        if (n <= 0)
            continue;
        /* from the end: admit() and pend_drop() move the last entry into i */
        int np = a->npend;
        for (int i = np - 1; i >= 0 && rc == 0; i--) {
            if (!pf[i + 1].revents)
                continue;
            struct pending *p = &a->pend[i];
            ssize_t got = recv(p->fd, p->buf + p->got, sizeof p->buf - p->got, MSG_DONTWAIT);
            if (got > 0) {
                p->got += (size_t)got;
                if (p->got == sizeof p->buf)
                    rc = admit(a, i, err);
            } else if (got == 0 || (errno != EAGAIN && errno != EINTR)) {
                if (p->got)
                    ct_boot_notice(b,
                                   "bootstrap: dropped a connection from %s: closed after %zu "
                                   "bytes of hello",
                                   p->from, p->got);
                pend_drop(a, i);
            }
        }
        if (pf[0].revents & POLLIN)
            accept_ready(a, lfd);
    }
    while (a->npend)
        pend_drop(a, a->npend - 1);
    /* everyone is here: the welcome, then the host and address tables */
    for (int r = 1; rc == 0 && r < b->size; r++) {
        struct ct_boot_hello h = {.kind = CT_BOOT_WELCOME,
                                  .flags = CT_BOOT_F_TOKEN,
                                  .rank = (uint32_t)r,
                                  .size = (uint32_t)b->size,
                                  .pid = (uint32_t)getpid(),
                                  .job_id = b->job_id};
        memcpy(h.token, b->token, sizeof h.token);
        memcpy(h.host, b->host, sizeof h.host);
        unsigned char wire[CT_BOOT_HELLO_BYTES];
        ct_boot_hello_encode(&h, wire);
        int64_t wdl = ct_now_ns() + b->timeout_ns;
        if (ct_sock_write_all(t->fds[r], wire, sizeof wire, wdl, err) < 0 ||
            ct_sock_write_all(t->fds[r], b->hosts, sizeof *b->hosts * (size_t)b->size, wdl, err) <
                0 ||
            ct_sock_write_all(t->fds[r], b->addrs, sizeof *b->addrs * (size_t)b->size, wdl, err) <
                0)
            rc = ct_err_wrap(err, "bootstrap: rank %d (%s): sending the welcome: ", r,
                             host_of(b, r));
    }
    free(a->pids);
    free(a);
    return rc;
}

/* ---------------------------------------------------------------- joining */

static int rejected(const struct ct_boot *b, const struct ct_boot_hello *h, const char *root,
                    struct ct_err *err)
{
    switch (h->status) {
    case CT_BOOT_REJ_TOKEN:
        return ct_err_set(err, CT_EPEER,
                          "bootstrap: the root at %s (%s) rejected rank %d: wrong job token "
                          "(COLLTUNE_TOKEN differs between ranks, or another job owns that port)",
                          root, h->host, b->rank);
    case CT_BOOT_REJ_SIZE:
        return ct_err_set(err, CT_EINVAL,
                          "bootstrap: mis-launch: the root at %s (%s) runs a job of %u ranks, "
                          "this process was launched as rank %d of %d",
                          root, h->host, h->size, b->rank, b->size);
    default:
        return ct_err_set(err, CT_EINVAL,
                          "bootstrap: mis-launch: rank %d is already taken at the root %s (%s); "
                          "two processes were launched as rank %d",
                          b->rank, root, h->host, b->rank);
    }
}

static void sanitize(char *s, size_t len)
{
    s[len - 1] = 0;
    for (char *c = s; *c; c++)
        if (*c <= ' ' || *c > '~')
            *c = '_';
}

static int client_join(struct boot_tcp *t, const struct ct_boot_cfg *cfg, int has_token,
                       struct ct_err *err)
{
    struct ct_boot *b = &t->b;
    int64_t dl = ct_now_ns() + b->timeout_ns;
    char root[300] = "";
    int fd = connect_root(cfg->root_addr, dl, root, sizeof root, err);
    if (fd < 0)
        return ct_err_wrap(err,
                           "bootstrap: rank %d cannot reach the root (rank 0) at %s: ", b->rank,
                           cfg->root_addr ? cfg->root_addr : "?");
    t->fds[0] = fd;
    struct ct_boot_hello h = {.kind = CT_BOOT_HELLO,
                              .flags = has_token ? CT_BOOT_F_TOKEN : 0,
                              .rank = (uint32_t)b->rank,
                              .size = (uint32_t)b->size,
                              .pid = (uint32_t)getpid(),
                              .job_id = b->job_id};
    if (has_token)
        memcpy(h.token, b->token, sizeof h.token);
    memcpy(h.host, b->host, sizeof h.host);
    unsigned char wire[CT_BOOT_HELLO_BYTES];
    ct_boot_hello_encode(&h, wire);
    if (ct_sock_write_all(fd, wire, sizeof wire, dl, err) < 0)
        return ct_err_wrap(err, "bootstrap: rank 0 at %s: sending the hello: ", root);
    if (ct_sock_read_all(fd, wire, sizeof wire, dl, err) < 0)
        return ct_err_wrap(err,
                           "bootstrap: rank 0 at %s: waiting for the other ranks (the root "
                           "gathers all %d before it answers): ",
                           root, b->size);
    struct ct_boot_hello w;
    if (ct_boot_hello_decode(wire, &w, err) < 0)
        return ct_err_wrap(err, "bootstrap: rank 0 at %s: ", root);
    if (w.kind == CT_BOOT_REJECT)
        return rejected(b, &w, root, err);
    if (w.kind != CT_BOOT_WELCOME || w.size != (uint32_t)b->size || w.rank != (uint32_t)b->rank ||
        !(w.flags & CT_BOOT_F_TOKEN) || (has_token && !ct_boot_token_equal(w.token, b->token)))
        return ct_err_set(err, CT_EPEER,
                          "bootstrap: rank 0 at %s answered the hello wrongly (kind %u, rank %u "
                          "of %u)",
                          root, w.kind, w.rank, w.size);
    b->job_id = w.job_id;
    memcpy(b->token, w.token, sizeof b->token);
    if (ct_sock_read_all(fd, b->hosts, sizeof *b->hosts * (size_t)b->size, dl, err) < 0 ||
        ct_sock_read_all(fd, b->addrs, sizeof *b->addrs * (size_t)b->size, dl, err) < 0)
        return ct_err_wrap(err, "bootstrap: rank 0 at %s: reading the tables: ", root);
    for (int r = 0; r < b->size; r++) {
        sanitize(b->hosts[r], sizeof b->hosts[r]);
        sanitize(b->addrs[r], sizeof b->addrs[r]);
    }
    memcpy(b->hosts[b->rank], b->host, sizeof b->host);
    peer_host(fd, b->addrs[0], sizeof b->addrs[0]);
    return 0;
}

/* ---------------------------------------------------------------- bring-up */

static int root_listen(const char *root_addr, int size, struct ct_err *err)
{
    char first[300], host[256];
    int port;
    const char *comma = root_addr ? strchr(root_addr, ',') : NULL;
    if (!root_addr)
        return ct_err_set(err, CT_EINVAL, "bootstrap: rank 0 has no address to listen on");
    snprintf(first, sizeof first, "%.*s", comma ? (int)(comma - root_addr) : 299, root_addr);
    CT_TRY(ct_sock_parse_addr(first, host, sizeof host, &port, err));
    struct ct_err e = {0};
    int fd = ct_sock_listen(NULL, port, size + PENDING_MAX, NULL, &e);
    if (fd >= 0)
        return fd;
    if (e.sys_errno == EADDRINUSE)
        return ct_err_set(err, CT_EIO,
                          "bootstrap: rank 0 cannot listen on port %d (root %s): address "
                          "already in use (another job holds it, or several processes were "
                          "launched as rank 0; pick another port)",
                          port, first);
    if (err)
        *err = e;
    return ct_err_wrap(err, "bootstrap: rank 0: ");
}

int ct_boot_tcp_start(struct ct_boot **out, const struct ct_boot_cfg *cfg, struct ct_err *err)
{
    int rank = cfg->rank, size = cfg->size;
    if (size < 1 || size > CT_BOOT_MAX_RANKS || rank < 0 || rank >= size)
        return ct_err_set(err, CT_EINVAL, "bootstrap: rank %d of %d is not valid", rank, size);
    struct boot_tcp *t = ct_xcalloc(1, sizeof *t);
    struct ct_boot *b = &t->b;
    b->ops = &tcp_ops;
    ct_boot_init_common(b, cfg, rank, size);
    b->job_id = cfg->job_id;
    if (!b->job_id && rank == 0)
        ct_boot_random(&b->job_id, sizeof b->job_id);
    int has_token = cfg->token != NULL;
    if (has_token)
        memcpy(b->token, cfg->token, sizeof b->token);
    else if (rank == 0)
        ct_boot_random(b->token, sizeof b->token);
    int nfd = rank == 0 ? size : 1;
    t->fds = ct_xmalloc(sizeof(int) * (size_t)nfd);
    t->said = ct_xcalloc((size_t)nfd, sizeof *t->said);
    for (int i = 0; i < nfd; i++)
        t->fds[i] = -1;
    int rc = 0;
    if (size > 1 && rank == 0) {
        int lfd = cfg->listen_fd;
        if (lfd < 0 && (lfd = root_listen(cfg->root_addr, size, err)) < 0) {
            rc = lfd;
        } else {
            rc = root_accept(t, lfd, has_token, err);
            if (cfg->listen_fd < 0)
                close(lfd);
        }
    } else if (size > 1) {
        rc = client_join(t, cfg, has_token, err);
    }
    if (rc < 0) {
        tcp_close(b);
        return rc;
    }
    ct_boot_fill_layout(b);
    *out = b;
    return 0;
}

int ct_boot_tcp_open(struct ct_boot **out, int rank, int size, const char *root_addr, int listen_fd,
                     uint64_t job_id, const char *host_override, int64_t timeout_ns,
                     struct ct_err *err)
{
    struct ct_boot_cfg c;
    ct_boot_cfg_init(&c);
    c.rank = rank;
    c.size = size;
    c.root_addr = root_addr;
    c.listen_fd = listen_fd;
    c.job_id = job_id;
    c.host = host_override;
    c.timeout_ns = timeout_ns;
    return ct_boot_tcp_start(out, &c, err);
}
