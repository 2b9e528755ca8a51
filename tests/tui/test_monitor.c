/* SPDX-License-Identifier: MIT */
/*
 * NIC sampler: rates from sysfs trees made here (Ethernet, IB PMA counters in 4-byte units,
 * 32-bit wrap and saturation with extended / hw_counters fallbacks, EFA, RoCE congestion,
 * resets, NICs that vanish and return) and from the captured ConnectX-3 tree; snapshot
 * JSON and replay; cluster gathering over the in-process bootstrap.
 */
#include <pthread.h>

#include "monitor/monitor.h"
#include "transport/boot.h"
#include "tui_test.h"

#define T0 (100 * SEC)

static struct ct_snapshot snap;
static struct ct_monitor *mon;
static char *root;

static void setup(void)
{
    root = tt_tmpdir();
    tt_mkdirs(root);
    ct_snapshot_init(&snap);
    mon = NULL;
}

static void teardown(void)
{
    ct_monitor_free(mon);
    ct_snapshot_release(&snap);
    tt_rmtree(root);
    free(root);
}

static void sample_at(int64_t t)
{
    struct ct_err err = {0};
    if (!mon)
        mon = ct_monitor_new(root);
    cr_assert_eq(ct_monitor_sample_at(mon, t, &snap, &err), 0, "%s", err.msg);
}

static const struct ct_nic_snap *nic(const char *name)
{
    const struct ct_nic_snap *n = tt_nic(&snap, name);
    cr_assert(n, "no NIC '%s' in the snapshot", name);
    return n;
}

TestSuite(monitor, .init = setup, .fini = teardown, .timeout = 20);

Test(monitor, ethernet_rates_packets_errors)
{
    tt_eth(root, "eth0", "0000:00:03.0", 10000, "up");
    sample_at(T0);
    const struct ct_nic_snap *n = nic("eth0");
    cr_expect(n->flags & CT_NICF_FIRST);
    cr_expect(n->tx_gbps < 0 && n->rx_gbps < 0 && n->util < 0, "no rate on the first sample");
    cr_expect_str_eq(n->kind, "Eth");
    cr_expect_str_eq(n->state, "up");
    cr_expect(n->up);
    cr_expect(tt_close(n->line_gbps, 10.0));
    /* 2 s later: 2.5 GB out (10 Gb/s), 1.25 GB in (5 Gb/s), 3 receive errors */
    tt_stat(root, "eth0", "tx_bytes", 2500000000ull);
    tt_stat(root, "eth0", "rx_bytes", 1250000000ull);
    tt_stat(root, "eth0", "tx_packets", 2000000);
    tt_stat(root, "eth0", "rx_packets", 1000000);
    tt_stat(root, "eth0", "rx_errors", 3);
    sample_at(T0 + 2 * SEC);
    n = nic("eth0");
    cr_expect(!(n->flags & CT_NICF_FIRST));
    cr_expect(tt_close(n->tx_gbps, 10.0), "tx %.6f", n->tx_gbps);
    cr_expect(tt_close(n->rx_gbps, 5.0), "rx %.6f", n->rx_gbps);
    cr_expect(tt_close(n->util, 1.0), "util %.6f", n->util);
    cr_expect(tt_close(n->tx_pps, 1e6) && tt_close(n->rx_pps, 5e5));
    cr_expect_eq(n->err_delta, 3);
    cr_expect_eq(n->errors, 3);
    cr_expect_str_eq(n->err_last, "rx_errors");
    cr_expect_eq(n->n_hist, 2);
    cr_expect(n->hist[0] < 0 && tt_close(n->hist[1], 10.0));
    cr_expect(tt_close(snap.interval_s, 2.0));
    /* quiet interval: errors stay counted, the delta goes back to 0 */
    sample_at(T0 + 3 * SEC);
    n = nic("eth0");
    cr_expect(tt_close(n->tx_gbps, 0.0));
    cr_expect_eq(n->err_delta, 0);
    cr_expect_eq(n->errors, 3);
}

Test(monitor, link_down_and_virtual)
{
    tt_eth(root, "eth0", "0000:00:03.0", -1, "down");
    tt_put(root, "sys/devices/virtual/net/lo/type", "772");
    tt_put(root, "sys/devices/virtual/net/lo/operstate", "unknown");
    tt_put(root, "sys/devices/virtual/net/lo/carrier", "1");
    tt_put(root, "sys/devices/virtual/net/lo/statistics/tx_bytes", "0");
    tt_put(root, "sys/devices/virtual/net/lo/statistics/rx_bytes", "0");
    tt_link(root, "sys/class/net/lo", "../../devices/virtual/net/lo");
    tt_put(root, "sys/devices/virtual/net/br0/type", "1");
    tt_put(root, "sys/devices/virtual/net/br0/operstate", "up");
    tt_link(root, "sys/class/net/br0", "../../devices/virtual/net/br0");
    sample_at(T0);
    tt_put(root, "sys/devices/virtual/net/lo/statistics/tx_bytes", "125000000");
    sample_at(T0 + SEC);
    const struct ct_nic_snap *e = nic("eth0"), *lo = nic("lo"), *br = nic("br0");
    cr_expect(!e->up);
    cr_expect_str_eq(e->state, "down");
    cr_expect_eq(e->line_gbps, 0, "speed -1 is unknown");
    cr_expect(lo->up, "loopback: operstate unknown with carrier");
    cr_expect_str_eq(lo->state, "up");
    cr_expect_str_eq(lo->kind, "lo");
    cr_expect(tt_close(lo->tx_gbps, 1.0));
    cr_expect(lo->util < 0, "no line rate, no utilization");
    cr_expect_str_eq(br->kind, "virt");
    cr_expect(br->flags & CT_NICF_VIRTUAL);
    cr_expect(br->tx_gbps < 0, "a virtual interface without statistics has no rate");
    /* order: physical, loopback, virtual */
    cr_expect_str_eq(snap.nic[0].name, "eth0");
    cr_expect_str_eq(snap.nic[1].name, "lo");
    cr_expect_str_eq(snap.nic[2].name, "br0");
}

Test(monitor, ib_pma_units_and_ipoib_folded)
{
    tt_rdma(root, "mlx5_0", "0000:00:04.0", "100 Gb/sec (4X EDR)", "4: ACTIVE", "InfiniBand", 1,
            NULL);
    char rel[256];
    snprintf(rel, sizeof rel, "sys/devices/pci0000:00/0000:00:04.0/net/ib0/type");
    tt_put(root, rel, "32");
    tt_put(root, "sys/devices/pci0000:00/0000:00:04.0/net/ib0/dev_id", "0x0");
    tt_put(root, "sys/devices/pci0000:00/0000:00:04.0/net/ib0/operstate", "up");
    tt_link(root, "sys/devices/pci0000:00/0000:00:04.0/net/ib0/device", "../..");
    tt_link(root, "sys/class/net/ib0", "../../devices/pci0000:00/0000:00:04.0/net/ib0");
    sample_at(T0);
    /* 12.5e9 bytes = 3.125e9 four-byte units in 1 s: 100 Gb/s */
    tt_ctr(root, "mlx5_0", "counters", "port_xmit_data", 3125000000ull);
    tt_ctr(root, "mlx5_0", "counters", "port_rcv_data", 625000000ull);
    tt_ctr(root, "mlx5_0", "counters", "symbol_error", 2);
    tt_ctr(root, "mlx5_0", "counters", "port_xmit_discards", 5);
    sample_at(T0 + SEC);
    cr_expect_eq(snap.n_nic, 1, "ib0 is the port's interface, not a row of its own");
    const struct ct_nic_snap *n = nic("mlx5_0:1");
    cr_expect_str_eq(n->kind, "IB");
    cr_expect_str_eq(n->netdev, "ib0");
    cr_expect_str_eq(n->state, "ACTIVE");
    cr_expect(n->up);
    cr_expect(tt_close(n->line_gbps, 100));
    cr_expect(tt_close(n->tx_gbps, 100.0), "tx %.6f", n->tx_gbps);
    cr_expect(tt_close(n->rx_gbps, 20.0), "rx %.6f", n->rx_gbps);
    cr_expect(tt_close(n->util, 1.0));
    cr_expect_eq(n->tx_bytes, 12500000000ull);
    cr_expect_eq(n->err_delta, 7);
    cr_expect_str_eq(n->src, "counters");
    cr_expect(!(n->flags & (CT_NICF_SATURATED | CT_NICF_FALLBACK | CT_NICF_WRAPPED)));
}

Test(monitor, wrap_of_a_32bit_counter)
{
    tt_rdma(root, "mlx4_0", "0000:00:04.0", "56 Gb/sec (4X FDR)", "4: ACTIVE", "InfiniBand", 1,
            NULL);
    tt_ctr(root, "mlx4_0", "counters", "port_xmit_data", 4294967295ull - 999999);
    sample_at(T0);
    /* 1,000,000 units to the wrap, then 249,000,000 more: 1 GB in 1 s = 8 Gb/s */
    tt_ctr(root, "mlx4_0", "counters", "port_xmit_data", 249000000ull - 1);
    sample_at(T0 + SEC);
    const struct ct_nic_snap *n = nic("mlx4_0:1");
    cr_expect(n->flags & CT_NICF_WRAPPED);
    cr_expect(tt_close(n->tx_gbps, 8.0), "tx %.6f", n->tx_gbps);
    cr_expect(!(n->flags & CT_NICF_RESET));
}

Test(monitor, reset_is_not_a_wrap)
{
    tt_rdma(root, "mlx5_0", "0000:00:04.0", "100 Gb/sec (4X EDR)", "4: ACTIVE", "InfiniBand", 1,
            NULL);
    tt_ctr(root, "mlx5_0", "counters", "port_xmit_data", 900000000000ull);
    sample_at(T0);
    tt_ctr(root, "mlx5_0", "counters", "port_xmit_data", 1000);
    sample_at(T0 + SEC);
    const struct ct_nic_snap *n = nic("mlx5_0:1");
    cr_expect(n->flags & CT_NICF_RESET);
    cr_expect(n->tx_gbps < 0, "no rate across a reset");
    /* a 32-bit counter cleared (perfquery -R): the wrapped increment would be 137 Gb/s on a
     * 100 Gb/s link, so it is a reset too */
    tt_ctr(root, "mlx5_0", "counters", "port_rcv_data", 1000);
    sample_at(T0 + 2 * SEC);
    tt_ctr(root, "mlx5_0", "counters", "port_rcv_data", 10);
    sample_at(T0 + 3 * SEC);
    n = nic("mlx5_0:1");
    cr_expect(n->rx_gbps < 0);
    sample_at(T0 + 4 * SEC);
    cr_expect(tt_close(nic("mlx5_0:1")->rx_gbps, 0.0), "rates come back after a reset");
}

Test(monitor, saturated_falls_back_to_extended_counters)
{
    tt_rdma(root, "mlx4_0", "0000:00:04.0", "56 Gb/sec (4X FDR)", "4: ACTIVE", "InfiniBand", 1,
            NULL);
    tt_ctr(root, "mlx4_0", "counters", "port_xmit_data", 4294967295ull);
    tt_ctr(root, "mlx4_0", "counters", "port_rcv_data", 4294967295ull);
    tt_ctr(root, "mlx4_0", "counters_ext", "port_xmit_data_64", 50000000000ull);
    tt_ctr(root, "mlx4_0", "counters_ext", "port_rcv_data_64", 60000000000ull);
    tt_ctr(root, "mlx4_0", "counters_ext", "port_xmit_packets_64", 0);
    tt_ctr(root, "mlx4_0", "counters_ext", "port_rcv_packets_64", 0);
    sample_at(T0);
    tt_ctr(root, "mlx4_0", "counters_ext", "port_xmit_data_64", 50000000000ull + 1250000000ull);
    tt_ctr(root, "mlx4_0", "counters_ext", "port_rcv_data_64", 60000000000ull + 250000000ull);
    sample_at(T0 + SEC);
    const struct ct_nic_snap *n = nic("mlx4_0:1");
    cr_expect(n->flags & CT_NICF_SATURATED);
    cr_expect(n->flags & CT_NICF_FALLBACK);
    cr_expect_str_eq(n->src, "counters_ext");
    cr_expect(tt_close(n->tx_gbps, 40.0), "tx %.6f", n->tx_gbps); /* 1.25e9 * 4 B */
    cr_expect(tt_close(n->rx_gbps, 8.0), "rx %.6f", n->rx_gbps);
    cr_expect_eq(n->tx_bytes, (50000000000ull + 1250000000ull) * 4);
}

Test(monitor, saturated_falls_back_to_hw_counters)
{
    static const char *const hw[] = {"tx_bytes", "rx_bytes", "tx_pkts", "rx_pkts", NULL};
    tt_rdma(root, "bnxt_re0", "0000:00:05.0", "25 Gb/sec (1X EDR)", "4: ACTIVE", "Ethernet", 1, hw);
    tt_ctr(root, "bnxt_re0", "counters", "port_xmit_data", 4294967295ull);
    sample_at(T0);
    tt_ctr(root, "bnxt_re0", "hw_counters", "tx_bytes", 625000000ull); /* bytes: 5 Gb/s */
    tt_ctr(root, "bnxt_re0", "hw_counters", "tx_pkts", 1000);
    sample_at(T0 + SEC);
    const struct ct_nic_snap *n = nic("bnxt_re0:1");
    cr_expect_str_eq(n->kind, "RoCE");
    cr_expect_str_eq(n->src, "hw_counters");
    cr_expect(n->flags & CT_NICF_FALLBACK);
    cr_expect(tt_close(n->tx_gbps, 5.0), "tx %.6f", n->tx_gbps);
    cr_expect(tt_close(n->util, 0.2));
}

Test(monitor, saturated_without_fallback_is_unknown)
{
    tt_rdma(root, "mlx4_0", "0000:00:04.0", "40 Gb/sec (4X QDR)", "4: ACTIVE", "InfiniBand", 1,
            NULL);
    tt_ctr(root, "mlx4_0", "counters", "port_xmit_data", 4294967000ull);
    sample_at(T0);
    tt_ctr(root, "mlx4_0", "counters", "port_xmit_data", 4294967295ull);
    sample_at(T0 + SEC);
    const struct ct_nic_snap *n = nic("mlx4_0:1");
    cr_expect(n->flags & CT_NICF_SATURATED);
    cr_expect(!(n->flags & CT_NICF_FALLBACK));
    cr_expect(n->tx_gbps < 0 && n->rx_gbps < 0 && n->util < 0);
    cr_expect_str_eq(n->src, "saturated");
}

Test(monitor, efa_hw_counters_only)
{
    static const char *const hw[] = {"tx_bytes",   "rx_bytes",        "tx_pkts",
                                     "rx_pkts",    "rx_drops",        "rdma_read_wr_err",
                                     "send_bytes", "rdma_read_bytes", NULL};
    tt_rdma(root, "efa_0", "0000:00:06.0", "100 Gb/sec", "4: ACTIVE", "Unspecified", 0, hw);
    sample_at(T0);
    tt_ctr(root, "efa_0", "hw_counters", "tx_bytes", 2500000000ull);
    tt_ctr(root, "efa_0", "hw_counters", "rx_bytes", 5000000000ull);
    tt_ctr(root, "efa_0", "hw_counters", "rx_pkts", 400000);
    tt_ctr(root, "efa_0", "hw_counters", "rx_drops", 4);
    sample_at(T0 + SEC);
    const struct ct_nic_snap *n = nic("efa_0:1");
    cr_expect_str_eq(n->kind, "EFA");
    cr_expect_str_eq(n->src, "hw_counters");
    cr_expect(tt_close(n->tx_gbps, 20.0) && tt_close(n->rx_gbps, 40.0));
    cr_expect(tt_close(n->util, 0.4));
    cr_expect(tt_close(n->rx_pps, 400000));
    cr_expect_eq(n->err_delta, 4);
    cr_expect_str_eq(n->err_last, "rx_drops");
}

Test(monitor, roce_congestion_counters)
{
    static const char *const hw[] = {"np_cnp_sent", "rp_cnp_handled", "out_of_buffer", NULL};
    tt_rdma(root, "mlx5_1", "0000:00:07.0", "200 Gb/sec (4X HDR)", "4: ACTIVE", "Ethernet", 1, hw);
    tt_eth(root, "ens1", "0000:00:07.0", 200000, "up");
    sample_at(T0);
    tt_ctr(root, "mlx5_1", "hw_counters", "np_cnp_sent", 300);
    tt_ctr(root, "mlx5_1", "hw_counters", "rp_cnp_handled", 100);
    sample_at(T0 + 2 * SEC);
    const struct ct_nic_snap *n = nic("mlx5_1:1");
    cr_expect_str_eq(n->kind, "RoCE");
    cr_expect_str_eq(n->netdev, "ens1");
    cr_expect(tt_close(n->cnp_rate, 200.0), "cnp %.3f", n->cnp_rate);
    cr_expect_null(tt_nic(&snap, "ens1"), "the RoCE port's interface is folded into its row");
}

Test(monitor, nic_disappears_and_returns)
{
    tt_eth(root, "eth0", "0000:00:03.0", 1000, "up");
    tt_eth(root, "eth1", "0000:00:03.1", 1000, "up");
    tt_stat(root, "eth1", "tx_bytes", 1000000);
    sample_at(T0);
    sample_at(T0 + SEC);
    /* hot unplug */
    tt_rm(root, "sys/class/net/eth1");
    tt_rm(root, "sys/devices/pci0000:00/0000:00:03.1");
    sample_at(T0 + 2 * SEC);
    const struct ct_nic_snap *n = nic("eth1");
    cr_expect(n->flags & CT_NICF_GONE);
    cr_expect_str_eq(n->state, "gone");
    cr_expect(!n->up && n->tx_gbps < 0);
    cr_expect(tt_nic(&snap, "eth0") && !(tt_nic(&snap, "eth0")->flags & CT_NICF_GONE));
    /* back, counters restarted from 0: a first sample again, not a reset or a wrap */
    tt_eth(root, "eth1", "0000:00:03.1", 1000, "up");
    sample_at(T0 + 3 * SEC);
    n = nic("eth1");
    cr_expect(n->flags & CT_NICF_NEW);
    cr_expect(n->flags & CT_NICF_FIRST);
    cr_expect(!(n->flags & (CT_NICF_RESET | CT_NICF_GONE)));
    tt_stat(root, "eth1", "tx_bytes", 125000000);
    sample_at(T0 + 4 * SEC);
    cr_expect(tt_close(nic("eth1")->tx_gbps, 1.0));
    /* gone for good: listed for a while, then dropped */
    tt_rm(root, "sys/class/net/eth1");
    for (int i = 0; i < 61; i++)
        sample_at(T0 + (5 + i) * SEC);
    cr_expect_null(tt_nic(&snap, "eth1"));
    cr_expect_eq(snap.n_nic, 1);
}

Test(monitor, new_nic_appears)
{
    tt_eth(root, "eth0", "0000:00:03.0", 1000, "up");
    sample_at(T0);
    tt_eth(root, "veth9", "0000:00:09.0", 10000, "up");
    sample_at(T0 + SEC);
    cr_expect(nic("veth9")->flags & CT_NICF_NEW);
    cr_expect(!(nic("eth0")->flags & CT_NICF_NEW));
}

Test(monitor, missing_root_fails)
{
    struct ct_err err = {0};
    mon = ct_monitor_new("/nonexistent/colltune-root");
    cr_expect_eq(ct_monitor_sample_at(mon, T0, &snap, &err), CT_EINVAL);
    cr_expect(strstr(err.msg, "/nonexistent/colltune-root"), "%s", err.msg);
}

/* The captured host: a ConnectX-3 FDR port (ib0), two Ethernet ports, dangling links for
 * virtual devices that were not captured. */
Test(monitor, captured_connectx3_tree)
{
    const char *tar =
        "tests/fixtures/topologies/sysfs-root_2xE5-2680_connectx3-mlx4-FDR56_mic.tar.bz2";
    if (access(tar, R_OK) != 0)
        tar = "../shared/fixtures/topologies/"
              "sysfs-root_2xE5-2680_connectx3-mlx4-FDR56_mic.tar.bz2";
    cr_assert(access(tar, R_OK) == 0, "fixture tarball not found");
    char cmd[8192];
    /* only what NIC sampling reads (the class links and the PCI trees they point into) */
    snprintf(cmd, sizeof cmd,
             "tar xjf '%s' -C '%s' --wildcards '*/sys/class/*' '*/sys/devices/pci0000:00/*' "
             "'*/sys/devices/pci0000:80/*' '*/sys/devices/virtual/*'",
             tar, root);
    cr_assert_eq(system(cmd), 0, "%s", cmd);
    char *host = NULL;
    cr_assert(asprintf(&host, "%s/32em64t-2n8c+1mic", root) > 0);
    mon = ct_monitor_new(host);
    struct ct_err err = {0};
    cr_assert_eq(ct_monitor_sample_at(mon, T0, &snap, &err), 0, "%s", err.msg);
    const struct ct_nic_snap *ib = nic("mlx4_0:1");
    cr_expect_str_eq(ib->kind, "IB");
    cr_expect_str_eq(ib->netdev, "ib0");
    cr_expect_str_eq(ib->state, "ACTIVE");
    cr_expect(tt_close(ib->line_gbps, 56));
    cr_expect_eq(ib->tx_bytes, 8039908ull * 4);
    cr_expect(tt_close(nic("eth0")->line_gbps, 1.0));
    cr_expect(!nic("eth1")->up);
    cr_expect_null(tt_nic(&snap, "scif0:1"), "dangling RDMA device skipped");
    cr_expect_null(tt_nic(&snap, "lo"), "dangling interface skipped");
    cr_expect_null(tt_nic(&snap, "ib0"), "ib0 is folded into mlx4_0:1");
    cr_expect_str_eq(snap.host, "32em64t-2n8c+1mic");
    /* traffic: 7 GB through the port in 1 s (56 Gb/s), 10 MB on eth0, one symbol error */
    char rel[256];
    snprintf(rel, sizeof rel, "sys/class/infiniband/mlx4_0/ports/1/counters/port_xmit_data");
    tt_put(host, rel, "%llu", 8039908ull + 1750000000ull);
    tt_put(host, "sys/class/infiniband/mlx4_0/ports/1/counters/symbol_error", "1");
    tt_put(host, "sys/class/net/eth0/statistics/tx_bytes", "%llu", 160674160ull + 10000000ull);
    cr_assert_eq(ct_monitor_sample_at(mon, T0 + SEC, &snap, &err), 0, "%s", err.msg);
    ib = nic("mlx4_0:1");
    cr_expect(tt_close(ib->tx_gbps, 56.0), "tx %.6f", ib->tx_gbps);
    cr_expect(tt_close(ib->util, 1.0));
    cr_expect_eq(ib->err_delta, 1);
    cr_expect(tt_close(nic("eth0")->tx_gbps, 0.08), "eth0 %.6f", nic("eth0")->tx_gbps);
    /* the old PMA counter pegs at 2^32-1 and there is no extended counter to fall back on */
    tt_put(host, rel, "4294967295");
    cr_assert_eq(ct_monitor_sample_at(mon, T0 + 2 * SEC, &snap, &err), 0, "%s", err.msg);
    ib = nic("mlx4_0:1");
    cr_expect(ib->flags & CT_NICF_SATURATED);
    cr_expect(ib->tx_gbps < 0);
    free(host);
}

/* ---- JSON ----------------------------------------------------------------------------- */

Test(monitor, json_round_trip_and_replay)
{
    tt_eth(root, "eth0", "0000:00:03.0", 25000, "up");
    sample_at(T0);
    tt_stat(root, "eth0", "tx_bytes", 312500000);
    sample_at(T0 + SEC);
    snap.has_progress = true;
    snprintf(snap.progress.cmd, sizeof snap.progress.cmd, "sweep");
    snprintf(snap.progress.coll, sizeof snap.progress.coll, "allreduce");
    snap.progress.done = 3;
    snap.progress.total = 10;
    snap.progress.remaining_s = -1;
    ct_snapshot_point(&snap, "allreduce", "ring", 1024, 1.5);
    ct_snapshot_point(&snap, "allreduce", "ring", 1024, 2.5);
    ct_snapshot_point(&snap, "allreduce", "ring", 1024, 2.0);
    ct_snapshot_log(&snap, 2, "one");
    ct_snapshot_log(&snap, 2, "two");
    ct_snapshot_log(&snap, 2, "three");
    snap.topo = strdup("matrix\n  GPU0 X\n");
    cr_expect_eq(snap.n_pts, 1);
    cr_expect(tt_close(snap.pts[0].busbw, 2.5), "best busbw kept");
    cr_expect_eq(snap.n_log, 2);
    cr_expect_str_eq(snap.log[0], "two");
    struct ct_err err = {0};
    char *a = ct_snapshot_to_json(&snap, 0, &err), *b = ct_snapshot_to_json(&snap, 1, &err);
    cr_assert(a && b);
    cr_expect_null(strchr(a, '\n'), "compact JSON is one line");
    struct ct_snapshot back;
    ct_snapshot_init(&back);
    cr_assert_eq(ct_snapshot_from_json(b, strlen(b), &back, &err), 0, "%s", err.msg);
    char *c = ct_snapshot_to_json(&back, 0, &err);
    cr_expect_str_eq(c, a, "JSON -> snapshot -> JSON is stable");
    cr_expect(tt_close(tt_nic(&back, "eth0")->tx_gbps, 2.5));
    cr_expect(tt_nic(&back, "eth0")->util >= 0);
    cr_expect(back.progress.remaining_s < 0, "null stays unknown");
    /* a recording: a pretty document, then two lines */
    char path[512];
    snprintf(path, sizeof path, "%s/rec.json", root);
    FILE *f = fopen(path, "w");
    fprintf(f, "%s\n%s\n%s\n", b, a, a);
    fclose(f);
    struct ct_replay *r = ct_replay_open(path, &err);
    cr_assert(r, "%s", err.msg);
    cr_expect_eq(ct_replay_count(r), 3);
    for (int i = 0; i < 3; i++)
        cr_expect_eq(ct_replay_next(r, &back, &err), 0);
    cr_expect_eq(ct_replay_next(r, &back, &err), 1, "end of the replay");
    cr_expect_str_eq(back.topo, "matrix\n  GPU0 X\n");
    ct_replay_free(r);
    /* garbage is refused with the frame number */
    f = fopen(path, "w");
    fprintf(f, "%s\n{\"schema\": \"other/1\"}\n", a);
    fclose(f);
    cr_expect_null(ct_replay_open(path, &err));
    cr_expect(strstr(err.msg, "frame 2"), "%s", err.msg);
    ct_snapshot_release(&back);
    free(a);
    free(b);
    free(c);
}

/* ---- cluster gathering ---------------------------------------------------------------- */

struct grank {
    struct ct_boot_world *w;
    int rank;
    char root[256];
    struct ct_cluster grid;
    bool stop;
    int rc;
    struct ct_err err;
};

static void *gather_rank(void *p)
{
    struct grank *g = p;
    struct ct_boot *b;
    g->rc = ct_boot_inproc_open(&b, g->w, g->rank, &g->err);
    if (g->rc < 0)
        return NULL;
    struct ct_monitor *m = ct_monitor_new(g->root);
    for (int round = 0; round < 2 && g->rc == 0; round++) {
        if (round == 1 && b->local_rank == 0 && b->node < 2) {
            /* nodes 0 and 1 push traffic through mlx5_0; node 2's port stays idle */
            tt_ctr(g->root, "mlx5_0", "counters", "port_xmit_data", 50000000);
            tt_stat(g->root, "eth0", "rx_bytes", 10000000);
        }
        if (round == 1)
            usleep(100000);
        g->stop = round == 1 && g->rank == 3; /* one rank asks to stop */
        g->rc = ct_monitor_gather(m, b, 0, &g->stop, &g->grid, &g->err);
    }
    ct_monitor_free(m);
    ct_boot_close(b);
    return NULL;
}

Test(monitor, gather_node_by_nic_grid)
{
    enum { N = 6, RPN = 2 };
    struct ct_boot_world *w = ct_boot_world_new(N, RPN);
    struct grank g[N];
    pthread_t th[N];
    memset(g, 0, sizeof g);
    for (int node = 0; node < N / RPN; node++) {
        char nroot[256];
        snprintf(nroot, sizeof nroot, "%s/node%d", root, node);
        tt_rdma(nroot, "mlx5_0", "0000:00:04.0", "100 Gb/sec (4X EDR)", "4: ACTIVE", "InfiniBand",
                1, NULL);
        if (node < 2)
            tt_eth(nroot, "eth0", "0000:00:03.0", 10000, "up");
    }
    for (int i = 0; i < N; i++) {
        g[i].w = w;
        g[i].rank = i;
        snprintf(g[i].root, sizeof g[i].root, "%s/node%d", root, i / RPN);
        pthread_create(&th[i], NULL, gather_rank, &g[i]);
    }
    for (int i = 0; i < N; i++)
        pthread_join(th[i], NULL);
    for (int i = 0; i < N; i++)
        cr_assert_eq(g[i].rc, 0, "rank %d: %s", i, g[i].err.msg);
    const struct ct_cluster *c = &g[0].grid;
    cr_assert_eq(c->n_nodes, 3);
    cr_assert_eq(c->n_cols, 2);
    cr_expect_str_eq(c->node[0], "thread-node0");
    cr_expect_str_eq(c->node[2], "thread-node2");
    cr_expect_str_eq(c->col[0], "mlx5_0:1");
    cr_expect_str_eq(c->col[1], "eth0");
    cr_expect(c->util[0 * 2 + 0] > 0.001 && c->util[1 * 2 + 0] > 0.001, "busy rails");
    cr_expect(c->util[2 * 2 + 0] >= 0 && c->util[2 * 2 + 0] < 1e-9, "node 2's rail is idle");
    cr_expect(c->gbps[0 * 2 + 1] > 0, "eth0 receives on node 0");
    cr_expect_eq(c->util[2 * 2 + 1], CT_CLUSTER_ABSENT, "node 2 has no eth0");
    cr_expect_eq(g[1].grid.n_nodes, 0, "only rank 0 gets the grid");
    for (int i = 0; i < N; i++)
        cr_expect(g[i].stop, "rank %d heard rank 3's stop request", i);
    for (int i = 0; i < N; i++)
        ct_cluster_release(&g[i].grid);
    ct_boot_world_free(w);
}
