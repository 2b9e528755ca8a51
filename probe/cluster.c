/* SPDX-License-Identifier: MIT */
/* The cluster view of `probe` across ranks: every rank's topology JSON grouped by host, and
 * the cluster document (colltune-cluster/1). */
#include "cluster.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

int ct_cluster_hosts(const char *const *names, int nranks, const char *all, size_t stride,
                     struct ct_topo ***out, size_t *nout, struct ct_err *err)
{
    struct ct_topo **hosts = ct_xcalloc((size_t)nranks, sizeof *hosts);
    size_t nh = 0;
    for (int r = 0; r < nranks; r++) {
        int first = r;
        for (int q = 0; q < r; q++)
            if (!strcmp(names[q], names[r])) {
                first = q;
                break;
            }
        if (first != r) {
            for (size_t h = 0; h < nh; h++)
                if (hosts[h]->rank_first == first)
                    hosts[h]->rank_count++;
            continue;
        }
        const char *j = all + (size_t)r * stride;
        hosts[nh] = ct_topo_from_json(j, strlen(j), err);
        if (!hosts[nh]) {
            ct_cluster_hosts_free(hosts, nh);
            return ct_err_wrap(err, "rank %d (%s): ", r, names[r]);
        }
        hosts[nh]->rank_first = r;
        hosts[nh]->rank_count = 1;
        nh++;
    }
    *out = hosts;
    *nout = nh;
    return 0;
}

void ct_cluster_hosts_free(struct ct_topo **hosts, size_t n)
{
    for (size_t h = 0; h < n; h++)
        ct_topo_free(hosts[h]);
    free(hosts);
}

int ct_cluster_json(FILE *out, const char *const *names, const char *all, size_t stride,
                    struct ct_topo *const *hosts, size_t nh, const struct ct_hetero *het,
                    struct ct_err *err)
{
    json_t *doc = json_object(), *arr = json_array(), *diffs = json_array();
    json_object_set_new(doc, "schema", json_string("colltune-cluster/1"));
    json_object_set_new(doc, "shapes", json_integer((json_int_t)het->n_groups));
    for (size_t h = 0; h < nh; h++) {
        const char *text = all + (size_t)hosts[h]->rank_first * stride;
        json_error_t je;
        json_t *topo = json_loads(text, 0, &je), *o = json_object();
        if (!topo) {
            json_decref(doc);
            json_decref(arr);
            json_decref(diffs);
            return ct_err_set(err, CT_EINVAL, "host %s: %s", names[hosts[h]->rank_first],
                              je.text);
        }
        json_object_set_new(o, "host", json_string(names[hosts[h]->rank_first]));
        json_object_set_new(o, "first_rank", json_integer(hosts[h]->rank_first));
        json_object_set_new(o, "ranks", json_integer(hosts[h]->rank_count));
        json_object_set_new(o, "shape", json_integer((json_int_t)het->group_of[h]));
        /* its ranks as the cluster found them (a rank's own probe does not know them) */
        json_object_set_new(
            topo, "ranks",
            json_pack("{s:i,s:i}", "first", hosts[h]->rank_first, "count", hosts[h]->rank_count));
        json_object_set_new(o, "topology", topo);
        json_array_append_new(arr, o);
    }
    for (size_t d = 0; d < het->n_diffs; d++) {
        json_t *o = json_object();
        json_object_set_new(o, "host",
                            json_string(names[hosts[het->diffs[d].host]->rank_first]));
        json_object_set_new(o, "differs", json_string(het->diffs[d].what));
        json_array_append_new(diffs, o);
    }
    json_object_set_new(doc, "hosts", arr);
    json_object_set_new(doc, "differences", diffs);
    int rc = json_dumpf(doc, out, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    fputc('\n', out);
    json_decref(doc);
    return rc < 0 ? ct_err_set(err, CT_EIO, "cannot write JSON") : 0;
}
