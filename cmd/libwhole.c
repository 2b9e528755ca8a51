/* SPDX-License-Identifier: MIT */
/*
 * sweep --verify CONFIG --lib LIB of a section with launch settings, after both passes held
 * (the settings alone, cmd/libenv.c; then the rules with them on both sides): the export as a
 * job runs it, the copy verify writes exported with its settings (A) against the library's
 * plain defaults (B), judged as settings are, since the two passes' product only estimates it.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../algos/coll.h"
#include "../backend/libmod.h"
#include "../output/config.h"
#include "../output/export.h"
#include "cmd.h"
#include "librun.h"

int ct_libverify_whole(const struct ct_verify_side *base, const struct ct_emitter *e,
                       const char *path, const struct ct_config *fixed, const bool *want,
                       const double *env_each, bool *slow, double *geo)
{
    const struct ct_librules *l = ct_config_lib(fixed, base->m->name);
    struct ct_verify_side x = *base;
    char each[CT_COLL_COUNT * 64] = "";
    double lg = 0, lp = 0;
    int n = 0, code = 0;
    size_t off = 0;
    x.whole = true;
    *slow = false;
    *geo = 0;
    bool *own = ct_xcalloc((size_t)l->nsets, sizeof *own), some = false;
    for (int i = 0; i < l->nsets; i++) {
        own[i] = ct_ruleset_keeps_own(&l->sets[i]);
        some |= want[i] && !own[i] && env_each[i] > 0;
    }
    struct ct_verify_export ex = {0};
    struct ct_err err = {0};
    if (some && ct_verify_export(base->o, e, path, fixed, &ex, &err) < 0)
        code = ct_cmd_fail("sweep", CT_EXIT_FAIL, "--verify: the copy's export: %s", err.msg);
    x.ld = ex.ld; /* (none: the rules keep the library's choice; the settings' figure is it) */
    if (some && !code)
        printf("the export as a job runs it: the launch settings and the rules as the copy keeps "
               "them, together, against %s's plain defaults, where a collective's rules change "
               "the library's choice:\n\n",
               base->m->title);
    for (int i = 0; some && i < l->nsets && !code; i++) {
        const struct ct_ruleset *s = &l->sets[i];
        bool s1 = false, g1;
        double g = env_each[i];
        if (!want[i] || !(g > 0))
            continue;
        if (!own[i])
            code = ct_libverify_env(&x, fixed, s, &s1, &g1, &g);
        if (code || !(g > 0))
            continue;
        *slow |= s1;
        double r = s->verified.at[0] ? s->verified.geomean : 0,
               p = own[i] || !(r > 0) ? env_each[i] : env_each[i] * r;
        lg += log(g), lp += log(p), n++;
        if (off < sizeof each)
            off += (size_t)snprintf(each + off, sizeof each - off, "%s%s %.3f%s (%.3f)",
                                    n > 1 ? ", " : "", ct_coll_name(s->coll), g,
                                    own[i] ? " as the settings alone" : "", p);
    }
    *geo = !code && n ? exp(lg / n) : 0;
    if (*geo > 0)
        printf("the export as a job runs it: geomean %.3f against %s's plain defaults over the "
               "sweep's sizes, %s (the two passes' geomeans multiplied: %.3f); per collective: "
               "%s\n\n",
               *geo, base->m->title,
               *slow ? "SLOWER at a size, again in fresh launches" : "no size slower", exp(lp / n),
               each);
    ct_verify_export_release(&ex);
    free(own);
    return code;
}
