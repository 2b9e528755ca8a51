/* SPDX-License-Identifier: MIT */
/*
 * Configs joined: the rule sets of several sweeps' configs (a sweep measures one shape) in one,
 * so that a library's export carries a section per rank count (Open MPI's comm-size sections,
 * MPICH's comm_size tree) and colltune's own rules cover each shape. What one config cannot
 * hold is refused, naming the files: two grids of sizes (or datatypes, ops), two sets of one
 * collective and rank count, one library's two releases or two lists of launch settings,
 * colltune's own rules over two transports or memories, two sections kept as written.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/parse.h"
#include "tune.h"

/* "launch settings NAME=VALUE NAME=VALUE", or "no launch settings" */
static const char *env_str(const struct ct_librules *l, char *buf, size_t len)
{
    size_t o = 0;
    snprintf(buf, len, "no launch settings");
    for (int i = 0; i < l->nenv && o < len; i++)
        o += (size_t)snprintf(buf + o, len - o, "%s%s=%s", i ? " " : "launch settings ",
                              l->env[i].name, l->env[i].value);
    return buf;
}

/* The same launch settings, in any order. */
static bool same_env(const struct ct_librules *a, const struct ct_librules *b)
{
    if (a->nenv != b->nenv)
        return false;
    for (int i = 0; i < a->nenv; i++) {
        int j = 0;
        while (j < b->nenv && strcmp(a->env[i].name, b->env[j].name))
            j++;
        if (j == b->nenv || strcmp(a->env[i].value, b->env[j].value))
            return false;
    }
    return true;
}

/* None of add (nadd sets) has a collective and rank count that sets (n) has: 0, or why not;
 * whose: "colltune's own" or "Open MPI's" */
static int dup_check(const struct ct_ruleset *sets, int n, const struct ct_ruleset *add, int nadd,
                     const struct ct_join_names *nm, const char *whose, struct ct_err *err)
{
    for (int i = 0; i < nadd; i++)
        for (int j = 0; j < n; j++)
            if (sets[j].coll == add[i].coll && sets[j].nranks == add[i].nranks)
                return ct_err_set(err, CT_EINVAL,
                                  "%s: a set of %s %s on %d ranks, where %s has one already: a "
                                  "config holds one per collective and rank count",
                                  nm->src, whose, ct_coll_name(add[i].coll), add[i].nranks,
                                  nm->dst);
    return 0;
}

/* add (nadd sets) copied to the end of *sets (n of them) */
static void add_sets(struct ct_ruleset **sets, int *n, const struct ct_ruleset *add, int nadd)
{
    if (!nadd)
        return;
    *sets = ct_xrealloc(*sets, sizeof **sets * (size_t)(*n + nadd));
    for (int i = 0; i < nadd; i++)
        ct_ruleset_copy(&(*sets)[(*n)++], &add[i]);
}

/* The checks of src's section s against d, the same library's in dst. */
static int lib_check(const struct ct_librules *d, const struct ct_librules *s,
                     const struct ct_join_names *nm, struct ct_err *err)
{
    if (d->raw || s->raw)
        return ct_err_set(err, CT_EINVAL,
                          "%s: a %s section, where %s has one already: a section kept as its "
                          "reader wrote it is not merged",
                          nm->src, d->name, nm->dst);
    if (strcmp(d->name, s->name)) /* one "library" key, two names: a hand edit */
        return ct_err_set(err, CT_EINVAL,
                          "%s: its \"%s\" section is %s's, where %s's is %s's: one library has one "
                          "name",
                          nm->src, s->library, s->name, nm->dst, d->name);
    if (strcmp(d->version, s->version))
        return ct_err_set(err, CT_EINVAL,
                          "%s: %s %s, where %s has %s: a rules file is one release's ids", nm->src,
                          d->name, s->version, nm->dst, d->version);
    if (!same_env(d, s)) {
        char a[256], b[256];
        return ct_err_set(err, CT_EINVAL,
                          "%s: %s rules measured with %s; those of %s with %s: an export sets "
                          "one list beside its rules",
                          nm->src, d->name, env_str(s, a, sizeof a), nm->dst,
                          env_str(d, b, sizeof b));
    }
    return 0;
}

static void lib_copy(struct ct_librules *d, const struct ct_librules *s)
{
    *d = *s;
    d->sets = ct_xcalloc(s->nsets ? (size_t)s->nsets : 1, sizeof *d->sets);
    for (int i = 0; i < s->nsets; i++)
        ct_ruleset_copy(&d->sets[i], &s->sets[i]);
    d->raw = s->raw ? ct_xstrdup(s->raw) : NULL;
}

int ct_config_join(struct ct_config *dst, const struct ct_config *src,
                   const struct ct_join_names *nm, struct ct_err *err)
{
    /* every check first: dst is left as it was where one fails */
    const struct ct_sweep_settings *a = &dst->sweep, *b = &src->sweep;
    if (a->minbytes != b->minbytes || a->maxbytes != b->maxbytes ||
        a->stepfactor != b->stepfactor || a->dtype != b->dtype || a->op != b->op) {
        char x[4][32];
        return ct_err_set(err, CT_EINVAL,
                          "%s: swept over %s..%s x%g, %s %s, where %s was over %s..%s x%g, %s %s: "
                          "verify measures a config's sets at its one grid of sizes (sweep them "
                          "alike)",
                          nm->src, ct_bytes_str(b->minbytes, x[0], sizeof x[0]),
                          ct_bytes_str(b->maxbytes, x[1], sizeof x[1]), b->stepfactor,
                          ct_dtype_name(b->dtype), ct_redop_name(b->op), nm->dst,
                          ct_bytes_str(a->minbytes, x[2], sizeof x[2]),
                          ct_bytes_str(a->maxbytes, x[3], sizeof x[3]), a->stepfactor,
                          ct_dtype_name(a->dtype), ct_redop_name(a->op));
    }
    if (dst->nsets && src->nsets &&
        (strcmp(dst->fp.transport, src->fp.transport) || strcmp(dst->fp.mem, src->fp.mem)))
        return ct_err_set(err, CT_EINVAL,
                          "%s: colltune's own rules tuned over %s%s%s, where %s has them over "
                          "%s%s%s: a config's own rules are one transport's",
                          nm->src, src->fp.transport, *src->fp.mem ? " with memory " : "",
                          src->fp.mem, nm->dst, dst->fp.transport,
                          *dst->fp.mem ? " with memory " : "", dst->fp.mem);
    CT_TRY(dup_check(dst->sets, dst->nsets, src->sets, src->nsets, nm, "colltune's own", err));
    for (int l = 0; l < src->nlibs; l++) {
        const struct ct_librules *s = &src->libs[l], *d = ct_config_lib(dst, s->library);
        if (!d)
            continue;
        CT_TRY(lib_check(d, s, nm, err));
        char whose[48];
        snprintf(whose, sizeof whose, "%s's", d->name);
        CT_TRY(dup_check(d->sets, d->nsets, s->sets, s->nsets, nm, whose, err));
    }

    /* what each sweep's engine refused (each names its row, "mpich:smp ..."): every config's,
     * said once, as the field holds them */
    char refused[sizeof dst->sweep.refused];
    memcpy(refused, src->sweep.refused, sizeof refused);
    int joined =
        (dst->sweep.joined ? dst->sweep.joined : 1) + (src->sweep.joined ? src->sweep.joined : 1);
    if (!dst->nsets && src->nsets) { /* where the config came from: its own rules' sweep */
        memcpy(dst->version, src->version, sizeof dst->version);
        memcpy(dst->date, src->date, sizeof dst->date);
        memcpy(refused, dst->sweep.refused, sizeof refused);
        dst->fp = src->fp;
        dst->sweep = src->sweep;
    }
    dst->sweep.joined = joined;
    size_t r = strlen(dst->sweep.refused), n = strlen(refused), sep = r ? 2 : 0;
    /* whole or not at all (one cut mid-reason would read as another reason) */
    if (n && !strstr(dst->sweep.refused, refused) && r + sep + n < sizeof refused) {
        if (r)
            memcpy(dst->sweep.refused + r, "; ", 2), r += 2;
        memcpy(dst->sweep.refused + r, refused, n + 1);
    }
    dst->partial = dst->partial || src->partial;
    add_sets(&dst->sets, &dst->nsets, src->sets, src->nsets);
    for (int l = 0; l < src->nlibs; l++) {
        const struct ct_librules *s = &src->libs[l];
        struct ct_librules *d = (struct ct_librules *)ct_config_lib(dst, s->library);
        if (!d) {
            dst->libs = ct_xrealloc(dst->libs, sizeof *dst->libs * (size_t)(dst->nlibs + 1));
            lib_copy(&dst->libs[dst->nlibs++], s);
            continue;
        }
        add_sets(&d->sets, &d->nsets, s->sets, s->nsets);
        /* the settings' mark holds where both shapes had one: the one that found them least
         * faster (its geomean, settings/default time, the higher); the whole export's was of
         * the section before the join */
        if (!s->env_verified.at[0])
            d->env_verified.at[0] = '\0';
        else if (d->env_verified.at[0] && s->env_verified.geomean > d->env_verified.geomean)
            d->env_verified = s->env_verified;
        if (s->nsets)
            d->whole_verified.at[0] = '\0';
    }
    return 0;
}

bool ct_config_other_shapes(const struct ct_config *c)
{
    for (int l = -1; l < c->nlibs; l++) {
        const struct ct_ruleset *s = l < 0 ? c->sets : c->libs[l].sets;
        for (int i = 0, n = l < 0 ? c->nsets : c->libs[l].nsets; i < n; i++)
            if (s[i].nnodes != c->fp.hosts || s[i].ranks_per_node != c->fp.ranks_per_host)
                return true;
    }
    return false;
}
