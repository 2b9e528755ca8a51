/* SPDX-License-Identifier: MIT */
/*
 * GPU copies: what a host's copy engines move between page-locked host memory and each GPU,
 * and between every two GPUs, measured through the cuda memory kind (device/), against the
 * probed links: the GPU's PCIe link at its capability, the NVLinks of a pair (else the slower
 * PCIe link), times the efficiency a copy engine reaches. The measured ceilings sit beside the
 * inferred ones: a GPU whose link trained at a lower width or speed, or a pair whose NVLinks
 * are down, shows here by name.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../device/device.h"
#include "validate.h"

void ct_val_gpu_measure(struct ct_val_gpu_meas *m, size_t bytes, int iters)
{
    struct ct_mem g[CT_VAL_MAX_GPU];
    bool open[CT_VAL_MAX_GPU] = {false};
    struct ct_err err = {0};
    memset(m, 0, sizeof *m);
    if (ct_mem_open(&g[0], "cuda", 0, &err) < 0) {
        m->state = -1;
        snprintf(m->why, sizeof m->why, "%.190s", err.msg);
        return;
    }
    open[0] = true;
    int n = ct_mem_devices(&g[0]);
    n = n < CT_VAL_MAX_GPU ? n : CT_VAL_MAX_GPU;
    for (int a = 1; a < n; a++) /* one that will not open (busy, exclusive): its copies fail */
        open[a] = ct_mem_open(&g[a], "cuda", a, &err) == 0;
    m->state = 1;
    m->n = n;
    for (int a = 0; a < n; a++) {
        m->h2d[a] = m->d2h[a] = -1;
        for (int b = 0; b < n; b++)
            m->p2p[a][b] = a == b ? 0 : -1;
        if (!open[a])
            continue;
        if (ct_mem_bus_id(&g[a], m->busid[a], sizeof m->busid[a], &err) < 0)
            m->busid[a][0] = 0;
        if (ct_mem_copy_gbs(&g[a], NULL, CT_MEM_H2D, bytes, iters, &m->h2d[a], &err) < 0)
            m->h2d[a] = -1;
        if (ct_mem_copy_gbs(&g[a], NULL, CT_MEM_D2H, bytes, iters, &m->d2h[a], &err) < 0)
            m->d2h[a] = -1;
        for (int b = 0; b < n; b++)
            if (a != b && open[b] &&
                ct_mem_copy_gbs(&g[a], &g[b], CT_MEM_PEER, bytes, iters, &m->p2p[a][b], &err) < 0)
                m->p2p[a][b] = -1;
    }
    for (int a = n - 1; a >= 0; a--)
        if (open[a])
            ct_mem_close(&g[a]);
}

static struct ct_val_gcopy *add(struct ct_val_report *r, int u, enum ct_val_gdir dir,
                                const int *idx, int a, int b, double gbs)
{
    int gpu = idx[a], peer = b >= 0 ? idx[b] : -1;
    r->gcopy = ct_xrealloc(r->gcopy, (r->n_gcopy + 1) * sizeof *r->gcopy);
    struct ct_val_gcopy *c = &r->gcopy[r->n_gcopy++];
    memset(c, 0, sizeof *c);
    c->unit = u;
    c->dir = dir;
    c->gpu = gpu;
    c->peer = peer;
    c->ca = a;
    c->cb = b;
    c->gbs = gbs;
    return c;
}

static void ceiling(struct ct_val_gcopy *c, double raw, const char *d, const char *kind,
                    const struct ct_val_eff *over, size_t n_over)
{
    double eff = ct_val_efficiency(kind, over, n_over);
    c->ceil_gbs = raw * eff;
    if (raw > 0)
        snprintf(c->formula, sizeof c->formula, "%.150s x %.2f = %.1f GB/s", d, eff, c->ceil_gbs);
    else
        snprintf(c->formula, sizeof c->formula, "%.190s", d);
}

void ct_val_gpu_expect(struct ct_val_report *r, int u, const struct ct_topo *t,
                       const struct ct_val_gpu_meas *m, const struct ct_val_eff *over,
                       size_t n_over)
{
    if (m->state < 0 && t->n_gpu > 0) {
        size_t len = strlen(r->gcopy_note);
        snprintf(r->gcopy_note + len, sizeof r->gcopy_note - len, "%s%s: %s", len ? "; " : "",
                 u < (int)r->n_unit ? r->unit[u].name : "?", m->why);
    }
    if (m->state != 1)
        return;
    int idx[CT_VAL_MAX_GPU];
    char d[256];
    for (int a = 0; a < m->n && a < CT_VAL_MAX_GPU; a++)
        idx[a] = ct_topo_find_gpu(t, m->busid[a]);
    for (int a = 0; a < m->n && a < CT_VAL_MAX_GPU; a++) {
        double raw = idx[a] >= 0 ? ct_ceil_gpu_pcie(t, idx[a], d, sizeof d) : 0;
        if (idx[a] < 0)
            snprintf(d, sizeof d, "GPU at %s: not in the probed topology", m->busid[a]);
        for (int k = 0; k < 2; k++)
            ceiling(add(r, u, k ? CT_VALG_D2H : CT_VALG_H2D, idx, a, -1, k ? m->d2h[a] : m->h2d[a]),
                    raw, d, "pcie", over, n_over);
    }
    for (int a = 0; a < m->n && a < CT_VAL_MAX_GPU; a++)
        for (int b = 0; b < m->n && b < CT_VAL_MAX_GPU; b++) {
            if (a == b)
                continue;
            double raw = 0;
            if (idx[a] >= 0 && idx[b] >= 0)
                raw = ct_ceil_gpu_hop(t, idx[a], idx[b], d, sizeof d);
            else
                snprintf(d, sizeof d, "GPU at %s: not in the probed topology",
                         m->busid[idx[a] < 0 ? a : b]);
            bool nv = idx[a] >= 0 && idx[b] >= 0 && ct_topo_nvlink_count(t, idx[a], idx[b]) > 0;
            ceiling(add(r, u, CT_VALG_P2P, idx, a, b, m->p2p[a][b]), raw, d, nv ? "nvlink" : "pcie",
                    over, n_over);
        }
}

static void judge(struct ct_val_report *r, struct ct_val_gcopy *c)
{
    c->pct = c->ceil_gbs > 0 && c->gbs >= 0 ? 100 * c->gbs / c->ceil_gbs : -1;
    c->state = c->gbs < 0            ? CT_VAL_FAILED
               : c->ceil_gbs <= 0    ? CT_VAL_UNKNOWN
               : c->pct < r->min_pct ? CT_VAL_SLOW
                                     : CT_VAL_OK;
    r->n_unknown += c->state == CT_VAL_UNKNOWN;
}

/* The copy of unit u, direction dir, CUDA's GPU a (and peer b): NULL if not measured. */
static struct ct_val_gcopy *find(struct ct_val_report *r, int u, enum ct_val_gdir dir, int a, int b)
{
    for (size_t i = 0; i < r->n_gcopy; i++) {
        struct ct_val_gcopy *c = &r->gcopy[i];
        if (c->unit == u && c->dir == dir && c->ca == a && c->cb == b)
            return c;
    }
    return NULL;
}

static const char *uname(const struct ct_val_report *r, int u)
{
    return u >= 0 && (size_t)u < r->n_unit ? r->unit[u].name : "?";
}

/* A GPU by the topology's number (nvidia-smi's GPUn), else CUDA's. */
static const char *gname(int topo, int cuda, char *buf, size_t len)
{
    if (topo >= 0)
        snprintf(buf, len, "GPU%d", topo);
    else
        snprintf(buf, len, "CUDA device %d", cuda);
    return buf;
}

static bool bad(const struct ct_val_gcopy *c)
{
    return c && (c->state == CT_VAL_SLOW || c->state == CT_VAL_FAILED);
}

/* A GPU's PCIe link: its host copies below the threshold (or failed), in one finding. */
static void judge_pcie(struct ct_val_report *r, const struct ct_val_gcopy *h)
{
    const struct ct_val_gcopy *back = find(r, h->unit, CT_VALG_D2H, h->ca, -1);
    if (!bad(h) && !bad(back))
        return;
    char a[48], b[48], g[32];
    snprintf(a, sizeof a, h->gbs < 0 ? "failed" : "%.1f GB/s (%.0f%%)", h->gbs,
             ct_val_pct_shown(h->pct, r->min_pct));
    snprintf(b, sizeof b, !back || back->gbs < 0 ? "failed" : "%.1f GB/s (%.0f%%)",
             back ? back->gbs : 0, back ? ct_val_pct_shown(back->pct, r->min_pct) : 0);
    ct_val_report_find(r, CT_VALF_GPU, h->unit, -1, -1,
                       "host %s: %s's PCIe link: host->GPU %s, GPU->host %s of %s",
                       uname(r, h->unit), gname(h->gpu, h->ca, g, sizeof g), a, b, h->formula);
}

/* A GPU's copies to its peers: all slow (two peers or more) is the GPU's links; else each
 * slow pair. */
static void judge_peers(struct ct_val_report *r, const struct ct_val_gcopy *h)
{
    int n = 0, slow = 0;
    double worst = -1;
    char g[32], q[32];
    for (size_t i = 0; i < r->n_gcopy; i++) {
        const struct ct_val_gcopy *c = &r->gcopy[i];
        if (c->unit != h->unit || c->dir != CT_VALG_P2P || c->ca != h->ca)
            continue;
        n++;
        if (bad(c)) {
            slow++;
            if (c->pct >= 0) /* a failed copy has none */
                worst = worst < 0 || c->pct < worst ? c->pct : worst;
        }
    }
    if (slow >= 2 && slow == n) {
        char w[48] = "all failed";
        if (worst >= 0)
            snprintf(w, sizeof w, "worst %.0f%% of its links' ceiling",
                     ct_val_pct_shown(worst, r->min_pct));
        ct_val_report_find(r, CT_VALF_GPU, h->unit, -1, -1,
                           "host %s: %s's copies to all %d peers are slow (%s): its NVLinks or "
                           "PCIe link",
                           uname(r, h->unit), gname(h->gpu, h->ca, g, sizeof g), n, w);
        return;
    }
    for (size_t i = 0; i < r->n_gcopy; i++) {
        const struct ct_val_gcopy *c = &r->gcopy[i];
        if (c->unit != h->unit || c->dir != CT_VALG_P2P || c->ca != h->ca || !bad(c))
            continue;
        char got[48];
        snprintf(got, sizeof got, c->gbs < 0 ? "failed" : "%.1f GB/s (%.0f%%)", c->gbs,
                 ct_val_pct_shown(c->pct, r->min_pct));
        ct_val_report_find(r, CT_VALF_GPU, h->unit, -1, -1, "host %s: %s->%s %s of %s",
                           uname(r, h->unit), gname(c->gpu, c->ca, g, sizeof g),
                           gname(c->peer, c->cb, q, sizeof q), got, c->formula);
    }
}

void ct_val_gpu_diagnose(struct ct_val_report *r)
{
    for (size_t i = 0; i < r->n_gcopy; i++)
        judge(r, &r->gcopy[i]);
    for (size_t i = 0; i < r->n_gcopy; i++) {
        const struct ct_val_gcopy *c = &r->gcopy[i];
        if (c->dir == CT_VALG_H2D) {
            judge_pcie(r, c);
            judge_peers(r, c);
        }
    }
}
