/* SPDX-License-Identifier: MIT */
/*
 * csv: one row per rule for spreadsheets (RFC 4180, header row, '.' decimals). Parameters an
 * algorithm does not use are empty cells; an open upper bound is "inf"; predicted: "yes" for a
 * rule priced by sweep --model; library: "colltune" for colltune's own rules, else the measured
 * section's library ("ompi", "mpich", "nccl"), whose rules name the library's algorithm and set
 * only the parameters the library takes (Open MPI's segment size as chunk, NCCL's channels).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "export.h"

/* A cell: quoted when it holds a comma, quote or line break. */
static void cell(struct ct_text *t, const char *s, bool last)
{
    if (strpbrk(s, ",\"\r\n")) {
        ct_text_put(t, "\"");
        for (; *s; s++)
            ct_text_put(t, *s == '"' ? "\"\"" : (char[2]){*s, 0});
        ct_text_put(t, "\"");
    } else {
        ct_text_put(t, s);
    }
    ct_text_put(t, last ? "\n" : ",");
}

static void row(struct ct_text *t, const struct ct_ruleset *s, const struct ct_rule *r,
                const char *library)
{
    bool own = !strcmp(library, "colltune");
    const struct ct_algo *a = ct_algo_find(r->algo);
    struct ct_params p = r->params;
    char v[64];
    ct_params_defaults(&p);
    cell(t, ct_coll_name(s->coll), false);
    snprintf(v, sizeof v, "%d", s->nranks);
    cell(t, v, false);
    snprintf(v, sizeof v, "%d", s->nnodes);
    cell(t, v, false);
    snprintf(v, sizeof v, "%d", s->ranks_per_node);
    cell(t, v, false);
    cell(t, ct_dtype_name(s->dtype), false);
    cell(t, ct_ruleset_op_name(s), false);
    snprintf(v, sizeof v, "%llu", (unsigned long long)r->min_bytes);
    cell(t, v, false);
    if (r->max_bytes == CT_BYTES_INF)
        snprintf(v, sizeof v, "inf");
    else
        snprintf(v, sizeof v, "%llu", (unsigned long long)r->max_bytes);
    cell(t, v, false);
    cell(t, r->algo, false);
    for (int q = 0; q < CT_P_COUNT; q++) {
        v[0] = 0;
        if (own ? a && (ct_params_shown(a, &p) & CT_PBIT(q))
                : r->params.v[q] && r->params.v[q] != CT_PARAM_OWN)
            snprintf(v, sizeof v, "%llu", (unsigned long long)(own ? p.v[q] : r->params.v[q]));
        cell(t, v, false);
    }
    cell(t, p.intra ? p.intra : "", false);
    cell(t, p.inter ? p.inter : "", false);
    snprintf(v, sizeof v, "%.4f", r->confidence);
    cell(t, v, false);
    cell(t, r->tie ? "yes" : "no", false);
    cell(t, r->runner_up, false);
    snprintf(v, sizeof v, "%.4f", r->gain);
    cell(t, v, false);
    cell(t, r->predicted ? "yes" : "no", false);
    cell(t, library, true);
}

static void rows(struct ct_text *t, const struct ct_export_opts *o, const struct ct_ruleset *sets,
                 int n, const char *library)
{
    for (int i = 0; i < n; i++)
        if (ct_export_selected(o, &sets[i]))
            for (int k = 0; k < sets[i].nrules; k++)
                row(t, &sets[i], &sets[i].rules[k], library);
}

int ct_emit_csv(const struct ct_config *c, const struct ct_export_opts *o,
                struct ct_export_out *out, struct ct_err *err)
{
    struct ct_text *t = &out->body;
    ct_text_put(t, "coll,nranks,nnodes,ranks_per_node,dtype,op,min_bytes,max_bytes,algo");
    for (int q = 0; q < CT_P_COUNT; q++)
        ct_text_printf(t, ",%s", ct_param_desc((enum ct_param_id)q)->name);
    ct_text_put(t, ",intra,inter,confidence,tie,runner_up,gain,predicted,library\n");
    rows(t, o, c->sets, c->nsets, "colltune");
    for (int l = 0; l < c->nlibs; l++) { /* the measured sections: every rule, none dropped */
        const struct ct_librules *lib = &c->libs[l];
        struct ct_ruleset *raw = NULL;
        int n = lib->raw ? ct_config_lib_raw_sets(lib, &raw) : lib->nsets;
        rows(t, o, lib->raw ? raw : lib->sets, n, lib->library);
        for (int i = 0; lib->raw && i < n; i++)
            ct_ruleset_release(&raw[i]);
        free(raw);
    }
    return 0;
}
