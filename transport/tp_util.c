/* SPDX-License-Identifier: MIT */
/* Blocking helpers over the transport vtable: wait for a request, send/recv, barrier. */
#include <stdio.h>
#include <string.h>

#include "../lib/clock.h"
#include "boot.h"
#include "tp.h"

#define DEFAULT_TIMEOUT_NS (30 * 1000000000LL)
#define SPIN_BEFORE_WAIT 2000


int ct_tp_timeout_error(struct ct_tp *tp, const char *what, int64_t timeout_ns, struct ct_err *err)
{
    int peers[8];
    int n = tp->ops->pending_peers ? tp->ops->pending_peers(tp, peers, 8) : 0;
    char list[256] = "";
    size_t off = 0;
    for (int i = 0; i < n && off < sizeof list - 80; i++)
        off += (size_t)snprintf(list + off, sizeof list - off, "%s%d (%s)", i ? ", " : "",
                                peers[i], tp->boot ? tp->boot->hosts[peers[i]] : "?");
    return ct_err_set(err, CT_ETIMEDOUT, "%s: no progress for %.1f s%s%s", what,
                      (double)timeout_ns / 1e9, n ? "; waiting on peer rank " : "", list);
}

int ct_tp_wait_req(struct ct_tp *tp, struct ct_req *req, int64_t timeout_ns, struct ct_err *err)
{
    if (timeout_ns <= 0)
        timeout_ns = DEFAULT_TIMEOUT_NS;
    int64_t start = ct_now_ns();
    int spins = 0;
    while (!req->done) {
        int rc = tp->ops->progress(tp, err);
        if (rc < 0)
            return rc;
        if (req->done)
            break;
        if (rc > 0) {
            spins = 0;
            start = ct_now_ns();
            continue;
        }
        if (++spins < SPIN_BEFORE_WAIT) {
            ct_cpu_relax();
            continue;
        }
        int64_t now = ct_now_ns();
        if (now - start > timeout_ns)
            return ct_tp_timeout_error(tp, "wait", timeout_ns, err);
        int64_t left = timeout_ns - (now - start);
        CT_TRY(tp->ops->wait(tp, left < 100000000 ? left : 100000000, err));
    }
    return req->status;
}

int ct_tp_send(struct ct_tp *tp, int peer, const void *buf, size_t len, int64_t timeout_ns,
               struct ct_err *err)
{
    struct ct_req req;
    memset(&req, 0, sizeof req);
    CT_TRY(tp->ops->isend(tp, peer, buf, len, &req, err));
    return ct_tp_wait_req(tp, &req, timeout_ns, err);
}

int ct_tp_recv(struct ct_tp *tp, int peer, void *buf, size_t len, int64_t timeout_ns,
               struct ct_err *err)
{
    struct ct_req req;
    memset(&req, 0, sizeof req);
    CT_TRY(tp->ops->irecv(tp, peer, buf, NULL, len, NULL, &req, err));
    return ct_tp_wait_req(tp, &req, timeout_ns, err);
}

int ct_tp_barrier(struct ct_tp *tp, int64_t timeout_ns, struct ct_err *err)
{
    int n = tp->size, r = tp->rank;
    char out = 1, in;
    for (int d = 1; d < n; d <<= 1) {
        struct ct_req sr, rr;
        memset(&sr, 0, sizeof sr);
        memset(&rr, 0, sizeof rr);
        CT_TRY(tp->ops->irecv(tp, (r - d + n) % n, &in, NULL, 1, NULL, &rr, err));
        CT_TRY(tp->ops->isend(tp, (r + d) % n, &out, 1, &sr, err));
        CT_TRY(ct_tp_wait_req(tp, &sr, timeout_ns, err));
        CT_TRY(ct_tp_wait_req(tp, &rr, timeout_ns, err));
    }
    return 0;
}
