/* SPDX-License-Identifier: MIT */
/* The probe's small parsers (bus ids, IB rate strings, PCIe speeds, cpumasks, path names) and
 * the PCI path classes on hand-built trees (PIX, PXB, PHB, NODE, SYS, unknown). */
#include "probe_test.h"

Test(util, busid)
{
    static const struct {
        const char *in, *out;
    } ok[] = {{"0000:82:00.0", "0000:82:00.0"},     {"82:00.0", "0000:82:00.0"},
              {"00000000:C0:00.0", "0000:c0:00.0"}, {" ffff:ff:01.0 ", "ffff:ff:01.0"},
              {"0002:01:1f.7", "0002:01:1f.7"},     {"10000:e0:00.0", "10000:e0:00.0"}};
    char out[CT_BUSID_LEN];
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        cr_expect_eq(ct_busid_canon(ok[i].in, out), 0, "%s", ok[i].in);
        cr_expect_str_eq(out, ok[i].out);
    }
    static const char *const bad[] = {
        "",         "82", "82:00", "0000:82:00.8", "0000:82:20.0", "zz:00.0", "0000:82:00.0x",
        "123:00.0", NULL};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        cr_expect_eq(ct_busid_canon(bad[i], out), -1, "%s accepted", bad[i] ? bad[i] : "NULL");
}

Test(util, ib_rate_strings)
{
    static const struct {
        const char *s;
        double gbps;
        int lanes;
        const char *speed;
    } ok[] = {{"400 Gb/sec (4X NDR)", 400, 4, "NDR"},
              {"56 Gb/sec (4X FDR)", 56, 4, "FDR"},
              {"2.5 Gb/sec (1X SDR)", 2.5, 1, "SDR"},
              {"200 Gb/sec (4X HDR)", 200, 4, "HDR"},
              {"100 Gb/sec (4X EDR)", 100, 4, "EDR"},
              {"40 Gb/sec (4X QDR)", 40, 4, "QDR"},
              {"25 Gb/sec (1X EDR)", 25, 1, "EDR"},
              {"10 Gb/sec (1X QDR)", 10, 1, "QDR"},
              {"100 Gb/sec (2X HDR)", 100, 2, "HDR"},
              {"40 Gb/sec (4X FDR10)", 40, 4, "FDR10"},
              {"100 Gb/sec", 100, 0, ""},
              {"0 Gb/sec (1X SDR)\n", 0, 1, "SDR"}};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        double g = -1;
        int l = -1;
        char sp[16] = "x";
        cr_expect_eq(ct_ib_rate_parse(ok[i].s, &g, &l, sp), 0, "'%s'", ok[i].s);
        cr_expect_float_eq(g, ok[i].gbps, 1e-9, "'%s'", ok[i].s);
        cr_expect_eq(l, ok[i].lanes);
        cr_expect_str_eq(sp, ok[i].speed);
    }
    static const char *const bad[] = {"",
                                      "fast",
                                      "56 Mb/sec (4X FDR)",
                                      "56 Gb/sec (4Y FDR)",
                                      "-1 Gb/sec",
                                      "56 Gb/sec (4X FDR) extra",
                                      "Gb/sec",
                                      "56 Gb/sec (0X FDR)",
                                      "nan Gb/sec",
                                      "1e99 Gb/sec"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        double g = 7;
        int l = 7;
        char sp[16] = "keep";
        cr_expect_eq(ct_ib_rate_parse(bad[i], &g, &l, sp), -1, "'%s' accepted", bad[i]);
        cr_expect(g == 7 && l == 7 && !strcmp(sp, "keep"), "outputs untouched on garbage");
    }
}

Test(util, pcie)
{
    cr_expect_float_eq(ct_pcie_gts_parse("8 GT/s"), 8, 1e-9);
    cr_expect_float_eq(ct_pcie_gts_parse("16.0 GT/s PCIe"), 16, 1e-9);
    cr_expect_float_eq(ct_pcie_gts_parse("2.5 GT/s"), 2.5, 1e-9);
    cr_expect_float_eq(ct_pcie_gts_parse("32.0 GT/s PCIe"), 32, 1e-9);
    cr_expect_eq(ct_pcie_gts_parse(""), 0);
    cr_expect_eq(ct_pcie_gts_parse("Unknown speed"), 0);
    cr_expect_eq(ct_pcie_gts_parse("8 GB/s"), -1);
    cr_expect_eq(ct_pcie_gts_parse("fast"), -1);
    cr_expect_float_eq(ct_pcie_gbs(8, 16), 15.7538, 1e-3, "Gen3 x16");
    cr_expect_float_eq(ct_pcie_gbs(2.5, 1), 0.25, 1e-9, "Gen1 x1");
    cr_expect_float_eq(ct_pcie_gbs(16, 16), 31.5077, 1e-3, "Gen4 x16");
    cr_expect_eq(ct_pcie_gbs(16, 0), 0);
}

Test(util, cpusets)
{
    static const struct {
        const char *mask, *list;
    } ok[] = {{"000000ff,ffff0000,00ffffff", "0-23,48-71"},
              {"ffffff00,0000ffff,ff000000", "24-47,72-95"},
              {"00000000,ffffffff,00000000,ffffffff", "0-31,64-95"},
              {"ffffffff,ffffffff,ffff0000,00000000,00000000", "80-159"},
              {"1", "0"},
              {"0", ""},
              {"80000001", "0,31"}};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        char *l = ct_cpumask_to_list(ok[i].mask);
        cr_assert_not_null(l, "%s", ok[i].mask);
        cr_expect_str_eq(l, ok[i].list, "%s", ok[i].mask);
        free(l);
    }
    cr_expect_null(ct_cpumask_to_list("xyz"));
    cr_expect_null(ct_cpumask_to_list("ff,,ff"));
    cr_expect_null(ct_cpumask_to_list(""));
    cr_expect_eq(ct_cpulist_count("0-3,8"), 5);
    cr_expect_eq(ct_cpulist_count("48-63,176-191"), 32);
    cr_expect_eq(ct_cpulist_count(""), 0);
    cr_expect_eq(ct_cpulist_count("3-1"), -1);
    cr_expect_eq(ct_cpulist_count("a-b"), -1);
}

Test(util, path_names)
{
    char b[16];
    enum ct_path p;
    int nv;
    cr_expect_str_eq(ct_path_name(CT_PATH_NV, 18, b, sizeof b), "NV18");
    cr_expect_str_eq(ct_path_name(CT_PATH_NODE, 0, b, sizeof b), "NODE");
    cr_expect_str_eq(ct_path_name(CT_PATH_UNKNOWN, 0, b, sizeof b), "N/A");
    static const char *const names[] = {"X", "PIX", "PXB", "PHB", "NODE", "SYS"};
    for (size_t i = 0; i < 6; i++) {
        cr_expect_eq(ct_path_parse(names[i], &p, &nv), 0);
        cr_expect_str_eq(ct_path_name(p, nv, b, sizeof b), names[i]);
    }
    cr_expect(ct_path_parse("NV12", &p, &nv) == 0 && p == CT_PATH_NV && nv == 12);
    cr_expect(ct_path_parse("SOC", &p, &nv) == 0 && p == CT_PATH_SYS);
    cr_expect_eq(ct_path_parse("NV", &p, &nv), -1);
    cr_expect_eq(ct_path_parse("NV0", &p, &nv), -1);
    cr_expect_eq(ct_path_parse("PIXX", &p, &nv), -1);
    cr_expect_str_eq(ct_nic_kind_name(CT_NIC_EFA), "EFA");
}

/*
 * host0 (NUMA 0)                      host1 (NUMA 1)
 *  rp0 -- us0 -- ds0 -- A               rp2 -- E
 *              `- ds1 -- B
 *              `- ds2 -- us1 -- ds3 -- C
 *  rp1 -- D
 */
Test(util, pci_path_classes)
{
    struct ct_topo *t = ct_topo_new();
    int h0 = ct_topo_add_pci(t, "pci0000:00", CT_PCI_HOST, -1);
    int h1 = ct_topo_add_pci(t, "pci0000:80", CT_PCI_HOST, -1);
    t->pci[h0].numa = 0;
    t->pci[h1].numa = 1;
    int rp0 = ct_topo_add_pci(t, "0000:00:01.0", CT_PCI_BRIDGE, h0);
    int rp1 = ct_topo_add_pci(t, "0000:00:02.0", CT_PCI_BRIDGE, h0);
    int us0 = ct_topo_add_pci(t, "0000:01:00.0", CT_PCI_BRIDGE, rp0);
    int ds0 = ct_topo_add_pci(t, "0000:02:00.0", CT_PCI_BRIDGE, us0);
    int ds1 = ct_topo_add_pci(t, "0000:02:01.0", CT_PCI_BRIDGE, us0);
    int ds2 = ct_topo_add_pci(t, "0000:02:02.0", CT_PCI_BRIDGE, us0);
    int us1 = ct_topo_add_pci(t, "0000:05:00.0", CT_PCI_BRIDGE, ds2);
    int ds3 = ct_topo_add_pci(t, "0000:06:00.0", CT_PCI_BRIDGE, us1);
    int a = ct_topo_add_pci(t, "0000:03:00.0", CT_PCI_DEV, ds0);
    int b = ct_topo_add_pci(t, "0000:04:00.0", CT_PCI_DEV, ds1);
    int c = ct_topo_add_pci(t, "0000:07:00.0", CT_PCI_DEV, ds3);
    int d = ct_topo_add_pci(t, "0000:08:00.0", CT_PCI_DEV, rp1);
    int d2 = ct_topo_add_pci(t, "0000:08:00.1", CT_PCI_DEV, rp1);
    int rp2 = ct_topo_add_pci(t, "0000:80:01.0", CT_PCI_BRIDGE, h1);
    int e = ct_topo_add_pci(t, "0000:81:00.0", CT_PCI_DEV, rp2);
    ct_topo_finalize(t);
    cr_expect_eq(ct_topo_pci_path(t, a, b), CT_PATH_PIX, "one switch");
    cr_expect_eq(ct_topo_pci_path(t, a, c), CT_PATH_PXB, "two switches");
    cr_expect_eq(ct_topo_pci_path(t, a, d), CT_PATH_PHB, "root ports of one host bridge");
    cr_expect_eq(ct_topo_pci_path(t, d, d2), CT_PATH_PIX, "two functions under one root port");
    cr_expect_eq(ct_topo_pci_path(t, a, e), CT_PATH_SYS);
    cr_expect_eq(ct_topo_pci_path(t, a, a), CT_PATH_PIX);
    cr_expect_eq(ct_topo_pci_path(t, a, -1), CT_PATH_UNKNOWN);
    t->pci[h1].numa = 0;
    cr_expect_eq(ct_topo_pci_path(t, a, e), CT_PATH_NODE, "two host bridges, one NUMA node");
    t->pci[h1].numa = -1;
    ct_topo_add_numa(t, 0, "0-3");
    ct_topo_add_numa(t, 1, "4-7");
    cr_expect_eq(ct_topo_pci_path(t, a, e), CT_PATH_UNKNOWN, "2 NUMA nodes, locality unknown");
    ct_topo_free(t);
}
