/* SPDX-License-Identifier: MIT */
/*
 * Launch settings that leave Open MPI's shared-memory transport out of a job. Its BTL (vader
 * in Open MPI 4.x, sm in 5.x) carves its fragments once out of each rank's segment
 * (btl_vader_segment_size, 4 MiB by default): at MPI_Init, free_list_num (8) of each kind,
 * inline (max_inline_send), eager (eager_limit) and, where the single copy is not XPMEM's,
 * max_send_size; later a fast box (fbox_size) for each of up to fbox_max peers. Where the
 * first of them do not fit, the BTL does not start, and Open MPI says nothing and carries the
 * ranks of a host over TCP loopback (with `--mca btl self,vader` MPI_Init fails: "An error
 * occurred in MPI_Init"). Measured with Open MPI 4.1.4 on 2 ranks (2026-12-05): an eager limit
 * of 1 MiB in an 8 MiB segment ran AllReduce at 512 KiB in 237 us, in a 9 MiB one in 54 us (4
 * MiB: 256 us; Open MPI's own eager limit with its own segment: 99 us). A setting that
 * raises what the segment must hold is checked against the segment in effect here, so that a
 * sweep, a search or an export does not measure or ship TCP in the shared memory's place.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/parse.h"
#include "libmod.h"

/* The BTL's variables the rule reads, after its prefix ("OMPI_MCA_btl_vader_") */
static const char *const shm_var[CT_LIBMOD_SHM_VARS] = {
    "segment_size",  "eager_limit", "max_send_size", "max_inline_send",
    "free_list_num", "fbox_size",   "fbox_max"};

unsigned long long ct_libmod_shm_need(const unsigned long long v[CT_LIBMOD_SHM_VARS])
{
    /* a fragment's header and alignment (mca_btl_vader_hdr_t, cache lines): at most this */
    const unsigned long long hdr = 128, fifo = 4096;
    unsigned long long per = v[CT_SHM_EAGER] + v[CT_SHM_MAX_SEND] + v[CT_SHM_INLINE] + 3 * hdr;
    return v[CT_SHM_FREE_LIST] * per + v[CT_SHM_FBOX_MAX] * v[CT_SHM_FBOX_SIZE] + fifo;
}

/* The BTL prefix of m's that name starts with ("OMPI_MCA_btl_vader_"), its length; 0 when none.
 */
static size_t shm_prefix(const struct ct_libmod *m, const char *name)
{
    const char *p = m && m->shm_prefix ? m->shm_prefix : "";
    while (*p) {
        size_t n = strcspn(p, " ");
        if (n && !strncmp(name, p, n))
            return n;
        p += n + (p[n] == ' ');
    }
    return 0;
}

/* Which of the rule's variables name is (after its prefix of n), or -1 */
static int shm_index(const char *name, size_t n)
{
    for (int i = 0; i < CT_LIBMOD_SHM_VARS; i++)
        if (!strcmp(name + n, shm_var[i]))
            return i;
    return -1;
}

int ct_libmod_shm_fits(const struct ct_libmod *m, struct ct_libmod_shm *c, const char *const *names,
                       const char *const *values, int n, struct ct_err *err)
{
    const char *pre = NULL; /* the first setting of the rule's, its prefix (pn bytes) */
    size_t pn = 0;
    for (int i = 0; i < n && !pre; i++)
        if ((pn = shm_prefix(m, names[i])) && shm_index(names[i], pn) >= 0)
            pre = names[i];
    if (!pre)
        return 0; /* nothing the segment must hold more of */
    if (c->prefix[0] && (strlen(c->prefix) != pn || strncmp(c->prefix, pre, pn)))
        memset(c, 0, sizeof *c); /* another BTL's defaults */
    snprintf(c->prefix, sizeof c->prefix, "%.*s", (int)pn, pre);
    unsigned long long v[CT_LIBMOD_SHM_VARS];
    int given[CT_LIBMOD_SHM_VARS];
    for (int k = 0; k < CT_LIBMOD_SHM_VARS; k++) {
        given[k] = -1;
        for (int i = 0; i < n; i++)
            if (shm_prefix(m, names[i]) == pn && !strncmp(names[i], pre, pn) &&
                shm_index(names[i], pn) == k)
                given[k] = i;
        long x;
        if (given[k] >= 0) {
            if (ct_parse_int(values[given[k]], 0, 1L << 40, &x))
                return 0; /* not a size: the library's own check says what it makes of it */
            v[k] = (unsigned long long)x;
            continue;
        }
        char name[CT_LIBMOD_ENV_NAME_MAX + 1], val[64];
        snprintf(name, sizeof name, "%s%s", c->prefix, shm_var[k]);
        const char *env = getenv(name); /* this environment's, which the ranks inherit */
        if (env) {
            if (ct_parse_int(env, 0, 1L << 40, &x))
                return 0;
            v[k] = (unsigned long long)x;
            continue;
        }
        if (!c->read[k]) { /* the library's own value (its parameter files'), read once */
            struct ct_err e = {0};
            c->read[k] = ct_libmod_env_default(m, name, val, sizeof val, &e) == 0 &&
                                 !ct_parse_int(val, 0, 1L << 40, &x)
                             ? 1
                             : -1;
            c->dflt[k] = c->read[k] > 0 ? (unsigned long long)x : 0;
        }
        if (c->read[k] < 0)
            return 0; /* this Open MPI does not list it: not this BTL, or not this layout */
        v[k] = c->dflt[k];
    }
    unsigned long long need = ct_libmod_shm_need(v), seg = v[CT_SHM_SEGMENT];
    if (seg >= need)
        return 0;
    unsigned long long p2 = 1;
    while (p2 < need)
        p2 *= 2;
    static const int order[CT_LIBMOD_SHM_VARS] = {
        CT_SHM_EAGER,   CT_SHM_MAX_SEND,  CT_SHM_INLINE,  CT_SHM_FREE_LIST,
        CT_SHM_SEGMENT, CT_SHM_FBOX_SIZE, CT_SHM_FBOX_MAX};
    int by = CT_SHM_SEGMENT; /* the setting named: the first given, in that order */
    for (int k = CT_LIBMOD_SHM_VARS - 1; k >= 0; k--)
        if (given[order[k]] >= 0)
            by = order[k];
    return ct_err_set(err, CT_EINVAL,
                      "%s%s=%s: %s's shared-memory segment (%ssegment_size=%llu) holds less "
                      "than the first %llu fragments of each size its transport carves (%llu "
                      "bytes with the fast boxes), and without them %s runs a host's ranks over "
                      "TCP: set %ssegment_size=%llu%s",
                      c->prefix, shm_var[by], given[by] >= 0 ? values[given[by]] : "?", m->title,
                      c->prefix, seg, v[CT_SHM_FREE_LIST], need, m->title, c->prefix, p2,
                      by == CT_SHM_SEGMENT ? "" : " beside it");
}
