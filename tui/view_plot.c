/* SPDX-License-Identifier: MIT */
/* The plot view: bus bandwidth vs message size per algorithm (braille lines, a letter per
 * measured point), log-scale sizes, settled crossovers marked on the axis and listed. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/parse.h"
#include "ui.h"

#define MAX_SERIES 26
#define MAX_CROSS 8

struct series {
    const char *algo;
    size_t *pt; /* indices into s->pts, by size */
    size_t n;
};

struct cross {
    uint64_t lo, hi;
    const char *from, *to;
};

struct plot {
    const char *coll;
    struct series ser[MAX_SERIES];
    size_t nser;
    uint64_t *sizes; /* distinct sizes, ascending */
    size_t nsizes;
    double ymax;
    struct cross cross[MAX_CROSS];
    size_t ncross;
};

/* The collectives in the points, in order of first appearance; returns the count. */
static size_t colls(const struct ct_snapshot *s, const char **out, size_t max)
{
    size_t n = 0;
    for (size_t i = 0; i < s->n_pts; i++) {
        size_t k = 0;
        while (k < n && strcmp(out[k], s->pts[i].coll))
            k++;
        if (k == n && n < max)
            out[n++] = s->pts[i].coll;
    }
    return n;
}

static const char *pick_coll(const struct ct_ui *ui, const struct ct_snapshot *s, int *at,
                             int *count)
{
    const char *v[16];
    size_t n = colls(s, v, 16);
    *count = (int)n;
    if (!n)
        return NULL;
    int k = 0;
    if (ui->left >= 0)
        k = ui->left % (int)n;
    else
        for (size_t i = 0; i < n; i++)
            if (s->has_progress && !strcmp(v[i], s->progress.coll))
                k = (int)i;
    *at = k;
    return v[k];
}

static const struct ct_plot_pt *at_size(const struct ct_snapshot *s, const struct series *x,
                                        uint64_t size)
{
    for (size_t i = 0; i < x->n; i++)
        if (s->pts[x->pt[i]].size == size)
            return &s->pts[x->pt[i]];
    return NULL;
}

/* Fastest algorithm at a size where at least two were measured; NULL otherwise. */
static const struct series *winner(const struct ct_snapshot *s, const struct plot *p, uint64_t size)
{
    const struct series *best = NULL;
    double bw = -1;
    int seen = 0;
    for (size_t k = 0; k < p->nser; k++) {
        const struct ct_plot_pt *q = at_size(s, &p->ser[k], size);
        if (!q)
            continue;
        seen++;
        if (q->busbw > bw) {
            bw = q->busbw;
            best = &p->ser[k];
        }
    }
    return seen >= 2 ? best : NULL;
}

/* Crossovers that have settled: the leader changes between two adjacent sizes and both
 * leaders were measured at both sizes. */
static void crossovers(const struct ct_snapshot *s, struct plot *p)
{
    const struct series *prev = NULL;
    uint64_t prev_size = 0;
    for (size_t i = 0; i < p->nsizes; i++) {
        const struct series *w = winner(s, p, p->sizes[i]);
        if (!w)
            continue;
        if (prev && w != prev && at_size(s, w, prev_size) && at_size(s, prev, p->sizes[i]) &&
            p->ncross < MAX_CROSS)
            p->cross[p->ncross++] = (struct cross){prev_size, p->sizes[i], prev->algo, w->algo};
        prev = w;
        prev_size = p->sizes[i];
    }
}

static void build(const struct ct_snapshot *s, const char *coll, struct plot *p)
{
    memset(p, 0, sizeof *p);
    p->coll = coll;
    p->sizes = ct_xcalloc(s->n_pts ? s->n_pts : 1, sizeof *p->sizes);
    for (size_t i = 0; i < s->n_pts; i++) {
        const struct ct_plot_pt *q = &s->pts[i];
        if (strcmp(q->coll, coll))
            continue;
        size_t k = 0;
        while (k < p->nser && strcmp(p->ser[k].algo, q->algo))
            k++;
        if (k == p->nser) {
            if (p->nser == MAX_SERIES)
                continue;
            p->ser[p->nser++].algo = q->algo;
        }
        struct series *x = &p->ser[k];
        x->pt = ct_xrealloc(x->pt, (x->n + 1) * sizeof *x->pt);
        size_t j = x->n++;
        while (j > 0 && s->pts[x->pt[j - 1]].size > q->size) {
            x->pt[j] = x->pt[j - 1];
            j--;
        }
        x->pt[j] = i;
        size_t z = 0;
        while (z < p->nsizes && p->sizes[z] != q->size)
            z++;
        if (z == p->nsizes)
            p->sizes[p->nsizes++] = q->size;
        if (q->busbw > p->ymax)
            p->ymax = q->busbw;
    }
    p->nsizes = ct_sizes_sort_unique(p->sizes, p->nsizes);
    /* a round top for the y axis: 1, 2, 2.5 or 5 x 10^k above the largest value */
    double top = p->ymax > 0 ? p->ymax * 1.05 : 1;
    double mag = pow(10, floor(log10(top)));
    static const double steps[] = {1, 2, 2.5, 5, 10};
    for (size_t i = 0; i < 5; i++)
        if (steps[i] * mag >= top) {
            p->ymax = steps[i] * mag;
            break;
        }
    crossovers(s, p);
}

static void release(struct plot *p)
{
    for (size_t k = 0; k < p->nser; k++)
        free(p->ser[k].pt);
    free(p->sizes);
}

struct grid {
    int w, h; /* cells */
    unsigned char *dots;
    signed char *owner;
};

static void dot(struct grid *g, int sx, int sy, int series)
{
    static const unsigned char bit[4][2] = {{0x01, 0x08}, {0x02, 0x10}, {0x04, 0x20}, {0x40, 0x80}};
    if (sx < 0 || sy < 0 || sx >= g->w * 2 || sy >= g->h * 4)
        return;
    int cx = sx / 2, cy = sy / 4;
    g->dots[cy * g->w + cx] |= bit[sy % 4][sx % 2];
    g->owner[cy * g->w + cx] = (signed char)series;
}

static void line(struct grid *g, int x0, int y0, int x1, int y1, int series)
{
    int dx = abs(x1 - x0), dy = -abs(y1 - y0), sx = x0 < x1 ? 1 : -1, sy = y0 < y1 ? 1 : -1;
    int e = dx + dy;
    for (;;) {
        dot(g, x0, y0, series);
        if (x0 == x1 && y0 == y1)
            break;
        int e2 = 2 * e;
        if (e2 >= dy) {
            e += dy;
            x0 += sx;
        }
        if (e2 <= dx) {
            e += dx;
            y0 += sy;
        }
    }
}

static int sub_x(const struct plot *p, uint64_t size, int xs)
{
    double lo = log2((double)p->sizes[0]), hi = log2((double)p->sizes[p->nsizes - 1]);
    if (p->nsizes < 2 || hi <= lo)
        return xs / 2;
    double f = (log2((double)(size ? size : 1)) - lo) / (hi - lo);
    return (int)lround(f * (xs - 1));
}

static int sub_y(const struct plot *p, double bw, int ys)
{
    double f = p->ymax > 0 ? bw / p->ymax : 0;
    f = f < 0 ? 0 : f > 1 ? 1 : f;
    return ys - 1 - (int)lround(f * (ys - 1));
}

static void draw_axes(struct ct_canvas *c, const struct plot *p, int y, int x, int pw, int ph)
{
    char b[32];
    bool u = c->utf8;
    for (int i = 0; i < ph; i++)
        ct_canvas_text(c, y + i, x - 1, 1, CT_A_DIM, u ? "│" : "|");
    ct_canvas_text(c, y + ph, x - 1, 1, CT_A_DIM, u ? "└" : "+");
    ct_canvas_fill(c, y + ph, x, pw, CT_A_DIM, u ? "─" : "-");
    double marks[3] = {p->ymax, p->ymax / 2, 0};
    int rows[3] = {0, (ph - 1) / 2, ph - 1};
    for (int k = 0; k < 3; k++) {
        snprintf(b, sizeof b, "%.*f", marks[k] >= 100 ? 0 : marks[k] >= 10 ? 1 : 2, marks[k]);
        ct_canvas_rtext(c, y + rows[k], x - 8, 6, CT_A_DIM, b);
    }
    /* size labels under the axis where they fit */
    int next_free = x - 2;
    for (size_t i = 0; i < p->nsizes; i++) {
        int col = x + sub_x(p, p->sizes[i], pw * 2) / 2;
        ct_fmt_size(p->sizes[i], true, b, sizeof b);
        int bw = (int)strlen(b), at = col - bw / 2;
        if (at + bw > x + pw)
            at = x + pw - bw;
        if (at <= next_free && i)
            continue;
        ct_canvas_text(c, y + ph + 1, at, bw, CT_A_DIM, b);
        next_free = at + bw;
    }
}

static void draw_plot(struct ct_canvas *c, const struct ct_snapshot *s, const struct plot *p, int y,
                      int x, int pw, int ph)
{
    struct grid g = {pw, ph, ct_xcalloc((size_t)(pw * ph), 1), ct_xcalloc((size_t)(pw * ph), 1)};
    for (size_t k = 0; k < p->nser; k++) {
        const struct series *e = &p->ser[k];
        for (size_t i = 0; i < e->n; i++) {
            const struct ct_plot_pt *q = &s->pts[e->pt[i]];
            int sx = sub_x(p, q->size, pw * 2), sy = sub_y(p, q->busbw, ph * 4);
            if (i == 0) {
                dot(&g, sx, sy, (int)k);
                continue;
            }
            const struct ct_plot_pt *o = &s->pts[e->pt[i - 1]];
            line(&g, sub_x(p, o->size, pw * 2), sub_y(p, o->busbw, ph * 4), sx, sy, (int)k);
        }
    }
    /* settled crossovers: a dotted column between the two sizes */
    for (size_t i = 0; i < p->ncross; i++) {
        int col = (sub_x(p, p->cross[i].lo, pw * 2) + sub_x(p, p->cross[i].hi, pw * 2)) / 4;
        for (int r = 0; r < ph; r++)
            ct_canvas_text(c, y + r, x + col, 1, CT_A_DIM, c->utf8 ? "┊" : ":");
        ct_canvas_text(c, y + ph, x + col, 1, CT_A_WARN, c->utf8 ? "┼" : "x");
    }
    for (int cy = 0; cy < ph; cy++)
        for (int cx = 0; cx < pw; cx++) {
            unsigned char d = g.dots[cy * pw + cx];
            if (!d)
                continue;
            char ch[4] = ".";
            if (c->utf8) {
                unsigned cp = 0x2800u + d; /* braille patterns, 3-byte UTF-8 */
                ch[0] = (char)(0xe0 | (cp >> 12));
                ch[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
                ch[2] = (char)(0x80 | (cp & 0x3f));
                ch[3] = 0;
            }
            ct_canvas_text(c, y + cy, x + cx, 1, CT_A_SER0 + g.owner[cy * pw + cx] % CT_A_NSERIES,
                           ch);
        }
    /* a letter on every measured point */
    for (size_t k = 0; k < p->nser; k++)
        for (size_t i = 0; i < p->ser[k].n; i++) {
            const struct ct_plot_pt *q = &s->pts[p->ser[k].pt[i]];
            char m[2] = {(char)('a' + k), 0};
            ct_canvas_text(c, y + sub_y(p, q->busbw, ph * 4) / 4, x + sub_x(p, q->size, pw * 2) / 2,
                           1, CT_A_SER0 + (int)(k % CT_A_NSERIES), m);
        }
    free(g.dots);
    free(g.owner);
}

void ct_view_plot_draw(struct ct_canvas *c, struct ct_rect r, struct ct_ui *ui,
                       const struct ct_snapshot *s)
{
    ui->n_rows = ui->body_rows = r.h;
    int at = 0, count = 0;
    const char *coll = pick_coll(ui, s, &at, &count);
    if (!coll) {
        ct_canvas_text(c, r.y + 1, r.x + 1, r.w - 2, CT_A_DIM,
                       "no results yet: points of a run or sweep appear here as they are "
                       "measured");
        return;
    }
    struct plot p;
    build(s, coll, &p);
    int x = r.x + 1;
    int t = ct_canvas_printf(c, r.y, x, r.w - 2, CT_A_HEAD, "%s", coll);
    t += ct_canvas_text(c, r.y, x + t, r.w - 2 - t, CT_A_NORMAL,
                        ": bus bandwidth (GB/s) vs message size");
    if (count > 1)
        ct_canvas_printf(c, r.y, x + t, r.w - 2 - t, CT_A_DIM, "   [%d/%d, %s collective]", at + 1,
                         count, c->utf8 ? "←/→" : "Left/Right");
    int lx = x;
    for (size_t k = 0; k < p.nser && lx < r.x + r.w - 4; k++) {
        int attr = CT_A_SER0 + (int)(k % CT_A_NSERIES);
        lx += ct_canvas_printf(c, r.y + 1, lx, r.x + r.w - lx, attr, "%c %s", (char)('a' + k),
                               p.ser[k].algo);
        lx += 2;
    }
    int ph = r.h - 5, pw = r.w - 10;
    if (ph < 3 || pw < 10) {
        ct_canvas_text(c, r.y + 2, x, r.w - 2, CT_A_DIM, "terminal too small for the plot");
        release(&p);
        return;
    }
    int px = r.x + 9, py = r.y + 2;
    draw_axes(c, &p, py, px, pw, ph);
    draw_plot(c, s, &p, py, px, pw, ph);
    char line[512] = "", a[16], b[16];
    size_t l = 0;
    for (size_t i = 0; i < p.ncross && l < sizeof line; i++)
        l += (size_t)snprintf(line + l, sizeof line - l, "%s%s %s %s at %s..%s", i ? ", " : "",
                              p.cross[i].from, c->utf8 ? "→" : "->", p.cross[i].to,
                              ct_fmt_size(p.cross[i].lo, true, a, sizeof a),
                              ct_fmt_size(p.cross[i].hi, true, b, sizeof b));
    ct_canvas_printf(c, r.y + r.h - 1, x, r.w - 2, p.ncross ? CT_A_WARN : CT_A_DIM, "%s%s",
                     p.ncross ? "crossovers: " : "no settled crossover yet", line);
    release(&p);
}

bool ct_view_plot_key(struct ct_ui *ui, int key, const struct ct_snapshot *s)
{
    int at = 0, count = 0;
    if (key != CT_KEY_LEFT && key != CT_KEY_RIGHT && key != 'c')
        return false;
    pick_coll(ui, s, &at, &count);
    if (count)
        ui->left = (at + (key == CT_KEY_LEFT ? count - 1 : 1)) % count;
    return true;
}
