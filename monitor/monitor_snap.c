/* SPDX-License-Identifier: MIT */
/* Snapshot lifecycle: init, release, deep copy, log lines, plot points, NIC ordering. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "monitor.h"

void ct_snapshot_init(struct ct_snapshot *s)
{
    memset(s, 0, sizeof *s);
}

void ct_cluster_release(struct ct_cluster *c)
{
    free(c->node);
    free(c->col);
    free(c->util);
    free(c->gbps);
    free(c->errs);
    memset(c, 0, sizeof *c);
}

static void *dup_mem(const void *p, size_t n)
{
    if (!p || !n)
        return NULL;
    void *q = ct_xmalloc(n);
    memcpy(q, p, n);
    return q;
}

void ct_cluster_copy(struct ct_cluster *dst, const struct ct_cluster *src)
{
    ct_cluster_release(dst);
    size_t cells = src->n_nodes * src->n_cols;
    dst->n_nodes = src->n_nodes;
    dst->n_cols = src->n_cols;
    dst->node = dup_mem(src->node, src->n_nodes * sizeof *src->node);
    dst->col = dup_mem(src->col, src->n_cols * sizeof *src->col);
    dst->util = dup_mem(src->util, cells * sizeof *src->util);
    dst->gbps = dup_mem(src->gbps, cells * sizeof *src->gbps);
    dst->errs = dup_mem(src->errs, cells * sizeof *src->errs);
    if (!cells || !dst->util || !dst->gbps || !dst->errs || !dst->node || !dst->col)
        ct_cluster_release(dst);
}

void ct_snapshot_release(struct ct_snapshot *s)
{
    free(s->nic);
    free(s->pts);
    ct_cluster_release(&s->cluster);
    for (size_t i = 0; i < s->n_log; i++)
        free(s->log[i]);
    free(s->log);
    free(s->topo);
    ct_snapshot_init(s);
}

void ct_snapshot_copy(struct ct_snapshot *dst, const struct ct_snapshot *src)
{
    if (dst == src)
        return;
    ct_snapshot_release(dst);
    *dst = *src;
    dst->nic = dup_mem(src->nic, src->n_nic * sizeof *src->nic);
    dst->pts = dup_mem(src->pts, src->n_pts * sizeof *src->pts);
    memset(&dst->cluster, 0, sizeof dst->cluster);
    ct_cluster_copy(&dst->cluster, &src->cluster);
    dst->log = src->n_log ? ct_xcalloc(src->n_log, sizeof *dst->log) : NULL;
    for (size_t i = 0; i < src->n_log; i++)
        dst->log[i] = ct_xstrdup(src->log[i]);
    dst->topo = src->topo ? ct_xstrdup(src->topo) : NULL;
}

void ct_snapshot_log(struct ct_snapshot *s, size_t max, const char *line)
{
    if (!max)
        return;
    if (s->n_log >= max) {
        size_t drop = s->n_log - max + 1;
        for (size_t i = 0; i < drop; i++)
            free(s->log[i]);
        memmove(s->log, s->log + drop, (s->n_log - drop) * sizeof *s->log);
        s->n_log -= drop;
    }
    s->log = ct_xrealloc(s->log, (s->n_log + 1) * sizeof *s->log);
    s->log[s->n_log++] = ct_xstrdup(line);
}

void ct_snapshot_point(struct ct_snapshot *s, const char *coll, const char *algo, uint64_t size,
                       double busbw)
{
    for (size_t i = 0; i < s->n_pts; i++) {
        struct ct_plot_pt *p = &s->pts[i];
        if (p->size == size && !strcmp(p->coll, coll) && !strcmp(p->algo, algo)) {
            if (busbw > p->busbw)
                p->busbw = busbw;
            return;
        }
    }
    s->pts = ct_xrealloc(s->pts, (s->n_pts + 1) * sizeof *s->pts);
    struct ct_plot_pt *p = &s->pts[s->n_pts++];
    memset(p, 0, sizeof *p);
    snprintf(p->coll, sizeof p->coll, "%s", coll);
    snprintf(p->algo, sizeof p->algo, "%s", algo);
    p->size = size;
    p->busbw = busbw;
}

int ct_nic_snap_class(const struct ct_nic_snap *n)
{
    if (n->dev[0])
        return 0;
    if (!strcmp(n->kind, "lo"))
        return 2;
    if (n->flags & CT_NICF_VIRTUAL)
        return 3;
    return 1;
}
