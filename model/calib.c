/* SPDX-License-Identifier: MIT */
/*
 * Calibration: read measured points (colltune-results/1 from `run --json`, colltune-sweep/1
 * from a sweep's results.json), price each point's exact schedule on a topology of the
 * measured shape, and fit the link class(es) the points ran over, gamma, copy, step and
 * slice and message overheads by coordinate descent in log space on the sum of absolute log
 * ratios (robust: the noisiest points do not pull the fit; the goal reads the median error).
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/file.h"
#include "../lib/parse.h"
#include "model.h"

static void add_point(struct ct_mcalib *c, size_t *cap, const struct ct_mpoint *p)
{
    if (c->n == *cap) {
        *cap = *cap ? *cap * 2 : 64;
        c->pts = ct_xrealloc(c->pts, *cap * sizeof *c->pts);
    }
    c->pts[c->n++] = *p;
}

/* "chunk=131072,pipeline=4" */
static void params_str(const char *s, struct ct_params *p)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", s ? s : "");
    char *save = NULL;
    for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(t, '=');
        if (!eq)
            continue;
        *eq = 0;
        unsigned long long v;
        for (int i = 0; i < CT_P_COUNT; i++)
            if (!strcmp(t, ct_param_desc((enum ct_param_id)i)->name) && !ct_parse_size(eq + 1, &v))
                p->v[i] = v;
    }
}

static void params_obj(json_t *o, struct ct_mpoint *pt)
{
    for (int i = 0; i < CT_P_COUNT; i++) {
        json_t *v = json_object_get(o, ct_param_desc((enum ct_param_id)i)->name);
        if (json_is_integer(v))
            pt->params.v[i] = (uint64_t)json_integer_value(v);
    }
    json_t *in = json_object_get(o, "intra"), *out = json_object_get(o, "inter");
    if (json_is_string(in))
        snprintf(pt->intra, sizeof pt->intra, "%s", json_string_value(in));
    if (json_is_string(out))
        snprintf(pt->inter, sizeof pt->inter, "%s", json_string_value(out));
}

static double median_of(json_t *o)
{
    json_t *t = json_object_get(o, "time_us");
    json_t *m = json_is_object(t) ? json_object_get(t, "median") : t;
    return json_is_number(m) ? json_number_value(m) : -1;
}

int ct_mcalib_load(const char *path, struct ct_mcalib *c, struct ct_err *err)
{
    memset(c, 0, sizeof *c);
    json_error_t je;
    char *txt;
    size_t len;
    CT_TRY(ct_file_read(path, &txt, &len, err)); /* a file that cannot be read: I/O, exit 1 */
    json_t *doc = json_loads(txt, 0, &je);
    free(txt);
    if (!doc)
        return ct_err_set(err, CT_EINVAL, "%s: not JSON (line %d: %s)", path, je.line, je.text);
    const char *schema = json_string_value(json_object_get(doc, "schema"));
    size_t cap = 0;
    int rc = 0;
    if (schema && !strcmp(schema, "colltune-results/1")) {
        json_t *args = json_object_get(doc, "args"), *lay = json_object_get(doc, "layout");
        int coll = ct_coll_find(json_string_value(json_object_get(args, "coll")) ?: "");
        c->nranks = (int)json_integer_value(json_object_get(lay, "nranks"));
        c->nnodes = (int)json_integer_value(json_object_get(lay, "nnodes"));
        snprintf(c->transport, sizeof c->transport, "%s",
                 json_string_value(json_object_get(args, "transport")) ?: "");
        json_t *res = json_object_get(doc, "results"), *o;
        size_t i;
        json_array_foreach(res, i, o)
        {
            struct ct_mpoint p = {0};
            p.coll = (enum ct_coll)(coll < 0 ? 0 : coll);
            snprintf(p.algo, sizeof p.algo, "%s", json_string_value(json_object_get(o, "algo")) ?: "");
            params_str(json_string_value(json_object_get(o, "params")), &p.params);
            p.size = (uint64_t)json_integer_value(json_object_get(o, "size"));
            const char *pl = json_string_value(json_object_get(o, "placement"));
            p.in_place = pl && !strcmp(pl, "in-place");
            p.measured_us = median_of(o);
            if (coll >= 0 && p.measured_us > 0 && p.size)
                add_point(c, &cap, &p);
        }
    } else if (schema && !strcmp(schema, "colltune-sweep/1")) {
        json_t *fp = json_object_get(doc, "fingerprint");
        c->nranks = (int)json_integer_value(json_object_get(fp, "nranks"));
        c->nnodes = (int)json_integer_value(json_object_get(fp, "hosts"));
        snprintf(c->transport, sizeof c->transport, "%s",
                 json_string_value(json_object_get(fp, "transport")) ?: "");
        json_t *pts = json_object_get(doc, "points"), *o;
        size_t i;
        json_array_foreach(pts, i, o)
        {
            struct ct_mpoint p = {0};
            int coll = ct_coll_find(json_string_value(json_object_get(o, "coll")) ?: "");
            p.coll = (enum ct_coll)(coll < 0 ? 0 : coll);
            snprintf(p.algo, sizeof p.algo, "%s", json_string_value(json_object_get(o, "algo")) ?: "");
            params_obj(json_object_get(o, "params"), &p);
            p.size = (uint64_t)json_integer_value(json_object_get(o, "size"));
            p.measured_us = median_of(o);
            if (coll >= 0 && p.measured_us > 0 && p.size)
                add_point(c, &cap, &p);
        }
    } else {
        rc = ct_err_set(err, CT_EINVAL, "%s: neither colltune-results/1 (run --json) nor "
                        "colltune-sweep/1 (sweep results.json)", path);
    }
    json_decref(doc);
    if (rc == 0 && (c->nranks < 1 || c->nnodes < 1 || c->nranks % c->nnodes))
        rc = ct_err_set(err, CT_EINVAL, "%s: layout of %d ranks on %d nodes", path, c->nranks,
                        c->nnodes);
    if (rc == 0 && !c->n)
        rc = ct_err_set(err, CT_EINVAL, "%s: no measured points", path);
    /* latency and bandwidth are told apart by sizes far apart: two points at 1 MiB fitted
     * nine parameters, silently */
    uint64_t lo = UINT64_MAX, hi = 0;
    size_t sizes = 0;
    for (size_t i = 0; rc == 0 && i < c->n; i++) {
        size_t k = 0;
        while (k < i && c->pts[k].size != c->pts[i].size)
            k++;
        sizes += k == i;
        lo = c->pts[i].size < lo ? c->pts[i].size : lo;
        hi = c->pts[i].size > hi ? c->pts[i].size : hi;
    }
    if (rc == 0 &&
        (sizes < CT_MCALIB_MIN_SIZES || hi < lo * CT_MCALIB_MIN_SPAN || hi < CT_MCALIB_MIN_TOP))
        rc = ct_err_set(err, CT_EINVAL,
                        "%s: points at %zu size(s), %llu to %llu bytes: a fit needs %d or more "
                        "sizes spanning %dx or more, up to %d KiB or more, to tell latency from "
                        "bandwidth (run -b 8 -e 64M --json)",
                        path, sizes, (unsigned long long)lo, (unsigned long long)hi,
                        CT_MCALIB_MIN_SIZES, CT_MCALIB_MIN_SPAN, CT_MCALIB_MIN_TOP >> 10);
    if (rc < 0)
        ct_mcalib_release(c);
    return rc;
}

void ct_mcalib_release(struct ct_mcalib *c)
{
    free(c->pts);
    memset(c, 0, sizeof *c);
}

int ct_mcalib_predict(struct ct_mcalib *c, const struct ct_mtopo *t, struct ct_err *err)
{
    struct ct_model *m = ct_model_new(t);
    ct_model_use_scheds(m, c->scheds);
    int rc = 0;
    for (size_t i = 0; i < c->n && rc == 0; i++) {
        struct ct_mpoint *p = &c->pts[i];
        const struct ct_algo *a = ct_algo_find(p->algo);
        if (!a) {
            rc = ct_err_set(err, CT_EINVAL, "unknown algorithm '%s' in the results", p->algo);
            break;
        }
        struct ct_params prm = p->params;
        prm.intra = p->intra[0] ? p->intra : NULL;
        prm.inter = p->inter[0] ? p->inter : NULL;
        struct ct_model_cost cost;
        rc = ct_model_price_size(m, a, p->coll, CT_FLOAT32, CT_SUM, &prm, c->nranks, p->size,
                                 &cost, err);
        p->predicted_us = rc == 0 ? cost.time_us : -1;
    }
    ct_model_free(m);
    return rc;
}

/* The fitted quantities, as pointers into a topology: the memory hierarchy only where ranks
 * share a node (their transfers through memory show it; one rank per node leaves it to the
 * reductions and copies beside the network, where it is not to be told apart). */
static int knobs(struct ct_mtopo *t, bool inter, double **k)
{
    int n = 0;
    k[n++] = &t->intra.alpha_us;
    k[n++] = &t->intra.gbps;
    k[n++] = &t->gamma_gbps;
    k[n++] = &t->copy_gbps;
    k[n++] = &t->step_us;
    k[n++] = &t->slice_us;
    k[n++] = &t->msg_us;
    if (t->ranks_per_node > 1) {
        k[n++] = &t->cache_mib;
        k[n++] = &t->mem_factor;
    }
    if (inter) {
        k[n++] = &t->nic.alpha_us;
        k[n++] = &t->nic.gbps;
    }
    if (t->ranks_per_node > 1)
        k[n++] = &t->onesided_gbps; /* last: the fit frees it in a second descent */
    return n;
}

static double loss(struct ct_mcalib *c, const struct ct_mtopo *t)
{
    if (ct_mcalib_predict(c, t, NULL) < 0)
        return INFINITY;
    double s = 0;
    for (size_t i = 0; i < c->n; i++)
        s += fabs(log(c->pts[i].predicted_us / c->pts[i].measured_us));
    return s;
}

#define NK_MAX 12

/* The loss at log-knobs x (written into the topology). */
static double loss_at(struct ct_mcalib *c, struct ct_mtopo *t, double **k, int nk, const double *x)
{
    for (int i = 0; i < nk; i++)
        *k[i] = exp(x[i]);
    return loss(c, t);
}

/*
 * Nelder-Mead in log space from the knobs as they are (a simplex of steps of 1.5x): the
 * absolute-ratio loss has ridges along which no single knob moves downhill, which stop
 * coordinate descent short. Leaves the best point in the topology; returns its loss.
 */
static double simplex(struct ct_mcalib *c, struct ct_mtopo *t, double **k, int nk, double best,
                      double scale)
{
    double x[NK_MAX + 1][NK_MAX], f[NK_MAX + 1], xo[NK_MAX], xr[NK_MAX], xe[NK_MAX];
    for (int i = 0; i < nk; i++)
        xo[i] = log(*k[i]);
    for (int j = 0; j <= nk; j++) {
        for (int i = 0; i < nk; i++)
            x[j][i] = xo[i] + (j == i + 1 ? log(scale) : 0);
        f[j] = j ? loss_at(c, t, k, nk, x[j]) : best;
    }
    for (int it = 0; it < 200 * nk; it++) {
        int hi = 0, lo = 0, nh = -1; /* worst, best, second worst */
        for (int j = 1; j <= nk; j++) {
            if (f[j] > f[hi])
                hi = j;
            if (f[j] < f[lo])
                lo = j;
        }
        for (int j = 0; j <= nk; j++)
            if (j != hi && (nh < 0 || f[j] > f[nh]))
                nh = j;
        if (f[hi] - f[lo] <= 1e-7 * f[lo] + 1e-9) /* relative, and absolute near 0 */
            break;
        for (int i = 0; i < nk; i++) {
            xo[i] = 0;
            for (int j = 0; j <= nk; j++)
                xo[i] += j == hi ? 0 : x[j][i] / nk;
            xr[i] = 2 * xo[i] - x[hi][i];
        }
        double fr = loss_at(c, t, k, nk, xr);
        if (fr < f[lo]) {
            for (int i = 0; i < nk; i++)
                xe[i] = 3 * xo[i] - 2 * x[hi][i];
            double fe = loss_at(c, t, k, nk, xe);
            memcpy(x[hi], fe < fr ? xe : xr, sizeof xe);
            f[hi] = fe < fr ? fe : fr;
        } else if (fr < f[nh]) {
            memcpy(x[hi], xr, sizeof xr);
            f[hi] = fr;
        } else {
            for (int i = 0; i < nk; i++) /* contract toward the better of worst and reflected */
                xe[i] = xo[i] + 0.5 * ((fr < f[hi] ? xr[i] : x[hi][i]) - xo[i]);
            double fc = loss_at(c, t, k, nk, xe);
            if (fc < (fr < f[hi] ? fr : f[hi])) {
                memcpy(x[hi], xe, sizeof xe);
                f[hi] = fc;
            } else { /* shrink toward the best */
                for (int j = 0; j <= nk; j++) {
                    if (j == lo)
                        continue;
                    for (int i = 0; i < nk; i++)
                        x[j][i] = x[lo][i] + 0.5 * (x[j][i] - x[lo][i]);
                    f[j] = loss_at(c, t, k, nk, x[j]);
                }
            }
        }
    }
    int lo = 0;
    for (int j = 1; j <= nk; j++)
        if (f[j] < f[lo])
            lo = j;
    loss_at(c, t, k, nk, x[lo]);
    return f[lo];
}

/* Coordinate descent and Nelder-Mead from the knobs as they are; returns the loss. */
static double descend(struct ct_mcalib *c, struct ct_mtopo *t, double **k, int nk)
{
    double best = loss(c, t), step = log(4.0);
    best = simplex(c, t, k, nk, best, 4); /* from the start: before any knob runs off */
    while (step > 0.005) {
        bool moved = false;
        for (int i = 0; i < nk; i++)
            for (int dir = -1; dir <= 1; dir += 2) {
                double keep = *k[i];
                *k[i] = keep * exp(dir * step);
                double l = loss(c, t);
                if (l < best * (1 - 1e-9)) {
                    best = l;
                    moved = true;
                    break;
                }
                *k[i] = keep;
            }
        if (!moved)
            step /= 2;
    }
    /* then the simplex, restarted around its best while that still gains */
    for (int round = 0; round < 8; round++) {
        double l = simplex(c, t, k, nk, best, round ? 1.5 : 8);
        bool gained = l < best * (1 - 1e-4);
        best = l < best ? l : best;
        if (!gained)
            break;
    }
    return best;
}

static int fit(struct ct_mcalib *c, struct ct_mtopo *t, struct ct_err *err);

/* The fit prices the same points on every topology it tries: their schedules are built
 * once. */
int ct_mcalib_fit(struct ct_mcalib *c, struct ct_mtopo *t, struct ct_err *err)
{
    c->scheds = ct_msched_cache_new();
    int rc = fit(c, t, err);
    ct_msched_cache_free(c->scheds);
    c->scheds = NULL;
    return rc;
}

static int fit(struct ct_mcalib *c, struct ct_mtopo *t, struct ct_err *err)
{
    t->nodes = c->nnodes;
    t->ranks_per_node = c->nranks / c->nnodes;
    t->torus_rows = t->torus_cols = 0;
    if (t->nodes > 1 && t->rails < 1)
        t->rails = 1;
    bool shared = t->ranks_per_node > 1; /* the hierarchy and one-sided ops are fitted */
    if (shared && !(t->mem_factor > 1))
        t->mem_factor = 2;
    else if (!shared)
        t->cache_mib = t->mem_factor = 0; /* not fitted: none modelled */
    t->onesided_gbps = 0; /* the two-sided rate, until the second descent frees it */
    double *k[NK_MAX];
    int nk = knobs(t, c->nnodes > 1, k), nk0 = shared ? nk - 1 : nk;
    for (int i = 0; i < nk0; i++)
        if (!(*k[i] > 0) || isnan(*k[i]))
            *k[i] = 1; /* log-space search needs a positive start */
    CT_TRY(ct_mtopo_check(t, err));
    CT_TRY(ct_mcalib_predict(c, t, err));
    /* The cache's size is where the loss has local minima (a knee the points straddle or
     * not): descend from caches of 4, 32 and 256 MiB and keep the best, with one-sided gets
     * and puts at the two-sided rate; then free their rate (symm and oneshot read and write
     * their peers' memory without the transport's protocol) and descend once more, so the
     * extra knob can only lower the loss. */
    const struct ct_mtopo start = *t;
    struct ct_mtopo best_t = start;
    double best = INFINITY;
    int starts = shared ? 3 : 1;
    for (int i = 0; i < starts; i++) {
        *t = start;
        if (shared)
            t->cache_mib = 4 << (3 * i);
        double l = descend(c, t, k, nk0);
        if (l < best) {
            best = l;
            best_t = *t;
        }
    }
    if (shared) {
        *t = best_t;
        t->onesided_gbps = t->intra.gbps;
        double l = descend(c, t, k, nk);
        if (l < best)
            best_t = *t;
    }
    *t = best_t;
    return ct_mcalib_predict(c, t, err);
}

int ct_model_calibrate(const char *path, const struct ct_mtopo_spec *spec, const char *out,
                       struct ct_mcalib *c, struct ct_mtopo *fit, struct ct_err *err)
{
    CT_TRY(ct_mcalib_load(path, c, err));
    struct ct_mtopo_spec s = *spec;
    if (!s.file && !s.node)
        s.node = "this-host";
    s.nodes = 0;
    int rc = ct_mtopo_build(&s, fit, err);
    if (rc == 0)
        rc = ct_mcalib_fit(c, fit, err);
    if (rc == 0) {
        snprintf(fit->source, sizeof fit->source,
                 "calibrated by colltune model --calibrate %s: %zu points, %d ranks on %d "
                 "node(s), transport %s", path, c->n, c->nranks, c->nnodes, c->transport);
        if (c->nnodes == 1)
            snprintf(fit->intra_transport, sizeof fit->intra_transport, "%s", c->transport);
        else
            snprintf(fit->inter_transport, sizeof fit->inter_transport, "%s", c->transport);
    }
    if (rc == 0 && out)
        rc = ct_mtopo_save(out, fit, err);
    if (rc < 0)
        ct_mcalib_release(c);
    return rc;
}
