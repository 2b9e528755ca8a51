/* SPDX-License-Identifier: MIT */
/*
 * Launch settings alone against the library's plain defaults (verify's first pass, and each
 * value of sweep --env-search; with the rules loaded on side A too, verify's whole export,
 * libverify_whole.c): paired launches at a set's sizes, A the defaults with the
 * settings, B without, every size a judged one. A setting can change every size, so there are
 * no controls, and a launch's state moves all of its sizes together: the library's own value
 * judged against itself read slower at a size once, and faster over its sizes once, in 13
 * judgements of one collective each (session 42). So each verdict stands only when fresh launches
 * show it again: a size found slower is measured again, and a gain is measured again at every size.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../algos/coll.h"
#include "../backend/libmod.h"
#include "../lib/parse.h"
#include "libverify.h"
#include "stats.h"

/* One measure's verdict: slow, a size slower (again in fresh launches); nogain, no gain over
 * the sizes shown (ct_paired_gains); worse, slower over the sizes beyond their interval
 * (ct_paired_slower of that ratio); fast[k], size k faster beyond its interval
 * (ct_paired_faster); tell, what it could tell (ct_paired_sum). */
struct verdict {
    bool slow, nogain, worse, fast[CT_VERIFY_MAXSZ];
    double tell;
};

/* Whether a size is faster in both a and b (a itself: b == a) */
static bool any_fast(const struct verdict *a, const struct verdict *b, int nsz)
{
    for (int k = 0; k < nsz; k++)
        if (a->fast[k] && b->fast[k])
            return true;
    return false;
}

/* The sizes of v faster (again, where before: faster in both), said "  faster ...: TAIL"
 * (nothing where none); how many. */
static int print_fast(const struct ct_verify_hooks *h, const uint64_t *sz, int nsz,
                      const struct ct_paired_row *w, const struct verdict *before,
                      const struct verdict *v, const char *head, const char *tail)
{
    int n = 0;
    size_t off = 0, cap = 256 + (size_t)nsz * 64;
    char *line = ct_xcalloc(cap, 1);
    for (int k = 0; k < nsz; k++) {
        char b[32];
        if (!v->fast[k] || (before && !before->fast[k]))
            continue;
        off +=
            (size_t)snprintf(line + off, cap - off, "%s %s %.3f [%.3f, %.3f]", n++ ? "," : head,
                             ct_bytes_str(sz[k], b, sizeof b), w[k].q.ratio, w[k].q.lo, w[k].q.hi);
    }
    if (n)
        ct_verify_say(h, "%s: %s\n", line, tail);
    free(line);
    return n;
}

/* One measure of the settings at sz (before NULL: the first; else the second, in fresh
 * launches, with the first's verdict), its table and its verdict v; *lg += log(its geomean). */
static int measure(struct ct_verify_side *x, const uint64_t *sz, const bool *swept, int nsz,
                   const struct verdict *before, struct verdict *v, double *lg)
{
    int pass = before != NULL;
    bool *slow = &v->slow, *nogain = &v->nogain;
    bool own[CT_VERIFY_MAXSZ] = {false}; /* none: the settings change every size */
    const struct ct_rule *rule[CT_VERIFY_MAXSZ];
    int group[CT_VERIFY_MAXSZ] = {0}, rounds = 0;
    struct ct_rule all = {.min_bytes = 0, .max_bytes = CT_BYTES_INF, .id = -1};
    const char *what = x->whole ? "the export" : "the launch settings";
    snprintf(all.algo, sizeof all.algo, "%s", x->whole ? "export and settings" : "launch settings");
    struct ct_ruleset one = *x->s;
    one.rules = &all;
    one.nrules = 1;
    for (int k = 0; k < nsz; k++)
        rule[k] = &all;
    struct ct_paired pr;
    int code = ct_paired_measure(sz, nsz, own, group, x->pairs, CT_VERIFY_WARM_MAX,
                                 ct_libverify_launch, x, &pr);
    memset(v, 0, sizeof *v);
    if (!code) {
        struct ct_paired_row w[CT_VERIFY_MAXSZ];
        struct ct_paired_sum t;
        struct ct_ratio g = {.ratio = 1, .lo = 1, .hi = 1};
        ct_paired_judge(&pr, own, nsz, w, &t);
        ct_paired_swept(w, swept, nsz, &t);
        ct_paired_rules(&pr, NULL, &one, rule, own, w, nsz, slow, nogain, &g, &rounds);
        char how[200];
        snprintf(
            how, sizeof how, "%s (A: %s, B: %s)",
            pass ? "fresh alternating launches again, the first measure's verdict to be shown twice"
                 : "alternating launches",
            x->whole  ? "the exported file with its launch settings"
            : x->what ? "the value judged" /* one setting; the others on both sides */
                      : "the defaults with the launch settings",
            x->whole  ? "neither"
            : x->what ? "without it"
                      : "without");
        struct ct_verify_judged j = {.lib = x->m->title,
                                     .how = how,
                                     .s = &one,
                                     .sz = sz,
                                     .nsz = nsz,
                                     .rule = rule,
                                     .own = own,
                                     .pr = &pr,
                                     .w = w,
                                     .t = &t}; /* the table alone */
        x->h->judged(x->h->ctx, &j);
        bool cleared[CT_VERIFY_MAXSZ];
        struct ct_paired_redo r = {0}; /* the gain is shown twice by a pass of its own */
        if (*slow && !(code = ct_verify_again(x, sz, own, &pr, w, false, "above", &r, cleared))) {
            *slow = false;
            for (int k = 0; k < nsz; k++)
                *slow |= w[k].slower && !cleared[k];
        }
        ct_paired_redo_release(&r);
        *lg += log(t.swept);
        v->tell = t.tell;
        /* slower over the sizes: on the 95% interval (no look stopped on it), which the line
         * below prints then; else the gain's own (a sequential look's) */
        struct ct_ratio g95;
        v->worse = rounds && ct_paired_group(&pr, NULL, 0, 0.025, &g95) && ct_paired_slower(&g95);
        if (v->worse)
            g = g95;
        for (int k = 0; k < nsz; k++)
            v->fast[k] = w[k].n >= 2 && ct_paired_faster(&w[k].q);
        if (!code && !pass) /* a gain at a size is measured again too, and one over the sizes */
            print_fast(x->h, sz, nsz, w, NULL, v,
                       "  faster than the defaults beyond the interval at",
                       *slow ? "not counted (a size slower)" : "measured again");
        else if (!code && !*slow) { /* exp(*lg / 2): the geomean over both measures */
            const char *tail = v->worse ? "not counted (slower over the sizes)"
                               : exp(*lg / 2) >= 1
                                   ? "not counted (the geomean over the sizes and both measures "
                                     "is 1 or more)"
                                   : "a gain at that size, counted";
            if (!print_fast(x->h, sz, nsz, w, before, v, "  faster again at", tail) &&
                any_fast(before, before, nsz))
                ct_verify_say(x->h, "  not faster again at the size(s) found so: not counted\n");
        }
        if (!code)
            ct_verify_say(x->h,
                          "  %s over these sizes, round by round: %.3f [%.3f, %.3f], %d rounds: "
                          "%s\n\n",
                          what, g.ratio, g.lo, g.hi, rounds,
                          *slow ? "SLOWER than the defaults at a size"
                          : v->worse
                              ? (!pass           ? "slower over them: measured again"
                                 : before->worse ? "slower over them again: no gain counted"
                                                 : "slower over them this time: no gain counted")
                          : *nogain ? (pass && !before->nogain ? "no gain shown again: not counted"
                                                               : "no gain shown")
                          : !pass   ? "faster: measured again"
                          : !before->nogain ? "faster again"
                                            : "faster this time only: not counted");
    }
    ct_paired_release(&pr);
    return code;
}

/* ct_libverify_env, and *worse: slower over the sizes in both measures */
static int judge(const struct ct_verify_side *base, const struct ct_config *c,
                 const struct ct_ruleset *s, bool *slow, bool *gain, bool *worse, double *geo,
                 double *tell)
{
    uint64_t sz[CT_VERIFY_MAXSZ];
    bool swept[CT_VERIFY_MAXSZ];
    int nsz = ct_paired_sizes(&c->sweep, s, sz, swept, CT_VERIFY_MAXSZ), code = 0, pass = 0;
    struct ct_verify_side x = *base;
    x.s = s;
    x.env_alone = !base->whole;
    struct verdict v[2];
    double lg = 0;
    *slow = *gain = false;
    *geo = *tell = 0;
    if (!nsz) { /* no whole element per rank at any size: nothing to judge, no gain */
        ct_verify_say(base->h,
                      "%s on %d ranks: no size of the range has a whole element per rank: not "
                      "judged\n\n",
                      ct_coll_name(s->coll), s->nranks);
        return 0;
    }
    /* a gain is measured twice, over the sizes or at one of them (ct_paired_faster), in fresh
     * launches that do not read slower over the sizes, and counts where the geomean over the
     * sizes and both measures is below 1 (a size's gain beside sizes that read slower inside
     * their wide intervals is no gain to ship); a slower size ends it (measured again
     * already), as does a first measure with nothing to show again */
    code = measure(&x, sz, swept, nsz, NULL, &v[0], &lg), pass = 1;
    if (!code && !v[0].slow && (!v[0].nogain || v[0].worse || any_fast(&v[0], &v[0], nsz)))
        code = measure(&x, sz, swept, nsz, &v[0], &v[1], &lg), pass = 2;
    bool fast = pass == 2 && any_fast(&v[0], &v[1], nsz);
    *slow = v[pass - 1].slow;
    *geo = code ? 0 : exp(lg / pass);
    *tell = *geo > 0 ? v[pass - 1].tell : 0; /* the measure whose verdict stands */
    *worse = !code && pass == 2 && v[0].worse && v[1].worse;
    *gain = !code && !*slow && pass == 2 && !v[1].worse && *geo < 1 &&
            (fast || (!v[0].nogain && !v[1].nogain));
    return code;
}

int ct_libverify_env(const struct ct_verify_side *base, const struct ct_config *c,
                     const struct ct_ruleset *s, bool *slow, bool *gain, double *geo, double *tell)
{
    bool worse;
    double t;
    return judge(base, c, s, slow, gain, &worse, geo, tell ? tell : &t);
}

double ct_libverify_tell_median(const double *tells, int n)
{
    struct ct_stats st;
    ct_stats_compute(tells, n, &st); /* n 0: zeroed */
    return st.median;
}

int ct_libverify_env_sets(const struct ct_verify_side *base, const struct ct_config *c,
                          const struct ct_ruleset *sets, int nsets, const bool *want, bool *slow,
                          bool *gain, double *geo, double *tell, double *each)
{
    double lg = 0, *tells = ct_xcalloc(nsets > 0 ? (size_t)nsets : 1, sizeof *tells);
    int n = 0, nt = 0, code = 0;
    bool worse = false; /* a set slower over its sizes twice: no gain elsewhere counts */
    *slow = *gain = false;
    *geo = 0;
    for (int i = 0; i < nsets && !code; i++) {
        bool s1, g1, w1;
        double g = 0, t = 0;
        if (!want || want[i])
            code = judge(base, c, &sets[i], &s1, &g1, &w1, &g, &t);
        if (each)
            each[i] = g;
        if (code || !(g > 0)) /* failed, or not judged */
            continue;
        *slow |= s1;
        *gain |= g1;
        worse |= w1;
        if (t > 0)
            tells[nt++] = t;
        lg += log(g), n++;
    }
    if (!code && worse && *gain && !*slow)
        ct_verify_say(base->h, "a collective slower over its sizes in both measures: the others' "
                               "gain not counted\n\n");
    *gain &= !worse;
    *geo = n ? exp(lg / n) : 0;
    if (tell)
        *tell = *geo > 0 ? ct_libverify_tell_median(tells, nt) : 0;
    free(tells);
    return code;
}

int ct_libverify_envs(const struct ct_verify_side *base, const struct ct_config *c,
                      const bool *want, bool each_next, bool *kept, bool *slow, double *geo,
                      double *tell, double *each)
{
    const struct ct_librules *l = base->env;
    ct_verify_say(base->h,
                  "the launch settings CONFIG's rules were measured with, first alone against "
                  "%s's plain defaults:\n",
                  l->name);
    for (int i = 0; i < l->nenv; i++)
        ct_verify_say(base->h, "  %s=%s\n", l->env[i].name, l->env[i].value);
    ct_verify_say(base->h, "\n");
    bool gain;
    int code =
        ct_libverify_env_sets(base, c, l->sets, l->nsets, want, slow, &gain, geo, tell, each);
    *kept = !code && *geo > 0 && !*slow && gain;
    const char *out = each_next && l->nenv > 1 ? "judged again, each left out in turn"
                                               : "left out of the copy verify writes";
    if (!code)
        ct_verify_say(base->h, "the launch settings: %s%s (geomean %.3f)\n\n",
                      *slow ? "SLOWER than the defaults at a size: "
                      : *kept
                          ? "faster, no size slower: kept, and the rules judged with them on both "
                            "sides"
                          : "no gain shown: ",
                      *kept ? "" : out, *geo);
    return code;
}
