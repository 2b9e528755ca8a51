/* SPDX-License-Identifier: MIT */
/* The topology as JSON ("schema": "colltune-topo/1"), written with a stable key order so two
 * hosts can be diffed, and read back (rank 0 gathers hosts this way). Through jansson. */
#include "probe_int.h"

#include <stdlib.h>
#include <string.h>

const char *const ct_json_pci_kinds[4] = {"host", "bridge", "switch", "dev"};
const char *const ct_json_nic_kinds[5] = {"unknown", "ib", "roce", "efa", "eth"};
const char *const ct_json_end_kinds[3] = {"gpu", "nvswitch", "cpu"};
const char *const ct_json_ep_kinds[2] = {"gpu", "nic"};

#ifdef HAVE_JANSSON
#include <jansson.h>

#define pci_kinds ct_json_pci_kinds
#define nic_kinds ct_json_nic_kinds
#define end_kinds ct_json_end_kinds
#define ep_kinds ct_json_ep_kinds

/* ---- writing ---- */

static json_t *jstr_or_null(const char *s)
{
    return s ? json_string(s) : json_null();
}

static void set(json_t *o, const char *k, json_t *v)
{
    json_object_set_new(o, k, v ? v : json_null());
}

static json_t *w_cpu(const struct ct_topo *t)
{
    json_t *cpu = json_object(), *pk = json_array(), *nu = json_array();
    set(cpu, "npus", json_integer(t->npus));
    set(cpu, "ncores", json_integer(t->ncores));
    for (size_t i = 0; i < t->n_pkg; i++) {
        json_t *o = json_object();
        set(o, "os_index", json_integer(t->pkg[i].os_index));
        set(o, "model", jstr_or_null(t->pkg[i].model));
        set(o, "cpus", json_string(t->pkg[i].cpus));
        set(o, "ncores", json_integer(t->pkg[i].ncores));
        set(o, "npus", json_integer(t->pkg[i].npus));
        json_array_append_new(pk, o);
    }
    for (size_t i = 0; i < t->n_numa; i++) {
        const struct ct_numa *m = &t->numa[i];
        json_t *o = json_object(), *d = json_array();
        set(o, "os_index", json_integer(m->os_index));
        set(o, "cpus", json_string(m->cpus));
        set(o, "mem_bytes", json_integer((json_int_t)m->mem_bytes));
        set(o, "model", jstr_or_null(m->model));
        for (size_t j = 0; j < m->n_dist; j++)
            json_array_append_new(d, json_integer(m->dist[j]));
        set(o, "distances", d);
        json_array_append_new(nu, o);
    }
    set(cpu, "packages", pk);
    set(cpu, "numa", nu);
    return cpu;
}

static json_t *w_pci(const struct ct_pci *p)
{
    json_t *o = json_object();
    set(o, "busid", json_string(p->busid));
    set(o, "kind", json_string(pci_kinds[p->kind]));
    set(o, "parent", json_integer(p->parent));
    set(o, "numa", json_integer(p->numa));
    set(o, "package", json_integer(p->package));
    set(o, "vendor", json_integer(p->vendor));
    set(o, "device", json_integer(p->device));
    set(o, "subvendor", json_integer(p->subvendor));
    set(o, "subdevice", json_integer(p->subdevice));
    set(o, "class", json_integer(p->class_code));
    set(o, "link_gts", json_real(p->link_gts));
    set(o, "link_width", json_integer(p->link_width));
    set(o, "max_gts", json_real(p->max_gts));
    set(o, "max_width", json_integer(p->max_width));
    set(o, "link_gbs", json_real(p->link_gbs));
    set(o, "name", jstr_or_null(p->name));
    return o;
}

static json_t *w_gpu(const struct ct_gpu *g)
{
    json_t *o = json_object();
    set(o, "index", json_integer(g->index));
    set(o, "busid", json_string(g->busid));
    set(o, "pci", json_integer(g->pci));
    set(o, "vendor", json_integer(g->vendor));
    set(o, "device", json_integer(g->device));
    set(o, "model", jstr_or_null(g->model));
    set(o, "osname", jstr_or_null(g->osname));
    set(o, "numa", json_integer(g->numa));
    set(o, "cpus", jstr_or_null(g->cpus));
    set(o, "sm", json_integer(g->sm));
    set(o, "nvlink_gbps", json_real(g->nvlink_gbps));
    set(o, "nvlink_gen", json_string(g->nvlink_gen));
    /* "" when stated; "NV18": inferred from the NV# pattern; "model", "sm 90": looked up */
    set(o, "nvlink_inferred_from", json_string(g->nvlink_basis));
    return o;
}

static json_t *w_nic(const struct ct_nic *n)
{
    json_t *o = json_object();
    set(o, "index", json_integer(n->index));
    set(o, "dev", json_string(n->dev));
    set(o, "port", json_integer(n->port));
    set(o, "kind", json_string(nic_kinds[n->kind]));
    set(o, "netdev", json_string(n->netdev));
    set(o, "oper", json_string(n->oper));
    set(o, "rate_gbps", json_real(n->rate_gbps));
    set(o, "lanes", json_integer(n->lanes));
    set(o, "speed", json_string(n->speed));
    set(o, "state", json_integer(n->state));
    set(o, "state_str", json_string(n->state_str));
    set(o, "phys_state", json_integer(n->phys_state));
    set(o, "phys_str", json_string(n->phys_str));
    set(o, "link_layer", json_string(n->link_layer));
    set(o, "mtu", json_integer(n->mtu));
    set(o, "guid", json_string(n->guid));
    set(o, "sys_guid", json_string(n->sys_guid));
    set(o, "mac", json_string(n->mac));
    set(o, "model", json_string(n->model));
    set(o, "fw", json_string(n->fw));
    set(o, "busid", json_string(n->busid));
    set(o, "pci", json_integer(n->pci));
    set(o, "vendor", json_integer(n->vendor));
    set(o, "device", json_integer(n->device));
    set(o, "class", json_integer(n->class_code));
    set(o, "numa", json_integer(n->numa));
    set(o, "cpus", jstr_or_null(n->cpus));
    set(o, "netdev_type", json_integer(n->netdev_type));
    set(o, "counters", jstr_or_null(n->counters));
    set(o, "hw_counters", jstr_or_null(n->hw_counters));
    return o;
}

static json_t *w_accel(const struct ct_accel *a)
{
    json_t *o = json_object(), *nb = json_array();
    set(o, "index", json_integer(a->index));
    set(o, "busid", json_string(a->busid));
    set(o, "pci", json_integer(a->pci));
    set(o, "numa", json_integer(a->numa));
    set(o, "cpus", jstr_or_null(a->cpus));
    set(o, "model", json_string(a->model));
    set(o, "cores", json_integer(a->cores));
    set(o, "core_ids", json_string(a->core_ids));
    set(o, "mem_gb", json_real(a->mem_gb));
    for (size_t j = 0; j < a->n_nbrs; j++)
        json_array_append_new(nb, json_integer(a->nbrs[j]));
    set(o, "neighbours", nb);
    return o;
}

static json_t *w_links(const struct ct_topo *t)
{
    json_t *nv = json_array();
    for (size_t i = 0; i < t->n_nvlink; i++) {
        const struct ct_nvlink *l = &t->nvlink[i];
        json_t *o = json_object();
        set(o, "gpu", json_integer(l->gpu));
        set(o, "peer_kind", json_string(end_kinds[l->peer_kind]));
        set(o, "peer", json_integer(l->peer));
        set(o, "count", json_integer(l->count));
        json_array_append_new(nv, o);
    }
    return nv;
}

static json_t *w_topo(const struct ct_topo *t)
{
    json_t *r = json_object(), *a;
    set(r, "schema", json_string(CT_TOPO_SCHEMA));
    set(r, "hostname", jstr_or_null(t->hostname));
    set(r, "origin", jstr_or_null(t->origin));
    set(r, "ranks", json_pack("{s:i,s:i}", "first", t->rank_first, "count", t->rank_count));
    set(r, "cpu", w_cpu(t));
#define ARR(key, n, expr)                                                                          \
    do {                                                                                           \
        a = json_array();                                                                          \
        for (size_t i = 0; i < (n); i++)                                                           \
            json_array_append_new(a, expr);                                                        \
        set(r, key, a);                                                                            \
    } while (0)
    ARR("pci", t->n_pci, w_pci(&t->pci[i]));
    ARR("gpus", t->n_gpu, w_gpu(&t->gpu[i]));
    ARR("nics", t->n_nic, w_nic(&t->nic[i]));
    ARR("nvswitches", t->n_nvswitch,
        json_pack("{s:s,s:i}", "busid", t->nvswitch[i].busid, "pci", t->nvswitch[i].pci));
    set(r, "nvlinks", w_links(t));
    ARR("accels", t->n_accel, w_accel(&t->accel[i]));
    set(r, "nvswitch_gen",
        json_pack("{s:s,s:s}", "gen", t->nvswitch_gen, "inferred_from", t->nvswitch_basis));
    set(r, "torus", json_pack("{s:i,s:i}", "rows", t->torus_rows, "cols", t->torus_cols));
    ARR("hints", t->n_hint,
        json_pack("{s:s,s:i,s:s,s:i,s:i}", "a_kind", ep_kinds[t->hint[i].ka], "a", t->hint[i].a,
                  "b_kind", ep_kinds[t->hint[i].kb], "b", t->hint[i].b, "path",
                  (int)t->hint[i].path));
    ARR("notes", t->n_notes, json_string(t->notes[i]));
#undef ARR
    return r;
}

char *ct_topo_to_json(const struct ct_topo *t, struct ct_err *err)
{
    json_t *r = w_topo(t);
    char *s = json_dumps(r, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));
    json_decref(r);
    if (!s) {
        ct_err_set(err, CT_ENOMEM, "cannot serialise the topology (invalid UTF-8 in a name?)");
        return NULL;
    }
    char *c = ct_xstrdup(s);
    free(s);
    return c;
}

#else /* !HAVE_JANSSON */

char *ct_topo_to_json(const struct ct_topo *t, struct ct_err *err)
{
    ct_err_set(err, CT_EUNSUPP, "JSON output needs jansson (not built)");
    return NULL;
}

#endif
