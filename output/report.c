/* SPDX-License-Identifier: MIT */
/*
 * The sweep report: points.csv and a self-contained report.html (inline CSS and SVG, no
 * script, no external resource) with per-collective plots, rule tables and winning parameters.
 */
#include "report.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../backend/native.h"

#include "../lib/file.h"
#include "svg.h"

#define DASH "\xe2\x80\x94"  /* em dash: a missing value */
#define INFTY "\xe2\x88\x9e" /* infinity sign */
#define MIDDOT " \xc2\xb7 "

/* Algorithm names are fixed-size fields that may fill their array: copy them out bounded. */
struct name {
    char s[sizeof(((struct ct_sweep_point *)0)->algo) + 1];
};

static struct name name_of(const char *field, size_t cap)
{
    struct name n;
    size_t len = strnlen(field, cap < sizeof n.s ? cap : sizeof n.s - 1);
    memcpy(n.s, field, len);
    n.s[len] = '\0';
    return n;
}

#define PT_NAME(p) name_of((p)->algo, sizeof(p)->algo)

/* Append to a fixed buffer, truncating silently. */
static void cat(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void cat(char *buf, size_t len, const char *fmt, ...)
{
    size_t off = strlen(buf);
    if (off + 1 >= len)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + off, len - off, fmt, ap);
    va_end(ap);
}

static void fmt_us(char *buf, size_t len, double v)
{
    if (!isfinite(v))
        snprintf(buf, len, DASH);
    else if (fabs(v) < 10)
        snprintf(buf, len, "%.2f", v);
    else if (fabs(v) < 1000)
        snprintf(buf, len, "%.1f", v);
    else
        snprintf(buf, len, "%.0f", v);
}

static void fmt_bw(char *buf, size_t len, double v)
{
    if (!isfinite(v))
        snprintf(buf, len, DASH);
    else if (fabs(v) >= 100)
        snprintf(buf, len, "%.1f", v);
    else if (fabs(v) >= 1 || v == 0)
        snprintf(buf, len, "%.2f", v);
    else
        snprintf(buf, len, "%.3g", v);
}

static void fmt_size(char *buf, size_t len, uint64_t v)
{
    if (v == CT_BYTES_INF)
        snprintf(buf, len, INFTY);
    else
        ct_svg_fmt_bytes(buf, len, (double)v);
}

/* ---- algorithms in the report: one stable order, hence one colour each -------------------- */

struct algos {
    struct name *v;
    size_t *key;
    int n;
};

static size_t table_index(const char *name)
{
    for (size_t i = 0; ct_algo_at(i); i++)
        if (!strcmp(ct_algo_at(i)->name, name))
            return i;
    return SIZE_MAX;
}

static int algos_find(const struct algos *a, const char *name)
{
    for (int i = 0; i < a->n; i++)
        if (!strcmp(a->v[i].s, name))
            return i;
    return -1;
}

static void algos_add(struct algos *a, struct name nm)
{
    if (algos_find(a, nm.s) >= 0)
        return;
    size_t t = table_index(nm.s);
    a->v = ct_xrealloc(a->v, (size_t)(a->n + 1) * sizeof *a->v);
    a->key = ct_xrealloc(a->key, (size_t)(a->n + 1) * sizeof *a->key);
    /* table order first (stable colours across reports), then unknown names as first seen */
    a->key[a->n] = t != SIZE_MAX ? t : ct_algo_count() + (size_t)a->n;
    a->v[a->n++] = nm;
}

static void algos_sort(struct algos *a)
{
    for (int i = 1; i < a->n; i++)
        for (int j = i; j > 0 && a->key[j] < a->key[j - 1]; j--) {
            size_t k = a->key[j];
            a->key[j] = a->key[j - 1];
            a->key[j - 1] = k;
            struct name t = a->v[j];
            a->v[j] = a->v[j - 1];
            a->v[j - 1] = t;
        }
}

static void algos_release(struct algos *a)
{
    free(a->v);
    free(a->key);
}

/* ---- parameters ------------------------------------------------------------------------- */

/* The parameters that describe a point of algo with values p (algos/algo.h). */
static unsigned param_mask(const char *algo, const struct ct_params *p)
{
    return ct_params_shown(ct_algo_find(algo), p);
}

static void params_str(char *buf, size_t len, const char *algo, const struct ct_params *p)
{
    unsigned mask = param_mask(algo, p);
    buf[0] = '\0';
    for (int i = 0; i < CT_P_COUNT; i++) {
        const struct ct_param_desc *d = ct_param_desc((enum ct_param_id)i);
        if (!(mask & CT_PBIT(i)) || !d)
            continue;
        char v[48];
        if (!p->v[i])
            snprintf(v, sizeof v, "default");
        else if (p->v[i] == CT_PARAM_OWN)
            snprintf(v, sizeof v, "own"); /* the library's own value */
        else if (d->unit && !strcmp(d->unit, "bytes"))
            ct_svg_fmt_bytes(v, sizeof v, (double)p->v[i]);
        else
            snprintf(v, sizeof v, "%llu", (unsigned long long)p->v[i]);
        cat(buf, len, "%s%s=%s", buf[0] ? " " : "", d->name, v);
    }
    if (p->intra)
        cat(buf, len, "%sintra=%s", buf[0] ? " " : "", p->intra);
    if (p->inter)
        cat(buf, len, "%sinter=%s", buf[0] ? " " : "", p->inter);
}

/* ---- points.csv ------------------------------------------------------------------------- */

static void csv_field(struct ct_sbuf *b, const char *s, size_t max)
{
    size_t n = strnlen(s, max);
    if (!memchr(s, ',', n) && !memchr(s, '"', n) && !memchr(s, '\n', n) && !memchr(s, '\r', n)) {
        ct_sbuf_putn(b, s, n);
        return;
    }
    ct_sbuf_puts(b, "\"");
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '"')
            ct_sbuf_puts(b, "\"");
        ct_sbuf_putn(b, &s[i], 1);
    }
    ct_sbuf_puts(b, "\"");
}

static void csv_num(struct ct_sbuf *b, double v)
{
    if (isfinite(v))
        ct_sbuf_printf(b, ",%.6g", v);
    else
        ct_sbuf_puts(b, ",");
}

static void csv_build(struct ct_sbuf *b, const struct ct_sweep_point *pts, size_t n)
{
    ct_sbuf_puts(b, "coll,algo");
    for (int i = 0; i < CT_P_COUNT; i++)
        ct_sbuf_printf(b, ",%s", ct_param_desc((enum ct_param_id)i)->name);
    ct_sbuf_puts(b, ",intra,inter,size,count,median_us,ci_lo_us,ci_hi_us,samples,converged,"
                    "busbw_GBps,pruned\n");
    for (size_t k = 0; k < n; k++) {
        const struct ct_sweep_point *p = &pts[k];
        ct_sbuf_puts(b, ct_coll_name(p->coll));
        ct_sbuf_puts(b, ",");
        csv_field(b, p->algo, sizeof p->algo);
        for (int i = 0; i < CT_P_COUNT; i++)
            if (p->params.v[i] == CT_PARAM_OWN) /* the library's own value */
                ct_sbuf_puts(b, ",own");
            else
                ct_sbuf_printf(b, ",%llu", (unsigned long long)p->params.v[i]);
        ct_sbuf_puts(b, ",");
        if (p->params.intra)
            csv_field(b, p->params.intra, SIZE_MAX);
        ct_sbuf_puts(b, ",");
        if (p->params.inter)
            csv_field(b, p->params.inter, SIZE_MAX);
        ct_sbuf_printf(b, ",%llu,%llu", (unsigned long long)p->size, (unsigned long long)p->count);
        csv_num(b, p->st.median);
        csv_num(b, p->st.lo);
        csv_num(b, p->st.hi);
        ct_sbuf_printf(b, ",%d,%d", p->st.n, p->st.converged ? 1 : 0);
        csv_num(b, p->busbw);
        ct_sbuf_printf(b, ",%d\n", p->pruned ? 1 : 0);
    }
}

/* ---- per-collective data ---------------------------------------------------------------- */

/* Is a better than b at the same (collective, algorithm, size)? Lower finite median wins. */
static bool better(const struct ct_sweep_point *a, const struct ct_sweep_point *b)
{
    bool fa = isfinite(a->st.median), fb = isfinite(b->st.median);
    if (fa != fb)
        return fa;
    if (fa && a->st.median != b->st.median)
        return a->st.median < b->st.median;
    bool ba = isfinite(a->busbw), bb = isfinite(b->busbw);
    if (ba != bb)
        return ba;
    if (ba && a->busbw != b->busbw)
        return a->busbw > b->busbw;
    return !a->pruned && b->pruned;
}

struct ref {
    const struct ct_sweep_point *p;
    int algo;
    size_t idx;
};

static int ref_cmp(const void *x, const void *y)
{
    const struct ref *a = x, *b = y;
    if (a->algo != b->algo)
        return a->algo < b->algo ? -1 : 1;
    if (a->p->size != b->p->size)
        return a->p->size < b->p->size ? -1 : 1;
    return a->idx < b->idx ? -1 : a->idx > b->idx;
}

/* One algorithm's curve in one collective: the best point per size. */
struct curve {
    int algo;
    const struct ct_sweep_point **best;
    struct ct_svg_point *sp;
    int n;
};

struct coll_data {
    enum ct_coll coll;
    struct curve *curves;
    int ncurves;
    uint64_t *sizes; /* distinct sizes, ascending */
    int nsizes;
    const struct ct_ruleset *rs; /* first ruleset of the collective, or NULL */
};

static void point_tip(char *buf, size_t len, const char *algo, const struct ct_sweep_point *p)
{
    char sz[32], med[32], lo[32], hi[32], bw[32], par[200];
    ct_svg_fmt_bytes(sz, sizeof sz, (double)p->size);
    fmt_us(med, sizeof med, p->st.median);
    fmt_us(lo, sizeof lo, p->st.lo);
    fmt_us(hi, sizeof hi, p->st.hi);
    fmt_bw(bw, sizeof bw, p->busbw);
    params_str(par, sizeof par, algo, &p->params);
    buf[0] = '\0';
    cat(buf, len,
        "%s" MIDDOT "%s" MIDDOT "median %s \xc2\xb5s (95%% CI %s\xe2\x80\x93%s, %d "
        "samples)" MIDDOT "%s GB/s%s%s%s%s",
        algo, sz, med, lo, hi, p->st.n, bw, par[0] ? MIDDOT : "", par,
        p->pruned ? MIDDOT "pruned" : "", p->st.converged ? "" : MIDDOT "not converged");
}

static void curve_add_point(struct curve *cv, const struct algos *al,
                            const struct ct_sweep_point *p)
{
    cv->best[cv->n] = p;
    struct ct_svg_point *s = &cv->sp[cv->n++];
    s->size = (double)p->size;
    s->bw = p->busbw;
    s->bw_lo = NAN;
    s->bw_hi = NAN;
    double m = p->st.median;
    if (isfinite(m) && m > 0 && isfinite(p->busbw) && p->st.lo > 0 && p->st.hi > 0) {
        s->bw_lo = p->busbw * m / p->st.hi; /* slower end of the CI -> lower bandwidth */
        s->bw_hi = p->busbw * m / p->st.lo;
    }
    s->hollow = p->pruned;
    point_tip(s->tip, sizeof s->tip, al->v[cv->algo].s, p);
}

static void coll_data_build(struct coll_data *cd, enum ct_coll c, const struct ct_config *cfg,
                            const struct algos *al, const struct ct_sweep_point *pts, size_t n)
{
    memset(cd, 0, sizeof *cd);
    cd->coll = c;
    for (int i = 0; cfg && cfg->sets && i < cfg->nsets && !cd->rs; i++)
        if (cfg->sets[i].coll == c)
            cd->rs = &cfg->sets[i];
    size_t nr = 0;
    for (size_t k = 0; k < n; k++)
        nr += pts[k].coll == c;
    if (!nr)
        return;
    struct ref *refs = ct_xcalloc(nr, sizeof *refs);
    nr = 0;
    for (size_t k = 0; k < n; k++)
        if (pts[k].coll == c)
            refs[nr++] = (struct ref){&pts[k], algos_find(al, PT_NAME(&pts[k]).s), k};
    qsort(refs, nr, sizeof *refs, ref_cmp);

    cd->curves = ct_xcalloc(nr, sizeof *cd->curves);
    cd->sizes = ct_xcalloc(nr, sizeof *cd->sizes);
    for (size_t i = 0; i < nr;) {
        size_t j = i;
        while (j < nr && refs[j].algo == refs[i].algo)
            j++;
        struct curve *cv = &cd->curves[cd->ncurves++];
        cv->algo = refs[i].algo;
        cv->best = ct_xcalloc(j - i, sizeof *cv->best);
        cv->sp = ct_xcalloc(j - i, sizeof *cv->sp);
        for (size_t k = i; k < j;) {
            const struct ct_sweep_point *best = refs[k].p;
            size_t e = k;
            for (; e < j && refs[e].p->size == refs[k].p->size; e++)
                if (better(refs[e].p, best))
                    best = refs[e].p;
            curve_add_point(cv, al, best);
            k = e;
        }
        i = j;
    }
    for (size_t i = 0; i < nr; i++)
        cd->sizes[i] = refs[i].p->size;
    free(refs);
    /* distinct sizes */
    for (size_t i = 1; i < nr; i++)
        for (size_t j = i; j > 0 && cd->sizes[j] < cd->sizes[j - 1]; j--) {
            uint64_t t = cd->sizes[j];
            cd->sizes[j] = cd->sizes[j - 1];
            cd->sizes[j - 1] = t;
        }
    for (size_t i = 0; i < nr; i++)
        if (!cd->nsizes || cd->sizes[cd->nsizes - 1] != cd->sizes[i])
            cd->sizes[cd->nsizes++] = cd->sizes[i];
}

static void coll_data_release(struct coll_data *cd)
{
    for (int i = 0; i < cd->ncurves; i++) {
        free(cd->curves[i].best);
        free(cd->curves[i].sp);
    }
    free(cd->curves);
    free(cd->sizes);
}

static const struct ct_sweep_point *curve_at(const struct curve *cv, uint64_t size)
{
    for (int i = 0; i < cv->n; i++)
        if (cv->best[i]->size == size)
            return cv->best[i];
    return NULL;
}

static const struct ct_rule *rule_at(const struct ct_ruleset *rs, uint64_t size)
{
    for (int i = 0; rs && rs->rules && i < rs->nrules; i++) {
        const struct ct_rule *r = &rs->rules[i];
        if (size >= r->min_bytes && (r->max_bytes == CT_BYTES_INF || size < r->max_bytes))
            return r;
    }
    return NULL;
}

static int nrules(const struct ct_ruleset *rs)
{
    return rs && rs->rules && rs->nrules > 0 ? rs->nrules : 0;
}

/* ---- HTML ------------------------------------------------------------------------------- */

static const char css[] =
    "body{font-family:system-ui,-apple-system,'Segoe UI',Roboto,'DejaVu Sans',sans-serif;"
    "margin:0;background:#f4f5f7;color:#1a1a1a;line-height:1.4}\n"
    "main{max-width:1200px;margin:0 auto;padding:16px 24px 48px}\n"
    "h1{font-size:26px;margin:8px 0 2px}\n"
    "h2{font-size:21px;margin:32px 0 8px;padding-bottom:4px;border-bottom:2px solid #d5d8de}\n"
    "h3{font-size:15px;margin:18px 0 6px}\n"
    ".meta,.note{color:#555;font-size:13px}\n"
    ".warn{background:#fff3cd;border:1px solid #e0c36a;padding:8px 12px;border-radius:4px}\n"
    ".empty{background:#fff;border:1px dashed #bbb;padding:16px;border-radius:6px;"
    "font-size:16px}\n"
    ".grid{display:grid;grid-template-columns:1fr 1fr;gap:16px;margin-top:12px}\n"
    ".card{background:#fff;border:1px solid #dcdfe4;border-radius:6px;padding:10px 14px}\n"
    ".stats{display:flex;flex-wrap:wrap;gap:10px;margin:12px 0}\n"
    ".stat{background:#fff;border:1px solid #dcdfe4;border-radius:6px;padding:6px 14px}\n"
    ".stat b{display:block;font-size:20px}\n"
    ".stat span{font-size:12px;color:#555}\n"
    "nav{margin:10px 0;font-size:14px}\nnav a{margin-right:14px}\n"
    "table{border-collapse:collapse;font-size:13px;width:100%;background:#fff}\n"
    "th,td{border-bottom:1px solid #e6e8eb;padding:4px 8px;text-align:left;vertical-align:top}\n"
    "th{background:#eef0f3;font-weight:600}\n"
    "td.num,th.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}\n"
    "table.kv th{width:38%;background:none;color:#444}\n"
    "code{font-family:'DejaVu Sans Mono',Menlo,Consolas,monospace;font-size:12px}\n"
    ".sw{display:inline-block;width:11px;height:11px;border-radius:2px;margin-right:6px;"
    "vertical-align:-1px}\n"
    "svg.plot{display:block;background:#fff;border:1px solid #dcdfe4;border-radius:6px;"
    "margin:8px 0}\n"
    ".tie{color:#9a5a00;font-weight:600}\n.bad{color:#b00020;font-weight:600}\n"
    ".dim{color:#777}\n";

static void esc_name(struct ct_sbuf *h, const char *s)
{
    ct_sbuf_esc(h, s);
}

static void swatch(struct ct_sbuf *h, const struct algos *al, const char *name)
{
    int i = algos_find(al, name);
    ct_sbuf_printf(h, "<span class=\"sw\" style=\"background:%s\"></span>",
                   i >= 0 ? ct_svg_color(i) : "#ccc");
    esc_name(h, name);
}

static void kv_str(struct ct_sbuf *h, const char *k, const char *v, size_t max)
{
    ct_sbuf_printf(h, "<tr><th>%s</th><td>", k);
    if (v && *v)
        ct_sbuf_escn(h, v, max);
    else
        ct_sbuf_puts(h, "<span class=\"dim\">unknown</span>");
    ct_sbuf_puts(h, "</td></tr>\n");
}

static void kv_fmt(struct ct_sbuf *h, const char *k, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void kv_fmt(struct ct_sbuf *h, const char *k, const char *fmt, ...)
{
    char v[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(v, sizeof v, fmt, ap);
    va_end(ap);
    ct_sbuf_printf(h, "<tr><th>%s</th><td>", k);
    ct_sbuf_esc(h, v);
    ct_sbuf_puts(h, "</td></tr>\n");
}

static void html_context(struct ct_sbuf *h, const struct ct_config *cfg)
{
    const struct ct_fingerprint *fp = &cfg->fp;
    const struct ct_sweep_settings *sw = &cfg->sweep;
    const char *verb = sw->predicted[0] ? "priced" : "measured";
    ct_sbuf_puts(h, "<div class=\"grid\">\n<div class=\"card\"><h3>Cluster fingerprint</h3>"
                    "<table class=\"kv\">\n");
    kv_fmt(h, "Hosts", "%d", fp->hosts);
    kv_fmt(h, "Ranks per host", "%d", fp->ranks_per_host);
    kv_fmt(h, "Ranks", "%d", fp->nranks);
    kv_str(h, "Rank 0 host", fp->host, sizeof fp->host);
    kv_str(h, "Transport", fp->transport, sizeof fp->transport);
    if (fp->mem[0])
        kv_fmt(h, "Memory", "%s, %s", fp->mem, ct_native_mem_words(fp->mem, fp->hosts <= 1));
    kv_str(h, "Link classes", fp->link_classes, sizeof fp->link_classes);
    kv_str(h, "NIC kinds", fp->nic_kinds, sizeof fp->nic_kinds);
    if (fp->nic_gbps > 0 && isfinite(fp->nic_gbps))
        kv_fmt(h, "NICs per host", "%d \xc3\x97 %g Gb/s", fp->nics_per_host, fp->nic_gbps);
    else
        kv_fmt(h, "NICs per host", "%d (rate unknown)", fp->nics_per_host);
    if (fp->gpu_model[0])
        kv_str(h, "GPU model", fp->gpu_model, sizeof fp->gpu_model);
    else
        kv_fmt(h, "GPU model", "none");
    ct_sbuf_puts(h, "</table></div>\n<div class=\"card\"><h3>Sweep settings</h3>"
                    "<table class=\"kv\">\n");
    char lo[32], hi[32];
    ct_svg_fmt_bytes(lo, sizeof lo, (double)sw->minbytes);
    ct_svg_fmt_bytes(hi, sizeof hi, (double)sw->maxbytes);
    if (sw->maxbytes)
        kv_fmt(h, "Message sizes", "%s \xe2\x80\x93 %s, \xc3\x97%g per step", lo, hi,
               sw->stepfactor);
    else
        kv_str(h, "Message sizes", "", 0);
    if (sw->budget_s > 0)
        kv_fmt(h, "Budget", "%g s for the whole sweep", sw->budget_s);
    else
        kv_fmt(h, "Budget", "none");
    if (sw->predicted[0])
        kv_fmt(h, "PREDICTED",
               "priced by colltune model for %s, not measured; check it with sweep --verify "
               "on the cluster it predicts",
               sw->predicted);
    else if (sw->elapsed_s > 0)
        kv_fmt(h, "Time measuring", "%.1f s inside timed collective iterations of %.1f s (%.0f%%)",
               sw->measuring_s, sw->elapsed_s, 100 * sw->measuring_s / sw->elapsed_s);
    kv_fmt(h, "Tie rule", "%s",
           "where algorithms are statistically tied (the leader does not beat them beyond both "
           "intervals and the margin), the fewest ranges whose algorithm is tied or best at "
           "every size of the range, simplest algorithm first, unless another tied algorithm is "
           "faster by median at every size of the range, by half the margin or more over it; a "
           "library's own decision is no rule: its ranges are not counted, so one size where it "
           "loses does not hand the whole curve to another algorithm; a tie reports gain 1 and "
           "its confidence that it is a tie");
    kv_fmt(h, "CI target", "95%% CI of the median within %g%% of it", sw->target_ci * 100);
    kv_fmt(h, "Prune / tie margin", "%g%%", sw->margin * 100);
    kv_fmt(h, "Iterations", "%d \xe2\x80\x93 %d timed per point, %d warm-up", sw->min_iters,
           sw->max_iters, sw->warmup);
    kv_str(h, "Parameter search", sw->search, sizeof sw->search);
    if (sw->ranges)
        kv_fmt(h, "Self-check",
               "%d of %d ranges %s where --verify checks them, against every "
               "other candidate, before the config was written",
               sw->checked, sw->ranges, verb);
    kv_str(h, "Space searched", sw->space, sizeof sw->space);
    if (sw->folded[0])
        kv_fmt(h, "Same schedule as a simpler one", "%s once: %s", verb, sw->folded);
    if (sw->refused[0])
        kv_str(h, "Not measured where the engine refused them", sw->refused, sizeof sw->refused);
    char key[32];
    snprintf(key, sizeof key, "Points %s", verb);
    if (sw->full_points > 0)
        kv_fmt(h, key, "%ld, over a full cross product of %ld points (a point may be %s again)",
               sw->points, sw->full_points, verb);
    else
        kv_fmt(h, key, "%ld", sw->points);
    if (isfinite(sw->elapsed_s) && sw->elapsed_s > 0)
        kv_fmt(h, "Wall time", "%.1f s%s", sw->elapsed_s,
               sw->budget_out ? " (the budget ran out before the planner was done)" : "");
    else if (sw->budget_out)
        kv_fmt(h, "Wall time", "the budget ran out before the planner was done");
    kv_str(h, "colltune version", cfg->version, sizeof cfg->version);
    kv_str(h, "Date", cfg->date, sizeof cfg->date);
    ct_sbuf_puts(h, "</table></div>\n</div>\n");
}

/* verb: "measured", or "priced" for a sweep --model */
static void html_stats(struct ct_sbuf *h, const struct algos *al, const struct ct_sweep_point *pts,
                       size_t n, int ncolls, const char *verb)
{
    size_t pruned = 0, unconv = 0, wrong = 0;
    double spent = 0;
    for (size_t k = 0; k < n; k++) {
        pruned += pts[k].pruned;
        unconv += !pts[k].st.converged;
        wrong += pts[k].wrong > 0;
        if (isfinite(pts[k].st.spent_s) && pts[k].st.spent_s > 0)
            spent += pts[k].st.spent_s;
    }
    ct_sbuf_printf(h,
                   "<div class=\"stats\">"
                   "<div class=\"stat\"><b>%zu</b><span>points %s</span></div>"
                   "<div class=\"stat\"><b>%d</b><span>collectives</span></div>"
                   "<div class=\"stat\"><b>%d</b><span>algorithms</span></div>"
                   "<div class=\"stat\"><b>%zu</b><span>pruned (clearly losing)</span></div>"
                   "<div class=\"stat\"><b>%zu</b><span>CI target not reached</span></div>"
                   "<div class=\"stat\"><b>%.1f s</b><span>%s</span></div>",
                   n, verb, ncolls, al->n, pruned, unconv, spent,
                   strcmp(verb, "priced") ? "spent measuring" : "of predicted iterations");
    if (wrong)
        ct_sbuf_printf(h,
                       "<div class=\"stat bad\"><b>%zu</b><span>points with wrong results"
                       "</span></div>",
                       wrong);
    ct_sbuf_puts(h, "</div>\n");
}

static void html_rules(struct ct_sbuf *h, const struct algos *al, const struct ct_ruleset *rs)
{
    ct_sbuf_printf(h, "<h3>Rules: %d node%s \xc3\x97 %d rank%s per node (%d rank%s), %s %s</h3>\n",
                   rs->nnodes, rs->nnodes == 1 ? "" : "s", rs->ranks_per_node,
                   rs->ranks_per_node == 1 ? "" : "s", rs->nranks, rs->nranks == 1 ? "" : "s",
                   ct_dtype_name(rs->dtype), ct_ruleset_op_name(rs));
    if (!nrules(rs)) {
        ct_sbuf_puts(h, "<p class=\"note\">No rules.</p>\n");
        return;
    }
    ct_sbuf_puts(h, "<table class=\"rules\"><tr><th>Message size</th><th>Bytes</th>"
                    "<th>Algorithm</th><th>Parameters</th><th class=\"num\">Confidence</th>"
                    "<th>Tie</th><th>Runner-up</th><th class=\"num\">Gain</th></tr>\n");
    for (int i = 0; i < rs->nrules; i++) {
        const struct ct_rule *r = &rs->rules[i];
        struct name nm = name_of(r->algo, sizeof r->algo);
        struct name ru = name_of(r->runner_up, sizeof r->runner_up);
        char lo[32], hi[32], par[256];
        fmt_size(lo, sizeof lo, r->min_bytes);
        fmt_size(hi, sizeof hi, r->max_bytes);
        params_str(par, sizeof par, nm.s, &r->params);
        ct_sbuf_printf(h, "<tr><td>%s \xe2\x80\x93 %s</td><td><code>[%llu, ", lo, hi,
                       (unsigned long long)r->min_bytes);
        if (r->max_bytes == CT_BYTES_INF)
            ct_sbuf_puts(h, INFTY);
        else
            ct_sbuf_printf(h, "%llu", (unsigned long long)r->max_bytes);
        ct_sbuf_puts(h, ")</code></td><td>");
        swatch(h, al, nm.s);
        ct_sbuf_puts(h, "</td><td><code>");
        ct_sbuf_esc(h, par[0] ? par : DASH);
        ct_sbuf_puts(h, "</code></td><td class=\"num\">");
        if (isfinite(r->confidence))
            ct_sbuf_printf(h, "%.0f%%", r->confidence * 100);
        else
            ct_sbuf_puts(h, DASH);
        ct_sbuf_printf(h, "</td><td>%s</td><td>", r->tie ? "<span class=\"tie\">tie</span>" : "no");
        if (ru.s[0])
            swatch(h, al, ru.s);
        else
            ct_sbuf_puts(h, DASH);
        ct_sbuf_puts(h, "</td><td class=\"num\">");
        if (isfinite(r->gain) && r->gain > 0)
            ct_sbuf_printf(h, "\xc3\x97%.2f", r->gain);
        else
            ct_sbuf_puts(h, DASH);
        ct_sbuf_puts(h, "</td></tr>\n");
    }
    ct_sbuf_puts(h, "</table>\n");
}

static const struct curve *curve_of(const struct coll_data *cd, const struct algos *al,
                                    const char *name)
{
    int a = algos_find(al, name);
    for (int i = 0; i < cd->ncurves; i++)
        if (cd->curves[i].algo == a)
            return &cd->curves[i];
    return NULL;
}

/* Per size: the rules' choice, the parameters that won for it there, and the fastest point. */
static void html_winners(struct ct_sbuf *h, const struct algos *al, const struct coll_data *cd)
{
    ct_sbuf_puts(h, "<details><summary>Per-size details: the chosen algorithm, its best "
                    "parameters and the fastest point measured</summary>\n"
                    "<table class=\"winners\"><tr>"
                    "<th class=\"num\">Size</th><th>Chosen algorithm</th>"
                    "<th>Best parameters measured for it</th><th class=\"num\">Median (\xc2\xb5s)"
                    "</th><th class=\"num\">busbw (GB/s)</th><th>Fastest measured</th></tr>\n");
    for (int s = 0; s < cd->nsizes; s++) {
        uint64_t size = cd->sizes[s];
        const struct ct_sweep_point *fast = NULL;
        const struct curve *fast_cv = NULL;
        for (int i = 0; i < cd->ncurves; i++) {
            const struct ct_sweep_point *p = curve_at(&cd->curves[i], size);
            if (p && (!fast || better(p, fast))) {
                fast = p;
                fast_cv = &cd->curves[i];
            }
        }
        const struct ct_rule *r = rule_at(cd->rs, size);
        struct name chosen = r ? name_of(r->algo, sizeof r->algo) : al->v[fast_cv->algo];
        const struct curve *cv = curve_of(cd, al, chosen.s);
        const struct ct_sweep_point *p = cv ? curve_at(cv, size) : NULL;
        char sz[32], med[32], bw[32], par[256];
        ct_svg_fmt_bytes(sz, sizeof sz, (double)size);
        ct_sbuf_printf(h, "<tr><td class=\"num\">%s</td><td>", sz);
        swatch(h, al, chosen.s);
        if (r && r->tie)
            ct_sbuf_puts(h, " <span class=\"tie\">(tie)</span>");
        if (!r)
            ct_sbuf_puts(h, " <span class=\"dim\">(no rule)</span>");
        if (!p) {
            ct_sbuf_puts(h, "</td><td class=\"dim\">not measured at this size</td>"
                            "<td class=\"num\">" DASH "</td><td class=\"num\">" DASH "</td>");
        } else {
            params_str(par, sizeof par, chosen.s, &p->params);
            fmt_us(med, sizeof med, p->st.median);
            fmt_bw(bw, sizeof bw, p->busbw);
            ct_sbuf_puts(h, "</td><td><code>");
            ct_sbuf_esc(h, par[0] ? par : DASH);
            ct_sbuf_printf(h, "</code></td><td class=\"num\">%s</td><td class=\"num\">%s</td>", med,
                           bw);
        }
        ct_sbuf_puts(h, "<td>");
        if (fast == p)
            ct_sbuf_puts(h, "<span class=\"dim\">same</span>");
        else {
            fmt_us(med, sizeof med, fast->st.median);
            swatch(h, al, al->v[fast_cv->algo].s);
            ct_sbuf_printf(h, " (%s \xc2\xb5s)", med);
        }
        ct_sbuf_puts(h, "</td></tr>\n");
    }
    ct_sbuf_puts(h, "</table>\n</details>\n");
}

/* "32K", "1M", "48.8K": a parameter value short enough for a strip cell. */
static void short_value(char *buf, size_t len, const struct ct_param_desc *d, uint64_t v)
{
    char t[32];
    if (v == CT_PARAM_OWN)
        snprintf(t, sizeof t, "own"); /* the library's own value */
    else if (!d->unit || strcmp(d->unit, "bytes"))
        snprintf(t, sizeof t, "%llu", (unsigned long long)v);
    else
        ct_svg_fmt_bytes(t, sizeof t, (double)v);
    size_t o = 0;
    for (const char *c = t; *c && o + 1 < len; c++)
        if (*c != ' ' && *c != 'i' && *c != 'B')
            buf[o++] = *c;
    buf[o] = '\0';
}

/* Strip columns: per positive size, the rules' choice and its best measured parameters. */
static void strip_build(struct ct_svg_strip *st, struct ct_svg_strip_col *cols, char *note,
                        size_t note_len, const struct algos *al, const struct coll_data *cd)
{
    memset(st, 0, sizeof *st);
    unsigned mask = 0;
    bool intra = false, inter = false;
    const struct ct_sweep_point **win = ct_xcalloc((size_t)cd->nsizes + 1, sizeof *win);
    for (int s = 0; s < cd->nsizes; s++) {
        if (!cd->sizes[s])
            continue;
        struct ct_svg_strip_col *c = &cols[st->ncols];
        const struct ct_rule *r = rule_at(cd->rs, cd->sizes[s]);
        const struct curve *cv = NULL;
        struct name chosen = {""};
        if (r) {
            chosen = name_of(r->algo, sizeof r->algo);
            cv = curve_of(cd, al, chosen.s);
        } else { /* no rule: the fastest measured */
            const struct ct_sweep_point *best = NULL;
            for (int i = 0; i < cd->ncurves; i++) {
                const struct ct_sweep_point *p = curve_at(&cd->curves[i], cd->sizes[s]);
                if (p && (!best || better(p, best))) {
                    best = p;
                    cv = &cd->curves[i];
                }
            }
            if (cv)
                chosen = al->v[cv->algo];
        }
        const struct ct_sweep_point *p = cv ? curve_at(cv, cd->sizes[s]) : NULL;
        memset(c, 0, sizeof *c);
        c->size = (double)cd->sizes[s];
        c->style = chosen.s[0] ? algos_find(al, chosen.s) : -1;
        c->tie = r && r->tie;
        win[st->ncols++] = p;
        char sz[32], par[256] = "";
        ct_svg_fmt_bytes(sz, sizeof sz, c->size);
        if (p)
            params_str(par, sizeof par, chosen.s, &p->params);
        cat(c->tip, sizeof c->tip, "%s: %s%s%s%s", sz, chosen.s[0] ? chosen.s : "none",
            c->tie ? " (tie)" : "", p ? MIDDOT : " (not measured at this size)", par);
        if (p) {
            mask |= param_mask(chosen.s, &p->params);
            intra |= p->params.intra != NULL;
            inter |= p->params.inter != NULL;
        }
    }
    /* rows: parameters that vary; those that never change go to the note */
    note[0] = '\0';
    for (int k = 0; k < CT_P_COUNT + 2; k++) {
        const struct ct_param_desc *d = k < CT_P_COUNT ? ct_param_desc((enum ct_param_id)k) : NULL;
        if (k < CT_P_COUNT ? !(mask & CT_PBIT(k)) : k == CT_P_COUNT ? !intra : !inter)
            continue;
        int row = st->nrows;
        if (row >= CT_SVG_STRIP_ROWS)
            break;
        const char *first = NULL;
        bool varies = false;
        for (int i = 0; i < st->ncols; i++) {
            char *v = cols[i].val[row];
            const struct ct_sweep_point *p = win[i];
            v[0] = '\0';
            if (!p)
                continue;
            if (d && (param_mask(PT_NAME(p).s, &p->params) & CT_PBIT(k)))
                short_value(v, sizeof cols[i].val[row], d, p->params.v[k]);
            else if (!d)
                snprintf(v, sizeof cols[i].val[row], "%.15s",
                         k == CT_P_COUNT ? (p->params.intra ? p->params.intra : "")
                                         : (p->params.inter ? p->params.inter : ""));
            if (!v[0])
                continue;
            varies |= first && strcmp(first, v);
            if (!first)
                first = v;
        }
        const char *label = d ? d->name : k == CT_P_COUNT ? "intra" : "inter";
        if (varies) {
            st->rows[st->nrows++] = label;
        } else if (first) {
            cat(note, note_len, "%s%s=%s", note[0] ? ", " : "", label, first);
            for (int i = 0; i < st->ncols; i++)
                cols[i].val[row][0] = '\0';
        }
    }
    if (note[0])
        cat(note, note_len, " at every size");
    st->note = note[0] ? note : NULL;
    st->cols = cols;
    free(win);
}

static void html_plot(struct ct_sbuf *h, const struct algos *al, const struct coll_data *cd)
{
    const char *cname = ct_coll_name(cd->coll);
    struct ct_svg_series *ser = ct_xcalloc((size_t)cd->ncurves + 1, sizeof *ser);
    for (int i = 0; i < cd->ncurves; i++)
        ser[i] = (struct ct_svg_series){al->v[cd->curves[i].algo].s, cd->curves[i].algo,
                                        cd->curves[i].sp, cd->curves[i].n};
    int nr = nrules(cd->rs);
    struct ct_svg_band *bands = ct_xcalloc((size_t)nr + 1, sizeof *bands);
    struct ct_svg_mark *marks = ct_xcalloc((size_t)nr + 1, sizeof *marks);
    struct name *names = ct_xcalloc((size_t)nr + 1, sizeof *names);
    char(*tips)[400] = ct_xcalloc((size_t)nr + 1, sizeof *tips);
    int nmarks = 0;
    for (int i = 0; i < nr; i++) {
        const struct ct_rule *r = &cd->rs->rules[i];
        names[i] = name_of(r->algo, sizeof r->algo);
        char lo[32], hi[32], par[256], conf[32] = DASH;
        fmt_size(lo, sizeof lo, r->min_bytes);
        fmt_size(hi, sizeof hi, r->max_bytes);
        params_str(par, sizeof par, names[i].s, &r->params);
        if (isfinite(r->confidence))
            snprintf(conf, sizeof conf, "%.0f%%", r->confidence * 100);
        cat(tips[i], sizeof tips[i], "%s \xe2\x80\x93 %s: %s%s%s" MIDDOT "confidence %s%s", lo, hi,
            names[i].s, par[0] ? " " : "", par, conf, r->tie ? MIDDOT "tie" : "");
        bands[i] =
            (struct ct_svg_band){(double)r->min_bytes,
                                 r->max_bytes == CT_BYTES_INF ? INFINITY : (double)r->max_bytes,
                                 names[i].s,
                                 algos_find(al, names[i].s),
                                 r->tie,
                                 tips[i]};
        if (i > 0 && r->min_bytes > 0)
            marks[nmarks++] =
                (struct ct_svg_mark){(double)r->min_bytes, !strcmp(names[i].s, names[i - 1].s)};
    }
    char id[48], title[96];
    snprintf(id, sizeof id, "plot-%s", cname);
    snprintf(title, sizeof title, "%s: bus bandwidth vs message size", cname);
    struct ct_svg_strip strip;
    struct ct_svg_strip_col *cols = ct_xcalloc((size_t)cd->nsizes + 1, sizeof *cols);
    char note[256];
    strip_build(&strip, cols, note, sizeof note, al, cd);
    struct ct_svg_plot plot = {id, title, ser, cd->ncurves, bands, nr, marks, nmarks, &strip};
    ct_svg_size_plot(h, &plot);
    free(cols);
    free(ser);
    free(bands);
    free(marks);
    free(names);
    free(tips);
}

static void html_coll(struct ct_sbuf *h, const struct ct_config *cfg, const struct algos *al,
                      const struct coll_data *cd)
{
    const char *cname = ct_coll_name(cd->coll);
    ct_sbuf_printf(h, "<section id=\"coll-%s\">\n<h2>%s</h2>\n", cname, cname);
    if (cd->ncurves) {
        html_plot(h, al, cd);
    } else {
        ct_sbuf_puts(h, "<p class=\"empty\">No points were measured for this collective.</p>\n");
    }
    for (int i = 0; cfg && cfg->sets && i < cfg->nsets; i++)
        if (cfg->sets[i].coll == cd->coll)
            html_rules(h, al, &cfg->sets[i]);
    if (!cd->rs)
        ct_sbuf_puts(h, "<p class=\"note\">No rules were derived for this collective.</p>\n");
    if (cd->nsizes)
        html_winners(h, al, cd);
    ct_sbuf_puts(h, "</section>\n");
}

static void html_build(struct ct_sbuf *h, const struct ct_config *cfg,
                       const struct ct_sweep_point *pts, size_t n)
{
    struct algos al = {0};
    for (size_t k = 0; k < n; k++)
        algos_add(&al, PT_NAME(&pts[k]));
    for (int i = 0; cfg && cfg->sets && i < cfg->nsets; i++)
        for (int j = 0; j < nrules(&cfg->sets[i]); j++) {
            const struct ct_rule *r = &cfg->sets[i].rules[j];
            algos_add(&al, name_of(r->algo, sizeof r->algo));
        }
    algos_sort(&al);

    bool present[CT_COLL_COUNT] = {false};
    int ncolls = 0;
    for (size_t k = 0; k < n; k++)
        if ((unsigned)pts[k].coll < CT_COLL_COUNT)
            present[pts[k].coll] = true;
    for (int i = 0; cfg && cfg->sets && i < cfg->nsets; i++)
        if ((unsigned)cfg->sets[i].coll < CT_COLL_COUNT)
            present[cfg->sets[i].coll] = true;
    for (int c = 0; c < CT_COLL_COUNT; c++)
        ncolls += present[c];

    ct_sbuf_puts(h, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                    "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
                    "<title>colltune sweep report</title>\n<style>\n");
    ct_sbuf_puts(h, css);
    ct_sbuf_puts(h, "</style>\n</head>\n<body>\n<main>\n<h1>colltune sweep report</h1>\n");
    if (cfg) {
        ct_sbuf_puts(h, "<p class=\"meta\">colltune ");
        ct_sbuf_escn(h, cfg->version, sizeof cfg->version);
        if (cfg->date[0]) {
            ct_sbuf_puts(h, MIDDOT);
            ct_sbuf_escn(h, cfg->date, sizeof cfg->date);
        }
        if (cfg->fp.hosts > 0)
            ct_sbuf_printf(h, MIDDOT "%d host%s \xc3\x97 %d rank%s", cfg->fp.hosts,
                           cfg->fp.hosts == 1 ? "" : "s", cfg->fp.ranks_per_host,
                           cfg->fp.ranks_per_host == 1 ? "" : "s");
        ct_sbuf_puts(h, MIDDOT "data: <a href=\"points.csv\">points.csv</a></p>\n");
        if (cfg->partial)
            ct_sbuf_puts(h, "<p class=\"warn\"><b>Partial sweep:</b> it stopped early; the rules "
                            "cover only what was measured.</p>\n");
    }
    html_stats(h, &al, pts, n, ncolls, cfg && cfg->sweep.predicted[0] ? "priced" : "measured");
    if (ncolls) {
        ct_sbuf_puts(h, "<nav>Collectives:");
        for (int c = 0; c < CT_COLL_COUNT; c++)
            if (present[c])
                ct_sbuf_printf(h, " <a href=\"#coll-%s\">%s</a>", ct_coll_name(c), ct_coll_name(c));
        ct_sbuf_puts(h, "</nav>\n");
    }
    if (cfg)
        html_context(h, cfg);
    if (!n)
        ct_sbuf_puts(h, "<p class=\"empty\">No points were measured: this sweep has no data to "
                        "plot.</p>\n");
    else
        ct_sbuf_puts(h, "<p class=\"note\">Each line is one algorithm at its best measured "
                        "parameters per size; whiskers are the 95% confidence interval of the "
                        "median. Shaded bands show the algorithm the rules choose for each size "
                        "range (hatched: a tie, the simpler algorithm was chosen); dashed lines "
                        "mark crossovers, labelled with the threshold size. Hover a point for "
                        "its numbers.</p>\n");
    for (int c = 0; c < CT_COLL_COUNT; c++) {
        if (!present[c])
            continue;
        struct coll_data cd;
        coll_data_build(&cd, (enum ct_coll)c, cfg, &al, pts, n);
        html_coll(h, cfg, &al, &cd);
        coll_data_release(&cd);
    }
    ct_sbuf_puts(h, "</main>\n</body>\n</html>\n");
    algos_release(&al);
}

/* ---- entry point ------------------------------------------------------------------------ */

static int write_buf(const char *dir, const char *file, const struct ct_sbuf *b, struct ct_err *err)
{
    size_t dl = strlen(dir);
    size_t len = dl + strlen(file) + 2;
    char *path = ct_xmalloc(len);
    snprintf(path, len, "%s%s%s", dir, dl && dir[dl - 1] == '/' ? "" : "/", file);
    int rc = ct_file_write_atomic(path, b->len ? b->p : "", b->len, err);
    free(path);
    return rc;
}

int ct_report_write(const char *dir, const struct ct_config *cfg, const struct ct_sweep_point *pts,
                    size_t n, struct ct_err *err)
{
    if (!dir || !*dir)
        return ct_err_set(err, CT_EINVAL, "report: no output folder");
    if (n && !pts)
        return ct_err_set(err, CT_EINVAL, "report: %zu points but no point array", n);
    struct ct_sbuf b;
    ct_sbuf_init(&b);
    csv_build(&b, pts, n);
    int rc = write_buf(dir, "points.csv", &b, err);
    ct_sbuf_release(&b);
    if (rc < 0)
        return rc;
    html_build(&b, cfg, pts, n);
    rc = write_buf(dir, "report.html", &b, err);
    ct_sbuf_release(&b);
    return rc;
}
