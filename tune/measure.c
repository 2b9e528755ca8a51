/* SPDX-License-Identifier: MIT */
/*
 * The sweep's measurement controller: the space searched (configuration, candidates,
 * parameter grids), the command protocol (rank 0 plans, every rank acts) and the adaptive
 * batches of one point, over any backend (backend/backend.h). The planner is in plan.c,
 * survey.c and plan_tune.c; the whole sweep in sweep.c.
 */
#include "sweep.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/clock.h"
#include "../algos/coll.h"
#include "../backend/bench.h"
#include "../lib/parse.h"
#include "stats.h"
#include "plan.h"
#include "select.h"

void ct_sweep_cfg_init(struct ct_sweep_cfg *c)
{
    memset(c, 0, sizeof *c);
    c->colls = CT_COLLS_ALL;
    c->job.dtype = CT_FLOAT32;
    c->job.op = CT_SUM;
    c->job.shape.nranks = 1;
    c->minbytes = 8;
    c->maxbytes = 256ull << 20;
    c->stepfactor = 2;
    c->budget_s = CT_SWEEP_BUDGET_S;
    c->target_ci = 0.05;
    c->margin = 0.10;
    c->max_regret = 1.10;
    c->warmup = 2;
    c->min_iters = 6;
    c->max_iters = 1000;
}

void ct_sweep_result_release(struct ct_sweep_result *r)
{
    free(r->pts);
    memset(r, 0, sizeof *r);
}

/* The job of coll at size bytes on the sweep's shape, for building schedules. */
static struct ct_job job_at(const struct ct_sweep_cfg *cfg, enum ct_coll coll, uint64_t bytes)
{
    struct ct_job j = cfg->job;
    size_t es = ct_dtype_size(j.dtype);
    int nr = j.shape.nranks > 0 ? j.shape.nranks : 1;
    j.coll = coll;
    j.count = ct_coll_desc(coll)->count_for(bytes / es * es, es, nr);
    j.count = j.count ? j.count : 1;
    j.shape.rank = 0;
    return j;
}

uint64_t ct_sweep_support_top(const struct ct_sweep_cfg *cfg, enum ct_coll coll,
                              const struct ct_algo *a, const struct ct_params *params,
                              struct ct_err *why)
{
    const struct ct_coll_desc *d = ct_coll_desc(coll);
    size_t es = ct_dtype_size(cfg->job.dtype);
    int nr = cfg->job.shape.nranks > 0 ? cfg->job.shape.nranks : 1;
    struct ct_job j = job_at(cfg, coll, CT_SWEEP_SIZE_CEIL);
    if (params)
        j.params = *params;
    uint64_t lo = 0, hi = j.count; /* runs at lo (0: nothing known), not at hi */
    if (ct_algo_supports(a, &j, NULL) == 0)
        return UINT64_MAX;
    while (hi - lo > 1) {
        j.count = lo + (hi - lo) / 2;
        if (ct_algo_supports(a, &j, NULL) == 0)
            lo = j.count;
        else
            hi = j.count;
    }
    j.count = hi;
    ct_algo_supports(a, &j, why); /* the reason at the first size it refuses */
    return lo ? d->size_bytes(lo, es, nr) : 0;
}

/* a builds the same schedule as b at the smallest, the middle and the largest size. */
static bool same_work(const struct ct_sweep_cfg *cfg, enum ct_coll coll, const struct ct_algo *a,
                      const struct ct_algo *b)
{
    uint64_t lo = cfg->minbytes ? cfg->minbytes : 1, hi = cfg->maxbytes > lo ? cfg->maxbytes : lo;
    uint64_t at[3] = {lo, (uint64_t)sqrt((double)lo * (double)hi), hi};
    for (int i = 0; i < 3; i++) {
        struct ct_job j = job_at(cfg, coll, at[i]);
        if (!ct_algo_same_schedule(a, b, &j))
            return false;
    }
    return true;
}

/* Supported candidates of coll in table order, each either kept or folded into the first
 * earlier kept one whose schedule is the same (into[i] >= 0: index in out of that one). */
static size_t candidates(const struct ct_sweep_cfg *cfg, enum ct_coll coll,
                         const struct ct_algo **out, int *into)
{
    size_t k = 0, n = cfg->algos ? cfg->nalgos : ct_algo_count();
    for (size_t i = 0; i < n; i++) {
        const struct ct_algo *a = cfg->algos ? cfg->algos[i] : ct_algo_at(i);
        struct ct_job j = job_at(cfg, coll, 0);
        j.count = (uint64_t)(j.shape.nranks > 0 ? j.shape.nranks : 1);
        if (ct_algo_supports(a, &j, NULL) < 0)
            continue;
        out[k] = a;
        into[k] = -1;
        for (size_t e = 0; e < k && into[k] < 0; e++)
            if (into[e] < 0 && same_work(cfg, coll, a, out[e]))
                into[k] = (int)e;
        k++;
    }
    return k;
}

size_t ct_sweep_algos(const struct ct_sweep_cfg *cfg, enum ct_coll coll, const struct ct_algo **out,
                      size_t max)
{
    size_t n = ct_algo_count() + (cfg->algos ? cfg->nalgos : 0);
    const struct ct_algo **all = ct_xcalloc(n, sizeof *all);
    int *into = ct_xcalloc(n, sizeof *into);
    size_t na = candidates(cfg, coll, all, into), k = 0;
    for (size_t i = 0; i < na; i++)
        if (into[i] < 0) {
            if (out && k < max)
                out[k] = all[i];
            k++;
        }
    free(all);
    free(into);
    return k;
}

size_t ct_sweep_folds(const struct ct_sweep_cfg *cfg, enum ct_coll coll, struct ct_sweep_fold *out,
                      size_t max)
{
    size_t n = ct_algo_count() + (cfg->algos ? cfg->nalgos : 0);
    const struct ct_algo **all = ct_xcalloc(n, sizeof *all);
    int *into = ct_xcalloc(n, sizeof *into);
    size_t na = candidates(cfg, coll, all, into), k = 0;
    for (size_t i = 0; i < na; i++)
        if (into[i] >= 0) {
            if (out && k < max)
                out[k] = (struct ct_sweep_fold){all[i], all[into[i]]};
            k++;
        }
    free(all);
    free(into);
    return k;
}

double ct_sweep_min_budget(const struct ct_sweep_cfg *cfg)
{
    double s = 0;
    for (int c = 0; c < CT_COLL_COUNT; c++)
        if (cfg->colls & CT_COLL_BIT(c))
            /* bring-up of the point, verification, warmup and the first samples at an
             * assumed 1 GB/s, plus per-batch gathering */
            s += 0.02 + (3.0 + cfg->warmup + cfg->min_iters) * (20e-6 + cfg->minbytes / 1e9);
    return s;
}

int ct_sweep_grid(const struct ct_sweep_cfg *cfg, enum ct_param_id p, uint64_t *vals)
{
    int n = 0;
    switch (p) {
    case CT_P_CHUNK:
        for (uint64_t v = 16 << 10; v <= 4u << 20; v *= 4)
            vals[n++] = v;
        break;
    case CT_P_PIPELINE:
        for (uint64_t v = 1; v <= 8; v *= 2)
            vals[n++] = v;
        break;
    case CT_P_CHANNELS: /* at most 64 (the parameter's range): 7 values */
        for (uint64_t v = 1;
             v <= (cfg->max_channels > 0 ? (uint64_t)cfg->max_channels : 4) && v <= 64; v *= 2)
            vals[n++] = v;
        break;
    case CT_P_STREAMS: /* a long link needs many: its window per connection is bounded */
        for (uint64_t v = 1; cfg->tcp && v <= 64; v *= 2)
            vals[n++] = v;
        break;
    case CT_P_INFLIGHT:
        for (uint64_t v = 1; cfg->tcp && v <= 8; v *= 2)
            vals[n++] = v;
        break;
    case CT_P_THREADS:
        for (uint64_t v = 1; v <= 4 && (int)v <= cfg->max_threads; v *= 2)
            vals[n++] = v;
        break;
    default: break;
    }
    vals[n] = 0;
    return n;
}

unsigned ct_sweep_searched(const struct ct_sweep_cfg *cfg, enum ct_coll c, const struct ct_algo *a)
{
    unsigned m = 0, own = ct_algo_params(a, c);
    uint64_t vals[9];
    for (int p = 0; p < CT_P_COUNT; p++)
        if ((own & CT_PBIT(p)) && !cfg->job.params.v[p] &&
            ct_sweep_grid(cfg, (enum ct_param_id)p, vals) > 1)
            m |= CT_PBIT(p);
    return m;
}

/* ---- one point: adaptive batches ---------------------------------------------------- */

static void samples_push(struct ct_sweep_samples *s, int more)
{
    if (s->n + more > s->cap) {
        s->cap = (s->n + more) * 2;
        s->x = ct_xrealloc(s->x, sizeof(double) * (size_t)s->cap);
    }
}

/* The fewest samples a point is judged on: min_iters, and for a short collective as many
 * as span MIN_TIMED_S of timed iterations. The first iterations after a switch of
 * algorithm or size run cold (flags and buffers elsewhere in the caches): six of a 0.7 us
 * alltoall once read 0.98 us, and the point was pruned; a thousand read 0.77. */
#define MIN_TIMED_S 1e-3
static bool enough_samples(const struct ct_sweep_cmd *cmd, const struct ct_stats *st, int reps)
{
    return st->n >= cmd->min_iters &&
           (st->n >= cmd->max_iters || (double)st->n * reps * st->median * 1e-6 >= MIN_TIMED_S);
}

/*
 * Size of the next batch, from the samples so far and the command only, so identical on
 * every rank: the samples the interval still needs (at most doubling: one slow sample of the
 * first six asked for a thousand more, 32 ms at 64 runs of 0.5 us each), or those still
 * missing to min_iters and MIN_TIMED_S, at least enough to fill ~2 ms so the per-batch
 * gathering stays small, within the point's budget and max_iters. A sample costs its reps
 * runs plus the command's per-sample overhead (barrier, gathering). 0 = stop.
 */
static int next_batch(const struct ct_sweep_cmd *cmd, const struct ct_stats *st, double spent_s,
                      int reps)
{
    if (st->n >= cmd->max_iters)
        return 0;
    bool enough = enough_samples(cmd, st, reps);
    if (enough && ct_stats_converged(st, cmd->target))
        return 0;
    double per = reps * (st->median > 0 ? st->median * 1e-6 : 1e-6) + cmd->iter_cost_s;
    double left = cmd->budget_s - spent_s;
    if (enough && left < per)
        return 0;
    int more = ct_stats_more(st, cmd->target);
    if (more > st->n)
        more = st->n;
    double need = cmd->min_iters - st->n, timed = reps * st->median * 1e-6;
    if (timed > 0 && ceil(MIN_TIMED_S / timed) - st->n > need)
        need = ceil(MIN_TIMED_S / timed) - st->n;
    if (!enough && more < need)
        more = need > cmd->max_iters ? cmd->max_iters : (int)need;
    double fill = ceil(2e-3 / per);
    if (more < fill)
        more = fill > 1e6 ? 1000000 : (int)fill;
    double afford = floor(left / per);
    if (enough && more > afford)
        more = (int)afford;
    if (more > cmd->max_iters - st->n)
        more = cmd->max_iters - st->n;
    return more < 1 ? (enough ? 0 : 1) : more;
}

/*
 * Runs back to back per sample (bench.h, ct_bench_reps_for: one run per sample also times
 * the barrier's exit skew, which a point keeps or not by chance), from the median of PROBE
 * samples of one run each, timed after the warmup. The probe's times are the same on every
 * rank, so is the count. Where it is one run (a long collective), the probe's samples are
 * the point's first.
 */
#define PROBE CT_BENCH_REPS_PROBE

static int probe_reps(struct ct_sweep_run *r, const struct ct_sweep_cmd *cmd, int warm,
                      struct ct_sweep_samples *s, double *spent, int *reps, struct ct_err *err)
{
    samples_push(s, PROBE);
    CT_TRY(r->be->time(r->ctx, warm, PROBE, 1, s->x + s->n, err));
    struct ct_stats st;
    ct_stats_compute(s->x + s->n, PROBE, &st);
    double timed = PROBE * st.mean * 1e-6;
    *spent += timed + PROBE * cmd->iter_cost_s;
    *reps = ct_bench_reps_for(st.median);
    if (*reps == 1) {
        r->res->measuring_s += timed;
        s->n += PROBE;
    }
    return 0;
}

static int batches(struct ct_sweep_run *r, const struct ct_sweep_cmd *cmd, bool warmed,
                   struct ct_sweep_samples *s, struct ct_stats *st, int *reps, struct ct_err *err)
{
    double spent = st->spent_s;
    /* a verified run just warmed the point up: it counts as one warmup iteration */
    int warm = cmd->warmup - (warmed && cmd->warmup > 0), batch = cmd->first_batch > 0 ? cmd->first_batch : cmd->min_iters;
    if (batch > cmd->max_iters - s->n)
        batch = cmd->max_iters - s->n;
    if (*reps < 1) {
        CT_TRY(probe_reps(r, cmd, warm, s, &spent, reps, err));
        warm = 0;
        if (s->n > 0) { /* the probe's samples are the first */
            ct_stats_compute(s->x, s->n, st);
            batch -= s->n;
            if (batch < 1)
                batch = next_batch(cmd, st, spent, *reps);
        }
    }
    while (batch > 0) {
        samples_push(s, batch);
        CT_TRY(r->be->time(r->ctx, warm, batch, *reps, s->x + s->n, err));
        for (int i = 0; i < batch; i++) {
            spent += *reps * s->x[s->n + i] * 1e-6 + cmd->iter_cost_s;
            r->res->measuring_s += *reps * s->x[s->n + i] * 1e-6;
        }
        s->n += batch;
        warm = 0;
        ct_stats_compute(s->x, s->n, st);
        if (cmd->ref_hi > 0 && st->n >= CT_STATS_MIN_CI && enough_samples(cmd, st, *reps) &&
            st->lo > cmd->ref_hi * (1 + cmd->margin))
            break; /* clearly losing: no need for a tight interval */
        batch = next_batch(cmd, st, spent, *reps);
    }
    st->converged = ct_stats_converged(st, cmd->target);
    st->spent_s = spent;
    return 0;
}

static void job_of(const struct ct_sweep_run *r, const struct ct_sweep_cmd *cmd, struct ct_job *j)
{
    const struct ct_sweep_cfg *cfg = r->cfg;
    *j = cfg->job;
    j->coll = (enum ct_coll)cmd->coll;
    j->dtype = (enum ct_dtype)cmd->dtype;
    j->op = ct_coll_desc(j->coll)->needs_op ? (enum ct_redop)cmd->redop : CT_SUM;
    j->count = cmd->count;
    j->in_place = false;
    for (int p = 0; p < CT_P_COUNT; p++)
        j->params.v[p] = cmd->params[p];
    ct_params_defaults(&j->params);
}

static struct ct_sweep_point *new_point(struct ct_sweep_run *r, const struct ct_algo *a,
                                        const struct ct_job *j)
{
    struct ct_sweep_result *res = r->res;
    if (res->n == r->cap) {
        r->cap = r->cap ? r->cap * 2 : 64;
        res->pts = ct_xrealloc(res->pts, sizeof *res->pts * r->cap);
        r->smp = ct_xrealloc(r->smp, sizeof *r->smp * r->cap);
    }
    struct ct_sweep_point *p = &res->pts[res->n];
    memset(p, 0, sizeof *p);
    memset(&r->smp[res->n], 0, sizeof r->smp[res->n]);
    const struct ct_coll_desc *d = ct_coll_desc(j->coll);
    p->coll = j->coll;
    snprintf(p->algo, sizeof p->algo, "%s", a->name);
    p->params = j->params;
    p->own = a->own;
    p->count = j->count;
    p->size = d->size_bytes(j->count, ct_dtype_size(j->dtype), j->shape.nranks);
    return p;
}

static void finish_point(struct ct_sweep_point *p, int nranks)
{
    const struct ct_coll_desc *d = ct_coll_desc(p->coll);
    double algbw = p->st.median > 0 ? (double)p->size / p->st.median / 1e3 : 0;
    p->busbw = algbw * d->bus_factor(nranks);
}

void ct_sweep_note_refused(struct ct_sweep_result *res, enum ct_coll coll, const char *algo,
                           uint64_t size, const char *why)
{
    int i = 0;
    while (i < res->nrefused &&
           (res->refused[i].coll != (int)coll || strcmp(res->refused[i].algo, algo)))
        i++;
    /* the reason after the collective's name; it names the row, or is said after its name
     * ("allgather: ompi:X: MPI_T: ...") */
    char head[96];
    bool named = strstr(why, algo) != NULL;
    snprintf(head, sizeof head, "%s: %s%s", ct_coll_name(coll), named ? "" : algo,
             named ? "" : ": ");
    if (i == res->nrefused) {
        if (i == (int)(sizeof res->refused / sizeof res->refused[0]))
            return;
        snprintf(res->refused[i].algo, sizeof res->refused[i].algo, "%s", algo);
        res->refused[i].coll = (int)coll;
        char *w = res->refused[i].why; /* 224 bytes: the head (< 96) always fits */
        size_t off = strlen(head), m = strlen(why), room = sizeof res->refused[i].why - off - 1;
        memcpy(w, head, off);
        memcpy(w + off, why, m < room ? m : room); /* cut to the room left */
        w[off + (m < room ? m : room)] = 0;
        res->nrefused++;
    }
    struct ct_sweep_refusal *f = &res->refused[i];
    /* another reason at this size; one cut shorter than the other (a longer prefix filled
     * the error's buffer sooner) is the same */
    const char *was = f->why + strlen(head);
    size_t la = strlen(was), lb = strlen(why);
    f->varied |= strncmp(was, why, la < lb ? la : lb) != 0;
    for (int k = 0; k < f->n && k < CT_REFUSED_SIZES; k++)
        if (f->sizes[k] == size)
            return;
    if (f->n < CT_REFUSED_SIZES)
        f->sizes[f->n] = size;
    f->n++;
}

static int measure(struct ct_sweep_run *r, const struct ct_sweep_cmd *cmd, long *point,
                   struct ct_err *err)
{
    const struct ct_algo *a = ct_sweep_algo_at(r->cfg, cmd->algo);
    if (!a || cmd->coll < 0 || cmd->coll >= CT_COLL_COUNT || cmd->dtype < 0 ||
        cmd->dtype >= CT_DTYPE_COUNT || cmd->redop < 0 || cmd->redop >= CT_REDOP_COUNT)
        return ct_err_set(err, CT_EINVAL, "sweep command names no algorithm (%d)", cmd->algo);
    bool extend = cmd->op == CT_SWEEP_EXTEND;
    if (extend && (cmd->point < 0 || (size_t)cmd->point >= r->res->n))
        return ct_err_set(err, CT_EINVAL, "sweep command extends no point (%d)", cmd->point);
    struct ct_job j;
    job_of(r, cmd, &j);
    long wrong = 0;
    double t0 = r->be->now_s(r->ctx);
    int rc = r->be->begin(r->ctx, a, &j, !extend, &wrong, err);
    r->res->checking_s += r->be->now_s(r->ctx) - t0;
    uint64_t size =
        ct_coll_desc(j.coll)->size_bytes(j.count, ct_dtype_size(j.dtype), j.shape.nranks);
    if (rc == CT_EUNSUPP && !extend) {
        *point = -1;
        ct_sweep_note_refused(r->res, j.coll, a->name, size, err->msg);
        return 0;
    }
    CT_TRY(rc);
    const char *cn = ct_coll_name(j.coll);
    if (wrong != 0) {
        r->be->end(r->ctx);
        return ct_err_set(err, CT_EVERIFY,
                          "wrong results: %s:%s at %llu bytes on %d ranks: %ld elements differ", cn,
                          a->name, (unsigned long long)size, j.shape.nranks, wrong);
    }
    size_t idx = extend ? (size_t)cmd->point : r->res->n;
    if (!extend) {
        new_point(r, a, &j)->own_choice = r->be->own_choice && r->be->own_choice(r->ctx);
        r->res->n++;
    }
    struct ct_sweep_point *p = &r->res->pts[idx];
    if (extend && cmd->fresh) {
        r->smp[idx].n = 0;
        memset(&p->st, 0, sizeof p->st);
        p->reps = 0; /* afresh: counted again */
    }
    t0 = r->be->now_s(r->ctx);
    rc = batches(r, cmd, !extend, &r->smp[idx], &p->st, &p->reps, err);
    double t1 = r->be->now_s(r->ctx);
    r->res->timing_s += t1 - t0;
    r->be->end(r->ctx);
    r->res->checking_s += r->be->now_s(r->ctx) - t1;
    if (rc < 0)
        return ct_err_wrap(err, "%s:%s at %llu bytes: ", cn, a->name, (unsigned long long)size);
    finish_point(p, j.shape.nranks);
    *point = (long)idx;
    return 0;
}

int ct_sweep_exec(struct ct_sweep_run *r, const struct ct_sweep_cmd *cmd, long *point,
                  struct ct_err *err)
{
    *point = -1;
    switch (cmd->op) {
    case CT_SWEEP_DONE: return 0;
    case CT_SWEEP_ABORT: return ct_err_set(err, CT_EINVAL, "rank 0 stopped the sweep");
    case CT_SWEEP_CONNS:
        if (!r->be->conns)
            return ct_err_set(err, CT_EUNSUPP, "cannot change the connections here");
        CT_TRY(r->be->conns(r->ctx, cmd->streams, cmd->inflight, err));
        r->streams = cmd->streams;
        r->inflight = cmd->inflight;
        return 0;
    case CT_SWEEP_MEASURE:
    case CT_SWEEP_EXTEND: return measure(r, cmd, point, err);
    }
    return ct_err_set(err, CT_EINVAL, "unknown sweep command %d", cmd->op);
}

int ct_sweep_conns(struct ct_sweep_run *r, const uint64_t *params, struct ct_err *err)
{
    int s = (int)params[CT_P_STREAMS], k = (int)params[CT_P_INFLIGHT];
    k = k > 1 ? k : 1;
    if (!r->cfg->tcp || !r->be->conns || (s == r->streams && k == r->inflight))
        return 0;
    struct ct_sweep_cmd cmd;
    memset(&cmd, 0, sizeof cmd);
    cmd.op = CT_SWEEP_CONNS;
    cmd.streams = s;
    cmd.inflight = k;
    long none;
    return ct_sweep_issue(r, &cmd, &none, err);
}

void ct_sweep_cost_init(struct ct_sweep_cost *c)
{
    memset(c, 0, sizeof *c);
    c->fixed = 5e-3;
    c->iter = 50e-6;
}

void ct_sweep_cost_learn(struct ct_sweep_cost *c, const struct ct_sweep_cmd *cmd,
                         const struct ct_sweep_samples *s, int before, int reps, double wall)
{
    double timed = 0;
    for (int i = before; i < s->n; i++)
        timed += reps * s->x[i] * 1e-6;
    double n = s->n - before + cmd->warmup + (cmd->op == CT_SWEEP_MEASURE);
    double y = wall - timed;
    y = y < 0 ? 0 : y;
    /* exponentially weighted least squares of y = fixed + iter * n */
    const double d = 0.9;
    c->sw = d * c->sw + 1;
    c->sn = d * c->sn + n;
    c->snn = d * c->snn + n * n;
    c->sy = d * c->sy + y;
    c->sny = d * c->sny + n * y;
    double det = c->sw * c->snn - c->sn * c->sn, o = c->iter;
    if (det > 1e-6 * c->sw * c->snn)
        o = (c->sw * c->sny - c->sn * c->sy) / det;
    o = o < 0 ? 0 : o > 0.05 ? 0.05 : o;
    double f = (c->sy - o * c->sn) / c->sw;
    c->iter = o;
    c->fixed = f < 0 ? 0 : f > 2 ? 2 : f;
}

int ct_sweep_issue(struct ct_sweep_run *r, struct ct_sweep_cmd *cmd, long *point,
                   struct ct_err *err)
{
    int rc = r->be->bcast ? r->be->bcast(r->ctx, cmd, sizeof *cmd, err) : 0;
    if (rc == 0)
        rc = ct_sweep_exec(r, cmd, point, err);
    r->issue_failed = rc < 0;
    return rc;
}

int ct_sweep_end(struct ct_sweep_run *r, int rc, struct ct_err *err)
{
    if (!r->be->bcast || r->issue_failed)
        return rc;
    /* DONE, or ABORT after a failure the other ranks did not see */
    struct ct_sweep_cmd fin;
    struct ct_err e2 = {0};
    memset(&fin, 0, sizeof fin);
    fin.op = rc == 0 ? CT_SWEEP_DONE : CT_SWEEP_ABORT;
    int rc2 = r->be->bcast(r->ctx, &fin, sizeof fin, rc == 0 ? err : &e2);
    return rc == 0 ? rc2 : rc;
}

int ct_sweep_follow(struct ct_sweep_run *r, struct ct_err *err)
{
    for (;;) {
        struct ct_sweep_cmd cmd;
        memset(&cmd, 0, sizeof cmd);
        CT_TRY(r->be->bcast(r->ctx, &cmd, sizeof cmd, err));
        if (cmd.op == CT_SWEEP_DONE)
            return 0;
        if (cmd.op == CT_SWEEP_ABORT)
            return ct_sweep_exec(r, &cmd, &(long){0}, err);
        long point;
        CT_TRY(ct_sweep_exec(r, &cmd, &point, err));
    }
}

const struct ct_algo *ct_sweep_algo_at(const struct ct_sweep_cfg *cfg, int i)
{
    if (i < 0)
        return NULL;
    if (cfg->ncands)
        return (size_t)i < cfg->ncands ? cfg->cands[i] : NULL;
    return ct_algo_at((size_t)i);
}

int ct_sweep_algo_index(const struct ct_sweep_cfg *cfg, enum ct_coll coll, const char *name)
{
    const struct ct_algo *a;
    int any = -1; /* a row of that name for another collective */
    for (int i = 0; (a = ct_sweep_algo_at(cfg, i)); i++)
        if (!strcmp(a->name, name)) {
            if (a->colls & CT_COLL_BIT(coll))
                return i;
            any = any < 0 ? i : any;
        }
    return cfg->ncands ? -1 : any; /* another collective's row: another id */
}

const struct ct_algo *ct_sweep_algo_find(const struct ct_sweep_cfg *cfg, enum ct_coll coll,
                                         const char *name)
{
    return ct_sweep_algo_at(cfg, ct_sweep_algo_index(cfg, coll, name));
}

bool ct_sweep_row_asked(const char *rows, const char *name)
{
    return !rows || ct_select_library_default(name) || ct_list_has(rows, name, strlen(name));
}

const struct ct_sweep_cfg *ct_sweep_cfg_shaped(const struct ct_sweep_cfg *cfg,
                                               const struct ct_backend *be, void *ctx,
                                               struct ct_sweep_cfg *tmp)
{
    *tmp = *cfg;
    if (be->candidates) { /* the engine's own rows replace the algorithm table */
        size_t n = 0;
        for (int c = 0; c < CT_COLL_COUNT; c++)
            if (cfg->colls & CT_COLL_BIT(c)) {
                int max = (int)(CT_SWEEP_MAX_CANDS - n),
                    k = be->candidates(ctx, (enum ct_coll)c, tmp->cands + n, max, NULL);
                k = k < max ? k : max;      /* an engine may count more rows than it wrote */
                for (int i = 0; i < k; i++) /* the rows asked for, and the default */
                    if (ct_sweep_row_asked(cfg->lib_rows, tmp->cands[n]->name))
                        n++;
                    else
                        memmove(&tmp->cands[n], &tmp->cands[n + 1],
                                (size_t)(k - i - 1) * sizeof tmp->cands[0]);
                n = n < CT_SWEEP_MAX_CANDS ? n : CT_SWEEP_MAX_CANDS;
            }
        tmp->algos = tmp->cands;
        tmp->nalgos = tmp->ncands = n;
    }
    if (be->max_channels > 0)
        tmp->max_channels = be->max_channels;
    if (be->shape.nranks > 0) {
        tmp->job.shape.nranks = be->shape.nranks;
        tmp->job.shape.rank = be->shape.rank;
        if (!tmp->job.shape.ranks_per_node)
            tmp->job.shape.ranks_per_node = be->shape.ranks_per_node;
    }
    return tmp;
}
