/* SPDX-License-Identifier: MIT */
/* Snapshots as JSON ("schema": "colltune-snapshot/1") and replay of recorded sequences. */
#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/file.h"
#include "monitor.h"

#define SCHEMA "colltune-snapshot/1"

static const char *const flag_names[] = {"first", "saturated", "fallback", "wrapped",
                                         "reset", "gone",      "new",      "virtual"};
#define NFLAGS (sizeof flag_names / sizeof flag_names[0])

/* ---- writing ---------------------------------------------------------------------------- */

/* Unknown values (< 0) are null. */
static json_t *num(double v)
{
    return v < 0 || !isfinite(v) ? json_null() : json_real(v);
}

static json_t *u64(uint64_t v)
{
    return json_integer(v > INT64_MAX ? INT64_MAX : (json_int_t)v);
}

static void set(json_t *o, const char *k, json_t *v)
{
    json_object_set_new(o, k, v);
}

static json_t *nic_json(const struct ct_nic_snap *n)
{
    json_t *o = json_object();
    set(o, "name", json_string(n->name));
    set(o, "dev", json_string(n->dev));
    set(o, "port", json_integer(n->port));
    set(o, "netdev", json_string(n->netdev));
    set(o, "kind", json_string(n->kind));
    set(o, "state", json_string(n->state));
    set(o, "up", json_boolean(n->up));
    set(o, "src", json_string(n->src));
    set(o, "line_gbps", num(n->line_gbps > 0 ? n->line_gbps : -1));
    set(o, "tx_gbps", num(n->tx_gbps));
    set(o, "rx_gbps", num(n->rx_gbps));
    set(o, "util", num(n->util));
    set(o, "tx_pps", num(n->tx_pps));
    set(o, "rx_pps", num(n->rx_pps));
    set(o, "tx_bytes", u64(n->tx_bytes));
    set(o, "rx_bytes", u64(n->rx_bytes));
    set(o, "errors", u64(n->errors));
    set(o, "err_delta", u64(n->err_delta));
    set(o, "err_last", json_string(n->err_last));
    set(o, "cnp_rate", num(n->cnp_rate));
    json_t *f = json_array();
    for (size_t i = 0; i < NFLAGS; i++)
        if (n->flags & (1u << i))
            json_array_append_new(f, json_string(flag_names[i]));
    set(o, "flags", f);
    json_t *h = json_array();
    for (int i = 0; i < n->n_hist && i < CT_SNAP_HIST; i++)
        json_array_append_new(h, num(n->hist[i]));
    set(o, "hist", h);
    return o;
}

static json_t *progress_json(const struct ct_progress *p)
{
    json_t *o = json_object();
    set(o, "cmd", json_string(p->cmd));
    set(o, "phase", json_string(p->phase));
    set(o, "coll", json_string(p->coll));
    set(o, "algo", json_string(p->algo));
    set(o, "params", json_string(p->params));
    set(o, "size", u64(p->size));
    set(o, "done", json_integer(p->done));
    set(o, "total", json_integer(p->total));
    set(o, "elapsed_s", json_real(p->elapsed_s));
    set(o, "remaining_s", num(p->remaining_s));
    return o;
}

static json_t *grid(const struct ct_cluster *c, int which)
{
    json_t *rows = json_array();
    for (size_t i = 0; i < c->n_nodes; i++) {
        json_t *r = json_array();
        for (size_t j = 0; j < c->n_cols; j++) {
            size_t at = i * c->n_cols + j;
            float v = which == 0 ? c->util[at] : c->gbps[at];
            if (which == 2)
                json_array_append_new(r, json_integer(c->errs[at]));
            else if (v == CT_CLUSTER_ABSENT)
                json_array_append_new(r, json_string("absent"));
            else
                json_array_append_new(r, num(v));
        }
        json_array_append_new(rows, r);
    }
    return rows;
}

static json_t *cluster_json(const struct ct_cluster *c)
{
    json_t *o = json_object(), *nodes = json_array(), *cols = json_array();
    for (size_t i = 0; i < c->n_nodes; i++)
        json_array_append_new(nodes, json_string(c->node[i]));
    for (size_t j = 0; j < c->n_cols; j++)
        json_array_append_new(cols, json_string(c->col[j]));
    set(o, "nodes", nodes);
    set(o, "nics", cols);
    set(o, "util", grid(c, 0));
    set(o, "gbps", grid(c, 1));
    set(o, "errs", grid(c, 2));
    return o;
}

char *ct_snapshot_to_json(const struct ct_snapshot *s, unsigned flags, struct ct_err *err)
{
    json_t *o = json_object();
    set(o, "schema", json_string(SCHEMA));
    set(o, "seq", u64(s->seq));
    set(o, "t_ns", json_integer(s->t_ns));
    set(o, "wall_ms", json_integer((json_int_t)(s->wall_s * 1e3 + 0.5)));
    set(o, "interval_s", json_real(s->interval_s));
    set(o, "host", json_string(s->host));
    json_t *nics = json_array();
    for (size_t i = 0; i < s->n_nic; i++)
        json_array_append_new(nics, nic_json(&s->nic[i]));
    set(o, "nics", nics);
    if (s->has_progress)
        set(o, "progress", progress_json(&s->progress));
    if (s->n_pts) {
        json_t *a = json_array();
        for (size_t i = 0; i < s->n_pts; i++) {
            json_t *p = json_object();
            set(p, "coll", json_string(s->pts[i].coll));
            set(p, "algo", json_string(s->pts[i].algo));
            set(p, "size", u64(s->pts[i].size));
            set(p, "busbw", json_real(s->pts[i].busbw));
            json_array_append_new(a, p);
        }
        set(o, "points", a);
    }
    if (s->cluster.n_nodes && s->cluster.n_cols)
        set(o, "cluster", cluster_json(&s->cluster));
    if (s->n_log) {
        json_t *a = json_array();
        for (size_t i = 0; i < s->n_log; i++)
            json_array_append_new(a, json_string(s->log[i]));
        set(o, "log", a);
    }
    if (s->topo)
        set(o, "topo", json_string(s->topo));
    size_t jf = JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(9) |
                (flags & CT_SNAP_JSON_PRETTY ? JSON_INDENT(2) : JSON_COMPACT);
    char *text = json_dumps(o, jf);
    json_decref(o);
    if (!text)
        ct_err_set(err, CT_ENOMEM, "cannot encode the snapshot as JSON");
    return text;
}

/* ---- reading ---------------------------------------------------------------------------- */

static double get_num(const json_t *o, const char *k)
{
    const json_t *v = json_object_get(o, k);
    return json_is_number(v) ? json_number_value(v) : -1;
}

static uint64_t get_u64(const json_t *o, const char *k)
{
    const json_t *v = json_object_get(o, k);
    return json_is_integer(v) && json_integer_value(v) > 0 ? (uint64_t)json_integer_value(v) : 0;
}

static void get_str(const json_t *o, const char *k, char *out, size_t len)
{
    const json_t *v = json_object_get(o, k);
    snprintf(out, len, "%s", json_is_string(v) ? json_string_value(v) : "");
}

static void nic_from(const json_t *o, struct ct_nic_snap *n)
{
    memset(n, 0, sizeof *n);
    get_str(o, "name", n->name, sizeof n->name);
    get_str(o, "dev", n->dev, sizeof n->dev);
    n->port = (int)get_u64(o, "port");
    get_str(o, "netdev", n->netdev, sizeof n->netdev);
    get_str(o, "kind", n->kind, sizeof n->kind);
    get_str(o, "state", n->state, sizeof n->state);
    get_str(o, "src", n->src, sizeof n->src);
    n->up = json_is_true(json_object_get(o, "up"));
    n->line_gbps = get_num(o, "line_gbps");
    if (n->line_gbps < 0)
        n->line_gbps = 0;
    n->tx_gbps = get_num(o, "tx_gbps");
    n->rx_gbps = get_num(o, "rx_gbps");
    n->util = get_num(o, "util");
    n->tx_pps = get_num(o, "tx_pps");
    n->rx_pps = get_num(o, "rx_pps");
    n->tx_bytes = get_u64(o, "tx_bytes");
    n->rx_bytes = get_u64(o, "rx_bytes");
    n->errors = get_u64(o, "errors");
    n->err_delta = get_u64(o, "err_delta");
    get_str(o, "err_last", n->err_last, sizeof n->err_last);
    n->cnp_rate = get_num(o, "cnp_rate");
    size_t i;
    const json_t *v;
    json_array_foreach(json_object_get(o, "flags"), i, v)
    {
        for (size_t k = 0; k < NFLAGS; k++)
            if (json_is_string(v) && !strcmp(json_string_value(v), flag_names[k]))
                n->flags |= 1u << k;
    }
    json_array_foreach(json_object_get(o, "hist"), i, v)
    {
        if (n->n_hist < CT_SNAP_HIST)
            n->hist[n->n_hist++] = json_is_number(v) ? (float)json_number_value(v) : -1.0f;
    }
}

static void progress_from(const json_t *o, struct ct_progress *p)
{
    memset(p, 0, sizeof *p);
    get_str(o, "cmd", p->cmd, sizeof p->cmd);
    get_str(o, "phase", p->phase, sizeof p->phase);
    get_str(o, "coll", p->coll, sizeof p->coll);
    get_str(o, "algo", p->algo, sizeof p->algo);
    get_str(o, "params", p->params, sizeof p->params);
    p->size = get_u64(o, "size");
    const json_t *d = json_object_get(o, "done"), *t = json_object_get(o, "total");
    p->done = json_is_integer(d) ? (long)json_integer_value(d) : 0;
    p->total = json_is_integer(t) ? (long)json_integer_value(t) : 0;
    p->elapsed_s = get_num(o, "elapsed_s");
    if (p->elapsed_s < 0)
        p->elapsed_s = 0;
    p->remaining_s = get_num(o, "remaining_s");
}

static int cluster_from(const json_t *o, struct ct_cluster *c, struct ct_err *err)
{
    const json_t *nodes = json_object_get(o, "nodes"), *cols = json_object_get(o, "nics");
    const json_t *util = json_object_get(o, "util"), *gbps = json_object_get(o, "gbps");
    const json_t *errs = json_object_get(o, "errs");
    size_t nn = json_array_size(nodes), nc = json_array_size(cols);
    if (!nn || !nc || json_array_size(util) != nn || json_array_size(gbps) != nn)
        return ct_err_set(err, CT_EINVAL, "cluster: nodes, nics, util and gbps do not agree");
    c->n_nodes = nn;
    c->n_cols = nc;
    c->node = ct_xcalloc(nn, sizeof *c->node);
    c->col = ct_xcalloc(nc, sizeof *c->col);
    c->util = ct_xcalloc(nn * nc, sizeof *c->util);
    c->gbps = ct_xcalloc(nn * nc, sizeof *c->gbps);
    c->errs = ct_xcalloc(nn * nc, sizeof *c->errs);
    for (size_t i = 0; i < nn; i++) {
        const json_t *v = json_array_get(nodes, i);
        snprintf(c->node[i], sizeof c->node[i], "%s",
                 json_is_string(v) ? json_string_value(v) : "");
    }
    for (size_t j = 0; j < nc; j++) {
        const json_t *v = json_array_get(cols, j);
        snprintf(c->col[j], sizeof c->col[j], "%s", json_is_string(v) ? json_string_value(v) : "");
    }
    for (size_t i = 0; i < nn; i++)
        for (size_t j = 0; j < nc; j++) {
            const json_t *u = json_array_get(json_array_get(util, i), j);
            const json_t *g = json_array_get(json_array_get(gbps, i), j);
            const json_t *e = json_array_get(json_array_get(errs, i), j);
            size_t at = i * nc + j;
            c->util[at] = json_is_string(u)   ? CT_CLUSTER_ABSENT
                          : json_is_number(u) ? (float)json_number_value(u)
                                              : -1.0f;
            c->gbps[at] = json_is_string(g)   ? CT_CLUSTER_ABSENT
                          : json_is_number(g) ? (float)json_number_value(g)
                                              : -1.0f;
            c->errs[at] = json_is_integer(e) ? (uint32_t)json_integer_value(e) : 0;
        }
    return 0;
}

static int from_obj(const json_t *o, struct ct_snapshot *s, struct ct_err *err)
{
    const json_t *schema = json_object_get(o, "schema");
    if (!json_is_object(o) || !json_is_string(schema) || strcmp(json_string_value(schema), SCHEMA))
        return ct_err_set(err, CT_EINVAL, "not a %s document", SCHEMA);
    ct_snapshot_release(s);
    s->seq = get_u64(o, "seq");
    const json_t *t = json_object_get(o, "t_ns");
    s->t_ns = json_is_integer(t) ? (int64_t)json_integer_value(t) : 0;
    s->wall_s = (double)get_u64(o, "wall_ms") / 1e3;
    s->interval_s = get_num(o, "interval_s");
    if (s->interval_s < 0)
        s->interval_s = 0;
    get_str(o, "host", s->host, sizeof s->host);
    const json_t *nics = json_object_get(o, "nics"), *v;
    size_t i;
    s->n_nic = json_array_size(nics);
    s->nic = s->n_nic ? ct_xcalloc(s->n_nic, sizeof *s->nic) : NULL;
    json_array_foreach(nics, i, v) nic_from(v, &s->nic[i]);
    const json_t *p = json_object_get(o, "progress");
    if (json_is_object(p)) {
        s->has_progress = true;
        progress_from(p, &s->progress);
    }
    json_array_foreach(json_object_get(o, "points"), i, v)
    {
        char coll[16], algo[64];
        get_str(v, "coll", coll, sizeof coll);
        get_str(v, "algo", algo, sizeof algo);
        ct_snapshot_point(s, coll, algo, get_u64(v, "size"), get_num(v, "busbw"));
    }
    const json_t *c = json_object_get(o, "cluster");
    if (json_is_object(c) && cluster_from(c, &s->cluster, err) < 0) {
        ct_snapshot_release(s);
        return CT_EINVAL;
    }
    json_array_foreach(json_object_get(o, "log"), i, v)
    {
        if (json_is_string(v))
            ct_snapshot_log(s, SIZE_MAX, json_string_value(v));
    }
    const json_t *topo = json_object_get(o, "topo");
    if (json_is_string(topo))
        s->topo = ct_xstrdup(json_string_value(topo));
    return 0;
}

int ct_snapshot_from_json(const char *text, size_t len, struct ct_snapshot *s, struct ct_err *err)
{
    json_error_t je;
    json_t *o = json_loadb(text, len, 0, &je);
    if (!o)
        return ct_err_set(err, CT_EINVAL, "snapshot JSON line %d: %s", je.line, je.text);
    int rc = from_obj(o, s, err);
    json_decref(o);
    return rc;
}

/* ---- replay ------------------------------------------------------------------------------- */

struct ct_replay {
    struct ct_snapshot *frames;
    size_t n, next;
};

struct ct_replay *ct_replay_open(const char *path, struct ct_err *err)
{
    char *buf;
    size_t len;
    if (ct_file_read(path, &buf, &len, err) < 0)
        return NULL;
    struct ct_replay *r = ct_xcalloc(1, sizeof *r);
    size_t off = 0;
    for (;;) {
        while (off < len &&
               (buf[off] == ' ' || buf[off] == '\n' || buf[off] == '\r' || buf[off] == '\t'))
            off++;
        if (off >= len)
            break;
        json_error_t je;
        json_t *o = json_loadb(buf + off, len - off, JSON_DISABLE_EOF_CHECK, &je);
        if (!o) {
            ct_err_set(err, CT_EINVAL, "'%s': frame %zu: %s", path, r->n + 1, je.text);
            goto fail;
        }
        r->frames = ct_xrealloc(r->frames, (r->n + 1) * sizeof *r->frames);
        ct_snapshot_init(&r->frames[r->n]);
        int rc = from_obj(o, &r->frames[r->n], err);
        json_decref(o);
        if (rc < 0) {
            ct_err_wrap(err, "'%s': frame %zu: ", path, r->n + 1);
            goto fail;
        }
        r->n++;
        off += je.position;
    }
    free(buf);
    if (!r->n) {
        ct_err_set(err, CT_EINVAL, "'%s' holds no snapshot", path);
        ct_replay_free(r);
        return NULL;
    }
    return r;
fail:
    free(buf);
    ct_replay_free(r);
    return NULL;
}

void ct_replay_free(struct ct_replay *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->n; i++)
        ct_snapshot_release(&r->frames[i]);
    free(r->frames);
    free(r);
}

size_t ct_replay_count(const struct ct_replay *r)
{
    return r->n;
}

int ct_replay_next(struct ct_replay *r, struct ct_snapshot *snap, struct ct_err *err)
{
    if (r->next >= r->n)
        return 1;
    ct_snapshot_copy(snap, &r->frames[r->next++]);
    return 0;
}

int ct_replay_sample_cb(void *arg, struct ct_snapshot *snap, struct ct_err *err)
{
    return ct_replay_next(arg, snap, err);
}
