/* SPDX-License-Identifier: MIT */
/*
 * csv: one row per rule for spreadsheets (RFC 4180, header row, '.' decimals). Parameters an
 * algorithm does not use are empty cells; an open upper bound is "inf"; predicted: "yes" for a
 * rule priced by sweep --model.
 */
#include <stdio.h>
#include <string.h>

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

static void row(struct ct_text *t, const struct ct_ruleset *s, const struct ct_rule *r)
{
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
    cell(t, ct_redop_name(s->op), false);
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
        if (a && (ct_params_shown(a, &p) & CT_PBIT(q)))
            snprintf(v, sizeof v, "%llu", (unsigned long long)p.v[q]);
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
    cell(t, r->predicted ? "yes" : "no", true);
}

int ct_emit_csv(const struct ct_config *c, const struct ct_export_opts *o,
                struct ct_export_out *out, struct ct_err *err)
{
    struct ct_text *t = &out->body;
    ct_text_put(t, "coll,nranks,nnodes,ranks_per_node,dtype,op,min_bytes,max_bytes,algo");
    for (int q = 0; q < CT_P_COUNT; q++)
        ct_text_printf(t, ",%s", ct_param_desc((enum ct_param_id)q)->name);
    ct_text_put(t, ",intra,inter,confidence,tie,runner_up,gain,predicted\n");
    for (int i = 0; i < c->nsets; i++)
        if (ct_export_selected(o, &c->sets[i]))
            for (int k = 0; k < c->sets[i].nrules; k++)
                row(t, &c->sets[i], &c->sets[i].rules[k]);
    return 0;
}
