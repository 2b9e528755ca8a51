/* SPDX-License-Identifier: MIT */
/* Host summary: CPUs (packages, cores), NUMA nodes with distances, the PCI tree of interesting
 * devices, GPUs, NVSwitches, accelerators, and the notes of what sources could not see. */
#include "probe_int.h"

#include <string.h>

static const char *class_name(uint32_t c, uint16_t vendor)
{
    unsigned base = c >> 16, sub = (c >> 8) & 0xff;
    if (ct_class_is_nvswitch(c, vendor))
        return "nvswitch";
    switch (base) {
    case 0x01: return "storage";
    case 0x02: return sub == 0x00 ? "ethernet" : sub == 0x07 ? "infiniband" : "network";
    case 0x03: return sub == 0x02 ? "3d" : "display";
    case 0x06: return "bridge";
    case 0x08: return "system";
    case 0x0b: return "coprocessor";
    case 0x12: return "accelerator";
    default: return c ? "device" : "";
    }
}

static int pcie_gen(double gts)
{
    static const double g[] = {2.5, 5, 8, 16, 32, 64, 128};
    for (int i = 0; i < 7; i++)
        if (gts > g[i] * 0.9 && gts < g[i] * 1.1)
            return i + 1;
    return 0;
}

static void link_str(const struct ct_pci *p, char *buf, size_t len)
{
    buf[0] = 0;
    if (p->link_gts > 0 && p->link_width > 0) {
        size_t n = (size_t)snprintf(buf, len, "Gen%d x%d", pcie_gen(p->link_gts), p->link_width);
        if ((p->max_gts > p->link_gts || p->max_width > p->link_width) && n < len)
            snprintf(buf + n, len - n, " (capable Gen%d x%d)", pcie_gen(p->max_gts), p->max_width);
    } else if (p->link_gts > 0) {
        snprintf(buf, len, "%g GT/s", p->link_gts);
    } else if (p->link_gbs > 0) {
        snprintf(buf, len, "%.2f GB/s", p->link_gbs);
    }
}

/* What hangs off a PCI node: "GPU3 nvml3", "mlx5_0 ib0", "NVSwitch". */
static void attached(const struct ct_topo *t, int i, char *buf, size_t len)
{
    size_t n = 0;
    buf[0] = 0;
    for (size_t g = 0; g < t->n_gpu && n < len; g++)
        if (t->gpu[g].pci == i)
            n += (size_t)snprintf(buf + n, len - n, " GPU%zu%s%s", g, t->gpu[g].osname ? " " : "",
                                  t->gpu[g].osname ? t->gpu[g].osname : "");
    for (size_t k = 0; k < t->n_nic && n < len; k++) {
        const struct ct_nic *x = &t->nic[k];
        if (x->pci != i)
            continue;
        if (!x->dev[0] && !x->netdev[0])
            n += (size_t)snprintf(buf + n, len - n, " %s NIC", ct_nic_kind_name(x->kind));
        else
            n += (size_t)snprintf(buf + n, len - n, " %s%s%s", x->dev,
                                  x->dev[0] && x->netdev[0] ? "/" : "", x->netdev);
    }
    for (size_t s = 0; s < t->n_nvswitch && n < len; s++)
        if (t->nvswitch[s].pci == i)
            snprintf(buf + n, len - n, " NVSwitch");
}

static void pci_node(const struct ct_topo *t, int i, int depth, FILE *out);

/* Children of parent in bus order. */
static void pci_tree(const struct ct_topo *t, int parent, int depth, FILE *out)
{
    const char *last = "";
    for (;;) {
        int next = -1;
        for (size_t i = 0; i < t->n_pci && depth < 32; i++)
            if (t->pci[i].parent == parent && strcmp(t->pci[i].busid, last) > 0 &&
                (next < 0 || strcmp(t->pci[i].busid, t->pci[next].busid) < 0))
                next = (int)i;
        if (next < 0)
            return;
        pci_node(t, next, depth, out);
        last = t->pci[next].busid;
    }
}

static void pci_node(const struct ct_topo *t, int i, int depth, FILE *out)
{
    const struct ct_pci *p = &t->pci[i];
    char link[64], att[256];
    link_str(p, link, sizeof link);
    attached(t, i, att, sizeof att);
    fprintf(out, "  %*s%s", 2 * depth, "", p->busid);
    if (p->kind == CT_PCI_HOST)
        fprintf(out, " host bridge");
    else if (p->kind == CT_PCI_SWITCH)
        fprintf(out, " switch");
    else if (p->kind == CT_PCI_BRIDGE)
        fprintf(out, " bridge");
    else if (p->class_code)
        fprintf(out, " %s", class_name(p->class_code, p->vendor));
    if (p->vendor && p->device)
        fprintf(out, " [%04x:%04x]", p->vendor, p->device);
    else if (p->vendor || p->device) /* an import may name one alone: not a made-up 0000 */
        fprintf(out, p->vendor ? " [%04x:????]" : " [????:%04x]",
                p->vendor ? p->vendor : p->device);
    if (p->parent < 0 && ct_pci_numa(t, i) >= 0)
        fprintf(out, " NUMA %d", ct_pci_numa(t, i));
    fprintf(out, "%s%s%s%s%s\n", link[0] ? " " : "", link, att, p->name ? "  " : "",
            p->name ? p->name : "");
    pci_tree(t, i, depth + 1, out);
}

static void cpus(const struct ct_topo *t, FILE *out)
{
    if (!t->n_pkg && !t->ncores && !t->npus) /* an import without them: not "0 cores" */
        fprintf(out, "CPU: unknown (not in the input)\n");
    else
        fprintf(out, "CPU: %zu package(s), %d core(s), %d PU(s)\n", t->n_pkg, t->ncores, t->npus);
    for (size_t i = 0; i < t->n_pkg; i++)
        fprintf(out, "  package %d: %s, %d cores, %d PUs, cpus %s\n", t->pkg[i].os_index,
                t->pkg[i].model ? t->pkg[i].model : "model unknown", t->pkg[i].ncores,
                t->pkg[i].npus, t->pkg[i].cpus[0] ? t->pkg[i].cpus : "?");
    if (t->n_numa)
        fprintf(out, "NUMA: %zu node(s)\n", t->n_numa);
    else
        fprintf(out, "NUMA: unknown (not in the input)\n");
    for (size_t i = 0; i < t->n_numa; i++) {
        const struct ct_numa *m = &t->numa[i];
        fprintf(out, "  node %d: cpus %s", m->os_index, m->cpus[0] ? m->cpus : "?");
        if (m->mem_bytes)
            fprintf(out, ", %.1f GiB", (double)m->mem_bytes / (1024.0 * 1024 * 1024));
        if (m->model)
            fprintf(out, ", %s", m->model);
        if (m->n_dist) {
            fprintf(out, ", distances");
            for (size_t j = 0; j < m->n_dist; j++)
                fprintf(out, " %d", m->dist[j]);
        }
        fputc('\n', out);
    }
}

static void devices(const struct ct_topo *t, FILE *out)
{
    if (!t->n_gpu)
        fprintf(out, "GPUs: none found\n");
    else
        fprintf(out, "GPUs: %zu\n", t->n_gpu);
    for (size_t g = 0; g < t->n_gpu; g++) {
        const struct ct_gpu *x = &t->gpu[g];
        int nv = ct_topo_nvlink_total(t, (int)g);
        fprintf(out, "  GPU%zu %s %s%s%s%s", g, x->busid[0] ? x->busid : "(bus id unknown)",
                x->model ? x->model : "model unknown", x->osname ? " (" : "",
                x->osname ? x->osname : "", x->osname ? ")" : "");
        if (x->numa >= 0)
            fprintf(out, ", NUMA %d", x->numa);
        if (nv)
            fprintf(out, ", %d NVLinks", nv);
        if (nv && x->nvlink_gbps > 0)
            fprintf(out, " x %g GB/s", x->nvlink_gbps);
        char why[64];
        if (nv && x->nvlink_gen[0])
            fprintf(out, " (%s)",
                    ct_nvlink_basis(x->nvlink_gen, x->nvlink_basis, why, sizeof why));
        for (size_t l = 0; l < t->n_nvlink; l++)
            if (t->nvlink[l].gpu == (int)g && t->nvlink[l].peer_kind == CT_END_CPU)
                fprintf(out, ", NV%d to CPU %d", t->nvlink[l].count, t->nvlink[l].peer);
        fputc('\n', out);
    }
    if (t->n_nvswitch) {
        char why[64];
        fprintf(out, "NVSwitches: %zu", t->n_nvswitch);
        if (t->nvswitch_gen[0])
            fprintf(out, " (%s)",
                    ct_nvlink_basis(t->nvswitch_gen, t->nvswitch_basis, why, sizeof why));
        fputc('\n', out);
    }
    size_t rdma = 0;
    for (size_t i = 0; i < t->n_nic; i++)
        rdma += t->nic[i].dev[0] || (t->nic[i].kind != CT_NIC_ETH && t->nic[i].kind);
    fprintf(out, "NIC ports: %zu (%zu RDMA)%s\n", t->n_nic, rdma, rdma ? "" : ": no RDMA NIC");
    if (t->n_accel) {
        fprintf(out, "Accelerators: %zu %s", t->n_accel,
                t->accel[0].model[0] ? t->accel[0].model : "devices");
        if (t->torus_rows)
            fprintf(out, " (%dx%d torus)", t->torus_rows, t->torus_cols);
        fputc('\n', out);
    }
}

int ct_view_summary(const struct ct_topo *t, FILE *out, struct ct_err *err)
{
    fprintf(out, "host: %s (%s)\n", t->hostname ? t->hostname : "unknown",
            t->origin ? t->origin : "?");
    cpus(t, out);
    if (t->n_pci)
        fprintf(out, "PCI: %zu node(s)\n", t->n_pci);
    else
        fprintf(out, "PCI: unknown (not in the input)\n");
    pci_tree(t, -1, 0, out);
    devices(t, out);
    if (t->n_notes) {
        fprintf(out, "Notes:\n");
        for (size_t i = 0; i < t->n_notes; i++)
            fprintf(out, "  - %s\n", t->notes[i]);
    }
    return 0;
}
