/* SPDX-License-Identifier: MIT */
/* Path classes between GPUs and NICs computed from the PCI tree (nvidia-smi vocabulary), the
 * GPU/NIC matrix and the rails derived from it. */
#include "probe_int.h"

#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 64

static int chain(const struct ct_topo *t, int p, int *out)
{
    int n = 0;
    while (p >= 0 && (size_t)p < t->n_pci && n < MAX_DEPTH) {
        out[n++] = p;
        p = t->pci[p].parent;
    }
    return n;
}

static int root_package(const struct ct_topo *t, const int *c, int n)
{
    for (int i = 0; i < n; i++)
        if (t->pci[c[i]].package >= 0)
            return t->pci[c[i]].package;
    return -1;
}

/* Two PCI trees with no common node: same NUMA node -> NODE, else SYS. */
static enum ct_path locality(const struct ct_topo *t, const int *ca, int na, const int *cb, int nb)
{
    int ma = ct_pci_numa(t, ca[0]), mb = ct_pci_numa(t, cb[0]);
    if (ma >= 0 && mb >= 0)
        return ma == mb ? CT_PATH_NODE : CT_PATH_SYS;
    int pa = root_package(t, ca, na), pb = root_package(t, cb, nb);
    if (pa >= 0 && pb >= 0)
        return pa == pb ? CT_PATH_NODE : CT_PATH_SYS;
    if (t->n_numa <= 1 && t->n_pkg <= 1)
        return CT_PATH_NODE;
    return CT_PATH_UNKNOWN;
}

static void add_sw(int *sw, int *n, int s)
{
    if (s < 0)
        return;
    for (int i = 0; i < *n; i++)
        if (sw[i] == s)
            return;
    sw[(*n)++] = s;
}

enum ct_path ct_topo_pci_path(const struct ct_topo *t, int a, int b)
{
    if (a < 0 || b < 0 || (size_t)a >= t->n_pci || (size_t)b >= t->n_pci)
        return CT_PATH_UNKNOWN;
    if (a == b)
        return CT_PATH_PIX;
    int ca[MAX_DEPTH], cb[MAX_DEPTH];
    int na = chain(t, a, ca), nb = chain(t, b, cb);
    int ia = -1, ib = -1;
    for (int j = 0; j < nb && ia < 0; j++)
        for (int i = 0; i < na; i++)
            if (ca[i] == cb[j]) {
                ia = i;
                ib = j;
                break;
            }
    if (ia < 0)
        return locality(t, ca, na, cb, nb);
    if (t->pci[ca[ia]].kind == CT_PCI_HOST)
        return CT_PATH_PHB;
    /* Count the switches crossed: every node strictly between the endpoints. */
    int sw[2 * MAX_DEPTH], nsw = 0;
    for (int i = 1; i <= ia; i++)
        if (ca[i] != b)
            add_sw(sw, &nsw, t->pci[ca[i]].sw);
    for (int j = 1; j < ib; j++)
        add_sw(sw, &nsw, t->pci[cb[j]].sw);
    return nsw <= 1 ? CT_PATH_PIX : CT_PATH_PXB;
}

static int nic_in_matrix(const struct ct_topo *t, size_t i)
{
    const struct ct_nic *n = &t->nic[i];
    if (n->kind == CT_NIC_ETH || (n->kind == CT_NIC_UNKNOWN && !n->port))
        return 0; /* plain network interfaces: nvidia-smi lists RDMA devices only */
    for (size_t j = 0; j < i; j++) /* one entry per adapter: its first port */
        if (n->dev[0] && !strcmp(t->nic[j].dev, n->dev))
            return 0;
    return 1;
}

static int hint_for(const struct ct_topo *t, enum ct_ep_kind ka, int a, enum ct_ep_kind kb, int b,
                    enum ct_path *out)
{
    for (size_t i = 0; i < t->n_hint; i++) {
        const struct ct_hint *h = &t->hint[i];
        if ((h->ka == ka && h->a == a && h->kb == kb && h->b == b) ||
            (h->ka == kb && h->a == b && h->kb == ka && h->b == a)) {
            *out = h->path;
            return 1;
        }
    }
    return 0;
}

static void fill_cell(const struct ct_topo *t, const struct ct_matrix *m, unsigned flags, size_t i,
                      size_t j)
{
    size_t at = i * m->n + j;
    enum ct_ep_kind ki = i < m->n_gpu ? CT_EP_GPU : CT_EP_NIC;
    enum ct_ep_kind kj = j < m->n_gpu ? CT_EP_GPU : CT_EP_NIC;
    int xi = ki == CT_EP_GPU ? (int)i : m->nic[i - m->n_gpu];
    int xj = kj == CT_EP_GPU ? (int)j : m->nic[j - m->n_gpu];
    m->nv[at] = 0;
    m->hint[at] = 0;
    if (i == j) {
        m->cls[at] = CT_PATH_X;
        return;
    }
    if (ki == CT_EP_GPU && kj == CT_EP_GPU && !(flags & CT_MATRIX_PCI_ONLY)) {
        int nv = ct_topo_nvlink_count(t, xi, xj);
        if (nv > 0) {
            m->cls[at] = CT_PATH_NV;
            m->nv[at] = nv;
            return;
        }
    }
    int pi = ki == CT_EP_GPU ? t->gpu[xi].pci : t->nic[xi].pci;
    int pj = kj == CT_EP_GPU ? t->gpu[xj].pci : t->nic[xj].pci;
    enum ct_path p = ct_topo_pci_path(t, pi, pj), h;
    if (p == CT_PATH_UNKNOWN && hint_for(t, ki, xi, kj, xj, &h)) {
        p = h;
        m->hint[at] = 1;
    }
    m->cls[at] = p;
}

void ct_matrix_build(const struct ct_topo *t, unsigned flags, struct ct_matrix *m)
{
    memset(m, 0, sizeof *m);
    m->n_gpu = t->n_gpu;
    m->nic = ct_xcalloc(t->n_nic + 1, sizeof *m->nic);
    size_t k = 0;
    for (size_t i = 0; i < t->n_nic; i++)
        if (nic_in_matrix(t, i))
            m->nic[k++] = (int)i;
    m->n = m->n_gpu + k;
    size_t cells = m->n * m->n + 1;
    m->cls = ct_xcalloc(cells, sizeof *m->cls);
    m->nv = ct_xcalloc(cells, sizeof *m->nv);
    m->hint = ct_xcalloc(cells, 1);
    for (size_t i = 0; i < m->n; i++)
        for (size_t j = 0; j < m->n; j++)
            fill_cell(t, m, flags, i, j);
}

void ct_matrix_release(struct ct_matrix *m)
{
    free(m->nic);
    free(m->cls);
    free(m->nv);
    free(m->hint);
    memset(m, 0, sizeof *m);
}

const char *ct_matrix_label(const struct ct_matrix *m, size_t i, char *buf, size_t len)
{
    if (i < m->n_gpu)
        snprintf(buf, len, "GPU%zu", i);
    else
        snprintf(buf, len, "NIC%zu", i - m->n_gpu);
    return buf;
}

size_t ct_rails_compute(const struct ct_topo *t, struct ct_rail **out)
{
    struct ct_matrix m;
    ct_matrix_build(t, CT_MATRIX_PCI_ONLY, &m);
    size_t nn = m.n - m.n_gpu;
    struct ct_rail *r = ct_xcalloc(t->n_gpu + 1, sizeof *r);
    int *used = ct_xcalloc(nn + 1, sizeof *used), *rail_of = ct_xcalloc(nn + 1, sizeof *rail_of);
    int rails = 0;
    for (size_t g = 0; g < t->n_gpu; g++) {
        r[g] = (struct ct_rail){(int)g, -1, CT_PATH_UNKNOWN, -1};
        size_t best = nn;
        for (size_t k = 0; k < nn; k++) { /* nearest, then one no lower GPU took, then NIC order */
            enum ct_path p = m.cls[g * m.n + m.n_gpu + k];
            if (p == CT_PATH_UNKNOWN)
                continue;
            if (best == nn || p < r[g].path || (p == r[g].path && used[k] < used[best])) {
                best = k;
                r[g].path = p;
            }
        }
        if (best < nn) {
            if (!used[best]++)
                rail_of[best] = rails++;
            r[g].nic = m.nic[best];
            r[g].rail = rail_of[best];
        }
    }
    free(used);
    free(rail_of);
    ct_matrix_release(&m);
    *out = r;
    return t->n_gpu;
}

size_t ct_rails_nonrail(const struct ct_topo *t, const struct ct_rail *r, size_t n, int **out)
{
    struct ct_matrix m;
    ct_matrix_build(t, CT_MATRIX_PCI_ONLY, &m);
    size_t k = 0;
    *out = ct_xcalloc(m.n - m.n_gpu + 1, sizeof **out);
    for (size_t j = 0; j < m.n - m.n_gpu; j++) {
        size_t g = 0;
        while (g < n && r[g].nic != m.nic[j])
            g++;
        if (g == n)
            (*out)[k++] = m.nic[j];
    }
    ct_matrix_release(&m);
    return k;
}
