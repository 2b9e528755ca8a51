/* SPDX-License-Identifier: MIT */
/*
 * tcp transport: every connected peer pair has `streams` TCP connections; messages are cut
 * into framed pieces striped over them, and non-blocking sockets are driven through epoll.
 */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "../lib/clock.h"
#include "../lib/sock.h"
#include "boot.h"
#include "frame.h"
#include "tp.h"

/*
 * Design
 *
 * Striping. Message m of an ordered pair (m counts from 0 per direction) of len bytes is
 * one piece when len <= STRIPE_MIN (or one stream carries at most PIECE_MAX), else pieces
 * of ceil(len / streams) rounded up to PIECE_ALIGN, clamped to [PIECE_MIN, PIECE_MAX].
 * Piece i of message m travels on stream (m + i) % streams. Both sides compute this from
 * their own length, so every stream is a FIFO of pieces in message order and needs no
 * reordering; consecutive small messages spread over the streams.
 *
 * Framing. Every piece is a CT_FRAME_BYTES header (frame.h) and its payload. The receiver
 * knows what it expects next on each stream (it only ever reads into the pieces it
 * expects) and checks every header against that before the piece counts or is reduced: a
 * foreign or corrupt stream, or a length that differs from the posted receive, is CT_EPEER
 * naming the peer and fails the pending requests, never a write outside a posted buffer.
 *
 * Data path. Sends gather up to IOV_PIECES headers and payloads into one sendmsg(); plain
 * receives scatter straight into the destination (header, payload, next header ...); fused
 * receive-reduce reads into one bounce buffer per endpoint (BOUNCE_BYTES) and reduces every
 * whole element at once, keeping the < esize tail bytes per stream. Requests complete in
 * posting order per peer and direction.
 *
 * Flow control. A stream is read only while a receive that expects a piece on it is posted:
 * data sent before the receive is posted waits in the socket buffers and, beyond them, in
 * the sender's queue. So two ranks that both send large messages to each other before
 * posting the matching receives stall until they post them; the executor posts the sends
 * and receives of a step together, which is all this needs. Posting a receive before the
 * data arrives is always fine.
 *
 * Sockets. TCP_NODELAY; 4 MiB buffers where net.core.[rw]mem_max allow it, else the
 * kernel's autotuning; MSG_NOSIGNAL on every send, so a dead peer is an error, not SIGPIPE.
 *
 * Progress. Sockets are registered once with edge-triggered epoll; per-stream ready flags
 * are set from events and cleared on EAGAIN. progress() harvests events without blocking
 * and moves bytes on the streams of peers with posted work; wait() blocks in epoll_wait()
 * unless some stream with work is known to be ready.
 *
 * Connection setup (open). Each rank listens on the address it publishes (cfg->ifname's
 * IPv4 address; else 127.0.0.1 when the job is on one host; else the source address of
 * the route to another host; else the first interface that is up), on an ephemeral port
 * or the first free one of COLLTUNE_PORT_RANGE=lo-hi. Addresses are exchanged through the
 * bootstrap. For each connected pair the higher rank opens `streams` connections to the
 * lower one and each starts with a handshake (job id, token, ranks, stream index) that the
 * acceptor checks before it answers; a stray or foreign connection is closed unread.
 */

#define SOCK_BUF (4 << 20) /* socket buffers, when net.core.[rw]mem_max allow them */
#define STRIPE_MIN (128u << 10)
#define PIECE_MIN (64u << 10)
#define PIECE_MAX (4u << 20)
#define PIECE_ALIGN 4096u
#define BOUNCE_BYTES (256u << 10)
#define IOV_PIECES 32
#define MAX_ESIZE 64
#define PENDING_MAX 64 /* unidentified incoming connections held during setup, beyond one
                          peer's streams (a peer opens all of its streams at once) */
#define EVENTS 64
#define HDR CT_FRAME_BYTES

extern const struct ct_tp_ops ct_tp_tcp_ops;

struct op {
    struct ct_req *req;
    char *dst;       /* receive: destination */
    const char *src; /* send: payload; reduce: left operand */
    size_t len;
    uint64_t seq;
    uint64_t piece;   /* bytes per piece (the last may be shorter) */
    uint64_t npieces; /* >= 1, also for len 0 */
    uint64_t left;    /* pieces not yet moved */
    ct_reduce_fn fn;  /* NULL: plain receive */
    size_t esize;
    struct op *next; /* free list */
};

struct op_chunk {
    struct op ops[64];
    struct op_chunk *next;
};

/* Ops of one direction with one peer, indexed by message sequence number. */
struct queue {
    struct op **ring;
    uint64_t cap;  /* power of two */
    uint64_t head; /* oldest op not yet completed */
    uint64_t tail; /* sequence number of the next op */
};

/* Position of a stream within its queue: piece `piece` of message `seq`. */
struct cursor {
    uint64_t seq, piece;
    size_t done; /* header + payload bytes of the piece moved so far */
    bool have;   /* seq/piece name a piece; else seq is the next message to look at */
};

struct peer;

struct stream {
    int fd;
    int idx;
    struct peer *peer;
    bool rd_ready, wr_ready;
    struct cursor sc, rc;
    size_t ncarry; /* received but unreduced tail bytes of a reduce piece */
    unsigned char carry[MAX_ESIZE];
    unsigned char shdr[IOV_PIECES][HDR];
    unsigned char rhdr[IOV_PIECES][HDR];
};

struct peer {
    int rank;
    bool active;
    struct stream *st; /* nstreams entries; NULL when not connected */
    struct queue sq, rq;
};

struct tcp_tp {
    struct ct_tp base;
    int nstreams;
    uint32_t job;
    int epfd;
    struct peer *peers; /* size entries */
    int *active;        /* peers with posted work */
    int nactive;
    struct op *free_ops;
    struct op_chunk *chunks;
    unsigned char *bounce;
    int failed;
    struct ct_err fail;
};

static const char *host_of(const struct tcp_tp *t, int rank)
{
    return t->base.boot && t->base.boot->hosts ? t->base.boot->hosts[rank] : "?";
}

/* ---------------------------------------------------------------- ops and queues */

static struct op *op_get(struct tcp_tp *t)
{
    if (!t->free_ops) {
        struct op_chunk *c = ct_xcalloc(1, sizeof *c);
        c->next = t->chunks;
        t->chunks = c;
        for (size_t i = 0; i < sizeof c->ops / sizeof c->ops[0]; i++) {
            c->ops[i].next = t->free_ops;
            t->free_ops = &c->ops[i];
        }
    }
    struct op *op = t->free_ops;
    t->free_ops = op->next;
    memset(op, 0, sizeof *op);
    return op;
}

static void op_put(struct tcp_tp *t, struct op *op)
{
    op->next = t->free_ops;
    t->free_ops = op;
}

static struct op *queue_at(const struct queue *q, uint64_t seq)
{
    return q->ring[seq & (q->cap - 1)];
}

static void queue_push(struct queue *q, struct op *op)
{
    if (q->tail - q->head == q->cap) {
        uint64_t cap = q->cap ? q->cap * 2 : 16;
        struct op **ring = ct_xmalloc(sizeof *ring * cap);
        for (uint64_t s = q->head; s < q->tail; s++)
            ring[s & (cap - 1)] = queue_at(q, s);
        free(q->ring);
        q->ring = ring;
        q->cap = cap;
    }
    op->seq = q->tail;
    q->ring[q->tail & (q->cap - 1)] = op;
    q->tail++;
}

/* Piece layout of a message: see "Striping" above. */
static void op_geometry(struct op *op, int streams)
{
    uint64_t len = op->len;
    if (len <= STRIPE_MIN || (streams == 1 && len <= PIECE_MAX)) {
        op->piece = len;
        op->npieces = 1;
    } else {
        uint64_t p = (len + (uint64_t)streams - 1) / (uint64_t)streams;
        p = (p + PIECE_ALIGN - 1) / PIECE_ALIGN * PIECE_ALIGN;
        p = p < PIECE_MIN ? PIECE_MIN : p > PIECE_MAX ? PIECE_MAX : p;
        op->piece = p;
        op->npieces = (len + p - 1) / p;
    }
    op->left = op->npieces;
}

static size_t piece_len(const struct op *op, uint64_t i)
{
    uint64_t off = i * op->piece;
    return (size_t)(op->len - off < op->piece ? op->len - off : op->piece);
}

/* The op whose piece the cursor names, advancing past messages with no piece on stream s. */
static struct op *cursor_op(const struct queue *q, struct cursor *c, int s, int streams)
{
    for (;;) {
        if (c->have)
            return queue_at(q, c->seq);
        if (c->seq < q->head) /* completed while this stream had no piece of them */
            c->seq = q->head;
        if (c->seq >= q->tail)
            return NULL;
        struct op *op = queue_at(q, c->seq);
        uint64_t first =
            ((uint64_t)s + (uint64_t)streams - c->seq % (uint64_t)streams) % (uint64_t)streams;
        if (first < op->npieces) {
            c->piece = first;
            c->done = 0;
            c->have = true;
            return op;
        }
        c->seq++;
    }
}

static void cursor_next(struct cursor *c, const struct op *op, int streams)
{
    c->piece += (uint64_t)streams;
    c->done = 0;
    if (c->piece >= op->npieces) {
        c->have = false;
        c->seq++;
    }
}

/* Complete finished ops in posting order. Returns how many completed. */
static int queue_retire(struct tcp_tp *t, struct queue *q)
{
    int n = 0;
    while (q->head < q->tail) {
        struct op *op = queue_at(q, q->head);
        if (op->left)
            break;
        op->req->status = 0;
        op->req->done = 1;
        op_put(t, op);
        q->head++;
        n++;
    }
    return n;
}

/* ---------------------------------------------------------------- errors */

/* Make an error sticky: every later call returns it, every pending request fails with it. */
static int tp_fail(struct tcp_tp *t, int rc, const struct ct_err *err)
{
    t->failed = rc;
    t->fail = *err;
    t->fail.code = (enum ct_status)rc;
    for (int r = 0; r < t->base.size; r++) {
        struct queue *qs[2] = {&t->peers[r].sq, &t->peers[r].rq};
        for (int d = 0; d < 2; d++)
            for (uint64_t s = qs[d]->head; s < qs[d]->tail; s++) {
                struct op *op = queue_at(qs[d], s);
                op->req->status = rc;
                op->req->done = 1;
            }
    }
    return rc;
}

static int tp_sticky(const struct tcp_tp *t, struct ct_err *err)
{
    if (err)
        *err = t->fail;
    return t->failed;
}

static int peer_closed(struct tcp_tp *t, const struct stream *st, const struct cursor *c,
                       const struct op *op, struct ct_err *err)
{
    int r = st->peer->rank;
    return ct_err_set(err, CT_EPEER,
                      "peer rank %d (%s): connection closed (stream %d, message %llu of %zu "
                      "bytes, piece at %llu)",
                      r, host_of(t, r), st->idx, (unsigned long long)op->seq, op->len,
                      (unsigned long long)(c->piece * op->piece));
}

static int peer_sys(struct tcp_tp *t, const struct stream *st, const char *what, struct ct_err *err)
{
    int r = st->peer->rank;
    return ct_err_sys(err, CT_EPEER, "peer rank %d (%s): %s on stream %d", r, host_of(t, r), what,
                      st->idx);
}

/* ---------------------------------------------------------------- send */

static void frame_for(const struct tcp_tp *t, const struct stream *st, const struct op *op,
                      const struct cursor *c, struct ct_frame *f)
{
    f->job = t->job;
    f->stream = (uint16_t)st->idx;
    f->seq = op->seq;
    f->offset = c->piece * op->piece;
    f->len = (uint32_t)piece_len(op, c->piece);
    f->total = op->len;
}

/* Advance a send cursor by n bytes, finishing pieces on the way. */
static void send_consume(struct tcp_tp *t, struct queue *q, struct stream *st, size_t n)
{
    while (n) {
        struct cursor *c = &st->sc;
        struct op *op = cursor_op(q, c, st->idx, t->nstreams);
        size_t need = HDR + piece_len(op, c->piece) - c->done;
        size_t take = n < need ? n : need;
        c->done += take;
        n -= take;
        if (take == need) {
            op->left--;
            cursor_next(c, op, t->nstreams);
        }
    }
}

static int stream_send(struct tcp_tp *t, struct peer *p, struct stream *st, struct ct_err *err)
{
    while (st->wr_ready) {
        struct iovec iov[2 * IOV_PIECES];
        int niov = 0;
        struct cursor c = st->sc;
        for (int k = 0; k < IOV_PIECES; k++) {
            struct op *op = cursor_op(&p->sq, &c, st->idx, t->nstreams);
            if (!op)
                break;
            struct ct_frame f;
            frame_for(t, st, op, &c, &f);
            if (c.done < HDR) {
                ct_frame_encode(&f, st->shdr[k]);
                iov[niov++] = (struct iovec){st->shdr[k] + c.done, HDR - c.done};
            }
            size_t pdone = c.done > HDR ? c.done - HDR : 0;
            if (f.len > pdone)
                iov[niov++] = (struct iovec){(char *)op->src + f.offset + pdone, f.len - pdone};
            cursor_next(&c, op, t->nstreams);
        }
        if (!niov)
            return 0;
        struct msghdr mh = {.msg_iov = iov, .msg_iovlen = (size_t)niov};
        ssize_t n = sendmsg(st->fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK) {
                st->wr_ready = false;
                return 0;
            }
            return peer_sys(t, st, "send", err);
        }
        send_consume(t, &p->sq, st, (size_t)n);
    }
    return 0;
}

/* ---------------------------------------------------------------- receive */

static int check_header(struct tcp_tp *t, const struct stream *st, const struct op *op,
                        const struct cursor *c, const unsigned char *hdr, struct ct_err *err)
{
    struct ct_frame got, want;
    frame_for(t, st, op, c, &want);
    if (ct_frame_decode(hdr, &got, err) < 0 || ct_frame_check(&got, &want, err) < 0) {
        int r = st->peer->rank;
        return ct_err_wrap(err, "peer rank %d (%s): stream %d: ", r, host_of(t, r), st->idx);
    }
    return 0;
}

/* Outcome of one receive syscall: < 0 error, 0 would block, 1 bytes moved. */
static int recv_once(struct tcp_tp *t, struct stream *st, struct iovec *iov, int niov,
                     size_t *n_out, const struct op *op, struct ct_err *err)
{
    struct msghdr mh = {.msg_iov = iov, .msg_iovlen = (size_t)niov};
    ssize_t n = recvmsg(st->fd, &mh, MSG_DONTWAIT);
    if (n > 0) {
        *n_out = (size_t)n;
        return 1;
    }
    if (n == 0)
        return peer_closed(t, st, &st->rc, op, err);
    if (errno == EINTR) {
        *n_out = 0;
        return 1;
    }
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
        st->rd_ready = false;
        return 0;
    }
    return peer_sys(t, st, "recv", err);
}

/* Plain receives: scatter consecutive pieces of this stream straight into their buffers. */
static int recv_plain(struct tcp_tp *t, struct peer *p, struct stream *st, struct op *first,
                      struct ct_err *err)
{
    struct iovec iov[2 * IOV_PIECES];
    int niov = 0;
    struct cursor c = st->rc;
    for (int k = 0; k < IOV_PIECES; k++) {
        struct op *op = cursor_op(&p->rq, &c, st->idx, t->nstreams);
        if (!op || op->fn)
            break;
        size_t plen = piece_len(op, c.piece);
        if (c.done < HDR)
            iov[niov++] = (struct iovec){st->rhdr[k] + c.done, HDR - c.done};
        size_t pdone = c.done > HDR ? c.done - HDR : 0;
        if (plen > pdone)
            iov[niov++] = (struct iovec){op->dst + c.piece * op->piece + pdone, plen - pdone};
        cursor_next(&c, op, t->nstreams);
    }
    size_t n;
    int rc = recv_once(t, st, iov, niov, &n, first, err);
    if (rc <= 0)
        return rc;
    for (int k = 0; n; k++) {
        struct cursor *cur = &st->rc;
        struct op *op = cursor_op(&p->rq, cur, st->idx, t->nstreams);
        size_t need = HDR + piece_len(op, cur->piece) - cur->done;
        size_t take = n < need ? n : need;
        size_t before = cur->done;
        cur->done += take;
        n -= take;
        if (before < HDR && cur->done >= HDR)
            CT_TRY(check_header(t, st, op, cur, st->rhdr[k], err));
        if (take == need) {
            op->left--;
            cursor_next(cur, op, t->nstreams);
        } else if (k > 0 && cur->done < HDR) {
            memcpy(st->rhdr[0], st->rhdr[k], cur->done); /* resumes as piece 0 next time */
        }
    }
    return 1;
}

/* Fused receive-reduce of one piece: read into the bounce buffer, reduce whole elements. */
static int recv_reduce(struct tcp_tp *t, struct stream *st, struct op *op, struct ct_err *err)
{
    struct cursor *c = &st->rc;
    size_t plen = piece_len(op, c->piece);
    size_t got = c->done > HDR ? c->done - HDR : 0; /* payload bytes received so far */
    struct iovec iov[2];
    int niov = 0;
    if (c->done < HDR)
        iov[niov++] = (struct iovec){st->rhdr[0] + c->done, HDR - c->done};
    memcpy(t->bounce, st->carry, st->ncarry);
    size_t want = plen - got, room = BOUNCE_BYTES - st->ncarry;
    if (want)
        iov[niov++] = (struct iovec){t->bounce + st->ncarry, want < room ? want : room};
    size_t n;
    int rc = recv_once(t, st, iov, niov, &n, op, err);
    if (rc <= 0 || n == 0)
        return rc;
    size_t before = c->done;
    size_t hdr_part = before < HDR ? (n < HDR - before ? n : HDR - before) : 0;
    c->done += n;
    if (before < HDR && c->done >= HDR)
        CT_TRY(check_header(t, st, op, c, st->rhdr[0], err));
    size_t avail = st->ncarry + (n - hdr_part);
    size_t whole = avail / op->esize * op->esize;
    if (whole) {
        size_t pos = (size_t)(c->piece * op->piece) + got - st->ncarry;
        op->fn(op->dst + pos, op->src + pos, t->bounce, whole / op->esize);
    }
    st->ncarry = avail - whole;
    memcpy(st->carry, t->bounce + whole, st->ncarry);
    if (c->done == HDR + plen) {
        op->left--;
        cursor_next(c, op, t->nstreams);
    }
    return 1;
}

static int stream_recv(struct tcp_tp *t, struct peer *p, struct stream *st, struct ct_err *err)
{
    while (st->rd_ready) {
        struct op *op = cursor_op(&p->rq, &st->rc, st->idx, t->nstreams);
        if (!op)
            return 0;
        int rc = op->fn ? recv_reduce(t, st, op, err) : recv_plain(t, p, st, op, err);
        if (rc <= 0)
            return rc;
    }
    return 0;
}

/* ---------------------------------------------------------------- vtable: data path */

static int get_peer(struct tcp_tp *t, int peer, struct peer **out, struct ct_err *err)
{
    if (t->failed)
        return tp_sticky(t, err);
    if (peer < 0 || peer >= t->base.size || peer == t->base.rank)
        return ct_err_set(err, CT_EINVAL, "tcp: peer rank %d is not valid (rank %d of %d)", peer,
                          t->base.rank, t->base.size);
    if (!t->peers[peer].st)
        return ct_err_set(err, CT_EINVAL, "tcp: peer rank %d is not connected", peer);
    *out = &t->peers[peer];
    return 0;
}

static void post(struct tcp_tp *t, struct peer *p, struct queue *q, struct op *op,
                 struct ct_req *req)
{
    req->done = 0;
    req->status = 0;
    op->req = req;
    queue_push(q, op);
    op_geometry(op, t->nstreams);
    if (!p->active) {
        p->active = true;
        t->active[t->nactive++] = p->rank;
    }
}

static int tcp_isend(struct ct_tp *tp, int peer, const void *buf, size_t len, struct ct_req *req,
                     struct ct_err *err)
{
    struct tcp_tp *t = (struct tcp_tp *)tp;
    struct peer *p;
    CT_TRY(get_peer(t, peer, &p, err));
    if (len > CT_FRAME_MAX_TOTAL)
        return ct_err_set(err, CT_EINVAL, "tcp: message of %zu bytes is too long", len);
    struct op *op = op_get(t);
    op->src = buf;
    op->len = len;
    post(t, p, &p->sq, op, req);
    return 0;
}

static int tcp_irecv(struct ct_tp *tp, int peer, void *dst, const void *src, size_t len,
                     const struct ct_red *red, struct ct_req *req, struct ct_err *err)
{
    struct tcp_tp *t = (struct tcp_tp *)tp;
    struct peer *p;
    CT_TRY(get_peer(t, peer, &p, err));
    if (len > CT_FRAME_MAX_TOTAL)
        return ct_err_set(err, CT_EINVAL, "tcp: message of %zu bytes is too long", len);
    if (red && (!red->fn || red->esize < 1 || red->esize > MAX_ESIZE || PIECE_ALIGN % red->esize ||
                len % red->esize))
        return ct_err_set(err, CT_EINVAL, "tcp: cannot reduce %zu bytes in elements of %zu bytes",
                          len, red ? red->esize : 0);
    struct op *op = op_get(t);
    op->dst = dst;
    op->len = len;
    if (red && len) {
        if (!t->bounce)
            t->bounce = ct_xmalloc(BOUNCE_BYTES);
        op->src = src;
        op->fn = red->fn;
        op->esize = red->esize;
    }
    post(t, p, &p->rq, op, req);
    return 0;
}

/* Collect epoll events into the streams' ready flags; ms as for epoll_wait. */
static int harvest(struct tcp_tp *t, int ms, struct ct_err *err)
{
    struct epoll_event ev[EVENTS];
    int n = epoll_wait(t->epfd, ev, EVENTS, ms);
    if (n < 0)
        return errno == EINTR ? 0 : ct_err_sys(err, CT_EIO, "tcp: epoll_wait");
    for (int i = 0; i < n; i++) {
        struct stream *st = ev[i].data.ptr;
        if (ev[i].events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR))
            st->rd_ready = true;
        if (ev[i].events & (EPOLLOUT | EPOLLHUP | EPOLLERR))
            st->wr_ready = true;
    }
    return n;
}

static int tcp_progress(struct ct_tp *tp, struct ct_err *err)
{
    struct tcp_tp *t = (struct tcp_tp *)tp;
    struct ct_err local = {0};
    struct ct_err *e = err ? err : &local;
    if (t->failed)
        return tp_sticky(t, err);
    int rc = harvest(t, 0, e);
    if (rc < 0)
        return tp_fail(t, rc, e);
    int completed = 0;
    for (int i = 0; i < t->nactive;) {
        struct peer *p = &t->peers[t->active[i]];
        for (int s = 0; s < t->nstreams; s++) {
            struct stream *st = &p->st[s];
            if (p->rq.head < p->rq.tail && st->rd_ready && (rc = stream_recv(t, p, st, e)) < 0)
                return tp_fail(t, rc, e);
            if (p->sq.head < p->sq.tail && st->wr_ready && (rc = stream_send(t, p, st, e)) < 0)
                return tp_fail(t, rc, e);
        }
        completed += queue_retire(t, &p->rq) + queue_retire(t, &p->sq);
        if (p->rq.head == p->rq.tail && p->sq.head == p->sq.tail) {
            p->active = false;
            t->active[i] = t->active[--t->nactive];
            continue;
        }
        i++;
    }
    return completed > 0;
}

static int tcp_wait(struct ct_tp *tp, int64_t timeout_ns, struct ct_err *err)
{
    struct tcp_tp *t = (struct tcp_tp *)tp;
    struct ct_err local = {0};
    struct ct_err *e = err ? err : &local;
    if (t->failed)
        return tp_sticky(t, err);
    for (int i = 0; i < t->nactive; i++) {
        struct peer *p = &t->peers[t->active[i]];
        for (int s = 0; s < t->nstreams; s++) {
            struct stream *st = &p->st[s];
            if ((st->rd_ready && cursor_op(&p->rq, &st->rc, s, t->nstreams)) ||
                (st->wr_ready && cursor_op(&p->sq, &st->sc, s, t->nstreams)))
                return 0; /* progress() has work it can do now */
        }
    }
    int64_t ms = timeout_ns <= 0 ? 0 : (timeout_ns + 999999) / 1000000;
    int rc = harvest(t, ms > INT_MAX ? INT_MAX : (int)ms, e);
    return rc < 0 ? tp_fail(t, rc, e) : 0;
}

static int tcp_pending_peers(struct ct_tp *tp, int *peers, int max)
{
    struct tcp_tp *t = (struct tcp_tp *)tp;
    int n = 0;
    for (int i = 0; i < t->nactive && n < max; i++) {
        const struct peer *p = &t->peers[t->active[i]];
        if (p->rq.head < p->rq.tail || p->sq.head < p->sq.tail)
            peers[n++] = p->rank;
    }
    return n;
}

static void *tcp_alloc(struct ct_tp *tp, size_t bytes, struct ct_err *err)
{
    void *p = NULL;
    if (posix_memalign(&p, 4096, bytes ? bytes : 1)) {
        ct_err_set(err, CT_ENOMEM, "cannot allocate %zu bytes", bytes);
        return NULL;
    }
    return p;
}

static void tcp_free(struct ct_tp *tp, void *p, size_t bytes)
{
    free(p);
}

static void tcp_close(struct ct_tp *tp)
{
    struct tcp_tp *t = (struct tcp_tp *)tp;
    if (!t)
        return;
    for (int r = 0; t->peers && r < t->base.size; r++) {
        struct peer *p = &t->peers[r];
        for (int s = 0; p->st && s < t->nstreams; s++)
            if (p->st[s].fd >= 0)
                close(p->st[s].fd);
        free(p->st);
        free(p->sq.ring);
        free(p->rq.ring);
    }
    while (t->chunks) {
        struct op_chunk *c = t->chunks;
        t->chunks = c->next;
        free(c);
    }
    if (t->epfd >= 0)
        close(t->epfd);
    free(t->peers);
    free(t->active);
    free(t->bounce);
    free(t);
}

/* ---------------------------------------------------------------- connection setup */

/* What each rank publishes through the bootstrap. */
struct addr_blob {
    char host[48];
    uint16_t port;
    uint16_t streams;
    uint8_t has_peers; /* 0: wants every peer; 1: see the peer bitmaps */
    uint8_t pad[3];
};

/* One connection going through the handshake. */
struct hs {
    int fd;
    int peer, stream; /* -1 while an incoming connection is unidentified */
    bool outgoing;
    size_t got;
    unsigned char buf[CT_HELLO_BYTES];
};

struct setup {
    struct tcp_tp *t;
    struct ct_boot *boot;
    int lfd;
    int sockbuf; /* bytes, 0 = kernel autotuning */
    int64_t deadline;
    struct addr_blob *addrs;
    bool *link;   /* link[r]: this rank and r are connected */
    int expected; /* connections still to establish */
    struct hs *hs;
    int nhs;
};

/* The address to publish: cfg->ifname's, else the route to the other hosts (boot.h). */
static int choose_addr(struct ct_boot *b, const char *ifname, char *host, size_t len,
                       struct ct_err *err)
{
    return ct_boot_local_addr(b, ifname, host, len, err);
}

static void hello_for(const struct tcp_tp *t, int kind, int to, int stream, struct ct_hello *h)
{
    memset(h, 0, sizeof *h);
    h->kind = (uint8_t)kind;
    h->stream = (uint16_t)stream;
    h->nstreams = (uint16_t)t->nstreams;
    h->from = (uint32_t)t->base.rank;
    h->to = (uint32_t)to;
    h->size = (uint32_t)t->base.size;
    h->job_id = t->base.boot->job_id;
    memcpy(h->token, t->base.boot->token, sizeof h->token);
}

static struct hs *hs_add(struct setup *su, int fd, bool outgoing, int peer, int stream)
{
    su->hs = ct_xrealloc(su->hs, sizeof *su->hs * (size_t)(su->nhs + 1));
    struct hs *h = &su->hs[su->nhs++];
    memset(h, 0, sizeof *h);
    h->fd = fd;
    h->outgoing = outgoing;
    h->peer = peer;
    h->stream = stream;
    return h;
}

static void hs_drop(struct setup *su, int i, bool close_fd)
{
    if (close_fd)
        close(su->hs[i].fd);
    su->hs[i] = su->hs[--su->nhs];
}

static void install(struct setup *su, int peer, int stream, int fd)
{
    su->t->peers[peer].st[stream].fd = fd;
    su->expected--;
}

/* Open this rank's connections to lower ranks and send the CONNECT handshakes. */
static int connect_lower(struct setup *su, struct ct_err *err)
{
    struct tcp_tp *t = su->t;
    for (int r = 0; r < t->base.rank; r++) {
        if (!su->link[r])
            continue;
        for (int s = 0; s < t->nstreams; s++) {
            int fd = ct_sock_connect_tuned(su->addrs[r].host, su->addrs[r].port, su->sockbuf,
                                           su->deadline, err);
            if (fd < 0)
                return ct_err_wrap(err, "tcp: peer rank %d (%s): ", r, host_of(t, r));
            struct hs *h = hs_add(su, fd, true, r, s);
            struct ct_hello hello;
            unsigned char wire[CT_HELLO_BYTES];
            hello_for(t, CT_HELLO_CONNECT, r, s, &hello);
            ct_hello_encode(&hello, wire);
            if (ct_sock_set_nonblock(fd, 1) < 0 ||
                ct_sock_write_all(h->fd, wire, sizeof wire, su->deadline, err) < 0)
                return ct_err_wrap(err, "tcp: peer rank %d (%s): handshake: ", r, host_of(t, r));
        }
    }
    return 0;
}

/* A complete handshake arrived on su->hs[i]: install, reject or fail. */
static int hs_complete(struct setup *su, int i, struct ct_err *err)
{
    struct tcp_tp *t = su->t;
    struct hs *h = &su->hs[i];
    struct ct_hello got;
    struct ct_err e = {0};
    int decoded = ct_hello_decode(h->buf, &got, &e) == 0;
    int token_ok = decoded && ct_boot_token_equal(got.token, t->base.boot->token);
    int ok = token_ok && got.job_id == t->base.boot->job_id &&
             got.size == (uint32_t)t->base.size && got.to == (uint32_t)t->base.rank &&
             got.nstreams == (uint16_t)t->nstreams;
    if (h->outgoing) {
        if (!ok || got.kind != CT_HELLO_ACCEPT || got.from != (uint32_t)h->peer ||
            got.stream != (uint16_t)h->stream)
            return ct_err_set(err, CT_EPEER,
                              "tcp: peer rank %d (%s) at %s:%u answered the handshake "
                              "wrongly%s%s",
                              h->peer, host_of(t, h->peer), su->addrs[h->peer].host,
                              su->addrs[h->peer].port, e.code ? ": " : "", e.msg);
        install(su, h->peer, h->stream, h->fd);
        hs_drop(su, i, false);
        return 0;
    }
    int from = (int)got.from;
    if (!ok || got.kind != CT_HELLO_CONNECT || from <= t->base.rank || !su->link[from] ||
        t->peers[from].st[got.stream].fd >= 0) {
        char who[64] = "?";
        ct_boot_peer_text(h->fd, who, sizeof who);
        const char *why = !decoded    ? e.msg
                          : !token_ok ? "wrong job token"
                          : !ok       ? "handshake of another job"
                                      : "unexpected or duplicate stream";
        ct_boot_notice(t->base.boot, "tcp: rejected a connection from %s: %s", who, why);
        hs_drop(su, i, true); /* stray, foreign or duplicate: closed unread */
        return 0;
    }
    struct ct_hello reply;
    unsigned char wire[CT_HELLO_BYTES];
    hello_for(t, CT_HELLO_ACCEPT, from, got.stream, &reply);
    ct_hello_encode(&reply, wire);
    if (ct_sock_write_all(h->fd, wire, sizeof wire, su->deadline, err) < 0)
        return ct_err_wrap(err, "tcp: peer rank %d (%s): handshake: ", from, host_of(t, from));
    install(su, from, got.stream, h->fd);
    hs_drop(su, i, false);
    return 0;
}

/* Accept what is pending; beyond PENDING_MAX + the streams of every peer that connects to us
 * unidentified connections, one is dropped per
 * new one, so a flood cannot exhaust descriptors (it can delay setup until the deadline).
 * 0, or the error where none is left (the listener stays readable: it spun until the
 * deadline, then read as a timeout). */
static int accept_new(struct setup *su, struct ct_err *err)
{
    for (;;) {
        int fd = accept4(su->lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (fd < 0 && ct_sock_no_fd(errno))
            return ct_err_sys(err, CT_EIO, "tcp: cannot accept a peer's connection%s",
                              ct_sock_no_fd(errno));
        if (fd < 0)
            return 0;
        ct_sock_tune(fd, 0);
        int unknown = 0, victim = -1;
        for (int i = 0; i < su->nhs; i++)
            if (!su->hs[i].outgoing) {
                unknown++;
                victim = victim < 0 ? i : victim;
            }
        if (unknown >= PENDING_MAX + su->t->nstreams * (su->t->base.size - su->t->base.rank))
            hs_drop(su, victim, true);
        hs_add(su, fd, false, -1, -1);
    }
}

static int setup_timeout(struct setup *su, struct ct_err *err)
{
    struct tcp_tp *t = su->t;
    char list[200] = "";
    size_t off = 0;
    for (int r = 0; r < t->base.size && off < sizeof list - 40; r++)
        for (int s = 0; su->link[r] && s < t->nstreams; s++)
            if (t->peers[r].st[s].fd < 0) {
                off += (size_t)snprintf(list + off, sizeof list - off, "%s%d (%s)", off ? ", " : "",
                                        r, host_of(t, r));
                break;
            }
    return ct_err_set(err, CT_ETIMEDOUT,
                      "tcp: connection setup timed out after %.1f s; missing peer rank %s",
                      (double)su->boot->timeout_ns / 1e9, list);
}

/* Accept, read and answer handshakes until every expected connection is established. */
static int handshake_loop(struct setup *su, struct ct_err *err)
{
    while (su->expected > 0) {
        int64_t left = su->deadline - ct_now_ns();
        if (left <= 0)
            return setup_timeout(su, err);
        struct pollfd *pf = ct_xmalloc(sizeof *pf * (size_t)(su->nhs + 1));
        pf[0] = (struct pollfd){su->lfd, su->lfd >= 0 ? POLLIN : 0, 0};
        for (int i = 0; i < su->nhs; i++)
            pf[i + 1] = (struct pollfd){su->hs[i].fd, POLLIN, 0};
        int ms = left / 1000000 > 100 ? 100 : (int)(left / 1000000) + 1;
        int n = poll(pf, (nfds_t)su->nhs + 1, ms);
        /* handshakes are visited from the end: hs_drop() moves the last entry into i */
        int nfd = su->nhs;
        for (int i = nfd - 1; n > 0 && i >= 0; i--) {
            if (!pf[i + 1].revents)
                continue;
            struct hs *h = &su->hs[i];
            ssize_t got = recv(h->fd, h->buf + h->got, sizeof h->buf - h->got, MSG_DONTWAIT);
            if (got > 0 && (h->got += (size_t)got) == sizeof h->buf) {
                if (hs_complete(su, i, err) < 0) {
                    free(pf);
                    return err ? err->code : CT_EPEER;
                }
            } else if (got == 0 || (got < 0 && errno != EAGAIN && errno != EINTR)) {
                if (h->outgoing) {
                    int r = h->peer;
                    free(pf);
                    return ct_err_set(err, CT_EPEER,
                                      "tcp: peer rank %d (%s) closed the connection during the "
                                      "handshake",
                                      r, host_of(su->t, r));
                }
                hs_drop(su, i, true);
            }
        }
        if (n > 0 && (pf[0].revents & POLLIN) && accept_new(su, err) < 0) {
            free(pf);
            return err ? err->code : CT_EIO;
        }
        free(pf);
    }
    return 0;
}

/* Exchange addresses and peer wishes; fill su->addrs, su->link, su->expected. */
static int exchange(struct setup *su, const struct ct_tp_cfg *cfg, const char *host, int port,
                    struct ct_err *err)
{
    struct tcp_tp *t = su->t;
    int n = t->base.size, me = t->base.rank;
    struct addr_blob mine;
    memset(&mine, 0, sizeof mine);
    snprintf(mine.host, sizeof mine.host, "%s", host);
    mine.port = (uint16_t)port;
    mine.streams = (uint16_t)t->nstreams;
    mine.has_peers = cfg && cfg->peers ? 1 : 0;
    su->addrs = ct_xcalloc((size_t)n, sizeof *su->addrs);
    CT_TRY(ct_boot_allgather(su->boot, &mine, sizeof mine, su->addrs, err));
    bool *has = ct_xcalloc((size_t)n, sizeof *has);
    for (int r = 0; r < n; r++) {
        su->addrs[r].host[sizeof su->addrs[r].host - 1] = 0;
        has[r] = su->addrs[r].has_peers != 0;
        if (su->addrs[r].streams != t->nstreams) {
            free(has);
            return ct_err_set(err, CT_EINVAL, "tcp: rank %d (%s) uses %u streams, rank %d uses %d",
                              r, host_of(t, r), su->addrs[r].streams, me, t->nstreams);
        }
    }
    su->link = ct_xcalloc((size_t)n, sizeof *su->link);
    int rc = ct_tp_peer_links(su->boot, mine.has_peers ? cfg->peers : NULL, has, su->link, err);
    free(has);
    if (rc < 0)
        return rc;
    for (int r = 0; r < n; r++)
        if (su->link[r]) {
            su->expected += t->nstreams;
            t->peers[r].st = ct_xcalloc((size_t)t->nstreams, sizeof *t->peers[r].st);
            for (int s = 0; s < t->nstreams; s++) {
                struct stream *st = &t->peers[r].st[s];
                st->fd = -1;
                st->idx = s;
                st->peer = &t->peers[r];
                st->rd_ready = st->wr_ready = true;
            }
        }
    return 0;
}

/*
 * Socket buffer size to request: SOCK_BUF when the kernel grants it, else 0 (leave the
 * kernel's autotuning on: a fixed SO_RCVBUF turns autotuning off, and one above rmem_max
 * is silently cut to it, 208 KiB on stock kernels, which starves long fat links).
 */
int ct_tcp_window(struct ct_tp *tp, int peer, struct ct_tcp_window *w, struct ct_err *err)
{
    memset(w, 0, sizeof *w);
    if (!tp || tp->ops != &ct_tp_tcp_ops || peer < 0 || peer >= tp->size)
        return ct_err_set(err, CT_EUNSUPP, "not a tcp connection");
    struct tcp_tp *t = (struct tcp_tp *)tp;
    struct peer *p = &t->peers[peer];
    if (!p->st)
        return ct_err_set(err, CT_EUNSUPP, "no tcp connection to rank %d", peer);
    w->cwnd_bytes_min = -1;
    for (int s = 0; s < t->nstreams; s++) {
        struct tcp_info ti;
        socklen_t len = sizeof ti;
        if (p->st[s].fd < 0 || getsockopt(p->st[s].fd, IPPROTO_TCP, TCP_INFO, &ti, &len) < 0)
            continue;
        double c = (double)ti.tcpi_snd_cwnd * ti.tcpi_snd_mss;
        if (w->cwnd_bytes_min < 0 || c < w->cwnd_bytes_min)
            w->cwnd_bytes_min = c;
        if (c > w->cwnd_bytes_max)
            w->cwnd_bytes_max = c;
        if (ti.tcpi_rcv_space > w->rcv_space_max)
            w->rcv_space_max = ti.tcpi_rcv_space;
        w->rtt_ms += ti.tcpi_rtt / 1e3;
        if (!w->streams++) {
            socklen_t l = sizeof w->sndbuf;
            getsockopt(p->st[s].fd, SOL_SOCKET, SO_SNDBUF, &w->sndbuf, &l);
            l = sizeof w->rcvbuf;
            getsockopt(p->st[s].fd, SOL_SOCKET, SO_RCVBUF, &w->rcvbuf, &l);
        }
    }
    if (!w->streams)
        return ct_err_set(err, CT_EUNSUPP, "no tcp_info for rank %d", peer);
    w->rtt_ms /= w->streams;
    return 0;
}

static int sockbuf_size(void)
{
    static const char *const files[] = {"/proc/sys/net/core/rmem_max",
                                        "/proc/sys/net/core/wmem_max"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        FILE *f = fopen(files[i], "r");
        long v = 0;
        int ok = f && fscanf(f, "%ld", &v) == 1;
        if (f)
            fclose(f);
        if (!ok || v < SOCK_BUF)
            return 0;
    }
    return SOCK_BUF;
}

/* Listen on the published address, exchange, connect, handshake. */
static int setup_run(struct setup *su, const struct ct_tp_cfg *cfg, struct ct_err *err)
{
    struct tcp_tp *t = su->t;
    char host[48];
    int lo = 0, hi = 0, port = 0;
    CT_TRY(choose_addr(su->boot, cfg ? cfg->ifname : NULL, host, sizeof host, err));
    const char *range = getenv("COLLTUNE_PORT_RANGE");
    if (range && *range && ct_sock_parse_range(range, &lo, &hi, err) < 0)
        return ct_err_wrap(err, "tcp: COLLTUNE_PORT_RANGE: ");
    int backlog = t->nstreams * (t->base.size - t->base.rank) + PENDING_MAX;
    su->sockbuf = cfg && cfg->sockbuf ? (int)cfg->sockbuf : sockbuf_size();
    su->lfd = ct_sock_listen_range(host, lo, hi, (unsigned)su->boot->local_rank, backlog,
                                   su->sockbuf, &port, err);
    if (su->lfd < 0)
        return ct_err_wrap(err, "tcp: ");
    ct_sock_set_nonblock(su->lfd, 1);
    CT_TRY(exchange(su, cfg, host, port, err));
    CT_TRY(connect_lower(su, err));
    return handshake_loop(su, err);
}

static int register_streams(struct tcp_tp *t, struct ct_err *err)
{
    for (int r = 0; r < t->base.size; r++)
        for (int s = 0; t->peers[r].st && s < t->nstreams; s++) {
            struct stream *st = &t->peers[r].st[s];
            struct epoll_event ev = {.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET,
                                     .data.ptr = st};
            if (ct_sock_set_nonblock(st->fd, 1) < 0 ||
                epoll_ctl(t->epfd, EPOLL_CTL_ADD, st->fd, &ev) < 0)
                return ct_err_sys(err, CT_EIO, "tcp: registering a socket with epoll");
        }
    return 0;
}

static int tcp_open(struct ct_tp **out, const struct ct_tp_cfg *cfg, struct ct_boot *boot,
                    struct ct_err *err)
{
    int streams = cfg && cfg->streams ? cfg->streams : 1;
    if (streams < 1 || streams > CT_FRAME_MAX_STREAMS)
        return ct_err_set(err, CT_EINVAL, "tcp: %d streams per peer (expected 1 to %d)", streams,
                          CT_FRAME_MAX_STREAMS);
    struct tcp_tp *t = ct_xcalloc(1, sizeof *t);
    t->base.ops = &ct_tp_tcp_ops;
    t->base.rank = boot->rank;
    t->base.size = boot->size;
    t->base.boot = boot;
    t->nstreams = streams;
    t->job = (uint32_t)boot->job_id;
    t->peers = ct_xcalloc((size_t)boot->size, sizeof *t->peers);
    t->active = ct_xcalloc((size_t)boot->size, sizeof *t->active);
    for (int r = 0; r < boot->size; r++)
        t->peers[r].rank = r;
    t->epfd = epoll_create1(EPOLL_CLOEXEC);
    if (t->epfd < 0) {
        int rc = ct_err_sys(err, CT_EIO, "tcp: epoll_create1");
        tcp_close(&t->base);
        return rc;
    }
    int rc = 0;
    if (boot->size > 1) {
        struct setup su = {.t = t, .boot = boot, .lfd = -1};
        su.deadline = ct_now_ns() + (boot->timeout_ns > 0 ? boot->timeout_ns : 60000000000LL);
        rc = setup_run(&su, cfg, err);
        for (int i = 0; i < su.nhs; i++) /* strays, or all of them on failure */
            close(su.hs[i].fd);
        if (su.lfd >= 0)
            close(su.lfd);
        free(su.hs);
        free(su.addrs);
        free(su.link);
        if (rc == 0)
            rc = register_streams(t, err);
    }
    if (rc < 0) {
        tcp_close(&t->base);
        return rc;
    }
    *out = &t->base;
    return 0;
}

const struct ct_tp_ops ct_tp_tcp_ops = {
    .name = "tcp",
    .summary = "TCP sockets, several parallel streams per peer",
    .caps = CT_TP_INTRA_NODE | CT_TP_INTER_NODE,
    .built = true,
    .open = tcp_open,
    .close = tcp_close,
    .alloc = tcp_alloc,
    .free = tcp_free,
    .isend = tcp_isend,
    .irecv = tcp_irecv,
    .progress = tcp_progress,
    .wait = tcp_wait,
    .pending_peers = tcp_pending_peers,
};
