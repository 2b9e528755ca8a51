/* SPDX-License-Identifier: MIT */
/* sysfs source on the captured tree (2 x E5-2680, ConnectX-3 FDR, Xeon Phi): every fact
 * SOURCES.md states, and notes or errors for missing files, garbage rates and bad roots. */
#include "probe_test.h"

static struct ct_topo *probe_root(const char *root)
{
    struct ct_probe_cfg cfg = {.sysfs_root = root};
    struct ct_topo *t = ct_topo_new();
    struct ct_err err = {0};
    cr_assert_eq(ct_probe_local(t, &cfg, &err), 0, "%s", err.msg);
    return t;
}

static void write_file(const char *root, const char *rel, const char *text)
{
    char path[2 * PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", root, rel);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f, "%s", path);
    fputs(text, f);
    fclose(f);
}

#define PORT "sys/devices/pci0000:80/0000:80:02.2/0000:82:00.0/infiniband/mlx4_0/ports/1"

Test(sysfs, connectx3_fdr_port)
{
    const char *root = sysfs_capture();
    struct ct_topo *t = probe_root(root);
    const struct ct_nic *n = &t->nic[nic_by_dev(t, "mlx4_0")];
    cr_expect_str_eq(n->busid, "0000:82:00.0");
    cr_expect_eq(n->vendor, 0x15b3);
    cr_expect_eq(n->device, 0x1003);
    cr_expect_eq(n->class_code, 0x028000, "network 'other', not 0x0207");
    cr_expect_str_eq(n->model, "MT4099");
    cr_expect_str_eq(n->fw, "2.11.500");
    cr_expect_eq(n->numa, 1);
    cr_expect_str_eq(n->cpus, "8-15");
    cr_expect_float_eq(n->rate_gbps, 56, 1e-9);
    cr_expect_eq(n->lanes, 4);
    cr_expect_str_eq(n->speed, "FDR");
    cr_expect_eq(n->state, 4);
    cr_expect_str_eq(n->state_str, "ACTIVE");
    cr_expect_eq(n->phys_state, 5);
    cr_expect_str_eq(n->phys_str, "LinkUp");
    cr_expect_str_eq(n->link_layer, "InfiniBand");
    cr_expect_eq(n->kind, CT_NIC_IB);
    cr_expect_str_eq(n->counters, PORT "/counters");
    cr_expect_null(n->hw_counters);
    cr_expect_str_eq(n->netdev, "ib0", "IPoIB interface of mlx4_0");
    cr_expect_eq(n->netdev_type, 32);
    cr_expect_str_eq(n->oper, "up");
    struct ct_ceiling *c;
    size_t nc = ct_ceilings_compute(t, 2, &c);
    for (size_t i = 0; i < nc; i++)
        if (!strcmp(c[i].scope, "inter") && strcmp(c[i].coll, "alltoall"))
            cr_expect_float_eq(c[i].busbw, 4 * 14.0625 * 64 / 66 / 8, 1e-9,
                               "one 56 Gb/s 4X FDR port carries 54.5 Gb/s of data (64b/66b) = "
                               "6.82 GB/s, not 7 (%g)",
                               c[i].busbw);
    free(c);
    rm_rf(root);
    ct_topo_free(t);
}

/* the data rate less the line code: 8b/10b up to QDR, 64b/66b for FDR; FDR10, EDR and later
 * and Ethernet state theirs */
Test(sysfs, data_rate_less_the_line_code)
{
    static const struct {
        const char *rate;
        double data;
    } cases[] = {{"10 Gb/sec (4X SDR)", 8},
                 {"20 Gb/sec (4X DDR)", 16},
                 {"40 Gb/sec (4X QDR)", 32},
                 {"56 Gb/sec (4X FDR)", 4 * 14.0625 * 64 / 66},
                 {"14 Gb/sec (1X FDR)", 14.0625 * 64 / 66},
                 {"40 Gb/sec (4X FDR10)", 40},
                 {"100 Gb/sec (4X EDR)", 100},
                 {"200 Gb/sec (4X HDR)", 200},
                 {"400 Gb/sec (4X NDR)", 400},
                 {"25 Gb/sec", 25}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        struct ct_nic n;
        memset(&n, 0, sizeof n);
        cr_assert_eq(ct_ib_rate_parse(cases[i].rate, &n.rate_gbps, &n.lanes, n.speed), 0);
        cr_expect_float_eq(ct_nic_data_gbps(&n), cases[i].data, 1e-9, "%s: %g", cases[i].rate,
                           ct_nic_data_gbps(&n));
        n.kind = CT_NIC_ROCE; /* an Ethernet speed in InfiniBand's words: its data rate */
        cr_expect_float_eq(ct_nic_data_gbps(&n), n.rate_gbps, 1e-9, "RoCE %s", cases[i].rate);
    }
}

Test(sysfs, scif0_and_virtual_interfaces_skipped)
{
    const char *root = sysfs_capture();
    struct ct_topo *t = probe_root(root);
    cr_expect_lt(ct_topo_find_nic(t, "scif0", 1), 0, "the dangling scif0 is not a NIC");
    cr_expect(has_note(t, "'scif0'"));
    static const char *const virt[] = {"eth0.1015", "br0", "mic0", "lo"};
    for (size_t i = 0; i < 4; i++) {
        cr_expect_lt(ct_topo_find_netdev(t, virt[i]), 0, "%s listed", virt[i]);
        cr_expect(has_note(t, virt[i]), "no note for %s", virt[i]);
    }
    cr_expect_eq(t->n_nic, 3, "mlx4_0/ib0, eth0, eth1");
    rm_rf(root);
    ct_topo_free(t);
}

Test(sysfs, ethernet_interfaces)
{
    const char *root = sysfs_capture();
    struct ct_topo *t = probe_root(root);
    int e0 = ct_topo_find_netdev(t, "eth0"), e1 = ct_topo_find_netdev(t, "eth1");
    cr_assert(e0 >= 0 && e1 >= 0);
    const struct ct_nic *a = &t->nic[e0], *b = &t->nic[e1];
    cr_expect_str_eq(a->busid, "0000:02:00.0");
    cr_expect_eq(a->vendor, 0x8086);
    cr_expect_eq(a->device, 0x1521, "I350");
    cr_expect_eq(a->netdev_type, 1);
    cr_expect_float_eq(a->rate_gbps, 1, 1e-9, "speed 1000 Mb/s");
    cr_expect_str_eq(a->state_str, "up");
    cr_expect_eq(a->numa, 0);
    cr_expect_eq(a->kind, CT_NIC_ETH);
    cr_expect_str_eq(b->busid, "0000:02:00.3");
    cr_expect_str_eq(b->state_str, "down");
    cr_expect_eq(b->rate_gbps, 0, "no speed value");
    struct ct_warning *w;
    size_t nw = ct_warnings_compute(t, &w);
    int down = 0;
    for (size_t i = 0; i < nw; i++)
        down += w[i].kind == CT_WARN_PORT_DOWN && strstr(w[i].msg, "eth1");
    cr_expect_eq(down, 1);
    free(w);
    rm_rf(root);
    ct_topo_free(t);
}

Test(sysfs, cpus_numa_pci)
{
    const char *root = sysfs_capture();
    struct ct_topo *t = probe_root(root);
    cr_expect_eq(t->n_pkg, 2);
    cr_expect_eq(t->npus, 16);
    cr_expect(strstr(t->pkg[0].model, "E5-2680"));
    cr_assert_eq(t->n_numa, 2);
    cr_expect_str_eq(t->numa[0].cpus, "0-7");
    cr_expect_str_eq(t->numa[1].cpus, "8-15");
    cr_expect_eq(t->numa[0].dist[1], 21);
    cr_expect_eq(t->n_gpu, 0, "the Xeon Phi and the BMC VGA are not GPUs");
    int mic = ct_topo_find_pci(t, "0000:83:00.0");
    cr_assert_geq(mic, 0);
    cr_expect_eq(t->pci[mic].class_code, 0x0b4000);
    int hca = ct_topo_find_pci(t, "0000:82:00.0");
    cr_expect_str_eq(t->pci[t->pci[hca].parent].busid, "0000:80:02.2");
    cr_expect_str_eq(t->pci[t->pci[t->pci[hca].parent].parent].busid, "pci0000:80");
    char *s = render(t, "summary");
    cr_expect(strstr(s, "0000:82:00.0"));
    cr_expect(strstr(s, "mlx4_0/ib0"));
    free(s);
    rm_rf(root);
    ct_topo_free(t);
}

Test(sysfs, garbage_and_missing_files)
{
    const char *root = sysfs_capture();
    write_file(root, PORT "/rate", "fast, very fast\n");
    write_file(root, "sys/class/net/eth0/speed", "lots\n");
    char path[2 * PATH_MAX];
    snprintf(path, sizeof path, "%s/" PORT "/link_layer", root);
    cr_assert_eq(unlink(path), 0);
    struct ct_topo *t = probe_root(root);
    const struct ct_nic *n = &t->nic[nic_by_dev(t, "mlx4_0")];
    cr_expect_eq(n->rate_gbps, 0);
    cr_expect_eq(n->state, 4, "the rest of the port still reads");
    cr_expect(has_note(t, PORT "/rate': cannot parse rate 'fast, very fast'"));
    cr_expect(has_note(t, "eth0/speed': cannot parse speed 'lots'"));
    cr_expect_str_eq(n->link_layer, "");
    snprintf(path, sizeof path, "%s/" PORT "/rate", root);
    cr_assert_eq(unlink(path), 0);
    ct_topo_free(t);
    t = probe_root(root);
    cr_expect(has_note(t, PORT "/rate' is missing"));
    rm_rf(root);
    ct_topo_free(t);
}

Test(sysfs, unusable_root)
{
    struct ct_probe_cfg cfg = {.sysfs_root = "/nonexistent/capture"};
    struct ct_topo *t = ct_topo_new();
    struct ct_err err = {0};
    cr_expect_eq(ct_probe_local(t, &cfg, &err), CT_EINVAL);
    cr_expect(strstr(err.msg, "'/nonexistent/capture' has no sys/ directory"), "%s", err.msg);
    ct_topo_free(t);
}

/* A hand-made tree for what the capture lacks: an EFA port (hw_counters only), RoCE ports
 * with their netdev, a port at half width, a PCIe link trained below its capability. */
static void put(const char *root, const char *rel, const char *text)
{
    char cmd[3 * PATH_MAX];
    snprintf(cmd, sizeof cmd, "mkdir -p \"$(dirname '%s/%s')\"", root, rel);
    cr_assert_eq(system(cmd), 0);
    write_file(root, rel, text);
}

static void link_to(const char *root, const char *rel, const char *target)
{
    char cmd[3 * PATH_MAX];
    snprintf(cmd, sizeof cmd, "mkdir -p \"$(dirname '%s/%s')\" && ln -s '%s' '%s/%s'", root, rel,
             target, root, rel);
    cr_assert_eq(system(cmd), 0);
}

static void pci_dev(const char *root, const char *dir, const char *vendor, const char *device,
                    const char *width, const char *maxw)
{
    char rel[PATH_MAX];
    static const char *const f[][2] = {{"class", "0x020000\n"},
                                       {"numa_node", "0\n"},
                                       {"current_link_speed", "16.0 GT/s PCIe\n"},
                                       {"max_link_speed", "16.0 GT/s PCIe\n"}};
    for (size_t i = 0; i < 4; i++) {
        snprintf(rel, sizeof rel, "%s/%s", dir, f[i][0]);
        put(root, rel, f[i][1]);
    }
    snprintf(rel, sizeof rel, "%s/vendor", dir);
    put(root, rel, vendor);
    snprintf(rel, sizeof rel, "%s/device", dir);
    put(root, rel, device);
    snprintf(rel, sizeof rel, "%s/current_link_width", dir);
    put(root, rel, width);
    snprintf(rel, sizeof rel, "%s/max_link_width", dir);
    put(root, rel, maxw);
}

#define EFA "sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0"
#define CX6 "sys/devices/pci0000:00/0000:00:02.0/0000:02:00"

Test(sysfs, efa_and_roce_synthetic)
{
    char root[] = "/tmp/ct-sysfs-synth-XXXXXX";
    cr_assert_not_null(mkdtemp(root));
    pci_dev(root, EFA, "0x1d0f\n", "0xefa1\n", "8\n", "16\n");
    put(root, EFA "/infiniband/efa_0/ports/1/rate", "100 Gb/sec (4X EDR)\n");
    put(root, EFA "/infiniband/efa_0/ports/1/state", "4: ACTIVE\n");
    put(root, EFA "/infiniband/efa_0/ports/1/phys_state", "5: LinkUp\n");
    put(root, EFA "/infiniband/efa_0/ports/1/link_layer", "Unspecified\n");
    put(root, EFA "/infiniband/efa_0/ports/1/hw_counters/tx_bytes", "0\n");
    link_to(root, "sys/class/infiniband/efa_0",
            "../../devices/pci0000:00/0000:00:01.0/0000:01:00.0/infiniband/efa_0");
    link_to(root, "sys/bus/pci/devices/0000:01:00.0",
            "../../../devices/pci0000:00/0000:00:01.0/0000:01:00.0");
    for (int f = 0; f < 2; f++) {
        char dir[256], rel[512], tgt[512];
        snprintf(dir, sizeof dir, CX6 ".%d", f);
        pci_dev(root, dir, "0x15b3\n", "0x101d\n", "16\n", "16\n");
        snprintf(rel, sizeof rel, "%s/infiniband/mlx5_%d/ports/1/rate", dir, f);
        put(root, rel, f ? "100 Gb/sec (2X HDR)\n" : "200 Gb/sec (4X HDR)\n");
        snprintf(rel, sizeof rel, "%s/infiniband/mlx5_%d/ports/1/state", dir, f);
        put(root, rel, "4: ACTIVE\n");
        snprintf(rel, sizeof rel, "%s/infiniband/mlx5_%d/ports/1/link_layer", dir, f);
        put(root, rel, "Ethernet\n");
        snprintf(rel, sizeof rel, "%s/net/ens%d/mtu", dir, f);
        put(root, rel, "9000\n");
        snprintf(rel, sizeof rel, "%s/net/ens%d/type", dir, f);
        put(root, rel, "1\n");
        snprintf(rel, sizeof rel, "%s/net/ens%d/operstate", dir, f);
        put(root, rel, "up\n");
        snprintf(rel, sizeof rel, "sys/class/infiniband/mlx5_%d", f);
        snprintf(tgt, sizeof tgt, "../../%s/infiniband/mlx5_%d", dir + 4, f);
        link_to(root, rel, tgt);
        snprintf(rel, sizeof rel, "sys/class/net/ens%d", f);
        snprintf(tgt, sizeof tgt, "../../%s/net/ens%d", dir + 4, f);
        link_to(root, rel, tgt);
        snprintf(rel, sizeof rel, "%s/net/ens%d/device", dir, f);
        snprintf(tgt, sizeof tgt, "../../../0000:02:00.%d", f);
        link_to(root, rel, tgt);
    }
    struct ct_topo *t = probe_root(root);
    const struct ct_nic *efa = &t->nic[nic_by_dev(t, "efa_0")];
    cr_expect_eq(efa->kind, CT_NIC_EFA);
    cr_expect_null(efa->counters, "EFA has only hw_counters");
    cr_expect(efa->hw_counters && strstr(efa->hw_counters, "efa_0/ports/1/hw_counters"));
    cr_expect_float_eq(efa->rate_gbps, 100, 1e-9);
    const struct ct_nic *m0 = &t->nic[nic_by_dev(t, "mlx5_0")];
    cr_expect_eq(m0->kind, CT_NIC_ROCE);
    cr_expect_str_eq(m0->netdev, "ens0", "the RoCE port's interface");
    cr_expect_eq(m0->mtu, 9000);
    cr_expect_eq(ct_topo_find_netdev(t, "ens1"), nic_by_dev(t, "mlx5_1"));
    struct ct_warning *w;
    size_t n = ct_warnings_compute(t, &w);
    int degraded = 0, pcie = 0, mixed = 0;
    for (size_t i = 0; i < n; i++) {
        degraded += w[i].kind == CT_WARN_PORT_DEGRADED && strstr(w[i].msg, "mlx5_1 port 1");
        pcie += w[i].kind == CT_WARN_PCIE_DOWNTRAINED && strstr(w[i].msg, "0000:01:00.0");
        mixed += w[i].kind == CT_WARN_MIXED_LINK_LAYER;
    }
    cr_expect_eq(degraded, 1, "2X HDR next to a 4X HDR port of the same model");
    cr_expect_eq(pcie, 1, "x8 of x16");
    cr_expect_eq(mixed, 1, "EFA (Unspecified) and RoCE (Ethernet)");
    free(w);
    ct_topo_free(t);
    char cmd[PATH_MAX + 16];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    cr_assert_eq(system(cmd), 0);
}
