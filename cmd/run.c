/* SPDX-License-Identifier: MIT */
/* colltune run: one collective over a size range, nccl-tests flags and table. */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../engine/bench.h"
#include "../engine/monitor.h"
#include "../lib/clock.h"
#include "../output/output.h"
#include "../transport/launch.h"
#include "../tui/tui.h"
#include "cmd.h"
#include "opts.h"

#ifndef CT_VERSION
#define CT_VERSION "0.1.0"
#endif

static const char *const run_help =
    "usage: colltune run [options]\n"
    "\n"
    "Run one collective with one algorithm over a range of sizes, verify every result and\n"
    "print an nccl-tests-compatible table (time, algbw, busbw, #wrong; out-of-place, then\n"
    "in-place).\n"
    "\n"
    "sizes and iterations (nccl-tests flags):\n"
    "  -b, --minbytes SIZE     smallest size (K/M/G suffixes; default 8)\n"
    "  -e, --maxbytes SIZE     largest size (default 32M)\n"
    "  -f, --stepfactor F      multiply the size by F each step (default 2)\n"
    "  -n, --iters N           timed iterations per size (default 20)\n"
    "  -w, --warmup_iters N    untimed iterations first (default 5)\n"
    "  -c, --check N           verification passes per size, 0 = none (default 1)\n"
    "  -o, --op OP             sum, prod, min, max, avg (default sum)\n"
    "  -d, --datatype TYPE     int8 uint8 int32 uint32 int64 uint64 float16 bfloat16\n"
    "                          float32 float64 (default float32)\n"
    CT_OPTS_HELP
    "  --quant FMT             ring AllReduce of float32 sums with int8, fp8e4m3 or fp8e5m2\n"
    "                          on the wire (block-scaled; results approximate but\n"
    "                          identical on every rank; adds #divg, maxerr, rmserr)\n"
    "  --inflight K            split each allreduce into K concurrent collectives, each on\n"
    "                          its own tcp connections (--transport tcp; default 1)\n"
    "  --json FILE             also write colltune-results/1 JSON to FILE\n"
    "  --tui                   live screen while it runs: progress, busbw plot, NIC\n"
    "                          utilization of every node (q stops); the table follows\n"
    "  --print-bootstrap       show how ranks would be brought up, and exit\n"
    "  -h, --help              this help\n";

struct run_ctx {
    struct ct_opts o;
    unsigned long long minb, maxb;
    double factor;
    int iters, warmup, check;
    const char *json;
    bool tui, print_boot;
    int inflight; /* --inflight K: AllReduce as K collectives over K tcp communicators */
    char cmdline[1024];
};

static int parse(struct run_ctx *x, int argc, char **argv)
{
    enum { O_JSON = 1000, O_PRINTBOOT, O_TUI, O_QUANT, O_INFLIGHT };
    static const struct option lo[] = {
        {"minbytes", 1, 0, 'b'}, {"maxbytes", 1, 0, 'e'}, {"stepfactor", 1, 0, 'f'},
        {"iters", 1, 0, 'n'}, {"warmup_iters", 1, 0, 'w'}, {"check", 1, 0, 'c'},
        {"op", 1, 0, 'o'}, {"datatype", 1, 0, 'd'}, {"json", 1, 0, O_JSON},
        {"print-bootstrap", 0, 0, O_PRINTBOOT}, {"tui", 0, 0, O_TUI}, {"help", 0, 0, 'h'},
        {"quant", 1, 0, O_QUANT}, {"inflight", 1, 0, O_INFLIGHT},
        CT_OPTS_LONG, {0, 0, 0, 0}};
    x->minb = 8;
    x->maxb = 32ull << 20;
    x->factor = 2;
    x->iters = 20;
    x->warmup = 5;
    x->check = 1;
    ct_opts_init(&x->o);
    opterr = 0;
    optind = 1;
    int c, li;
    long v;
    while ((c = getopt_long(argc, argv, ":b:e:f:n:w:c:o:d:h", lo, &li)) != -1) {
        switch (c) {
        case 'b':
            if (ct_parse_size(optarg, &x->minb))
                return ct_cmd_fail("run", 2, "bad --minbytes '%s'", optarg);
            break;
        case 'e':
            if (ct_parse_size(optarg, &x->maxb))
                return ct_cmd_fail("run", 2, "bad --maxbytes '%s'", optarg);
            break;
        case 'f': {
            char *end;
            x->factor = strtod(optarg, &end);
            if (*end || !(x->factor > 1.0) || x->factor > 1024)
                return ct_cmd_fail("run", 2, "bad --stepfactor '%s' (a number > 1)", optarg);
            break;
        }
        case 'n':
            if (ct_parse_int(optarg, 1, 1000000, &v))
                return ct_cmd_fail("run", 2, "bad --iters '%s' (1..1000000)", optarg);
            x->iters = (int)v;
            break;
        case 'w':
            if (ct_parse_int(optarg, 0, 1000000, &v))
                return ct_cmd_fail("run", 2, "bad --warmup_iters '%s' (0..1000000)", optarg);
            x->warmup = (int)v;
            break;
        case 'c':
            if (ct_parse_int(optarg, 0, 100, &v))
                return ct_cmd_fail("run", 2, "bad --check '%s' (0..100)", optarg);
            x->check = (int)v;
            break;
        case 'o': CT_TRY_OPT(ct_opts_set_op(&x->o, "run", optarg)); break;
        case 'd': CT_TRY_OPT(ct_opts_set_dtype(&x->o, "run", optarg)); break;
        case O_JSON: x->json = optarg; break;
        case O_TUI: x->tui = true; break;
        case O_INFLIGHT:
            if (ct_parse_int(optarg, 1, 64, &v))
                return ct_cmd_fail("run", 2, "bad --inflight '%s' (1..64)", optarg);
            x->inflight = (int)v;
            break;
        case O_QUANT: {
            int q = ct_quant_find(optarg);
            if (q < 0)
                return ct_cmd_fail("run", 2, "bad --quant '%s' (none, int8, fp8e4m3, fp8e5m2)",
                                   optarg);
            x->o.quant = (enum ct_quant)q;
            break;
        }
        case O_PRINTBOOT: x->print_boot = true; break;
        case 'h': fputs(run_help, stdout); return -1;
        case ':': return ct_cmd_fail("run", 2, "option '%s' needs a value", argv[optind - 1]);
        case '?': return ct_cmd_fail("run", 2, "unknown option '%s'", argv[optind - 1]);
        default: CT_TRY_OPT(ct_opts_parse_long(&x->o, "run", c, optarg)); break;
        }
    }
    if (optind < argc)
        return ct_cmd_fail("run", 2, "unexpected argument '%s'", argv[optind]);
    if (x->print_boot) { /* after every option, so --local/--ifname count */
        ct_opts_print_bootstrap(&x->o);
        return -1;
    }
    if (x->minb > x->maxb)
        return ct_cmd_fail("run", 2, "--minbytes %llu is larger than --maxbytes %llu", x->minb,
                           x->maxb);
    if (x->maxb > (1ull << 40))
        return ct_cmd_fail("run", 2, "--maxbytes %llu is beyond 1 TiB", x->maxb);
    size_t es = ct_dtype_size(x->o.dtype);
    if (x->minb % es || x->maxb % es)
        return ct_cmd_fail("run", 2, "sizes must be multiples of the %s size (%zu bytes)",
                           ct_dtype_name(x->o.dtype), es);
    CT_TRY_OPT(ct_opts_check(&x->o, "run"));
    if (x->inflight > 1 && (strcmp(x->o.transport, "tcp") || x->o.coll != CT_ALLREDUCE))
        return ct_cmd_fail("run", 2, "--inflight needs --transport tcp and allreduce");
    if (x->inflight > 1 && x->o.quant)
        return ct_cmd_fail("run", 2, "--inflight and --quant do not combine yet");
    return 0;
}

static void fill_row(struct ct_row *row, const struct ct_point *p, int k)
{
    row->size = p->size;
    row->count = p->count;
    row->have[k] = true;
    row->time_us[k] = p->time_us;
    row->min_us[k] = p->min_us;
    row->max_us[k] = p->max_us;
    row->algbw[k] = p->algbw;
    row->busbw[k] = p->busbw;
    row->wrong[k] = p->wrong;
    row->iters = p->iters;
    row->diverged[k] = p->diverged;
    row->max_err[k] = p->max_err;
    row->rms_err[k] = p->rms_err;
}

/* --tui: rank 0 shows the screen; every rank samples its NICs for the cluster view. */
struct run_tui {
    struct ct_tui *tui; /* rank 0 */
    struct ct_monitor *screen_mon, *gather_mon;
    int64_t t0;
    long total;
    double total_bytes, done_bytes; /* time grows with the size: estimate by bytes */
};

static void tui_open(const struct run_ctx *x, const struct ct_comm *c, struct run_tui *rt)
{
    memset(rt, 0, sizeof *rt);
    if (!x->tui)
        return;
    rt->gather_mon = ct_monitor_new(NULL);
    rt->t0 = ct_now_ns();
    for (double sz = (double)x->minb; sz <= (double)x->maxb && x->factor * sz > sz;
         sz *= x->factor) {
        rt->total++;
        rt->total_bytes += sz;
    }
    if (c->rank != 0)
        return;
    rt->screen_mon = ct_monitor_new(NULL);
    struct ct_tui_cfg cfg = {.title = "colltune run", .first_view = "progress",
                             .sample = ct_monitor_sample_cb, .sample_arg = rt->screen_mon};
    struct ct_err err = {0};
    if (ct_tui_open(&rt->tui, &cfg, &err) < 0)
        ct_cmd_warn("run", "no live screen: %s", err.msg);
}

static void tui_progress(struct run_tui *rt, const struct run_ctx *x, const char *coll,
                         uint64_t size, long done)
{
    if (!rt->tui)
        return;
    struct ct_progress p = {.cmd = "run", .size = size, .done = done, .total = rt->total};
    snprintf(p.coll, sizeof p.coll, "%s", coll);
    snprintf(p.algo, sizeof p.algo, "%s", x->o.algo->name);
    ct_opts_params_str(&x->o, p.params, sizeof p.params);
    p.elapsed_s = (double)(ct_now_ns() - rt->t0) * 1e-9;
    p.remaining_s = rt->done_bytes > 0
                        ? p.elapsed_s / rt->done_bytes * (rt->total_bytes - rt->done_bytes)
                        : -1;
    rt->done_bytes += (double)size;
    ct_tui_progress(rt->tui, &p);
}

/* Every rank after each size: NIC samples to rank 0's cluster view; true when q was pressed
 * (every rank learns it from the same gather, so all stop after the same size). */
static bool tui_between(struct run_tui *rt, struct ct_boot *boot)
{
    if (!rt->gather_mon)
        return false;
    bool stop = rt->tui && ct_tui_quit_requested(rt->tui);
    struct ct_cluster grid = {0};
    struct ct_err err = {0};
    if (ct_monitor_gather(rt->gather_mon, boot, 1000000000LL, &stop,
                          boot->rank == 0 ? &grid : NULL, &err) == 0)
        ct_tui_cluster(rt->tui, &grid);
    ct_cluster_release(&grid);
    return stop;
}

/* Restore the terminal (before anything is printed); idempotent. */
static void tui_close(struct run_tui *rt)
{
    ct_tui_close(rt->tui, NULL);
    ct_monitor_free(rt->screen_mon);
    ct_monitor_free(rt->gather_mon);
    memset(rt, 0, sizeof *rt);
}

/* Rank 0's tcp connections to its ring neighbour (rank 1): the window each one reached,
 * after the run (TCP_INFO), so a window-limited long link shows. */
static void print_tcp_window(const struct ct_comm *c)
{
    struct ct_tcp_window w;
    struct ct_err err = {0};
    if (c->size < 2 || !c->tp_of[1] || ct_tcp_window(c->tp_of[1], 1, &w, &err) < 0)
        return;
    printf("# tcp window rank 0 -> 1: %d stream%s, per connection cwnd*mss %.2f..%.2f MB, "
           "rcv_space %.2f MB, rtt %.2f ms, sndbuf %.2f MB, rcvbuf %.2f MB\n",
           w.streams, w.streams == 1 ? "" : "s", w.cwnd_bytes_min / 1e6, w.cwnd_bytes_max / 1e6,
           w.rcv_space_max / 1e6, w.rtt_ms, w.sndbuf / 1e6, w.rcvbuf / 1e6);
}

/* Every rank runs this; rank 0 prints. */
static int run_rank(struct ct_boot *boot, void *arg)
{
    struct run_ctx *x = arg;
    struct ct_comm comm;
    struct ct_err err = {0};
    struct ct_rank_info *ranks = NULL;
    struct ct_row *rows = NULL;
    size_t nrows = 0;
    int code = CT_EXIT_OK;
    if (ct_opts_comm_open(&x->o, boot, &comm, &err) < 0)
        return ct_cmd_fail("run", 1, "rank %d (%s): %s", boot->rank, boot->host, err.msg);
    ranks = ct_opts_rank_infos(&comm, &err);
    struct ct_bench b;
    ct_bench_init(&b, &comm, 0x5eed);
    const struct ct_coll_desc *d = ct_coll_desc(x->o.coll);
    size_t es = ct_dtype_size(x->o.dtype);
    struct run_tui rt;
    tui_open(x, &comm, &rt);
    bool deferred = rt.tui != NULL; /* the table is printed after the screen closes */
    struct ct_comm *flight = NULL;
    int nflight = 0;
    if (x->inflight > 1) {
        flight = ct_xcalloc((size_t)x->inflight, sizeof *flight);
        for (; nflight < x->inflight; nflight++)
            if (ct_opts_comm_open(&x->o, boot, &flight[nflight], &err) < 0) {
                code = ct_cmd_fail("run", 1, "rank %d (%s): in-flight communicator %d: %s",
                                   boot->rank, boot->host, nflight + 1, err.msg);
                goto out;
            }
        ct_bench_set_inflight(&b, x->inflight, flight);
    }
    long done = 0;
    char algo_q[48]; /* a quantized row names its format in the algo column too */
    snprintf(algo_q, sizeof algo_q, "%s:%s", x->o.algo->name, ct_quant_name(x->o.quant));
    if (comm.rank == 0 && ranks && !deferred) {
        char tpn[64];
        struct ct_run_meta m = {d->name, ct_comm_tp_names(&comm, tpn, sizeof tpn), CT_VERSION,
                                x->minb, x->maxb, x->factor, x->warmup, x->iters, x->check,
                                comm.size, comm.nnodes, x->cmdline, ranks,
                                x->o.quant ? ct_quant_name(x->o.quant) : NULL};
        ct_table_header(stdout, &m);
    }
    for (double sz = (double)x->minb; ranks && sz <= (double)x->maxb; sz *= x->factor) {
        uint64_t size = (uint64_t)sz / es * es;
        struct ct_job j;
        ct_opts_job(&x->o, &comm, d->count_for(size, es, comm.size), &j);
        rows = ct_xrealloc(rows, (nrows + 1) * sizeof *rows);
        struct ct_row *row = &rows[nrows++];
        memset(row, 0, sizeof *row);
        row->type = ct_dtype_name(x->o.dtype);
        row->redop = d->needs_op ? ct_redop_name(x->o.op) : "none";
        row->algo = x->o.algo->name;
        row->root = -1;
        row->quant = x->o.quant ? ct_quant_name(x->o.quant) : NULL;
        if (row->quant)
            row->algo = algo_q;
        ct_opts_params_str(&x->o, row->params, sizeof row->params);
        if (x->inflight > 1) {
            size_t pl = strlen(row->params);
            snprintf(row->params + pl, sizeof row->params - pl, ",inflight=%d", x->inflight);
        }
        tui_progress(&rt, x, d->name, size, done);
        for (int k = 0; k < 2; k++) {
            struct ct_point p;
            j.in_place = k;
            struct ct_bench_cfg bc = {x->iters, x->warmup, x->check};
            if (ct_bench_point(&b, x->o.algo, &j, &bc, &p, &err) < 0) {
                tui_close(&rt);
                code = ct_cmd_fail("run", 1, "rank %d (%s): %s %llu bytes: %s", comm.rank,
                                   boot->host, d->name, (unsigned long long)size, err.msg);
                goto out;
            }
            fill_row(row, &p, k);
        }
        if (rt.tui)
            ct_tui_point(rt.tui, d->name, x->o.algo->name, size, row->busbw[0]);
        done++;
        if (comm.rank == 0 && !deferred)
            ct_table_row(stdout, row);
        if (x->factor * sz <= sz || tui_between(&rt, boot))
            break;
    }
    tui_close(&rt);
    if (comm.rank == 0 && ranks) {
        if (deferred) {
            char tpn0[64];
            struct ct_run_meta m0 = {d->name, ct_comm_tp_names(&comm, tpn0, sizeof tpn0),
                                     CT_VERSION, x->minb, x->maxb, x->factor, x->warmup,
                                     x->iters, x->check, comm.size, comm.nnodes, x->cmdline,
                                     ranks, x->o.quant ? ct_quant_name(x->o.quant) : NULL};
            ct_table_header(stdout, &m0);
            for (size_t i = 0; i < nrows; i++)
                ct_table_row(stdout, &rows[i]);
        }
        if (ct_table_footer(stdout, rows, nrows) > 0)
            code = CT_EXIT_CHECK;
        print_tcp_window(nflight ? &flight[0] : &comm); /* in flight: the first part's */
        char tpn[64];
        struct ct_run_meta m = {d->name, ct_comm_tp_names(&comm, tpn, sizeof tpn), CT_VERSION,
                                x->minb, x->maxb, x->factor, x->warmup, x->iters, x->check,
                                comm.size, comm.nnodes, x->cmdline, ranks,
                                x->o.quant ? ct_quant_name(x->o.quant) : NULL};
        if (x->json && ct_results_json_write(x->json, &m, rows, nrows, &err) < 0)
            code = ct_cmd_fail("run", 1, "%s", err.msg);
    } else if (!ranks) {
        code = ct_cmd_fail("run", 1, "rank %d: %s", comm.rank, err.msg);
    }
out:
    tui_close(&rt);
    ct_bench_release(&b);
    for (int i = 0; i < nflight; i++)
        ct_comm_close(&flight[i]);
    free(flight);
    ct_comm_close(&comm);
    free(ranks);
    free(rows);
    /* every rank reports wrong results through rank 0's exit code; others mirror it */
    return code;
}

int cmd_run(int argc, char **argv)
{
    struct run_ctx x;
    memset(&x, 0, sizeof x);
    int rc = parse(&x, argc, argv);
    if (rc)
        return rc < 0 ? CT_EXIT_OK : rc;
    size_t off = 0;
    for (int i = 0; i < argc && off < sizeof x.cmdline - 2; i++)
        off += (size_t)snprintf(x.cmdline + off, sizeof x.cmdline - off, "%s%s", i ? " " : "",
                                argv[i]);
    if (x.tui && (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)))
        return ct_cmd_fail("run", CT_EXIT_USAGE,
                           "--tui needs a terminal on standard input and output");
    CT_TRY_OPT(ct_opts_precheck(&x.o, "run"));
    return ct_opts_launch(&x.o, "run", run_rank, &x);
}
