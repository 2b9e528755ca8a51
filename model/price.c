/* SPDX-License-Identifier: MIT */
/*
 * Pricing a schedule on the topology model (see model.h for the cost model): the
 * symmetric paths (one rank, or one period of ranks, in lockstep) and the full timeline;
 * step patterns' link sharing cached.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../algos/coll.h"
#include "model_int.h"

#define SPLIT_MIN_BYTES (256u << 10) /* the executor's threshold for threaded reductions */
#define NBUCKETS 4096
#define PERIOD_MAX 256 /* ranks priced in lockstep at most (a period of the schedule) */
#define FULL_MAX_GROUPS                                                                    \
    (16u << 20) /* messages of all ranks the full timeline takes on (about 1 GiB with its     \
                   link sharing); beyond, the point is not priced (CT_EUNSUPP) */

/* Executor arguments the cost depends on. */
struct xargs {
    uint64_t chunk;
    int depth, threads;
    bool reduces;
    double mem; /* cost of a byte through memory over its cost in cache (>= 1; ct_mtopo) */
};

/* One (peer, direction) group of a step: the executor's unit of slicing. */
struct grp {
    int32_t peer;
    uint32_t step;
    uint32_t slices;
    uint8_t send;
    uint64_t bytes, rr; /* rr: bytes received with reduction */
};

/* One rank's schedule reduced to what the cost depends on. */
struct rankv {
    struct grp *g;
    size_t ng, gcap;
    uint32_t *sfirst; /* groups of step s: [sfirst[s], sfirst[s+1]) */
    double *local_us; /* local ops of step s */
    uint32_t nsteps;
};

/* A priced step pattern: for each send relation, the Pareto front of (alpha, 1/rate), the
 * 1/rate of a flow inside a node in the third column (the memory hierarchy scales it), of
 * one through a NIC in the second. */
struct pat {
    struct pat *next;
    uint64_t hash;
    int nranks, nrel, period;
    int64_t *rel;
    uint32_t *front_off;   /* nrel + 1 */
    double (*front)[3];    /* alpha_us, us per byte through a NIC, us per byte inside a node */
};

struct ct_model {
    struct ct_mtopo t;
    struct pat *buckets[NBUCKETS];
    bool no_symmetry;
    struct ct_msched_cache *scheds; /* borrowed; NULL: schedules built each time */
};

/* ---- built schedules, kept across models ------------------------------------------------ */

#define SCHED_BUCKETS 1024
#define SCHED_MAX_OPS (2u << 20) /* ops kept at most (64 bytes each: 128 MiB) */

/* What a schedule is built from, compared as bytes. */
struct skey {
    const struct ct_algo *a;
    struct ct_job j;
};

_Static_assert(sizeof(struct skey) % 8 == 0, "skey_hash reads the key as 64-bit words");

struct sent {
    struct sent *next;
    uint64_t hash;
    struct skey k;
    struct ct_sched s;
};

struct ct_msched_cache {
    struct sent *buckets[SCHED_BUCKETS];
    size_t ops;
};

struct ct_msched_cache *ct_msched_cache_new(void)
{
    return ct_xcalloc(1, sizeof(struct ct_msched_cache));
}

void ct_msched_cache_free(struct ct_msched_cache *c)
{
    if (!c)
        return;
    for (int b = 0; b < SCHED_BUCKETS; b++)
        for (struct sent *e = c->buckets[b], *nx; e; e = nx) {
            nx = e->next;
            ct_sched_release(&e->s);
            free(e);
        }
    free(c);
}

void ct_model_use_scheds(struct ct_model *m, struct ct_msched_cache *c)
{
    m->scheds = c;
}

/* The whole job, copied as bytes: a field added to it later is part of the key, and
 * padding that differs can only cost a rebuild (jobs here come from zeroed ones). The hier
 * sub-algorithm names are compared as pointers: the cache's user keeps its jobs' strings. */
static void skey_of(struct skey *k, const struct ct_algo *a, const struct ct_job *j)
{
    memset(k, 0, sizeof *k);
    k->a = a;
    memcpy(&k->j, j, sizeof *j);
}

static uint64_t skey_hash(const struct skey *k)
{
    uint64_t h = 1469598103934665603ull, w[sizeof *k / 8];
    memcpy(w, k, sizeof w);
    for (size_t i = 0; i < sizeof w / 8; i++) {
        h ^= w[i];
        h *= 1099511628211ull;
        h ^= h >> 29;
    }
    return h;
}

/* Rank j->shape.rank's schedule: from the cache (*owned false: the cache keeps it) or
 * built (*owned true: the caller releases it, unless the cache took it). */
static int sched_get(struct ct_model *m, const struct ct_algo *a, const struct ct_job *j,
                     struct ct_sched *s, bool *owned, struct ct_err *err)
{
    struct ct_msched_cache *c = m->scheds;
    *owned = true;
    if (!c)
        return ct_algo_build(a, j, s, err);
    struct skey k;
    skey_of(&k, a, j);
    uint64_t h = skey_hash(&k);
    struct sent **b = &c->buckets[h % SCHED_BUCKETS];
    for (struct sent *e = *b; e; e = e->next)
        if (e->hash == h && !memcmp(&e->k, &k, sizeof k)) {
            *s = e->s;
            *owned = false;
            return 0;
        }
    CT_TRY(ct_algo_build(a, j, s, err));
    if (c->ops + s->nops <= SCHED_MAX_OPS) {
        struct sent *e = ct_xmalloc(sizeof *e);
        e->hash = h;
        e->k = k;
        e->s = *s;
        e->next = *b;
        *b = e;
        c->ops += s->nops;
        *owned = false;
    }
    return 0;
}

struct ct_model *ct_model_new(const struct ct_mtopo *t)
{
    struct ct_model *m = ct_xcalloc(1, sizeof *m);
    m->t = *t;
    return m;
}

void ct_model_free(struct ct_model *m)
{
    if (!m)
        return;
    for (int b = 0; b < NBUCKETS; b++)
        for (struct pat *p = m->buckets[b], *nx; p; p = nx) {
            nx = p->next;
            free(p->rel);
            free(p->front_off);
            free(p->front);
            free(p);
        }
    free(m);
}

const struct ct_mtopo *ct_model_topo(const struct ct_model *m)
{
    return &m->t;
}

void ct_model_set_symmetry(struct ct_model *m, bool on)
{
    m->no_symmetry = !on;
}

/* ---- cost of one op group and of local ops ------------------------------------------- */

static double us_per_byte(double gbps)
{
    return gbps > 0 ? 1.0 / (gbps * 1e3) : 0.0;
}

/* Time sharing (model.h): how much longer a step takes with k of the node's ranks busy. */
static double share(const struct ct_mtopo *t, double k)
{
    return t->cores_per_node > 0 && k > t->cores_per_node ? k / t->cores_per_node : 1;
}

/*
 * The memory hierarchy (model.h): a node whose ranks' buffers (ws bytes) outgrow its cache
 * takes each byte that misses mem_factor times as long; the misses are the part of the
 * working set the cache cannot hold.
 */
static double mem_factor(const struct ct_mtopo *t, double ws)
{
    double cache = t->cache_mib * 1048576.0;
    if (!(cache > 0) || !(t->mem_factor > 1) || ws <= cache)
        return 1;
    return 1 + (t->mem_factor - 1) * (1 - cache / ws);
}

/* fr: a front point (alpha, us per byte through a NIC, us per byte inside a node) */
static double group_us(const struct ct_mtopo *t, const struct xargs *x, const double *fr,
                       uint64_t bytes, uint32_t slices, uint64_t rr)
{
    double k = slices ? slices : 1, alpha = fr[0], xfer = (double)bytes * (fr[1] + x->mem * fr[2]);
    double red = (double)rr * us_per_byte(t->gamma_gbps) * x->mem;
    double us = alpha + (k - 1) * t->slice_us;
    if (x->depth == 1)
        us += (k - 1) * alpha; /* each slice waits for the previous one */
    if (red > 0 && k > 1) /* two-stage pipeline: move slice i+1 while reducing slice i */
        us += (xfer > red ? xfer : red) * (k - 1) / k + (xfer + red) / k;
    else
        us += xfer + red;
    return us;
}

static double local_op_us(const struct ct_mtopo *t, const struct xargs *x, const struct ct_op *op)
{
    if (op->kind == CT_OP_SYNC) /* one fence line per peer; the step's latency is added once */
        return t->msg_us;
    double b = (double)op->bytes * x->mem; /* every byte below goes through memory */
    if (op->kind == CT_OP_COPY || op->kind == CT_OP_PUBLISH) /* a publish copies in */
        return b * us_per_byte(t->copy_gbps);
    double os = t->onesided_gbps > 0 ? t->onesided_gbps : t->intra.gbps;
    if (op->kind == CT_OP_PUT || op->kind == CT_OP_GET || op->kind == CT_OP_MGET)
        return b * us_per_byte(os); /* a write or read across */
    if (op->kind == CT_OP_GET_REDUCE || op->kind == CT_OP_MGET_REDUCE) {
        /* read across the link and reduce: the slower */
        double rd = b * us_per_byte(os), red = b * us_per_byte(t->gamma_gbps);
        return rd > red ? rd : red;
    }
    int thr = x->threads > 1 && op->bytes >= SPLIT_MIN_BYTES ? x->threads : 1;
    return b * us_per_byte(t->gamma_gbps) / thr;
}

/* ---- schedule -> groups ---------------------------------------------------------------- */

/* Per-peer group index of the current step (stamped by step), to group in O(1). */
struct grouper {
    int32_t *gi[2];
    uint32_t *stamp[2];
};

static void grouper_init(struct grouper *gp, int n)
{
    for (int d = 0; d < 2; d++) {
        gp->gi[d] = ct_xcalloc((size_t)n, sizeof *gp->gi[d]);
        gp->stamp[d] = ct_xcalloc((size_t)n, sizeof *gp->stamp[d]);
    }
}

static void grouper_release(struct grouper *gp)
{
    for (int d = 0; d < 2; d++) {
        free(gp->gi[d]);
        free(gp->stamp[d]);
    }
}

static void rankv_release(struct rankv *v)
{
    free(v->g);
    free(v->sfirst);
    free(v->local_us);
    memset(v, 0, sizeof *v);
}

static void extract(const struct ct_mtopo *t, const struct xargs *x, const struct ct_sched *s,
                    struct grouper *gp, uint32_t *epoch, struct rankv *v)
{
    memset(v, 0, sizeof *v);
    v->nsteps = s->nsteps;
    v->sfirst = ct_xmalloc((s->nsteps + 1) * sizeof *v->sfirst);
    v->local_us = ct_xcalloc(s->nsteps ? s->nsteps : 1, sizeof *v->local_us);
    for (uint32_t st = 0; st < s->nsteps; st++) {
        uint32_t ep = ++*epoch;
        v->sfirst[st] = (uint32_t)v->ng;
        bool fenced = false;
        for (uint32_t i = s->step_start[st]; i < s->step_start[st + 1]; i++) {
            const struct ct_op *op = &s->ops[i];
            if ((op->kind == CT_OP_SYNC || op->kind == CT_OP_PUBLISH) && !fenced) {
                /* a fence or a publish: the peers' answer a link's latency later */
                fenced = true;
                v->local_us[st] += t->intra.alpha_us + t->step_us;
            }
            if (op->kind > CT_OP_RECV_REDUCE) {
                v->local_us[st] += local_op_us(t, x, op);
                continue;
            }
            int d = op->kind == CT_OP_SEND;
            struct grp *g;
            if (gp->stamp[d][op->peer] == ep) {
                g = &v->g[gp->gi[d][op->peer]];
            } else {
                if (v->ng == v->gcap) {
                    v->gcap = v->gcap ? v->gcap * 2 : 64;
                    v->g = ct_xrealloc(v->g, v->gcap * sizeof *v->g);
                }
                gp->stamp[d][op->peer] = ep;
                gp->gi[d][op->peer] = (int32_t)v->ng;
                g = &v->g[v->ng++];
                memset(g, 0, sizeof *g);
                g->peer = op->peer;
                g->step = st;
                g->send = (uint8_t)d;
            }
            g->bytes += op->bytes;
            g->slices += (uint32_t)((op->bytes + x->chunk - 1) / x->chunk);
            if (op->kind == CT_OP_RECV_REDUCE && x->reduces)
                g->rr += op->bytes;
        }
    }
    v->sfirst[s->nsteps] = (uint32_t)v->ng;
}

static int build_rank(struct ct_model *m, const struct xargs *x, const struct ct_algo *a,
                      const struct ct_job *j, int rank, struct grouper *gp, uint32_t *epoch,
                      struct rankv *v, struct ct_err *err)
{
    struct ct_job jj = *j;
    jj.shape.rank = rank;
    struct ct_sched s;
    bool owned;
    CT_TRY(sched_get(m, a, &jj, &s, &owned, err));
    extract(&m->t, x, &s, gp, epoch, v);
    if (owned)
        ct_sched_release(&s);
    return 0;
}

/* ---- symmetric path -------------------------------------------------------------------- */

/* Relation of peer to rank: shift (peer = r + d mod p) or xor (peer = r ^ d). */
#define REL_XOR ((int64_t)1 << 40)

static int rel_peer(int64_t rel, int r, int p)
{
    int d = (int)(rel & (REL_XOR - 1));
    return rel & REL_XOR ? (r ^ d) : (int)(((int64_t)r + d) % p);
}

static int64_t rel_inverse(int64_t rel, int p)
{
    if (rel & REL_XOR)
        return rel;
    return (p - rel) % p;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static uint64_t hash_rels(const int64_t *rel, int n, int p)
{
    uint64_t h = 1469598103934665603ull ^ (uint64_t)p;
    for (int i = 0; i < n; i++) {
        h ^= (uint64_t)rel[i];
        h *= 1099511628211ull;
        h ^= h >> 29;
    }
    return h;
}

/* Keep the points no other point dominates (every coordinate at least as large). */
static uint32_t pareto(double (*pt)[3], uint32_t n)
{
    uint32_t w = 0;
    for (uint32_t i = 0; i < n; i++) {
        bool dom = false;
        for (uint32_t k = 0; k < n && !dom; k++) {
            bool ge = true, gt = false;
            for (int c = 0; c < 3; c++) {
                ge = ge && pt[k][c] >= pt[i][c];
                gt = gt || pt[k][c] > pt[i][c];
            }
            dom = k != i && ge && (gt || k < i);
        }
        if (!dom)
            memmove(pt[w++], pt[i], sizeof pt[i]);
    }
    return w;
}

/*
 * Price the sharing of one step pattern. period 0: every rank sends along every relation
 * (a shift or xor of the rank). period P: relation c * p + q is rank c's send to q, done
 * by every rank c + iP to (q + iP) mod p as well (P = p: each rank's own sends).
 */
static void rel_flow(int64_t rel, int period, int p, int i, int *src, int *dst)
{
    if (!period) {
        *src = i;
        *dst = rel_peer(rel, i, p);
        return;
    }
    *src = (int)(rel / p) + i * period;
    *dst = (int)((rel % p + (int64_t)i * period) % p);
}

static struct pat *pattern(struct ct_model *m, const int64_t *rel_sorted, int nrel, int p,
                           int period)
{
    uint64_t h = hash_rels(rel_sorted, nrel, p) ^ ((uint64_t)period * 0x9e3779b97f4a7c15ull);
    struct pat **bk = &m->buckets[h % NBUCKETS];
    for (struct pat *q = *bk; q; q = q->next)
        if (q->hash == h && q->nranks == p && q->nrel == nrel && q->period == period &&
            !memcmp(q->rel, rel_sorted, (size_t)nrel * sizeof *rel_sorted))
            return q;
    int nrep = period ? p / period : p;
    struct ct_mnet net;
    ct_mnet_init(&net, &m->t, p);
    /* The network maps onto itself under shifts by S; a pattern of shifts (or of a period
     * dividing S) does too, so its max-min rates repeat every S ranks: build the flows of
     * one shift class only, over the links' orbits (a mesh on 16k ranks: 256 sources instead
     * of 16384). Xor relations do not commute with shifts. */
    int S = ct_mnet_period(&net);
    bool inv = S > 0 && (period ? period < p && S % period == 0 : true);
    for (int k = 0; k < nrel && inv && !period; k++)
        inv = !(rel_sorted[k] & REL_XOR);
    if (inv) {
        net.quotient = S;
        nrep = period ? S / period : S;
    }
    size_t nf = (size_t)nrep * (size_t)nrel;
    uint32_t *off = ct_xmalloc((nf + 1) * sizeof *off);
    int32_t *link = ct_xmalloc((nf ? nf : 1) * CT_MROUTE_MAX * sizeof *link);
    double *solo = ct_xmalloc((nf ? nf : 1) * sizeof *solo);
    double *alpha = ct_xmalloc((nf ? nf : 1) * sizeof *alpha);
    double *rate = ct_xmalloc((nf ? nf : 1) * sizeof *rate);
    bool *intra = ct_xmalloc((nf ? nf : 1) * sizeof *intra);
    size_t nl = 0;
    for (int k = 0; k < nrel; k++)
        for (int i = 0; i < nrep; i++) {
            size_t f = (size_t)k * (size_t)nrep + (size_t)i;
            int src, dst;
            rel_flow(rel_sorted[k], period, p, i, &src, &dst);
            struct ct_mroute rt;
            ct_mnet_route(&net, src, dst, &rt);
            off[f] = (uint32_t)nl;
            for (int l = 0; l < rt.n; l++)
                link[nl++] = inv ? ct_mnet_orbit(&net, rt.link[l], S) : rt.link[l];
            solo[f] = rt.solo_gbps;
            intra[f] = rt.intra;
            alpha[f] = rt.alpha_us;
        }
    off[nf] = (uint32_t)nl;
    struct ct_maxmin mm;
    ct_maxmin_init(&mm, net.nlinks);
    ct_maxmin_solve(&mm, &net, nf, off, link, solo, rate);
    ct_maxmin_release(&mm);
    struct pat *q = ct_xcalloc(1, sizeof *q);
    q->hash = h;
    q->nranks = p;
    q->nrel = nrel;
    q->period = period;
    q->rel = ct_xmalloc((size_t)(nrel ? nrel : 1) * sizeof *q->rel);
    memcpy(q->rel, rel_sorted, (size_t)nrel * sizeof *q->rel);
    q->front_off = ct_xmalloc((size_t)(nrel + 1) * sizeof *q->front_off);
    double(*pt)[3] = ct_xmalloc((size_t)nrep * sizeof *pt);
    size_t cap = 0, used = 0;
    for (int k = 0; k < nrel; k++) {
        for (int i = 0; i < nrep; i++) {
            size_t f = (size_t)k * (size_t)nrep + (size_t)i;
            pt[i][0] = alpha[f];
            pt[i][1] = intra[f] ? 0 : us_per_byte(rate[f]);
            pt[i][2] = intra[f] ? us_per_byte(rate[f]) : 0;
        }
        uint32_t w = pareto(pt, (uint32_t)nrep);
        if (used + w > cap) {
            cap = (used + w) * 2;
            q->front = ct_xrealloc(q->front, cap * sizeof *q->front);
        }
        q->front_off[k] = (uint32_t)used;
        memcpy(q->front + used, pt, w * sizeof *pt);
        used += w;
    }
    q->front_off[nrel] = (uint32_t)used;
    free(pt);
    free(off);
    free(link);
    free(solo);
    free(alpha);
    free(rate);
    free(intra);
    q->next = *bk;
    *bk = q;
    return q;
}

/* Ranks whose schedules are compared to decide symmetry (all of them when few). */
static int samples(int p, int rpn, int *out)
{
    int n = 0;
    if (p <= 24) {
        for (int r = 0; r < p; r++)
            out[n++] = r;
        return n;
    }
    int cand[] = {0, 1, 2, 3, 4, 5, 6, 7, p - 1, p - 2, p - 3, p / 2, p / 2 + 1, p / 3,
                  (int)((int64_t)p * 7 / 11), rpn - 1, rpn, rpn + 1, 2 * rpn - 1, p - rpn};
    for (size_t i = 0; i < sizeof cand / sizeof cand[0]; i++) {
        int r = cand[i];
        bool dup = r < 0 || r >= p;
        for (int k = 0; k < n && !dup; k++)
            dup = out[k] == r;
        if (!dup)
            out[n++] = r;
    }
    return n;
}

/*
 * Relations of every group of the reference rank (v[0], rank ranks[0] = 0) that hold for
 * every sample, with the bytes the largest of any sample's. Returns false when the
 * samples are not all shifts / xors of each other.
 */
static bool symmetric(const struct rankv *v, const int *ranks, int ns, int p, int64_t *rel,
                      struct grp *gmax, double *loc)
{
    const struct rankv *v0 = &v[0];
    bool pow2 = (p & (p - 1)) == 0;
    for (int x = 1; x < ns; x++)
        if (v[x].nsteps != v0->nsteps || v[x].ng != v0->ng)
            return false;
    for (size_t i = 0; i < v0->ng; i++) {
        const struct grp *g0 = &v0->g[i];
        int d = g0->peer; /* rank 0: shift d and xor d give this peer */
        bool sh = true, xo = pow2;
        gmax[i] = *g0;
        for (int x = 1; x < ns; x++) {
            const struct grp *g = &v[x].g[i];
            int r = ranks[x];
            if (g->step != g0->step || g->send != g0->send || (g->rr > 0) != (g0->rr > 0))
                return false;
            sh = sh && (int)(((int64_t)r + d) % p) == g->peer;
            xo = xo && (r ^ d) == g->peer;
            if (g->bytes > gmax[i].bytes)
                gmax[i].bytes = g->bytes;
            if (g->rr > gmax[i].rr)
                gmax[i].rr = g->rr;
            if (g->slices > gmax[i].slices)
                gmax[i].slices = g->slices;
        }
        if (!sh && !xo)
            return false;
        rel[i] = sh ? d : (REL_XOR | d);
    }
    /* every receive must be the mirror of a send of the same step */
    for (uint32_t st = 0; st < v0->nsteps; st++)
        for (uint32_t i = v0->sfirst[st]; i < v0->sfirst[st + 1]; i++) {
            if (v0->g[i].send)
                continue;
            int64_t inv = rel_inverse(rel[i], p);
            bool found = false;
            for (uint32_t k = v0->sfirst[st]; k < v0->sfirst[st + 1] && !found; k++)
                found = v0->g[k].send && rel[k] == inv;
            if (!found)
                return false;
        }
    for (uint32_t st = 0; st < v0->nsteps; st++) {
        double l0 = v0->local_us[st];
        for (int x = 1; x < ns; x++)
            if (fabs(v[x].local_us[st] - l0) > 1e-9 * (1 + l0) && v[x].local_us[st] > l0)
                l0 = v[x].local_us[st];
        loc[st] = l0; /* the slowest sample's local work */
    }
    return true;
}

static double price_symmetric(struct ct_model *m, const struct xargs *x, const struct rankv *v0,
                              const int64_t *rel, const struct grp *gm, const double *loc, int p)
{
    double total = 0;
    int64_t *keys = ct_xmalloc((v0->ng ? v0->ng : 1) * sizeof *keys);
    for (uint32_t st = 0; st < v0->nsteps; st++) {
        uint32_t b = v0->sfirst[st], e = v0->sfirst[st + 1];
        int nk = 0;
        for (uint32_t i = b; i < e; i++)
            if (gm[i].send)
                keys[nk++] = rel[i];
        qsort(keys, (size_t)nk, sizeof *keys, cmp_i64);
        double comm = 0;
        if (e > b) {
            struct pat *q = pattern(m, keys, nk, p, 0);
            for (uint32_t i = b; i < e; i++) {
                int64_t want = gm[i].send ? rel[i] : rel_inverse(rel[i], p);
                const int64_t *hit = bsearch(&want, q->rel, (size_t)q->nrel, sizeof want, cmp_i64);
                size_t k = (size_t)(hit - q->rel);
                for (uint32_t f = q->front_off[k]; f < q->front_off[k + 1]; f++) {
                    double us =
                        group_us(&m->t, x, q->front[f], gm[i].bytes, gm[i].slices, gm[i].rr);
                    if (us > comm)
                        comm = us;
                }
            }
            comm += m->t.step_us + nk * m->t.msg_us;
        }
        total += comm + loc[st];
    }
    free(keys);
    /* in lockstep every rank of a node is busy in every step */
    int rpn = m->t.ranks_per_node < p ? m->t.ranks_per_node : p;
    return total * share(&m->t, rpn);
}

/* ---- timeline of a period of ranks ---------------------------------------------------- */

struct gref {
    int32_t src, dst;
    uint32_t k;   /* ordinal of this group in the pair's sequence */
    uint32_t idx; /* index into the flat group array */
};

static int cmp_gref(const void *a, const void *b)
{
    const struct gref *x = a, *y = b;
    if (x->src != y->src)
        return x->src < y->src ? -1 : 1;
    if (x->dst != y->dst)
        return x->dst < y->dst ? -1 : 1;
    return (x->k > y->k) - (x->k < y->k);
}

struct keyed {
    int64_t key;
    uint32_t idx;
};

static int cmp_keyed(const void *a, const void *b)
{
    const struct keyed *x = a, *y = b;
    return (x->key > y->key) - (x->key < y->key);
}

/* What a pass over the timeline reads: the ranks' groups and their messages' partners. */
struct tl {
    const struct ct_mtopo *t;
    const struct xargs *x;
    const struct rankv *v;
    int P;
    const size_t *base;
    const uint32_t *partner;
    const int32_t *owner;
    const struct pat **gpat;
    const uint32_t *gk;
};

/*
 * Each rank's step start times (start[r][st], zero on entry; start[r][nsteps] its end), each
 * step's duration times stretch[r][st] (NULL: 1), and when each step's work can begin
 * (busy0: its first message can start, else its start). False when the schedule deadlocks.
 * Worklist: a rank is tried again only when a peer it may wait on reaches a new step (the
 * peers of that step's groups), so the pass is linear in the groups.
 */
static bool tl_pass(const struct tl *c, double *const *stretch, double **start, double **busy0)
{
    const struct ct_mtopo *t = c->t;
    const struct rankv *v = c->v;
    const size_t *base = c->base;
    int P = c->P, done = 0, *queue = ct_xmalloc((size_t)P * sizeof *queue), qh = 0, qn = 0;
    uint32_t *ptr = ct_xcalloc((size_t)P, sizeof *ptr);
    bool *queued = ct_xcalloc((size_t)P, sizeof *queued);
    for (int r = 0; r < P; r++) {
        done += v[r].nsteps == 0;
        queue[qn++] = r;
        queued[r] = true;
    }
    while (qn > 0) {
        int r = queue[qh];
        qh = (qh + 1) % P;
        qn--;
        queued[r] = false;
        while (ptr[r] < v[r].nsteps) {
            uint32_t st = ptr[r];
            bool ready = true;
            for (uint32_t i = v[r].sfirst[st]; i < v[r].sfirst[st + 1] && ready; i++) {
                uint32_t q = c->partner[base[r] + i];
                int o = c->owner[q];
                ready = ptr[o] >= v[o].g[q - base[o]].step;
            }
            if (!ready)
                break;
            double f = stretch ? stretch[r][st] : 1, t0 = start[r][st], end = t0, b0 = INFINITY;
            for (uint32_t i = v[r].sfirst[st]; i < v[r].sfirst[st + 1]; i++) {
                uint32_t me = (uint32_t)(base[r] + i), q = c->partner[me];
                int o = c->owner[q];
                const struct grp *g = &v[r].g[i], *h = &v[o].g[q - base[o]];
                uint32_t sg = g->send ? me : q;
                const struct grp *sgp = g->send ? g : h, *rgp = g->send ? h : g;
                const struct pat *pt = c->gpat[sg];
                double s0 = t0 > start[o][h->step] ? t0 : start[o][h->step];
                b0 = s0 < b0 ? s0 : b0;
                for (uint32_t k = pt->front_off[c->gk[sg]]; k < pt->front_off[c->gk[sg] + 1]; k++) {
                    double e =
                        s0 + f * group_us(t, c->x, pt->front[k], sgp->bytes, sgp->slices, rgp->rr);
                    if (e > end)
                        end = e;
                }
            }
            if (v[r].sfirst[st + 1] > v[r].sfirst[st])
                end += f * t->step_us;
            for (uint32_t i = v[r].sfirst[st]; i < v[r].sfirst[st + 1]; i++)
                end += v[r].g[i].send ? f * t->msg_us : 0;
            start[r][st + 1] = end + f * v[r].local_us[st];
            busy0[r][st] = b0 < INFINITY ? b0 : t0;
            if (++ptr[r] == v[r].nsteps) {
                done++;
                break;
            }
            /* r stands at a new step: the peers of its groups may have waited for it */
            for (uint32_t i = v[r].sfirst[ptr[r]]; i < v[r].sfirst[ptr[r] + 1]; i++) {
                int o = v[r].g[i].peer % P;
                if (!queued[o] && ptr[o] < v[o].nsteps) {
                    queue[(qh + qn) % P] = o;
                    qn++;
                    queued[o] = true;
                }
            }
        }
    }
    free(ptr);
    free(queue);
    free(queued);
    return done == P;
}

/* Time inside [a0, a1) covered by the increasing, disjoint intervals [b0[i], b1[i]), i < n. */
static double overlap(double a0, double a1, const double *b0, const double *b1, uint32_t n)
{
    uint32_t lo = 0, hi = n; /* the first interval ending after a0 */
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (b1[mid] > a0)
            hi = mid;
        else
            lo = mid + 1;
    }
    double s = 0;
    for (uint32_t i = lo; i < n && b0[i] < a1; i++) {
        double x0 = b0[i] > a0 ? b0[i] : a0, x1 = b1[i] < a1 ? b1[i] : a1;
        s += x1 > x0 ? x1 - x0 : 0;
    }
    return s;
}

/*
 * Price the timeline of ranks 0..P-1 of a job of p ranks whose rank c + iP runs rank c's
 * schedule with every peer shifted by iP (P = p: every rank's own schedule). A step
 * starts when the previous one ended; a message starts when both its steps have started.
 * The send groups of each step index share the links, max-min fair, every replica of
 * them too; each group costs what its slowest replica costs (patterns cached).
 */
static int timeline(struct ct_model *m, const struct xargs *x, const char *name,
                    const struct rankv *v, int P, int p, double *out_us, struct ct_err *err)
{
    const struct ct_mtopo *t = &m->t;
    int rc = 0;
    size_t *base = ct_xmalloc(((size_t)P + 1) * sizeof *base), ng = 0;
    uint32_t maxsteps = 0;
    for (int r = 0; r < P; r++) {
        base[r] = ng;
        ng += v[r].ng;
        if (v[r].nsteps > maxsteps)
            maxsteps = v[r].nsteps;
    }
    base[P] = ng;
    size_t nz = ng ? ng : 1;
    /* match the k-th send group a->b with the k-th receive group at b from a: each rank's
     * receive groups sorted by (source, ordinal) once, then a binary search per send; a
     * send of rank c to q = c' + s (c' = q mod P) is received by c' from c - s */
    uint32_t *partner = ct_xmalloc(nz * sizeof *partner), *ord = ct_xmalloc(nz * sizeof *ord);
    int32_t *owner = ct_xmalloc(nz * sizeof *owner);
    struct gref *recvs = ct_xmalloc(nz * sizeof *recvs);
    size_t *rfirst = ct_xmalloc(((size_t)P + 1) * sizeof *rfirst), ns = 0, nr = 0;
    uint32_t *cnt[2] = {ct_xcalloc((size_t)p, sizeof(uint32_t)),
                        ct_xcalloc((size_t)p, sizeof(uint32_t))};
    for (int r = 0; r < P; r++) {
        rfirst[r] = nr;
        for (size_t i = 0; i < v[r].ng; i++) {
            const struct grp *g = &v[r].g[i];
            owner[base[r] + i] = r;
            ord[base[r] + i] = cnt[g->send][g->peer]++;
            if (g->send)
                ns++;
            else
                recvs[nr++] = (struct gref){g->peer, r, ord[base[r] + i], (uint32_t)(base[r] + i)};
        }
        for (size_t i = 0; i < v[r].ng; i++)
            cnt[v[r].g[i].send][v[r].g[i].peer] = 0;
        qsort(recvs + rfirst[r], nr - rfirst[r], sizeof *recvs, cmp_gref);
    }
    rfirst[P] = nr;
    free(cnt[0]);
    free(cnt[1]);
    if (ns != nr)
        rc = ct_err_set(err, CT_EINVAL, "%s: %zu send groups but %zu receive groups", name, ns,
                        nr);
    for (int r = 0; r < P && !rc; r++)
        for (size_t i = 0; i < v[r].ng && !rc; i++) {
            const struct grp *g = &v[r].g[i];
            if (!g->send)
                continue;
            int cq = g->peer % P, shift = g->peer - cq;
            struct gref key = {(r - shift + p) % p, cq, ord[base[r] + i], 0};
            const struct gref *hit = bsearch(&key, recvs + rfirst[cq], rfirst[cq + 1] - rfirst[cq],
                                             sizeof key, cmp_gref);
            if (!hit)
                rc = ct_err_set(err, CT_EINVAL, "%s: unmatched message %d -> %d", name, r,
                                g->peer);
            else {
                partner[base[r] + i] = hit->idx;
                partner[hit->idx] = (uint32_t)(base[r] + i);
            }
        }
    free(recvs);
    free(rfirst);
    free(ord);
    /* link cost of every send group: its relation's front in the step's pattern */
    const struct pat **gpat = ct_xcalloc(nz, sizeof *gpat);
    uint32_t *gk = ct_xcalloc(nz, sizeof *gk);
    struct keyed *keys = ct_xmalloc(nz * sizeof *keys);
    int64_t *rel = ct_xmalloc(nz * sizeof *rel);
    for (uint32_t st = 0; st < maxsteps && !rc; st++) {
        size_t nk = 0;
        for (int r = 0; r < P; r++) {
            if (st >= v[r].nsteps)
                continue;
            for (uint32_t i = v[r].sfirst[st]; i < v[r].sfirst[st + 1]; i++)
                if (v[r].g[i].send)
                    keys[nk++] = (struct keyed){(int64_t)r * p + v[r].g[i].peer,
                                                (uint32_t)(base[r] + i)};
        }
        if (!nk)
            continue;
        qsort(keys, nk, sizeof *keys, cmp_keyed);
        for (size_t k = 0; k < nk; k++)
            rel[k] = keys[k].key;
        const struct pat *q = pattern(m, rel, (int)nk, p, P);
        for (size_t k = 0; k < nk; k++) {
            gpat[keys[k].idx] = q;
            gk[keys[k].idx] = (uint32_t)k;
        }
    }
    free(keys);
    free(rel);
    double **start = ct_xmalloc((size_t)P * sizeof *start),
           **busy0 = ct_xmalloc((size_t)P * sizeof *busy0), **stretch = NULL;
    for (int r = 0; r < P; r++) {
        start[r] = ct_xcalloc(v[r].nsteps + 1, sizeof **start);
        busy0[r] = ct_xcalloc(v[r].nsteps + 1, sizeof **busy0);
    }
    struct tl tl = {t, x, v, P, base, partner, owner, gpat, gk};
    if (!rc && !tl_pass(&tl, NULL, start, busy0))
        rc = ct_err_set(err, CT_EINVAL, "%s: the schedule deadlocks when priced", name);
    int rpn = t->ranks_per_node < p ? t->ranks_per_node : p;
    if (!rc && t->cores_per_node > 0 && rpn > t->cores_per_node) {
        /* time sharing: stretch each step by the node's ranks busy beside it, then again */
        stretch = ct_xmalloc((size_t)P * sizeof *stretch);
        for (int r = 0; r < P; r++) {
            stretch[r] = ct_xcalloc(v[r].nsteps + 1, sizeof **stretch);
            for (uint32_t st = 0; st < v[r].nsteps; st++) {
                double a0 = busy0[r][st], a1 = start[r][st + 1], k = 1;
                for (int q = r / rpn * rpn; a1 > a0 && q < (r / rpn + 1) * rpn && q < p; q++)
                    if (q != r)
                        k += overlap(a0, a1, busy0[q % P], start[q % P] + 1, v[q % P].nsteps) /
                             (a1 - a0);
                stretch[r][st] = share(t, k);
            }
        }
        for (int r = 0; r < P; r++)
            memset(start[r], 0, (v[r].nsteps + 1) * sizeof **start);
        tl_pass(&tl, stretch, start, busy0);
    }
    if (!rc) {
        double tmax = 0;
        for (int r = 0; r < P; r++)
            if (start[r][v[r].nsteps] > tmax)
                tmax = start[r][v[r].nsteps];
        *out_us = tmax;
    }
    for (int r = 0; r < P; r++) {
        free(start[r]);
        free(busy0[r]);
        if (stretch)
            free(stretch[r]);
    }
    free(start);
    free(busy0);
    free(stretch);
    free(gpat);
    free(gk);
    free(partner);
    free(owner);
    free(base);
    return rc;
}

/* Every rank's schedule, priced as it is. */
static int price_full(struct ct_model *m, const struct xargs *x, const struct ct_algo *a,
                      const struct ct_job *j, double *out_us, struct ct_err *err)
{
    int p = j->shape.nranks, rc = 0;
    struct rankv *v = ct_xcalloc((size_t)p, sizeof *v);
    struct grouper gp;
    grouper_init(&gp, p);
    uint32_t epoch = 0;
    size_t groups = 0;
    for (int r = 0; r < p && !rc; r++) {
        rc = build_rank(m, x, a, j, r, &gp, &epoch, &v[r], err);
        groups += v[r].ng;
        if (!rc && groups > FULL_MAX_GROUPS)
            rc = ct_err_set(err, CT_EUNSUPP,
                            "%s: at this size its schedule has no symmetry the model "
                            "uses, and rank by rank its %d ranks send more than %u messages: not priced",
                            a->name, p, FULL_MAX_GROUPS);
    }
    if (!rc)
        rc = timeline(m, x, a->name, v, p, p, out_us, err);
    for (int r = 0; r < p; r++)
        rankv_release(&v[r]);
    free(v);
    grouper_release(&gp);
    return rc;
}

/*
 * Is the schedule periodic with period P: does sample rank r (>= P) run rank r mod P's
 * schedule with its peers shifted by r - r mod P? With merge, the bytes of each of the
 * rep's groups and its local work become the larger of the two instead.
 */
static bool periodic(struct rankv *rep, int P, const struct rankv *v1, int r, int p, bool merge)
{
    int shift = r - r % P;
    struct rankv *v0 = &rep[r % P];
    if (v1->nsteps != v0->nsteps || v1->ng != v0->ng)
        return false;
    for (size_t i = 0; i < v0->ng; i++) {
        struct grp *g0 = &v0->g[i];
        const struct grp *g = &v1->g[i];
        if (!merge) {
            if (g->step != g0->step || g->send != g0->send || (g->rr > 0) != (g0->rr > 0) ||
                g->peer != (g0->peer + shift) % p)
                return false;
            continue;
        }
        g0->bytes = g->bytes > g0->bytes ? g->bytes : g0->bytes;
        g0->rr = g->rr > g0->rr ? g->rr : g0->rr;
        g0->slices = g->slices > g0->slices ? g->slices : g0->slices;
    }
    for (uint32_t st = 0; merge && st < v0->nsteps; st++)
        if (v1->local_us[st] > v0->local_us[st])
            v0->local_us[st] = v1->local_us[st];
    return true;
}

/* ---- entry points ---------------------------------------------------------------------- */

int ct_model_shape(const struct ct_mtopo *t, int nranks, struct ct_shape *s, struct ct_err *err)
{
    int cap = ct_mtopo_ranks(t), rpn = t->ranks_per_node;
    if (nranks == 0)
        nranks = cap;
    if (nranks < 1 || nranks > cap || (nranks > rpn && nranks % rpn))
        return ct_err_set(err, CT_EINVAL,
                          "topology '%s' hosts %d ranks (%d nodes x %d); it cannot place %d "
                          "(whole nodes or part of one)",
                          t->name, cap, t->nodes, rpn, nranks);
    memset(s, 0, sizeof *s);
    s->nranks = nranks;
    s->ranks_per_node = nranks < rpn ? nranks : rpn;
    s->rails = t->rails;
    if (t->torus_rows > 0 && t->torus_rows * t->torus_cols == nranks) {
        s->torus_rows = t->torus_rows;
        s->torus_cols = t->torus_cols;
    }
    return 0;
}

/* Sample schedules, built as the checks need them. */
struct smp {
    struct ct_model *m;
    const struct xargs *x;
    const struct ct_algo *a;
    const struct ct_job *j;
    struct grouper gp;
    uint32_t epoch;
    int ranks[32], n;
    struct rankv v[32];
    bool have[32];
};

static int smp_get(struct smp *s, int i, struct ct_err *err)
{
    if (s->have[i])
        return 0;
    CT_TRY(build_rank(s->m, s->x, s->a, s->j, s->ranks[i], &s->gp, &s->epoch, &s->v[i], err));
    s->have[i] = true;
    return 0;
}

/* The sample of rank r, when r is one (-1: none). */
static int smp_find(const struct smp *s, int r)
{
    for (int i = 0; i < s->n; i++)
        if (s->ranks[i] == r)
            return i;
    return -1;
}

/*
 * The lockstep paths: one rank (every peer a shift or xor of the rank), else one period
 * of ranks (a pair, a node, two nodes): *period 1 or that period; 0 when neither holds (or
 * the full schedule breaks a period its samples kept). A check builds
 * the samples it needs as it goes and stops at the first that breaks it (ranks 0 and 1
 * first), so a schedule without the symmetry costs few builds.
 */
static int lockstep(struct ct_model *m, const struct xargs *x, const struct ct_algo *a,
                    const struct ct_job *j, int rpn, double *us, int *period, struct ct_err *err)
{
    int p = j->shape.nranks, rc = 0;
    struct smp *s = ct_xcalloc(1, sizeof *s);
    s->m = m;
    s->x = x;
    s->a = a;
    s->j = j;
    s->n = samples(p, rpn, s->ranks);
    grouper_init(&s->gp, p);
    bool done0 = false, *done = &done0;
    /* one rank in lockstep: ranks 0, 1 and p - 1 first (a shift and an xor of 0 agree on
     * both 1 and p - 1 only for p/2, where they are the same relation), then every sample */
    int first[3] = {0, smp_find(s, 1), smp_find(s, p - 1)};
    for (int pass = 0; pass < 2 && rc == 0 && !*done; pass++) {
        struct rankv sv[32];
        int sr[32], ns = 0;
        for (int i = 0; i < (pass ? s->n : 3) && rc == 0; i++) {
            int k = pass ? i : first[i];
            if (k < 0 || (i && !pass && k == first[i - 1]) || (rc = smp_get(s, k, err)) < 0)
                continue;
            sv[ns] = s->v[k];
            sr[ns++] = s->ranks[k];
        }
        if (rc < 0)
            break;
        size_t ng = sv[0].ng ? sv[0].ng : 1;
        int64_t *rel = ct_xmalloc(ng * sizeof *rel);
        struct grp *gm = ct_xmalloc(ng * sizeof *gm);
        double *loc = ct_xcalloc(sv[0].nsteps + 1, sizeof *loc);
        bool sym = symmetric(sv, sr, ns, p, rel, gm, loc);
        if (sym && pass) {
            *us = price_symmetric(m, x, &sv[0], rel, gm, loc, p);
            *done = true;
            *period = 1;
        }
        free(rel);
        free(gm);
        free(loc);
        if (!sym)
            break;
    }
    /* one pair, node or two nodes of ranks in lockstep; reps that are samples are shared */
    int per[] = {2, rpn, 2 * rpn}, nrep = 0, tried = 0;
    struct rankv *own = NULL, *rep = NULL; /* allocated when a period is tried */
    bool *mine = NULL;
    for (size_t c = 0; c < sizeof per / sizeof per[0] && rc == 0 && !*done; c++) {
        int P = per[c];
        if (P >= p || p % P || P > PERIOD_MAX || P <= tried)
            continue;
        tried = P;
        if (!own) {
            own = ct_xcalloc(PERIOD_MAX, sizeof *own);
            rep = ct_xcalloc(PERIOD_MAX, sizeof *rep);
            mine = ct_xcalloc(PERIOD_MAX, sizeof *mine);
        }
        for (; nrep < P && rc == 0; nrep++) {
            int k = smp_find(s, nrep);
            if (k >= 0 && (rc = smp_get(s, k, err)) == 0) {
                rep[nrep] = s->v[k];
            } else if (k < 0 && (rc = build_rank(m, x, a, j, nrep, &s->gp, &s->epoch, &own[nrep],
                                                 err)) == 0) {
                rep[nrep] = own[nrep];
                mine[nrep] = true;
            }
        }
        if (rc < 0) {
            nrep--;
            break;
        }
        bool ok = true;
        for (int i = 0; i < s->n && ok && rc == 0; i++)
            if (s->ranks[i] >= P && (rc = smp_get(s, i, err)) == 0)
                ok = periodic(rep, P, &s->v[i], s->ranks[i], p, false);
        if (rc == 0 && ok) {
            for (int i = 0; i < s->n; i++)
                if (s->ranks[i] >= P)
                    periodic(rep, P, &s->v[i], s->ranks[i], p, true);
            /* the period held on the samples; a rank outside them may break it (a message
             * without its match, a deadlock): then the full timeline decides */
            struct ct_err terr = {0};
            *done = timeline(m, x, a->name, rep, P, p, us, &terr) == 0;
            *period = *done ? P : 0;
        }
    }
    for (int i = 0; i < nrep; i++)
        if (mine[i])
            rankv_release(&own[i]);
    free(own);
    free(rep);
    free(mine);
    for (int i = 0; i < s->n; i++)
        if (s->have[i])
            rankv_release(&s->v[i]);
    grouper_release(&s->gp);
    free(s);
    return rc;
}

int ct_model_price(struct ct_model *m, const struct ct_algo *a, const struct ct_job *j,
                   struct ct_model_cost *out, struct ct_err *err)
{
    const struct ct_mtopo *t = &m->t;
    int p = j->shape.nranks;
    struct ct_shape chk;
    CT_TRY(ct_model_shape(t, p, &chk, err));
    if (ct_shape_rpn(&j->shape) != chk.ranks_per_node)
        return ct_err_set(err, CT_EINVAL, "job has %d ranks per node, topology '%s' %d",
                          ct_shape_rpn(&j->shape), t->name, chk.ranks_per_node);
    struct ct_job jj = *j;
    ct_params_defaults(&jj.params);
    CT_TRY(ct_params_check(&jj.params, ct_dtype_size(j->dtype), err));
    jj.shape.rank = 0;
    CT_TRY(ct_algo_supports(a, &jj, err));
    size_t es = ct_dtype_size(j->dtype);
    struct xargs x = {jj.params.v[CT_P_CHUNK] / es * es, (int)jj.params.v[CT_P_PIPELINE],
                      (int)jj.params.v[CT_P_THREADS], ct_coll_desc(j->coll)->needs_op,
                      mem_factor(t, (double)chk.ranks_per_node *
                                        (double)(ct_job_send_bytes(&jj) + ct_job_recv_bytes(&jj)))};
    if (!x.chunk)
        x.chunk = es;
    memset(out, 0, sizeof *out);
    out->nranks = p;
    out->nnodes = ct_shape_nodes(&jj.shape);
    out->count = j->count;
    out->size = ct_coll_desc(j->coll)->size_bytes(j->count, es, p);
    double us = 0;
    int period = 0;
    if (!m->no_symmetry && p > 1)
        CT_TRY(lockstep(m, &x, a, &jj, chk.ranks_per_node, &us, &period, err));
    out->period = period;
    if (!period)
        CT_TRY(price_full(m, &x, a, &jj, &us, err));
    out->time_us = us;
    out->algbw = us > 0 ? (double)out->size / us / 1e3 : 0;
    out->busbw = out->algbw * ct_coll_desc(j->coll)->bus_factor(p);
    return 0;
}

int ct_model_price_size(struct ct_model *m, const struct ct_algo *a, enum ct_coll coll,
                        enum ct_dtype dt, enum ct_redop op, const struct ct_params *p,
                        int nranks, uint64_t size, struct ct_model_cost *out,
                        struct ct_err *err)
{
    struct ct_job j;
    memset(&j, 0, sizeof j);
    j.coll = coll;
    j.dtype = dt;
    j.op = op;
    if (p)
        j.params = *p;
    CT_TRY(ct_model_shape(&m->t, nranks, &j.shape, err));
    j.count = ct_coll_desc(coll)->count_for(size, ct_dtype_size(dt), j.shape.nranks);
    if (!j.count)
        return ct_err_set(err, CT_EUNSUPP, "%llu bytes is less than one element per rank",
                          (unsigned long long)size);
    return ct_model_price(m, a, &j, out, err);
}
