/* SPDX-License-Identifier: MIT */
/*
 * colltune sweep: measure every candidate algorithm and parameter across sizes within a
 * budget, select the crossovers, write results, tuned config and report; or, with
 * --verify CONFIG, re-measure a config's choices and report their regret.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../monitor/monitor.h"
#include "../tune/select.h"
#include "../backend/native.h"
#include "../tune/sweep.h"
#include "../lib/clock.h"
#include "../output/config.h"
#include "../output/report.h"
#include "../tui/tui.h"
#include "cmd.h"
#include "opts.h"

#ifndef CT_VERSION
#define CT_VERSION "0.1.0"
#endif

#define DEFAULT_BUDGET 100.0
#define MAX_ALGOS 64


struct sweep_ctx {
    struct ct_opts o;
    unsigned colls;
    const struct ct_algo *algos[MAX_ALGOS];
    size_t nalgos;
    unsigned long long minb, maxb;
    double factor, budget, target, margin, max_regret;
    int warmup, min_iters, max_iters;
    const char *out, *verify;
    struct ct_config conf; /* --verify */
    /* in a rank */
    struct ct_boot *boot;
    struct ct_comm comm, *commp;
    struct ct_config meta; /* rank 0: fingerprint and settings of what is being written */
    char path[3][4096];    /* results.json, config.json, report dir */
    bool tty, want_tui;
    struct ct_tui *tui; /* rank 0 with --tui */
    struct ct_monitor *tui_mon;
    double last_draw, last_save, t0;
};

static int parse_list(struct sweep_ctx *x, int id, char *arg)
{
    char *save = NULL;
    for (char *t = strtok_r(arg, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        if (id == CT_O_COLL) {
            int c = ct_coll_find(t);
            if (c < 0)
                return ct_cmd_fail("sweep", 2, "unknown collective '%s' (%s)", t,
                                   "allreduce, allgather, reducescatter, alltoall");
            x->colls |= CT_COLL_BIT(c);
        } else {
            const struct ct_algo *a = ct_algo_find(t);
            if (!a)
                return ct_cmd_fail("sweep", 2, "unknown algorithm '%s' (colltune list algos)", t);
            if (x->nalgos == MAX_ALGOS)
                return ct_cmd_fail("sweep", 2, "too many algorithms");
            x->algos[x->nalgos++] = a;
        }
    }
    if (id == CT_O_COLL ? !x->colls : !x->nalgos)
        return ct_cmd_fail("sweep", 2, "empty --%s list", id == CT_O_COLL ? "coll" : "algos");
    return 0;
}

static int parse_num(const char *opt, const char *arg, double lo, double hi, double *out)
{
    char *end;
    double v = strtod(arg, &end);
    if (*end || end == arg || !(v >= lo && v <= hi))
        return ct_cmd_fail("sweep", 2, "bad --%s '%s' (%g..%g)", opt, arg, lo, hi);
    *out = v;
    return 0;
}

static int parse_iters(const char *opt, const char *arg, long lo, int *out)
{
    long v;
    if (ct_parse_int(arg, lo, 1000000, &v))
        return ct_cmd_fail("sweep", 2, "bad --%s '%s' (%ld..1000000)", opt, arg, lo);
    *out = (int)v;
    return 0;
}

static int parse(struct sweep_ctx *x, int argc, char **argv)
{
    /* clang-format off */
    enum { O_BUDGET = 1000, O_TARGET, O_MARGIN, O_MINIT, O_MAXIT, O_OUT, O_VERIFY, O_REGRET,
           O_TUI, O_ALGOS };
    static const struct option lo[] = {
        {"minbytes", 1, 0, 'b'}, {"maxbytes", 1, 0, 'e'}, {"stepfactor", 1, 0, 'f'},
        {"warmup_iters", 1, 0, 'w'}, {"op", 1, 0, 'o'}, {"datatype", 1, 0, 'd'},
        {"budget", 1, 0, O_BUDGET}, {"target-ci", 1, 0, O_TARGET}, {"margin", 1, 0, O_MARGIN},
        {"min-iters", 1, 0, O_MINIT}, {"max-iters", 1, 0, O_MAXIT}, {"out", 1, 0, O_OUT},
        {"verify", 1, 0, O_VERIFY}, {"max-regret", 1, 0, O_REGRET}, {"tui", 0, 0, O_TUI},
        {"algos", 1, 0, O_ALGOS}, {"help", 0, 0, 'h'}, CT_OPTS_LONG, {0, 0, 0, 0}};
    /* clang-format on */
    x->minb = 8;
    x->maxb = 256ull << 20;
    x->factor = 2;
    x->budget = -1;
    x->target = 0.05;
    x->margin = 0.05;
    x->max_regret = 1.10;
    x->warmup = 2;
    x->min_iters = 6;
    x->max_iters = 1000;
    x->out = "colltune-out";
    ct_opts_init(&x->o);
    opterr = 0;
    optind = 1;
    int c, li;
    while ((c = getopt_long(argc, argv, ":b:e:f:w:o:d:h", lo, &li)) != -1) {
        switch (c) {
        case 'b':
        case 'e':
            if (ct_parse_size(optarg, c == 'b' ? &x->minb : &x->maxb))
                return ct_cmd_fail("sweep", 2, "bad --%s '%s'", c == 'b' ? "minbytes" : "maxbytes",
                                   optarg);
            break;
        case 'f': CT_TRY_OPT(parse_num("stepfactor", optarg, 1.01, 1024, &x->factor)); break;
        case 'w': CT_TRY_OPT(parse_iters("warmup_iters", optarg, 0, &x->warmup)); break;
        case 'o': CT_TRY_OPT(ct_opts_set_op(&x->o, "sweep", optarg)); break;
        case 'd': CT_TRY_OPT(ct_opts_set_dtype(&x->o, "sweep", optarg)); break;
        case O_BUDGET: CT_TRY_OPT(parse_num("budget", optarg, 1e-3, 1e7, &x->budget)); break;
        case O_TARGET: CT_TRY_OPT(parse_num("target-ci", optarg, 1e-4, 10, &x->target)); break;
        case O_MARGIN: CT_TRY_OPT(parse_num("margin", optarg, 0, 10, &x->margin)); break;
        case O_REGRET: CT_TRY_OPT(parse_num("max-regret", optarg, 1, 1e6, &x->max_regret)); break;
        case O_MINIT: CT_TRY_OPT(parse_iters("min-iters", optarg, 1, &x->min_iters)); break;
        case O_MAXIT: CT_TRY_OPT(parse_iters("max-iters", optarg, 1, &x->max_iters)); break;
        case O_OUT: x->out = optarg; break;
        case O_VERIFY: x->verify = optarg; break;
        case O_TUI: x->want_tui = true; break;
        case O_ALGOS:
        case CT_O_ALGO: CT_TRY_OPT(parse_list(x, CT_O_ALGO, optarg)); break;
        case CT_O_COLL: CT_TRY_OPT(parse_list(x, CT_O_COLL, optarg)); break;
        case 'h': fputs(ct_help_sweep, stdout); return -1;
        case ':': return ct_cmd_fail("sweep", 2, "option '%s' needs a value", argv[optind - 1]);
        case '?': return ct_cmd_fail("sweep", 2, "unknown option '%s'", argv[optind - 1]);
        default: CT_TRY_OPT(ct_opts_parse_long(&x->o, "sweep", c, optarg)); break;
        }
    }
    if (optind < argc)
        return ct_cmd_fail("sweep", 2, "unexpected argument '%s'", argv[optind]);
    return 0;
}

static int mkdir_p(const char *dir)
{
    char p[4096];
    snprintf(p, sizeof p, "%s", dir);
    for (char *s = p + 1; *s; s++)
        if (*s == '/') {
            *s = 0;
            if (mkdir(p, 0755) < 0 && errno != EEXIST)
                return -1;
            *s = '/';
        }
    return mkdir(p, 0755) < 0 && errno != EEXIST ? -1 : 0;
}

/* The sweep configuration from the options; comm: the communicator's shape (NULL before
 * launching: --local N ranks on one node). */
static void build_cfg(const struct sweep_ctx *x, const struct ct_comm *comm,
                      struct ct_sweep_cfg *cfg)
{
    ct_sweep_cfg_init(cfg);
    cfg->colls = x->colls;
    cfg->algos = x->nalgos ? x->algos : NULL;
    cfg->nalgos = x->nalgos;
    struct ct_comm shape = {.size = x->o.local ? x->o.local : 1};
    ct_opts_job(&x->o, comm ? comm : &shape, 1, &cfg->job);
    memcpy(cfg->job.params.v, x->o.params.v, sizeof cfg->job.params.v);
    cfg->minbytes = x->minb;
    cfg->maxbytes = x->maxb;
    cfg->stepfactor = x->factor;
    cfg->budget_s = x->budget;
    cfg->target_ci = x->target;
    cfg->margin = x->margin;
    cfg->warmup = x->warmup;
    cfg->min_iters = x->min_iters;
    cfg->max_iters = x->max_iters;
}

/* Everything that can be refused before any rank starts. */
static int check(struct sweep_ctx *x, struct ct_sweep_cfg *cfg)
{
    size_t es = ct_dtype_size(x->o.dtype);
    if (!x->colls)
        x->colls = CT_COLLS_ALL;
    if (x->minb > x->maxb)
        return ct_cmd_fail("sweep", 2, "--minbytes %llu is larger than --maxbytes %llu", x->minb,
                           x->maxb);
    if (x->maxb > (1ull << 40))
        return ct_cmd_fail("sweep", 2, "--maxbytes %llu is beyond 1 TiB", x->maxb);
    if (x->minb < es || x->minb % es || x->maxb % es)
        return ct_cmd_fail("sweep", 2,
                           "sizes must be positive multiples of the %s size (%zu "
                           "bytes)",
                           ct_dtype_name(x->o.dtype), es);
    if (x->min_iters > x->max_iters)
        return ct_cmd_fail("sweep", 2, "--min-iters %d is above --max-iters %d", x->min_iters,
                           x->max_iters);
    CT_TRY_OPT(ct_opts_check(&x->o, "sweep"));
    if (!x->o.local && !getenv("COLLTUNE_ROOT")) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        x->o.local = n < 2 ? 2 : n > 1024 ? 1024 : (int)n;
    }
    if (x->budget < 0)
        x->budget = x->verify ? 30 : DEFAULT_BUDGET;
    build_cfg(x, NULL, cfg);
    if (x->o.local) /* launchers' sizes are known only in the ranks */
        for (int c = 0; c < CT_COLL_COUNT; c++)
            if ((x->colls & CT_COLL_BIT(c)) && !ct_sweep_algos(cfg, (enum ct_coll)c, NULL, 0))
                return ct_cmd_fail("sweep", 2, "no %salgorithm supports %s on %d ranks",
                                   x->nalgos ? "selected " : "", ct_coll_name((enum ct_coll)c),
                                   x->o.local);
    if (x->verify) {
        struct ct_err err = {0};
        if (ct_config_json_read(x->verify, &x->conf, &err) < 0)
            return ct_cmd_fail("sweep", 2, "%s", err.msg);
        return 0;
    }
    double need = ct_sweep_min_budget(cfg);
    if (x->budget < need)
        return ct_cmd_fail("sweep", 2,
                           "a budget of %g s is too small to measure one point of "
                           "each collective (needs about %.2g s)",
                           x->budget, need);
    if (mkdir_p(x->out) < 0)
        return ct_cmd_fail("sweep", 2, "cannot create --out '%s': %s", x->out, strerror(errno));
    char probe[4200];
    snprintf(probe, sizeof probe, "%s/.colltune-write-test.%ld", x->out, (long)getpid());
    FILE *f = fopen(probe, "w");
    if (!f)
        return ct_cmd_fail("sweep", 2, "cannot write in --out '%s': %s", x->out, strerror(errno));
    fclose(f);
    unlink(probe);
    return 0;
}

/* ---- in the ranks -------------------------------------------------------------------- */

static void now_utc(char *buf, size_t len)
{
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static void fill_meta(struct sweep_ctx *x, const struct ct_sweep_cfg *cfg)
{
    struct ct_config *m = &x->meta;
    struct ct_comm *c = x->commp;
    ct_config_init(m);
    snprintf(m->version, sizeof m->version, "%s", CT_VERSION);
    now_utc(m->date, sizeof m->date);
    m->fp.hosts = c->nnodes;
    m->fp.nranks = c->size;
    m->fp.ranks_per_host = ct_shape_rpn(&cfg->job.shape);
    ct_comm_tp_names(c, m->fp.transport, sizeof m->fp.transport);
    snprintf(m->fp.link_classes, sizeof m->fp.link_classes, "%s", m->fp.transport);
    snprintf(m->fp.host, sizeof m->fp.host, "%s", c->boot->host);
    struct ct_sweep_settings *s = &m->sweep;
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

static void fmt_time(double s, char *buf, size_t len)
{
    int t = s > 0 ? (int)(s + 0.5) : 0;
    snprintf(buf, len, "%d:%02d", t / 60, t % 60);
}

static void clear_progress(struct sweep_ctx *x);

static void on_progress(void *arg, const struct ct_sweep_progress *p)
{
    struct sweep_ctx *x = arg;
    if (x->tui && ct_tui_quit_requested(x->tui))
        clear_progress(x); /* q: back to the progress line */
    if (x->tui) {
        struct ct_progress q = {.cmd = "sweep", .size = p->size, .done = p->done,
                                .total = p->total, .elapsed_s = p->elapsed_s,
                                .remaining_s = p->remaining_s};
        snprintf(q.phase, sizeof q.phase, "%s", p->phase);
        snprintf(q.coll, sizeof q.coll, "%s", ct_coll_name(p->coll));
        snprintf(q.algo, sizeof q.algo, "%s", p->algo);
        ct_tui_progress(x->tui, &q);
        return;
    }
    double t = (double)ct_now_ns() * 1e-9;
    if (!x->tty || t - x->last_draw < 0.1)
        return;
    x->last_draw = t;
    char sz[32], el[16], left[16], tot[32] = "";
    fmt_time(p->elapsed_s, el, sizeof el);
    fmt_time(p->remaining_s, left, sizeof left);
    if (p->total > p->done)
        snprintf(tot, sizeof tot, "/~%ld", p->total);
    /* one line, short enough for 80 columns, redrawn in place */
    fprintf(stderr, "\r\033[K%s %s %s %s | %ld%s points | %s, ~%s left", p->phase,
            ct_coll_name(p->coll), p->algo, ct_bytes_str(p->size, sz, sizeof sz), p->done, tot, el,
            left);
    fflush(stderr);
}

/* The progress display ends (before anything is printed): the screen closes, or the
 * progress line is erased. */
static void clear_progress(struct sweep_ctx *x)
{
    if (x->tui) {
        ct_tui_close(x->tui, NULL);
        ct_monitor_free(x->tui_mon);
        x->tui = NULL;
        x->tui_mon = NULL;
        return;
    }
    if (x->tty && x->last_draw > 0)
        fputs("\r\033[K", stderr);
}

static void tui_open(struct sweep_ctx *x)
{
    x->tui_mon = ct_monitor_new(NULL);
    struct ct_tui_cfg cfg = {.title = "colltune sweep", .first_view = "progress",
                             .sample = ct_monitor_sample_cb, .sample_arg = x->tui_mon};
    struct ct_err err = {0};
    if (ct_tui_open(&x->tui, &cfg, &err) < 0) {
        ct_cmd_warn("sweep", "no live screen: %s", err.msg);
        ct_monitor_free(x->tui_mon);
        x->tui_mon = NULL;
    }
}

/* Rank 0, after every point: save what is known every 2 s, so a crash loses little. */
static void on_points(void *arg, const struct ct_sweep_point *pts, size_t n)
{
    struct sweep_ctx *x = arg;
    if (x->tui && n)
        ct_tui_point(x->tui, ct_coll_name(pts[n - 1].coll), pts[n - 1].algo, pts[n - 1].size,
                     pts[n - 1].busbw);
    double t = (double)ct_now_ns() * 1e-9;
    if (t - x->last_save < 2)
        return;
    x->last_save = t;
    struct ct_err err = {0};
    x->meta.sweep.points = (long)n;
    if (ct_sweep_json_write(x->path[0], &x->meta, pts, n, "running", NULL, &err) < 0) {
        if (x->tui) {
            ct_tui_log(x->tui, "warning: %s", err.msg);
            return;
        }
        clear_progress(x);
        ct_cmd_warn("sweep", "%s", err.msg);
    }
}

static int set_streams(void *arg, int streams, struct ct_comm **comm, struct ct_err *err)
{
    struct sweep_ctx *x = arg;
    struct ct_opts o = x->o;
    o.params.v[CT_P_STREAMS] = (uint64_t)streams;
    ct_comm_close(*comm);
    return ct_opts_comm_open(&o, x->boot, *comm, err);
}

/* Rules of every swept collective from the points; collectives without points are left out. */
static void build_config(struct sweep_ctx *x, const struct ct_sweep_cfg *cfg,
                         const struct ct_sweep_result *res, bool partial)
{
    struct ct_config *m = &x->meta;
    m->partial = partial;
    m->sweep.points = (long)res->n;
    m->sweep.full_points = res->full_points;
    m->sweep.elapsed_s = res->elapsed_s;
    m->sweep.budget_out = res->budget_out;
    snprintf(m->sweep.search, sizeof m->sweep.search, "%s", res->search);
    snprintf(m->sweep.space, sizeof m->sweep.space, "%s", res->space);
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
        m->nsets++;
    }
}

/* Rank 0 at the end, success or not: results, config, report; then the table. */
static int finish(struct sweep_ctx *x, const struct ct_sweep_cfg *cfg,
                  const struct ct_sweep_result *res, int rc, const struct ct_err *serr)
{
    struct ct_err err = {0};
    int code = rc == 0 ? CT_EXIT_OK : rc == CT_EVERIFY ? CT_EXIT_CHECK : CT_EXIT_FAIL;
    clear_progress(x);
    build_config(x, cfg, res, rc < 0);
    if (rc < 0)
        ct_cmd_fail("sweep", code, "%s", serr->msg);
    if (ct_sweep_json_write(x->path[0], &x->meta, res->pts, res->n, rc < 0 ? "failed" : "done",
                            rc < 0 ? serr->msg : NULL, &err) < 0)
        return ct_cmd_fail("sweep", CT_EXIT_FAIL, "%s", err.msg);
    if (x->meta.nsets && ct_config_json_write(x->path[1], &x->meta, &err) < 0)
        return ct_cmd_fail("sweep", CT_EXIT_FAIL, "%s", err.msg);
    if (ct_report_write(x->path[2], &x->meta, res->pts, res->n, &err) < 0)
        return ct_cmd_fail("sweep", CT_EXIT_FAIL, "%s", err.msg);
    if (x->meta.nsets) {
        ct_config_print(stdout, &x->meta);
        printf("\n");
    }
    if (rc < 0)
        fprintf(stderr, "colltune sweep: %s results so far (%zu points) saved in %s/\n",
                x->meta.nsets ? "partial" : "no", res->n, x->out);
    uint64_t top = 0;
    for (size_t i = 0; i < res->n; i++)
        top = res->pts[i].size > top ? res->pts[i].size : top;
    if (rc == 0 && res->budget_out) {
        char a[32], b[32], what[96];
        if (top < cfg->maxbytes)
            snprintf(what, sizeof what, "sizes measured up to %s of %s",
                     ct_bytes_str(top, a, sizeof a), ct_bytes_str(cfg->maxbytes, b, sizeof b));
        else
            snprintf(what, sizeof what, "some sizes or candidates were skipped");
        printf("note: the budget was short for the full plan (%s); a larger --budget measures "
               "more\n",
               what);
    }
    printf("wrote %s/config.json (tuned config), %s/results.json (%zu points), "
           "%s/report.html, %s/points.csv\n",
           x->out, x->out, res->n, x->out, x->out);
    return code;
}

static int print_regrets(struct sweep_ctx *x, const struct ct_sweep_regret *g, size_t n)
{
    int bad = 0;
    double worst = 1;
    printf("verifying %s: %d ranks, midpoint of every range, chosen vs every alternative\n\n",
           x->verify, x->commp->size);
    printf("%-13s %-21s %10s  %-12s %10s  %-12s %10s  %s\n", "collective", "range", "at", "chosen",
           "time(us)", "best", "time(us)", "regret");
    for (size_t i = 0; i < n; i++) {
        const struct ct_rule *r = &x->conf.sets[g[i].set].rules[g[i].rule];
        char lo[32], hi[32], at[32], range[64];
        snprintf(range, sizeof range, "%s..%s", ct_bytes_str(r->min_bytes, lo, sizeof lo),
                 ct_bytes_str(r->max_bytes, hi, sizeof hi));
        bool fail = g[i].regret > x->max_regret && g[i].significant;
        bad += fail;
        worst = g[i].regret > worst ? g[i].regret : worst;
        printf("%-13s %-21s %10s  %-12s %10.2f  %-12s %10.2f  %.2f%s\n",
               ct_coll_name(x->conf.sets[g[i].set].coll), range,
               ct_bytes_str(g[i].size, at, sizeof at), g[i].chosen.algo, g[i].chosen.st.median,
               g[i].best.algo, g[i].best.st.median, g[i].regret,
               fail                          ? "  FAIL"
               : g[i].regret > x->max_regret ? "  (within noise)"
                                             : "");
    }
    printf("\nworst regret %.2f (limit %.2f): %s\n", worst, x->max_regret,
           bad ? "some choices are clearly slower than an alternative" : "ok");
    return bad ? CT_EXIT_CHECK : CT_EXIT_OK;
}

static void rank_cfg(struct sweep_ctx *x, struct ct_sweep_cfg *cfg)
{
    char tp[64];
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    int local = x->commp->local_size > 0 ? x->commp->local_size : 1;
    build_cfg(x, x->commp, cfg);
    cfg->tcp = strstr(ct_comm_tp_names(x->commp, tp, sizeof tp), "tcp") != NULL;
    cfg->max_threads = (int)(cores / local);
    cfg->arg = x;
    if (x->commp->rank == 0) {
        cfg->progress = on_progress;
        cfg->on_points = on_points;
    }
}

/* Exit code of a failed rank; rank 0 always says why, the others only what rank 0 cannot
 * know (a wrong result or rank 0's own refusal is reported once, by rank 0). */
static int fail_rank(struct sweep_ctx *x, int rc, const struct ct_err *err)
{
    int code = rc == CT_EVERIFY ? CT_EXIT_CHECK : CT_EXIT_FAIL;
    if (x->verify && rc == CT_EINVAL)
        code = CT_EXIT_USAGE;
    if (x->commp->rank == 0)
        return ct_cmd_fail("sweep", code, "%s", err->msg);
    if (rc == CT_EVERIFY || !strcmp(err->msg, "rank 0 stopped the sweep"))
        return code;
    return ct_cmd_fail("sweep", code, "rank %d (%s): %s", x->commp->rank, x->boot->host, err->msg);
}

static int sweep_rank(struct ct_boot *boot, void *arg)
{
    struct sweep_ctx *x = arg;
    struct ct_err err = {0};
    x->boot = boot;
    if (ct_opts_comm_open(&x->o, boot, &x->comm, &err) < 0)
        return ct_cmd_fail("sweep", 1, "rank %d (%s): %s", boot->rank, boot->host, err.msg);
    x->commp = &x->comm;
    struct ct_sweep_cfg cfg;
    rank_cfg(x, &cfg);
    bool root = x->commp->rank == 0;
    x->tty = root && isatty(STDERR_FILENO);
    if (root && x->want_tui)
        tui_open(x);
    struct ct_backend be;
    struct ct_native nat;
    ct_native_open(&be, &nat, &x->commp, cfg.tcp ? set_streams : NULL, x);
    int code;
    if (x->verify) {
        struct ct_sweep_regret *g = NULL;
        size_t n = 0;
        int rc = ct_sweep_verify(&cfg, &be, &nat, &x->conf, &g, &n, &err);
        clear_progress(x);
        if (rc == 0)
            code = root ? print_regrets(x, g, n) : 0;
        else
            code = fail_rank(x, rc, &err);
        free(g);
    } else {
        snprintf(x->path[0], sizeof x->path[0], "%s/results.json", x->out);
        snprintf(x->path[1], sizeof x->path[1], "%s/config.json", x->out);
        snprintf(x->path[2], sizeof x->path[2], "%s", x->out);
        fill_meta(x, &cfg);
        struct ct_sweep_result res;
        int rc = ct_sweep_run(&cfg, &be, &nat, &res, &err);
        if (root)
            code = finish(x, &cfg, &res, rc, &err);
        else
            code = rc < 0 ? fail_rank(x, rc, &err) : 0;
        ct_sweep_result_release(&res);
        ct_config_release(&x->meta);
    }
    if (root)
        clear_progress(x);
    ct_native_close(&nat);
    ct_comm_close(x->commp);
    return code;
}

int cmd_sweep(int argc, char **argv)
{
    struct sweep_ctx x;
    memset(&x, 0, sizeof x);
    int rc = parse(&x, argc, argv);
    if (rc)
        return rc < 0 ? CT_EXIT_OK : rc;
    if (x.want_tui && (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)))
        return ct_cmd_fail("sweep", CT_EXIT_USAGE,
                           "--tui needs a terminal on standard input and output");
    struct ct_sweep_cfg cfg;
    rc = check(&x, &cfg);
    if (rc == 0)
        rc = ct_opts_launch(&x.o, "sweep", sweep_rank, &x);
    ct_config_release(&x.conf);
    return rc;
}
