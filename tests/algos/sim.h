/* SPDX-License-Identifier: MIT */
/*
 * A serial simulator for whole-job schedules: runs N ranks' schedules in one thread over
 * per-pair FIFO queues, with the executor's contract (a step's sends and receives are
 * posted when the step starts, then its local ops run in order) and checks the hazards
 * the executor cannot tolerate. Sends are rendezvous: a step ends only once the peers
 * have taken its messages, so a schedule that passes cannot deadlock on a transport
 * with bounded buffering either. One-sided ops (tp.h fences): a step with fences completes
 * once every such peer has posted its matching fence, and its gets and puts then read and
 * write the peers' buffers directly. Ranks advance in order 0..N-1, or N-1..0 with
 * `reverse`: a schedule whose one-sided ops race gives different results in the two orders
 * (a serial simulator cannot see the race itself). Mailbox ops (tp.h mbox_post): a step
 * that publishes copies its input into one of the rank's two mailboxes (by the publish's
 * ordinal, as the transports do), completes once every peer it reads has made its publish of
 * that ordinal, and its reads then take the peers' mailboxes. Header-only, for tests.
 */
#ifndef CT_TEST_SIM_H
#define CT_TEST_SIM_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "algos/algo.h"

struct sim_msg {
    uint64_t at, bytes; /* bytes [at, at+bytes) of the queue's data */
};

/* One pair's FIFO; storage is reused once the queue drains. */
struct sim_queue {
    struct sim_msg *m;
    size_t head, n, cap;
    uint8_t *data;
    uint64_t used, dcap;
};

struct sim {
    int nranks;
    const struct ct_sched *scheds; /* one per rank */
    uint8_t *(*buf)[CT_BUF_COUNT]; /* per rank: SEND, RECV, SCRATCH base (may alias) */
    ct_reduce_fn fn;               /* NULL when nothing reduces */
    size_t esize;
    int reverse; /* advance ranks from N-1 down to 0 */
    char why[512];
    uint8_t *(*mbox)[2]; /* per rank: publish k in mbox[k & 1] (sim_run allocates) */
    uint64_t *mposts;    /* per rank: publishes made */
};

static inline int sim_fail(struct sim *s, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static inline int sim_fail(struct sim *s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->why, sizeof s->why, fmt, ap);
    va_end(ap);
    return -1;
}

static inline uint8_t *sim_at(const struct sim *s, int r, struct ct_loc l)
{
    return s->buf[r][l.buf] + l.off;
}

static inline int sim_overlap(const uint8_t *a, uint64_t an, const uint8_t *b, uint64_t bn)
{
    return an && bn && a < b + bn && b < a + an;
}

/*
 * Within one step, a communication op that writes memory must not touch memory that
 * another communication op of the step reads or writes (the executor runs them
 * concurrently, in slices). A fused receive may reduce in place (dst == src exactly).
 */
static inline int sim_check_step(struct sim *s, int r, uint32_t st)
{
    const struct ct_sched *sc = &s->scheds[r];
    for (uint32_t i = sc->step_start[st]; i < sc->step_start[st + 1]; i++) {
        const struct ct_op *a = &sc->ops[i];
        if (a->kind == CT_OP_RECV_REDUCE && a->dst.buf == a->src.buf && a->dst.off != a->src.off &&
            sim_overlap(sim_at(s, r, a->dst), a->bytes, sim_at(s, r, a->src), a->bytes))
            return sim_fail(s, "rank %d step %u op %u: fused reduce with shifted overlap", r, st,
                            i);
        if (a->kind == CT_OP_REDUCE || a->kind == CT_OP_COPY) {
            const uint8_t *d = sim_at(s, r, a->dst), *x = sim_at(s, r, a->src);
            if (d != x && sim_overlap(d, a->bytes, x, a->bytes))
                return sim_fail(s, "rank %d step %u op %u: local op overlaps itself", r, st, i);
            if (a->kind == CT_OP_REDUCE) {
                const uint8_t *y = sim_at(s, r, a->src2);
                if (d != y && sim_overlap(d, a->bytes, y, a->bytes))
                    return sim_fail(s, "rank %d step %u op %u: reduce overlaps src2", r, st, i);
            }
        }
        if (a->kind != CT_OP_RECV && a->kind != CT_OP_RECV_REDUCE)
            continue;
        const uint8_t *w = sim_at(s, r, a->dst);
        for (uint32_t k = sc->step_start[st]; k < sc->step_start[st + 1]; k++) {
            const struct ct_op *b = &sc->ops[k];
            if (k == i || b->kind > CT_OP_RECV_REDUCE)
                continue;
            const uint8_t *bw = b->kind == CT_OP_SEND ? NULL : sim_at(s, r, b->dst);
            const uint8_t *br = b->kind == CT_OP_RECV ? NULL : sim_at(s, r, b->src);
            if ((bw && sim_overlap(w, a->bytes, bw, b->bytes)) ||
                (br && sim_overlap(w, a->bytes, br, b->bytes)))
                return sim_fail(s, "rank %d step %u: op %u writes memory that op %u uses", r, st, i,
                                k);
        }
    }
    return 0;
}

static inline void sim_push(struct sim_queue *q, const uint8_t *data, uint64_t bytes)
{
    if (q->head == q->n)
        q->head = q->n = 0, q->used = 0;
    if (q->n == q->cap) {
        q->cap = q->cap ? q->cap * 2 : 8;
        q->m = realloc(q->m, q->cap * sizeof *q->m);
    }
    if (q->used + bytes > q->dcap) {
        q->dcap = (q->used + bytes) * 2;
        q->data = realloc(q->data, q->dcap);
    }
    memcpy(q->data + q->used, data, bytes);
    q->m[q->n].at = q->used;
    q->m[q->n].bytes = bytes;
    q->used += bytes;
    q->n++;
}

static inline int sim_apply_local(struct sim *s, int r, const struct ct_op *op)
{
    if (op->kind == CT_OP_SYNC || op->kind == CT_OP_PUBLISH)
        return 0;
    if (op->kind == CT_OP_MGET || op->kind == CT_OP_MGET_REDUCE) {
        const uint8_t *box = s->mbox[op->peer][s->mposts[r] & 1];
        uint8_t *d = sim_at(s, r, op->dst);
        if (op->kind == CT_OP_MGET) {
            memcpy(d, box + op->src.off, op->bytes);
            return 0;
        }
        if (!s->fn || op->bytes % s->esize)
            return sim_fail(s, "rank %d: mailbox reduce without a reduction", r);
        const uint8_t *x = sim_at(s, r, op->src), *y = box + op->src2.off;
        s->fn(d, op->rev ? y : x, op->rev ? x : y, op->bytes / s->esize);
        return 0;
    }
    if (op->kind == CT_OP_PUT) {
        memcpy(sim_at(s, op->peer, op->dst), sim_at(s, r, op->src), op->bytes);
        return 0;
    }
    if (op->kind == CT_OP_GET) {
        memcpy(sim_at(s, r, op->dst), sim_at(s, op->peer, op->src), op->bytes);
        return 0;
    }
    uint8_t *d = sim_at(s, r, op->dst);
    if (op->kind == CT_OP_GET_REDUCE) {
        if (!s->fn || op->bytes % s->esize)
            return sim_fail(s, "rank %d: get-reduce without a reduction", r);
        const uint8_t *x = sim_at(s, r, op->src), *y = sim_at(s, op->peer, op->src2);
        s->fn(d, op->rev ? y : x, op->rev ? x : y, op->bytes / s->esize);
        return 0;
    }
    if (op->kind == CT_OP_COPY) {
        memmove(d, sim_at(s, r, op->src), op->bytes);
        return 0;
    }
    if (!s->fn || op->bytes % s->esize)
        return sim_fail(s, "rank %d: reduce of %llu bytes without a reduction of that size", r,
                        (unsigned long long)op->bytes);
    s->fn(d, sim_at(s, r, op->src), sim_at(s, r, op->src2), op->bytes / s->esize);
    return 0;
}

/* Run every rank's schedule to the end. 0, or -1 with s->why set. */
static inline int sim_run(struct sim *s)
{
    int n = s->nranks, rc = 0;
    struct sim_queue *q = calloc((size_t)n * (size_t)n, sizeof *q);
    uint32_t *cur = calloc((size_t)n, sizeof *cur);
    int *posted = calloc((size_t)n, sizeof *posted);
    int *taken = calloc((size_t)n, sizeof *taken);        /* receives of the step done */
    size_t *unacked = calloc((size_t)n, sizeof *unacked); /* sends not yet received */
    size_t *need = calloc((size_t)n, sizeof *need);
    uint64_t *fences = calloc((size_t)n * (size_t)n, sizeof *fences); /* [a * n + b]: a with b */
    s->mbox = calloc((size_t)n, sizeof *s->mbox);
    s->mposts = calloc((size_t)n, sizeof *s->mposts);
    int done = 0;
    for (int r = 0; r < n; r++)
        done += s->scheds[r].nsteps == 0;
    while (done < n && !rc) {
        int progress = 0;
        for (int k = 0; k < n && !rc; k++) {
            int r = s->reverse ? n - 1 - k : k;
            const struct ct_sched *sc = &s->scheds[r];
            if (cur[r] >= sc->nsteps || posted[r])
                continue;
            rc = sim_check_step(s, r, cur[r]);
            for (uint32_t i = sc->step_start[cur[r]]; i < sc->step_start[cur[r] + 1] && !rc; i++) {
                const struct ct_op *op = &sc->ops[i];
                if (op->kind == CT_OP_SEND) {
                    sim_push(&q[(size_t)r * (size_t)n + (size_t)op->peer], sim_at(s, r, op->src),
                             op->bytes);
                    unacked[r]++;
                }
                if (op->kind == CT_OP_SYNC)
                    fences[(size_t)r * (size_t)n + (size_t)op->peer]++;
                if (op->kind == CT_OP_PUBLISH) {
                    uint8_t **box = &s->mbox[r][++s->mposts[r] & 1];
                    *box = realloc(*box, op->bytes);
                    memcpy(*box, sim_at(s, r, op->src), op->bytes);
                }
            }
            posted[r] = 1;
            progress = 1;
        }
        for (int k = 0; k < n && !rc; k++) {
            int r = s->reverse ? n - 1 - k : k;
            const struct ct_sched *sc = &s->scheds[r];
            if (!posted[r])
                continue;
            uint32_t b = sc->step_start[cur[r]], e = sc->step_start[cur[r] + 1];
            if (!taken[r]) {
                int ready = 1;
                memset(need, 0, (size_t)n * sizeof *need);
                for (uint32_t i = b; i < e; i++) {
                    const struct ct_op *op = &sc->ops[i];
                    if (op->kind != CT_OP_RECV && op->kind != CT_OP_RECV_REDUCE)
                        continue;
                    struct sim_queue *qq = &q[(size_t)op->peer * (size_t)n + (size_t)r];
                    if (qq->n - qq->head < ++need[op->peer])
                        ready = 0;
                }
                if (!ready)
                    continue;
                for (uint32_t i = b; i < e && !rc; i++) {
                    const struct ct_op *op = &sc->ops[i];
                    if (op->kind != CT_OP_RECV && op->kind != CT_OP_RECV_REDUCE)
                        continue;
                    struct sim_queue *qq = &q[(size_t)op->peer * (size_t)n + (size_t)r];
                    struct sim_msg m = qq->m[qq->head++];
                    unacked[op->peer]--;
                    if (m.bytes != op->bytes)
                        rc = sim_fail(s, "rank %d step %u: got %llu bytes from %d, expected %llu",
                                      r, cur[r], (unsigned long long)m.bytes, op->peer,
                                      (unsigned long long)op->bytes);
                    else if (op->kind == CT_OP_RECV)
                        memcpy(sim_at(s, r, op->dst), qq->data + m.at, m.bytes);
                    else if (!s->fn || m.bytes % s->esize)
                        rc = sim_fail(s, "rank %d: fused reduce without a reduction", r);
                    else if (op->rev)
                        s->fn(sim_at(s, r, op->dst), qq->data + m.at, sim_at(s, r, op->src),
                              m.bytes / s->esize);
                    else
                        s->fn(sim_at(s, r, op->dst), sim_at(s, r, op->src), qq->data + m.at,
                              m.bytes / s->esize);
                }
                taken[r] = 1;
                progress = 1;
            }
            if (unacked[r])
                continue; /* our sends are not all taken yet */
            int met = 1;
            for (uint32_t i = b; i < e; i++) {
                if (sc->ops[i].kind == CT_OP_SYNC &&
                    fences[(size_t)sc->ops[i].peer * (size_t)n + (size_t)r] <
                        fences[(size_t)r * (size_t)n + (size_t)sc->ops[i].peer])
                    met = 0;
                if ((sc->ops[i].kind == CT_OP_MGET || sc->ops[i].kind == CT_OP_MGET_REDUCE) &&
                    s->mposts[sc->ops[i].peer] < s->mposts[r])
                    met = 0;
            }
            if (!met)
                continue; /* a peer has not posted its matching fence yet */
            for (uint32_t i = b; i < e && !rc; i++)
                if (sc->ops[i].kind > CT_OP_RECV_REDUCE)
                    rc = sim_apply_local(s, r, &sc->ops[i]);
            posted[r] = 0;
            taken[r] = 0;
            progress = 1;
            if (++cur[r] == sc->nsteps)
                done++;
        }
        if (!progress && !rc)
            rc = sim_fail(s, "deadlock: no rank can complete its step (rendezvous sends)");
    }
    for (size_t i = 0; i < (size_t)n * (size_t)n; i++) {
        if (!rc && q[i].head != q[i].n)
            rc = sim_fail(s, "%zu messages from %zu to %zu never received", q[i].n - q[i].head,
                          i / (size_t)n, i % (size_t)n);
        free(q[i].m);
        free(q[i].data);
    }
    free(q);
    free(cur);
    free(posted);
    free(taken);
    free(unacked);
    free(need);
    free(fences);
    for (int r = 0; r < n; r++)
        free(s->mbox[r][0]), free(s->mbox[r][1]);
    free(s->mbox);
    free(s->mposts);
    s->mbox = NULL;
    s->mposts = NULL;
    return rc;
}

#endif
