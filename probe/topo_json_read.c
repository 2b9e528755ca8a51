/* SPDX-License-Identifier: MIT */
/* Reading "colltune-topo/1" JSON back into a topology: missing keys take their defaults, wrong
 * types and out-of-range indices are errors naming the key ("nics[2].pci: ..."). */
#include "probe_int.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#ifdef HAVE_JANSSON
#include <jansson.h>

struct rd {
    struct ct_err *err;
    char where[96]; /* "nics[2]" */
};

static int type_err(struct rd *r, const char *key, const char *want)
{
    return ct_err_set(r->err, CT_EINVAL, "topology JSON: %s%s%s: expected %s", r->where,
                      r->where[0] ? "." : "", key, want);
}

static int get_str(struct rd *r, json_t *o, const char *key, char *dst, size_t n)
{
    json_t *v = json_object_get(o, key);
    if (!v || json_is_null(v))
        return 0;
    if (!json_is_string(v))
        return type_err(r, key, "a string");
    ct_strlcpy(dst, json_string_value(v), n);
    return 0;
}

static int get_dup(struct rd *r, json_t *o, const char *key, char **dst)
{
    json_t *v = json_object_get(o, key);
    if (!v || json_is_null(v))
        return 0;
    if (!json_is_string(v))
        return type_err(r, key, "a string or null");
    ct_str_set(dst, json_string_value(v));
    return 0;
}

static int get_int(struct rd *r, json_t *o, const char *key, long lo, long hi, long *out)
{
    json_t *v = json_object_get(o, key);
    if (!v)
        return 0;
    if (!json_is_integer(v) || json_integer_value(v) < lo || json_integer_value(v) > hi)
        return type_err(r, key, "an integer in range");
    *out = (long)json_integer_value(v);
    return 0;
}

static int get_num(struct rd *r, json_t *o, const char *key, double *out)
{
    json_t *v = json_object_get(o, key);
    if (!v)
        return 0;
    if (!json_is_number(v) || json_number_value(v) < 0 || json_number_value(v) > 1e18)
        return type_err(r, key, "a non-negative number");
    *out = json_number_value(v);
    return 0;
}

static int get_enum(struct rd *r, json_t *o, const char *key, const char *const *names, int n,
                    int *out)
{
    char s[32] = "";
    CT_TRY(get_str(r, o, key, s, sizeof s));
    if (!s[0])
        return 0;
    for (int i = 0; i < n; i++)
        if (!strcmp(names[i], s)) {
            *out = i;
            return 0;
        }
    return type_err(r, key, "a known kind");
}

/* Shorthands: L(key, lo, hi, dst) reads an integer into any integer lvalue. */
#define L(o, key, lo, hi, dst)                                                                     \
    do {                                                                                           \
        long v_ = (long)(dst);                                                                     \
        CT_TRY(get_int(r, o, key, lo, hi, &v_));                                                   \
        (dst) = v_;                                                                                \
    } while (0)
#define IDX(o, key, n, dst) L(o, key, -1, (long)(n)-1, dst)
#define U16(o, key, dst) L(o, key, 0, 0xffff, dst)
#define INT(o, key, dst) L(o, key, INT_MIN, INT_MAX, dst)

static int r_cpu(struct rd *r, json_t *cpu, struct ct_topo *t)
{
    json_t *v;
    size_t i;
    INT(cpu, "npus", t->npus);
    INT(cpu, "ncores", t->ncores);
    json_array_foreach(json_object_get(cpu, "packages"), i, v)
    {
        snprintf(r->where, sizeof r->where, "cpu.packages[%zu]", i);
        int k = ct_topo_add_pkg(t, 0, "");
        struct ct_package *p = &t->pkg[k];
        INT(v, "os_index", p->os_index);
        CT_TRY(get_dup(r, v, "model", &p->model));
        CT_TRY(get_dup(r, v, "cpus", &p->cpus));
        INT(v, "ncores", p->ncores);
        INT(v, "npus", p->npus);
        if (!p->cpus)
            p->cpus = ct_xstrdup("");
    }
    json_array_foreach(json_object_get(cpu, "numa"), i, v)
    {
        snprintf(r->where, sizeof r->where, "cpu.numa[%zu]", i);
        int k = ct_topo_add_numa(t, 0, "");
        struct ct_numa *m = &t->numa[k];
        INT(v, "os_index", m->os_index);
        CT_TRY(get_dup(r, v, "cpus", &m->cpus));
        if (!m->cpus)
            m->cpus = ct_xstrdup("");
        double mem = 0;
        CT_TRY(get_num(r, v, "mem_bytes", &mem));
        m->mem_bytes = (uint64_t)mem;
        CT_TRY(get_dup(r, v, "model", &m->model));
        json_t *d = json_object_get(v, "distances"), *x;
        size_t j, n = json_array_size(d);
        m->dist = n ? ct_xcalloc(n, sizeof *m->dist) : NULL;
        json_array_foreach(d, j, x)
        {
            if (!json_is_integer(x))
                return type_err(r, "distances", "integers");
            m->dist[m->n_dist++] = (int)json_integer_value(x);
        }
    }
    return 0;
}

static int r_pci(struct rd *r, json_t *v, struct ct_topo *t, size_t n_all)
{
    char bus[CT_BUSID_LEN] = "";
    CT_TRY(get_str(r, v, "busid", bus, sizeof bus));
    int k = ct_topo_add_pci(t, bus, CT_PCI_DEV, -1), kind = CT_PCI_DEV;
    struct ct_pci *p = &t->pci[k];
    CT_TRY(get_enum(r, v, "kind", ct_json_pci_kinds, 4, &kind));
    p->kind = (enum ct_pci_kind)kind;
    IDX(v, "parent", n_all, p->parent);
    INT(v, "numa", p->numa);
    INT(v, "package", p->package);
    U16(v, "vendor", p->vendor);
    U16(v, "device", p->device);
    U16(v, "subvendor", p->subvendor);
    U16(v, "subdevice", p->subdevice);
    L(v, "class", 0, 0xffffff, p->class_code);
    double x = 0;
    CT_TRY(get_num(r, v, "link_gts", &x));
    p->link_gts = (float)x;
    x = 0;
    CT_TRY(get_num(r, v, "max_gts", &x));
    p->max_gts = (float)x;
    x = 0;
    CT_TRY(get_num(r, v, "link_gbs", &x));
    p->link_gbs = (float)x;
    L(v, "link_width", 0, 64, p->link_width);
    L(v, "max_width", 0, 64, p->max_width);
    CT_TRY(get_dup(r, v, "name", &p->name));
    return (size_t)p->parent == (size_t)k ? type_err(r, "parent", "another node") : 0;
}

static int r_gpu(struct rd *r, json_t *v, struct ct_topo *t)
{
    int k = ct_topo_add_gpu(t, NULL);
    struct ct_gpu *g = &t->gpu[k];
    L(v, "index", -1, 65535, g->index);
    CT_TRY(get_str(r, v, "busid", g->busid, sizeof g->busid));
    IDX(v, "pci", t->n_pci, g->pci);
    U16(v, "vendor", g->vendor);
    U16(v, "device", g->device);
    CT_TRY(get_dup(r, v, "model", &g->model));
    CT_TRY(get_dup(r, v, "osname", &g->osname));
    INT(v, "numa", g->numa);
    CT_TRY(get_dup(r, v, "cpus", &g->cpus));
    INT(v, "sm", g->sm);
    CT_TRY(get_str(r, v, "nvlink_gen", g->nvlink_gen, sizeof g->nvlink_gen));
    CT_TRY(get_str(r, v, "nvlink_inferred_from", g->nvlink_basis, sizeof g->nvlink_basis));
    return get_num(r, v, "nvlink_gbps", &g->nvlink_gbps);
}

static int r_nic(struct rd *r, json_t *v, struct ct_topo *t)
{
    int k = ct_topo_add_nic(t, NULL, 0, NULL), kind = 0;
    struct ct_nic *n = &t->nic[k];
    L(v, "index", -1, 65535, n->index);
    CT_TRY(get_str(r, v, "dev", n->dev, sizeof n->dev));
    L(v, "port", 0, 255, n->port);
    CT_TRY(get_enum(r, v, "kind", ct_json_nic_kinds, 5, &kind));
    n->kind = (enum ct_nic_kind)kind;
    CT_TRY(get_str(r, v, "netdev", n->netdev, sizeof n->netdev));
    CT_TRY(get_str(r, v, "oper", n->oper, sizeof n->oper));
    CT_TRY(get_num(r, v, "rate_gbps", &n->rate_gbps));
    L(v, "lanes", 0, 64, n->lanes);
    CT_TRY(get_str(r, v, "speed", n->speed, sizeof n->speed));
    INT(v, "state", n->state);
    CT_TRY(get_str(r, v, "state_str", n->state_str, sizeof n->state_str));
    INT(v, "phys_state", n->phys_state);
    CT_TRY(get_str(r, v, "phys_str", n->phys_str, sizeof n->phys_str));
    CT_TRY(get_str(r, v, "link_layer", n->link_layer, sizeof n->link_layer));
    INT(v, "mtu", n->mtu);
    CT_TRY(get_str(r, v, "guid", n->guid, sizeof n->guid));
    CT_TRY(get_str(r, v, "sys_guid", n->sys_guid, sizeof n->sys_guid));
    CT_TRY(get_str(r, v, "mac", n->mac, sizeof n->mac));
    CT_TRY(get_str(r, v, "model", n->model, sizeof n->model));
    CT_TRY(get_str(r, v, "fw", n->fw, sizeof n->fw));
    CT_TRY(get_str(r, v, "busid", n->busid, sizeof n->busid));
    IDX(v, "pci", t->n_pci, n->pci);
    U16(v, "vendor", n->vendor);
    U16(v, "device", n->device);
    L(v, "class", 0, 0xffffff, n->class_code);
    INT(v, "numa", n->numa);
    CT_TRY(get_dup(r, v, "cpus", &n->cpus));
    INT(v, "netdev_type", n->netdev_type);
    CT_TRY(get_dup(r, v, "counters", &n->counters));
    return get_dup(r, v, "hw_counters", &n->hw_counters);
}

static int r_accel(struct rd *r, json_t *v, struct ct_topo *t)
{
    int k = ct_topo_add_accel(t, 0);
    struct ct_accel *a = &t->accel[k];
    L(v, "index", 0, 4096, a->index);
    CT_TRY(get_str(r, v, "busid", a->busid, sizeof a->busid));
    IDX(v, "pci", t->n_pci, a->pci);
    INT(v, "numa", a->numa);
    CT_TRY(get_dup(r, v, "cpus", &a->cpus));
    CT_TRY(get_str(r, v, "model", a->model, sizeof a->model));
    INT(v, "cores", a->cores);
    CT_TRY(get_str(r, v, "core_ids", a->core_ids, sizeof a->core_ids));
    CT_TRY(get_num(r, v, "mem_gb", &a->mem_gb));
    json_t *nb = json_object_get(v, "neighbours"), *x;
    size_t j, n = json_array_size(nb);
    a->nbrs = n ? ct_xcalloc(n, sizeof *a->nbrs) : NULL;
    json_array_foreach(nb, j, x)
    {
        if (!json_is_integer(x) || json_integer_value(x) < 0 || json_integer_value(x) > 4096)
            return type_err(r, "neighbours", "device numbers");
        a->nbrs[a->n_nbrs++] = (int)json_integer_value(x);
    }
    return 0;
}

static int r_link(struct rd *r, json_t *v, struct ct_topo *t)
{
    long gpu = 0, peer = 0, count = 1;
    int kind = 0;
    CT_TRY(get_int(r, v, "gpu", 0, (long)t->n_gpu - 1, &gpu));
    CT_TRY(get_enum(r, v, "peer_kind", ct_json_end_kinds, 3, &kind));
    long hi = kind == CT_END_GPU        ? (long)t->n_gpu - 1
              : kind == CT_END_NVSWITCH ? (long)t->n_nvswitch - 1
                                        : 4096;
    CT_TRY(get_int(r, v, "peer", kind == CT_END_CPU ? -1 : 0, hi, &peer));
    CT_TRY(get_int(r, v, "count", 1, 1024, &count));
    ct_topo_add_nvlink(t, (int)gpu, (enum ct_end_kind)kind, (int)peer, (int)count);
    return 0;
}

static int r_hint(struct rd *r, json_t *v, struct ct_topo *t)
{
    int ka = 0, kb = 0;
    long a = 0, b = 0, path = 0;
    CT_TRY(get_enum(r, v, "a_kind", ct_json_ep_kinds, 2, &ka));
    CT_TRY(get_enum(r, v, "b_kind", ct_json_ep_kinds, 2, &kb));
    CT_TRY(get_int(r, v, "a", 0, (long)(ka ? t->n_nic : t->n_gpu) - 1, &a));
    CT_TRY(get_int(r, v, "b", 0, (long)(kb ? t->n_nic : t->n_gpu) - 1, &b));
    CT_TRY(get_int(r, v, "path", 0, CT_PATH_UNKNOWN, &path));
    ct_topo_add_hint(t, (enum ct_ep_kind)ka, (int)a, (enum ct_ep_kind)kb, (int)b,
                     (enum ct_path)path);
    return 0;
}

static int r_array(struct rd *r, json_t *root, const char *key, struct ct_topo *t,
                   int (*fn)(struct rd *, json_t *, struct ct_topo *))
{
    json_t *a = json_object_get(root, key), *v;
    size_t i;
    if (a && !json_is_array(a))
        return ct_err_set(r->err, CT_EINVAL, "topology JSON: %s: expected an array", key);
    json_array_foreach(a, i, v)
    {
        snprintf(r->where, sizeof r->where, "%s[%zu]", key, i);
        if (!json_is_object(v))
            return ct_err_set(r->err, CT_EINVAL, "topology JSON: %s: expected an object", r->where);
        CT_TRY(fn(r, v, t));
    }
    r->where[0] = 0;
    return 0;
}

static int r_topo(struct rd *r, json_t *root, struct ct_topo *t)
{
    json_t *s = json_object_get(root, "schema"), *v;
    if (!json_is_string(s) || strcmp(json_string_value(s), CT_TOPO_SCHEMA))
        return ct_err_set(r->err, CT_EINVAL, "topology JSON: \"schema\" is not \"%s\"",
                          CT_TOPO_SCHEMA);
    CT_TRY(get_dup(r, root, "hostname", &t->hostname));
    CT_TRY(get_dup(r, root, "origin", &t->origin));
    json_t *ranks = json_object_get(root, "ranks");
    INT(ranks, "first", t->rank_first);
    INT(ranks, "count", t->rank_count);
    json_t *cpu = json_object_get(root, "cpu");
    if (cpu)
        CT_TRY(r_cpu(r, cpu, t));
    r->where[0] = 0;
    json_t *pci = json_object_get(root, "pci");
    size_t i, npci = json_array_size(pci);
    if (pci && !json_is_array(pci))
        return type_err(r, "pci", "an array");
    json_array_foreach(pci, i, v)
    {
        snprintf(r->where, sizeof r->where, "pci[%zu]", i);
        if (!json_is_object(v))
            return type_err(r, "", "an object");
        CT_TRY(r_pci(r, v, t, npci));
    }
    CT_TRY(r_array(r, root, "gpus", t, r_gpu));
    CT_TRY(r_array(r, root, "nics", t, r_nic));
    json_array_foreach(json_object_get(root, "nvswitches"), i, v)
    {
        char bus[CT_BUSID_LEN] = "";
        snprintf(r->where, sizeof r->where, "nvswitches[%zu]", i);
        CT_TRY(get_str(r, v, "busid", bus, sizeof bus));
        int k = ct_topo_add_nvswitch(t, bus);
        IDX(v, "pci", npci, t->nvswitch[k].pci);
    }
    CT_TRY(r_array(r, root, "nvlinks", t, r_link));
    CT_TRY(r_array(r, root, "accels", t, r_accel));
    json_t *nvs = json_object_get(root, "nvswitch_gen");
    CT_TRY(get_str(r, nvs, "gen", t->nvswitch_gen, sizeof t->nvswitch_gen));
    CT_TRY(get_str(r, nvs, "inferred_from", t->nvswitch_basis, sizeof t->nvswitch_basis));
    json_t *torus = json_object_get(root, "torus");
    L(torus, "rows", 0, 4096, t->torus_rows);
    L(torus, "cols", 0, 4096, t->torus_cols);
    CT_TRY(r_array(r, root, "hints", t, r_hint));
    json_array_foreach(json_object_get(root, "notes"), i, v) if (json_is_string(v))
        ct_topo_note(t, "%s", json_string_value(v));
    return 0;
}

struct ct_topo *ct_topo_from_json(const char *text, size_t len, struct ct_err *err)
{
    json_error_t je;
    json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
    if (!root) {
        ct_err_set(err, CT_EINVAL, "topology JSON: line %d: %s", je.line, je.text);
        return NULL;
    }
    struct ct_topo *t = ct_topo_new();
    struct rd r = {err, ""};
    int rc = json_is_object(root) ? r_topo(&r, root, t)
                                  : ct_err_set(err, CT_EINVAL, "topology JSON: not an object");
    json_decref(root);
    if (rc < 0) {
        ct_topo_free(t);
        return NULL;
    }
    ct_topo_finalize(t);
    return t;
}

#else

struct ct_topo *ct_topo_from_json(const char *text, size_t len, struct ct_err *err)
{
    ct_err_set(err, CT_EUNSUPP, "JSON input needs jansson (not built)");
    return NULL;
}

#endif

/* The JSON importer (probe --from json): the topology a file holds. */
int ct_imp_json(struct ct_topo *t, const char *buf, size_t len, const char *fname,
                struct ct_err *err)
{
    struct ct_topo *x = ct_topo_from_json(buf, len, err);
    if (!x)
        return ct_err_wrap(err, "'%s': ", fname);
    ct_topo_move(t, x);
    return 0;
}
