/* SPDX-License-Identifier: MIT */
/*
 * Topology models: colltune-model-topology/1 files (read, write), the built-in node
 * presets (model/presets, compiled in), network specs and the shape checks.
 */
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/file.h"
#include "model.h"

#define SCHEMA "colltune-model-topology/1"

/* Generated from the JSON files in model/presets by scripts/embed-presets.sh. */
struct ct_mpreset {
    const char *name, *text;
};
extern const struct ct_mpreset ct_mpresets[];
extern const size_t ct_mpresets_count;

void ct_mtopo_init(struct ct_mtopo *t)
{
    memset(t, 0, sizeof *t);
    t->nodes = 1;
    t->oversub = 1;
    t->intra.gbps = NAN;
    t->nic.gbps = NAN;
}

int ct_mtopo_ranks(const struct ct_mtopo *t)
{
    long long n = (long long)t->nodes * t->ranks_per_node;
    return n > 0 && n <= 1 << 24 ? (int)n : 0;
}

static int bad_rate(const char *name, const char *key, double v, bool required, struct ct_err *err)
{
    if (isnan(v) && required)
        return ct_err_set(err, CT_EINVAL, "topology '%s': %s: missing link rate", name, key);
    if (!isnan(v) && (v < 0 || isinf(v)))
        return ct_err_set(err, CT_EINVAL, "topology '%s': %s: bandwidth %g is not a positive "
                          "rate", name, key, v);
    if (!isnan(v) && v == 0 && required)
        return ct_err_set(err, CT_EINVAL, "topology '%s': %s: bandwidth 0", name, key);
    return 0;
}

int ct_mtopo_check(const struct ct_mtopo *t, struct ct_err *err)
{
    const char *nm = t->name[0] ? t->name : "?";
    if (t->ranks_per_node < 1 || t->nodes < 1 || !ct_mtopo_ranks(t))
        return ct_err_set(err, CT_EINVAL, "topology '%s': %d nodes x %d ranks cannot host a job",
                          nm, t->nodes, t->ranks_per_node);
    CT_TRY(bad_rate(nm, "node.intra.gbps", t->intra.gbps, t->ranks_per_node > 1, err));
    CT_TRY(bad_rate(nm, "node.nic.gbps", t->nic.gbps, t->nodes > 1, err));
    if (t->nodes > 1 && t->rails < 1)
        return ct_err_set(err, CT_EINVAL, "topology '%s': %d nodes but no NIC rails", nm, t->nodes);
    if (t->rails < 0 || t->rails > t->ranks_per_node * 64)
        return ct_err_set(err, CT_EINVAL, "topology '%s': %d rails", nm, t->rails);
    if ((t->torus_rows > 0) != (t->torus_cols > 0) ||
        (t->torus_rows > 0 && t->torus_rows * t->torus_cols != t->ranks_per_node))
        return ct_err_set(err, CT_EINVAL, "topology '%s': a %dx%d torus does not hold the %d ranks "
                          "of a node", nm, t->torus_rows, t->torus_cols, t->ranks_per_node);
    if (t->cores_per_node < 0)
        return ct_err_set(err, CT_EINVAL, "topology '%s': node.cores %d is negative", nm,
                          t->cores_per_node);
    const double v[] = {t->intra.alpha_us, t->nic.alpha_us, t->hop_us,       t->gamma_gbps,
                        t->copy_gbps,      t->step_us,      t->slice_us,     t->msg_us,
                        t->cache_mib,      t->mem_factor,   t->onesided_gbps};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        if (!(v[i] >= 0) || isinf(v[i]))
            return ct_err_set(err, CT_EINVAL, "topology '%s': a latency, overhead or rate is "
                              "negative or not a number (%g)", nm, v[i]);
    if (!(t->oversub >= 1) || t->nodes_per_leaf < 0)
        return ct_err_set(err, CT_EINVAL, "topology '%s': oversubscription %g must be >= 1",
                          nm, t->oversub);
    return 0;
}

/* ---- JSON ------------------------------------------------------------------------------ */

struct rd {
    const char *what;
    struct ct_err *err;
};

static int num(struct rd *r, json_t *o, const char *at, const char *key, double *out)
{
    json_t *v = o ? json_object_get(o, key) : NULL;
    if (!v)
        return 0;
    if (!json_is_number(v))
        return ct_err_set(r->err, CT_EINVAL, "%s: %s%s: expected a number", r->what, at, key);
    *out = json_number_value(v);
    return 0;
}

static int inum(struct rd *r, json_t *o, const char *at, const char *key, int *out)
{
    double d = *out;
    CT_TRY(num(r, o, at, key, &d));
    if (d != floor(d) || d < 0 || d > 1 << 24)
        return ct_err_set(r->err, CT_EINVAL, "%s: %s%s: expected a count, got %g", r->what, at,
                          key, d);
    *out = (int)d;
    return 0;
}

static int str(struct rd *r, json_t *o, const char *at, const char *key, char *out, size_t n)
{
    json_t *v = o ? json_object_get(o, key) : NULL;
    if (!v)
        return 0;
    if (!json_is_string(v))
        return ct_err_set(r->err, CT_EINVAL, "%s: %s%s: expected a string", r->what, at, key);
    snprintf(out, n, "%s", json_string_value(v));
    return 0;
}

static int cls(struct rd *r, json_t *node, const char *key, struct ct_mclass *c, char *tp,
               size_t tpn)
{
    json_t *o = node ? json_object_get(node, key) : NULL;
    char at[32];
    snprintf(at, sizeof at, "node.%s.", key);
    CT_TRY(num(r, o, at, "alpha_us", &c->alpha_us));
    CT_TRY(num(r, o, at, "gbps", &c->gbps));
    return str(r, o, at, "transport", tp, tpn);
}

int ct_mtopo_parse(const char *text, const char *what, struct ct_mtopo *t, struct ct_err *err)
{
    json_error_t je;
    json_t *doc = json_loads(text, 0, &je);
    if (!doc)
        return ct_err_set(err, CT_EINVAL, "%s: not JSON (line %d: %s)", what, je.line, je.text);
    struct rd r = {what, err};
    int rc = 0;
    json_t *sch = json_object_get(doc, "schema");
    if (!json_is_string(sch) || strcmp(json_string_value(sch), SCHEMA)) {
        rc = ct_err_set(err, CT_EINVAL, "%s: schema is not %s", what, SCHEMA);
        goto out;
    }
    json_t *node = json_object_get(doc, "node"), *net = json_object_get(doc, "net");
    if (!json_is_object(node)) {
        rc = ct_err_set(err, CT_EINVAL, "%s: no \"node\" object", what);
        goto out;
    }
    char tor[32] = "";
    if ((rc = str(&r, doc, "", "name", t->name, sizeof t->name)) < 0 ||
        (rc = str(&r, doc, "", "source", t->source, sizeof t->source)) < 0 ||
        (rc = inum(&r, node, "node.", "ranks", &t->ranks_per_node)) < 0 ||
        (rc = inum(&r, node, "node.", "rails", &t->rails)) < 0 ||
        (rc = inum(&r, node, "node.", "cores", &t->cores_per_node)) < 0 ||
        (rc = str(&r, node, "node.", "torus", tor, sizeof tor)) < 0 ||
        (rc = cls(&r, node, "intra", &t->intra, t->intra_transport, sizeof t->intra_transport)) < 0 ||
        (rc = cls(&r, node, "nic", &t->nic, t->inter_transport, sizeof t->inter_transport)) < 0 ||
        (rc = num(&r, node, "node.", "gamma_gbps", &t->gamma_gbps)) < 0 ||
        (rc = num(&r, node, "node.", "copy_gbps", &t->copy_gbps)) < 0 ||
        (rc = num(&r, node, "node.", "step_us", &t->step_us)) < 0 ||
        (rc = num(&r, node, "node.", "slice_us", &t->slice_us)) < 0 ||
        (rc = num(&r, node, "node.", "msg_us", &t->msg_us)) < 0 ||
        (rc = num(&r, node, "node.", "hop_us", &t->hop_us)) < 0 ||
        (rc = num(&r, node, "node.", "onesided_gbps", &t->onesided_gbps)) < 0 ||
        (rc = num(&r, node, "node.", "cache_mib", &t->cache_mib)) < 0 ||
        (rc = num(&r, node, "node.", "mem_factor", &t->mem_factor)) < 0 ||
        (rc = inum(&r, net, "net.", "nodes", &t->nodes)) < 0 ||
        (rc = inum(&r, net, "net.", "nodes_per_leaf", &t->nodes_per_leaf)) < 0 ||
        (rc = num(&r, net, "net.", "oversub", &t->oversub)) < 0)
        goto out;
    json_t *fm = net ? json_object_get(net, "full_mesh") : NULL;
    if (fm)
        t->full_mesh = json_is_true(fm);
    if (tor[0] && sscanf(tor, "%dx%d", &t->torus_rows, &t->torus_cols) != 2) {
        rc = ct_err_set(err, CT_EINVAL, "%s: node.torus: expected RxC, got '%s'", what, tor);
        goto out;
    }
    if (!t->name[0])
        snprintf(t->name, sizeof t->name, "%s", what);
    rc = ct_mtopo_check(t, err);
out:
    json_decref(doc);
    return rc;
}

int ct_mtopo_load(const char *path, struct ct_mtopo *t, struct ct_err *err)
{
    char *txt;
    size_t len;
    CT_TRY(ct_file_read(path, &txt, &len, err));
    ct_mtopo_init(t);
    int rc = ct_mtopo_parse(txt, path, t, err);
    free(txt);
    return rc;
}

static json_t *cls_json(const struct ct_mclass *c, const char *tp)
{
    json_t *o = json_object();
    json_object_set_new(o, "alpha_us", json_real(c->alpha_us));
    json_object_set_new(o, "gbps", json_real(c->gbps));
    if (tp[0])
        json_object_set_new(o, "transport", json_string(tp));
    return o;
}

int ct_mtopo_save(const char *path, const struct ct_mtopo *t, struct ct_err *err)
{
    json_t *doc = json_object(), *node = json_object(), *net = json_object();
    json_object_set_new(doc, "schema", json_string(SCHEMA));
    json_object_set_new(doc, "name", json_string(t->name));
    json_object_set_new(doc, "source", json_string(t->source));
    json_object_set_new(node, "ranks", json_integer(t->ranks_per_node));
    json_object_set_new(node, "rails", json_integer(t->rails));
    if (t->cores_per_node > 0)
        json_object_set_new(node, "cores", json_integer(t->cores_per_node));
    if (t->torus_rows > 0) {
        char tor[32];
        snprintf(tor, sizeof tor, "%dx%d", t->torus_rows, t->torus_cols);
        json_object_set_new(node, "torus", json_string(tor));
    }
    json_object_set_new(node, "intra", cls_json(&t->intra, t->intra_transport));
    if (!isnan(t->nic.gbps))
        json_object_set_new(node, "nic", cls_json(&t->nic, t->inter_transport));
    json_object_set_new(node, "gamma_gbps", json_real(t->gamma_gbps));
    json_object_set_new(node, "copy_gbps", json_real(t->copy_gbps));
    json_object_set_new(node, "step_us", json_real(t->step_us));
    json_object_set_new(node, "slice_us", json_real(t->slice_us));
    json_object_set_new(node, "msg_us", json_real(t->msg_us));
    json_object_set_new(node, "hop_us", json_real(t->hop_us));
    if (t->onesided_gbps > 0)
        json_object_set_new(node, "onesided_gbps", json_real(t->onesided_gbps));
    if (t->cache_mib > 0 && t->mem_factor > 1) {
        json_object_set_new(node, "cache_mib", json_real(t->cache_mib));
        json_object_set_new(node, "mem_factor", json_real(t->mem_factor));
    }
    json_object_set_new(doc, "node", node);
    json_object_set_new(net, "nodes", json_integer(t->nodes));
    json_object_set_new(net, "nodes_per_leaf", json_integer(t->nodes_per_leaf));
    json_object_set_new(net, "oversub", json_real(t->oversub));
    json_object_set_new(net, "full_mesh", json_boolean(t->full_mesh));
    json_object_set_new(doc, "net", net);
    char *txt = json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    json_decref(doc);
    return ct_file_write_doc(path, txt, "the topology", err);
}

/* ---- presets and network specs --------------------------------------------------------- */

const char *ct_mtopo_preset_at(size_t i)
{
    return i < ct_mpresets_count ? ct_mpresets[i].name : NULL;
}

int ct_mtopo_preset(const char *name, struct ct_mtopo *t, struct ct_err *err)
{
    for (size_t i = 0; i < ct_mpresets_count; i++)
        if (!strcmp(ct_mpresets[i].name, name)) {
            ct_mtopo_init(t);
            char what[64];
            snprintf(what, sizeof what, "preset %s", name);
            return ct_mtopo_parse(ct_mpresets[i].text, what, t, err);
        }
    char names[256] = "";
    for (size_t i = 0; i < ct_mpresets_count; i++)
        snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", i ? ", " : "",
                 ct_mpresets[i].name);
    return ct_err_set(err, CT_EINVAL, "unknown node preset '%s' (%s)", name, names);
}

int ct_mtopo_net(struct ct_mtopo *t, const char *spec, struct ct_err *err)
{
    if (!strcmp(spec, "fullmesh")) {
        t->full_mesh = true;
        return 0;
    }
    if (strncmp(spec, "railfat", 7) || (spec[7] && spec[7] != ':'))
        return ct_err_set(err, CT_EINVAL, "--net '%s': expected railfat[:OVER[:1]] or fullmesh",
                          spec);
    double over = 1, under = 1;
    if (spec[7]) {
        char tail;
        int n = sscanf(spec + 8, "%lf:%lf%c", &over, &under, &tail);
        if ((n != 1 && n != 2) || !(over > 0) || !(under > 0) || over / under < 1)
            return ct_err_set(err, CT_EINVAL, "--net '%s': oversubscription must be N:1 with "
                              "N >= 1 (e.g. railfat:2:1)", spec);
    }
    t->full_mesh = false;
    t->oversub = over / under;
    return 0;
}
