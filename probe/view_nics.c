/* SPDX-License-Identifier: MIT */
/* NIC ports: one table (device, port, kind, state, rate, lanes x speed, link layer, NUMA node,
 * nearest GPUs) and, for RDMA ports, blocks in the vocabulary of `ibstatus`. */
#include "probe_int.h"

#include <string.h>

/* GPUs nearest (PCIe path) to topo NIC n: "GPU0,GPU1 PXB", or "-". */
static void nearest_gpus(const struct ct_topo *t, const struct ct_matrix *m, size_t n, char *buf,
                         size_t len)
{
    snprintf(buf, len, "-");
    size_t k = 0;
    while (k < m->n - m->n_gpu && (size_t)m->nic[k] != n)
        k++;
    if (k == m->n - m->n_gpu) { /* a second port shares its adapter's column */
        for (k = 0; k < m->n - m->n_gpu; k++)
            if (t->nic[n].dev[0] && !strcmp(t->nic[m->nic[k]].dev, t->nic[n].dev))
                break;
        if (k == m->n - m->n_gpu)
            return;
    }
    enum ct_path best = CT_PATH_UNKNOWN;
    for (size_t g = 0; g < m->n_gpu; g++) {
        enum ct_path p = m->cls[g * m->n + m->n_gpu + k];
        best = p < best ? p : best;
    }
    if (best == CT_PATH_UNKNOWN)
        return;
    size_t used = 0;
    for (size_t g = 0; g < m->n_gpu && used + 16 < len; g++)
        if (m->cls[g * m->n + m->n_gpu + k] == best)
            used += (size_t)snprintf(buf + used, len - used, "%sGPU%zu", used ? "," : "", g);
    char cell[16];
    snprintf(buf + used, len - used, " %s", ct_path_name(best, 0, cell, sizeof cell));
}

static void rate_str(const struct ct_nic *n, char *rate, size_t rl, char *width, size_t wl)
{
    if (n->rate_gbps > 0)
        snprintf(rate, rl, "%g Gb/s", n->rate_gbps);
    else
        snprintf(rate, rl, "-");
    if (n->lanes && n->speed[0])
        snprintf(width, wl, "%dX %s", n->lanes, n->speed);
    else
        snprintf(width, wl, "-");
}

static void state_str(const struct ct_nic *n, char *st, size_t sl, char *ph, size_t pl)
{
    if (n->state)
        snprintf(st, sl, "%d: %s", n->state, n->state_str[0] ? n->state_str : "?");
    else
        snprintf(st, sl, "%s", n->state_str[0] ? n->state_str : "-");
    if (n->phys_state)
        snprintf(ph, pl, "%d: %s", n->phys_state, n->phys_str[0] ? n->phys_str : "?");
    else
        snprintf(ph, pl, "-");
}

static void num_or_dash(char *b, size_t l, int v, int valid)
{
    if (valid)
        snprintf(b, l, "%d", v);
    else
        snprintf(b, l, "-");
}

static void ibstatus_block(const struct ct_nic *n, FILE *out)
{
    char st[40], ph[40];
    state_str(n, st, sizeof st, ph, sizeof ph);
    fprintf(out, "Infiniband device '%s' port %d status:\n", n->dev, n->port);
    if (n->guid[0])
        fprintf(out, "\tnode guid:\t %s\n", n->guid);
    fprintf(out, "\tstate:\t\t %s\n", st);
    fprintf(out, "\tphys state:\t %s\n", ph);
    if (n->rate_gbps > 0 && n->lanes && n->speed[0])
        fprintf(out, "\trate:\t\t %g Gb/sec (%dX %s)\n", n->rate_gbps, n->lanes, n->speed);
    else if (n->rate_gbps > 0)
        fprintf(out, "\trate:\t\t %g Gb/sec\n", n->rate_gbps);
    else
        fprintf(out, "\trate:\t\t unknown (no usable rate)\n");
    const char *hint = !n->link_layer[0] && strstr(n->dev, "_eth") ? "Ethernet (RoCE)"
                       : !n->link_layer[0] && strstr(n->dev, "_ib") ? "InfiniBand"
                                                                     : NULL;
    if (hint) /* a name is not proof: say so, and keep it out of the model */
        fprintf(out, "\tlink_layer:\t unknown (the name suggests %s: a guess)\n\n", hint);
    else
        fprintf(out, "\tlink_layer:\t %s\n\n", n->link_layer[0] ? n->link_layer : "unknown");
}

int ct_view_nics(const struct ct_topo *t, FILE *out, struct ct_err *err)
{
    if (!t->n_nic) {
        fprintf(out, "NIC ports: none found\n");
        return 0;
    }
    struct ct_matrix m;
    ct_matrix_build(t, CT_MATRIX_PCI_ONLY, &m);
    fprintf(out, "NIC ports (%zu)\n", t->n_nic);
    fprintf(out, "%-12s %-4s %-5s %-12s %-13s %-10s %-8s %-10s %-5s %-9s %-4s %-13s %s\n", "DEVICE",
            "PORT", "KIND", "STATE", "PHYS", "RATE", "WIDTH", "LAYER", "MTU", "NETDEV", "NUMA",
            "PCI", "NEAREST GPU");
    int rdma = 0;
    for (size_t i = 0; i < t->n_nic; i++) {
        const struct ct_nic *n = &t->nic[i];
        char st[40], ph[40], rate[32], width[24], mtu[16], numa[16], near[128], port[16];
        state_str(n, st, sizeof st, ph, sizeof ph);
        rate_str(n, rate, sizeof rate, width, sizeof width);
        num_or_dash(mtu, sizeof mtu, n->mtu, n->mtu > 0);
        num_or_dash(numa, sizeof numa, n->numa, n->numa >= 0);
        num_or_dash(port, sizeof port, n->port, n->port > 0);
        nearest_gpus(t, &m, i, near, sizeof near);
        fprintf(out, "%-12s %-4s %-5s %-12s %-13s %-10s %-8s %-10s %-5s %-9s %-4s %-13s %s\n",
                n->dev[0] ? n->dev : "-", port, ct_nic_kind_name(n->kind), st, ph, rate, width,
                n->link_layer[0] ? n->link_layer : "-", mtu, n->netdev[0] ? n->netdev : "-", numa,
                n->busid[0] ? n->busid : "-", near);
        rdma |= n->dev[0] != 0;
    }
    if (rdma)
        fputc('\n', out);
    for (size_t i = 0; i < t->n_nic; i++)
        if (t->nic[i].dev[0])
            ibstatus_block(&t->nic[i], out);
    ct_matrix_release(&m);
    return 0;
}
