/* SPDX-License-Identifier: MIT */
/*
 * sweep --verify CONFIG --lib LIB of a section with launch settings, after both passes held
 * (the settings alone, libverify_env.c; then the rules with them on both sides): the export as
 * a job runs it, the copy verify writes exported with its settings (A) against the library's
 * plain defaults (B), judged as settings are, since the two passes' product only estimates it.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "../algos/coll.h"
#include "../backend/libmod.h"
#include "libverify.h"

bool ct_libverify_whole_any(const struct ct_librules *l, const bool *want, const double *env_each)
{
    bool some = false;
    for (int i = 0; i < l->nsets; i++)
        some |= want[i] && !ct_ruleset_keeps_own(&l->sets[i]) && env_each[i] > 0;
    return some;
}

int ct_libverify_whole_measure(const struct ct_verify_side *base, const struct ct_config *fixed,
                               const bool *want, const double *env_each, bool *slow, double *geo,
                               double *tell)
{
    const struct ct_librules *l = ct_config_lib(fixed, base->m->name);
    struct ct_verify_side x = *base;
    char each[CT_COLL_COUNT * 64] = "";
    double lg = 0, lp = 0, *tells = ct_xcalloc(l->nsets > 0 ? (size_t)l->nsets : 1, sizeof *tells);
    int n = 0, nt = 0, code = 0;
    size_t off = 0;
    x.whole = true;
    *slow = false;
    *geo = *tell = 0;
    ct_verify_say(base->h,
                  "the export as a job runs it: the launch settings and the rules as the copy "
                  "keeps them, together, against %s's plain defaults, where a collective's rules "
                  "change the library's choice:\n\n",
                  base->m->title);
    for (int i = 0; i < l->nsets && !code; i++) {
        const struct ct_ruleset *s = &l->sets[i];
        bool s1 = false, g1, own = ct_ruleset_keeps_own(s);
        double g = env_each[i], t = 0;
        if (!want[i] || !(g > 0))
            continue;
        if (!own)
            code = ct_libverify_env(&x, fixed, s, &s1, &g1, &g, &t);
        if (code || !(g > 0))
            continue;
        if (t > 0)
            tells[nt++] = t; /* measured in this pass */
        *slow |= s1;
        double r = s->verified.at[0] ? s->verified.geomean : 0,
               p = own || !(r > 0) ? env_each[i] : env_each[i] * r;
        lg += log(g), lp += log(p), n++;
        if (off < sizeof each)
            off += (size_t)snprintf(each + off, sizeof each - off, "%s%s %.3f%s (%.3f)",
                                    n > 1 ? ", " : "", ct_coll_name(s->coll), g,
                                    own ? " as the settings alone" : "", p);
    }
    *geo = !code && n ? exp(lg / n) : 0;
    *tell = *geo > 0 ? ct_libverify_tell_median(tells, nt) : 0;
    free(tells);
    if (*geo > 0)
        ct_verify_say(base->h,
                      "the export as a job runs it: geomean %.3f against %s's plain defaults over "
                      "the sweep's sizes, %s (the two passes' geomeans multiplied: %.3f); per "
                      "collective: %s\n\n",
                      *geo, base->m->title,
                      *slow ? "SLOWER at a size, again in fresh launches" : "no size slower",
                      exp(lp / n), each);
    return code;
}

int ct_libverify_whole(const struct ct_verify_side *base, const struct ct_libverify_in *in,
                       const struct ct_config *fixed, const bool *want, const double *env_each,
                       bool *slow, double *geo, double *tell)
{
    const struct ct_librules *l = ct_config_lib(fixed, base->m->name);
    struct ct_verify_side x = *base;
    struct ct_verify_file f = {0};
    int code = 0;
    *slow = false;
    *geo = *tell = 0;
    if (!ct_libverify_whole_any(l, want, env_each)) /* the settings' figure is the export's */
        return 0;
    if (!(code = in->f->export(in->f->ctx, in->path, fixed, CT_VEXP_COPY, &f))) {
        x.ld = f.ld;
        code = ct_libverify_whole_measure(&x, fixed, want, env_each, slow, geo, tell);
    }
    in->f->unexport(in->f->ctx, &f);
    return code;
}
