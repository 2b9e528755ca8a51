/* SPDX-License-Identifier: MIT */
/* Test helpers for tests/tui: fake sysfs trees in temporary folders, and fixed snapshots
 * for the drawing goldens. Header-only. */
#ifndef CT_TUI_TEST_H
#define CT_TUI_TEST_H

#include <criterion/criterion.h>

#include <errno.h>
#include <ftw.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "monitor/monitor.h"

#define SEC 1000000000LL

/* ---- fake sysfs ------------------------------------------------------------------------ */

static inline void tt_mkdirs(const char *path)
{
    char buf[4096];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *p = buf + 1; *p; p++)
        if (*p == '/') {
            *p = 0;
            mkdir(buf, 0755);
            *p = '/';
        }
    mkdir(buf, 0755);
}

/* Write root/rel (parents created) with printf-style contents and a newline. */
static inline void tt_put(const char *root, const char *rel, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static inline void tt_put(const char *root, const char *rel, const char *fmt, ...)
{
    char path[4096], dir[4096];
    snprintf(path, sizeof path, "%s/%s", root, rel);
    snprintf(dir, sizeof dir, "%s", path);
    *strrchr(dir, '/') = 0;
    tt_mkdirs(dir);
    FILE *f = fopen(path, "w");
    cr_assert(f, "cannot write %s", path);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(f, fmt, ap);
    va_end(ap);
    fputc('\n', f);
    fclose(f);
}

/* root/rel -> target (a relative link, as sysfs has them). */
static inline void tt_link(const char *root, const char *rel, const char *target)
{
    char path[4096], dir[4096];
    snprintf(path, sizeof path, "%s/%s", root, rel);
    snprintf(dir, sizeof dir, "%s", path);
    *strrchr(dir, '/') = 0;
    tt_mkdirs(dir);
    unlink(path);
    cr_assert(symlink(target, path) == 0, "symlink %s: %s", path, strerror(errno));
}

static inline int tt_rm_one(const char *p, const struct stat *st, int flag, struct FTW *f)
{
    return remove(p);
}

static inline void tt_rmtree(const char *root)
{
    nftw(root, tt_rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static inline void tt_rm(const char *root, const char *rel)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", root, rel);
    tt_rmtree(path);
}

/* A new empty folder: in /dev/shm when there is one (creating thousands of files on a
 * disk-backed /tmp is slow), else /tmp. Caller frees the name. */
static inline char *tt_tmpdir(void)
{
    char *d = strdup(access("/dev/shm", W_OK) == 0 ? "/dev/shm/colltune-tui-test-XXXXXX"
                                                   : "/tmp/colltune-tui-test-XXXXXX");
    cr_assert(mkdtemp(d), "mkdtemp");
    return d;
}

/* An Ethernet interface on a PCI function (statistics, speed in Mb/s, operstate). */
static inline void tt_eth(const char *root, const char *name, const char *pci, long mbps,
                          const char *oper)
{
    char rel[512], tgt[512];
    snprintf(rel, sizeof rel, "sys/devices/pci0000:00/%s/net/%s", pci, name);
    snprintf(tgt, sizeof tgt, "../../devices/pci0000:00/%s/net/%s", pci, name);
    char f[600];
    snprintf(f, sizeof f, "%s/type", rel);
    tt_put(root, f, "1");
    snprintf(f, sizeof f, "%s/speed", rel);
    tt_put(root, f, "%ld", mbps);
    snprintf(f, sizeof f, "%s/operstate", rel);
    tt_put(root, f, "%s", oper);
    snprintf(f, sizeof f, "%s/carrier", rel);
    tt_put(root, f, "%d", !strcmp(oper, "up"));
    static const char *const st[] = {"tx_bytes",  "rx_bytes",  "tx_packets", "rx_packets",
                                     "rx_errors", "tx_errors", "rx_dropped", "tx_dropped"};
    for (size_t i = 0; i < sizeof st / sizeof st[0]; i++) {
        snprintf(f, sizeof f, "%s/statistics/%s", rel, st[i]);
        tt_put(root, f, "0");
    }
    snprintf(f, sizeof f, "%s/device", rel);
    tt_link(root, f, "../..");
    snprintf(f, sizeof f, "sys/class/net/%s", name);
    tt_link(root, f, tgt);
}

static inline void tt_stat(const char *root, const char *name, const char *stat,
                           unsigned long long v)
{
    char rel[512];
    snprintf(rel, sizeof rel, "sys/class/net/%s/statistics/%s", name, stat);
    tt_put(root, rel, "%llu", v);
}

/* An RDMA device with one port on a PCI function. link_layer "InfiniBand" / "Ethernet";
 * pma: the counters/ folder; hw: hw_counters/ with the given files (NULL-terminated). */
static inline void tt_rdma(const char *root, const char *dev, const char *pci, const char *rate,
                           const char *state, const char *link_layer, int pma,
                           const char *const *hw)
{
    char d[512], tgt[512], f[700];
    snprintf(d, sizeof d, "sys/devices/pci0000:00/%s/infiniband/%s", pci, dev);
    snprintf(tgt, sizeof tgt, "../../devices/pci0000:00/%s/infiniband/%s", pci, dev);
    snprintf(f, sizeof f, "%s/ports/1/rate", d);
    tt_put(root, f, "%s", rate);
    snprintf(f, sizeof f, "%s/ports/1/state", d);
    tt_put(root, f, "%s", state);
    snprintf(f, sizeof f, "%s/ports/1/link_layer", d);
    tt_put(root, f, "%s", link_layer);
    if (pma) {
        static const char *const c[] = {
            "port_xmit_data", "port_rcv_data",   "port_xmit_packets", "port_rcv_packets",
            "symbol_error",   "port_rcv_errors", "link_downed",       "port_xmit_discards"};
        for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
            snprintf(f, sizeof f, "%s/ports/1/counters/%s", d, c[i]);
            tt_put(root, f, "0");
        }
    }
    for (size_t i = 0; hw && hw[i]; i++) {
        snprintf(f, sizeof f, "%s/ports/1/hw_counters/%s", d, hw[i]);
        tt_put(root, f, "0");
    }
    snprintf(f, sizeof f, "%s/device", d);
    tt_link(root, f, "../..");
    snprintf(f, sizeof f, "sys/class/infiniband/%s", dev);
    tt_link(root, f, tgt);
}

/* Set ports/1/<dir>/<name> of an RDMA device. */
static inline void tt_ctr(const char *root, const char *dev, const char *dir, const char *name,
                          unsigned long long v)
{
    char rel[512];
    snprintf(rel, sizeof rel, "sys/class/infiniband/%s/ports/1/%s/%s", dev, dir, name);
    tt_put(root, rel, "%llu", v);
}

static inline const struct ct_nic_snap *tt_nic(const struct ct_snapshot *s, const char *name)
{
    for (size_t i = 0; i < s->n_nic; i++)
        if (!strcmp(s->nic[i].name, name))
            return &s->nic[i];
    return NULL;
}

static inline int tt_close(double a, double b)
{
    double d = a - b;
    return (d < 0 ? -d : d) <= 1e-6 * (b < 0 ? -b : b) + 1e-9;
}

#endif
