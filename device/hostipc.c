/* SPDX-License-Identifier: MIT */
/*
 * The host-ipc memory kind: host memory with the shape of cuda's. Every buffer is its own
 * memfd, mapped shared; its handle is (pid, descriptor), and a process of the same host maps
 * it through /proc/<pid>/fd/<n>, as a GPU's buffer is mapped through cudaIpcOpenMemHandle.
 * Copies are memcpy and reductions the caller's host kernel, done on return. Its buffers
 * are not the transports' heap: jobs on it run in place by the executor's resident path
 * (backend/resident.h), or are staged through host memory, exactly where cuda memory would
 * be, so both paths run and are checked on hosts without a GPU.
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
};

static int hipc_open(struct ct_mem *m, struct ct_err *err)
{
    m->gpu = -1;
    m->state = NULL; /* the list of this process's buffers */
    return 0;
}

static void hipc_close(struct ct_mem *m)
{
    for (struct seg *s = m->state, *n; s; s = n) {
        n = s->next;
        munmap(s->p, s->bytes);
        close(s->fd);
        free(s);
    }
    m->state = NULL;
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
    s->next = m->state;
    m->state = s;
    *p = s->p;
    return 0;
}

static struct seg **find(struct ct_mem *m, const void *p)
{
    struct seg **s = (struct seg **)&m->state;
    while (*s && (*s)->p != p)
        s = &(*s)->next;
    return s;
}

static void hipc_free(struct ct_mem *m, void *p)
{
    struct seg **at = find(m, p), *s = *at;
    if (!s)
        return;
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
    struct handle x = {(int32_t)getpid(), s->fd};
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
    if (fd < 0 || fstat(fd, &st) < 0 || (uint64_t)st.st_size < h->bytes) {
        int e = fd < 0 ? errno : EINVAL;
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
    .summary = "host memory shared by handle (memfd): the resident path of cuda, without a GPU",
    .open = hipc_open,
    .close = hipc_close,
    .alloc = hipc_alloc,
    .free = hipc_free,
    .to_host = ct_mem_host_copy,
    .from_host = ct_mem_host_copy,
    .reduce = ct_mem_host_reduce,
    .host_visible = false,
    .copy = ct_mem_host_copy,
    .ipc_get = hipc_ipc_get,
    .ipc_open = hipc_ipc_open,
    .ipc_close = hipc_ipc_close,
};
