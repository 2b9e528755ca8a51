/* SPDX-License-Identifier: MIT */
/* Rails: subnets shared by hosts, one interface per host and subnet. */
#include "rails.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int find_if(const struct ct_rail_host *h, uint32_t net, int prefix)
{
    for (int i = 0; i < h->n && i < CT_RAIL_MAX; i++)
        if (h->ifs[i].net == net && h->ifs[i].prefix == prefix)
            return i;
    return -1;
}

/* At least two hosts in the subnet, and no address twice. */
static int is_rail(const struct ct_rail_host *hosts, int nhosts, uint32_t net, int prefix)
{
    int on = 0;
    for (int h = 0; h < nhosts; h++) {
        int i = find_if(&hosts[h], net, prefix);
        if (i < 0)
            continue;
        on++;
        for (int g = 0; g < h; g++) {
            int j = find_if(&hosts[g], net, prefix);
            if (j >= 0 && !strcmp(hosts[g].ifs[j].addr, hosts[h].ifs[i].addr))
                return 0;
        }
    }
    return on >= 2;
}

struct cand {
    uint32_t net;
    int prefix;
};

static int cmp_cand(const void *x, const void *y)
{
    const struct cand *a = x, *b = y;
    if (a->net != b->net)
        return a->net < b->net ? -1 : 1;
    return (a->prefix > b->prefix) - (a->prefix < b->prefix);
}

void ct_rails_build(const struct ct_rail_host *hosts, int nhosts, struct ct_rails *out)
{
    memset(out, 0, sizeof *out);
    out->nhosts = nhosts;
    out->ifidx = ct_xcalloc(nhosts > 0 ? (size_t)nhosts : 1, sizeof *out->ifidx);
    struct cand *c = ct_xcalloc((size_t)(nhosts > 0 ? nhosts : 1) * CT_RAIL_MAX, sizeof *c);
    size_t nc = 0;
    for (int h = 0; h < nhosts; h++)
        for (int i = 0; i < hosts[h].n && i < CT_RAIL_MAX; i++) {
            struct cand x = {hosts[h].ifs[i].net, hosts[h].ifs[i].prefix};
            bool seen = false;
            for (size_t k = 0; k < nc && !seen; k++)
                seen = !cmp_cand(&c[k], &x);
            if (!seen && is_rail(hosts, nhosts, x.net, x.prefix))
                c[nc++] = x;
        }
    qsort(c, nc, sizeof *c, cmp_cand);
    for (size_t k = 0; k < nc && out->n < CT_RAIL_MAX; k++) {
        out->net[out->n] = c[k].net;
        out->prefix[out->n++] = c[k].prefix;
    }
    free(c);
    for (int h = 0; h < nhosts; h++)
        for (int k = 0; k < CT_RAIL_MAX; k++)
            out->ifidx[h][k] = k < out->n ? find_if(&hosts[h], out->net[k], out->prefix[k]) : -1;
}

void ct_rails_release(struct ct_rails *r)
{
    free(r->ifidx);
    memset(r, 0, sizeof *r);
}

const char *ct_rails_name(const struct ct_rails *r, int k, char *buf, size_t len)
{
    uint32_t a = r->net[k];
    snprintf(buf, len, "%u.%u.%u.%u/%d", a >> 24, (a >> 16) & 255, (a >> 8) & 255, a & 255,
             r->prefix[k]);
    return buf;
}
