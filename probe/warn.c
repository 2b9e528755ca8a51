/* SPDX-License-Identifier: MIT */
/* Warnings: ports down or degraded against ports of the same model, GPUs without a nearby NIC,
 * mixed link layers, PCIe links trained below their capability, inputs that contradict the
 * PCI tree, accelerators that are not a torus. */
#include "probe_int.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

struct wl {
    struct ct_warning *w;
    size_t n;
};

static void add(struct wl *l, enum ct_warn_kind k, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void add(struct wl *l, enum ct_warn_kind k, const char *fmt, ...)
{
    l->w = ct_xrealloc(l->w, (l->n + 1) * sizeof *l->w);
    l->w[l->n].kind = k;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(l->w[l->n].msg, sizeof l->w[l->n].msg, fmt, ap);
    va_end(ap);
    l->n++;
}

static void port_name(const struct ct_nic *n, char *b, size_t len)
{
    if (n->dev[0])
        snprintf(b, len, "%s port %d", n->dev, n->port);
    else
        snprintf(b, len, "%s", n->netdev[0] ? n->netdev : n->busid);
}

static int is_down(const struct ct_nic *n)
{
    if (n->dev[0])
        return (n->state && n->state != 4) || (n->phys_state && n->phys_state != 5);
    return !strcmp(n->state_str, "down") || !strcmp(n->state_str, "lowerlayerdown");
}

static void ports_down(const struct ct_topo *t, struct wl *l)
{
    for (size_t i = 0; i < t->n_nic; i++) {
        const struct ct_nic *n = &t->nic[i];
        char name[80];
        port_name(n, name, sizeof name);
        if (is_down(n))
            add(l, CT_WARN_PORT_DOWN, "%s is %s%s%s: no usable rate", name,
                n->state_str[0] ? n->state_str : "not active", n->phys_str[0] ? " / " : "",
                n->phys_str);
    }
}

/* Ports of one model should all run at the same rate and width. */
static void model_key(const struct ct_nic *n, char *b, size_t len)
{
    if (n->vendor || n->device)
        snprintf(b, len, "%04x:%04x %s", n->vendor, n->device, n->link_layer);
    else
        snprintf(b, len, "%s %s %s", n->model, ct_nic_kind_name(n->kind), n->link_layer);
}

static void degraded(const struct ct_topo *t, struct wl *l)
{
    for (size_t i = 0; i < t->n_nic; i++) {
        const struct ct_nic *n = &t->nic[i];
        char key[128], k2[128], name[80];
        if (!n->dev[0] || is_down(n) || n->rate_gbps <= 0)
            continue;
        model_key(n, key, sizeof key);
        double best = n->rate_gbps;
        int lanes = n->lanes;
        size_t peers = 0;
        for (size_t j = 0; j < t->n_nic; j++) {
            const struct ct_nic *m = &t->nic[j];
            model_key(m, k2, sizeof k2);
            if (j == i || !m->dev[0] || is_down(m) || strcmp(key, k2))
                continue;
            peers++;
            best = m->rate_gbps > best ? m->rate_gbps : best;
            lanes = m->lanes > lanes ? m->lanes : lanes;
        }
        port_name(n, name, sizeof name);
        if (peers && (n->rate_gbps < best || n->lanes < lanes))
            add(l, CT_WARN_PORT_DEGRADED,
                "%s runs at %g Gb/s (%dX %s) while other %s ports run "
                "at %g Gb/s with %d lanes",
                name, n->rate_gbps, n->lanes, n->speed[0] ? n->speed : "?",
                n->model[0] ? n->model : key, best, lanes);
    }
}

static void far_gpus(const struct ct_topo *t, struct wl *l)
{
    if (!t->n_gpu)
        return;
    struct ct_matrix m;
    ct_matrix_build(t, CT_MATRIX_PCI_ONLY, &m);
    if (m.n == m.n_gpu)
        add(l, CT_WARN_NO_RDMA, "%zu GPU(s) but no RDMA NIC: inter-node traffic goes over TCP",
            t->n_gpu);
    for (size_t g = 0; g < m.n_gpu && m.n > m.n_gpu; g++) {
        enum ct_path best = CT_PATH_UNKNOWN;
        size_t bk = 0;
        for (size_t k = 0; k < m.n - m.n_gpu; k++)
            if (m.cls[g * m.n + m.n_gpu + k] < best) {
                best = m.cls[g * m.n + m.n_gpu + k];
                bk = k;
            }
        char cell[16];
        if (best > CT_PATH_PXB)
            add(l, CT_WARN_GPU_FAR_NIC,
                "GPU%zu has no NIC at PIX/PXB distance (nearest NIC%zu "
                "is %s): GPUDirect RDMA crosses the host bridge",
                g, bk, ct_path_name(best, 0, cell, sizeof cell));
    }
    ct_matrix_release(&m);
}

static void mixed_layers(const struct ct_topo *t, struct wl *l)
{
    const char *first = NULL;
    for (size_t i = 0; i < t->n_nic; i++) {
        const struct ct_nic *n = &t->nic[i];
        if (!n->dev[0] || !n->link_layer[0])
            continue;
        if (!first)
            first = n->link_layer;
        else if (strcmp(first, n->link_layer)) {
            add(l, CT_WARN_MIXED_LINK_LAYER, "mixed link layers among RDMA ports: %s and %s (%s)",
                first, n->link_layer, n->dev);
            return;
        }
    }
}

static void downtrained(const struct ct_topo *t, struct wl *l)
{
    for (size_t i = 0; i < t->n_pci; i++) {
        const struct ct_pci *p = &t->pci[i];
        int slow = p->max_gts > 0 && p->link_gts > 0 && p->link_gts < p->max_gts;
        int narrow = p->max_width > 0 && p->link_width > 0 && p->link_width < p->max_width;
        if (!slow && !narrow)
            continue;
        int gpu = ct_class_is_gpu(p->class_code, p->vendor);
        if (gpu && !narrow)
            continue; /* GPUs lower their link speed when idle */
        add(l, CT_WARN_PCIE_DOWNTRAINED,
            "PCIe %s runs at %g GT/s x%d, below its capability "
            "%g GT/s x%d",
            p->busid, p->link_gts, p->link_width, p->max_gts, p->max_width);
    }
}

static void mismatches(const struct ct_topo *t, struct wl *l)
{
    for (size_t i = 0; i < t->n_hint; i++) {
        const struct ct_hint *h = &t->hint[i];
        int pa = h->ka == CT_EP_GPU ? t->gpu[h->a].pci : t->nic[h->a].pci;
        int pb = h->kb == CT_EP_GPU ? t->gpu[h->b].pci : t->nic[h->b].pci;
        enum ct_path p = ct_topo_pci_path(t, pa, pb);
        char x[16], y[16];
        if (p != CT_PATH_UNKNOWN && p != h->path)
            add(l, CT_WARN_PATH_MISMATCH, "%s%d-%s%d: the PCI tree gives %s, the input says %s",
                h->ka == CT_EP_GPU ? "GPU" : "NIC", h->a, h->kb == CT_EP_GPU ? "GPU" : "NIC", h->b,
                ct_path_name(p, 0, x, sizeof x), ct_path_name(h->path, 0, y, sizeof y));
    }
}

size_t ct_warnings_compute(const struct ct_topo *t, struct ct_warning **out)
{
    struct wl l = {NULL, 0};
    ports_down(t, &l);
    degraded(t, &l);
    far_gpus(t, &l);
    mixed_layers(t, &l);
    downtrained(t, &l);
    mismatches(t, &l);
    if (t->n_accel > 1 && !t->torus_rows)
        add(&l, CT_WARN_TORUS,
            "%zu accelerators whose neighbour lists are not a regular 2D "
            "torus",
            t->n_accel);
    *out = l.w;
    return l.n;
}

int ct_view_warnings(const struct ct_topo *t, FILE *out, struct ct_err *err)
{
    struct ct_warning *w;
    size_t n = ct_warnings_compute(t, &w);
    if (!n)
        fprintf(out, "Warnings: none\n");
    else
        fprintf(out, "Warnings (%zu)\n", n);
    for (size_t i = 0; i < n; i++)
        fprintf(out, "  ! %s\n", w[i].msg);
    free(w);
    return 0;
}
