/* SPDX-License-Identifier: MIT */
/*
 * run|sweep --lib LIB: colltune starts itself again under the library's own launcher (with
 * backend/libmod.h's marker in the ranks' environment); each rank loads the library's engine
 * module and measures through it. run prints the same nccl-tests table as native runs.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../backend/libmod.h"
#include "../lib/clock.h"
#include "../lib/file.h"
#include "../output/config.h"
#include "../output/sweep_out.h"
#include "../tune/job.h"
#include "cmd.h"
#include "librun.h"

int ct_librun(const struct ct_opts *o, const struct ct_librun_cfg *r, int argc, char **argv)
{
    if (!o->lib || !ct_libmod_find(o->lib))
        return ct_cmd_fail("run", CT_EXIT_USAGE, "--sizes needs --lib %s (an MPI library's engine)",
                           ct_libmod_names());
    const char *lo = o->lib_algo ? strchr(o->lib_algo, ':') : NULL;
    if (lo && !strcmp(lo, ":list") && r->json) /* no run, no results; rank 0 says it */
        return ct_libmod_in_rank() && ct_libmod_rank()
                   ? CT_EXIT_USAGE
                   : ct_cmd_fail("run", CT_EXIT_USAGE, "--json: --algo %s prints the names alone",
                                 o->lib_algo);
    uint64_t *list = NULL; /* --sizes (checked before the launch), else nccl-tests' steps */
    long nlist = r->sizes ? ct_lib_sizes(o, r->sizes, &list) : 0;
    if (nlist < 0)
        return CT_EXIT_USAGE;
    if (!ct_libmod_in_rank()) {
        uint64_t top = r->sizes ? ct_sizes_max(list, (size_t)nlist) : r->maxb;
        int rc = o->local ? ct_lib_sizes_exact(o, list, nlist, o->local, true) : 0;
        free(list);
        return rc ? rc : ct_lib_launch(o, "run", CT_COLL_BIT(o->coll), top, argc, argv);
    }
    struct ct_backend be;
    void *ctx;
    struct ct_err err = {0};
    CT_TRY_OPT(ct_lib_engine_open(o, "run", &be, &ctx));
    const struct ct_algo *a = ct_lib_candidate(o, "run", &be, ctx);
    const struct ct_coll_desc *d = ct_coll_desc(o->coll);
    size_t es = ct_dtype_size(o->dtype);
    const char *asked = o->lib_algo ? strchr(o->lib_algo, ':') : NULL; /* LIB:list: exit 0 */
    int n = be.shape.nranks, code = a || (asked && !strcmp(asked, ":list")) ? 0 : CT_EXIT_USAGE;
    struct ct_row *rows = NULL;
    size_t nrows = 0;
    if (!r->sizes)
        nlist = (long)ct_bench_sizes(o->coll, r->minb, r->maxb, r->factor, es, n, &list);
    code = a && r->sizes ? ct_lib_sizes_exact(o, list, nlist, n, be.root) : code;
    a = nlist > 0 && !code ? a : NULL;
    struct ct_run_meta m = {.coll = d->name,
                            .transport = be.library,
                            .version = CT_VERSION,
                            .minbytes = r->sizes ? ct_sizes_min(list, (size_t)nlist) : r->minb,
                            .maxbytes = r->sizes ? ct_sizes_max(list, (size_t)nlist) : r->maxb,
                            .stepfactor = r->factor,
                            .warmup = r->warmup,
                            .iters = r->iters,
                            .check = r->check,
                            .nranks = n,
                            .nnodes = be.ranks ? ct_rank_info_nodes(be.ranks, n)
                                               : n / ct_shape_rpn(&be.shape),
                            .ranks = be.ranks,
                            .args = r->cmdline,
                            .batch = r->batch};
    FILE *tab = ct_cmd_report_stream(r->json); /* --json -: the JSON alone on stdout */
    for (long k_size = 0; a && k_size < nlist; k_size++) {
        uint64_t size = list[k_size];
        struct ct_job j = {.coll = o->coll,
                           .dtype = o->dtype,
                           .op = o->op,
                           .shape = be.shape,
                           .params = o->params};
        j.count = d->count_for(size, es, n);
        rows = ct_xrealloc(rows, (nrows + 1) * sizeof *rows);
        struct ct_row *row = &rows[nrows++];
        ct_row_init(row, o->dtype, d->needs_op ? (int)o->op : -1, a->name);
        ct_opts_params_str(o, a, row->params, sizeof row->params);
        for (int k = r->place == CT_PLACE_IN; k <= (r->place != CT_PLACE_OUT); k++) {
            struct ct_point p;
            struct ct_bench_cfg bc = {r->iters, r->warmup, r->check, r->batch, r->max_s};
            j.in_place = k;
            if (ct_backend_point(&be, ctx, a, &j, &bc, &p, &err) < 0) {
                /* every rank refuses alike (the library's own answer, or a setting that
                 * makes the row a lie, agreed by the ranks): said once */
                bool unsupp = err.code == CT_EUNSUPP || err.code == CT_EINVAL;
                code = unsupp ? CT_EXIT_USAGE : CT_EXIT_FAIL;
                if (be.root || !unsupp)
                    ct_cmd_fail("run", code, "rank %d: %s %llu bytes: %s", be.shape.rank, d->name,
                                (unsigned long long)d->size_bytes(j.count, es, n), err.msg);
                goto out;
            }
            ct_row_fill(row, &p, k);
        }
        if (be.root && nrows == 1) /* once the library ran a size: a refusal prints no table */
            ct_table_header(tab, &m);
        if (be.root)
            ct_table_row(tab, row);
    }
    code = a && be.root && ct_table_footer(tab, rows, nrows) > 0 ? CT_EXIT_CHECK : code;
    if (a && be.root && r->json && ct_results_json_write(r->json, &m, rows, nrows, &err) < 0)
        code = ct_cmd_fail("run", CT_EXIT_FAIL, "%s", err.msg);
out:
    free(rows);
    free(list);
    return ct_lib_close_bounded(&be, ctx, code, o->timeout_s);
}

/* Rank 0 of a library sweep, after every point: results.json every 2 s, as native sweeps
 * save theirs, so that an interrupted or failed job keeps what it measured. */
struct lib_save {
    struct ct_sweep_job *j;
    const char *path; /* the sweep's folder */
    double last;
};

static void lib_points(void *arg, const struct ct_sweep_point *pts, size_t n)
{
    struct lib_save *s = arg;
    double t = (double)ct_now_ns() * 1e-9;
    struct ct_err err = {0};
    if (t - s->last < 2)
        return;
    s->last = t;
    s->j->meta.sweep.points = (long)n;
    (void)ct_sweep_outputs_running(s->path, &s->j->meta, pts, n, !s->j->saved++, &err);
}

int ct_libsweep(const struct ct_opts *o, const struct ct_sweep_cfg *cfg, const char *out,
                const struct ct_config *verify, const char *verify_path, int argc, char **argv)
{
    if (verify_path && (o->nlib_env || o->nenv_search || o->lib_algo))
        return ct_cmd_fail(
            "sweep", CT_EXIT_USAGE,
            o->lib_algo   ? "--algo(s) is for a sweep: verify runs the rules CONFIG has"
            : o->nlib_env ? "--env is for a sweep: verify sets the launch settings CONFIG records"
                          : "--env-search is for a sweep: verify sets the launch settings "
                            "CONFIG records");
    if (verify_path)
        return strcmp(o->lib, "nccl") ? ct_libverify(o, verify, verify_path, cfg->colls)
                                      : ct_nccl_verify(o, verify, verify_path);
    int most, least;
    long cores = ct_libmod_cores(); /* ranks beyond them time the scheduler */
    const char *pl = cores > 1 ? "s" : "";
    const char *vo = ct_opts_verify_only(o);
    if (vo) /* what verify judges: none yet */
        return ct_cmd_fail("sweep", CT_EXIT_USAGE, "--%s is for sweep --verify CONFIG", vo);
    const struct ct_libmod *m = ct_libmod_find(o->lib);
    for (int i = 0; i < o->nlib_env; i++) /* the launcher passes them on; a rank, to MPI_Init */
        ct_libmod_env_put(m, o->lib_env[i].name, o->lib_env[i].value);
    bool se = o->nenv_search > 0;
    if (!ct_libmod_in_rank()) {
        int rc = o->hosts && ct_libmod_hosts_slots(o->hosts, &most, &least) > 0 && most != least
                     ? ct_cmd_fail("sweep", CT_EXIT_USAGE, /* rules: nodes x ranks per node */
                                   "--hosts %s spreads the ranks unevenly over the hosts: place "
                                   "as many on each host",
                                   o->hosts)
                     : ct_lib_launch_check(o, "sweep", cfg->colls, cfg->maxbytes);
        if (se && !rc && cores > 0 && o->local > cores) /* it would pick from the noise */
            rc = ct_cmd_fail("sweep", CT_EXIT_USAGE,
                             "--env-search on %d ranks over %ld core%s would judge the scheduler "
                             "more than %s: search with at most %ld rank%s",
                             o->local, cores, pl, m->title, cores, pl);
        if (se && !rc) /* what it found set in the environment, where the ranks read it */
            rc = ct_libsearch(o, cfg);
        bool said; /* checked above: the hosts resolved once (ct_lib_launch would again) */
        return rc ? rc : ct_lib_job(o, "sweep", 0, argc, argv, NULL, &said);
    }
    if (se && !getenv(CT_LIBMOD_ENV)) /* under a launcher of the user's: no search ran */
        return ct_libmod_rank() ? CT_EXIT_USAGE
                                : ct_cmd_fail("sweep", CT_EXIT_USAGE,
                                              "--env-search runs its launches itself (--local N "
                                              "or --hosts LIST); under %s, give a value with --env",
                                              ct_libmod_launcher(m));
    struct ct_backend be;
    void *ctx;
    struct ct_err err = {0};
    char host[256] = "";
    CT_TRY_OPT(ct_lib_engine_open(o, "sweep", &be, &ctx));
    if (!be.shape.ranks_per_node) /* the rules are per nodes x ranks per node */
        return ct_lib_close_bounded(&be, ctx,
                                    be.root
                                        ? ct_cmd_fail("sweep", CT_EXIT_USAGE,
                                                      "the %d ranks are spread unevenly over the "
                                                      "hosts: place as many on each host",
                                                      be.shape.nranks)
                                        : CT_EXIT_USAGE,
                                    o->timeout_s);
    if (ct_lib_rows_check(o, cfg->colls, &be, ctx))
        return ct_lib_close_bounded(&be, ctx, CT_EXIT_USAGE, o->timeout_s);
    if (be.distinct) /* a forced row that runs the library's own choice is the default row */
        be.distinct(ctx, true);
    struct ct_sweep_job j;
    memset(&j, 0, sizeof j);
    j.cfg = *cfg;
    j.cfg.lib_rows = o->lib_algo; /* --algos LIB:NAME,...: those rows and the default */
    struct ct_lib_env env[CT_LIB_ENV_MAX]; /* --env, and the value --env-search found */
    memcpy(env, o->lib_env, sizeof env);
    j.cfg.lib_env = env;
    j.cfg.nlib_env = o->nlib_env;
    for (int i = 0; i < o->nenv_search && j.cfg.nlib_env < CT_LIB_ENV_MAX; i++) {
        const char *name = o->env_search[i].name, *v = getenv(name); /* the search's (above) */
        if (!v)
            continue;
        snprintf(env[j.cfg.nlib_env].name, sizeof env[0].name, "%s", name);
        snprintf(env[j.cfg.nlib_env++].value, sizeof env[0].value, "%s", v);
    }
    j.version = CT_VERSION;
    struct lib_save save = {.j = &j, .path = out};
    if (be.root) {
        j.cfg.on_points = lib_points;
        j.cfg.arg = &save;
    }
    gethostname(host, sizeof host - 1);
    int rc = ct_sweep_job_run_on(&j, &be, ctx, be.shape.nranks / ct_shape_rpn(&be.shape),
                                 be.library, host, &err);
    int code = rc == 0            ? CT_EXIT_OK
               : rc == CT_EVERIFY ? CT_EXIT_CHECK
                                  : CT_EXIT_FAIL,
        rpn = ct_shape_rpn(&be.shape);
    if (be.root && cores > 0 && rpn > cores && ct_config_lib(&j.meta, o->lib)) {
        ct_cmd_warn(
            "sweep",
            "%d ranks on a host of %ld usable core%s time the scheduler more than %s: reported "
            "below, not tuned (no config.json written; sweep with at most %ld rank%s per host)",
            rpn, cores, pl, m->title, cores, pl);
        fflush(stderr);
        j.meta.report = true, ct_config_print(stdout, &j.meta); /* the measured choices */
        printf("\n");
        ct_config_lib_drop(&j.meta, o->lib);
    }
    if (be.root)
        code = ct_sweep_finish(out, &j, rc, &err, cfg->maxbytes);
    ct_sweep_job_release(&j);
    return ct_lib_close_bounded(&be, ctx, code, o->timeout_s);
}
