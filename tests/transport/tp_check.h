/* SPDX-License-Identifier: MIT */
/* Shared by the transport tests (tcp, fabric): drive requests to completion checking FIFO
 * completion per (peer, direction) group, and the deterministic payload patterns. */
#ifndef CT_TEST_TP_CHECK_H
#define CT_TEST_TP_CHECK_H

#include <stddef.h>
#include <stdint.h>

#include "lib/clock.h"
#include "transport/tp.h"

/* Drive until every request is done; a request finishing before an earlier one of its group
 * is an error. */
static inline int tp_drive(struct ct_tp *tp, struct ct_req *reqs, const int *group, int nreq,
                           int64_t timeout_ns, struct ct_err *err)
{
    int64_t deadline = ct_now_ns() + timeout_ns;
    for (;;) {
        int rc = tp->ops->progress(tp, err);
        if (rc < 0)
            return rc;
        int all = 1;
        for (int i = 0; i < nreq; i++) {
            if (!reqs[i].done) {
                all = 0;
                continue;
            }
            for (int k = 0; k < i; k++)
                if (group[k] == group[i] && !reqs[k].done)
                    return ct_err_set(err, CT_EINVAL, "request %d done before request %d", i, k);
        }
        if (all)
            return 0;
        if (ct_now_ns() > deadline)
            return ct_tp_timeout_error(tp, "test", timeout_ns, err);
        if (rc == 0)
            CT_TRY(tp->ops->wait(tp, 10000000LL, err));
    }
}

static inline unsigned char pattern(int src, int dst, int idx, size_t i)
{
    uint32_t x = (uint32_t)i * 2654435761u ^ (uint32_t)(src << 20 | dst << 12 | idx);
    x ^= x >> 15;
    x *= 0x2c1b3c6du;
    return (unsigned char)(x >> 24);
}

static inline float fsend(int src, int dst, int idx, size_t i)
{
    return (float)((i * 7 + (size_t)src * 3 + (size_t)dst + (size_t)idx) % 1000);
}

static inline float fmine(int me, size_t i)
{
    return (float)((i * 5 + (size_t)me) % 1000);
}

static inline void sum_f32(void *dst, const void *a, const void *b, size_t n)
{
    float *d = dst;
    const float *x = a, *y = b;
    for (size_t i = 0; i < n; i++)
        d[i] = x[i] + y[i];
}

#endif
