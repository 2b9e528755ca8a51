/* SPDX-License-Identifier: MIT */
/* Test helper: run a function in N threads, each a rank with an in-process bootstrap and
 * a communicator over the loop transport. Header-only. */
#ifndef CT_TEST_LOOPWORLD_H
#define CT_TEST_LOOPWORLD_H

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/bench.h"
#include "backend/comm.h"
#include "transport/boot.h"

typedef int (*lw_fn)(struct ct_comm *c, void *arg, struct ct_err *err);

struct lw_rank {
    struct ct_boot_world *w;
    int rank;
    lw_fn fn;
    void *arg;
    const struct ct_tp_cfg *tpcfg;
    int64_t timeout_ns;
    int rc;
    struct ct_err err;
};

static void *lw_thread(void *p)
{
    struct lw_rank *r = p;
    struct ct_boot *b;
    r->rc = ct_boot_inproc_open(&b, r->w, r->rank, &r->err);
    if (r->rc < 0)
        return NULL;
    struct ct_comm c;
    struct ct_comm_cfg cc;
    memset(&cc, 0, sizeof cc);
    cc.transport = "loop";
    if (r->tpcfg)
        cc.tp = *r->tpcfg;
    cc.timeout_ns = r->timeout_ns ? r->timeout_ns : 20 * 1000000000LL;
    r->rc = ct_comm_open(&c, b, &cc, &r->err);
    if (r->rc == 0) {
        r->rc = r->fn(&c, r->arg, &r->err);
        ct_comm_close(&c);
    }
    ct_boot_close(b);
    return NULL;
}

/* Runs fn on n ranks (rpn ranks per virtual node, 0 = one node). Returns the first
 * failing rank's rc with its message in *err (rank prefixed), else 0. */
static inline int lw_run_cfg(int n, int rpn, lw_fn fn, void *arg, const struct ct_tp_cfg *tpcfg,
                             int64_t timeout_ns, struct ct_err *err)
{
    struct ct_boot_world *w = ct_boot_world_new(n, rpn);
    if (timeout_ns)
        ct_boot_world_set_timeout(w, 2 * timeout_ns);
    struct lw_rank *rs = calloc((size_t)n, sizeof *rs);
    pthread_t *th = calloc((size_t)n, sizeof *th);
    for (int i = 0; i < n; i++) {
        rs[i].w = w;
        rs[i].rank = i;
        rs[i].fn = fn;
        rs[i].arg = arg;
        rs[i].tpcfg = tpcfg;
        rs[i].timeout_ns = timeout_ns;
        pthread_create(&th[i], NULL, lw_thread, &rs[i]);
    }
    /* report the first failure that is not a consequence (a bootstrap abort) */
    int rc = 0, pick = -1;
    for (int i = 0; i < n; i++)
        pthread_join(th[i], NULL);
    for (int pass = 0; pass < 2 && pick < 0; pass++)
        for (int i = 0; i < n && pick < 0; i++)
            if (rs[i].rc < 0 && (pass || !strstr(rs[i].err.msg, "bootstrap:")))
                pick = i;
    if (pick >= 0) {
        rc = rs[pick].rc;
        if (err)
            snprintf(err->msg, sizeof err->msg, "rank %d: %.490s", pick, rs[pick].err.msg);
    }
    free(rs);
    free(th);
    ct_boot_world_free(w);
    return rc;
}

static inline int lw_run(int n, int rpn, lw_fn fn, void *arg, struct ct_err *err)
{
    return lw_run_cfg(n, rpn, fn, arg, NULL, 0, err);
}

#endif
