/* SPDX-License-Identifier: MIT */
/*
 * The host-ipc memory kind: host memory with the shape of cuda's. Every buffer is its own
 * memfd, mapped shared; its handle is (pid, descriptor, inode), and a process of the same host
 * maps it through /proc/<pid>/fd/<n>, as a GPU's buffer is mapped through
 * cudaIpcOpenMemHandle. Copies within the kind and reductions (the caller's host kernel, and
 * only for the types and ops device/kernels.cu has) are queued, as on a GPU's stream, and run
 * at sync or before a copy to or from the host, as the legacy default stream orders a
 * cudaMemcpy after the work queued before it: a caller that forgets to wait reads stale
 * bytes here as it would on a GPU. Its buffers are not the transports' heap: jobs on it run
 * in place by the executor's resident path (backend/resident.h), or are staged through host
 * memory, exactly where cuda memory would be, so both paths run and are checked on hosts
 * without a GPU.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "device.h"
#include "host.h"

struct seg {
    void *p;
    size_t bytes;
    int fd;
    struct seg *next;
};

struct handle {
    int32_t pid, fd;
    uint64_t ino; /* the memfd's: a descriptor number reused for another buffer is refused */
};

struct work { /* a queued copy (fn NULL) or reduction */
    void *dst;
    const void *a, *b;
    size_t n;
    ct_reduce_fn fn;
};

struct hipc {
    struct seg *segs; /* this process's buffers */
    struct work *q;   /* queued until sync */
    size_t nq, capq;
};

static int hipc_open(struct ct_mem *m, struct ct_err *err)
{
    m->gpu = -1;
    if (!(m->state = calloc(1, sizeof(struct hipc))))
        return ct_err_set(err, CT_ENOMEM, "host-ipc memory: out of memory");
    return 0;
}

static void hipc_close(struct ct_mem *m)
{
    struct hipc *h = m->state;
    if (!h)
        return;
    for (struct seg *s = h->segs, *n; s; s = n) {
        n = s->next;
        munmap(s->p, s->bytes);
        close(s->fd);
        free(s);
    }
    free(h->q);
    free(h);
    m->state = NULL;
}

static void run_queue(struct hipc *h)
{
    for (size_t i = 0; i < h->nq; i++) {
        struct work *w = &h->q[i];
        if (w->fn)
            w->fn(w->dst, w->a, w->b, w->n);
        else
            memmove(w->dst, w->a, w->n);
    }
    h->nq = 0;
}

static int enqueue(struct ct_mem *m, struct work w, struct ct_err *err)
{
    struct hipc *h = m->state;
    if (h->nq == h->capq) {
        size_t cap = h->capq ? 2 * h->capq : 64;
        struct work *q = realloc(h->q, cap * sizeof *q);
        if (!q)
            return ct_err_set(err, CT_ENOMEM, "host-ipc memory: out of memory");
        h->q = q;
        h->capq = cap;
    }
    h->q[h->nq++] = w;
    return 0;
}

static int hipc_sync(struct ct_mem *m, struct ct_err *err)
{
    run_queue(m->state);
    return 0;
}

/* To or from the host: after the queued work, done on return (cudaMemcpy's order). */
static int hipc_host_copy(struct ct_mem *m, void *dst, const void *src, size_t bytes,
                          struct ct_err *err)
{
    run_queue(m->state);
    return ct_mem_host_copy(m, dst, src, bytes, err);
}

static int hipc_copy(struct ct_mem *m, void *dst, const void *src, size_t bytes, struct ct_err *err)
{
    return enqueue(m, (struct work){dst, src, NULL, bytes, NULL}, err);
}

/* Only what the GPU kernels have (the resident path asks has_kernel first, as for cuda). */
static int hipc_reduce(struct ct_mem *m, void *dst, const void *a, const void *b, size_t n,
                       const struct ct_mem_red *r, struct ct_err *err)
{
    if (!ct_mem_gpu_kernel(r) || !r->host)
        return ct_err_set(err, CT_EUNSUPP,
                          "host-ipc memory: no kernel for %s %s (as on a GPU: sum, prod, min, "
                          "max of bfloat16, float16, float32, float64)",
                          r->op, r->dtype);
    return enqueue(m, (struct work){dst, a, b, n, r->host}, err);
}

static bool hipc_has_kernel(struct ct_mem *m, const struct ct_mem_red *r)
{
    return ct_mem_gpu_kernel(r) && r->host;
}

static size_t pages(size_t bytes)
{
    size_t pg = (size_t)sysconf(_SC_PAGESIZE);
    return bytes ? (bytes + pg - 1) / pg * pg : pg;
}

static int hipc_alloc(struct ct_mem *m, size_t bytes, void **p, struct ct_err *err)
{
    size_t len = pages(bytes);
    struct seg *s = calloc(1, sizeof *s);
    if (!s)
        return ct_err_set(err, CT_ENOMEM, "host-ipc memory: out of memory");
    s->fd = memfd_create("colltune-host-ipc", MFD_CLOEXEC);
    if (s->fd < 0 || ftruncate(s->fd, (off_t)len) < 0) {
        int e = errno;
        if (s->fd >= 0)
            close(s->fd);
        free(s);
        return ct_err_set(err, e == ENOMEM || e == ENOSPC ? CT_ENOMEM : CT_EIO,
                          "host-ipc memory: a memfd of %zu bytes: %s", len, strerror(e));
    }
    s->p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, s->fd, 0);
    if (s->p == MAP_FAILED) {
        int e = errno;
        close(s->fd);
        free(s);
        return ct_err_set(err, CT_ENOMEM, "host-ipc memory: mapping %zu bytes: %s", len,
                          strerror(e));
    }
    s->bytes = len;
    struct hipc *h = m->state;
    s->next = h->segs;
    h->segs = s;
    *p = s->p;
    return 0;
}

static struct seg **find(struct ct_mem *m, const void *p)
{
    struct seg **s = &((struct hipc *)m->state)->segs;
    while (*s && (*s)->p != p)
        s = &(*s)->next;
    return s;
}

static void hipc_free(struct ct_mem *m, void *p)
{
    struct seg **at = find(m, p), *s = *at;
    if (!s)
        return;
    run_queue(m->state); /* cudaFree waits for the work queued before it */
    *at = s->next;
    munmap(s->p, s->bytes);
    close(s->fd);
    free(s);
}

static int hipc_ipc_get(struct ct_mem *m, void *p, size_t bytes, struct ct_mem_ipc *h,
                        struct ct_err *err)
{
    struct seg *s = *find(m, p);
    if (!s || bytes > s->bytes)
        return ct_err_set(err, CT_EINVAL, "host-ipc memory: %p is not a buffer of %zu bytes", p,
                          bytes);
    struct stat st;
    if (fstat(s->fd, &st) < 0)
        return ct_err_set(err, CT_EIO, "host-ipc memory: fstat: %s", strerror(errno));
    struct handle x = {(int32_t)getpid(), s->fd, (uint64_t)st.st_ino};
    memcpy(h->b, &x, sizeof x);
    return 0;
}

static int hipc_ipc_open(struct ct_mem *m, const struct ct_mem_ipc *h, void **p,
                         struct ct_err *err)
{
    struct handle x;
    memcpy(&x, h->b, sizeof x);
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/fd/%d", (int)x.pid, (int)x.fd);
    int fd = open(path, O_RDWR | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0 || (uint64_t)st.st_size < h->bytes ||
        (uint64_t)st.st_ino != x.ino) {
        int e = fd < 0 ? errno : ESTALE;
        if (fd >= 0)
            close(fd);
        return ct_err_set(err, CT_EPEER, "host-ipc memory: opening process %d's buffer %s: %s",
                          (int)x.pid, path, strerror(e));
    }
    void *q = mmap(NULL, pages((size_t)h->bytes), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    int e = errno;
    close(fd);
    if (q == MAP_FAILED)
        return ct_err_set(err, CT_ENOMEM, "host-ipc memory: mapping process %d's buffer: %s",
                          (int)x.pid, strerror(e));
    *p = q;
    return 0;
}

static void hipc_ipc_close(struct ct_mem *m, void *p, size_t bytes)
{
    munmap(p, pages(bytes));
}

const struct ct_mem_kind ct_mem_host_ipc = {
    .name = "host-ipc",
    .summary = "host memory shared by handle (memfd): cuda's paths, without a GPU",
    .open = hipc_open,
    .close = hipc_close,
    .alloc = hipc_alloc,
    .free = hipc_free,
    .to_host = hipc_host_copy,
    .from_host = hipc_host_copy,
    .reduce = hipc_reduce,
    .host_visible = false,
    .copy = hipc_copy,
    .sync = hipc_sync,
    .ipc_get = hipc_ipc_get,
    .ipc_open = hipc_ipc_open,
    .ipc_close = hipc_ipc_close,
    .has_kernel = hipc_has_kernel,
};
