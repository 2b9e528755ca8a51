/* SPDX-License-Identifier: MIT */
/* Communicator bring-up: pick and open the transport for each peer. */
#include "comm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../lib/clock.h"
#include "../lib/cpus.h"
#include "../transport/launch.h"

static int open_one(struct ct_comm *c, const char *name, const unsigned char *peers,
                    const struct ct_comm_cfg *cfg, struct ct_err *err)
{
    const struct ct_tp_ops *ops = ct_tp_find(name);
    if (!ops)
        return ct_err_set(err, CT_EINVAL, "unknown transport '%s'", name);
    struct ct_tp_cfg tc = cfg->tp;
    tc.peers = peers;
    /* the mode resolved for the whole host: a transport resolving auto itself counts the
     * cores this process may run on, one once the rank is pinned (shm then took 2 ranks on 2
     * cores for oversubscribed) */
    tc.wait = c->wait;
    if (!tc.timeout_ns)
        tc.timeout_ns = c->timeout_ns;
    struct ct_tp *tp;
    int rc = ct_tp_open(ops, &tp, &tc, c->boot, err);
    if (rc < 0)
        return ct_err_wrap(err, "transport %s: ", name);
    c->tps[c->ntp++] = tp;
    for (int r = 0; r < c->size; r++)
        if (r != c->rank && (!peers || peers[r]))
            c->tp_of[r] = tp;
    return 0;
}

int ct_comm_open(struct ct_comm *c, struct ct_boot *boot, const struct ct_comm_cfg *cfg,
                 struct ct_err *err)
{
    memset(c, 0, sizeof *c);
    c->boot = boot;
    c->rank = boot->rank;
    c->size = boot->size;
    c->local_rank = boot->local_rank;
    c->local_size = boot->local_size;
    c->node = boot->node;
    c->nnodes = boot->nnodes;
    c->timeout_ns = cfg->timeout_ns > 0 ? cfg->timeout_ns : 30 * 1000000000LL;
    /* auto: spin while every local rank can have a core, else spin briefly and block */
    c->wait = cfg->tp.wait;
    if (c->wait == CT_WAIT_AUTO) {
        long cores = ct_cpus_host();
        c->wait = boot->host_size > cores ? CT_WAIT_BLOCK : CT_WAIT_SPIN;
    }
    c->tp_of = ct_xcalloc((size_t)c->size, sizeof *c->tp_of);
    const char *t = cfg->transport ? cfg->transport : "auto";
    /* every rank sees the same hosts: refused alike */
    int rc = ct_comm_streams_check(t, boot->nnodes == 1, cfg->tp.streams, err);
    if (rc == 0 && strcmp(t, "auto")) {
        rc = open_one(c, t, cfg->tp.peers, cfg, err);
    } else if (rc == 0) {
        /* shm for same-host peers, tcp for the rest; both opens are collective */
        unsigned char *local = ct_xcalloc((size_t)c->size, 1);
        unsigned char *remote = ct_xcalloc((size_t)c->size, 1);
        for (int r = 0; r < c->size; r++) {
            int same = !strcmp(boot->hosts[r], boot->host);
            local[r] = (unsigned char)same;
            remote[r] = (unsigned char)!same;
        }
        rc = open_one(c, "shm", local, cfg, err);
        /* every rank must agree whether tcp is opened: it is if any host differs */
        if (rc == 0 && boot->nnodes > 1)
            rc = open_one(c, "tcp", remote, cfg, err);
        free(local);
        free(remote);
    }
    if (rc < 0)
        ct_comm_close(c);
    return rc;
}

bool ct_comm_shm_alone(const char *transport, bool one_host)
{
    return !strcmp(transport, "shm") || (!strcmp(transport, "auto") && one_host);
}

int ct_comm_streams_check(const char *transport, bool one_host, int streams, struct ct_err *err)
{
    if (streams > 1 && !strcmp(transport, "fabric"))
        return ct_err_set(err, CT_EINVAL,
                          "--streams %d: the fabric transport opens one endpoint a peer "
                          "(--transport tcp streams)",
                          streams);
    if (streams > 1 && ct_comm_shm_alone(transport, one_host))
        return ct_err_set(err, CT_EINVAL,
                          "--streams %d: the ranks meet in shared memory alone (one host): no "
                          "connection to stream over (--transport tcp)",
                          streams);
    return 0;
}

void ct_comm_close(struct ct_comm *c)
{
    for (int i = 0; i < c->ntp; i++)
        c->tps[i]->ops->close(c->tps[i]);
    c->ntp = 0;
    free(c->tp_of);
    c->tp_of = NULL;
}

void *ct_comm_alloc(struct ct_comm *c, size_t bytes, struct ct_err *err)
{
    return c->tps[0]->ops->alloc(c->tps[0], bytes, err);
}

void ct_comm_free(struct ct_comm *c, void *p, size_t bytes)
{
    if (p)
        c->tps[0]->ops->free(c->tps[0], p, bytes);
}

const char *ct_comm_tp_names(const struct ct_comm *c, char *buf, size_t len)
{
    size_t off = 0;
    buf[0] = 0;
    for (int i = 0; i < c->ntp && off < len; i++)
        off += (size_t)snprintf(buf + off, len - off, "%s%s", i ? "+" : "", c->tps[i]->ops->name);
    return buf;
}

int ct_boot_bcast0(struct ct_boot *boot, void *buf, size_t len, struct ct_err *err)
{
    char *all = ct_xcalloc((size_t)boot->size, len ? len : 1);
    int rc = ct_boot_allgather(boot, buf, len, all, err);
    if (rc == 0)
        memcpy(buf, all, len);
    free(all);
    return rc;
}

void ct_comm_first_failure(struct ct_comm *c, struct ct_err *err)
{
    const char *at = err && (err->code == CT_EPEER || err->code == CT_ETIMEDOUT)
                         ? strstr(err->msg, "peer rank ")
                         : NULL;
    char *end;
    long peer = at ? strtol(at + 10, &end, 10) : -1;
    if (!at || end == at + 10 || peer < 0 || peer >= c->size || peer == c->rank || c->size < 3)
        return;
    /* the --local launcher's word where a signal ended that rank (a rank that exited first may
     * only have timed out on another); a gone peer's own word comes before its close: waited
     * for a moment; a stalled one's not (the others exit meanwhile: mpirun ends the job then,
     * this rank's line unsaid) */
    int how = ct_launch_lost_how();
    int first = how < 0 && how != CT_LAUNCH_LOST_STALLED ? ct_launch_lost_rank() : -1;
    int word = ct_boot_first_failure(c->boot, (int)peer, err->code == CT_EPEER ? 200000000LL : 0);
    first = first >= 0 ? first : word;
    size_t n = strlen(err->msg); /* < sizeof err->msg: the NUL is in it */
    if (first >= 0 && first < c->size && first != peer && first != c->rank)
        snprintf(err->msg + n, sizeof err->msg - n,
                 "; rank %d (%s) failed first, as its peers found", first,
                 c->boot->hosts ? c->boot->hosts[first] : "?");
}
