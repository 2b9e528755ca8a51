/* SPDX-License-Identifier: MIT */
/* ct_topo_finalize: order GPUs and NICs by the source's own numbering (every importer), or by
 * PCI bus id as nvidia-smi and NCCL number them when the source has no order (a live or
 * captured sysfs tree); remap every index that points at them, resolve PCI nodes and NUMA,
 * derive which PCIe switch each bridge port belongs to, and the NVLink generation
 * (probe/nvlink_gen.csv) from the model, the NV# pattern or the compute capability. */
#include "probe_int.h"

#include <stdlib.h>
#include <string.h>

/* The source's numbering when every GPU has one; else bus id order when every GPU has a bus id
 * (no numbering: order them as CUDA, nvidia-smi and NCCL do); else the order they came in. */
static int gpu_key_cmp(const struct ct_topo *t, int a, int b)
{
    const struct ct_gpu *x = &t->gpu[a], *y = &t->gpu[b];
    int by_index = 1, by_bus = 1;
    for (size_t i = 0; i < t->n_gpu; i++) {
        by_index &= t->gpu[i].index >= 0;
        by_bus &= t->gpu[i].busid[0] != 0;
    }
    int c = by_index ? x->index - y->index : by_bus ? strcmp(x->busid, y->busid) : 0;
    return c ? c : a - b;
}

/* The source's numbering when every NIC has one, else the source's order (importers); with no
 * source order (live): RDMA ports before plain interfaces, each by PCI bus id, then port. */
static int nic_key_cmp(const struct ct_topo *t, int a, int b)
{
    const struct ct_nic *x = &t->nic[a], *y = &t->nic[b];
    int by_index = 1;
    for (size_t i = 0; i < t->n_nic; i++)
        by_index &= t->nic[i].index >= 0;
    if (by_index)
        return x->index != y->index ? x->index - y->index : a - b;
    if (t->ordered)
        return a - b;
    int ex = !x->dev[0], ey = !y->dev[0];
    if (ex != ey)
        return ex - ey;
    int hx = x->busid[0] != 0, hy = y->busid[0] != 0;
    if (hx != hy)
        return hy - hx;
    int c = strcmp(x->busid, y->busid);
    if (!c)
        c = ct_natcmp(x->dev, y->dev);
    if (!c)
        c = x->port - y->port;
    if (!c)
        c = ct_natcmp(x->netdev, y->netdev);
    return c ? c : a - b;
}

/* Insertion sort of an index permutation (n is small); cmp gives a total order. */
static void sort_perm(const struct ct_topo *t, int *perm, size_t n,
                      int (*cmp)(const struct ct_topo *, int, int))
{
    for (size_t i = 0; i < n; i++)
        perm[i] = (int)i;
    for (size_t i = 1; i < n; i++) {
        int v = perm[i];
        size_t j = i;
        while (j > 0 && cmp(t, perm[j - 1], v) > 0) {
            perm[j] = perm[j - 1];
            j--;
        }
        perm[j] = v;
    }
}

static void reorder_gpus(struct ct_topo *t)
{
    size_t n = t->n_gpu;
    if (n == 1 && t->gpu[0].index < 0)
        t->gpu[0].index = 0;
    if (n < 2)
        return;
    int *perm = ct_xmalloc(n * sizeof *perm), *inv = ct_xmalloc(n * sizeof *inv);
    sort_perm(t, perm, n, gpu_key_cmp);
    struct ct_gpu *g = ct_xmalloc(n * sizeof *g);
    for (size_t i = 0; i < n; i++) {
        g[i] = t->gpu[perm[i]];
        inv[perm[i]] = (int)i;
    }
    free(t->gpu);
    t->gpu = g;
    for (size_t i = 0; i < n; i++)
        if (t->gpu[i].index < 0)
            t->gpu[i].index = (int)i;
    for (size_t i = 0; i < t->n_nvlink; i++) {
        struct ct_nvlink *l = &t->nvlink[i];
        l->gpu = inv[l->gpu];
        if (l->peer_kind == CT_END_GPU && l->peer >= 0 && (size_t)l->peer < n)
            l->peer = inv[l->peer];
    }
    for (size_t i = 0; i < t->n_hint; i++) {
        struct ct_hint *h = &t->hint[i];
        if (h->ka == CT_EP_GPU)
            h->a = inv[h->a];
        if (h->kb == CT_EP_GPU)
            h->b = inv[h->b];
    }
    free(perm);
    free(inv);
}

static void reorder_nics(struct ct_topo *t)
{
    size_t n = t->n_nic;
    if (n == 1 && t->nic[0].index < 0)
        t->nic[0].index = 0;
    if (n < 2)
        return;
    int *perm = ct_xmalloc(n * sizeof *perm), *inv = ct_xmalloc(n * sizeof *inv);
    sort_perm(t, perm, n, nic_key_cmp);
    struct ct_nic *x = ct_xmalloc(n * sizeof *x);
    for (size_t i = 0; i < n; i++) {
        x[i] = t->nic[perm[i]];
        inv[perm[i]] = (int)i;
    }
    free(t->nic);
    t->nic = x;
    for (size_t i = 0; i < n; i++)
        if (t->nic[i].index < 0)
            t->nic[i].index = (int)i;
    for (size_t i = 0; i < t->n_hint; i++) {
        struct ct_hint *h = &t->hint[i];
        if (h->ka == CT_EP_NIC)
            h->a = inv[h->a];
        if (h->kb == CT_EP_NIC)
            h->b = inv[h->b];
    }
    free(perm);
    free(inv);
}

/* Bridge ports alternate below a host bridge: root port (depth 1), switch upstream port
 * (depth 2), downstream ports (depth 3), upstream of the next switch (4) ... A downstream port
 * belongs to the switch of its parent upstream port; a root port to none. */
static void derive_switches(struct ct_topo *t)
{
    for (size_t i = 0; i < t->n_pci; i++) {
        struct ct_pci *p = &t->pci[i];
        p->sw = -1;
        if (p->kind == CT_PCI_SWITCH) {
            p->sw = (int)i;
            continue;
        }
        if (p->kind != CT_PCI_BRIDGE)
            continue;
        int depth = 1, q = p->parent;
        while (q >= 0 && t->pci[q].kind == CT_PCI_BRIDGE && depth < 256) {
            depth++;
            q = t->pci[q].parent;
        }
        if (depth >= 2)
            p->sw = depth % 2 == 0 ? (int)i : p->parent;
    }
}

static void resolve_endpoints(struct ct_topo *t)
{
    for (size_t i = 0; i < t->n_gpu; i++) {
        struct ct_gpu *g = &t->gpu[i];
        if (g->pci < 0)
            g->pci = ct_topo_find_pci(t, g->busid);
        if (g->numa < 0)
            g->numa = ct_pci_numa(t, g->pci);
        int k = g->numa >= 0 ? ct_topo_find_numa(t, g->numa) : -1;
        if (!g->cpus && k >= 0 && t->numa[k].cpus[0])
            g->cpus = ct_xstrdup(t->numa[k].cpus);
    }
    for (size_t i = 0; i < t->n_nic; i++) {
        struct ct_nic *n = &t->nic[i];
        if (n->pci < 0)
            n->pci = ct_topo_find_pci(t, n->busid);
        if (n->numa < 0)
            n->numa = ct_pci_numa(t, n->pci);
        int k = n->numa >= 0 ? ct_topo_find_numa(t, n->numa) : -1;
        if (!n->cpus && k >= 0 && t->numa[k].cpus[0])
            n->cpus = ct_xstrdup(t->numa[k].cpus);
    }
    for (size_t i = 0; i < t->n_nvswitch; i++)
        if (t->nvswitch[i].pci < 0)
            t->nvswitch[i].pci = ct_topo_find_pci(t, t->nvswitch[i].busid);
    for (size_t i = 0; i < t->n_accel; i++) {
        struct ct_accel *a = &t->accel[i];
        if (a->pci < 0)
            a->pci = ct_topo_find_pci(t, a->busid);
        if (a->numa < 0)
            a->numa = ct_pci_numa(t, a->pci);
    }
}

static int accel_cmp(const void *a, const void *b)
{
    const struct ct_accel *x = a, *y = b;
    return (x->index > y->index) - (x->index < y->index);
}

static int numa_cmp(const void *a, const void *b)
{
    const struct ct_numa *x = a, *y = b;
    return (x->os_index > y->os_index) - (x->os_index < y->os_index);
}

static void set_gen(struct ct_gpu *g, const struct ct_nvlink_gen *r, const char *basis)
{
    ct_strlcpy(g->nvlink_gen, r->gen, sizeof g->nvlink_gen);
    ct_strlcpy(g->nvlink_basis, basis, sizeof g->nvlink_basis);
    if (!g->nvlink_gbps)
        g->nvlink_gbps = r->link_gbs;
}

/* The fabric the NV# pattern shows: links per GPU and whether they go through NVSwitches, when
 * every GPU pair is linked with the same count; 0 otherwise. */
static int nv_pattern(const struct ct_topo *t, int *switched, int *per_pair)
{
    int n = (int)t->n_gpu, pair = 0, total = -1;
    *switched = 0;
    *per_pair = 0;
    for (size_t i = 0; i < t->n_nvlink; i++)
        *switched |= t->nvlink[i].peer_kind == CT_END_NVSWITCH;
    for (int a = 0; a < n; a++) {
        int tot = ct_topo_nvlink_total(t, a);
        if (total >= 0 && tot != total)
            return 0;
        total = tot;
        for (int b = 0; b < n; b++) {
            int c = a == b ? -1 : ct_topo_nvlink_count(t, a, b);
            if (c == 0 || (c > 0 && pair && c != pair))
                return 0;
            pair = c > 0 ? c : pair;
        }
    }
    *per_pair = pair;
    return n >= 2 && pair > 0 ? total : 0;
}

/* NVLink generation and per-link rate of every GPU with NVLinks: from its stated model, else
 * inferred from the NV# pattern (marked "NV18"), else guessed from the compute capability. */
static void nvlink_generation(struct ct_topo *t)
{
    int switched = 0, pair = 0, links = nv_pattern(t, &switched, &pair);
    const struct ct_nvlink_gen *fab = links ? ct_nvlink_gen_links(links, switched) : NULL;
    char nv[16];
    snprintf(nv, sizeof nv, "NV%d", pair);
    for (size_t i = 0; i < t->n_gpu; i++) {
        struct ct_gpu *g = &t->gpu[i];
        if (g->nvlink_gen[0] || ct_topo_nvlink_total(t, (int)i) <= 0)
            continue;
        const struct ct_nvlink_gen *r = ct_nvlink_gen_model(g->model);
        char sm[16];
        snprintf(sm, sizeof sm, "sm %d", g->sm);
        if (r)
            set_gen(g, r, "model");
        else if (fab)
            set_gen(g, fab, nv);
        else if ((r = ct_nvlink_gen_sm(g->sm)))
            set_gen(g, r, sm);
    }
    if (fab && !t->nvswitch_gen[0] && strcmp(fab->nvswitch, "none")) {
        ct_strlcpy(t->nvswitch_gen, fab->nvswitch, sizeof t->nvswitch_gen);
        ct_strlcpy(t->nvswitch_basis, nv, sizeof t->nvswitch_basis);
    }
}

void ct_topo_finalize(struct ct_topo *t)
{
    /* NUMA distance rows are indexed by position: only sort when there are none. */
    int have_dist = 0;
    for (size_t i = 0; i < t->n_numa; i++)
        have_dist |= t->numa[i].n_dist > 0;
    if (!have_dist && t->n_numa > 1)
        qsort(t->numa, t->n_numa, sizeof *t->numa, numa_cmp);
    if (t->n_accel > 1)
        qsort(t->accel, t->n_accel, sizeof *t->accel, accel_cmp);
    reorder_gpus(t);
    reorder_nics(t);
    derive_switches(t);
    resolve_endpoints(t);
    nvlink_generation(t);
    if (!t->torus_rows && t->n_accel > 1) {
        int r, c;
        if (ct_torus_infer(t, &r, &c) == 0) {
            t->torus_rows = r;
            t->torus_cols = c;
        }
    }
}
