/* SPDX-License-Identifier: MIT */
/* One rank's part of a sweep on a communicator (see job.h). */
#include "job.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../lib/cpus.h"
#include "../lib/parse.h"
#include "config.h"

/* The largest size `sweep --verify` measures coll at on nranks (ct_sweep_check_count of every
 * rule of the config's sets of coll on nranks: a joined config's others are not verified
 * there), or 0 when it has none. */
static uint64_t verify_top(const struct ct_config *conf, enum ct_coll coll, int nranks)
{
    uint64_t top = 0;
    for (int i = 0; i < conf->nsets; i++) {
        const struct ct_ruleset *s = &conf->sets[i];
        if (s->nranks != nranks)
            continue;
        size_t es = ct_dtype_size(s->dtype);
        for (int k = 0; s->coll == coll && k < s->nrules; k++) {
            uint64_t n = ct_sweep_check_count(s, &s->rules[k], conf->sweep.minbytes,
                                              conf->sweep.maxbytes),
                     b = ct_coll_desc(coll)->size_bytes(n, es, s->nranks);
            top = b > top ? b : top;
        }
    }
    return top;
}

/* The native engine's buffers are made once, as large as the sweep's largest point of
 * every collective needs under any candidate (bruck's AllToAll scratch is twice its size).
 * A verify's as large as its largest check point, as the sweep that wrote the config had
 * them, not --maxbytes's default: on this 2-core PVM guest, buffers reserved for 256 MiB made
 * symm's 64 KiB AllReduce 4.7x slower (14.6 us against 3.1; ring 1.0-1.5x) than in the 64 KiB
 * sweep that chose it, and verify failed that sweep's config (the hypervisor's shadow page
 * tables: symm touches its peer's pages too). */
static uint64_t reserve(const struct ct_sweep_cfg *cfg0, const struct ct_backend *be,
                        struct ct_native *nat, const struct ct_config *verify)
{
    uint64_t largest = 0;
    struct ct_sweep_cfg shaped;
    const struct ct_sweep_cfg *cfg = ct_sweep_cfg_shaped(cfg0, be, nat, &shaped);
    const struct ct_algo *al[CT_SWEEP_MAX_CANDS];
    for (int c = 0; c < CT_COLL_COUNT; c++) {
        if (!(cfg->colls & CT_COLL_BIT(c)))
            continue;
        const struct ct_coll_desc *d = ct_coll_desc((enum ct_coll)c);
        size_t n = ct_sweep_algos(cfg, (enum ct_coll)c, al, CT_SWEEP_MAX_CANDS);
        struct ct_job x = cfg->job;
        size_t es = ct_dtype_size(x.dtype);
        x.coll = (enum ct_coll)c;
        x.op = d->needs_op ? x.op : CT_SUM;
        x.in_place = false;
        uint64_t top =
            verify ? verify_top(verify, (enum ct_coll)c, be->shape.nranks) : cfg->maxbytes;
        x.count = d->count_for(top / es * es, es, be->shape.nranks);
        ct_bench_reserve(&nat->b, al, n < CT_SWEEP_MAX_CANDS ? n : CT_SWEEP_MAX_CANDS, &x);
        largest = top > largest ? top : largest;
    }
    return largest;
}

/* A config's verify over the transport it was tuned over (rank 0's, as the config records
 * it; a prediction's, or a config of library sections alone, whose "transport" is the
 * library's, is not checked): 0, or CT_EUNSUPP in every rank, rank 0's saying why. */
static int same_transport(const struct ct_config *conf, struct ct_comm *c, const char *tp,
                          struct ct_err *err)
{
    char mine[96], *all = ct_xcalloc((size_t)c->size, sizeof mine);
    snprintf(mine, sizeof mine, "%s", tp);
    int rc = ct_boot_allgather(c->boot, mine, sizeof mine, all, err);
    const char *was = conf->fp.transport;
    if (rc == 0 && conf->nsets && *was && strcmp(was, "model") && strcmp(was, all))
        rc = c->rank ? ct_err_set(err, CT_EUNSUPP, "rank 0 stopped the sweep")
                     : ct_err_set(err, CT_EUNSUPP,
                                  "--verify: the config was tuned over %s and this job runs over "
                                  "%s: its choices are that transport's (--transport)",
                                  was, all);
    free(all);
    return rc;
}

int ct_sweep_job_run(struct ct_sweep_job *j, struct ct_comm **comm, struct ct_err *err)
{
    char tp[96];
    long cores = ct_cpus_host();
    const struct ct_boot *bt = (*comm)->boot; /* every rank on this machine shares its cores */
    int local = bt && bt->host_size > 0   ? bt->host_size
                : (*comm)->local_size > 0 ? (*comm)->local_size
                                          : 1;
    j->cfg.tcp = strstr(ct_comm_tp_names(*comm, tp, sizeof tp), "tcp") != NULL;
    j->cfg.max_threads = (int)(cores / local);
    struct ct_backend be;
    struct ct_native nat;
    struct ct_params p0 = j->cfg.job.params;
    ct_params_defaults(&p0);
    ct_native_open(&be, &nat, comm, (int)p0.v[CT_P_STREAMS], j->cfg.tcp ? j->set_conns : NULL,
                   j->conns_arg);
    ct_native_set_mem(&nat, j->mem);
    char what[64], b[32];
    snprintf(what, sizeof what, "the largest point, %s",
             ct_bytes_str(reserve(&j->cfg, &be, &nat, j->verify), b, sizeof b));
    /* refused before any is measured (-e 1T ran until the OOM killer ended a rank) */
    int rc = ct_bench_mem_check(&nat.b, what, err);
    if (rc == CT_EUNSUPP && (*comm)->rank) /* every rank refused alike: rank 0 says it */
        ct_err_set(err, rc, "rank 0 stopped the sweep");
    if (rc == 0 && j->verify)
        rc = same_transport(j->verify, *comm, tp, err);
    if (rc == 0)
        rc = ct_sweep_job_run_on(j, &be, &nat, (*comm)->nnodes, tp, (*comm)->boot->host, err);
    if (nat.b.stage) {
        snprintf(j->mem_kind, sizeof j->mem_kind, "%s", j->mem->kind->name);
        j->points_resident = nat.b.points_resident;
        j->points_staged = nat.b.points_staged;
        snprintf(j->res_why, sizeof j->res_why, "%s", nat.b.res_why);
    }
    ct_native_close(&nat);
    return rc;
}

int ct_sweep_job_run_on(struct ct_sweep_job *j, const struct ct_backend *be, void *ctx, int hosts,
                        const char *transport, const char *host, struct ct_err *err)
{
    if (j->verify)
        return ct_sweep_verify(&j->cfg, be, ctx, j->verify, &j->regrets, &j->nregrets, err);
    /* the engine's shape: a library engine's ranks are counted once they started (its
     * --hosts sweeps said "2 hosts x 1 ranks (1 ranks)" for 2 x 2) */
    struct ct_sweep_cfg shaped;
    ct_sweep_meta_init(&j->meta, ct_sweep_cfg_shaped(&j->cfg, be, ctx, &shaped), j->version, hosts,
                       transport, host);
    const char *staged = ct_native_staged_kind(j->mem);
    snprintf(j->meta.fp.mem, sizeof j->meta.fp.mem, "%s", staged ? staged : "");
    if (be->predicted)
        snprintf(j->meta.sweep.predicted, sizeof j->meta.sweep.predicted, "%s", be->predicted);
    int rc = ct_sweep_run(&j->cfg, be, ctx, &j->res, err);
    /* the rows the sweep measured (a library engine's own) name the rules */
    ct_sweep_config_build(&j->meta, ct_sweep_cfg_shaped(&j->cfg, be, ctx, &shaped), &j->res,
                          rc < 0);
    return rc;
}

void ct_sweep_job_release(struct ct_sweep_job *j)
{
    ct_sweep_result_release(&j->res);
    ct_config_release(&j->meta);
    free(j->regrets);
    j->regrets = NULL;
    j->nregrets = 0;
}
