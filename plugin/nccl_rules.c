/* SPDX-License-Identifier: MIT */
/* The NCCL section of a colltune config, read strictly (see nccl_rules.h). */
#include "nccl_rules.h"

#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "nccl_tuner_abi.h"

static const char *const algo_names[NCCL_NUM_ALGORITHMS] = {
    [NCCL_ALGO_TREE] = "tree",
    [NCCL_ALGO_RING] = "ring",
    [NCCL_ALGO_COLLNET_DIRECT] = "collnet_direct",
    [NCCL_ALGO_COLLNET_CHAIN] = "collnet_chain",
    [NCCL_ALGO_NVLS] = "nvls",
    [NCCL_ALGO_NVLS_TREE] = "nvls_tree",
    [NCCL_ALGO_PAT] = "pat",
};
static const char *const proto_names[NCCL_NUM_PROTOCOLS] = {
    [NCCL_PROTO_LL] = "LL", [NCCL_PROTO_LL128] = "LL128", [NCCL_PROTO_SIMPLE] = "Simple"};
/* The collectives an NCCL tuner is asked about (alltoall is grouped send/receive in NCCL). */
static const char *const func_names[] = {[ncclFuncBroadcast] = "broadcast",
                                         [ncclFuncReduce] = "reduce",
                                         [ncclFuncAllGather] = "allgather",
                                         [ncclFuncReduceScatter] = "reducescatter",
                                         [ncclFuncAllReduce] = "allreduce"};
#define NFUNCS (int)(sizeof func_names / sizeof func_names[0])

int ct_nr_algo(const char *name)
{
    for (int i = 0; name && i < NCCL_NUM_ALGORITHMS; i++)
        if (!strcasecmp(name, algo_names[i]))
            return i;
    return -1;
}

int ct_nr_proto(const char *name)
{
    for (int i = 0; name && i < NCCL_NUM_PROTOCOLS; i++)
        if (!strcasecmp(name, proto_names[i]))
            return i;
    return -1;
}

const char *ct_nr_algo_name(int a)
{
    return a >= 0 && a < NCCL_NUM_ALGORITHMS ? algo_names[a] : "?";
}

const char *ct_nr_proto_name(int p)
{
    return p >= 0 && p < NCCL_NUM_PROTOCOLS ? proto_names[p] : "?";
}

const char *ct_nr_func_name(int f)
{
    return f >= 0 && f < NFUNCS ? func_names[f] : "?";
}

static int func_of(const char *name)
{
    for (int i = 0; i < NFUNCS; i++)
        if (!strcmp(name, func_names[i]))
            return i;
    return -1;
}

struct rd {
    char *msg;
    size_t len;
    char where[160]; /* field path of the object being read */
};

__attribute__((format(printf, 3, 4))) static int bad(struct rd *r, const char *key, const char *fmt,
                                                     ...)
{
    int n =
        snprintf(r->msg, r->len, "%s%s%s: ", r->where, *r->where && key ? "." : "", key ? key : "");
    va_list ap;
    va_start(ap, fmt);
    if (n >= 0 && (size_t)n < r->len)
        vsnprintf(r->msg + n, r->len - (size_t)n, fmt, ap);
    va_end(ap);
    return -1;
}

/* Integer field: required unless opt; null allowed only when nul (sets *isnull). */
static int get_int(struct rd *r, json_t *o, const char *key, bool opt, long long min, long long max,
                   long long *v, bool *present)
{
    json_t *j = json_object_get(o, key);
    *present = j != NULL;
    if (!j)
        return opt ? 0 : bad(r, key, "missing (an integer)");
    if (!json_is_integer(j))
        return bad(r, key, "expected an integer");
    *v = json_integer_value(j);
    if (*v < min || *v > max)
        return bad(r, key, "%lld out of range [%lld, %lld]", *v, min, max);
    return 0;
}

/* The first control character of s, 0 if none: exports copy the section's strings into
 * comments of files a shell sources, where a newline would end one. */
static int control_char(const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        if (*p < 0x20 || *p == 0x7f)
            return *p;
    return 0;
}

static int get_str(struct rd *r, json_t *o, const char *key, bool opt, const char **s)
{
    json_t *j = json_object_get(o, key);
    *s = NULL;
    if (!j)
        return opt ? 0 : bad(r, key, "missing (a string)");
    if (!json_is_string(j))
        return bad(r, key, "expected a string");
    *s = json_string_value(j);
    int c = control_char(*s);
    return c ? bad(r, key, "control character 0x%02x (a string on one line expected)", c) : 0;
}

/* Fields colltune writes that the plugin does not use: only their types are checked. */
static int check_extra(struct rd *r, json_t *o, const char *const *keys, const char *types)
{
    for (int i = 0; keys[i]; i++) {
        json_t *j = json_object_get(o, keys[i]);
        if (!j || json_is_null(j))
            continue;
        bool ok = types[i] == 'n'   ? json_is_number(j)
                  : types[i] == 'b' ? json_is_boolean(j)
                  : types[i] == 'i' ? json_is_integer(j)
                                    : json_is_string(j);
        if (!ok)
            return bad(r, keys[i], "expected %s",
                       types[i] == 'n'   ? "a number"
                       : types[i] == 'b' ? "true or false"
                       : types[i] == 'i' ? "an integer"
                                         : "a string");
    }
    return 0;
}

static int read_range(struct rd *r, json_t *o, struct ct_nr_range *x)
{
    long long v;
    bool has;
    memset(x, 0, sizeof *x);
    if (!json_is_object(o))
        return bad(r, NULL, "expected an object");
    if (get_int(r, o, "min_bytes", false, 0, INT64_MAX, &v, &has))
        return -1;
    x->lo = (uint64_t)v;
    json_t *mx = json_object_get(o, "max_bytes");
    if (!mx)
        return bad(r, "max_bytes", "missing (an integer, or null for no upper end)");
    if (json_is_null(mx))
        x->hi = CT_NR_INF;
    else if (get_int(r, o, "max_bytes", false, 0, INT64_MAX, &v, &has))
        return -1;
    else if ((uint64_t)v <= x->lo)
        return bad(r, "max_bytes", "%lld not above min_bytes %llu", v, (unsigned long long)x->lo);
    else
        x->hi = (uint64_t)v;
    json_t *d = json_object_get(o, "default");
    if (d && !json_is_boolean(d))
        return bad(r, "default", "expected true or false");
    x->keep = d && json_is_true(d);
    static const char *const extra[] = {"id", "confidence", "tie", "runner_up", "gain", NULL};
    if (check_extra(r, o, extra, "inbsn"))
        return -1;
    const char *algo;
    if (get_str(r, o, "algo", x->keep, &algo))
        return -1;
    json_t *p = json_object_get(o, "params");
    if (x->keep) /* NCCL's own choice ("algo": "default", as colltune's sweep writes it) */
        return p && !json_is_object(p) ? bad(r, "params", "expected an object") : 0;
    if ((x->algo = ct_nr_algo(algo)) < 0)
        return bad(r, "algo",
                   "'%s' is not an NCCL algorithm (tree, ring, collnet_direct, "
                   "collnet_chain, nvls, nvls_tree, pat)",
                   algo);
    if (!json_is_object(p))
        return bad(r, "params", p ? "expected an object" : "missing (an object with \"proto\")");
    size_t n = strlen(r->where);
    snprintf(r->where + n, sizeof r->where - n, ".params");
    const char *proto;
    if (get_str(r, p, "proto", false, &proto))
        return -1;
    if ((x->proto = ct_nr_proto(proto)) < 0)
        return bad(r, "proto", "'%s' is not an NCCL protocol (LL, LL128, Simple)", proto);
    if (get_int(r, p, "channels", true, 0, 64, &v, &has))
        return -1;
    x->channels = has ? (int)v : 0;
    r->where[n] = 0;
    return 0;
}

/* The rule's optional verify record (tune.h's CT_VERIFIED_GEO_MIN..MAX: the plugin needs
 * nothing of colltune's headers). */
static int read_verified(struct rd *r, json_t *o, struct ct_nr_rule *u)
{
    json_t *v = json_object_get(o, "verified");
    if (!v)
        return 0;
    if (!json_is_object(v))
        return bad(r, "verified", "expected an object");
    json_t *at = json_object_get(v, "at"), *g = json_object_get(v, "geomean"),
           *tell = json_object_get(v, "tell");
    if (!json_is_string(at) || !*json_string_value(at) ||
        strlen(json_string_value(at)) >= sizeof u->verified_at ||
        control_char(json_string_value(at)))
        return bad(r, "verified.at", "expected a UTC time (\"2026-11-29T14:00:00Z\")");
    if (!json_is_number(g) || !(json_number_value(g) >= 1e-6 && json_number_value(g) <= 1e6))
        return bad(r, "verified.geomean", "expected a number in [1e-06, 1e+06]");
    if (tell && (!json_is_number(tell) ||
                 !(json_number_value(tell) >= 1 && json_number_value(tell) <= 1e6)))
        return bad(r, "verified.tell", "expected a number in [1, 1e+06]");
    snprintf(u->verified_at, sizeof u->verified_at, "%s", json_string_value(at));
    u->verified_geomean = json_number_value(g);
    u->verified_tell = tell ? json_number_value(tell) : 0;
    return 0;
}

static int read_rule(struct rd *r, json_t *o, struct ct_nr_rule *u)
{
    long long v, rpn;
    bool has;
    const char *coll;
    memset(u, 0, sizeof *u);
    if (!json_is_object(o))
        return bad(r, NULL, "expected an object");
    if (get_str(r, o, "coll", false, &coll))
        return -1;
    /* alltoall is grouped send/receive in NCCL, which no tuner is asked about: a sweep's
     * alltoall rule (NCCL's own choice) is read and never matches */
    bool a2a = !strcmp(coll, "alltoall");
    if ((u->func = a2a ? -1 : func_of(coll)) < 0 && !a2a)
        return bad(r, "coll",
                   "'%s' is not a collective an NCCL tuner selects (allreduce, "
                   "allgather, reducescatter, broadcast, reduce; alltoall is read and left "
                   "to NCCL)",
                   coll);
    if (get_int(r, o, "nnodes", false, 1, 1 << 24, &v, &has))
        return -1;
    u->nnodes = (long)v;
    if (get_int(r, o, "nranks", false, 1, 1 << 24, &v, &has))
        return -1;
    u->nranks = (long)v;
    if (u->nranks < u->nnodes)
        return bad(r, "nranks", "%ld below nnodes %ld", u->nranks, u->nnodes);
    if (get_int(r, o, "ranks_per_node", true, 1, 1 << 24, &rpn, &has))
        return -1;
    if (has && rpn * u->nnodes != u->nranks)
        return bad(r, "ranks_per_node", "%lld x nnodes %ld is not nranks %ld", rpn, u->nnodes,
                   u->nranks);
    static const char *const extra[] = {"dtype", "op", NULL};
    if (check_extra(r, o, extra, "ss") || read_verified(r, o, u))
        return -1;
    json_t *rs = json_object_get(o, "ranges");
    if (!json_is_array(rs) || !json_array_size(rs))
        return bad(r, "ranges", rs ? "expected a non-empty array" : "missing (an array)");
    u->nranges = (int)json_array_size(rs);
    u->ranges = calloc((size_t)u->nranges, sizeof *u->ranges);
    if (!u->ranges)
        return bad(r, "ranges", "out of memory");
    size_t n = strlen(r->where);
    for (int i = 0; i < u->nranges; i++) {
        snprintf(r->where + n, sizeof r->where - n, ".ranges[%d]", i);
        if (read_range(r, json_array_get(rs, (size_t)i), &u->ranges[i]))
            return -1;
        if (i && u->ranges[i].lo < u->ranges[i - 1].hi)
            return bad(r, "min_bytes",
                       "%llu overlaps or precedes the range before (ranges "
                       "must be sorted and disjoint)",
                       (unsigned long long)u->ranges[i].lo);
    }
    r->where[n] = 0;
    return 0;
}

static int read_nccl(struct rd *r, json_t *lib, struct ct_nr_table *t)
{
    const char *s;
    if (get_str(r, lib, "version", true, &s))
        return -1;
    if (s)
        snprintf(t->version, sizeof t->version, "%s", s);
    if (get_str(r, lib, "name", true, &s))
        return -1;
    json_t *rules = json_object_get(lib, "rules");
    if (!json_is_array(rules))
        return bad(r, "rules", rules ? "expected an array" : "missing (an array)");
    t->nrules = (int)json_array_size(rules);
    t->rules = calloc((size_t)t->nrules + 1, sizeof *t->rules);
    if (!t->rules)
        return bad(r, "rules", "out of memory");
    size_t n = strlen(r->where);
    for (int i = 0; i < t->nrules; i++) {
        snprintf(r->where + n, sizeof r->where - n, ".rules[%d]", i);
        if (read_rule(r, json_array_get(rules, (size_t)i), &t->rules[i]))
            return -1;
    }
    r->where[n] = 0;
    return 0;
}

int ct_nr_load(const char *path, struct ct_nr_table *t, char *msg, size_t len)
{
    memset(t, 0, sizeof *t);
    struct rd r = {msg, len, ""};
    json_error_t je;
    json_t *root = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
    if (!root) {
        snprintf(msg, len, "%s: line %d: %s", path, je.line, je.text);
        return -1;
    }
    int rc = 0;
    json_t *libs = json_object_get(root, "libraries");
    if (!json_is_object(root))
        rc = bad(&r, NULL, "%s: expected a JSON object (a colltune config)", path);
    else if (libs && !json_is_array(libs))
        rc = bad(&r, "libraries", "expected an array");
    for (size_t i = 0; !rc && libs && i < json_array_size(libs); i++) {
        json_t *lib = json_array_get(libs, i);
        const char *name;
        snprintf(r.where, sizeof r.where, "libraries[%zu]", i);
        if (!json_is_object(lib))
            rc = bad(&r, NULL, "expected an object");
        else if (!(rc = get_str(&r, lib, "library", false, &name)) && !strcmp(name, "nccl")) {
            if (t->found)
                rc = bad(&r, "library", "a second NCCL section");
            else {
                t->found = true;
                rc = read_nccl(&r, lib, t);
            }
        }
    }
    json_decref(root);
    if (rc)
        ct_nr_free(t);
    return rc;
}

void ct_nr_free(struct ct_nr_table *t)
{
    for (int i = 0; t->rules && i < t->nrules; i++)
        free(t->rules[i].ranges);
    free(t->rules);
    memset(t, 0, sizeof *t);
}

const struct ct_nr_range *ct_nr_match(const struct ct_nr_table *t, int func, size_t nranks,
                                      size_t nnodes, size_t nbytes)
{
    for (int i = 0; i < t->nrules; i++) {
        const struct ct_nr_rule *u = &t->rules[i];
        if (u->func != func || (size_t)u->nranks != nranks || (size_t)u->nnodes != nnodes)
            continue;
        for (int k = 0; k < u->nranges; k++)
            if (nbytes >= u->ranges[k].lo &&
                (u->ranges[k].hi == CT_NR_INF || nbytes < u->ranges[k].hi))
                return &u->ranges[k];
    }
    return NULL;
}
