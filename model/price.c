/* SPDX-License-Identifier: MIT */
/*
 * Pricing a schedule on the topology model (see model.h for the cost model): the
 * symmetric path (one rank in lockstep, step patterns cached) and the full timeline.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../algos/coll.h"
#include "model_int.h"

#define SPLIT_MIN_BYTES (256u << 10) /* the executor's threshold for threaded reductions */
#define NBUCKETS 4096

/* Executor arguments the cost depends on. */
struct xargs {
    uint64_t chunk;
    int depth, threads;
    bool reduces;
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

/* A priced step pattern: for each send relation, the Pareto front of (alpha, 1/rate). */
struct pat {
    struct pat *next;
    uint64_t hash;
    int nranks, nrel;
    int64_t *rel;
    uint32_t *front_off;   /* nrel + 1 */
    double (*front)[2];    /* alpha_us, us per byte */
};

struct ct_model {
    struct ct_mtopo t;
    struct pat *buckets[NBUCKETS];
    bool no_symmetry;
};

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

static double group_us(const struct ct_mtopo *t, const struct xargs *x, double alpha,
                       double inv, uint64_t bytes, uint32_t slices, uint64_t rr)
{
    double k = slices ? slices : 1, xfer = (double)bytes * inv;
    double red = (double)rr * us_per_byte(t->gamma_gbps);
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
    if (op->kind == CT_OP_COPY)
        return (double)op->bytes * us_per_byte(t->copy_gbps);
    int thr = x->threads > 1 && op->bytes >= SPLIT_MIN_BYTES ? x->threads : 1;
    return (double)op->bytes * us_per_byte(t->gamma_gbps) / thr;
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
        for (uint32_t i = s->step_start[st]; i < s->step_start[st + 1]; i++) {
            const struct ct_op *op = &s->ops[i];
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

static int build_rank(const struct ct_mtopo *t, const struct xargs *x, const struct ct_algo *a,
                      const struct ct_job *j, int rank, struct grouper *gp, uint32_t *epoch,
                      struct rankv *v, struct ct_err *err)
{
    struct ct_job jj = *j;
    jj.shape.rank = rank;
    struct ct_sched s;
    CT_TRY(ct_algo_build(a, &jj, &s, err));
    extract(t, x, &s, gp, epoch, v);
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

/* Keep the points no other point dominates (both coordinates at least as large). */
static uint32_t pareto(double (*pt)[2], uint32_t n)
{
    uint32_t w = 0;
    for (uint32_t i = 0; i < n; i++) {
        bool dom = false;
        for (uint32_t k = 0; k < n && !dom; k++)
            if (k != i && pt[k][0] >= pt[i][0] && pt[k][1] >= pt[i][1] &&
                (pt[k][0] > pt[i][0] || pt[k][1] > pt[i][1] || k < i))
                dom = true;
        if (!dom) {
            pt[w][0] = pt[i][0];
            pt[w][1] = pt[i][1];
            w++;
        }
    }
    return w;
}

/* Price the sharing of one step pattern: every rank sends along every relation. */
static struct pat *pattern(struct ct_model *m, const int64_t *rel_sorted, int nrel, int p)
{
    uint64_t h = hash_rels(rel_sorted, nrel, p);
    struct pat **bk = &m->buckets[h % NBUCKETS];
    for (struct pat *q = *bk; q; q = q->next)
        if (q->hash == h && q->nranks == p && q->nrel == nrel &&
            !memcmp(q->rel, rel_sorted, (size_t)nrel * sizeof *rel_sorted))
            return q;
    struct ct_mnet net;
    ct_mnet_init(&net, &m->t, p);
    size_t nf = (size_t)p * (size_t)nrel;
    uint32_t *off = ct_xmalloc((nf + 1) * sizeof *off);
    int32_t *link = ct_xmalloc(nf * CT_MROUTE_MAX * sizeof *link);
    double *solo = ct_xmalloc(nf * sizeof *solo), *alpha = ct_xmalloc(nf * sizeof *alpha);
    double *rate = ct_xmalloc(nf * sizeof *rate);
    size_t nl = 0;
    for (int k = 0; k < nrel; k++)
        for (int r = 0; r < p; r++) {
            size_t f = (size_t)k * (size_t)p + (size_t)r;
            struct ct_mroute rt;
            ct_mnet_route(&net, r, rel_peer(rel_sorted[k], r, p), &rt);
            off[f] = (uint32_t)nl;
            memcpy(link + nl, rt.link, (size_t)rt.n * sizeof *link);
            nl += (size_t)rt.n;
            solo[f] = rt.solo_gbps;
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
    q->rel = ct_xmalloc((size_t)(nrel ? nrel : 1) * sizeof *q->rel);
    memcpy(q->rel, rel_sorted, (size_t)nrel * sizeof *q->rel);
    q->front_off = ct_xmalloc((size_t)(nrel + 1) * sizeof *q->front_off);
    double(*pt)[2] = ct_xmalloc((size_t)p * sizeof *pt);
    size_t cap = 0, used = 0;
    for (int k = 0; k < nrel; k++) {
        for (int r = 0; r < p; r++) {
            size_t f = (size_t)k * (size_t)p + (size_t)r;
            pt[r][0] = alpha[f];
            pt[r][1] = us_per_byte(rate[f]);
        }
        uint32_t w = pareto(pt, (uint32_t)p);
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
static bool symmetric(struct rankv *v, const int *ranks, int ns, int p, int64_t *rel,
                      struct grp *gmax)
{
    struct rankv *v0 = &v[0];
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
    for (uint32_t st = 0; st < v0->nsteps; st++) {
        double l0 = v0->local_us[st];
        for (int x = 1; x < ns; x++)
            if (fabs(v[x].local_us[st] - l0) > 1e-9 * (1 + l0) && v[x].local_us[st] > l0)
                l0 = v[x].local_us[st];
        v0->local_us[st] = l0; /* the slowest sample's local work */
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
    return true;
}

static double price_symmetric(struct ct_model *m, const struct xargs *x, const struct rankv *v0,
                              const int64_t *rel, const struct grp *gm, int p)
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
            struct pat *q = pattern(m, keys, nk, p);
            for (uint32_t i = b; i < e; i++) {
                int64_t want = gm[i].send ? rel[i] : rel_inverse(rel[i], p);
                const int64_t *hit = bsearch(&want, q->rel, (size_t)q->nrel, sizeof want, cmp_i64);
                size_t k = (size_t)(hit - q->rel);
                for (uint32_t f = q->front_off[k]; f < q->front_off[k + 1]; f++) {
                    double us = group_us(&m->t, x, q->front[f][0], q->front[f][1], gm[i].bytes,
                                         gm[i].slices, gm[i].rr);
                    if (us > comm)
                        comm = us;
                }
            }
            comm += m->t.step_us;
        }
        total += comm + v0->local_us[st];
    }
    free(keys);
    return total;
}

/* ---- full timeline --------------------------------------------------------------------- */

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

static int price_full(struct ct_model *m, const struct xargs *x, const struct ct_algo *a,
                      const struct ct_job *j, double *out_us, struct ct_err *err)
{
    int p = j->shape.nranks, rc = 0;
    const struct ct_mtopo *t = &m->t;
    struct rankv *v = ct_xcalloc((size_t)p, sizeof *v);
    struct grouper gp;
    grouper_init(&gp, p);
    uint32_t epoch = 0;
    for (int r = 0; r < p && !rc; r++)
        rc = build_rank(t, x, a, j, r, &gp, &epoch, &v[r], err);
    if (rc < 0)
        goto out;
    /* flat group numbering: rank r's groups start at base[r] */
    size_t *base = ct_xmalloc(((size_t)p + 1) * sizeof *base), ng = 0;
    uint32_t maxsteps = 0;
    for (int r = 0; r < p; r++) {
        base[r] = ng;
        ng += v[r].ng;
        if (v[r].nsteps > maxsteps)
            maxsteps = v[r].nsteps;
    }
    base[p] = ng;
    /* match the k-th send group a->b with the k-th receive group at b from a */
    struct gref *sends = ct_xmalloc((ng ? ng : 1) * sizeof *sends);
    struct gref *recvs = ct_xmalloc((ng ? ng : 1) * sizeof *recvs);
    size_t ns = 0, nr = 0;
    uint32_t *cnt[2] = {ct_xcalloc((size_t)p, sizeof(uint32_t)), ct_xcalloc((size_t)p, sizeof(uint32_t))};
    for (int r = 0; r < p; r++) {
        for (size_t i = 0; i < v[r].ng; i++) {
            const struct grp *g = &v[r].g[i];
            struct gref gr = {g->send ? r : g->peer, g->send ? g->peer : r,
                              cnt[g->send][g->peer]++, (uint32_t)(base[r] + i)};
            if (g->send)
                sends[ns++] = gr;
            else
                recvs[nr++] = gr;
        }
        for (size_t i = 0; i < v[r].ng; i++)
            cnt[v[r].g[i].send][v[r].g[i].peer] = 0;
    }
    free(cnt[0]);
    free(cnt[1]);
    if (ns != nr) {
        rc = ct_err_set(err, CT_EINVAL, "%s: %zu send groups but %zu receive groups", a->name, ns,
                        nr);
        goto out2;
    }
    qsort(sends, ns, sizeof *sends, cmp_gref);
    qsort(recvs, nr, sizeof *recvs, cmp_gref);
    uint32_t *partner = ct_xmalloc((ng ? ng : 1) * sizeof *partner);
    int32_t *owner = ct_xmalloc((ng ? ng : 1) * sizeof *owner);
    for (int r = 0; r < p; r++)
        for (size_t i = 0; i < v[r].ng; i++)
            owner[base[r] + i] = r;
    for (size_t i = 0; i < ns; i++) {
        if (cmp_gref(&sends[i], &recvs[i])) {
            rc = ct_err_set(err, CT_EINVAL, "%s: unmatched message %d -> %d", a->name,
                            sends[i].src, sends[i].dst);
            goto out3;
        }
        partner[sends[i].idx] = recvs[i].idx;
        partner[recvs[i].idx] = sends[i].idx;
    }
    /* rates: the send groups of each step index share the links, max-min fair */
    double *inv = ct_xcalloc(ng ? ng : 1, sizeof *inv), *alpha = ct_xcalloc(ng ? ng : 1, sizeof *alpha);
    {
        struct ct_mnet net;
        ct_mnet_init(&net, t, p);
        struct ct_maxmin mm;
        ct_maxmin_init(&mm, net.nlinks);
        uint32_t *off = ct_xmalloc((ns + 1) * sizeof *off);
        int32_t *link = ct_xmalloc((ns ? ns : 1) * CT_MROUTE_MAX * sizeof *link);
        double *solo = ct_xmalloc((ns ? ns : 1) * sizeof *solo), *rate = ct_xmalloc((ns ? ns : 1) * sizeof *rate);
        uint32_t *which = ct_xmalloc((ns ? ns : 1) * sizeof *which);
        for (uint32_t st = 0; st < maxsteps; st++) {
            size_t nf = 0, nl = 0;
            for (int r = 0; r < p; r++) {
                if (st >= v[r].nsteps)
                    continue;
                for (uint32_t i = v[r].sfirst[st]; i < v[r].sfirst[st + 1]; i++) {
                    const struct grp *g = &v[r].g[i];
                    if (!g->send)
                        continue;
                    struct ct_mroute rt;
                    ct_mnet_route(&net, r, g->peer, &rt);
                    off[nf] = (uint32_t)nl;
                    memcpy(link + nl, rt.link, (size_t)rt.n * sizeof *link);
                    nl += (size_t)rt.n;
                    solo[nf] = rt.solo_gbps;
                    alpha[base[r] + i] = rt.alpha_us;
                    which[nf++] = (uint32_t)(base[r] + i);
                }
            }
            off[nf] = (uint32_t)nl;
            ct_maxmin_solve(&mm, &net, nf, off, link, solo, rate);
            for (size_t f = 0; f < nf; f++)
                inv[which[f]] = us_per_byte(rate[f]);
        }
        ct_maxmin_release(&mm);
        free(off);
        free(link);
        free(solo);
        free(rate);
        free(which);
    }
    /* timeline: a step starts when the previous one ended; a message starts when both
     * its steps have started */
    double **start = ct_xmalloc((size_t)p * sizeof *start);
    uint32_t *ptr = ct_xcalloc((size_t)p, sizeof *ptr);
    for (int r = 0; r < p; r++)
        start[r] = ct_xcalloc(v[r].nsteps + 1, sizeof **start);
    int done = 0;
    for (int r = 0; r < p; r++)
        done += v[r].nsteps == 0;
    bool moved = true;
    while (done < p && moved) {
        moved = false;
        for (int r = 0; r < p; r++) {
            while (ptr[r] < v[r].nsteps) {
                uint32_t st = ptr[r];
                bool ready = true;
                for (uint32_t i = v[r].sfirst[st]; i < v[r].sfirst[st + 1] && ready; i++) {
                    uint32_t q = partner[base[r] + i];
                    int o = owner[q];
                    ready = ptr[o] >= v[o].g[q - base[o]].step;
                }
                if (!ready)
                    break;
                double t0 = start[r][st], end = t0;
                for (uint32_t i = v[r].sfirst[st]; i < v[r].sfirst[st + 1]; i++) {
                    uint32_t me = (uint32_t)(base[r] + i), q = partner[me];
                    int o = owner[q];
                    const struct grp *g = &v[r].g[i], *h = &v[o].g[q - base[o]];
                    uint32_t sg = g->send ? me : q;
                    const struct grp *sgp = g->send ? g : h, *rgp = g->send ? h : g;
                    double s0 = t0 > start[o][h->step] ? t0 : start[o][h->step];
                    double e = s0 + group_us(t, x, alpha[sg], inv[sg], sgp->bytes, sgp->slices,
                                             rgp->rr);
                    if (e > end)
                        end = e;
                }
                if (v[r].sfirst[st + 1] > v[r].sfirst[st])
                    end += t->step_us;
                start[r][st + 1] = end + v[r].local_us[st];
                ptr[r]++;
                moved = true;
                if (ptr[r] == v[r].nsteps)
                    done++;
            }
        }
    }
    if (done < p) {
        rc = ct_err_set(err, CT_EINVAL, "%s: the schedule deadlocks when priced", a->name);
    } else {
        double tmax = 0;
        for (int r = 0; r < p; r++)
            if (start[r][v[r].nsteps] > tmax)
                tmax = start[r][v[r].nsteps];
        *out_us = tmax;
    }
    for (int r = 0; r < p; r++)
        free(start[r]);
    free(start);
    free(ptr);
    free(inv);
    free(alpha);
out3:
    free(partner);
    free(owner);
out2:
    free(sends);
    free(recvs);
    free(base);
out:
    for (int r = 0; r < p; r++)
        rankv_release(&v[r]);
    free(v);
    grouper_release(&gp);
    return rc;
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
                      (int)jj.params.v[CT_P_THREADS], ct_coll_desc(j->coll)->needs_op};
    if (!x.chunk)
        x.chunk = es;
    memset(out, 0, sizeof *out);
    out->nranks = p;
    out->nnodes = ct_shape_nodes(&jj.shape);
    out->count = j->count;
    out->size = ct_coll_desc(j->coll)->size_bytes(j->count, es, p);
    double us = 0;
    bool done = false;
    if (!m->no_symmetry && p > 1) {
        int ranks[32];
        int ns = samples(p, chk.ranks_per_node, ranks);
        struct rankv v[32];
        struct grouper gp;
        grouper_init(&gp, p);
        uint32_t epoch = 0;
        int rc = 0, built = 0;
        for (; built < ns && rc == 0; built++)
            rc = build_rank(t, &x, a, &jj, ranks[built], &gp, &epoch, &v[built], err);
        if (rc < 0)
            built--;
        if (rc == 0) {
            size_t ng = v[0].ng ? v[0].ng : 1;
            int64_t *rel = ct_xmalloc(ng * sizeof *rel);
            struct grp *gm = ct_xmalloc(ng * sizeof *gm);
            if (symmetric(v, ranks, ns, p, rel, gm)) {
                us = price_symmetric(m, &x, &v[0], rel, gm, p);
                done = true;
            }
            free(rel);
            free(gm);
        }
        for (int i = 0; i < built; i++)
            rankv_release(&v[i]);
        grouper_release(&gp);
        CT_TRY(rc);
    }
    out->symmetric = done;
    if (!done)
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
