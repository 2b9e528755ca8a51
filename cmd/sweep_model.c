/* SPDX-License-Identifier: MIT */
/*
 * colltune sweep --model TOPOLOGY: the sweep's own planner, selection and outputs over the
 * model's engine (model/engine.c). The config it writes is labelled predicted in every
 * range.
 */
#include <malloc.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../lib/file.h"
#include "../model/model.h"
#include "../output/output.h"
#include "../output/sweep_out.h"
#include "../tune/config.h"
#include "../tune/job.h"
#include "cmd.h"
#include "librun.h"

void ct_model_malloc_policy(void)
{
    /* the pricer builds and frees schedules of tens of MB, one per rank it samples: keep
     * freed memory in the process rather than give it back and fault it in again (a
     * third of the time of a 16k-rank rail-ring, 1.4 -> 1.0 s): no block gets its own
     * mapping, and the heap is trimmed only above 1 GiB free. A failed setting costs only
     * that time. */
    (void)mallopt(M_MMAP_MAX, 0);
    (void)mallopt(M_TRIM_THRESHOLD, 1 << 30);
}

int ct_sweep_model_opt(struct ct_mtopo_spec *m, int which, const char *arg)
{
    long v;
    if (which == 1) {
        if (ct_parse_int(arg, 1, 1 << 24, &v))
            return ct_cmd_fail("sweep", CT_EXIT_USAGE, "bad --nodes '%s' (1..16777216)", arg);
        m->nodes = (int)v;
    } else if (which == 2) {
        m->net = arg;
    } else if (access(arg, F_OK) == 0 || strchr(arg, '/') || strstr(arg, ".json")) {
        m->file = arg; /* a topology file or a probe JSON */
    } else {
        m->node = arg; /* a preset */
    }
    return 0;
}

int ct_model_opts_moot(const struct ct_opts *o, const char *cmd, const char *who, bool all)
{
    if (o->lib || o->local)
        return ct_cmd_fail(cmd, CT_EXIT_USAGE,
                           "%s prices a topology: not with %s, which starts ranks", who,
                           o->lib ? "--lib" : "--local");
    /* the topology decides the links and the layout: these would be silently ignored */
    const char *moot = strcmp(o->transport, "auto") ? "--transport"
                       : o->torus_rows              ? "--torus"
                       : o->rails                   ? "--rails"
                                                    : NULL;
    if (moot)
        return ct_cmd_fail(cmd, CT_EXIT_USAGE,
                           "%s prices the links and layout of %s: %s does not apply "
                           "(give them in a topology file%s)",
                           who, strcmp(who, "model") ? "TOPOLOGY" : "the topology", moot,
                           o->torus_rows ? ": node.torus, as the trn1 and trn2 presets have" : "");
    /* how ranks would be connected and placed: nothing to price */
    moot = all && o->params.v[CT_P_STREAMS] > 1 ? "--streams"
           : o->sockbuf                         ? "--sockbuf"
           : o->ranks_per_node                  ? "--ranks-per-node"
           : o->hosts                           ? "--hosts"
           : o->mem && strcmp(o->mem, "host")   ? "--mem"
           : o->gpu_map                         ? "--gpu-map"
           : o->ifname || o->provider           ? "--ifname/--provider"
           : o->port_range                      ? "--port-range"
           : o->no_bind                         ? "--no-bind"
           : o->wait                            ? "--wait"
                                                : NULL;
    if (moot)
        return ct_cmd_fail(cmd, CT_EXIT_USAGE,
                           "%s prices a topology: %s is for commands that start ranks", who, moot);
    return 0;
}

int ct_sweep_opts_moot(const struct ct_opts *o, bool sweep_only, bool regret, int planner)
{
    if (o->verify && !o->lib && (planner & 2)) /* colltune's own: CONFIG's type and op too */
        return ct_cmd_fail("sweep", CT_EXIT_USAGE,
                           "-d and -o are for a sweep: --verify measures CONFIG's type and op");
    if (o->verify && o->lib && (planner & 3)) /* a library's verify: CONFIG's type and op */
        return ct_cmd_fail("sweep", CT_EXIT_USAGE,
                           "-d, -o, -w, --budget, --target-ci, --margin, --min-iters and "
                           "--max-iters are for a sweep: a library's verify runs CONFIG's type "
                           "and op in paired launches of its own (--pairs N)");
    if (o->pairs && !o->verify && !o->nenv_search)
        return ct_cmd_fail("sweep", CT_EXIT_USAGE, "%s", CT_PAIRS_FOR);
    if (o->verify && sweep_only) /* its sizes are CONFIG's; it writes beside CONFIG */
        return ct_cmd_fail("sweep", CT_EXIT_USAGE,
                           "-b, -e, -f and --out are for a sweep, not --verify");
    if (regret && (!o->verify || o->lib)) /* the native verify's bound */
        return ct_cmd_fail("sweep", CT_EXIT_USAGE,
                           "--max-regret is for sweep --verify CONFIG of colltune's own rules "
                           "(a library's verify judges 3%% beyond the interval)");
    return planner & 4 ? 0 : ct_opts_links_check(o, "sweep"); /* a model's: its links */
}

int ct_sweep_finish(const char *out, const struct ct_sweep_job *j, int rc,
                    const struct ct_err *serr, uint64_t maxbytes)
{
    struct ct_err err = {0}, none = {0};
    int code = rc == 0 ? CT_EXIT_OK : rc == CT_EVERIFY ? CT_EXIT_CHECK : CT_EXIT_FAIL;
    const struct ct_sweep_result *res = &j->res;
    int sig = ct_cmd_stop_sig();
    if (sig && rc < 0) { /* every point measured kept (fast: the launcher kills in 2 s) */
        if (ct_sweep_outputs_running(out, &j->meta, res->pts, res->n, !j->saved, &err) < 0)
            ct_cmd_fail("sweep", CT_EXIT_FAIL, "%s", err.msg);
        ct_sweep_outputs_stopped(out, 128 + sig); /* "interrupted"; the launcher says so */
        return 128 + sig;
    }
    if (rc == 0 && res->n == 0 && res->nrefused) { /* every candidate refused at every size */
        rc = ct_err_set(&none, CT_EUNSUPP, "nothing measured: %s", res->refused[0].why);
        serr = &none;
        code = CT_EXIT_USAGE; /* what was asked cannot run (under a launcher of the user's) */
    }
    /* refused before any point: the largest point's buffers do not fit this host */
    bool refused = serr == &none || (rc == CT_EUNSUPP && !res->n);
    code = refused ? CT_EXIT_USAGE : code;
    if (rc < 0)
        ct_cmd_fail("sweep", code, "%s", serr->msg);
    if (refused && !j->saved) /* nothing ran: a folder reused keeps the sweep it holds */
        return code;
    if (ct_sweep_outputs_write(out, &j->meta, res->pts, res->n, rc < 0 ? "failed" : "done",
                               rc < 0 ? serr->msg : NULL, &err) < 0)
        return ct_cmd_fail("sweep", CT_EXIT_FAIL, "%s", err.msg);
    ct_sweep_summary_print(stdout, stderr, out, &j->meta, res, rc < 0 && !refused, maxbytes);
    if (j->mem_kind[0])
        ct_mem_path_print(stdout, j->mem_kind, "batches", j->points_resident, j->points_staged,
                          j->res_why);
    return code;
}

int ct_sweep_model(const struct ct_mtopo_spec *spec, const struct ct_opts *o,
                   const struct ct_sweep_cfg *cfg, const char *out, const char *verify)
{
    struct ct_err err = {0};
    if (!spec->file && !spec->node)
        return ct_cmd_fail("sweep", CT_EXIT_USAGE, "--nodes and --net need --model TOPOLOGY");
    if (verify)
        return ct_cmd_fail("sweep", CT_EXIT_USAGE,
                           "--model prices, --verify measures: verify a predicted config "
                           "without --model, on the cluster it predicts");
    CT_TRY_OPT(ct_model_opts_moot(o, "sweep", "--model", false));
    struct ct_mtopo t;
    struct ct_backend be;
    void *ctx;
    ct_model_malloc_policy();
    if (ct_mtopo_build(spec, &t, &err) < 0 || ct_model_engine_open(&t, 0, &be, &ctx, &err) < 0)
        return ct_cmd_fail("sweep", CT_EXIT_USAGE, "%s", err.msg);
    struct ct_sweep_job j;
    memset(&j, 0, sizeof j);
    j.cfg = *cfg;
    j.cfg.job.shape = be.shape;
    if (j.cfg.budget_s < 0) /* the plan ends it, not the clock */
        j.cfg.budget_s = CT_MODEL_SWEEP_BUDGET_S;
    j.version = CT_VERSION;
    int rc = ct_sweep_cfg_check_start(&j.cfg, true, cfg->nalgos > 0, out, &err), code;
    if (rc == 0) /* model: one process, never launched */
        rc = ct_dir_make_writable(out, "out", &err) < 0 ? -1 : ct_sweep_outputs_check(out, &err);
    if (rc < 0) {
        code = ct_cmd_fail("sweep", CT_EXIT_USAGE, "%s", err.msg);
    } else {
        rc = ct_sweep_job_run_on(&j, &be, ctx, ct_shape_nodes(&be.shape), "model", t.name, &err);
        code = ct_sweep_finish(out, &j, rc, &err, cfg->maxbytes);
    }
    ct_sweep_job_release(&j);
    be.close(ctx);
    return code;
}
