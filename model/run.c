/* SPDX-License-Identifier: MIT */
/*
 * A model sweep: the topology from a file, a preset or this host's probe; every algorithm
 * priced at every size; the winner per size and the interpolated crossovers; the JSON.
 */
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../algos/coll.h"
#include "../backend/bench.h"
#include "../lib/clock.h"
#include "../lib/file.h"
#include "../probe/topo.h"
#include "model.h"

/*
 * The GPUs of a probed host: the rate of their intra-node class is the probe's GPU ring's
 * slowest hop (a pair's NVLinks x the per-link rate, else the lower of the two PCIe links:
 * ct_ceil_gpu_hop, the ceiling `probe` prints), the GPU ranks' latencies, reduction and copy
 * rates dgx-h100's (assumptions there too: calibrate). Before, the this-host preset's shared
 * memory (5 GB/s) stood for NVLink: an 8 x H100 capture priced ring AllReduce at 1 GiB at 2.45
 * GB/s busbw where the preset reads 333. 0, or where no hop's rate is known, 1 (this-host's
 * rates kept, said in the source).
 */
static int gpu_intra(const struct ct_topo *pt, struct ct_mtopo *t, struct ct_err *err)
{
    double slow = -1;
    char d[256], worst[256] = "";
    for (size_t i = 0; i < pt->n_gpu && pt->n_gpu > 1; i++) {
        double bw = ct_ceil_gpu_hop(pt, (int)i, (int)((i + 1) % pt->n_gpu), d, sizeof d);
        if (slow < 0 || bw < slow)
            slow = bw, snprintf(worst, sizeof worst, "%s", d);
    }
    if (pt->n_gpu > 1 && slow <= 0) {
        snprintf(t->source, sizeof t->source,
                 "probe: %zu GPUs whose links' rates are unknown (%s): the this-host preset's "
                 "intra-node rates stand for them, not theirs",
                 pt->n_gpu, worst);
        return 1;
    }
    struct ct_mtopo g; /* the GPU side's; the network's stays this-host's (the probe's NICs) */
    CT_TRY(ct_mtopo_preset("dgx-h100", &g, err));
    t->intra = g.intra, t->gamma_gbps = g.gamma_gbps, t->copy_gbps = g.copy_gbps;
    t->onesided_gbps = g.onesided_gbps, t->step_us = g.step_us, t->slice_us = g.slice_us;
    t->cache_mib = g.cache_mib, t->mem_factor = g.mem_factor;
    if (slow > 0)
        t->intra.gbps = slow;
    snprintf(t->intra_transport, sizeof t->intra_transport, "%s",
             strstr(worst, " NV") ? "nvlink" : "pcie");
    snprintf(t->source, sizeof t->source,
             "probe: intra-node %s (the GPU ring's slowest hop); latencies, reduction and copy "
             "rates dgx-h100's (assumed: calibrate)",
             pt->n_gpu > 1 ? worst : "one GPU");
    return 0;
}

/* Shape and NIC rates of a probed host over the this-host preset's rates (its GPUs': gpu_intra). */
static int from_probe(const struct ct_topo *pt, struct ct_mtopo *t, struct ct_err *err)
{
    CT_TRY(ct_mtopo_preset("this-host", t, err));
    if (pt->hostname)
        snprintf(t->name, sizeof t->name, "%s", pt->hostname);
    if (pt->n_gpu)
        CT_TRY(gpu_intra(pt, t, err));
    if (pt->n_gpu)
        t->ranks_per_node = (int)pt->n_gpu;
    else if (pt->n_accel)
        t->ranks_per_node = (int)pt->n_accel;
    else if (pt->npus > 1)
        t->ranks_per_node = pt->npus;
    if (pt->npus > 0) /* the ranks' work shares them (time sharing beyond one rank each) */
        t->cores_per_node = pt->npus;
    if (pt->torus_rows > 0 && pt->torus_rows * pt->torus_cols == t->ranks_per_node) {
        t->torus_rows = pt->torus_rows;
        t->torus_cols = pt->torus_cols;
    }
    int rails = 0;
    double slow = 0;
    for (size_t i = 0; i < pt->n_nic; i++) {
        double d = ct_nic_data_gbps(&pt->nic[i]); /* less its line code */
        if (d > 0) {
            rails++;
            if (!slow || d < slow)
                slow = d;
        }
    }
    if (rails) {
        t->rails = rails;
        t->nic.gbps = slow / 8; /* Gb/s -> GB/s */
    }
    return 0;
}

int ct_mtopo_build(const struct ct_mtopo_spec *spec, struct ct_mtopo *t, struct ct_err *err)
{
    ct_mtopo_init(t);
    if (spec->file) {
        char *txt;
        size_t len;
        CT_TRY(ct_file_read(spec->file, &txt, &len, err));
        bool model = strstr(txt, "colltune-model-topology/") != NULL,
             probed = strstr(txt, "colltune-topo/") != NULL;
        free(txt);
        if (!model && !probed)
            return ct_err_set(err, CT_EINVAL,
                              "topology file '%s': neither a colltune-model-topology/1 file (model "
                              "--calibrate, a preset's form) nor a colltune-topo/1 one (probe "
                              "--json)",
                              spec->file);
        if (model) {
            CT_TRY(ct_mtopo_load(spec->file, t, err));
        } else { /* a probe JSON of a real host */
            struct ct_topo *pt = ct_topo_new();
            int rc = ct_topo_import(pt, "json", spec->file, NULL, err);
            if (rc == 0)
                rc = from_probe(pt, t, err);
            if (rc == 0 && !pt->hostname) /* a capture's: named by its file, not this host */
                snprintf(t->name, sizeof t->name, "%.63s",
                         strrchr(spec->file, '/') ? strrchr(spec->file, '/') + 1 : spec->file);
            ct_topo_free(pt);
            CT_TRY(rc);
        }
    } else if (spec->node && !strcmp(spec->node, "this-host")) {
        struct ct_topo *pt = ct_topo_new();
        struct ct_probe_cfg cfg = {0};
        int rc = ct_probe_local(pt, &cfg, err);
        if (rc == 0)
            rc = from_probe(pt, t, err);
        ct_topo_free(pt);
        CT_TRY(rc);
    } else {
        CT_TRY(ct_mtopo_preset(spec->node ? spec->node : "this-host", t, err));
    }
    if (spec->nodes > 0)
        t->nodes = spec->nodes;
    if (spec->net)
        CT_TRY(ct_mtopo_net(t, spec->net, err));
    return ct_mtopo_check(t, err);
}

/* ---- crossovers ------------------------------------------------------------------------ */

/* Size where a (winning below) and b (winning above) cost the same, in log-log space. */
static double cross(double s0, double s1, double a0, double a1, double b0, double b1)
{
    double d0 = log(a0) - log(b0), d1 = log(a1) - log(b1);
    double f = d0 == d1 ? 0.5 : d0 / (d0 - d1);
    if (f < 0)
        f = 0;
    if (f > 1)
        f = 1;
    return exp(log(s0) + f * (log(s1) - log(s0)));
}

static void ranges(struct ct_model_result *r, size_t nalg)
{
    size_t nsz = nalg ? r->nrows / nalg : 0;
    r->ranges = ct_xcalloc(nsz ? nsz : 1, sizeof *r->ranges);
    r->nranges = 0;
    size_t prev = 0;
    for (size_t s = 0; s < nsz; s++) {
        size_t best = s * nalg;
        for (size_t a = 1; a < nalg; a++)
            if (r->rows[s * nalg + a].time_us < r->rows[best].time_us)
                best = s * nalg + a;
        if (!isfinite(r->rows[best].time_us))
            continue; /* none priced here (not kept: the sizes past all end the rows) */
        if (r->nranges && r->ranges[r->nranges - 1].algo == r->rows[best].algo) {
            prev = best;
            continue;
        }
        double from = 0;
        if (r->nranges) { /* prev: the winner at the previous size */
            size_t pa = prev % nalg, ba = best % nalg, ps = prev / nalg;
            const struct ct_model_row *x = r->rows;
            /* the winner before is not priced here (too large): it ends where it was */
            from = !isfinite(x[s * nalg + pa].time_us)
                       ? (double)x[ps * nalg].size
                       : cross((double)x[ps * nalg].size, (double)x[s * nalg].size,
                               x[ps * nalg + pa].time_us, x[s * nalg + pa].time_us,
                               x[ps * nalg + ba].time_us, x[s * nalg + ba].time_us);
            r->ranges[r->nranges - 1].to = from;
        }
        r->ranges[r->nranges].from = from;
        r->ranges[r->nranges].to = -1;
        r->ranges[r->nranges].algo = r->rows[best].algo;
        r->nranges++;
        prev = best;
    }
}

/* ---- JSON ------------------------------------------------------------------------------ */

char *ct_model_result_json(const struct ct_model_req *q, const struct ct_model_result *r)
{
    json_t *doc = json_object(), *res = json_array(), *cx = json_array();
    json_object_set_new(doc, "schema", json_string("colltune-model/1"));
    json_object_set_new(doc, "label", json_string("predicted"));
    json_object_set_new(doc, "topology", json_string(r->topo.name));
    json_object_set_new(doc, "coll", json_string(ct_coll_name(q->coll)));
    json_object_set_new(doc, "datatype", json_string(ct_dtype_name(q->dtype)));
    for (size_t i = 0; i < r->nrows; i++) {
        const struct ct_model_row *w = &r->rows[i];
        if (!isfinite(w->time_us))
            continue; /* not priced at this size */
        json_t *o = json_object();
        json_object_set_new(o, "size", json_integer((json_int_t)w->size));
        json_object_set_new(o, "algo", json_string(w->algo));
        json_object_set_new(o, "time_us", json_real(w->time_us));
        json_object_set_new(o, "algbw", json_real(w->algbw));
        json_object_set_new(o, "busbw", json_real(w->busbw));
        json_object_set_new(o, "ranks", json_integer(w->nranks));
        json_object_set_new(o, "nodes", json_integer(w->nnodes));
        json_array_append_new(res, o);
    }
    json_object_set_new(doc, "results", res);
    for (size_t i = 0; i < r->nranges; i++) {
        json_t *o = json_object();
        json_object_set_new(o, "from_bytes", json_real(r->ranges[i].from));
        json_object_set_new(o, "to_bytes",
                            r->ranges[i].to < 0 ? json_null() : json_real(r->ranges[i].to));
        json_object_set_new(o, "algo", json_string(r->ranges[i].algo));
        json_array_append_new(cx, o);
    }
    json_object_set_new(doc, "ranges", cx);
    char *txt = json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    json_decref(doc);
    return txt;
}

/* ---- the sweep ------------------------------------------------------------------------- */

int ct_model_run(const struct ct_model_req *q, struct ct_model_result *r, struct ct_err *err)
{
    memset(r, 0, sizeof *r);
    int64_t t0 = ct_now_ns();
    CT_TRY(ct_mtopo_build(&q->topo, &r->topo, err));
    struct ct_shape shape;
    CT_TRY(ct_model_shape(&r->topo, q->nranks, &shape, err));
    if (!(q->factor > 1))
        return ct_err_set(err, CT_EINVAL, "sizes: need -f > 1");
    /* as run checks them: -b 7 was priced as 4 B, without a word */
    CT_TRY(ct_bench_sizes_check(q->minb, q->maxb, q->factor, q->dtype, err));
    struct ct_model *m = ct_model_new(&r->topo);
    const struct ct_algo *cand[CT_MODEL_MAX_ALGOS];
    size_t nc = 0;
    for (size_t i = 0; q->nalgos ? i < q->nalgos : ct_algo_at(i) != NULL; i++) {
        const struct ct_algo *a = q->nalgos ? q->algos[i] : ct_algo_at(i);
        if (nc == CT_MODEL_MAX_ALGOS)
            continue;
        if (!(a->colls & CT_COLL_BIT(q->coll))) {
            size_t l = strlen(r->skipped); /* asked for by name: say why it is not priced */
            if (q->nalgos)
                snprintf(r->skipped + l, sizeof r->skipped - l, "%s%s: no %s schedule",
                         l ? "; " : "", a->name, ct_coll_name(q->coll));
            continue;
        }
        struct ct_job j = {.coll = q->coll, .dtype = q->dtype, .op = q->op, .count = 1,
                           .shape = shape, .params = q->params};
        struct ct_err why = {0};
        if (ct_algo_supports(a, &j, &why) < 0) {
            size_t l = strlen(r->skipped);
            if (shape.torus_rows <= 0 && strstr(why.msg, "needs a torus shape"))
                snprintf(why.msg, sizeof why.msg,
                         "'%s' has no torus (node.torus in a topology "
                         "file, as the trn1 and trn2 presets have)",
                         r->topo.name);
            snprintf(r->skipped + l, sizeof r->skipped - l, "%s%s: %s", l ? "; " : "", a->name,
                     why.msg);
            continue;
        }
        cand[nc++] = a;
    }
    int rc = 0;
    size_t cap = 0;
    size_t es = ct_dtype_size(q->dtype);
    bool stop = false; /* every candidate too large to price from here: the rest not priced */
    bool *out = ct_xcalloc(nc ? nc : 1, sizeof *out); /* too large from a size on */
    uint64_t *sizes;   /* run's sizes (0, then one element per rank, from -b 0), priced alike */
    size_t nsizes = ct_bench_sizes(q->coll, q->minb, q->maxb, q->factor, es, shape.nranks, &sizes);
    for (size_t s = 0; s < nsizes && rc == 0 && !stop; s++) {
        uint64_t size = sizes[s];
        if (!ct_coll_desc(q->coll)->count_for(size, es, shape.nranks))
            continue; /* 0 B: nothing to price */
        for (size_t a = 0; a < nc && rc == 0 && !stop; a++) {
            struct ct_model_cost c;
            struct ct_err why = {0};
            if (q->progress) {
                struct ct_model_progress pr = {cand[a]->name, size, (long)r->nrows,
                                               (long)r->nrows + (long)((nsizes - s) * nc - a),
                                               (double)(ct_now_ns() - t0) / 1e9};
                q->progress(q->progress_arg, &pr);
            }
            rc = out[a] ? CT_EUNSUPP /* not priced again: a large one rebuilt its schedule */
                        : ct_model_price_size(m, cand[a], q->coll, q->dtype, q->op, &q->params,
                                              shape.nranks, size, &c, &why);
            if (rc == CT_EUNSUPP && !out[a]) { /* too large to price from this size on: its
                                    rows end here (it was left out whole: oneshot's 16 KiB
                                    mailbox took it out of every crossover past -e 16K) */
                size_t l = strlen(r->skipped);
                snprintf(r->skipped + l, sizeof r->skipped - l,
                         "%s%s (from %llu B: not priced above)", l ? "; " : "", why.msg,
                         (unsigned long long)size);
                out[a] = true;
            }
            if (out[a]) { /* a placeholder keeps one row per algorithm at every size */
                c = (struct ct_model_cost){.size = size, .time_us = INFINITY};
                rc = 0;
            }
            if (rc < 0) {
                *err = why;
                break;
            }
            if (r->nrows == cap) {
                cap = cap ? cap * 2 : 64;
                r->rows = ct_xrealloc(r->rows, cap * sizeof *r->rows);
            }
            r->rows[r->nrows++] = (struct ct_model_row){c.size, c.count, cand[a]->name,
                                                        c.time_us, c.algbw, c.busbw, c.nranks,
                                                        c.nnodes, c.period > 0};
        }
        bool all_out = nc > 0; /* none priced from this size: the sizes priced kept */
        for (size_t o = 0; o < nc; o++)
            all_out &= out[o];
        if (all_out && rc == 0) {
            while (r->nrows && r->rows[r->nrows - 1].size == size)
                r->nrows--;
            stop = true;
        }
    }
    free(out);
    ct_model_free(m);
    free(sizes);
    if (rc == 0 && (!nc || !r->nrows))
        rc = ct_err_set(err, CT_EUNSUPP, "no algorithm supports %s on %d ranks of '%s'%s%s%s",
                        ct_coll_name(q->coll), shape.nranks, r->topo.name,
                        r->skipped[0] ? " (" : "", r->skipped, r->skipped[0] ? ")" : "");
    if (rc < 0) { /* the rows priced, placeholders included, go with the error */
        free(r->rows);
        r->rows = NULL;
        r->nrows = 0;
        return rc;
    }
    ranges(r, nc);
    r->elapsed_s = (double)(ct_now_ns() - t0) / 1e9;
    int rc2 = 0; /* "-": the caller prints ct_model_result_json */
    if (q->json && strcmp(q->json, "-") &&
        (rc2 = ct_file_write_doc(q->json, ct_model_result_json(q, r), "the model JSON", err)) < 0)
        ct_model_result_release(r); /* a failure hands back nothing (a full disk leaked them) */
    return rc2;
}

void ct_model_result_release(struct ct_model_result *r)
{
    free(r->rows);
    free(r->ranges);
    memset(r, 0, sizeof *r);
}
