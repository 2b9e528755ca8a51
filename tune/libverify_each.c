/* SPDX-License-Identifier: MIT */
/*
 * sweep --verify CONFIG --lib LIB --each-setting: each of CONFIG's launch settings judged on
 * its own account, the same judgement as the settings together (ct_libverify_env_sets: a size
 * slower measured again in fresh launches, a gain shown twice).
 * Where the settings together were not kept (slower than the plain defaults at a size, or no
 * gain shown), each is left out in turn and the others judged alone against the plain
 * defaults. Settings are judged together because they act together (glibc's huge pages pay
 * only beside MALLOC_MMAP_MAX_=0, vader's send size only without single copy), so one that
 * costs can hide what the others gain: on a Zen 4 VM the six settings the goal bench carries
 * were slower at a size (AllGather 512 KiB 2.18x, the single-copy mechanism `none`) where
 * four of them gained 1.11-1.19x. The others that hold without the one left out, with the
 * lowest geomean where several do, take CONFIG's place. Where none holds with one left out and
 * there are three or more (two of them may cost), each is judged alone against the plain
 * defaults, and the one that holds (the lowest geomean where several do) is kept alone.
 * Where they together were kept, each is judged against it unset (the library's or glibc's
 * own value) with the others on both sides (as --env-search judges a value beside the --env
 * settings): a setting that shows no gain there, or is slower at a size, rides on the others' gain,
 * and a job would carry it for nothing. The one slower, else the one with the highest geomean, is
 * left out where the others, judged alone against the plain defaults, hold without it.
 * Either way the settings kept take CONFIG's place for the rest of the verify: its rules
 * judged with them on both sides, its whole export, the copy it writes. One setting left out
 * per verify (N passes of launches for N settings, one more to judge the rest where one goes;
 * or all but one, kept alone, after N more);
 * --reverify N verifies the copy again, and can leave out another. Which one goes is decided
 * here (ct_libverify_each_pick), and the rest of the verify runs CONFIG without it
 * (ct_libverify_each: a copy of CONFIG, exported again through the caller's hooks).
 * A pass whose settings leave the library's shared-memory segment too small (the segment left
 * out beside a large eager limit: the ranks would talk over TCP) is not launched, said.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../backend/libmod.h"
#include "libverify.h"

/* A judgement's verdict, said: "--each-setting: WHAT NAME TAIL: VERDICT (geomean G)", slower
 * than `against` at a size, else faster (kept) or without a gain. */
static void said(const struct ct_verify_side *side, const char *what, const char *name,
                 const char *tail, bool slow, bool kept, double geo, const char *against)
{
    ct_verify_say(side->h, "--each-setting: %s%s%s: %s%s%s (geomean %.3f)\n\n", what, name, tail,
                  slow   ? "SLOWER than "
                  : kept ? "faster, no size slower"
                         : "no gain shown",
                  slow ? against : "", slow ? " at a size" : "", geo);
}

/* Whether the n settings env leave the library's shared-memory transport too little room (the
 * ranks of a host would talk over TCP, and a pass would time that): said, as "--each-setting:
 * WHAT NAME TAIL: VERDICT: why" for the setting e that pass is about; no launch is spent
 * on them. */
static bool starved(const struct ct_verify_side *side, const struct ct_lib_env *env, int n,
                    const char *what, const struct ct_lib_env *e, const char *tail,
                    const char *verdict)
{
    const char *by;
    struct ct_err err = {0};
    if (!ct_lib_env_fits(side->m, env, n, NULL, 0, &by, &err))
        return false;
    ct_verify_say(side->h, "--each-setting: %s%s%s: %s: %s\n\n", what, e->name, tail, verdict,
                  err.msg);
    return true;
}

/* The others of l's settings but k, judged on the sets want names (ct_libverify_env_sets):
 * 0 or a failure code; *kept, *geo, *tell and each[] as they were judged. */
static int without(const struct ct_verify_side *side, const struct ct_config *c,
                   const struct ct_librules *l, int k, const bool *want, bool *kept, double *geo,
                   double *tell, double *each)
{
    struct ct_librules sub = *l; /* the sets shared, the settings its own */
    ct_librules_env_remove(&sub, k);
    struct ct_verify_side y = *side;
    y.env = &sub;
    if (starved(side, sub.env, sub.nenv, "without ", &l->env[k], "", "not judged")) {
        *kept = false, *geo = 0;
        return 0;
    }
    ct_verify_say(
        side->h,
        "--each-setting: without %s=%s, the other %d alone against %s's plain defaults:\n\n",
        l->env[k].name, l->env[k].value, sub.nenv, l->name);
    bool slow, gain;
    int code = ct_libverify_env_sets(&y, c, l->sets, l->nsets, want, &slow, &gain, geo, tell, each);
    *kept = !code && *geo > 0 && !slow && gain;
    if (!code)
        said(side, "without ", l->env[k].name, "", slow, *kept, *geo, "the defaults");
    return code;
}

/* Setting k of l against it unset (side B: the library's or glibc's own value), the others
 * set in this environment, where both sides' launches inherit them: 0 or a failure code;
 * *kept (faster, no size slower), *slow and *geo as judged. */
static int beside(const struct ct_verify_side *side, const struct ct_config *c,
                  const struct ct_librules *l, int k, const bool *want, bool *kept, bool *slow,
                  double *geo)
{
    struct ct_librules others = *l;
    ct_librules_env_remove(&others, k);
    if (starved(side, others.env, others.nenv, "", &l->env[k], " beside the others",
                "kept, not judged (the others need it)")) {
        *kept = true, *slow = false, *geo = 0; /* kept: the others need it */
        return 0;
    }
    for (int j = 0; j < l->nenv; j++)
        if (j != k)
            ct_libmod_env_put(side->m, l->env[j].name, l->env[j].value);
    ct_verify_say(side->h,
                  "--each-setting: %s=%s against it unset, the other %d on both sides:\n\n",
                  l->env[k].name, l->env[k].value, l->nenv - 1);
    bool gain;
    int code = ct_libverify_setting(side, &l->env[k], "--each-setting", c, l->sets, l->nsets, want,
                                    slow, &gain, geo, NULL, NULL);
    for (int j = 0; j < l->nenv; j++)
        if (j != k)
            ct_libmod_env_put(side->m, l->env[j].name, NULL);
    *kept = !code && *geo > 0 && !*slow && gain;
    if (!code)
        said(side, "", l->env[k].name, " beside the others", *slow, *kept, *geo, "without it");
    return code;
}

int ct_libverify_setting(const struct ct_verify_side *base, const struct ct_lib_env *e,
                         const char *what, const struct ct_config *c, const struct ct_ruleset *sets,
                         int nsets, const bool *want, bool *slow, bool *gain, double *geo,
                         double *tell, double *each)
{
    struct ct_librules one; /* e alone, on side A; side B clears it */
    static const struct ct_loader none; /* no loader: 100 KiB, not zeroed on the stack per call */
    struct ct_verify_side y = *base;
    memset(&one, 0, sizeof one);
    snprintf(one.name, sizeof one.name, "%s", base->m->title);
    one.env[0] = *e, one.nenv = 1;
    y.s = NULL, y.ld = &none, y.env = &one, y.env_alone = true, y.what = what, y.whole = false;
    return ct_libverify_env_sets(&y, c, sets, nsets, want, slow, gain, geo, tell, each);
}

/* None of l's n >= 3 settings held with one left out: each judged alone against the plain
 * defaults (on the sets want names); *best the one that held (the lowest geomean where several
 * did; -1: none) and *alone, its figures in *best_geo, *best_tell and each[] (e1: scratch of
 * l->nsets). 0 or a failure code. */
static int alone_pick(const struct ct_verify_side *side, const struct ct_config *c,
                      const struct ct_librules *l, const bool *want, int *best, bool *alone,
                      double *best_geo, double *best_tell, double *e1, double *each)
{
    int code = 0;
    ct_verify_say(side->h,
                  "--each-setting: none of the %d held with one left out (two or more may cost): "
                  "each judged alone against %s's plain defaults\n\n",
                  l->nenv, l->name);
    for (int i = 0; i < l->nenv && !code; i++) {
        bool slow, gain;
        double g = 0, t = 0;
        if (starved(side, &l->env[i], 1, "", &l->env[i], " alone", "not judged"))
            continue;
        code = ct_libverify_setting(side, &l->env[i], "--each-setting", c, l->sets, l->nsets, want,
                                    &slow, &gain, &g, &t, e1);
        bool kept = !code && g > 0 && !slow && gain;
        if (!code)
            said(side, "", l->env[i].name, " alone", slow, kept, g, "the defaults");
        if (kept && (*best < 0 || g < *best_geo)) {
            *best = i, *alone = true, *best_geo = g, *best_tell = t;
            memcpy(each, e1, (size_t)l->nsets * sizeof *each);
        }
    }
    return code;
}

/* The settings of l held together: each judged beside the others; the one to leave out (the
 * one slower, else the one with the highest geomean among those without a gain) in *k, -1
 * none, and whether it was slower in *worst_slow. 0, or a failure code. */
static int judge_held(const struct ct_verify_side *side, const struct ct_config *c,
                      const struct ct_librules *l, const bool *want, int *k, bool *worst_slow)
{
    int n = l->nenv, code = 0;
    double worst_geo = 0;
    *k = -1, *worst_slow = false;
    ct_verify_say(
        side->h,
        "--each-setting: the %d launch settings held together; each judged against it unset "
        "(%s's or glibc's own value), the other %d on both sides\n\n",
        n, l->name, n - 1);
    for (int i = 0; i < n && !code; i++) {
        bool kept, slow;
        double g = 0;
        code = beside(side, c, l, i, want, &kept, &slow, &g);
        if (!code && !kept && g > 0 &&
            (*k < 0 || slow > *worst_slow || (slow == *worst_slow && g > worst_geo)))
            *k = i, *worst_slow = slow, worst_geo = g;
    }
    if (!code && *k < 0)
        ct_verify_say(
            side->h, "--each-setting: each of the %d showed a gain beside the others: all kept\n\n",
            n);
    return code;
}

int ct_libverify_each_pick(const struct ct_verify_side *side, const struct ct_config *c,
                           bool together, const bool *want, int *best, bool *alone,
                           double *best_geo, double *best_tell, bool *slow, double *each)
{
    const struct ct_librules *l = side->env;
    int n = l->nenv, code = 0, k = -1;
    double *e1 = ct_xcalloc((size_t)l->nsets, sizeof *e1);
    *best = -1, *best_geo = *best_tell = 0, *slow = *alone = false;
    if (together)
        code = judge_held(side, c, l, want, &k, slow);
    else
        ct_verify_say(side->h,
                      "--each-setting: the %d launch settings judged again with each left out in "
                      "turn\n\n",
                      n);
    /* the one found without a gain beside the others (none: -1), or each in turn */
    for (int i = together ? k : 0, end = together ? k + 1 : n; i >= 0 && i < end && !code; i++) {
        bool kept;
        double g = 0, t = 0;
        code = without(side, c, l, i, want, &kept, &g, &t, e1);
        if (kept && (*best < 0 || g < *best_geo)) {
            *best = i, *best_geo = g, *best_tell = t;
            memcpy(each, e1, (size_t)l->nsets * sizeof *each);
        }
    }
    if (!code && *best < 0 && !together && n >= 3) /* two or more may cost: each alone */
        code = alone_pick(side, c, l, want, best, alone, best_geo, best_tell, e1, each);
    free(e1);
    if (!code && *best < 0 && k >= 0)
        ct_verify_say(side->h,
                      "--each-setting: the other %d did not hold without %s: all %d kept, as "
                      "judged together\n\n",
                      n - 1, l->env[k].name, n);
    else if (!code && *best < 0 && !together)
        ct_verify_say(side->h,
                      "--each-setting: none of the %d held with one left out%s: all %d left out "
                      "of the copy, as judged together\n\n",
                      n, n >= 3 ? ", nor alone" : "", n);
    return code;
}

int ct_libverify_each(const struct ct_libverify_in *in, struct ct_verify_side *side, bool together,
                      const struct ct_config **config, const struct ct_config **c,
                      struct ct_config *tried, struct ct_verify_file *file, const bool *want,
                      double *geo, double *tell, double *each, struct ct_config **own)
{
    const struct ct_librules *l = side->env;
    const char *lib = side->m->name;
    int n = l->nenv, best = -1;
    bool slow = false, alone = false;
    double best_geo = 0, best_tell = 0;
    *own = NULL;
    int code = ct_libverify_each_pick(side, *c, together, want, &best, &alone, &best_geo,
                                      &best_tell, &slow, each);
    if (code || best < 0)
        return code;
    char gone[sizeof l->env[0].name + sizeof l->env[0].value + 1];
    snprintf(gone, sizeof gone, "%s=%s", l->env[best].name, l->env[best].value);
    struct ct_config *cp = ct_libverify_copy(in, *config, &code); /* CONFIG without it */
    if (!cp)
        return code;
    for (int j = n - 1; j >= 0; j--) /* it, or all but it (alone); from the last: indices hold */
        if ((j == best) != alone) {
            ct_config_lib_env_drop(cp, lib, j);
            if (tried) /* --try-ties: the file verified, its tried marks kept (not in a copy) */
                ct_config_lib_env_drop(tried, lib, j);
        }
    *own = cp;
    *config = cp;
    *c = tried ? tried : cp;
    in->f->unexport(in->f->ctx, file); /* the export the rules are judged with, without it */
    if ((code = in->f->export(in->f->ctx, in->path, *c, CT_VEXP_LESS_ONE, file)))
        return code;
    side->ld = file->ld;
    side->env = ct_config_lib(*c, lib);
    *geo = best_geo;
    *tell = best_tell;
    if (alone) {
        ct_verify_say(side->h,
                      "--each-setting: %s kept alone: it held alone (geomean %.3f); the rest of "
                      "this verify judges CONFIG with it alone\n\n",
                      gone, best_geo);
        ct_verify_warn(side->h,
                       "--each-setting: all but %s left out of the copy: the %d settings together "
                       "did not hold, nor any %d of them, it alone did",
                       gone, n, n - 1);
        return 0;
    }
    ct_verify_say(side->h,
                  "--each-setting: %s left out: the other %d held without it (geomean %.3f); the "
                  "rest of this verify judges CONFIG without it\n\n",
                  gone, n - 1, best_geo);
    if (together)
        ct_verify_warn(side->h,
                       "--each-setting: %s left out of the copy: %s beside the other %d, which "
                       "held without it",
                       gone, slow ? "slower than without it at a size" : "no gain shown", n - 1);
    else
        ct_verify_warn(side->h,
                       "--each-setting: %s left out of the copy: the %d settings together did "
                       "not hold, the other %d did without it",
                       gone, n, n - 1);
    return 0;
}
