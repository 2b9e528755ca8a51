/* SPDX-License-Identifier: MIT */
/* The resident path's peer buffers: handles exchanged, mapped once, kept while unchanged. */
#include "resident.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAPS (2 * CT_RESIDENT_BASES) /* a peer's handles mapped here: its current ones, and
                                        those of buffers it replaced, until unmapped */

struct ct_resident_map {
    struct ct_mem_ipc h[MAPS];
    void *p[MAPS]; /* NULL: slot free */
    bool used[MAPS];
};

/* What a rank sends: its handles, where the executor's buffers lie in them, its status. */
struct rec {
    int32_t rc;
    int32_t ok;                 /* the rank can run the point in place (mine->ok) */
    int32_t base[CT_BUF_COUNT]; /* index into h, -1: no such buffer */
    struct ct_mem_ipc h[CT_RESIDENT_BASES];
    int32_t has[CT_RESIDENT_BASES];
    uint64_t off[CT_BUF_COUNT], len[CT_BUF_COUNT];
    char msg[160];
};

void ct_resident_init(struct ct_resident *r, struct ct_mem *mem)
{
    memset(r, 0, sizeof *r);
    r->mem = mem;
}

static void unmap(struct ct_resident *r, int q, int k)
{
    struct ct_resident_map *m = &r->maps[q];
    ct_mem_ipc_close(r->mem, m->p[k], (size_t)m->h[k].bytes);
    m->p[k] = NULL;
}

void ct_resident_release(struct ct_resident *r)
{
    for (int q = 0; r->maps && q < r->size; q++)
        for (int k = 0; k < MAPS; k++)
            if (r->maps[q].p[k])
                unmap(r, q, k);
    free(r->maps);
    free(r->peer);
    struct ct_mem *mem = r->mem;
    memset(r, 0, sizeof *r);
    r->mem = mem;
}

/* This rank's record: handles of its bases, and each executor buffer's base and offset. */
static int describe(struct ct_resident *r, const struct ct_resident_mine *me, struct rec *out,
                    struct ct_err *err)
{
    memset(out, 0, sizeof *out);
    for (int k = 0; k < CT_RESIDENT_BASES; k++)
        if (me->base[k]) {
            CT_TRY(ct_mem_ipc_get(r->mem, me->base[k], me->cap[k], &out->h[k], err));
            out->has[k] = 1;
        }
    for (int i = 0; i < CT_BUF_COUNT; i++) {
        out->base[i] = -1;
        const char *p = me->buf[i];
        for (int k = 0; p && k < CT_RESIDENT_BASES; k++) {
            const char *b = me->base[k];
            if (b && p >= b && p + me->len[i] <= b + me->cap[k]) {
                out->base[i] = k;
                out->off[i] = (uint64_t)(p - b);
                out->len[i] = me->len[i];
                break;
            }
        }
        if (p && out->base[i] < 0)
            return ct_err_set(err, CT_EINVAL,
                              "resident buffers: executor buffer %d is in no shared buffer", i);
    }
    return 0;
}

/* Slot of peer q holding handle h, mapping it when new. */
static int map_of(struct ct_resident *r, int q, const struct ct_mem_ipc *h, struct ct_err *err)
{
    struct ct_resident_map *m = &r->maps[q];
    int free_k = -1;
    for (int k = 0; k < MAPS; k++) {
        if (m->p[k] && !memcmp(&m->h[k], h, sizeof *h)) {
            m->used[k] = true;
            return k;
        }
        if (!m->p[k] && free_k < 0)
            free_k = k;
    }
    if (free_k < 0) /* cannot be: at most CT_RESIDENT_BASES in use, as many stale */
        return ct_err_set(err, CT_EINVAL, "resident buffers: rank %d shares too many buffers", q);
    CT_TRY(ct_mem_ipc_open(r->mem, h, &m->p[free_k], err));
    m->h[free_k] = *h;
    m->used[free_k] = true;
    r->opened++;
    return free_k;
}

/* Map every peer of this host from its record; handles no longer sent are unmapped. */
static int map_peers(struct ct_resident *r, struct ct_comm *c, const struct rec *all,
                     struct ct_err *err)
{
    for (int q = 0; q < c->size; q++) {
        struct ct_resident_peer *pq = &r->peer[q];
        memset(pq, 0, sizeof *pq);
        struct ct_resident_map *m = &r->maps[q];
        memset(m->used, 0, sizeof m->used);
        bool here = q != c->rank && (!c->boot->hosts || !strcmp(c->boot->hosts[q], c->boot->host));
        int slot[CT_RESIDENT_BASES];
        for (int k = 0; here && k < CT_RESIDENT_BASES; k++) {
            slot[k] = -1;
            if (all[q].has[k] && (slot[k] = map_of(r, q, &all[q].h[k], err)) < 0)
                return ct_err_wrap(err, "rank %d (%s): ", q,
                                   c->boot->hosts ? c->boot->hosts[q] : "?");
        }
        for (int i = 0; here && i < CT_BUF_COUNT; i++) {
            int k = all[q].base[i];
            if (k >= 0 && k < CT_RESIDENT_BASES && slot[k] >= 0) {
                pq->buf[i] = (char *)m->p[slot[k]] + all[q].off[i];
                pq->len[i] = all[q].len[i];
            }
        }
        for (int k = 0; k < MAPS; k++)
            if (m->p[k] && !m->used[k])
                unmap(r, q, k);
    }
    return 0;
}

/* Every rank's status: the first failure, named, on every rank (CT_EUNSUPP: the buffers
 * cannot be shared; a failing allgather is the transport's own error). */
static int agree(struct ct_comm *c, int rc, const struct ct_err *mine, struct ct_err *err)
{
    struct {
        int32_t rc;
        char msg[200];
    } me = {rc, ""}, *all = ct_xcalloc((size_t)c->size, sizeof *all);
    if (rc < 0)
        snprintf(me.msg, sizeof me.msg, "%.199s", mine->msg);
    int x = ct_boot_allgather(c->boot, &me, sizeof me, all, err);
    for (int q = 0; x == 0 && q < c->size; q++)
        if (all[q].rc < 0) {
            x = ct_err_set(err, CT_EUNSUPP, "rank %d (%s): %s", q,
                           c->boot->hosts ? c->boot->hosts[q] : "?", all[q].msg);
            break;
        }
    free(all);
    return x;
}

int ct_resident_exchange(struct ct_resident *r, struct ct_comm *c,
                         const struct ct_resident_mine *mine, struct ct_err *err)
{
    if (!r->peer) {
        r->size = c->size;
        r->peer = ct_xcalloc((size_t)c->size, sizeof *r->peer);
        r->maps = ct_xcalloc((size_t)c->size, sizeof *r->maps);
    }
    struct rec me, *all = ct_xcalloc((size_t)c->size, sizeof *all);
    struct ct_err e = {0};
    memset(&me, 0, sizeof me);
    if (mine->ok && (me.rc = describe(r, mine, &me, &e)) < 0)
        snprintf(me.msg, sizeof me.msg, "%.159s", e.msg);
    me.ok = mine->ok;
    int rc = ct_boot_allgather(c->boot, &me, sizeof me, all, err), declined = 0;
    r->exchanges++;
    for (int q = 0; rc == 0 && q < c->size; q++) {
        declined |= !all[q].ok;
        if (all[q].rc < 0) /* a handle not made: cannot share (an executor buffer outside
                              the shared ones is a bug, told as such) */
            rc =
                ct_err_set(err, all[q].rc == CT_EINVAL ? CT_EINVAL : CT_EUNSUPP, "rank %d (%s): %s",
                           q, c->boot->hosts ? c->boot->hosts[q] : "?", all[q].msg);
    }
    if (rc == 0 && declined) { /* not this point: nothing mapped, nothing let go */
        free(all);
        return 1;
    }
    if (rc == 0) { /* mapping is local: every rank learns whether every rank could */
        struct ct_err m = {0};
        rc = agree(c, map_peers(r, c, all, &m), &m, err);
    }
    free(all);
    return rc;
}
