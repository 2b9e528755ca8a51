/* SPDX-License-Identifier: MIT */
/*
 * sweep --lib LIB --env-search NAME[=V1,V2,...]: before a library sweep, each value of one of
 * the library's launch settings, with the sweep's --env settings, against the library's plain
 * defaults, as verify judges a config's settings (ct_libverify_env: alternating launches at
 * the sweep's sizes, per collective swept). The sweep runs with the value found faster with no
 * size slower at the lowest geomean over the collectives, or with none: the library's own.
 * NAME alone: the values spaced around the library's own (ct_libmod_env_around). Where that
 * value is a whole number, the values between it and its neighbours (ct_libmod_env_between)
 * are judged too, and the sweep takes the best of all.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../algos/coll.h"
#include "../backend/libmod.h"
#include "../output/export.h"
#include "../tune/config.h"
#include "cmd.h"
#include "librun.h"

struct verdict {
    double geo[CT_COLL_COUNT], all; /* each collective's geomean A/B, and theirs */
    bool slow, gain, failed;        /* failed: a run with it failed (said) */
};

/* Value v (with the --env settings) against the plain defaults on each set: 0 or a failure. */
static int judge(const struct ct_opts *o, const struct ct_libmod *m, const struct ct_config *c,
                 const struct ct_ruleset *sets, int nsets, const char *v, struct verdict *d)
{
    struct ct_librules env;
    struct ct_loader none = {.n = 0};
    char tmo[32];
    memset(&env, 0, sizeof env);
    snprintf(env.name, sizeof env.name, "%s", m->title);
    memcpy(env.env, o->lib_env, sizeof o->lib_env);
    env.nenv = o->nlib_env + 1;
    env.env[o->nlib_env] = o->env_search;
    snprintf(env.env[o->nlib_env].value, sizeof env.env[0].value, "%.*s",
             (int)sizeof env.env[0].value - 1, v);
    snprintf(tmo, sizeof tmo, "%g", o->timeout_s);
    struct ct_verify_side side = {m, o, NULL, &none, tmo, &env, true, "--env-search"};
    printf("%s=%s%s against %s's plain defaults:\n\n", o->env_search.name, v,
           o->nlib_env ? " with the --env settings" : "", m->title);
    memset(d, 0, sizeof *d);
    int code =
        ct_libverify_env_sets(&side, c, sets, nsets, NULL, &d->slow, &d->gain, &d->all, d->geo);
    if (code > 128) /* interrupted */
        return code;
    if ((d->failed = code != 0)) /* said; the next value */
        printf("\n");
    return 0;
}

/* The values judged, the library's own value (dflt: "" not known) and each one's verdict */
struct search {
    char v[CT_ENV_SEARCH_MAX + 2][sizeof((struct ct_lib_env *)0)->value];
    struct verdict d[CT_ENV_SEARCH_MAX + 2];
    int nv, coarse; /* v[coarse..nv): the finer step's */
    char dflt[64];
    int best;     /* the best of v[0..coarse), -1: none */
    bool ends[2]; /* it had no value that ran (or the library's own) below it, above it */
};

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

/* The finer step: the values between the best one and its neighbours, judged as the others
 * (appended to x's): 0 or a failure's code. */
static int finer(const struct ct_opts *o, const struct ct_libmod *m, const struct ct_config *c,
                 const struct ct_ruleset *sets, int nsets, struct search *x)
{
    const char *vp[CT_ENV_SEARCH_MAX];
    bool ok[CT_ENV_SEARCH_MAX];
    unsigned long long mid[2];
    int best = x->best = best_of(x, x->nv), code = 0;
    if (best < 0)
        return 0;
    struct ct_err err = {0};
    if (!x->dflt[0] && ct_libmod_env_default(m, o->env_search.name, x->dflt, sizeof x->dflt, &err))
        x->dflt[0] = 0; /* not known: the values' own neighbours only */
    for (int i = 0; i < x->nv; i++)
        vp[i] = x->v[i], ok[i] = !x->d[i].failed;
    int n = ct_libmod_env_between(vp, ok, x->nv, best, x->dflt, mid, x->ends);
    if (!n)
        return 0;
    printf("finer: the value(s) between %s and its neighbours (among the values that ran%s%s): "
           "%llu%s",
           x->v[best], x->dflt[0] ? " and the library's own, " : "", x->dflt, mid[0],
           n > 1 ? ", " : "\n\n");
    if (n > 1)
        printf("%llu\n\n", mid[1]);
    for (int j = 0; j < n && !code; j++) {
        snprintf(x->v[x->nv], sizeof x->v[0], "%llu", mid[j]);
        code = judge(o, m, c, sets, nsets, x->v[x->nv], &x->d[x->nv]);
        x->nv += !code;
    }
    return code;
}

/* The table of every value's verdict */
static void print_table(const struct ct_lib_env *se, const struct ct_ruleset *sets, int nsets,
                        const struct search *x)
{
    printf("--env-search %s (geomean with/without over the sweep's sizes; below 1 is faster):\n",
           se->name);
    printf("  %-16s", "value");
    for (int k = 0; k < nsets; k++)
        printf(" %14s", ct_coll_name(sets[k].coll));
    printf(" %9s  verdict\n", "geomean");
    for (int i = 0; i < x->nv; i++) {
        const struct verdict *d = &x->d[i];
        printf("  %-16s", x->v[i]);
        for (int k = 0; k < nsets && !d->failed; k++)
            if (d->geo[k] > 0)
                printf(" %14.3f", d->geo[k]);
            else /* not judged: no size */
                printf(" %14s", "-");
        if (d->failed)
            printf(" %*s  %s\n", 15 * nsets + 9, "-", "FAILED: a run failed (above)");
        else
            printf(" %9.3f  %s\n", d->all,
                   d->slow   ? "SLOWER than the defaults at a size"
                   : d->gain ? "faster, no size slower"
                             : "no gain shown");
    }
    if (x->coarse < x->nv)
        printf("  (the last %d: the finer step's, between the best of the others and its "
               "neighbours)\n",
               x->nv - x->coarse);
}

int ct_libsearch(const struct ct_opts *o, const struct ct_sweep_cfg *cfg, char *pick, size_t len)
{
    const struct ct_libmod *m = ct_libmod_find(o->lib);
    struct ct_lib_env spaced = o->env_search;
    const struct ct_lib_env *se = &spaced;
    struct search *x = ct_xcalloc(1, sizeof *x);
    x->best = -1;
    struct ct_err err = {0};
    if (!se->value[0] && ct_libmod_env_around(m, se->name, spaced.value, sizeof spaced.value,
                                              x->dflt, sizeof x->dflt, &err) < 0) {
        free(x);
        return ct_cmd_fail("sweep", CT_EXIT_USAGE, "--env-search %s: %s", se->name, err.msg);
    }
    int nsets = 0, code = 0, failed = 0, nv = ct_opts_env_values(se, x->v);
    struct ct_config c;
    struct ct_ruleset sets[CT_COLL_COUNT];
    ct_config_init(&c);
    ct_sweep_settings_fill(&c.sweep, cfg);
    for (int k = 0; k < CT_COLL_COUNT; k++)
        if (cfg->colls & CT_COLL_BIT(k))
            sets[nsets++] = (struct ct_ruleset){.coll = (enum ct_coll)k,
                                                .nnodes = 1,
                                                .nranks = o->local ? o->local : o->hosts_ranks,
                                                .dtype = cfg->job.dtype,
                                                .op = cfg->job.op};
    /* the library's own-defaults setting, as the sweep's launch would have it */
    const char *own = m->own_name ? getenv(m->own_name) : NULL;
    char *own_was = own ? ct_xstrdup(own) : NULL;
    printf("--env-search %s: %d value(s), each against %s's plain defaults in alternating "
           "launches over the sweep's sizes, before the sweep\n\n",
           se->name, nv, m->title);
    if (x->dflt[0])
        printf("the values spaced around %s's own, %s (as its %.*s lists it): %s\n\n", m->title,
               x->dflt, (int)strcspn(m->info, " "), m->info, se->value);
    for (x->nv = 0; x->nv < nv && !code; x->nv++)
        code = judge(o, m, &c, sets, nsets, x->v[x->nv], &x->d[x->nv]);
    x->coarse = x->nv;
    if (!code)
        code = finer(o, m, &c, sets, nsets, x);
    if (m->own_name)
        own_was ? setenv(m->own_name, own_was, 1) : unsetenv(m->own_name);
    free(own_was);
    for (int i = 0; i < o->nlib_env; i++) /* side B cleared them */
        ct_libmod_env_put(m, o->lib_env[i].name, o->lib_env[i].value);
    ct_config_release(&c);
    if (!code) {
        print_table(se, sets, nsets, x);
        for (int i = 0; i < x->coarse; i++)
            failed += x->d[i].failed;
    }
    int best = best_of(x, x->nv);
    if (code || failed == nv) {
        free(x);
        return code ? code
                    : ct_cmd_fail("sweep", CT_EXIT_FAIL,
                                  "--env-search: the runs of every value failed (above): no sweep");
    }
    snprintf(pick, len, "%s", best >= 0 ? x->v[best] : "");
    if (best >= 0) {
        printf("the sweep runs with %s=%s (geomean %.3f); verify judges it again with the "
               "rules\n",
               se->name, pick, x->d[best].all);
        if (best == x->best && (x->ends[0] || x->ends[1])) /* a value past it not judged */
            printf("  (the %s value judged: one past it may be faster still; search it with "
                   "%s=V1,V2,...)\n",
                   !x->ends[0]   ? "largest"
                   : !x->ends[1] ? "smallest"
                                 : "only",
                   se->name);
        printf("\n");
    } else
        printf("no value is faster with no size slower: the sweep runs with %s's own value "
               "(%s unset)\n\n",
               m->title, se->name);
    fflush(stdout);
    free(x);
    return 0;
}
