/* SPDX-License-Identifier: MIT */
/* Topology model: lifecycle, appending and finding elements, finalize (ordering, index
 * resolution, switch roles) and the NVLink counting rules. */
#include "probe_int.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

struct ct_topo *ct_topo_new(void)
{
    struct ct_topo *t = ct_xcalloc(1, sizeof *t);
    t->rank_first = -1;
    return t;
}

static void free_nic(struct ct_nic *n)
{
    free(n->cpus);
    free(n->counters);
    free(n->hw_counters);
}

void ct_topo_free(struct ct_topo *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->n_pkg; i++) {
        free(t->pkg[i].model);
        free(t->pkg[i].cpus);
    }
    for (size_t i = 0; i < t->n_numa; i++) {
        free(t->numa[i].cpus);
        free(t->numa[i].model);
        free(t->numa[i].dist);
    }
    for (size_t i = 0; i < t->n_pci; i++)
        free(t->pci[i].name);
    for (size_t i = 0; i < t->n_gpu; i++) {
        free(t->gpu[i].model);
        free(t->gpu[i].osname);
        free(t->gpu[i].cpus);
    }
    for (size_t i = 0; i < t->n_nic; i++)
        free_nic(&t->nic[i]);
    for (size_t i = 0; i < t->n_accel; i++) {
        free(t->accel[i].cpus);
        free(t->accel[i].nbrs);
    }
    for (size_t i = 0; i < t->n_notes; i++)
        free(t->notes[i]);
    free(t->pkg);
    free(t->numa);
    free(t->pci);
    free(t->gpu);
    free(t->nic);
    free(t->nvlink);
    free(t->nvswitch);
    free(t->accel);
    free(t->hint);
    free(t->notes);
    free(t->hostname);
    free(t->origin);
    free(t);
}

void ct_topo_move(struct ct_topo *dst, struct ct_topo *src)
{
    struct ct_topo *old = ct_xmalloc(sizeof *old);
    *old = *dst;
    *dst = *src;
    free(src);
    ct_topo_free(old);
}

void ct_topo_note(struct ct_topo *t, const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    for (size_t i = 0; i < t->n_notes; i++)
        if (!strcmp(t->notes[i], buf))
            return;
    t->notes = ct_xrealloc(t->notes, (t->n_notes + 1) * sizeof *t->notes);
    t->notes[t->n_notes++] = ct_xstrdup(buf);
}

/* Grow an array by one zeroed element; returns the new element's index. */
static size_t grow(void **arr, size_t *n, size_t elem)
{
    *arr = ct_xrealloc(*arr, (*n + 1) * elem);
    memset((char *)*arr + *n * elem, 0, elem);
    return (*n)++;
}

int ct_topo_add_pci(struct ct_topo *t, const char *busid, enum ct_pci_kind kind, int parent)
{
    size_t i = grow((void **)&t->pci, &t->n_pci, sizeof *t->pci);
    struct ct_pci *p = &t->pci[i];
    ct_strlcpy(p->busid, busid ? busid : "", sizeof p->busid);
    p->kind = kind;
    p->parent = parent;
    p->numa = p->package = p->sw = -1;
    return (int)i;
}

int ct_topo_add_gpu(struct ct_topo *t, const char *busid)
{
    size_t i = grow((void **)&t->gpu, &t->n_gpu, sizeof *t->gpu);
    struct ct_gpu *g = &t->gpu[i];
    ct_strlcpy(g->busid, busid ? busid : "", sizeof g->busid);
    g->pci = g->numa = g->index = -1;
    return (int)i;
}

int ct_topo_add_nic(struct ct_topo *t, const char *dev, int port, const char *netdev)
{
    size_t i = grow((void **)&t->nic, &t->n_nic, sizeof *t->nic);
    struct ct_nic *n = &t->nic[i];
    ct_strlcpy(n->dev, dev ? dev : "", sizeof n->dev);
    ct_strlcpy(n->netdev, netdev ? netdev : "", sizeof n->netdev);
    n->port = port;
    n->pci = n->numa = n->netdev_type = n->index = -1;
    return (int)i;
}

int ct_topo_add_numa(struct ct_topo *t, int os_index, const char *cpus)
{
    size_t i = grow((void **)&t->numa, &t->n_numa, sizeof *t->numa);
    t->numa[i].os_index = os_index;
    t->numa[i].cpus = ct_xstrdup(cpus ? cpus : "");
    return (int)i;
}

int ct_topo_add_pkg(struct ct_topo *t, int os_index, const char *cpus)
{
    size_t i = grow((void **)&t->pkg, &t->n_pkg, sizeof *t->pkg);
    t->pkg[i].os_index = os_index;
    t->pkg[i].cpus = ct_xstrdup(cpus ? cpus : "");
    return (int)i;
}

int ct_topo_add_accel(struct ct_topo *t, int index)
{
    size_t i = grow((void **)&t->accel, &t->n_accel, sizeof *t->accel);
    t->accel[i].index = index;
    t->accel[i].pci = t->accel[i].numa = -1;
    return (int)i;
}

int ct_topo_add_nvswitch(struct ct_topo *t, const char *busid)
{
    for (size_t i = 0; i < t->n_nvswitch; i++)
        if (!strcmp(t->nvswitch[i].busid, busid))
            return (int)i;
    size_t i = grow((void **)&t->nvswitch, &t->n_nvswitch, sizeof *t->nvswitch);
    ct_strlcpy(t->nvswitch[i].busid, busid, sizeof t->nvswitch[i].busid);
    t->nvswitch[i].pci = -1;
    return (int)i;
}

void ct_topo_add_nvlink(struct ct_topo *t, int gpu, enum ct_end_kind kind, int peer, int count)
{
    for (size_t i = 0; i < t->n_nvlink; i++) {
        struct ct_nvlink *l = &t->nvlink[i];
        if (l->gpu == gpu && l->peer_kind == kind && l->peer == peer) {
            l->count += count;
            return;
        }
    }
    size_t i = grow((void **)&t->nvlink, &t->n_nvlink, sizeof *t->nvlink);
    t->nvlink[i] = (struct ct_nvlink){gpu, kind, peer, count};
}

void ct_topo_add_hint(struct ct_topo *t, enum ct_ep_kind ka, int a, enum ct_ep_kind kb, int b,
                      enum ct_path path)
{
    size_t i = grow((void **)&t->hint, &t->n_hint, sizeof *t->hint);
    t->hint[i] = (struct ct_hint){ka, kb, a, b, path};
}

int ct_topo_find_pci(const struct ct_topo *t, const char *busid)
{
    for (size_t i = 0; busid && busid[0] && i < t->n_pci; i++)
        if (!strcmp(t->pci[i].busid, busid))
            return (int)i;
    return -1;
}

int ct_topo_find_gpu(const struct ct_topo *t, const char *busid)
{
    for (size_t i = 0; busid && busid[0] && i < t->n_gpu; i++)
        if (!strcmp(t->gpu[i].busid, busid))
            return (int)i;
    return -1;
}

int ct_topo_find_nic(const struct ct_topo *t, const char *dev, int port)
{
    for (size_t i = 0; dev && dev[0] && i < t->n_nic; i++)
        if (!strcmp(t->nic[i].dev, dev) && t->nic[i].port == port)
            return (int)i;
    return -1;
}

int ct_topo_find_netdev(const struct ct_topo *t, const char *netdev)
{
    for (size_t i = 0; netdev && netdev[0] && i < t->n_nic; i++)
        if (!strcmp(t->nic[i].netdev, netdev))
            return (int)i;
    return -1;
}

int ct_topo_find_numa(const struct ct_topo *t, int os_index)
{
    for (size_t i = 0; i < t->n_numa; i++)
        if (t->numa[i].os_index == os_index)
            return (int)i;
    return -1;
}

int ct_topo_find_accel(const struct ct_topo *t, int index)
{
    for (size_t i = 0; i < t->n_accel; i++)
        if (t->accel[i].index == index)
            return (int)i;
    return -1;
}

int ct_pci_numa(const struct ct_topo *t, int pci)
{
    for (int depth = 0; pci >= 0 && (size_t)pci < t->n_pci && depth < 256; depth++) {
        if (t->pci[pci].numa >= 0)
            return t->pci[pci].numa;
        pci = t->pci[pci].parent;
    }
    return -1;
}

/* ---- NVLink counting ---- */

static int links_to(const struct ct_topo *t, int gpu, enum ct_end_kind kind, int peer)
{
    int n = 0;
    for (size_t i = 0; i < t->n_nvlink; i++) {
        const struct ct_nvlink *l = &t->nvlink[i];
        if (l->gpu == gpu && l->peer_kind == kind && l->peer == peer)
            n += l->count;
    }
    return n;
}

int ct_topo_nvlink_count(const struct ct_topo *t, int a, int b)
{
    if (a == b)
        return 0;
    int ab = links_to(t, a, CT_END_GPU, b), ba = links_to(t, b, CT_END_GPU, a);
    int n = ab > ba ? ab : ba;
    for (size_t s = 0; s < t->n_nvswitch; s++) {
        int ca = links_to(t, a, CT_END_NVSWITCH, (int)s),
            cb = links_to(t, b, CT_END_NVSWITCH, (int)s);
        n += ca < cb ? ca : cb;
    }
    return n;
}

int ct_topo_nvlink_total(const struct ct_topo *t, int gpu)
{
    int n = 0;
    for (size_t i = 0; i < t->n_nvlink; i++)
        if (t->nvlink[i].gpu == gpu)
            n += t->nvlink[i].count;
    /* GPU-GPU links recorded only at the peer count too */
    for (size_t i = 0; i < t->n_nvlink; i++) {
        const struct ct_nvlink *l = &t->nvlink[i];
        if (l->peer_kind == CT_END_GPU && l->peer == gpu && !links_to(t, gpu, CT_END_GPU, l->gpu))
            n += l->count;
    }
    return n;
}
