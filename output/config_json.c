/* SPDX-License-Identifier: MIT */
/* colltune-config/1 (read + write, strict) and colltune-sweep/1 (write), through jansson. */
#include <jansson.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "../backend/libmod.h"
#include "../lib/clock.h"
#include "../lib/parse.h"
#include "../lib/file.h"
#include "../tune/stats.h"
#include "config.h"

#define JSON_FLAGS (JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10))

/* ---- writing ------------------------------------------------------------------------- */

static json_t *u64_or_null(uint64_t v)
{
    return v == CT_BYTES_INF ? json_null() : json_integer((json_int_t)v);
}

static json_t *str_or_null(const char *s)
{
    return s && *s ? json_string(s) : json_null();
}

static json_t *params_json(const char *algo, const struct ct_params *in)
{
    const struct ct_algo *a = ct_algo_find(algo);
    struct ct_params p = *in;
    ct_params_defaults(&p);
    json_t *o = json_object();
    for (int q = 0; q < CT_P_COUNT; q++)
        if (ct_params_shown(a, &p) & CT_PBIT(q)) /* "own": a library row's own value */
            json_object_set_new(o, ct_param_desc((enum ct_param_id)q)->name,
                                p.v[q] == CT_PARAM_OWN ? json_string("own")
                                                       : json_integer((json_int_t)p.v[q]));
    if (p.intra)
        json_object_set_new(o, "intra", json_string(p.intra));
    if (p.inter)
        json_object_set_new(o, "inter", json_string(p.inter));
    return o;
}

static json_t *fingerprint_json(const struct ct_fingerprint *f)
{
    json_t *o = json_object();
    json_object_set_new(o, "hosts", json_integer(f->hosts));
    json_object_set_new(o, "ranks_per_host", json_integer(f->ranks_per_host));
    json_object_set_new(o, "nranks", json_integer(f->nranks));
    json_object_set_new(o, "nic_kinds", json_string(f->nic_kinds));
    json_object_set_new(o, "nic_gbps", json_real(f->nic_gbps));
    json_object_set_new(o, "nics_per_host", json_integer(f->nics_per_host));
    json_object_set_new(o, "gpu_model", json_string(f->gpu_model));
    json_object_set_new(o, "link_classes", json_string(f->link_classes));
    json_object_set_new(o, "transport", json_string(f->transport));
    if (f->mem[0]) /* absent: host memory */
        json_object_set_new(o, "memory", json_string(f->mem));
    json_object_set_new(o, "host", json_string(f->host));
    return o;
}

static json_t *settings_json(const struct ct_sweep_settings *s)
{
    json_t *o = json_object();
    json_object_set_new(o, "minbytes", json_integer((json_int_t)s->minbytes));
    json_object_set_new(o, "maxbytes", json_integer((json_int_t)s->maxbytes));
    json_object_set_new(o, "stepfactor", json_real(s->stepfactor));
    json_object_set_new(o, "dtype", json_string(ct_dtype_name(s->dtype)));
    json_object_set_new(o, "op", json_string(ct_redop_name(s->op)));
    json_object_set_new(o, "budget_s", json_real(s->budget_s));
    json_object_set_new(o, "target_ci", json_real(s->target_ci));
    json_object_set_new(o, "margin", json_real(s->margin));
    json_object_set_new(o, "warmup", json_integer(s->warmup));
    json_object_set_new(o, "min_iters", json_integer(s->min_iters));
    json_object_set_new(o, "max_iters", json_integer(s->max_iters));
    json_object_set_new(o, "search", json_string(s->search));
    json_object_set_new(o, "space", json_string(s->space));
    json_object_set_new(o, "folded", json_string(s->folded));
    if (s->refused[0]) /* only when some were: a config without stays as it was */
        json_object_set_new(o, "refused", json_string(s->refused));
    json_object_set_new(o, "points", json_integer(s->points));
    json_object_set_new(o, "full_points", json_integer(s->full_points));
    json_object_set_new(o, "elapsed_s", json_real(s->elapsed_s));
    json_object_set_new(o, "measuring_s", json_real(s->measuring_s));
    if (s->timing_s > 0) { /* a measured sweep's: a config read without them stays so */
        json_object_set_new(o, "timing_s", json_real(s->timing_s));
        json_object_set_new(o, "checking_s", json_real(s->checking_s));
    }
    json_object_set_new(o, "budget_out", json_boolean(s->budget_out));
    if (s->ranges) { /* the sweep checked its rules where --verify will */
        json_object_set_new(o, "checked_ranges", json_integer(s->checked));
        json_object_set_new(o, "ranges", json_integer(s->ranges));
    }
    if (s->predicted[0]) /* sweep --model: priced, not measured */
        json_object_set_new(o, "predicted", json_string(s->predicted));
    if (s->joined) /* colltune join's: the lines above are one of its sweeps' */
        json_object_set_new(o, "joined", json_integer(s->joined));
    return o;
}

/* An NCCL section's range as colltune's tuner plugin reads it (plugin/nccl_rules.c): the
 * rule's "ALGO/PROTO" as "algo" and "params": {"proto", "channels" where one was forced};
 * NCCL's own choice "default" with no parameters. */
static void nccl_range(json_t *x, const struct ct_rule *r)
{
    const char *slash = strchr(r->algo, '/');
    json_t *pj = json_object();
    json_object_set_new(x, "algo",
                        json_stringn(r->algo, slash ? (size_t)(slash - r->algo) : strlen(r->algo)));
    if (slash)
        json_object_set_new(pj, "proto", json_string(slash + 1));
    if (r->params.v[CT_P_CHANNELS]) /* absent: NCCL's own channel count */
        json_object_set_new(pj, "channels", json_integer((json_int_t)r->params.v[CT_P_CHANNELS]));
    json_object_set_new(x, "id", json_integer(r->id));
    json_object_set_new(x, "params", pj);
}

/*
 * What a verify's mark vouches for, as a fingerprint the mark carries ("of": FNV-1a 64 in hex):
 * a library set's ranges (bounds, name, id, segment size), a section's launch settings, and
 * for the whole export both. colltune clears a mark wherever it changes what the mark is of;
 * a file edited by hand afterwards is read with the mark gone (export then says "measured,
 * not verified"), where it kept vouching for rules nobody measured.
 */
static uint64_t set_digest(const struct ct_ruleset *s)
{
    uint64_t h = CT_FNV64_BASIS;
    char b[160];
    snprintf(b, sizeof b, "%s,%d,%d,%d;", ct_coll_name(s->coll), s->nranks, s->nnodes,
             s->ranks_per_node); /* its shape */
    h = ct_fnv1a64(h, b);
    for (int i = 0; i < s->nrules; i++) {
        const struct ct_rule *r = &s->rules[i];
        snprintf(b, sizeof b, "%llu,%llu,%s,%d,%llu;", (unsigned long long)r->min_bytes,
                 (unsigned long long)r->max_bytes, r->algo, r->id,
                 (unsigned long long)r->params.v[CT_P_CHUNK]);
        h = ct_fnv1a64(h, b);
    }
    return h;
}

static uint64_t env_digest(const struct ct_librules *l)
{
    uint64_t h = CT_FNV64_BASIS;
    for (int i = 0; i < l->nenv; i++)
        h = ct_fnv1a64(ct_fnv1a64(ct_fnv1a64(h, l->env[i].name), "="), l->env[i].value);
    return h;
}

static uint64_t whole_digest(const struct ct_librules *l)
{
    uint64_t h = env_digest(l);
    char b[24];
    for (int i = 0; i < l->nsets; i++) {
        snprintf(b, sizeof b, "%016llx;", (unsigned long long)set_digest(&l->sets[i]));
        h = ct_fnv1a64(h, b);
    }
    return h;
}

/* A section's library, release and launch settings: what a rule set's mark was measured with
 * ("verified against Open MPI 4.1.4's defaults with the launch settings") */
static uint64_t lib_digest(const struct ct_librules *l)
{
    return ct_fnv1a64(ct_fnv1a64(ct_fnv1a64(env_digest(l), l->library), ","), l->version);
}

/* of, and the mark's own figures: a mark edited by hand (its geomean, its date) is not one.
 * The figures as JSON_FLAGS writes them (10 digits), so that one read back gives the same. */
static uint64_t mark_of(uint64_t of, const struct ct_verified *v)
{
    char b[sizeof v->at + 96];
    double tell = v->tell >= 1 && v->tell <= CT_VERIFIED_GEO_MAX ? v->tell : 0; /* as written */
    snprintf(b, sizeof b, "%016llx;%s;%.10g;%.10g", (unsigned long long)of, v->at, v->geomean,
             tell);
    return ct_fnv1a64(CT_FNV64_BASIS, b);
}

/* A mark read (in o[key]) whose "of" is not what it is read with: gone. A mark without one
 * (a config before 2026-12-06) stays. */
static void mark_check(json_t *o, const char *key, uint64_t of, struct ct_verified *v)
{
    json_t *x = json_object_get(o, key), *f = x ? json_object_get(x, "of") : NULL;
    char want[24];
    snprintf(want, sizeof want, "%016llx", (unsigned long long)mark_of(of, v));
    if (json_is_string(f) && strcmp(json_string_value(f), want))
        memset(v, 0, sizeof *v);
}

/* o[key] = v, where v records a verify (v->at not empty), of what the fingerprint of says */
static void verified_json(json_t *o, const char *key, const struct ct_verified *v, uint64_t of)
{
    if (!v->at[0])
        return;
    json_t *x = json_object();
    char hex[24];
    snprintf(hex, sizeof hex, "%016llx", (unsigned long long)mark_of(of, v));
    json_object_set_new(x, "of", json_string(hex));
    json_object_set_new(x, "at", json_string(v->at));
    json_object_set_new(x, "geomean", json_real(v->geomean));
    if (v->tell >= 1 && v->tell <= CT_VERIFIED_GEO_MAX) /* as read back */
        json_object_set_new(x, "tell", json_real(v->tell));
    json_object_set_new(o, key, x);
}

/* lib: a library section's ruleset (its own names and ids, "segsize", "default"), its marks of
 * what lib_digest says of the section (with); nccl: in the tuner plugin's words */
static json_t *ruleset_json(const struct ct_ruleset *s, bool lib, bool nccl, uint64_t with)
{
    json_t *o = json_object();
    json_object_set_new(o, "coll", json_string(ct_coll_name(s->coll)));
    json_object_set_new(o, "nnodes", json_integer(s->nnodes));
    json_object_set_new(o, "ranks_per_node", json_integer(s->ranks_per_node));
    json_object_set_new(o, "nranks", json_integer(s->nranks));
    json_object_set_new(o, "dtype", json_string(ct_dtype_name(s->dtype)));
    json_object_set_new(o, "op", json_string(ct_ruleset_op_name(s)));
    json_t *ranges = json_array();
    for (int i = 0; i < s->nrules; i++) {
        const struct ct_rule *r = &s->rules[i];
        json_t *x = json_object();
        json_object_set_new(x, "min_bytes", json_integer((json_int_t)r->min_bytes));
        json_object_set_new(x, "max_bytes", u64_or_null(r->max_bytes));
        if (nccl) {
            nccl_range(x, r);
        } else if (lib) {
            json_object_set_new(x, "algo", json_string(r->algo));
            json_t *pj = json_object();
            json_object_set_new(pj, "segsize", json_integer((json_int_t)r->params.v[CT_P_CHUNK]));
            json_object_set_new(x, "id", json_integer(r->id));
            json_object_set_new(x, "params", pj);
            if (r->set_back[0]) /* verify's, where it set the range back */
                json_object_set_new(x, "set_back", json_string(r->set_back));
        } else {
            json_object_set_new(x, "algo", json_string(r->algo));
            json_object_set_new(x, "params", params_json(r->algo, &r->params));
        }
        json_object_set_new(x, "confidence", json_real(r->confidence));
        json_object_set_new(x, "tie", json_boolean(r->tie));
        json_object_set_new(x, "runner_up", str_or_null(r->runner_up));
        if (!lib) {
            json_t *t = json_array();
            for (int k = 0; k < r->ntied; k++)
                json_array_append_new(t, json_string(r->tied[k]));
            json_object_set_new(x, "tied_with", t);
        }
        if (!lib || (!nccl && r->nties)) { /* a library's: with its rows' ids (--try-ties) */
            json_t *ties = json_array();
            for (int k = 0; k < r->nties; k++) {
                json_t *y = json_object();
                json_object_set_new(y, "algo", json_string(r->ties[k].algo));
                if (lib) { /* its segment size where the sweep found the tie (0: the library's) */
                    json_object_set_new(y, "id", json_integer(r->ties[k].id));
                    json_object_set_new(y, "segsize",
                                        json_integer((json_int_t)r->ties[k].params.v[CT_P_CHUNK]));
                }
                json_object_set_new(y, "min_bytes", json_integer((json_int_t)r->ties[k].min_bytes));
                json_object_set_new(y, "max_bytes", u64_or_null(r->ties[k].max_bytes));
                if (r->ties[k].ratio > 0)
                    json_object_set_new(y, "ratio", json_real(r->ties[k].ratio));
                json_array_append_new(ties, y);
            }
            json_object_set_new(x, "ties", ties);
        }
        json_object_set_new(x, "gain", json_real(r->gain));
        if (r->predicted)
            json_object_set_new(x, "predicted", json_true());
        if (lib)
            json_object_set_new(x, "default", json_boolean(r->id == 0));
        json_array_append_new(ranges, x);
    }
    json_object_set_new(o, "ranges", ranges);
    if (lib && !nccl && s->nlib_rows) { /* the library's rows, name: id */
        json_t *rows = json_object();
        for (int i = 0; i < s->nlib_rows; i++)
            json_object_set_new(rows, s->lib_rows[i].name, json_integer(s->lib_rows[i].id));
        json_object_set_new(o, "algorithms", rows);
    }
    if (lib)
        verified_json(o, "verified", &s->verified, set_digest(s) ^ with);
    return o;
}

static void head(json_t *doc, const char *schema, const struct ct_config *c, bool partial)
{
    json_object_set_new(doc, "schema", json_string(schema));
    json_object_set_new(doc, "version", json_string(c->version));
    json_object_set_new(doc, "date", json_string(c->date));
    json_object_set_new(doc, "partial", json_boolean(partial));
}

char *ct_config_json_dumps(const struct ct_config *c)
{
    json_t *doc = json_object();
    head(doc, CT_CONFIG_SCHEMA, c, c->partial);
    json_object_set_new(doc, "fingerprint", fingerprint_json(&c->fp));
    json_object_set_new(doc, "sweep", settings_json(&c->sweep));
    json_t *rules = json_array();
    for (int i = 0; i < c->nsets; i++)
        json_array_append_new(rules, ruleset_json(&c->sets[i], false, false, 0));
    json_object_set_new(doc, "rules", rules);
    if (c->nlibs) {
        json_t *libs = json_array();
        for (int l = 0; l < c->nlibs; l++) {
            const struct ct_librules *lr = &c->libs[l];
            if (lr->raw) {
                json_array_append_new(libs, json_loads(lr->raw, 0, NULL));
                continue;
            }
            json_t *o = json_object(), *lrules = json_array();
            json_object_set_new(o, "library", json_string(lr->library));
            json_object_set_new(o, "name", json_string(lr->name));
            json_object_set_new(o, "version", json_string(lr->version));
            if (lr->nenv) {
                json_t *env = json_array();
                for (int i = 0; i < lr->nenv; i++) {
                    json_t *x = json_object();
                    json_object_set_new(x, "name", json_string(lr->env[i].name));
                    json_object_set_new(x, "value", json_string(lr->env[i].value));
                    json_array_append_new(env, x);
                }
                json_object_set_new(o, "env", env);
                verified_json(o, "env_verified", &lr->env_verified, env_digest(lr));
                verified_json(o, "whole_verified", &lr->whole_verified, whole_digest(lr));
            }
            for (int i = 0; i < lr->nsets; i++)
                json_array_append_new(
                    lrules,
                    ruleset_json(&lr->sets[i], true, !strcmp(lr->library, "nccl"), lib_digest(lr)));
            json_object_set_new(o, "rules", lrules);
            json_array_append_new(libs, o);
        }
        json_object_set_new(doc, "libraries", libs);
    }
    char *txt = json_dumps(doc, JSON_FLAGS);
    json_decref(doc);
    return txt;
}

struct ct_config *ct_config_copy(const struct ct_config *c)
{
    struct ct_config *d = ct_xcalloc(1, sizeof *d);
    struct ct_err err = {0};
    char *txt = ct_config_json_dumps(c);
    if (!txt || ct_config_json_parse(txt, d, &err) < 0) {
        ct_config_release(d);
        free(d);
        d = NULL;
    }
    free(txt);
    return d;
}

static long long int_of(json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    return json_is_integer(v) ? json_integer_value(v) : -1;
}

/* In a section kept as written (o, parsed): its rule of (coll, nranks, nnodes), or NULL. */
static json_t *raw_rule(json_t *o, enum ct_coll coll, int nranks, int nnodes)
{
    json_t *rule;
    size_t i;
    json_array_foreach(json_object_get(o, "rules"), i, rule)
    {
        const char *name = json_string_value(json_object_get(rule, "coll"));
        if (name && !strcmp(name, ct_coll_name(coll)) && int_of(rule, "nranks") == nranks &&
            int_of(rule, "nnodes") == nnodes)
            return rule;
    }
    return NULL;
}

static void raw_store(struct ct_librules *l, json_t *o)
{
    free(l->raw);
    l->raw = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
}

/* A range of a section kept as written set back to the library's own choice. */
static void raw_set_back(json_t *rng, const char *algo)
{
    const char *proto = json_string_value(json_object_get(json_object_get(rng, "params"), "proto"));
    char was[64];
    snprintf(was, sizeof was, "%s%s%s", algo, proto ? "/" : "", proto ? proto : "");
    json_object_set_new(rng, "runner_up", json_string(was));
    json_object_set_new(rng, "algo", json_string("default"));
    json_object_set_new(rng, "id", json_integer(0));
    json_object_set_new(rng, "params", json_object());
    json_object_set_new(rng, "default", json_true());
    json_object_set_new(rng, "tie", json_false());
    json_object_set_new(rng, "gain", json_real(1));
}

static bool raw_is_default(json_t *rng)
{
    const char *algo = json_string_value(json_object_get(rng, "algo"));
    return algo && !strcmp(algo, "default");
}

/* In a section kept as written: the range at min_bytes of its rule of (coll, nranks, nnodes)
 * set back (back), or cut to [lo, hi) (ct_config_lib_trim; lo may be the range's own start,
 * 0 for the first). */
static bool raw_change(struct ct_librules *l, enum ct_coll coll, int nranks, int nnodes,
                       uint64_t min_bytes, bool back, uint64_t lo, uint64_t hi)
{
    json_t *o = json_loads(l->raw, 0, NULL), *rule = raw_rule(o, coll, nranks, nnodes),
           *ranges = json_object_get(rule, "ranges"), *x, *rng = NULL;
    size_t k, at = 0;
    json_array_foreach(ranges, k, x) if (int_of(x, "min_bytes") == (long long)min_bytes) rng = x,
                                                                                         at = k;
    const char *was = rng ? json_string_value(json_object_get(rng, "algo")) : NULL;
    char algo[64]; /* a copy: setting the range back frees its string */
    snprintf(algo, sizeof algo, "%s", was ? was : "");
    long long mx = rng ? int_of(rng, "max_bytes") : 0; /* -1: null, the last range */
    uint64_t max = mx < 0 ? CT_BYTES_INF : (uint64_t)mx;
    bool ok = was && (back || (lo < hi && lo >= min_bytes && hi <= max));
    if (ok && strcmp(algo, "default") && back)
        raw_set_back(rng, algo);
    else if (ok && strcmp(algo, "default")) { /* the parts cut off: NCCL's own choice */
        json_t *prev = at ? json_array_get(ranges, at - 1) : NULL,
               *next = json_array_get(ranges, at + 1);
        if (hi < max && next && raw_is_default(next))
            json_object_set_new(next, "min_bytes", json_integer((json_int_t)hi));
        else if (hi < max) {
            json_t *y = json_deep_copy(rng);
            json_object_set_new(y, "min_bytes", json_integer((json_int_t)hi));
            raw_set_back(y, algo);
            json_array_insert_new(ranges, at + 1, y);
        }
        if (hi < max)
            json_object_set_new(rng, "max_bytes", json_integer((json_int_t)hi));
        if (lo > min_bytes && prev && raw_is_default(prev))
            json_object_set_new(prev, "max_bytes", json_integer((json_int_t)lo));
        else if (lo > min_bytes) {
            json_t *y = json_deep_copy(rng);
            json_object_set_new(y, "max_bytes", json_integer((json_int_t)lo));
            raw_set_back(y, algo);
            json_array_insert_new(ranges, at, y);
        }
        json_object_set_new(rng, "min_bytes", json_integer((json_int_t)lo));
    }
    if (ok && strcmp(algo, "default")) {
        json_object_del(rule, "verified"); /* a changed rule is a new file: not verified */
        raw_store(l, o);
    }
    json_decref(o);
    return ok;
}

/* The index of l's ruleset of (coll, nranks, nnodes), -1 if none. */
static int set_at(const struct ct_librules *l, enum ct_coll coll, int nranks, int nnodes)
{
    for (int i = 0; l && i < l->nsets; i++)
        if (l->sets[i].coll == coll && l->sets[i].nranks == nranks && l->sets[i].nnodes == nnodes)
            return i;
    return -1;
}

bool ct_config_lib_demote_at(struct ct_config *c, const char *lib, enum ct_coll coll, int nranks,
                             int nnodes, uint64_t min_bytes, const char *why)
{
    struct ct_librules *l = (struct ct_librules *)ct_config_lib(c, lib);
    if (l && l->raw)
        return raw_change(l, coll, nranks, nnodes, min_bytes, true, 0, 0);
    int i = set_at(l, coll, nranks, nnodes);
    for (int k = 0; i >= 0 && k < l->sets[i].nrules; k++)
        if (l->sets[i].rules[k].min_bytes == min_bytes)
            return ct_config_lib_demote(c, lib, i, k, why);
    return false;
}

bool ct_config_lib_trim_at(struct ct_config *c, const char *lib, enum ct_coll coll, int nranks,
                           int nnodes, uint64_t min_bytes, uint64_t lo, uint64_t hi)
{
    struct ct_librules *l = (struct ct_librules *)ct_config_lib(c, lib);
    if (l && l->raw)
        return raw_change(l, coll, nranks, nnodes, min_bytes, false, lo, hi);
    int i = set_at(l, coll, nranks, nnodes);
    for (int k = 0; i >= 0 && k < l->sets[i].nrules; k++)
        if (l->sets[i].rules[k].min_bytes == min_bytes)
            return ct_config_lib_trim(c, lib, i, k, lo, hi);
    return false;
}

void ct_config_lib_judged(struct ct_config *c, const char *lib, int i, const struct ct_ruleset *s,
                          const bool *slow, const bool *nogain, const struct ct_paired_cut *cut,
                          int n[CT_JUDGED_N])
{
    for (int k = s->nrules - 1; c && k >= 0; k--) { /* a cut adds ranges after k */
        const struct ct_rule *r = &s->rules[k];
        const char *why = slow[k] ? CT_SET_BACK_SLOW : CT_SET_BACK_NOGAIN;
        bool cutk = slow[k] && cut && cut[k].rounds;
        if (cutk && (i >= 0 ? ct_config_lib_trim(c, lib, i, k, cut[k].lo, cut[k].hi)
                            : ct_config_lib_trim_at(c, lib, s->coll, s->nranks, s->nnodes,
                                                    r->min_bytes, cut[k].lo, cut[k].hi)))
            r->tried ? (n[CT_JUDGED_TRIED_KEPT]++, n[CT_JUDGED_TRIED_CUT]++)
                     : n[CT_JUDGED_CUT]++;
        else if ((slow[k] || nogain[k]) &&
                 (i >= 0 ? ct_config_lib_demote(c, lib, i, k, why)
                         : ct_config_lib_demote_at(c, lib, s->coll, s->nranks, s->nnodes,
                                                   r->min_bytes, why)))
            n[r->tried ? CT_JUDGED_TRIED_BACK : slow[k] ? CT_JUDGED_SLOW : CT_JUDGED_NOGAIN]++;
        else if (r->tried)
            n[CT_JUDGED_TRIED_KEPT]++;
    }
}

static double num_of(json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    return json_is_number(v) ? json_number_value(v) : 0;
}

int ct_config_lib_raw_sets(const struct ct_librules *l, struct ct_ruleset **out)
{
    json_t *o = l->raw ? json_loads(l->raw, 0, NULL) : NULL, *rules = json_object_get(o, "rules"),
           *u, *g;
    size_t i, k;
    int n = 0;
    *out = ct_xcalloc(json_array_size(rules) + 1, sizeof **out);
    json_array_foreach(rules, i, u)
    {
        struct ct_ruleset *s = &(*out)[n];
        int coll = ct_coll_find(json_string_value(json_object_get(u, "coll")));
        int dt = ct_dtype_find(json_string_value(json_object_get(u, "dtype")));
        int op = coll < 0 ? -1
                          : ct_ruleset_op_find((enum ct_coll)coll,
                                               json_string_value(json_object_get(u, "op")));
        json_t *ranges = json_object_get(u, "ranges"), *v = json_object_get(u, "verified");
        if (coll < 0 || !json_array_size(ranges))
            continue; /* the plugin's reader refuses such a rule; nothing to show */
        s->coll = (enum ct_coll)coll;
        s->dtype = dt < 0 ? CT_FLOAT32 : (enum ct_dtype)dt;
        s->op = op < 0 ? CT_SUM : (enum ct_redop)op;
        s->nranks = (int)int_of(u, "nranks");
        s->nnodes = (int)int_of(u, "nnodes");
        s->ranks_per_node = (int)int_of(u, "ranks_per_node");
        snprintf(s->verified.at, sizeof s->verified.at, "%s",
                 json_string_value(json_object_get(v, "at")) ?: "");
        s->verified.geomean = num_of(v, "geomean");
        s->verified.tell = num_of(v, "tell"); /* the plugin's reader refused one out of range */
        if (!(s->verified.tell >= 1 && s->verified.tell <= CT_VERIFIED_GEO_MAX))
            s->verified.tell = 0;
        s->rules = ct_xcalloc(json_array_size(ranges), sizeof *s->rules);
        json_array_foreach(ranges, k, g)
        {
            struct ct_rule *r = &s->rules[s->nrules++];
            json_t *p = json_object_get(g, "params");
            const char *algo = json_string_value(json_object_get(g, "algo")) ?: "?",
                       *proto = json_string_value(json_object_get(p, "proto")),
                       *ru = json_string_value(json_object_get(g, "runner_up"));
            long long mx = int_of(g, "max_bytes"), ch = int_of(p, "channels");
            r->min_bytes = (uint64_t)(int_of(g, "min_bytes") < 0 ? 0 : int_of(g, "min_bytes"));
            r->max_bytes = mx < 0 ? CT_BYTES_INF : (uint64_t)mx;
            snprintf(r->algo, sizeof r->algo, "%s%s%s", algo, proto ? "/" : "", proto ?: "");
            snprintf(r->runner_up, sizeof r->runner_up, "%s", ru ?: "");
            /* NCCL's own choice is "default", whatever an optional "id" says (the plugin
             * reads no id: a range without one is NCCL's own choice, not a rule to judge) */
            r->id = !strcmp(algo, "default") ? 0 : (int)int_of(g, "id");
            r->params.v[CT_P_CHANNELS] = ch > 0 ? (uint64_t)ch : 0;
            r->confidence = num_of(g, "confidence");
            r->gain = num_of(g, "gain");
            r->tie = json_is_true(json_object_get(g, "tie"));
        }
        n++;
    }
    json_decref(o);
    return n;
}

/* A rule of a section kept as written at the library's own choice in every range, as
 * ct_ruleset_keeps_own has it (one without ranges does not). */
static bool raw_rule_keeps_own(json_t *rule)
{
    json_t *ranges = json_object_get(rule, "ranges"), *x;
    size_t k;
    bool own = json_array_size(ranges) > 0;
    json_array_foreach(ranges, k, x) own = own && raw_is_default(x);
    return own;
}

bool ct_config_lib_keeps_own(const struct ct_config *c, const char *lib)
{
    const struct ct_librules *l = ct_config_lib(c, lib);
    if (!l || !l->raw)
        return ct_librules_keeps_own(l);
    json_t *o = json_loads(l->raw, 0, NULL), *u;
    size_t i;
    bool own = !l->nenv;
    json_array_foreach(json_object_get(o, "rules"), i, u) own = own && raw_rule_keeps_own(u);
    json_decref(o);
    return own;
}

bool ct_config_lib_verified_at(struct ct_config *c, const char *lib, enum ct_coll coll, int nranks,
                               int nnodes, double geomean, double tell)
{
    struct ct_librules *l = (struct ct_librules *)ct_config_lib(c, lib);
    if (l && !l->raw)
        return ct_config_lib_verified(c, lib, set_at(l, coll, nranks, nnodes), geomean, tell);
    bool ok = geomean >= CT_VERIFIED_GEO_MIN && geomean <= CT_VERIFIED_GEO_MAX; /* NaN: no */
    json_t *o = l ? json_loads(l->raw, 0, NULL) : NULL, *rule = raw_rule(o, coll, nranks, nnodes);
    ok = ok && !raw_rule_keeps_own(rule); /* NCCL's own choice everywhere: nothing to vouch for */
    if (rule && ok) {
        char at[24];
        json_t *v = json_object();
        json_object_set_new(v, "at", json_string(ct_utc_iso(at, sizeof at)));
        json_object_set_new(v, "geomean", json_real(geomean));
        if (tell >= 1 && tell <= CT_VERIFIED_GEO_MAX)
            json_object_set_new(v, "tell", json_real(tell));
        json_object_set_new(rule, "verified", v);
    } else if (rule)
        json_object_del(rule, "verified");
    if (rule)
        raw_store(l, o);
    json_decref(o);
    return rule && ok;
}

int ct_config_json_write(const char *path, const struct ct_config *c, struct ct_err *err)
{
    return ct_file_write_doc(path, ct_config_json_dumps(c), "the config", err);
}

static json_t *point_json(const struct ct_sweep_point *p)
{
    json_t *o = json_object();
    json_object_set_new(o, "coll", json_string(ct_coll_name(p->coll)));
    json_object_set_new(o, "algo", json_string(p->algo));
    json_object_set_new(o, "size", json_integer((json_int_t)p->size));
    json_object_set_new(o, "count", json_integer((json_int_t)p->count));
    json_object_set_new(o, "params", params_json(p->algo, &p->params));
    json_t *t = json_object();
    json_object_set_new(t, "n", json_integer(p->st.n));
    json_object_set_new(t, "median", json_real(p->st.median));
    json_object_set_new(t, "lo", json_real(p->st.lo));
    json_object_set_new(t, "hi", json_real(p->st.hi));
    json_object_set_new(t, "min", json_real(p->st.min));
    json_object_set_new(t, "max", json_real(p->st.max));
    json_object_set_new(t, "mean", json_real(p->st.mean));
    json_object_set_new(t, "stdev", json_real(p->st.stdev));
    json_object_set_new(o, "time_us", t);
    json_object_set_new(o, "converged", json_boolean(p->st.converged));
    json_object_set_new(o, "spent_s", json_real(p->st.spent_s));
    json_object_set_new(o, "busbw", json_real(p->busbw));
    json_object_set_new(o, "wrong", json_integer(p->wrong));
    json_object_set_new(o, "pruned", json_boolean(p->pruned));
    if (p->own_choice) /* only where set: a library's forced row that ran its own decision */
        json_object_set_new(o, "own_choice", json_true());
    return o;
}

int ct_sweep_json_write(const char *path, const struct ct_config *cfg,
                        const struct ct_sweep_point *pts, size_t n, const char *state,
                        const char *error, struct ct_err *err)
{
    json_t *doc = json_object();
    bool running = !strcmp(state, "running");
    head(doc, CT_SWEEP_SCHEMA, cfg, cfg->partial || running);
    json_object_set_new(doc, "state", json_string(state));
    json_object_set_new(doc, "error", str_or_null(error));
    json_object_set_new(doc, "fingerprint", fingerprint_json(&cfg->fp));
    json_object_set_new(doc, "sweep", settings_json(&cfg->sweep));
    json_t *a = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(a, point_json(&pts[i]));
    json_object_set_new(doc, "points", a);
    char *txt = json_dumps(doc, JSON_FLAGS);
    json_decref(doc);
    return ct_file_write_doc(path, txt, "the sweep's points", err);
}

int ct_sweep_json_interrupted(const char *path, const char *why, long *npts, struct ct_err *err)
{
    json_t *doc = json_load_file(path, 0, NULL);
    const char *state = json_string_value(json_object_get(doc, "state"));
    int rc = 0;
    long n = -1;
    if (state && !strcmp(state, "interrupted")) /* its rank 0 saved every point itself */
        n = (long)json_array_size(json_object_get(doc, "points"));
    if (state && !strcmp(state, "running")) {
        json_object_set_new(doc, "state", json_string("interrupted"));
        json_object_set_new(doc, "error", json_string(why));
        n = (long)json_array_size(json_object_get(doc, "points"));
        char *txt = json_dumps(doc, JSON_FLAGS);
        rc = ct_file_write_doc(path, txt, "the sweep's points", err);
    }
    if (npts)
        *npts = rc < 0 ? -1 : n;
    json_decref(doc);
    return rc;
}

/* ---- reading ------------------------------------------------------------------------- */

/* Field lookups: each names the field in its error ("rules[0].ranges[1].algo: ..."). */
static int bad(struct ct_err *err, const char *at, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int bad(struct ct_err *err, const char *at, const char *key, const char *fmt, ...)
{
    char what[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return ct_err_set(err, CT_EINVAL, "%s%s%s: %s", at, *at && key ? "." : "", key ? key : "",
                      what);
}

static json_t *field(json_t *o, const char *at, const char *key, struct ct_err *err)
{
    json_t *v = json_object_get(o, key);
    if (!v)
        bad(err, at, key, "missing");
    return v;
}

static int get_int(json_t *o, const char *at, const char *key, long long min, long long max,
                   long long *out, struct ct_err *err)
{
    json_t *v = field(o, at, key, err);
    if (!v)
        return CT_EINVAL;
    if (!json_is_integer(v))
        return bad(err, at, key, "expected an integer");
    *out = json_integer_value(v);
    if (*out < min || *out > max)
        return bad(err, at, key, "%lld is out of range [%lld, %lld]", *out, min, max);
    return 0;
}

static int get_i(json_t *o, const char *at, const char *key, int min, int *out, struct ct_err *err)
{
    long long v;
    CT_TRY(get_int(o, at, key, min, 1 << 30, &v, err));
    *out = (int)v;
    return 0;
}

static int get_num(json_t *o, const char *at, const char *key, double min, double max, double *out,
                   struct ct_err *err)
{
    json_t *v = field(o, at, key, err);
    if (!v)
        return CT_EINVAL;
    if (!json_is_number(v))
        return bad(err, at, key, "expected a number");
    *out = json_number_value(v);
    if (!(*out >= min && *out <= max))
        return bad(err, at, key, "%g is out of range [%g, %g]", *out, min, max);
    return 0;
}

static int get_bool(json_t *o, const char *at, const char *key, bool *out, struct ct_err *err)
{
    json_t *v = field(o, at, key, err);
    if (!v)
        return CT_EINVAL;
    if (!json_is_boolean(v))
        return bad(err, at, key, "expected true or false");
    *out = json_is_true(v);
    return 0;
}

static int get_str(json_t *o, const char *at, const char *key, char *buf, size_t len,
                   struct ct_err *err)
{
    json_t *v = field(o, at, key, err);
    if (!v)
        return CT_EINVAL;
    if (!json_is_string(v))
        return bad(err, at, key, "expected a string");
    if (strlen(json_string_value(v)) >= len)
        return bad(err, at, key, "longer than %zu characters", len - 1);
    /* exports copy these into comments of files a shell sources: a newline would end one */
    const char *ctl = ct_str_ctrl(json_string_value(v));
    if (ctl)
        return bad(err, at, key, "control character 0x%02x (a string on one line expected)",
                   (unsigned char)*ctl);
    snprintf(buf, len, "%s", json_string_value(v));
    return 0;
}

/* A name from a table: find() returns the index or -1. */
static int get_name(json_t *o, const char *at, const char *key, int (*find)(const char *),
                    const char *what, int *out, struct ct_err *err)
{
    char name[64];
    CT_TRY(get_str(o, at, key, name, sizeof name, err));
    *out = find(name);
    if (*out < 0)
        return bad(err, at, key, "unknown %s '%s'", what, name);
    return 0;
}

static int read_fingerprint(json_t *doc, struct ct_fingerprint *f, struct ct_err *err)
{
    const char *at = "fingerprint";
    json_t *o = field(doc, "", at, err);
    if (!o)
        return CT_EINVAL;
    if (!json_is_object(o))
        return bad(err, at, NULL, "expected an object");
    CT_TRY(get_i(o, at, "hosts", 1, &f->hosts, err));
    CT_TRY(get_i(o, at, "ranks_per_host", 1, &f->ranks_per_host, err));
    CT_TRY(get_i(o, at, "nranks", 1, &f->nranks, err));
    CT_TRY(get_str(o, at, "nic_kinds", f->nic_kinds, sizeof f->nic_kinds, err));
    CT_TRY(get_num(o, at, "nic_gbps", 0, 1e9, &f->nic_gbps, err));
    CT_TRY(get_i(o, at, "nics_per_host", 0, &f->nics_per_host, err));
    CT_TRY(get_str(o, at, "gpu_model", f->gpu_model, sizeof f->gpu_model, err));
    CT_TRY(get_str(o, at, "link_classes", f->link_classes, sizeof f->link_classes, err));
    CT_TRY(get_str(o, at, "transport", f->transport, sizeof f->transport, err));
    if (json_object_get(o, "memory"))
        CT_TRY(get_str(o, at, "memory", f->mem, sizeof f->mem, err));
    return get_str(o, at, "host", f->host, sizeof f->host, err);
}

static int read_settings(json_t *doc, struct ct_sweep_settings *s, struct ct_err *err)
{
    const char *at = "sweep";
    json_t *o = field(doc, "", at, err);
    long long v;
    int t;
    if (!o)
        return CT_EINVAL;
    if (!json_is_object(o))
        return bad(err, at, NULL, "expected an object");
    CT_TRY(get_int(o, at, "minbytes", 1, INT64_MAX, &v, err)); /* 0: the sizes never grow */
    s->minbytes = (uint64_t)v;
    CT_TRY(get_int(o, at, "maxbytes", 0, INT64_MAX, &v, err));
    s->maxbytes = (uint64_t)v;
    if (s->maxbytes < s->minbytes)
        return bad(err, at, "maxbytes", "smaller than minbytes");
    CT_TRY(get_num(o, at, "stepfactor", 1, 1e6, &s->stepfactor, err));
    CT_TRY(get_name(o, at, "dtype", ct_dtype_find, "datatype", &t, err));
    s->dtype = (enum ct_dtype)t;
    CT_TRY(get_name(o, at, "op", ct_redop_find, "op", &t, err));
    s->op = (enum ct_redop)t;
    CT_TRY(get_num(o, at, "budget_s", 0, 1e9, &s->budget_s, err));
    CT_TRY(get_num(o, at, "target_ci", 0, 1e3, &s->target_ci, err));
    CT_TRY(get_num(o, at, "margin", 0, 1e3, &s->margin, err));
    CT_TRY(get_i(o, at, "warmup", 0, &s->warmup, err));
    CT_TRY(get_i(o, at, "min_iters", 1, &s->min_iters, err));
    CT_TRY(get_i(o, at, "max_iters", 1, &s->max_iters, err));
    CT_TRY(get_str(o, at, "search", s->search, sizeof s->search, err));
    CT_TRY(get_str(o, at, "space", s->space, sizeof s->space, err));
    if (json_object_get(o, "folded")) /* optional: configs before it lack it */
        CT_TRY(get_str(o, at, "folded", s->folded, sizeof s->folded, err));
    if (json_object_get(o, "refused")) /* optional: configs before it lack it */
        CT_TRY(get_str(o, at, "refused", s->refused, sizeof s->refused, err));
    CT_TRY(get_int(o, at, "points", 0, INT64_MAX, &v, err));
    s->points = (long)v;
    CT_TRY(get_int(o, at, "full_points", 0, INT64_MAX, &v, err));
    s->full_points = (long)v;
    CT_TRY(get_num(o, at, "elapsed_s", 0, 1e9, &s->elapsed_s, err));
    if (json_object_get(o, "measuring_s")) /* optional: configs before it lack it */
        CT_TRY(get_num(o, at, "measuring_s", 0, 1e9, &s->measuring_s, err));
    if (json_object_get(o, "timing_s")) /* optional: configs before it lack them */
        CT_TRY(get_num(o, at, "timing_s", 0, 1e9, &s->timing_s, err));
    if (json_object_get(o, "checking_s"))
        CT_TRY(get_num(o, at, "checking_s", 0, 1e9, &s->checking_s, err));
    if (json_object_get(o, "ranges")) { /* optional: configs before the self-check lack it */
        CT_TRY(get_int(o, at, "ranges", 0, INT32_MAX, &v, err));
        s->ranges = (int)v;
        CT_TRY(get_int(o, at, "checked_ranges", 0, s->ranges, &v, err));
        s->checked = (int)v;
    }
    if (json_object_get(o, "predicted")) /* optional: sweep --model only */
        CT_TRY(get_str(o, at, "predicted", s->predicted, sizeof s->predicted, err));
    if (json_object_get(o, "joined")) { /* optional: colltune join's only */
        CT_TRY(get_int(o, at, "joined", 2, INT32_MAX, &v, err));
        s->joined = (int)v;
    }
    return get_bool(o, at, "budget_out", &s->budget_out, err);
}

static int param_find(const char *name)
{
    for (int q = 0; q < CT_P_COUNT; q++)
        if (!strcmp(ct_param_desc((enum ct_param_id)q)->name, name))
            return q;
    return -1;
}

static int read_params(json_t *r, const char *at, struct ct_params *p, struct ct_err *err)
{
    json_t *o = field(r, at, "params", err);
    if (!o)
        return CT_EINVAL;
    if (!json_is_object(o))
        return bad(err, at, "params", "expected an object");
    char pat[128];
    snprintf(pat, sizeof pat, "%s.params", at);
    const char *key;
    json_t *v;
    memset(p, 0, sizeof *p);
    json_object_foreach(o, key, v)
    {
        if (!strcmp(key, "intra") || !strcmp(key, "inter")) {
            const struct ct_algo *a = json_is_string(v) ? ct_algo_find(json_string_value(v)) : NULL;
            if (!a)
                return bad(err, pat, key, "expected an algorithm name");
            *(!strcmp(key, "intra") ? &p->intra : &p->inter) = a->name; /* static storage */
            continue;
        }
        int q = param_find(key);
        if (q < 0)
            return bad(err, pat, key, "unknown parameter");
        const struct ct_param_desc *d = ct_param_desc((enum ct_param_id)q);
        long long x;
        CT_TRY(get_int(o, pat, key, (long long)d->min, (long long)d->max, &x, err));
        p->v[q] = (uint64_t)x;
    }
    return 0;
}

/* A library section's range: its own algorithm name and id, "segsize", "default". */
static int read_lib_range(json_t *r, const char *at, struct ct_rule *x, struct ct_err *err)
{
    long long v;
    bool def;
    CT_TRY(get_str(r, at, "algo", x->algo, sizeof x->algo, err));
    CT_TRY(get_int(r, at, "id", 0, 1 << 20, &v, err));
    x->id = (int)v;
    json_t *o = field(r, at, "params", err);
    if (!o)
        return CT_EINVAL;
    char pat[128];
    snprintf(pat, sizeof pat, "%s.params", at);
    if (!json_is_object(o) || json_object_size(o) != 1)
        return bad(err, at, "params", "expected {\"segsize\": N}");
    CT_TRY(get_int(o, pat, "segsize", 0, 1 << 30, &v, err));
    x->params.v[CT_P_CHUNK] = (uint64_t)v;
    CT_TRY(get_bool(r, at, "default", &def, err));
    if (def != (x->id == 0))
        return bad(err, at, "default", "%s with id %d", def ? "true" : "false", x->id);
    json_t *ru = field(r, at, "runner_up", err);
    if (!ru)
        return CT_EINVAL;
    if (!json_is_null(ru))
        CT_TRY(get_str(r, at, "runner_up", x->runner_up, sizeof x->runner_up, err));
    x->set_back[0] = '\0'; /* optional: where sweep --verify set the range back, why */
    if (json_object_get(r, "set_back")) {
        CT_TRY(get_str(r, at, "set_back", x->set_back, sizeof x->set_back, err));
        if (strcmp(x->set_back, CT_SET_BACK_SLOW) && strcmp(x->set_back, CT_SET_BACK_NOGAIN))
            return bad(err, at, "set_back", "'%s': expected \"%s\" or \"%s\"", x->set_back,
                       CT_SET_BACK_SLOW, CT_SET_BACK_NOGAIN);
        if (x->id)
            return bad(err, at, "set_back", "on id %d: a range set back is the library's own",
                       x->id);
    }
    return 0;
}

/* "ties": optional (configs before it have none), spans of known algorithms, cut to the range
 * (one edited by hand); a library's (lib): its own names, each with its id > 0. */
static int read_ties(json_t *r, const char *at, bool lib, struct ct_rule *x, struct ct_err *err)
{
    json_t *t = json_object_get(r, "ties");
    x->nties = 0;
    if (!t)
        return 0;
    if (!json_is_array(t) || json_array_size(t) > CT_TIES_MAX)
        return bad(err, at, "ties", "expected an array of at most %d spans", CT_TIES_MAX);
    for (size_t i = 0; i < json_array_size(t); i++) {
        json_t *v = json_array_get(t, i), *a = json_object_get(v, "algo"),
               *lo = json_object_get(v, "min_bytes"), *hi = json_object_get(v, "max_bytes"),
               *id = json_object_get(v, "id"), *q = json_object_get(v, "ratio"),
               *seg = json_object_get(v, "segsize");
        struct ct_tie_span *y = &x->ties[x->nties];
        if (!json_is_object(v) || !json_is_string(a) ||
            !(lib ? *json_string_value(a) && json_is_integer(id) && json_integer_value(id) > 0 &&
                        json_integer_value(id) <= 1 << 20
                  : ct_algo_find(json_string_value(a)) != NULL) ||
            !json_is_integer(lo) || json_integer_value(lo) < 0 ||
            !(json_is_null(hi) || (json_is_integer(hi) && json_integer_value(hi) > 0)) ||
            (q && !(json_is_number(q) && json_number_value(q) > 0 && json_number_value(q) < 1e6)) ||
            (seg && !(lib && json_is_integer(seg) && json_integer_value(seg) >= 0 &&
                      json_integer_value(seg) <= 1 << 30)))
            return bad(err, at, "ties",
                       "entry %zu is not {\"algo\": ALGORITHM,%s \"min_bytes\": N, "
                       "\"max_bytes\": N or null, \"ratio\": R > 0 (optional)%s}",
                       i, lib ? " \"id\": N > 0," : "",
                       lib ? ", \"segsize\": N >= 0 (optional)" : "");
        memset(&y->params, 0, sizeof y->params);
        y->params.v[CT_P_CHUNK] = seg ? (uint64_t)json_integer_value(seg) : 0;
        y->id = lib ? (int)json_integer_value(id) : 0;
        y->ratio = q ? json_number_value(q) : 0;
        snprintf(y->algo, sizeof y->algo, "%s", json_string_value(a));
        y->min_bytes = (uint64_t)json_integer_value(lo);
        y->max_bytes = json_is_null(hi) ? CT_BYTES_INF : (uint64_t)json_integer_value(hi);
        if (y->min_bytes >= y->max_bytes)
            return bad(err, at, "ties", "entry %zu is an empty span", i);
        /* a span past a range's bounds (edited by hand): its part inside, if any */
        y->min_bytes = y->min_bytes < x->min_bytes ? x->min_bytes : y->min_bytes;
        y->max_bytes = y->max_bytes > x->max_bytes ? x->max_bytes : y->max_bytes;
        x->nties += y->min_bytes < y->max_bytes;
    }
    return 0;
}

/* "tied_with": optional (configs before it have none), known algorithm names. */
static int read_tied(json_t *r, const char *at, struct ct_rule *x, struct ct_err *err)
{
    json_t *t = json_object_get(r, "tied_with");
    x->ntied = 0;
    if (!t)
        return 0;
    if (!json_is_array(t) || json_array_size(t) > CT_TIED_MAX)
        return bad(err, at, "tied_with", "expected an array of at most %d algorithm names",
                   CT_TIED_MAX);
    for (size_t i = 0; i < json_array_size(t); i++) {
        json_t *v = json_array_get(t, i);
        if (!json_is_string(v) || !ct_algo_find(json_string_value(v)))
            return bad(err, at, "tied_with", "entry %zu is not an algorithm", i);
        snprintf(x->tied[x->ntied++], sizeof x->tied[0], "%s", json_string_value(v));
    }
    return 0;
}

static int read_range(json_t *r, const char *at, enum ct_coll coll, bool lib, struct ct_rule *x,
                      struct ct_err *err)
{
    long long v;
    if (!json_is_object(r))
        return bad(err, at, NULL, "expected an object");
    CT_TRY(get_int(r, at, "min_bytes", 0, INT64_MAX, &v, err));
    x->min_bytes = (uint64_t)v;
    json_t *mx = field(r, at, "max_bytes", err);
    if (!mx)
        return CT_EINVAL;
    if (json_is_null(mx)) {
        x->max_bytes = CT_BYTES_INF;
    } else {
        CT_TRY(get_int(r, at, "max_bytes", 1, INT64_MAX, &v, err));
        x->max_bytes = (uint64_t)v;
    }
    CT_TRY(get_num(r, at, "confidence", 0, 1, &x->confidence, err));
    CT_TRY(get_bool(r, at, "tie", &x->tie, err));
    CT_TRY(get_num(r, at, "gain", 0, 1e12, &x->gain, err));
    if (json_object_get(r, "predicted")) /* optional: sweep --model only */
        CT_TRY(get_bool(r, at, "predicted", &x->predicted, err));
    if (lib) {
        CT_TRY(read_lib_range(r, at, x, err));
        return read_ties(r, at, true, x, err);
    }
    CT_TRY(get_str(r, at, "algo", x->algo, sizeof x->algo, err));
    const struct ct_algo *a = ct_algo_find(x->algo);
    if (!a)
        return bad(err, at, "algo", "unknown algorithm '%s'", x->algo);
    if (!(a->colls & CT_COLL_BIT(coll)))
        return bad(err, at, "algo", "'%s' does not implement %s", x->algo, ct_coll_name(coll));
    CT_TRY(read_params(r, at, &x->params, err));
    json_t *ru = field(r, at, "runner_up", err);
    if (!ru)
        return CT_EINVAL;
    if (!json_is_null(ru)) {
        CT_TRY(get_str(r, at, "runner_up", x->runner_up, sizeof x->runner_up, err));
        if (!ct_algo_find(x->runner_up))
            return bad(err, at, "runner_up", "unknown algorithm '%s'", x->runner_up);
    }
    CT_TRY(read_tied(r, at, x, err));
    return read_ties(r, at, false, x, err);
}

/* o[key], sweep --verify --lib's record (absent: never verified), into *v */
static int read_verified(json_t *o, const char *at, const char *key, struct ct_verified *v,
                         struct ct_err *err)
{
    json_t *x = json_object_get(o, key);
    if (!x)
        return 0;
    char vat[112];
    snprintf(vat, sizeof vat, "%s.%s", at, key);
    if (!json_is_object(x))
        return bad(err, at, key, "expected an object");
    CT_TRY(get_str(x, vat, "at", v->at, sizeof v->at, err));
    CT_TRY(get_num(x, vat, "geomean", CT_VERIFIED_GEO_MIN, CT_VERIFIED_GEO_MAX, &v->geomean, err));
    v->tell = 0; /* optional: verifies before it recorded none */
    if (json_object_get(x, "tell"))
        CT_TRY(get_num(x, vat, "tell", 1, CT_VERIFIED_GEO_MAX, &v->tell, err));
    if (!v->at[0])
        return bad(err, vat, "at", "expected a time");
    return 0;
}

/* Whether name (with id) is one of s's library rows. */
static bool lib_row(const struct ct_ruleset *s, const char *name, int id)
{
    for (int i = 0; i < s->nlib_rows; i++)
        if (!strcmp(s->lib_rows[i].name, name) && s->lib_rows[i].id == id)
            return true;
    return false;
}

/* A library set's "algorithms" (the library's rows as its sweep read them, name: id; absent
 * in a config before 2026-12-06), and each range's and tie's algorithm among them. */
static int read_lib_rows(json_t *o, const char *at, struct ct_ruleset *s, struct ct_err *err)
{
    json_t *rows = json_object_get(o, "algorithms"), *v;
    const char *k;
    if (!rows)
        return 0;
    if (!json_is_object(rows) || !json_object_size(rows) || json_object_size(rows) > CT_LIB_ROWS)
        return bad(err, at, "algorithms", "expected an object of 1 to %d names and ids",
                   CT_LIB_ROWS);
    json_object_foreach(rows, k, v)
    {
        if (!json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) > (1 << 20) ||
            strlen(k) >= sizeof s->lib_rows[0].name)
            return bad(err, at, "algorithms", "'%.64s': expected a name and its id", k);
        struct ct_lib_row *w = &s->lib_rows[s->nlib_rows++];
        snprintf(w->name, sizeof w->name, "%s", k);
        w->id = (int)json_integer_value(v);
    }
    char list[512] = "";
    for (int i = 0, off = 0; i < s->nlib_rows && off < (int)sizeof list; i++)
        off += snprintf(list + off, sizeof list - (size_t)off, "%s%s", i ? ", " : "",
                        s->lib_rows[i].name);
    for (int i = 0; i < s->nrules; i++) {
        const struct ct_rule *r = &s->rules[i];
        char rat[96];
        snprintf(rat, sizeof rat, "%s.ranges[%d]", at, i);
        if (!lib_row(s, r->algo, r->id))
            return bad(err, rat, "algo",
                       "'%s' (id %d) is not one of the library's rows the sweep read (%s): "
                       "edited by hand?",
                       r->algo, r->id, list);
        for (int t = 0; t < r->nties; t++)
            if (!lib_row(s, r->ties[t].algo, r->ties[t].id))
                return bad(err, rat, "ties",
                           "'%s' (id %d) is not one of the library's rows the sweep read (%s)",
                           r->ties[t].algo, r->ties[t].id, list);
    }
    return 0;
}

/* prefix: "" for the native rules, "libraries[L]." for a library's (lib) */
static int read_ruleset(json_t *o, const char *prefix, int idx, bool lib, struct ct_ruleset *s,
                        struct ct_err *err)
{
    char at[64];
    int t;
    snprintf(at, sizeof at, "%srules[%d]", prefix, idx);
    if (!json_is_object(o))
        return bad(err, at, NULL, "expected an object");
    CT_TRY(get_name(o, at, "coll", ct_coll_find, "collective", &t, err));
    s->coll = (enum ct_coll)t;
    CT_TRY(get_i(o, at, "nnodes", 1, &s->nnodes, err));
    CT_TRY(get_i(o, at, "ranks_per_node", 1, &s->ranks_per_node, err));
    CT_TRY(get_i(o, at, "nranks", 1, &s->nranks, err));
    if (s->nnodes * (long long)s->ranks_per_node != s->nranks)
        return bad(err, at, "nranks", "%d is not nnodes %d x ranks_per_node %d", s->nranks,
                   s->nnodes, s->ranks_per_node);
    CT_TRY(get_name(o, at, "dtype", ct_dtype_find, "datatype", &t, err));
    s->dtype = (enum ct_dtype)t;
    char op[64];
    CT_TRY(get_str(o, at, "op", op, sizeof op, err));
    if ((t = ct_ruleset_op_find(s->coll, op)) < 0)
        return bad(err, at, "op", "%s '%s'",
                   strcmp(op, "none") ? "unknown op" : "a reduction's op cannot be", op);
    s->op = (enum ct_redop)t;
    json_t *ranges = field(o, at, "ranges", err);
    if (!ranges)
        return CT_EINVAL;
    if (!json_is_array(ranges) || !json_array_size(ranges))
        return bad(err, at, "ranges", "expected a non-empty array");
    size_t n = json_array_size(ranges);
    s->rules = ct_xcalloc(n, sizeof *s->rules);
    for (size_t i = 0; i < n; i++) {
        char rat[96];
        snprintf(rat, sizeof rat, "%s.ranges[%zu]", at, i);
        CT_TRY(read_range(json_array_get(ranges, i), rat, s->coll, lib, &s->rules[i], err));
        s->nrules++;
    }
    if ((lib ? ct_ruleset_check_lib(s, err) : ct_ruleset_check(s, err)) < 0)
        return ct_err_wrap(err, "%s.ranges: ", at);
    if (!lib)
        return 0;
    CT_TRY(read_lib_rows(o, at, s, err));
    return read_verified(o, at, "verified", &s->verified, err); /* (its "of": read_libs) */
}

/* Rulesets of a "rules" array into *sets (new), at most one per collective and rank count. */
static int read_rulesets(json_t *rules, const char *prefix, bool lib, struct ct_ruleset **sets,
                         int *nsets, struct ct_err *err)
{
    char at[48];
    snprintf(at, sizeof at, "%srules", prefix);
    size_t n = json_array_size(rules);
    *sets = ct_xcalloc(n ? n : 1, sizeof **sets);
    for (size_t i = 0; i < n; i++) {
        struct ct_ruleset *s = *sets;
        (*nsets)++;
        CT_TRY(read_ruleset(json_array_get(rules, i), prefix, (int)i, lib, &s[i], err));
        for (size_t j = 0; j < i; j++)
            if (s[j].coll == s[i].coll && s[j].nranks == s[i].nranks)
                return bad(err, at, NULL, "two rulesets for %s on %d ranks",
                           ct_coll_name(s[i].coll), s[i].nranks);
    }
    return 0;
}

/* A library section's launch settings (o["env"], absent: none) and their verify record. */
static int read_env(json_t *o, const char *at, struct ct_librules *l, struct ct_err *err)
{
    json_t *env = json_object_get(o, "env");
    if (!env) { /* their verify records alone */
        const char *k = json_object_get(o, "env_verified")     ? "env_verified"
                        : json_object_get(o, "whole_verified") ? "whole_verified"
                                                               : NULL;
        return k ? bad(err, at, k, "without env") : 0;
    }
    const struct ct_libmod *m = ct_libmod_find(l->library);
    if (!json_is_array(env) || !json_array_size(env) || json_array_size(env) > CT_LIB_ENV_MAX)
        return bad(err, at, "env", "expected an array of 1 to %d settings", CT_LIB_ENV_MAX);
    for (size_t i = 0; i < json_array_size(env); i++) {
        json_t *x = json_array_get(env, i);
        struct ct_lib_env *e = &l->env[l->nenv];
        char eat[64];
        snprintf(eat, sizeof eat, "%s.env[%zu]", at, i);
        if (!json_is_object(x))
            return bad(err, eat, NULL, "expected an object");
        CT_TRY(get_str(x, eat, "name", e->name, sizeof e->name, err));
        CT_TRY(get_str(x, eat, "value", e->value, sizeof e->value, err));
        if (m && ct_libmod_env_check(m, e->name, e->value, err) < 0)
            return ct_err_wrap(err, "%s: ", eat);
        for (int j = 0; j < l->nenv; j++)
            if (ct_libmod_env_same(m, l->env[j].name, e->name))
                return bad(err, eat, "name", "%s: %s's variable again", e->name, l->env[j].name);
        l->nenv++;
    }
    CT_TRY(read_verified(o, at, "env_verified", &l->env_verified, err));
    return read_verified(o, at, "whole_verified", &l->whole_verified, err);
}

/* The optional "libraries" array: measured sections, one per library. */
static int read_libs(json_t *doc, struct ct_config *c, struct ct_err *err)
{
    json_t *libs = json_object_get(doc, "libraries");
    if (!libs)
        return 0;
    if (!json_is_array(libs) || !json_array_size(libs))
        return bad(err, "libraries", NULL, "expected a non-empty array");
    size_t n = json_array_size(libs);
    c->libs = ct_xcalloc(n, sizeof *c->libs);
    for (size_t i = 0; i < n; i++) {
        json_t *o = json_array_get(libs, i);
        struct ct_librules *l = &c->libs[i];
        char at[32];
        snprintf(at, sizeof at, "libraries[%zu]", i);
        c->nlibs++;
        if (!json_is_object(o))
            return bad(err, at, NULL, "expected an object");
        CT_TRY(get_str(o, at, "library", l->library, sizeof l->library, err));
        CT_TRY(get_str(o, at, "name", l->name, sizeof l->name, err));
        CT_TRY(get_str(o, at, "version", l->version, sizeof l->version, err));
        for (size_t j = 0; j < i; j++)
            if (!strcmp(c->libs[j].library, l->library))
                return bad(err, at, "library", "'%s' twice", l->library);
        if (strcmp(l->library, "ompi") && strcmp(l->library, "mpich") && strcmp(l->library, "nccl"))
            return bad(err, at, "library",
                       "'%.40s' is no library colltune measures (ompi, mpich, nccl)", l->library);
        if (strcmp(l->library, "ompi") && strcmp(l->library, "mpich")) {
            /* another reader's section (NCCL's tuner plugin checks its own): kept as is */
            l->raw = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
            continue;
        }
        CT_TRY(read_env(o, at, l, err));
        json_t *rules = field(o, at, "rules", err);
        if (!rules)
            return CT_EINVAL;
        if (!json_is_array(rules) || !json_array_size(rules))
            return bad(err, at, "rules", "expected a non-empty array");
        char prefix[40];
        snprintf(prefix, sizeof prefix, "%s.", at);
        CT_TRY(read_rulesets(rules, prefix, true, &l->sets, &l->nsets, err));
        for (int k = 0; k < l->nsets; k++)
            mark_check(json_array_get(rules, (size_t)k), "verified",
                       set_digest(&l->sets[k]) ^ lib_digest(l), &l->sets[k].verified);
        mark_check(o, "env_verified", env_digest(l), &l->env_verified);
        mark_check(o, "whole_verified", whole_digest(l), &l->whole_verified);
    }
    return 0;
}

static int read_doc(json_t *doc, struct ct_config *c, struct ct_err *err)
{
    char schema[64];
    if (!json_is_object(doc))
        return ct_err_set(err, CT_EINVAL, "not a JSON object");
    CT_TRY(get_str(doc, "", "schema", schema, sizeof schema, err));
    if (strcmp(schema, CT_CONFIG_SCHEMA))
        return ct_err_set(err, CT_EINVAL,
                          "schema '%s' is not " CT_CONFIG_SCHEMA
                          " (a tuned config from 'colltune sweep')",
                          schema);
    CT_TRY(get_str(doc, "", "version", c->version, sizeof c->version, err));
    CT_TRY(get_str(doc, "", "date", c->date, sizeof c->date, err));
    CT_TRY(get_bool(doc, "", "partial", &c->partial, err));
    CT_TRY(read_fingerprint(doc, &c->fp, err));
    CT_TRY(read_settings(doc, &c->sweep, err));
    CT_TRY(read_libs(doc, c, err));
    json_t *rules = field(doc, "", "rules", err);
    if (!rules)
        return CT_EINVAL;
    /* a config of a library sweep alone has measured sections and no native rules */
    if (!json_is_array(rules) || (!json_array_size(rules) && !c->nlibs))
        return bad(err, "rules", NULL, "expected a non-empty array");
    return read_rulesets(rules, "", false, &c->sets, &c->nsets, err);
}

int ct_config_json_parse(const char *text, struct ct_config *c, struct ct_err *err)
{
    ct_config_init(c);
    json_error_t je;
    json_t *doc = json_loads(text, JSON_REJECT_DUPLICATES, &je);
    if (!doc)
        return ct_err_set(err, CT_EINVAL, "not valid JSON: line %d: %s", je.line, je.text);
    int rc = read_doc(doc, c, err);
    json_decref(doc);
    if (rc < 0)
        ct_config_release(c);
    return rc;
}

int ct_config_json_read(const char *path, struct ct_config *c, struct ct_err *err)
{
    char *txt;
    size_t len;
    ct_config_init(c);
    CT_TRY(ct_file_read(path, &txt, &len, err));
    int rc = strlen(txt) != len ? ct_err_set(err, CT_EINVAL, "contains a NUL byte")
                                : ct_config_json_parse(txt, c, err);
    free(txt);
    if (rc < 0)
        return ct_err_wrap(err, "'%s': ", path);
    return 0;
}
