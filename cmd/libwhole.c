/* SPDX-License-Identifier: MIT */
/*
 * sweep --verify CONFIG --lib LIB of a section with launch settings, after both passes held:
 * the copy verify writes exported for the whole export's measure (tune/libverify_whole.c).
 */
#include "../output/export.h"
#include "cmd.h"
#include "librun.h"

int ct_libverify_whole(const struct ct_verify_side *base, const struct ct_emitter *e,
                       const char *path, const struct ct_config *fixed, const bool *want,
                       const double *env_each, bool *slow, double *geo)
{
    const struct ct_librules *l = ct_config_lib(fixed, base->m->name);
    struct ct_verify_side x = *base;
    struct ct_verify_export ex = {0};
    struct ct_err err = {0};
    int code = 0;
    *slow = false;
    *geo = 0;
    if (!ct_libverify_whole_any(l, want, env_each)) /* the settings' figure is the export's */
        return 0;
    if (ct_verify_export(base->h->ctx, e, path, fixed, &ex, &err) < 0)
        code = ct_cmd_fail("sweep", CT_EXIT_FAIL, "--verify: the copy's export: %s", err.msg);
    else {
        x.ld = ex.ld;
        code = ct_libverify_whole_measure(&x, fixed, want, env_each, slow, geo);
    }
    ct_verify_export_release(&ex);
    return code;
}
