/* SPDX-License-Identifier: MIT */
/* Derived views: rails, bandwidth ceilings with their formulas, every warning kind, and every
 * view rendering for every fixture. */
#include "probe_test.h"

static int rail_of(const struct ct_topo *t, int gpu, enum ct_path *path)
{
    struct ct_rail *r;
    size_t n = ct_rails_compute(t, &r);
    cr_assert_lt((size_t)gpu, n);
    int nic = r[gpu].nic;
    if (path)
        *path = r[gpu].path;
    free(r);
    return nic;
}

Test(views, rails)
{
    struct ct_topo *t = load("nvidia-smi", FIX_SMI);
    for (int g = 0; g < 8; g++) { /* two PXB NICs per GPU pair: one rail each */
        enum ct_path p;
        cr_expect_eq(rail_of(t, g, &p), g);
        cr_expect_eq(p, CT_PATH_PXB);
    }
    ct_topo_free(t);
    t = load("nccl-xml", FIX_IBM);
    for (int g = 0; g < 8; g++) {
        char dev[32];
        snprintf(dev, sizeof dev, "mlx5_%d", 7 - g);
        enum ct_path p;
        cr_expect_eq(rail_of(t, g, &p), nic_by_dev(t, dev), "GPU%d pairs with %s", g, dev);
        cr_expect_eq(p, CT_PATH_PIX);
    }
    ct_topo_free(t);
    t = load("nccl-xml", FIX_ALIBABA);
    for (int g = 0; g < 8; g++) {
        char dev[32];
        snprintf(dev, sizeof dev, "mlx5_bond_%d", 1 + g / 2);
        cr_expect_eq(rail_of(t, g, NULL), nic_by_dev(t, dev));
    }
    char *s = render(t, "rails");
    /* rails numbered in GPU order: bond_1 (GPU0,1) is rail 0 ... bond_4 (GPU6,7) rail 3;
     * bond_0, under CPU 0 with no GPU nearer than NODE, is no rail */
    cr_expect(strstr(s, "GPU7   3      NIC4 mlx5_bond_4"), "%s", s);
    cr_expect(strstr(s, "NIC0 mlx5_bond_0: not a rail (nearest GPU NODE)"), "%s", s);
    free(s);
    ct_topo_free(t);
    t = load("hwloc-xml", FIX_MINSKY);
    cr_expect_eq(rail_of(t, 0, NULL), -1, "no NIC");
    ct_topo_free(t);
}

static const struct ct_ceiling *find_ceiling(const struct ct_ceiling *c, size_t n, const char *coll,
                                             const char *scope)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(c[i].coll, coll) && !strcmp(c[i].scope, scope))
            return &c[i];
    cr_assert_fail("no ceiling %s %s", coll, scope);
    return NULL;
}

Test(views, ceilings)
{
    struct ct_topo *t = load("nccl-xml", FIX_ALIBABA);
    struct ct_ceiling *c;
    size_t n = ct_ceilings_compute(t, 2, &c);
    cr_assert_eq(n, 8);
    const struct ct_ceiling *x = find_ceiling(c, n, "allreduce", "intra");
    cr_expect_float_eq(x->busbw, 300, 1e-9, "NV12 x 25 GB/s");
    cr_expect(strstr(x->formula, "12 x 25 GB/s = 300 GB/s"), "%s", x->formula);
    x = find_ceiling(c, n, "allgather", "inter");
    cr_expect_float_eq(x->busbw, 125, 1e-9, "5 x 200 Gb/s");
    cr_expect(strstr(x->formula, "1000 Gb/s = 125 GB/s"), "%s", x->formula);
    x = find_ceiling(c, n, "alltoall", "inter");
    cr_expect_float_eq(x->busbw, 125.0 * 15 / 64, 1e-9, "B (n-1) / (g (n-g)), n = 16, g = 8");
    free(c);
    ct_topo_free(t);

    t = load("nccl-xml", FIX_IBM);
    n = ct_ceilings_compute(t, 4, &c);
    cr_expect_float_eq(find_ceiling(c, n, "reducescatter", "intra")->busbw, 450, 1e-9);
    cr_expect_float_eq(find_ceiling(c, n, "allreduce", "inter")->busbw, 200, 1e-9);
    free(c);
    ct_topo_free(t);

    t = load("hwloc-xml", FIX_MINSKY);
    n = ct_ceilings_compute(t, 2, &c);
    x = find_ceiling(c, n, "allreduce", "intra");
    cr_expect_float_eq(x->busbw, ct_pcie_gbs(8, 16), 0.05, "the SYS hop over PCIe Gen3 x16");
    cr_expect(strstr(x->formula, "inter-socket"), "%s", x->formula);
    cr_expect_eq(find_ceiling(c, n, "allreduce", "inter")->busbw, 0, "no NIC in the file");
    free(c);
    ct_topo_free(t);

    t = load("neuron-ls", FIX_TRN2);
    n = ct_ceilings_compute(t, 2, &c);
    cr_expect(strstr(find_ceiling(c, n, "allreduce", "intra")->formula,
                     "2 Hamiltonian cycles x 2 directions"));
    free(c);
    ct_topo_free(t);
}

static int count(const struct ct_topo *t, enum ct_warn_kind k, const char *needle)
{
    struct ct_warning *w;
    size_t n = ct_warnings_compute(t, &w);
    int c = 0;
    for (size_t i = 0; i < n; i++)
        c += w[i].kind == k && (!needle || strstr(w[i].msg, needle));
    free(w);
    return c;
}

Test(views, warnings)
{
    struct ct_topo *t = load("nccl-xml", FIX_IBM);
    cr_expect_eq(count(t, CT_WARN_PORT_DEGRADED, NULL), 0, "all at 200 Gb/s");
    struct ct_nic *n3 = &t->nic[nic_by_dev(t, "mlx5_3")];
    n3->rate_gbps = 100;
    n3->lanes = 2;
    cr_expect_eq(count(t, CT_WARN_PORT_DEGRADED, "mlx5_3 port 1 runs at 100 Gb/s"), 1);
    n3->rate_gbps = 200;
    t->nic[nic_by_dev(t, "mlx5_5")].state = 1;
    cr_expect_eq(count(t, CT_WARN_PORT_DOWN, "mlx5_5 port 1"), 1);
    cr_expect_eq(count(t, CT_WARN_MIXED_LINK_LAYER, NULL), 0);
    strcpy(t->nic[nic_by_dev(t, "mlx5_0")].link_layer, "InfiniBand");
    cr_expect_eq(count(t, CT_WARN_MIXED_LINK_LAYER, "InfiniBand"), 1);
    /* a NIC trained at x8 of x16; a GPU idling at a lower speed is not a warning */
    struct ct_pci *np = &t->pci[n3->pci], *gp = &t->pci[t->gpu[0].pci];
    np->max_gts = np->link_gts = 32;
    np->max_width = 16;
    np->link_width = 8;
    gp->max_gts = 32;
    gp->link_gts = 2.5;
    gp->max_width = gp->link_width = 16;
    cr_expect_eq(count(t, CT_WARN_PCIE_DOWNTRAINED, NULL), 1);
    cr_expect_eq(count(t, CT_WARN_PCIE_DOWNTRAINED, n3->busid), 1);
    gp->link_width = 4;
    cr_expect_eq(count(t, CT_WARN_PCIE_DOWNTRAINED, t->gpu[0].busid), 1);
    cr_expect_eq(count(t, CT_WARN_GPU_FAR_NIC, NULL), 0, "every GPU has a PIX NIC");
    ct_topo_free(t);

    t = load("report", FIX_ASUS); /* the input contradicting its own PCI tree */
    for (size_t i = 0; i < t->n_hint; i++)
        if (t->hint[i].ka != t->hint[i].kb && t->hint[i].path == CT_PATH_NODE) {
            t->hint[i].path = CT_PATH_PIX;
            break;
        }
    cr_expect_eq(count(t, CT_WARN_PATH_MISMATCH, "the PCI tree gives NODE, the input says PIX"), 1);
    ct_topo_free(t);

    t = load("hwloc-xml", FIX_DGX2);
    cr_expect_eq(count(t, CT_WARN_NO_RDMA, "16 GPU(s) but no RDMA NIC"), 1);
    ct_topo_free(t);

    t = load("neuron-ls", FIX_TRN1);
    cr_expect_eq(count(t, CT_WARN_TORUS, NULL), 0);
    t->accel[5].nbrs[0] = 7;
    t->torus_rows = t->torus_cols = 0;
    ct_topo_finalize(t);
    cr_expect_eq(count(t, CT_WARN_TORUS, "not a regular 2D torus"), 1);
    char *s = render(t, "torus");
    cr_expect(strstr(s, "no regular 2D torus"), "%s", s);
    free(s);
    ct_topo_free(t);
}

Test(views, every_view_of_every_fixture)
{
    static const struct {
        const char *fmt, *name, *needle;
    } fx[] = {{"hwloc-xml", FIX_DGX2, "NVSwitches: 12"},
              {"hwloc-xml", FIX_MINSKY, "NV2 to CPU 0"},
              {"nccl-xml", FIX_P4D, "NIC0: 0000:10:1b.0 (EFA)"},
              {"nccl-xml", FIX_AZURE, "GPU0\t X \tPIX"},
              {"nccl-xml", FIX_ALIBABA, "NIC4: mlx5_bond_4"},
              {"nccl-xml", FIX_IBM, "NV18"},
              {"nvidia-smi", FIX_SMI, "NIC9: mlx5_9"},
              {"report", FIX_ASUS, "rate:\t\t unknown (no usable rate)"},
              {"neuron-ls", FIX_TRN1, "Two edge-disjoint Hamiltonian cycles"},
              {"neuron-ls", FIX_TRN2, "Accelerators: 16 Trainium2 (4x4 torus)"}};
    for (size_t f = 0; f < sizeof fx / sizeof fx[0]; f++) {
        struct ct_topo *t = load(fx[f].fmt, fx[f].name);
        for (size_t v = 0; ct_view_at(v); v++) {
            char *s = render(t, ct_view_at(v)->name);
            cr_expect_gt(strlen(s), 10, "%s %s", fx[f].name, ct_view_at(v)->name);
            free(s);
        }
        char *s = render(t, "all");
        cr_expect(strstr(s, fx[f].needle), "%s lacks '%s'", fx[f].name, fx[f].needle);
        cr_expect(strstr(s, "Legend:") || !t->n_gpu);
        free(s);
        ct_topo_free(t);
    }
}
