/* SPDX-License-Identifier: MIT */
/* colltune run: one collective over a size range, nccl-tests flags and table. */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../backend/bench.h"
#include "../backend/nccl.h"
#include "../monitor/monitor.h"
#include "../lib/clock.h"
#include "../output/output.h"
#include "../transport/launch.h"
#include "../tui/live.h"
#include "cmd.h"
#include "librun.h"
#include "opts.h"

struct run_ctx {
    struct ct_opts o;
    unsigned long long minb, maxb;
    double factor;
    int iters, warmup, check, average, place, batch; /* average: enum ct_rank_time (-a) */
    double max_s; /* --max-time (the engines whose samples are the slowest rank's) */
    const char *json, *sizes;
    bool tui, print_boot, range; /* range: -b, -e or -f given (refused beside --sizes) */
    char cmdline[1024];
};

static int parse(struct run_ctx *x, int argc, char **argv)
{
    enum { O_JSON = 1000, O_PRINTBOOT, O_TUI, O_QUANT, O_SIZES, O_PLACE, O_MAXT, O_BATCH };
    /* clang-format off */
    static const struct option lo[] = {
        {"minbytes", 1, 0, 'b'}, {"maxbytes", 1, 0, 'e'}, {"stepfactor", 1, 0, 'f'},
        {"iters", 1, 0, 'n'}, {"warmup_iters", 1, 0, 'w'}, {"check", 1, 0, 'c'},
        {"op", 1, 0, 'o'}, {"datatype", 1, 0, 'd'}, {"json", 1, 0, O_JSON},
        {"print-bootstrap", 0, 0, O_PRINTBOOT}, {"tui", 0, 0, O_TUI}, {"help", 0, 0, 'h'},
        {"quant", 1, 0, O_QUANT}, {"sizes", 1, 0, O_SIZES}, {"average", 1, 0, 'a'},
        {"place", 1, 0, O_PLACE}, {"max-time", 1, 0, O_MAXT}, {"batch", 1, 0, O_BATCH},
        CT_OPTS_LONG, {0, 0, 0, 0}};
    /* clang-format on */
    ct_opts_init(&x->o);
    opterr = 0;
    optind = 1;
    int c, li;
    while ((c = getopt_long(argc, argv, ":b:e:f:n:w:c:o:d:a:h", lo, &li)) != -1) {
        x->range |= c == 'b' || c == 'e' || c == 'f';
        switch (c) {
        case 'b': CT_TRY_OPT(ct_arg_size("run", "minbytes", optarg, &x->minb)); break;
        case 'e': CT_TRY_OPT(ct_arg_size("run", "maxbytes", optarg, &x->maxb)); break;
        case 'f':
            CT_TRY_OPT(ct_arg_num("run", "stepfactor", optarg, 1.01, 1024, &x->factor));
            break;
        case 'n': CT_TRY_OPT(ct_arg_iters("run", "iters", optarg, 1, &x->iters)); break;
        case 'w': CT_TRY_OPT(ct_arg_iters("run", "warmup_iters", optarg, 0, &x->warmup)); break;
        case 'a': CT_TRY_OPT(ct_arg_int("run", "average", optarg, 0, 3, &x->average)); break;
        case 'c': CT_TRY_OPT(ct_arg_int("run", "check", optarg, 0, 100, &x->check)); break;
        case 'o': CT_TRY_OPT(ct_opts_set_op(&x->o, "run", optarg)); break;
        case 'd': CT_TRY_OPT(ct_opts_set_dtype(&x->o, "run", optarg)); break;
        case O_JSON: x->json = optarg; break;
        case O_SIZES: x->sizes = optarg; break;
        case O_PLACE: CT_TRY_OPT(ct_arg_place("run", optarg, &x->place)); break;
        case O_BATCH: CT_TRY_OPT(ct_arg_batch("run", optarg, &x->batch)); break;
        case O_MAXT:
            CT_TRY_OPT(ct_arg_num("run", "max-time", optarg, 0.001, 1e6, &x->max_s));
            break;
        case O_TUI: x->tui = true; break;
        case O_QUANT: CT_TRY_OPT(ct_arg_quant("run", optarg, &x->o)); break;
        case O_PRINTBOOT: x->print_boot = true; break;
        case 'h': fputs(ct_help_run, stdout); return -1;
        case ':': return ct_cmd_fail("run", 2, "option '%s' needs a value", argv[optind - 1]);
        case '?': return ct_cmd_bad_option("run", lo, argv[optind - 1]);
        default: CT_TRY_OPT(ct_opts_parse_long(&x->o, "run", c, optarg)); break;
        }
    }
    if (optind < argc)
        return ct_cmd_fail("run", 2, "unexpected argument '%s'", argv[optind]);
    if (x->print_boot) { /* after every option, so --local/--ifname count */
        ct_opts_print_bootstrap(&x->o);
        return -1;
    }
    struct ct_err err = {0};
    if (ct_bench_sizes_check(x->minb, x->maxb, x->factor, x->o.dtype, &err) < 0)
        return ct_cmd_fail("run", 2, "%s", err.msg);
    CT_TRY_OPT(ct_opts_check(&x->o, "run"));
    CT_TRY_OPT(ct_cmd_out_check("run", "json", x->json, true));
    if (x->average != CT_RANK_TIME_MAX && x->o.lib)
        return ct_cmd_fail("run", 2, "--average: the library engines report the slowest rank");
    if (x->max_s > 0 && !x->o.lib)
        return ct_cmd_fail("run", 2, "--max-time needs --lib (the slowest rank's time decides)");
    if (x->sizes && x->range)
        return ct_cmd_fail("run", 2, "--sizes lists the sizes: -b, -e and -f are not for it");
    return 0;
}

/* Every rank runs this; rank 0 prints. */
static int run_rank(struct ct_boot *boot, void *arg)
{
    struct run_ctx *x = arg;
    struct ct_comm comm;
    struct ct_err err = {0};
    struct ct_row *rows = NULL;
    uint64_t *sizes = NULL;
    int code = CT_EXIT_OK;
    if (ct_opts_comm_open(&x->o, boot, &comm, &err) < 0)
        return ct_cmd_open_fail("run", boot, &err);
    struct ct_rank_info *ranks = NULL; /* each rank's place and device, after they open */
    struct ct_bench b;
    struct ct_nccl *nccl = NULL; /* --lib nccl: NCCL measures instead of colltune */
    struct ct_mem mem = {0};     /* --mem cuda: the job's buffers on this rank's GPU */
    ct_bench_init(&b, &comm, 0x5eed);
    b.rank_time = x->average;
    const struct ct_coll_desc *d = ct_coll_desc(x->o.coll);
    size_t es = ct_dtype_size(x->o.dtype), nrows = 0;
    struct ct_live live;
    ct_live_open(&live, "run", "colltune run", comm.rank == 0, x->tui);
    bool deferred = live.tui != NULL; /* the table is printed after the screen closes */
    struct ct_comm *flight = NULL; /* --inflight K: one communicator per part */
    int nflight = x->o.params.v[CT_P_INFLIGHT] > 1 ? (int)x->o.params.v[CT_P_INFLIGHT] : 0;
    if (nflight && ct_opts_flight_open(&x->o, boot, &flight, &err) < 0) {
        code = ct_cmd_fail("run", 1, "rank %d (%s): %s", boot->rank, boot->host, err.msg);
        goto out;
    }
    if (flight)
        ct_bench_set_flight(&b, nflight, flight);
    struct ct_backend nbe;
    if (ct_opts_engine_open(&x->o, boot, &comm, &nbe, &nccl, &err) < 0 ||
        (!nccl && ct_opts_mem_open(&x->o, boot, &mem, &err) < 0) ||
        !(ranks = ct_opts_rank_infos(&comm, nccl ? ct_nccl_mem(nccl) : &mem, &err))) {
        code = ct_cmd_fail("run", 1, "rank %d (%s): %s", boot->rank, boot->host, err.msg);
        goto out;
    }
    ct_bench_set_mem(&b, mem.kind ? &mem : NULL);
    char tpn[96], algo_q[48]; /* a quantized row names its format in the algo column too */
    const char *quant = x->o.quant ? ct_quant_name(x->o.quant) : NULL;
    snprintf(algo_q, sizeof algo_q, "%s%s%s", nccl ? "nccl" : x->o.algo->name, quant ? ":" : "",
             quant ? quant : "");
    const char *rt = x->average != CT_RANK_TIME_MAX ? ct_rank_time_name(x->average) : NULL;
    const char *tp = nccl ? nbe.library : ct_native_tp_label(&comm, &mem, tpn, sizeof tpn);
    struct ct_run_meta m = {d->name,   tp,       CT_VERSION, x->minb,   x->maxb,     x->factor,
                            x->warmup, x->iters, x->check,   comm.size, comm.nnodes, x->cmdline,
                            ranks,     quant,    rt,         x->batch};
    size_t nsizes = ct_bench_sizes(x->o.coll, x->minb, x->maxb, x->factor, es, comm.size, &sizes);
    struct ct_job j; /* every size checked on every rank before any runs; said by rank 0 */
    ct_opts_job(&x->o, &comm, 0, &j);
    if (!nccl && ct_bench_can_run(&b, x->o.algo, &j, sizes, nsizes, &err) < 0) {
        ct_live_close(&live);
        code = err.code == CT_EUNSUPP ? CT_EXIT_USAGE : CT_EXIT_FAIL;
        code = comm.rank == 0 ? ct_cmd_fail("run", code, "%s", err.msg) : code;
        goto out;
    }
    FILE *tab = ct_cmd_report_stream(x->json); /* --json -: the JSON alone on stdout */
    if (comm.rank == 0 && !deferred)
        ct_table_header(tab, &m);
    for (size_t i = 0; i < nsizes; i++) {
        uint64_t size = sizes[i];
        ct_opts_job(&x->o, &comm, d->count_for(size, es, comm.size), &j);
        rows = ct_xrealloc(rows, (nrows + 1) * sizeof *rows);
        struct ct_row *row = &rows[nrows++];
        ct_row_init(row, x->o.dtype, d->needs_op ? (int)x->o.op : -1,
                    quant || nccl ? algo_q : x->o.algo->name);
        row->quant = quant;
        ct_opts_params_str(&x->o, x->o.algo, row->params, sizeof row->params);
        if (x->tui)
            ct_live_sizes(&live, d->name, x->o.algo->name, row->params, sizes, nsizes, i);
        for (int k = x->place == CT_PLACE_IN; k <= (x->place != CT_PLACE_OUT); k++) {
            struct ct_point p;
            j.in_place = k;
            struct ct_bench_cfg bc = {x->iters, x->warmup, x->check, x->batch, x->max_s};
            if ((nccl ? ct_nccl_point(nccl, &j, &bc, &p, &err)
                      : ct_bench_point(&b, x->o.algo, &j, &bc, &p, &err)) < 0) {
                ct_live_close(&live);
                code =
                    ct_cmd_fail("run", err.code == CT_EUNSUPP ? CT_EXIT_USAGE : CT_EXIT_FAIL,
                                "rank %d (%s): %s %llu bytes: %s", comm.rank, boot->host, d->name,
                                (unsigned long long)d->size_bytes(j.count, es, comm.size), err.msg);
                goto out;
            }
            ct_row_fill(row, &p, k);
        }
        ct_live_point(&live, d->name, x->o.algo->name, size, row->busbw[x->place == CT_PLACE_IN]);
        if (comm.rank == 0 && !deferred)
            ct_table_row(tab, row);
        if (ct_live_between(&live, boot))
            break;
    }
    ct_live_close(&live);
    if (comm.rank == 0) {
        if (deferred) {
            ct_table_header(tab, &m);
            for (size_t i = 0; i < nrows; i++)
                ct_table_row(tab, &rows[i]);
        }
        if (ct_table_footer(tab, rows, nrows) > 0)
            code = CT_EXIT_CHECK;
        struct ct_tcp_window w; /* in flight: the first part's connections */
        struct ct_comm *wc = flight ? flight : &comm;
        if (wc->size > 1 && wc->tp_of[1] && ct_tcp_window(wc->tp_of[1], 1, &w, &err) == 0)
            ct_tcp_window_print(tab, &w);
        if (b.stage)
            ct_mem_path_print(tab, mem.kind->name, "points", b.points_resident, b.points_staged,
                              b.res_why);
        if (x->json && ct_results_json_write(x->json, &m, rows, nrows, &err) < 0)
            code = ct_cmd_fail("run", 1, "%s", err.msg);
    }
out:
    ct_live_close(&live);
    ct_bench_release(&b);
    ct_mem_close(&mem);
    code = ct_opts_engine_close(&x->o, nccl, comm.rank, code);
    ct_opts_flight_close(flight, nflight);
    ct_comm_close(&comm);
    free(ranks);
    free(rows);
    free(sizes);
    /* every rank reports wrong results through rank 0's exit code; others mirror it */
    return code;
}

int cmd_run(int argc, char **argv)
{
    struct run_ctx x = {.minb = 8,
                        .maxb = 32ull << 20,
                        .factor = 2,
                        .iters = 20,
                        .warmup = 5,
                        .check = 1,
                        .average = CT_RANK_TIME_MAX,
                        .place = CT_PLACE_OUT | CT_PLACE_IN};
    int rc = parse(&x, argc, argv);
    if (rc)
        return rc < 0 ? CT_EXIT_OK : rc;
    ct_cmd_line(x.cmdline, sizeof x.cmdline, argc, argv);
    if (x.tui && (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)))
        return ct_cmd_fail("run", CT_EXIT_USAGE,
                           "--tui needs a terminal on standard input and output");
    if ((x.o.lib && strcmp(x.o.lib, "nccl")) || x.sizes) /* an MPI library's engine */
        return ct_librun(&x.o,
                         &(struct ct_librun_cfg){x.minb, x.maxb, x.factor, x.iters, x.warmup,
                                                 x.check, x.cmdline, x.sizes, x.json, x.place,
                                                 x.max_s, x.batch},
                         argc, argv);
    CT_TRY_OPT(ct_opts_precheck(&x.o, "run"));
    return ct_opts_launch(&x.o, "run", run_rank, &x);
}
