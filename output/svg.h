/* SPDX-License-Identifier: MIT */
/*
 * Internal to output/: a growable text buffer with HTML/XML escaping, byte-size formatting,
 * and an inline-SVG plot of bus bandwidth against message size (log2 x axis).
 */
#ifndef CT_SVG_H
#define CT_SVG_H

#include <stdbool.h>
#include <stddef.h>

/* Text buffer: p is NUL-terminated whenever len > 0. Allocation aborts on OOM. */
struct ct_sbuf {
    char *p;
    size_t len, cap;
};

void ct_sbuf_init(struct ct_sbuf *b);
void ct_sbuf_release(struct ct_sbuf *b);
void ct_sbuf_putn(struct ct_sbuf *b, const char *s, size_t n);
void ct_sbuf_puts(struct ct_sbuf *b, const char *s);
void ct_sbuf_printf(struct ct_sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Append s (at most max bytes, stops at NUL) escaped for HTML text and attribute values:
 * & < > " ' become entities, other control characters become '?'. */
void ct_sbuf_escn(struct ct_sbuf *b, const char *s, size_t max);
void ct_sbuf_esc(struct ct_sbuf *b, const char *s);

/* "8 B", "1 KiB", "48.8 KiB", "256 MiB"; non-finite or negative: "?". */
void ct_svg_fmt_bytes(char *buf, size_t len, double bytes);
/* Fixed palette (12 colours): style i -> colour i % 12, marker shape i % 5. */
const char *ct_svg_color(int style);

struct ct_svg_point {
    double size;         /* bytes; <= 0 or non-finite: not drawn */
    double bw;           /* GB/s; non-finite: not drawn (the line breaks there) */
    double bw_lo, bw_hi; /* 95% CI in GB/s; non-finite: no whisker */
    bool hollow;         /* pruned point */
    char tip[320];       /* hover text (plain text, escaped when drawn) */
};

/* One line: points sorted by size. */
struct ct_svg_series {
    const char *name;
    int style;
    const struct ct_svg_point *pts;
    int npts;
};

/* A shaded size range [lo, hi) bytes; hi may be INFINITY. */
struct ct_svg_band {
    double lo, hi;
    const char *label;
    int style;
    bool tie;        /* hatched */
    const char *tip; /* hover text, may be NULL */
};

/* A vertical dashed line at a threshold, labelled with its size. */
struct ct_svg_mark {
    double size;
    bool minor; /* the parameters change but the algorithm does not: lighter line */
};

/* A strip under the x axis, one column per size: the chosen algorithm's colour and the
 * winning parameter values, aligned with the plot's sizes. */
#define CT_SVG_STRIP_ROWS 8
struct ct_svg_strip_col {
    double size; /* bytes, > 0 */
    int style;   /* colour of the chosen algorithm; < 0: none chosen */
    bool tie;
    char val[CT_SVG_STRIP_ROWS][16]; /* short values; "" = not applicable */
    char tip[320];
};

struct ct_svg_strip {
    const char *rows[CT_SVG_STRIP_ROWS]; /* row labels */
    int nrows;
    const char *note; /* one line under the rows (values that never change), may be NULL */
    const struct ct_svg_strip_col *cols;
    int ncols;
};

struct ct_svg_plot {
    const char *id;    /* unique in the document: prefixes clip and pattern ids */
    const char *title; /* drawn at the top left */
    const struct ct_svg_series *series;
    int nseries;
    const struct ct_svg_band *bands;
    int nbands;
    const struct ct_svg_mark *marks;
    int nmarks;
    const struct ct_svg_strip *strip; /* NULL: none */
};

/* Append one <svg> element. With no point of positive size it draws a framed note instead. */
void ct_svg_size_plot(struct ct_sbuf *b, const struct ct_svg_plot *p);

#endif
