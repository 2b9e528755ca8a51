/* SPDX-License-Identifier: MIT */
/* colltune validate: expected ceilings from every host's topology, a short battery (pairs on
 * a round-robin schedule with NIC counters, ring collectives), a diagnosis and a verdict. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../output/validate_report.h"
#include "../transport/launch.h"
#include "../validate/battery.h"
#include "cmd.h"
#include "opts.h"

#define CMD "validate"

struct vctx {
    struct ct_opts o;
    double link_gbps, min_pct;
    bool min_pct_set, no_coll, no_gpu;
    const char *json, *baseline_path, *save;
    unsigned long long p2p_bytes, coll_bytes;
    int iters, repeats;
    struct ct_probe_cfg pcfg;
    struct ct_val_baseline base;
};

/* Options run and sweep share that validate has no use for: refused rather than ignored. */
static int unused(const char *opt)
{
    if (!strcmp(opt, "rails"))
        return ct_cmd_fail(CMD, 2,
                           "--rails is not used: validate finds each host's rails from "
                           "its interfaces (every shared IPv4 subnet) and drives each");
    return ct_cmd_fail(CMD, 2,
                       "--%s is not used: validate measures every collective "
                       "(allreduce, allgather, reducescatter, alltoall) with the ring "
                       "algorithm against the ring's ceiling; use run or sweep for "
                       "one collective or algorithm",
                       opt);
}

/* The baseline (rank 0 alone reads it), at this run's sizes; unusable: refused, exit 2. */
static int baseline_read(struct vctx *x)
{
    struct ct_err err = {0};
    if (ct_val_baseline_read(&x->base, x->baseline_path, &err) < 0 ||
        ct_val_baseline_fits(&x->base, x->p2p_bytes, x->no_coll ? 0 : x->coll_bytes, &err) < 0)
        return ct_cmd_refuse(CMD, true, err.msg); /* missing included */
    return 0;
}

static int parse(struct vctx *x, int argc, char **argv)
{
    enum {
        O_MINPCT = 1000,
        O_LINK,
        O_BASE,
        O_SAVE,
        O_JSON,
        O_P2P,
        O_COLLSZ,
        O_ITERS,
        O_NOCOLL,
        O_SYSFS,
        O_REPEATS,
        O_NOGPU
    };
    static const struct option lo[] = {{"min-pct", 1, 0, O_MINPCT},
                                       {"link-gbps", 1, 0, O_LINK},
                                       {"baseline", 1, 0, O_BASE},
                                       {"save-baseline", 1, 0, O_SAVE},
                                       {"json", 1, 0, O_JSON},
                                       {"p2p-size", 1, 0, O_P2P},
                                       {"coll-size", 1, 0, O_COLLSZ},
                                       {"iters", 1, 0, O_ITERS},
                                       {"no-coll", 0, 0, O_NOCOLL},
                                       {"sysfs-root", 1, 0, O_SYSFS},
                                       {"repeats", 1, 0, O_REPEATS},
                                       {"no-gpu", 0, 0, O_NOGPU},
                                       {"help", 0, 0, 'h'},
                                       CT_OPTS_LONG,
                                       {0, 0, 0, 0}};
    ct_opts_init(&x->o);
    x->min_pct = 80;
    x->p2p_bytes = 4 << 20;
    x->coll_bytes = 16 << 20;
    x->iters = 3;
    x->repeats = 3;
    opterr = 0;
    optind = 1;
    int c, li;
    long v;
    char *end;
    while ((c = getopt_long(argc, argv, ":h", lo, &li)) != -1) {
        switch (c) {
        case O_MINPCT:
            x->min_pct = strtod(optarg, &end);
            if (*end || !(x->min_pct > 0 && x->min_pct <= 100))
                return ct_cmd_fail(CMD, 2, "bad --min-pct '%s' (a percentage in (0, 100])",
                                   optarg);
            x->min_pct_set = true;
            break;
        case O_LINK:
            x->link_gbps = strtod(optarg, &end);
            if (*end || !(x->link_gbps >= 0.001 && x->link_gbps < 1e6)) /* 1e-300 broke it */
                return ct_cmd_fail(CMD, 2, "bad --link-gbps '%s' (Gb/s, 0.001 to below 1000000)",
                                   optarg);
            break;
        case O_BASE: x->baseline_path = optarg; break;
        case O_SAVE: x->save = optarg; break;
        case O_JSON: x->json = optarg; break;
        case O_P2P:
        case O_COLLSZ: {
            unsigned long long *dst = c == O_P2P ? &x->p2p_bytes : &x->coll_bytes;
            if (ct_parse_size(optarg, dst) || *dst < 64 || *dst > (1ull << 30) || *dst % 64)
                return ct_cmd_fail(CMD, 2, "bad --%s '%s' (64 .. 1G, a multiple of 64)",
                                   c == O_P2P ? "p2p-size" : "coll-size", optarg);
            break;
        }
        case O_ITERS:
            if (ct_parse_int(optarg, 1, 1000, &v))
                return ct_cmd_fail(CMD, 2, "bad --iters '%s' (1..1000)", optarg);
            x->iters = (int)v;
            break;
        case O_NOCOLL: x->no_coll = true; break;
        case O_NOGPU: x->no_gpu = true; break;
        case O_SYSFS: x->pcfg.sysfs_root = optarg; break;
        case O_REPEATS: CT_TRY_OPT(ct_arg_int(CMD, "repeats", optarg, 0, 16, &x->repeats)); break;
        case 'h': fputs(ct_help_validate, stdout); return -1;
        case ':': return ct_cmd_fail(CMD, 2, "option '%s' needs a value", argv[optind - 1]);
        case '?': return ct_cmd_bad_option(CMD, lo, argv[optind - 1]);
        case CT_O_COLL:
        case CT_O_ALGO:
        case CT_O_INTRA:
        case CT_O_INTER:
        case CT_O_TORUS:
        case CT_O_RAILS: return unused(lo[li].name);
        default: CT_TRY_OPT(ct_opts_parse_long(&x->o, CMD, c, optarg)); break;
        }
    }
    if (optind < argc)
        return ct_cmd_fail(CMD, 2, "unexpected argument '%s'", argv[optind]);
    CT_TRY_OPT(ct_opts_check(&x->o, CMD));
    CT_TRY_OPT(ct_opts_links_check(&x->o, CMD));
    CT_TRY_OPT(ct_cmd_out_check(CMD, "json", x->json, true));
    if (x->save && !strcmp(x->save, "-")) /* it wrote a file named '-' */
        return ct_cmd_fail(CMD, 2, "--save-baseline -: a baseline is a file (name one)");
    CT_TRY_OPT(ct_cmd_out_check(CMD, "save-baseline", x->save, true));
    /* rank 0 alone reads the baseline (a folder: said so) */
    CT_TRY_OPT(ct_cmd_in_check(CMD, "baseline", x->baseline_path, true));
    return x->baseline_path && !ct_cmd_refused() && !ct_cmd_not_first(true) ? baseline_read(x) : 0;
}

/* Rank 0: the report on stdout (stderr with --json -), then the files asked for. */
static int finish(const struct vctx *x, const struct ct_val_report *r, bool broke)
{
    struct ct_err err = {0};
    int code = ct_val_findings(r) ? CT_EXIT_CHECK : CT_EXIT_OK;
    FILE *out = ct_cmd_report_stream(x->json); /* --json -: the JSON alone on stdout */
    if (ct_val_report_text(r, out, &err) < 0)
        code = ct_cmd_fail(CMD, 1, "%s", err.msg);
    fflush(out);
    if (x->json && ct_val_report_json_write(r, x->json, &err) < 0)
        code = ct_cmd_fail(CMD, 1, "%s", err.msg);
    if (x->save && !broke && ct_val_baseline_write(r, x->save, &err) < 0)
        code = ct_cmd_fail(CMD, 1, "%s", err.msg);
    return code;
}

static int validate_rank(struct ct_boot *boot, void *arg)
{
    struct vctx *x = arg;
    struct ct_comm comm;
    struct ct_err err = {0};
    if (ct_opts_comm_open(&x->o, boot, &comm, &err) < 0)
        return ct_cmd_open_fail(CMD, boot, &err);
    struct ct_val_cfg cfg = {.probe = x->pcfg,
                             .base = x->baseline_path ? &x->base : NULL,
                             .link_gbps = x->link_gbps,
                             .min_pct = x->min_pct,
                             .min_pct_set = x->min_pct_set,
                             .no_coll = x->no_coll,
                             .no_gpu = x->no_gpu,
                             .p2p_bytes = x->p2p_bytes,
                             .coll_bytes = x->coll_bytes,
                             .iters = x->iters,
                             .repeats = x->repeats,
                             .settle = x->save != NULL,
                             .dip_round = -1,
                             .dip_coll = getenv("COLLTUNE_VALIDATE_DIP_COLL")};
    const char *dip = getenv("COLLTUNE_VALIDATE_DIP"); /* test hooks (man page, ENVIRONMENT) */
    if (dip && *dip)
        cfg.dip_round = atoi(dip);
    ct_opts_comm_cfg(&x->o, &cfg.comm);
    ct_opts_job(&x->o, &comm, 0, &cfg.job);
    struct ct_val_report rep;
    enum ct_val_stage stage;
    int rc = ct_val_run(&cfg, boot, &comm, &rep, &stage, &err), code = CT_EXIT_OK;
    /* another rank's error after a peer failed: rank 0 reports unless a signal killed it (the
     * fork launcher's word, with how it ended; else its name in the error, not "rank 0 gave
     * up": a relay); rank 0 that ended on its own said why: its code, nothing more here */
    int lost = rc < 0 && boot->rank ? ct_launch_lost_rank_wait(1000000000) : -1,
        how = ct_launch_lost_how();
    bool linger = false, relay = strstr(err.msg, ") gave up: ") != NULL,
         r0_gone = lost >= 0
                       ? lost == 0 && how < 0
                       : (strstr(err.msg, "rank 0 (") || strstr(err.msg, "rank 0:")) && !relay;
    if (rc == CT_EINVAL && stage == CT_VAL_SETUP)
        code = boot->rank == 0 ? ct_cmd_fail(CMD, 2, "%s", err.msg) : 2;
    else if (rc < 0 && boot->rank && r0_gone) /* nobody will print the report: said here */
        code = ct_cmd_fail(CMD, 1, "rank %d (%s): no report: %s", boot->rank, boot->host, err.msg);
    else if (rc < 0 && boot->rank && lost == 0) /* its report, or its error, is out */
        code = how > 0 ? how : CT_EXIT_CHECK;
    else if (rc < 0 && stage == CT_VAL_SETUP && !relay && (lost < 0 || lost == boot->rank))
        code = ct_cmd_fail(CMD, 1, "rank %d (%s): %s", boot->rank, boot->host, err.msg);
    else if (boot->rank == 0) {
        if (rc < 0)
            ct_cmd_warn(CMD, "%s", err.msg);
        code = finish(x, &rep, rc < 0);
    } else if (rc < 0) {
        code = CT_EXIT_CHECK; /* rank 0 reports the failed host (this rank lingers, below) */
        linger = true;
    }
    if (rc == 0 && ct_launch_forked() == 2 && ct_val_verdict(boot, &code, &err) < 0) {
        if (boot->rank) /* one colltune a node: the verdict unknown here is no pass */
            code = ct_cmd_fail(CMD, code ? code : 1, "rank %d (%s): no verdict from rank 0: %s",
                               boot->rank, boot->host, err.msg);
        else
            ct_cmd_warn(CMD, "the verdict did not reach every node: %s", err.msg);
    }
    if (boot->rank == 0 && stage == CT_VAL_BATTERY)
        ct_val_report_release(&rep);
    ct_comm_close(&comm); /* its links closed first: the ranks that wait on it learn at once */
    if (linger)           /* rank 0's report out before this exit (mpirun ends the job at it) */
        ct_boot_linger(boot, boot->op_timeout_ns + 5000000000LL);
    return code;
}

int cmd_validate(int argc, char **argv)
{
    struct vctx x;
    memset(&x, 0, sizeof x);
    int rc = parse(&x, argc, argv);
    if (rc == 0)
        rc = ct_opts_launch(&x.o, CMD, validate_rank, &x);
    ct_val_baseline_release(&x.base);
    return rc < 0 ? CT_EXIT_OK : rc;
}
