/* SPDX-License-Identifier: MIT */
/* The host memory kind: 64-byte aligned malloc'ed buffers, memcpy, the caller's host kernel. */
#include <stdlib.h>
#include <string.h>

#include "device.h"
#include "host.h"

static int host_open(struct ct_mem *m, struct ct_err *err)
{
    m->gpu = -1;
    return 0;
}

static void host_close(struct ct_mem *m)
{
}

static int host_alloc(struct ct_mem *m, size_t bytes, void **p, struct ct_err *err)
{
    size_t n = (bytes + 63) / 64 * 64;
    *p = aligned_alloc(64, n ? n : 64);
    if (!*p)
        return ct_err_set(err, CT_ENOMEM, "host memory: cannot allocate %zu bytes", bytes);
    return 0;
}

static void host_free(struct ct_mem *m, void *p)
{
    free(p);
}

int ct_mem_host_copy(struct ct_mem *m, void *dst, const void *src, size_t bytes, struct ct_err *err)
{
    memmove(dst, src, bytes);
    return 0;
}

static int host_reduce(struct ct_mem *m, void *dst, const void *a, const void *b, size_t n,
                       const struct ct_mem_red *r, struct ct_err *err)
{
    if (!r->host)
        return ct_err_set(err, CT_EUNSUPP, "%s memory: no host kernel for %s %s", m->kind->name,
                          r->op, r->dtype);
    r->host(dst, a, b, n);
    return 0;
}

const struct ct_mem_kind ct_mem_host = {
    .name = "host",
    .summary = "host memory (malloc)",
    .open = host_open,
    .close = host_close,
    .alloc = host_alloc,
    .free = host_free,
    .to_host = ct_mem_host_copy,
    .from_host = ct_mem_host_copy,
    .reduce = host_reduce,
    .host_visible = true,
    .copy = ct_mem_host_copy,
};
