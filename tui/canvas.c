/* SPDX-License-Identifier: MIT */
/* The cell grid views draw into: UTF-8 text, clipping, styles, text dumps for tests. */
#include "canvas.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/err.h"

void ct_canvas_init(struct ct_canvas *c, int rows, int cols, bool utf8)
{
    memset(c, 0, sizeof *c);
    c->utf8 = utf8;
    ct_canvas_resize(c, rows, cols);
}

void ct_canvas_resize(struct ct_canvas *c, int rows, int cols)
{
    rows = rows > 0 ? rows : 1;
    cols = cols > 0 ? cols : 1;
    if (rows != c->rows || cols != c->cols) {
        free(c->cell);
        c->cell = ct_xcalloc((size_t)rows * (size_t)cols, sizeof *c->cell);
        c->rows = rows;
        c->cols = cols;
    }
    ct_canvas_clear(c);
}

void ct_canvas_release(struct ct_canvas *c)
{
    free(c->cell);
    memset(c, 0, sizeof *c);
}

void ct_canvas_clear(struct ct_canvas *c)
{
    for (int i = 0; i < c->rows * c->cols; i++) {
        c->cell[i].ch[0] = ' ';
        c->cell[i].ch[1] = 0;
        c->cell[i].attr = CT_A_NORMAL;
    }
}

/* Length of the UTF-8 sequence starting at s (1 for a stray byte); *ok when well formed. */
static int seq_len(const unsigned char *s, bool *ok)
{
    int n = s[0] < 0x80             ? 1
            : (s[0] & 0xe0) == 0xc0 ? 2
            : (s[0] & 0xf0) == 0xe0 ? 3
            : (s[0] & 0xf8) == 0xf0 ? 4
                                    : 0;
    *ok = n > 0;
    if (!n)
        return 1;
    for (int i = 1; i < n; i++)
        if ((s[i] & 0xc0) != 0x80) {
            *ok = false;
            return i;
        }
    return n;
}

int ct_text_width(const char *s)
{
    int w = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p; w++) {
        bool ok;
        p += seq_len(p, &ok);
    }
    return w;
}

static struct ct_cell *cell(struct ct_canvas *c, int y, int x)
{
    return y >= 0 && y < c->rows && x >= 0 && x < c->cols ? &c->cell[y * c->cols + x] : NULL;
}

const struct ct_cell *ct_canvas_at(const struct ct_canvas *c, int y, int x)
{
    return y >= 0 && y < c->rows && x >= 0 && x < c->cols ? &c->cell[y * c->cols + x] : NULL;
}

int ct_canvas_text(struct ct_canvas *c, int y, int x, int maxw, int attr, const char *s)
{
    int limit = maxw < 0 ? c->cols - x : maxw, n = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p && n < limit; n++) {
        bool ok;
        int l = seq_len(p, &ok);
        struct ct_cell *e = cell(c, y, x + n);
        if (e) {
            if (!ok || (l > 1 && !c->utf8) || (l == 1 && (*p < 0x20 || *p == 0x7f))) {
                e->ch[0] = *p == '\t' ? ' ' : '?';
                e->ch[1] = 0;
            } else {
                memcpy(e->ch, p, (size_t)l);
                e->ch[l] = 0;
            }
            e->attr = (unsigned char)attr;
        }
        p += l;
    }
    return n;
}

int ct_canvas_printf(struct ct_canvas *c, int y, int x, int maxw, int attr, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    return ct_canvas_text(c, y, x, maxw, attr, buf);
}

int ct_canvas_rtext(struct ct_canvas *c, int y, int x, int w, int attr, const char *s)
{
    int tw = ct_text_width(s);
    return ct_canvas_text(c, y, x + (tw < w ? w - tw : 0), w, attr, s);
}

void ct_canvas_fill(struct ct_canvas *c, int y, int x, int w, int attr, const char *ch)
{
    for (int i = 0; i < w; i++)
        ct_canvas_text(c, y, x + i, 1, attr, ch);
}

void ct_canvas_paint(struct ct_canvas *c, int y, int x, int w, int attr)
{
    for (int i = 0; i < w; i++) {
        struct ct_cell *e = cell(c, y, x + i);
        if (e)
            e->attr = (unsigned char)attr;
    }
}

char *ct_canvas_dump(const struct ct_canvas *c)
{
    size_t cap = (size_t)c->rows * ((size_t)c->cols * 4 + 1) + 1, len = 0;
    char *out = ct_xmalloc(cap);
    for (int y = 0; y < c->rows; y++) {
        size_t keep = len;
        for (int x = 0; x < c->cols; x++) {
            const char *ch = c->cell[y * c->cols + x].ch;
            size_t l = strlen(ch);
            memcpy(out + len, ch, l);
            len += l;
            if (strcmp(ch, " "))
                keep = len;
        }
        len = keep;
        out[len++] = '\n';
    }
    out[len] = 0;
    return out;
}
