/* SPDX-License-Identifier: MIT */
/* `colltune validate` verdict: text table, JSON report, baseline read/write/apply. */
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "output.h"
#include "../algos/algo.h"
#include "../lib/parse.h"
#include "validate_report.h"

static const char *num(char *buf, size_t len, double v, const char *fmt)
{
    if (v < 0)
        snprintf(buf, len, "-");
    else
        snprintf(buf, len, fmt, v);
    return buf;
}

static const char *const gdir_name[] = {"host->GPU", "GPU->host", "GPU->GPU"};

/* The collectives measured again: below the threshold at first (or every one, saving a
 * baseline), each with its first number, the repetitions' median and what came of it. */
static void coll_repeats_text(const struct ct_val_report *r, FILE *out)
{
    bool head = false;
    for (size_t i = 0; i < r->n_coll; i++) {
        const struct ct_val_coll *x = &r->coll[i];
        if (!x->repeats)
            continue;
        if (!head)
            fprintf(out,
                    "\ncollectives measured again, %d time(s) each (below the threshold; "
                    "every one when saving a baseline):\n",
                    x->repeats);
        head = true;
        bool short_first = x->ceil_gbs > 0 && 100 * x->first_busbw / x->ceil_gbs < r->min_pct;
        fprintf(out, "  %s:%s: busbw %.3f GB/s at first, then median %.3f GB/s: %s\n", x->coll,
                x->algo, x->first_busbw, x->busbw,
                x->state == CT_VAL_SLOW ? "stays slow"
                : short_first           ? "a transient dip, not blamed"
                                        : "the baseline's number");
    }
}

/* GPU copies: each GPU's copies from and to the host as lines, then each host's GPU -> GPU
 * copies as a matrix (GB/s, row: from; '*' slow, 'x' failed), as nvbandwidth prints them. */
static void gcopy_text(const struct ct_val_report *r, FILE *out)
{
    char m[32], c[32], p[32];
    if (r->gcopy_note[0])
        fprintf(out, "\nGPU copies not measured on %s\n", r->gcopy_note);
    if (!r->n_gcopy)
        return;
    fprintf(out, "\n%-24s %-10s %-7s %10s %10s %6s  %s\n", "GPU copies", "", "state", "GB/s",
            "ceiling", "%", "formula");
    for (size_t i = 0; i < r->n_gcopy; i++) {
        const struct ct_val_gcopy *x = &r->gcopy[i];
        if (x->dir == CT_VALG_P2P)
            continue;
        char g[48];
        if (x->gpu >= 0)
            snprintf(g, sizeof g, "%.15s GPU%d", r->unit[x->unit].name, x->gpu);
        else
            snprintf(g, sizeof g, "%.15s CUDA %d", r->unit[x->unit].name, x->ca);
        fprintf(out, "%-24s %-10s %-7s %10s %10s %6s  %s\n", g, gdir_name[x->dir],
                ct_val_state_name(x->state), num(m, sizeof m, x->gbs, "%.1f"),
                x->ceil_gbs > 0 ? num(c, sizeof c, x->ceil_gbs, "%.1f") : "unknown",
                num(p, sizeof p, ct_val_pct_shown(x->pct, r->min_pct), "%.0f"), x->formula);
    }
    int unit = -1, row = -1;
    for (size_t i = 0; i < r->n_gcopy; i++) {
        const struct ct_val_gcopy *x = &r->gcopy[i];
        if (x->dir != CT_VALG_P2P)
            continue;
        if (x->unit != unit) { /* a host's matrix: its GPUs are its first GPU and its peers */
            int n = 1;
            for (size_t k = i; k < r->n_gcopy && r->gcopy[k].unit == x->unit &&
                               r->gcopy[k].dir == CT_VALG_P2P && r->gcopy[k].ca == x->ca;
                 k++)
                n++;
            fprintf(out,
                    "\n%s: GPU -> GPU copies (GB/s; CUDA's numbers, row: from; * slow, "
                    "x failed)\n%6s",
                    r->unit[x->unit].name, "");
            for (int b = 0; b < n; b++)
                fprintf(out, " %8d", b);
            unit = x->unit;
            row = -1;
        }
        if (x->ca != row) {
            fprintf(out, "\n%6d", x->ca);
            if (x->ca == 0)
                fprintf(out, " %8s", "-"); /* row 0's diagonal comes first */
            row = x->ca;
        }
        snprintf(c, sizeof c, "%.1f%s", x->gbs, x->state == CT_VAL_SLOW ? "*" : "");
        fprintf(out, " %8s", x->gbs < 0 ? "x" : c);
        if (x->cb + 1 == x->ca)
            fprintf(out, " %8s", "-"); /* the diagonal after the peer before it */
    }
    if (unit >= 0)
        fprintf(out, "\n");
}

int ct_val_report_text(const struct ct_val_report *r, FILE *out, struct ct_err *err)
{
    char m[32], c[32], p[32], l[32];
    fprintf(out,
            "# colltune validate: %zu host(s), %d pair round(s), transport %s, pass >= "
            "%g%% of ceiling\n",
            r->n_unit, r->rounds, r->transport, r->min_pct);
    if (r->n_rail) {
        fprintf(out, "# rails, driven one after another (%d rounds each):", r->rounds / r->n_rail);
        for (int k = 0; k < r->n_rail; k++)
            fprintf(out, " %s", r->rail[k]);
        fprintf(out, "\n");
    }
    fprintf(out, "#\n# ceilings (point-to-point, per direction):\n");
    for (size_t u = 0; u < r->n_unit; u++)
        fprintf(out, "#   %-24s %s\n", r->unit[u].name, r->unit[u].formula);
    fprintf(out, "\n%-24s %-8s %-7s %10s %10s %6s %9s  %s\n", "host / nic", "ranks", "state",
            "GB/s", "ceiling", "%", "lat(us)", "evidence");
    for (size_t u = 0; u < r->n_unit; u++) {
        const struct ct_val_unit *x = &r->unit[u];
        char rk[16];
        snprintf(rk, sizeof rk, "%d-%d", x->first_rank, x->first_rank + x->nranks - 1);
        /* the ceiling and percent the verdict used (its pairs', each the lower end's) */
        double ceil = x->pair_ceil_gbs > 0 ? x->pair_ceil_gbs : x->ceil_gbs;
        fprintf(out, "%-24s %-8s %-7s %10s %10s %6s %9s  %s\n", x->name, rk,
                ct_val_state_name(x->state), num(m, sizeof m, x->measured_gbs, "%.3f"),
                ceil > 0 ? num(c, sizeof c, ceil, "%.3f") : "unknown",
                num(p, sizeof p, ct_val_pct_shown(x->pct, r->min_pct), "%.0f"),
                num(l, sizeof l, x->lat_us, "%.1f"), x->evidence[0] ? x->evidence : "-");
        for (int k = 0; k < x->n_nic; k++) {
            const struct ct_val_nic *n = &x->nic[k];
            char tx[64];
            snprintf(tx, sizeof tx, "tx %.1f MB rx %.1f MB", n->tx_bytes / 1e6, n->rx_bytes / 1e6);
            fprintf(out, "  %-22s %-8s %-7s %10s %10s %6s %9s  %s%s%s\n", n->name, "",
                    ct_val_state_name(n->state), num(m, sizeof m, n->measured_gbs, "%.3f"),
                    ceil > 0 ? num(c, sizeof c, ceil, "%.3f") : "unknown",
                    num(p, sizeof p, ct_val_pct_shown(n->pct, r->min_pct), "%.0f"), "", tx,
                    n->evidence[0] ? "; " : "", n->evidence);
        }
    }
    if (r->n_coll) {
        fprintf(out, "\n%-24s %-8s %-7s %10s %10s %6s  %s\n", "collective", "size", "state",
                "busbw", "ceiling", "%", "formula");
        for (size_t i = 0; i < r->n_coll; i++) {
            const struct ct_val_coll *x = &r->coll[i];
            char name[48], sz[16];
            snprintf(name, sizeof name, "%s:%s", x->coll, x->algo);
            ct_bytes_str(x->size, sz, sizeof sz); /* 64 KiB read 0M */
            fprintf(out, "%-24s %-8s %-7s %10s %10s %6s  %s\n", name, sz,
                    ct_val_state_name(x->state), num(m, sizeof m, x->busbw, "%.3f"),
                    x->ceil_gbs > 0 ? num(c, sizeof c, x->ceil_gbs, "%.3f") : "unknown",
                    num(p, sizeof p, ct_val_pct_shown(x->pct, r->min_pct), "%.0f"), x->formula);
        }
    }
    coll_repeats_text(r, out);
    gcopy_text(r, out);
    if (r->n_remeasured) {
        fprintf(out, "\nre-measured below the threshold, %d time(s) each, alone", r->repeats);
        if (r->noise_pct >= 0 && r->has_reference)
            fprintf(out, " and right after the fastest healthy pair (whose spread was %.0f%% of "
                         "its median)", r->noise_pct);
        fprintf(out, ":\n");
        for (size_t i = 0; i < r->n_pair; i++) {
            const struct ct_val_pair *p = &r->pair[i];
            if (!p->repeats)
                continue;
            char ref[48] = "";
            if (p->ref_gbs > 0)
                snprintf(ref, sizeof ref, " (reference %.3f)", p->ref_gbs);
            fprintf(out, "  %s - %s: %.3f GB/s in its round, then median %.3f GB/s%s: %s\n",
                    r->unit[p->a].name, r->unit[p->b].name, p->first_gbs, p->gbs, ref,
                    p->state == CT_VAL_SLOW      ? "stays slow"
                    : p->state == CT_VAL_FAILED  ? "failed (a host of it failed)"
                    : p->state == CT_VAL_UNKNOWN ? "no ceiling to judge it by"
                    : p->cleared && p->pct < r->min_pct
                        ? "kept pace with the reference (the machine, not the link)"
                        : "a transient dip, not blamed");
        }
    }
    if (r->n_finding) {
        fprintf(out, "\nfindings:\n");
        for (size_t i = 0; i < r->n_finding; i++)
            fprintf(out, "  [%s] %s\n", ct_val_find_name(r->finding[i].kind), r->finding[i].msg);
    }
    size_t slow = 0, failed = 0, unknown = 0;
    for (size_t u = 0; u < r->n_unit; u++) {
        slow += r->unit[u].state == CT_VAL_SLOW;
        failed += r->unit[u].state == CT_VAL_FAILED;
        unknown += r->unit[u].state == CT_VAL_UNKNOWN;
    }
    fprintf(out, "\n%s: %zu host(s): %zu ok, %zu slow, %zu failed", r->n_finding ? "FAIL" : "PASS",
            r->n_unit, r->n_unit - slow - failed - unknown, slow, failed);
    if (unknown)
        fprintf(out, ", %zu unknown", unknown);
    fprintf(out, "; %zu finding(s)", r->n_finding);
    if (r->n_unknown)
        fprintf(out, "; %zu measurement(s) without a ceiling (ceiling unknown: use --link-gbps "
                     "or --baseline)", r->n_unknown);
    fprintf(out, " (%.1f s)\n", r->elapsed_s);
    return ferror(out) ? ct_err_set(err, CT_EIO, "cannot write the report") : 0;
}

static json_t *jnum(double v)
{
    return v < 0 ? json_null() : json_real(v);
}

static json_t *unit_json(const struct ct_val_unit *x)
{
    json_t *o = json_object(), *nics = json_array();
    json_object_set_new(o, "host", json_string(x->name));
    json_object_set_new(o, "first_rank", json_integer(x->first_rank));
    json_object_set_new(o, "ranks", json_integer(x->nranks));
    json_object_set_new(o, "state", json_string(ct_val_state_name(x->state)));
    json_object_set_new(o, "measured_gbs", jnum(x->measured_gbs));
    json_object_set_new(o, "ceiling_gbs", x->ceil_gbs > 0 ? json_real(x->ceil_gbs) : json_null());
    json_object_set_new(o, "formula", json_string(x->formula));
    json_object_set_new(o, "pair_ceiling_gbs",
                        x->pair_ceil_gbs > 0 ? json_real(x->pair_ceil_gbs) : json_null());
    json_object_set_new(o, "pct", jnum(x->pct));
    json_object_set_new(o, "latency_us", jnum(x->lat_us));
    json_object_set_new(o, "evidence", json_string(x->evidence));
    for (int k = 0; k < x->n_nic; k++) {
        const struct ct_val_nic *n = &x->nic[k];
        json_t *j = json_object();
        json_object_set_new(j, "name", json_string(n->name));
        json_object_set_new(j, "state", json_string(ct_val_state_name(n->state)));
        json_object_set_new(j, "line_gbps", json_real(n->line_gbps));
        json_object_set_new(j, "measured_gbs", jnum(n->measured_gbs));
        json_object_set_new(j, "tx_bytes", json_real(n->tx_bytes));
        json_object_set_new(j, "rx_bytes", json_real(n->rx_bytes));
        json_object_set_new(j, "errors", json_integer((json_int_t)n->errors));
        json_object_set_new(j, "degraded", json_boolean(n->degraded));
        json_object_set_new(j, "evidence", json_string(n->evidence));
        json_array_append_new(nics, j);
    }
    json_object_set_new(o, "nics", nics);
    return o;
}

int ct_val_report_json_write(const struct ct_val_report *r, const char *path, struct ct_err *err)
{
    json_t *doc = json_object(), *units = json_array(), *pairs = json_array(),
           *colls = json_array(), *finds = json_array();
    json_object_set_new(doc, "schema", json_string("colltune-validate/1"));
    json_object_set_new(doc, "verdict", json_string(r->n_finding ? "fail" : "pass"));
    json_object_set_new(doc, "min_pct", json_real(r->min_pct));
    json_object_set_new(doc, "transport", json_string(r->transport));
    json_object_set_new(doc, "rounds", json_integer(r->rounds));
    json_t *rails = json_array();
    for (int k = 0; k < r->n_rail; k++)
        json_array_append_new(rails, json_string(r->rail[k]));
    json_object_set_new(doc, "rails", rails);
    json_object_set_new(doc, "elapsed_s", json_real(r->elapsed_s));
    json_object_set_new(doc, "remeasured", json_integer((json_int_t)r->n_remeasured));
    json_object_set_new(doc, "repeats", json_integer(r->repeats));
    json_object_set_new(doc, "noise_pct", json_real(r->noise_pct));
    json_object_set_new(doc, "unknown_ceilings", json_integer((json_int_t)r->n_unknown));
    for (size_t u = 0; u < r->n_unit; u++)
        json_array_append_new(units, unit_json(&r->unit[u]));
    for (size_t i = 0; i < r->n_pair; i++) {
        const struct ct_val_pair *p = &r->pair[i];
        json_t *o = json_object();
        json_object_set_new(o, "round", json_integer(p->round));
        json_object_set_new(o, "rail", p->rail >= 0 && p->rail < r->n_rail
                                           ? json_string(r->rail[p->rail])
                                           : json_null());
        json_object_set_new(o, "a", json_string(r->unit[p->a].name));
        json_object_set_new(o, "b", json_string(r->unit[p->b].name));
        json_object_set_new(o, "nic_a", json_string(p->nic_a >= 0 ? r->unit[p->a].nic[p->nic_a].name : ""));
        json_object_set_new(o, "nic_b", json_string(p->nic_b >= 0 ? r->unit[p->b].nic[p->nic_b].name : ""));
        json_object_set_new(o, "gbs", jnum(p->gbs));
        json_object_set_new(o, "latency_us", jnum(p->lat_us));
        json_object_set_new(o, "ceiling_gbs", p->ceil_gbs > 0 ? json_real(p->ceil_gbs) : json_null());
        json_object_set_new(o, "pct", jnum(p->pct));
        json_object_set_new(o, "state", json_string(ct_val_state_name(p->state)));
        if (p->repeats) {
            json_object_set_new(o, "repeats", json_integer(p->repeats));
            json_object_set_new(o, "first_gbs", jnum(p->first_gbs));
            json_object_set_new(o, "reference_gbs", jnum(p->ref_gbs));
            json_object_set_new(o, "cleared", json_boolean(p->cleared));
        }
        json_array_append_new(pairs, o);
    }
    for (size_t i = 0; i < r->n_coll; i++) {
        const struct ct_val_coll *c = &r->coll[i];
        json_t *o = json_object();
        json_object_set_new(o, "coll", json_string(c->coll));
        json_object_set_new(o, "algo", json_string(c->algo));
        json_object_set_new(o, "size", json_integer((json_int_t)c->size));
        json_object_set_new(o, "busbw", jnum(c->busbw));
        json_object_set_new(o, "ceiling_gbs", c->ceil_gbs > 0 ? json_real(c->ceil_gbs) : json_null());
        json_object_set_new(o, "formula", json_string(c->formula));
        json_object_set_new(o, "pct", jnum(c->pct));
        json_object_set_new(o, "state", json_string(ct_val_state_name(c->state)));
        if (c->repeats) {
            json_object_set_new(o, "repeats", json_integer(c->repeats));
            json_object_set_new(o, "first_busbw", jnum(c->first_busbw));
        }
        json_array_append_new(colls, o);
    }
    for (size_t i = 0; i < r->n_finding; i++) {
        const struct ct_val_finding *f = &r->finding[i];
        json_t *o = json_object();
        json_object_set_new(o, "kind", json_string(ct_val_find_name(f->kind)));
        json_object_set_new(o, "host", f->unit >= 0 ? json_string(r->unit[f->unit].name) : json_null());
        if (f->unit_b >= 0)
            json_object_set_new(o, "host_b", json_string(r->unit[f->unit_b].name));
        if (f->nic >= 0 && f->unit >= 0)
            json_object_set_new(o, "nic", json_string(r->unit[f->unit].nic[f->nic].name));
        json_object_set_new(o, "message", json_string(f->msg));
        json_array_append_new(finds, o);
    }
    json_t *gc = json_array();
    for (size_t i = 0; i < r->n_gcopy; i++) {
        const struct ct_val_gcopy *x = &r->gcopy[i];
        json_t *o = json_object();
        static const char *const dir[] = {"h2d", "d2h", "p2p"};
        json_object_set_new(o, "host", json_string(r->unit[x->unit].name));
        json_object_set_new(o, "dir", json_string(dir[x->dir]));
        json_object_set_new(o, "gpu", json_integer(x->gpu));
        json_object_set_new(o, "peer", x->peer >= 0 ? json_integer(x->peer) : json_null());
        json_object_set_new(o, "gbs", jnum(x->gbs));
        json_object_set_new(o, "ceiling_gbs",
                            x->ceil_gbs > 0 ? json_real(x->ceil_gbs) : json_null());
        json_object_set_new(o, "formula", json_string(x->formula));
        json_object_set_new(o, "pct", jnum(x->pct));
        json_object_set_new(o, "state", json_string(ct_val_state_name(x->state)));
        json_array_append_new(gc, o);
    }
    json_object_set_new(doc, "gpu_copies", gc);
    json_object_set_new(doc, "gpu_copies_note",
                        r->gcopy_note[0] ? json_string(r->gcopy_note) : json_null());
    json_object_set_new(doc, "hosts", units);
    json_object_set_new(doc, "pairs", pairs);
    json_object_set_new(doc, "collectives", colls);
    json_object_set_new(doc, "findings", finds);
    char *txt = json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    json_decref(doc);
    return ct_doc_write(path, txt, "the validate report", err);
}

/* ==== Baseline ============================================================================ */

void ct_val_baseline_release(struct ct_val_baseline *b)
{
    free(b->host);
    free(b->host_gbs);
    free(b->coll);
    free(b->coll_gbs);
    memset(b, 0, sizeof *b);
}

static int positive(json_t *v, double *out)
{
    if (!json_is_number(v) || !(json_number_value(v) > 0))
        return -1;
    *out = json_number_value(v);
    return 0;
}

int ct_val_baseline_read(struct ct_val_baseline *b, const char *path, struct ct_err *err)
{
    memset(b, 0, sizeof *b);
    snprintf(b->path, sizeof b->path, "%s", path);
    json_error_t je;
    json_t *doc = json_load_file(path, 0, &je);
    if (!doc)
        return ct_err_set(err, je.line < 1 && je.position == 0 ? CT_EIO : CT_EINVAL,
                          "baseline '%s': %s", path, je.text);
    const char *schema = json_string_value(json_object_get(doc, "schema"));
    json_t *hosts = json_object_get(doc, "hosts"), *colls = json_object_get(doc, "collectives"),
           *mp = json_object_get(doc, "min_pct"), *eff = json_object_get(doc, "efficiency");
    int rc = 0;
    const char *key;
    json_t *v;
    if (!schema || strcmp(schema, "colltune-validate-baseline/1"))
        rc = ct_err_set(err, CT_EINVAL, "baseline '%s': schema is not "
                        "\"colltune-validate-baseline/1\"", path);
    else if ((hosts && !json_is_object(hosts)) || (colls && !json_is_object(colls)) ||
             (eff && !json_is_object(eff)))
        rc = ct_err_set(err, CT_EINVAL, "baseline '%s': \"hosts\", \"collectives\" and "
                        "\"efficiency\" must be objects", path);
    else if (mp && (positive(mp, &b->min_pct) < 0 || b->min_pct > 100))
        rc = ct_err_set(err, CT_EINVAL, "baseline '%s': \"min_pct\" must be in (0, 100]", path);
    /* a misspelt key was ignored: the baseline then checked nothing and the run passed */
    static const char *const keys[] = {"schema",     "min_pct",   "hosts",     "collectives",
                                       "efficiency", "p2p_bytes", "coll_bytes"};
    json_object_foreach(rc ? NULL : doc, key, v)
    {
        size_t k = 0;
        while (k < sizeof keys / sizeof *keys && strcmp(key, keys[k]))
            k++;
        if (k == sizeof keys / sizeof *keys) {
            rc = ct_err_set(err, CT_EINVAL,
                            "baseline '%s': unknown key '%s' (schema, min_pct, "
                            "hosts, collectives, efficiency, p2p_bytes, coll_bytes)",
                            path, key);
            break;
        }
        uint64_t *sz = !strcmp(key, "p2p_bytes")    ? &b->p2p_bytes
                       : !strcmp(key, "coll_bytes") ? &b->coll_bytes
                                                    : NULL;
        double d = json_is_integer(v) ? (double)json_integer_value(v) : 0;
        if (sz && !(d >= 64 && d <= (double)(1u << 30) && fmod(d, 64) == 0)) {
            rc = ct_err_set(err, CT_EINVAL,
                            "baseline '%s': \"%s\": not a size in bytes (64 .. 1G, a multiple "
                            "of 64)",
                            path, key);
            break;
        }
        if (sz)
            *sz = (uint64_t)d;
    }
    json_object_foreach(rc ? NULL : hosts, key, v) {
        double g;
        if (positive(v, &g) < 0) {
            rc = ct_err_set(err, CT_EINVAL, "baseline '%s': host '%s': not a positive GB/s",
                            path, key);
            break;
        }
        if (!strcmp(key, "*")) {
            b->default_gbs = g;
            continue;
        }
        b->host = ct_xrealloc(b->host, (b->n_host + 1) * sizeof *b->host);
        b->host_gbs = ct_xrealloc(b->host_gbs, (b->n_host + 1) * sizeof *b->host_gbs);
        snprintf(b->host[b->n_host], sizeof b->host[0], "%s", key);
        b->host_gbs[b->n_host++] = g;
    }
    json_object_foreach(rc ? NULL : eff, key, v) {
        double e;
        if (positive(v, &e) < 0 || e > 1 || strlen(key) >= sizeof b->eff[0].kind ||
            b->n_eff >= sizeof b->eff / sizeof b->eff[0]) {
            rc = ct_err_set(err, CT_EINVAL, "baseline '%s': efficiency '%s': not a fraction in "
                            "(0, 1] for a transport kind (at most %zu kinds)", path, key,
                            sizeof b->eff / sizeof b->eff[0]);
            break;
        }
        snprintf(b->eff[b->n_eff].kind, sizeof b->eff[0].kind, "%s", key);
        b->eff[b->n_eff++].eff = e;
    }
    json_object_foreach(rc ? NULL : colls, key, v) {
        double g;
        int c = 0;
        while (c < CT_COLL_COUNT && strcmp(key, ct_coll_name((enum ct_coll)c)))
            c++;
        if (c == CT_COLL_COUNT) {
            rc = ct_err_set(err, CT_EINVAL,
                            "baseline '%s': unknown collective '%s' (allreduce, "
                            "allgather, reducescatter, alltoall)",
                            path, key);
            break;
        }
        if (positive(v, &g) < 0) {
            rc = ct_err_set(err, CT_EINVAL, "baseline '%s': collective '%s': not a positive "
                            "GB/s", path, key);
            break;
        }
        b->coll = ct_xrealloc(b->coll, (b->n_coll + 1) * sizeof *b->coll);
        b->coll_gbs = ct_xrealloc(b->coll_gbs, (b->n_coll + 1) * sizeof *b->coll_gbs);
        snprintf(b->coll[b->n_coll], sizeof b->coll[0], "%s", key);
        b->coll_gbs[b->n_coll++] = g;
    }
    json_decref(doc);
    if (rc)
        ct_val_baseline_release(b);
    return rc;
}

int ct_val_baseline_fits(const struct ct_val_baseline *b, uint64_t p2p_bytes, uint64_t coll_bytes,
                         struct ct_err *err)
{
    bool pp = (b->n_host || b->default_gbs > 0) && b->p2p_bytes && b->p2p_bytes != p2p_bytes,
         cc = b->n_coll && coll_bytes && b->coll_bytes && b->coll_bytes != coll_bytes;
    if (!pp && !cc)
        return 0;
    char s[2][32];
    ct_bytes_exact(pp ? b->p2p_bytes : b->coll_bytes, "", s[0], sizeof s[0]); /* 1536KiB */
    ct_bytes_exact(pp ? p2p_bytes : coll_bytes, "", s[1], sizeof s[1]);
    const char *opt = pp ? "p2p-size" : "coll-size";
    return ct_err_set(err, CT_EINVAL,
                      "--baseline '%s': its numbers hold at --%s %s, this run's is %s (another "
                      "size reads other GB/s): pass --%s %s, or save a baseline at this size",
                      b->path, opt, s[0], s[1], opt, s[0]);
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int ct_val_baseline_write(const struct ct_val_report *r, const char *path, struct ct_err *err)
{
    json_t *doc = json_object(), *hosts = json_object(), *colls = json_object();
    double *v = ct_xcalloc(r->n_unit + 1, sizeof *v);
    size_t nv = 0;
    for (size_t u = 0; u < r->n_unit; u++)
        if (r->unit[u].measured_gbs > 0) {
            json_object_set_new(hosts, r->unit[u].name, json_real(r->unit[u].measured_gbs));
            v[nv++] = r->unit[u].measured_gbs;
        }
    if (nv) {
        qsort(v, nv, sizeof *v, cmp_d);
        json_object_set_new(hosts, "*", json_real(v[nv / 2]));
    }
    free(v);
    for (size_t i = 0; i < r->n_coll; i++)
        if (r->coll[i].busbw > 0)
            json_object_set_new(colls, r->coll[i].coll, json_real(r->coll[i].busbw));
    json_object_set_new(doc, "schema", json_string("colltune-validate-baseline/1"));
    json_object_set_new(doc, "min_pct", json_real(r->min_pct));
    /* what its numbers hold at: another size reads other GB/s (a 64 KiB pair half a 4 MiB
     * one's), a shortfall that is none */
    json_object_set_new(doc, "p2p_bytes", json_integer((json_int_t)r->p2p_bytes));
    if (json_object_size(colls))
        json_object_set_new(doc, "coll_bytes", json_integer((json_int_t)r->coll_bytes));
    json_object_set_new(doc, "hosts", hosts);
    json_object_set_new(doc, "collectives", colls);
    int rc = json_dump_file(doc, path, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    json_decref(doc);
    return rc < 0 ? ct_err_sys(err, CT_EIO, "cannot write baseline '%s'", path) : 0;
}

