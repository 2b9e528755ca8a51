/* SPDX-License-Identifier: MIT */
/* The memory-kind table and what every kind shares (staging for fill and check, --gpu-map). */
#include "device.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern const struct ct_mem_kind ct_mem_host, ct_mem_host_ipc, ct_mem_cuda;

static const struct ct_mem_kind *const kinds[] = {&ct_mem_host, &ct_mem_host_ipc, &ct_mem_cuda};

const struct ct_mem_kind *ct_mem_kind_at(size_t i)
{
    return i < sizeof kinds / sizeof kinds[0] ? kinds[i] : NULL;
}

const char *ct_mem_kind_names(void)
{
    static char names[128];
    if (!names[0])
        for (size_t i = 0; ct_mem_kind_at(i); i++)
            snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", i ? ", " : "",
                     kinds[i]->name);
    return names;
}

const struct ct_mem_kind *ct_mem_kind_find(const char *name)
{
    for (size_t i = 0; name && ct_mem_kind_at(i); i++)
        if (!strcmp(kinds[i]->name, name))
            return kinds[i];
    return NULL;
}

int ct_mem_open(struct ct_mem *m, const char *name, int gpu, struct ct_err *err)
{
    memset(m, 0, sizeof *m);
    const struct ct_mem_kind *k = ct_mem_kind_find(name);
    if (!k)
        return ct_err_set(err, CT_EINVAL, "unknown memory kind '%s' (%s)", name,
                          ct_mem_kind_names());
    m->kind = k;
    m->gpu = gpu;
    int rc = k->open(m, err);
    if (rc < 0)
        memset(m, 0, sizeof *m);
    return rc;
}

void ct_mem_close(struct ct_mem *m)
{
    if (m->kind)
        m->kind->close(m);
    memset(m, 0, sizeof *m);
}

struct probe {
    const char *name;
    int gpu;
};

static int probe_in_child(void *arg, struct ct_err *err)
{
    struct probe *p = arg;
    struct ct_mem m;
    CT_TRY(ct_mem_open(&m, p->name, p->gpu, err));
    ct_mem_close(&m);
    return 0;
}

int ct_mem_probe(const char *name, int gpu, struct ct_err *err)
{
    struct probe p = {name, gpu};
    return ct_err_in_child("memory check", probe_in_child, &p, 120, err); /* a few s per GPU */
}

int ct_mem_alloc(struct ct_mem *m, size_t bytes, void **p, struct ct_err *err)
{
    return m->kind->alloc(m, bytes, p, err);
}

void ct_mem_free(struct ct_mem *m, void *p)
{
    if (p)
        m->kind->free(m, p);
}

int ct_mem_to_host(struct ct_mem *m, void *host, const void *src, size_t bytes, struct ct_err *err)
{
    return m->kind->to_host(m, host, src, bytes, err);
}

int ct_mem_from_host(struct ct_mem *m, void *dst, const void *host, size_t bytes,
                     struct ct_err *err)
{
    return m->kind->from_host(m, dst, host, bytes, err);
}

int ct_mem_pin(struct ct_mem *m, void *host, size_t bytes, struct ct_err *err)
{
    return m->kind->pin && host && bytes ? m->kind->pin(m, host, bytes, err) : 0;
}

void ct_mem_unpin(struct ct_mem *m, void *host)
{
    if (m->kind->unpin && host)
        m->kind->unpin(m, host);
}

int ct_mem_reduce(struct ct_mem *m, void *dst, const void *a, const void *b, size_t n,
                  const struct ct_mem_red *r, struct ct_err *err)
{
    CT_TRY(m->kind->reduce(m, dst, a, b, n, r, err));
    return ct_mem_sync(m, err);
}

int ct_mem_reduce_queued(struct ct_mem *m, void *dst, const void *a, const void *b, size_t n,
                         const struct ct_mem_red *r, struct ct_err *err)
{
    return m->kind->reduce(m, dst, a, b, n, r, err);
}

int ct_mem_copy_queued(struct ct_mem *m, void *dst, const void *src, size_t bytes,
                       struct ct_err *err)
{
    if (!m->kind->copy)
        return ct_err_set(err, CT_EUNSUPP, "%s memory: no copies within it", m->kind->name);
    return bytes && dst != src ? m->kind->copy(m, dst, src, bytes, err) : 0;
}

int ct_mem_sync(struct ct_mem *m, struct ct_err *err)
{
    return m->kind->sync ? m->kind->sync(m, err) : 0;
}

bool ct_mem_has_kernel(struct ct_mem *m, const struct ct_mem_red *r)
{
    return m->kind->has_kernel ? m->kind->has_kernel(m, r) : r->host != NULL;
}

bool ct_mem_kind_shares(const struct ct_mem_kind *k)
{
    return k && k->ipc_get && k->ipc_open && k->ipc_close && k->copy;
}

bool ct_mem_shares(const struct ct_mem *m)
{
    return m && ct_mem_kind_shares(m->kind);
}

int ct_mem_ipc_get(struct ct_mem *m, void *p, size_t bytes, struct ct_mem_ipc *h,
                   struct ct_err *err)
{
    if (!ct_mem_shares(m))
        return ct_err_set(err, CT_EUNSUPP, "%s memory cannot be shared between processes",
                          m->kind->name);
    memset(h, 0, sizeof *h);
    h->bytes = bytes;
    return m->kind->ipc_get(m, p, bytes, h, err);
}

int ct_mem_ipc_open(struct ct_mem *m, const struct ct_mem_ipc *h, void **p, struct ct_err *err)
{
    if (!ct_mem_shares(m))
        return ct_err_set(err, CT_EUNSUPP, "%s memory cannot be shared between processes",
                          m->kind->name);
    return m->kind->ipc_open(m, h, p, err);
}

void ct_mem_ipc_close(struct ct_mem *m, void *p, size_t bytes)
{
    if (p && ct_mem_shares(m))
        m->kind->ipc_close(m, p, bytes);
}

int ct_mem_fill(struct ct_mem *m, void *buf, size_t n, size_t esize, ct_mem_fill_fn fn, void *arg,
                struct ct_err *err)
{
    if (m->kind->host_visible) {
        fn(buf, n, arg);
        return 0;
    }
    void *h = malloc(n && esize ? n * esize : 1);
    if (!h)
        return ct_err_set(err, CT_ENOMEM, "fill: %zu bytes of host staging", n * esize);
    fn(h, n, arg);
    int rc = m->kind->from_host(m, buf, h, n * esize, err);
    free(h);
    return rc;
}

int ct_mem_check(struct ct_mem *m, const void *buf, const void *want, size_t n, size_t esize,
                 ct_mem_cmp_fn cmp, void *arg, size_t *wrong, struct ct_err *err)
{
    if (m->kind->host_visible) {
        *wrong = cmp(buf, want, n, arg);
        return 0;
    }
    void *h = malloc(n && esize ? n * esize : 1);
    if (!h)
        return ct_err_set(err, CT_ENOMEM, "check: %zu bytes of host staging", n * esize);
    int rc = m->kind->to_host(m, h, buf, n * esize, err);
    if (rc == 0)
        *wrong = cmp(h, want, n, arg);
    free(h);
    return rc;
}

int ct_mem_gpu_of(const char *map, int local_rank, struct ct_err *err)
{
    if (!map || !*map)
        return local_rank;
    int gpus[256], n = 0;
    const char *s = map;
    while (*s) {
        char *end;
        long v = strtol(s, &end, 10);
        if (end == s || v < 0 || v > 1023 || (*end && *end != ',') || n == 256)
            return ct_err_set(err, CT_EINVAL,
                              "--gpu-map '%s': expected GPU numbers separated by commas "
                              "(e.g. 2,3,0,1)",
                              map);
        gpus[n++] = (int)v;
        s = *end ? end + 1 : end;
        if (*end && !*s)
            return ct_err_set(err, CT_EINVAL, "--gpu-map '%s': ends with a comma", map);
    }
    return gpus[local_rank % n];
}

int ct_mem_gpu_max(const char *map, int n, struct ct_err *err)
{
    int max = -1;
    for (int i = 0; i < (n > 0 ? n : 1); i++) {
        int g = ct_mem_gpu_of(map, i, err);
        if (g < 0)
            return g;
        max = g > max ? g : max;
    }
    return max;
}
