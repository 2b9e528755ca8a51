/* SPDX-License-Identifier: MIT */
/*
 * validate/: ceilings against measured, the O(N)-round pair schedule (pairs.c), rails
 * (rails.c), the battery one rank runs (battery.c) and blame. This file: `colltune
 * validate` as pure functions: expected ceilings from each unit's probed topology, and the
 * diagnosis of a battery of measurements (pairs, collectives, NIC counters) into per-unit
 * / per-NIC verdicts and findings. A "unit" is a host, or a rank on a single host.
 * validate/ may include tune/ (statistics), monitor/, backend/, probe/, transport/, algos/,
 * lib/; never output/, tui/ or cmd/; it never prints.
 */
#ifndef CT_VALIDATE_H
#define CT_VALIDATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../lib/err.h"
#include "../probe/topo.h"

#define CT_VAL_MAX_NICS 8

enum ct_val_state { CT_VAL_OK, CT_VAL_SLOW, CT_VAL_FAILED, CT_VAL_UNKNOWN };
const char *ct_val_state_name(enum ct_val_state s); /* "ok", "slow", "failed", "unknown" */

/* An efficiency stated by a baseline file for one transport kind ("tcp", "shm", ...). */
struct ct_val_eff {
    char kind[16];
    double eff; /* (0, 1] */
};

/* Expected fraction of a path's rate a transport reaches (shm 1.0, tcp 0.9, ...): the
 * overrides first (n_over of them, may be 0), then the table; 0.9 for an unknown kind. For
 * "shm+tcp" the lowest of the kinds named applies. */
double ct_val_efficiency(const char *transport, const struct ct_val_eff *over, size_t n_over);

struct ct_val_nic {
    char name[32];    /* "eth0", "mlx5_0:1" */
    char netdev[32];  /* its network interface ("ib0" for mlx5_0:1), "" none */
    double line_gbps; /* link rate from the probe (Gb/s), 0 unknown */
    bool degraded;    /* the probe flagged this port (down or degraded rate) */
    char probe_msg[160];
    /* from the counters: bytes carried and error increments during the pair rounds */
    double tx_bytes, rx_bytes;
    uint64_t errors;
    /* verdict */
    enum ct_val_state state;  /* slow only where a slow pair through it is not explained */
    bool blamed;              /* a [nic] finding names it */
    double measured_gbs, pct; /* median of pairs through this NIC */
    char evidence[200];
};

struct ct_val_unit {
    char name[64];
    int first_rank, nranks;
    bool dead; /* did not answer (killed, timed out) */
    double ceil_gbs;   /* point-to-point ceiling per direction (GB/s), 0 unknown */
    char formula[200]; /* how ceil_gbs was derived */
    struct ct_val_nic nic[CT_VAL_MAX_NICS];
    int n_nic;
    /* verdict */
    enum ct_val_state state;
    double measured_gbs, pct, lat_us; /* median over its pairs; pct of pair_ceil_gbs */
    double pair_ceil_gbs; /* what its pairs were judged against: the median of their ceilings
                             (each the lower of its two ends'), 0 unknown */
    char evidence[320];
};

struct ct_val_pair {
    int round, a, b; /* unit indices */
    int rail;        /* index into ct_val_report.rail, -1: the route between the hosts */
    int nic_a, nic_b; /* NIC of each end that carried the traffic (counters), -1 none seen */
    double gbs;       /* GB/s per direction; < 0 the exchange failed */
    double lat_us;    /* half round trip of a small message; < 0 unknown */
    /* re-measured because it was below the threshold (repeats > 0): first_gbs was the round's
     * number, gbs is now the median of the repetitions, ref_gbs the healthy reference pair's
     * median beside them; cleared: it kept pace with the reference (not the link's fault) */
    int repeats;
    double first_gbs, ref_gbs;
    bool cleared;
    /* derived by ct_val_diagnose */
    double ceil_gbs, pct;
    enum ct_val_state state;
};

struct ct_val_coll {
    char coll[16], algo[24];
    uint64_t size;
    double busbw;       /* GB/s measured (the median of the repeats where measured again); < 0
                           failed / not run */
    double first_busbw; /* with repeats: the first measure */
    int repeats;        /* times measured again (0: once only) */
    double ceil_gbs; /* 0 unknown */
    char formula[200];
    double pct;
    enum ct_val_state state;
};

/* One GPU copy a host measured (validate/gpucopy.c): host -> GPU, GPU -> host, GPU -> GPU. */
enum ct_val_gdir { CT_VALG_H2D, CT_VALG_D2H, CT_VALG_P2P };
struct ct_val_gcopy {
    int unit;
    enum ct_val_gdir dir;
    int gpu, peer;   /* indices in the unit's topology's GPUs (peer: P2P only, else -1;
                        -1 also for a GPU CUDA shows that the topology lacks) */
    int ca, cb;      /* CUDA's numbers of the GPU and the peer (-1) */
    double gbs;      /* measured GB/s; < 0 the copy failed */
    double ceil_gbs; /* the link's rate x the efficiency copies reach; 0 unknown */
    char formula[200];
    double pct;
    enum ct_val_state state;
};

enum ct_val_find_kind {
    CT_VALF_UNIT,   /* a host (all its pairs slow) */
    CT_VALF_LINK,   /* one pair slow, both ends otherwise fine */
    CT_VALF_NIC,    /* pairs through one NIC slow, siblings fine */
    CT_VALF_FAILED, /* a unit that did not answer or whose exchanges failed */
    CT_VALF_COLL,   /* a collective below its ceiling */
    CT_VALF_PROBE,  /* a port the probe flagged, NIC errors, a NIC that carried nothing */
    CT_VALF_HETERO, /* a host shaped unlike the majority */
    CT_VALF_GPU,    /* a GPU's PCIe link or NVLinks slow (GPU copies) */
    CT_VALF_PAIR,   /* a pair slow whose ends show no fine pair elsewhere: which, unknown */
};
const char *ct_val_find_name(enum ct_val_find_kind k);

struct ct_val_finding {
    enum ct_val_find_kind kind;
    int unit, unit_b, nic; /* -1 where not applicable */
    char msg[400];
};

struct ct_val_report {
    double min_pct;      /* pass threshold in percent */
    char transport[32];  /* transports in use */
    bool expect_nic;     /* units are on different hosts: traffic must show on a NIC */
    struct ct_val_unit *unit;
    size_t n_unit;
    struct ct_val_pair *pair;
    size_t n_pair;
    int rounds;          /* pair rounds in all (per rail x rails) */
    char (*rail)[24];    /* rails driven one after another ("10.1.0.0/24"), n_rail of them */
    int n_rail;
    struct ct_val_coll *coll;
    size_t n_coll;
    struct ct_val_finding *finding;
    size_t n_finding;
    struct ct_val_gcopy *gcopy; /* GPU copies of hosts with GPUs (validate/gpucopy.c) */
    size_t n_gcopy;
    char gcopy_note[320]; /* where a host's GPUs were not measured, why */
    size_t n_unknown; /* measurements without a ceiling */
    size_t n_remeasured; /* suspect pairs measured again */
    int repeats;         /* times each */
    double noise_pct;    /* spread of the healthy reference pair's repetitions, % of median */
    bool has_reference;  /* a healthy pair was measured beside the suspects */
    bool stopped;        /* the battery stopped part way (a rank failed): a host it had not
                            measured reads unknown, "not measured", its evidence */
    double elapsed_s;
    uint64_t p2p_bytes, coll_bytes; /* the sizes a pair exchanged and a collective asked */
};

void ct_val_report_init(struct ct_val_report *r);
void ct_val_report_release(struct ct_val_report *r);
/* Append a finding (message formatted); returns its index. */
size_t ct_val_report_find(struct ct_val_report *r, enum ct_val_find_kind k, int unit, int unit_b,
                          int nic, const char *fmt, ...) __attribute__((format(printf, 6, 7)));

/*
 * Fill u's NICs and point-to-point ceiling from its topology: the usable NIC ports (up, not
 * loopback), their line rate x eff (the transport's efficiency, ct_val_efficiency); the unit's ceiling is the best NIC's
 * (one TCP route). link_gbps > 0 states the rate where the probe cannot (or overrides it).
 * Ports the probe flags (down, degraded) are marked. With no known rate, ceil_gbs is 0 and the
 * formula says "ceiling unknown".
 */
void ct_val_expect_unit(const struct ct_topo *t, const char *transport, double eff,
                        double link_gbps, struct ct_val_unit *u);

/*
 * Collective busbw ceiling for nunits units of per ranks each, bottleneck unit ceiling b:
 * ring allreduce/allgather/reducescatter: b; alltoall: b (n-1) / (per (n - per)) with n ranks
 * (each unit's link carries per ranks' off-unit shares). 0 when b is 0. formula explains it.
 */
double ct_val_coll_ceiling(const char *coll, int nunits, int per, double b, char *formula,
                           size_t len);

/*
 * Diagnose: each pair against min(ceiling of its ends); units whose pairs are all slow (two
 * or more pairs) are slow hosts; a NIC whose pairs are all slow while a sibling NIC has a good
 * pair is a slow NIC; a remaining slow pair is a slow link; dead units and failed exchanges
 * are failures; collectives against their ceilings; counter and probe evidence. Findings are
 * appended to r->finding (existing ones, such as hetero findings, are kept).
 */
void ct_val_diagnose(struct ct_val_report *r);

/*
 * GPU copies (validate/gpucopy.c). One host's measurement, fixed-size so the bootstrap
 * gathers it: every GPU CUDA shows, by PCI address, its copies from and to page-locked host
 * memory and to every other GPU (GB/s; < 0 failed).
 */
#define CT_VAL_MAX_GPU 16
struct ct_val_gpu_meas {
    int32_t state; /* 1 measured, 0 not asked (not the host's first rank), -1 could not: why */
    int32_t n;
    char busid[CT_VAL_MAX_GPU][CT_BUSID_LEN];
    double h2d[CT_VAL_MAX_GPU], d2h[CT_VAL_MAX_GPU];
    double p2p[CT_VAL_MAX_GPU][CT_VAL_MAX_GPU]; /* [a][b]: a -> b; 0 on the diagonal */
    char why[200];
};
/* Measure this host's GPUs (copies of bytes, median of iters): state 1, or -1 with why
 * (no CUDA, no driver, no GPU). */
void ct_val_gpu_measure(struct ct_val_gpu_meas *m, size_t bytes, int iters);
/* Append unit u's measured copies to r with their ceilings from its topology t: PCIe at the
 * GPU's link capability, GPU -> GPU over their NVLinks else PCIe, each x the efficiency a copy
 * engine reaches ("pcie", "nvlink": ct_val_efficiency, over/n_over from a baseline). A GPU
 * CUDA shows that t lacks keeps an unknown ceiling; a host whose t has GPUs and whose
 * measurement could not run is said in r->gcopy_note. */
void ct_val_gpu_expect(struct ct_val_report *r, int u, const struct ct_topo *t,
                       const struct ct_val_gpu_meas *m, const struct ct_val_eff *over,
                       size_t n_over);
/* Judge the copies against their ceilings, after ct_val_diagnose (which counts n_unknown
 * afresh): a GPU's PCIe link slow (host -> GPU or back below the threshold), a GPU whose
 * copies to every peer are slow (its NVLinks), else each slow pair. */
void ct_val_gpu_diagnose(struct ct_val_report *r);

/* Number of findings (0 = all ok). */
size_t ct_val_findings(const struct ct_val_report *r);
/* A percent as shown whole (%.0f): rounded, but never to the other side of the bar (79.6%
 * of an 80% bar: 79, not 80 beside "slow"; 80.4% of 80.3: 81, not 80 beside "ok"). */
double ct_val_pct_shown(double pct, double bar);

/* Expected numbers: per host point-to-point GB/s (name -> value, "*" for every other host),
 * per collective busbw GB/s, and optionally the pass threshold and per-transport efficiency
 * factors that replace the defaults in probe-derived ceilings. */
struct ct_val_baseline {
    char (*host)[64];
    double *host_gbs;
    size_t n_host;
    double default_gbs; /* "*", 0 none */
    char (*coll)[16];
    double *coll_gbs;
    size_t n_coll;
    double min_pct; /* 0 = not set */
    struct ct_val_eff eff[8]; /* "efficiency": {"tcp": 0.85, ...} */
    size_t n_eff;
    uint64_t p2p_bytes, coll_bytes; /* the sizes its numbers were measured at; 0: not said */
    char path[256];
};
/* Replace r's ceilings with the baseline's (hosts by name, else "*"; collectives by name),
 * with formulas naming the file. */
void ct_val_baseline_apply(const struct ct_val_baseline *b, struct ct_val_report *r);

#endif
