/* SPDX-License-Identifier: MIT */
/*
 * Topology of one host as a typed graph (CPUs, NUMA, PCI tree, GPUs, NIC ports, NVLink,
 * accelerators with torus neighbours), how it is discovered or imported, the views derived
 * from it, its JSON form and the comparison of several hosts. Only cmd/ prints.
 */
#ifndef CT_TOPO_H
#define CT_TOPO_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "../lib/cpus.h" /* ct_cpulist_count */
#include "../lib/err.h"

/* ==== The model ============================================================================ */

#define CT_BUSID_LEN 32

struct ct_package {
    int os_index;
    char *model; /* "Intel(R) Xeon(R) CPU E5-2680 0 @ 2.70GHz", NULL unknown */
    char *cpus;  /* cpulist "0-7,16-23" (never NULL) */
    int ncores, npus;
};

struct ct_numa {
    int os_index;
    char *cpus;         /* cpulist, "" if unknown */
    uint64_t mem_bytes; /* 0 unknown */
    char *model;        /* CPU model when a source names it per node (NCCL <cpu>), NULL */
    int *dist;          /* distance to numa[j] for j < n_dist (same order as topo->numa) */
    size_t n_dist;      /* 0 when no distance matrix was seen */
};

enum ct_pci_kind {
    CT_PCI_HOST,   /* host bridge / root complex, named like sysfs: "pci0000:80" */
    CT_PCI_BRIDGE, /* one PCI-PCI bridge port (root port, switch upstream or downstream) */
    CT_PCI_SWITCH, /* a whole PCIe switch as NCCL records it (one node per switch) */
    CT_PCI_DEV,    /* an endpoint function */
};

struct ct_pci {
    char busid[CT_BUSID_LEN]; /* canonical "dddd:bb:dd.f" (lowercase hex); hosts "pcidddd:bb" */
    enum ct_pci_kind kind;
    int parent;  /* index in topo->pci, -1 for a root */
    int numa;    /* NUMA node os index where known, -1 (see ct_pci_numa()) */
    int package; /* package os index where known, -1 */
    uint16_t vendor, device, subvendor, subdevice; /* 0 unknown */
    uint32_t class_code;                           /* 24-bit, 0x030200; 0 unknown */
    float link_gts, max_gts;                       /* per-lane GT/s now / capability, 0 unknown */
    int link_width, max_width;                     /* lanes now / capability, 0 unknown */
    float link_gbs; /* GB/s when only that is known (hwloc), 0 unknown */
    char *name;     /* description ("Mellanox Technologies MT2910 ..."), NULL */
    int sw;         /* derived: switch this node belongs to for PIX/PXB counting, -1 none */
};

struct ct_gpu {
    char busid[CT_BUSID_LEN]; /* "" when the source did not say */
    int pci;                  /* index in topo->pci, -1 */
    uint16_t vendor, device;
    char *model;        /* "Tesla V100-SXM3-32GB-H", NULL unknown */
    char *osname;       /* "nvml0", "cuda0", NULL */
    int numa;           /* -1 unknown */
    char *cpus;         /* cpulist of the affinity, NULL unknown */
    int sm;             /* compute capability x 10 (80 = 8.0), 0 unknown */
    double nvlink_gbps; /* per NVLink, per direction, GB/s; 0 unknown */
    int index;          /* the source's number: GPUn of nvidia-smi, <gpu dev> of NCCL XML, nvmlN,
                           NVML index; -1 until ct_topo_finalize() sets it to the position */
    char nvlink_gen[24];     /* "NVLink4", "" unknown (from probe/nvlink_gen.csv) */
    char nvlink_basis[16];   /* what the generation and rate rest on: "" (stated or unknown),
                                "model" (the GPU model), "NV18" (inferred from the NV# pattern),
                                "sm 90" (guessed from the compute capability) */
};

enum ct_nic_kind { CT_NIC_UNKNOWN, CT_NIC_IB, CT_NIC_ROCE, CT_NIC_EFA, CT_NIC_ETH };

/* One NIC port: an RDMA device port (dev + port) and/or a network interface (netdev). */
struct ct_nic {
    char dev[32]; /* RDMA device "mlx5_0", "" for a plain network interface */
    int port;     /* 1-based RDMA port, 0 for a plain network interface */
    enum ct_nic_kind kind;
    char netdev[32];     /* "ib0", "eth0", "" */
    char oper[16];       /* the netdev's operstate ("up", "down"), "" */
    double rate_gbps;    /* 0 unknown or no link */
    int lanes;           /* 4 for "4X", 0 unknown */
    char speed[16];      /* "FDR", "NDR", "" */
    int state;           /* IB port state number (1 DOWN .. 4 ACTIVE); 0 unknown */
    char state_str[24];  /* "ACTIVE", "DOWN", "up", "down" (netdev operstate) */
    int phys_state;      /* 5 LinkUp, 3 Disabled ...; 0 unknown */
    char phys_str[24];   /* "LinkUp" */
    char link_layer[16]; /* "InfiniBand", "Ethernet", "" */
    int mtu;             /* active MTU in bytes, 0 unknown */
    char guid[40];       /* node GUID "0002:c903:00f9:bfa0" */
    char sys_guid[40];   /* system image GUID (functions of one adapter share it) */
    char mac[64];
    char model[64]; /* "MT4099", "ConnectX-7" */
    char fw[32];
    char busid[CT_BUSID_LEN];
    int pci; /* index in topo->pci, -1 */
    uint16_t vendor, device;
    uint32_t class_code;
    int numa;          /* -1 unknown */
    char *cpus;        /* local cpulist, NULL */
    int netdev_type;   /* ARPHRD type of the netdev (1 Ethernet, 32 InfiniBand), -1 unknown */
    char *counters;    /* sysfs port counters dir (relative to the sysfs root), NULL */
    char *hw_counters; /* hw_counters dir (EFA has only these), NULL */
    int index;         /* the source's number: NICn of nvidia-smi, <net dev> of NCCL XML; -1 until
                          ct_topo_finalize() sets it to the position */
};

enum ct_end_kind { CT_END_GPU, CT_END_NVSWITCH, CT_END_CPU };

/* NVLink links from gpu to a peer, as seen from gpu. A GPU-GPU link may be recorded from both
 * ends; readers take the larger count per ordered pair (ct_topo_nvlink_count()). */
struct ct_nvlink {
    int gpu; /* index in topo->gpu */
    enum ct_end_kind peer_kind;
    int peer;  /* GPU or NVSwitch index; NUMA/package os index for CT_END_CPU */
    int count; /* bonded links */
};

struct ct_nvswitch {
    char busid[CT_BUSID_LEN];
    int pci;
};

/* An accelerator (Neuron device) with its neighbours on the device interconnect. */
struct ct_accel {
    int index; /* device number as the driver counts it */
    char busid[CT_BUSID_LEN];
    int pci, numa;
    char *cpus;
    char model[32];
    int cores;
    char core_ids[32]; /* "4-7" */
    double mem_gb;
    int *nbrs; /* neighbour device numbers in the order the source lists them */
    size_t n_nbrs;
};

enum ct_path {
    CT_PATH_X,    /* self */
    CT_PATH_NV,   /* bonded NVLinks (count in the nv output) */
    CT_PATH_PIX,  /* at most one PCIe switch */
    CT_PATH_PXB,  /* several switches, no host bridge */
    CT_PATH_PHB,  /* through a host bridge */
    CT_PATH_NODE, /* between host bridges of one NUMA node */
    CT_PATH_SYS,  /* across the inter-socket / inter-NUMA link */
    CT_PATH_UNKNOWN,
};

enum ct_ep_kind { CT_EP_GPU, CT_EP_NIC };

/* A path class a source stated directly (nvidia-smi text) for a pair the PCI tree cannot
 * decide. Indices are into topo->gpu / topo->nic. */
struct ct_hint {
    enum ct_ep_kind ka, kb;
    int a, b;
    enum ct_path path;
};

struct ct_topo {
    char *hostname; /* NULL unknown */
    char *origin;   /* "live", "nccl-xml:FILE", ... */
    struct ct_package *pkg;
    size_t n_pkg;
    struct ct_numa *numa;
    size_t n_numa;
    struct ct_pci *pci;
    size_t n_pci;
    struct ct_gpu *gpu;
    size_t n_gpu;
    struct ct_nic *nic;
    size_t n_nic;
    struct ct_nvlink *nvlink;
    size_t n_nvlink;
    struct ct_nvswitch *nvswitch;
    size_t n_nvswitch;
    struct ct_accel *accel;
    size_t n_accel;
    struct ct_hint *hint;
    size_t n_hint;
    int torus_rows, torus_cols; /* accelerator grid, 0 when none */
    int npus, ncores;           /* logical CPUs and cores on the host, 0 unknown */
    int rank_first, rank_count; /* ranks of a job on this host (cluster mode), -1 / 0 */
    int ordered;                /* 1: the source numbers GPUs and NICs (every importer), and
                                   finalize keeps its numbering; 0 (live, sysfs root): finalize
                                   orders them by PCI bus id, as nvidia-smi and NCCL do */
    char nvswitch_gen[32];      /* "NVSwitch gen3", "" unknown */
    char nvswitch_basis[16];    /* as ct_gpu.nvlink_basis */
    char **notes;               /* what sources could not see */
    size_t n_notes;
};

struct ct_topo *ct_topo_new(void);
void ct_topo_free(struct ct_topo *t); /* NULL is a no-op */
void ct_topo_note(struct ct_topo *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Append a zeroed element (indices -1 where that means unknown) and return its index. */
int ct_topo_add_pci(struct ct_topo *t, const char *busid, enum ct_pci_kind kind, int parent);
int ct_topo_add_gpu(struct ct_topo *t, const char *busid);
int ct_topo_add_nic(struct ct_topo *t, const char *dev, int port, const char *netdev);
int ct_topo_add_numa(struct ct_topo *t, int os_index, const char *cpus);
int ct_topo_add_pkg(struct ct_topo *t, int os_index, const char *cpus);
int ct_topo_add_accel(struct ct_topo *t, int index);
int ct_topo_add_nvswitch(struct ct_topo *t, const char *busid);
void ct_topo_add_nvlink(struct ct_topo *t, int gpu, enum ct_end_kind kind, int peer, int count);
void ct_topo_add_hint(struct ct_topo *t, enum ct_ep_kind ka, int a, enum ct_ep_kind kb, int b,
                      enum ct_path path);

/* Lookups; -1 when absent. */
int ct_topo_find_pci(const struct ct_topo *t, const char *busid);
int ct_topo_find_gpu(const struct ct_topo *t, const char *busid);
int ct_topo_find_nic(const struct ct_topo *t, const char *dev, int port);
int ct_topo_find_netdev(const struct ct_topo *t, const char *netdev);
int ct_topo_find_numa(const struct ct_topo *t, int os_index);
int ct_topo_find_accel(const struct ct_topo *t, int index);

/* Order GPUs and NICs (the source's numbering when it has one, else PCI bus id order), resolve
 * pci indices and NUMA, derive switch roles and the NVLink generation. Every source and importer
 * path ends with it; idempotent. */
void ct_topo_finalize(struct ct_topo *t);

/* NUMA node of a PCI node: its own, else the first known walking up; -1 unknown. */
int ct_pci_numa(const struct ct_topo *t, int pci);
/* NVLinks between two GPUs: direct links plus, through every NVSwitch both reach, the
 * smaller of their two counts. 0 when none. */
int ct_topo_nvlink_count(const struct ct_topo *t, int gpu_a, int gpu_b);
/* All NVLinks of one GPU (to GPUs, switches and CPUs). */
int ct_topo_nvlink_total(const struct ct_topo *t, int gpu);

/* ==== Small parsers shared with tests ===================================================== */

/* "0000:82:00.0", "82:00.0", "00000000:C0:00.0" -> canonical "0000:82:00.0". -1 on garbage. */
int ct_busid_canon(const char *in, char out[CT_BUSID_LEN]);
/* IB sysfs rate "56 Gb/sec (4X FDR)" -> 56, 4, "FDR". -1 on garbage (outputs untouched). */
int ct_ib_rate_parse(const char *s, double *gbps, int *lanes, char speed[16]);
/* The data rate of a port in Gb/s: InfiniBand's rate names the signalling of SDR, DDR and
 * QDR (8b/10b: 40 Gb/s 4X QDR carries 32) and FDR (4X: 56 -> 54.5, 64b/66b); FDR10, EDR and
 * later, Ethernet and RoCE (whose rate reads "40 Gb/sec (4X QDR)" for 40 GbE) state their
 * data rate. 0 when unknown. */
double ct_nic_data_gbps(const struct ct_nic *n);
/* PCIe link speed "8 GT/s", "16.0 GT/s PCIe", "2.5 GT/s" -> GT/s; 0 for "" / "Unknown". */
double ct_pcie_gts_parse(const char *s);
/* Per-direction PCIe bandwidth in GB/s for gts per lane x width (encoding overhead applied). */
double ct_pcie_gbs(double gts, int width);
/* Linux cpumask "000000ff,ffff0000,00ffffff" -> cpulist "0-23,48-71" (caller frees). NULL on
 * garbage. */
char *ct_cpumask_to_list(const char *mask);
const char *ct_nic_kind_name(enum ct_nic_kind k); /* "IB", "RoCE", "EFA", "Eth", "?" */

/* ==== Discovery (live) and import (files) ================================================= */

struct ct_probe_cfg {
    const char *sysfs_root;     /* NULL or "/" = the live system */
    int torus_rows, torus_cols; /* --torus override, 0 = none */
};

/* A discovery source: one file each (src_<name>.c), one row in probe/sources.c. discover()
 * adds what it sees, adds a note for what it cannot, and fails only on unusable input. */
struct ct_source {
    const char *name;
    const char *summary;
    int (*discover)(struct ct_topo *t, const struct ct_probe_cfg *cfg, struct ct_err *err);
};
const struct ct_source *ct_source_at(size_t i); /* NULL past the end */

/* Run every source in table order on the local host (or the captured sysfs root), then
 * finalize. A missing source is a note; returns < 0 only for unusable input. */
int ct_probe_local(struct ct_topo *t, const struct ct_probe_cfg *cfg, struct ct_err *err);

/* An importer for captured data: format name, parser over a buffer (len bytes, need not be
 * NUL-terminated), fname for messages. */
struct ct_importer {
    const char *name; /* "hwloc-xml", "nccl-xml", "nvidia-smi", "neuron-ls", "report", "json" */
    const char *summary;
    int (*parse)(struct ct_topo *t, const char *buf, size_t len, const char *fname,
                 struct ct_err *err);
};
const struct ct_importer *ct_importer_at(size_t i);
const struct ct_importer *ct_importer_find(const char *name);

/* Read path and import it with format; then finalize and apply cfg's torus override.
 * Errors name the file and what was wrong (CT_EINVAL for unusable input, CT_EIO for I/O). */
int ct_topo_import(struct ct_topo *t, const char *format, const char *path,
                   const struct ct_probe_cfg *cfg, struct ct_err *err);
/* Same from memory (fuzzers, tests). */
int ct_topo_import_buf(struct ct_topo *t, const char *format, const char *buf, size_t len,
                       const char *fname, struct ct_err *err);

/* Apply a RxC torus to the accelerators (creating placeholders when there are none). */
int ct_topo_set_torus(struct ct_topo *t, int rows, int cols, struct ct_err *err);

/* ==== Derived data ======================================================================== */

/* The GPU/NIC matrix: GPUs first (topo order), then one entry per NIC adapter port that
 * nvidia-smi would list (RDMA devices, first port). cls/nv are n x n, row-major. */
struct ct_matrix {
    size_t n, n_gpu;
    int *nic;            /* nic[k] = index in topo->nic of endpoint n_gpu + k */
    enum ct_path *cls;   /* path class */
    int *nv;             /* NVLink count when cls == CT_PATH_NV */
    unsigned char *hint; /* 1 where the class came from a source hint, not the PCI tree */
};
enum ct_matrix_flags { CT_MATRIX_PCI_ONLY = 1 << 0 /* ignore NVLink (PCIe path only) */ };
void ct_matrix_build(const struct ct_topo *t, unsigned flags, struct ct_matrix *m);
void ct_matrix_release(struct ct_matrix *m);
/* Class between two endpoints from the PCI tree only; CT_PATH_UNKNOWN when it cannot tell. */
enum ct_path ct_topo_pci_path(const struct ct_topo *t, int pci_a, int pci_b);
/* "X", "NV12", "PIX", ... into buf; returns buf. */
const char *ct_path_name(enum ct_path p, int nv, char *buf, size_t len);
/* Parse "PIX", "NV4", "SOC" (old name of SYS), "X"; -1 on garbage. */
int ct_path_parse(const char *s, enum ct_path *p, int *nv);

/* Rails, the operators' convention: GPU g takes its nearest NIC by the PCIe matrix (PIX, PXB,
 * ... then the source's NIC order), preferring one no lower GPU took; rails are numbered in
 * GPU order (rail i is GPU i's NIC when every GPU has its own). */
struct ct_rail {
    int gpu;           /* index in topo->gpu */
    int nic;           /* index in topo->nic, -1 when there is no RDMA NIC */
    enum ct_path path; /* GPU->NIC class */
    int rail;          /* rail number, -1 with no NIC */
};
size_t ct_rails_compute(const struct ct_topo *t, struct ct_rail **out); /* caller frees *out */
/* Matrix NICs that no GPU took as its rail (storage, management ports): topo->nic indices into
 * *out (caller frees); returns their count. */
size_t ct_rails_nonrail(const struct ct_topo *t, const struct ct_rail *r, size_t n, int **out);

/* One row of probe/nvlink_gen.csv: an NVLink generation, keyed by a GPU model substring or by
 * the links per GPU of an NVSwitch ("switch") or direct all-pairs ("mesh") fabric. */
struct ct_nvlink_gen {
    const char *kind; /* "model", "sm" or "nv" */
    const char *key;  /* model substring ("H100"), lowest sm ("90") or links per GPU ("18") */
    const char *fabric; /* "switch", "mesh", "" */
    const char *gen;    /* "NVLink4" */
    double link_gbs;    /* per link, per direction, GB/s */
    int links;          /* NVLinks per GPU */
    const char *nvswitch; /* "NVSwitch gen3", "none", "" */
    const char *source;
};
const struct ct_nvlink_gen *ct_nvlink_gen_at(size_t i); /* NULL past the end */
/* The row for a GPU model ("NVIDIA H100 80GB HBM3"), NULL unknown. */
const struct ct_nvlink_gen *ct_nvlink_gen_model(const char *model);
/* The row for links per GPU on a switched (switched=1) or all-pairs mesh fabric, NULL. */
const struct ct_nvlink_gen *ct_nvlink_gen_links(int links, int switched);
/* The row of the newest generation whose compute capability (x 10) is <= sm, NULL. */
const struct ct_nvlink_gen *ct_nvlink_gen_sm(int sm);

/* Bandwidth ceilings per collective, nccl-tests bus bandwidth in GB/s (0 when unknown). */
struct ct_ceiling {
    char coll[16]; /* "allreduce", "allgather", "reducescatter", "alltoall" */
    char scope[8]; /* "intra" or "inter" */
    double busbw;  /* GB/s, 0 unknown */
    char formula[320];
};
size_t ct_ceilings_compute(const struct ct_topo *t, int nodes, struct ct_ceiling **out);
/* GB/s per direction of GPU g's PCIe link at its capability (a GPU may idle at a lower
 * speed), described in d ("PCIe 5.0 x16 = 63.0 GB/s"); 0 unknown. */
double ct_ceil_gpu_pcie(const struct ct_topo *t, int g, char *d, size_t len);
/* GB/s of a copy GPU a -> GPU b: their NVLinks, else the slower PCIe link; described in d. */
double ct_ceil_gpu_hop(const struct ct_topo *t, int a, int b, char *d, size_t len);

enum ct_warn_kind {
    CT_WARN_PORT_DOWN,
    CT_WARN_PORT_DEGRADED,
    CT_WARN_GPU_FAR_NIC,
    CT_WARN_MIXED_LINK_LAYER,
    CT_WARN_PCIE_DOWNTRAINED,
    CT_WARN_NO_RDMA,
    CT_WARN_PATH_MISMATCH,
    CT_WARN_TORUS,
};
struct ct_warning {
    enum ct_warn_kind kind;
    char msg[320];
};
size_t ct_warnings_compute(const struct ct_topo *t, struct ct_warning **out);

/* Accelerator torus: grid placement, two edge-disjoint Hamiltonian cycles, hypercube axes. */
struct ct_torus {
    int rows, cols;
    int *dev;        /* rows*cols: accel index (topo->accel) at row-major position */
    int *cycle[2];   /* rows*cols accel indices each, NULL when not found */
    int dims;        /* hypercube dimension when the torus is one (4x4 -> 4), else 0 */
    unsigned *label; /* rows*cols hypercube label per position (when dims > 0) */
};
/* Place the accelerators on topo->torus_rows x cols (or infer the grid from neighbours).
 * CT_EUNSUPP with the reason when there is no regular torus. */
int ct_torus_build(const struct ct_topo *t, struct ct_torus *tt, struct ct_err *err);
void ct_torus_release(struct ct_torus *tt);
/* Infer rows x cols from the neighbour lists (row-major numbering, wrap-around). 0 on
 * success. */
int ct_torus_infer(const struct ct_topo *t, int *rows, int *cols);

/* ==== Views (text) ======================================================================== */

struct ct_view {
    const char *name; /* "summary", "matrix", "nics", "torus", "rails", "ceilings", "warnings" */
    const char *summary;
    int (*render)(const struct ct_topo *t, FILE *out, struct ct_err *err);
};
const struct ct_view *ct_view_at(size_t i);
const struct ct_view *ct_view_find(const char *name);
/* Render every view in table order (separated by blank lines). */
int ct_view_render_all(const struct ct_topo *t, FILE *out, struct ct_err *err);

/* ==== JSON ("schema": "colltune-topo/1") ================================================== */

/* Stable key order; caller frees with free(). NULL + err on failure. */
char *ct_topo_to_json(const struct ct_topo *t, struct ct_err *err);
/* Parse a document written by ct_topo_to_json (len bytes). NULL + err naming what was wrong. */
struct ct_topo *ct_topo_from_json(const char *text, size_t len, struct ct_err *err);

/* ==== Heterogeneity across hosts ========================================================== */

struct ct_hetero_diff {
    size_t host;    /* index into the hosts array */
    char what[256]; /* "nic mlx5_3:1 rate_gbps: 100 (majority 200)" */
};
struct ct_hetero {
    size_t n_groups;
    size_t *group_of;   /* n_hosts entries: group index of each host; group 0 = majority */
    size_t *group_size; /* n_groups entries */
    size_t *group_rep;  /* n_groups entries: first host of each group */
    struct ct_hetero_diff *diffs; /* how each host outside the majority differs */
    size_t n_diffs;
};
/* Group hosts by shape (everything but names, GUIDs, MACs and notes) and list how hosts outside
 * the largest group differ from it. hosts[i] are borrowed. */
int ct_topo_hetero(const struct ct_topo *const *hosts, size_t n, struct ct_hetero *out,
                   struct ct_err *err);
void ct_hetero_release(struct ct_hetero *h);
/* "N hosts, K shapes" + per host differences. */
int ct_hetero_render(const struct ct_topo *const *hosts, size_t n, const struct ct_hetero *h,
                     FILE *out, struct ct_err *err);

#endif
