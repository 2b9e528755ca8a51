/* SPDX-License-Identifier: MIT */
/* From a sweep's configuration and results to the tuned config (settings and rules), and
 * the checks that refuse a sweep configuration before anything runs. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "../lib/clock.h"
#include "../lib/file.h"
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

/* A sweep over a library engine's own rows: its rules are that library's measured section
 * (named by the rows' "LIB:" prefix; name and version from the engine's "Name X.Y.Z"). */
static void lib_section(struct ct_config *m, const struct ct_sweep_cfg *cfg)
{
    struct ct_librules *l = ct_xcalloc(1, sizeof *l);
    const char *first = cfg->cands[0]->name, *sp = strrchr(m->fp.transport, ' ');
    snprintf(l->library, sizeof l->library, "%.*s", (int)strcspn(first, ":"), first);
    snprintf(l->name, sizeof l->name, "%.*s",
             sp ? (int)(sp - m->fp.transport) : (int)strlen(m->fp.transport), m->fp.transport);
    snprintf(l->version, sizeof l->version, "%s", sp ? sp + 1 : "");
    for (int i = 0; i < m->nsets; i++)
        for (int k = 0; k < m->sets[i].nrules; k++) {
            struct ct_rule *r = &m->sets[i].rules[k];
            const struct ct_algo *a = ct_sweep_algo_find(cfg, r->algo);
            r->id = a ? a->lib_id : 0;
            for (int q = 0; q < CT_P_COUNT; q++) /* 0: the library's own (segment size, */
                if (!a || !(a->params & CT_PBIT(q)) || r->params.v[q] == CT_PARAM_OWN)
                    r->params.v[q] = 0; /* NCCL's channel count) */
            strip_lib(r->algo);
            strip_lib(r->runner_up);
        }
    l->sets = m->sets;
    l->nsets = m->nsets;
    m->sets = NULL;
    m->nsets = 0;
    m->libs = l;
    m->nlibs = 1;
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
    for (int c = 0; c < CT_COLL_COUNT; c++) {
        struct ct_ruleset *s = &m->sets[m->nsets];
        if (!(cfg->colls & CT_COLL_BIT(c)) ||
            ct_select_rules(res->pts, res->n, (enum ct_coll)c, cfg->margin, s, NULL) < 0)
            continue;
        s->nranks = cfg->job.shape.nranks;
        s->ranks_per_node = ct_shape_rpn(&cfg->job.shape);
        s->nnodes = s->nranks / s->ranks_per_node;
        s->dtype = cfg->job.dtype;
        s->op = c == CT_ALLREDUCE || c == CT_REDUCESCATTER ? cfg->job.op : CT_SUM;
        for (int i = 0; i < s->nrules; i++)
            s->rules[i].predicted = m->sweep.predicted[0] != 0;
        m->nsets++;
    }
    if (cfg->ncands)
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
    return 0;
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
    CT_TRY(ct_sweep_cfg_check_budget(cfg, err));
    return ct_dir_make_writable(out, "out", err);
}
