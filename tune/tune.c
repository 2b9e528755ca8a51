/* SPDX-License-Identifier: MIT */
/* The tuned config: lifecycle, rule lookup and the coverage check every reader relies on. */
#include "tune.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../algos/coll.h"
#include "../lib/clock.h"

void ct_config_init(struct ct_config *c)
{
    memset(c, 0, sizeof *c);
}

void ct_ruleset_release(struct ct_ruleset *s)
{
    free(s->rules);
    s->rules = NULL;
    s->nrules = 0;
}

void ct_ruleset_copy(struct ct_ruleset *dst, const struct ct_ruleset *src)
{
    *dst = *src;
    dst->rules = ct_xmalloc(sizeof *src->rules * (size_t)(src->nrules ? src->nrules : 1));
    memcpy(dst->rules, src->rules, sizeof *src->rules * (size_t)src->nrules);
}

void ct_config_release(struct ct_config *c)
{
    for (int i = 0; i < c->nsets; i++)
        ct_ruleset_release(&c->sets[i]);
    free(c->sets);
    for (int l = 0; l < c->nlibs; l++) {
        for (int i = 0; i < c->libs[l].nsets; i++)
            ct_ruleset_release(&c->libs[l].sets[i]);
        free(c->libs[l].sets);
        free(c->libs[l].raw);
    }
    free(c->libs);
    memset(c, 0, sizeof *c);
}

const struct ct_librules *ct_config_lib(const struct ct_config *c, const char *lib)
{
    for (int l = 0; l < c->nlibs; l++)
        if (!strcmp(c->libs[l].library, lib))
            return &c->libs[l];
    return NULL;
}

const char *ct_set_back_words(const struct ct_rule *r)
{
    return !r->set_back[0]                          ? ""
           : !strcmp(r->set_back, CT_SET_BACK_SLOW) ? "slower than the defaults"
                                                    : "no gain shown";
}

/* Rule r set back to the library's own choice; why: ct_rule.set_back */
static void set_back(struct ct_rule *r, const char *why)
{
    snprintf(r->set_back, sizeof r->set_back, "%s", r->tried ? "" : why);
    snprintf(r->runner_up, sizeof r->runner_up, "%s", r->algo);
    snprintf(r->algo, sizeof r->algo, "default");
    r->id = 0;
    memset(r->params.v, 0, sizeof r->params.v);
    r->tie = false;
    r->gain = 1;
    if (!r->tried) /* ties with the row set back, not with the library's choice */
        r->nties = 0;
    r->tried = false;
}

bool ct_config_lib_demote(struct ct_config *c, const char *lib, int i, int k, const char *why)
{
    struct ct_librules *l = (struct ct_librules *)ct_config_lib(c, lib);
    if (!l || i < 0 || i >= l->nsets || k < 0 || k >= l->sets[i].nrules)
        return false;
    struct ct_rule *r = &l->sets[i].rules[k];
    if (r->id == 0)
        return true;
    l->sets[i].verified.at[0] = '\0'; /* a changed set is a new file: not verified */
    l->whole_verified.at[0] = '\0';
    set_back(r, why);
    return true;
}

/* b's tie spans added to a's, b's range next to a's: a span cut at the join is one again
 * (the same row with the same parameters). */
static void add_ties(struct ct_rule *a, const struct ct_rule *b)
{
    for (int t = 0; t < b->nties; t++) {
        struct ct_tie_span *last = NULL;
        for (int u = 0; u < a->nties; u++)
            if (!strcmp(a->ties[u].algo, b->ties[t].algo) &&
                !memcmp(a->ties[u].params.v, b->ties[t].params.v, sizeof a->ties[u].params.v) &&
                (a->ties[u].max_bytes == b->ties[t].min_bytes ||
                 a->ties[u].min_bytes == b->ties[t].max_bytes))
                last = &a->ties[u];
        if (last && last->max_bytes == b->ties[t].min_bytes)
            last->max_bytes = b->ties[t].max_bytes;
        else if (last)
            last->min_bytes = b->ties[t].min_bytes;
        else if (a->nties < CT_TIES_MAX)
            a->ties[a->nties++] = b->ties[t];
    }
}

/* Rule to, the library's own choice, takes over [lo, hi) of x's range next to its own: with
 * x's ties there when x is a tried row (its spans are the library's choice's). */
static void take_part(struct ct_rule *to, const struct ct_rule *x, uint64_t lo, uint64_t hi)
{
    if (!x->tried)
        return;
    struct ct_rule part = *x;
    part.min_bytes = lo;
    part.max_bytes = hi;
    ct_rule_clip_ties(&part);
    add_ties(to, &part);
}

void ct_rule_clip_ties(struct ct_rule *r)
{
    int k = 0;
    for (int t = 0; t < r->nties; t++) {
        struct ct_tie_span sp = r->ties[t];
        sp.min_bytes = sp.min_bytes < r->min_bytes ? r->min_bytes : sp.min_bytes;
        sp.max_bytes = sp.max_bytes > r->max_bytes ? r->max_bytes : sp.max_bytes;
        if (sp.min_bytes < sp.max_bytes)
            r->ties[k++] = sp;
    }
    r->nties = k;
}

bool ct_config_lib_trim(struct ct_config *c, const char *lib, int i, int k, uint64_t lo,
                        uint64_t hi)
{
    struct ct_librules *l = (struct ct_librules *)ct_config_lib(c, lib);
    if (!l || i < 0 || i >= l->nsets || k < 0 || k >= l->sets[i].nrules)
        return false;
    struct ct_ruleset *s = &l->sets[i];
    struct ct_rule x = s->rules[k];
    if (x.id == 0 || lo >= hi || lo < x.min_bytes || hi > x.max_bytes)
        return false;
    l->whole_verified.at[0] = '\0';
    /* the part cut off joins a neighbour that is the library's own choice, else is one */
    if (lo > x.min_bytes && k > 0 && s->rules[k - 1].id == 0) {
        take_part(&s->rules[k - 1], &x, x.min_bytes, lo);
        s->rules[k - 1].max_bytes = x.min_bytes = lo;
    }
    if (hi < x.max_bytes && k + 1 < s->nrules && s->rules[k + 1].id == 0) {
        take_part(&s->rules[k + 1], &x, hi, x.max_bytes);
        s->rules[k + 1].min_bytes = x.max_bytes = hi;
    }
    int below = lo > x.min_bytes, above = hi < x.max_bytes;
    s->rules = ct_xrealloc(s->rules, sizeof *s->rules * (size_t)(s->nrules + below + above));
    memmove(&s->rules[k + below + above + 1], &s->rules[k + 1],
            sizeof *s->rules * (size_t)(s->nrules - k - 1));
    s->nrules += below + above;
    struct ct_rule *r = &s->rules[k];
    if (below) { /* [min, lo): the library's own choice */
        *r = x;
        r->max_bytes = lo;
        set_back(r, CT_SET_BACK_SLOW);
        ct_rule_clip_ties(r++);
    }
    *r = x;
    r->min_bytes = lo;
    r->max_bytes = hi;
    ct_rule_clip_ties(r);
    if (above) {
        r[1] = x;
        r[1].min_bytes = hi;
        set_back(&r[1], CT_SET_BACK_SLOW);
        ct_rule_clip_ties(&r[1]);
    }
    s->verified.at[0] = '\0'; /* a changed set is a new file: not verified */
    return true;
}

/* Span a before b where two overlap: the faster in the sweep (a ratio not known last). */
static bool before(const struct ct_tie_span *a, const struct ct_tie_span *b)
{
    return a->ratio > 0 && (!(b->ratio > 0) || a->ratio < b->ratio);
}

/* The spans of r's ties to try (ct_config_lib_try_ties), at most max: a library row's (id > 0);
 * where two overlap the one the sweep measured faster (else the earlier) takes the overlap and
 * the other the parts outside it; sorted by size, disjoint; how many. */
static int spans_to_try(const struct ct_rule *r, struct ct_tie_span *out, int max)
{
    const struct ct_tie_span *by[CT_TIES_MAX];
    int n = 0, nb = 0;
    for (int t = 0; t < r->nties && t < CT_TIES_MAX; t++) { /* the order to take them in */
        int j = nb++;
        for (; j > 0 && before(&r->ties[t], by[j - 1]); j--)
            by[j] = by[j - 1];
        by[j] = &r->ties[t];
    }
    for (int t = 0; t < nb; t++) {
        if (by[t]->id <= 0)
            continue;
        struct ct_tie_span part[CT_TIES_MAX * 2 + 1]; /* its parts no span taken covers */
        int nf = 0;
        uint64_t at = by[t]->min_bytes;
        for (int j = 0; j <= n && at < by[t]->max_bytes; j++) { /* out: sorted, disjoint */
            uint64_t end =
                j < n && out[j].min_bytes < by[t]->max_bytes ? out[j].min_bytes : by[t]->max_bytes;
            if (end > at) {
                part[nf] = *by[t];
                part[nf].min_bytes = at;
                part[nf++].max_bytes = end;
            }
            if (j < n && out[j].max_bytes > at)
                at = out[j].max_bytes;
        }
        for (int p = 0; p < nf && n < max; p++) {
            int j = n++;
            for (; j > 0 && out[j - 1].min_bytes > part[p].min_bytes; j--)
                out[j] = out[j - 1];
            out[j] = part[p];
        }
    }
    return n;
}

int ct_config_lib_try_ties(struct ct_config *c, const char *lib, int i)
{
    struct ct_librules *l = (struct ct_librules *)ct_config_lib(c, lib);
    if (!l || i < 0 || i >= l->nsets)
        return 0;
    struct ct_ruleset *s = &l->sets[i];
    int made = 0;
    for (int k = 0; k < s->nrules; k++) {
        struct ct_tie_span sp[CT_TIES_MAX * 2];
        int n = s->rules[k].id == 0 ? spans_to_try(&s->rules[k], sp, CT_TIES_MAX * 2) : 0;
        if (!n)
            continue;
        /* the range becomes up to 2n + 1 rules: its own choice between the spans */
        struct ct_rule x = s->rules[k], *out = ct_xcalloc((size_t)(2 * n + 1), sizeof *out);
        int m = 0;
        uint64_t at = x.min_bytes;
        for (int t = 0; t <= n; t++) {
            uint64_t lo = t < n ? sp[t].min_bytes : x.max_bytes;
            if (lo > at) { /* the library's own choice from at to lo */
                out[m] = x;
                out[m].min_bytes = at;
                out[m].max_bytes = lo;
                ct_rule_clip_ties(&out[m++]);
            }
            if (t == n)
                break;
            struct ct_rule *r = &out[m++];
            *r = x;
            memcpy(r->algo, sp[t].algo, sizeof r->algo); /* both char[64] */
            snprintf(r->runner_up, sizeof r->runner_up, "default");
            r->id = sp[t].id;
            memcpy(r->params.v, sp[t].params.v, sizeof r->params.v); /* as the sweep ran it */
            r->min_bytes = sp[t].min_bytes;
            r->max_bytes = at = sp[t].max_bytes;
            r->tie = r->tried = true;
            r->gain = 1;
            ct_rule_clip_ties(r);
            int others = 0; /* the other rows tied here, not this one */
            for (int u = 0; u < r->nties; u++)
                if (strcmp(r->ties[u].algo, r->algo))
                    r->ties[others++] = r->ties[u];
            r->nties = others;
        }
        s->rules = ct_xrealloc(s->rules, sizeof *s->rules * (size_t)(s->nrules + m - 1));
        memmove(&s->rules[k + m], &s->rules[k + 1], sizeof *s->rules * (size_t)(s->nrules - k - 1));
        memcpy(&s->rules[k], out, sizeof *out * (size_t)m);
        s->nrules += m - 1;
        made += n;
        k += m - 1;
        free(out);
    }
    if (made)
        s->verified.at[0] = l->whole_verified.at[0] = '\0';
    return made;
}

void ct_config_lib_set_copy(struct ct_config *dst, const struct ct_config *src, const char *lib,
                            int i)
{
    struct ct_librules *d = dst ? (struct ct_librules *)ct_config_lib(dst, lib) : NULL;
    const struct ct_librules *s = src ? ct_config_lib(src, lib) : NULL;
    if (!d || !s || i < 0 || i >= d->nsets || i >= s->nsets)
        return;
    ct_ruleset_release(&d->sets[i]);
    ct_ruleset_copy(&d->sets[i], &s->sets[i]);
    d->whole_verified.at[0] = '\0';
}

void ct_config_lib_join_own(struct ct_config *c, const char *lib, int i)
{
    struct ct_librules *l = c ? (struct ct_librules *)ct_config_lib(c, lib) : NULL;
    if (!l || i < 0 || i >= l->nsets)
        return;
    struct ct_ruleset *s = &l->sets[i];
    int m = 0;
    for (int k = 0; k < s->nrules; k++) {
        struct ct_rule *a = m ? &s->rules[m - 1] : NULL, *b = &s->rules[k];
        if (!a || a->id || b->id) {
            s->rules[m++] = *b;
            continue;
        }
        a->max_bytes = b->max_bytes;
        a->confidence = b->confidence < a->confidence ? b->confidence : a->confidence;
        a->tie |= b->tie;
        add_ties(a, b);
    }
    s->nrules = m;
}

/* Mark v verified now with geomean and tell (0 where not in [1, CT_VERIFIED_GEO_MAX]), or
 * clear it where geomean is not a positive number. */
static bool stamp(struct ct_verified *v, double geomean, double tell)
{
    if (!(geomean >= CT_VERIFIED_GEO_MIN && geomean <= CT_VERIFIED_GEO_MAX)) { /* NaN too */
        v->at[0] = '\0';
        v->tell = 0;
        return false;
    }
    ct_utc_iso(v->at, sizeof v->at);
    v->geomean = geomean;
    v->tell = tell >= 1 && tell <= CT_VERIFIED_GEO_MAX ? tell : 0;
    return true;
}

bool ct_ruleset_keeps_own(const struct ct_ruleset *s)
{
    bool own = s->nrules > 0;
    for (int k = 0; k < s->nrules && own; k++)
        own = s->rules[k].id == 0;
    return own;
}

bool ct_librules_keeps_own(const struct ct_librules *l)
{
    bool own = !l || !l->nenv;
    for (int i = 0; l && i < l->nsets && own; i++)
        own = ct_ruleset_keeps_own(&l->sets[i]);
    return own;
}

bool ct_config_lib_verified(struct ct_config *c, const char *lib, int i, double geomean,
                            double tell)
{
    struct ct_librules *l = (struct ct_librules *)ct_config_lib(c, lib);
    /* a set at the library's own choice everywhere changes nothing: nothing to vouch for */
    return l && i >= 0 && i < l->nsets &&
           stamp(&l->sets[i].verified, ct_ruleset_keeps_own(&l->sets[i]) ? 0 : geomean, tell);
}

bool ct_config_lib_env_verified(struct ct_config *c, const char *lib, double geomean, double tell)
{
    struct ct_librules *l = c ? (struct ct_librules *)ct_config_lib(c, lib) : NULL;
    return l && l->nenv && stamp(&l->env_verified, geomean, tell);
}

bool ct_config_lib_whole_verified(struct ct_config *c, const char *lib, double geomean, double tell)
{
    struct ct_librules *l = c ? (struct ct_librules *)ct_config_lib(c, lib) : NULL;
    return l && l->nenv && stamp(&l->whole_verified, geomean, tell);
}

void ct_librules_env_remove(struct ct_librules *l, int k)
{
    memmove(&l->env[k], &l->env[k + 1], (size_t)(l->nenv - k - 1) * sizeof l->env[0]);
    l->nenv--;
}

bool ct_config_lib_env_drop(struct ct_config *c, const char *lib, int k)
{
    struct ct_librules *l = c ? (struct ct_librules *)ct_config_lib(c, lib) : NULL;
    if (!l || !l->nenv || k >= l->nenv)
        return false;
    if (k >= 0)
        ct_librules_env_remove(l, k);
    else
        l->nenv = 0;
    stamp(&l->env_verified, 0, 0);
    stamp(&l->whole_verified, 0, 0);
    for (int i = 0; i < l->nsets; i++)
        stamp(&l->sets[i].verified, 0, 0);
    return true;
}

bool ct_config_lib_drop(struct ct_config *c, const char *lib)
{
    struct ct_librules *l = (struct ct_librules *)ct_config_lib(c, lib);
    if (!l)
        return false;
    for (int i = 0; i < l->nsets; i++)
        ct_ruleset_release(&l->sets[i]);
    free(l->sets);
    free(l->raw);
    memmove(l, l + 1, (size_t)(c->libs + c->nlibs - l - 1) * sizeof *l);
    c->nlibs--;
    return true;
}

const struct ct_rule *ct_ruleset_find(const struct ct_ruleset *s, uint64_t bytes)
{
    for (int i = 0; i < s->nrules; i++)
        if (bytes >= s->rules[i].min_bytes &&
            (bytes < s->rules[i].max_bytes || s->rules[i].max_bytes == CT_BYTES_INF))
            return &s->rules[i];
    return NULL;
}

const struct ct_ruleset *ct_config_find(const struct ct_config *c, enum ct_coll coll, int nranks)
{
    for (int i = 0; i < c->nsets; i++)
        if (c->sets[i].coll == coll && (nranks <= 0 || c->sets[i].nranks == nranks))
            return &c->sets[i];
    return NULL;
}

static int check(const struct ct_ruleset *s, bool lib, struct ct_err *err)
{
    const char *cn = ct_coll_name(s->coll);
    if (s->nrules < 1)
        return ct_err_set(err, CT_EINVAL, "%s: no ranges", cn);
    if (s->rules[0].min_bytes != 0)
        return ct_err_set(err, CT_EINVAL, "%s: the first range starts at %llu, not 0", cn,
                          (unsigned long long)s->rules[0].min_bytes);
    for (int i = 0; i < s->nrules; i++) {
        const struct ct_rule *r = &s->rules[i];
        const struct ct_algo *a = lib ? NULL : ct_algo_find(r->algo);
        if (!lib && !a)
            return ct_err_set(err, CT_EINVAL, "%s: range %d: unknown algorithm '%s'", cn, i,
                              r->algo);
        if (a && !(a->colls & CT_COLL_BIT(s->coll)))
            return ct_err_set(err, CT_EINVAL, "%s: range %d: algorithm '%s' does not implement %s",
                              cn, i, r->algo, cn);
        if (r->max_bytes <= r->min_bytes)
            return ct_err_set(err, CT_EINVAL, "%s: range %d is empty (%llu..%llu)", cn, i,
                              (unsigned long long)r->min_bytes, (unsigned long long)r->max_bytes);
        if (i + 1 < s->nrules && s->rules[i + 1].min_bytes != r->max_bytes)
            return ct_err_set(err, CT_EINVAL,
                              "%s: gap or overlap between range %d (ends %llu) "
                              "and range %d (starts %llu)",
                              cn, i, (unsigned long long)r->max_bytes, i + 1,
                              (unsigned long long)s->rules[i + 1].min_bytes);
    }
    if (s->rules[s->nrules - 1].max_bytes != CT_BYTES_INF)
        return ct_err_set(err, CT_EINVAL, "%s: the last range ends at %llu, not infinity", cn,
                          (unsigned long long)s->rules[s->nrules - 1].max_bytes);
    return 0;
}

const char *ct_ruleset_op_name(const struct ct_ruleset *s)
{
    return ct_coll_desc(s->coll)->needs_op ? ct_redop_name(s->op) : "none";
}

int ct_ruleset_op_find(enum ct_coll coll, const char *name)
{
    if (name && !strcmp(name, "none")) /* configs before it say "sum" for these: taken too */
        return ct_coll_desc(coll)->needs_op ? -1 : CT_SUM;
    return ct_redop_find(name);
}

int ct_ruleset_check(const struct ct_ruleset *s, struct ct_err *err)
{
    return check(s, false, err);
}

int ct_ruleset_check_lib(const struct ct_ruleset *s, struct ct_err *err)
{
    return check(s, true, err);
}
