/* SPDX-License-Identifier: MIT */
/*
 * sweep --verify CONFIG --lib LIB, one rule set (cmd/libverify.c): paired launches
 * (tune/paired.c) of `colltune run --lib LIB --sizes ...` with the export's loader variables
 * set (A, run --keep-rules) and cleared (B), warmed up past the library's one-time costs,
 * then the judgement and its table (ct_verify_judge).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../algos/coll.h"
#include "../backend/libmod.h"
#include "../output/config.h"
#include "../output/export.h"
#include "../output/sweep_out.h"
#include "../tune/stats.h"
#include "cmd.h"
#include "librun.h"

#define MAXSZ 128
#define WARM_MAX (256u << 10)

/* One run of `run --lib` over the sizes with -w warm, the export's loader variables set (A)
 * or not (B); t[k] = out-of-place time at size k. */
static int run_part(const struct ct_verify_side *x, bool with, const uint64_t *sz, int nsz,
                    double *t, char *warm)
{
    const struct ct_ruleset *s = x->s;
    char n[16], sizes[MAXSZ * 24];
    size_t off = 0;
    for (int k = 0; k < nsz; k++)
        off += (size_t)snprintf(sizes + off, sizeof sizes - off, "%s%llu", k ? "," : "",
                                (unsigned long long)sz[k]);
    snprintf(n, sizeof n, "%d", s->nranks);
    char *args[] = {"run",
                    "--lib",
                    (char *)x->m->name,
                    "--coll",
                    (char *)ct_coll_name(s->coll),
                    "--sizes",
                    (char *)sizes,
                    "-n",
                    "20",
                    "-w",
                    warm,
                    "-c",
                    "0",
                    "-d",
                    (char *)ct_dtype_name(s->dtype),
                    "-o",
                    (char *)ct_redop_name(s->op),
                    "--timeout",
                    (char *)x->timeout,
                    "--keep-rules"}; /* A: the file the loader variables name */
    bool rules = with && !(x->env && x->env_alone);
    ct_verify_side_env(x->m, x->ld, rules);
    for (int i = 0; x->env && i < x->env->nenv; i++) /* after: the loader names them too */
        if (with || !x->env_alone)
            setenv(x->env->env[i].name, x->env->env[i].value, 1);
        else
            unsetenv(x->env->env[i].name);
    char *out;
    bool said;
    int rc = ct_lib_job(x->o, "sweep", s->nranks, (int)(sizeof args / sizeof args[0]) - !rules,
                        args, &out, &said),
        got = 0;
    for (char *line = out && !rc ? strtok(out, "\n") : NULL; line; line = strtok(NULL, "\n")) {
        unsigned long long size;
        double us;
        if (line[0] != '#' && sscanf(line, "%llu %*s %*s %*s %*s %*s %lf", &size, &us) == 2)
            for (int k = 0; k < nsz; k++)
                if (sz[k] == size) {
                    t[k] = us;
                    got++;
                }
    }
    free(out);
    if (said) /* interrupted, or the launcher could not bring the job up: said */
        return rc;
    if (rc != 0 || got != nsz)
        return ct_cmd_fail("sweep", rc == 2 ? CT_EXIT_USAGE : CT_EXIT_FAIL,
                           "%s: a run with %s %s failed (exit %d, %d of %d sizes)",
                           x->what ? x->what : "--verify", x->m->title,
                           !with                    ? "defaults"
                           : x->env && x->env_alone ? "and the launch settings"
                                                    : "and the exported file",
                           rc, got, nsz);
    return 0;
}

/* One launch (ct_paired_launch_fn): the sizes up to WARM_MAX after 200 warmup calls each,
 * the larger ones after 3. A library's one-time costs (MPICH 4.0.2's recursive doubling read
 * 18 us at 128 B on 2 ranks after 3 warmup calls, 0.7 us after 100) are not what a job's
 * calls cost; 200 calls at 256 KiB take about 10 ms here. */
static int launch(void *ctx, bool with, const uint64_t *sz, int nsz, double *t)
{
    int small = 0, code;
    while (small < nsz && sz[small] <= WARM_MAX) /* sz is sorted */
        small++;
    code = small ? run_part(ctx, with, sz, small, t, "200") : 0;
    return code || small == nsz ? code
                                : run_part(ctx, with, sz + small, nsz - small, t + small, "3");
}

int ct_libverify_set(const struct ct_verify_side *base, const struct ct_config *c,
                     const struct ct_ruleset *s, bool *slow, bool *nogain,
                     struct ct_paired_cut *cut, double *geo)
{
    uint64_t sz[MAXSZ];
    bool own[MAXSZ]; /* the file keeps the library's choice there: both sides run the same */
    const struct ct_rule *rule[MAXSZ];
    int group[MAXSZ], nsz = ct_paired_sizes(&c->sweep, s, sz, MAXSZ);
    ct_verify_rules(s, sz, nsz, rule, own, group);
    struct ct_verify_side x = *base;
    x.s = s;
    struct ct_paired pr;
    int code = ct_paired_measure(sz, nsz, own, group, WARM_MAX, launch, &x, &pr);
    *geo = 0;
    if (!code)
        code = ct_verify_judge(base->m->title, "alternating launches (A B B A A B ...)", s, sz, nsz,
                               rule, own, &pr, true, slow, nogain, cut, geo);
    ct_paired_release(&pr);
    return code;
}

int ct_libverify_env(const struct ct_verify_side *base, const struct ct_config *c,
                     const struct ct_ruleset *s, bool *slow, bool *gain, double *geo)
{
    uint64_t sz[MAXSZ];
    bool own[MAXSZ]; /* none: the settings change every size */
    const struct ct_rule *rule[MAXSZ];
    int group[MAXSZ], nsz = ct_paired_sizes(&c->sweep, s, sz, MAXSZ), rounds = 0;
    struct ct_rule all = {.min_bytes = 0, .max_bytes = CT_BYTES_INF, .id = -1};
    snprintf(all.algo, sizeof all.algo, "launch settings");
    struct ct_ruleset one = *s;
    one.rules = &all;
    one.nrules = 1;
    for (int k = 0; k < nsz; k++) {
        own[k] = false;
        rule[k] = &all;
        group[k] = 0;
    }
    struct ct_verify_side x = *base;
    x.s = s;
    x.env_alone = true;
    struct ct_paired pr;
    int code = ct_paired_measure(sz, nsz, own, group, WARM_MAX, launch, &x, &pr);
    *slow = *gain = false;
    *geo = 0;
    if (!code) {
        struct ct_paired_row *w = ct_xcalloc(nsz > 0 ? (size_t)nsz : 1, sizeof *w);
        struct ct_paired_sum t;
        struct ct_ratio g = {.ratio = 1, .lo = 1, .hi = 1};
        bool nogain = false;
        ct_paired_judge(&pr, own, nsz, w, &t);
        ct_paired_rules(&pr, &one, rule, own, w, nsz, slow, &nogain, &g, &rounds);
        ct_paired_print(stdout, base->m->title,
                        "alternating launches (A: the defaults with the launch settings, B: "
                        "without)",
                        &one, sz, nsz, rule, &pr, w, &t);
        *gain = !*slow && !nogain;
        *geo = t.geo;
        printf("  the launch settings over these sizes, round by round: %.3f [%.3f, %.3f], %d "
               "rounds: %s\n\n",
               g.ratio, g.lo, g.hi, rounds,
               *slow   ? "SLOWER than the defaults at a size"
               : *gain ? "faster"
                       : "no gain shown");
        free(w);
    }
    ct_paired_release(&pr);
    return code;
}

int ct_libverify_envs(const struct ct_verify_side *base, const struct ct_config *c,
                      const bool *want, bool *kept, bool *slow, double *geo)
{
    const struct ct_librules *l = base->env;
    printf("the launch settings CONFIG's rules were measured with, first alone against %s's "
           "plain defaults:\n",
           l->name);
    for (int i = 0; i < l->nenv; i++)
        printf("  %s=%s\n", l->env[i].name, l->env[i].value);
    printf("\n");
    bool gain = false;
    double lg = 0;
    int n = 0, code = 0;
    *slow = false;
    for (int i = 0; i < l->nsets && !code; i++) {
        bool s1, g1;
        double g;
        if (!want[i])
            continue;
        code = ct_libverify_env(base, c, &l->sets[i], &s1, &g1, &g);
        *slow |= s1;
        gain |= g1;
        if (g > 0)
            lg += log(g), n++;
    }
    *kept = !code && n && !*slow && gain;
    *geo = n ? exp(lg / n) : 0;
    if (!code)
        printf("the launch settings: %s (geomean %.3f over %d collective(s))\n\n",
               *slow   ? "SLOWER than the defaults at a size: left out of the copy verify writes"
               : *kept ? "faster, no size slower: kept, and the rules judged with them on both "
                         "sides"
                       : "no gain shown: left out of the copy verify writes",
               *geo, n);
    return code;
}
