/* SPDX-License-Identifier: MIT */
/* Cluster view: every rank's NIC sample gathered to rank 0 as a node x NIC grid over the
 * bootstrap's allgather, with a stop request carried along. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/clock.h"
#include "../transport/boot.h"
#include "monitor_int.h"

struct wire_nic {
    char name[32];
    float gbps, util;
    uint32_t errs, pad;
};

struct wire {
    char host[64];
    int32_t node, n_nic, sender, stop;
    struct wire_nic nic[CT_MON_WIRE_NICS];
};

static void fill_wire(const struct ct_snapshot *s, const struct ct_boot *b, struct wire *w)
{
    memset(w, 0, sizeof *w);
    mon_scpy(w->host, sizeof w->host, b->hosts ? b->hosts[b->rank] : b->host);
    w->node = b->node;
    w->sender = b->local_rank == 0;
    if (!w->sender)
        return;
    for (size_t i = 0; i < s->n_nic && w->n_nic < CT_MON_WIRE_NICS; i++) {
        const struct ct_nic_snap *n = &s->nic[i];
        struct wire_nic *x = &w->nic[w->n_nic++];
        mon_scpy(x->name, sizeof x->name, n->name);
        double hi = n->tx_gbps > n->rx_gbps ? n->tx_gbps : n->rx_gbps;
        x->gbps = hi < 0 ? -1.0f : (float)hi;
        x->util = n->util < 0 ? -1.0f : (float)n->util;
        x->errs = n->err_delta > UINT32_MAX ? UINT32_MAX : (uint32_t)n->err_delta;
    }
}

static size_t col_of(struct ct_cluster *c, const char *name)
{
    for (size_t j = 0; j < c->n_cols; j++)
        if (!strcmp(c->col[j], name))
            return j;
    c->col = ct_xrealloc(c->col, (c->n_cols + 1) * sizeof *c->col);
    mon_scpy(c->col[c->n_cols], sizeof c->col[0], name);
    return c->n_cols++;
}

int ct_monitor_gather(struct ct_monitor *m, struct ct_boot *boot, int64_t min_interval_ns,
                      bool *stop, struct ct_cluster *out, struct ct_err *err)
{
    int64_t now = ct_now_ns();
    if (boot->local_rank == 0 &&
        (!m->last_gather_ns || now - m->last_gather_ns >= min_interval_ns)) {
        int rc = ct_monitor_sample_at(m, now, &m->last, err);
        if (rc < 0)
            ct_snapshot_release(&m->last); /* send nothing rather than fail the job */
        m->last_gather_ns = now;
    }
    struct wire mine;
    fill_wire(&m->last, boot, &mine);
    mine.stop = stop && *stop;
    struct wire *all = ct_xcalloc((size_t)boot->size, sizeof *all);
    int rc = ct_boot_allgather(boot, &mine, sizeof mine, all, err);
    if (rc < 0) {
        free(all);
        return ct_err_wrap(err, "gathering NIC samples: ");
    }
    for (int r = 0; stop && r < boot->size; r++)
        *stop = *stop || all[r].stop;
    if (boot->rank == 0 && out) {
        ct_cluster_release(out);
        int nodes = boot->nnodes > 0 ? boot->nnodes : 1;
        out->n_nodes = (size_t)nodes;
        out->node = ct_xcalloc((size_t)nodes, sizeof *out->node);
        for (int r = 0; r < boot->size; r++) {
            all[r].host[sizeof all[r].host - 1] = 0;
            for (int k = 0; k < CT_MON_WIRE_NICS; k++)
                all[r].nic[k].name[sizeof all[r].nic[k].name - 1] = 0;
            if (all[r].sender && all[r].node >= 0 && all[r].node < nodes)
                for (int k = 0; k < all[r].n_nic && k < CT_MON_WIRE_NICS; k++)
                    col_of(out, all[r].nic[k].name);
        }
        size_t cells = out->n_nodes * (out->n_cols ? out->n_cols : 1);
        out->util = ct_xcalloc(cells, sizeof *out->util);
        out->gbps = ct_xcalloc(cells, sizeof *out->gbps);
        out->errs = ct_xcalloc(cells, sizeof *out->errs);
        for (size_t i = 0; i < cells; i++)
            out->util[i] = out->gbps[i] = CT_CLUSTER_ABSENT;
        for (int r = 0; r < boot->size; r++) {
            const struct wire *w = &all[r];
            if (w->node < 0 || w->node >= nodes)
                continue;
            if (!out->node[w->node][0] || w->sender)
                mon_scpy(out->node[w->node], sizeof out->node[0], w->host);
            if (!w->sender)
                continue;
            for (int k = 0; k < w->n_nic && k < CT_MON_WIRE_NICS; k++) {
                size_t j = col_of(out, w->nic[k].name), at = (size_t)w->node * out->n_cols + j;
                out->util[at] = w->nic[k].util;
                out->gbps[at] = w->nic[k].gbps;
                out->errs[at] = w->nic[k].errs;
            }
        }
    }
    free(all);
    return 0;
}
