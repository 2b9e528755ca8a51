/* SPDX-License-Identifier: MIT */
/*
 * sweep --lib LIB --env-search NAME[=V1,V2,...]: before a library sweep, each value of one of
 * the library's launch settings against its plain defaults, the --env settings on both sides
 * (until session 57 on the value's alone: every value gained by them), as verify judges a
 * config's settings (ct_libverify_env: alternating launches at the sweep's sizes, per
 * collective swept). The sweep runs with the value found faster with no size slower at the
 * lowest geomean over the collectives, or with none: the library's own.
 * A second --env-search variable is searched after the first, the first's value found on both
 * sides (its baseline); where it finds a value, the first is searched again with it (a second
 * pass of coordinate descent), and the search says whether the first's value held. NAME alone: the
 * values spaced around the library's own (ct_libmod_env_around). A whole-number best's neighbours
 * (ct_libmod_env_between: between, and one past an end of spaced values) are judged too, and the
 * sweep takes the best of all. What it says goes through the caller's hooks (cmd/libsearch.c).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../algos/coll.h"
#include "../backend/libmod.h"
#include "config.h"
#include "libverify.h"

/* One variable's search: its values judged, the library's own value (dflt: "" not known),
 * each one's verdict, and what the values found for the variables searched before it, set in
 * the environment (both sides: its baseline), are said as (base: "" none) */
struct search {
    const struct ct_libsearch_in *in;
    const struct ct_libmod *m;
    const struct ct_config *c;
    const struct ct_ruleset *sets;
    int nsets;
    struct ct_lib_env se; /* the variable, its values as searched */
    char v[CT_ENV_SEARCH_MAX + 2][sizeof((struct ct_lib_env *)0)->value];
    struct ct_search_row d[CT_ENV_SEARCH_MAX + 2];
    int nv, coarse; /* v[coarse..nv): the finer step's */
    char dflt[64];
    const char *base;
    struct ct_libmod_shm shm; /* the library's own shared-memory sizes, read once */
};

/* The values found for the variables searched (found[j], value "" none) set in this
 * environment, where the launches inherit them (both sides, as the --env settings the sweep
 * set), the others (none found, not yet searched: the library's own) and the one to search
 * (skip; -1 none) unset; into b (len), the baseline: " with the --env settings and A=a, B=b
 * (found above; on both sides)", either part alone, "" for none. */
static void put_found(const struct ct_libsearch_in *in, int skip, const struct ct_lib_env *found,
                      char *b, size_t len)
{
    size_t k = 0;
    int n = 0;
    b[0] = 0;
    if (in->env_set)
        k = (size_t)snprintf(b, len, " with the --env settings");
    for (int j = 0; j < in->nvars; j++) {
        bool set = j != skip && found[j].name[0] && found[j].value[0];
        ct_libmod_env_put(in->m, in->vars[j].name, set ? found[j].value : NULL);
        const char *sep = n ? ", " : k ? " and " : " with ";
        if (set && k < len)
            k += (size_t)snprintf(b + k, len - k, "%s%s=%s", sep, found[j].name, found[j].value);
        n += set;
    }
    if (k && k < len)
        snprintf(b + k, len - k, n ? " (found above; on both sides)" : " (on both sides)");
}

/* Value v against the plain defaults, the environment's settings on both sides: 0 or a failure */
static int judge(struct search *x, const char *v, struct ct_search_row *d)
{
    const struct ct_verify_hooks *h = x->in->h;
    struct ct_lib_env e = x->se;
    char tmo[32];
    snprintf(e.value, sizeof e.value, "%.*s", (int)sizeof e.value - 1, v);
    snprintf(tmo, sizeof tmo, "%g", x->in->timeout_s);
    struct ct_verify_side base = {.m = x->m, .h = h, .timeout = tmo, .pairs = x->in->pairs};
    memset(d, 0, sizeof *d);
    d->value = v;
    /* a value whose fragments the shared-memory segment does not hold (the --env settings and
     * the other variable's value found are in this environment): the library would run over
     * TCP; passed over as a value it fails with (one spaced around its own, a finer step's, or
     * beside the other variable's value found: those given were checked before the search) */
    const char *nm[1] = {x->se.name}, *vl[1] = {v};
    struct ct_err err = {0};
    if (ct_libmod_shm_fits(x->m, &x->shm, nm, vl, 1, &err) < 0) {
        ct_verify_say(h, "not judged: %s\n\n", err.msg);
        d->failed = true;
        return 0;
    }
    ct_verify_say(h, "%s=%s against %s's plain defaults%s:\n\n", x->se.name, v, x->m->title,
                  x->base);
    int code = ct_libverify_setting(&base, &e, "--env-search", x->c, x->sets, x->nsets, NULL,
                                    &d->slow, &d->gain, &d->all, NULL, d->geo);
    if (code > 128) /* interrupted */
        return code;
    if ((d->failed = code != 0)) /* said; the next value */
        ct_verify_say(h, "\n");
    return 0;
}

/* The value faster with no size slower at the lowest geomean among v[0..n): its index, -1 */
static int best_of(const struct search *x, int n)
{
    int best = -1;
    for (int i = 0; i < n; i++)
        if (!x->d[i].failed && !x->d[i].slow && x->d[i].gain &&
            (best < 0 || x->d[i].all < x->d[best].all))
            best = i;
    return best;
}

/* The values next to v[best] (ct_libmod_env_between, past: one past an end too) into mid,
 * how many; ends, whether it is at an end of the values that ran (below, above) */
static int next_to(const struct search *x, int best, bool past, unsigned long long mid[2],
                   bool ends[2])
{
    const char *vp[CT_ENV_SEARCH_MAX + 2];
    bool ok[CT_ENV_SEARCH_MAX + 2];
    for (int i = 0; i < x->nv; i++)
        vp[i] = x->v[i], ok[i] = !x->d[i].failed;
    return ct_libmod_env_between(vp, ok, x->nv, best, x->dflt, past, mid, ends);
}

/* The finer step: the values between the best one and its neighbours (and one past an end of
 * values the tool spaced), judged as the others (appended to x's): 0 or a failure's code. */
static int finer(struct search *x)
{
    unsigned long long mid[2];
    bool ends[2];
    int best = best_of(x, x->nv), code = 0;
    if (best < 0)
        return 0;
    struct ct_err err = {0};
    bool spaced = x->dflt[0]; /* by the tool, around the library's own */
    if (!x->dflt[0] && ct_libmod_env_default(x->m, x->se.name, x->dflt, sizeof x->dflt, &err))
        x->dflt[0] = 0; /* not known: the values' own neighbours only */
    int n = next_to(x, best, spaced, mid, ends);
    char list[64] = ""; /* at most two values */
    for (int j = 0, k = 0; j < n; j++)
        k += snprintf(list + k, sizeof list - (size_t)k, "%s%llu", j ? ", " : "", mid[j]);
    if (n)
        ct_verify_say(x->in->h,
                      "finer: the value(s) between %s and its neighbours (among the values that "
                      "ran%s%s)%s: %s\n\n",
                      x->v[best], x->dflt[0] ? " and the library's own, " : "", x->dflt,
                      spaced && (ends[0] || ends[1]) ? ", and one past the end of the values spaced"
                                                     : "",
                      list);
    for (int j = 0; j < n && !code; j++) {
        snprintf(x->v[x->nv], sizeof x->v[0], "%llu", mid[j]);
        code = judge(x, x->v[x->nv], &x->d[x->nv]);
        x->nv += !code;
    }
    return code;
}

/* One variable's search (x's values and baseline set): its value found into pick ("" none);
 * 0 or a failure (said) */
static int search_one(struct search *x, char *pick, size_t len)
{
    struct ct_err err = {0};
    const struct ct_libmod *m = x->m;
    const struct ct_verify_hooks *h = x->in->h;
    char line[sizeof x->se.name + sizeof err.msg + 32];
    if (!x->se.value[0] && ct_libmod_env_around(m, x->se.name, x->se.value, sizeof x->se.value,
                                                x->dflt, sizeof x->dflt, &err) < 0) {
        snprintf(line, sizeof line, "--env-search %s: %s", x->se.name, err.msg);
        return h->failed(h->ctx, CT_VERIFY_USAGE, line);
    }
    int code = 0, failed = 0, nv = ct_lib_env_values(&x->se, x->v);
    ct_verify_say(h,
                  "--env-search %s: %d value(s), each against %s's plain defaults%s in "
                  "alternating launches over the sweep's sizes, before the sweep\n\n",
                  x->se.name, nv, m->title, x->base);
    if (x->dflt[0])
        ct_verify_say(h, "the values spaced around %s's own, %s (as its %.*s lists it): %s\n\n",
                      m->title, x->dflt, (int)strcspn(m->info, " "), m->info, x->se.value);
    for (x->nv = 0; x->nv < nv && !code; x->nv++)
        code = judge(x, x->v[x->nv], &x->d[x->nv]);
    x->coarse = x->nv;
    if (!code)
        code = finer(x);
    if (code)
        return code;
    h->search_table(h->ctx, x->se.name, x->base, x->sets, x->nsets, x->d, x->nv, x->coarse);
    for (int i = 0; i < x->coarse; i++)
        failed += x->d[i].failed;
    if (failed == nv) {
        snprintf(line, sizeof line,
                 "--env-search: the runs of every value%s%s failed (above): no sweep",
                 x->in->nvars > 1 ? " of " : "", x->in->nvars > 1 ? x->se.name : "");
        return h->failed(h->ctx, 1, line);
    }
    int best = best_of(x, x->nv);
    snprintf(pick, len, "%s", best >= 0 ? x->v[best] : "");
    unsigned long long mid[2];
    bool ends[2] = {false, false}; /* the pick at an end of all the values that ran */
    if (best >= 0)
        next_to(x, best, false, mid, ends);
    h->search_pick(h->ctx, x->se.name, m->title, best >= 0 ? &x->d[best] : NULL, ends,
                   x->in->nvars == 1);
    return 0;
}

int ct_libverify_search(const struct ct_libsearch_in *in, const struct ct_sweep_cfg *cfg)
{
    const struct ct_libmod *m = in->m;
    struct search *x = ct_xcalloc(1, sizeof *x);
    struct ct_lib_env found[CT_ENV_SEARCH_VARS] = {0}; /* name "": not searched yet */
    char base[CT_ENV_SEARCH_VARS * 300], was[sizeof found[0].value];
    struct ct_config c;
    struct ct_ruleset sets[CT_COLL_COUNT];
    int nsets = 0, code = 0, npass = in->nvars + (in->nvars > 1);
    bool again = false; /* the first searched again */
    ct_config_init(&c);
    ct_sweep_settings_fill(&c.sweep, cfg);
    for (int k = 0; k < CT_COLL_COUNT; k++)
        if (cfg->colls & CT_COLL_BIT(k))
            sets[nsets++] = (struct ct_ruleset){.coll = (enum ct_coll)k,
                                                .nnodes = 1,
                                                .nranks = in->nranks,
                                                .dtype = cfg->job.dtype,
                                                .op = cfg->job.op};
    /* the library's own-defaults setting, as the sweep's launch would have it */
    const char *own = m->own_name ? getenv(m->own_name) : NULL;
    char *own_was = own ? ct_xstrdup(own) : NULL;
    for (int p = 0; p < npass && !code; p++) {
        int i = p % in->nvars; /* the first again last: with the second's value found */
        char pick[sizeof found[0].value] = "";
        if (p == in->nvars && !(again = found[1].value[0] != 0))
            break; /* its baseline as before */
        if (again) {
            snprintf(was, sizeof was, "%s", found[0].value);
            ct_verify_say(in->h,
                          "--env-search: %s=%s found with %s%s%s; %s searched again with it (a "
                          "second pass)\n\n",
                          found[1].name, found[1].value, found[0].name, was[0] ? "=" : " unset",
                          was, found[0].name);
        }
        put_found(in, i, found, base, sizeof base); /* the other variables' */
        *x = (struct search){.in = in,
                             .m = m,
                             .c = &c,
                             .sets = sets,
                             .nsets = nsets,
                             .se = in->vars[i],
                             .base = base};
        code = search_one(x, pick, sizeof pick);
        found[i] = in->vars[i];
        snprintf(found[i].value, sizeof found[0].value, "%s", code ? "" : pick);
    }
    if (m->own_name)
        own_was ? setenv(m->own_name, own_was, 1) : unsetenv(m->own_name);
    free(own_was);
    put_found(in, -1, found, base, sizeof base); /* the ranks read them: found, or none */
    if (!code && in->nvars > 1)
        in->h->search_found(in->h->ctx, found, in->nvars, again ? was : NULL);
    ct_config_release(&c);
    free(x);
    return code;
}
