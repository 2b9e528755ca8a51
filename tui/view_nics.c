/* SPDX-License-Identifier: MIT */
/* The nics view: one row per NIC port with TX/RX, utilization bar, packets, errors,
 * history; a detail pane for the selected port. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ui.h"

enum { SORT_NAME, SORT_UTIL, SORT_TX, SORT_RX, SORT_ERR };

static double busiest(const struct ct_nic_snap *n)
{
    return n->tx_gbps > n->rx_gbps ? n->tx_gbps : n->rx_gbps;
}

struct order_ctx {
    const struct ct_snapshot *s;
    int key;
    bool rev;
};

static int cmp_rows(const void *a, const void *b, void *arg)
{
    const struct order_ctx *o = arg;
    size_t i = *(const size_t *)a, j = *(const size_t *)b;
    const struct ct_nic_snap *x = &o->s->nic[i], *y = &o->s->nic[j];
    double vx = 0, vy = 0;
    switch (o->key) {
    case SORT_UTIL:
        vx = x->util >= 0 ? x->util : busiest(x) >= 0 ? busiest(x) * 1e-6 : -1;
        vy = y->util >= 0 ? y->util : busiest(y) >= 0 ? busiest(y) * 1e-6 : -1;
        break;
    case SORT_TX: vx = x->tx_gbps, vy = y->tx_gbps; break;
    case SORT_RX: vx = x->rx_gbps, vy = y->rx_gbps; break;
    case SORT_ERR: vx = (double)x->errors, vy = (double)y->errors; break;
    default: break;
    }
    int c = vx > vy ? -1 : vx < vy ? 1 : 0; /* numbers: largest first */
    if (!c)
        c = i < j ? -1 : i > j ? 1 : 0; /* then the monitor's order */
    return o->rev ? -c : c;
}

size_t ct_view_nics_order(const struct ct_ui *ui, const struct ct_snapshot *s, size_t **out)
{
    size_t *v = s->n_nic ? ct_xcalloc(s->n_nic, sizeof *v) : NULL, n = 0;
    for (size_t i = 0; i < s->n_nic; i++) {
        const struct ct_nic_snap *x = &s->nic[i];
        if (ct_ui_match(x->name, ui->filter) || ct_ui_match(x->netdev, ui->filter) ||
            ct_ui_match(x->kind, ui->filter))
            v[n++] = i;
    }
    int view = ct_view_def_find("nics");
    struct order_ctx o = {s, view >= 0 ? ui->sort[view] : 0, ui->rev};
    if (n > 1)
        qsort_r(v, n, sizeof *v, cmp_rows, &o);
    *out = v;
    return n;
}

struct layout {
    int name, kind, link, tx, rx, mark, bar, pct, pps, err, hist; /* x of each column */
    int name_w, bar_w, hist_w;
};

static void layout(struct layout *l, const struct ct_snapshot *s, const size_t *rows, size_t n,
                   int x0, int w)
{
    int longest = 4;
    for (size_t i = 0; i < n; i++) {
        const struct ct_nic_snap *x = &s->nic[rows[i]];
        int lw = ct_text_width(x->name);
        if (x->netdev[0] && strcmp(x->netdev, x->name))
            lw += 1 + ct_text_width(x->netdev);
        longest = lw > longest ? lw : longest;
    }
    /* fixed: " KIND  LINK........ TX..... RX.....m ...pct PKT/s.. ERRORS" */
    int fixed = 1 + 5 + 1 + 11 + 1 + 8 + 1 + 8 + 1 + 1 + 5 + 1 + 7 + 1 + 6;
    int room = w - 1 - fixed;
    l->name_w = longest < 8 ? 8 : longest > 24 ? 24 : longest;
    if (l->name_w > room - 6)
        l->name_w = room - 6 > 4 ? room - 6 : 4;
    /* after the name: a bar of 10..20 cells and a history of 16 or more when there is room
     * for both (the bar grows to 30 on wide screens), else a bar of up to 30 */
    int avail = room - l->name_w;
    if (avail >= 10 + 1 + 12) {
        l->bar_w = avail - 1 - 16 < 10 ? 10 : avail - 1 - 16 > 20 ? 20 : avail - 1 - 16;
        l->hist_w = avail - l->bar_w - 1;
        if (l->hist_w > 60) {
            l->bar_w += 10;
            l->hist_w -= 10;
        }
    } else {
        l->hist_w = 0;
        l->bar_w = avail < 0 ? 0 : avail > 30 ? 30 : avail;
    }
    l->name = x0 + 1;
    l->kind = l->name + l->name_w + 1;
    l->link = l->kind + 6;
    l->tx = l->link + 12;
    l->rx = l->tx + 9;
    l->mark = l->rx + 8;
    l->bar = l->mark + 2;
    l->pct = l->bar + l->bar_w;
    l->pps = l->pct + 6;
    l->err = l->pps + 8;
    l->hist = l->err + 7;
}

/* One character saying why the numbers may be odd. */
static const char *mark_of(const struct ct_nic_snap *n)
{
    if ((n->flags & CT_NICF_SATURATED) && !(n->flags & CT_NICF_FALLBACK))
        return "!";
    if (n->flags & CT_NICF_FALLBACK)
        return "*";
    if (n->flags & CT_NICF_RESET)
        return "r";
    if (n->flags & CT_NICF_WRAPPED)
        return "w";
    return " ";
}

static const char *rate_cell(const struct ct_nic_snap *n, double v, char *buf, size_t len)
{
    if ((n->flags & CT_NICF_SATURATED) && !(n->flags & CT_NICF_FALLBACK))
        return snprintf(buf, len, "sat"), buf;
    return ct_fmt_gbps(v, buf, len);
}

static double hist_max(const struct ct_nic_snap *n)
{
    if (n->line_gbps > 0)
        return n->line_gbps;
    double m = 1; /* unknown line rate: scale to the peak, at least 1 Gb/s */
    for (int i = 0; i < n->n_hist; i++)
        m = n->hist[i] > m ? n->hist[i] : m;
    return m;
}

static void draw_row(struct ct_canvas *c, int y, const struct layout *l,
                     const struct ct_nic_snap *n, bool sel)
{
    char b[64], name[80];
    bool gone = n->flags & CT_NICF_GONE;
    int base = gone ? CT_A_DIM : CT_A_NORMAL;
    if (n->netdev[0] && strcmp(n->netdev, n->name))
        snprintf(name, sizeof name, "%s %s", n->name, n->netdev);
    else
        snprintf(name, sizeof name, "%s", n->name);
    ct_canvas_text(c, y, l->name, l->name_w, base, name);
    ct_canvas_text(c, y, l->kind, 5, base, n->kind);
    ct_canvas_printf(c, y, l->link, 6,
                     gone    ? CT_A_DIM
                     : n->up ? CT_A_GOOD
                             : CT_A_WARN,
                     "%s", n->state);
    ct_canvas_rtext(c, y, l->link + 7, 4, base, ct_fmt_rate(n->line_gbps, b, sizeof b));
    ct_canvas_rtext(c, y, l->tx, 8, base, rate_cell(n, n->tx_gbps, b, sizeof b));
    ct_canvas_rtext(c, y, l->rx, 8, base, rate_cell(n, n->rx_gbps, b, sizeof b));
    const char *mk = mark_of(n);
    ct_canvas_text(c, y, l->mark, 1, *mk == '!' ? CT_A_BAD : CT_A_WARN, mk);
    if (n->util >= 0) {
        int at = n->util >= 0.9 ? CT_A_BAD : n->util >= 0.7 ? CT_A_WARN : CT_A_GOOD;
        ct_draw_bar(c, y, l->bar, l->bar_w, n->util, at);
        snprintf(b, sizeof b, "%.0f%%", n->util * 100);
        ct_canvas_rtext(c, y, l->pct, 5, base, b);
    } else {
        ct_canvas_rtext(c, y, l->pct, 5, CT_A_DIM, "-");
    }
    double pps = n->tx_pps < 0 && n->rx_pps < 0
                     ? -1
                     : (n->tx_pps > 0 ? n->tx_pps : 0) + (n->rx_pps > 0 ? n->rx_pps : 0);
    ct_canvas_rtext(c, y, l->pps, 7, base, ct_fmt_si(pps, b, sizeof b));
    snprintf(b, sizeof b, "%llu", (unsigned long long)n->errors);
    ct_canvas_rtext(c, y, l->err, 6, n->err_delta ? CT_A_BAD : base, b);
    if (l->hist_w)
        ct_draw_spark(c, y, l->hist, l->hist_w, n->hist, n->n_hist, hist_max(n),
                      gone ? CT_A_DIM : CT_A_GOOD);
    if (sel)
        ct_canvas_paint(c, y, l->name - 1, l->kind - l->name, CT_A_SEL);
}

static void flag_words(const struct ct_nic_snap *n, char *buf, size_t len)
{
    static const struct {
        unsigned f;
        const char *w;
    } words[] = {{CT_NICF_FIRST, "first sample"},
                 {CT_NICF_SATURATED, "32-bit counter saturated"},
                 {CT_NICF_FALLBACK, "rates from fallback counters"},
                 {CT_NICF_WRAPPED, "counter wrapped"},
                 {CT_NICF_RESET, "counter reset"},
                 {CT_NICF_GONE, "gone"},
                 {CT_NICF_NEW, "new"}};
    buf[0] = 0;
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
        if (n->flags & words[i].f) {
            size_t l = strlen(buf);
            snprintf(buf + l, len - l, "%s%s", l ? ", " : "", words[i].w);
        }
}

static void draw_detail(struct ct_canvas *c, int y, int x, int w, const struct ct_nic_snap *n)
{
    char a[32], b[32], d[32], f[160], head[160];
    bool nd = n->netdev[0] && strcmp(n->netdev, n->name);
    if (n->line_gbps > 0)
        snprintf(a, sizeof a, "%g Gb/s", n->line_gbps);
    else
        snprintf(a, sizeof a, "rate unknown");
    snprintf(head, sizeof head, " %s%s%s  %s  %s  %s ", n->name, nd ? " " : "", nd ? n->netdev : "",
             n->kind, n->state, a);
    ct_canvas_fill(c, y, x, w, CT_A_DIM, c->utf8 ? "─" : "-");
    ct_canvas_text(c, y, x + 2, w - 4, CT_A_HEAD, head);
    ct_canvas_printf(c, y + 1, x + 1, w - 1, CT_A_NORMAL, "TX %8s Gb/s  %8s pkt/s  total %s",
                     ct_fmt_gbps(n->tx_gbps, a, sizeof a), ct_fmt_si(n->tx_pps, b, sizeof b),
                     ct_fmt_bytes(n->tx_bytes, d, sizeof d));
    ct_canvas_printf(c, y + 2, x + 1, w - 1, CT_A_NORMAL, "RX %8s Gb/s  %8s pkt/s  total %s",
                     ct_fmt_gbps(n->rx_gbps, a, sizeof a), ct_fmt_si(n->rx_pps, b, sizeof b),
                     ct_fmt_bytes(n->rx_bytes, d, sizeof d));
    flag_words(n, f, sizeof f);
    int at =
        ct_canvas_printf(c, y + 3, x + 1, w - 1, n->err_delta ? CT_A_BAD : CT_A_NORMAL,
                         "errors %llu (+%llu%s%s)", (unsigned long long)n->errors,
                         (unsigned long long)n->err_delta, n->err_last[0] ? " " : "", n->err_last);
    at += ct_canvas_printf(c, y + 3, x + 1 + at, w - 1 - at, CT_A_NORMAL,
                           "  CNP/s %s  source %s%s%s", ct_fmt_si(n->cnp_rate, a, sizeof a),
                           n->src[0] ? n->src : "-", f[0] ? "  " : "", f);
}

void ct_view_nics_draw(struct ct_canvas *c, struct ct_rect r, struct ct_ui *ui,
                       const struct ct_snapshot *s)
{
    size_t *rows;
    size_t n = ct_view_nics_order(ui, s, &rows);
    struct layout l;
    layout(&l, s, rows, n, r.x, r.w);
    static const char *const heads[] = {"NIC",  "KIND",  "LINK",   "TX Gb/s", "RX Gb/s",
                                        "UTIL", "PKT/s", "ERRORS", "HISTORY"};
    ct_canvas_fill(c, r.y, r.x, r.w, CT_A_HEAD, " ");
    ct_canvas_text(c, r.y, l.name, l.name_w, CT_A_HEAD, heads[0]);
    ct_canvas_text(c, r.y, l.kind, 5, CT_A_HEAD, heads[1]);
    ct_canvas_text(c, r.y, l.link, 11, CT_A_HEAD, heads[2]);
    ct_canvas_rtext(c, r.y, l.tx, 8, CT_A_HEAD, heads[3]);
    ct_canvas_rtext(c, r.y, l.rx, 8, CT_A_HEAD, heads[4]);
    ct_canvas_text(c, r.y, l.bar, l.bar_w + 5, CT_A_HEAD, heads[5]);
    ct_canvas_rtext(c, r.y, l.pps, 7, CT_A_HEAD, heads[6]);
    ct_canvas_rtext(c, r.y, l.err, 6, CT_A_HEAD, heads[7]);
    if (l.hist_w)
        ct_canvas_text(c, r.y, l.hist, l.hist_w, CT_A_HEAD, heads[8]);
    int detail = !ui->plain && n && r.h >= (int)n + 1 + 6 ? 5 : 0;
    int page = r.h - 1 - detail;
    int v = ct_view_def_find("nics");
    ui->n_rows = (int)n;
    ui->body_rows = page;
    ct_ui_clamp(&ui->top[v], &ui->sel, (int)n, page);
    if (!n)
        ct_canvas_text(c, r.y + 2, r.x + 2, r.w - 2, CT_A_DIM,
                       s->n_nic ? "no NIC matches the filter"
                                : "no network interface or RDMA port found");
    for (int i = 0; i < page && ui->top[v] + i < (int)n; i++) {
        int k = ui->top[v] + i;
        draw_row(c, r.y + 1 + i, &l, &s->nic[rows[k]], !ui->plain && k == ui->sel);
    }
    if (detail)
        draw_detail(c, r.y + r.h - detail, r.x, r.w, &s->nic[rows[ui->sel]]);
    free(rows);
}
