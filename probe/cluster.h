/* SPDX-License-Identifier: MIT */
/* The cluster view of `probe` across ranks (see cluster.c). */
#ifndef CT_PROBE_CLUSTER_H
#define CT_PROBE_CLUSTER_H

#include <stdio.h>

#include "topo.h"

/* One topology per host from every rank's JSON (rank r's at all + r * stride; names[r] its
 * host): the host's first rank and rank count set. *out is new (ct_cluster_hosts_free). */
int ct_cluster_hosts(const char *const *names, int nranks, const char *all, size_t stride,
                     struct ct_topo ***out, size_t *nout, struct ct_err *err);
void ct_cluster_hosts_free(struct ct_topo **hosts, size_t n);
/* One document with every host, its ranks, its shape group and its topology
 * (colltune-topo/1), plus the differences from the majority. */
int ct_cluster_json(FILE *out, const char *const *names, const char *all, size_t stride,
                    struct ct_topo *const *hosts, size_t nh, const struct ct_hetero *het,
                    struct ct_err *err);

#endif
