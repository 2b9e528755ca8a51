/* SPDX-License-Identifier: MIT */
/*
 * Bootstrap: a TCP star through rank 0 (launchers, --local), and an in-process world
 * for ranks that are threads. Both offer allgather of equal-size blobs and a barrier.
 */
#include "boot.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../lib/clock.h"
#include "../lib/sock.h"

#define BOOT_MAGIC 0x43544254u /* "CTBT" */
#define BOOT_MAX_BLOB (64u << 20)

void ct_boot_close(struct ct_boot *b)
{
    if (b)
        b->ops->close(b);
}

/* Hosts table -> node index, local rank/size. */
static void fill_layout(struct ct_boot *b)
{
    b->nnodes = 0;
    b->local_rank = 0;
    b->local_size = 0;
    b->node = -1;
    for (int r = 0; r < b->size; r++) {
        int first = 1;
        for (int q = 0; q < r; q++)
            if (!strcmp(b->hosts[q], b->hosts[r])) {
                first = 0;
                break;
            }
        if (first) {
            if (!strcmp(b->hosts[r], b->host))
                b->node = b->nnodes;
            b->nnodes++;
        }
        if (!strcmp(b->hosts[r], b->host)) {
            if (r < b->rank)
                b->local_rank++;
            b->local_size++;
        }
    }
}

/* ---------------------------------------------------------------- tcp star */

struct hello {
    uint32_t magic;
    int32_t rank, size;
    uint32_t pad;
    uint64_t job_id;
    char host[64];
};

struct boot_tcp {
    struct ct_boot b;
    int *fds; /* root: fd per rank (fds[0] = -1); others: fds[0] = link to root */
};

static int64_t deadline(struct ct_boot *b)
{
    return ct_now_ns() + b->timeout_ns;
}

static int peer_err(struct ct_boot *b, int r, struct ct_err *err)
{
    return ct_err_wrap(err, "bootstrap: rank %d (%s): ", r, b->hosts ? b->hosts[r] : "?");
}

static int tcp_allgather(struct ct_boot *bb, const void *mine, size_t len, void *all,
                         struct ct_err *err)
{
    struct boot_tcp *b = (struct boot_tcp *)bb;
    int64_t dl = deadline(bb);
    uint64_t l64 = len;
    if (bb->rank == 0) {
        memcpy(all, mine, len);
        for (int r = 1; r < bb->size; r++) {
            uint64_t got;
            if (ct_sock_read_all(b->fds[r], &got, sizeof got, dl, err) < 0)
                return peer_err(bb, r, err);
            if (got != l64)
                return ct_err_set(err, CT_EPEER,
                                  "bootstrap: rank %d (%s) sent %llu bytes, expected %zu", r,
                                  bb->hosts[r], (unsigned long long)got, len);
            if (ct_sock_read_all(b->fds[r], (char *)all + (size_t)r * len, len, dl, err) < 0)
                return peer_err(bb, r, err);
        }
        for (int r = 1; r < bb->size; r++)
            if (ct_sock_write_all(b->fds[r], all, len * (size_t)bb->size, dl, err) < 0)
                return peer_err(bb, r, err);
        return 0;
    }
    if (ct_sock_write_all(b->fds[0], &l64, sizeof l64, dl, err) < 0 ||
        ct_sock_write_all(b->fds[0], mine, len, dl, err) < 0 ||
        ct_sock_read_all(b->fds[0], all, len * (size_t)bb->size, dl, err) < 0)
        return peer_err(bb, 0, err);
    return 0;
}

static int tcp_barrier(struct ct_boot *b, struct ct_err *err)
{
    char one = 1, *all = ct_xmalloc((size_t)b->size);
    int rc = tcp_allgather(b, &one, 1, all, err);
    free(all);
    return rc;
}

static void tcp_close(struct ct_boot *bb)
{
    struct boot_tcp *b = (struct boot_tcp *)bb;
    int n = bb->rank == 0 ? bb->size : 1;
    for (int i = 0; i < n; i++)
        if (b->fds[i] >= 0)
            close(b->fds[i]);
    free(b->fds);
    free(bb->hosts);
    free(b);
}

static const struct ct_boot_ops tcp_ops = {tcp_allgather, tcp_barrier, tcp_close};

static int root_accept(struct boot_tcp *b, int lfd, struct ct_err *err)
{
    struct ct_boot *bb = &b->b;
    int64_t dl = deadline(bb);
    for (int got = 1; got < bb->size; got++) {
        int fd = ct_sock_accept(lfd, dl, err);
        if (fd < 0)
            return ct_err_wrap(err, "bootstrap: %d of %d ranks connected: ", got, bb->size);
        struct hello h;
        if (ct_sock_read_all(fd, &h, sizeof h, dl, err) < 0 || h.magic != BOOT_MAGIC ||
            h.size != bb->size || h.rank <= 0 || h.rank >= bb->size || b->fds[h.rank] >= 0) {
            /* a stray or foreign connection: drop it and keep waiting */
            close(fd);
            got--;
            ct_err_clear(err);
            continue;
        }
        h.host[sizeof h.host - 1] = 0;
        b->fds[h.rank] = fd;
        memcpy(bb->hosts[h.rank], h.host, sizeof h.host);
    }
    /* send everyone the job id and the host table */
    for (int r = 1; r < bb->size; r++) {
        if (ct_sock_write_all(b->fds[r], &bb->job_id, sizeof bb->job_id, dl, err) < 0 ||
            ct_sock_write_all(b->fds[r], bb->hosts, sizeof(*bb->hosts) * (size_t)bb->size, dl,
                              err) < 0)
            return peer_err(bb, r, err);
    }
    return 0;
}

int ct_boot_tcp_open(struct ct_boot **out, int rank, int size, const char *root_addr,
                     int listen_fd, uint64_t job_id, const char *host_override,
                     int64_t timeout_ns, struct ct_err *err)
{
    if (size < 1 || rank < 0 || rank >= size)
        return ct_err_set(err, CT_EINVAL, "bootstrap: rank %d of %d is not valid", rank, size);
    struct boot_tcp *b = ct_xcalloc(1, sizeof *b);
    struct ct_boot *bb = &b->b;
    bb->ops = &tcp_ops;
    bb->rank = rank;
    bb->size = size;
    bb->job_id = job_id;
    bb->timeout_ns = timeout_ns > 0 ? timeout_ns : 60 * 1000000000LL;
    if (host_override)
        snprintf(bb->host, sizeof bb->host, "%s", host_override);
    else if (gethostname(bb->host, sizeof bb->host) < 0)
        snprintf(bb->host, sizeof bb->host, "unknown");
    bb->host[sizeof bb->host - 1] = 0;
    bb->hosts = ct_xcalloc((size_t)size, sizeof *bb->hosts);
    memcpy(bb->hosts[rank], bb->host, sizeof bb->host);
    b->fds = ct_xmalloc(sizeof(int) * (size_t)size);
    for (int i = 0; i < size; i++)
        b->fds[i] = -1;
    int rc = 0;
    char host[256];
    int port = 0;
    if (size == 1) {
        /* nothing to connect */
    } else if (rank == 0) {
        int lfd = listen_fd;
        if (lfd < 0) {
            if ((rc = ct_sock_parse_addr(root_addr, host, sizeof host, &port, err)) < 0)
                goto fail;
            if ((lfd = ct_sock_listen(NULL, port, size, NULL, err)) < 0) {
                rc = lfd;
                goto fail;
            }
        }
        rc = root_accept(b, lfd, err);
        if (listen_fd < 0)
            close(lfd);
        if (rc < 0)
            goto fail;
    } else {
        if ((rc = ct_sock_parse_addr(root_addr, host, sizeof host, &port, err)) < 0)
            goto fail;
        int64_t dl = deadline(bb);
        int fd = ct_sock_connect(host, port, dl, err);
        if (fd < 0) {
            rc = ct_err_wrap(err, "bootstrap: rank %d cannot reach root: ", rank);
            goto fail;
        }
        b->fds[0] = fd;
        struct hello h = {BOOT_MAGIC, rank, size, 0, job_id, {0}};
        memcpy(h.host, bb->host, sizeof h.host);
        if ((rc = ct_sock_write_all(fd, &h, sizeof h, dl, err)) < 0 ||
            (rc = ct_sock_read_all(fd, &bb->job_id, sizeof bb->job_id, dl, err)) < 0 ||
            (rc = ct_sock_read_all(fd, bb->hosts, sizeof(*bb->hosts) * (size_t)size, dl, err)) <
                0) {
            rc = peer_err(bb, 0, err);
            goto fail;
        }
    }
    fill_layout(bb);
    *out = bb;
    return 0;
fail:
    tcp_close(bb);
    return rc;
}

/* ---------------------------------------------------------------- in-process */

struct ct_boot_world {
    int n, rpn;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int arrived, departed, draining;
    char *blob; /* n * len */
    size_t len;
    void *shared;
    void (*destroy)(void *);
    int64_t timeout_ns;
    int broken; /* a rank timed out or disagreed: every later call fails */
    char why[160];
    uint64_t job_id;
};

struct boot_inproc {
    struct ct_boot b;
    struct ct_boot_world *w;
};

struct ct_boot_world *ct_boot_world_new(int n, int rpn)
{
    struct ct_boot_world *w = ct_xcalloc(1, sizeof *w);
    w->n = n;
    w->rpn = rpn > 0 ? rpn : n;
    pthread_mutex_init(&w->mu, NULL);
    pthread_cond_init(&w->cv, NULL);
    w->job_id = ((uint64_t)getpid() << 32) ^ (uint64_t)ct_now_ns();
    w->timeout_ns = 60 * 1000000000LL;
    return w;
}

void ct_boot_world_set_timeout(struct ct_boot_world *w, int64_t timeout_ns)
{
    w->timeout_ns = timeout_ns;
}

void ct_boot_world_free(struct ct_boot_world *w)
{
    if (!w)
        return;
    if (w->shared && w->destroy)
        w->destroy(w->shared);
    pthread_mutex_destroy(&w->mu);
    pthread_cond_destroy(&w->cv);
    free(w->blob);
    free(w);
}

static int world_broken(struct ct_boot_world *w, struct ct_err *err)
{
    pthread_cond_broadcast(&w->cv);
    pthread_mutex_unlock(&w->mu);
    return ct_err_set(err, CT_EPEER, "bootstrap: %s", w->why);
}

/* Wait on the world's condition until cond holds, the world breaks, or the deadline. */
#define WORLD_WAIT(w, cond, ts, rank)                                                              \
    while (!(cond) && !(w)->broken) {                                                              \
        if (pthread_cond_timedwait(&(w)->cv, &(w)->mu, &(ts)) == ETIMEDOUT && !(cond)) {           \
            (w)->broken = 1;                                                                       \
            snprintf((w)->why, sizeof (w)->why, "rank %d timed out waiting for the others",       \
                     (rank));                                                                      \
        }                                                                                          \
    }

static int inproc_allgather(struct ct_boot *bb, const void *mine, size_t len, void *all,
                            struct ct_err *err)
{
    struct ct_boot_world *w = ((struct boot_inproc *)bb)->w;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    int64_t ns = ts.tv_nsec + bb->timeout_ns;
    ts.tv_sec += ns / 1000000000LL;
    ts.tv_nsec = ns % 1000000000LL;
    pthread_mutex_lock(&w->mu);
    WORLD_WAIT(w, !w->draining, ts, bb->rank); /* the previous round is still being copied */
    if (w->broken)
        return world_broken(w, err);
    if (w->arrived == 0) {
        free(w->blob);
        w->blob = ct_xmalloc(len * (size_t)w->n + 1);
        w->len = len;
    } else if (w->len != len) {
        w->broken = 1;
        snprintf(w->why, sizeof w->why, "rank %d sent %zu bytes where others sent %zu", bb->rank,
                 len, w->len);
        return world_broken(w, err);
    }
    memcpy(w->blob + (size_t)bb->rank * len, mine, len);
    if (++w->arrived == w->n) {
        w->draining = 1;
        pthread_cond_broadcast(&w->cv);
    }
    WORLD_WAIT(w, w->draining, ts, bb->rank);
    if (w->broken)
        return world_broken(w, err);
    memcpy(all, w->blob, len * (size_t)w->n);
    if (++w->departed == w->n) {
        w->arrived = w->departed = 0;
        w->draining = 0;
        pthread_cond_broadcast(&w->cv);
    }
    pthread_mutex_unlock(&w->mu);
    return 0;
}

static int inproc_barrier(struct ct_boot *b, struct ct_err *err)
{
    char one = 1, *all = ct_xmalloc((size_t)b->size);
    int rc = inproc_allgather(b, &one, 1, all, err);
    free(all);
    return rc;
}

static void inproc_close(struct ct_boot *bb)
{
    free(bb->hosts);
    free(bb);
}

static const struct ct_boot_ops inproc_ops = {inproc_allgather, inproc_barrier, inproc_close};

int ct_boot_inproc_open(struct ct_boot **out, struct ct_boot_world *w, int rank,
                        struct ct_err *err)
{
    if (rank < 0 || rank >= w->n)
        return ct_err_set(err, CT_EINVAL, "bootstrap: rank %d of %d is not valid", rank, w->n);
    struct boot_inproc *b = ct_xcalloc(1, sizeof *b);
    struct ct_boot *bb = &b->b;
    b->w = w;
    bb->ops = &inproc_ops;
    bb->rank = rank;
    bb->size = w->n;
    bb->job_id = w->job_id;
    bb->timeout_ns = w->timeout_ns;
    bb->hosts = ct_xcalloc((size_t)w->n, sizeof *bb->hosts);
    for (int r = 0; r < w->n; r++)
        snprintf(bb->hosts[r], sizeof bb->hosts[r], "thread-node%d", r / w->rpn);
    memcpy(bb->host, bb->hosts[rank], sizeof bb->host);
    fill_layout(bb);
    *out = bb;
    return 0;
}

void *ct_boot_world_slot(struct ct_boot *bb, void *(*create)(int n, void *arg),
                         void (*destroy)(void *), void *arg)
{
    struct ct_boot_world *w = ((struct boot_inproc *)bb)->w;
    pthread_mutex_lock(&w->mu);
    if (!w->shared) {
        w->shared = create(w->n, arg);
        w->destroy = destroy;
    }
    void *p = w->shared;
    pthread_mutex_unlock(&w->mu);
    return p;
}
