/* SPDX-License-Identifier: MIT */
/*
 * sweep --model: the sweep's planner and selection over the model's engine choose, at every
 * size of the grid, an algorithm the model prices within the tie margin of the fastest
 * candidate at its defaults; every rule is marked predicted.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "model/model.h"
#include "tune/job.h"

Test(engine, sweep_picks_what_the_model_prices_fastest)
{
    struct ct_mtopo t;
    struct ct_err err = {0};
    cr_assert_eq(ct_mtopo_preset("dgx-h100", &t, &err), 0, "%s", err.msg);
    t.nodes = 4;
    struct ct_backend be;
    void *ctx;
    cr_assert_eq(ct_model_engine_open(&t, 0, &be, &ctx, &err), 0, "%s", err.msg);
    cr_assert_str_eq(be.predicted, "32 ranks on 4 x dgx-h100, rail-optimized fat tree 1:1");
    struct ct_sweep_job j;
    memset(&j, 0, sizeof j);
    ct_sweep_cfg_init(&j.cfg);
    j.cfg.colls = CT_COLL_BIT(CT_ALLREDUCE) | CT_COLL_BIT(CT_ALLGATHER);
    j.cfg.minbytes = 1024;
    j.cfg.maxbytes = 64u << 20;
    j.cfg.stepfactor = 4;
    j.cfg.budget_s = CT_MODEL_SWEEP_BUDGET_S;
    j.cfg.job.shape = be.shape;
    j.version = "test";
    cr_assert_eq(ct_sweep_job_run_on(&j, &be, ctx, 4, "model", t.name, &err), 0, "%s", err.msg);
    cr_assert_eq(j.meta.nsets, 2);
    cr_assert_str_eq(j.meta.sweep.predicted, be.predicted);
    struct ct_model *m = ct_model_new(&t);
    for (int s = 0; s < j.meta.nsets; s++) {
        const struct ct_ruleset *rs = &j.meta.sets[s];
        for (int i = 0; i < rs->nrules; i++)
            cr_expect(rs->rules[i].predicted, "%s rule %d not marked predicted",
                      ct_coll_name(rs->coll), i);
        for (uint64_t size = j.cfg.minbytes; size <= j.cfg.maxbytes; size *= 4) {
            const struct ct_rule *r = ct_ruleset_find(rs, size);
            cr_assert(r);
            struct ct_model_cost c;
            cr_assert(ct_algo_find(r->algo), "unknown algorithm '%s' in the config", r->algo);
            cr_assert_eq(ct_model_price_size(m, ct_algo_find(r->algo), rs->coll, CT_FLOAT32,
                                             CT_SUM, &r->params, 0, size, &c, &err),
                         0, "%s", err.msg);
            double best = c.time_us;
            const char *who = r->algo;
            for (size_t a = 0; ct_algo_at(a); a++) {
                struct ct_model_cost d;
                if (ct_model_price_size(m, ct_algo_at(a), rs->coll, CT_FLOAT32, CT_SUM, NULL, 0,
                                        size, &d, &err) == 0 &&
                    d.time_us < best) {
                    best = d.time_us;
                    who = ct_algo_at(a)->name;
                }
            }
            cr_expect(c.time_us <= best * (1 + j.cfg.margin) * (1 + 1e-9),
                      "%s at %llu B: config chose %s (%.3f us), the model prices %s at %.3f us",
                      ct_coll_name(rs->coll), (unsigned long long)size, r->algo, c.time_us, who,
                      best);
        }
    }
    ct_model_free(m);
    ct_sweep_job_release(&j);
    be.close(ctx);
}

/* A model whose JSON cannot be written fails alone, and hands back nothing to free (its rows
 * and ranges leaked on a full disk: LeakSanitizer, `model --json /dev/full`). */
Test(engine, a_model_whose_json_cannot_be_written_keeps_nothing)
{
    struct ct_model_req q;
    memset(&q, 0, sizeof q);
    q.topo.node = "dgx-h100";
    q.coll = CT_ALLREDUCE;
    q.dtype = CT_FLOAT32;
    q.op = CT_SUM;
    ct_params_defaults(&q.params);
    q.minb = 8;
    q.maxb = 64;
    q.factor = 2;
    q.json = "/dev/full";
    struct ct_model_result r;
    struct ct_err err = {0};
    cr_assert_lt(ct_model_run(&q, &r, &err), 0);
    cr_expect(strstr(err.msg, "cannot write '/dev/full'"), "%s", err.msg);
    cr_expect_null(r.rows);
    cr_expect_null(r.ranges);
    ct_model_result_release(&r);
}
