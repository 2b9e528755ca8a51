/* SPDX-License-Identifier: MIT */
/* colltune-results/1: run metadata, rank layout and one entry per size and placement. */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/clock.h"
#include "../lib/file.h"
#include "output.h"

static json_t *point(const struct ct_row *r, int k)
{
    json_t *o = json_object();
    json_object_set_new(o, "size", json_integer((json_int_t)r->size));
    json_object_set_new(o, "count", json_integer((json_int_t)r->count));
    json_object_set_new(o, "type", json_string(r->type));
    json_object_set_new(o, "redop", json_string(r->redop));
    json_object_set_new(o, "root", json_integer(r->root));
    json_object_set_new(o, "algo", json_string(r->algo));
    json_object_set_new(o, "params", json_string(r->params));
    json_object_set_new(o, "placement", json_string(k ? "in-place" : "out-of-place"));
    json_object_set_new(o, "iters", json_integer(r->iters));
    if (r->reps[k] > 1) /* absent: one call per iteration */
        json_object_set_new(o, "batch", json_integer(r->reps[k]));
    json_t *t = json_object();
    json_object_set_new(t, "median", json_real(r->time_us[k]));
    json_object_set_new(t, "min", json_real(r->min_us[k]));
    json_object_set_new(t, "max", json_real(r->max_us[k]));
    json_object_set_new(o, "time_us", t);
    json_object_set_new(o, "algbw", json_real(r->algbw[k]));
    json_object_set_new(o, "busbw", json_real(r->busbw[k]));
    json_object_set_new(o, "wrong", r->wrong[k] < 0 ? json_null() : json_integer(r->wrong[k]));
    /* a quantized point is never exact: it names its format and carries its error */
    json_object_set_new(o, "quant", r->quant ? json_string(r->quant) : json_null());
    if (r->quant) {
        json_object_set_new(o, "diverged",
                            r->diverged[k] < 0 ? json_null() : json_integer(r->diverged[k]));
        json_object_set_new(o, "max_err", json_real(r->max_err[k]));
        json_object_set_new(o, "rms_err", json_real(r->rms_err[k]));
    }
    return o;
}

int ct_results_json_write(const char *path, const struct ct_run_meta *m, const struct ct_row *rows,
                          size_t n, struct ct_err *err)
{
    json_t *doc = json_object();
    json_object_set_new(doc, "schema", json_string("colltune-results/1"));
    json_object_set_new(doc, "version", json_string(m->version));
    char when[32];
    json_object_set_new(doc, "date", json_string(ct_utc_iso(when, sizeof when)));
    json_t *args = json_object();
    json_object_set_new(args, "coll", json_string(m->coll));
    json_object_set_new(args, "minbytes", json_integer((json_int_t)m->minbytes));
    json_object_set_new(args, "maxbytes", json_integer((json_int_t)m->maxbytes));
    json_object_set_new(args, "stepfactor", json_real(m->stepfactor));
    json_object_set_new(args, "warmup_iters", json_integer(m->warmup));
    json_object_set_new(args, "iters", json_integer(m->iters));
    json_object_set_new(args, "check", json_integer(m->check));
    json_object_set_new(args, "transport", json_string(m->transport));
    json_object_set_new(args, "quant", m->quant ? json_string(m->quant) : json_null());
    if (m->rank_time) /* absent: the slowest rank's */
        json_object_set_new(args, "rank_time", json_string(m->rank_time));
    if (m->batch < 0 || m->batch > 1) /* absent: one call per iteration */
        json_object_set_new(args, "batch",
                            m->batch < 0 ? json_string("auto") : json_integer(m->batch));
    if (m->args)
        json_object_set_new(args, "command_line", json_string(m->args));
    json_object_set_new(doc, "args", args);
    json_t *layout = json_object();
    json_object_set_new(layout, "nranks", json_integer(m->nranks));
    json_object_set_new(layout, "nnodes", json_integer(m->nnodes));
    json_t *ranks = json_array();
    for (int r = 0; r < m->nranks && m->ranks; r++) {
        json_t *o = json_object();
        json_object_set_new(o, "rank", json_integer(r));
        json_object_set_new(o, "host", json_string(m->ranks[r].host));
        json_object_set_new(o, "node", json_integer(m->ranks[r].node));
        json_object_set_new(o, "local_rank", json_integer(m->ranks[r].local_rank));
        json_object_set_new(o, "pid", json_integer(m->ranks[r].pid));
        json_array_append_new(ranks, o);
    }
    json_object_set_new(layout, "ranks", ranks);
    json_object_set_new(doc, "layout", layout);
    json_t *res = json_array();
    for (size_t i = 0; i < n; i++)
        for (int k = 0; k < 2; k++)
            if (rows[i].have[k])
                json_array_append_new(res, point(&rows[i], k));
    json_object_set_new(doc, "results", res);
    char *txt = json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    json_decref(doc);
    return ct_doc_write(path, txt, "results JSON", err);
}

int ct_doc_write(const char *path, char *text, const char *what, struct ct_err *err)
{
    if (strcmp(path, "-"))
        return ct_file_write_doc(path, text, what, err);
    if (!text)
        return ct_err_set(err, CT_ENOMEM, "cannot encode %s", what);
    fflush(stderr); /* a report on stderr comes before the document */
    int bad = fputs(text, stdout) < 0 || fputc('\n', stdout) < 0 || fflush(stdout) != 0;
    free(text);
    return bad ? ct_err_sys(err, CT_EIO, "cannot write %s to standard output", what) : 0;
}
