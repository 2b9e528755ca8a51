/* SPDX-License-Identifier: MIT */
/*
 * colltune export: a tuned config in the format a collective library or launcher reads
 * (output/export.c's table), written atomically to --out or stdout, optionally pushed over
 * HTTP; and the sweep's headline figures pushed to a Prometheus Pushgateway.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../lib/file.h"
#include "../output/config.h"
#include "../output/export.h"
#include "../output/push.h"
#include "cmd.h"

struct export_ctx {
    const char *config, *format, *out, *push, *metrics, *results;
    const char *push_opt, *results_opt; /* the first of the push's own options given */
    bool list;
    struct ct_export_opts eo;
    struct ct_push_opts po;
};

static int parse(struct export_ctx *x, int argc, char **argv)
{
    /* clang-format off */
    enum { O_FOR = 1000, O_VER, O_NRANKS, O_RULES, O_PROTO, O_CHAN, O_LIST, O_PUSH, O_METRICS,
           O_RESULTS, O_METHOD, O_HEADER, O_CACERT, O_INSECURE, O_TIMEOUT, O_RETRIES };
    static const struct option lo[] = {
        {"format", 1, 0, 'f'}, {"out", 1, 0, 'o'}, {"for", 1, 0, O_FOR},
        {"lib-version", 1, 0, O_VER}, {"nranks", 1, 0, O_NRANKS}, {"rules-file", 1, 0, O_RULES},
        {"nccl-proto", 1, 0, O_PROTO}, {"nccl-channels", 1, 0, O_CHAN}, {"list", 0, 0, O_LIST},
        {"push", 1, 0, O_PUSH}, {"push-metrics", 1, 0, O_METRICS}, {"results", 1, 0, O_RESULTS},
        {"push-method", 1, 0, O_METHOD}, {"header", 1, 0, O_HEADER}, {"cacert", 1, 0, O_CACERT},
        {"insecure", 0, 0, O_INSECURE}, {"push-timeout", 1, 0, O_TIMEOUT},
        {"push-retries", 1, 0, O_RETRIES}, {"help", 0, 0, 'h'}, {0, 0, 0, 0}};
    /* clang-format on */
    long v;
    struct ct_err err = {0};
    opterr = 0;
    optind = 1;
    for (int c, li = 0; (c = getopt_long(argc, argv, ":f:o:h", lo, &li)) != -1;) {
        switch (c) {
        case 'f': x->format = optarg; break;
        case 'o':
            if (!*optarg)
                return ct_cmd_fail("export", CT_EXIT_USAGE, "--out: an empty path");
            x->out = strcmp(optarg, "-") ? optarg : NULL;
            break;
        case O_FOR:
            if ((x->eo.lib = ct_lib_find(optarg)) < 0)
                return ct_cmd_fail("export", CT_EXIT_USAGE,
                                   "unknown --for '%s' (nccl, ompi, mpich, ucc or impi)", optarg);
            break;
        case O_VER:
            if (ct_version_check(optarg, &err) < 0)
                return ct_cmd_fail("export", CT_EXIT_USAGE, "--lib-version: %s", err.msg);
            x->eo.version = optarg;
            break;
        case O_NRANKS:
            if (ct_parse_int(optarg, 1, 1 << 24, &v))
                return ct_cmd_fail("export", CT_EXIT_USAGE, "bad --nranks '%s' (1..16777216)",
                                   optarg);
            x->eo.nranks = (int)v;
            break;
        case O_RULES: x->eo.rules_path = optarg; break;
        case O_PROTO:
            if (strcmp(optarg, "ll") && strcmp(optarg, "ll128") && strcmp(optarg, "simple"))
                return ct_cmd_fail("export", CT_EXIT_USAGE,
                                   "bad --nccl-proto '%s' (ll, ll128 or simple)", optarg);
            x->eo.nccl_proto = optarg;
            break;
        case O_CHAN:
            if (ct_parse_int(optarg, 0, 64, &v))
                return ct_cmd_fail("export", CT_EXIT_USAGE, "bad --nccl-channels '%s' (0..64)",
                                   optarg);
            x->eo.nccl_channels = (int)v;
            break;
        case O_LIST: x->list = true; break;
        case O_PUSH:
            x->push = optarg;
            x->eo.one_file = true;
            break;
        case O_METRICS: x->metrics = optarg; break;
        case O_RESULTS: x->results = x->results_opt = optarg; break;
        case O_METHOD:
        case O_HEADER:
        case O_CACERT:
        case O_INSECURE:
        case O_TIMEOUT:
        case O_RETRIES: /* in that order (ct_arg_push) */
            CT_TRY_OPT(ct_arg_push(c - O_METHOD, optarg, &x->po));
            x->push_opt = x->push_opt ? x->push_opt : lo[li].name;
            break;
        case 'h':
            fputs(ct_help_export, stdout);
            ct_emitter_list(stdout);
            return -1;
        case ':':
            return ct_cmd_fail("export", CT_EXIT_USAGE, "option '%s' needs a value",
                               argv[optind - 1]);
        default: return ct_cmd_bad_option("export", lo, argv[optind - 1]);
        }
    }
    for (; optind < argc; optind++) {
        if (x->config)
            return ct_cmd_fail("export", CT_EXIT_USAGE, "unexpected argument '%s'", argv[optind]);
        x->config = x->eo.config_path = argv[optind];
    }
    return 0;
}

/* Write or print the export, its sidecars, notes and loader lines. */
static int deliver(struct export_ctx *x, const struct ct_emitter *e, struct ct_export_out *out)
{
    struct ct_err err = {0};
    for (size_t i = 0; i < out->nnotes; i++)
        ct_cmd_warn("export", "%s", out->notes[i]);
    int werr = 0; /* standard output first: the files it points to only once it is out */
    if (!x->eo.path && !x->push) {
        fwrite(ct_text_str(&out->body), 1, out->body.len, stdout);
        werr = ct_file_stream_error(stdout);
    }
    if (werr)
        return ct_cmd_fail("export", CT_EXIT_FAIL, "cannot write output: %s%s", strerror(werr),
                           out->rules_path ? " (the rules file it points to not written)" : "");
    if (x->eo.path || out->rules_path) {
        struct ct_export_files f;
        ct_export_files(e, out, x->eo.path, &f);
        int rc = ct_export_files_write(&f, &err);
        if (rc == 0)
            ct_export_files_print(stderr, "colltune export: ", &f);
        ct_export_files_release(&f);
        if (rc < 0)
            return ct_cmd_fail("export", CT_EXIT_FAIL, "%s", err.msg);
    }
    if (x->eo.path && e->kind == CT_EXPORT_LOADED)
        ct_export_loader_print(stderr, "colltune export: ", out);
    if (!x->push)
        return 0;
    struct ct_push_opts po = x->po;
    po.content_type = ct_emitter_mime(e);
    if (ct_push_text(stderr, "colltune export: ", e->name, x->push, &out->body, &po, &err) < 0)
        return ct_cmd_fail("export", err.code == CT_EINVAL ? CT_EXIT_USAGE : CT_EXIT_FAIL, "%s",
                           err.msg);
    return 0;
}

/* Everything that can be refused is checked before anything is written or sent. */
static int check(struct export_ctx *x, const struct ct_emitter **e)
{
    struct ct_err err = {0};
    if (!x->config)
        return ct_cmd_fail("export", CT_EXIT_USAGE, "which config? (export CONFIG --format F)");
    /* --for LIB alone: LIB's own format (with --push-metrics, the metrics alone as before) */
    if (ct_emitter_choose(x->format, x->metrics ? CT_LIB_NONE : x->eo.lib, e, &err) < 0)
        return ct_cmd_fail("export", CT_EXIT_USAGE, "%s", err.msg);
    if (!*e && !x->metrics)
        return ct_cmd_fail("export", CT_EXIT_USAGE,
                           "which format? (--format F, --for LIB; --list)");
    if (!*e && (x->out || x->push))
        return ct_cmd_fail("export", CT_EXIT_USAGE, "--out and --push need --format or --for");
    if ((x->push || x->metrics) && !ct_push_available())
        return ct_cmd_fail("export", CT_EXIT_USAGE,
                           "built without libcurl: no --push or --push-metrics");
    if ((x->push && ct_push_url_check(x->push, &err) < 0) ||
        (x->metrics && ct_push_url_check(x->metrics, &err) < 0))
        return ct_cmd_fail("export", CT_EXIT_USAGE, "%s", err.msg);
    if (x->push_opt && !x->push && !x->metrics)
        return ct_cmd_fail("export", CT_EXIT_USAGE, "--%s is for --push or --push-metrics URL",
                           x->push_opt);
    if (x->results_opt && !x->metrics)
        return ct_cmd_fail("export", CT_EXIT_USAGE, "--results is for --push-metrics URL");
    if (x->metrics && access(x->results, R_OK) < 0)
        return ct_cmd_fail("export", CT_EXIT_USAGE,
                           "--push-metrics needs the sweep results: cannot read '%s' "
                           "(--results FILE)",
                           x->results);
    return 0;
}

int cmd_export(int argc, char **argv)
{
    struct export_ctx x = {0};
    const struct ct_emitter *e = NULL;
    struct ct_config c;
    struct ct_export_out out;
    struct ct_err err = {0};
    char *results = NULL;
    int rc;
    ct_export_opts_init(&x.eo);
    ct_push_opts_init(&x.po);
    ct_config_init(&c);
    ct_export_out_init(&out);
    if ((rc = parse(&x, argc, argv)))
        goto done;
    if (x.list) {
        ct_emitter_list(stdout);
        goto done;
    }
    if (x.config && !x.results)
        x.results = results = ct_path_sibling(x.config, "results.json");
    if ((rc = check(&x, &e)))
        goto done;
    if (ct_config_json_read(x.config, &c, &err) < 0) {
        rc = ct_cmd_fail("export", CT_EXIT_USAGE, "%s", err.msg);
        goto done;
    }
    if (e) {
        /* absolute: the loader lines name them for jobs started anywhere */
        char *path = x.out ? ct_path_absolute(x.out) : NULL,
             *rules = x.eo.rules_path ? ct_path_absolute(x.eo.rules_path) : NULL;
        x.eo.path = path;
        x.eo.rules_path = rules;
        if (ct_export_run(e, &c, &x.eo, &out, &err) < 0)
            rc = ct_cmd_fail("export", err.code == CT_EIO ? CT_EXIT_FAIL : CT_EXIT_USAGE, "%s",
                             err.msg);
        if (!rc && (path || out.rules_path)) {
            struct ct_export_files f;
            ct_export_files(e, &out, path, &f);
            f.input = x.config;
            if (ct_export_files_check(&f, &err) < 0)
                rc = ct_cmd_fail("export", CT_EXIT_USAGE, "%s", err.msg);
            ct_export_files_release(&f);
        }
        if (!rc)
            rc = deliver(&x, e, &out);
        free(path);
        free(rules);
    }
    if (!rc && x.metrics &&
        ct_push_metrics(stderr, "colltune export: ", x.metrics, &c, x.results, &x.po, &err) < 0)
        rc = ct_cmd_fail("export", err.code == CT_EINVAL ? CT_EXIT_USAGE : CT_EXIT_FAIL, "%s",
                         err.msg);
done:
    ct_push_opts_release(&x.po);
    free(results);
    ct_export_out_release(&out);
    ct_config_release(&c);
    return rc < 0 ? CT_EXIT_OK : rc;
}
