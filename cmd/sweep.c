/* SPDX-License-Identifier: MIT */
/*
 * colltune sweep: measure every candidate algorithm and parameter across sizes within a
 * budget, select the crossovers, write results, tuned config and report; or, with
 * --verify CONFIG, re-measure a config's choices and report their regret.
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../lib/clock.h"
#include "../model/model.h"
#include "../output/config.h"
#include "../output/sweep_out.h"
#include "../tui/live.h"
#include "../tune/config.h"
#include "../tune/job.h"
#include "cmd.h"
#include "librun.h"
#include "opts.h"

struct sweep_ctx {
    struct ct_opts o;
    const struct ct_algo *algos[CT_ARG_MAX_ALGOS];
    size_t nalgos;
    struct ct_sweep_cfg c; /* sizes, budget, precision from the options */
    const char *out;
    struct ct_config conf; /* --verify */
    struct ct_mtopo_spec model; /* --model, --nodes, --net */
    struct ct_boot *boot;       /* in a rank: */
    struct ct_comm comm, *commp;
    struct ct_nccl *nccl; /* --lib nccl: closed once the results are out */
    struct ct_sweep_job job;
    bool want_tui, sweep_only, regret; /* sweep_only: -b, -e, -f, --out */
    int planner;                       /* 1: -w, --budget ... --max-iters; 2: -d, -o */
    struct ct_live live;
    double last_save;
};

static int parse(struct sweep_ctx *x, int argc, char **argv)
{
    enum { O_BUDGET = 1000, O_TARGET, O_MARGIN, O_MINIT, O_MAXIT, O_OUT, O_VERIFY, O_REGRET,
           O_TUI, O_ALGOS, O_MODEL, O_NODES, O_NET };
    static const struct option lo[] = {
        {"minbytes", 1, 0, 'b'}, {"maxbytes", 1, 0, 'e'}, {"stepfactor", 1, 0, 'f'},
        {"warmup_iters", 1, 0, 'w'}, {"op", 1, 0, 'o'}, {"datatype", 1, 0, 'd'},
        {"budget", 1, 0, O_BUDGET}, {"target-ci", 1, 0, O_TARGET}, {"margin", 1, 0, O_MARGIN},
        {"min-iters", 1, 0, O_MINIT}, {"max-iters", 1, 0, O_MAXIT}, {"out", 1, 0, O_OUT},
        {"verify", 1, 0, O_VERIFY}, {"max-regret", 1, 0, O_REGRET}, {"tui", 0, 0, O_TUI},
        {"algos", 1, 0, O_ALGOS}, {"model", 1, 0, O_MODEL}, {"nodes", 1, 0, O_NODES},
        {"net", 1, 0, O_NET}, {"help", 0, 0, 'h'}, CT_OPTS_LONG, {0, 0, 0, 0}};
    ct_sweep_cfg_init(&x->c);
    x->c.colls = 0;
    x->c.budget_s = -1;
    x->out = "colltune-out";
    unsigned long long sz;
    ct_opts_init(&x->o);
    x->o.map_bufs = 3; /* every peer's send, receive and scratch buffer stays mapped */
    opterr = 0;
    optind = 1;
    int c, li;
    while ((c = getopt_long(argc, argv, ":b:e:f:w:o:d:h", lo, &li)) != -1) {
        x->sweep_only |= c == 'b' || c == 'e' || c == 'f' || c == O_OUT;
        x->planner |= ((c >= O_BUDGET && c <= O_MAXIT) || c == 'w') | (c == 'd' || c == 'o') << 1;
        switch (c) {
        case 'b':
        case 'e':
            CT_TRY_OPT(ct_arg_size("sweep", c == 'b' ? "minbytes" : "maxbytes", optarg, &sz));
            *(c == 'b' ? &x->c.minbytes : &x->c.maxbytes) = sz;
            break;
        case 'f': CT_TRY_OPT(ct_arg_num("sweep", "stepfactor", optarg, 1.01, 1024, &x->c.stepfactor)); break;
        case 'w': CT_TRY_OPT(ct_arg_iters("sweep", "warmup_iters", optarg, 0, &x->c.warmup)); break;
        case 'o': CT_TRY_OPT(ct_opts_set_op(&x->o, "sweep", optarg)); break;
        case 'd': CT_TRY_OPT(ct_opts_set_dtype(&x->o, "sweep", optarg)); break;
        case O_BUDGET: CT_TRY_OPT(ct_arg_num("sweep", "budget", optarg, 1e-3, 1e7, &x->c.budget_s)); break;
        case O_TARGET: CT_TRY_OPT(ct_arg_num("sweep", "target-ci", optarg, 1e-4, 10, &x->c.target_ci)); break;
        case O_MARGIN: CT_TRY_OPT(ct_arg_num("sweep", "margin", optarg, 0, 10, &x->c.margin)); break;
        case O_REGRET:
            x->regret = true;
            CT_TRY_OPT(ct_arg_num("sweep", "max-regret", optarg, 1, 1e6, &x->c.max_regret));
            break;
        case O_MINIT: CT_TRY_OPT(ct_arg_iters("sweep", "min-iters", optarg, 1, &x->c.min_iters)); break;
        case O_MAXIT: CT_TRY_OPT(ct_arg_iters("sweep", "max-iters", optarg, 1, &x->c.max_iters)); break;
        case O_OUT: x->out = optarg; break;
        case O_VERIFY: x->o.verify = optarg; break;
        case O_TUI: x->want_tui = true; break;
        case O_MODEL: case O_NODES: case O_NET: CT_TRY_OPT(ct_sweep_model_opt(&x->model, c - O_MODEL, optarg)); break;
        case O_ALGOS:
        case CT_O_ALGO: CT_TRY_OPT(ct_arg_algos(&x->o, optarg, x->algos, &x->nalgos)); break;
        case CT_O_COLL: CT_TRY_OPT(ct_arg_colls("sweep", optarg, &x->c.colls)); break;
        case 'h': fputs(ct_help_sweep, stdout); return -1;
        case ':': return ct_cmd_fail("sweep", 2, "option '%s' needs a value", argv[optind - 1]);
        case '?': return ct_cmd_bad_option("sweep", lo, argv[optind - 1]);
        default: CT_TRY_OPT(ct_opts_parse_long(&x->o, "sweep", c, optarg)); break;
        }
    }
    if (optind < argc)
        return ct_cmd_fail("sweep", 2, "unexpected argument '%s'", argv[optind]);
    return 0;
}

/* The sweep configuration from the options; comm: the communicator's shape (NULL before
 * launching: --local N ranks on one node). */
static void build_cfg(const struct sweep_ctx *x, const struct ct_comm *comm,
                      struct ct_sweep_cfg *cfg)
{
    *cfg = x->c;
    cfg->algos = x->nalgos ? x->algos : NULL;
    cfg->nalgos = x->nalgos;
    struct ct_comm shape = {.size = x->o.local ? x->o.local : 1};
    ct_opts_job(&x->o, comm ? comm : &shape, 1, &cfg->job);
    memcpy(cfg->job.params.v, x->o.params.v, sizeof cfg->job.params.v);
}

static bool by_model(const struct sweep_ctx *x)
{
    return x->model.file || x->model.node || x->model.nodes || x->model.net;
}

/* Everything that can be refused before any rank starts. */
static int check(struct sweep_ctx *x, struct ct_sweep_cfg *cfg)
{
    struct ct_err err = {0};
    x->c.colls = x->c.colls ? x->c.colls : CT_COLLS_ALL;
    x->o.own_algos = x->nalgos > 0; /* colltune's own: refused with --lib */
    build_cfg(x, NULL, cfg);
    if (ct_sweep_cfg_check(cfg, &err) < 0)
        return ct_cmd_fail("sweep", 2, "%s", err.msg);
    int local = x->o.local || x->o.hosts || by_model(x) ? x->o.local : ct_cmd_local_ranks();
    CT_TRY_OPT(ct_sweep_opts_moot(&x->o, x->sweep_only, x->regret, x->planner | by_model(x) << 2));
    if (x->o.verify && x->o.lib && !strcmp(x->o.lib, "nccl")) /* before the GPU is looked at */
        CT_TRY_OPT(ct_nccl_verify_check(&x->o, x->o.verify, local));
    CT_TRY_OPT(ct_opts_check(&x->o, "sweep"));
    if (by_model(x))
        return 0; /* the shape is the model's (cmd/sweep_model.c) */
    x->o.local = local;
    x->c.budget_s = x->c.budget_s >= 0 ? x->c.budget_s : x->o.verify ? 30 : CT_SWEEP_BUDGET_S;
    build_cfg(x, NULL, cfg); /* a launcher's sizes: known in the ranks only */
    if (ct_sweep_cfg_check_start(cfg, x->o.local > 0, x->nalgos > 0, x->o.verify ? NULL : x->out,
                                 &err) < 0 ||
        (x->o.verify && ct_config_json_read(x->o.verify, &x->conf, &err) < 0 &&
         ct_err_wrap(&err, "--verify: ")))
        return ct_cmd_fail("sweep", 2, "%s", err.msg);
    x->o.kept_in = x->o.verify || ct_cmd_not_first(true) ? NULL : x->out; /* node 0's alone */
    return ct_cmd_out_dir("sweep", "out", x->o.verify ? NULL : x->out, true);
}

static void on_progress(void *arg, const struct ct_sweep_progress *p)
{
    ct_live_sweep_progress(&((struct sweep_ctx *)arg)->live, p);
}

/* Rank 0, after every point: save what is known every 2 s, so a crash loses little. */
static void on_points(void *arg, const struct ct_sweep_point *pts, size_t n)
{
    struct sweep_ctx *x = arg;
    if (n)
        ct_live_point(&x->live, ct_coll_name(pts[n - 1].coll), pts[n - 1].algo,
                      pts[n - 1].size, pts[n - 1].busbw);
    ct_cmd_stop_alone(x->out, &x->job, pts, n); /* one rank stopped: saves, ends */
    double t = (double)ct_now_ns() * 1e-9;
    if (t - x->last_save < 2)
        return;
    x->last_save = t;
    struct ct_err err = {0};
    if (ct_cmd_sweep_save(x->out, &x->job, pts, n, &err) < 0)
        ct_live_warn(&x->live, "%s", err.msg);
}

static void rank_cfg(struct sweep_ctx *x, struct ct_sweep_cfg *cfg)
{
    build_cfg(x, x->commp, cfg);
    cfg->arg = x;
    if (x->commp->rank == 0) {
        ct_cmd_catch_stop(x->o.verify ? 0 : x->commp->size); /* a verify saves nothing */
        cfg->progress = on_progress;
        cfg->on_points = on_points;
    }
}

/* Exit code of a failed rank; rank 0 always says why, the others only what rank 0 cannot
 * know (a wrong result or rank 0's own refusal is reported once, by rank 0). */
static int fail_rank(struct sweep_ctx *x, int rc, const struct ct_err *err)
{
    bool stopped = !strcmp(err->msg, "rank 0 stopped the sweep"), /* EUNSUPP: refused by all */
        usage = rc == CT_EUNSUPP ? stopped || x->o.verify : x->o.verify && rc == CT_EINVAL;
    int code = rc == CT_EVERIFY ? CT_EXIT_CHECK : usage ? CT_EXIT_USAGE : CT_EXIT_FAIL;
    if (x->commp->rank == 0)
        return ct_cmd_fail("sweep", code, "%s", err->msg);
    if (rc == CT_EVERIFY || stopped)
        return code;
    return ct_cmd_fail("sweep", code, "rank %d (%s): %s", x->commp->rank, x->boot->host, err->msg);
}

static int sweep_rank(struct ct_boot *boot, void *arg)
{
    struct sweep_ctx *x = arg;
    struct ct_err err = {0};
    x->boot = boot;
    if (ct_opts_comm_open(&x->o, boot, &x->comm, &err) < 0)
        return ct_cmd_open_fail("sweep", boot, &err);
    x->commp = &x->comm;
    struct ct_sweep_job *j = &x->job;
    rank_cfg(x, &j->cfg);
    bool root = x->commp->rank == 0;
    ct_live_open(&x->live, "sweep", "colltune sweep", root, root && x->want_tui);
    j->verify = x->o.verify ? &x->conf : NULL;
    j->version = CT_VERSION;
    struct ct_opts_reopen ro = {&x->o, boot};
    j->set_conns = ct_opts_reopen_conns;
    j->conns_arg = &ro;
    int rc = ct_opts_sweep_run(&x->o, boot, j, &x->commp, &x->nccl, &err), code;
    ct_live_close(&x->live);
    if (root && x->o.verify && rc == 0)
        code = ct_regret_print(stdout, x->o.verify, &x->conf, x->commp->size, j->regrets,
                               j->nregrets, x->c.max_regret, x->algos, x->nalgos)
                   ? CT_EXIT_CHECK
                   : CT_EXIT_OK;
    else if (root && !x->o.verify)
        code = ct_sweep_finish(x->out, j, rc, &err, x->c.maxbytes);
    else
        code = rc < 0 ? fail_rank(x, rc, &err) : 0;
    ct_sweep_job_release(j);
    ct_comm_close(x->commp);
    return ct_opts_engine_close(&x->o, x->nccl, boot->rank, code);
}

int cmd_sweep(int argc, char **argv)
{
    struct sweep_ctx x = {0};
    int rc = parse(&x, argc, argv);
    if (rc)
        return rc < 0 ? CT_EXIT_OK : rc;
    if (x.want_tui && (by_model(&x) || !isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)))
        return ct_cmd_fail("sweep", CT_EXIT_USAGE, "%s",
                           by_model(&x) ? "--tui shows a running sweep, not --model"
                                        : "--tui needs a terminal on standard input and output");
    struct ct_sweep_cfg cfg;
    if ((rc = check(&x, &cfg)) == 0)
        rc = by_model(&x) ? ct_sweep_model(&x.model, &x.o, &cfg, x.out, x.o.verify)
             : x.o.lib && (strcmp(x.o.lib, "nccl") || x.o.verify)
                 ? ct_libsweep(&x.o, &cfg, x.out, &x.conf, x.o.verify, argc, argv)
                 : ct_opts_launch(&x.o, "sweep", sweep_rank, &x);
    if (x.o.kept_in) /* a sweep its ranks stopped by a signal left */
        ct_sweep_outputs_stopped(x.out, rc);
    ct_config_release(&x.conf);
    return rc;
}
