/* SPDX-License-Identifier: MIT */
/* Sub-communicator composition, lock-step rings over rank orders, torus geometry. */
#include "compose.h"

#include <stdlib.h>

static int mod(int a, int n)
{
    return ((a % n) + n) % n;
}

/* ---- Sub-communicators ---------------------------------------------------------- */

struct ct_job ct_compose_subjob(const struct ct_job *parent, enum ct_coll coll, uint64_t count,
                                bool in_place, int nranks, int rank, int ranks_per_node)
{
    struct ct_job sub = *parent;
    sub.coll = coll;
    sub.count = count;
    sub.in_place = in_place;
    sub.shape.nranks = nranks;
    sub.shape.rank = rank;
    sub.shape.ranks_per_node = ranks_per_node;
    sub.shape.torus_rows = 0;
    sub.shape.torus_cols = 0;
    sub.params.intra = NULL;
    sub.params.inter = NULL;
    return sub;
}

static struct ct_loc remap(struct ct_loc l, const struct ct_compose_map *m)
{
    return ct_loc((enum ct_bufid)m->at[l.buf].buf, m->at[l.buf].off + l.off);
}

int ct_compose_append(struct ct_sched *s, const struct ct_algo *a, const struct ct_job *sub,
                      const int *ranks, const struct ct_compose_map *map, struct ct_err *err)
{
    struct ct_sched t;
    CT_TRY(ct_algo_build(a, sub, &t, err));
    for (uint32_t st = 0; st < t.nsteps; st++) {
        ct_sched_step(s);
        for (uint32_t i = t.step_start[st]; i < t.step_start[st + 1]; i++) {
            const struct ct_op *op = &t.ops[i];
            int peer = op->kind <= CT_OP_RECV_REDUCE ? ranks[op->peer] : -1;
            struct ct_loc dst = remap(op->dst, map), src = remap(op->src, map);
            switch (op->kind) {
            case CT_OP_SEND: ct_sched_send(s, peer, src, op->bytes); break;
            case CT_OP_RECV: ct_sched_recv(s, peer, dst, op->bytes); break;
            case CT_OP_RECV_REDUCE:
                if (op->rev)
                    ct_sched_recv_reduce_rev(s, peer, dst, src, op->bytes);
                else
                    ct_sched_recv_reduce(s, peer, dst, src, op->bytes);
                break;
            case CT_OP_REDUCE: ct_sched_reduce(s, dst, src, remap(op->src2, map), op->bytes); break;
            case CT_OP_COPY: ct_sched_copy(s, dst, src, op->bytes); break;
            default: /* quantized and one-sided ops do not compose */
                ct_sched_release(&t);
                return ct_err_set(err, CT_EUNSUPP, "%s: op kind %d cannot be composed", a->name,
                                  op->kind);
            }
        }
    }
    ct_sched_release(&t);
    return 0;
}

/* ---- Rings over explicit rank orders -------------------------------------------- */

void ct_order_reverse(int *order, const int *src, int n)
{
    for (int p = 0; p < n; p++)
        order[p] = src[n - 1 - p];
}

struct ring {
    const int *order;
    int pos, next, prev;
    uint64_t off, n; /* this ring's slice, elements */
};

static struct ring *rings_setup(const struct ct_job *j, const int *orders, int nrings,
                                uint64_t count)
{
    int N = j->shape.nranks, r = j->shape.rank;
    struct ring *rs = ct_xcalloc((size_t)nrings, sizeof *rs);
    for (int i = 0; i < nrings; i++) {
        struct ring *g = &rs[i];
        g->order = orders + (size_t)i * (size_t)N;
        for (int p = 0; p < N; p++)
            if (g->order[p] == r)
                g->pos = p;
        g->next = g->order[mod(g->pos + 1, N)];
        g->prev = g->order[mod(g->pos - 1, N)];
        uint64_t es = ct_dtype_size(j->dtype);
        g->off = ct_part_off_line(count, (uint64_t)nrings, (uint64_t)i, es);
        g->n = ct_part_len_line(count, (uint64_t)nrings, (uint64_t)i, es);
    }
    return rs;
}

/* AllReduce: ring slice split into N blocks by ring position; RS then AG over RECV. */
static void rings_allreduce(const struct ct_job *j, struct ct_sched *s, struct ring *rs, int nrings)
{
    int N = j->shape.nranks;
    uint64_t es = ct_dtype_size(j->dtype);
#define RB(g, b) (((g)->off + ct_part_off_line((g)->n, N, (uint64_t)mod((b), N), es)) * es)
#define RL(g, b) (ct_part_len_line((g)->n, N, (uint64_t)mod((b), N), es) * es)
    for (int k = 0; k < N - 1; k++) {
        ct_sched_step(s);
        for (int i = 0; i < nrings; i++) {
            struct ring *g = &rs[i];
            int sb = g->pos - k, rb = g->pos - k - 1;
            enum ct_bufid from = k == 0 ? CT_BUF_SEND : CT_BUF_RECV;
            ct_sched_send(s, g->next, ct_loc(from, RB(g, sb)), RL(g, sb));
            ct_sched_recv_reduce(s, g->prev, ct_loc(CT_BUF_RECV, RB(g, rb)),
                                 ct_loc(CT_BUF_SEND, RB(g, rb)), RL(g, rb));
        }
    }
    for (int k = 0; k < N - 1; k++) {
        ct_sched_step(s);
        for (int i = 0; i < nrings; i++) {
            struct ring *g = &rs[i];
            int sb = g->pos + 1 - k, rb = g->pos - k;
            ct_sched_send(s, g->next, ct_loc(CT_BUF_RECV, RB(g, sb)), RL(g, sb));
            ct_sched_recv(s, g->prev, ct_loc(CT_BUF_RECV, RB(g, rb)), RL(g, rb));
        }
    }
#undef RB
#undef RL
}

/* AllGather: ring slice of every block; step k forwards the block of order[pos-k]. */
static void rings_allgather(const struct ct_job *j, struct ct_sched *s, struct ring *rs, int nrings)
{
    int N = j->shape.nranks, r = j->shape.rank;
    uint64_t es = ct_dtype_size(j->dtype), bb = j->count * es;
    ct_sched_step(s);
    for (int k = 0; k < N - 1; k++) {
        ct_sched_step(s);
        for (int i = 0; i < nrings; i++) {
            struct ring *g = &rs[i];
            uint64_t so = (uint64_t)g->order[mod(g->pos - k, N)] * bb + g->off * es;
            uint64_t ro = (uint64_t)g->order[mod(g->pos - k - 1, N)] * bb + g->off * es;
            if (k == 0)
                ct_sched_send(s, g->next, ct_loc(CT_BUF_SEND, g->off * es), g->n * es);
            else
                ct_sched_send(s, g->next, ct_loc(CT_BUF_RECV, so), g->n * es);
            ct_sched_recv(s, g->prev, ct_loc(CT_BUF_RECV, ro), g->n * es);
        }
        if (k == 0 && !j->in_place)
            ct_sched_copy(s, ct_loc(CT_BUF_RECV, (uint64_t)r * bb), ct_loc(CT_BUF_SEND, 0), bb);
    }
}

/*
 * ReduceScatter: ring slice of every block; step k sends the partial of block
 * order[pos-k-1] and reduces the incoming partial of block order[pos-k-2] into scratch
 * slot k%2 (RECV on the last step), so rank order[pos] ends with its own block.
 */
static void rings_reducescatter(const struct ct_job *j, struct ct_sched *s, struct ring *rs,
                                int nrings)
{
    int N = j->shape.nranks;
    uint64_t es = ct_dtype_size(j->dtype), bb = j->count * es;
    for (int k = 0; k < N - 1; k++) {
        ct_sched_step(s);
        for (int i = 0; i < nrings; i++) {
            struct ring *g = &rs[i];
            uint64_t sblk = (uint64_t)g->order[mod(g->pos - k - 1, N)] * bb;
            uint64_t rblk = (uint64_t)g->order[mod(g->pos - k - 2, N)] * bb;
            uint64_t so = g->off * es, len = g->n * es;
            struct ct_loc from = k == 0 ? ct_loc(CT_BUF_SEND, sblk + so)
                                        : ct_loc(CT_BUF_SCRATCH, (uint64_t)((k - 1) % 2) * bb + so);
            struct ct_loc to = k == N - 2 ? ct_loc(CT_BUF_RECV, so)
                                          : ct_loc(CT_BUF_SCRATCH, (uint64_t)(k % 2) * bb + so);
            ct_sched_send(s, g->next, from, len);
            ct_sched_recv_reduce(s, g->prev, to, ct_loc(CT_BUF_SEND, rblk + so), len);
        }
    }
}

int ct_rings_build(const struct ct_job *j, struct ct_sched *s, const int *orders, int nrings,
                   struct ct_err *err)
{
    int N = j->shape.nranks;
    uint64_t es = ct_dtype_size(j->dtype);
    if (N == 1) {
        ct_sched_copy(s, ct_loc(CT_BUF_RECV, 0), ct_loc(CT_BUF_SEND, 0), j->count * es);
        return 0;
    }
    if (j->coll == CT_ALLTOALL)
        return ct_err_set(err, CT_EUNSUPP, "rings do not implement alltoall");
    struct ring *rs = rings_setup(j, orders, nrings, j->count);
    switch (j->coll) {
    case CT_ALLREDUCE: rings_allreduce(j, s, rs, nrings); break;
    case CT_ALLGATHER: rings_allgather(j, s, rs, nrings); break;
    default: rings_reducescatter(j, s, rs, nrings); break;
    }
    free(rs);
    return 0;
}

/* ---- Torus geometry ------------------------------------------------------------- */

int ct_torus_check(const struct ct_job *j, const char *who, struct ct_err *why)
{
    const struct ct_shape *sh = &j->shape;
    if (sh->torus_rows <= 0 || sh->torus_cols <= 0)
        return ct_err_set(why, CT_EUNSUPP, "%s needs a torus shape (--torus RxC)", who);
    if ((long)sh->torus_rows * sh->torus_cols != sh->nranks)
        return ct_err_set(why, CT_EUNSUPP, "%s: a %dx%d torus does not hold %d ranks", who,
                          sh->torus_rows, sh->torus_cols, sh->nranks);
    return 0;
}

/*
 * Staircase over an a x b grid (a "lines" of b cells): line i is walked whole, the first
 * a-d lines left to right, the last d right to left, then one step to the next line in
 * the column where the walk ended. It closes when the column drift 2d - a is 0 mod b.
 * tr: lines are columns of the rows x cols torus. Returns 0 when it does not close.
 */
static int staircase(int a, int b, int d, int tr, int cols, int *c)
{
    if (mod(2 * d - a, b))
        return 0;
    int e = 0, n = 0;
    for (int i = 0; i < a; i++) {
        int dir = i < a - d ? 1 : -1, x = e;
        for (int t = 0; t < b; t++) {
            c[n++] = tr ? x * cols + i : i * cols + x;
            if (t < b - 1)
                x = mod(x + dir, b);
        }
        e = x;
    }
    return 1;
}

/* The complement of cycle c1 in the 4-regular torus, walked from rank 0; 1 when it is
 * one Hamiltonian cycle. Needs rows, cols >= 3 (four distinct neighbours). */
static int complement(int rows, int cols, const int *c1, int *c2)
{
    int N = rows * cols;
    int *nb = ct_xmalloc((size_t)N * 2 * sizeof *nb);
    int *seen = ct_xcalloc((size_t)N, sizeof *seen);
    for (int p = 0; p < N; p++) {
        int v = c1[p];
        nb[2 * v] = c1[mod(p - 1, N)];
        nb[2 * v + 1] = c1[mod(p + 1, N)];
    }
    int ok = 1, prev = -1, cur = 0;
    for (int n = 0; n < N && ok; n++) {
        c2[n] = cur;
        seen[cur] = 1;
        int row = cur / cols, col = cur % cols, next = -1;
        int cand[4] = {mod(row - 1, rows) * cols + col, mod(row + 1, rows) * cols + col,
                       row * cols + mod(col - 1, cols), row * cols + mod(col + 1, cols)};
        for (int k = 0; k < 4; k++) {
            int w = cand[k];
            if (w == nb[2 * cur] || w == nb[2 * cur + 1] || w == prev)
                continue;
            next = w;
            break;
        }
        if (n == N - 1)
            ok = next == 0; /* closes back to rank 0 */
        else
            ok = next >= 0 && !seen[next];
        prev = cur;
        cur = next;
    }
    free(nb);
    free(seen);
    return ok;
}

int ct_torus_cycles(int rows, int cols, int *c1, int *c2)
{
    int N = rows * cols;
    if (rows >= 3 && cols >= 3 && (rows - cols) % 2 == 0) {
        for (int tr = 0; tr < 2; tr++) {
            int a = tr ? cols : rows, b = tr ? rows : cols;
            for (int d = 0; d <= a; d++)
                if (staircase(a, b, d, tr, cols, c1) && complement(rows, cols, c1, c2))
                    return 1;
        }
    }
    int found = 0;
    if (rows == 1 || cols == 1) {
        for (int p = 0; p < N; p++)
            c1[p] = p;
        found = 1;
    }
    for (int tr = 0; tr < 2 && !found; tr++) {
        int a = tr ? cols : rows, b = tr ? rows : cols;
        for (int d = 0; d <= a && !found; d++)
            found = staircase(a, b, d, tr, cols, c1);
    }
    if (!found)
        CT_BUG("no staircase cycle on a %dx%d torus", rows, cols);
    ct_order_reverse(c2, c1, N);
    return 0;
}
