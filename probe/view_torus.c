/* SPDX-License-Identifier: MIT */
/* Torus view: the grid drawn as `neuron-ls --topology` draws it (wrap-around links marked *),
 * coordinates and neighbours, two edge-disjoint Hamiltonian cycles, hypercube axes. */
#include "probe_int.h"

#include <string.h>

#define COLW 9 /* "[ 0 ]" + "◄––►" */

static void markers(int cols, const char *mark, FILE *out)
{
    for (int c = 0; c < cols; c++)
        fprintf(out, "%*s%s", c ? COLW - 1 : 6, "", mark);
    fputc('\n', out);
}

static void draw(const struct ct_topo *t, const struct ct_torus *tt, FILE *out)
{
    int r = tt->rows, c = tt->cols, vwrap = r > 2, hwrap = c > 2;
    if (vwrap) {
        markers(c, "*", out);
        markers(c, "\u2502", out);
        markers(c, "\u25bc", out);
    }
    for (int row = 0; row < r; row++) {
        if (row) {
            markers(c, "\u25b2", out);
            markers(c, "\u2502", out);
            markers(c, "\u25bc", out);
        }
        fprintf(out, "%s", hwrap ? "*\u2013\u2013\u25ba" : "    ");
        for (int col = 0; col < c; col++)
            fprintf(out, "%s[%2d ]", col ? "\u25c4\u2013\u2013\u25ba" : "",
                    t->accel[tt->dev[row * c + col]].index);
        fprintf(out, "%s\n", hwrap ? "\u25c4\u2013\u2013*" : "");
    }
    if (vwrap) {
        markers(c, "\u25b2", out);
        markers(c, "\u2502", out);
        markers(c, "*", out);
    }
}

static void bits(unsigned v, int n, char *buf)
{
    for (int i = 0; i < n; i++)
        buf[i] = (v >> (n - 1 - i)) & 1 ? '1' : '0';
    buf[n] = 0;
}

static void coords(const struct ct_topo *t, const struct ct_torus *tt, FILE *out)
{
    fprintf(out, "\n%-7s %-4s %-4s %-20s%s\n", "DEVICE", "ROW", "COL", "NEIGHBOURS",
            tt->dims ? "HYPERCUBE" : "");
    for (int p = 0; p < tt->rows * tt->cols; p++) {
        const struct ct_accel *a = &t->accel[tt->dev[p]];
        char nb[96] = "", lab[40] = "";
        size_t n = 0;
        for (size_t j = 0; j < a->n_nbrs && n < sizeof nb - 8; j++)
            n += (size_t)snprintf(nb + n, sizeof nb - n, "%s%d", j ? " " : "", a->nbrs[j]);
        if (tt->dims)
            bits(tt->label[p], tt->dims, lab);
        fprintf(out, "%-7d %-4d %-4d %-20s%s\n", a->index, p / tt->cols, p % tt->cols, nb, lab);
    }
}

static void cycles(const struct ct_topo *t, const struct ct_torus *tt, FILE *out)
{
    int n = tt->rows * tt->cols;
    if (!tt->cycle[0]) {
        fprintf(out, "\nHamiltonian cycles: none (a %dx%d torus needs both sides >= 3)\n", tt->rows,
                tt->cols);
        return;
    }
    fprintf(out,
            "\nTwo edge-disjoint Hamiltonian cycles (together every link once; a ring on "
            "each, both directions, drives all %d links):\n",
            2 * n);
    for (int k = 0; k < 2; k++) {
        fprintf(out, "  cycle %d:", k + 1);
        for (int i = 0; i < n; i++)
            fprintf(out, " %d", t->accel[tt->cycle[k][i]].index);
        fprintf(out, " -> %d\n", t->accel[tt->cycle[k][0]].index);
    }
}

static void hypercube(const struct ct_topo *t, const struct ct_torus *tt, FILE *out)
{
    if (!tt->dims)
        return;
    int n = tt->rows * tt->cols;
    fprintf(out,
            "\n%dx%d torus = %dD hypercube (Gray-coded row and column bits); pairs per "
            "axis:\n",
            tt->rows, tt->cols, tt->dims);
    for (int b = tt->dims - 1; b >= 0; b--) {
        fprintf(out, "  axis %d:", tt->dims - 1 - b);
        for (int p = 0; p < n; p++)
            for (int q = p + 1; q < n; q++)
                if ((tt->label[p] ^ tt->label[q]) == 1u << b)
                    fprintf(out, " %d-%d", t->accel[tt->dev[p]].index, t->accel[tt->dev[q]].index);
        fputc('\n', out);
    }
}

int ct_view_torus(const struct ct_topo *t, FILE *out, struct ct_err *err)
{
    if (!t->n_accel) { /* a torus of Neuron devices' links; GPUs have the matrix */
        if (t->n_gpu)
            fprintf(out, "Torus: no Trainium-style accelerator (the %zu GPU(s): --view matrix)\n",
                    t->n_gpu);
        else
            fprintf(out, "Torus: no accelerator\n");
        return 0;
    }
    struct ct_torus tt;
    struct ct_err why = {0};
    if (ct_torus_build(t, &tt, &why) < 0) {
        fprintf(out, "Torus: %s\n", why.msg);
        return 0;
    }
    fprintf(out, "Torus %dx%d (%zu devices, wrap-around links marked *)\n", tt.rows, tt.cols,
            t->n_accel);
    draw(t, &tt, out);
    coords(t, &tt, out);
    cycles(t, &tt, out);
    hypercube(t, &tt, out);
    ct_torus_release(&tt);
    return 0;
}
