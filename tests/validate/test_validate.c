/* SPDX-License-Identifier: MIT */
/* Diagnosis on synthetic measurement matrices: a slow host, a slow link, a slow NIC, a dead
 * host, collectives against ceilings; ceilings from a topology. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "lib/file.h"
#include "output/validate_report.h"
#include "validate/pairs.h"
#include "validate/validate.h"

/* n units with ceiling 1 GB/s and nics NICs each; every pair of the tournament measured at
 * 0.95 GB/s except as slow() says; pair's NIC k = (a + b) % nics. */
static void build(struct ct_val_report *r, int n, int nics, double (*speed)(int, int, int, int))
{
    ct_val_report_init(r);
    r->unit = ct_xcalloc((size_t)n, sizeof *r->unit);
    r->n_unit = (size_t)n;
    for (int u = 0; u < n; u++) {
        snprintf(r->unit[u].name, sizeof r->unit[u].name, "node%d", u);
        r->unit[u].ceil_gbs = 1.0;
        r->unit[u].n_nic = nics;
        for (int k = 0; k < nics; k++) {
            snprintf(r->unit[u].nic[k].name, sizeof r->unit[u].nic[k].name, "eth%d", k);
            r->unit[u].nic[k].tx_bytes = 1e6;
        }
    }
    struct ct_pairs p;
    struct ct_err err = {0};
    cr_assert_eq(ct_pairs_build(&p, n, &err), 0);
    r->rounds = p.rounds;
    r->n_pair = (size_t)p.rounds * (size_t)p.per_round;
    r->pair = ct_xcalloc(r->n_pair, sizeof *r->pair);
    for (size_t i = 0; i < r->n_pair; i++) {
        struct ct_val_pair *q = &r->pair[i];
        q->round = (int)(i / (size_t)p.per_round);
        q->a = p.pair[i].a;
        q->b = p.pair[i].b;
        q->nic_a = q->nic_b = (q->a + q->b) % nics;
        q->gbs = speed(q->a, q->b, q->nic_a, q->nic_b);
        q->lat_us = 20;
    }
    ct_pairs_release(&p);
}

static size_t count(const struct ct_val_report *r, enum ct_val_find_kind k)
{
    size_t c = 0;
    for (size_t i = 0; i < r->n_finding; i++)
        c += r->finding[i].kind == k;
    return c;
}

static double all_fast(int a, int b, int na, int nb) { return 0.95; }
static double host3_slow(int a, int b, int na, int nb) { return a == 3 || b == 3 ? 0.25 : 0.95; }
static double link_1_4(int a, int b, int na, int nb) { return a == 1 && b == 4 ? 0.3 : 0.95; }
static double nic_2_1(int a, int b, int na, int nb)
{
    return (a == 2 && na == 1) || (b == 2 && nb == 1) ? 0.2 : 0.95;
}

/* n units (build) diagnosed: exactly one finding, of kind at unit (its first end) */
static void one_finding(struct ct_val_report *r, int n, int nics,
                        double (*speed)(int, int, int, int), enum ct_val_find_kind kind, int unit)
{
    build(r, n, nics, speed);
    ct_val_diagnose(r);
    cr_assert_eq(ct_val_findings(r), 1, "n=%d: %zu findings (%s)", n, r->n_finding,
                 r->n_finding ? r->finding[0].msg : "");
    cr_expect_eq(r->finding[0].kind, kind, "n=%d: %s", n, r->finding[0].msg);
    cr_expect_eq(r->finding[0].unit, unit, "n=%d: %s", n, r->finding[0].msg);
}

Test(validate, all_fast_passes)
{
    for (int n = 2; n <= 9; n++) {
        struct ct_val_report r;
        build(&r, n, 1, all_fast);
        ct_val_diagnose(&r);
        cr_expect_eq(ct_val_findings(&r), 0, "n=%d: %s", n, r.n_finding ? r.finding[0].msg : "");
        for (size_t u = 0; u < r.n_unit; u++)
            cr_expect_eq(r.unit[u].state, CT_VAL_OK);
        ct_val_report_release(&r);
    }
}

Test(validate, one_slow_host_is_named_alone)
{
    for (int n = 4; n <= 8; n++) {
        struct ct_val_report r;
        one_finding(&r, n, 1, host3_slow, CT_VALF_UNIT, 3);
        cr_expect(strstr(r.finding[0].msg, "node3") != NULL, "%s", r.finding[0].msg);
        for (size_t u = 0; u < r.n_unit; u++)
            cr_expect_eq(r.unit[u].state, u == 3 ? CT_VAL_SLOW : CT_VAL_OK, "n=%d u=%zu", n, u);
        cr_expect_float_eq(r.unit[3].pct, 25.0, 1e-6);
        ct_val_report_release(&r);
    }
}

Test(validate, one_slow_pair_is_a_link)
{
    struct ct_val_report r;
    one_finding(&r, 6, 1, link_1_4, CT_VALF_LINK, 1);
    cr_expect_eq(r.finding[0].unit_b, 4);
    for (size_t u = 0; u < r.n_unit; u++)
        cr_expect_eq(r.unit[u].state, CT_VAL_OK);
    ct_val_report_release(&r);
}

static double pair_0_1(int a, int b, int na, int nb)
{
    return a + b == 1 ? 0.3 : 0.95;
}
static double hosts_0_1(int a, int b, int na, int nb)
{
    return a < 2 || b < 2 ? 0.3 : 0.95;
}
static double all_slow(int a, int b, int na, int nb)
{
    return 0.3;
}
static double host_2(int a, int b, int na, int nb)
{
    return a == 2 || b == 2 ? 0.3 : 0.95;
}

/* Two hosts: their one pair slow is the host, its NIC or the link, and nothing tells which:
 * no link verdict ("both ends otherwise fine" is false), neither host ok. */
Test(validate, two_hosts_slow_pair_cannot_tell_which)
{
    struct ct_val_report r;
    one_finding(&r, 2, 1, pair_0_1, CT_VALF_PAIR, 0);
    cr_expect(strstr(r.finding[0].msg, "at either end: which host, NIC or link") != NULL, "%s",
              r.finding[0].msg);
    cr_expect_eq(r.unit[0].state, CT_VAL_UNKNOWN);
    cr_expect_eq(r.unit[1].state, CT_VAL_UNKNOWN);
    ct_val_report_release(&r);
}

/* Two hosts, two rails: eth0's pair fine, eth1's slow. Which end's eth1 (or the rail's switch)
 * cannot be told: no NIC blamed, a [pair] finding, and neither host ok. */
Test(validate, two_hosts_two_rails_one_slow_cannot_tell_which)
{
    struct ct_val_report r;
    build(&r, 2, 2, all_fast);
    r.pair = ct_xrealloc(r.pair, 2 * sizeof *r.pair);
    r.n_pair = 2;
    r.pair[1] = r.pair[0];
    r.pair[0].nic_a = r.pair[0].nic_b = 0;
    r.pair[1].nic_a = r.pair[1].nic_b = 1;
    r.pair[1].gbs = 0.3;
    ct_val_diagnose(&r);
    cr_expect_eq(count(&r, CT_VALF_NIC), 0);
    cr_assert_eq(count(&r, CT_VALF_PAIR), 1, "%zu: %s", r.n_finding, r.finding[0].msg);
    cr_expect_eq(r.unit[0].state, CT_VAL_UNKNOWN);
    cr_expect_eq(r.unit[1].state, CT_VAL_UNKNOWN);
    ct_val_report_release(&r);
}

/* Four hosts, two slow: each has partners whose pair is fine, so both are named, the others
 * not. */
Test(validate, two_slow_of_four_are_named)
{
    struct ct_val_report r;
    build(&r, 4, 1, hosts_0_1);
    ct_val_diagnose(&r);
    cr_expect_eq(count(&r, CT_VALF_UNIT), 2);
    cr_expect_eq(count(&r, CT_VALF_LINK) + count(&r, CT_VALF_PAIR), 0);
    for (size_t u = 0; u < r.n_unit; u++)
        cr_expect_eq(r.unit[u].state, u < 2 ? CT_VAL_SLOW : CT_VAL_OK, "u=%zu", u);
    ct_val_report_release(&r);
}

/* Every pair slow (a fabric below its stated rate): every host of three or more is named, as
 * each is below its ceiling; two hosts stay a pair whose slow end is unknown. */
Test(validate, all_slow_names_every_host_of_three_or_more)
{
    for (int n = 2; n <= 5; n++) {
        struct ct_val_report r;
        build(&r, n, 1, all_slow);
        ct_val_diagnose(&r);
        cr_expect_eq(count(&r, CT_VALF_UNIT), n < 3 ? 0 : (size_t)n, "n=%d", n);
        cr_expect_eq(count(&r, CT_VALF_PAIR), n < 3 ? 1 : 0, "n=%d", n);
        for (size_t u = 0; u < r.n_unit; u++)
            cr_expect_eq(r.unit[u].state, n < 3 ? CT_VAL_UNKNOWN : CT_VAL_SLOW, "n=%d u=%zu", n, u);
        ct_val_report_release(&r);
    }
}

/* Three hosts, one slow: its partners' pair is fine, so it is named. */
Test(validate, one_slow_host_of_three_is_named)
{
    struct ct_val_report r;
    one_finding(&r, 3, 1, host_2, CT_VALF_UNIT, 2);
    cr_expect_eq(r.unit[0].state, CT_VAL_OK);
    cr_expect_eq(r.unit[2].state, CT_VAL_SLOW);
    ct_val_report_release(&r);
}

Test(validate, slow_nic_with_fine_siblings)
{
    struct ct_val_report r;
    one_finding(&r, 6, 2, nic_2_1, CT_VALF_NIC, 2);
    cr_expect_eq(r.finding[0].nic, 1);
    cr_expect_eq(r.unit[2].nic[1].state, CT_VAL_SLOW);
    cr_expect_eq(r.unit[2].nic[0].state, CT_VAL_OK);
    ct_val_report_release(&r);
}

Test(validate, dead_host_fails_alone)
{
    struct ct_val_report r;
    build(&r, 4, 1, all_fast);
    r.unit[2].dead = true;
    for (size_t i = 0; i < r.n_pair; i++)
        if (r.pair[i].a == 2 || r.pair[i].b == 2)
            r.pair[i].gbs = -1;
    ct_val_diagnose(&r);
    cr_assert_eq(ct_val_findings(&r), 1);
    cr_expect_eq(r.finding[0].kind, CT_VALF_FAILED);
    cr_expect_eq(r.finding[0].unit, 2);
    cr_expect_eq(r.unit[0].state, CT_VAL_OK);
    ct_val_report_release(&r);
}

/* The battery stopped in its first round at a dead host: the others, with nothing measured,
 * read unknown and say why (their evidence was empty, "-"); a host measured reads ok. */
Test(validate, hosts_not_reached_say_so)
{
    struct ct_val_report r;
    build(&r, 4, 1, all_fast);
    r.unit[2].dead = true;
    r.n_pair = 1; /* the round that reached a pair: 0-1 alone */
    r.pair[0].a = 0, r.pair[0].b = 1;
    r.stopped = true;
    ct_val_diagnose(&r);
    cr_assert_eq(ct_val_findings(&r), 1);
    cr_expect_eq(r.unit[3].state, CT_VAL_UNKNOWN);
    cr_expect(strstr(r.unit[3].evidence, "not measured: the battery stopped"), "%s",
              r.unit[3].evidence);
    cr_expect_eq(r.unit[0].state, CT_VAL_OK);
    cr_expect(!strstr(r.unit[0].evidence, "not measured"), "%s", r.unit[0].evidence);
    cr_expect(!strstr(r.unit[2].evidence, "not measured"), "%s", r.unit[2].evidence);
    ct_val_report_release(&r);
    /* a host whose one recorded pair was with the host that died later (the round of the
     * death is not recorded): why it has no figure */
    build(&r, 4, 1, all_fast);
    r.unit[2].dead = true;
    r.n_pair = 2; /* the first round: 0-1 and 2-3 measured; 2 died in the second */
    r.pair[0].a = 0, r.pair[0].b = 1;
    r.pair[1].a = 2, r.pair[1].b = 3;
    r.stopped = true;
    ct_val_diagnose(&r);
    cr_expect_eq(ct_val_findings(&r), 1); /* host 2 alone: 3 is not blamed */
    cr_expect_eq(r.unit[3].state, CT_VAL_UNKNOWN);
    cr_expect_str_eq(r.unit[3].evidence, "not judged: its one pair was with failed host node2");
    cr_expect(!strstr(r.unit[0].evidence, "not measured"), "%s", r.unit[0].evidence);
    ct_val_report_release(&r);
    /* a run that did not stop says nothing of the kind */
    build(&r, 4, 1, all_fast);
    r.n_pair = 1;
    r.pair[0].a = 0, r.pair[0].b = 1;
    ct_val_diagnose(&r);
    cr_expect_eq(r.unit[3].state, CT_VAL_UNKNOWN);
    cr_expect(!strstr(r.unit[3].evidence, "not measured"), "%s", r.unit[3].evidence);
    ct_val_report_release(&r);
}

Test(validate, unknown_ceiling_is_not_a_finding_but_counted)
{
    struct ct_val_report r;
    build(&r, 3, 1, all_fast);
    for (size_t u = 0; u < r.n_unit; u++)
        r.unit[u].ceil_gbs = 0;
    ct_val_diagnose(&r);
    cr_expect_eq(ct_val_findings(&r), 0);
    cr_expect_eq(r.n_unknown, r.n_pair);
    ct_val_report_release(&r);
}

Test(validate, nic_that_carried_nothing_and_errors)
{
    struct ct_val_report r;
    build(&r, 4, 1, all_fast);
    r.expect_nic = true;
    r.unit[1].nic[0].tx_bytes = 0;
    r.unit[3].nic[0].errors = 7;
    ct_val_diagnose(&r);
    cr_assert_eq(count(&r, CT_VALF_PROBE), 2);
    cr_expect_eq(ct_val_findings(&r), 2);
    ct_val_report_release(&r);
}

Test(validate, collectives_against_ceilings)
{
    struct ct_val_report r;
    build(&r, 4, 1, all_fast);
    r.coll = ct_xcalloc(2, sizeof *r.coll);
    r.n_coll = 2;
    snprintf(r.coll[0].coll, sizeof r.coll[0].coll, "allreduce");
    r.coll[0].ceil_gbs = 1;
    r.coll[0].busbw = 0.9;
    snprintf(r.coll[1].coll, sizeof r.coll[1].coll, "allgather");
    r.coll[1].ceil_gbs = 1;
    r.coll[1].busbw = 0.5;
    ct_val_diagnose(&r);
    cr_expect_eq(r.coll[0].state, CT_VAL_OK);
    cr_expect_eq(r.coll[1].state, CT_VAL_SLOW);
    cr_expect_eq(count(&r, CT_VALF_COLL), 1);
    ct_val_report_release(&r);
}

Test(validate, ceilings)
{
    char f[200];
    cr_expect_float_eq(ct_val_coll_ceiling("allreduce", 4, 2, 1.0, f, sizeof f), 1.0, 1e-9);
    /* 4 units x 1 rank: alltoall b (n-1)/(n-1) = b */
    cr_expect_float_eq(ct_val_coll_ceiling("alltoall", 4, 1, 1.0, f, sizeof f), 1.0, 1e-9);
    /* 2 units x 2: 1 x 3 / (2 x 2) */
    cr_expect_float_eq(ct_val_coll_ceiling("alltoall", 2, 2, 1.0, f, sizeof f), 0.75, 1e-9);
    cr_expect_eq(ct_val_coll_ceiling("allreduce", 4, 1, 0, f, sizeof f), 0);
    cr_expect(strstr(f, "unknown") != NULL);
    cr_expect_float_eq(ct_val_efficiency("shm", NULL, 0), 0.65, 1e-9);
    cr_expect_float_eq(ct_val_efficiency("shm+tcp", NULL, 0), 0.65, 1e-9);
    cr_expect_float_eq(ct_val_efficiency("tcp", NULL, 0), 0.9, 1e-9);
    cr_expect_float_eq(ct_val_efficiency("udp", NULL, 0), 0.9, 1e-9);
    /* a baseline's overrides replace their kind's row; the lowest kind still decides */
    struct ct_val_eff o[] = {{"tcp", 0.7}, {"shm", 0.95}, {"udp", 0.5}};
    cr_expect_float_eq(ct_val_efficiency("shm+tcp", o, 3), 0.7, 1e-9);
    cr_expect_float_eq(ct_val_efficiency("shm", o, 3), 0.95, 1e-9);
    cr_expect_float_eq(ct_val_efficiency("fabric", o, 3), 0.9, 1e-9);
    cr_expect_float_eq(ct_val_efficiency("udp", o, 3), 0.5, 1e-9);
}

Test(validate, expect_from_topology)
{
    struct ct_topo *t = ct_topo_new();
    int i = ct_topo_add_nic(t, "", 0, "eth0");
    t->nic[i].rate_gbps = 10;
    snprintf(t->nic[i].oper, sizeof t->nic[i].oper, "up");
    int l = ct_topo_add_nic(t, "", 0, "lo");
    t->nic[l].rate_gbps = 100;
    ct_topo_finalize(t);
    struct ct_val_unit u = {0};
    ct_val_expect_unit(t, "tcp", 0.9, 0, &u);
    cr_expect_eq(u.n_nic, 1, "loopback is not a NIC to validate");
    cr_expect_float_eq(u.ceil_gbs, 10 / 8.0 * 0.9, 1e-9);
    cr_expect(strstr(u.formula, "eth0 10 Gb/s") != NULL, "%s", u.formula);
    t->nic[ct_topo_find_netdev(t, "eth0")].rate_gbps = 0;
    ct_val_expect_unit(t, "tcp", 0.9, 0, &u);
    cr_expect_eq(u.ceil_gbs, 0);
    cr_expect(strstr(u.formula, "ceiling unknown") != NULL);
    ct_val_expect_unit(t, "tcp", 0.9, 1, &u);
    cr_expect_float_eq(u.ceil_gbs, 0.1125, 1e-9);
    ct_topo_free(t);
}

/* ==== GPU copies (validate/gpucopy.c) ===================================================== */

#define A100 "nccl-topo-dump_alibaba_8xA100_5xCX6Dx-RoCE-bond.xml" /* PCIe 4.0 x16, NV12 */
#define H100 "nccl-topo-dump_ibm-cloud-gx3d_8xH100_8xCX7-RoCE.xml" /* NV18, link_width 0 */

/* One host of 8 GPUs from a capture, as CUDA would number them, each copy at h2d, d2h and
 * p2p GB/s (set rates: just under or over the ceilings x 0.85, as a healthy host would be
 * judged), which the test then changes. */
static struct ct_topo *gpu_host(const char *capture, struct ct_val_report *r,
                                struct ct_val_gpu_meas *m, double h2d, double d2h, double p2p)
{
    struct ct_topo *t = ct_topo_new();
    struct ct_err err = {0};
    char path[256];
    snprintf(path, sizeof path, "../shared/fixtures/topologies/%s", capture);
    cr_assert_eq(ct_topo_import(t, "nccl-xml", path, NULL, &err), 0, "%s", err.msg);
    cr_assert_eq(t->n_gpu, 8);
    ct_val_report_init(r);
    r->n_unit = 1;
    r->unit = ct_xcalloc(1, sizeof *r->unit);
    snprintf(r->unit[0].name, sizeof r->unit[0].name, "gpuhost");
    memset(m, 0, sizeof *m);
    m->state = 1;
    m->n = 8;
    for (int a = 0; a < 8; a++) {
        snprintf(m->busid[a], sizeof m->busid[a], "%s", t->gpu[a].busid);
        m->h2d[a] = h2d;
        m->d2h[a] = d2h;
        for (int b = 0; b < 8; b++)
            m->p2p[a][b] = a == b ? 0 : p2p;
    }
    return t;
}

static const char *finding_with(const struct ct_val_report *r, const char *what)
{
    for (size_t i = 0; i < r->n_finding; i++)
        if (strstr(r->finding[i].msg, what))
            return r->finding[i].msg;
    return NULL;
}

Test(validate, gpu_copies_healthy_host_passes)
{
    struct ct_val_report r;
    struct ct_val_gpu_meas m;
    struct ct_topo *t = gpu_host(A100, &r, &m, 26, 25.5, 265);
    ct_val_gpu_expect(&r, 0, t, &m, NULL, 0);
    cr_assert_eq(r.n_gcopy, 8 * 2 + 8 * 7);
    ct_val_diagnose(&r);
    ct_val_gpu_diagnose(&r);
    cr_expect_eq(r.n_finding, 0, "%s", r.n_finding ? r.finding[0].msg : "");
    cr_expect_eq(r.n_unknown, 0);
    /* the ceilings: PCIe 4.0 x16 = 31.5 GB/s and NV12 = 300 GB/s, x 0.85 */
    cr_expect_float_eq(r.gcopy[0].ceil_gbs, 31.5 * 0.85, 0.1, "%g", r.gcopy[0].ceil_gbs);
    cr_expect(strstr(r.gcopy[0].formula, "GPU0 PCIe 4.0 x16"), "%s", r.gcopy[0].formula);
    cr_expect_float_eq(r.gcopy[16].ceil_gbs, 300 * 0.85, 0.1, "%g", r.gcopy[16].ceil_gbs);
    cr_expect(strstr(r.gcopy[16].formula, "GPU0->GPU1 NV12"), "%s", r.gcopy[16].formula);
    ct_val_report_release(&r);
    ct_topo_free(t);
}

/* GPU3 trained at x4 (both directions a quarter), GPU5 -> GPU6 on a degraded NVLink set,
 * every copy of GPU1 to a peer slow (its NVLinks), GPU7's copy to GPU0 failed: each named.
 * The threshold is 80% of the ceiling. */
Test(validate, gpu_copies_blame_the_link)
{
    struct ct_val_report r;
    struct ct_val_gpu_meas m;
    struct ct_topo *t = gpu_host(A100, &r, &m, 26, 25.5, 265);
    m.h2d[3] = 6.7;
    m.d2h[3] = 6.5;
    m.h2d[4] = 21.0; /* 78%: one direction below, said with the other */
    m.p2p[5][6] = 80;
    for (int b = 0; b < 8; b++)
        m.p2p[1][b] = b == 1 ? 0 : 100;
    m.p2p[7][0] = -1;
    for (int b = 0; b < 8; b++) /* a GPU that would not open: every copy from it failed */
        m.p2p[2][b] = b == 2 ? 0 : b == 5 ? 40 : -1;
    ct_val_gpu_expect(&r, 0, t, &m, NULL, 0);
    ct_val_diagnose(&r);
    ct_val_gpu_diagnose(&r);
    cr_expect(finding_with(&r, "GPU2's copies to all 7 peers are slow (worst 16% of its links'"));
    const char *f = finding_with(&r, "GPU3's PCIe link");
    cr_expect(f && strstr(f, "host->GPU 6.7 GB/s (25%)") && strstr(f, "GPU->host 6.5 GB/s (24%)") &&
                  strstr(f, "of GPU3 PCIe 4.0 x16 = 31.5 GB/s x 0.85 = 26.8 GB/s"),
              "%s", f ? f : "no finding");
    f = finding_with(&r, "GPU4's PCIe link");
    cr_expect(f && strstr(f, "host->GPU 21.0 GB/s (78%)") && strstr(f, "GPU->host 25.5 GB/s (95%)"),
              "%s", f ? f : "no finding");
    cr_expect(finding_with(&r, "GPU5->GPU6 80.0 GB/s (31%)"));
    cr_expect(finding_with(&r, "GPU1's copies to all 7 peers are slow"));
    cr_expect_null(finding_with(&r, "GPU1->"), "GPU1's pairs are one finding");
    cr_expect(finding_with(&r, "GPU7->GPU0 failed"));
    cr_expect_eq(r.n_finding, 6, "%zu findings", r.n_finding);
    for (size_t i = 0; i < r.n_finding; i++)
        cr_expect_eq(r.finding[i].kind, CT_VALF_GPU);
    ct_val_report_release(&r);
    ct_topo_free(t);
}

/* A host whose topology has GPUs and whose measurement could not run is named with the
 * reason; one without GPUs is not; a baseline's "pcie" efficiency replaces the table's; a
 * capture without the GPUs' link width leaves the host copies' ceiling unknown (counted, not
 * judged) and still judges the NVLink copies. */
Test(validate, gpu_copies_not_measured_and_efficiency)
{
    struct ct_val_report r;
    struct ct_val_gpu_meas m;
    struct ct_topo *t = gpu_host(A100, &r, &m, 26, 25.5, 265), *none = ct_topo_new();
    struct ct_val_gpu_meas why = {.state = -1};
    snprintf(why.why, sizeof why.why, "CUDA memory: no NVIDIA driver");
    ct_val_gpu_expect(&r, 0, none, &why, NULL, 0);
    cr_expect_str_empty(r.gcopy_note);
    ct_val_gpu_expect(&r, 0, t, &why, NULL, 0);
    cr_expect_str_eq(r.gcopy_note, "gpuhost: CUDA memory: no NVIDIA driver");
    cr_expect_eq(r.n_gcopy, 0);
    struct ct_val_eff over = {"pcie", 0.5};
    ct_val_gpu_expect(&r, 0, t, &m, &over, 1);
    cr_expect_float_eq(r.gcopy[0].ceil_gbs, 31.5 * 0.5, 0.1, "%g", r.gcopy[0].ceil_gbs);
    ct_val_report_release(&r);
    ct_topo_free(t);
    ct_topo_free(none);
    t = gpu_host(H100, &r, &m, 55, 54, 30);
    ct_val_gpu_expect(&r, 0, t, &m, NULL, 0);
    ct_val_diagnose(&r);
    ct_val_gpu_diagnose(&r);
    cr_expect_eq(r.n_unknown, 16, "the host copies: %zu unknown", r.n_unknown);
    cr_expect(strstr(r.gcopy[0].formula, "GPU0: PCIe rate unknown"), "%s", r.gcopy[0].formula);
    cr_expect_eq(r.n_finding, 8, "every GPU's NVLinks slow: %zu findings", r.n_finding);
    ct_val_report_release(&r);
    ct_topo_free(t);
}

/* Suite gpu: this host's GPUs measured for real (SKIP, with the reason, without one). */
Test(gpu, validate_measures_this_hosts_gpus)
{
    struct ct_val_gpu_meas m;
    ct_val_gpu_measure(&m, 16u << 20, 3);
    if (m.state < 0)
        cr_skip_test("no GPU copies here: %s", m.why);
    cr_assert_eq(m.state, 1);
    for (int a = 0; a < m.n; a++) {
        cr_expect_gt(m.h2d[a], 0, "GPU %d host->GPU", a);
        cr_expect_gt(m.d2h[a], 0, "GPU %d GPU->host", a);
        cr_expect(m.busid[a][0], "GPU %d has a PCI address", a);
        for (int b = 0; b < m.n; b++)
            if (a != b)
                cr_expect_gt(m.p2p[a][b], 0, "GPU %d -> GPU %d", a, b);
    }
}

/* The report's text (ct_val_report_text); the caller frees it. */
static char *report_text(const struct ct_val_report *r)
{
    char *txt = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&txt, &len);
    struct ct_err err = {0};
    cr_assert_eq(ct_val_report_text(r, f, &err), 0, "%s", err.msg);
    fclose(f);
    return txt;
}

/* The text report: host copies as lines, GPU -> GPU copies as a matrix with the diagonal
 * and the slow and failed cells marked; the JSON lists every copy. */
Test(validate, gpu_copies_report)
{
    struct ct_val_report r;
    struct ct_val_gpu_meas m;
    struct ct_topo *t = gpu_host(A100, &r, &m, 26, 25.5, 265);
    m.p2p[5][6] = 80;
    m.p2p[7][0] = -1;
    ct_val_gpu_expect(&r, 0, t, &m, NULL, 0);
    ct_val_diagnose(&r);
    ct_val_gpu_diagnose(&r);
    char *buf = report_text(&r);
    struct ct_err err = {0};
    cr_expect(strstr(buf, "gpuhost GPU3"), "%s", buf);
    cr_expect(
        strstr(buf,
               "     5    265.0    265.0    265.0    265.0    265.0        -    80.0*    265.0\n"),
        "%s", buf);
    cr_expect(strstr(buf, "     7        x    265.0"), "%s", buf);
    cr_expect(strstr(buf, "     0        -    265.0"), "%s", buf);
    free(buf);
    char path[] = "/tmp/ct-val-gpu-XXXXXX";
    close(mkstemp(path));
    cr_assert_eq(ct_val_report_json_write(&r, path, &err), 0, "%s", err.msg);
    char *txt = NULL;
    size_t n = 0;
    cr_assert_eq(ct_file_read(path, &txt, &n, &err), 0, "%s", err.msg);
    cr_expect(strstr(txt, "\"dir\": \"p2p\""), "%s", txt);
    cr_expect(strstr(txt, "\"gpu_copies_note\": null"), "%s", txt);
    free(txt);
    unlink(path);
    ct_val_report_release(&r);
    ct_topo_free(t);
}

/* Two hosts of unequal ceilings: the pair is judged against the lower one, and so is each
 * host's percent (it was the host's own ceiling: 72% printed beside "ok" at an 80% bar). */
Test(validate, a_hosts_percent_is_the_one_its_verdict_used)
{
    struct ct_val_report r;
    build(&r, 2, 1, all_fast);
    r.unit[0].ceil_gbs = 10.236;
    r.unit[1].ceil_gbs = 8.6;
    r.pair[0].gbs = 7.361;
    ct_val_diagnose(&r);
    cr_expect_eq(ct_val_findings(&r), 0);
    for (size_t u = 0; u < 2; u++) {
        cr_expect_eq(r.unit[u].state, CT_VAL_OK);
        cr_expect_float_eq(r.unit[u].pair_ceil_gbs, 8.6, 1e-9);
        cr_expect_float_eq(r.unit[u].pct, 100 * 7.361 / 8.6, 1e-6, "u=%zu: %g", u, r.unit[u].pct);
        cr_expect_geq(r.unit[u].pct, r.min_pct, "an ok host is not shown below the bar");
    }
    cr_expect(strstr(r.unit[0].evidence, "10.236") != NULL, "%s", r.unit[0].evidence);
    char *txt = report_text(&r);
    cr_expect(strstr(txt, "8.600     86") != NULL, "the row shows 8.600 and 86%%:\n%s", txt);
    cr_expect(strstr(txt, "10.236     72") == NULL, "%s", txt);
    free(txt);
    ct_val_report_release(&r);
}

/* A percent just below the bar is never shown as the bar: 79.6% of an 80% bar read "80"
 * beside "slow" (rounded); it shows 79, in the table and in the finding. */
Test(validate, a_percent_below_the_bar_is_not_shown_as_the_bar)
{
    struct ct_val_report r;
    build(&r, 2, 1, all_fast);
    r.unit[0].ceil_gbs = r.unit[1].ceil_gbs = 10;
    r.pair[0].gbs = 7.96;
    ct_val_diagnose(&r);
    cr_assert_eq(ct_val_findings(&r), 1);
    cr_expect(strstr(r.finding[0].msg, "(79%)") != NULL, "%s", r.finding[0].msg);
    char *txt = report_text(&r);
    cr_expect(strstr(txt, "10.000     79") != NULL, "the row shows 79%%:\n%s", txt);
    cr_expect(strstr(txt, "     80 ") == NULL, "%s", txt);
    free(txt);
    ct_val_report_release(&r);
    /* nor one at or above it below it (a bar of 80.3: 80.4 read 80 beside "ok") */
    cr_expect_float_eq(ct_val_pct_shown(80.4, 80.3), 81, 1e-9);
    cr_expect_float_eq(ct_val_pct_shown(79.6, 80), 79, 1e-9);
    cr_expect_float_eq(ct_val_pct_shown(85.6, 80), 86, 1e-9, "elsewhere rounded");
    cr_expect_float_eq(ct_val_pct_shown(80, 80), 80, 1e-9);
}
