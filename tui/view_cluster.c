/* SPDX-License-Identifier: MIT */
/* The cluster view: a node x NIC heat grid (utilization, or Gb/s where the line rate is
 * unknown), so an idle rail or a slow node stands out. Without gathered data: this host. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ui.h"

#define CELL 9
#define LOCAL_COLS CT_MON_WIRE_NICS

/* This host's NICs as a one-row grid (the same columns a rank would send). */
static void local_grid(const struct ct_snapshot *s, struct ct_cluster *g)
{
    memset(g, 0, sizeof *g);
    size_t n = 0;
    for (size_t i = 0; i < s->n_nic; i++)
        if (!(s->nic[i].flags & CT_NICF_GONE))
            n++;
    n = n > LOCAL_COLS ? LOCAL_COLS : n;
    g->n_nodes = 1;
    g->n_cols = n;
    g->node = ct_xcalloc(1, sizeof *g->node);
    snprintf(g->node[0], sizeof g->node[0], "%s", s->host[0] ? s->host : "this host");
    g->col = ct_xcalloc(n ? n : 1, sizeof *g->col);
    g->util = ct_xcalloc(n ? n : 1, sizeof *g->util);
    g->gbps = ct_xcalloc(n ? n : 1, sizeof *g->gbps);
    g->errs = ct_xcalloc(n ? n : 1, sizeof *g->errs);
    size_t j = 0;
    for (size_t i = 0; i < s->n_nic && j < n; i++) {
        const struct ct_nic_snap *x = &s->nic[i];
        if (x->flags & CT_NICF_GONE)
            continue;
        double hi = x->tx_gbps > x->rx_gbps ? x->tx_gbps : x->rx_gbps;
        snprintf(g->col[j], sizeof g->col[j], "%.31s", x->name);
        g->util[j] = x->util < 0 ? -1.0f : (float)x->util;
        g->gbps[j] = hi < 0 ? -1.0f : (float)hi;
        g->errs[j] = (uint32_t)(x->err_delta > UINT32_MAX ? UINT32_MAX : x->err_delta);
        j++;
    }
}

static int level(double frac)
{
    return frac < 0.05 ? 0 : frac < 0.25 ? 1 : frac < 0.5 ? 2 : frac < 0.75 ? 3 : 4;
}

static double row_total(const struct ct_cluster *g, size_t i)
{
    double t = 0;
    for (size_t j = 0; j < g->n_cols; j++)
        if (g->gbps[i * g->n_cols + j] > 0)
            t += g->gbps[i * g->n_cols + j];
    return t;
}

struct sort_ctx {
    const struct ct_cluster *g;
    bool by_total, rev;
};

static int cmp_nodes(const void *a, const void *b, void *arg)
{
    const struct sort_ctx *o = arg;
    size_t i = *(const size_t *)a, j = *(const size_t *)b;
    int c = 0;
    if (o->by_total) {
        double x = row_total(o->g, i), y = row_total(o->g, j);
        c = x > y ? -1 : x < y;
    }
    if (!c)
        c = i < j ? -1 : i > j;
    return o->rev ? -c : c;
}

static void draw_cell(struct ct_canvas *c, int y, int x, const struct ct_cluster *g, size_t at,
                      double gmax)
{
    static const char *const shade[] = {" ", "░", "▒", "▓", "█"};
    static const char *const ashade[] = {" ", ".", ":", "+", "#"};
    char b[16];
    float u = g->util[at], v = g->gbps[at];
    if (u == CT_CLUSTER_ABSENT) {
        ct_canvas_rtext(c, y, x, CELL - 1, CT_A_DIM, c->utf8 ? "·" : ".");
        return;
    }
    /* no rate known: the shade against the busiest cell, idle where every cell is (0 Gb/s
     * is a reading, not a missing one) */
    double frac = u >= 0 ? u : v >= 0 ? (gmax > 0 ? v / gmax : 0) : -1;
    if (frac < 0) {
        ct_canvas_rtext(c, y, x, CELL - 1, CT_A_DIM, "?");
        return;
    }
    int lv = level(frac);
    for (int k = 0; k < 2; k++)
        ct_canvas_text(c, y, x + k, 1, CT_A_HEAT0 + lv, c->utf8 ? shade[lv] : ashade[lv]);
    if (u >= 0)
        snprintf(b, sizeof b, "%.0f%%", u * 100);
    else
        snprintf(b, sizeof b, "%.1fG", v);
    ct_canvas_rtext(c, y, x + 2, CELL - 3, g->errs[at] ? CT_A_BAD : CT_A_NORMAL, b);
}

void ct_view_cluster_draw(struct ct_canvas *c, struct ct_rect r, struct ct_ui *ui,
                          const struct ct_snapshot *s)
{
    struct ct_cluster local;
    bool own = !s->cluster.n_nodes;
    if (own)
        local_grid(s, &local);
    const struct ct_cluster *g = own ? &local : &s->cluster;
    int v = ct_view_def_find("cluster");
    ct_canvas_printf(c, r.y, r.x + 1, r.w - 2, CT_A_NORMAL,
                     "%zu node%s x %zu NIC%s: %% of line rate (Gb/s where the rate is unknown)%s",
                     g->n_nodes, g->n_nodes == 1 ? "" : "s", g->n_cols, g->n_cols == 1 ? "" : "s",
                     own ? ", this host" : "");
    double gmax = 0;
    for (size_t i = 0; i < g->n_nodes * g->n_cols; i++)
        gmax = g->gbps[i] > gmax ? g->gbps[i] : gmax;
    int nw = 16, cols_fit = (r.w - 2 - nw - 11) / CELL;
    cols_fit = cols_fit < 1 ? 1 : cols_fit;
    int maxleft = (int)g->n_cols - cols_fit;
    if (ui->left > maxleft)
        ui->left = maxleft;
    if (ui->left < 0)
        ui->left = 0;
    int y = r.y + 1;
    ct_canvas_fill(c, y, r.x, r.w, CT_A_HEAD, " ");
    ct_canvas_text(c, y, r.x + 1, nw, CT_A_HEAD, ui->left ? "node  <" : "node");
    for (int k = 0; k < cols_fit && ui->left + k < (int)g->n_cols; k++)
        ct_canvas_rtext(c, y, r.x + 1 + nw + k * CELL, CELL - 1, CT_A_HEAD, g->col[ui->left + k]);
    int shown = (int)g->n_cols - ui->left < cols_fit ? (int)g->n_cols - ui->left : cols_fit;
    int tx = r.x + 1 + nw + shown * CELL;
    ct_canvas_rtext(c, y, tx, 10, CT_A_HEAD,
                    ui->left + cols_fit < (int)g->n_cols ? "> Gb/s" : "Gb/s");
    /* nodes, in order or busiest first; a node far below the median total stands out */
    size_t *ord = ct_xcalloc(g->n_nodes ? g->n_nodes : 1, sizeof *ord), n = 0;
    double *tot = ct_xcalloc(g->n_nodes ? g->n_nodes : 1, sizeof *tot);
    for (size_t i = 0; i < g->n_nodes; i++) {
        tot[i] = row_total(g, i);
        if (ct_ui_match(g->node[i], ui->filter))
            ord[n++] = i;
    }
    struct sort_ctx sc = {g, v >= 0 && ui->sort[v] == 1, ui->rev};
    if (n > 1)
        qsort_r(ord, n, sizeof *ord, cmp_nodes, &sc);
    double *sorted = ct_xcalloc(g->n_nodes ? g->n_nodes : 1, sizeof *sorted);
    memcpy(sorted, tot, g->n_nodes * sizeof *tot);
    for (size_t i = 1; i < g->n_nodes; i++)
        for (size_t j = i; j > 0 && sorted[j - 1] > sorted[j]; j--) {
            double t = sorted[j];
            sorted[j] = sorted[j - 1];
            sorted[j - 1] = t;
        }
    double median = g->n_nodes ? sorted[g->n_nodes / 2] : 0;
    int page = r.h - 3;
    ui->n_rows = (int)n;
    ui->body_rows = page;
    ct_ui_clamp(&ui->top[v], NULL, (int)n, page);
    for (int i = 0; i < page && ui->top[v] + i < (int)n; i++) {
        size_t node = ord[ui->top[v] + i];
        int yy = y + 1 + i;
        bool slow = g->n_nodes > 2 && median > 0 && tot[node] < median * 0.5;
        int at =
            ct_canvas_text(c, yy, r.x + 1, nw - 1, slow ? CT_A_WARN : CT_A_NORMAL, g->node[node]);
        if (slow && at < nw - 6)
            ct_canvas_text(c, yy, r.x + 2 + at, nw - 2 - at, CT_A_WARN, "slow");
        for (int k = 0; k < cols_fit && ui->left + k < (int)g->n_cols; k++)
            draw_cell(c, yy, r.x + 1 + nw + k * CELL, g, node * g->n_cols + (size_t)(ui->left + k),
                      gmax);
        char b[32];
        ct_canvas_rtext(c, yy, tx, 10, CT_A_NORMAL, ct_fmt_gbps(tot[node], b, sizeof b));
    }
    /* columns idle on every node while others carry traffic: a rail nobody uses */
    char idle[256] = "";
    size_t il = 0;
    bool busy_any = gmax > 0.01;
    for (size_t j = 0; busy_any && j < g->n_cols && il < sizeof idle; j++) {
        bool all_idle = strcmp(g->col[j], "lo") != 0;
        for (size_t i = 0; i < g->n_nodes && all_idle; i++) {
            float u = g->util[i * g->n_cols + j], b = g->gbps[i * g->n_cols + j];
            if (u != CT_CLUSTER_ABSENT)
                all_idle = (u >= 0 && u < 0.01f) || (u < 0 && b >= 0 && b < 0.01f);
        }
        if (all_idle)
            il += (size_t)snprintf(idle + il, sizeof idle - il, "%s%s", il ? " " : "", g->col[j]);
    }
    if (idle[0])
        ct_canvas_printf(c, r.y + r.h - 1, r.x + 1, r.w - 2, CT_A_WARN, "idle%s: %s",
                         g->n_nodes > 1 ? " on every node" : "", idle);
    free(ord);
    free(tot);
    free(sorted);
    if (own)
        ct_cluster_release(&local);
}
