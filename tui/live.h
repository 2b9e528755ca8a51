/* SPDX-License-Identifier: MIT */
/*
 * The live display of a running job (run, sweep): on the root, the screen (--tui) or, on a
 * terminal, one progress line on stderr redrawn in place; with --tui every rank also
 * samples its NICs for the root's cluster view. One piece for every subcommand that runs
 * collectives, so they show progress alike.
 */
#ifndef CT_LIVE_H
#define CT_LIVE_H

#include <stdbool.h>
#include <stddef.h>

#include "../transport/boot.h"
#include "../tune/sweep.h"
#include "tui.h"

struct ct_live {
    const char *cmd;                        /* "sweep": warnings say "colltune sweep: ..." */
    struct ct_tui *tui;                     /* the root's screen, when open */
    struct ct_monitor *screen_mon, *gather_mon;
    bool tty;                               /* the root's stderr is a terminal */
    bool sample;                            /* NIC samples for the cluster view (--tui) */
    double last_draw;                       /* seconds, of the progress line */
    int64_t t0;                             /* ct_live_sizes: the start, */
    double done_bytes;                      /* and the sizes done so far */
    long done;
};

/* Every rank: root draws (the screen when want_tui, else the progress line on a terminal);
 * want_tui on every rank: NIC samples for ct_live_between. A screen that cannot open
 * leaves a warning and the progress line. */
void ct_live_open(struct ct_live *l, const char *cmd, const char *title, bool root,
                  bool want_tui);
/* What the job is doing now. */
void ct_live_progress(struct ct_live *l, const struct ct_progress *p);
/* run's progress at sizes[i] of its nsizes (collective, algorithm, parameters): the points
 * done and the time left are estimated by bytes, since time grows with the size. */
void ct_live_sizes(struct ct_live *l, const char *coll, const char *algo, const char *params,
                   const uint64_t *sizes, size_t nsizes, size_t i);
/* The same from a sweep's progress report. */
void ct_live_sweep_progress(struct ct_live *l, const struct ct_sweep_progress *p);
/* A measured point for the plot. */
void ct_live_point(struct ct_live *l, const char *coll, const char *algo, uint64_t size,
                   double busbw);
/* A warning: in the screen's log while it is open, else on stderr (after the progress
 * line is erased). */
void ct_live_warn(struct ct_live *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Every rank between two steps: NIC samples to the root's cluster view. True when q was
 * pressed (every rank learns it from the same gather, so all stop at the same step). */
bool ct_live_between(struct ct_live *l, struct ct_boot *boot);
/* q was pressed: the screen is gone, the job goes on with the progress line. */
bool ct_live_quit(struct ct_live *l);
/* End the display before anything is printed: the screen closes (terminal restored) or
 * the progress line is erased. Idempotent. */
void ct_live_close(struct ct_live *l);

#endif
