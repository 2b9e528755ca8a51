/* SPDX-License-Identifier: MIT */
/* A rank's connections reopened from the shared options (cmd/opts.h): other tcp streams
 * (a sweep's streams axis) and the in-flight communicators of --inflight. */
#include "opts.h"

#include <stdlib.h>

int ct_opts_reopen_conns(void *arg, int streams, int inflight, struct ct_conns *c,
                         struct ct_err *err)
{
    const struct ct_opts_reopen *r = arg;
    struct ct_opts o = *r->o;
    o.params.v[CT_P_STREAMS] = (uint64_t)streams;
    o.params.v[CT_P_INFLIGHT] = (uint64_t)(inflight > 1 ? inflight : 0);
    bool restream = streams != c->streams;
    if (restream || (int)o.params.v[CT_P_INFLIGHT] != c->nflight) {
        ct_opts_flight_close(c->flight, c->nflight);
        c->flight = NULL;
        c->nflight = 0;
    }
    if (restream) {
        ct_comm_close(*c->comm);
        CT_TRY(ct_opts_comm_open(&o, r->boot, *c->comm, err));
        c->streams = streams;
    }
    if (inflight > 1 && !c->nflight) {
        CT_TRY(ct_opts_flight_open(&o, r->boot, &c->flight, err));
        c->nflight = inflight;
    }
    return 0;
}

int ct_opts_flight_open(const struct ct_opts *o, struct ct_boot *boot, struct ct_comm **out,
                        struct ct_err *err)
{
    int k = (int)o->params.v[CT_P_INFLIGHT];
    struct ct_comm *c = ct_xcalloc((size_t)k, sizeof *c);
    for (int i = 0; i < k; i++)
        if (ct_opts_comm_open(o, boot, &c[i], err) < 0) {
            while (i-- > 0)
                ct_comm_close(&c[i]);
            free(c);
            return ct_err_wrap(err, "in-flight communicator %d: ", i + 1);
        }
    *out = c;
    return 0;
}

void ct_opts_flight_close(struct ct_comm *c, int n)
{
    for (int i = 0; c && i < n; i++)
        ct_comm_close(&c[i]);
    free(c);
}
