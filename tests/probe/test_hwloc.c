/* SPDX-License-Identifier: MIT */
/* hwloc XML importer (through libhwloc): every fact SOURCES.md states for the DGX-2H and the
 * IBM Minsky files, and errors for XML hwloc cannot use. */
#include "probe_test.h"

static int root_of(const struct ct_topo *t, int pci)
{
    while (t->pci[pci].parent >= 0)
        pci = t->pci[pci].parent;
    return pci;
}

Test(hwloc, dgx2h_cpus_and_gpus)
{
    struct ct_topo *t = load("hwloc-xml", FIX_DGX2);
    cr_assert_eq(t->n_pkg, 2);
    for (int p = 0; p < 2; p++)
        cr_expect(strstr(t->pkg[p].model, "Xeon(R) Platinum 8174"), "%s", t->pkg[p].model);
    cr_assert_eq(t->n_numa, 2);
    cr_assert_eq(t->numa[0].n_dist, 2);
    cr_expect_eq(t->numa[0].dist[0], 10);
    cr_expect_eq(t->numa[0].dist[1], 21);
    cr_expect_eq(t->numa[1].dist[0], 21);
    static const char *const bus[] = {"34", "36", "39", "3b", "57", "59", "5c", "5e",
                                      "b7", "b9", "bc", "be", "e0", "e2", "e5", "e7"};
    cr_assert_eq(t->n_gpu, 16);
    for (int g = 0; g < 16; g++) {
        char want[32], os[16];
        snprintf(want, sizeof want, "0000:%s:00.0", bus[g]);
        snprintf(os, sizeof os, "nvml%d", g);
        const struct ct_gpu *x = &t->gpu[g];
        cr_expect_str_eq(x->busid, want);
        cr_expect_str_eq(x->osname, os);
        cr_expect_str_eq(x->model, "Tesla V100-SXM3-32GB-H");
        cr_expect_eq(x->vendor, 0x10de);
        cr_expect_eq(x->device, 0x1db8);
        cr_expect_eq(t->pci[root_of(t, x->pci)].package, g < 8 ? 0 : 1);
        cr_expect_eq(x->numa, g < 8 ? 0 : 1);
    }
    ct_topo_free(t);
}

Test(hwloc, dgx2h_nvswitch_fabric)
{
    struct ct_topo *t = load("hwloc-xml", FIX_DGX2);
    static const char *const sw[] = {"61", "62", "63", "65", "66", "67",
                                     "c1", "c2", "c3", "c5", "c6", "c7"};
    cr_assert_eq(t->n_nvswitch, 12);
    for (int s = 0; s < 12; s++) {
        char want[32];
        snprintf(want, sizeof want, "0000:%s:00.0", sw[s]);
        int k = -1;
        for (size_t i = 0; i < t->n_nvswitch; i++)
            if (!strcmp(t->nvswitch[i].busid, want))
                k = (int)i;
        cr_assert_geq(k, 0, "no NVSwitch %s", want);
        int p = t->nvswitch[k].pci;
        cr_expect_eq(t->pci[root_of(t, p)].package, s < 6 ? 0 : 1);
        if (!strcmp(sw[s], "66"))
            cr_expect_eq(t->pci[p].class_code, 0, "66:00.0 is the class-0000 placeholder");
        /* each GPU of the switch's half has one 25 GB/s link to it, others none */
        for (int g = 0; g < 16; g++) {
            int links = 0;
            for (size_t l = 0; l < t->n_nvlink; l++)
                if (t->nvlink[l].gpu == g && t->nvlink[l].peer_kind == CT_END_NVSWITCH &&
                    t->nvlink[l].peer == k)
                    links += t->nvlink[l].count;
            cr_expect_eq(links, (g < 8) == (s < 6) ? 1 : 0, "GPU%d-switch %s", g, sw[s]);
        }
    }
    for (size_t l = 0; l < t->n_nvlink; l++)
        cr_expect_eq(t->nvlink[l].peer_kind, CT_END_NVSWITCH, "no direct GPU-GPU link");
    for (int g = 0; g < 16; g++) {
        cr_expect_eq(ct_topo_nvlink_total(t, g), 6, "6 links x 25 GB/s = 150 GB/s");
        cr_expect_float_eq(t->gpu[g].nvlink_gbps, 25, 1e-9);
    }
    struct ct_matrix m;
    ct_matrix_build(t, 0, &m);
    for (int a = 0; a < 16; a++)
        for (int b = 0; b < 16; b++) {
            int nv;
            enum ct_path p = gpu_gpu(&m, a, b, &nv);
            if (a == b)
                cr_expect_eq(p, CT_PATH_X);
            else if (a / 8 == b / 8)
                cr_expect(p == CT_PATH_NV && nv == 6, "GPU%d-GPU%d NV6", a, b);
            else
                cr_expect_eq(p, CT_PATH_SYS, "the file shows no cross-half NVLink");
        }
    ct_matrix_release(&m);
    ct_topo_free(t);
}

Test(hwloc, dgx2h_pcie_paths)
{
    struct ct_topo *t = load("hwloc-xml", FIX_DGX2);
    struct ct_matrix m;
    ct_matrix_build(t, CT_MATRIX_PCI_ONLY, &m);
    cr_expect_eq(gpu_gpu(&m, 0, 1, NULL), CT_PATH_PIX, "one PLX PEX9781");
    cr_expect_eq(gpu_gpu(&m, 0, 2, NULL), CT_PATH_PXB, "meet at the upper PLX switch");
    cr_expect_eq(gpu_gpu(&m, 0, 4, NULL), CT_PATH_NODE, "two host bridges of package 0");
    cr_expect_eq(gpu_gpu(&m, 0, 8, NULL), CT_PATH_SYS);
    cr_expect_str_eq(t->pci[root_of(t, t->gpu[0].pci)].busid, "pci0000:2b");
    cr_expect_str_eq(t->pci[root_of(t, t->gpu[4].pci)].busid, "pci0000:4e");
    ct_matrix_release(&m);
    ct_topo_free(t);
}

Test(hwloc, minsky)
{
    struct ct_topo *t = load("hwloc-xml", FIX_MINSKY);
    cr_expect_str_eq(t->hostname, "drac-12.grenoble.grid5000.fr");
    cr_expect_eq(t->n_pkg, 2);
    cr_expect_eq(t->npus, 16, "only 16 PUs visible (batch cgroup)");
    cr_assert_eq(t->n_numa, 2);
    for (int i = 0; i < 2; i++) {
        double gib = (double)t->numa[i].mem_bytes / (1 << 30);
        cr_expect(gib > 60 && gib < 66, "node %d: %.1f GiB", i, gib);
    }
    cr_expect_eq(t->numa[0].dist[1], 40);
    cr_expect_eq(t->numa[1].dist[1], 10);
    static const char *const bus[] = {"0002:01:00.0", "0003:01:00.0", "000a:01:00.0",
                                      "000b:01:00.0"};
    cr_assert_eq(t->n_gpu, 4);
    for (int g = 0; g < 4; g++) {
        char os[16];
        snprintf(os, sizeof os, "nvml%d", g);
        cr_expect_str_eq(t->gpu[g].busid, bus[g]);
        cr_expect_str_eq(t->gpu[g].osname, os);
        cr_expect_str_eq(t->gpu[g].model, "Tesla P100-SXM2-16GB");
        cr_expect_eq(t->pci[root_of(t, t->gpu[g].pci)].package, g < 2 ? 0 : 1);
        /* NV2 (2 x 20 GB/s NVLink1) to the GPU's own package */
        int cpu = -1, count = 0;
        for (size_t l = 0; l < t->n_nvlink; l++)
            if (t->nvlink[l].gpu == g && t->nvlink[l].peer_kind == CT_END_CPU) {
                cpu = t->nvlink[l].peer;
                count = t->nvlink[l].count;
            }
        cr_expect_eq(cpu, g < 2 ? 0 : 1);
        cr_expect_eq(count, 2);
        cr_expect_float_eq(t->gpu[g].nvlink_gbps, 20, 1e-9);
    }
    struct ct_matrix m, pm;
    ct_matrix_build(t, 0, &m);
    ct_matrix_build(t, CT_MATRIX_PCI_ONLY, &pm);
    int nv;
    cr_expect(gpu_gpu(&m, 0, 1, &nv) == CT_PATH_NV && nv == 2);
    cr_expect(gpu_gpu(&m, 2, 3, &nv) == CT_PATH_NV && nv == 2);
    for (int a = 0; a < 2; a++)
        for (int b = 2; b < 4; b++)
            cr_expect_eq(gpu_gpu(&m, a, b, NULL), CT_PATH_SYS, "GPU%d-GPU%d", a, b);
    cr_expect_eq(gpu_gpu(&pm, 0, 1, NULL), CT_PATH_NODE, "each GPU alone behind a host bridge");
    for (int g = 0; g < 4; g++) { /* each GPU alone behind its own host bridge */
        int r = root_of(t, t->gpu[g].pci);
        cr_expect_eq(t->pci[r].kind, CT_PCI_HOST);
        for (int h = 0; h < g; h++)
            cr_expect_neq(r, root_of(t, t->gpu[h].pci));
    }
    ct_matrix_release(&m);
    ct_matrix_release(&pm);
    ct_topo_free(t);
}

static int import_text(const char *text, struct ct_err *err)
{
    struct ct_topo *t = ct_topo_new();
    int rc = ct_topo_import_buf(t, "hwloc-xml", text, strlen(text), "bad.xml", err);
    ct_topo_free(t);
    return rc;
}

Test(hwloc, unusable_xml)
{
    static const struct {
        const char *text, *want;
    } cases[] = {
        {"<topology version=\"2.0\"><object type=\"Machine\"", "unexpected end of input"},
        {"<system version=\"1\"/>", "not <topology>"},
        {"<topology version=\"2.0\"><object type=\"Nonsense\"/></topology>", "hwloc cannot load"},
        {"\x01\x02 binary", "text outside the root"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct ct_err err = {0};
        cr_expect_eq(import_text(cases[i].text, &err), CT_EINVAL, "case %zu", i);
        cr_expect(strstr(err.msg, cases[i].want) && strstr(err.msg, "bad.xml"),
                  "case %zu: '%s' lacks '%s'", i, err.msg, cases[i].want);
    }
    size_t len;
    char *full = slurp(fixture(FIX_MINSKY), &len), cut[2048];
    for (size_t at = 10; at < len; at += len / 7) {
        snprintf(cut, sizeof cut, "%.*s", (int)(at < sizeof cut - 1 ? at : sizeof cut - 1), full);
        struct ct_err err = {0};
        cr_expect_eq(import_text(cut, &err), CT_EINVAL, "truncated at %zu", at);
    }
    free(full);
}
