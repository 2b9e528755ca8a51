/* SPDX-License-Identifier: MIT */
/*
 * Text buffer, escaping and the busbw-vs-size SVG plot used by the HTML report: log2 x axis
 * with byte ticks, linear or log y axis, decision bands, crossover lines, CI whiskers, legend.
 */
#include "svg.h"

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/err.h"

/* ---- text buffer ------------------------------------------------------------------------ */

void ct_sbuf_init(struct ct_sbuf *b)
{
    b->p = NULL;
    b->len = 0;
    b->cap = 0;
}

void ct_sbuf_release(struct ct_sbuf *b)
{
    free(b->p);
    ct_sbuf_init(b);
}

static void reserve(struct ct_sbuf *b, size_t extra)
{
    if (b->len + extra + 1 <= b->cap)
        return;
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < b->len + extra + 1)
        cap *= 2;
    b->p = ct_xrealloc(b->p, cap);
    b->cap = cap;
}

void ct_sbuf_putn(struct ct_sbuf *b, const char *s, size_t n)
{
    reserve(b, n);
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

void ct_sbuf_puts(struct ct_sbuf *b, const char *s)
{
    ct_sbuf_putn(b, s, strlen(s));
}

void ct_sbuf_printf(struct ct_sbuf *b, const char *fmt, ...)
{
    char tmp[512];
    va_list ap, aq;
    va_start(ap, fmt);
    va_copy(aq, ap);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n > 0 && (size_t)n < sizeof tmp) {
        ct_sbuf_putn(b, tmp, (size_t)n);
    } else if (n > 0) {
        reserve(b, (size_t)n);
        vsnprintf(b->p + b->len, (size_t)n + 1, fmt, aq);
        b->len += (size_t)n;
    }
    va_end(aq);
}

/* Length of a valid UTF-8 sequence at s (at most max bytes), 0 if invalid. */
static size_t utf8_len(const unsigned char *s, size_t max)
{
    size_t n = s[0] >= 0xc2 && s[0] <= 0xdf   ? 2
               : s[0] >= 0xe0 && s[0] <= 0xef ? 3
               : s[0] >= 0xf0 && s[0] <= 0xf4 ? 4
                                              : 0;
    if (n > max)
        return 0;
    for (size_t i = 1; i < n; i++)
        if ((s[i] & 0xc0) != 0x80)
            return 0;
    return n;
}

void ct_sbuf_escn(struct ct_sbuf *b, const char *s, size_t max)
{
    if (!s)
        return;
    for (size_t i = 0; i < max && s[i];) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x80) {
            size_t n = utf8_len((const unsigned char *)s + i, max - i);
            if (n)
                ct_sbuf_putn(b, s + i, n);
            else
                ct_sbuf_puts(b, "\xef\xbf\xbd"); /* U+FFFD for a byte that is not UTF-8 */
            i += n ? n : 1;
            continue;
        }
        switch (c) {
        case '&': ct_sbuf_puts(b, "&amp;"); break;
        case '<': ct_sbuf_puts(b, "&lt;"); break;
        case '>': ct_sbuf_puts(b, "&gt;"); break;
        case '"': ct_sbuf_puts(b, "&quot;"); break;
        case '\'': ct_sbuf_puts(b, "&#39;"); break;
        default:
            if ((c < 0x20 && c != '\t' && c != '\n') || c == 0x7f)
                c = '?';
            ct_sbuf_putn(b, (const char *)&c, 1);
        }
        i++;
    }
}

void ct_sbuf_esc(struct ct_sbuf *b, const char *s)
{
    ct_sbuf_escn(b, s, SIZE_MAX);
}

/* ---- small formatting helpers ------------------------------------------------------------ */

void ct_svg_fmt_bytes(char *buf, size_t len, double bytes)
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    if (!isfinite(bytes) || bytes < 0) {
        snprintf(buf, len, "?");
        return;
    }
    int u = 0;
    while (bytes >= 1024 && u < 6) {
        bytes /= 1024;
        u++;
    }
    if (bytes == floor(bytes))
        snprintf(buf, len, "%.0f %s", bytes, units[u]);
    else if (bytes < 10)
        snprintf(buf, len, "%.2f %s", bytes, units[u]);
    else if (bytes < 100)
        snprintf(buf, len, "%.1f %s", bytes, units[u]);
    else
        snprintf(buf, len, "%.0f %s", bytes, units[u]);
    /* "1.50 KiB" -> "1.5 KiB" */
    char *dot = strchr(buf, '.');
    if (dot) {
        char *sp = strchr(dot, ' ');
        char *e = sp;
        while (e > dot + 1 && e[-1] == '0')
            e--;
        if (e == dot + 1)
            e = dot;
        memmove(e, sp, strlen(sp) + 1);
    }
}

static const char *const palette[12] = {
    "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b",
    "#e377c2", "#17becf", "#7f7f7f", "#bcbd22", "#393b79", "#843c39",
};

const char *ct_svg_color(int style)
{
    return palette[(unsigned)style % 12];
}

/* ---- plot geometry ---------------------------------------------------------------------- */

enum { W = 1160, PLOT_L = 80, PLOT_T = 70, LEGEND_W = 196, AXIS_H = 64, BASE_H = 520 };
#define FONT_W 0.58 /* average glyph width / font size for the sans-serif stack */

struct geo {
    double x0, x1; /* log2(bytes) domain */
    double y0, y1; /* busbw domain, log10 when ylog */
    double ystep;  /* linear: gridline step */
    bool ylog;
    double l, r, t, btm;     /* plot area in px */
    double strip_t, strip_b; /* the strip under the x axis (equal when none) */
    int h;
};

static double gx(const struct geo *g, double bytes)
{
    return g->l + (log2(bytes) - g->x0) / (g->x1 - g->x0) * (g->r - g->l);
}

/* Clamp a log2 position to the domain (bands reach 0 B or infinity). */
static double gx_clamped(const struct geo *g, double bytes)
{
    if (!(bytes > 0))
        return g->l;
    if (isinf(bytes))
        return g->r;
    double x = gx(g, bytes);
    return x < g->l ? g->l : x > g->r ? g->r : x;
}

static bool y_ok(const struct geo *g, double v)
{
    if (!isfinite(v))
        return false;
    if (g->ylog)
        return v > 0 && log10(v) >= g->y0 - 1e-9;
    return true;
}

static double gy(const struct geo *g, double v)
{
    double t = g->ylog ? (log10(v) - g->y0) / (g->y1 - g->y0) : (v - g->y0) / (g->y1 - g->y0);
    if (t > 1.04)
        t = 1.04; /* a whisker past the top stays near the frame (clipped anyway) */
    return g->btm - t * (g->btm - g->t);
}

static bool pt_ok(const struct geo *g, const struct ct_svg_point *pt)
{
    return isfinite(pt->size) && pt->size > 0 && y_ok(g, pt->bw);
}

/* 1, 2, 2.5, 5 x 10^k at or above v. */
static double nice_step(double v)
{
    double e = pow(10, floor(log10(v)));
    double m = v / e;
    const double eps = 1e-9;
    return (m <= 1 + eps ? 1 : m <= 2 + eps ? 2 : m <= 2.5 + eps ? 2.5 : m <= 5 + eps ? 5 : 10) * e;
}

enum { STRIP_CAPTION = 22, STRIP_ALGO_ROW = 16, STRIP_ROW = 16, STRIP_NOTE = 18 };

static double strip_height(const struct ct_svg_strip *st)
{
    if (!st || st->ncols <= 0)
        return 0;
    int rows = st->nrows < CT_SVG_STRIP_ROWS ? st->nrows : CT_SVG_STRIP_ROWS;
    return STRIP_CAPTION + STRIP_ALGO_ROW + rows * STRIP_ROW + STRIP_NOTE + 8;
}

static void domain(struct geo *g, const struct ct_svg_plot *p, int legend_rows)
{
    double xmin = INFINITY, xmax = -INFINITY, ymax = 0, ypos = INFINITY;
    for (int s = 0; s < p->nseries; s++)
        for (int i = 0; i < p->series[s].npts; i++) {
            const struct ct_svg_point *pt = &p->series[s].pts[i];
            if (!(isfinite(pt->size) && pt->size > 0))
                continue;
            xmin = fmin(xmin, log2(pt->size));
            xmax = fmax(xmax, log2(pt->size));
            if (isfinite(pt->bw)) {
                ymax = fmax(ymax, pt->bw);
                if (pt->bw > 0)
                    ypos = fmin(ypos, pt->bw);
            }
        }
    if (xmax - xmin < 1e-9) {
        xmin -= 1;
        xmax += 1;
    }
    double pad = (xmax - xmin) * 0.02 + 0.15;
    g->x0 = xmin - pad;
    g->x1 = xmax + pad;
    g->ylog = ymax > 0 && ypos < INFINITY && ymax / ypos > 100;
    if (g->ylog) {
        g->y1 = ceil(log10(ymax * 1.25));
        g->y0 = floor(log10(ypos));
        if (g->y1 - g->y0 > 12)
            g->y0 = g->y1 - 12;
    } else {
        if (!(ymax > 0) || !isfinite(ymax))
            ymax = 1;
        g->ystep = nice_step(ymax * 1.1 / 6);
        g->y0 = 0;
        g->y1 = ceil(ymax * 1.1 / g->ystep - 1e-9) * g->ystep;
    }
    int plot_h = BASE_H;
    int need = PLOT_T + 24 + legend_rows * 20 + AXIS_H;
    if (need > plot_h)
        plot_h = need;
    double sh = strip_height(p->strip);
    g->h = plot_h + (int)ceil(sh);
    g->l = PLOT_L;
    g->r = W - LEGEND_W;
    g->t = PLOT_T;
    g->btm = plot_h - AXIS_H;
    g->strip_t = plot_h - 4;
    g->strip_b = g->strip_t + sh;
}

/* Text attributes shared by labels that may sit on lines: a white halo keeps them legible. */
#define HALO "paint-order=\"stroke\" stroke=\"#fff\" stroke-width=\"3\" stroke-linejoin=\"round\""

static void fmt_tick(char *buf, size_t len, double v)
{
    snprintf(buf, len, "%.6g", v);
}

/* ---- plot parts ------------------------------------------------------------------------- */

static void draw_bands(struct ct_sbuf *b, const struct geo *g, const struct ct_svg_plot *p)
{
    for (int i = 0; i < p->nbands; i++) {
        const struct ct_svg_band *bd = &p->bands[i];
        double x0 = gx_clamped(g, bd->lo), x1 = gx_clamped(g, bd->hi);
        if (!(x1 - x0 > 0.5))
            continue;
        const char *col = ct_svg_color(bd->style);
        ct_sbuf_printf(b,
                       "<g class=\"band\"><rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
                       "height=\"%.1f\" fill=\"%s\" fill-opacity=\"0.13\"/>",
                       x0, g->t, x1 - x0, g->btm - g->t, col);
        if (bd->tie)
            ct_sbuf_printf(b,
                           "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
                           "fill=\"url(#%s-tie)\"/>",
                           x0, g->t, x1 - x0, g->btm - g->t, p->id);
        if (bd->tip) {
            ct_sbuf_puts(b, "<title>");
            ct_sbuf_esc(b, bd->tip);
            ct_sbuf_puts(b, "</title>");
        }
        ct_sbuf_puts(b, "</g>\n");
    }
}

static void draw_band_labels(struct ct_sbuf *b, const struct geo *g, const struct ct_svg_plot *p)
{
    for (int i = 0; i < p->nbands; i++) {
        const struct ct_svg_band *bd = &p->bands[i];
        double x0 = gx_clamped(g, bd->lo), x1 = gx_clamped(g, bd->hi);
        if (!bd->label || !(x1 - x0 > 0.5))
            continue;
        size_t n = strlen(bd->label);
        double avail = x1 - x0 - 6;
        bool with_tie = bd->tie && (n + 6) * 12 * FONT_W <= avail;
        if (!with_tie && n * 12 * FONT_W > avail)
            continue; /* too narrow: the rules table and the hover text name it */
        ct_sbuf_printf(b,
                       "<text class=\"bandlbl\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" "
                       "font-size=\"12\" font-weight=\"bold\" fill=\"%s\" " HALO ">",
                       (x0 + x1) / 2, g->t + 16, ct_svg_color(bd->style));
        ct_sbuf_esc(b, bd->label);
        if (with_tie)
            ct_sbuf_puts(b, " (tie)");
        ct_sbuf_puts(b, "</text>\n");
    }
}

static void draw_grid(struct ct_sbuf *b, const struct geo *g)
{
    char lbl[48];
    /* y */
    if (g->ylog) {
        int span = (int)(g->y1 - g->y0);
        int every = span > 8 ? 2 : 1;
        for (int e = (int)g->y0; e <= (int)g->y1; e++) {
            double y = gy(g, pow(10, e));
            if (span <= 6 && e < (int)g->y1)
                for (int m = 2; m <= 9; m++)
                    ct_sbuf_printf(b,
                                   "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" "
                                   "stroke=\"#eee\"/>\n",
                                   g->l, g->r, gy(g, m * pow(10, e)), gy(g, m * pow(10, e)));
            if ((e - (int)g->y0) % every)
                continue;
            ct_sbuf_printf(b,
                           "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" "
                           "stroke=\"#ccc\"/>\n",
                           g->l, g->r, y, y);
            if (e >= -4 && e <= 5)
                fmt_tick(lbl, sizeof lbl, pow(10, e));
            else
                snprintf(lbl, sizeof lbl, "1e%d", e);
            ct_sbuf_printf(b,
                           "<text class=\"ytick\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\" "
                           "font-size=\"12\" fill=\"#333\">%s</text>\n",
                           g->l - 6, y + 4, lbl);
        }
    } else {
        double step = g->ystep;
        for (int k = 0; k <= 40; k++) {
            double v = g->y0 + k * step;
            if (v > g->y1 + step * 1e-6)
                break;
            double y = gy(g, v);
            ct_sbuf_printf(b,
                           "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" "
                           "stroke=\"#ccc\"/>\n",
                           g->l, g->r, y, y);
            fmt_tick(lbl, sizeof lbl, v);
            ct_sbuf_printf(b,
                           "<text class=\"ytick\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\" "
                           "font-size=\"12\" fill=\"#333\">%s</text>\n",
                           g->l - 6, y + 4, lbl);
        }
    }
    /* x: a tick per power of two, a label and a gridline every k of them */
    double per = (g->r - g->l) / (g->x1 - g->x0);
    static const int steps[] = {1, 2, 5, 10, 20, 30};
    int k = 30;
    for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++)
        if (steps[i] * per >= 58) {
            k = steps[i];
            break;
        }
    for (int e = (int)ceil(g->x0); e <= (int)floor(g->x1); e++) {
        double x = gx(g, ldexp(1, e));
        bool major = e % k == 0;
        if (major)
            ct_sbuf_printf(b,
                           "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" "
                           "stroke=\"#ccc\"/>\n",
                           x, x, g->t, g->btm);
        ct_sbuf_printf(b,
                       "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#333\"/>\n",
                       x, x, g->btm, g->btm + (major ? 6 : 3));
        if (!major)
            continue;
        ct_svg_fmt_bytes(lbl, sizeof lbl, ldexp(1, e));
        ct_sbuf_printf(b,
                       "<text class=\"xtick\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" "
                       "font-size=\"12\" fill=\"#333\">%s</text>\n",
                       x, g->btm + 20, lbl);
    }
    /* frame and titles */
    ct_sbuf_printf(b,
                   "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" "
                   "stroke=\"#333\"/>\n",
                   g->l, g->t, g->r - g->l, g->btm - g->t);
    ct_sbuf_printf(b,
                   "<text class=\"axis\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" "
                   "font-size=\"13\" fill=\"#222\">Message size (bytes, log\xe2\x82\x82 scale)"
                   "</text>\n",
                   (g->l + g->r) / 2, g->btm + 44.0);
    double cy = (g->t + g->btm) / 2;
    ct_sbuf_printf(b,
                   "<text class=\"axis\" x=\"18\" y=\"%.1f\" text-anchor=\"middle\" "
                   "font-size=\"13\" fill=\"#222\" transform=\"rotate(-90 18 %.1f)\">"
                   "Bus bandwidth (GB/s%s)</text>\n",
                   cy, cy, g->ylog ? ", log scale" : "");
}

static void draw_marks(struct ct_sbuf *b, const struct geo *g, const struct ct_svg_plot *p)
{
    double row_end[2] = {-1e9, -1e9};
    for (int i = 0; i < p->nmarks; i++) {
        const struct ct_svg_mark *m = &p->marks[i];
        if (!(isfinite(m->size) && m->size > 0))
            continue;
        double x = gx(g, m->size);
        if (x < g->l || x > g->r)
            continue;
        ct_sbuf_printf(b,
                       "<line class=\"xoline\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" "
                       "stroke=\"%s\" stroke-width=\"%s\" stroke-dasharray=\"%s\"/>\n",
                       x, x, g->t - 4, g->btm, m->minor ? "#888" : "#222", m->minor ? "1" : "1.5",
                       m->minor ? "2 3" : "6 4");
        char lbl[48];
        ct_svg_fmt_bytes(lbl, sizeof lbl, m->size);
        double w = strlen(lbl) * 11 * FONT_W;
        int row = x - w / 2 > row_end[0] + 4 ? 0 : x - w / 2 > row_end[1] + 4 ? 1 : 0;
        row_end[row] = x + w / 2;
        ct_sbuf_printf(b,
                       "<text class=\"xo\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" "
                       "font-size=\"11\" fill=\"%s\" " HALO ">%s</text>\n",
                       x, g->t - 8 - row * 14.0, m->minor ? "#666" : "#111", lbl);
    }
}

/* Cell bounds: halfway (in log space) to the neighbouring sizes, clamped to the plot area. */
static void strip_cells(const struct geo *g, const struct ct_svg_strip *st, double *x0, double *x1)
{
    for (int i = 0; i < st->ncols; i++) {
        double xc = gx(g, st->cols[i].size);
        double prev = i > 0 ? gx(g, st->cols[i - 1].size) : NAN;
        double next = i + 1 < st->ncols ? gx(g, st->cols[i + 1].size) : NAN;
        double half_l = isfinite(prev) ? (xc - prev) / 2 : isfinite(next) ? (next - xc) / 2 : 12;
        double half_r = isfinite(next) ? (next - xc) / 2 : isfinite(prev) ? (xc - prev) / 2 : 12;
        x0[i] = fmax(g->l, xc - half_l);
        x1[i] = fmin(g->r, xc + half_r);
    }
}

static void draw_strip(struct ct_sbuf *b, const struct geo *g, const struct ct_svg_plot *p)
{
    const struct ct_svg_strip *st = p->strip;
    if (!st || st->ncols <= 0)
        return;
    double y = g->strip_t;
    ct_sbuf_printf(b,
                   "<g class=\"strip\">\n<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\" "
                   "fill=\"#222\"><tspan font-weight=\"bold\">Winning parameters per size"
                   "</tspan><tspan fill=\"#666\"> (the chosen algorithm at its best measured "
                   "values)</tspan></text>\n",
                   g->l, y + 14);
    y += STRIP_CAPTION;
    double *x0 = ct_xcalloc((size_t)st->ncols * 2, sizeof *x0), *x1 = x0 + st->ncols;
    strip_cells(g, st, x0, x1);
    double minw = INFINITY;
    size_t maxlen = 1;
    for (int i = 0; i < st->ncols; i++) {
        if (isfinite(x1[i] - x0[i]))
            minw = fmin(minw, x1[i] - x0[i]);
        for (int k = 0; k < st->nrows && k < CT_SVG_STRIP_ROWS; k++)
            if (strlen(st->cols[i].val[k]) > maxlen)
                maxlen = strlen(st->cols[i].val[k]);
    }
    double fs = fmin(11, (minw - 3) / (maxlen * FONT_W));
    bool text = fs >= 6.5;
    double top = y;
    ct_sbuf_printf(b,
                   "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\" font-size=\"11\" "
                   "fill=\"#333\">algorithm</text>\n",
                   g->l - 6, y + 12);
    for (int i = 0; i < st->ncols; i++) {
        const struct ct_svg_strip_col *c = &st->cols[i];
        if (!(x1[i] - x0[i] > 0))
            continue;
        ct_sbuf_printf(b,
                       "<g><rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%d\" "
                       "fill=\"%s\" fill-opacity=\"0.6\" stroke=\"#fff\"/>",
                       x0[i], y, x1[i] - x0[i], STRIP_ALGO_ROW - 2,
                       c->style >= 0 ? ct_svg_color(c->style) : "#ddd");
        if (c->tie) {
            ct_sbuf_printf(b,
                           "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%d\" "
                           "fill=\"url(#",
                           x0[i], y, x1[i] - x0[i], STRIP_ALGO_ROW - 2);
            ct_sbuf_esc(b, p->id);
            ct_sbuf_puts(b, "-tie)\"/>");
        }
        if (c->tip[0]) {
            ct_sbuf_puts(b, "<title>");
            ct_sbuf_esc(b, c->tip);
            ct_sbuf_puts(b, "</title>");
        }
        ct_sbuf_puts(b, "</g>\n");
    }
    y += STRIP_ALGO_ROW;
    for (int k = 0; k < st->nrows && k < CT_SVG_STRIP_ROWS; k++, y += STRIP_ROW) {
        if (k % 2 == 0)
            ct_sbuf_printf(b,
                           "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%d\" "
                           "fill=\"#f3f4f6\"/>\n",
                           g->l, y, g->r - g->l, STRIP_ROW);
        ct_sbuf_printf(b,
                       "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\" font-size=\"11\" "
                       "fill=\"#333\">",
                       g->l - 6, y + 12);
        ct_sbuf_esc(b, st->rows[k]);
        ct_sbuf_puts(b, "</text>\n");
        if (!text)
            continue;
        ct_sbuf_printf(b,
                       "<g class=\"sv\" font-size=\"%.1f\" fill=\"#222\" "
                       "text-anchor=\"middle\">",
                       fs);
        for (int i = 0; i < st->ncols; i++) {
            if (!st->cols[i].val[k][0] || !(x1[i] - x0[i] > 0))
                continue;
            ct_sbuf_printf(b, "<text x=\"%.1f\" y=\"%.1f\">", gx(g, st->cols[i].size), y + 12);
            ct_sbuf_escn(b, st->cols[i].val[k], sizeof st->cols[i].val[k]);
            ct_sbuf_puts(b, "</text>");
        }
        ct_sbuf_puts(b, "</g>\n");
    }
    /* crossovers continue through the strip */
    for (int i = 0; i < p->nmarks; i++) {
        double sz = p->marks[i].size;
        if (!(isfinite(sz) && sz > 0))
            continue;
        double x = gx(g, sz);
        if (x >= g->l && x <= g->r)
            ct_sbuf_printf(b,
                           "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" "
                           "stroke=\"%s\" stroke-dasharray=\"4 3\"/>\n",
                           x, x, top - 2, y, p->marks[i].minor ? "#999" : "#222");
    }
    if (st->note || !text) {
        ct_sbuf_printf(b, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" fill=\"#555\">", g->l,
                       y + 13);
        if (st->note)
            ct_sbuf_esc(b, st->note);
        if (!text && st->nrows)
            ct_sbuf_puts(b, " (values too dense to print: see the table below)");
        ct_sbuf_puts(b, "</text>\n");
    }
    ct_sbuf_puts(b, "</g>\n");
    free(x0);
}

static void marker(struct ct_sbuf *b, int style, double x, double y, bool hollow, const char *tip)
{
    const char *col = ct_svg_color(style);
    const char *fill = hollow ? "#fff" : col;
    ct_sbuf_printf(b, "<g fill=\"%s\" stroke=\"%s\" stroke-width=\"1.5\">", fill, col);
    switch ((unsigned)style % 5) {
    case 0: ct_sbuf_printf(b, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3.8\"/>", x, y); break;
    case 1:
        ct_sbuf_printf(b, "<rect x=\"%.1f\" y=\"%.1f\" width=\"7\" height=\"7\"/>", x - 3.5,
                       y - 3.5);
        break;
    case 2: ct_sbuf_printf(b, "<path d=\"M%.1f %.1fl4.3 7.5h-8.6z\"/>", x, y - 4.8); break;
    case 3:
        ct_sbuf_printf(b, "<path d=\"M%.1f %.1fl4.5 4.5l-4.5 4.5l-4.5 -4.5z\"/>", x, y - 4.5);
        break;
    default: ct_sbuf_printf(b, "<path d=\"M%.1f %.1fl4.3 -7.5h-8.6z\"/>", x, y + 4.8); break;
    }
    if (tip && *tip) {
        ct_sbuf_puts(b, "<title>");
        ct_sbuf_esc(b, tip);
        ct_sbuf_puts(b, "</title>");
    }
    ct_sbuf_puts(b, "</g>\n");
}

static void draw_series(struct ct_sbuf *b, const struct geo *g, const struct ct_svg_series *s)
{
    const char *col = ct_svg_color(s->style);
    /* whiskers: the 95% CI of the median expressed in GB/s */
    for (int i = 0; i < s->npts; i++) {
        const struct ct_svg_point *pt = &s->pts[i];
        if (!pt_ok(g, pt) || !y_ok(g, pt->bw_lo) || !isfinite(pt->bw_hi))
            continue;
        double x = gx(g, pt->size);
        ct_sbuf_printf(b,
                       "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
                       "stroke-opacity=\"0.7\"/>\n",
                       x, x, gy(g, pt->bw_lo), gy(g, pt->bw_hi), col);
    }
    /* the line breaks at points that cannot be drawn */
    bool open = false;
    for (int i = 0; i < s->npts; i++) {
        const struct ct_svg_point *pt = &s->pts[i];
        if (!pt_ok(g, pt)) {
            if (open)
                ct_sbuf_puts(b, "\"/>\n");
            open = false;
            continue;
        }
        if (!open)
            ct_sbuf_printf(b,
                           "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\" "
                           "stroke-linejoin=\"round\" points=\"",
                           col);
        ct_sbuf_printf(b, "%s%.1f,%.1f", open ? " " : "", gx(g, pt->size), gy(g, pt->bw));
        open = true;
    }
    if (open)
        ct_sbuf_puts(b, "\"/>\n");
    for (int i = 0; i < s->npts; i++) {
        const struct ct_svg_point *pt = &s->pts[i];
        if (pt_ok(g, pt))
            marker(b, s->style, gx(g, pt->size), gy(g, pt->bw), pt->hollow, pt->tip);
    }
}

static void legend(struct ct_sbuf *b, const struct geo *g, const struct ct_svg_plot *p)
{
    double x = g->r + 16, y = g->t + 4;
    ct_sbuf_printf(b,
                   "<text x=\"%.1f\" y=\"%.1f\" font-size=\"13\" font-weight=\"bold\" "
                   "fill=\"#222\">Algorithm</text>\n",
                   x, y + 6);
    y += 24;
    size_t maxc = (size_t)((W - x - 38) / (12 * FONT_W));
    for (int s = 0; s < p->nseries; s++, y += 20) {
        const struct ct_svg_series *se = &p->series[s];
        ct_sbuf_printf(b,
                       "<g class=\"legend\"><line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" "
                       "y2=\"%.1f\" stroke=\"%s\" stroke-width=\"2\"/>",
                       x, x + 24, y, y, ct_svg_color(se->style));
        marker(b, se->style, x + 12, y, false, NULL);
        ct_sbuf_printf(b,
                       "<text class=\"lg\" x=\"%.1f\" y=\"%.1f\" font-size=\"12\" "
                       "fill=\"#222\">",
                       x + 32, y + 4);
        size_t n = strlen(se->name);
        if (n > maxc) {
            ct_sbuf_escn(b, se->name, maxc - 1);
            ct_sbuf_puts(b, "\xe2\x80\xa6<title>");
            ct_sbuf_esc(b, se->name);
            ct_sbuf_puts(b, "</title>");
        } else {
            ct_sbuf_esc(b, se->name);
        }
        ct_sbuf_puts(b, "</text></g>\n");
    }
    /* key to the other marks */
    y += 10;
    ct_sbuf_printf(b,
                   "<g class=\"key\" font-size=\"11\" fill=\"#444\">\n"
                   "<rect x=\"%.1f\" y=\"%.1f\" width=\"24\" height=\"12\" fill=\"#1f77b4\" "
                   "fill-opacity=\"0.13\" stroke=\"#bbb\"/><text x=\"%.1f\" y=\"%.1f\">chosen by "
                   "the rules</text>\n",
                   x, y - 6, x + 32, y + 4);
    y += 18;
    ct_sbuf_printf(b,
                   "<rect x=\"%.1f\" y=\"%.1f\" width=\"24\" height=\"12\" fill=\"url(#%s-tie)\" "
                   "stroke=\"#bbb\"/><text x=\"%.1f\" y=\"%.1f\">tie (simpler chosen)</text>\n",
                   x, y - 6, p->id, x + 32, y + 4);
    y += 18;
    ct_sbuf_printf(b,
                   "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#222\" "
                   "stroke-width=\"1.5\" stroke-dasharray=\"6 4\"/><text x=\"%.1f\" y=\"%.1f\">"
                   "crossover</text>\n",
                   x, x + 24, y, y, x + 32, y + 4);
    y += 18;
    ct_sbuf_printf(
        b,
        "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3.8\" fill=\"#fff\" stroke=\"#555\" "
        "stroke-width=\"1.5\"/><text x=\"%.1f\" y=\"%.1f\">pruned (coarse only)</text>\n",
        x + 12, y, x + 32, y + 4);
    y += 18;
    ct_sbuf_printf(b,
                   "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#555\"/>"
                   "<text x=\"%.1f\" y=\"%.1f\">95%% CI of the median</text>\n</g>\n",
                   x + 12, x + 12, y - 6, y + 6, x + 32, y + 4);
}

void ct_svg_size_plot(struct ct_sbuf *b, const struct ct_svg_plot *p)
{
    bool any = false;
    for (int s = 0; s < p->nseries && !any; s++)
        for (int i = 0; i < p->series[s].npts && !any; i++)
            any = isfinite(p->series[s].pts[i].size) && p->series[s].pts[i].size > 0;
    if (!any) {
        ct_sbuf_printf(b,
                       "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"plot\" viewBox=\"0 0 "
                       "%d 80\" width=\"100%%\" role=\"img\"><rect x=\"1\" y=\"1\" width=\"%d\" "
                       "height=\"78\" fill=\"#fafafa\" stroke=\"#ccc\"/><text x=\"%d\" y=\"45\" "
                       "text-anchor=\"middle\" font-size=\"14\" fill=\"#555\">No point with a "
                       "positive message size to plot</text></svg>\n",
                       W, W - 2, W / 2);
        return;
    }
    struct geo g;
    domain(&g, p, p->nseries + 7);
    ct_sbuf_printf(b, "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"plot\" id=\"");
    ct_sbuf_esc(b, p->id);
    ct_sbuf_printf(b,
                   "\" viewBox=\"0 0 %d %d\" width=\"100%%\" role=\"img\" font-family=\""
                   "DejaVu Sans, Helvetica, Arial, sans-serif\">\n",
                   W, g.h);
    ct_sbuf_puts(b, "<title>");
    ct_sbuf_esc(b, p->title);
    ct_sbuf_puts(b, "</title>\n<defs><pattern id=\"");
    ct_sbuf_esc(b, p->id);
    ct_sbuf_printf(b, "-tie\" width=\"8\" height=\"8\" patternUnits=\"userSpaceOnUse\" "
                      "patternTransform=\"rotate(45)\"><line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"8\" "
                      "stroke=\"#000\" stroke-opacity=\"0.22\" stroke-width=\"2\"/></pattern>"
                      "<clipPath id=\"");
    ct_sbuf_esc(b, p->id);
    ct_sbuf_printf(b,
                   "-clip\"><rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"/>"
                   "</clipPath></defs>\n",
                   g.l - 6, g.t - 6, g.r - g.l + 12, g.btm - g.t + 12);
    ct_sbuf_printf(b, "<rect width=\"%d\" height=\"%d\" fill=\"#fff\"/>\n", W, g.h);
    ct_sbuf_puts(b, "<text x=\"8\" y=\"22\" font-size=\"15\" font-weight=\"bold\" fill=\"#111\">");
    ct_sbuf_esc(b, p->title);
    ct_sbuf_puts(b, "</text>\n");
    draw_bands(b, &g, p);
    draw_grid(b, &g);
    draw_marks(b, &g, p);
    ct_sbuf_puts(b, "<g clip-path=\"url(#");
    ct_sbuf_esc(b, p->id);
    ct_sbuf_puts(b, "-clip)\">\n");
    for (int s = 0; s < p->nseries; s++)
        draw_series(b, &g, &p->series[s]);
    ct_sbuf_puts(b, "</g>\n");
    draw_band_labels(b, &g, p);
    draw_strip(b, &g, p);
    legend(b, &g, p);
    ct_sbuf_puts(b, "</svg>\n");
}
