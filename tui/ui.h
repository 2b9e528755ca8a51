/* SPDX-License-Identifier: MIT */
/*
 * The TUI without a terminal: UI state, the views table, the keys table and the drawing
 * helpers. Every draw function takes a snapshot and a canvas and does no I/O, so tests
 * render frames into a canvas and compare text dumps.
 */
#ifndef CT_UI_H
#define CT_UI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../monitor/monitor.h"
#include "canvas.h"

#define CT_UI_MAX_VIEWS 8

/* What the person looking at the screen chose; the snapshot is what there is to see. */
struct ct_ui {
    char title[48];            /* "colltune top" */
    int view;                  /* index in the views table */
    int top[CT_UI_MAX_VIEWS];  /* first body row shown, per view (-1: follow the end) */
    int sel;                   /* selected row (nics view) */
    int left;                  /* sideways offset; the plot's collective (-1: follow progress) */
    int sort[CT_UI_MAX_VIEWS]; /* sort column per view (index into the view's sorts) */
    bool rev;                  /* reverse the sort */
    char filter[48];           /* substring filter, "" none */
    bool editing;              /* typing a filter */
    char edit[48];
    bool help;
    int help_top; /* first help line shown */
    bool quit;
    bool redraw;     /* repaint the whole terminal (^L) */
    bool plain;      /* text output (top --once): no selection, no detail pane */
    bool ended;      /* the sample source has no more frames */
    char status[96]; /* transient footer message */
    /* set while drawing, read by key handling */
    int body_rows; /* rows the current view had on screen */
    int n_rows;    /* rows the current view has in all */
};

struct ct_rect {
    int y, x, h, w;
};

struct ct_view_def {
    const char *name; /* "nics" */
    int key;          /* '1' */
    const char *summary;
    const char *const *sorts; /* sort column names, NULL-terminated; NULL: no sorting */
    bool follow;              /* scrolled to the end, the view follows new rows (log) */
    bool select;              /* Up/Down move a selected row rather than scroll */
    void (*draw)(struct ct_canvas *c, struct ct_rect r, struct ct_ui *ui,
                 const struct ct_snapshot *s);
    /* View-specific keys; returns true when it used the key. NULL: none. */
    bool (*on_key)(struct ct_ui *ui, int key, const struct ct_snapshot *s);
};

const struct ct_view_def *ct_view_def_at(size_t i); /* NULL past the end */
int ct_view_def_find(const char *name);             /* -1 unknown */

/* One key binding; the help screen is generated from this table. */
struct ct_key_def {
    int key;           /* CT_KEY_* or a character */
    const char *label; /* "q", "Up Down"; NULL: an alias, not listed in the help */
    const char *help;  /* help screen text */
    const char *hint;  /* footer word, NULL: not in the footer */
    void (*act)(struct ct_ui *ui, const struct ct_snapshot *s);
};
const struct ct_key_def *ct_key_def_at(size_t i);

/* UI state with the given title, starting on view first (NULL or unknown: the first). */
void ct_ui_init(struct ct_ui *ui, const char *title, const char *first_view);
/* A whole frame: title bar, view tabs, the current view, footer, and help on top. */
void ct_ui_draw(struct ct_canvas *c, struct ct_ui *ui, const struct ct_snapshot *s);
/* Apply one key (filter typing, help, the keys table, then the view's own keys). */
void ct_ui_key(struct ct_ui *ui, int key, const struct ct_snapshot *s);
/* One view's body as plain text cols wide (top --once); caller frees with free(). */
char *ct_ui_render_text(const struct ct_snapshot *s, const char *view, int cols, bool utf8);

/* Help lines from the keys and views tables (caller frees each line and the array). */
size_t ct_ui_help_lines(bool utf8, char ***out);

/* ---- drawing helpers (tui/widgets.c) -------------------------------------------------- */

/* "12.34", "123.4", "1234"; "-" when unknown (< 0). */
const char *ct_fmt_gbps(double v, char *buf, size_t len);
/* Link rate "56G", "2.5G", "100G"; "-" unknown. */
const char *ct_fmt_rate(double gbps, char *buf, size_t len);
/* "950", "12.3k", "4.50M"; "-" unknown. */
const char *ct_fmt_si(double v, char *buf, size_t len);
/* "1.21 TB" (decimal units). */
const char *ct_fmt_bytes(uint64_t b, char *buf, size_t len);
/* "8 B", "64 KiB", "1.50 MiB"; compact: "8", "64K", "1.5M". */
const char *ct_fmt_size(uint64_t b, bool compact, char *buf, size_t len);
/* "1:05", "1:02:03"; "-" unknown. */
const char *ct_fmt_dur(double s, char *buf, size_t len);

/* A horizontal bar of w cells filled to frac (0..1) with eighth blocks (or '#'). */
void ct_draw_bar(struct ct_canvas *c, int y, int x, int w, double frac, int attr);
/* A sparkline of the last w values, oldest at the left (scaled to max; < 0 drawn as blank;
 * fewer than w values fill from the left). */
void ct_draw_spark(struct ct_canvas *c, int y, int x, int w, const float *v, int n, double max,
                   int attr);
/* Text lines[0..n) in r from ui->top[v] (follow: -1 shows the last page while it stays -1),
 * the filter applied, shifted left by ui->left characters. */
void ct_draw_lines(struct ct_canvas *c, struct ct_rect r, struct ct_ui *ui, int v,
                   const char *const *lines, size_t n, bool follow);
/* Case-insensitive substring test; an empty needle matches. */
bool ct_ui_match(const char *hay, const char *needle);
/* Keep the selection / scroll inside [0, n) with page rows visible. */
void ct_ui_clamp(int *top, int *sel, int n, int page);

/* Views (one file each). */
void ct_view_nics_draw(struct ct_canvas *c, struct ct_rect r, struct ct_ui *ui,
                       const struct ct_snapshot *s);
void ct_view_progress_draw(struct ct_canvas *c, struct ct_rect r, struct ct_ui *ui,
                           const struct ct_snapshot *s);
void ct_view_plot_draw(struct ct_canvas *c, struct ct_rect r, struct ct_ui *ui,
                       const struct ct_snapshot *s);
bool ct_view_plot_key(struct ct_ui *ui, int key, const struct ct_snapshot *s);
void ct_view_cluster_draw(struct ct_canvas *c, struct ct_rect r, struct ct_ui *ui,
                          const struct ct_snapshot *s);
void ct_view_topo_draw(struct ct_canvas *c, struct ct_rect r, struct ct_ui *ui,
                       const struct ct_snapshot *s);
void ct_view_log_draw(struct ct_canvas *c, struct ct_rect r, struct ct_ui *ui,
                      const struct ct_snapshot *s);

/* NIC rows of s in the nics view's order (filter and sort applied): indices into s->nic.
 * Returns the count; *out is new memory (free()). */
size_t ct_view_nics_order(const struct ct_ui *ui, const struct ct_snapshot *s, size_t **out);

#endif
