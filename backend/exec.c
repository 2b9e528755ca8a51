/* SPDX-License-Identifier: MIT */
/* The schedule executor: slicing, pipelining, completion, local ops, timeouts. */
#include "exec.h"

#include <stdlib.h>
#include <string.h>

#include "../lib/clock.h"
#include "../lib/memnt.h"
#include "resident.h"

#define SPIN_NS 200000LL       /* spin mode: poll this long without progress, then block */
#define SPIN_NS_BLOCK 2000LL   /* block mode: a short spin for messages already in flight */
#define DIRECT_MAX (1ull << 20) /* see direct_hint() */
#define WAIT_SLICE_NS 20000000LL
#define IDLE_POLLS 64u         /* idle progress passes between clock reads (power of two) */

/* One (peer, direction) stream of slices within a step. */
struct ct_exec_group {
    int peer;
    int is_send;
    uint32_t first, nops; /* indices into x->order: ops of this group in schedule order */
    uint32_t cur;         /* current op (index into the group's ops) for posting */
    uint32_t cur_slice;   /* next slice of the current op to post */
    uint32_t head, inflight; /* ring of posted requests */
    uint32_t remaining;   /* slices not yet retired */
    struct ct_req *ring;  /* depth requests */
};

/* The resident path's control messages (res_comm, below). */
enum { CTL_DESC = 1, CTL_ACK = 2 };

struct ct_exec_ctl {
    uint32_t kind, buf;
    int32_t to, pad; /* the rank it is sent to (for the sender's messages) */
    uint64_t off, bytes;
};

struct ct_exec_rpeer {
    struct ct_exec_ctl in; /* the posted control receive lands here */
    struct ct_req inreq;
    bool posted;
    uint32_t unacked;          /* this rank's descriptors to the peer not yet acknowledged */
    struct ct_exec_ctl *early; /* descriptors received, not yet taken by a receive (FIFO) */
    uint32_t head, n, cap;
    uint32_t due; /* this step's receives from the peer not yet done */
};

void ct_exec_init(struct ct_exec *x)
{
    memset(x, 0, sizeof *x);
    const char *e = getenv("COLLTUNE_DIRECT_MAX"); /* bytes; for measuring the threshold */
    x->direct_max = e && *e ? strtoull(e, NULL, 0) : DIRECT_MAX;
}

/*
 * Set before each post and cleared after it, so messages posted outside the executor
 * (ct_tp_send and friends) carry no flag. A message of an op up to direct_max may be written
 * straight into its receiver's buffer (CT_POST_DIRECT): both ends see the same op size, so they
 * agree. Measured on 2 ranks, shm, AllReduce (Intel VM, 2026-11-26): ring at 256 KiB-2 MiB (ops of
 * 128 KiB-1 MiB) 2.5-4x faster with it; ops of 2 and 4 MiB 5-15% slower. There the sender waits for
 * the receiver to advertise each slice, and a rank busy reducing its own slices answers late, while
 * the data no longer fits the caches and gains nothing from not crossing cores.
 */
static inline void direct_hint(const struct ct_exec *x, struct ct_tp *tp, uint64_t op_bytes,
                               const struct ct_exec_args *a)
{
    /* no reduction in the job: every receive copies, on every rank (CT_POST_COPY) */
    tp->post_flags = op_bytes <= x->direct_max ? CT_POST_DIRECT | (a->red ? 0 : CT_POST_COPY) : 0;
}

void ct_exec_release(struct ct_exec *x)
{
    free(x->groups);
    free(x->reqs);
    free(x->order);
    if (!x->res_broken) { /* else a transport may still write there: left */
        for (int q = 0; q < x->nrpeer; q++)
            free(x->rpeer[q].early);
        free(x->rpeer);
        free(x->out);
        free(x->outreq);
    }
    free(x->taken);
    ct_exec_init(x);
}

static inline void *at(const struct ct_exec_args *a, struct ct_loc l)
{
    return (char *)a->buf[l.buf] + l.off;
}

static inline uint32_t nslices(uint64_t bytes, uint64_t chunk)
{
    return (uint32_t)((bytes + chunk - 1) / chunk);
}

static void grow(struct ct_exec *x, uint32_t nops, int depth)
{
    if (nops > x->opcap) {
        x->opcap = nops * 2;
            free(x->order);
        x->order = ct_xmalloc(x->opcap * sizeof *x->order);
        free(x->groups);
        x->groups = ct_xcalloc(x->opcap, sizeof *x->groups);
        x->gcap = x->opcap;
        x->reqcap = 0;
    }
    size_t need = x->gcap * (size_t)depth;
    if (need > x->reqcap) {
        free(x->reqs);
        x->reqs = ct_xcalloc(need, sizeof *x->reqs);
        x->reqcap = need;
    }
}

static int post(struct ct_exec *x, struct ct_comm *c, const struct ct_op *ops,
                struct ct_exec_group *g, const struct ct_exec_args *a, struct ct_err *err)
{
    while (g->cur < g->nops && g->inflight < (uint32_t)a->depth) {
        uint32_t oi = x->order[g->first + g->cur];
        const struct ct_op *op = &ops[oi];
        uint64_t off = (uint64_t)g->cur_slice * a->chunk;
        uint64_t len = op->bytes - off < a->chunk ? op->bytes - off : a->chunk;
        uint32_t slot = (g->head + g->inflight) % (uint32_t)a->depth;
        struct ct_req *req = &g->ring[slot];
        struct ct_tp *tp = c->tp_of[g->peer];
        int rc;
        req->done = 0;
        req->status = 0;
        direct_hint(x, tp, op->bytes, a);
        if (g->is_send)
            rc = tp->ops->isend(tp, g->peer, (char *)at(a, op->src) + off, len, req, err);
        else if (op->kind == CT_OP_RECV_REDUCE)
            rc = tp->ops->irecv(tp, g->peer, (char *)at(a, op->dst) + off,
                                (char *)at(a, op->src) + off, len, op->rev ? &x->red_rev : a->red,
                                req, err);
        else
            rc = tp->ops->irecv(tp, g->peer, (char *)at(a, op->dst) + off, NULL, len, NULL, req,
                                err);
        tp->post_flags = 0;
        if (rc < 0)
            return rc;
        g->inflight++;
        if (++g->cur_slice == nslices(op->bytes, a->chunk)) {
            g->cur++;
            g->cur_slice = 0;
        }
    }
    return 0;
}

/* Retire completed slices at the head of each ring (FIFO); post more. Returns number
 * retired or < 0. */
static int retire(struct ct_exec *x, struct ct_comm *c, const struct ct_op *ops,
                  struct ct_exec_group *g, const struct ct_exec_args *a, struct ct_err *err)
{
    int n = 0;
    while (g->inflight && g->ring[g->head].done) {
        if (g->ring[g->head].status < 0)
            return ct_err_set(err, g->ring[g->head].status, "request to peer %d failed",
                              g->peer);
        g->head = (g->head + 1) % (uint32_t)a->depth;
        g->inflight--;
        g->remaining--;
        n++;
    }
    if (n)
        CT_TRY(post(x, c, ops, g, a, err));
    return n;
}

/* Group the step's communication ops by (peer, direction), keeping schedule order. */
static uint32_t make_groups(struct ct_exec *x, const struct ct_sched *s, uint32_t b, uint32_t e,
                            const struct ct_exec_args *a)
{
    uint32_t ng = 0, no = 0;
    for (uint32_t i = b; i < e; i++) {
        const struct ct_op *op = &s->ops[i];
        if (op->kind > CT_OP_RECV_REDUCE)
            continue;
        int is_send = op->kind == CT_OP_SEND;
        uint32_t gi;
        for (gi = 0; gi < ng; gi++)
            if (x->groups[gi].peer == op->peer && x->groups[gi].is_send == is_send)
                break;
        if (gi == ng) {
            struct ct_exec_group *g = &x->groups[ng++];
            memset(g, 0, sizeof *g);
            g->peer = op->peer;
            g->is_send = is_send;
            g->ring = x->reqs + (size_t)gi * (size_t)a->depth;
        }
        x->groups[gi].nops++;
        x->groups[gi].remaining += nslices(op->bytes, a->chunk);
    }
    /* lay out each group's op list contiguously in x->order */
    for (uint32_t gi = 0; gi < ng; gi++) {
        x->groups[gi].first = no;
        no += x->groups[gi].nops;
        x->groups[gi].nops = 0;
    }
    for (uint32_t i = b; i < e; i++) {
        const struct ct_op *op = &s->ops[i];
        if (op->kind > CT_OP_RECV_REDUCE)
            continue;
        int is_send = op->kind == CT_OP_SEND;
        for (uint32_t gi = 0; gi < ng; gi++) {
            struct ct_exec_group *g = &x->groups[gi];
            if (g->peer == op->peer && g->is_send == is_send) {
                x->order[g->first + g->nops++] = i;
                break;
            }
        }
    }
    return ng;
}

static int stall_error(struct ct_comm *c, uint32_t step, uint32_t nsteps,
                       const struct ct_exec_group *gs, uint32_t ng, struct ct_err *err)
{
    for (uint32_t gi = 0; gi < ng; gi++)
        if (gs[gi].remaining) {
            int p = gs[gi].peer;
            return ct_err_set(err, CT_ETIMEDOUT,
                              "step %u/%u: no progress for %.1f s %s peer rank %d (%s)", step + 1,
                              nsteps, (double)c->timeout_ns / 1e9,
                              gs[gi].is_send ? "sending to" : "receiving from", p,
                              c->boot->hosts[p]);
        }
    return ct_err_set(err, CT_ETIMEDOUT, "step %u/%u: no progress", step + 1, nsteps);
}

/* The wait policy of a step's progress loop: spin, then block in a transport, and give
 * up after the communicator's timeout without progress. */
struct idle {
    int64_t since; /* 0: progress was made on the last pass */
    unsigned polls;
    int64_t spin_ns;
};

static inline void idle_reset(struct idle *w)
{
    w->since = 0;
    w->polls = 0;
}

/* Called after a pass without progress. Returns 1 when the step stalled past the
 * timeout (the caller names the peer), 0 to poll again, < 0 on a transport failure. */
static int idle_pass(struct idle *w, struct ct_comm *c, int block_peer, struct ct_err *err)
{
    /* read the clock only every IDLE_POLLS idle passes: an arrival is seen sooner */
    if (w->since && (++w->polls & (IDLE_POLLS - 1))) {
        ct_cpu_relax();
        return 0;
    }
    int64_t now = ct_now_ns();
    if (!w->since)
        w->since = now;
    ct_boot_beat(c->boot, now); /* a transfer slower than the timeout is no stalled rank */
    if (now - w->since < w->spin_ns) {
        ct_cpu_relax();
        return 0;
    }
    if (now - w->since > c->timeout_ns)
        return 1;
    /* block in the transport of a pending peer */
    struct ct_tp *tp = c->tp_of[block_peer];
    CT_TRY(tp->ops->wait(tp, c->ntp > 1 ? 1000000 : WAIT_SLICE_NS, err));
    return 0;
}

static int progress_all(struct ct_comm *c, struct ct_err *err)
{
    int moved = 0;
    for (int t = 0; t < c->ntp; t++) {
        int rc = c->tps[t]->ops->progress(c->tps[t], err);
        if (rc < 0)
            return rc;
        moved |= rc > 0;
    }
    return moved;
}

/*
 * A step of at most one receive and one send, each within one slice (small messages:
 * the latency path). The same posts, order and wait policy as the general loop, without
 * its grouping and request rings.
 */
static int run_small(struct ct_exec *x, struct ct_comm *c, const struct ct_sched *s, uint32_t st,
                     const struct ct_op *rop, const struct ct_op *sop,
                     const struct ct_exec_args *a, struct ct_err *err)
{
    struct ct_req *rr = &x->reqs[0], *sr = &x->reqs[1];
    rr->done = sr->done = 1;
    if (rop) {
        struct ct_tp *tp = c->tp_of[rop->peer];
        rr->done = 0;
        rr->status = 0;
        direct_hint(x, tp, rop->bytes, a);
        const struct ct_red *red = rop->kind == CT_OP_RECV_REDUCE
                                       ? (rop->rev ? &x->red_rev : a->red)
                                       : NULL;
        int rc = tp->ops->irecv(tp, rop->peer, at(a, rop->dst), red ? at(a, rop->src) : NULL,
                                rop->bytes, red, rr, err);
        tp->post_flags = 0;
        CT_TRY(rc);
    }
    if (sop) {
        struct ct_tp *tp = c->tp_of[sop->peer];
        sr->done = 0;
        sr->status = 0;
        direct_hint(x, tp, sop->bytes, a);
        int rc = tp->ops->isend(tp, sop->peer, at(a, sop->src), sop->bytes, sr, err);
        tp->post_flags = 0;
        CT_TRY(rc);
    }
    struct idle w = {0, 0, c->wait == CT_WAIT_BLOCK ? SPIN_NS_BLOCK : SPIN_NS};
    while (!(rr->done && sr->done)) {
        int rc = progress_all(c, err);
        if (rc < 0)
            return rc;
        if (rc > 0) {
            idle_reset(&w);
            continue;
        }
        if (rr->done && sr->done)
            break;
        const struct ct_op *pend = !rr->done ? rop : sop;
        rc = idle_pass(&w, c, pend->peer, err);
        if (rc < 0)
            return rc;
        if (rc > 0)
            return ct_err_set(err, CT_ETIMEDOUT,
                              "step %u/%u: no progress for %.1f s %s peer rank %d (%s)", st + 1,
                              s->nsteps, (double)c->timeout_ns / 1e9,
                              pend == sop ? "sending to" : "receiving from", pend->peer,
                              c->boot->hosts[pend->peer]);
    }
    struct ct_req *bad = rr->status < 0 ? rr : sr->status < 0 ? sr : NULL;
    if (bad)
        return ct_err_set(err, bad->status, "step %u/%u: request to peer %d failed", st + 1,
                          s->nsteps, (bad == rr ? rop : sop)->peer);
    return 0;
}

static int run_comm(struct ct_exec *x, struct ct_comm *c, const struct ct_sched *s, uint32_t st,
                    const struct ct_exec_args *a, struct ct_err *err)
{
    /* at most one receive and one send, each one slice: the small-message path */
    const struct ct_op *rop = NULL, *sop = NULL;
    bool small = true;
    for (uint32_t i = s->step_start[st]; i < s->step_start[st + 1] && small; i++) {
        const struct ct_op *op = &s->ops[i];
        if (op->kind > CT_OP_RECV_REDUCE)
            continue;
        const struct ct_op **slot = op->kind == CT_OP_SEND ? &sop : &rop;
        small = !*slot && op->bytes <= a->chunk;
        *slot = op;
    }
    if (small)
        return rop || sop ? run_small(x, c, s, st, rop, sop, a, err) : 0;

    uint32_t ng = make_groups(x, s, s->step_start[st], s->step_start[st + 1], a);
    if (!ng)
        return 0;
    const struct ct_op *ops = s->ops;
    uint32_t left = 0;
    /* post receives first so eager data has a home, then sends */
    for (int pass = 0; pass < 2; pass++)
        for (uint32_t gi = 0; gi < ng; gi++)
            if (x->groups[gi].is_send == pass)
                CT_TRY(post(x, c, ops, &x->groups[gi], a, err));
    for (uint32_t gi = 0; gi < ng; gi++)
        left += x->groups[gi].remaining;
    struct idle w = {0, 0, c->wait == CT_WAIT_BLOCK ? SPIN_NS_BLOCK : SPIN_NS};
    while (left) {
        int moved = progress_all(c, err);
        if (moved < 0)
            return moved;
        for (uint32_t gi = 0; gi < ng; gi++) {
            struct ct_exec_group *g = &x->groups[gi];
            if (!g->inflight)
                continue;
            int n = retire(x, c, ops, g, a, err);
            if (n < 0)
                return ct_err_wrap(err, "step %u/%u: ", st + 1, s->nsteps);
            left -= (uint32_t)n;
            moved |= n > 0;
        }
        if (moved || !left) {
            idle_reset(&w);
            continue;
        }
        uint32_t gi = 0;
        while (!x->groups[gi].remaining)
            gi++;
        int rc = idle_pass(&w, c, x->groups[gi].peer, err);
        if (rc < 0)
            return rc;
        if (rc > 0)
            return stall_error(c, st, s->nsteps, x->groups, ng, err);
    }
    return 0;
}

#define SPLIT_MIN_BYTES (256u << 10) /* below this, one thread reduces faster */

struct split {
    const struct ct_exec_args *a;
    const struct ct_op *op;
};

/* Thread i of n reduces its element-aligned share of op. */
static void reduce_part(void *arg, int i, int n)
{
    const struct split *sp = arg;
    const struct ct_op *op = sp->op;
    size_t es = sp->a->red->esize;
    uint64_t elems = op->bytes / es,
             off = ct_part_off_line(elems, (uint64_t)n, (uint64_t)i, es) * es;
    sp->a->red->fn((char *)at(sp->a, op->dst) + off, (const char *)at(sp->a, op->src) + off,
                   (const char *)at(sp->a, op->src2) + off,
                   ct_part_len_line(elems, (uint64_t)n, (uint64_t)i, es));
}

_Static_assert(CT_FENCE_BUFS == CT_BUF_COUNT, "a fence publishes the executor's buffers");

/*
 * The step's fences (CT_OP_SYNC), before its other ops: post them all (each publishes this
 * rank's buffers), then wait for each peer's matching fence with the steps' wait policy.
 */
/* CT_EUNSUPP unless the transport to peer has one-sided access. */
static int onesided_tp(struct ct_comm *c, int peer, struct ct_err *err)
{
    const struct ct_tp_ops *o = c->tp_of[peer]->ops;
    if (o->fence_post && o->fence_test && o->peer_addr && o->published)
        return 0;
    return ct_err_set(err, CT_EUNSUPP,
                      "one-sided access to peer rank %d (%s) needs shared memory, and transport "
                      "%s has none",
                      peer, c->boot->hosts[peer], o->name);
}

/* The transport of the mailbox shared with peer (every peer's must be the same). */
static int mbox_tp(struct ct_comm *c, int peer, struct ct_tp **out, struct ct_err *err)
{
    struct ct_tp *tp = *out = c->tp_of[peer];
    for (int r = 0; r < c->size; r++)
        if (r != c->rank && c->tp_of[r] != tp)
            return ct_err_set(err, CT_EUNSUPP,
                              "a mailbox needs every peer on one shared-memory transport; peer "
                              "rank %d (%s) is over %s",
                              r, c->boot->hosts[r], c->tp_of[r]->ops->name);
    if (tp->ops->mbox_post && tp->ops->mbox_test)
        return 0;
    return ct_err_set(err, CT_EUNSUPP,
                      "a mailbox needs shared memory, and transport %s has none (peer rank %d, %s)",
                      tp->ops->name, peer, c->boot->hosts[peer]);
}

static int run_fences(struct ct_comm *c, const struct ct_sched *s, uint32_t st,
                      const struct ct_exec_args *a, struct ct_err *err)
{
    if (!s->onesided_ops)
        return 0;
    uint32_t b = s->step_start[st], e = s->step_start[st + 1], n = 0;
    for (uint32_t i = b; i < e; i++) {
        const struct ct_op *op = &s->ops[i];
        if (op->kind != CT_OP_SYNC)
            continue;
        struct ct_tp *tp = c->tp_of[op->peer];
        if (onesided_tp(c, op->peer, err) < 0)
            return ct_err_wrap(err, "step %u/%u: ", st + 1, s->nsteps);
        CT_TRY(tp->ops->fence_post(tp, op->peer, a->buf, CT_BUF_COUNT, err));
        n++;
    }
    /* test every fence on each pass: one met but untested keeps wait() from sleeping */
    struct idle w = {0, 0, c->wait == CT_WAIT_BLOCK ? SPIN_NS_BLOCK : SPIN_NS};
    while (n) {
        int pend = -1, rc;
        for (uint32_t i = b; i < e; i++) {
            const struct ct_op *op = &s->ops[i];
            if (op->kind != CT_OP_SYNC)
                continue;
            struct ct_tp *tp = c->tp_of[op->peer];
            if ((rc = tp->ops->fence_test(tp, op->peer, err)) < 0)
                return ct_err_wrap(err, "step %u/%u: ", st + 1, s->nsteps);
            pend = rc == 0 && pend < 0 ? op->peer : pend;
        }
        if (pend < 0)
            break;
        if ((rc = progress_all(c, err)) > 0) {
            idle_reset(&w);
            continue;
        }
        if (rc == 0 && (rc = idle_pass(&w, c, pend, err)) > 0)
            return ct_err_set(err, CT_ETIMEDOUT,
                              "step %u/%u: no progress for %.1f s waiting for the fence of peer "
                              "rank %d (%s)",
                              st + 1, s->nsteps, (double)c->timeout_ns / 1e9, pend,
                              c->boot->hosts[pend]);
        if (rc < 0)
            return ct_err_wrap(err, "step %u/%u: ", st + 1, s->nsteps);
    }
    return 0;
}

int ct_exec_onesided_ok(struct ct_comm *c, const struct ct_sched *s, const struct ct_exec_args *a,
                        struct ct_err *err)
{
    for (uint32_t i = 0; s->onesided_ops && i < s->nops; i++) {
        const struct ct_op *op = &s->ops[i];
        if (op->kind < CT_OP_SYNC || op->kind == CT_OP_PUBLISH)
            continue;
        if (op->kind >= CT_OP_MGET) {
            struct ct_tp *tp;
            CT_TRY(mbox_tp(c, op->peer, &tp, err));
            continue;
        }
        struct ct_tp *tp = c->tp_of[op->peer];
        CT_TRY(onesided_tp(c, op->peer, err));
        /* the peers' schedules mirror this one: the buffers this rank reaches in a peer are
         * the ones the peers reach in this rank */
        for (int k = 0; !a->res && k < 3; k++) { /* resident: the peers map the kind's */
            const struct ct_loc *l = k == 0 ? &op->dst : k == 1 ? &op->src : &op->src2;
            if (ct_op_loc_remote(op, k) &&
                !tp->ops->published(tp, (char *)a->buf[l->buf] + l->off, op->bytes))
                return ct_err_set(err, CT_EUNSUPP,
                                  "one-sided access needs the buffers in shared memory "
                                  "(COLLTUNE_SHM_UNREGISTERED gives private ones)");
        }
    }
    return 0;
}

/* Where the peer's bytes of a one-sided op are, in this process (the fence before the op,
 * which ct_sched_check requires, found the transport able). */
static void *peer_at(struct ct_comm *c, const struct ct_op *op, struct ct_loc l, struct ct_err *err)
{
    struct ct_tp *tp = c->tp_of[op->peer];
    return tp->ops->peer_addr(tp, op->peer, l.buf, l.off, op->bytes, err);
}

static inline bool loc_same(struct ct_loc p, struct ct_loc q)
{
    return p.buf == q.buf && p.off == q.off;
}

/* Local op i of step st (and the put it fuses with): returns how many ops it ran. */
static int local_op(struct ct_exec *x, struct ct_comm *c, const struct ct_sched *s, uint32_t st,
                    uint32_t i, const struct ct_exec_args *a, struct ct_err *err)
{
    const struct ct_op *op = &s->ops[i];
    if (op->kind == CT_OP_GET_REDUCE) {
        const void *pb = peer_at(c, op, op->src2, err);
        if (!pb)
            return ct_err_wrap(err, "step %u/%u: ", st + 1, s->nsteps);
        const struct ct_op *nx = i + 1 < s->step_start[st + 1] ? op + 1 : NULL;
        if (nx && nx->kind == CT_OP_PUT && loc_same(nx->src, op->dst) && nx->bytes == op->bytes &&
            !op->rev && a->red->fn2) {
            /* a reduce whose result is put next: one pass writes both places (measured,
             * 2 ranks, float sum, 4 alternating runs: 32 KiB 1.63-1.75 us against
             * 1.69-2.00 in two passes, 128 KiB 4.21-4.51 against 4.46-5.05) */
            void *pd = peer_at(c, nx, nx->dst, err);
            if (!pd)
                return ct_err_wrap(err, "step %u/%u: ", st + 1, s->nsteps);
            a->red->fn2(at(a, op->dst), pd, at(a, op->src), pb, op->bytes / a->red->esize);
            return 2;
        } else if (op->rev)
            a->red->fn(at(a, op->dst), pb, at(a, op->src), op->bytes / a->red->esize);
        else
            a->red->fn(at(a, op->dst), at(a, op->src), pb, op->bytes / a->red->esize);
    } else if (op->kind == CT_OP_PUT) {
        void *pd = peer_at(c, op, op->dst, err);
        if (!pd)
            return ct_err_wrap(err, "step %u/%u: ", st + 1, s->nsteps);
        ct_copy(pd, at(a, op->src), op->bytes);
    } else if (op->kind == CT_OP_GET) {
        const void *ps = peer_at(c, op, op->src, err);
        if (!ps)
            return ct_err_wrap(err, "step %u/%u: ", st + 1, s->nsteps);
        ct_copy(at(a, op->dst), ps, op->bytes);
    } else if (op->kind == CT_OP_COPY) {
        void *d = at(a, op->dst);
        const void *src = at(a, op->src);
        const char *dc = d, *sc = src;
        if (dc + op->bytes <= sc || sc + op->bytes <= dc)
            ct_copy(d, src, op->bytes);
        else if (d != src)
            memmove(d, src, op->bytes);
    } else if (op->kind == CT_OP_REDUCE) {
        if (a->threads > 1 && op->bytes >= SPLIT_MIN_BYTES) {
            if (!x->pool || ct_pool_size(x->pool) != a->threads) {
                ct_pool_free(x->pool);
                x->pool = ct_pool_new(a->threads);
            }
            struct split sp = {a, op};
            ct_pool_run(x->pool, reduce_part, &sp);
        } else {
            a->red->fn(at(a, op->dst), at(a, op->src), at(a, op->src2), op->bytes / a->red->esize);
        }
    } else if (op->kind == CT_OP_QUANT) {
        ct_quant_encode(op->fmt, at(a, op->dst), at(a, op->src), op->bytes / 4);
    } else if (op->kind == CT_OP_DEQUANT) {
        ct_quant_decode(op->fmt, at(a, op->dst), at(a, op->src), op->bytes / 4);
    } else if (op->kind == CT_OP_DEQUANT_ADD) {
        ct_quant_decode_add(op->fmt, at(a, op->dst), at(a, op->src2), at(a, op->src),
                            op->bytes / 4);
    }
    return 1;
}

static int run_local(struct ct_exec *x, struct ct_comm *c, const struct ct_sched *s, uint32_t st,
                     const struct ct_exec_args *a, struct ct_err *err)
{
    for (uint32_t i = s->step_start[st]; i < s->step_start[st + 1];) {
        int n = local_op(x, c, s, st, i, a, err);
        if (n < 0)
            return n;
        i += (uint32_t)n;
    }
    return 0;
}

/*
 * A step that publishes (its first op, ct_sched_check): post the publish, then run the
 * step's other ops in order, each read once its peer's publish of this ordinal is there
 * (the steps' wait policy), local ops as run_local does. No fences, no slots: a small
 * collective's latency path (algos/oneshot.c).
 */
static int run_mbox(struct ct_exec *x, struct ct_comm *c, const struct ct_sched *s, uint32_t st,
                    const struct ct_exec_args *a, struct ct_err *err)
{
    uint32_t b = s->step_start[st], e = s->step_start[st + 1];
    const struct ct_op *pub = &s->ops[b];
    /* every peer on this one transport: ct_exec_onesided_ok, once per point, not per run */
    int next = (c->rank + 1) % c->size;
    struct ct_tp *tp = c->tp_of[next];
    if (!tp->ops->mbox_post && mbox_tp(c, next, &tp, err) < 0)
        return ct_err_wrap(err, "step %u/%u: ", st + 1, s->nsteps);
    CT_TRY(tp->ops->mbox_post(tp, at(a, pub->src), pub->bytes, err));
    for (uint32_t i = b + 1; i < e;) {
        const struct ct_op *op = &s->ops[i];
        if (op->kind != CT_OP_MGET && op->kind != CT_OP_MGET_REDUCE) {
            int n = local_op(x, c, s, st, i, a, err);
            if (n < 0)
                return n;
            i += (uint32_t)n;
            continue;
        }
        const char *box = NULL;
        struct idle w = {0, 0, c->wait == CT_WAIT_BLOCK ? SPIN_NS_BLOCK : SPIN_NS};
        int rc;
        uint64_t need = (op->kind == CT_OP_MGET ? op->src.off : op->src2.off) + op->bytes;
        while ((rc = tp->ops->mbox_test(tp, op->peer, need, (const void **)&box, err)) == 0)
            if ((rc = idle_pass(&w, c, op->peer, err)) != 0)
                break;
        if (rc < 0)
            return ct_err_wrap(err, "step %u/%u: ", st + 1, s->nsteps);
        if (rc > 0 && !box)
            return ct_err_set(err, CT_ETIMEDOUT,
                              "step %u/%u: no progress for %.1f s waiting for the publish of "
                              "peer rank %d (%s)",
                              st + 1, s->nsteps, (double)c->timeout_ns / 1e9, op->peer,
                              c->boot->hosts[op->peer]);
        if (op->kind == CT_OP_MGET)
            ct_copy(at(a, op->dst), box + op->src.off, op->bytes);
        else if (op->rev)
            a->red->fn(at(a, op->dst), box + op->src2.off, at(a, op->src),
                       op->bytes / a->red->esize);
        else
            a->red->fn(at(a, op->dst), at(a, op->src), box + op->src2.off,
                       op->bytes / a->red->esize);
        i++;
    }
    return 0;
}

int ct_exec_resident_ok(const struct ct_sched *s, struct ct_err *err)
{
    for (uint32_t i = 0; i < s->nops; i++) {
        uint8_t k = s->ops[i].kind;
        if ((k >= CT_OP_QUANT && k <= CT_OP_DEQUANT_ADD) || k >= CT_OP_PUBLISH)
            return ct_err_set(err, CT_EUNSUPP, "the resident path runs no %s ops",
                              k >= CT_OP_PUBLISH ? "mailbox" : "quantized");
    }
    return 0;
}

/* The peer's bytes [l.off, +bytes) of its buffer l.buf, mapped here by the last exchange. */
static void *res_peer(const struct ct_exec_args *a, const struct ct_op *op, struct ct_loc l,
                      struct ct_err *err)
{
    const struct ct_resident_peer *p = &a->res->peer[op->peer];
    if (!p->buf[l.buf] || l.off + op->bytes > p->len[l.buf]) {
        ct_err_set(err, CT_EUNSUPP,
                   "peer rank %d's buffer %d [%llu, +%llu) is not mapped here (another host, or "
                   "not shared)",
                   op->peer, l.buf, (unsigned long long)l.off, (unsigned long long)op->bytes);
        return NULL;
    }
    return (char *)p->buf[l.buf] + l.off;
}

/* One op of the resident path, queued on the memory kind (ct_mem_sync waits). */
static int res_op(const struct ct_exec_args *a, const struct ct_op *op, struct ct_err *err)
{
    struct ct_mem *m = a->res->mem;
    size_t n = a->mred ? (size_t)(op->bytes / a->mred->esize) : 0;
    void *peer = NULL;
    int k = op->kind == CT_OP_PUT ? 0 : op->kind == CT_OP_GET ? 1 : 2;
    if (ct_op_loc_remote(op, k) &&
        !(peer = res_peer(a, op, k == 0 ? op->dst : k == 1 ? op->src : op->src2, err)))
        return CT_EUNSUPP;
    if ((op->kind == CT_OP_GET_REDUCE || op->kind == CT_OP_REDUCE) && !a->mred)
        return ct_err_set(err, CT_EINVAL, "resident path: a reduction without its kernel");
    switch (op->kind) {
    case CT_OP_GET: return ct_mem_copy_queued(m, at(a, op->dst), peer, op->bytes, err);
    case CT_OP_PUT: return ct_mem_copy_queued(m, peer, at(a, op->src), op->bytes, err);
    case CT_OP_COPY: return ct_mem_copy_queued(m, at(a, op->dst), at(a, op->src), op->bytes, err);
    case CT_OP_GET_REDUCE:
        return op->rev ? ct_mem_reduce_queued(m, at(a, op->dst), peer, at(a, op->src), n, a->mred,
                                              err)
                       : ct_mem_reduce_queued(m, at(a, op->dst), at(a, op->src), peer, n, a->mred,
                                              err);
    case CT_OP_REDUCE:
        return ct_mem_reduce_queued(m, at(a, op->dst), at(a, op->src), at(a, op->src2), n, a->mred,
                                    err);
    default: return ct_err_set(err, CT_EUNSUPP, "the resident path has no op of kind %d", op->kind);
    }
}

/*
 * Two-sided ops on the resident path: the receiver pulls. A send posts a descriptor (the
 * sender's buffer, offset and length) to its peer over the transport and completes when the
 * peer acknowledges it; a receive takes the next descriptor from its peer (FIFO per pair, the
 * schedules' matching rule), reads the bytes from the sender's mapped buffer with the kind's
 * copy or reduction kernel, waits for it, and acknowledges, so the sender may reuse its
 * buffer: rendezvous sends, which every schedule allows (sched.h). Descriptors and
 * acknowledgements share one fixed-size message, received one at a time per peer only while
 * one is due, so none is left posted after a run; a descriptor that arrives before the step
 * whose receive it feeds waits in the peer's queue.
 */
static int ctl_send(struct ct_exec *x, struct ct_comm *c, size_t *nout, int peer,
                    struct ct_exec_ctl m, struct ct_err *err)
{
    m.to = peer;
    x->out[*nout] = m;
    struct ct_req *r = &x->outreq[*nout];
    r->done = 0;
    r->status = 0;
    struct ct_tp *tp = c->tp_of[peer];
    CT_TRY(tp->ops->isend(tp, peer, &x->out[*nout], sizeof m, r, err));
    (*nout)++;
    return 0;
}

static void early_push(struct ct_exec_rpeer *p, const struct ct_exec_ctl *m)
{
    if (p->n == p->cap) {
        uint32_t cap = p->cap ? 2 * p->cap : 8;
        struct ct_exec_ctl *e = ct_xcalloc(cap, sizeof *e);
        for (uint32_t i = 0; i < p->n; i++)
            e[i] = p->early[(p->head + i) % p->cap];
        free(p->early);
        p->early = e;
        p->head = 0;
        p->cap = cap;
    }
    p->early[(p->head + p->n++) % p->cap] = *m;
}

/* Receive op `op` from the descriptor m: queued on the kind (the caller waits). */
static int res_pull(const struct ct_exec_args *a, const struct ct_op *op,
                    const struct ct_exec_ctl *m, struct ct_err *err)
{
    if (m->bytes != op->bytes || m->buf >= CT_BUF_COUNT)
        return ct_err_set(err, CT_EPEER,
                          "peer rank %d sent %llu bytes where %llu were to be received", op->peer,
                          (unsigned long long)m->bytes, (unsigned long long)op->bytes);
    struct ct_op get = *op; /* the same op, its source in the peer */
    get.src2 = get.src;
    if (op->kind == CT_OP_RECV) {
        get.kind = CT_OP_GET;
        get.src = ct_loc((enum ct_bufid)m->buf, m->off);
    } else {
        get.kind = CT_OP_GET_REDUCE;
        get.src2 = ct_loc((enum ct_bufid)m->buf, m->off);
        get.src = op->src;
    }
    return res_op(a, &get, err);
}

/* Post the next control receive from every peer that owes this rank a message. */
static int ctl_post(struct ct_exec *x, struct ct_comm *c, struct ct_err *err)
{
    for (int q = 0; q < x->nrpeer; q++) {
        struct ct_exec_rpeer *p = &x->rpeer[q];
        if (p->posted || (p->unacked == 0 && p->due <= p->n))
            continue;
        p->inreq.done = 0;
        p->inreq.status = 0;
        struct ct_tp *tp = c->tp_of[q];
        CT_TRY(tp->ops->irecv(tp, q, &p->in, NULL, sizeof p->in, NULL, &p->inreq, err));
        p->posted = true;
    }
    return 0;
}

/* Control receives that completed: acknowledgements counted, descriptors queued. Returns how
 * many, or < 0. */
static int ctl_take(struct ct_exec *x, struct ct_err *err)
{
    int got = 0;
    for (int q = 0; q < x->nrpeer; q++) {
        struct ct_exec_rpeer *p = &x->rpeer[q];
        if (!p->posted || !p->inreq.done)
            continue;
        p->posted = false;
        if (p->inreq.status < 0)
            return ct_err_set(err, p->inreq.status, "control message from peer rank %d failed", q);
        if (p->in.kind == CTL_ACK && p->unacked)
            p->unacked--;
        else if (p->in.kind == CTL_DESC)
            early_push(p, &p->in);
        else
            return ct_err_set(err, CT_EPEER, "peer rank %d sent a stray control message", q);
        got++;
    }
    return got;
}

/* The step's sends and receives, resident. */
static int res_comm(struct ct_exec *x, struct ct_comm *c, const struct ct_sched *s, uint32_t st,
                    const struct ct_exec_args *a, struct ct_err *err)
{
    uint32_t b = s->step_start[st], e = s->step_start[st + 1], nrecv = 0;
    size_t nout = 0, need = 0;
    for (uint32_t i = b; i < e; i++)
        need += s->ops[i].kind <= CT_OP_RECV_REDUCE;
    if (!need)
        return 0;
    if (x->nrpeer != c->size) {
        for (int q = 0; q < x->nrpeer; q++)
            free(x->rpeer[q].early);
        free(x->rpeer);
        x->rpeer = ct_xcalloc((size_t)c->size, sizeof *x->rpeer);
        x->nrpeer = c->size;
    }
    if (need > x->outcap) {
        free(x->out);
        free(x->outreq);
        free(x->taken);
        x->out = ct_xcalloc(need, sizeof *x->out);
        x->outreq = ct_xcalloc(need, sizeof *x->outreq);
        x->taken = ct_xcalloc(need, sizeof *x->taken);
        x->outcap = need;
    }
    for (uint32_t i = b; i < e; i++) {
        const struct ct_op *op = &s->ops[i];
        if (op->kind == CT_OP_SEND) {
            struct ct_exec_ctl m = {CTL_DESC, op->src.buf, 0, 0, op->src.off, op->bytes};
            CT_TRY(ctl_send(x, c, &nout, op->peer, m, err));
            x->rpeer[op->peer].unacked++;
        } else if (op->kind == CT_OP_RECV || op->kind == CT_OP_RECV_REDUCE) {
            x->rpeer[op->peer].due++;
            nrecv++;
        }
    }
    /* receives in schedule order per peer: a pass gives q's queued descriptors to q's
     * receives in order, and once q has none left its later receives wait for the next pass
     * (descriptors only arrive between passes), so none overtakes an earlier one */
    uint32_t done = 0;
    uint8_t *taken = x->taken; /* per op of the step: 1 pulled, 2 acknowledged */
    memset(taken, 0, e - b);
    struct idle w = {0, 0, c->wait == CT_WAIT_BLOCK ? SPIN_NS_BLOCK : SPIN_NS};
    int rc = 0, stalled = -1;
    for (;;) {
        uint32_t pulled = 0;
        for (uint32_t i = b; rc == 0 && i < e; i++) {
            const struct ct_op *op = &s->ops[i];
            if ((op->kind != CT_OP_RECV && op->kind != CT_OP_RECV_REDUCE) || taken[i - b])
                continue;
            struct ct_exec_rpeer *p = &x->rpeer[op->peer];
            if (!p->n)
                continue;
            struct ct_exec_ctl m = p->early[p->head];
            p->head = (p->head + 1) % p->cap;
            p->n--;
            if ((rc = res_pull(a, op, &m, err)) < 0)
                break;
            taken[i - b] = true;
            p->due--;
            pulled++;
        }
        if (rc == 0 && pulled) { /* landed, then the senders may reuse their buffers */
            rc = ct_mem_sync(a->res->mem, err);
            for (uint32_t i = b; rc == 0 && i < e; i++) {
                const struct ct_op *op = &s->ops[i];
                if ((op->kind == CT_OP_RECV || op->kind == CT_OP_RECV_REDUCE) &&
                    taken[i - b] == 1) {
                    taken[i - b] = 2; /* acknowledged */
                    struct ct_exec_ctl ack = {CTL_ACK, 0, 0, 0, 0, 0};
                    rc = ctl_send(x, c, &nout, op->peer, ack, err);
                }
            }
            done += pulled;
        }
        if (rc < 0)
            break;
        bool acked = true;
        for (int q = 0; q < x->nrpeer && acked; q++)
            acked = x->rpeer[q].unacked == 0;
        if (done == nrecv && acked)
            break;
        if ((rc = ctl_post(x, c, err)) < 0 || (rc = progress_all(c, err)) < 0)
            break;
        int got = ctl_take(x, err);
        if (got < 0) {
            rc = got;
            break;
        }
        if (got || rc > 0 || pulled) {
            idle_reset(&w);
            rc = 0;
            continue;
        }
        /* the peer waited for: the earliest receive's still without its descriptor, else
         * one that owes an acknowledgement */
        int pend = -1;
        for (uint32_t i = b; i < e && pend < 0; i++) {
            const struct ct_op *op = &s->ops[i];
            if ((op->kind == CT_OP_RECV || op->kind == CT_OP_RECV_REDUCE) && !taken[i - b])
                pend = op->peer;
        }
        for (int q = 0; q < x->nrpeer && pend < 0; q++)
            if (x->rpeer[q].unacked)
                pend = q;
        pend = pend < 0 ? 0 : pend;
        if ((rc = idle_pass(&w, c, pend, err)) > 0) {
            stalled = pend;
            break;
        }
        if (rc < 0)
            break;
    }
    if (stalled >= 0)
        return ct_err_set(err, CT_ETIMEDOUT, "no progress for %.1f s waiting for peer rank %d (%s)",
                          (double)c->timeout_ns / 1e9, stalled,
                          c->boot->hosts ? c->boot->hosts[stalled] : "?");
    CT_TRY(rc);
    /* the step's descriptors and acknowledgements sent before their slots are reused */
    for (size_t i = 0; i < nout; i++) {
        int to = x->out[i].to;
        idle_reset(&w);
        while (!x->outreq[i].done) {
            if ((rc = progress_all(c, err)) < 0)
                return rc;
            if (rc == 0 && (rc = idle_pass(&w, c, to, err)) != 0)
                return rc < 0 ? rc
                              : ct_err_set(err, CT_ETIMEDOUT,
                                           "no progress for %.1f s sending to peer rank %d (%s)",
                                           (double)c->timeout_ns / 1e9, to,
                                           c->boot->hosts ? c->boot->hosts[to] : "?");
        }
        if (x->outreq[i].status < 0)
            return ct_err_set(err, x->outreq[i].status, "a control message to peer rank %d failed",
                              to);
    }
    return 0;
}

/* Each step: its fences (the transport's), its sends and receives (pulled, above), then its
 * local ops queued on the memory kind and waited for, so what it wrote into the peers'
 * buffers has landed before its next fence tells them. */
static int run_resident_steps(struct ct_exec *x, struct ct_comm *c, const struct ct_sched *s,
                              const struct ct_exec_args *a, struct ct_err *err)
{
    for (uint32_t st = 0; st < s->nsteps; st++) {
        CT_TRY(run_fences(c, s, st, a, err));
        if (res_comm(x, c, s, st, a, err) < 0)
            return ct_err_wrap(err, "step %u/%u: ", st + 1, s->nsteps);
        uint32_t queued = 0;
        for (uint32_t i = s->step_start[st]; i < s->step_start[st + 1]; i++) {
            uint8_t k = s->ops[i].kind;
            if (k == CT_OP_SYNC || k <= CT_OP_RECV_REDUCE)
                continue;
            if (res_op(a, &s->ops[i], err) < 0)
                return ct_err_wrap(err, "step %u/%u: ", st + 1, s->nsteps);
            queued++;
        }
        if (queued && ct_mem_sync(a->res->mem, err) < 0)
            return ct_err_wrap(err, "step %u/%u: ", st + 1, s->nsteps);
    }
    for (int q = 0; q < x->nrpeer; q++)
        if (x->rpeer[q].n || x->rpeer[q].unacked)
            return ct_err_set(
                err, CT_EPEER,
                "peer rank %d: %u descriptors left unreceived, %u sends unacknowledged", q,
                x->rpeer[q].n, x->rpeer[q].unacked);
    return 0;
}

/* A run that failed leaves control messages in flight (a receive posted into x->rpeer, sends
 * out of x->out): no later run may use them, and they are not freed (ct_exec_release) while a
 * transport may still write there. Its queued copies and kernels are waited for. Its errors
 * are failures, never CT_EUNSUPP (a refusal, after which a sweep goes on with the next
 * point). */
static int run_resident(struct ct_exec *x, struct ct_comm *c, const struct ct_sched *s,
                        const struct ct_exec_args *a, struct ct_err *err)
{
    if (x->res_broken)
        return ct_err_set(err, CT_EIO, "an earlier in-place run on this communicator failed");
    int rc = run_resident_steps(x, c, s, a, err);
    if (rc < 0) {
        struct ct_err drained = {0}; /* what was queued done before any buffer goes (a GPU
                                        copy into a peer's mapping outliving it) */
        ct_mem_sync(a->res->mem, &drained);
        x->res_broken = true;
        err->code = rc = rc == CT_EUNSUPP ? CT_EIO : rc;
    }
    return rc;
}

int ct_exec_run(struct ct_exec *x, struct ct_comm *c, const struct ct_sched *s,
                const struct ct_exec_args *a, struct ct_err *err)
{
    if (a->res)
        return run_resident(x, c, s, a, err);
    if (a->chunk == 0 || a->depth < 1)
        return ct_err_set(err, CT_EINVAL, "executor: chunk and depth must be positive");
    grow(x, s->max_comm_ops + 1, a->depth);
    if (a->red) {
        x->red_rev.fn = a->red->rev;
        x->red_rev.esize = a->red->esize;
    }
    for (uint32_t st = 0; st < s->nsteps; st++) {
        if (s->onesided_ops && s->ops[s->step_start[st]].kind == CT_OP_PUBLISH) {
            CT_TRY(run_mbox(x, c, s, st, a, err));
            continue;
        }
        CT_TRY(run_fences(c, s, st, a, err));
        CT_TRY(run_comm(x, c, s, st, a, err));
        CT_TRY(run_local(x, c, s, st, a, err));
    }
    return 0;
}
