/* SPDX-License-Identifier: MIT */
/* Drawing helpers shared by the views: number formats, bars, sparklines, filtering. */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ui.h"

const char *ct_fmt_gbps(double v, char *buf, size_t len)
{
    if (v < 0 || !isfinite(v))
        snprintf(buf, len, "-");
    else
        snprintf(buf, len, "%.*f", v < 100 ? 2 : v < 1000 ? 1 : 0, v);
    return buf;
}

const char *ct_fmt_rate(double gbps, char *buf, size_t len)
{
    if (!(gbps > 0))
        snprintf(buf, len, "-");
    else if (gbps < 1)
        snprintf(buf, len, "%.0fM", gbps * 1000);
    else if (fabs(gbps - round(gbps)) < 0.05)
        snprintf(buf, len, "%.0fG", gbps);
    else
        snprintf(buf, len, "%.1fG", gbps);
    return buf;
}

const char *ct_fmt_si(double v, char *buf, size_t len)
{
    if (v < 0 || !isfinite(v))
        snprintf(buf, len, "-");
    else if (v < 1000)
        snprintf(buf, len, "%.0f", v);
    else if (v < 1e6)
        snprintf(buf, len, "%.1fk", v / 1e3);
    else if (v < 1e9)
        snprintf(buf, len, "%.2fM", v / 1e6);
    else
        snprintf(buf, len, "%.2fG", v / 1e9);
    return buf;
}

const char *ct_fmt_bytes(uint64_t b, char *buf, size_t len)
{
    static const char *const unit[] = {"B", "kB", "MB", "GB", "TB", "PB", "EB"};
    double v = (double)b;
    int u = 0;
    while (v >= 1000 && u < 6) {
        v /= 1000;
        u++;
    }
    snprintf(buf, len, u ? "%.2f %s" : "%.0f %s", v, unit[u]);
    return buf;
}

const char *ct_fmt_size(uint64_t b, bool compact, char *buf, size_t len)
{
    static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    static const char *const cunit[] = {"", "K", "M", "G", "T", "P", "E"};
    int u = 0;
    double v = (double)b;
    while (v >= 1024 && u < 6) {
        v /= 1024;
        u++;
    }
    bool exact = u == 0 || (b % (1ull << (10 * u))) == 0;
    if (compact)
        snprintf(buf, len, exact ? "%.0f%s" : "%.1f%s", v, cunit[u]);
    else if (exact)
        snprintf(buf, len, "%.0f %s", v, unit[u]);
    else
        snprintf(buf, len, "%.*f %s", v < 10 ? 2 : 1, v, unit[u]);
    return buf;
}

const char *ct_fmt_dur(double s, char *buf, size_t len)
{
    if (s < 0 || !isfinite(s)) {
        snprintf(buf, len, "-");
        return buf;
    }
    long t = (long)(s + 0.5);
    if (t >= 3600)
        snprintf(buf, len, "%ld:%02ld:%02ld", t / 3600, t / 60 % 60, t % 60);
    else
        snprintf(buf, len, "%ld:%02ld", t / 60, t % 60);
    return buf;
}

void ct_draw_bar(struct ct_canvas *c, int y, int x, int w, double frac, int attr)
{
    static const char *const eighth[] = {"", "▏", "▎", "▍", "▌", "▋", "▊", "▉"};
    if (w <= 0)
        return;
    if (!(frac > 0))
        frac = 0;
    if (frac > 1)
        frac = 1;
    int units = (int)lround(frac * w * 8);
    int full = units / 8, part = units % 8;
    for (int i = 0; i < w; i++) {
        const char *g = " ";
        if (i < full)
            g = c->utf8 ? "█" : "#";
        else if (i == full && part)
            g = c->utf8 ? eighth[part] : (part >= 4 ? "#" : " ");
        ct_canvas_text(c, y, x + i, 1, attr, g);
    }
}

void ct_draw_spark(struct ct_canvas *c, int y, int x, int w, const float *v, int n, double max,
                   int attr)
{
    static const char *const blocks[] = {"▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"};
    static const char ascii[] = "_.-~=+*#";
    int first = n > w ? n - w : 0; /* the newest w values; fewer fill from the left */
    for (int i = 0; i < w; i++) {
        int k = first + i;
        char a[2] = " ";
        const char *g = " ";
        if (k >= 0 && k < n && v[k] >= 0) {
            int lvl = max > 0 ? (int)(v[k] / max * 7.999) : 0;
            lvl = lvl < 0 ? 0 : lvl > 7 ? 7 : lvl;
            a[0] = ascii[lvl];
            g = c->utf8 ? blocks[lvl] : a;
        }
        ct_canvas_text(c, y, x + i, 1, attr, g);
    }
}

bool ct_ui_match(const char *hay, const char *needle)
{
    if (!needle || !needle[0])
        return true;
    size_t n = strlen(needle);
    for (const char *p = hay; *p; p++) {
        size_t i = 0;
        while (i < n && p[i] && tolower((unsigned char)p[i]) == tolower((unsigned char)needle[i]))
            i++;
        if (i == n)
            return true;
    }
    return false;
}

void ct_ui_clamp(int *top, int *sel, int n, int page)
{
    if (page < 1)
        page = 1;
    if (sel) {
        if (*sel >= n)
            *sel = n - 1;
        if (*sel < 0)
            *sel = 0;
        if (*sel < *top)
            *top = *sel;
        if (*sel >= *top + page)
            *top = *sel - page + 1;
    }
    if (*top > n - page)
        *top = n - page;
    if (*top < 0)
        *top = 0;
}

/* Draw lines[0..n) from ui->top[v] (follow: the last page), filter applied, sideways by
 * ui->left characters. */
void ct_draw_lines(struct ct_canvas *c, struct ct_rect r, struct ct_ui *ui, int v,
                   const char *const *lines, size_t n, bool follow)
{
    size_t *keep = ct_xcalloc(n ? n : 1, sizeof *keep), k = 0;
    for (size_t i = 0; i < n; i++)
        if (ct_ui_match(lines[i], ui->filter))
            keep[k++] = i;
    ui->n_rows = (int)k;
    ui->body_rows = r.h;
    int top = ui->top[v];
    if (follow && top < 0)
        top = (int)k - r.h; /* following the end */
    if (ui->left < 0)
        ui->left = 0;
    ct_ui_clamp(&top, NULL, (int)k, r.h);
    if (!follow || ui->top[v] >= 0)
        ui->top[v] = top;
    for (int i = 0; i < r.h && top + i < (int)k; i++) {
        const char *l = lines[keep[top + i]];
        /* skip ui->left characters (UTF-8 aware) */
        for (int s = 0; s < ui->left && *l; s++) {
            l++;
            while ((*l & 0xc0) == 0x80)
                l++;
        }
        ct_canvas_text(c, r.y + i, r.x + 1, r.w - 1, CT_A_NORMAL, l);
    }
    free(keep);
}
