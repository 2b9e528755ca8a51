/* SPDX-License-Identifier: MIT */
/* Copy bandwidth of a memory kind's device (device.h): host to device, device to host and
 * device to device, timed on the host clock around copies that are finished on return. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/clock.h"
#include "device.h"

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static int copy_once(struct ct_mem *m, struct ct_mem *peer, enum ct_mem_dir dir, void *host,
                     void *dev, void *far, size_t bytes, struct ct_err *err)
{
    switch (dir) {
    case CT_MEM_H2D: return ct_mem_from_host(m, dev, host, bytes, err);
    case CT_MEM_D2H: return ct_mem_to_host(m, host, dev, bytes, err);
    default: return m->kind->copy_peer(m, far, peer, dev, bytes, err);
    }
}

int ct_mem_copy_gbs(struct ct_mem *m, struct ct_mem *peer, enum ct_mem_dir dir, size_t bytes,
                    int iters, double *gbs, struct ct_err *err)
{
    if (m->kind->host_visible || (dir == CT_MEM_PEER && (!peer || !m->kind->copy_peer)))
        return ct_err_set(err, CT_EUNSUPP, "%s memory: no %s copies to time", m->kind->name,
                          dir == CT_MEM_PEER ? "device to device" : "host to device");
    iters = iters > 0 ? iters : 1;
    void *host = NULL, *dev = NULL, *far = NULL;
    double *t = calloc((size_t)iters, sizeof *t);
    int rc = t ? 0 : ct_err_set(err, CT_ENOMEM, "copy timing: out of memory");
    bool pinned = false;
    if (rc == 0 && dir != CT_MEM_PEER) {
        if (!(host = malloc(bytes)))
            rc = ct_err_set(err, CT_ENOMEM, "copy timing: %zu bytes of host memory", bytes);
        else if ((rc = ct_mem_pin(m, host, bytes, err)) == 0) {
            pinned = true;
            memset(host, 1, bytes); /* faulted in before it is timed */
        }
    }
    if (rc == 0)
        rc = ct_mem_alloc(m, bytes, &dev, err);
    if (rc == 0 && dir == CT_MEM_PEER)
        rc = ct_mem_alloc(peer, bytes, &far, err);
    for (int i = -1; rc == 0 && i < iters; i++) { /* i = -1: untimed */
        int64_t t0 = ct_now_ns();
        rc = copy_once(m, peer, dir, host, dev, far, bytes, err);
        if (i >= 0)
            t[i] = (double)(ct_now_ns() - t0);
    }
    if (rc == 0) {
        qsort(t, (size_t)iters, sizeof *t, cmp_double);
        double med = iters % 2 ? t[iters / 2] : (t[iters / 2 - 1] + t[iters / 2]) / 2;
        *gbs = med > 0 ? (double)bytes / med : 0;
    }
    if (far)
        ct_mem_free(peer, far);
    ct_mem_free(m, dev);
    if (pinned)
        ct_mem_unpin(m, host);
    free(host);
    free(t);
    return rc;
}

int ct_mem_devices(struct ct_mem *m)
{
    return m->kind->devices ? m->kind->devices(m) : 0;
}

void ct_mem_describe(struct ct_mem *m, char *buf, size_t len)
{
    char bus[64], name[256] = "";
    struct ct_err err = {0};
    if (!m || !m->kind || !m->state || !m->kind->bus_id) {
        snprintf(buf, len, "%2d [cpu]", 0);
        return;
    }
    if (ct_mem_bus_id(m, bus, sizeof bus, &err) < 0)
        snprintf(bus, sizeof bus, "?"); /* a device whose address its runtime would not say */
    char *fn = strrchr(bus, '.'); /* the function: nccl-tests prints domain:bus:device */
    if (fn)
        *fn = 0;
    if (m->kind->device_name && m->kind->device_name(m, name, sizeof name) < 0)
        name[0] = 0;
    snprintf(buf, len, "%2d [%s]%s%s", m->gpu, bus, name[0] ? " " : "", name);
}

int ct_mem_bus_id(struct ct_mem *m, char *buf, size_t len, struct ct_err *err)
{
    char raw[64] = "";
    if (!m->kind->bus_id)
        return ct_err_set(err, CT_EUNSUPP, "%s memory has no device", m->kind->name);
    CT_TRY(m->kind->bus_id(m, raw, sizeof raw, err));
    const char *p = raw;
    while (strlen(p) > 12 && *p == '0') /* NVML's "00000000:A4:00.0": a 4-digit domain */
        p++;
    snprintf(buf, len, "%s", p);
    for (char *q = buf; *q; q++)
        *q = (char)tolower((unsigned char)*q);
    return 0;
}
