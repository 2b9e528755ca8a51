/* SPDX-License-Identifier: MIT */
/*
 * Result emitters for `colltune run`: the nccl-tests-compatible table and the
 * colltune-results/1 JSON document. They read finished rows and never compute statistics.
 */
#ifndef CT_OUTPUT_H
#define CT_OUTPUT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "../backend/backend.h"
#include "../backend/bench.h"
#include "../transport/tp.h"
#include "../lib/err.h"

/* One size: out-of-place and in-place measurements (either may be absent). */
struct ct_row {
    uint64_t size, count;
    const char *type, *redop, *algo;
    int root;
    char params[160];
    bool have[2]; /* [0] out of place, [1] in place */
    double time_us[2], min_us[2], max_us[2], algbw[2], busbw[2];
    long wrong[2]; /* -1: not checked */
    int iters, reps[2];  /* reps: calls back to back per iteration (run --batch) */
    const char *quant;   /* NULL: exact; else the wire format (run --quant): the row adds */
    long diverged[2];    /* elements differing between ranks (-1: not checked), */
    double max_err[2], rms_err[2]; /* and the error against the exact float32 sum */
};

struct ct_run_meta {
    const char *coll, *transport, *version;
    uint64_t minbytes, maxbytes;
    double stepfactor;
    int warmup, iters, check, nranks, nnodes;
    const char *args; /* the command line */
    const struct ct_rank_info *ranks;
    const char *quant; /* NULL: exact; else every row is quantized to this format */
    const char *rank_time; /* NULL: a sample's time is the slowest rank's; else whose it is */
    int batch;             /* calls back to back per iteration (run --batch): 0 or 1 one, -1 auto */
};

/* nccl-tests-style table */
/* An empty row for one size: datatype, reduction (op < 0: none) and algorithm names. */
void ct_row_init(struct ct_row *r, enum ct_dtype dtype, int op, const char *algo);
/* Measurement k (0 out of place, 1 in place) of the row from a measured point. */
void ct_row_fill(struct ct_row *r, const struct ct_point *p, int k);

/* The window rank 0's tcp connections to rank 1 reached (TCP_INFO), after a run, so a
 * window-limited long link shows. */
void ct_tcp_window_print(FILE *f, const struct ct_tcp_window *w);
/* After a run or sweep on memory kind `kind` that is not the transports': how many of its
 * timed `what` ("points": run's, "batches": a sweep's, each point timed in several) ran in
 * place over IPC (the resident path) and how many were staged through host memory, and why
 * none could run in place when the buffers could not be shared (why: "" when they could). */
void ct_mem_path_print(FILE *f, const char *kind, const char *what, unsigned long long resident,
                       unsigned long long staged, const char *why);

void ct_table_header(FILE *f, const struct ct_run_meta *m);
void ct_table_row(FILE *f, const struct ct_row *r);
/* Footer; returns the number of wrong points ("out of bounds values"). */
long ct_table_footer(FILE *f, const struct ct_row *rows, size_t n);
/* Average bus bandwidth over rows (both placements), as nccl-tests. */
double ct_rows_avg_busbw(const struct ct_row *rows, size_t n);

/* colltune model's report (output/model_report.c): the predicted rows as the nccl-tests table,
 * the crossovers, what was not priced and the time it took. */
struct ct_model_req;
struct ct_model_result;
void ct_model_report(FILE *out, const struct ct_model_req *q, const struct ct_model_result *r,
                     const char *version);

/* An encoded document (text is taken and freed; NULL: "cannot encode WHAT") and a newline:
 * to path atomically (ct_file_write_doc), or to standard output when path is "-". */
int ct_doc_write(const char *path, char *text, const char *what, struct ct_err *err);

/* colltune-results/1 JSON, written atomically (temp file + rename); "-": standard output. */
int ct_results_json_write(const char *path, const struct ct_run_meta *m, const struct ct_row *rows,
                          size_t n, struct ct_err *err);

#endif
