/* SPDX-License-Identifier: MIT */
/* From a sweep's configuration and results to the tuned config (settings and rules), and
 * the checks that refuse a sweep configuration before anything runs. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "../lib/clock.h"
#include "../lib/file.h"
#include "../lib/parse.h"
#include "select.h"

void ct_sweep_meta_init(struct ct_config *m, const struct ct_sweep_cfg *cfg, const char *version,
                        int hosts, const char *transport, const char *host)
{
    ct_config_init(m);
    snprintf(m->version, sizeof m->version, "%s", version);
    ct_utc_iso(m->date, sizeof m->date);
    m->fp.hosts = hosts;
    m->fp.nranks = cfg->job.shape.nranks;
    m->fp.ranks_per_host = ct_shape_rpn(&cfg->job.shape);
    snprintf(m->fp.transport, sizeof m->fp.transport, "%s", transport);
    snprintf(m->fp.link_classes, sizeof m->fp.link_classes, "%s", transport);
    snprintf(m->fp.host, sizeof m->fp.host, "%s", host);
    ct_sweep_settings_fill(&m->sweep, cfg);
}

void ct_sweep_settings_fill(struct ct_sweep_settings *s, const struct ct_sweep_cfg *cfg)
{
    s->minbytes = cfg->minbytes;
    s->maxbytes = cfg->maxbytes;
    s->stepfactor = cfg->stepfactor;
    s->budget_s = cfg->budget_s;
    s->target_ci = cfg->target_ci;
    s->margin = cfg->margin;
    s->warmup = cfg->warmup;
    s->min_iters = cfg->min_iters;
    s->max_iters = cfg->max_iters;
    s->dtype = cfg->job.dtype;
    s->op = cfg->job.op;
}

/* "ompi:ring" -> "ring" */
static void strip_lib(char *name)
{
    char *colon = strchr(name, ':');
    if (colon)
        memmove(name, colon + 1, strlen(colon + 1) + 1);
}

/* A library row a's parameters as its section records them: 0 for the library's own (a
 * segment size, NCCL's channel count) and for one a does not take. */
static void lib_params(const struct ct_algo *a, struct ct_params *p)
{
    for (int q = 0; q < CT_P_COUNT; q++)
        if (!a || !(a->params & CT_PBIT(q)) || p->v[q] == CT_PARAM_OWN)
            p->v[q] = 0;
}

/* A sweep over a library engine's own rows: its rules are that library's measured section
 * (named by the rows' "LIB:" prefix; name and version from the engine's "Name X.Y.Z"). */
static void lib_section(struct ct_config *m, const struct ct_sweep_cfg *cfg)
{
    if (!m->nsets) /* nothing measured (rows the library could not run): no section */
        return;
    struct ct_librules *l = ct_xcalloc(1, sizeof *l);
    const char *first = cfg->cands[0]->name, *sp = strrchr(m->fp.transport, ' ');
    snprintf(l->library, sizeof l->library, "%.*s", (int)strcspn(first, ":"), first);
    snprintf(l->name, sizeof l->name, "%.*s",
             sp ? (int)(sp - m->fp.transport) : (int)strlen(m->fp.transport), m->fp.transport);
    snprintf(l->version, sizeof l->version, "%s", sp ? sp + 1 : "");
    l->nenv = cfg->nlib_env < CT_LIB_ENV_MAX ? cfg->nlib_env : CT_LIB_ENV_MAX;
    if (l->nenv)
        memcpy(l->env, cfg->lib_env, (size_t)l->nenv * sizeof *l->env);
    const struct ct_algo *a;
    for (int i = 0; i < m->nsets; i++) /* the rows each range may name */
        for (int k = 0; (a = ct_sweep_algo_at(cfg, k)) && m->sets[i].nlib_rows < CT_LIB_ROWS; k++)
            if (a->colls & CT_COLL_BIT(m->sets[i].coll)) {
                struct ct_lib_row *w = &m->sets[i].lib_rows[m->sets[i].nlib_rows++];
                snprintf(w->name, sizeof w->name, "%s", a->name);
                strip_lib(w->name);
                w->id = a->lib_id;
            }
    for (int i = 0; i < m->nsets; i++)
        for (int k = 0; k < m->sets[i].nrules; k++) {
            struct ct_rule *r = &m->sets[i].rules[k];
            const struct ct_algo *a = ct_sweep_algo_find(cfg, m->sets[i].coll, r->algo);
            r->id = a ? a->lib_id : 0;
            lib_params(a, &r->params);
            strip_lib(r->algo);
            strip_lib(r->runner_up);
            int n = 0; /* the ties with the library's rows (not one that ran its own choice) */
            for (int t = 0; t < r->nties; t++) {
                const struct ct_algo *ta =
                    ct_sweep_algo_find(cfg, m->sets[i].coll, r->ties[t].algo);
                if (!ta || ta->lib_id <= 0)
                    continue;
                r->ties[n] = r->ties[t];
                r->ties[n].id = ta->lib_id;
                lib_params(ta, &r->ties[n].params);
                strip_lib(r->ties[n++].algo);
            }
            r->nties = n;
            for (int t = 0; t < r->ntied; t++)
                strip_lib(r->tied[t]);
        }
    l->sets = m->sets;
    l->nsets = m->nsets;
    m->sets = NULL;
    m->nsets = 0;
    m->libs = l;
    m->nlibs = 1;
}

/* The candidate to take over sizes above `from`, where the rule before cannot run: of the
 * algorithms of s's collective that run at every size, the fastest at the largest size one
 * of them was measured at; none measured, the simplest candidate that runs there. */
static bool tail_choice(const struct ct_sweep_cfg *cfg, const struct ct_sweep_point *pts, size_t n,
                        const struct ct_ruleset *s, struct ct_rule *out)
{
    const struct ct_sweep_point *best = NULL;
    for (size_t i = 0; i < n; i++) {
        const struct ct_sweep_point *p = &pts[i];
        const struct ct_algo *a = ct_sweep_algo_find(cfg, p->coll, p->algo);
        if (p->coll != s->coll || p->wrong || p->st.n == 0 || p->own_choice || !a ||
            (best && (p->size < best->size ||
                      (p->size == best->size && p->st.median >= best->st.median))) ||
            ct_sweep_support_top(cfg, s->coll, a, &p->params, NULL) != UINT64_MAX)
            continue;
        best = p;
    }
    memset(out, 0, sizeof *out);
    out->confidence = 1.0;
    if (best) {
        snprintf(out->algo, sizeof out->algo, "%s", best->algo);
        out->params = best->params;
        return true;
    }
    const struct ct_algo *as[64];
    size_t na = ct_sweep_algos(cfg, s->coll, as, 64);
    for (size_t k = 0; k < na && k < 64; k++)
        if (ct_sweep_support_top(cfg, s->coll, as[k], NULL, NULL) == UINT64_MAX) {
            snprintf(out->algo, sizeof out->algo, "%s", as[k]->name);
            return true;
        }
    return false;
}

void ct_sweep_rules_fit(const struct ct_sweep_cfg *cfg, const struct ct_sweep_point *pts, size_t n,
                        struct ct_ruleset *s)
{
    for (int i = 0; i < s->nrules; i++) {
        struct ct_rule *r = &s->rules[i];
        const struct ct_algo *a = ct_sweep_algo_find(cfg, s->coll, r->algo);
        uint64_t top = a ? ct_sweep_support_top(cfg, s->coll, a, &r->params, NULL) : UINT64_MAX;
        if (top == UINT64_MAX || top < r->min_bytes ||
            (r->max_bytes != CT_BYTES_INF && r->max_bytes <= top + 1))
            continue; /* below its range: it was measured inside it, so never */
        struct ct_rule tail;
        if (i + 1 == s->nrules) {
            if (!tail_choice(cfg, pts, n, s, &tail))
                continue; /* nothing runs there: refused before the sweep (cover check) */
            s->rules = ct_xrealloc(s->rules, sizeof *s->rules * (size_t)(s->nrules + 1));
            r = &s->rules[i];
            tail.min_bytes = top + 1;
            tail.max_bytes = CT_BYTES_INF;
            tail.predicted = r->predicted;
            s->rules[s->nrules++] = tail;
        } else {
            struct ct_rule *next = &s->rules[i + 1];
            for (int t = 0; t < next->nties; t++)
                if (next->ties[t].min_bytes == next->min_bytes)
                    next->ties[t].min_bytes = top + 1;
            next->min_bytes = top + 1;
        }
        r->max_bytes = top + 1;
        ct_rule_clip_ties(r);
    }
}

int ct_sweep_cfg_check_cover(const struct ct_sweep_cfg *cfg, bool selected, struct ct_err *err)
{
    for (int c = 0; c < CT_COLL_COUNT; c++) {
        if (!(cfg->colls & CT_COLL_BIT(c)))
            continue;
        const struct ct_algo *as[64], *widest = NULL;
        size_t na = ct_sweep_algos(cfg, (enum ct_coll)c, as, 64);
        uint64_t top = 0;
        for (size_t k = 0; k < na && k < 64 && top != UINT64_MAX; k++) {
            uint64_t t = ct_sweep_support_top(cfg, (enum ct_coll)c, as[k], NULL, NULL);
            if (!widest || t > top) {
                top = t;
                widest = as[k];
            }
        }
        if (!widest || top == UINT64_MAX)
            continue;
        struct ct_err why = {0};
        char b[32];
        ct_sweep_support_top(cfg, (enum ct_coll)c, widest, NULL, &why);
        return ct_err_set(err, CT_EINVAL,
                          "no %salgorithm runs %s above %s on %d ranks (%s), and a tuned config "
                          "covers every size: add one that does to --algos",
                          selected ? "selected " : "", ct_coll_name((enum ct_coll)c),
                          ct_bytes_str(top, b, sizeof b), cfg->job.shape.nranks, why.msg);
    }
    return 0;
}

void ct_sweep_config_build(struct ct_config *m, const struct ct_sweep_cfg *cfg,
                           const struct ct_sweep_result *res, bool partial)
{
    m->partial = partial;
    m->sweep.points = (long)res->n;
    m->sweep.full_points = res->full_points;
    m->sweep.elapsed_s = res->elapsed_s;
    m->sweep.measuring_s = res->measuring_s;
    m->sweep.timing_s = res->timing_s;
    m->sweep.checking_s = res->checking_s;
    m->sweep.budget_out = res->budget_out;
    m->sweep.checked = res->checked;
    m->sweep.ranges = res->ranges;
    snprintf(m->sweep.search, sizeof m->sweep.search, "%s", res->search);
    snprintf(m->sweep.space, sizeof m->sweep.space, "%s", res->space);
    snprintf(m->sweep.folded, sizeof m->sweep.folded, "%s", res->folded);
    size_t ro = 0;
    m->sweep.refused[0] = 0;
    for (int i = 0; i < res->nrefused && ro < sizeof m->sweep.refused; i++)
        ro += (size_t)snprintf(m->sweep.refused + ro, sizeof m->sweep.refused - ro,
                               "%s%s (at %d size%s%s)", i ? "; " : "", res->refused[i].why,
                               res->refused[i].n, res->refused[i].n == 1 ? "" : "s",
                               res->refused[i].varied ? "; the first size's reason, others differ"
                                                      : "");
    m->sets = ct_xcalloc(CT_COLL_COUNT, sizeof *m->sets);
    /* a sweep that stopped early tunes nothing: its ranges would run past the sizes it reached
     * (a config covers every size), each size above them "only candidate, confidence 1.00" of
     * nothing measured; its points are kept (results.json) */
    for (int c = 0; c < CT_COLL_COUNT && !partial; c++) {
        struct ct_ruleset *s = &m->sets[m->nsets];
        if (!(cfg->colls & CT_COLL_BIT(c)) ||
            ct_select_rules(res->pts, res->n, (enum ct_coll)c, cfg->margin, s, NULL) < 0)
            continue;
        ct_sweep_rules_fit(cfg, res->pts, res->n, s);
        s->nranks = cfg->job.shape.nranks;
        s->ranks_per_node = ct_shape_rpn(&cfg->job.shape);
        s->nnodes = s->nranks / s->ranks_per_node;
        s->dtype = cfg->job.dtype;
        s->op = c == CT_ALLREDUCE || c == CT_REDUCESCATTER ? cfg->job.op : CT_SUM;
        for (int i = 0; i < s->nrules; i++)
            s->rules[i].predicted = m->sweep.predicted[0] != 0;
        m->nsets++;
    }
    if (cfg->ncands && !partial)
        lib_section(m, cfg);
}

int ct_sweep_cfg_check(const struct ct_sweep_cfg *cfg, struct ct_err *err)
{
    size_t es = ct_dtype_size(cfg->job.dtype);
    unsigned long long lo = cfg->minbytes, hi = cfg->maxbytes;
    if (lo > hi)
        return ct_err_set(err, CT_EINVAL, "--minbytes %llu is larger than --maxbytes %llu", lo,
                          hi);
    if (hi > (1ull << 40))
        return ct_err_set(err, CT_EINVAL, "--maxbytes %llu is beyond 1 TiB", hi);
    if (lo < es || lo % es || hi % es)
        return ct_err_set(err, CT_EINVAL, "sizes must be positive multiples of the %s size (%zu bytes)",
                          ct_dtype_name(cfg->job.dtype), es);
    if (cfg->min_iters > cfg->max_iters)
        return ct_err_set(err, CT_EINVAL, "--min-iters %d is above --max-iters %d", cfg->min_iters,
                          cfg->max_iters);
    /* --algos narrowed to algorithms that read neither: --torus or --rails would be ignored */
    return cfg->nalgos ? ct_algo_shape_opts(cfg->algos, cfg->nalgos, cfg->job.shape.torus_rows > 0,
                                            cfg->job.shape.rails > 0, &cfg->job.params, err)
                       : 0;
}

int ct_sweep_cfg_check_budget(const struct ct_sweep_cfg *cfg, struct ct_err *err)
{
    double need = ct_sweep_min_budget(cfg);
    if (cfg->budget_s < need)
        return ct_err_set(err, CT_EINVAL,
                          "a budget of %g s is too small to measure one point of each "
                          "collective (needs about %.2g s)",
                          cfg->budget_s, need);
    return 0;
}

int ct_sweep_cfg_check_shape(const struct ct_sweep_cfg *cfg, bool selected, struct ct_err *err)
{
    for (int c = 0; c < CT_COLL_COUNT; c++)
        if ((cfg->colls & CT_COLL_BIT(c)) && !ct_sweep_algos(cfg, (enum ct_coll)c, NULL, 0))
            return ct_err_set(err, CT_EINVAL, "no %salgorithm supports %s on %d ranks",
                              selected ? "selected " : "", ct_coll_name((enum ct_coll)c),
                              cfg->job.shape.nranks);
    return 0;
}

int ct_sweep_cfg_check_start(const struct ct_sweep_cfg *cfg, bool shape_known, bool selected,
                             const char *out, struct ct_err *err)
{
    if (shape_known)
        CT_TRY(ct_sweep_cfg_check_shape(cfg, selected, err));
    if (!out)
        return 0;
    if (shape_known)
        CT_TRY(ct_sweep_cfg_check_cover(cfg, selected, err));
    return ct_sweep_cfg_check_budget(cfg, err);
}
