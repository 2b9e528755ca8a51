/* SPDX-License-Identifier: MIT */
/*
 * The sweep over a backend: the planner (survey, tune, refine) on the root, the follower
 * loop on every other rank, and the description of the space searched.
 */
#include "sweep.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "plan.h"
#include "select.h"

/* ---- the whole plan ------------------------------------------------------------------ */

static void describe(struct ct_plan *pl)
{
    const struct ct_sweep_cfg *cfg = pl->cfg;
    struct ct_sweep_result *res = pl->run.res;
    snprintf(res->search, sizeof res->search, "survey, coordinate descent per x%.0f bucket, %s",
             CT_SWEEP_BUCKET, "refine ties, confirm, check at verify's points");
    size_t off = 0;
    res->space[0] = 0;
    for (int p = 0; p < CT_P_COUNT && off < sizeof res->space; p++) {
        uint64_t vals[9];
        const struct ct_param_desc *d = ct_param_desc((enum ct_param_id)p);
        const char *sep = off ? ", " : "";
        if (cfg->job.params.v[p]) {
            off += (size_t)snprintf(res->space + off, sizeof res->space - off, "%s%s %llu (fixed)",
                                    sep, d->name, (unsigned long long)cfg->job.params.v[p]);
            continue;
        }
        int n = ct_sweep_grid(cfg, (enum ct_param_id)p, vals);
        bool used = false, own = false;         /* by a candidate (a library's rows mostly take */
        for (int c = 0; c < CT_COLL_COUNT; c++) /* none); from the library's own value */
            for (int k = 0; pl->g[c].count && k < pl->g[c].nalgos; k++)
                if (ct_sweep_searched(cfg, (enum ct_coll)c, pl->g[c].algos[k]) & CT_PBIT(p)) {
                    used = true;
                    own = own || (pl->g[c].algos[k]->own & CT_PBIT(p));
                }
        if (n < 2 || !used)
            continue;
        if (own) {
            off += (size_t)snprintf(res->space + off, sizeof res->space - off, "%s%s own,", sep,
                                    d->name);
            sep = "";
        }
        if (p == CT_P_CHUNK)
            off += (size_t)snprintf(
                res->space + off, sizeof res->space - off, "%schunk %lluK..%lluM x4", sep,
                (unsigned long long)(vals[0] >> 10), (unsigned long long)(vals[n - 1] >> 20));
        else
            for (int i = 0; i < n && off < sizeof res->space; i++)
                off += (size_t)snprintf(res->space + off, sizeof res->space - off, "%s%s%s%llu",
                                        i ? "," : sep, i || own ? "" : d->name, i || own ? "" : " ",
                                        (unsigned long long)vals[i]);
    }
    /* candidates folded into a simpler one with the same schedule */
    size_t fo = 0;
    res->folded[0] = 0;
    for (int c = 0; c < CT_COLL_COUNT; c++) {
        struct ct_sweep_fold f[32];
        size_t nf = pl->g[c].count ? ct_sweep_folds(cfg, (enum ct_coll)c, f, 32) : 0;
        for (size_t i = 0; i < nf && i < 32 && fo < sizeof res->folded; i++) {
            if (i == 0)
                fo += (size_t)snprintf(res->folded + fo, sizeof res->folded - fo, "%s%s: ",
                                       fo ? "; " : "", ct_coll_name((enum ct_coll)c));
            if (fo < sizeof res->folded)
                fo += (size_t)snprintf(res->folded + fo, sizeof res->folded - fo, "%s%s=%s",
                                       i ? ", " : "", f[i].algo->name, f[i].same_as->name);
        }
    }
    /* the full cross product over the same sizes and candidates */
    res->full_points = 0;
    for (int c = 0; c < CT_COLL_COUNT; c++)
        for (int i = 0; pl->g[c].count && i < pl->L; i++)
            for (int k = 0; pl->g[c].count[i] && k < pl->g[c].nalgos; k++) {
                long prod = 1;
                unsigned s = ct_sweep_searched(cfg, (enum ct_coll)c, pl->g[c].algos[k]);
                for (int p = 0; p < CT_P_COUNT; p++) {
                    uint64_t vals[9];
                    if (s & CT_PBIT(p)) /* and the library's own value */
                        prod *= ct_sweep_grid(cfg, (enum ct_param_id)p, vals) +
                                !!(pl->g[c].algos[k]->own & CT_PBIT(p));
                }
                res->full_points += prod;
            }
}

static int plan_run(struct ct_plan *pl, struct ct_err *err)
{
    bool any = false;
    for (int c = 0; c < CT_COLL_COUNT; c++)
        any = any || (pl->g[c].count && pl->g[c].nalgos > 0);
    if (!any)
        return ct_err_set(err, CT_EINVAL, "no algorithm supports these collectives on %d ranks",
                          pl->cfg->job.shape.nranks);
    CT_TRY(ct_sweep_cfg_check_cover(pl->cfg, pl->cfg->algos != NULL, err)); /* launchers' shape */
    CT_TRY(ct_plan_survey(pl, err));
    if (pl->cfg->ncands && ct_plan_now(pl) < pl->cfg->budget_s)
        CT_TRY(ct_plan_confirm_library(pl, err));
    if (ct_plan_now(pl) < pl->cfg->budget_s)
        CT_TRY(ct_plan_tune(pl, err));
    if (ct_plan_now(pl) < pl->cfg->budget_s)
        CT_TRY(ct_plan_refine(pl, err));
    if (ct_plan_now(pl) < pl->cfg->budget_s)
        CT_TRY(ct_plan_confirm(pl, err));
    return ct_plan_check(pl, err); /* also counts what it reached when no time is left */
}

int ct_sweep_run(const struct ct_sweep_cfg *cfg_in, const struct ct_backend *be, void *ctx,
                 struct ct_sweep_result *res, struct ct_err *err)
{
    struct ct_sweep_cfg cfg_shaped;
    const struct ct_sweep_cfg *cfg = ct_sweep_cfg_shaped(cfg_in, be, ctx, &cfg_shaped);
    struct ct_plan pl;
    memset(&pl, 0, sizeof pl);
    memset(res, 0, sizeof *res);
    pl.cfg = cfg;
    pl.run.cfg = cfg;
    pl.run.be = be;
    pl.run.ctx = ctx;
    pl.run.res = res;
    struct ct_params p0 = cfg->job.params;
    ct_params_defaults(&p0);
    pl.run.streams = (int)p0.v[CT_P_STREAMS];
    pl.run.inflight = 1;
    int rc;
    if (be->root) {
        pl.t0 = be->now_s(ctx);
        ct_sweep_cost_init(&pl.cost);
        ct_plan_grid_build(&pl);
        describe(&pl);
        rc = plan_run(&pl, err);
        rc = ct_sweep_end(&pl.run, rc, err);
        res->elapsed_s = ct_plan_now(&pl);
        ct_plan_grid_release(&pl);
    } else {
        rc = ct_sweep_follow(&pl.run, err);
    }
    for (size_t i = 0; i < pl.run.cap && i < res->n; i++)
        free(pl.run.smp[i].x);
    free(pl.run.smp);
    if (res->n)
        ct_select_mark_pruned(res->pts, res->n, cfg->margin);
    return rc;
}
