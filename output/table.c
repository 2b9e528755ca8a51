/* SPDX-License-Identifier: MIT */
/* The nccl-tests-compatible text table, with an algo column. */
#include <string.h>

#include "output.h"

/* Ranks of one host on one GPU: without MPS the GPU runs one process's context at a time, and
 * every step that waits on a peer's waits for a switch (an H200, 2 ranks: 435-575 us an
 * AllReduce of 8 B, 26 us under MPS). Said once, for the first GPU found shared (up to 4096
 * ranks). */
static void shared_gpu_note(FILE *f, const struct ct_run_meta *m)
{
    for (int a = 0; a < m->nranks && m->nranks <= 4096 && m->ranks; a++) {
        const struct ct_rank_info *x = &m->ranks[a];
        if (strstr(x->device, "[cpu]"))
            continue;
        int n = 1;
        for (int b = a + 1; b < m->nranks; b++)
            n += !strcmp(x->host, m->ranks[b].host) && !strcmp(x->device, m->ranks[b].device);
        if (n > 1) {
            fprintf(
                f,
                "# %d ranks of %s share device %s: unless MPS runs (nvidia-cuda-mps-control -d), "
                "the GPU switches between their processes, and the times count its switches\n",
                n, x->host, x->device + (x->device[0] == ' '));
            return;
        }
    }
}

void ct_table_header(FILE *f, const struct ct_run_meta *m)
{
    fprintf(f, "# colltune %s %s\n", m->version, m->coll);
    fprintf(f,
            "# nRanks %d nNodes %d minBytes %llu maxBytes %llu step: %g(factor) warmup iters: "
            "%d iters: %d validation: %d transport: %s\n",
            m->nranks, m->nnodes, (unsigned long long)m->minbytes, (unsigned long long)m->maxbytes,
            m->stepfactor, m->warmup, m->iters, m->check, m->transport);
    fprintf(f, "#\n# Using devices\n");
    for (int r = 0; r < m->nranks && m->ranks; r++)
        fprintf(f, "#  Rank %2d Group  0 Pid %6ld on %10s device %s node %d local %d\n", r,
                m->ranks[r].pid, m->ranks[r].host, m->ranks[r].device, m->ranks[r].node,
                m->ranks[r].local_rank);
    shared_gpu_note(f, m);
    fprintf(f, "#\n");
    if (m->rank_time)
        fprintf(f, "# time: the median over iterations of %s time (-a)\n#\n", m->rank_time);
    if (m->batch < 0)
        fprintf(f,
                "# time: per call, an iteration as many calls back to back as span %g us "
                "(at most %d; --batch auto)\n#\n",
                CT_BENCH_REPS_US, CT_BENCH_REPS_MAX);
    else if (m->batch > 1)
        fprintf(f, "# time: per call, an iteration %d calls back to back (--batch)\n#\n", m->batch);
    if (m->quant) {
        fprintf(f, "# Quantized: %s on the wire, block-scaled (one float32 scale per 256 "
                   "elements); results are NOT exact.\n", m->quant);
        fprintf(f, "# #wrong: elements differing from the quantized ring's model; #divg: "
                   "elements differing between ranks;\n# maxerr, rmserr: against the exact "
                   "float32 sum.\n#\n");
        fprintf(f, "# %10s  %12s  %8s  %6s  %6s  %-12s   %7s  %6s  %6s  %6s  %6s  %8s  %8s   "
                   "%7s  %6s  %6s  %6s  %6s  %8s  %8s\n",
                "size", "count", "type", "redop", "root", "algo", "time", "algbw", "busbw",
                "#wrong", "#divg", "maxerr", "rmserr", "time", "algbw", "busbw", "#wrong",
                "#divg", "maxerr", "rmserr");
        fflush(f);
        return;
    }
    fprintf(f, "# %10s  %12s  %8s  %6s  %6s  %-12s   %7s  %6s  %6s  %6s   %7s  %6s  %6s  %6s\n", "",
            "", "", "", "", "", "out-of-place", "", "", "", "in-place", "", "", "");
    fprintf(f, "# %10s  %12s  %8s  %6s  %6s  %-12s   %7s  %6s  %6s  %6s   %7s  %6s  %6s  %6s\n",
            "size", "count", "type", "redop", "root", "algo", "time", "algbw", "busbw", "#wrong",
            "time", "algbw", "busbw", "#wrong");
    fprintf(f, "# %10s  %12s  %8s  %6s  %6s  %-12s   %7s  %6s  %6s  %6s   %7s  %6s  %6s  %6s\n",
            "(B)", "(elements)", "", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)",
            "(GB/s)", "");
    fflush(f); /* the rank lines (pids) are visible before the first size finishes */
}

static void half(FILE *f, const struct ct_row *r, int k)
{
    if (!r->have[k]) {
        fprintf(f, "   %7s  %6s  %6s  %6s", "N/A", "N/A", "N/A", "N/A");
        if (r->quant)
            fprintf(f, "  %6s  %8s  %8s", "N/A", "N/A", "N/A");
        return;
    }
    char w[24];
    if (r->wrong[k] < 0)
        snprintf(w, sizeof w, "N/A");
    else
        snprintf(w, sizeof w, "%ld", r->wrong[k]);
    double t = r->time_us[k];
    if (t >= 10000.0)
        fprintf(f, "   %7.0f", t);
    else if (t >= 100.0)
        fprintf(f, "   %7.1f", t);
    else if (t >= 1.0)
        fprintf(f, "   %7.2f", t);
    else /* nccl-tests prints 2 decimals: 0.30 us rounded to 0.01 moved verify's ratios 3% */
        fprintf(f, "   %7.3f", t);
    fprintf(f, "  %6.2f  %6.2f  %6s", r->algbw[k], r->busbw[k], w);
    if (r->quant) {
        if (r->diverged[k] < 0)
            fprintf(f, "  %6s  %8s  %8s", "N/A", "N/A", "N/A");
        else
            fprintf(f, "  %6ld  %8.2e  %8.2e", r->diverged[k], r->max_err[k], r->rms_err[k]);
    }
}

void ct_table_row(FILE *f, const struct ct_row *r)
{
    fprintf(f, "  %10llu  %12llu  %8s  %6s  %6d  %-12s", (unsigned long long)r->size,
            (unsigned long long)r->count, r->type, r->redop, r->root, r->algo);
    half(f, r, 0);
    half(f, r, 1);
    fputc('\n', f);
    fflush(f);
}

double ct_rows_avg_busbw(const struct ct_row *rows, size_t n)
{
    double sum = 0;
    int cnt = 0;
    for (size_t i = 0; i < n; i++)
        for (int k = 0; k < 2; k++)
            if (rows[i].have[k]) {
                sum += rows[i].busbw[k];
                cnt++;
            }
    return cnt ? sum / cnt : 0;
}

long ct_table_footer(FILE *f, const struct ct_row *rows, size_t n)
{
    long bad = 0;
    for (size_t i = 0; i < n; i++)
        for (int k = 0; k < 2; k++)
            if (rows[i].have[k] && (rows[i].wrong[k] > 0 || (rows[i].quant && rows[i].diverged[k] > 0)))
                bad++;
    fprintf(f, "# Out of bounds values : %ld %s\n", bad, bad ? "FAILED" : "OK");
    fprintf(f, "# Avg bus bandwidth    : %g \n", ct_rows_avg_busbw(rows, n));
    fprintf(f, "#\n");
    return bad;
}

void ct_row_init(struct ct_row *r, enum ct_dtype dtype, int op, const char *algo)
{
    memset(r, 0, sizeof *r);
    r->type = ct_dtype_name(dtype);
    r->redop = op < 0 ? "none" : ct_redop_name((enum ct_redop)op);
    r->algo = algo;
    r->root = -1;
}

void ct_row_fill(struct ct_row *r, const struct ct_point *p, int k)
{
    r->size = p->size;
    r->count = p->count;
    r->have[k] = true;
    r->time_us[k] = p->time_us;
    r->min_us[k] = p->min_us;
    r->max_us[k] = p->max_us;
    r->algbw[k] = p->algbw;
    r->busbw[k] = p->busbw;
    r->wrong[k] = p->wrong;
    r->iters = p->iters;
    r->reps[k] = p->reps;
    r->diverged[k] = p->diverged;
    r->max_err[k] = p->max_err;
    r->rms_err[k] = p->rms_err;
}

void ct_tcp_window_print(FILE *f, const struct ct_tcp_window *w)
{
    fprintf(f,
            "# tcp window rank 0 -> 1: %d stream%s, per connection cwnd*mss %.2f..%.2f MB, "
            "rcv_space %.2f MB, rtt %.2f ms, sndbuf %.2f MB, rcvbuf %.2f MB\n",
            w->streams, w->streams == 1 ? "" : "s", w->cwnd_bytes_min / 1e6,
            w->cwnd_bytes_max / 1e6, w->rcv_space_max / 1e6, w->rtt_ms, w->sndbuf / 1e6,
            w->rcvbuf / 1e6);
}

void ct_mem_path_print(FILE *f, const char *kind, const char *what, unsigned long long resident,
                       unsigned long long staged, const char *why)
{
    fprintf(f, "# %s memory: %llu of %llu timed %s in place over IPC, %llu staged through host",
            kind, resident, resident + staged, what, staged);
    if (why && *why)
        fprintf(f, " (buffers not shared: %s)", why);
    fputc('\n', f);
}
