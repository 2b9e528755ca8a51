/* SPDX-License-Identifier: MIT */
/*
 * The live screen of `colltune top`, `run --tui` and `sweep --tui`. A thread samples the
 * NICs every interval, merges what the caller reported (progress, points, the cluster grid,
 * log lines, topology text), draws the current view and handles keys, until q, N frames,
 * or close. Every ct_tui_* call is thread-safe and cheap (a copy under a mutex), so a
 * sweep's progress callback can call them directly.
 */
#ifndef CT_TUI_H
#define CT_TUI_H

#include <stdbool.h>
#include <stdint.h>

#include "../monitor/monitor.h"
#include "../lib/err.h"

/* Fill the sampled part of snap (NICs, host, time). 0: a new sample; 1: no more samples
 * (a replay ended; the screen keeps the last one); < 0: failure (the screen closes). */
typedef int (*ct_tui_sample_fn)(void *arg, struct ct_snapshot *snap, struct ct_err *err);

struct ct_tui_cfg {
    const char *title;       /* "colltune sweep" */
    const char *first_view;  /* "nics", "progress", ... (NULL: nics) */
    int interval_ms;         /* sampling period (<= 0: 1000) */
    long max_frames;         /* stop after this many samples (0: until q or close) */
    ct_tui_sample_fn sample; /* NULL: no sampling (the caller's data only) */
    void *sample_arg;        /* borrowed until ct_tui_close */
};

struct ct_tui;

/*
 * Take over the terminal and start the screen thread. Fails (CT_EIO, CT_EUNSUPP) without a
 * usable terminal; nothing is left changed then.
 */
int ct_tui_open(struct ct_tui **out, const struct ct_tui_cfg *cfg, struct ct_err *err);

/* What the run or sweep is doing now (copied). */
void ct_tui_progress(struct ct_tui *t, const struct ct_progress *p);
/* A measured point for the plot (best busbw per collective, algorithm and size is kept). */
void ct_tui_point(struct ct_tui *t, const char *coll, const char *algo, uint64_t size,
                  double busbw);
/* The node x NIC grid from ct_monitor_gather (copied). */
void ct_tui_cluster(struct ct_tui *t, const struct ct_cluster *c);
/* A line for the log view (the last 500 are kept). */
void ct_tui_log(struct ct_tui *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Text for the topology view (the probe's views, copied). */
void ct_tui_topology(struct ct_tui *t, const char *text);

/* The person pressed q (the screen is already closed and the terminal restored). */
bool ct_tui_quit_requested(struct ct_tui *t);
/* Block until the screen ends by itself: q, max_frames, or a sample failure. */
void ct_tui_wait(struct ct_tui *t);
/*
 * Stop the thread, restore the terminal, free everything (NULL is a no-op). Returns 0, or
 * the sample failure that ended the screen (with err).
 */
int ct_tui_close(struct ct_tui *t, struct ct_err *err);

#endif
