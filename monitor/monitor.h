/* SPDX-License-Identifier: MIT */
/*
 * monitor/: NIC utilization. Samples RDMA port and network interface counters from sysfs
 * (root overridable) into a plain-data snapshot that the TUI draws and JSON replays, and
 * gathers every node's snapshot for the cluster view. It may include probe/ (NIC
 * identities), transport/ (the bootstrap, for the gather) and lib/; never backend/,
 * tune/ or anything above; it never prints.
 */
#ifndef CT_MONITOR_H
#define CT_MONITOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../lib/err.h"

struct ct_boot;

/* ==== Snapshot: everything one TUI frame shows ============================================ */

#define CT_SNAP_HIST 120 /* history samples kept per NIC (sparklines) */

/* Why a NIC's numbers are what they are. */
enum ct_nic_flags {
    CT_NICF_FIRST = 1 << 0,     /* first sample of this NIC: no rate yet */
    CT_NICF_SATURATED = 1 << 1, /* a 32-bit data counter is pegged at 2^32-1 */
    CT_NICF_FALLBACK = 1 << 2,  /* rates come from hw_counters / extended counters */
    CT_NICF_WRAPPED = 1 << 3,   /* a counter wrapped during the last interval */
    CT_NICF_RESET = 1 << 4,     /* a counter went backwards (reset): no rate this interval */
    CT_NICF_GONE = 1 << 5,      /* the NIC disappeared (hot unplug); kept for a while */
    CT_NICF_NEW = 1 << 6,       /* appeared after the monitor's first sample */
    CT_NICF_VIRTUAL = 1 << 7,   /* a virtual network interface (bridge, veth, vlan...) */
};

/* One NIC port: an RDMA port (with its network interface, if any) or a network interface. */
struct ct_nic_snap {
    char name[48];   /* "mlx5_0:1", "eth0" */
    char dev[32];    /* RDMA device, "" for a plain interface */
    int port;        /* RDMA port, 0 for a plain interface */
    char netdev[32]; /* "ib0", "eth0", "" */
    char kind[8];    /* "IB", "RoCE", "EFA", "Eth", "IPoIB", "lo", "virt" */
    char state[16];  /* "ACTIVE", "DOWN", "up", "down", "gone" */
    char src[24];    /* counters read: "counters", "counters_ext", "hw_counters", "statistics" */
    bool up;
    double line_gbps;            /* link rate, 0 unknown */
    double tx_gbps, rx_gbps;     /* over the last interval; < 0 unknown */
    double util;                 /* max(tx, rx) / line rate (0..1); < 0 unknown */
    double tx_pps, rx_pps;       /* packets per second; < 0 unknown */
    uint64_t tx_bytes, rx_bytes; /* counter totals in bytes as last read */
    uint64_t errors;             /* error and discard increments since the first sample */
    uint64_t err_delta;          /* of which during the last interval */
    char err_last[40];           /* the counter that moved last, "" none */
    double cnp_rate; /* RoCE congestion notifications (sent + handled) per s; < 0 none */
    unsigned flags;  /* enum ct_nic_flags */
    int n_hist;
    float hist[CT_SNAP_HIST]; /* max(tx, rx) Gb/s per sample, oldest first; < 0 unknown */
};

/* Where a run or sweep is (from the sweep's progress callback or run's size loop). */
struct ct_progress {
    char cmd[16];   /* "sweep", "run" */
    char phase[16]; /* "survey", "tune", "refine", "verify", "" */
    char coll[16];
    char algo[64];
    char params[96];               /* "chunk=128K pipeline=4", "" */
    uint64_t size;                 /* bytes */
    long done, total;              /* points; total <= 0 unknown */
    double elapsed_s, remaining_s; /* remaining < 0 unknown */
};

/* One measured point for the live plot: the best busbw seen for (coll, algo, size). */
struct ct_plot_pt {
    char coll[16];
    char algo[64];
    uint64_t size;
    double busbw; /* GB/s */
};

/* Node x NIC grid (rank 0 of a job). util/gbps are n_nodes x n_cols, row-major. */
#define CT_CLUSTER_ABSENT (-2.0f) /* the node has no NIC of that name */
struct ct_cluster {
    size_t n_nodes, n_cols;
    char (*node)[64]; /* node (host) names */
    char (*col)[32];  /* NIC names, union over nodes in order of first appearance */
    float *util;      /* 0..1; -1 unknown line rate; CT_CLUSTER_ABSENT */
    float *gbps;      /* max(tx, rx); -1 unknown; CT_CLUSTER_ABSENT */
    uint32_t *errs;   /* error increments during the node's last interval */
};

struct ct_snapshot {
    uint64_t seq;      /* sample number, from 1 */
    int64_t t_ns;      /* monotonic time of the sample */
    double wall_s;     /* Unix time of the sample (header clock) */
    double interval_s; /* since the previous sample, 0 for the first */
    char host[64];
    struct ct_nic_snap *nic; /* monitor order: RDMA ports, physical, loopback, virtual */
    size_t n_nic;
    bool has_progress;
    struct ct_progress progress;
    struct ct_plot_pt *pts;
    size_t n_pts;
    struct ct_cluster cluster; /* n_nodes 0: none gathered (views use this host's NICs) */
    char **log;                /* recent log lines, oldest first */
    size_t n_log;
    char *topo; /* the probe's text views, NULL none */
};

void ct_snapshot_init(struct ct_snapshot *s);
void ct_snapshot_release(struct ct_snapshot *s); /* frees everything, then init */
/* Deep copy: dst is released first. */
void ct_snapshot_copy(struct ct_snapshot *dst, const struct ct_snapshot *src);
void ct_cluster_release(struct ct_cluster *c);
void ct_cluster_copy(struct ct_cluster *dst, const struct ct_cluster *src);
/* Append a log line (copied); keeps at most max lines (oldest dropped). */
void ct_snapshot_log(struct ct_snapshot *s, size_t max, const char *line);
/* Record busbw for (coll, algo, size), keeping the best per triple. */
void ct_snapshot_point(struct ct_snapshot *s, const char *coll, const char *algo, uint64_t size,
                       double busbw);

/* Order in which NICs are most interesting (RDMA, physical Ethernet, loopback, virtual):
 * a rank, lower first. */
int ct_nic_snap_class(const struct ct_nic_snap *n);

/* ==== The sampler =========================================================================== */

struct ct_monitor;

/* sysfs_root: NULL or "/" for the live system, else a directory holding a captured sys/
 * tree (same meaning as `probe --sysfs-root`). Nothing is read until the first sample. */
struct ct_monitor *ct_monitor_new(const char *sysfs_root);
void ct_monitor_free(struct ct_monitor *m); /* NULL is a no-op */

/*
 * Take one sample at the monotonic time now_ns: rescan the RDMA ports and network
 * interfaces, read their counters and compute rates against the previous sample. Replaces
 * snap's NIC list, time and host (other parts of snap are left alone). A NIC seen for the
 * first time has no rate (CT_NICF_FIRST); one that vanished stays listed as "gone" for a
 * while. Counters that wrap (32-bit) or saturate at 2^32-1 are handled and flagged. Fails
 * only when the root has no sys/class at all (CT_EINVAL).
 */
int ct_monitor_sample_at(struct ct_monitor *m, int64_t now_ns, struct ct_snapshot *snap,
                         struct ct_err *err);
/* Same at the current monotonic time. */
int ct_monitor_sample(struct ct_monitor *m, struct ct_snapshot *snap, struct ct_err *err);
/* Matches the TUI's sample callback: arg is a struct ct_monitor *. */
int ct_monitor_sample_cb(void *arg, struct ct_snapshot *snap, struct ct_err *err);

/* ==== Cluster gathering ===================================================================== */

#define CT_MON_WIRE_NICS 16 /* NIC columns each node sends */

/*
 * Collective over boot: every rank calls it at the same point of its loop (one allgather of
 * a fixed-size record per rank). The first rank of each node samples its NICs when at least
 * min_interval_ns passed since its last sample (else it resends the last rates; the others
 * send no NICs); rank 0 gets the node x NIC grid in *out (released and refilled; other ranks
 * may pass NULL). stop (may be NULL) carries a stop request to every rank: in, this rank
 * asks to stop (rank 0 when q was pressed); out, some rank asked. The monitor keeps the last
 * sample for the next call.
 */
int ct_monitor_gather(struct ct_monitor *m, struct ct_boot *boot, int64_t min_interval_ns,
                      bool *stop, struct ct_cluster *out, struct ct_err *err);

/* ==== JSON ("schema": "colltune-snapshot/1") and replay =================================== */

enum ct_snap_json_flags { CT_SNAP_JSON_PRETTY = 1 << 0 };
/* The snapshot as JSON (one line unless PRETTY); caller frees with free(). */
char *ct_snapshot_to_json(const struct ct_snapshot *s, unsigned flags, struct ct_err *err);
/* Parse one document written by ct_snapshot_to_json into s (released first). */
int ct_snapshot_from_json(const char *text, size_t len, struct ct_snapshot *s, struct ct_err *err);

/* A recorded sequence of snapshots (`top --json` output: documents one after another). */
struct ct_replay;
struct ct_replay *ct_replay_open(const char *path, struct ct_err *err); /* NULL + err */
void ct_replay_free(struct ct_replay *r);
size_t ct_replay_count(const struct ct_replay *r);
/* Copy the next frame (all of it) into snap. Returns 0, or 1 after the last frame (snap is
 * left alone). */
int ct_replay_next(struct ct_replay *r, struct ct_snapshot *snap, struct ct_err *err);
/* Matches the TUI's sample callback (0 new frame, 1 no more): arg is a struct ct_replay *. */
int ct_replay_sample_cb(void *arg, struct ct_snapshot *snap, struct ct_err *err);

#endif
