/* SPDX-License-Identifier: MIT */
/* The progress view: where a run or sweep is, the busiest NICs, the latest results. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ui.h"

static double busiest(const struct ct_nic_snap *n)
{
    return n->tx_gbps > n->rx_gbps ? n->tx_gbps : n->rx_gbps;
}

static int by_traffic(const void *a, const void *b, void *arg)
{
    const struct ct_snapshot *s = arg;
    size_t i = *(const size_t *)a, j = *(const size_t *)b;
    double x = busiest(&s->nic[i]), y = busiest(&s->nic[j]);
    return x > y ? -1 : x < y ? 1 : i < j ? -1 : i > j;
}

static int draw_state(struct ct_canvas *c, struct ct_rect r, const struct ct_progress *p)
{
    char a[48], b[48], t[64];
    int y = r.y, x = r.x + 1, w = r.w - 2, half = w / 2;
    if (p->total > 0)
        snprintf(t, sizeof t, "point %ld of %s%ld", p->done, p->done < p->total ? "~" : "",
                 p->total);
    else
        snprintf(t, sizeof t, "point %ld", p->done);
    int at = ct_canvas_printf(c, y, x, w, CT_A_HEAD, "%s", p->cmd[0] ? p->cmd : "run");
    if (p->phase[0])
        ct_canvas_printf(c, y, x + at, w - at, CT_A_NORMAL, "   phase %s", p->phase);
    ct_canvas_rtext(c, y, x, w, CT_A_NORMAL, t);
    ct_canvas_printf(c, y + 1, x, half, CT_A_NORMAL, "collective  %s", p->coll);
    ct_canvas_printf(c, y + 1, x + half, w - half, CT_A_NORMAL, "algorithm   %s", p->algo);
    ct_canvas_printf(c, y + 2, x, half, CT_A_NORMAL, "size        %s",
                     ct_fmt_size(p->size, false, a, sizeof a));
    ct_canvas_printf(c, y + 2, x + half, w - half, CT_A_NORMAL, "parameters  %s",
                     p->params[0] ? p->params : "defaults");
    ct_canvas_printf(c, y + 3, x, half, CT_A_NORMAL, "elapsed     %s",
                     ct_fmt_dur(p->elapsed_s, a, sizeof a));
    ct_canvas_printf(c, y + 3, x + half, w - half, CT_A_NORMAL, "remaining   %s%s",
                     p->remaining_s >= 0 ? "~" : "", ct_fmt_dur(p->remaining_s, b, sizeof b));
    double frac = p->total > 0 ? (double)p->done / (double)p->total : 0;
    if (frac > 1)
        frac = 1;
    int bw = w - 7;
    ct_canvas_text(c, y + 4, x, 1, CT_A_DIM, "[");
    ct_draw_bar(c, y + 4, x + 1, bw, frac, CT_A_GOOD);
    ct_canvas_text(c, y + 4, x + 1 + bw, 1, CT_A_DIM, "]");
    if (p->total > 0)
        ct_canvas_printf(c, y + 4, x + bw + 2, 5, CT_A_NORMAL, "%4.0f%%", frac * 100);
    return 6;
}

void ct_view_progress_draw(struct ct_canvas *c, struct ct_rect r, struct ct_ui *ui,
                           const struct ct_snapshot *s)
{
    char a[32], b[32], d[32];
    int y = r.y, end = r.y + r.h;
    ui->n_rows = ui->body_rows = r.h;
    if (s->has_progress) {
        y += draw_state(c, r, &s->progress);
    } else {
        ct_canvas_text(c, y, r.x + 1, r.w - 2, CT_A_DIM,
                       "no run or sweep attached to this screen:");
        ct_canvas_text(c, y + 1, r.x + 1, r.w - 2, CT_A_DIM,
                       "'colltune run --tui' and 'colltune sweep --tui' show their progress here");
        y += 3;
    }
    /* the NICs carrying the traffic, busiest first */
    size_t *idx = s->n_nic ? ct_xcalloc(s->n_nic, sizeof *idx) : NULL, n = 0;
    for (size_t i = 0; i < s->n_nic; i++)
        if (!(s->nic[i].flags & CT_NICF_GONE))
            idx[n++] = i;
    if (n > 1)
        qsort_r(idx, n, sizeof *idx, by_traffic, (void *)s);
    int nw = r.w - 2 - 8 - 1 - 8 - 2 - 14;
    nw = nw > 24 ? 24 : nw < 6 ? 6 : nw;
    if (y < end && n) {
        ct_canvas_fill(c, y, r.x, r.w, CT_A_HEAD, " ");
        ct_canvas_text(c, y, r.x + 1, nw, CT_A_HEAD, "busiest NICs");
        ct_canvas_rtext(c, y, r.x + 1 + nw, 9, CT_A_HEAD, "TX Gb/s");
        ct_canvas_rtext(c, y, r.x + 1 + nw + 9, 9, CT_A_HEAD, "RX Gb/s");
        ct_canvas_text(c, y, r.x + 3 + nw + 18, 14, CT_A_HEAD, "UTIL");
        y++;
    }
    for (size_t k = 0; k < n && k < 4 && y < end; k++, y++) {
        const struct ct_nic_snap *x = &s->nic[idx[k]];
        ct_canvas_text(c, y, r.x + 1, nw, CT_A_NORMAL, x->name);
        ct_canvas_rtext(c, y, r.x + 1 + nw, 9, CT_A_NORMAL, ct_fmt_gbps(x->tx_gbps, a, sizeof a));
        ct_canvas_rtext(c, y, r.x + 1 + nw + 9, 9, CT_A_NORMAL,
                        ct_fmt_gbps(x->rx_gbps, b, sizeof b));
        if (x->util >= 0) {
            ct_draw_bar(c, y, r.x + 3 + nw + 18, 8, x->util, CT_A_GOOD);
            ct_canvas_printf(c, y, r.x + 3 + nw + 26, 6, CT_A_NORMAL, "%4.0f%%", x->util * 100);
        } else {
            ct_canvas_text(c, y, r.x + 3 + nw + 18, 1, CT_A_DIM, "-");
        }
    }
    free(idx);
    /* the latest measured points */
    y++;
    if (y < end && s->n_pts) {
        ct_canvas_fill(c, y, r.x, r.w, CT_A_HEAD, " ");
        ct_canvas_text(c, y, r.x + 1, 30, CT_A_HEAD, "latest points");
        ct_canvas_rtext(c, y, r.x + 31, 12, CT_A_HEAD, "size");
        ct_canvas_rtext(c, y, r.x + 43, 14, CT_A_HEAD, "busbw GB/s");
        y++;
    }
    int room = end - y;
    size_t first = s->n_pts > (size_t)(room > 0 ? room : 0) ? s->n_pts - (size_t)room : 0;
    for (size_t i = first; i < s->n_pts && y < end; i++, y++) {
        const struct ct_plot_pt *p = &s->pts[i];
        ct_canvas_printf(c, y, r.x + 1, 30, CT_A_NORMAL, "%-13s %s", p->coll, p->algo);
        ct_canvas_rtext(c, y, r.x + 31, 12, CT_A_NORMAL, ct_fmt_size(p->size, false, d, sizeof d));
        ct_canvas_printf(c, y, r.x + 43, 14, CT_A_NORMAL, "%14.2f", p->busbw);
    }
}
