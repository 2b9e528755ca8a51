/* SPDX-License-Identifier: MIT */
/* System report importer (lspci -tv, numactl --hardware, nvidia-smi topo -m, ibv_devinfo) on
 * the ASUS ESC8000A-E12 excerpt: every fact SOURCES.md states. */
#include "probe_test.h"

static int root_of(const struct ct_topo *t, int pci)
{
    while (t->pci[pci].parent >= 0)
        pci = t->pci[pci].parent;
    return pci;
}

Test(report, asus_pci_tree)
{
    struct ct_topo *t = load("report", FIX_ASUS);
    static const char *const gpu[] = {"0000:01:00.0", "0000:41:00.0", "0000:c1:00.0",
                                      "0000:e1:00.0"};
    static const char *const groot[] = {"pci0000:00", "pci0000:40", "pci0000:c0", "pci0000:e0"};
    cr_assert_eq(t->n_gpu, 4);
    for (int g = 0; g < 4; g++) {
        cr_expect_str_eq(t->gpu[g].busid, gpu[g]);
        cr_expect(strstr(t->gpu[g].model, "RTX 6000 Ada Generation"));
        int p = t->gpu[g].pci, port = t->pci[p].parent;
        cr_expect_str_eq(t->pci[root_of(t, p)].busid, groot[g]);
        cr_expect_eq(t->pci[port].kind, CT_PCI_BRIDGE, "behind its own root port");
        cr_expect_eq(t->pci[port].parent, root_of(t, p));
        for (int h = 0; h < g; h++)
            cr_expect_neq(root_of(t, t->gpu[h].pci), root_of(t, p));
    }
    static const char *const nic[] = {"0000:21:00.0", "0000:21:00.1", "0000:81:00.0",
                                      "0000:81:00.1"};
    cr_assert_eq(t->n_nic, 4);
    for (int n = 0; n < 4; n++) {
        char dev[32];
        snprintf(dev, sizeof dev, "mlx5_%d", n);
        const struct ct_nic *x = &t->nic[nic_by_dev(t, dev)];
        cr_expect_str_eq(x->busid, nic[n], "inferred from PCI order");
        cr_expect_str_eq(t->pci[root_of(t, x->pci)].busid, n < 2 ? "pci0000:20" : "pci0000:80");
        cr_expect(strstr(t->pci[x->pci].name, "ConnectX-7"));
        cr_expect_eq(x->device, 4129, "vendor_part_id of an MT2910");
        cr_expect_str_eq(x->sys_guid, n < 2 ? "9c63:c003:00d4:20f0" : "b8e9:2403:004e:deb0");
    }
    cr_expect(has_note(t, "consistent with sys_image_guid"));
    ct_topo_free(t);
}

Test(report, asus_numa)
{
    struct ct_topo *t = load("report", FIX_ASUS);
    cr_assert_eq(t->n_numa, 2);
    cr_expect_str_eq(t->numa[0].cpus, "0-31");
    cr_expect_str_eq(t->numa[1].cpus, "32-63");
    cr_assert_eq(t->numa[0].n_dist, 2);
    cr_expect_eq(t->numa[0].dist[0], 10);
    cr_expect_eq(t->numa[0].dist[1], 32);
    cr_expect_eq(t->numa[1].dist[0], 32);
    cr_expect_eq(t->numa[0].mem_bytes, 193129ull << 20);
    ct_topo_free(t);
}

/* what the report does not state is said unknown, not zero or made up: it read "CPU: 0
 * package(s), 0 core(s), 0 PU(s)" beside NUMA nodes of 64 CPUs, and the GPUs "[10de:0000]" */
Test(report, asus_summary_says_unknown)
{
    struct ct_topo *t = load("report", FIX_ASUS);
    char *s = render(t, "summary");
    cr_expect(strstr(s, "CPU: unknown (not in the input)\n"), "%s", s);
    cr_expect(strstr(s, "NUMA: 2 node(s)\n"));
    cr_expect(strstr(s, "0000:01:00.0 display [10de:????] GPU0"), "%s", s);
    cr_expect_null(strstr(s, ":0000]"));
    free(s);
    ct_topo_free(t);
}

Test(report, asus_matrix_and_ports)
{
    struct ct_topo *t = load("report", FIX_ASUS);
    struct ct_matrix m;
    ct_matrix_build(t, 0, &m);
    for (int a = 0; a < 4; a++) {
        cr_expect_str_eq(t->gpu[a].cpus, a < 2 ? "0-31" : "32-63");
        cr_expect_eq(t->gpu[a].numa, a < 2 ? 0 : 1);
        for (int b = 0; b < 4; b++)
            if (a != b)
                cr_expect_eq(gpu_gpu(&m, a, b, NULL), a / 2 == b / 2 ? CT_PATH_NODE : CT_PATH_SYS,
                             "GPU%d-GPU%d (no NVLink)", a, b);
        for (int n = 0; n < 4; n++)
            cr_expect_eq(gpu_nic(&m, a, n), a / 2 == n / 2 ? CT_PATH_NODE : CT_PATH_SYS);
    }
    cr_expect_eq(m.cls[4 * m.n + 5], CT_PATH_PIX, "NIC0-NIC1: two functions of one adapter");
    cr_expect_eq(m.cls[6 * m.n + 7], CT_PATH_PIX);
    cr_expect_eq(m.cls[4 * m.n + 6], CT_PATH_SYS);
    for (size_t i = 0; i < m.n * m.n; i++)
        cr_expect_eq(m.hint[i], 0, "every cell computed from the lspci tree");
    ct_matrix_release(&m);
    for (int n = 0; n < 4; n++) {
        cr_expect_eq(t->nic[n].state, 1);
        cr_expect_str_eq(t->nic[n].state_str, "DOWN");
        cr_expect_str_eq(t->nic[n].link_layer, "Ethernet");
        cr_expect_eq(t->nic[n].rate_gbps, 0, "no usable rate");
    }
    struct ct_warning *w;
    size_t nw = ct_warnings_compute(t, &w);
    int down = 0, far = 0, mismatch = 0;
    for (size_t i = 0; i < nw; i++) {
        down += w[i].kind == CT_WARN_PORT_DOWN;
        far += w[i].kind == CT_WARN_GPU_FAR_NIC;
        mismatch += w[i].kind == CT_WARN_PATH_MISMATCH;
    }
    cr_expect_eq(down, 4);
    cr_expect_eq(far, 4, "no GPU has a NIC at PIX/PXB");
    cr_expect_eq(mismatch, 0, "lspci tree and nvidia-smi agree");
    free(w);
    struct ct_ceiling *c;
    size_t nc = ct_ceilings_compute(t, 2, &c);
    for (size_t i = 0; i < nc; i++)
        if (!strcmp(c[i].scope, "inter"))
            cr_expect_eq(c[i].busbw, 0, "ports down: no inter-node ceiling");
    free(c);
    ct_topo_free(t);
}

Test(report, unusable_reports)
{
    static const struct {
        const char *text, *want;
    } cases[] = {
        {"nothing recognisable here\n", "no lspci -tv"},
        {"-+-[0000:00]-+-00.0  Host\n |           +-zz.q  bad\n", "malformed lspci -tv line"},
        {"-+-[0000:00]-+-00.0  Host\n |                    +-01.0  orphan\n", "no parent"},
        {"\tGPU0\tGPU1\nGPU0\t X \n", "row 'GPU0' has 1 of 2 columns"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct ct_topo *t = ct_topo_new();
        struct ct_err err = {0};
        cr_expect_eq(
            ct_topo_import_buf(t, "report", cases[i].text, strlen(cases[i].text), "r.md", &err),
            CT_EINVAL, "case %zu", i);
        cr_expect(strstr(err.msg, cases[i].want) && strstr(err.msg, "r.md"),
                  "case %zu: '%s' lacks '%s'", i, err.msg, cases[i].want);
        ct_topo_free(t);
    }
}
