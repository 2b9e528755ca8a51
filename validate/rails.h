/* SPDX-License-Identifier: MIT */
/*
 * Rails for `colltune validate`: which NIC of each host to drive so that the pair rounds
 * cover every NIC. A rail is an IPv4 subnet that at least two hosts have an interface in,
 * with no address shared by two hosts (a docker0-style bridge present on every host with the
 * same address is not a rail). Traffic between two hosts' addresses in one subnet leaves
 * through the interface of that subnet, so driving rail k drives NIC k of every host.
 */
#ifndef CT_RAILS_H
#define CT_RAILS_H

#include "../lib/sock.h"

#define CT_RAIL_MAX 8

/* One host's usable interfaces (ct_sock_if_list). */
struct ct_rail_host {
    int32_t n;
    int32_t pad;
    struct ct_ifaddr ifs[CT_RAIL_MAX];
};

struct ct_rails {
    int n;
    uint32_t net[CT_RAIL_MAX];
    int prefix[CT_RAIL_MAX];
    int nhosts;
    int (*ifidx)[CT_RAIL_MAX]; /* [host][rail]: index into that host's ifs, -1 not on it */
};

/* Rails of nhosts hosts, sorted by (network, prefix), at most CT_RAIL_MAX; every host's
 * first interface in a rail's subnet serves it. Deterministic for identical input. */
void ct_rails_build(const struct ct_rail_host *hosts, int nhosts, struct ct_rails *out);
void ct_rails_release(struct ct_rails *r);
/* "10.1.0.0/24" */
const char *ct_rails_name(const struct ct_rails *r, int k, char *buf, size_t len);

#endif
