/* SPDX-License-Identifier: MIT */
/* The screen thread: sample, merge the caller's data, draw, dispatch keys; and the
 * thread-safe calls run and sweep use to feed it. */
#include "tui.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/clock.h"
#include "../lib/thread.h"
#include "screen.h"
#include "ui.h"

#define LOG_KEEP 500
#define KEY_POLL_MS 100
#define FIRST_RATE_NS 250000000LL

struct ct_tui {
    struct ct_tui_cfg cfg;
    char title[48], first[16];
    struct ct_screen *scr;
    pthread_t th;
    pthread_mutex_t mu;
    pthread_cond_t cond;
    /* under mu */
    bool stop, quit, running;
    struct ct_snapshot ext; /* what the caller reported */
    uint64_t gen;
    int rc;
    struct ct_err err;
    /* the thread's own */
    struct ct_snapshot snap;
    struct ct_ui ui;
    struct ct_canvas cv;
};

/* Overlay the caller's data on the sampled snapshot (only the parts the caller gave). */
static void merge(struct ct_snapshot *dst, const struct ct_snapshot *ext)
{
    if (ext->has_progress) {
        dst->has_progress = true;
        dst->progress = ext->progress;
    }
    if (ext->n_pts) {
        free(dst->pts);
        dst->pts = ct_xcalloc(ext->n_pts, sizeof *dst->pts);
        memcpy(dst->pts, ext->pts, ext->n_pts * sizeof *dst->pts);
        dst->n_pts = ext->n_pts;
    }
    if (ext->cluster.n_nodes)
        ct_cluster_copy(&dst->cluster, &ext->cluster);
    if (ext->n_log) {
        for (size_t i = 0; i < dst->n_log; i++)
            free(dst->log[i]);
        free(dst->log);
        dst->log = ct_xcalloc(ext->n_log, sizeof *dst->log);
        for (size_t i = 0; i < ext->n_log; i++)
            dst->log[i] = ct_xstrdup(ext->log[i]);
        dst->n_log = ext->n_log;
    }
    if (ext->topo) {
        free(dst->topo);
        dst->topo = ct_xstrdup(ext->topo);
    }
}

static void draw(struct ct_tui *t)
{
    int rows, cols;
    ct_screen_size(t->scr, &rows, &cols);
    if (rows != t->cv.rows || cols != t->cv.cols)
        ct_canvas_resize(&t->cv, rows, cols);
    ct_ui_draw(&t->cv, &t->ui, &t->snap);
    ct_screen_show(t->scr, &t->cv, t->ui.redraw);
    t->ui.redraw = false;
}

/* Keys until none is waiting (the first wait up to wait_ms); true when something changed. */
static bool keys(struct ct_tui *t, int wait_ms)
{
    bool changed = false;
    for (int k = ct_screen_key(t->scr, wait_ms); k != CT_KEY_NONE; k = ct_screen_key(t->scr, 0)) {
        changed = true;
        if (k != CT_KEY_RESIZE)
            ct_ui_key(&t->ui, k, &t->snap);
        if (t->ui.quit)
            break;
    }
    return changed;
}

static void finish(struct ct_tui *t, int rc, const struct ct_err *err)
{
    ct_screen_close(t->scr);
    t->scr = NULL;
    pthread_mutex_lock(&t->mu);
    t->running = false;
    t->quit = t->ui.quit;
    if (rc < 0) {
        t->rc = rc;
        t->err = *err;
    }
    pthread_cond_broadcast(&t->cond);
    pthread_mutex_unlock(&t->mu);
}

static void *loop(void *arg)
{
    struct ct_tui *t = arg;
    struct ct_err err = {0};
    int64_t period = (int64_t)t->cfg.interval_ms * 1000000, next = ct_now_ns();
    uint64_t seen = 0;
    long frames = 0;
    int rc = 0;
    for (;;) {
        pthread_mutex_lock(&t->mu);
        bool stop = t->stop;
        pthread_mutex_unlock(&t->mu);
        if (stop)
            break;
        bool dirty = false, sampled = false;
        int64_t now = ct_now_ns();
        if (t->cfg.sample && !t->ui.ended && now >= next) {
            rc = t->cfg.sample(t->cfg.sample_arg, &t->snap, &err);
            if (rc < 0)
                break;
            if (rc == 1)
                t->ui.ended = true;
            else
                frames++;
            next += period;
            if (next <= now)
                next = now + period;
            if (frames == 1 && period > FIRST_RATE_NS)
                next = now + FIRST_RATE_NS; /* rates on screen soon, not an interval later */
            dirty = sampled = true;
        }
        pthread_mutex_lock(&t->mu);
        if (sampled || t->gen != seen) {
            merge(&t->snap, &t->ext);
            seen = t->gen;
            dirty = true;
        }
        pthread_mutex_unlock(&t->mu);
        if (dirty)
            draw(t);
        if (t->cfg.max_frames && frames >= t->cfg.max_frames)
            break;
        int64_t left = (next - ct_now_ns()) / 1000000;
        int wait = !t->cfg.sample || t->ui.ended ? KEY_POLL_MS
                   : left < 0                    ? 0
                   : left > KEY_POLL_MS          ? KEY_POLL_MS
                                                 : (int)left;
        if (keys(t, wait) && !t->ui.quit)
            draw(t);
        if (t->ui.quit)
            break;
    }
    finish(t, rc, &err);
    return NULL;
}

int ct_tui_open(struct ct_tui **out, const struct ct_tui_cfg *cfg, struct ct_err *err)
{
    *out = NULL;
    struct ct_tui *t = ct_xcalloc(1, sizeof *t);
    t->cfg = *cfg;
    if (t->cfg.interval_ms <= 0)
        t->cfg.interval_ms = 1000;
    snprintf(t->title, sizeof t->title, "%s", cfg->title ? cfg->title : "colltune");
    snprintf(t->first, sizeof t->first, "%s", cfg->first_view ? cfg->first_view : "nics");
    t->cfg.title = t->title;
    t->cfg.first_view = t->first;
    int rc = ct_screen_open(&t->scr, err);
    if (rc < 0) {
        free(t);
        return rc;
    }
    pthread_mutex_init(&t->mu, NULL);
    pthread_cond_init(&t->cond, NULL);
    ct_snapshot_init(&t->ext);
    ct_snapshot_init(&t->snap);
    ct_ui_init(&t->ui, t->title, t->first);
    int rows, cols;
    ct_screen_size(t->scr, &rows, &cols);
    ct_canvas_init(&t->cv, rows, cols, ct_screen_utf8(t->scr));
    t->running = true;
    if (ct_thread_start(&t->th, loop, t) != 0) {
        ct_screen_close(t->scr);
        ct_canvas_release(&t->cv);
        pthread_mutex_destroy(&t->mu);
        pthread_cond_destroy(&t->cond);
        free(t);
        return ct_err_set(err, CT_EIO, "cannot start the screen thread");
    }
    *out = t;
    return 0;
}

void ct_tui_progress(struct ct_tui *t, const struct ct_progress *p)
{
    if (!t)
        return;
    pthread_mutex_lock(&t->mu);
    t->ext.has_progress = true;
    t->ext.progress = *p;
    t->gen++;
    pthread_mutex_unlock(&t->mu);
}

void ct_tui_point(struct ct_tui *t, const char *coll, const char *algo, uint64_t size, double busbw)
{
    if (!t)
        return;
    pthread_mutex_lock(&t->mu);
    ct_snapshot_point(&t->ext, coll, algo, size, busbw);
    t->gen++;
    pthread_mutex_unlock(&t->mu);
}

void ct_tui_cluster(struct ct_tui *t, const struct ct_cluster *c)
{
    if (!t)
        return;
    pthread_mutex_lock(&t->mu);
    ct_cluster_copy(&t->ext.cluster, c);
    t->gen++;
    pthread_mutex_unlock(&t->mu);
}

void ct_tui_log(struct ct_tui *t, const char *fmt, ...)
{
    if (!t)
        return;
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    pthread_mutex_lock(&t->mu);
    ct_snapshot_log(&t->ext, LOG_KEEP, line);
    t->gen++;
    pthread_mutex_unlock(&t->mu);
}

void ct_tui_topology(struct ct_tui *t, const char *text)
{
    if (!t)
        return;
    pthread_mutex_lock(&t->mu);
    free(t->ext.topo);
    t->ext.topo = text ? ct_xstrdup(text) : NULL;
    t->gen++;
    pthread_mutex_unlock(&t->mu);
}

bool ct_tui_quit_requested(struct ct_tui *t)
{
    if (!t)
        return false;
    pthread_mutex_lock(&t->mu);
    bool q = t->quit;
    pthread_mutex_unlock(&t->mu);
    return q;
}

void ct_tui_wait(struct ct_tui *t)
{
    if (!t)
        return;
    pthread_mutex_lock(&t->mu);
    while (t->running)
        pthread_cond_wait(&t->cond, &t->mu);
    pthread_mutex_unlock(&t->mu);
}

int ct_tui_close(struct ct_tui *t, struct ct_err *err)
{
    if (!t)
        return 0;
    pthread_mutex_lock(&t->mu);
    t->stop = true;
    pthread_mutex_unlock(&t->mu);
    pthread_join(t->th, NULL);
    int rc = t->rc;
    if (rc < 0 && err)
        *err = t->err;
    ct_snapshot_release(&t->ext);
    ct_snapshot_release(&t->snap);
    ct_canvas_release(&t->cv);
    pthread_mutex_destroy(&t->mu);
    pthread_cond_destroy(&t->cond);
    free(t);
    return rc;
}
