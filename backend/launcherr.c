/* SPDX-License-Identifier: MIT */
#include "launcherr.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../lib/err.h"

#define LINE_MAX_HELD (64 * 1024) /* a line or a box to drop this long is passed on as it is */

enum { NONE, DASHES, DROPPING };

/* The first lines of the boxes left out (help-errmgr-base.txt, help-orterun.txt). */
static const char *const dropped[] = {
    "terminated normally, but",
    "exited with non-zero status, thus causing",
    "has exited due to process rank",
};

void ct_launcherr_init(struct ct_launcherr *e, int fd)
{
    *e = (struct ct_launcherr){.fd = fd};
}

static bool has(const char *s, size_t len, const char *w)
{
    return memmem(s, len, w, strlen(w)) != NULL;
}

static void add(char **b, size_t *n, size_t *cap, const char *s, size_t len)
{
    if (*n + len > *cap) {
        *cap = 2 * (*n + len) + 256;
        *b = ct_xrealloc(*b, *cap);
    }
    memcpy(*b + *n, s, len);
    *n += len;
}

/* Passes on s (whole lines, the last perhaps without its newline), one line at a time. */
static void pass(struct ct_launcherr *e, const char *s, size_t len)
{
    while (len) {
        const char *nl = memchr(s, '\n', len);
        size_t n = nl ? (size_t)(nl - s) + 1 : len;
        e->any = true;
        e->ours |= has(s, n, "colltune") && has(s, n, "error:");
        for (size_t off = 0; off < n;) {
            ssize_t w = write(e->fd, s + off, n - off);
            if (w < 0 && errno == EINTR)
                continue;
            if (w <= 0)
                break; /* nowhere to say it: what is left of the line is lost, not the job */
            off += (size_t)w;
        }
        s += n;
        len -= n;
    }
}

static bool dashes(const char *s, size_t len)
{
    len -= len && s[len - 1] == '\n';
    if (len < 20)
        return false;
    for (size_t i = 0; i < len; i++)
        if (s[i] != '-')
            return false;
    return true;
}

static void release_hold(struct ct_launcherr *e)
{
    pass(e, e->hold, e->nhold);
    e->nhold = 0;
    e->state = NONE;
}

/* One line (with its newline, but a last or overlong one). */
static void line(struct ct_launcherr *e, const char *s, size_t len)
{
    bool d = dashes(s, len);
    if (e->state == DROPPING) {
        add(&e->hold, &e->nhold, &e->chold, s, len);
        if (d) /* its closing line: the box is left out */
            e->nhold = 0, e->state = NONE;
        else if (e->nhold > LINE_MAX_HELD) /* never closed: not a box after all */
            release_hold(e);
        return;
    }
    if (e->state == DASHES) {
        bool drop = false;
        for (size_t i = 0; i < sizeof dropped / sizeof dropped[0]; i++)
            drop |= has(s, len, dropped[i]);
        if (drop) {
            add(&e->hold, &e->nhold, &e->chold, s, len);
            e->state = DROPPING;
            return;
        }
        release_hold(e);
    }
    if (d) {
        add(&e->hold, &e->nhold, &e->chold, s, len);
        e->state = DASHES;
    } else {
        pass(e, s, len);
    }
}

void ct_launcherr_put(struct ct_launcherr *e, const char *s, size_t len)
{
    while (len) {
        const char *nl = memchr(s, '\n', len);
        size_t n = nl ? (size_t)(nl - s) + 1 : len;
        if (!nl || e->npart) { /* a line begun before, or not yet ended */
            add(&e->part, &e->npart, &e->cpart, s, n);
            if (nl || e->npart > LINE_MAX_HELD) {
                line(e, e->part, e->npart);
                e->npart = 0;
            }
        } else {
            line(e, s, n);
        }
        s += n;
        len -= n;
    }
}

void ct_launcherr_end(struct ct_launcherr *e)
{
    if (e->npart)
        line(e, e->part, e->npart);
    if (e->state != NONE)
        release_hold(e);
    free(e->part);
    free(e->hold);
    e->part = e->hold = NULL;
    e->npart = e->cpart = e->nhold = e->chold = 0;
}
