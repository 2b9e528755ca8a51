/* SPDX-License-Identifier: MIT */
/*
 * The TUI's screen model: a grid of one-column cells (a UTF-8 character and a style) that
 * views draw into, and terminal-independent key codes. tui/screen.c copies a canvas to the
 * terminal; tests dump it as text.
 */
#ifndef CT_CANVAS_H
#define CT_CANVAS_H

#include <stdbool.h>
#include <stddef.h>

/* Styles; tui/screen.c maps them to colours, or to bold/reverse/dim under NO_COLOR. */
enum ct_attr {
    CT_A_NORMAL,
    CT_A_TITLE,  /* title bar */
    CT_A_TAB,    /* view tabs */
    CT_A_TAB_ON, /* the current view's tab */
    CT_A_HEAD,   /* column headers */
    CT_A_SEL,    /* selected row */
    CT_A_DIM,    /* gone, unknown, axes */
    CT_A_GOOD,   /* link up, utilization bar */
    CT_A_WARN,   /* link down, high utilization */
    CT_A_BAD,    /* errors, saturation */
    CT_A_KEY,    /* key names in the footer and help */
    CT_A_HEAT0,  /* heat grid, idle .. busy */
    CT_A_HEAT1,
    CT_A_HEAT2,
    CT_A_HEAT3,
    CT_A_HEAT4,
    CT_A_SER0, /* plot series */
    CT_A_SER1,
    CT_A_SER2,
    CT_A_SER3,
    CT_A_SER4,
    CT_A_SER5,
    CT_A_COUNT
};
#define CT_A_NSERIES 6

/* Keys: printable ASCII as themselves, the rest here. */
enum ct_key {
    CT_KEY_NONE = -1,
    CT_KEY_TAB = 9,
    CT_KEY_ENTER = 10,
    CT_KEY_CTRL_L = 12,
    CT_KEY_ESC = 27,
    CT_KEY_BACKSPACE = 127,
    CT_KEY_UP = 0x1000,
    CT_KEY_DOWN,
    CT_KEY_LEFT,
    CT_KEY_RIGHT,
    CT_KEY_PGUP,
    CT_KEY_PGDN,
    CT_KEY_HOME,
    CT_KEY_END,
    CT_KEY_BTAB,
    CT_KEY_F1,
    CT_KEY_RESIZE,
};

struct ct_cell {
    char ch[5]; /* one UTF-8 character, NUL-terminated */
    unsigned char attr;
};

struct ct_canvas {
    int rows, cols;
    bool utf8; /* false: draw with ASCII only */
    struct ct_cell *cell;
};

void ct_canvas_init(struct ct_canvas *c, int rows, int cols, bool utf8);
void ct_canvas_resize(struct ct_canvas *c, int rows, int cols); /* contents cleared */
void ct_canvas_release(struct ct_canvas *c);
void ct_canvas_clear(struct ct_canvas *c);

/* Write s at (y, x), at most maxw cells (maxw < 0: to the right edge), clipped to the
 * canvas. Control characters and, on an ASCII canvas, non-ASCII characters become '?'.
 * Returns the cells written. */
int ct_canvas_text(struct ct_canvas *c, int y, int x, int maxw, int attr, const char *s);
int ct_canvas_printf(struct ct_canvas *c, int y, int x, int maxw, int attr, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));
/* Same, right-aligned in a field of width w starting at x. */
int ct_canvas_rtext(struct ct_canvas *c, int y, int x, int w, int attr, const char *s);
/* Fill w cells with one character. */
void ct_canvas_fill(struct ct_canvas *c, int y, int x, int w, int attr, const char *ch);
/* Change the style of w cells, keeping their characters. */
void ct_canvas_paint(struct ct_canvas *c, int y, int x, int w, int attr);
const struct ct_cell *ct_canvas_at(const struct ct_canvas *c, int y, int x); /* NULL outside */

/* The canvas as text: one line per row, trailing blanks removed. Caller frees with free(). */
char *ct_canvas_dump(const struct ct_canvas *c);

/* Cells a UTF-8 string takes (one per character). */
int ct_text_width(const char *s);

#endif
