/* SPDX-License-Identifier: MIT */
/* Accelerator torus: infer the grid from neighbour lists, apply a --torus override, find two
 * edge-disjoint Hamiltonian cycles (a 2D torus decomposes into two) and the hypercube labels
 * of tori with sides 1, 2 or 4 (a 4x4 torus is a 4D hypercube). */
#include "probe_int.h"

#include <stdlib.h>
#include <string.h>

#define MAX_TORUS 4096

/* Neighbours of position p on an r x c wrap-around grid in neuron-ls order (N, W, S, E),
 * without self and duplicates. Returns the count. */
static int grid_nbrs(int r, int c, int p, int out[4])
{
    int row = p / c, col = p % c, n = 0;
    int cand[4] = {((row + r - 1) % r) * c + col, row * c + (col + c - 1) % c,
                   ((row + 1) % r) * c + col, row * c + (col + 1) % c};
    for (int i = 0; i < 4; i++) {
        int dup = cand[i] == p;
        for (int j = 0; j < n; j++)
            dup |= out[j] == cand[i];
        if (!dup)
            out[n++] = cand[i];
    }
    return n;
}

static int same_set(const int *a, size_t na, const int *b, int nb)
{
    int cnt = 0;
    for (int i = 0; i < nb; i++) {
        int hit = 0;
        for (size_t j = 0; j < na; j++)
            hit |= a[j] == b[i];
        if (!hit)
            return 0;
        cnt++;
    }
    for (size_t j = 0; j < na; j++) { /* every listed neighbour is expected */
        int hit = 0;
        for (int i = 0; i < nb; i++)
            hit |= a[j] == b[i];
        if (!hit)
            return 0;
    }
    return cnt == nb;
}

static int fits(const struct ct_topo *t, int r, int c)
{
    for (size_t i = 0; i < t->n_accel; i++) {
        int exp[4], ne = grid_nbrs(r, c, t->accel[i].index, exp);
        if (!same_set(t->accel[i].nbrs, t->accel[i].n_nbrs, exp, ne))
            return 0;
    }
    return 1;
}

static int indices_dense(const struct ct_topo *t)
{
    size_t n = t->n_accel;
    if (n < 2 || n > MAX_TORUS)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (t->accel[i].index < 0 || (size_t)t->accel[i].index >= n || !t->accel[i].n_nbrs ||
            ct_topo_find_accel(t, t->accel[i].index) != (int)i)
            return 0;
    for (size_t i = 0; i < n; i++)
        if (ct_topo_find_accel(t, (int)i) < 0)
            return 0;
    return 1;
}

int ct_torus_infer(const struct ct_topo *t, int *rows, int *cols)
{
    if (!indices_dense(t))
        return -1;
    int n = (int)t->n_accel;
    for (int r = 2; r < n; r++)
        if (n % r == 0 && fits(t, r, n / r)) {
            *rows = r;
            *cols = n / r;
            return 0;
        }
    return -1;
}

int ct_topo_set_torus(struct ct_topo *t, int rows, int cols, struct ct_err *err)
{
    if (rows < 1 || cols < 1 || rows * cols > MAX_TORUS || rows * cols < 2)
        return ct_err_set(err, CT_EINVAL, "torus %dx%d: sides must be >= 1, 2 to %d devices", rows,
                          cols, MAX_TORUS);
    size_t n = (size_t)(rows * cols);
    if (!t->n_accel && t->n_gpu && t->n_gpu != n) /* a torus of the GPUs' ranks, one each */
        return ct_err_set(err, CT_EINVAL, "--torus %dx%d needs %zu devices, found %zu GPUs", rows,
                          cols, n, (size_t)t->n_gpu);
    if (!t->n_accel) {
        for (size_t i = 0; i < n; i++)
            ct_topo_add_accel(t, (int)i);
        ct_topo_note(t, "torus %dx%d from --torus: no accelerator seen, devices are placeholders",
                     rows, cols);
    } else if (t->n_accel != n) {
        return ct_err_set(err, CT_EINVAL, "--torus %dx%d needs %zu devices, found %zu", rows, cols,
                          n, t->n_accel);
    }
    for (size_t i = 0; i < t->n_accel; i++) { /* the input's links stand: a shape against
                                                   them drew one grid beside another's table */
        const struct ct_accel *a = &t->accel[i];
        int exp[4], ne = grid_nbrs(rows, cols, a->index < (int)n ? a->index : 0, exp);
        if (a->n_nbrs && !same_set(a->nbrs, a->n_nbrs, exp, ne))
            return ct_err_set(err, CT_EINVAL,
                              "--torus %dx%d: device %d's listed neighbours are not a %dx%d "
                              "torus's (leave --torus out: the input's links give the shape)",
                              rows, cols, a->index, rows, cols);
    }
    for (size_t i = 0; i < t->n_accel; i++) {
        struct ct_accel *a = &t->accel[i];
        int exp[4], ne = grid_nbrs(rows, cols, a->index < (int)n ? a->index : 0, exp);
        if (!a->n_nbrs) {
            a->nbrs = ct_xmalloc(4 * sizeof *a->nbrs);
            memcpy(a->nbrs, exp, (size_t)ne * sizeof *exp);
            a->n_nbrs = (size_t)ne;
        }
    }
    t->torus_rows = rows;
    t->torus_cols = cols;
    return 0;
}

/* ---- Hamiltonian decomposition ---- */

/* Edge ids: horizontal (p, p+1 in row) = 2p, vertical (p, p below) = 2p + 1. */
static int edge_id(int r, int c, int a, int b)
{
    int ra = a / c, ca = a % c, rb = b / c, cb = b % c;
    if (ra == rb)
        return 2 * (((cb == (ca + 1) % c) ? ra * c + ca : rb * c + cb));
    (void)r;
    return 2 * ((rb == (ra + 1) % r) ? ra * c + ca : rb * c + cb) + 1;
}

/* Walk a 2-regular edge set from position 0; fills order[n]; 0 if it is one n-cycle. */
static int walk_cycle(int r, int c, const unsigned char *in, int *order)
{
    int n = r * c, prev = -1, cur = 0;
    for (int k = 0; k < n; k++) {
        order[k] = cur;
        int nb[4], nn = grid_nbrs(r, c, cur, nb), next = -1, deg = 0;
        for (int i = 0; i < nn; i++)
            if (in[edge_id(r, c, cur, nb[i])]) {
                deg++;
                if (nb[i] != prev && next < 0)
                    next = nb[i];
            }
        if (deg != 2 || next < 0)
            return -1;
        prev = cur;
        cur = next;
        if (cur == 0 && k != n - 1)
            return -1;
    }
    return cur == 0 ? 0 : -1;
}

/* Staircase: walk a row to its exit column s(row) = s0 - row, step down, repeat (or the same
 * with rows and columns swapped). Both the walk and the remaining edges are Hamiltonian for
 * square tori and many others; the caller verifies. */
static void staircase(int r, int c, int s0, int transpose, unsigned char *h1)
{
    int n = r * c;
    memset(h1, 0, (size_t)(2 * n));
    for (int p = 0; p < n; p++) {
        int row = p / c, col = p % c, q;
        if (!transpose)
            q = col != ((s0 - row) % c + c) % c ? row * c + (col + 1) % c
                                                : ((row + 1) % r) * c + col;
        else
            q = row != ((s0 - col) % r + r) % r ? ((row + 1) % r) * c + col
                                                : row * c + (col + 1) % c;
        h1[edge_id(r, c, p, q)] = 1;
    }
}

/* Bounded depth-first search for small tori the staircase does not decompose. */
struct dfs {
    int r, c, n;
    long budget;
    int *path;
    unsigned char *seen, *h1, *h2;
    int *cyc0, *cyc1;
};

static int dfs_close(struct dfs *d)
{
    memset(d->h1, 0, (size_t)(2 * d->n));
    for (int k = 0; k < d->n; k++)
        d->h1[edge_id(d->r, d->c, d->path[k], d->path[(k + 1) % d->n])] = 1;
    for (int e = 0; e < 2 * d->n; e++)
        d->h2[e] = !d->h1[e];
    return walk_cycle(d->r, d->c, d->h1, d->cyc0) == 0 &&
                   walk_cycle(d->r, d->c, d->h2, d->cyc1) == 0
               ? 0
               : -1;
}

static int dfs(struct dfs *d, int depth)
{
    if (--d->budget < 0)
        return -1;
    int nb[4], nn = grid_nbrs(d->r, d->c, d->path[depth - 1], nb);
    if (depth == d->n) {
        for (int i = 0; i < nn; i++)
            if (nb[i] == 0)
                return dfs_close(d);
        return -1;
    }
    for (int i = 0; i < nn; i++) {
        if (d->seen[nb[i]])
            continue;
        d->seen[nb[i]] = 1;
        d->path[depth] = nb[i];
        if (dfs(d, depth + 1) == 0)
            return 0;
        d->seen[nb[i]] = 0;
    }
    return -1;
}

static int search(int r, int c, int *cyc0, int *cyc1)
{
    int n = r * c;
    if (n > 64)
        return -1;
    struct dfs d = {r,
                    c,
                    n,
                    2000000L,
                    ct_xmalloc((size_t)n * sizeof(int)),
                    ct_xcalloc((size_t)n, 1),
                    ct_xmalloc((size_t)(2 * n)),
                    ct_xmalloc((size_t)(2 * n)),
                    cyc0,
                    cyc1};
    d.path[0] = 0;
    d.seen[0] = 1;
    int rc = dfs(&d, 1);
    free(d.path);
    free(d.seen);
    free(d.h1);
    free(d.h2);
    return rc;
}

static int try_decompose(int r, int c, int *cyc0, int *cyc1)
{
    int n = r * c;
    unsigned char *h1 = ct_xmalloc((size_t)(2 * n)), *h2 = ct_xmalloc((size_t)(2 * n));
    int ok = -1;
    for (int tr = 0; tr < 2 && ok; tr++)
        for (int s0 = 0; s0 < (tr ? r : c) && ok; s0++) {
            staircase(r, c, s0, tr, h1);
            for (int e = 0; e < 2 * n; e++)
                h2[e] = !h1[e];
            if (walk_cycle(r, c, h1, cyc0) == 0 && walk_cycle(r, c, h2, cyc1) == 0)
                ok = 0;
        }
    free(h1);
    free(h2);
    return ok ? search(r, c, cyc0, cyc1) : 0;
}

static void hypercube(struct ct_torus *tt)
{
    int br = tt->rows == 1 ? 0 : tt->rows == 2 ? 1 : tt->rows == 4 ? 2 : -1;
    int bc = tt->cols == 1 ? 0 : tt->cols == 2 ? 1 : tt->cols == 4 ? 2 : -1;
    if (br < 0 || bc < 0 || br + bc == 0)
        return;
    tt->dims = br + bc;
    tt->label = ct_xmalloc((size_t)(tt->rows * tt->cols) * sizeof *tt->label);
    for (int p = 0; p < tt->rows * tt->cols; p++) {
        unsigned row = (unsigned)(p / tt->cols), col = (unsigned)(p % tt->cols);
        tt->label[p] = ((row ^ (row >> 1)) << bc) | (col ^ (col >> 1));
    }
}

int ct_torus_build(const struct ct_topo *t, struct ct_torus *tt, struct ct_err *err)
{
    memset(tt, 0, sizeof *tt);
    int r = t->torus_rows, c = t->torus_cols;
    if ((!r || !c) && ct_torus_infer(t, &r, &c) < 0)
        return ct_err_set(err, CT_EUNSUPP,
                          "%zu accelerator(s), no regular 2D torus in their "
                          "neighbour lists",
                          t->n_accel);
    int n = r * c;
    tt->rows = r;
    tt->cols = c;
    tt->dev = ct_xmalloc((size_t)n * sizeof *tt->dev);
    for (int p = 0; p < n; p++)
        if ((tt->dev[p] = ct_topo_find_accel(t, p)) < 0) {
            ct_torus_release(tt);
            return ct_err_set(err, CT_EUNSUPP, "torus %dx%d: device %d is missing", r, c, p);
        }
    if (r >= 3 && c >= 3) {
        int *c0 = ct_xmalloc((size_t)n * sizeof *c0), *c1 = ct_xmalloc((size_t)n * sizeof *c1);
        if (try_decompose(r, c, c0, c1) == 0) {
            for (int k = 0; k < n; k++) {
                c0[k] = tt->dev[c0[k]];
                c1[k] = tt->dev[c1[k]];
            }
            tt->cycle[0] = c0;
            tt->cycle[1] = c1;
        } else {
            free(c0);
            free(c1);
        }
    }
    hypercube(tt);
    return 0;
}

void ct_torus_release(struct ct_torus *tt)
{
    free(tt->dev);
    free(tt->cycle[0]);
    free(tt->cycle[1]);
    free(tt->label);
    memset(tt, 0, sizeof *tt);
}
