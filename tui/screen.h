/* SPDX-License-Identifier: MIT */
/*
 * The terminal: the only part of colltune that talks curses. It shows canvases and reads
 * keys, and puts the terminal back on every way out (close, fatal errors through
 * ct_set_fatal_hook, and signals).
 */
#ifndef CT_SCREEN_H
#define CT_SCREEN_H

#include <stdbool.h>

#include "../lib/err.h"
#include "canvas.h"

struct ct_screen;

/*
 * Take over the terminal on standard input/output: alternate screen, no echo, keypad keys,
 * colours unless NO_COLOR is set (or the terminal has none), UTF-8 glyphs when the locale
 * says UTF-8. Installs handlers that restore the terminal on SIGINT, SIGTERM, SIGHUP,
 * SIGQUIT and crashes (then die of the same signal), and the fatal hook. CT_EUNSUPP when
 * built without ncurses, CT_EIO when there is no usable terminal.
 */
int ct_screen_open(struct ct_screen **out, struct ct_err *err);
/* Restore the terminal and the previous signal handlers; NULL is a no-op. */
void ct_screen_close(struct ct_screen *s);
void ct_screen_size(const struct ct_screen *s, int *rows, int *cols);
bool ct_screen_utf8(const struct ct_screen *s);
bool ct_screen_color(const struct ct_screen *s);
/* Show a canvas (full: repaint everything, after ^L or foreign output). */
void ct_screen_show(struct ct_screen *s, const struct ct_canvas *c, bool full);
/* The next key within timeout_ms (0: poll): a character or CT_KEY_*, CT_KEY_NONE if none. */
int ct_screen_key(struct ct_screen *s, int timeout_ms);

#endif
