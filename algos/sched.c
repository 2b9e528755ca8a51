/* SPDX-License-Identifier: MIT */
/* Schedule builder and the cross-rank consistency check. */
#include "sched.h"

#include "quant.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

void ct_sched_init(struct ct_sched *s)
{
    memset(s, 0, sizeof *s);
}

void ct_sched_release(struct ct_sched *s)
{
    free(s->ops);
    free(s->step_start);
    ct_sched_init(s);
}

void ct_sched_step(struct ct_sched *s)
{
    if (s->nsteps && s->step_start[s->nsteps - 1] == s->nops)
        return; /* current step still empty: reuse it */
    if (s->nsteps + 2 > s->stepcap) {
        s->stepcap = s->stepcap ? s->stepcap * 2 : 16;
        s->step_start = ct_xrealloc(s->step_start, s->stepcap * sizeof *s->step_start);
    }
    s->step_start[s->nsteps++] = s->nops;
}

static struct ct_op *push(struct ct_sched *s)
{
    if (!s->nsteps)
        ct_sched_step(s);
    if (s->nops == s->opcap) {
        s->opcap = s->opcap ? s->opcap * 2 : 32;
        s->ops = ct_xrealloc(s->ops, s->opcap * sizeof *s->ops);
    }
    struct ct_op *op = &s->ops[s->nops++];
    memset(op, 0, sizeof *op);
    return op;
}

/* One op; zero-byte ops are dropped (both sides drop alike). Locations not given are 0. */
static void add(struct ct_sched *s, enum ct_opk kind, int peer, struct ct_loc dst,
                struct ct_loc src, struct ct_loc src2, uint64_t bytes, bool rev)
{
    if (!bytes && kind != CT_OP_SYNC)
        return;
    struct ct_op *op = push(s);
    op->kind = (uint8_t)kind;
    op->peer = peer;
    op->rev = rev;
    op->dst = dst;
    op->src = src;
    op->src2 = src2;
    op->bytes = bytes;
}

static const struct ct_loc none = {0, 0};

void ct_sched_send(struct ct_sched *s, int peer, struct ct_loc src, uint64_t bytes)
{
    add(s, CT_OP_SEND, peer, none, src, none, bytes, false);
}

void ct_sched_recv(struct ct_sched *s, int peer, struct ct_loc dst, uint64_t bytes)
{
    add(s, CT_OP_RECV, peer, dst, none, none, bytes, false);
}

void ct_sched_recv_reduce(struct ct_sched *s, int peer, struct ct_loc dst, struct ct_loc src,
                          uint64_t bytes)
{
    add(s, CT_OP_RECV_REDUCE, peer, dst, src, none, bytes, false);
}

void ct_sched_recv_reduce_rev(struct ct_sched *s, int peer, struct ct_loc dst, struct ct_loc src,
                              uint64_t bytes)
{
    add(s, CT_OP_RECV_REDUCE, peer, dst, src, none, bytes, true);
}

void ct_sched_reduce(struct ct_sched *s, struct ct_loc dst, struct ct_loc src, struct ct_loc src2,
                     uint64_t bytes)
{
    add(s, CT_OP_REDUCE, -1, dst, src, src2, bytes, false);
}

void ct_sched_copy(struct ct_sched *s, struct ct_loc dst, struct ct_loc src, uint64_t bytes)
{
    if (dst.buf != src.buf || dst.off != src.off)
        add(s, CT_OP_COPY, -1, dst, src, none, bytes, false);
}

void ct_sched_quant(struct ct_sched *s, enum ct_opk kind, int fmt, struct ct_loc dst,
                    struct ct_loc src, struct ct_loc src2, uint64_t bytes)
{
    add(s, kind, -1, dst, src, src2, bytes, false);
    if (bytes)
        s->ops[s->nops - 1].fmt = (uint8_t)fmt;
}

void ct_sched_sync(struct ct_sched *s, int peer)
{
    add(s, CT_OP_SYNC, peer, none, none, none, 0, false);
}

void ct_sched_get_reduce(struct ct_sched *s, int peer, struct ct_loc dst, struct ct_loc src,
                         struct ct_loc peer_src2, bool rev, uint64_t bytes)
{
    add(s, CT_OP_GET_REDUCE, peer, dst, src, peer_src2, bytes, rev);
}

void ct_sched_put(struct ct_sched *s, int peer, struct ct_loc peer_dst, struct ct_loc src,
                  uint64_t bytes)
{
    add(s, CT_OP_PUT, peer, peer_dst, src, none, bytes, false);
}

void ct_sched_get(struct ct_sched *s, int peer, struct ct_loc dst, struct ct_loc peer_src,
                  uint64_t bytes)
{
    add(s, CT_OP_GET, peer, dst, peer_src, none, bytes, false);
}

void ct_sched_publish(struct ct_sched *s, struct ct_loc src, uint64_t bytes)
{
    add(s, CT_OP_PUBLISH, -1, none, src, none, bytes, false);
}

void ct_sched_mget(struct ct_sched *s, int peer, struct ct_loc dst, uint64_t off, uint64_t bytes)
{
    add(s, CT_OP_MGET, peer, dst, ct_loc(CT_BUF_SEND, off), none, bytes, false);
}

void ct_sched_mget_reduce(struct ct_sched *s, int peer, struct ct_loc dst, struct ct_loc src,
                          uint64_t off, bool rev, uint64_t bytes)
{
    add(s, CT_OP_MGET_REDUCE, peer, dst, src, ct_loc(CT_BUF_SEND, off), bytes, rev);
}

uint64_t ct_op_loc_bytes(const struct ct_op *op, int k)
{
    bool wire = (op->kind == CT_OP_QUANT && k == 0) ||
                ((op->kind == CT_OP_DEQUANT || op->kind == CT_OP_DEQUANT_ADD) && k == 1);
    if (op->kind == CT_OP_QUANT || op->kind == CT_OP_DEQUANT)
        if (k == 2)
            return 0;
    return wire ? ct_quant_wire_bytes((enum ct_quant)op->fmt, op->bytes / 4) : op->bytes;
}

static int is_comm(const struct ct_op *op)
{
    return op->kind <= CT_OP_RECV_REDUCE;
}

/* An op that names a peer: messages and one-sided ops. */
static int has_peer(const struct ct_op *op)
{
    return is_comm(op) || (op->kind >= CT_OP_SYNC && op->kind != CT_OP_PUBLISH);
}

static bool is_mread(const struct ct_op *op)
{
    return op->kind == CT_OP_MGET || op->kind == CT_OP_MGET_REDUCE;
}

static uint64_t end_of(struct ct_loc l, uint64_t bytes)
{
    return l.off + bytes;
}

void ct_sched_finish(struct ct_sched *s)
{
    /* drop empty steps */
    uint32_t w = 0;
    for (uint32_t i = 0; i < s->nsteps; i++) {
        uint32_t end = i + 1 < s->nsteps ? s->step_start[i + 1] : s->nops;
        if (end > s->step_start[i])
            s->step_start[w++] = s->step_start[i];
    }
    s->nsteps = w;
    if (!s->step_start) {
        s->stepcap = 1;
        s->step_start = ct_xmalloc(sizeof *s->step_start);
    }
    s->step_start[s->nsteps] = s->nops; /* sentinel; stepcap always >= nsteps + 1 */
    s->bytes_sent = 0;
    s->max_comm_ops = 0;
    s->onesided_ops = 0;
    uint64_t scratch = 0;
    for (uint32_t st = 0; st < s->nsteps; st++) {
        uint32_t ncomm = 0;
        for (uint32_t i = s->step_start[st]; i < s->step_start[st + 1]; i++) {
            const struct ct_op *op = &s->ops[i];
            ncomm += is_comm(op);
            s->onesided_ops += op->kind >= CT_OP_SYNC;
            if (op->kind == CT_OP_SEND)
                s->bytes_sent += op->bytes;
            const struct ct_loc *ls[3] = {&op->dst, &op->src, &op->src2};
            for (int k = 0; k < 3; k++)
                if (ls[k]->buf == CT_BUF_SCRATCH && !ct_op_loc_remote(op, k) &&
                    !ct_op_loc_mbox(op, k) && end_of(*ls[k], ct_op_loc_bytes(op, k)) > scratch)
                    scratch = end_of(*ls[k], ct_op_loc_bytes(op, k));
        }
        if (ncomm > s->max_comm_ops)
            s->max_comm_ops = ncomm;
    }
    if (scratch > s->scratch_bytes)
        s->scratch_bytes = scratch;
}

uint32_t ct_sched_comm_steps(const struct ct_sched *s)
{
    uint32_t n = 0;
    for (uint32_t st = 0; st < s->nsteps; st++)
        for (uint32_t i = s->step_start[st]; i < s->step_start[st + 1]; i++)
            if (is_comm(&s->ops[i])) {
                n++;
                break;
            }
    return n;
}

/* Which locations an op uses, for bounds checks. */
static int check_loc(const struct ct_sched *s, struct ct_loc l, uint64_t bytes, uint64_t send_bytes,
                     uint64_t recv_bytes, int rank, uint32_t opi, struct ct_err *err)
{
    uint64_t lim = l.buf == CT_BUF_SEND ? send_bytes
                   : l.buf == CT_BUF_RECV ? recv_bytes
                                          : s->scratch_bytes;
    if (l.buf >= CT_BUF_COUNT || l.off > lim || bytes > lim - l.off)
        return ct_err_set(err, CT_EINVAL,
                          "rank %d op %u: range [%llu,+%llu) outside buffer %u of %llu bytes",
                          rank, opi, (unsigned long long)l.off, (unsigned long long)bytes, l.buf,
                          (unsigned long long)lim);
    return 0;
}

/* The k-th publish of rank r (its op), or NULL. */
static const struct ct_op *nth_publish(const struct ct_sched *s, uint32_t k)
{
    for (uint32_t i = 0; i < s->nops; i++)
        if (s->ops[i].kind == CT_OP_PUBLISH && k-- == 0)
            return &s->ops[i];
    return NULL;
}

/*
 * Mailbox rules: a step has at most one publish; one that publishes reads from every other
 * rank and one that reads publishes; a read of peer q in a rank's k-th publish step lies
 * within q's k-th publish.
 */
static int check_mbox(const struct ct_sched *scheds, int n, struct ct_err *err)
{
    bool *seen = ct_xcalloc((size_t)n, sizeof *seen);
    int rc = 0;
    for (int a = 0; a < n && !rc; a++) {
        const struct ct_sched *s = &scheds[a];
        uint32_t k = 0; /* publishes of rank a before this step */
        for (uint32_t st = 0; st < s->nsteps && !rc; st++) {
            uint32_t pubs = 0, reads = 0, peers = 0, others = 0;
            memset(seen, 0, (size_t)n * sizeof *seen);
            for (uint32_t i = s->step_start[st]; i < s->step_start[st + 1] && !rc; i++) {
                const struct ct_op *op = &s->ops[i];
                pubs += op->kind == CT_OP_PUBLISH;
                others += is_comm(op) || op->kind == CT_OP_SYNC;
                if (op->kind == CT_OP_PUBLISH && i != s->step_start[st])
                    rc = ct_err_set(err, CT_EINVAL,
                                    "rank %d op %u: a publish is not the first op of its step", a,
                                    i);
                if (!is_mread(op))
                    continue;
                reads++;
                peers += !seen[op->peer];
                seen[op->peer] = true;
                const struct ct_op *q = nth_publish(&scheds[op->peer], k);
                struct ct_loc l = op->kind == CT_OP_MGET ? op->src : op->src2;
                if (q && (l.off > q->bytes || op->bytes > q->bytes - l.off))
                    rc = ct_err_set(err, CT_EINVAL,
                                    "rank %d op %u: reads [%llu,+%llu) of rank %d's publish %u "
                                    "of %llu bytes",
                                    a, i, (unsigned long long)l.off, (unsigned long long)op->bytes,
                                    op->peer, k, (unsigned long long)q->bytes);
                else if (!q)
                    rc = ct_err_set(err, CT_EINVAL,
                                    "rank %d op %u: reads rank %d's publish %u, which it never "
                                    "makes",
                                    a, i, op->peer, k);
            }
            if (!rc && (pubs > 1 || (reads && !pubs) || (pubs && peers != (uint32_t)(n - 1)) ||
                        (pubs && others)))
                rc = ct_err_set(err, CT_EINVAL,
                                "rank %d step %u: %u publishes, reads from %u of %d peers, %u "
                                "messages or fences (a step publishes once, then reads every "
                                "peer's, and nothing else crosses ranks)",
                                a, st, pubs, peers, n - 1, others);
            k += pubs;
        }
    }
    free(seen);
    return rc;
}

int ct_sched_check(const struct ct_sched *scheds, int n, uint64_t send_bytes, uint64_t recv_bytes,
                   struct ct_err *err)
{
    /* per pair cursors: next send index at a for b, next recv index at b from a */
    for (int a = 0; a < n; a++) {
        const struct ct_sched *s = &scheds[a];
        for (uint32_t i = 0; i < s->nops; i++) {
            const struct ct_op *op = &s->ops[i];
            if (has_peer(op) && (op->peer < 0 || op->peer >= n || op->peer == a))
                return ct_err_set(err, CT_EINVAL, "rank %d op %u: bad peer %d", a, i, op->peer);
            if (op->kind == CT_OP_SYNC)
                continue;
            /* a location in the peer's buffers is checked against the peer's sizes */
            const struct ct_sched *ss = ct_op_loc_remote(op, 1) ? &scheds[op->peer] : s,
                                  *sd = ct_op_loc_remote(op, 0) ? &scheds[op->peer] : s,
                                  *s2 = ct_op_loc_remote(op, 2) ? &scheds[op->peer] : s;
            if (op->kind != CT_OP_RECV && op->kind != CT_OP_MGET)
                CT_TRY(check_loc(ss, op->src, ct_op_loc_bytes(op, 1), send_bytes, recv_bytes, a, i,
                                 err));
            if (op->kind != CT_OP_SEND && op->kind != CT_OP_PUBLISH)
                CT_TRY(check_loc(sd, op->dst, ct_op_loc_bytes(op, 0), send_bytes, recv_bytes, a, i,
                                 err));
            if (op->kind == CT_OP_REDUCE || op->kind == CT_OP_DEQUANT_ADD ||
                op->kind == CT_OP_GET_REDUCE)
                CT_TRY(check_loc(s2, op->src2, op->bytes, send_bytes, recv_bytes, a, i, err));
        }
    }
    /* a one-sided op lies between two fences with its peer: one in its step or before (the
     * peer has entered), one in a later step (the peer learns it is over) */
    for (int a = 0; a < n; a++) {
        const struct ct_sched *s = &scheds[a];
        for (uint32_t st = 0; st < s->nsteps; st++)
            for (uint32_t i = s->step_start[st]; i < s->step_start[st + 1]; i++) {
                const struct ct_op *op = &s->ops[i];
                if (op->kind <= CT_OP_SYNC || op->kind >= CT_OP_PUBLISH)
                    continue;
                bool before = false, after = false;
                for (uint32_t k = 0; k < s->nops && !(before && after); k++) {
                    const struct ct_op *f = &s->ops[k];
                    if (f->kind != CT_OP_SYNC || f->peer != op->peer)
                        continue;
                    before = before || k < s->step_start[st + 1];
                    after = after || k >= s->step_start[st + 1];
                }
                if (!before || !after)
                    return ct_err_set(err, CT_EINVAL,
                                      "rank %d op %u: one-sided access to rank %d without a "
                                      "fence %s it",
                                      a, i, op->peer, before ? "after" : "before");
            }
    }
    CT_TRY(check_mbox(scheds, n, err));
    /* fences pair up: as many of a with b as of b with a */
    for (int a = 0; a < n; a++)
        for (uint32_t i = 0; i < scheds[a].nops; i++)
            if (scheds[a].ops[i].kind == CT_OP_SYNC && scheds[a].ops[i].peer > a) {
                int b = scheds[a].ops[i].peer;
                uint32_t na = 0, nb = 0;
                for (uint32_t k = 0; k < scheds[a].nops; k++)
                    na += scheds[a].ops[k].kind == CT_OP_SYNC && scheds[a].ops[k].peer == b;
                for (uint32_t k = 0; k < scheds[b].nops; k++)
                    nb += scheds[b].ops[k].kind == CT_OP_SYNC && scheds[b].ops[k].peer == a;
                if (na != nb)
                    return ct_err_set(err, CT_EINVAL,
                                      "pair %d<->%d: rank %d has %u fences with %d, rank %d has %u",
                                      a, b, a, na, b, b, nb);
            }
    for (int a = 0; a < n; a++) {
        for (int b = 0; b < n; b++) {
            if (a == b)
                continue;
            const struct ct_sched *sa = &scheds[a], *sb = &scheds[b];
            uint32_t i = 0, j = 0, k = 0;
            for (;;) {
                while (i < sa->nops && !(sa->ops[i].kind == CT_OP_SEND && sa->ops[i].peer == b))
                    i++;
                while (j < sb->nops &&
                       !((sb->ops[j].kind == CT_OP_RECV || sb->ops[j].kind == CT_OP_RECV_REDUCE) &&
                         sb->ops[j].peer == a))
                    j++;
                if (i == sa->nops && j == sb->nops)
                    break;
                if (i == sa->nops || j == sb->nops)
                    return ct_err_set(err, CT_EINVAL,
                                      "pair %d->%d: message %u is %s (rank %d has an unmatched %s)",
                                      a, b, k, i == sa->nops ? "received but never sent" : "sent but never received",
                                      i == sa->nops ? b : a, i == sa->nops ? "recv" : "send");
                if (sa->ops[i].bytes != sb->ops[j].bytes)
                    return ct_err_set(err, CT_EINVAL,
                                      "pair %d->%d: message %u sends %llu bytes but receives %llu",
                                      a, b, k, (unsigned long long)sa->ops[i].bytes,
                                      (unsigned long long)sb->ops[j].bytes);
                i++, j++, k++;
            }
        }
    }
    return 0;
}

static bool loc_eq(struct ct_loc a, struct ct_loc b)
{
    return a.buf == b.buf && a.off == b.off;
}

static bool op_equal(const struct ct_op *x, const struct ct_op *y)
{
    if (x->kind != y->kind || x->bytes != y->bytes || x->rev != y->rev || x->fmt != y->fmt ||
        !loc_eq(x->dst, y->dst))
        return false;
    if (has_peer(x) && x->peer != y->peer)
        return false;
    if (x->kind != CT_OP_RECV && !loc_eq(x->src, y->src))
        return false;
    if ((x->kind == CT_OP_REDUCE || x->kind == CT_OP_DEQUANT_ADD || x->kind == CT_OP_GET_REDUCE ||
         x->kind == CT_OP_MGET_REDUCE) &&
        !loc_eq(x->src2, y->src2))
        return false;
    return true;
}

/* Two-sided messages are posted together: their order in a step is free, except between
 * messages in the same direction with the same peer (they match in order). Key: 0 for
 * any other op (kept in order), else 1 + direction + 2 * peer. */
static long msg_key(const struct ct_op *o)
{
    if (o->kind == CT_OP_SEND)
        return 1 + 2L * o->peer;
    if (o->kind == CT_OP_RECV || o->kind == CT_OP_RECV_REDUCE)
        return 2 + 2L * o->peer;
    return 0;
}

/* The k-th op of step [from, to) with key `key`, in order; NULL if none. */
static const struct ct_op *nth_with(const struct ct_sched *s, uint32_t from, uint32_t to, long key,
                                    uint32_t k)
{
    for (uint32_t i = from; i < to; i++)
        if (msg_key(&s->ops[i]) == key && k-- == 0)
            return &s->ops[i];
    return NULL;
}

bool ct_sched_equal(const struct ct_sched *a, const struct ct_sched *b)
{
    if (a->nops != b->nops || a->nsteps != b->nsteps || a->scratch_bytes != b->scratch_bytes)
        return false;
    for (uint32_t s = 0; s <= a->nsteps && a->step_start && b->step_start; s++)
        if (a->step_start[s] != b->step_start[s])
            return false;
    bool steps = a->nsteps && a->step_start && b->step_start;
    for (uint32_t s = 0; s < (steps ? a->nsteps : 1); s++) {
        uint32_t from = steps ? a->step_start[s] : 0;
        uint32_t to = steps && s + 1 < a->nsteps ? a->step_start[s + 1] : a->nops;
        /* every op of a matches the op of b with its key and rank among those: a's i-th op
         * with key K is b's i-th op with key K (the counts then match, as nops do) */
        for (uint32_t i = from; i < to; i++) {
            long key = msg_key(&a->ops[i]);
            uint32_t k = 0;
            for (uint32_t q = from; q < i; q++)
                k += msg_key(&a->ops[q]) == key;
            const struct ct_op *y = nth_with(b, from, to, key, k);
            if (!y || !op_equal(&a->ops[i], y))
                return false;
        }
    }
    return true;
}
