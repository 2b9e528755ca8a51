/* SPDX-License-Identifier: MIT */
/*
 * The validation battery of one rank: units (hosts, or ranks of one host), every rank's
 * topology to rank 0, rails, the O(N)-round pair schedule with NIC counters per round (over
 * each rail in turn), the copy calibration of a single host, ring collectives, each host's
 * GPU copies; then rank 0 assembles the report (ceilings, baseline, diagnosis). Nothing here
 * prints.
 */
#include "battery.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../lib/clock.h"
#include "../lib/cpus.h"
#include "../lib/parse.h"
#include "../lib/sock.h"
#include "../monitor/monitor.h"
#include "../transport/launch.h"
#include "../tune/stats.h"
#include "pairs.h"
#include "rails.h"

/* the efficiency overrides of the baseline, when there is one */
#define BASE_EFF(R) (R)->cfg->base ? (R)->cfg->base->eff : NULL, (R)->cfg->base ? (R)->cfg->base->n_eff : 0

/* ==== What each rank sends rank 0 after a round ============================================ */

struct wire_nic {
    char name[32];
    double tx, rx, line_gbps;
    uint64_t errs;
};

struct wire {
    int32_t partner, failed, n_nic, pad; /* failed: 1, or 2 cut short for another's stall */
    double gbs, lat_us;
    struct wire_nic nic[CT_VAL_MAX_NICS];
};

/* Units: hosts when the job spans several, else ranks. leader[u] = first rank of unit u. */
struct layout {
    int nunits, my_unit, *leader, *unit_of;
    bool by_host;
    bool virt; /* by host, the hosts one machine's virtual nodes (--local N --ranks-per-node:
                  transport/launch.h names them "<host>/nodeK"): loopback, no NIC */
};

static void layout_build(const struct ct_boot *b, struct layout *l)
{
    l->leader = ct_xcalloc((size_t)b->size, sizeof *l->leader);
    l->unit_of = ct_xcalloc((size_t)b->size, sizeof *l->unit_of);
    l->by_host = b->nnodes > 1;
    l->nunits = 0;
    for (int r = 0; r < b->size; r++) {
        int u = -1;
        for (int k = 0; l->by_host && k < l->nunits; k++)
            if (!strcmp(b->hosts[l->leader[k]], b->hosts[r]))
                u = k;
        if (u < 0) {
            u = l->nunits++;
            l->leader[u] = r;
        }
        l->unit_of[r] = u;
    }
    l->my_unit = l->unit_of[b->rank];
    size_t m = strcspn(b->hosts[0], "/");
    l->virt = l->by_host && b->hosts[0][m];
    for (int r = 1; l->virt && r < b->size; r++)
        l->virt = !strncmp(b->hosts[r], b->hosts[0], m + 1);
}

#define CHUNK (128u << 10)   /* pair exchanges move this much per transport message */
#define CALIB_NS 30000000LL  /* one host: copy for 30 ms to find the ceiling, */
#define CALIB_WINDOWS 3      /* three times (the median) */
#define SEC 1000000000LL

/* Pair exchange: both directions at once, then a small ping-pong for latency. */
static int exchange(struct ct_exec *ex, struct ct_comm *c, int peer, void *sb, void *rb,
                    uint64_t bytes, int iters, struct wire *w, struct ct_err *err)
{
    struct ct_sched bw, lat, say;
    ct_sched_init(&bw);
    ct_sched_init(&lat);
    ct_sched_init(&say);
    ct_sched_step(&say); /* each side's word before a repetition (below) */
    ct_sched_send(&say, peer, ct_loc(CT_BUF_SEND, 0), 8);
    ct_sched_recv(&say, peer, ct_loc(CT_BUF_RECV, 0), 8);
    ct_sched_finish(&say);
    ct_sched_step(&bw);
    ct_sched_send(&bw, peer, ct_loc(CT_BUF_SEND, 0), bytes);
    ct_sched_recv(&bw, peer, ct_loc(CT_BUF_RECV, 0), bytes);
    ct_sched_finish(&bw);
    for (int k = 0; k < 2; k++) {
        ct_sched_step(&lat);
        if ((k == 0) == (c->rank < peer))
            ct_sched_send(&lat, peer, ct_loc(CT_BUF_SEND, 0), 8);
        else
            ct_sched_recv(&lat, peer, ct_loc(CT_BUF_RECV, 0), 8);
    }
    ct_sched_finish(&lat);
    struct ct_exec_args a = {.buf = {sb, rb, NULL}, .chunk = CHUNK, .depth = 4, .threads = 1};
    /* warmup: meets the partner and opens the TCP window (slow start); below 2 MiB, as many
     * exchanges as move 4 MiB, and a sample of as many as move 1 MiB: the first exchanges map
     * and fault the buffers, and one of 64 KiB takes microseconds (3 samples of one read 31-36
     * GB/s a round, these 51, the pair alone 35-70) */
    uint64_t b = bytes ? bytes : 1;
    int rc = 0, warm = b < (2u << 20) ? (int)((4u << 20) / b) : 2,
        reps = b < (1u << 20) ? (int)((1u << 20) / b) : 1;
    warm = warm > 256 ? 256 : warm;
    reps = reps > 64 ? 64 : reps;
    for (int i = 0; rc == 0 && i < warm; i++)
        rc = ct_exec_run(ex, c, &bw, &a, err);
    /* each repetition timed alone; the median rate and latency stand for the pair, so one
     * preempted repetition on a busy host does not decide the verdict */
    const int nlat = 20;
    double *rate = ct_xcalloc((size_t)iters, sizeof *rate), lus[20];
    int nr = 0, nl = 0;
    for (int i = 0; rc == 0 && i < iters; i++) {
        /* a long pair round stops when another rank died (the --local launcher's word) or a
         * partner found its peer stalled (that launcher's word, or the bootstrap's); the two
         * sides say what they know and stop together (one side alone left its partner to time
         * out on it, and its data in the link for the next exchange to read as its own) */
        int lost = ct_launch_lost_rank(), stall = ct_boot_stalled(c->boot, ct_now_ns());
        int32_t word[2] = {lost >= 0    ? lost + 1
                           : stall >= 0 ? stall + 1
                                        : 0,
                           lost >= 0 && ct_launch_lost_how() != CT_LAUNCH_LOST_STALLED ? 1 : 2};
        memcpy(sb, word, sizeof word);
        if ((rc = ct_exec_run(ex, c, &say, &a, err)) < 0)
            break;
        if (!word[0])
            memcpy(word, rb, sizeof word);
        if (word[0] > 0) {
            rc = ct_err_set(err, CT_EPEER, "rank %d failed; the pair with rank %d stopped",
                            (int)word[0] - 1, peer);
            w->failed = word[1] == 1 ? 1 : 2; /* cut short */
            break;
        }
        /* a round longer than the timeout: the waiting ranks wait on (outside the timing) */
        ct_boot_beat(c->boot, ct_now_ns());
        int64_t t0 = ct_now_ns();
        for (int r = 0; rc == 0 && r < reps; r++)
            rc = ct_exec_run(ex, c, &bw, &a, err);
        rate[nr++] = (double)bytes * reps / (double)(ct_now_ns() - t0);
    }
    for (int i = 0; rc == 0 && i < 3; i++)
        rc = ct_exec_run(ex, c, &lat, &a, err);
    for (int i = 0; rc == 0 && i < nlat; i++) {
        int64_t t0 = ct_now_ns();
        rc = ct_exec_run(ex, c, &lat, &a, err);
        lus[nl++] = (double)(ct_now_ns() - t0) / 1e3 / 2;
    }
    ct_sched_release(&bw);
    ct_sched_release(&lat);
    ct_sched_release(&say);
    if (rc == 0) {
        struct ct_stats st;
        ct_stats_compute(rate, nr, &st);
        w->gbs = st.median;
        ct_stats_compute(lus, nl, &st);
        w->lat_us = st.median;
    }
    free(rate);
    return rc < 0 ? rc : 0;
}

/* NIC counter deltas between two samples, busiest first (loopback left out). */
static void nic_deltas(const struct ct_snapshot *s0, const struct ct_snapshot *s1, struct wire *w)
{
    w->n_nic = 0;
    for (size_t i = 0; i < s1->n_nic; i++) {
        const struct ct_nic_snap *n = &s1->nic[i];
        if (!strcmp(n->kind, "lo"))
            continue;
        const struct ct_nic_snap *p = NULL;
        for (size_t j = 0; j < s0->n_nic && !p; j++)
            if (!strcmp(s0->nic[j].name, n->name))
                p = &s0->nic[j];
        struct wire_nic x = {{0}, 0, 0, n->line_gbps, 0};
        snprintf(x.name, sizeof x.name, "%.31s", n->name);
        if (p) {
            x.tx = n->tx_bytes >= p->tx_bytes ? (double)(n->tx_bytes - p->tx_bytes) : 0;
            x.rx = n->rx_bytes >= p->rx_bytes ? (double)(n->rx_bytes - p->rx_bytes) : 0;
            x.errs = n->errors >= p->errors ? n->errors - p->errors : 0;
        }
        int k = w->n_nic < CT_VAL_MAX_NICS ? w->n_nic++ : CT_VAL_MAX_NICS - 1;
        if (k == CT_VAL_MAX_NICS - 1 && w->nic[k].tx + w->nic[k].rx >= x.tx + x.rx)
            continue;
        w->nic[k] = x;
        for (; k > 0 && w->nic[k].tx + w->nic[k].rx > w->nic[k - 1].tx + w->nic[k - 1].rx; k--) {
            struct wire_nic t = w->nic[k];
            w->nic[k] = w->nic[k - 1];
            w->nic[k - 1] = t;
        }
    }
}

struct run {
    const struct ct_val_cfg *cfg;
    struct ct_boot *boot;
    struct ct_comm *comm;
    struct layout l;
    struct ct_pairs pp;
    struct ct_rail_host *hosts; /* per unit: its interfaces (leaders listed them) */
    struct ct_rails rails;
    bool use_rails; /* drive each rail in turn (else: the route between hosts) */
    struct ct_val_report rep;
    struct ct_topo **topo; /* rank 0: per unit */
    int64_t t0;
    int dipped; /* the test hook's collective measures so far */
};

/* The interface index of unit u on rail k, -1 none. */
static int rail_if(const struct run *R, int u, int k)
{
    return R->rails.ifidx[u][k];
}

/* ==== Rank 0: the report =================================================================== */

/* u's NIC named name (or whose interface is name); add: create it when missing. */
static int nic_index(struct ct_val_unit *u, const char *name, double line_gbps, bool add)
{
    for (int k = 0; k < u->n_nic; k++)
        if (!strcmp(u->nic[k].name, name) || !strcmp(u->nic[k].netdev, name))
            return k;
    if (!add || u->n_nic >= CT_VAL_MAX_NICS)
        return -1;
    struct ct_val_nic *v = &u->nic[u->n_nic];
    memset(v, 0, sizeof *v);
    snprintf(v->name, sizeof v->name, "%s", name);
    v->line_gbps = line_gbps;
    return u->n_nic++;
}

/* Fold one round's records into the report: the pairs and the NIC counters. On a rail, a
 * pair's NICs are the rail's interfaces; on the route, the busiest NIC of each end. */
static void add_round(struct run *R, int rail, int round, const struct wire *all)
{
    struct ct_val_report *r = &R->rep;
    const struct layout *l = &R->l;
    const struct ct_pair *q = ct_pairs_round(&R->pp, round);
    for (int i = 0; i < R->pp.per_round; i++) {
        const struct wire *wa = &all[l->leader[q[i].a]], *wb = &all[l->leader[q[i].b]];
        if (rail >= 0 && (rail_if(R, q[i].a, rail) < 0 || rail_if(R, q[i].b, rail) < 0))
            continue; /* one end is not on this rail */
        if (wa->failed == 2 || wb->failed == 2)
            continue; /* stopped for another pair's stalled rank: not measured, not failed */
        struct ct_val_pair *p = &r->pair[r->n_pair++];
        memset(p, 0, sizeof *p);
        p->round = round + (rail > 0 ? rail * R->pp.rounds : 0);
        p->rail = rail;
        p->a = q[i].a;
        p->b = q[i].b;
        p->gbs = wa->failed || wb->failed ? -1 : (wa->gbs < wb->gbs ? wa->gbs : wb->gbs);
        p->lat_us = wa->failed || wb->failed ? -1 : (wa->lat_us + wb->lat_us) / 2;
        p->nic_a = p->nic_b = -1;
        for (int e = 0; e < 2; e++) {
            const struct wire *w = e ? wb : wa;
            struct ct_val_unit *u = &r->unit[e ? p->b : p->a];
            for (int k = 0; k < w->n_nic; k++) {
                bool moved = w->nic[k].tx + w->nic[k].rx > 0;
                int idx = nic_index(u, w->nic[k].name, w->nic[k].line_gbps,
                                    moved && r->expect_nic);
                if (idx < 0)
                    continue;
                u->nic[idx].tx_bytes += w->nic[k].tx;
                u->nic[idx].rx_bytes += w->nic[k].rx;
                u->nic[idx].errors += w->nic[k].errs;
                if (k == 0 && moved && r->expect_nic && rail < 0)
                    *(e ? &p->nic_b : &p->nic_a) = idx;
            }
            if (rail >= 0) {
                int hu = e ? p->b : p->a;
                const struct ct_ifaddr *f = &R->hosts[hu].ifs[rail_if(R, hu, rail)];
                *(e ? &p->nic_b : &p->nic_a) = nic_index(u, f->name, 0, true);
            }
        }
    }
}

/* A dead rank named in a bootstrap error ("... rank 3 (host) ..."), -1 none. */
static int dead_rank_of(const char *msg)
{
    const char *s = msg;
    while ((s = strstr(s, "rank ")) != NULL) {
        int r, end = 0;
        if (sscanf(s, "rank %d (%n", &r, &end) == 1 && end && r > 0)
            return r;
        s += 5;
    }
    return -1;
}

/* Rank 0, the job broken: the rank that died, -1 none known. The launcher's word where a
 * signal killed it (waited for up to 1 s: a peer's socket can close before the launcher
 * reaps it; a rank that exited on purpose, as after "rank 0 gave up", is no death), else,
 * where named is set, the peer the error names (a pair's, or the gather's hub's wait). */
static int dead_rank(const char *msg, bool named)
{
    int lost = ct_launch_lost_rank_wait(SEC);
    if (lost >= 0 && ct_launch_lost_how() < 0)
        return lost;
    return named ? dead_rank_of(msg) : -1;
}

/*
 * Leaders list their IPv4 interfaces and every rank derives the same rails. They are driven
 * one after another only between hosts over tcp and when there are two or more (with one,
 * the route between the hosts is that rail). A host that cannot list its interfaces is on no
 * rail.
 */
static int gather_rails(struct run *R, struct ct_err *err)
{
    struct ct_rail_host mine, *all = ct_xcalloc((size_t)R->boot->size, sizeof *all);
    memset(&mine, 0, sizeof mine);
    if (R->l.by_host && R->l.leader[R->l.my_unit] == R->boot->rank) {
        struct ct_err e2 = {0};
        int n = ct_sock_if_list(mine.ifs, CT_RAIL_MAX, &e2);
        mine.n = n > 0 ? n : 0;
    }
    int rc = ct_boot_allgather(R->boot, &mine, sizeof mine, all, err);
    R->hosts = ct_xcalloc((size_t)R->l.nunits, sizeof *R->hosts);
    for (int u = 0; rc == 0 && u < R->l.nunits; u++)
        R->hosts[u] = all[R->l.leader[u]];
    free(all);
    ct_rails_build(R->hosts, rc == 0 ? R->l.nunits : 0, &R->rails);
    char tp[32];
    ct_comm_tp_names(R->comm, tp, sizeof tp);
    R->use_rails = rc == 0 && R->l.by_host && R->rails.n >= 2 && strstr(tp, "tcp");
    return rc;
}

/* A tcp communicator between the leaders on rail k: each publishes its rail interface's
 * address, so the traffic of a pair leaves and enters through that rail's NICs. */
static int open_rail(struct run *R, int k, struct ct_comm *rc, struct ct_err *err)
{
    struct ct_comm_cfg cc = R->cfg->comm;
    unsigned char *peers = ct_xcalloc((size_t)R->boot->size, 1);
    int me = R->l.my_unit;
    bool on = R->l.leader[me] == R->boot->rank && rail_if(R, me, k) >= 0;
    for (int u = 0; on && u < R->l.nunits; u++)
        if (u != me && rail_if(R, u, k) >= 0)
            peers[R->l.leader[u]] = 1;
    cc.transport = "tcp";
    cc.tp.peers = peers;
    cc.tp.ifname = on ? R->hosts[me].ifs[rail_if(R, me, k)].name : NULL;
    int ret = ct_comm_open(rc, R->boot, &cc, err);
    free(peers);
    if (ret < 0) {
        char n[24];
        return ct_err_wrap(err, "rail %s: ", ct_rails_name(&R->rails, k, n, sizeof n));
    }
    return 0;
}

/* Topologies of every rank to rank 0. */
static int gather_topos(struct run *R, struct ct_err *err)
{
    struct ct_topo *t = ct_topo_new();
    char *mine = NULL, *all = NULL;
    size_t stride = 0;
    int rc = ct_probe_local(t, &R->cfg->probe, err);
    if (rc == 0 && !(mine = ct_topo_to_json(t, err)))
        rc = err->code < 0 ? err->code : CT_EIO;
    ct_topo_free(t);
    /* every rank takes part in the gather, also one whose probe failed */
    all = ct_boot_allgatherv(R->boot, mine ? mine : "", mine ? strlen(mine) + 1 : 1, &stride,
                             rc == 0 ? err : &(struct ct_err){0});
    if (!all && rc == 0) /* a peer's death (CT_EPEER), not bad input (CT_EINVAL is -1) */
        rc = err->code < 0 ? err->code : CT_EIO;
    free(mine);
    if (rc == 0 && R->boot->rank == 0) {
        R->topo = ct_xcalloc((size_t)R->l.nunits, sizeof *R->topo);
        for (int u = 0; u < R->l.nunits && rc == 0; u++) {
            const char *j = all + (size_t)R->l.leader[u] * stride;
            if (!(R->topo[u] = ct_topo_from_json(j, strlen(j), err)))
                rc = ct_err_wrap(err, "rank %d: ", R->l.leader[u]);
        }
    }
    free(all);
    return rc;
}

/* Rank 0: units with names, rank ranges and ceilings; heterogeneity findings. */
static void report_init(struct run *R)
{
    struct ct_val_report *r = &R->rep;
    struct ct_boot *b = R->boot;
    ct_val_report_init(r);
    ct_comm_tp_names(R->comm, r->transport, sizeof r->transport);
    r->min_pct = R->cfg->min_pct;
    r->p2p_bytes = R->cfg->p2p_bytes;
    r->coll_bytes = R->cfg->no_coll ? 0 : R->cfg->coll_bytes;
    r->expect_nic = R->l.by_host && !R->l.virt;
    r->n_unit = (size_t)R->l.nunits;
    r->unit = ct_xcalloc(r->n_unit, sizeof *r->unit);
    int nr = R->use_rails ? R->rails.n : 1;
    r->rounds = R->pp.rounds * nr;
    r->pair = ct_xcalloc((size_t)r->rounds * (size_t)R->pp.per_round + 1, sizeof *r->pair);
    if (R->use_rails) {
        r->n_rail = R->rails.n;
        r->rail = ct_xcalloc((size_t)r->n_rail, sizeof *r->rail);
        for (int k = 0; k < r->n_rail; k++)
            ct_rails_name(&R->rails, k, r->rail[k], sizeof r->rail[0]);
    }
    /* between hosts the inter-node transport applies; between ranks of one host, shm */
    char tp[32];
    snprintf(tp, sizeof tp, "%s", r->transport);
    if (!R->l.by_host && strstr(tp, "+"))
        *strchr(tp, '+') = 0;
    else if (R->l.by_host && strchr(tp, '+'))
        memmove(tp, strchr(tp, '+') + 1, strlen(strchr(tp, '+')));
    for (int u = 0; u < R->l.nunits; u++) {
        struct ct_val_unit *x = &r->unit[u];
        int lead = R->l.leader[u];
        if (R->l.by_host)
            snprintf(x->name, sizeof x->name, "%s", b->hosts[lead]);
        else
            snprintf(x->name, sizeof x->name, "%.50s/rank%d", b->hosts[lead], lead);
        x->first_rank = lead;
        for (int q = 0; q < b->size; q++)
            x->nranks += R->l.unit_of[q] == u;
        ct_val_expect_unit(R->topo ? R->topo[u] : NULL, tp, ct_val_efficiency(tp, BASE_EFF(R)),
                           R->cfg->link_gbps, x);
        bool virt = R->l.virt;
        if ((!R->l.by_host || virt) && R->cfg->link_gbps <= 0) {
            x->ceil_gbs = 0; /* ranks of one host over shm: measured by calibrate_copy() */
            snprintf(x->formula, sizeof x->formula,
                     "ceiling unknown: %s of one host talk "
                     "through %s (state it with --link-gbps or --baseline)",
                     virt ? "virtual nodes" : "ranks", virt ? "loopback" : tp);
        }
        if (!R->l.by_host || virt)
            x->n_nic = 0; /* ranks of one host: no NIC carries their traffic */
    }
    if (R->topo && R->l.by_host && R->l.nunits > 1) {
        struct ct_hetero het = {0};
        struct ct_err err = {0};
        if (ct_topo_hetero((const struct ct_topo *const *)R->topo, (size_t)R->l.nunits, &het,
                           &err) == 0)
            for (size_t d = 0; d < het.n_diffs; d++)
                ct_val_report_find(r, CT_VALF_HETERO, (int)het.diffs[d].host, -1, -1,
                                   "host %s differs from the majority: %s",
                                   r->unit[het.diffs[d].host].name, het.diffs[d].what);
        ct_hetero_release(&het);
    }
}

/* A copy in the exchange's chunks (the executor moves CHUNK bytes at a time; one memcpy of
 * the whole buffer would take glibc's non-temporal path and measure something else). */
static void copy_chunked(void *dst, const void *src, uint64_t bytes)
{
    for (uint64_t o = 0; o < bytes; o += CHUNK)
        memcpy((char *)dst + o, (const char *)src + o, bytes - o < CHUNK ? bytes - o : CHUNK);
}

static double median_of(double *v, int n)
{
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && v[j] < v[j - 1]; j--) {
            double t = v[j];
            v[j] = v[j - 1];
            v[j - 1] = t;
        }
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/*
 * Ranks of one host with no stated rate: the ceiling of a pair is what a memory copy of the
 * pair's size reaches on this host when every rank copies at once (a shared-memory exchange
 * is one copy per direction, and a round runs every pair at once): each rank copies for
 * CALIB_NS (after one copy that faults the pages in) and takes its mean rate; rank 0 takes
 * each rank's rate x its CPU share (when ranks outnumber CPUs) x the shm efficiency as its
 * ceiling.
 */
static int calibrate_copy(struct run *R, void *sb, void *rb, struct ct_err *err)
{
    uint64_t bytes = R->cfg->p2p_bytes;
    int size = R->boot->size;
    double *all = NULL, mine = 0;
    int rc = ct_boot_barrier(R->boot, err);
    copy_chunked(rb, sb, bytes); /* faults the pages in */
    /* copy for a window long enough that every rank's copies overlap the others', three
     * times from a barrier: the median, not one window where a peer was off its CPU (this
     * rank then copied alone, faster, and the pair read slow against it) */
    double w[CALIB_WINDOWS];
    for (int n = 0; rc == 0 && n < CALIB_WINDOWS; n++) {
        int64_t t0 = ct_now_ns(), t = t0;
        uint64_t k = 0;
        while (k < 3 || t - t0 < CALIB_NS) {
            copy_chunked(rb, sb, bytes);
            k++;
            t = ct_now_ns();
        }
        w[n] = (double)bytes * (double)k / (double)(t - t0);
        if (n + 1 < CALIB_WINDOWS)
            rc = ct_boot_barrier(R->boot, err);
    }
    if (rc == 0) {
        mine = median_of(w, CALIB_WINDOWS);
        all = ct_xcalloc((size_t)size, sizeof *all);
        rc = ct_boot_allgather(R->boot, &mine, sizeof mine, all, err);
    }
    /* more ranks than CPUs: a pair's rate is the scheduler's (which ranks share a CPU, who
     * runs while the other spins), not the memory's: no ceiling, nothing judged slow (a
     * ceiling scaled by cpus/ranks failed a healthy host in 4 to 6 of 12 runs, 4 ranks on 2
     * CPUs), as a sweep reports such points and tunes nothing on them */
    long cpus = ct_cpus_host();
    bool over = cpus > 0 && cpus < R->boot->local_size,
         small = bytes < (1u << 20); /* a copy in the caches; the 0.65 is of 1-4 MiB */
    double eff = ct_val_efficiency("shm", BASE_EFF(R));
    char sz[32];
    ct_bytes_str(bytes, sz, sizeof sz);
    for (size_t u = 0; rc == 0 && R->boot->rank == 0 && u < R->rep.n_unit; u++) {
        struct ct_val_unit *x = &R->rep.unit[u];
        x->ceil_gbs = over || small ? 0 : all[x->first_rank] * eff;
        if (small && !over)
            snprintf(x->formula, sizeof x->formula,
                     "ceiling unknown: below 1 MiB a memcpy stays in the caches, an exchange "
                     "between cores not (memcpy %s %.1f GB/s; state --link-gbps or --baseline)",
                     sz, all[x->first_rank]);
        else if (over)
            snprintf(x->formula, sizeof x->formula,
                     "ceiling unknown: %d ranks on %ld CPUs time the scheduler, not the memory "
                     "(memcpy %s measured %.3f GB/s; state a ceiling with --link-gbps or "
                     "--baseline)",
                     R->boot->local_size, cpus, sz, all[x->first_rank]);
        else
            snprintf(x->formula, sizeof x->formula,
                     "memcpy %s measured %.3f GB/s (%d ranks copying at once) x %.2f (shm) = "
                     "%.3f GB/s",
                     sz, all[x->first_rank], size, eff, x->ceil_gbs);
    }
    free(all);
    return rc;
}

/* ==== Blame only what stays slow ============================================================ */

#define SUSPECTS_MAX 8 /* suspect pairs re-measured per rail */

/* Rank 0's plan, given to every rank: the suspect pairs (units) and a healthy reference. */
struct suspects {
    int32_t n, ref_a, ref_b, pad; /* ref_a < 0: no healthy pair to compare with */
    int32_t a[SUSPECTS_MAX], b[SUSPECTS_MAX];
    int32_t idx[SUSPECTS_MAX]; /* the pair's index in rank 0's report */
};

/* Rank 0: the ceilings and the threshold the verdict will use (the baseline's, then a stated
 * --min-pct over the baseline's). */
static void stated_bars(struct run *R)
{
    if (R->cfg->base)
        ct_val_baseline_apply(R->cfg->base, &R->rep);
    if (R->cfg->min_pct_set)
        R->rep.min_pct = R->cfg->min_pct;
}

/* Rank 0: pairs of this rail (from index first on) below the pass threshold, and the
 * fastest other pair as the reference. */
static void pick_suspects(struct run *R, size_t first, struct suspects *s)
{
    struct ct_val_report *r = &R->rep;
    stated_bars(R);
    double best = -1;
    s->ref_a = s->ref_b = -1;
    for (size_t i = first; i < r->n_pair; i++) {
        const struct ct_val_pair *p = &r->pair[i];
        double ca = r->unit[p->a].ceil_gbs, cb = r->unit[p->b].ceil_gbs;
        double ceil = ca > 0 && cb > 0 ? fmin(ca, cb) : 0;
        if (p->gbs < 0)
            continue;
        if (ceil > 0 && 100 * p->gbs / ceil < r->min_pct) {
            if (s->n < SUSPECTS_MAX) {
                s->a[s->n] = p->a;
                s->b[s->n] = p->b;
                s->idx[s->n++] = (int32_t)i;
            }
        } else if (p->gbs > best) {
            best = p->gbs;
            s->ref_a = p->a;
            s->ref_b = p->b;
        }
    }
}

/* Did a pair of the round stop part way (failed, cut short)? Every rank reads the same. */
static bool round_broke(const struct wire *all, int n)
{
    for (int r = 0; r < n; r++)
        if (all[r].failed)
            return true;
    return false;
}

/* A pair that stopped part way left what it had sent in its links and its transfers in the
 * ranks' transports (a stalled rank that came back: its partner's next pair failed, with a
 * message it did not expect, and a healthy link was named): every rank closes the links the
 * rounds use and opens them afresh (the job's own, its buffers with them, or the rail's), as
 * the next round would find them at the start. Collective. */
static int reopen(struct run *R, int k, struct ct_comm *pc, void **sb, void **rb,
                  struct ct_exec *ex, struct ct_err *err)
{
    struct ct_comm *c = R->comm;
    size_t n = R->cfg->p2p_bytes;
    if (pc == c) {
        ct_comm_free(c, *rb, n);
        ct_comm_free(c, *sb, n);
        *sb = *rb = NULL;
    }
    ct_comm_close(pc);
    ex->res_broken = false; /* the links are closed: no transport writes to its state now */
    ct_exec_release(ex);    /* (and initialised again) */
    if (pc != c)
        return open_rail(R, k, pc, err);
    CT_TRY(ct_comm_open(c, R->boot, &R->cfg->comm, err));
    if (!(*sb = ct_comm_alloc(c, n, err)) || !(*rb = ct_comm_alloc(c, n, err)))
        return err->code < 0 ? err->code : CT_ENOMEM;
    memset(*sb, 1, n);
    return 0;
}

/* One pair alone: its two leaders exchange while every other rank waits; rank 0 gets the
 * rate in *gbs (-1: the exchange failed, and every rank opens the links afresh, as after a
 * round). Collective. */
static int measure_alone(struct run *R, int k, struct ct_comm *pc, struct ct_exec *ex, int ua,
                         int ub, void **sb, void **rb, double *gbs, struct ct_err *err)
{
    struct wire w, *all = ct_xcalloc((size_t)R->boot->size, sizeof *all);
    memset(&w, 0, sizeof w);
    int me = R->l.my_unit;
    bool leader = R->l.leader[me] == R->boot->rank;
    if (leader && (me == ua || me == ub)) {
        struct ct_err e2 = {0};
        w.failed = exchange(ex, pc, R->l.leader[me == ua ? ub : ua], *sb, *rb, R->cfg->p2p_bytes,
                            R->cfg->iters, &w, &e2) < 0;
    }
    int rc = ct_boot_allgather(R->boot, &w, sizeof w, all, err);
    const struct wire *wa = &all[R->l.leader[ua]], *wb = &all[R->l.leader[ub]];
    *gbs = wa->failed || wb->failed ? -1 : fmin(wa->gbs, wb->gbs);
    if (rc == 0 && *gbs < 0)
        rc = reopen(R, k, pc, sb, rb, ex, err);
    free(all);
    return rc;
}

/*
 * Every suspect pair of the rail is measured again, repeats times, alone and each time
 * right after the healthy reference pair (alone too). A suspect keeps its verdict only if it
 * stays short: its new number is the median of the repetitions; if it kept pace with the
 * reference (its median within the pass threshold of the reference's), the shortfall was
 * the machine's, not its link's, and it is cleared. The reference's spread is the noise
 * band the report states.
 */
static int remeasure(struct run *R, int k, struct ct_comm *pc, struct ct_exec *ex, size_t first,
                     void **sb, void **rb, struct ct_err *err)
{
    struct suspects s, *all = ct_xcalloc((size_t)R->boot->size, sizeof *all);
    memset(&s, 0, sizeof s);
    if (R->boot->rank == 0)
        pick_suspects(R, first, &s);
    int rc = ct_boot_allgather(R->boot, &s, sizeof s, all, err);
    s = all[0];
    free(all);
    int n = R->cfg->repeats;
    double re[SUSPECTS_MAX][16], ref[16];
    if (n > 16)
        n = 16;
    for (int j = 0; rc == 0 && j < n && s.n > 0; j++) {
        if (s.ref_a >= 0)
            rc = measure_alone(R, k, pc, ex, s.ref_a, s.ref_b, sb, rb, &ref[j], err);
        for (int i = 0; rc == 0 && i < s.n; i++)
            rc = measure_alone(R, k, pc, ex, s.a[i], s.b[i], sb, rb, &re[i][j], err);
    }
    if (rc < 0 || R->boot->rank != 0 || s.n == 0)
        return rc;
    struct ct_val_report *r = &R->rep;
    double ref_med = 0;
    if (s.ref_a >= 0) {
        double lo = ref[0], hi = ref[0];
        for (int k = 1; k < n; k++) {
            lo = fmin(lo, ref[k]);
            hi = fmax(hi, ref[k]);
        }
        ref_med = median_of(ref, n);
        double band = ref_med > 0 ? 100 * (hi - lo) / ref_med : 0;
        r->noise_pct = fmax(r->noise_pct, band);
        r->has_reference = true;
    }
    r->repeats = n;
    for (int i = 0; i < s.n; i++) {
        struct ct_val_pair *p = &r->pair[s.idx[i]];
        p->first_gbs = p->gbs;
        p->repeats = n;
        p->gbs = median_of(re[i], n);
        p->ref_gbs = ref_med;
        p->cleared = ref_med > 0 && p->gbs >= 0 && 100 * p->gbs / ref_med >= r->min_pct;
        r->n_remeasured++;
    }
    return 0;
}

/* The pair rounds. Returns 0, or < 0 when the job broke. */
static int run_pairs(struct run *R, struct ct_err *err)
{
    struct ct_comm *c = R->comm;
    const struct ct_val_cfg *x = R->cfg;
    bool leader = R->l.leader[R->l.my_unit] == c->rank;
    struct ct_monitor *mon = leader && R->l.by_host ? ct_monitor_new(x->probe.sysfs_root) : NULL;
    struct ct_snapshot s0, s1;
    ct_snapshot_init(&s0);
    ct_snapshot_init(&s1);
    void *sb = ct_comm_alloc(c, x->p2p_bytes, err), *rb = sb ? ct_comm_alloc(c, x->p2p_bytes, err)
                                                            : NULL;
    struct ct_exec ex;
    ct_exec_init(&ex);
    struct wire *all = ct_xcalloc((size_t)c->size, sizeof *all);
    int rc = sb && rb ? 0 : -1;
    if (sb)
        memset(sb, 1, x->p2p_bytes);
    /* a memory copy bounds ranks of one host that meet in shared memory; over tcp or a fabric
     * (loopback) it says nothing: their ceiling stays unknown (every rank has the same
     * transports: all calibrate, or none) */
    char tpn[32];
    ct_comm_tp_names(R->comm, tpn, sizeof tpn);
    if (rc == 0 && !R->l.by_host && x->link_gbps <= 0 && strstr(tpn, "shm"))
        rc = calibrate_copy(R, sb, rb, err);
    int nr = R->use_rails ? R->rails.n : 1;
    size_t first_pair = 0; /* rank 0: the first pair of the rail in the report */
    for (int k = 0; rc == 0 && k < nr; k++) {
        struct ct_comm railc, *pc = c;
        if (R->use_rails) {
            if ((rc = open_rail(R, k, &railc, err)) < 0)
                break;
            pc = &railc;
        }
        for (int round = 0; rc == 0 && round < R->pp.rounds; round++) {
            struct wire w;
            memset(&w, 0, sizeof w);
            int pu = leader ? ct_pairs_partner(&R->pp, round, R->l.my_unit) : -1;
            if (pu >= 0 && R->use_rails &&
                (rail_if(R, R->l.my_unit, k) < 0 || rail_if(R, pu, k) < 0))
                pu = -1; /* one end is not on this rail */
            w.partner = pu;
            if (mon)
                ct_monitor_sample(mon, &s0, NULL);
            if (pu >= 0) {
                struct ct_err e2 = {0};
                int peer = R->l.leader[pu],
                    xr = exchange(&ex, pc, peer, sb, rb, x->p2p_bytes, x->iters, &w, &e2);
                /* a partner stalled: the healthy pairs on this host stop their round for it
                 * (else it was named after the longest round's end: 67 s of 256 MiB x 1000
                 * with --timeout 2), and through the bootstrap those of every host and
                 * launcher; a pair stopped so (2) is not measured, not failed. A partner
                 * that died is not told so here: CT_EPEER is also a flaky link's error
                 * (both ends alive: only their pair fails); the bootstrap reads the dead
                 * rank's closed connection as its word (ct_boot_stalled) */
                if (xr == CT_ETIMEDOUT) {
                    ct_launch_tell_stalled(peer);
                    ct_boot_tell_stalled(R->boot, peer);
                }
                w.failed = xr < 0 ? (w.failed == 2 ? 2 : 1) : 0;
                if (k == 0 && round == x->dip_round) /* test hook: a transient dip */
                    w.gbs *= 0.05;
            }
            if (mon && ct_monitor_sample(mon, &s1, NULL) == 0)
                nic_deltas(&s0, &s1, &w);
            rc = ct_boot_allgather(R->boot, &w, sizeof w, all, err);
            if (rc == 0) /* every rank answered: a stalled one came back, the word is over */
                ct_launch_lost_clear_stalled();
            if (rc == 0 && c->rank == 0)
                add_round(R, R->use_rails ? k : -1, round, all);
            if (rc == 0 && round_broke(all, c->size))
                rc = reopen(R, k, pc, &sb, &rb, &ex, err);
        }
        if (rc == 0 && x->repeats > 0)
            rc = remeasure(R, k, pc, &ex, first_pair, &sb, &rb, err);
        first_pair = R->rep.n_pair;
        if (R->use_rails)
            ct_comm_close(&railc);
    }
    free(all);
    ct_exec_release(&ex);
    if (rb)
        ct_comm_free(c, rb, x->p2p_bytes);
    if (sb)
        ct_comm_free(c, sb, x->p2p_bytes);
    ct_snapshot_release(&s0);
    ct_snapshot_release(&s1);
    ct_monitor_free(mon);
    return rc;
}

/* One collective with the ring at the battery's size; every rank; *busbw -1 where it failed. */
static int coll_once(struct run *R, struct ct_bench *b, enum ct_coll coll, double *busbw,
                     uint64_t *size, struct ct_err *err)
{
    const struct ct_coll_desc *d = ct_coll_desc(coll);
    struct ct_job j = R->cfg->job;
    j.coll = coll;
    j.op = d->needs_op ? R->cfg->job.op : CT_SUM;
    j.count = d->count_for(R->cfg->coll_bytes, 4, R->comm->size);
    j.in_place = false;
    struct ct_point p;
    struct ct_bench_cfg bc = {R->cfg->iters, 1, 0, 1, 0};
    int rc = ct_bench_point(b, ct_algo_find("ring"), &j, &bc, &p, err);
    *busbw = rc == 0 ? p.busbw : -1;
    *size = rc == 0 ? p.size : R->cfg->coll_bytes; /* failed: the size asked (it read 0 B) */
    if (rc == 0 && R->cfg->dip_coll && !strcmp(R->cfg->dip_coll, d->name) && R->dipped++ == 0)
        *busbw *= 0.05; /* test hook: its first measure reads 20x slow */
    return rc;
}

/*
 * Repeat before blame, as for pairs: rank 0 picks each collective below the threshold of the
 * ceiling the verdict will use (every one when saving a baseline: the file's number is then a
 * typical run's, not one sample); every rank measures them again, repeats times, in turn;
 * the median becomes the collective's number, the first is kept beside it.
 */
static int coll_repeat(struct run *R, struct ct_bench *b, const enum ct_coll *colls, size_t n_coll,
                       struct ct_err *err)
{
    struct ct_val_report *r = &R->rep;
    uint32_t redo = 0, *all = ct_xcalloc((size_t)R->boot->size, sizeof *all);
    for (size_t i = 0; R->boot->rank == 0 && i < r->n_coll; i++) {
        const struct ct_val_coll *v = &r->coll[i];
        if (v->busbw >= 0 &&
            (R->cfg->settle || (v->ceil_gbs > 0 && 100 * v->busbw / v->ceil_gbs < r->min_pct)))
            redo |= 1u << i;
    }
    int rc = ct_boot_allgather(R->boot, &redo, sizeof redo, all, err);
    redo = all[0];
    free(all);
    int n = R->cfg->repeats > 16 ? 16 : R->cfg->repeats;
    double re[8][16];
    uint64_t size;
    for (int k = 0; rc == 0 && k < n && redo; k++)
        for (size_t i = 0; rc == 0 && i < n_coll; i++)
            if (redo >> i & 1)
                rc = coll_once(R, b, colls[i], &re[i][k], &size, err);
    for (size_t i = 0; rc == 0 && R->boot->rank == 0 && n > 0 && i < r->n_coll; i++)
        if (redo >> i & 1) {
            struct ct_val_coll *v = &r->coll[i];
            v->first_busbw = v->busbw;
            v->busbw = median_of(re[i], n);
            v->repeats = n;
        }
    return rc;
}

/* The collectives with the ring algorithm at one large size. */
static int run_colls(struct run *R, struct ct_err *err)
{
    static const enum ct_coll colls[] = {CT_ALLREDUCE, CT_ALLGATHER, CT_REDUCESCATTER,
                                         CT_ALLTOALL};
    struct ct_comm *c = R->comm;
    struct ct_bench b;
    ct_bench_init(&b, c, 0x5eed);
    b.name_first = false; /* the battery names a failed rank its own way (the verdict) */
    int rc = 0;
    int per = R->l.by_host ? c->size / R->l.nunits : 1;
    double bott = 0;
    if (c->rank == 0) {
        R->rep.coll = ct_xcalloc(sizeof colls / sizeof colls[0], sizeof *R->rep.coll);
        for (size_t u = 0; u < R->rep.n_unit; u++)
            if (u == 0 || R->rep.unit[u].ceil_gbs < bott)
                bott = R->rep.unit[u].ceil_gbs;
        /* one host, no stated rate: a pair's memcpy ceiling says nothing about a collective
         * (reductions, cache-sized working sets), so its ceiling stays unknown */
        if (!R->l.by_host && R->cfg->link_gbps <= 0)
            bott = 0;
    }
    for (size_t i = 0; rc == 0 && i < sizeof colls / sizeof colls[0]; i++) {
        const struct ct_coll_desc *d = ct_coll_desc(colls[i]);
        double busbw;
        uint64_t size;
        rc = coll_once(R, &b, colls[i], &busbw, &size, err);
        if (c->rank == 0) {
            struct ct_val_coll *v = &R->rep.coll[R->rep.n_coll++];
            snprintf(v->coll, sizeof v->coll, "%s", d->name);
            snprintf(v->algo, sizeof v->algo, "ring");
            v->size = size;
            v->busbw = busbw;
            v->ceil_gbs = ct_val_coll_ceiling(d->name, R->l.nunits, per, bott, v->formula,
                                              sizeof v->formula);
        }
    }
    if (c->rank == 0)
        stated_bars(R); /* the collectives' ceilings from the baseline */
    if (rc == 0 && R->cfg->repeats > 0)
        rc = coll_repeat(R, &b, colls, sizeof colls / sizeof colls[0], err);
    ct_bench_release(&b);
    return rc;
}

/* Each host's first rank times its GPUs' copies (64 MiB, the median of 10); rank 0 sets
 * them against that host's topology. A host whose topology has GPUs and whose measurement
 * could not run (no driver, no CUDA) is named in the report with the reason. */
static int run_gpu_copies(struct run *R, struct ct_err *err)
{
    struct ct_boot *b = R->boot;
    struct ct_val_gpu_meas *mine = ct_xcalloc(1, sizeof *mine);
    struct ct_val_gpu_meas *all = ct_xcalloc((size_t)b->size, sizeof *all);
    if (b->local_rank == 0)
        ct_val_gpu_measure(mine, 64u << 20, 10);
    int rc = ct_boot_allgather(b, mine, sizeof *mine, all, err);
    for (int q = 0; rc == 0 && b->rank == 0 && q < b->size; q++) {
        int u = R->l.unit_of[q];
        if (all[q].state != 0)
            ct_val_gpu_expect(&R->rep, u, R->topo[u], &all[q], BASE_EFF(R));
    }
    free(mine);
    free(all);
    return rc;
}

int ct_val_verdict(struct ct_boot *boot, int *code, struct ct_err *err)
{
    int32_t mine = *code, *all = ct_xcalloc((size_t)boot->size, sizeof *all);
    int rc = ct_boot_allgather(boot, &mine, sizeof mine, all, err);
    if (rc == 0)
        *code = all[0];
    free(all);
    return rc;
}

/* Rank 0 at the end, success or not: baseline, threshold, failures, diagnosis. */
static void conclude(struct run *R, int dead, bool broke)
{
    struct ct_val_report *r = &R->rep;
    stated_bars(R);
    if (dead >= 0 && dead < R->boot->size)
        r->unit[R->l.unit_of[dead]].dead = true;
    else if (broke)
        ct_val_report_find(r, CT_VALF_FAILED, -1, -1, -1,
                           "the job broke before the battery finished: %s", "see the error above");
    r->stopped = broke;
    r->elapsed_s = (double)(ct_now_ns() - R->t0) / 1e9;
    ct_val_diagnose(r);
    ct_val_gpu_diagnose(r);
}

int ct_val_run(const struct ct_val_cfg *cfg, struct ct_boot *boot, struct ct_comm *comm,
               struct ct_val_report *out, enum ct_val_stage *stage, struct ct_err *err)
{
    struct run R;
    memset(&R, 0, sizeof R);
    R.cfg = cfg;
    R.boot = boot;
    R.comm = comm;
    R.t0 = ct_now_ns();
    memset(out, 0, sizeof *out);
    layout_build(boot, &R.l);
    int rc = 0, dead = -1;
    *stage = CT_VAL_SETUP;
    if (R.l.nunits < 2) {
        rc = ct_err_set(err, CT_EINVAL, "validate needs at least 2 ranks or hosts (try --local 2)");
        goto out;
    }
    if ((rc = ct_pairs_build(&R.pp, R.l.nunits, err)) < 0 || (rc = gather_topos(&R, err)) < 0 ||
        (rc = gather_rails(&R, err)) < 0) {
        /* a rank that died or stalled while the topologies were gathered: its host failed,
         * as in the battery (the launcher's word, else the peer rank 0 waited on: rank 0 is
         * the gather's hub; a probe's own error stays an error) */
        if (boot->rank != 0 || rc == CT_EINVAL || (dead = dead_rank(err->msg, true)) < 0)
            goto out;
        for (int u = 0; R.topo && u < R.l.nunits; u++)
            ct_topo_free(R.topo[u]);
        free(R.topo);
        R.topo = NULL; /* unknown: no ceiling from them */
        R.use_rails = false;
    }
    *stage = CT_VAL_BATTERY;
    if (boot->rank == 0)
        report_init(&R);
    bool in_pairs = false;
    if (dead < 0) {
        rc = run_pairs(&R, err);
        in_pairs = rc < 0;
    }
    if (rc == 0 && !cfg->no_coll)
        rc = run_colls(&R, err);
    if (rc == 0 && !cfg->no_gpu)
        rc = run_gpu_copies(&R, err);
    /* the launcher saw a rank die (in any stage: one killed during the collectives was "the
     * job broke", its host named nowhere but a warning); else a pair's error names its peer
     * (a ring's may name a neighbour that left because its own peer died: not blamed) */
    if (rc < 0 && boot->rank == 0 && dead < 0)
        dead = dead_rank(err->msg, in_pairs);
    if (boot->rank == 0) {
        conclude(&R, dead, rc < 0);
        *out = R.rep; /* the caller releases it */
        memset(&R.rep, 0, sizeof R.rep);
    }
out:
    ct_pairs_release(&R.pp);
    ct_rails_release(&R.rails);
    free(R.hosts);
    for (int u = 0; R.topo && u < R.l.nunits; u++)
        ct_topo_free(R.topo[u]);
    free(R.topo);
    free(R.l.leader);
    free(R.l.unit_of);
    ct_val_report_release(&R.rep);
    return rc;
}
