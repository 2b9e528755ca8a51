/* SPDX-License-Identifier: MIT */
/*
 * NIC counter sampler: RDMA ports (IB/RoCE PMA counters with extended and hw_counters
 * fallbacks, EFA hw_counters) and network interfaces (statistics/) read from sysfs.
 */
#include "monitor_int.h"

#include "../lib/file.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../lib/clock.h"

/* ---- sysfs helpers ---------------------------------------------------------------------- */

static const char *path_of(const struct ct_monitor *m, const char *rel, char *buf, size_t len)
{
    snprintf(buf, len, "%s/%s", m->root, rel);
    return buf;
}

/* First line of a small file, trailing white space removed. */
static int read_str(const struct ct_monitor *m, const char *rel, char *buf, size_t len)
{
    char path[PATH_MAX + REL_LEN];
    int fd = open(path_of(m, rel, path, sizeof path), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n;
    do
        n = read(fd, buf, len - 1);
    while (n < 0 && errno == EINTR);
    close(fd);
    if (n < 0)
        return -1;
    buf[n] = 0;
    char *nl = strchr(buf, '\n');
    if (nl)
        *nl = 0;
    for (size_t l = strlen(buf); l && (buf[l - 1] == ' ' || buf[l - 1] == '\t'); l--)
        buf[l - 1] = 0;
    return 0;
}

static int read_u64(const struct ct_monitor *m, const char *rel, uint64_t *v)
{
    char buf[64], *end;
    if (!rel[0] || read_str(m, rel, buf, sizeof buf) < 0 || !(buf[0] >= '0' && buf[0] <= '9'))
        return -1;
    errno = 0;
    unsigned long long x = strtoull(buf, &end, 0);
    if (errno || (*end && *end != ' '))
        return -1;
    *v = x;
    return 0;
}

static bool exists(const struct ct_monitor *m, const char *rel)
{
    char path[PATH_MAX + REL_LEN];
    struct stat st;
    return stat(path_of(m, rel, path, sizeof path), &st) == 0;
}

/* realpath of root/rel into out; -1 when it does not resolve (dangling link). */
static int resolve(const struct ct_monitor *m, const char *rel, char *out)
{
    char path[PATH_MAX + REL_LEN];
    return realpath(path_of(m, rel, path, sizeof path), out) ? 0 : -1;
}

/* Entry names of root/rel in natural order (ct_dir_names). */
static size_t list_dir(const struct ct_monitor *m, const char *rel, char ***out)
{
    char path[PATH_MAX + REL_LEN];
    return ct_dir_names(path_of(m, rel, path, sizeof path), out);
}

/* A relative path into dst[REL_LEN] ("" when too long). */
static void __attribute__((format(printf, 2, 3))) relf(char *dst, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(dst, REL_LEN, fmt, ap);
    va_end(ap);
    if (n < 0 || n >= REL_LEN)
        dst[0] = 0;
}

static void set_rel(char *dst, const char *dir, const char *name)
{
    if (snprintf(dst, REL_LEN, "%s/%s", dir, name) >= REL_LEN)
        dst[0] = 0; /* too long to be a sysfs path we know */
}

/* ---- read plans: which files a NIC's numbers come from ----------------------------------- */

static bool plan_src(const struct ct_monitor *m, struct mon_src *s, const char *dir,
                     const char *name, const char *const files[D_N], unsigned unit, bool pma32)
{
    char rel[REL_LEN];
    memset(s, 0, sizeof *s);
    set_rel(rel, dir, files[D_TX]);
    if (!exists(m, rel))
        return false;
    for (int k = 0; k < D_N; k++) {
        set_rel(s->c[k].rel, dir, files[k]);
        if (!exists(m, s->c[k].rel))
            s->c[k].rel[0] = 0;
    }
    s->unit = unit;
    s->pma32 = pma32;
    mon_scpy(s->name, sizeof s->name, name);
    s->ok = true;
    return true;
}

static void add_ctrs(const struct ct_monitor *m, struct mon_nic *n, const char *dir,
                     const char *const *names)
{
    for (size_t i = 0; names[i]; i++) {
        char rel[REL_LEN];
        set_rel(rel, dir, names[i]);
        if (!exists(m, rel))
            continue;
        n->err = ct_xrealloc(n->err, (n->n_err + 1) * sizeof *n->err);
        memset(&n->err[n->n_err], 0, sizeof *n->err);
        memcpy(n->err[n->n_err++].rel, rel, REL_LEN);
    }
}

static const char *const pma_files[D_N] = {"port_xmit_data", "port_rcv_data", "port_xmit_packets",
                                           "port_rcv_packets"};
static const char *const ext_files[D_N] = {"port_xmit_data_64", "port_rcv_data_64",
                                           "port_xmit_packets_64", "port_rcv_packets_64"};
static const char *const hw_files[D_N] = {"tx_bytes", "rx_bytes", "tx_pkts", "rx_pkts"};
static const char *const hw_files2[D_N] = {"tx_bytes", "rx_bytes", "tx_packets", "rx_packets"};
static const char *const net_files[D_N] = {"tx_bytes", "rx_bytes", "tx_packets", "rx_packets"};

static const char *const ib_errs[] = {"symbol_error",
                                      "link_error_recovery",
                                      "link_downed",
                                      "port_rcv_errors",
                                      "port_rcv_remote_physical_errors",
                                      "port_rcv_switch_relay_errors",
                                      "port_xmit_discards",
                                      "port_xmit_constraint_errors",
                                      "port_rcv_constraint_errors",
                                      "local_link_integrity_errors",
                                      "excessive_buffer_overrun_errors",
                                      "VL15_dropped",
                                      NULL};
static const char *const hw_errs[] = {"rx_drops",
                                      "rdma_read_wr_err",
                                      "rdma_write_wr_err",
                                      "out_of_buffer",
                                      "local_ack_timeout_err",
                                      "packet_seq_err",
                                      NULL};
static const char *const net_errs[] = {"rx_errors", "tx_errors", "rx_dropped", "tx_dropped", NULL};

/* hw_counters of a port, else of its device; "" when neither exists. */
static void hw_dir(const struct ct_monitor *m, const struct mon_nic *n, char *out)
{
    set_rel(out, n->port_dir, "hw_counters");
    if (exists(m, out))
        return;
    char dev[REL_LEN];
    relf(dev, "sys/class/infiniband/%s", n->s.dev);
    set_rel(out, dev, "hw_counters");
    if (!exists(m, out))
        out[0] = 0;
}

static void plan_rdma(const struct ct_monitor *m, struct mon_nic *n)
{
    char cdir[REL_LEN], edir[REL_LEN], hdir[REL_LEN];
    set_rel(cdir, n->port_dir, "counters");
    set_rel(edir, n->port_dir, "counters_ext");
    hw_dir(m, n, hdir);
    bool pma = plan_src(m, &n->prim, cdir, "counters", pma_files, 4, true);
    if (pma) {
        if (!plan_src(m, &n->fb, edir, "counters_ext", ext_files, 4, false) && hdir[0] &&
            !plan_src(m, &n->fb, hdir, "hw_counters", hw_files, 1, false))
            plan_src(m, &n->fb, hdir, "hw_counters", hw_files2, 1, false);
        add_ctrs(m, n, cdir, ib_errs);
    } else if (hdir[0] && !plan_src(m, &n->prim, hdir, "hw_counters", hw_files, 1, false)) {
        plan_src(m, &n->prim, hdir, "hw_counters", hw_files2, 1, false);
    }
    if (hdir[0]) {
        add_ctrs(m, n, hdir, hw_errs);
        set_rel(n->cnp[0].rel, hdir, "np_cnp_sent");
        set_rel(n->cnp[1].rel, hdir, "rp_cnp_handled");
        for (int k = 0; k < 2; k++)
            if (!exists(m, n->cnp[k].rel))
                n->cnp[k].rel[0] = 0;
    }
}

static void plan_net(const struct ct_monitor *m, struct mon_nic *n)
{
    char sdir[REL_LEN];
    set_rel(sdir, n->net_dir, "statistics");
    plan_src(m, &n->prim, sdir, "statistics", net_files, 1, false);
    add_ctrs(m, n, sdir, net_errs);
}

/* ---- discovery ---------------------------------------------------------------------------- */

static struct mon_nic *find(struct ct_monitor *m, const char *name)
{
    for (size_t i = 0; i < m->n; i++)
        if (!strcmp(m->nic[i].s.name, name))
            return &m->nic[i];
    return NULL;
}

static void reset_ctrs(struct mon_nic *n)
{
    for (int k = 0; k < D_N; k++)
        n->prim.c[k].have = n->fb.c[k].have = false;
    for (size_t i = 0; i < n->n_err; i++)
        n->err[i].have = false;
    n->cnp[0].have = n->cnp[1].have = false;
    n->last_ns = 0;
}

static void drop_plan(struct mon_nic *n)
{
    free(n->err);
    n->err = NULL;
    n->n_err = 0;
    memset(&n->prim, 0, sizeof n->prim);
    memset(&n->fb, 0, sizeof n->fb);
    memset(n->cnp, 0, sizeof n->cnp);
}

/* The NIC called name: found (and marked seen; a returning NIC starts over) or added. */
static struct mon_nic *see(struct ct_monitor *m, const char *name, bool *fresh)
{
    struct mon_nic *n = find(m, name);
    *fresh = false;
    if (n && n->gone) {
        drop_plan(n);
        reset_ctrs(n);
        n->gone = 0;
        n->s.flags |= CT_NICF_NEW;
        *fresh = true;
    }
    if (!n) {
        m->nic = ct_xrealloc(m->nic, (m->n + 1) * sizeof *m->nic);
        n = &m->nic[m->n++];
        memset(n, 0, sizeof *n);
        mon_scpy(n->s.name, sizeof n->s.name, name);
        n->s.flags = m->sampled ? CT_NICF_NEW : 0;
        *fresh = true;
    }
    n->seen = true;
    return n;
}

/* "4: ACTIVE" -> 4, "ACTIVE". */
static int state_word(const char *s, char *word, size_t len)
{
    int num = 0;
    char w[32] = "";
    if (sscanf(s, "%d: %31s", &num, w) == 2) {
        mon_scpy(word, len, w);
        return num;
    }
    mon_scpy(word, len, s);
    return 0;
}

struct rdma_dev {
    char name[32];
    char devpath[PATH_MAX]; /* realpath of its PCI function, "" unknown */
};

static void scan_rdma(struct ct_monitor *m, struct rdma_dev **devs, size_t *ndev)
{
    char **v, rel[REL_LEN], real[PATH_MAX], buf[128];
    size_t nd = list_dir(m, "sys/class/infiniband", &v);
    for (size_t i = 0; i < nd; i++) {
        relf(rel, "sys/class/infiniband/%s", v[i]);
        if (resolve(m, rel, real) < 0)
            continue; /* dangling link: a device that is not there */
        *devs = ct_xrealloc(*devs, (*ndev + 1) * sizeof **devs);
        struct rdma_dev *d = &(*devs)[(*ndev)++];
        mon_scpy(d->name, sizeof d->name, v[i]);
        relf(rel, "sys/class/infiniband/%s/device", v[i]);
        if (resolve(m, rel, d->devpath) < 0)
            d->devpath[0] = 0;
        uint64_t vendor = 0;
        relf(rel, "sys/class/infiniband/%s/device/vendor", v[i]);
        read_u64(m, rel, &vendor);
        char **ports;
        relf(rel, "sys/class/infiniband/%s/ports", v[i]);
        size_t np = list_dir(m, rel, &ports);
        for (size_t k = 0; k < np; k++) {
            char *end;
            long port = strtol(ports[k], &end, 10);
            if (*end || port < 1 || port > 255)
                continue;
            char name[48];
            snprintf(name, sizeof name, "%.32s:%ld", v[i], port);
            bool fresh;
            struct mon_nic *n = see(m, name, &fresh);
            struct ct_nic_snap *s = &n->s;
            mon_scpy(s->dev, sizeof s->dev, v[i]);
            s->port = (int)port;
            relf(n->port_dir, "sys/class/infiniband/%s/ports/%ld", v[i], port);
            char ll[32] = "";
            set_rel(rel, n->port_dir, "link_layer");
            read_str(m, rel, ll, sizeof ll);
            bool efa = vendor == 0x1d0f || !strncmp(v[i], "efa", 3);
            snprintf(s->kind, sizeof s->kind, "%s",
                     efa                         ? "EFA"
                     : !strcmp(ll, "InfiniBand") ? "IB"
                     : !strcmp(ll, "Ethernet")   ? "RoCE"
                                                 : "RDMA");
            set_rel(rel, n->port_dir, "state");
            int st = read_str(m, rel, buf, sizeof buf) == 0
                         ? state_word(buf, s->state, sizeof s->state)
                         : (snprintf(s->state, sizeof s->state, "?"), 0);
            s->up = st == 4 || !strcmp(s->state, "ACTIVE");
            set_rel(rel, n->port_dir, "rate");
            s->line_gbps = read_str(m, rel, buf, sizeof buf) == 0 ? strtod(buf, NULL) : 0;
            if (!(s->line_gbps > 0))
                s->line_gbps = 0;
            s->netdev[0] = 0;
            n->net_dir[0] = 0;
            if (fresh || !n->prim.ok) { /* counters may show up after the port */
                drop_plan(n);
                plan_rdma(m, n);
            }
        }
        ct_dir_names_free(ports, np);
    }
    ct_dir_names_free(v, nd);
}

/* The RDMA port a network interface belongs to (same PCI function and port), or NULL. */
static struct mon_nic *rdma_port_of(struct ct_monitor *m, const struct rdma_dev *devs, size_t ndev,
                                    const char *netdev)
{
    char rel[REL_LEN], real[PATH_MAX];
    relf(rel, "sys/class/net/%s/device", netdev);
    if (resolve(m, rel, real) < 0)
        return NULL;
    uint64_t port = 0;
    relf(rel, "sys/class/net/%s/dev_port", netdev);
    if (read_u64(m, rel, &port) < 0) {
        relf(rel, "sys/class/net/%s/dev_id", netdev);
        if (read_u64(m, rel, &port) < 0)
            port = 0;
    }
    for (size_t i = 0; i < ndev; i++) {
        if (!devs[i].devpath[0] || strcmp(devs[i].devpath, real))
            continue;
        char name[48];
        snprintf(name, sizeof name, "%.32s:%llu", devs[i].name, (unsigned long long)port + 1);
        struct mon_nic *n = find(m, name);
        if (n && n->seen && !n->s.netdev[0])
            return n;
        snprintf(name, sizeof name, "%.32s:1", devs[i].name); /* single-port fallback */
        n = find(m, name);
        if (n && n->seen && !n->s.netdev[0])
            return n;
    }
    return NULL;
}

static void scan_net(struct ct_monitor *m, const struct rdma_dev *devs, size_t ndev)
{
    char **v, rel[REL_LEN], real[PATH_MAX], buf[64];
    size_t nn = list_dir(m, "sys/class/net", &v);
    for (size_t i = 0; i < nn; i++) {
        relf(rel, "sys/class/net/%s", v[i]);
        if (resolve(m, rel, real) < 0)
            continue;
        struct mon_nic *r = rdma_port_of(m, devs, ndev, v[i]);
        if (r) {
            mon_scpy(r->s.netdev, sizeof r->s.netdev, v[i]);
            relf(r->net_dir, "sys/class/net/%s", v[i]);
            continue;
        }
        bool fresh;
        struct mon_nic *n = see(m, v[i], &fresh);
        struct ct_nic_snap *s = &n->s;
        mon_scpy(s->netdev, sizeof s->netdev, v[i]);
        relf(n->net_dir, "sys/class/net/%s", v[i]);
        uint64_t type = 1, carrier = 0;
        relf(rel, "sys/class/net/%s/type", v[i]);
        read_u64(m, rel, &type);
        bool virt = strstr(real, "/devices/virtual/") != NULL;
        if (virt)
            s->flags |= CT_NICF_VIRTUAL;
        snprintf(s->kind, sizeof s->kind, "%s",
                 type == 772 || !strcmp(v[i], "lo") ? "lo"
                 : virt                             ? "virt"
                 : type == 32                       ? "IPoIB"
                                                    : "Eth");
        relf(rel, "sys/class/net/%s/operstate", v[i]);
        if (read_str(m, rel, s->state, sizeof s->state) < 0)
            snprintf(s->state, sizeof s->state, "?");
        relf(rel, "sys/class/net/%s/carrier", v[i]);
        bool carrier_ok = read_u64(m, rel, &carrier) == 0 && carrier == 1;
        s->up = !strcmp(s->state, "up") || (!strcmp(s->state, "unknown") && carrier_ok);
        if (s->up && !strcmp(s->state, "unknown"))
            snprintf(s->state, sizeof s->state, "up");
        relf(rel, "sys/class/net/%s/speed", v[i]);
        s->line_gbps = 0;
        if (read_str(m, rel, buf, sizeof buf) == 0) {
            long mbps = strtol(buf, NULL, 10);
            s->line_gbps = mbps > 0 ? (double)mbps / 1000.0 : 0;
        }
        if (fresh || !n->prim.ok) {
            drop_plan(n);
            plan_net(m, n);
        }
    }
    ct_dir_names_free(v, nn);
}

/* ---- rates -------------------------------------------------------------------------------- */

/*
 * Increment of a counter between two readings. A smaller reading is a wrap when the wrapped
 * increment is plausible (at most max units), else a reset (-1).
 */
static int ctr_delta(uint64_t prev, uint64_t cur, double max, uint64_t *d, unsigned *flags)
{
    if (cur >= prev) {
        *d = cur - prev;
        return 0;
    }
    uint64_t w = prev <= PMA32_MAX ? (PMA32_MAX - prev) + cur + 1 : (UINT64_MAX - prev) + cur + 1;
    if ((double)w <= max) {
        *d = w;
        *flags |= CT_NICF_WRAPPED;
        return 0;
    }
    *flags |= CT_NICF_RESET;
    return -1;
}

/* Read one counter; its increment since the previous reading in *d (-1: none known). */
static int step(const struct ct_monitor *m, struct mon_ctr *c, double max, uint64_t *cur,
                uint64_t *d, unsigned *flags)
{
    uint64_t v;
    if (!c->rel[0] || read_u64(m, c->rel, &v) < 0)
        return -2; /* no such counter (now) */
    *cur = v;
    int rc = -1;
    if (c->have)
        rc = ctr_delta(c->prev, v, max, d, flags);
    c->prev = v;
    c->have = true;
    return rc;
}

struct reading {
    uint64_t cur[D_N], d[D_N];
    int rc[D_N]; /* 0 delta known, -1 none, -2 no counter */
};

static void read_src(const struct ct_monitor *m, struct mon_src *s, const double max[D_N],
                     struct reading *r, unsigned *flags)
{
    for (int k = 0; k < D_N; k++) {
        r->cur[k] = r->d[k] = 0;
        r->rc[k] = s->ok ? step(m, &s->c[k], max[k] / (k < D_TXP ? s->unit : 1), &r->cur[k],
                                &r->d[k], flags)
                         : -2;
    }
}

static void push_hist(struct ct_nic_snap *s, float v)
{
    if (s->n_hist == CT_SNAP_HIST) {
        memmove(s->hist, s->hist + 1, (CT_SNAP_HIST - 1) * sizeof s->hist[0]);
        s->n_hist--;
    }
    s->hist[s->n_hist++] = v;
}

static void unknown_rates(struct ct_nic_snap *s)
{
    s->tx_gbps = s->rx_gbps = s->util = s->tx_pps = s->rx_pps = -1;
    s->cnp_rate = -1;
    s->err_delta = 0;
}

/* Errors and discards (any increase counts; a smaller reading restarts the count) and RoCE
 * congestion notifications. */
static void update_errors(const struct ct_monitor *m, struct mon_nic *n, double dt)
{
    struct ct_nic_snap *s = &n->s;
    for (size_t i = 0; i < n->n_err; i++) {
        uint64_t v;
        struct mon_ctr *c = &n->err[i];
        if (read_u64(m, c->rel, &v) < 0)
            continue;
        uint64_t d = c->have ? (v >= c->prev ? v - c->prev : v) : 0;
        c->prev = v;
        c->have = true;
        if (d) {
            s->err_delta += d;
            s->errors += d;
            const char *base = strrchr(c->rel, '/');
            mon_scpy(s->err_last, sizeof s->err_last, base ? base + 1 : c->rel);
        }
    }
    double cnp = 0;
    int ncnp = 0;
    for (int k = 0; k < 2; k++) {
        uint64_t v;
        struct mon_ctr *c = &n->cnp[k];
        if (!c->rel[0] || read_u64(m, c->rel, &v) < 0)
            continue;
        if (c->have && dt > 0) {
            cnp += (double)(v >= c->prev ? v - c->prev : v) / dt;
            ncnp++;
        }
        c->prev = v;
        c->have = true;
    }
    if (ncnp)
        s->cnp_rate = cnp;
}

static void update(struct ct_monitor *m, struct mon_nic *n, int64_t now)
{
    struct ct_nic_snap *s = &n->s;
    double dt = n->last_ns ? (double)(now - n->last_ns) * 1e-9 : 0;
    unsigned keep = s->flags & (CT_NICF_VIRTUAL | CT_NICF_NEW);
    s->flags = keep | (n->last_ns ? 0 : CT_NICF_FIRST);
    if (dt <= 0)
        dt = 0;
    /* plausible maxima over dt (a larger wrapped increment is a reset): the line rate with
     * a margin for timing jitter, else 1.6 Tb/s; packets of 64 bytes */
    double bps = (s->line_gbps > 0 ? 1.25 * s->line_gbps : 1600) * 1e9 / 8;
    double max[D_N] = {bps * dt, bps * dt, bps * dt / 64, bps * dt / 64};
    struct reading p, f;
    unsigned pf = 0, ff = 0;
    read_src(m, &n->prim, max, &p, &pf);
    read_src(m, &n->fb, max, &f, &ff);
    /* a pegged 32-bit PMA counter says nothing: read the fallback, else report unknown */
    bool sat[D_N];
    for (int k = 0; k < D_N; k++)
        sat[k] = n->prim.pma32 && p.rc[k] != -2 && p.cur[k] == PMA32_MAX;
    bool sat_data = sat[D_TX] || sat[D_RX], sat_pkt = sat[D_TXP] || sat[D_RXP];
    bool fb_data = sat_data && n->fb.ok, fb_pkt = sat_pkt && n->fb.ok && f.rc[D_TXP] != -2;
    const struct reading *rd = fb_data ? &f : &p, *rp = fb_pkt ? &f : &p;
    const struct mon_src *sd = fb_data ? &n->fb : &n->prim;
    if (sat_data || sat_pkt)
        s->flags |= CT_NICF_SATURATED;
    if (fb_data || fb_pkt)
        s->flags |= CT_NICF_FALLBACK;
    s->flags |= ((fb_data || fb_pkt ? ff : 0) | (!fb_data || !fb_pkt ? pf : 0)) &
                (CT_NICF_WRAPPED | CT_NICF_RESET);
    mon_scpy(s->src, sizeof s->src, sd->ok ? sd->name : "none");
    if (sat_data && !fb_data)
        mon_scpy(s->src, sizeof s->src, "saturated");
    unknown_rates(s);
    if (rd->rc[D_TX] != -2)
        s->tx_bytes = rd->cur[D_TX] * sd->unit;
    if (rd->rc[D_RX] != -2)
        s->rx_bytes = rd->cur[D_RX] * sd->unit;
    if (dt > 0 && !(sat_data && !fb_data)) {
        if (rd->rc[D_TX] == 0)
            s->tx_gbps = (double)rd->d[D_TX] * sd->unit * 8 / dt / 1e9;
        if (rd->rc[D_RX] == 0)
            s->rx_gbps = (double)rd->d[D_RX] * sd->unit * 8 / dt / 1e9;
    }
    if (dt > 0 && !(sat_pkt && !fb_pkt)) {
        if (rp->rc[D_TXP] == 0)
            s->tx_pps = (double)rp->d[D_TXP] / dt;
        if (rp->rc[D_RXP] == 0)
            s->rx_pps = (double)rp->d[D_RXP] / dt;
    }
    double hi = s->tx_gbps > s->rx_gbps ? s->tx_gbps : s->rx_gbps;
    if (hi >= 0 && s->line_gbps > 0)
        s->util = hi / s->line_gbps;
    push_hist(s, (float)hi);
    update_errors(m, n, dt);
    n->last_ns = now;
}

/* ---- the sample --------------------------------------------------------------------------- */

struct ct_monitor *ct_monitor_new(const char *sysfs_root)
{
    struct ct_monitor *m = ct_xcalloc(1, sizeof *m);
    const char *r = sysfs_root && *sysfs_root ? sysfs_root : "/";
    mon_scpy(m->root, sizeof m->root, r);
    size_t l = strlen(m->root);
    while (l > 1 && m->root[l - 1] == '/')
        m->root[--l] = 0;
    if (!strcmp(m->root, "/"))
        m->root[0] = 0; /* paths become "/sys/..." */
    ct_snapshot_init(&m->last);
    return m;
}

void ct_monitor_free(struct ct_monitor *m)
{
    if (!m)
        return;
    for (size_t i = 0; i < m->n; i++)
        free(m->nic[i].err);
    free(m->nic);
    ct_snapshot_release(&m->last);
    free(m);
}

static void host_name(const struct ct_monitor *m, char *out, size_t len)
{
    if (!m->root[0]) {
        if (gethostname(out, len) < 0)
            snprintf(out, len, "localhost");
        out[len - 1] = 0;
        return;
    }
    if (read_str(m, "proc/sys/kernel/hostname", out, len) == 0 && out[0])
        return;
    if (read_str(m, "etc/hostname", out, len) == 0 && out[0])
        return;
    const char *b = strrchr(m->root, '/');
    mon_scpy(out, len, b ? b + 1 : m->root);
}

static int cmp_nic(const void *a, const void *b)
{
    const struct ct_nic_snap *x = a, *y = b;
    int cx = ct_nic_snap_class(x), cy = ct_nic_snap_class(y);
    if (cx != cy)
        return cx - cy;
    return ct_natcmp(x->name, y->name);
}

int ct_monitor_sample_at(struct ct_monitor *m, int64_t now_ns, struct ct_snapshot *snap,
                         struct ct_err *err)
{
    if (!exists(m, "sys/class"))
        return ct_err_set(err, CT_EINVAL, "sysfs root '%s' has no sys/class directory",
                          m->root[0] ? m->root : "/");
    for (size_t i = 0; i < m->n; i++) {
        m->nic[i].seen = false;
        m->nic[i].s.flags &= ~(unsigned)CT_NICF_NEW;
    }
    struct rdma_dev *devs = NULL;
    size_t ndev = 0;
    scan_rdma(m, &devs, &ndev);
    scan_net(m, devs, ndev);
    free(devs);
    size_t keep = 0;
    for (size_t i = 0; i < m->n; i++) {
        struct mon_nic *n = &m->nic[i];
        if (n->seen) {
            update(m, n, now_ns);
        } else if (++n->gone <= GONE_KEEP) {
            unknown_rates(&n->s);
            n->s.up = false;
            n->s.flags = (n->s.flags & CT_NICF_VIRTUAL) | CT_NICF_GONE;
            snprintf(n->s.state, sizeof n->s.state, "gone");
            push_hist(&n->s, -1);
        } else {
            free(n->err);
            continue;
        }
        m->nic[keep++] = *n;
    }
    m->n = keep;
    free(snap->nic);
    snap->nic = m->n ? ct_xcalloc(m->n, sizeof *snap->nic) : NULL;
    for (size_t i = 0; i < m->n; i++)
        snap->nic[i] = m->nic[i].s;
    snap->n_nic = m->n;
    qsort(snap->nic, snap->n_nic, sizeof *snap->nic, cmp_nic);
    snap->seq = ++m->seq;
    snap->interval_s = m->sampled ? (double)(now_ns - m->last_ns) * 1e-9 : 0;
    snap->t_ns = now_ns;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    snap->wall_s = (double)ts.tv_sec + ts.tv_nsec * 1e-9;
    host_name(m, snap->host, sizeof snap->host);
    m->last_ns = now_ns;
    m->sampled = true;
    return 0;
}

int ct_monitor_sample(struct ct_monitor *m, struct ct_snapshot *snap, struct ct_err *err)
{
    return ct_monitor_sample_at(m, ct_now_ns(), snap, err);
}

int ct_monitor_sample_cb(void *arg, struct ct_snapshot *snap, struct ct_err *err)
{
    return ct_monitor_sample(arg, snap, err);
}
