/* SPDX-License-Identifier: MIT */
/*
 * ucc: UCC_TL_UCP_TUNE ("coll:start-end:[team]:@alg" tokens joined by '#', ranges inclusive and
 * in UCC's message-size unit) and the TL/UCP radixes the mapped algorithms need, as export
 * lines. UCC reads the same names from ucc.conf.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export.h"

static const char *ucc_coll(enum ct_coll c)
{
    return c == CT_REDUCESCATTER ? "reduce_scatter" : ct_coll_name(c);
}

static void add_extra(struct ct_settings *set, const char *extra)
{
    char name[64];
    const char *eq = strchr(extra, '=');
    snprintf(name, sizeof name, "UCC_TL_UCP_%.*s", (int)(eq - extra), extra);
    for (size_t i = 0; i < set->n; i++)
        if (!strcmp(set->v[i].name, name))
            return;
    ct_settings_add(set, name, eq + 1,
                    "radix the mapped k-nomial algorithm needs (applies to all its calls)");
}

int ct_ucc_settings(const struct ct_config *c, const struct ct_export_opts *o,
                    struct ct_export_out *out, struct ct_settings *set, struct ct_err *err)
{
    struct ct_text tune;
    struct ct_settings extras;
    ct_text_init(&tune);
    ct_settings_init(&extras);
    ct_export_note_mapped(out, CT_LIB_UCC);
    for (int i = 0; i < c->nsets; i++) {
        const struct ct_ruleset *s = &c->sets[i];
        struct ct_xrange *xr;
        int n;
        if (!ct_export_selected(o, s))
            continue;
        ct_export_map(s, CT_LIB_UCC, o, out, &xr, &n);
        for (int k = 0; k < n; k++) {
            const struct ct_xrange *x = &xr[k];
            char set_s[96], rg[64], end[32];
            if (!x->map) {
                ct_export_note_unmapped(out, NULL, "", s, CT_LIB_UCC, x,
                                        "UCC's default decides there");
                continue;
            }
            if (x->hi != CT_BYTES_INF && x->hi - x->lo < 2) { /* UCC needs start < end */
                ct_export_note(out,
                               "%s %s: a single size, which a UCC range cannot hold; left "
                               "out",
                               ct_export_set_str(s, set_s, sizeof set_s),
                               ct_export_range_str(x->lo, x->hi, rg, sizeof rg));
                continue;
            }
            if (x->hi == CT_BYTES_INF)
                snprintf(end, sizeof end, "inf");
            else
                snprintf(end, sizeof end, "%llu", (unsigned long long)(x->hi - 1));
            ct_text_printf(&tune, "%s%s:%llu-%s:[%d]:@%s", tune.len ? "#" : "", ucc_coll(s->coll),
                           (unsigned long long)x->lo, end, s->nranks, x->map->target);
            if (x->map->extra)
                add_extra(&extras, x->map->extra);
            ct_export_map_comment(&set->comments, "# ", s, x);
        }
        free(xr);
    }
    bool none = !tune.len; /* no entry (and so no radix): UCC's own choices everywhere */
    if (!none)
        ct_settings_add(set, "UCC_TL_UCP_TUNE", tune.s,
                        "TL/UCP algorithm per collective, size range (bytes, inclusive) and "
                        "team size; used where TL/UCP wins (TL/NCCL, TL/CUDA, CL/HIER outscore "
                        "it on their buffers)");
    for (size_t i = 0; i < extras.n; i++)
        ct_settings_add(set, extras.v[i].name, extras.v[i].value, extras.v[i].comment);
    ct_settings_release(&extras);
    ct_text_release(&tune);
    if (none)
        return ct_export_maps_nothing(out, o, CT_LIB_UCC,
                                      "no UCC_TL_UCP_TUNE entry would follow and UCC would keep "
                                      "its own choices everywhere",
                                      NULL, err);
    return 0;
}

int ct_emit_ucc(const struct ct_config *c, const struct ct_export_opts *o,
                struct ct_export_out *out, struct ct_err *err)
{
    struct ct_settings set;
    ct_settings_init(&set);
    int rc = ct_ucc_settings(c, o, out, &set, err);
    if (rc == 0) {
        ct_export_header(&out->body, "# ",
                         "UCC TL/UCP tuning (export lines; the same names "
                         "work in ucc.conf)",
                         c, CT_LIB_UCC, o);
        ct_text_printf(&out->body,
                       "# target UCC %s; sizes: allreduce, allgather, alltoall "
                       "dst.count*dtsize (whole\n# buffer); reduce_scatter one "
                       "rank's result. Under Open MPI, UCC also needs\n# "
                       "OMPI_MCA_coll_ucc_enable=1.\n",
                       ct_export_version(o, CT_LIB_UCC));
        for (size_t i = 0; i < out->nnotes; i++)
            ct_text_printf(&out->body, "# %s\n", out->notes[i]);
        ct_text_put(&out->body, ct_text_str(&set.comments));
        ct_settings_exports(&set, &out->body);
    }
    ct_settings_release(&set);
    return rc;
}
