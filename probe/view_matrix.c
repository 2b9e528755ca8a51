/* SPDX-License-Identifier: MIT */
/* The GPU/NIC matrix in the layout and vocabulary of `nvidia-smi topo -m` (tab separated,
 * " X " on the diagonal, affinity columns on GPU rows, legend, NIC legend), computed from the
 * PCI tree and NVLink counts. */
#include "probe_int.h"

#include <string.h>

static const char *const legend[] = {
    "  X    = Self",
    "  SYS  = Connection traversing PCIe as well as the SMP interconnect between NUMA nodes "
    "(e.g., QPI/UPI)",
    "  NODE = Connection traversing PCIe as well as the interconnect between PCIe Host Bridges "
    "within a NUMA node",
    "  PHB  = Connection traversing PCIe as well as a PCIe Host Bridge (typically the CPU)",
    "  PXB  = Connection traversing multiple PCIe bridges (without traversing the PCIe Host "
    "Bridge)",
    "  PIX  = Connection traversing at most a single PCIe bridge",
    "  NV#  = Connection traversing a bonded set of # NVLinks",
};

static void nic_name(const struct ct_nic *n, char *buf, size_t len)
{
    if (n->dev[0])
        snprintf(buf, len, "%s", n->dev);
    else if (n->netdev[0])
        snprintf(buf, len, "%s", n->netdev);
    else
        snprintf(buf, len, "%s (%s)", n->busid[0] ? n->busid : "?", ct_nic_kind_name(n->kind));
}

static void print_block(const struct ct_topo *t, const struct ct_matrix *m, size_t rows,
                        int affinity, FILE *out)
{
    char lab[16], cell[16];
    for (size_t j = 0; j < rows; j++)
        fprintf(out, "\t%s", ct_matrix_label(m, j, lab, sizeof lab));
    if (affinity)
        fprintf(out, "\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID");
    fputc('\n', out);
    for (size_t i = 0; i < rows; i++) {
        fprintf(out, "%s", ct_matrix_label(m, i, lab, sizeof lab));
        for (size_t j = 0; j < rows; j++) {
            enum ct_path p = m->cls[i * m->n + j];
            fprintf(out, "\t%s",
                    p == CT_PATH_X ? " X "
                                   : ct_path_name(p, m->nv[i * m->n + j], cell, sizeof cell));
        }
        if (affinity && i < m->n_gpu) {
            const struct ct_gpu *g = &t->gpu[i];
            fprintf(out, "\t%s\t", g->cpus ? g->cpus : "N/A");
            if (g->numa >= 0)
                fprintf(out, "%d", g->numa);
            else
                fprintf(out, "N/A");
            fprintf(out, "\tN/A");
        } else if (affinity) {
            fprintf(out, "\t\t\t");
        }
        fputc('\n', out);
    }
}

int ct_view_matrix(const struct ct_topo *t, FILE *out, struct ct_err *err)
{
    struct ct_matrix m;
    ct_matrix_build(t, 0, &m);
    if (!m.n) {
        fprintf(out, "GPU/NIC matrix: no GPU and no RDMA NIC\n");
        ct_matrix_release(&m);
        return 0;
    }
    print_block(t, &m, m.n, 1, out);
    fprintf(out, "\nLegend:\n\n");
    for (size_t i = 0; i < sizeof legend / sizeof legend[0]; i++)
        fprintf(out, "%s\n", legend[i]);
    if (m.n > m.n_gpu) {
        fprintf(out, "\nNIC Legend:\n\n");
        for (size_t k = 0; k < m.n - m.n_gpu; k++) {
            char name[64];
            nic_name(&t->nic[m.nic[k]], name, sizeof name);
            fprintf(out, "  NIC%zu: %s\n", k, name);
        }
    }
    size_t hinted = 0, unknown = 0;
    for (size_t i = 0; i < m.n * m.n; i++) {
        hinted += m.hint[i];
        unknown += m.cls[i] == CT_PATH_UNKNOWN;
    }
    if (hinted)
        fprintf(out, "\n%zu cells come from the input's own matrix (no PCI tree for them).\n",
                hinted / 2);
    if (unknown)
        fprintf(out, "\nN/A: the input does not place both ends in one PCI tree or NUMA node.\n");
    if (t->n_nvlink && m.n_gpu > 1) {
        struct ct_matrix pm;
        ct_matrix_build(t, CT_MATRIX_PCI_ONLY, &pm);
        fprintf(out, "\nPCIe paths between GPUs (NVLink ignored):\n\n");
        print_block(t, &pm, pm.n_gpu, 0, out);
        ct_matrix_release(&pm);
    }
    ct_matrix_release(&m);
    return 0;
}
