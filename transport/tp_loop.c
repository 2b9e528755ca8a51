/* SPDX-License-Identifier: MIT */
/*
 * loop: ranks are threads of one process; messages are copied into per-pair FIFO queues.
 * The test default. Faults for tests: drop, delay or corrupt the k-th message a rank sends.
 * Fences (tp.h) publish plain pointers: every rank's memory is the process's.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../lib/clock.h"
#include "boot.h"
#include "tp.h"

struct msg {
    struct msg *next;
    size_t len;
    unsigned char data[];
};

struct pairq {
    pthread_mutex_t mu;
    struct msg *head, *tail;
};

struct inbox {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    unsigned long seq; /* bumped on every arrival */
};

/* a's fences toward b; the buffers of fence k in bufs[k & 1] (tp_shm.c says why two). */
struct lfence {
    _Atomic uint64_t count;
    void *bufs[2][CT_FENCE_BUFS];
};

/* A rank's mailbox publish k (tp.h mbox_post) in box[k & 1]. */
struct lbox {
    _Atomic uint64_t seq;
    unsigned char data[CT_MBOX_MAX];
};

struct world {
    int n;
    struct pairq *q;    /* q[src * n + dst] */
    struct inbox *in;   /* per destination */
    struct lfence *f;   /* f[a * n + b] */
    struct lbox (*box)[2]; /* per rank */
};

struct loop_tp {
    struct ct_tp base;
    struct world *w;
    struct ct_tp_cfg cfg;
    long sent;
    unsigned long seen; /* inbox seq observed at the start of the last progress */
    struct ct_req **rhead, **rtail; /* posted receives per peer (FIFO via priv[4]) */
    uint64_t *fout;                 /* fences posted toward each peer */
    unsigned char *fwait;           /* the last one not yet met */
    void *(*fin)[CT_FENCE_BUFS];    /* each peer's buffers of the last fence met */
    uint64_t mseq;                  /* mailbox publishes posted */
    unsigned char *mwait;           /* the peer's matching publish is awaited */
};

extern const struct ct_tp_ops ct_tp_loop_ops;

enum { P_DST, P_SRC, P_LEN, P_RED, P_NEXT };

static void *world_create(int n, void *arg)
{
    struct world *w = ct_xcalloc(1, sizeof *w);
    w->n = n;
    w->q = ct_xcalloc((size_t)n * (size_t)n, sizeof *w->q);
    w->in = ct_xcalloc((size_t)n, sizeof *w->in);
    w->f = ct_xcalloc((size_t)n * (size_t)n, sizeof *w->f);
    w->box = ct_xcalloc((size_t)n, sizeof *w->box);
    for (int i = 0; i < n * n; i++)
        pthread_mutex_init(&w->q[i].mu, NULL);
    for (int i = 0; i < n; i++) {
        pthread_mutex_init(&w->in[i].mu, NULL);
        pthread_cond_init(&w->in[i].cv, NULL);
    }
    return w;
}

/* Something arrived for rank r: bump its inbox and wake it. */
static void wake(struct world *w, int r)
{
    struct inbox *in = &w->in[r];
    pthread_mutex_lock(&in->mu);
    in->seq++;
    pthread_cond_signal(&in->cv);
    pthread_mutex_unlock(&in->mu);
}

static void world_destroy(void *p);

static int loop_open(struct ct_tp **out, const struct ct_tp_cfg *cfg, struct ct_boot *boot,
                     struct ct_err *err)
{
    struct loop_tp *t = ct_xcalloc(1, sizeof *t);
    t->base.ops = &ct_tp_loop_ops;
    t->base.rank = boot->rank;
    t->base.size = boot->size;
    t->base.boot = boot;
    if (cfg)
        t->cfg = *cfg;
    t->w = ct_boot_world_slot(boot, world_create, world_destroy, NULL);
    t->rhead = ct_xcalloc((size_t)boot->size, sizeof *t->rhead);
    t->rtail = ct_xcalloc((size_t)boot->size, sizeof *t->rtail);
    t->fout = ct_xcalloc((size_t)boot->size, sizeof *t->fout);
    t->fwait = ct_xcalloc((size_t)boot->size, sizeof *t->fwait);
    t->fin = ct_xcalloc((size_t)boot->size, sizeof *t->fin);
    t->mwait = ct_xcalloc((size_t)boot->size, sizeof *t->mwait);
    *out = &t->base;
    return 0;
}

static void world_destroy(void *p)
{
    struct world *w = p;
    for (int i = 0; i < w->n * w->n; i++) {
        struct msg *m = w->q[i].head;
        while (m) {
            struct msg *nx = m->next;
            free(m);
            m = nx;
        }
        pthread_mutex_destroy(&w->q[i].mu);
    }
    for (int i = 0; i < w->n; i++) {
        pthread_mutex_destroy(&w->in[i].mu);
        pthread_cond_destroy(&w->in[i].cv);
    }
    free(w->q);
    free(w->in);
    free(w->f);
    free(w->box);
    free(w);
}

static void loop_close(struct ct_tp *tp)
{
    struct loop_tp *t = (struct loop_tp *)tp;
    /* the world (queues) is freed with the bootstrap world, after every thread ends */
    free(t->rhead);
    free(t->rtail);
    free(t->fout);
    free(t->fwait);
    free(t->fin);
    free(t->mwait);
    free(t);
}

static void *loop_alloc(struct ct_tp *tp, size_t bytes, struct ct_err *err)
{
    void *p = NULL;
    if (posix_memalign(&p, 4096, bytes ? bytes : 1)) {
        ct_err_set(err, CT_ENOMEM, "cannot allocate %zu bytes", bytes);
        return NULL;
    }
    return p;
}

static void loop_free(struct ct_tp *tp, void *p, size_t bytes)
{
    free(p);
}

static int loop_isend(struct ct_tp *tp, int peer, const void *buf, size_t len, struct ct_req *req,
                      struct ct_err *err)
{
    struct loop_tp *t = (struct loop_tp *)tp;
    if (peer < 0 || peer >= tp->size || peer == tp->rank)
        return ct_err_set(err, CT_EINVAL, "send to invalid peer %d", peer);
    long k = t->sent++;
    int faulty = t->cfg.fault_kind && t->cfg.fault_rank == tp->rank && t->cfg.fault_msg == k;
    req->done = 1;
    req->status = 0;
    if (faulty && t->cfg.fault_kind == 1)
        return 0; /* dropped */
    if (faulty && t->cfg.fault_kind == 2) {
        struct timespec ts = {t->cfg.fault_delay_ns / 1000000000LL,
                              t->cfg.fault_delay_ns % 1000000000LL};
        nanosleep(&ts, NULL);
    }
    struct msg *m = ct_xmalloc(sizeof *m + len);
    m->next = NULL;
    m->len = len;
    if (len)
        memcpy(m->data, buf, len);
    if (faulty && t->cfg.fault_kind == 3 && len)
        m->data[len / 2] ^= 0x5a;
    struct world *w = t->w;
    struct pairq *q = &w->q[tp->rank * w->n + peer];
    pthread_mutex_lock(&q->mu);
    if (q->tail)
        q->tail->next = m;
    else
        q->head = m;
    q->tail = m;
    pthread_mutex_unlock(&q->mu);
    wake(w, peer);
    return 0;
}

static int loop_irecv(struct ct_tp *tp, int peer, void *dst, const void *src, size_t len,
                      const struct ct_red *red, struct ct_req *req, struct ct_err *err)
{
    struct loop_tp *t = (struct loop_tp *)tp;
    if (peer < 0 || peer >= tp->size || peer == tp->rank)
        return ct_err_set(err, CT_EINVAL, "receive from invalid peer %d", peer);
    req->done = 0;
    req->status = 0;
    req->priv[P_DST] = (uintptr_t)dst;
    req->priv[P_SRC] = (uintptr_t)src;
    req->priv[P_LEN] = len;
    req->priv[P_RED] = (uintptr_t)red;
    req->priv[P_NEXT] = 0;
    if (t->rtail[peer])
        t->rtail[peer]->priv[P_NEXT] = (uintptr_t)req;
    else
        t->rhead[peer] = req;
    t->rtail[peer] = req;
    return 0;
}

static int deliver(struct loop_tp *t, int peer, struct ct_req *req, struct msg *m,
                   struct ct_err *err)
{
    size_t len = req->priv[P_LEN];
    if (m->len != len) {
        req->status = ct_err_set(err, CT_EPEER,
                                 "peer rank %d (%s): message of %zu bytes for a receive of %zu",
                                 peer, t->base.boot->hosts[peer], m->len, len);
        req->done = 1;
        return req->status;
    }
    void *dst = (void *)(uintptr_t)req->priv[P_DST];
    const struct ct_red *red = (const struct ct_red *)(uintptr_t)req->priv[P_RED];
    if (red)
        red->fn(dst, (const void *)(uintptr_t)req->priv[P_SRC], m->data, len / red->esize);
    else if (len)
        memcpy(dst, m->data, len);
    req->done = 1;
    return 0;
}

static int loop_progress(struct ct_tp *tp, struct ct_err *err)
{
    struct loop_tp *t = (struct loop_tp *)tp;
    struct world *w = t->w;
    int done = 0;
    pthread_mutex_lock(&w->in[tp->rank].mu);
    t->seen = w->in[tp->rank].seq;
    pthread_mutex_unlock(&w->in[tp->rank].mu);
    for (int p = 0; p < tp->size; p++) {
        while (t->rhead[p]) {
            struct pairq *q = &w->q[p * w->n + tp->rank];
            pthread_mutex_lock(&q->mu);
            struct msg *m = q->head;
            if (m) {
                q->head = m->next;
                if (!q->head)
                    q->tail = NULL;
            }
            pthread_mutex_unlock(&q->mu);
            if (!m)
                break;
            struct ct_req *req = t->rhead[p];
            t->rhead[p] = (struct ct_req *)(uintptr_t)req->priv[P_NEXT];
            if (!t->rhead[p])
                t->rtail[p] = NULL;
            int rc = deliver(t, p, req, m, err);
            free(m);
            if (rc < 0)
                return rc;
            done++;
        }
    }
    return done;
}

static int loop_wait(struct ct_tp *tp, int64_t timeout_ns, struct ct_err *err)
{
    struct loop_tp *t = (struct loop_tp *)tp;
    struct inbox *in = &t->w->in[tp->rank];
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    int64_t ns = ts.tv_nsec + timeout_ns;
    ts.tv_sec += ns / 1000000000LL;
    ts.tv_nsec = ns % 1000000000LL;
    pthread_mutex_lock(&in->mu);
    /* sleep only if nothing arrived since the last progress looked, nor a fence we wait for
     * (its poster bumps seq under this lock after publishing it) */
    bool met = false;
    for (int p = 0; p < tp->size && !met; p++)
        met = (t->fwait[p] && atomic_load_explicit(&t->w->f[p * t->w->n + tp->rank].count,
                                                   memory_order_acquire) >= t->fout[p]) ||
              (t->mwait[p] && atomic_load_explicit(&t->w->box[p][t->mseq & 1].seq,
                                                   memory_order_acquire) == t->mseq);
    int rc = 0;
    while (!met && in->seq == t->seen && rc != ETIMEDOUT)
        rc = pthread_cond_timedwait(&in->cv, &in->mu, &ts);
    pthread_mutex_unlock(&in->mu);
    return 0;
}

static int loop_pending(struct ct_tp *tp, int *peers, int max)
{
    struct loop_tp *t = (struct loop_tp *)tp;
    int n = 0;
    for (int p = 0; p < tp->size && n < max; p++)
        if (t->rhead[p] || t->fwait[p] || t->mwait[p])
            peers[n++] = p;
    return n;
}

static int loop_fence_post(struct ct_tp *tp, int peer, void *const bufs[], int n,
                           struct ct_err *err)
{
    struct loop_tp *t = (struct loop_tp *)tp;
    struct world *w = t->w;
    if (peer < 0 || peer >= tp->size || peer == tp->rank)
        return ct_err_set(err, CT_EINVAL, "loop: no peer rank %d", peer);
    struct lfence *f = &w->f[tp->rank * w->n + peer];
    uint64_t k = ++t->fout[peer];
    for (int i = 0; i < CT_FENCE_BUFS; i++)
        f->bufs[k & 1][i] = i < n ? bufs[i] : NULL;
    atomic_store_explicit(&f->count, k, memory_order_release);
    t->fwait[peer] = 1;
    wake(w, peer);
    return 0;
}

static int loop_fence_test(struct ct_tp *tp, int peer, struct ct_err *err)
{
    struct loop_tp *t = (struct loop_tp *)tp;
    struct world *w = t->w;
    if (peer < 0 || peer >= tp->size || peer == tp->rank)
        return ct_err_set(err, CT_EINVAL, "loop: no peer rank %d", peer);
    if (!t->fwait[peer])
        return 1;
    struct lfence *f = &w->f[peer * w->n + tp->rank];
    if (atomic_load_explicit(&f->count, memory_order_acquire) < t->fout[peer])
        return 0;
    memcpy(t->fin[peer], f->bufs[t->fout[peer] & 1], sizeof t->fin[peer]);
    t->fwait[peer] = 0;
    return 1;
}

static void *loop_peer_addr(struct ct_tp *tp, int peer, int i, uint64_t off, uint64_t len,
                            struct ct_err *err)
{
    struct loop_tp *t = (struct loop_tp *)tp;
    (void)len;
    char *b = peer >= 0 && peer < tp->size && i >= 0 && i < CT_FENCE_BUFS ? t->fin[peer][i] : NULL;
    if (!b)
        ct_err_set(err, CT_EUNSUPP, "loop: peer rank %d published no buffer %d", peer, i);
    return b ? b + off : NULL;
}

static int loop_mbox_post(struct ct_tp *tp, const void *src, size_t len, struct ct_err *err)
{
    struct loop_tp *t = (struct loop_tp *)tp;
    if (len > CT_MBOX_MAX)
        return ct_err_set(err, CT_EINVAL, "loop: mailbox publish of %zu bytes (at most %u)", len,
                          CT_MBOX_MAX);
    uint64_t k = ++t->mseq;
    struct lbox *b = &t->w->box[tp->rank][k & 1];
    memcpy(b->data, src, len);
    atomic_store_explicit(&b->seq, k, memory_order_release);
    for (int p = 0; p < tp->size; p++)
        if (p != tp->rank)
            wake(t->w, p);
    return 0;
}

static int loop_mbox_test(struct ct_tp *tp, int peer, size_t need, const void **data,
                          struct ct_err *err)
{
    struct loop_tp *t = (struct loop_tp *)tp;
    (void)need;
    if (peer < 0 || peer >= tp->size || peer == tp->rank)
        return ct_err_set(err, CT_EINVAL, "loop: no peer rank %d", peer);
    struct lbox *b = &t->w->box[peer][t->mseq & 1];
    t->mwait[peer] = atomic_load_explicit(&b->seq, memory_order_acquire) != t->mseq;
    if (!t->mwait[peer])
        *data = b->data;
    return !t->mwait[peer];
}

static bool loop_published(struct ct_tp *tp, const void *buf, size_t len)
{
    (void)tp, (void)buf, (void)len;
    return true; /* one address space */
}

const struct ct_tp_ops ct_tp_loop_ops = {
    .name = "loop",
    .summary = "ranks as threads of one process over in-memory queues (tests, fault injection)",
    .caps = CT_TP_INTRA_NODE | CT_TP_IN_PROCESS,
    .built = true,
    .open = loop_open,
    .close = loop_close,
    .alloc = loop_alloc,
    .free = loop_free,
    .isend = loop_isend,
    .irecv = loop_irecv,
    .progress = loop_progress,
    .wait = loop_wait,
    .pending_peers = loop_pending,
    .fence_post = loop_fence_post,
    .fence_test = loop_fence_test,
    .peer_addr = loop_peer_addr,
    .published = loop_published,
    .mbox_post = loop_mbox_post,
    .mbox_test = loop_mbox_test,
};
