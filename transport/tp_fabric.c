/* SPDX-License-Identifier: MIT */
/*
 * libfabric transport: reliable datagram endpoints (FI_EP_RDM) with tagged messages, so the
 * same code runs over verbs;ofi_rxm, efa, tcp;ofi_rxm, shm or sockets. Data path, memory
 * registration and the vtable; set-up is in tp_fabric_open.c.
 */
#include <stdbool.h>
#include <stdlib.h>

#include "tp.h"

#ifdef HAVE_LIBFABRIC

#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>


#include "../lib/clock.h"
#include "boot.h"
#include "fabric_int.h"

/*
 * Design
 *
 * Matching. A message of len bytes between an ordered pair is cut into len / piece full
 * pieces and one shorter last piece, empty when len is a multiple of piece (piece: the
 * smallest max_msg_size of all ranks, capped at 1 MiB, a multiple of 4 KiB). Each piece is
 * one tagged message whose tag is the sender's rank and a per-pair piece sequence number
 * (fabric_int.h), so a receive matches exactly its piece however many are in flight and in
 * whatever order the provider completes them. No ignore bits are used (the shm provider of
 * libfabric 1.17 loses messages matched through them). Without FI_TAGGED the same pieces
 * travel as untagged messages over directed receives with send-after-send ordering,
 * posted strictly in sequence order.
 *
 * Length check. A completed receive piece must have exactly the expected length, and a
 * longer one is reported by the provider as FI_ETRUNC. Full pieces all have `piece` bytes
 * and a last piece always fewer, so wherever the two sides' lengths first diverge, the
 * piece there differs in length: CT_EPEER "length mismatch", naming the peer.
 *
 * Posting. isend/irecv queue an op per peer and direction and post its pieces at once, as
 * far as the provider's queue depths (tx/rx attr size) allow, and at most a fair share of
 * them per peer (depth / linked peers, at least 16): a provider that stops reading its
 * incoming queue when it cannot place an unexpected message (shm) must never wait on a
 * peer whose receives we hold back because others took every slot. progress() reads the
 * completion queue and posts what is left. Requests complete in posting order per peer and
 * direction. Sends are never injected: a send completes only when the provider says so,
 * so a rank that closes right after its last send does not lose it (sockets would).
 *
 * Fused receive-reduce. When dst and src do not overlap, a piece lands in dst and is reduced
 * in place there (dst = src (op) dst) as soon as it completes, so reduction is pipelined
 * with the arrival of the next pieces. When they overlap (in place), pieces land in
 * registered bounce buffers of `piece` bytes: at most BOUNCE_SOFT are kept, but a peer
 * with no bounce buffer in flight always gets one, so no peer waits on another.
 *
 * Memory registration. The domain's mr_mode decides: FI_MR_LOCAL (or COLLTUNE_FI_MR_LOCAL=1,
 * for tests) means every buffer needs a descriptor. alloc() registers its buffers once
 * (always, when the domain can: zero-copy providers use the descriptor even when not
 * required); free() deregisters them. Foreign buffers, only when descriptors are required,
 * go through a cache of page-aligned ranges (CACHE_SOFT entries, least recently used and
 * unreferenced evicted first). A cached range that the program frees and maps again at the
 * same address keeps its old registration: that is the usual hazard of registration caches;
 * the engine passes alloc()'d memory for all but tiny control messages. FI_MR_VIRT_ADDR,
 * FI_MR_ALLOCATED and FI_MR_PROV_KEY only concern remote access and are accepted as is.
 *
 * Failures. A completion error names the peer of its op (FI_ETRUNC as a length mismatch).
 * A peer whose liveness socket closes (tp_fabric_open.c) fails the transport if it still
 * has operations pending LIVE_GRACE_NS later (its last messages may still be in flight when
 * it exits normally). The first failure is sticky: every pending request completes with it,
 * and the endpoint is quiesced (posted pieces cancelled, their completions awaited for at
 * most QUIESCE_NS) and closed, so that nothing lands later in buffers the caller frees after
 * seeing the error. close() quiesces the same way. An alloc()'d buffer freed while the
 * provider still holds a piece of it (a request the caller gave up on) is freed by close(),
 * after the endpoint is closed (tcp;ofi_rxm went on sending from one freed so).
 *
 * Waiting. With an FI_WAIT_FD completion queue, wait() calls fi_trywait() and blocks in
 * epoll on the queue's fd and the liveness sockets; without one (shm), it yields the CPU
 * once and returns: the caller's loop spins. progress() itself yields the CPU after every
 * IDLE_YIELD calls that found nothing: software providers (tcp;ofi_rxm) move data in the
 * kernel and in helper threads, and two ranks spinning on every core starved them (128 KiB
 * exchanged both ways took 2 ms instead of 0.1 ms on a 2-core host). Where no one else
 * wants the core, sched_yield() returns at once.
 */

#define BOUNCE_SOFT 8
#define CACHE_SOFT 32
#define CQ_BATCH 32
#define MAX_ESIZE 64
#define LIVE_CHECK_NS 5000000LL   /* liveness sockets polled at most this often */
#define LIVE_GRACE_NS 500000000LL /* a closed peer's pending ops fail after this */
#define QUIESCE_NS 200000000LL    /* wait for cancelled pieces at most this long */
#define IDLE_YIELD 16             /* empty progress calls between two sched_yield() */

/* ---------------------------------------------------------------- ops, pieces, queues */

static struct fab_op *op_get(struct fab_tp *f)
{
    if (!f->free_ops) {
        struct fab_op_chunk *c = ct_xcalloc(1, sizeof *c);
        c->next = f->op_chunks;
        f->op_chunks = c;
        for (size_t i = 0; i < sizeof c->ops / sizeof c->ops[0]; i++) {
            c->ops[i].next = f->free_ops;
            f->free_ops = &c->ops[i];
        }
    }
    struct fab_op *op = f->free_ops;
    f->free_ops = op->next;
    memset(op, 0, sizeof *op);
    op->cache_slot = -1;
    return op;
}

static struct fab_piece *piece_get(struct fab_tp *f)
{
    if (!f->free_pieces) {
        struct fab_piece_chunk *c = ct_xcalloc(1, sizeof *c);
        c->next = f->piece_chunks;
        f->piece_chunks = c;
        for (size_t i = 0; i < sizeof c->pieces / sizeof c->pieces[0]; i++) {
            c->pieces[i].next = f->free_pieces;
            f->free_pieces = &c->pieces[i];
        }
    }
    struct fab_piece *pc = f->free_pieces;
    f->free_pieces = pc->next;
    memset(pc, 0, sizeof *pc);
    pc->bounce = -1;
    pc->live = true;
    return pc;
}

static void piece_put(struct fab_tp *f, struct fab_piece *pc)
{
    pc->live = false;
    pc->next = f->free_pieces;
    f->free_pieces = pc;
}

static struct fab_op *queue_at(const struct fab_queue *q, uint64_t i)
{
    return q->ring[i & (q->cap - 1)];
}

static void queue_push(struct fab_queue *q, struct fab_op *op)
{
    if (q->tail - q->head == q->cap) {
        uint64_t cap = q->cap ? q->cap * 2 : 16;
        struct fab_op **ring = ct_xmalloc(sizeof *ring * cap);
        for (uint64_t s = q->head; s < q->tail; s++)
            ring[s & (cap - 1)] = queue_at(q, s);
        free(q->ring);
        q->ring = ring;
        q->cap = cap;
    }
    q->ring[q->tail & (q->cap - 1)] = op;
    q->tail++;
}

/* Pieces 0 .. npieces-2 are full; the last has len % piece bytes (maybe none). */
static size_t piece_len(const struct fab_tp *f, const struct fab_op *op, uint64_t i)
{
    return i + 1 < op->npieces ? f->piece : op->len - (size_t)i * f->piece;
}

static uint64_t tag_of(int rank, uint64_t seq)
{
    return (uint64_t)rank << FAB_SEQ_BITS | (seq & FAB_SEQ_MASK);
}

/* ---------------------------------------------------------------- memory registration */

static int mr_reg(struct fab_tp *f, void *p, size_t len, struct fid_mr **mr, void **desc)
{
    int rc = fi_mr_reg(f->domain, p, len, FI_SEND | FI_RECV, 0, ++f->mr_key, 0, mr, NULL);
    if (rc) {
        *mr = NULL;
        *desc = NULL;
        return rc;
    }
    *desc = fi_mr_desc(*mr);
    return 0;
}

/* Index of the alloc()'d region containing [p, p + len), or -1. */
static int region_find(const struct fab_tp *f, const void *p, size_t len)
{
    const char *c = p;
    int lo = 0, hi = f->nregions - 1, at = -1;
    while (lo <= hi) { /* last region starting at or below c */
        int mid = (lo + hi) / 2;
        if (f->regions[mid].lo <= c) {
            at = mid;
            lo = mid + 1;
        } else {
            hi = mid - 1;
        }
    }
    if (at >= 0 && c + len <= f->regions[at].hi)
        return at;
    return -1;
}

static void cache_release(struct fab_tp *f, int slot)
{
    if (slot >= 0)
        f->cache[slot].refs--;
}

/* A cache slot registering a page-aligned range around [p, p + len). */
static int cache_get(struct fab_tp *f, const void *p, size_t len, int *slot, struct ct_err *err)
{
    const char *c = p;
    int nvalid = 0, victim = -1, empty = -1;
    for (int i = 0; i < f->ncache; i++) {
        struct fab_region *e = &f->cache[i];
        if (!e->valid) {
            empty = empty < 0 ? i : empty;
            continue;
        }
        nvalid++;
        if (e->lo <= c && c + len <= e->hi) {
            e->refs++;
            e->used = ++f->clock;
            *slot = i;
            return 0;
        }
        if (!e->refs && (victim < 0 || e->used < f->cache[victim].used))
            victim = i;
    }
    if (nvalid >= CACHE_SOFT && victim >= 0) {
        fi_close(&f->cache[victim].mr->fid);
        f->cache[victim].valid = false;
        empty = victim;
    }
    if (empty < 0) {
        f->cache = ct_xrealloc(f->cache, sizeof *f->cache * (size_t)(f->ncache + 1));
        empty = f->ncache++;
    }
    struct fab_region *e = &f->cache[empty];
    memset(e, 0, sizeof *e);
    uintptr_t lo = (uintptr_t)c & ~(uintptr_t)4095;
    uintptr_t hi = ((uintptr_t)c + len + 4095) & ~(uintptr_t)4095;
    int rc = mr_reg(f, (void *)lo, hi - lo, &e->mr, &e->desc);
    if (rc)
        return ct_err_set(err, CT_EIO, "fabric: registering %zu bytes at %p: %s", len, p,
                          fi_strerror(-rc));
    e->lo = (char *)lo;
    e->hi = (char *)hi;
    e->refs = 1;
    e->used = ++f->clock;
    e->valid = true;
    *slot = empty;
    return 0;
}

/* The descriptor for an op's buffer: see "Memory registration" above. */
static int op_desc(struct fab_tp *f, struct fab_op *op, const void *buf, struct ct_err *err)
{
    op->desc = NULL;
    op->cache_slot = -1;
    if (!op->len || (!f->mr_try && !f->mr_local))
        return 0;
    int i = region_find(f, buf, op->len);
    if (i >= 0) {
        op->desc = f->regions[i].desc;
        return 0;
    }
    if (!f->mr_local)
        return 0;
    CT_TRY(cache_get(f, buf, op->len, &op->cache_slot, err));
    op->desc = f->cache[op->cache_slot].desc;
    return 0;
}

/* A free bounce buffer for peer p, or -1 when it should wait for one. */
static int bounce_get(struct fab_tp *f, struct fab_peer *p, struct ct_err *err)
{
    for (int i = 0; i < f->nbounces; i++)
        if (!f->bounces[i].busy) {
            f->bounces[i].busy = true;
            p->nbounce++;
            return i;
        }
    if (f->nbounces >= BOUNCE_SOFT && p->nbounce > 0)
        return -1;
    struct fab_bounce b = {0};
    if (posix_memalign((void **)&b.p, 4096, f->piece)) {
        ct_err_set(err, CT_ENOMEM, "fabric: cannot allocate a %zu-byte bounce buffer", f->piece);
        return -2;
    }
    if ((f->mr_try || f->mr_local) && mr_reg(f, b.p, f->piece, &b.mr, &b.desc) && f->mr_local) {
        free(b.p);
        ct_err_set(err, CT_EIO, "fabric: cannot register a bounce buffer");
        return -2;
    }
    b.busy = true;
    f->bounces = ct_xrealloc(f->bounces, sizeof *f->bounces * (size_t)(f->nbounces + 1));
    f->bounces[f->nbounces] = b;
    p->nbounce++;
    return f->nbounces++;
}

static void bounce_put(struct fab_tp *f, struct fab_peer *p, int i)
{
    if (i >= 0) {
        f->bounces[i].busy = false;
        p->nbounce--;
    }
}

/* ---------------------------------------------------------------- errors */

static void release(struct fab_tp *f, struct fab_piece *pc);

/*
 * Cancel every posted piece and read the completion queue until the provider has let go of
 * all of them or budget_ns passed, then close the endpoint: nothing can land in the
 * caller's buffers afterwards, and no provider is asked to close an endpoint with transfers
 * half done (tcp;ofi_rxm can crash on that).
 */
static void quiesce(struct fab_tp *f, int64_t budget_ns)
{
    if (f->ep && f->tx_posted + f->rx_posted > 0) {
        for (struct fab_piece_chunk *c = f->piece_chunks; c; c = c->next)
            for (size_t i = 0; i < sizeof c->pieces / sizeof c->pieces[0]; i++)
                if (c->pieces[i].live)
                    fi_cancel(&f->ep->fid, &c->pieces[i]);
        int64_t end = ct_now_ns() + budget_ns;
        while (f->tx_posted + f->rx_posted > 0 && ct_now_ns() < end) {
            struct fi_cq_tagged_entry ent[CQ_BATCH];
            ssize_t n = fi_cq_read(f->cq, ent, CQ_BATCH);
            for (ssize_t i = 0; i < n; i++)
                release(f, ent[i].op_context);
            if (n == -FI_EAVAIL) {
                struct fi_cq_err_entry e;
                memset(&e, 0, sizeof e);
                if (fi_cq_readerr(f->cq, &e, 0) > 0 && e.op_context)
                    release(f, e.op_context);
            } else if (n <= 0) {
                sched_yield();
            }
        }
    }
    ct_fabric_close_ep(f);
}

/* Make an error sticky: pending requests fail with it, the endpoint is quiesced and closed. */
static int tp_fail(struct fab_tp *f, int rc, const struct ct_err *err)
{
    f->failed = rc;
    f->fail = *err;
    f->fail.code = (enum ct_status)rc;
    quiesce(f, QUIESCE_NS);
    for (int r = 0; r < f->base.size; r++) {
        struct fab_queue *qs[2] = {&f->peers[r].sq, &f->peers[r].rq};
        for (int d = 0; d < 2; d++)
            for (uint64_t s = qs[d]->head; s < qs[d]->tail; s++) {
                struct fab_op *op = queue_at(qs[d], s);
                op->req->status = rc;
                op->req->done = 1;
            }
    }
    return rc;
}

static int tp_sticky(const struct fab_tp *f, struct ct_err *err)
{
    if (err)
        *err = f->fail;
    return f->failed;
}

/* ---------------------------------------------------------------- posting */

/* Post piece op->posted of a send. Returns 1 posted, 0 not now, < 0 error. */
static int post_send(struct fab_tp *f, struct fab_peer *p, struct fab_op *op, struct ct_err *err)
{
    uint64_t i = op->posted;
    size_t len = piece_len(f, op, i);
    const char *buf = op->src + (size_t)i * f->piece;
    uint64_t tag = tag_of(f->base.rank, op->seq0 + i);
    if (f->tx_posted >= f->tx_max || p->tx_posted >= f->tx_share)
        return 0;
    struct fab_piece *pc = piece_get(f);
    pc->op = op;
    pc->idx = i;
    ssize_t rc = f->tagged ? fi_tsend(f->ep, buf, len, op->desc, p->addr, tag, pc)
                           : fi_send(f->ep, buf, len, op->desc, p->addr, pc);
    if (rc == 0) {
        f->tx_posted++;
        p->tx_posted++;
        return 1;
    }
    piece_put(f, pc);
    if (rc == -FI_EAGAIN || (rc == -FI_ENOMEM && f->tx_posted)) { /* retried by progress() */
        f->retry = true;
        return 0;
    }
    return ct_err_set(err, CT_EPEER, "peer rank %d (%s): posting a send of %zu bytes: %s", p->rank,
                      ct_fabric_host(f, p->rank), op->len, fi_strerror((int)-rc));
}

/* Post piece op->posted of a receive. Returns 1 posted, 0 not now, < 0 error. */
static int post_recv(struct fab_tp *f, struct fab_peer *p, struct fab_op *op, struct ct_err *err)
{
    if (f->rx_posted >= f->rx_max || p->rx_posted >= f->rx_share)
        return 0;
    uint64_t i = op->posted;
    size_t len = piece_len(f, op, i);
    char *buf = op->dst + (size_t)i * f->piece;
    void *desc = op->desc;
    int b = -1;
    if (op->bounce) {
        b = bounce_get(f, p, err);
        if (b == -1)
            return 0;
        if (b < 0)
            return err ? err->code : CT_ENOMEM;
        buf = f->bounces[b].p;
        desc = f->bounces[b].desc;
    }
    struct fab_piece *pc = piece_get(f);
    pc->op = op;
    pc->idx = i;
    pc->bounce = b;
    fi_addr_t src = f->directed ? p->addr : FI_ADDR_UNSPEC;
    uint64_t tag = tag_of(p->rank, op->seq0 + i);
    ssize_t rc = f->tagged ? fi_trecv(f->ep, buf, len, desc, src, tag, 0, pc)
                           : fi_recv(f->ep, buf, len, desc, src, pc);
    if (rc == 0) {
        f->rx_posted++;
        p->rx_posted++;
        return 1;
    }
    bounce_put(f, p, b);
    piece_put(f, pc);
    if (rc == -FI_EAGAIN || (rc == -FI_ENOMEM && f->rx_posted)) { /* retried by progress() */
        f->retry = true;
        return 0;
    }
    return ct_err_set(err, CT_EPEER, "peer rank %d (%s): posting a receive of %zu bytes: %s",
                      p->rank, ct_fabric_host(f, p->rank), op->len, fi_strerror((int)-rc));
}

/* Post the queued pieces of one direction in sequence order, as far as possible. */
static int pump(struct fab_tp *f, struct fab_peer *p, struct fab_queue *q, bool send,
                struct ct_err *err)
{
    while (q->post < q->tail) {
        struct fab_op *op = queue_at(q, q->post);
        while (op->posted < op->npieces) {
            int rc = send ? post_send(f, p, op, err) : post_recv(f, p, op, err);
            if (rc <= 0)
                return rc;
            op->posted++;
        }
        q->post++;
    }
    return 0;
}

/* ---------------------------------------------------------------- completions */

static int mismatch(struct fab_tp *f, const struct fab_op *op, const struct fab_piece *pc,
                    size_t got, struct ct_err *err)
{
    int r = op->peer->rank;
    return ct_err_set(err, CT_EPEER,
                      "peer rank %d (%s): length mismatch: receive posted for %zu bytes, the "
                      "peer's message has %zu bytes at offset %zu where %zu were expected",
                      r, ct_fabric_host(f, r), op->len, got, (size_t)pc->idx * f->piece,
                      piece_len(f, op, pc->idx));
}

/* The provider let go of a piece: count it out (after a failure: nothing else to do). */
static void release(struct fab_tp *f, struct fab_piece *pc)
{
    struct fab_peer *p = pc->op->peer;
    if (pc->op->is_send) {
        f->tx_posted--;
        p->tx_posted--;
    } else {
        f->rx_posted--;
        p->rx_posted--;
    }
    bounce_put(f, p, pc->bounce);
    piece_put(f, pc);
}

static int complete(struct fab_tp *f, const struct fi_cq_tagged_entry *e, struct ct_err *err)
{
    struct fab_piece *pc = e->op_context;
    struct fab_op *op = pc->op;
    int rc = 0;
    if (!op->is_send) {
        size_t want = piece_len(f, op, pc->idx);
        size_t off = (size_t)pc->idx * f->piece;
        if (e->len != want) {
            rc = mismatch(f, op, pc, e->len, err);
        } else if (op->fn && want) {
            const char *in = pc->bounce >= 0 ? f->bounces[pc->bounce].p : op->dst + off;
            op->fn(op->dst + off, op->src + off, in, want / op->esize);
        }
    }
    if (rc == 0)
        op->left--;
    release(f, pc);
    return rc;
}

static int cq_error(struct fab_tp *f, struct ct_err *err)
{
    struct fi_cq_err_entry e;
    memset(&e, 0, sizeof e);
    ssize_t n = fi_cq_readerr(f->cq, &e, 0);
    if (n == -FI_EAGAIN || n == 0)
        return 0;
    if (n < 0)
        return ct_err_set(err, CT_EIO, "fabric: reading a completion error: %s",
                          fi_strerror((int)-n));
    struct fab_piece *pc = e.op_context;
    char buf[160];
    const char *detail = fi_cq_strerror(f->cq, e.prov_errno, e.err_data, buf, sizeof buf);
    if (!pc || !pc->op)
        return ct_err_set(err, CT_EIO, "fabric: completion error: %s (%s)", fi_strerror(e.err),
                          detail ? detail : "");
    struct fab_op *op = pc->op;
    int r = op->peer->rank;
    if (e.err == FI_ETRUNC)
        ct_err_set(err, CT_EPEER,
                   "peer rank %d (%s): length mismatch: the peer's message is longer than the "
                   "%zu bytes posted",
                   r, ct_fabric_host(f, r), op->len);
    else
        ct_err_set(err, CT_EPEER, "peer rank %d (%s): %s of %zu bytes failed: %s (%s)", r,
                   ct_fabric_host(f, r), op->is_send ? "send" : "receive", op->len,
                   fi_strerror(e.err), detail ? detail : "");
    release(f, pc);
    return CT_EPEER;
}

/* Read the completion queue dry. Returns entries handled, or < 0. */
static int drain(struct fab_tp *f, struct ct_err *err)
{
    struct fi_cq_tagged_entry ent[CQ_BATCH];
    int total = 0;
    for (;;) {
        ssize_t n = fi_cq_read(f->cq, ent, CQ_BATCH);
        if (n == -FI_EAGAIN)
            return total;
        if (n == -FI_EAVAIL) {
            CT_TRY(cq_error(f, err));
            continue;
        }
        if (n < 0)
            return ct_err_set(err, CT_EIO, "fabric: reading the completion queue: %s",
                              fi_strerror((int)-n));
        for (ssize_t i = 0; i < n; i++) {
            int rc = complete(f, &ent[i], err);
            if (rc < 0) {
                for (ssize_t k = i + 1; k < n; k++)
                    release(f, ent[k].op_context);
                return rc;
            }
        }
        total += (int)n;
        if (n < CQ_BATCH)
            return total;
    }
}

/* Complete finished ops in posting order. Returns how many completed. */
static int retire(struct fab_tp *f, struct fab_queue *q)
{
    int n = 0;
    while (q->head < q->post) {
        struct fab_op *op = queue_at(q, q->head);
        if (op->left)
            break;
        cache_release(f, op->cache_slot);
        op->req->status = 0;
        op->req->done = 1;
        op->next = f->free_ops;
        f->free_ops = op;
        q->head++;
        n++;
    }
    return n;
}

/* ---------------------------------------------------------------- liveness */

static void live_poll(struct fab_tp *f, int64_t now)
{
    struct epoll_event ev[16];
    int n = epoll_wait(f->live_ep, ev, 16, 0);
    for (int i = 0; i < n; i++) {
        struct fab_peer *p = &f->peers[ev[i].data.u32];
        char tmp[64];
        ssize_t got = recv(p->live_fd, tmp, sizeof tmp, MSG_DONTWAIT);
        if (got > 0 || (got < 0 && (errno == EAGAIN || errno == EINTR)))
            continue; /* nothing is ever sent after the handshake: ignore it */
        epoll_ctl(f->live_ep, EPOLL_CTL_DEL, p->live_fd, NULL);
        p->gone = true;
        p->gone_at = now;
    }
}

static int check_gone(struct fab_tp *f, int64_t now, struct ct_err *err)
{
    for (int i = 0; i < f->nactive; i++) {
        struct fab_peer *p = &f->peers[f->active[i]];
        if (!p->gone || now - p->gone_at < LIVE_GRACE_NS)
            continue;
        uint64_t ns = p->sq.tail - p->sq.head, nr = p->rq.tail - p->rq.head;
        if (ns + nr)
            return ct_err_set(err, CT_EPEER,
                              "peer rank %d (%s): connection closed (the process exited or "
                              "closed its endpoint) with %llu sends and %llu receives pending",
                              p->rank, ct_fabric_host(f, p->rank), (unsigned long long)ns,
                              (unsigned long long)nr);
    }
    return 0;
}

/* ---------------------------------------------------------------- vtable: data path */

static int get_peer(struct fab_tp *f, int peer, struct fab_peer **out, struct ct_err *err)
{
    if (f->failed)
        return tp_sticky(f, err);
    if (peer < 0 || peer >= f->base.size || peer == f->base.rank)
        return ct_err_set(err, CT_EINVAL, "fabric: peer rank %d is not valid (rank %d of %d)", peer,
                          f->base.rank, f->base.size);
    if (!f->peers[peer].linked)
        return ct_err_set(err, CT_EINVAL, "fabric: peer rank %d is not connected", peer);
    *out = &f->peers[peer];
    return 0;
}

/* Queue op and post what can be posted now. */
static int post(struct fab_tp *f, struct fab_peer *p, struct fab_op *op, struct ct_req *req,
                struct ct_err *err)
{
    req->done = 0;
    req->status = 0;
    op->req = req;
    op->peer = p;
    op->npieces = op->len / f->piece + 1;
    op->left = op->npieces;
    uint64_t *seq = op->is_send ? &p->sseq : &p->rseq;
    op->seq0 = *seq;
    *seq += op->npieces;
    struct fab_queue *q = op->is_send ? &p->sq : &p->rq;
    queue_push(q, op);
    if (!p->active) {
        p->active = true;
        f->active[f->nactive++] = p->rank;
    }
    struct ct_err local = {0};
    struct ct_err *e = err ? err : &local;
    int rc = pump(f, p, q, op->is_send, e);
    return rc < 0 ? tp_fail(f, rc, e) : 0;
}

static int fab_isend(struct ct_tp *tp, int peer, const void *buf, size_t len, struct ct_req *req,
                     struct ct_err *err)
{
    struct fab_tp *f = (struct fab_tp *)tp;
    struct fab_peer *p;
    CT_TRY(get_peer(f, peer, &p, err));
    struct fab_op *op = op_get(f);
    op->is_send = true;
    op->src = buf;
    op->len = len;
    int rc = op_desc(f, op, buf, err);
    if (rc < 0) {
        op->next = f->free_ops;
        f->free_ops = op;
        return rc;
    }
    return post(f, p, op, req, err);
}

static bool overlap(const char *a, const char *b, size_t len)
{
    return a < b + len && b < a + len;
}

static int fab_irecv(struct ct_tp *tp, int peer, void *dst, const void *src, size_t len,
                     const struct ct_red *red, struct ct_req *req, struct ct_err *err)
{
    struct fab_tp *f = (struct fab_tp *)tp;
    struct fab_peer *p;
    CT_TRY(get_peer(f, peer, &p, err));
    if (red && (!red->fn || red->esize < 1 || red->esize > MAX_ESIZE || f->piece % red->esize ||
                len % red->esize))
        return ct_err_set(err, CT_EINVAL,
                          "fabric: cannot reduce %zu bytes in elements of %zu bytes", len,
                          red ? red->esize : 0);
    struct fab_op *op = op_get(f);
    op->dst = dst;
    op->len = len;
    if (red && len) {
        op->src = src;
        op->fn = red->fn;
        op->esize = red->esize;
        op->bounce = overlap(dst, src, len);
    }
    if (!op->bounce) {
        int rc = op_desc(f, op, dst, err);
        if (rc < 0) {
            op->next = f->free_ops;
            f->free_ops = op;
            return rc;
        }
    }
    return post(f, p, op, req, err);
}

static int fab_progress(struct ct_tp *tp, struct ct_err *err)
{
    struct fab_tp *f = (struct fab_tp *)tp;
    struct ct_err local = {0};
    struct ct_err *e = err ? err : &local;
    if (f->failed)
        return tp_sticky(f, err);
    if (!f->nactive)
        return 0;
    int rc = drain(f, e);
    if (rc < 0)
        return tp_fail(f, rc, e);
    if (rc == 0 && ++f->idle % IDLE_YIELD == 0)
        sched_yield(); /* see "Waiting" above */
    else if (rc > 0)
        f->idle = 0;
    int completed = 0;
    f->retry = false;
    for (int i = 0; i < f->nactive;) {
        struct fab_peer *p = &f->peers[f->active[i]];
        if ((rc = pump(f, p, &p->rq, false, e)) < 0 || (rc = pump(f, p, &p->sq, true, e)) < 0)
            return tp_fail(f, rc, e);
        completed += retire(f, &p->rq) + retire(f, &p->sq);
        if (p->rq.head == p->rq.tail && p->sq.head == p->sq.tail) {
            p->active = false;
            f->active[i] = f->active[--f->nactive];
            continue;
        }
        i++;
    }
    int64_t now = ct_now_ns();
    if (f->nactive && now >= f->live_next) {
        f->live_next = now + LIVE_CHECK_NS;
        live_poll(f, now);
        if ((rc = check_gone(f, now, e)) < 0)
            return tp_fail(f, rc, e);
    }
    return completed > 0;
}

/* Milliseconds until the earliest grace period of a closed peer with pending work ends. */
static int64_t grace_left_ms(const struct fab_tp *f, int64_t now)
{
    int64_t best = -1;
    for (int i = 0; i < f->nactive; i++) {
        const struct fab_peer *p = &f->peers[f->active[i]];
        if (!p->gone)
            continue;
        int64_t left = p->gone_at + LIVE_GRACE_NS - now;
        left = left <= 0 ? 0 : (left + 999999) / 1000000;
        if (best < 0 || left < best)
            best = left;
    }
    return best;
}

static int fab_wait(struct ct_tp *tp, int64_t timeout_ns, struct ct_err *err)
{
    struct fab_tp *f = (struct fab_tp *)tp;
    if (f->failed)
        return tp_sticky(f, err);
    if (f->cq_fd < 0) {
        sched_yield();
        return 0;
    }
    struct fid *fids[1] = {&f->cq->fid};
    if (fi_trywait(f->fabric, fids, 1) != FI_SUCCESS)
        return 0;
    int64_t now = ct_now_ns();
    int64_t ms = timeout_ns <= 0 ? 0 : (timeout_ns + 999999) / 1000000;
    int64_t g = grace_left_ms(f, now);
    if (g >= 0 && g < ms)
        ms = g;
    if (f->retry && ms > 1) /* the provider refused a post: it may need progress, not an fd */
        ms = 1;
    struct epoll_event ev[2];
    int n = epoll_wait(f->wait_ep, ev, 2, ms > INT_MAX ? INT_MAX : (int)ms);
    for (int i = 0; i < n; i++)
        if (ev[i].data.u32 == 1)
            f->live_next = 0; /* a liveness socket spoke: look at it in progress() */
    if (n < 0 && errno != EINTR)
        return ct_err_sys(err, CT_EIO, "fabric: epoll_wait");
    return 0;
}

static int fab_pending_peers(struct ct_tp *tp, int *peers, int max)
{
    struct fab_tp *f = (struct fab_tp *)tp;
    int n = 0;
    for (int i = 0; i < f->nactive && n < max; i++) {
        const struct fab_peer *p = &f->peers[f->active[i]];
        if (p->rq.head < p->rq.tail || p->sq.head < p->sq.tail)
            peers[n++] = p->rank;
    }
    return n;
}

/* ---------------------------------------------------------------- vtable: memory */

static void *fab_alloc(struct ct_tp *tp, size_t bytes, struct ct_err *err)
{
    struct fab_tp *f = (struct fab_tp *)tp;
    size_t len = bytes ? bytes : 1;
    void *p = NULL;
    if (posix_memalign(&p, 4096, len)) {
        ct_err_set(err, CT_ENOMEM, "cannot allocate %zu bytes", bytes);
        return NULL;
    }
    struct fab_region r = {.lo = p, .hi = (char *)p + len, .valid = true};
    if (f->mr_try && f->domain) {
        int rc = mr_reg(f, p, len, &r.mr, &r.desc);
        if (rc && f->mr_local) {
            free(p);
            ct_err_set(err, CT_EIO, "fabric: registering %zu bytes: %s", bytes, fi_strerror(-rc));
            return NULL;
        }
        if (rc)
            f->mr_try = false; /* not required and not possible: stop trying */
    }
    if (f->nregions == f->capregions) {
        f->capregions = f->capregions ? f->capregions * 2 : 16;
        f->regions = ct_xrealloc(f->regions, sizeof *f->regions * (size_t)f->capregions);
    }
    int at = f->nregions;
    while (at > 0 && f->regions[at - 1].lo > (char *)p)
        at--;
    memmove(&f->regions[at + 1], &f->regions[at], sizeof *f->regions * (size_t)(f->nregions - at));
    f->regions[at] = r;
    f->nregions++;
    return p;
}

/* Whether a piece the provider holds reads or writes [lo, hi). */
static bool held(const struct fab_tp *f, const char *lo, const char *hi)
{
    for (const struct fab_piece_chunk *c = f->piece_chunks; c; c = c->next)
        for (size_t i = 0; i < sizeof c->pieces / sizeof c->pieces[0]; i++) {
            const struct fab_op *op = c->pieces[i].live ? c->pieces[i].op : NULL;
            for (int k = 0; op && k < 2; k++) {
                const char *b = k ? op->dst : op->src;
                if (b && b < hi && lo < b + op->len)
                    return true;
            }
        }
    return false;
}

static void fab_free(struct ct_tp *tp, void *p, size_t bytes)
{
    struct fab_tp *f = (struct fab_tp *)tp;
    if (!p)
        return;
    int i = region_find(f, p, 0);
    if (i >= 0 && f->regions[i].lo == (char *)p && held(f, f->regions[i].lo, f->regions[i].hi)) {
        f->regions[i].orphan = true; /* a request given up on: the provider may still use it */
        return;
    }
    if (i >= 0 && f->regions[i].lo == (char *)p) {
        if (f->regions[i].mr)
            fi_close(&f->regions[i].mr->fid);
        memmove(&f->regions[i], &f->regions[i + 1],
                sizeof *f->regions * (size_t)(f->nregions - i - 1));
        f->nregions--;
    }
    free(p);
}

/* ---------------------------------------------------------------- open and close */

static void fab_close(struct ct_tp *tp)
{
    struct fab_tp *f = (struct fab_tp *)tp;
    if (!f)
        return;
    quiesce(f, QUIESCE_NS);
    for (int i = 0; i < f->nregions; i++) { /* buffers the caller did not free: keep them */
        if (f->regions[i].mr)
            fi_close(&f->regions[i].mr->fid);
        if (f->regions[i].orphan) /* the endpoint is closed: nothing uses it now */
            free(f->regions[i].lo);
    }
    for (int i = 0; i < f->ncache; i++)
        if (f->cache[i].valid)
            fi_close(&f->cache[i].mr->fid);
    for (int i = 0; i < f->nbounces; i++) {
        if (f->bounces[i].mr)
            fi_close(&f->bounces[i].mr->fid);
        free(f->bounces[i].p);
    }
    ct_fabric_teardown(f);
    for (int r = 0; f->peers && r < f->base.size; r++) {
        free(f->peers[r].sq.ring);
        free(f->peers[r].rq.ring);
    }
    while (f->op_chunks) {
        struct fab_op_chunk *c = f->op_chunks;
        f->op_chunks = c->next;
        free(c);
    }
    while (f->piece_chunks) {
        struct fab_piece_chunk *c = f->piece_chunks;
        f->piece_chunks = c->next;
        free(c);
    }
    free(f->peers);
    free(f->active);
    free(f->regions);
    free(f->cache);
    free(f->bounces);
    free(f);
}

static int fab_open(struct ct_tp **out, const struct ct_tp_cfg *cfg, struct ct_boot *boot,
                    struct ct_err *err)
{
    CT_TRY(ct_fi_load(err));
    struct fab_tp *f = ct_xcalloc(1, sizeof *f);
    f->base.ops = &ct_tp_fabric_ops;
    f->base.rank = boot->rank;
    f->base.size = boot->size;
    f->base.boot = boot;
    f->cq_fd = f->wait_ep = f->live_ep = -1;
    f->peers = ct_xcalloc((size_t)boot->size, sizeof *f->peers);
    f->active = ct_xcalloc((size_t)boot->size, sizeof *f->active);
    for (int r = 0; r < boot->size; r++) {
        f->peers[r].rank = r;
        f->peers[r].live_fd = -1;
        f->peers[r].addr = FI_ADDR_NOTAVAIL;
    }
    int rc = ct_fabric_setup(f, cfg, err);
    if (rc < 0) {
        fab_close(&f->base);
        return rc;
    }
    *out = &f->base;
    return 0;
}

const struct ct_tp_ops ct_tp_fabric_ops = {
    .name = "fabric",
    .summary =
        "libfabric reliable datagrams, tagged (verbs;ofi_rxm, efa, tcp;ofi_rxm, tcp, shm, sockets)",
    .caps = CT_TP_INTRA_NODE | CT_TP_INTER_NODE | CT_TP_RDMA,
    .built = true,
    .open = fab_open,
    .close = fab_close,
    .alloc = fab_alloc,
    .free = fab_free,
    .isend = fab_isend,
    .irecv = fab_irecv,
    .progress = fab_progress,
    .wait = fab_wait,
    .pending_peers = fab_pending_peers,
};

#else /* !HAVE_LIBFABRIC */

extern const struct ct_tp_ops ct_tp_fabric_ops;

static int fab_open(struct ct_tp **out, const struct ct_tp_cfg *cfg, struct ct_boot *boot,
                    struct ct_err *err)
{
    return ct_err_set(err, CT_EUNSUPP, "transport 'fabric' was not built (no libfabric)");
}

const struct ct_tp_ops ct_tp_fabric_ops = {
    .name = "fabric",
    .summary = "libfabric reliable datagrams (needs the libfabric headers at build time)",
    .caps = CT_TP_INTRA_NODE | CT_TP_INTER_NODE | CT_TP_RDMA,
    .built = false,
    .open = fab_open,
};

#endif
