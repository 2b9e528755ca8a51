/* SPDX-License-Identifier: MIT */
/* colltune model's report: the nccl-tests table of predicted rows, then the crossovers. */
#include <math.h>
#include <stdio.h>

#include "../algos/coll.h"
#include "../model/model.h"
#include "output.h"

static const char *fmt_size(double b, char *buf, size_t n)
{
    const char *u[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int i = 0;
    while (b >= 1024 && i < 4)
        b /= 1024, i++;
    snprintf(buf, n, "%.3g %s", b, u[i]);
    return buf;
}

void ct_model_report(FILE *out, const struct ct_model_req *q, const struct ct_model_result *r,
                     const char *version)
{
    size_t f = 0; /* the first row priced (a placeholder says nothing of the shape) */
    while (f + 1 < r->nrows && !isfinite(r->rows[f].time_us))
        f++;
    int nranks = r->nrows ? r->rows[f].nranks : 0, nnodes = r->nrows ? r->rows[f].nnodes : 0;
    char tp[96];
    snprintf(tp, sizeof tp, "model:%s (predicted)", r->topo.name);
    struct ct_run_meta meta = {.coll = ct_coll_name(q->coll),
                               .transport = tp,
                               .version = version,
                               .minbytes = q->minb,
                               .maxbytes = q->maxb,
                               .stepfactor = q->factor,
                               .nranks = nranks,
                               .nnodes = nnodes};
    ct_table_header(out, &meta);
    size_t priced = 0;
    for (size_t i = 0; i < r->nrows; i++) {
        if (!isfinite(r->rows[i].time_us))
            continue; /* too large to price from a size on (said under "not priced") */
        priced++;
        struct ct_row row; /* AllGather and AllToAll reduce nothing: "none", as run says */
        ct_row_init(&row, q->dtype, ct_coll_desc(q->coll)->needs_op ? (int)q->op : -1,
                    r->rows[i].algo);
        row.size = r->rows[i].size, row.count = r->rows[i].count, row.have[0] = true;
        row.time_us[0] = r->rows[i].time_us, row.algbw[0] = r->rows[i].algbw;
        row.busbw[0] = r->rows[i].busbw, row.wrong[0] = row.wrong[1] = -1;
        ct_table_row(out, &row);
    }
    fprintf(out, "# predicted crossovers (%s, %d ranks on %d node(s) of '%s'):\n",
            ct_coll_name(q->coll), nranks, nnodes, r->topo.name);
    for (size_t i = 0; i < r->nranges; i++) {
        char a[32], b[32];
        fprintf(out, "#   %-10s .. %-10s  %s\n", fmt_size(r->ranges[i].from, a, sizeof a),
                r->ranges[i].to < 0 ? "inf" : fmt_size(r->ranges[i].to, b, sizeof b),
                r->ranges[i].algo);
    }
    if (r->skipped[0])
        fprintf(out, "# not priced: %s\n", r->skipped);
    fprintf(out, "# priced %zu points in %.3f s%s%s\n", priced, r->elapsed_s,
            q->json ? "; wrote " : "",
            out == stderr ? "the JSON to standard output"
            : q->json     ? q->json
                          : "");
}
