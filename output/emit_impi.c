/* SPDX-License-Identifier: MIT */
/*
 * impi: Intel MPI I_MPI_ADJUST_<COLL>="id:l-m@p-q;..." strings as export lines. Syntax, ids
 * (2019 numbering) and message-size definitions come from Intel's documentation only: there
 * is no source to check them against. Sizes l-m and process counts p-q are inclusive.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export.h"

/* Intel's syntax has no infinity; its own tuning tables end ranges at INT_MAX. */
#define IMPI_MAX 2147483647ull

static const char *impi_coll(enum ct_coll c)
{
    switch (c) {
    case CT_ALLREDUCE: return "ALLREDUCE";
    case CT_ALLGATHER: return "ALLGATHER";
    case CT_REDUCESCATTER: return "REDUCE_SCATTER";
    default: return "ALLTOALL";
    }
}

int ct_impi_settings(const struct ct_config *c, const struct ct_export_opts *o,
                     struct ct_export_out *out, struct ct_settings *set, struct ct_err *err)
{
    static const enum ct_coll colls[] = {CT_ALLREDUCE, CT_ALLGATHER, CT_REDUCESCATTER, CT_ALLTOALL};
    size_t n0 = set->n;
    ct_export_note_mapped(out, CT_LIB_IMPI);
    for (size_t ci = 0; ci < sizeof colls / sizeof colls[0]; ci++) {
        struct ct_text v;
        ct_text_init(&v);
        for (int i = 0; i < c->nsets; i++) {
            const struct ct_ruleset *s = &c->sets[i];
            struct ct_xrange *xr;
            int n;
            if (s->coll != colls[ci] || !ct_export_selected(o, s))
                continue;
            ct_export_map(s, CT_LIB_IMPI, o, out, &xr, &n);
            for (int k = 0; k < n; k++) {
                const struct ct_xrange *x = &xr[k];
                char ss[96], rg[64];
                if (!x->map) {
                    ct_export_note_unmapped(out, NULL, "", s, CT_LIB_IMPI, x,
                                            "Intel MPI's default logic decides there");
                    continue;
                }
                if (x->lo > IMPI_MAX) {
                    ct_export_note(out,
                                   "%s %s: above %llu, which Intel's ranges cannot reach; "
                                   "left out",
                                   ct_export_set_str(s, ss, sizeof ss),
                                   ct_export_range_str(x->lo, x->hi, rg, sizeof rg), IMPI_MAX);
                    continue;
                }
                uint64_t end = x->hi == CT_BYTES_INF || x->hi - 1 > IMPI_MAX ? IMPI_MAX : x->hi - 1;
                ct_export_map_comment(&set->comments, "# ", s, x);
                ct_text_printf(&v, "%s%d:%llu-%llu@%d-%d", v.len ? ";" : "", x->map->id,
                               (unsigned long long)x->lo, (unsigned long long)end, s->nranks,
                               s->nranks);
            }
            free(xr);
        }
        if (v.len) {
            char name[64], cm[200];
            const struct ct_size_meaning *m = ct_algomap_size(CT_LIB_IMPI, colls[ci]);
            snprintf(name, sizeof name, "I_MPI_ADJUST_%s", impi_coll(colls[ci]));
            snprintf(cm, sizeof cm, "%s: id:sizes@processes; size = %s", ct_coll_name(colls[ci]),
                     m->what);
            ct_settings_add(set, name, v.s, cm);
        }
        ct_text_release(&v);
    }
    if (set->n == n0) /* no setting: Intel MPI's default logic everywhere */
        return ct_export_maps_nothing(out, o, CT_LIB_IMPI,
                                      "no I_MPI_ADJUST setting would follow and Intel MPI would "
                                      "keep its default logic everywhere",
                                      NULL, err);
    return 0;
}

int ct_emit_impi(const struct ct_config *c, const struct ct_export_opts *o,
                 struct ct_export_out *out, struct ct_err *err)
{
    struct ct_settings set;
    ct_settings_init(&set);
    int rc = ct_impi_settings(c, o, out, &set, err);
    if (rc == 0) {
        ct_export_header(&out->body, "# ", "Intel MPI I_MPI_ADJUST settings (export lines)", c,
                         CT_LIB_IMPI, o);
        ct_text_printf(&out->body,
                       "# target Intel MPI %s ids (vendor documentation; not "
                       "checkable against source).\n# Calls no entry matches use "
                       "Intel's default logic; sizes end at 2147483647.\n",
                       ct_export_version(o, CT_LIB_IMPI));
        for (size_t i = 0; i < out->nnotes; i++)
            ct_text_printf(&out->body, "# %s\n", out->notes[i]);
        ct_text_put(&out->body, ct_text_str(&set.comments));
        ct_settings_exports(&set, &out->body);
    }
    ct_settings_release(&set);
    return rc;
}
