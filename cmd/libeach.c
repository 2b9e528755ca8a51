/* SPDX-License-Identifier: MIT */
/*
 * sweep --verify CONFIG --lib LIB --each-setting: the setting tune/libverify_each.c found
 * riding on the others' gain (or costing where together they did not hold) left out of
 * CONFIG for the rest of the verify: a copy of CONFIG without it, exported again, said.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../backend/libmod.h"
#include "../output/config.h"
#include "../output/export.h"
#include "cmd.h"
#include "librun.h"

int ct_libverify_each(const struct ct_opts *o, const struct ct_emitter *e, const char *path,
                      struct ct_verify_side *side, bool together, const struct ct_config **config,
                      const struct ct_config **c, struct ct_config *tried,
                      struct ct_verify_export *x, const bool *want, double *geo, double *each,
                      struct ct_config **own)
{
    const struct ct_librules *l = side->env;
    const char *lib = side->m->name;
    int n = l->nenv, best = -1;
    bool slow = false;
    double best_geo = 0;
    *own = NULL;
    int code = ct_libverify_each_pick(side, *c, together, want, &best, &best_geo, &slow, each);
    if (code || best < 0)
        return code;
    char gone[sizeof l->env[0].name + sizeof l->env[0].value + 1];
    snprintf(gone, sizeof gone, "%s=%s", l->env[best].name, l->env[best].value);
    struct ct_config *cp = ct_config_copy(*config); /* CONFIG without it, the copy's base */
    if (!cp)
        return ct_cmd_fail("sweep", CT_EXIT_FAIL, "--verify: cannot copy '%s'", path);
    ct_config_lib_env_drop(cp, lib, best);
    if (tried) /* --try-ties: the file verified, its tried marks kept (not in a copy) */
        ct_config_lib_env_drop(tried, lib, best);
    *own = cp;
    *config = cp;
    *c = tried ? tried : cp;
    ct_verify_export_release(x); /* the export the rules are judged with, without it */
    struct ct_err err = {0};
    int rc = ct_verify_export(o, e, path, *c, x, &err);
    if (rc < 0)
        return ct_cmd_fail("sweep", rc == CT_EIO ? CT_EXIT_FAIL : CT_EXIT_USAGE, "%s%s",
                           rc == CT_EIO ? "" : "--verify: ", err.msg);
    side->ld = x->ld;
    side->env = ct_config_lib(*c, lib);
    *geo = best_geo;
    printf("--each-setting: %s left out: the other %d held without it (geomean %.3f); the rest "
           "of this verify judges CONFIG without it\n\n",
           gone, n - 1, best_geo);
    if (together)
        fprintf(stderr,
                "colltune sweep: --each-setting: %s left out of the copy: %s beside the other "
                "%d, which held without it\n",
                gone, slow ? "slower than without it at a size" : "no gain shown", n - 1);
    else
        fprintf(stderr,
                "colltune sweep: --each-setting: %s left out of the copy: the %d settings "
                "together did not hold, the other %d did without it\n",
                gone, n, n - 1);
    return 0;
}
