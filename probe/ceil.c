/* SPDX-License-Identifier: MIT */
/* Bandwidth ceilings per collective (nccl-tests bus bandwidth, GB/s) within a node and across
 * nodes, each with the formula that produced it, and the rails view. What `validate` compares
 * measurements against. */
#include "probe_int.h"

#include <stdlib.h>
#include <string.h>

static const char *const colls[] = {"allreduce", "allgather", "reducescatter", "alltoall"};

static double gpu_pcie(const struct ct_topo *t, int g)
{
    int p = t->gpu[g].pci;
    if (p < 0)
        return 0;
    const struct ct_pci *x = &t->pci[p];
    if (x->link_gts > 0 && x->link_width > 0) /* a GPU may idle at a lower speed: use capability */
        return ct_pcie_gbs(x->max_gts > x->link_gts ? x->max_gts : x->link_gts,
                           x->max_width > x->link_width ? x->max_width : x->link_width);
    return x->link_gbs;
}

double ct_ceil_gpu_pcie(const struct ct_topo *t, int g, char *d, size_t len)
{
    double bw = g >= 0 && (size_t)g < t->n_gpu ? gpu_pcie(t, g) : 0;
    const struct ct_pci *x = bw > 0 ? &t->pci[t->gpu[g].pci] : NULL;
    double gts = x ? (x->max_gts > x->link_gts ? x->max_gts : x->link_gts) : 0;
    int width = x ? (x->max_width > x->link_width ? x->max_width : x->link_width) : 0;
    static const double rate[] = {2.5, 5, 8, 16, 32, 64};
    int gen = 0;
    for (int i = 0; i < 6; i++)
        gen = gts >= rate[i] ? i + 1 : gen;
    if (bw <= 0)
        snprintf(d, len, "GPU%d: PCIe rate unknown", g);
    else if (gen && width)
        snprintf(d, len, "GPU%d PCIe %d.0 x%d = %.1f GB/s", g, gen, width, bw);
    else
        snprintf(d, len, "GPU%d PCIe %.1f GB/s", g, bw);
    return bw;
}

/* Bandwidth of one ring hop a -> b and its description. */
static double hop(const struct ct_topo *t, const struct ct_matrix *m, int a, int b, char *d,
                  size_t len)
{
    int nv = ct_topo_nvlink_count(t, a, b);
    double per = t->gpu[a].nvlink_gbps > 0 ? t->gpu[a].nvlink_gbps : t->gpu[b].nvlink_gbps;
    if (nv > 0) {
        char why[64];
        const struct ct_gpu *g = t->gpu[a].nvlink_gbps > 0 ? &t->gpu[a] : &t->gpu[b];
        ct_nvlink_basis(g->nvlink_gen, g->nvlink_basis, why, sizeof why);
        if (per > 0)
            snprintf(d, len, "GPU%d->GPU%d NV%d = %d x %g GB/s = %g GB/s%s%s%s", a, b, nv, nv,
                     per, nv * per, why[0] ? " (" : "", why, why[0] ? ")" : "");
        else
            snprintf(d, len, "GPU%d->GPU%d NV%d (per-link rate unknown)", a, b, nv);
        return nv * per;
    }
    double pa = gpu_pcie(t, a), pb = gpu_pcie(t, b), bw = pa < pb ? pa : pb;
    char cell[16];
    ct_path_name(m->cls[(size_t)a * m->n + (size_t)b], 0, cell, sizeof cell);
    if (bw > 0)
        snprintf(d, len, "GPU%d->GPU%d %s over PCIe %.1f GB/s%s", a, b, cell, bw,
                 !strcmp(cell, "SYS") ? " (and the inter-socket link)" : "");
    else
        snprintf(d, len, "GPU%d->GPU%d %s, PCIe rate unknown", a, b, cell);
    return bw;
}

double ct_ceil_gpu_hop(const struct ct_topo *t, int a, int b, char *d, size_t len)
{
    struct ct_matrix m;
    ct_matrix_build(t, CT_MATRIX_PCI_ONLY, &m);
    double bw = hop(t, &m, a, b, d, len);
    ct_matrix_release(&m);
    return bw;
}

static double intra_gpu(const struct ct_topo *t, char *f, size_t len)
{
    struct ct_matrix m;
    ct_matrix_build(t, CT_MATRIX_PCI_ONLY, &m);
    double best = -1;
    char d[256], worst[256] = "";
    int n = (int)t->n_gpu;
    for (int i = 0; i < n; i++) {
        double bw = hop(t, &m, i, (i + 1) % n, d, sizeof d);
        if (best < 0 || bw < best) {
            best = bw;
            ct_strlcpy(worst, d, sizeof worst);
        }
    }
    ct_matrix_release(&m);
    snprintf(f, len, "ring GPU0->...->GPU%d->GPU0, slowest hop %s; busbw <= %s", n - 1, worst,
             best > 0 ? "that hop" : "unknown");
    return best > 0 ? best : 0;
}

/* Aggregate usable NIC bandwidth of the node in GB/s and its description. */
static double node_net(const struct ct_topo *t, char *f, size_t len)
{
    double sum = 0, first = 0;
    int n = 0, rdma = 0, same = 1, coded = 0;
    char code[96] = ""; /* the first port whose rate names its signalling */
    for (size_t i = 0; i < t->n_nic; i++)
        rdma |= t->nic[i].dev[0] && t->nic[i].kind != CT_NIC_ETH;
    char list[200] = "";
    size_t used = 0;
    for (size_t i = 0; i < t->n_nic; i++) {
        const struct ct_nic *x = &t->nic[i];
        int is_rdma = x->dev[0] && x->kind != CT_NIC_ETH;
        int down = (x->state && x->state != 4) || !strcmp(x->state_str, "down");
        double d = ct_nic_data_gbps(x);
        if (is_rdma != rdma || down || d <= 0)
            continue;
        if (d != x->rate_gbps && !coded++)
            snprintf(code, sizeof code, " of data (%g Gb/s %dX %s less its %s line code)",
                     x->rate_gbps, x->lanes, x->speed,
                     strcmp(x->speed, "FDR") ? "8b/10b" : "64b/66b");
        sum += d;
        same &= !n || d == first;
        first = n ? first : d;
        n++;
        if (used < sizeof list - 24)
            used +=
                (size_t)snprintf(list + used, sizeof list - used, "%s%.4g", n > 1 ? " + " : "", d);
    }
    if (n > 1 && same)
        snprintf(list, sizeof list, "%d x %.4g", n, first);
    if (!n)
        snprintf(f, len, "no %s port with a known rate that is up", rdma ? "RDMA" : "network");
    else
        snprintf(f, len, "%s NICs %s Gb/s%s = %.4g Gb/s = %.4g GB/s per node",
                 rdma ? "RDMA" : "TCP", list, code, sum, sum / 8);
    return sum / 8;
}

/* All-to-all within a node: every GPU pushes (n-1)/n of its data through its own links. */
static double intra_a2a(const struct ct_topo *t, char *f, size_t len)
{
    double best = -1;
    int worst = 0, worst_nv = 0;
    for (size_t g = 0; g < t->n_gpu; g++) {
        int all_nv = 1;
        for (size_t h = 0; h < t->n_gpu; h++)
            all_nv &= h == g || ct_topo_nvlink_count(t, (int)g, (int)h) > 0;
        double bw =
            all_nv ? ct_topo_nvlink_total(t, (int)g) * t->gpu[g].nvlink_gbps : gpu_pcie(t, (int)g);
        if (best < 0 || bw < best) {
            best = bw;
            worst = (int)g;
            worst_nv = all_nv;
        }
    }
    int nv = ct_topo_nvlink_total(t, worst);
    char why[64];
    const struct ct_gpu *wg = &t->gpu[worst];
    ct_nvlink_basis(wg->nvlink_gen, wg->nvlink_basis, why, sizeof why);
    if (best > 0 && worst_nv)
        snprintf(f, len,
                 "each GPU sends through its own links: GPU%d %d NVLinks x %g GB/s = %g "
                 "GB/s per GPU%s%s%s",
                 worst, nv, wg->nvlink_gbps, best, why[0] ? " (" : "", why, why[0] ? ")" : "");
    else if (best > 0)
        snprintf(f, len,
                 "each GPU sends through its own links: GPU%d PCIe %.1f GB/s (NVLink "
                 "does not reach every GPU)",
                 worst, best);
    else
        snprintf(f, len, "per-GPU link rate unknown");
    return best > 0 ? best : 0;
}

static void put(struct ct_ceiling *c, const char *coll, const char *scope, double bw,
                const char *formula)
{
    ct_strlcpy(c->coll, coll, sizeof c->coll);
    ct_strlcpy(c->scope, scope, sizeof c->scope);
    c->busbw = bw;
    ct_strlcpy(c->formula, formula, sizeof c->formula);
}

static double intra(const struct ct_topo *t, char *f, size_t len)
{
    if (t->n_gpu >= 2)
        return intra_gpu(t, f, len);
    if (t->n_accel >= 2 && t->torus_rows)
        snprintf(f, len,
                 "2 Hamiltonian cycles x 2 directions x B_link = 4 x B_link per device "
                 "(B_link, the device link rate, is not in the input)");
    else
        snprintf(f, len, "%s: no intra-node device collective", t->n_gpu ? "one GPU" : "no GPU");
    return 0;
}

size_t ct_ceilings_compute(const struct ct_topo *t, int nodes, struct ct_ceiling **out)
{
    struct ct_ceiling *c = ct_xcalloc(8, sizeof *c);
    char fi[400], fn[400], f[1024];
    double bi = intra(t, fi, sizeof fi), bn = node_net(t, fn, sizeof fn);
    int g = t->n_gpu ? (int)t->n_gpu : t->n_accel ? (int)t->n_accel : 1;
    if (nodes < 2)
        nodes = 2;
    size_t k = 0;
    for (int i = 0; i < 3; i++)
        put(&c[k++], colls[i], "intra", bi, fi);
    if (t->n_gpu >= 2) {
        char fa[400];
        double ba = intra_a2a(t, fa, sizeof fa);
        put(&c[k++], colls[3], "intra", ba, fa);
    } else if (t->n_accel >= 2 && t->torus_rows) {
        /* all-to-all crosses the torus' bisection: half of each device's data crosses 2 x the
         * shorter side's links (its wraparound doubles them) each way, not its injection */
        int r = t->torus_rows, cl = t->torus_cols, n = r * cl, side = r < cl ? r : cl;
        int cut = r < cl ? cl : r; /* the dimension cut in two: it wraps when longer than 2 */
        double lanes = (cut > 2 ? 2.0 : 1.0) * side; /* links the cut takes each way */
        char fa[400];
        snprintf(fa, sizeof fa,
                 "bisection of the %dx%d torus: %g links each way carry half of every device's "
                 "data: busbw <= %g x B_link x %d/%d (B_link, the device link rate, is not in the "
                 "input)",
                 r, cl, lanes, 4 * lanes / n, n - 1, n);
        put(&c[k++], colls[3], "intra", 0, fa);
    } else {
        put(&c[k++], colls[3], "intra", bi, fi);
    }
    for (int i = 0; i < 3; i++) {
        double b = g >= 2 && bi > 0 && bi < bn ? bi : bn;
        if (b > 0)
            snprintf(f, sizeof f, "%s; busbw <= min(intra, NICs) = %g GB/s", fn, b);
        else
            snprintf(f, sizeof f, "%s; busbw unknown", fn);
        put(&c[k++], colls[i], "inter", b, f);
    }
    /* alltoall: each node sends g*S*(n-g)/n off-node, busbw = S(n-1)/(n t) */
    double n = (double)nodes * g, b = bn * (n - 1) / (g * (n - g));
    if (b > 0)
        snprintf(f, sizeof f,
                 "%s; alltoall on %d nodes x %d ranks: busbw <= B_net x (n-1) / "
                 "(g (n-g)) = %.1f GB/s (-> B_net/g for many nodes)",
                 fn, nodes, g, b);
    else
        snprintf(f, sizeof f, "%s; busbw unknown", fn);
    put(&c[k++], colls[3], "inter", b, f);
    *out = c;
    return k;
}

int ct_view_ceilings(const struct ct_topo *t, FILE *out, struct ct_err *err)
{
    struct ct_ceiling *c;
    size_t n = ct_ceilings_compute(t, 2, &c);
    fprintf(out, "Bandwidth ceilings (nccl-tests busbw, GB/s; inter = 2 nodes like this one)\n");
    fprintf(out, "%-14s %-6s %10s  %s\n", "COLLECTIVE", "SCOPE", "BUSBW", "FORMULA");
    for (size_t i = 0; i < n; i++) {
        char bw[32];
        if (c[i].busbw > 0)
            snprintf(bw, sizeof bw, "%.1f", c[i].busbw);
        else
            snprintf(bw, sizeof bw, "unknown");
        fprintf(out, "%-14s %-6s %10s  %s\n", c[i].coll, c[i].scope, bw, c[i].formula);
    }
    free(c);
    return 0;
}

static const char *nic_label(const struct ct_nic *x)
{
    return x->dev[0] ? x->dev : x->netdev[0] ? x->netdev : "";
}

int ct_view_rails(const struct ct_topo *t, FILE *out, struct ct_err *err)
{
    if (!t->n_gpu) {
        fprintf(out, "Rails: no GPU\n");
        return 0;
    }
    struct ct_rail *r;
    size_t n = ct_rails_compute(t, &r);
    fprintf(out, "Rails (GPU i's nearest NIC by the PCIe matrix, then the input's NIC order; "
                 "numbered by GPU)\n");
    fprintf(out, "%-6s %-6s %-20s %-6s %s\n", "GPU", "RAIL", "NIC", "PATH", "PCI");
    for (size_t i = 0; i < n; i++) {
        char cell[16], name[48];
        if (r[i].nic < 0) {
            fprintf(out, "GPU%-3zu %-6s %-20s %-6s %s\n", i, "-", "none", "-", "-");
            continue;
        }
        const struct ct_nic *x = &t->nic[r[i].nic];
        snprintf(name, sizeof name, "NIC%d %s", x->index, nic_label(x));
        fprintf(out, "GPU%-3zu %-6d %-20s %-6s %s\n", i, r[i].rail, name,
                ct_path_name(r[i].path, 0, cell, sizeof cell), x->busid[0] ? x->busid : "-");
    }
    int *nr;
    size_t k = ct_rails_nonrail(t, r, n, &nr);
    if (k) {
        struct ct_matrix m;
        ct_matrix_build(t, CT_MATRIX_PCI_ONLY, &m);
        fprintf(out, "Not a rail (no GPU takes it as its nearest NIC):\n");
        for (size_t i = 0; i < k; i++) {
            const struct ct_nic *x = &t->nic[nr[i]];
            size_t col = 0;
            while (m.nic[col] != nr[i])
                col++;
            enum ct_path best = CT_PATH_UNKNOWN;
            for (size_t g = 0; g < m.n_gpu; g++) {
                enum ct_path p = m.cls[g * m.n + m.n_gpu + col];
                best = p < best ? p : best;
            }
            char cell[16];
            fprintf(out, "  NIC%d %s: not a rail (nearest GPU %s%s)\n", x->index, nic_label(x),
                    ct_path_name(best, 0, cell, sizeof cell),
                    best == CT_PATH_SYS ? ", SYS to every GPU: storage or management port?" : "");
        }
        ct_matrix_release(&m);
    }
    free(nr);
    free(r);
    return 0;
}
