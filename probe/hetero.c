/* SPDX-License-Identifier: MIT */
/* Heterogeneity across hosts: each topology is reduced to sorted "key=value" facts (names,
 * GUIDs, MACs and notes left out), hosts with equal facts form a shape, and hosts outside the
 * largest shape are listed with the facts where they differ from it. */
#include "probe_int.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

struct facts {
    char **kv; /* "key\tvalue" */
    size_t n;
};

static void fact(struct facts *f, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void fact(struct facts *f, const char *key, const char *fmt, ...)
{
    char v[256], line[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(v, sizeof v, fmt, ap);
    va_end(ap);
    snprintf(line, sizeof line, "%s\t%s", key, v);
    f->kv = ct_xrealloc(f->kv, (f->n + 1) * sizeof *f->kv);
    f->kv[f->n++] = ct_xstrdup(line);
}

static void nic_facts(const struct ct_nic *n, struct facts *f)
{
    char k[96], key[128];
    if (n->dev[0])
        snprintf(k, sizeof k, "nic %s:%d", n->dev, n->port);
    else
        snprintf(k, sizeof k, "nic %s", n->netdev[0] ? n->netdev : n->busid);
#define NF(field, ...) (snprintf(key, sizeof key, "%s %s", k, field), fact(f, key, __VA_ARGS__))
    NF("kind", "%s", ct_nic_kind_name(n->kind));
    NF("rate_gbps", "%g", n->rate_gbps);
    NF("width", "%dX %s", n->lanes, n->speed);
    NF("state", "%d %s", n->state, n->state_str);
    NF("phys_state", "%d", n->phys_state);
    NF("link_layer", "%s", n->link_layer);
    NF("mtu", "%d", n->mtu);
    NF("model", "%s", n->model);
    NF("fw", "%s", n->fw);
    NF("pci", "%s", n->busid);
    NF("numa", "%d", n->numa);
#undef NF
}

static void collect(const struct ct_topo *t, struct facts *f)
{
    char key[96];
    fact(f, "cpu packages", "%zu", t->n_pkg);
    fact(f, "cpu pus", "%d", t->npus);
    fact(f, "cpu cores", "%d", t->ncores);
    for (size_t i = 0; i < t->n_pkg; i++) {
        snprintf(key, sizeof key, "package %d model", t->pkg[i].os_index);
        fact(f, key, "%s", t->pkg[i].model ? t->pkg[i].model : "");
    }
    fact(f, "numa nodes", "%zu", t->n_numa);
    for (size_t i = 0; i < t->n_numa; i++) {
        snprintf(key, sizeof key, "numa %d cpus", t->numa[i].os_index);
        fact(f, key, "%d", ct_cpulist_count(t->numa[i].cpus));
    }
    fact(f, "gpu count", "%zu", t->n_gpu);
    for (size_t g = 0; g < t->n_gpu; g++) {
        const struct ct_gpu *x = &t->gpu[g];
        int p = x->pci;
        snprintf(key, sizeof key, "gpu%zu model", g);
        fact(f, key, "%s", x->model ? x->model : "");
        snprintf(key, sizeof key, "gpu%zu pci", g);
        fact(f, key, "%s", x->busid);
        snprintf(key, sizeof key, "gpu%zu numa", g);
        fact(f, key, "%d", x->numa);
        snprintf(key, sizeof key, "gpu%zu pcie_width", g);
        fact(f, key, "%d", p >= 0 ? t->pci[p].link_width : 0);
        snprintf(key, sizeof key, "gpu%zu nvlinks", g);
        fact(f, key, "%d", ct_topo_nvlink_total(t, (int)g));
    }
    fact(f, "nvswitch count", "%zu", t->n_nvswitch);
    for (size_t i = 0; i < t->n_nic; i++)
        nic_facts(&t->nic[i], f);
    fact(f, "accel count", "%zu", t->n_accel);
    fact(f, "accel torus", "%dx%d", t->torus_rows, t->torus_cols);
}

static int kv_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void release(struct facts *f)
{
    for (size_t i = 0; i < f->n; i++)
        free(f->kv[i]);
    free(f->kv);
}

static int same(const struct facts *a, const struct facts *b)
{
    if (a->n != b->n)
        return 0;
    for (size_t i = 0; i < a->n; i++)
        if (strcmp(a->kv[i], b->kv[i]))
            return 0;
    return 1;
}

static void add_diff(struct ct_hetero *h, size_t host, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void add_diff(struct ct_hetero *h, size_t host, const char *fmt, ...)
{
    h->diffs = ct_xrealloc(h->diffs, (h->n_diffs + 1) * sizeof *h->diffs);
    struct ct_hetero_diff *d = &h->diffs[h->n_diffs++];
    d->host = host;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(d->what, sizeof d->what, fmt, ap);
    va_end(ap);
}

/* Length of the object part of a fact's key ("nic mlx5_0:1" of "nic mlx5_0:1 rate_gbps"):
 * up to its last space; 0 for a key of one word. */
static size_t object_len(const char *kv)
{
    size_t k = strcspn(kv, "\t"), o = 0;
    for (size_t i = 0; i < k; i++)
        if (kv[i] == ' ')
            o = i;
    return o;
}

/* Does f hold any fact of the object obj (length len)? */
static int has_object(const struct facts *f, const char *obj, size_t len)
{
    for (size_t i = 0; i < f->n; i++)
        if (!strncmp(f->kv[i], obj, len) && f->kv[i][len] == ' ')
            return 1;
    return 0;
}

/*
 * An object (a NIC, a GPU, a NUMA node) that only one side has, as one difference: its name
 * and its identifying facts. Consumes the run of l's facts about it from *i.
 */
static void whole_object(struct ct_hetero *h, size_t host, const struct facts *l, size_t *i,
                         size_t len, int here)
{
    static const char *const ids[] = {"kind", "model", "rate_gbps", "width"};
    char what[160] = "";
    size_t off = 0, start = *i;
    const char *obj = l->kv[start];
    for (; *i < l->n && !strncmp(l->kv[*i], obj, len) && l->kv[*i][len] == ' '; (*i)++) {
        const char *attr = l->kv[*i] + len + 1;
        size_t ka = strcspn(attr, "\t");
        for (size_t k = 0; k < sizeof ids / sizeof ids[0] && off < sizeof what; k++)
            if (strlen(ids[k]) == ka && !strncmp(attr, ids[k], ka) && attr[ka])
                off += (size_t)snprintf(what + off, sizeof what - off, "%s%s %s",
                                        off ? ", " : "", ids[k], attr + ka + 1);
    }
    add_diff(h, host, "%.*s: %s%s%s%s", (int)len, obj,
             here ? "only on this host" : "missing, the majority has it", what[0] ? " (" : "",
             what, what[0] ? ")" : "");
}

/* Walk two sorted fact lists and record where host differs from the majority rep. */
static void diff(struct ct_hetero *h, size_t host, const struct facts *x, const struct facts *m)
{
    size_t i = 0, j = 0;
    while (i < x->n || j < m->n) {
        const char *a = i < x->n ? x->kv[i] : NULL, *b = j < m->n ? m->kv[j] : NULL;
        size_t ka = a ? strcspn(a, "\t") : 0, kb = b ? strcspn(b, "\t") : 0;
        int c = !a ? 1 : !b ? -1 : strncmp(a, b, ka > kb ? ka : kb);
        size_t oa = a ? object_len(a) : 0, ob = b ? object_len(b) : 0;
        if (c == 0) {
            if (strcmp(a, b))
                add_diff(h, host, "%.*s: %s (majority %s)", (int)ka, a, a + ka + 1, b + kb + 1);
            i++;
            j++;
        } else if (c < 0 && oa && !has_object(m, a, oa)) {
            whole_object(h, host, x, &i, oa, 1);
        } else if (c < 0) {
            add_diff(h, host, "%.*s: %s (majority has none)", (int)ka, a, a + ka + 1);
            i++;
        } else if (ob && !has_object(x, b, ob)) {
            whole_object(h, host, m, &j, ob, 0);
        } else {
            add_diff(h, host, "%.*s: missing (majority %s)", (int)kb, b, b + kb + 1);
            j++;
        }
    }
}

int ct_topo_hetero(const struct ct_topo *const *hosts, size_t n, struct ct_hetero *out,
                   struct ct_err *err)
{
    memset(out, 0, sizeof *out);
    if (!n)
        return ct_err_set(err, CT_EINVAL, "heterogeneity: no host");
    struct facts *f = ct_xcalloc(n, sizeof *f);
    for (size_t i = 0; i < n; i++) {
        collect(hosts[i], &f[i]);
        qsort(f[i].kv, f[i].n, sizeof *f[i].kv, kv_cmp);
    }
    out->group_of = ct_xcalloc(n, sizeof *out->group_of);
    out->group_size = ct_xcalloc(n, sizeof *out->group_size);
    out->group_rep = ct_xcalloc(n, sizeof *out->group_rep);
    for (size_t i = 0; i < n; i++) {
        size_t g = 0;
        while (g < out->n_groups && !same(&f[i], &f[out->group_rep[g]]))
            g++;
        if (g == out->n_groups)
            out->group_rep[out->n_groups++] = i;
        out->group_of[i] = g;
        out->group_size[g]++;
    }
    size_t maj = 0; /* largest group, earliest on ties, becomes group 0 */
    for (size_t g = 1; g < out->n_groups; g++)
        if (out->group_size[g] > out->group_size[maj])
            maj = g;
    if (maj) {
        size_t s = out->group_size[maj], r = out->group_rep[maj];
        memmove(out->group_size + 1, out->group_size, maj * sizeof *out->group_size);
        memmove(out->group_rep + 1, out->group_rep, maj * sizeof *out->group_rep);
        out->group_size[0] = s;
        out->group_rep[0] = r;
        for (size_t i = 0; i < n; i++)
            out->group_of[i] = out->group_of[i] == maj  ? 0
                               : out->group_of[i] < maj ? out->group_of[i] + 1
                                                        : out->group_of[i];
    }
    for (size_t i = 0; i < n; i++)
        if (out->group_of[i])
            diff(out, i, &f[i], &f[out->group_rep[0]]);
    for (size_t i = 0; i < n; i++)
        release(&f[i]);
    free(f);
    return 0;
}

void ct_hetero_release(struct ct_hetero *h)
{
    free(h->group_of);
    free(h->group_size);
    free(h->group_rep);
    free(h->diffs);
    memset(h, 0, sizeof *h);
}

static const char *host_name(const struct ct_topo *const *hosts, size_t i, char *buf, size_t len)
{
    if (hosts[i]->hostname)
        snprintf(buf, len, "%s", hosts[i]->hostname);
    else
        snprintf(buf, len, "host%zu", i);
    return buf;
}

int ct_hetero_render(const struct ct_topo *const *hosts, size_t n, const struct ct_hetero *h,
                     FILE *out, struct ct_err *err)
{
    char name[128];
    fprintf(out, "%zu host(s), %zu shape(s)\n", n, h->n_groups);
    for (size_t g = 0; g < h->n_groups; g++) {
        fprintf(out, "  shape %zu%s: %zu host(s):", g, g ? "" : " (majority)", h->group_size[g]);
        for (size_t i = 0; i < n; i++)
            if (h->group_of[i] == g)
                fprintf(out, " %s", host_name(hosts, i, name, sizeof name));
        fputc('\n', out);
    }
    size_t last = (size_t)-1;
    for (size_t i = 0; i < h->n_diffs; i++) {
        if (h->diffs[i].host != last) {
            last = h->diffs[i].host;
            fprintf(out, "%s differs from the majority:\n",
                    host_name(hosts, last, name, sizeof name));
        }
        fprintf(out, "    %s\n", h->diffs[i].what);
    }
    return 0;
}
