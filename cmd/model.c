/* SPDX-License-Identifier: MIT */
/* colltune model: price every algorithm's schedule on a topology model; --calibrate fits it. */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../model/model.h"
#include "../output/output.h"
#include "../tui/live.h"
#include "cmd.h"
#include "librun.h"
#include "opts.h"



struct model_ctx {
    struct ct_model_req q;
    struct ct_opts o;
    const char *calib, *out;
    struct ct_live live;
};

static int parse(struct model_ctx *x, int argc, char **argv)
{
    enum { O_TOPO = 1000, O_NODE, O_NODES, O_NET, O_RANKS, O_ALGOS, O_JSON, O_CALIB, O_OUT };
    static const struct option lo[] = {
        {"topology", 1, 0, O_TOPO}, {"node", 1, 0, O_NODE}, {"nodes", 1, 0, O_NODES},
        {"net", 1, 0, O_NET}, {"ranks", 1, 0, O_RANKS}, {"algos", 1, 0, O_ALGOS},
        {"json", 1, 0, O_JSON}, {"calibrate", 1, 0, O_CALIB}, {"out", 1, 0, O_OUT},
        {"minbytes", 1, 0, 'b'}, {"maxbytes", 1, 0, 'e'}, {"stepfactor", 1, 0, 'f'},
        {"datatype", 1, 0, 'd'}, {"help", 0, 0, 'h'}, CT_OPTS_LONG, {0, 0, 0, 0}};
    ct_opts_init(&x->o);
    x->q.minb = 8;
    x->q.maxb = 1ull << 30;
    x->q.factor = 2;
    opterr = 0;
    optind = 1;
    int c;
    long v;
    unsigned long long sz;
    while ((c = getopt_long(argc, argv, ":b:e:f:d:h", lo, NULL)) != -1) {
        switch (c) {
        case 'b':
        case 'e':
            CT_TRY_OPT(ct_arg_size("model", c == 'b' ? "minbytes" : "maxbytes", optarg, &sz));
            *(c == 'b' ? &x->q.minb : &x->q.maxb) = sz;
            break;
        case 'f':
            CT_TRY_OPT(ct_arg_num("model", "stepfactor", optarg, 1.01, 1024, &x->q.factor));
            break;
        case 'd': CT_TRY_OPT(ct_opts_set_dtype(&x->o, "model", optarg)); break;
        case 'h': fputs(ct_help_model, stdout); return -1;
        case O_TOPO: x->q.topo.file = optarg; break;
        case O_NODE: x->q.topo.node = optarg; break;
        case O_NET: x->q.topo.net = optarg; break;
        case O_NODES:
        case O_RANKS:
            if (ct_parse_int(optarg, 1, 1 << 24, &v))
                return ct_cmd_fail("model", 2, "bad --%s '%s' (1..16777216)",
                                   c == O_NODES ? "nodes" : "ranks", optarg);
            *(c == O_NODES ? &x->q.topo.nodes : &x->q.nranks) = (int)v;
            break;
        case O_ALGOS:
            CT_TRY_OPT(
                ct_arg_algo_list("model", optarg, x->q.algos, &x->q.nalgos, CT_MODEL_MAX_ALGOS));
            break;
        case O_JSON: x->q.json = optarg; break;
        case O_CALIB: x->calib = optarg; break;
        case O_OUT: x->out = optarg; break;
        case ':': return ct_cmd_fail("model", 2, "option '%s' needs a value", argv[optind - 1]);
        case '?': return ct_cmd_bad_option("model", lo, argv[optind - 1]);
        default:
            CT_TRY_OPT(ct_opts_parse_long(&x->o, "model", c, optarg));
            if (c == CT_O_ALGO && x->q.nalgos < CT_MODEL_MAX_ALGOS)
                x->q.algos[x->q.nalgos++] = x->o.algo;
            break;
        }
    }
    if (optind < argc)
        return ct_cmd_fail("model", 2, "unexpected argument '%s'", argv[optind]);
    if (x->q.topo.file && x->q.topo.node)
        return ct_cmd_fail("model", 2, "--topology and --node exclude each other");
    CT_TRY_OPT(ct_model_opts_moot(&x->o, "model", "model", true));
    CT_TRY_OPT(ct_opts_lib_check(&x->o, "model")); /* --env, --pairs, verify's: sweep --lib's */
    if (x->o.params.v[CT_P_INFLIGHT] > 1)
        return ct_cmd_fail("model", 2, "--inflight is for run and sweep (the model prices one "
                                       "collective)");
    CT_TRY_OPT(ct_cmd_in_check("model", "topology", x->q.topo.file, false));
    CT_TRY_OPT(ct_cmd_in_check("model", "calibrate", x->calib, false));
    CT_TRY_OPT(ct_cmd_out_check("model", "json", x->q.json, false));
    if (x->out && !x->calib) /* it wrote nothing, exit 0 */
        return ct_cmd_fail("model", 2,
                           "--out is where --calibrate writes (--json FILE: the prices)");
    x->out = x->out ? x->out : "colltune-model.json";
    CT_TRY_OPT(ct_cmd_out_check("model", "out", x->calib ? x->out : NULL, false));
    x->q.coll = x->o.coll;
    x->q.dtype = x->o.dtype;
    x->q.op = x->o.op;
    x->q.params = x->o.params;
    return 0;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median |predicted/measured - 1| of the points of algo (NULL: all) at >= 64 KiB. */
static double med_err(const struct ct_mcalib *c, const char *algo, size_t *n)
{
    double *e = malloc((c->n + 1) * sizeof *e);
    *n = 0;
    for (size_t i = 0; i < c->n; i++)
        if (c->pts[i].size >= 65536 && (!algo || !strcmp(algo, c->pts[i].algo)))
            e[(*n)++] = fabs(c->pts[i].predicted_us / c->pts[i].measured_us - 1);
    qsort(e, *n, sizeof *e, cmp_d);
    double m = *n ? (*n % 2 ? e[*n / 2] : (e[*n / 2 - 1] + e[*n / 2]) / 2) : NAN;
    free(e);
    return m;
}

static int calibrate(struct model_ctx *x)
{
    struct ct_mcalib c;
    struct ct_mtopo t;
    struct ct_err err = {0};
    if (ct_model_calibrate(x->calib, &x->q.topo, x->out, &c, &t, &err) < 0)
        return ct_cmd_fail("model", err.code == CT_EIO ? 1 : 2, "%s", err.msg);
    printf("# fit of %zu points (%d ranks, %d node(s), %s): intra alpha %.3g us, %.4g GB/s; "
           "gamma %.4g GB/s; copy %.4g GB/s; step %.3g us; slice %.3g us; message %.3g us",
           c.n, c.nranks, c.nnodes, c.transport, t.intra.alpha_us, t.intra.gbps, t.gamma_gbps,
           t.copy_gbps, t.step_us, t.slice_us, t.msg_us);
    if (t.onesided_gbps > 0)
        printf("; one-sided %.4g GB/s", t.onesided_gbps);
    if (t.cache_mib > 0 && t.mem_factor > 1)
        printf("; cache %.3g MiB, memory %.3gx", t.cache_mib, t.mem_factor);
    if (c.nnodes > 1)
        printf("; nic alpha %.3g us, %.4g GB/s", t.nic.alpha_us, t.nic.gbps);
    if (t.cores_per_node > 0 && t.ranks_per_node > t.cores_per_node)
        printf("; %d ranks per node share %d cores", t.ranks_per_node, t.cores_per_node);
    printf("\n# %-14s %12s %12s %12s %8s\n", "algo", "size(B)", "measured", "predicted", "error");
    for (size_t i = 0; i < c.n; i++)
        printf("  %-14s %12llu %12.2f %12.2f %+7.1f%%\n", c.pts[i].algo,
               (unsigned long long)c.pts[i].size, c.pts[i].measured_us, c.pts[i].predicted_us,
               100 * (c.pts[i].predicted_us / c.pts[i].measured_us - 1));
    printf("# median |error| at >= 64 KiB:");
    const char *seen[64];
    size_t ns = 0, n;
    for (size_t i = 0; i < c.n && ns < 64; i++) {
        size_t k = 0;
        while (k < ns && strcmp(seen[k], c.pts[i].algo))
            k++;
        if (k < ns)
            continue;
        seen[ns++] = c.pts[i].algo;
        double m = med_err(&c, c.pts[i].algo, &n);
        if (n)
            printf(" %s %.1f%% (%zu);", c.pts[i].algo, 100 * m, n);
    }
    double all = med_err(&c, NULL, &n);
    printf(" all %.1f%% (%zu points)\nwrote %s\n", 100 * all, n, x->out);
    ct_mcalib_release(&c);
    return 0;
}

/* The progress line on a terminal: a point of many thousand ranks can take seconds. */
static void on_progress(void *arg, const struct ct_model_progress *p)
{
    struct ct_progress g = {.cmd = "model",
                            .phase = "pricing",
                            .size = p->size,
                            .done = p->done,
                            .total = p->total,
                            .elapsed_s = p->elapsed_s};
    g.remaining_s = p->done ? p->elapsed_s / (double)p->done * (double)(p->total - p->done) : -1;
    snprintf(g.coll, sizeof g.coll, "%s", ct_coll_name(((struct model_ctx *)arg)->q.coll));
    snprintf(g.algo, sizeof g.algo, "%s", p->algo);
    ct_live_progress(&((struct model_ctx *)arg)->live, &g);
}

int cmd_model(int argc, char **argv)
{
    struct model_ctx x = {0};
    int rc = parse(&x, argc, argv);
    if (rc)
        return rc < 0 ? 0 : rc;
    ct_model_malloc_policy();
    if (x.calib)
        return calibrate(&x);
    struct ct_model_result r;
    struct ct_err err = {0};
    ct_live_open(&x.live, "model", "colltune model", true, false);
    x.q.progress = on_progress, x.q.progress_arg = &x;
    rc = ct_model_run(&x.q, &r, &err);
    ct_live_close(&x.live);
    if (rc < 0)
        return ct_cmd_fail("model", err.code == CT_EIO ? 1 : 2, "%s", err.msg);
    FILE *out = ct_cmd_report_stream(x.q.json); /* --json -: the JSON alone on stdout */
    ct_model_report(out, &x.q, &r, CT_VERSION);
    int code = 0;
    if (out == stderr && ct_doc_write("-", ct_model_result_json(&x.q, &r), "the model JSON", &err))
        code = ct_cmd_fail("model", CT_EXIT_FAIL, "%s", err.msg);
    ct_model_result_release(&r);
    return code;
}
