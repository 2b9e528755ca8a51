/* SPDX-License-Identifier: MIT */
/* The monitor's insides, shared by engine/monitor*.c only. */
#ifndef CT_MONITOR_INT_H
#define CT_MONITOR_INT_H

#include <limits.h>
#include <string.h>

#include "monitor.h"

#define GONE_KEEP 60 /* samples a vanished NIC stays listed */
#define PMA32_MAX 0xffffffffull
#define REL_LEN 192

enum { D_TX, D_RX, D_TXP, D_RXP, D_N };

/* One counter file and its previous reading. */
struct mon_ctr {
    char rel[REL_LEN]; /* relative to the root, "" when absent */
    uint64_t prev;
    bool have;
};

/* One way of reading the data counters. */
struct mon_src {
    struct mon_ctr c[D_N];
    unsigned unit; /* bytes per unit of the TX/RX data counters (4 for the IB PMA) */
    bool pma32;    /* 32-bit PMA counters: saturate at 2^32-1 */
    char name[24];
    bool ok;
};

struct mon_nic {
    struct ct_nic_snap s; /* identity, history and totals carry over between samples */
    struct mon_src prim, fb;
    struct mon_ctr *err;
    size_t n_err;
    struct mon_ctr cnp[2];
    char port_dir[REL_LEN]; /* "sys/class/infiniband/mlx5_0/ports/1", "" for an interface */
    char net_dir[REL_LEN];  /* "sys/class/net/eth0", "" */
    bool seen;
    int gone;
    int64_t last_ns; /* time of the previous reading, 0 none */
};

struct ct_monitor {
    char root[PATH_MAX];
    struct mon_nic *nic;
    size_t n;
    uint64_t seq;
    int64_t last_ns;
    bool sampled;
    /* cluster gathering */
    struct ct_snapshot last;
    int64_t last_gather_ns;
};

/* Copy src into dst[len], truncating. */
static inline void mon_scpy(char *dst, size_t len, const char *src)
{
    size_t l = strnlen(src, len - 1);
    memcpy(dst, src, l);
    dst[l] = 0;
}

#endif
