/* SPDX-License-Identifier: MIT */
/* The live display of a running job: the screen or one progress line (see live.h). */
#include "live.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../lib/clock.h"
#include "../lib/parse.h"

void ct_live_open(struct ct_live *l, const char *cmd, const char *title, bool root,
                  bool want_tui)
{
    memset(l, 0, sizeof *l);
    l->cmd = cmd;
    l->tty = root && isatty(STDERR_FILENO);
    l->sample = want_tui;
    if (!root || !want_tui)
        return;
    l->screen_mon = ct_monitor_new(NULL);
    struct ct_tui_cfg cfg = {.title = title, .first_view = "progress",
                             .sample = ct_monitor_sample_cb, .sample_arg = l->screen_mon};
    struct ct_err err = {0};
    if (ct_tui_open(&l->tui, &cfg, &err) < 0) {
        ct_live_warn(l, "no live screen: %s", err.msg);
        ct_monitor_free(l->screen_mon);
        l->screen_mon = NULL;
    }
}

static void fmt_time(double s, char *buf, size_t len)
{
    int t = s > 0 ? (int)(s + 0.5) : 0;
    snprintf(buf, len, "%d:%02d", t / 60, t % 60);
}

/* The screen was closed by q: back to the progress line. */
static void drop_screen(struct ct_live *l)
{
    ct_tui_close(l->tui, NULL);
    ct_monitor_free(l->screen_mon);
    l->tui = NULL;
    l->screen_mon = NULL;
}

bool ct_live_quit(struct ct_live *l)
{
    return l->tui && ct_tui_quit_requested(l->tui);
}

void ct_live_progress(struct ct_live *l, const struct ct_progress *p)
{
    if (ct_live_quit(l))
        drop_screen(l);
    if (l->tui) {
        ct_tui_progress(l->tui, p);
        return;
    }
    double t = (double)ct_now_ns() * 1e-9;
    if (!l->tty || t - l->last_draw < 0.1)
        return;
    l->last_draw = t;
    char sz[32], el[16], left[16], tot[32] = "";
    fmt_time(p->elapsed_s, el, sizeof el);
    fmt_time(p->remaining_s, left, sizeof left);
    if (p->total > p->done)
        snprintf(tot, sizeof tot, "/~%ld", p->total);
    /* one line, short enough for 80 columns, redrawn in place */
    fprintf(stderr, "\r\033[K%s %s %s %s | %ld%s points | %s, ~%s left", p->phase, p->coll,
            p->algo, ct_bytes_str(p->size, sz, sizeof sz), p->done, tot, el, left);
    fflush(stderr);
}

void ct_live_sizes(struct ct_live *l, const char *coll, const char *algo, const char *params,
                   const uint64_t *sizes, size_t nsizes, size_t i)
{
    struct ct_progress p = {.cmd = "run", .size = sizes[i], .total = (long)nsizes};
    snprintf(p.coll, sizeof p.coll, "%s", coll);
    snprintf(p.algo, sizeof p.algo, "%s", algo);
    snprintf(p.params, sizeof p.params, "%.95s", params);
    double total_b = 0;
    for (size_t k = 0; k < nsizes; k++)
        total_b += (double)sizes[k];
    if (!l->t0)
        l->t0 = ct_now_ns();
    p.done = l->done++;
    p.elapsed_s = (double)(ct_now_ns() - l->t0) * 1e-9;
    p.remaining_s = l->done_bytes > 0 ? p.elapsed_s / l->done_bytes * (total_b - l->done_bytes)
                                      : -1;
    l->done_bytes += (double)p.size;
    ct_live_progress(l, &p);
}

void ct_live_sweep_progress(struct ct_live *l, const struct ct_sweep_progress *p)
{
    struct ct_progress q = {.cmd = "sweep", .size = p->size, .done = p->done, .total = p->total,
                            .elapsed_s = p->elapsed_s, .remaining_s = p->remaining_s};
    snprintf(q.phase, sizeof q.phase, "%s", p->phase);
    snprintf(q.coll, sizeof q.coll, "%s", ct_coll_name(p->coll));
    snprintf(q.algo, sizeof q.algo, "%s", p->algo);
    ct_live_progress(l, &q);
}

void ct_live_point(struct ct_live *l, const char *coll, const char *algo, uint64_t size,
                   double busbw)
{
    if (l->tui)
        ct_tui_point(l->tui, coll, algo, size, busbw);
}

static void erase_line(struct ct_live *l)
{
    if (l->tty && l->last_draw > 0)
        fputs("\r\033[K", stderr);
    l->last_draw = 0;
}

void ct_live_warn(struct ct_live *l, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (l->tui) {
        ct_tui_log(l->tui, "warning: %s", msg);
        return;
    }
    erase_line(l);
    fprintf(stderr, "colltune %s: warning: %s\n", l->cmd, msg);
}

bool ct_live_between(struct ct_live *l, struct ct_boot *boot)
{
    if (!l->sample)
        return false;
    if (!l->gather_mon)
        l->gather_mon = ct_monitor_new(NULL);
    bool stop = ct_live_quit(l);
    struct ct_cluster grid = {0};
    struct ct_err err = {0};
    if (ct_monitor_gather(l->gather_mon, boot, 1000000000LL, &stop,
                          boot->rank == 0 ? &grid : NULL, &err) == 0 &&
        l->tui)
        ct_tui_cluster(l->tui, &grid);
    ct_cluster_release(&grid);
    return stop;
}

void ct_live_close(struct ct_live *l)
{
    if (l->tui)
        drop_screen(l);
    erase_line(l);
    ct_monitor_free(l->gather_mon);
    l->gather_mon = NULL;
}
