/* SPDX-License-Identifier: MIT */
#include "launcherr.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../lib/err.h"

#define NO_BOX ((size_t)-1)
#define BOX_MAX (64 * 1024) /* a box this long is passed on as it is */

/* Open MPI's help messages are boxed in lines of dashes; these boxes are its launcher's own
 * about a job whose process exited nonzero (help-errmgr-base.txt, help-orterun.txt). */
static const char *const dropped[] = {
    "terminated normally, but",
    "exited with non-zero status, thus causing",
};

void ct_launcherr_init(struct ct_launcherr *e, int fd)
{
    *e = (struct ct_launcherr){.fd = fd, .box = NO_BOX};
}

static void pass(struct ct_launcherr *e, const char *s, size_t len)
{
    if (!len)
        return;
    e->any = true;
    if (!strncmp(s, "colltune", 8))
        e->ours = true;
    while (len) {
        ssize_t w = write(e->fd, s, len);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return;
        s += w;
        len -= (size_t)w;
    }
}

static bool dashes(const char *s, size_t len)
{
    if (len < 20)
        return false;
    for (size_t i = 0; i < len; i++)
        if (s[i] != '-')
            return false;
    return true;
}

static bool box_dropped(const char *s, size_t len)
{
    for (size_t i = 0; i < sizeof dropped / sizeof dropped[0]; i++) {
        size_t k = strlen(dropped[i]);
        for (size_t j = 0; j + k <= len; j++)
            if (!memcmp(s + j, dropped[i], k))
                return true;
    }
    return false;
}

void ct_launcherr_put(struct ct_launcherr *e, const char *s, size_t len)
{
    if (e->n + len + 1 > e->cap) {
        e->cap = e->n + len + 4096;
        e->buf = ct_xrealloc(e->buf, e->cap);
    }
    memcpy(e->buf + e->n, s, len);
    e->n += len;
    for (char *nl; (nl = memchr(e->buf + e->line, '\n', e->n - e->line));) {
        size_t at = e->line, end = (size_t)(nl - e->buf) + 1;
        bool d = dashes(e->buf + at, end - 1 - at);
        e->line = end;
        if (e->box == NO_BOX && d) {
            e->box = at;
        } else if (e->box != NO_BOX && (d || end - e->box > BOX_MAX)) {
            if (!d || !box_dropped(e->buf + e->box, end - e->box))
                pass(e, e->buf + e->box, end - e->box);
            e->box = NO_BOX;
        } else if (e->box == NO_BOX) {
            pass(e, e->buf + at, end - at);
        }
    }
    size_t keep = e->box != NO_BOX ? e->box : e->line; /* what is passed or dropped: before */
    memmove(e->buf, e->buf + keep, e->n - keep);
    e->n -= keep;
    e->line -= keep;
    if (e->box != NO_BOX)
        e->box = 0;
}

void ct_launcherr_end(struct ct_launcherr *e)
{
    pass(e, e->buf, e->n);
    free(e->buf);
    e->buf = NULL;
    e->n = e->cap = e->line = 0;
    e->box = NO_BOX;
}
