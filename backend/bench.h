/* SPDX-License-Identifier: MIT */
/*
 * Measuring one point: a collective of one size with one algorithm and parameters,
 * warmup then timed iterations between barriers (time = max over ranks per iteration),
 * then verification with exactly predictable inputs. Results as plain data for output/.
 */
#ifndef CT_BENCH_H
#define CT_BENCH_H

#include "../algos/algo.h"
#include "../algos/coll.h"
#include "../device/device.h"
#include "comm.h"
#include "exec.h"
#include "inflight.h"
#include "resident.h"


struct ct_bench {
    struct ct_comm *comm; /* borrowed */
    struct ct_exec exec;
    void *buf[CT_BUF_COUNT];
    size_t cap[CT_BUF_COUNT];
    void *check; /* expected values, CHECK_ELEMS at a time, or the whole job's when kept */
    size_t check_cap;
    /* keep_expected (a sweep: many engines per job): check holds the whole expected output
     * of the job below, built once for all of them */
    bool keep_expected;
    /* sample_checks (a sweep): outputs of CT_BENCH_SAMPLED_MIN bytes or more are poisoned
     * and compared at the samples of ct_verify_job_sampled, not in full */
    bool sample_checks;
    /* name_first (set by ct_bench_init): a collective that fails on a peer names the rank that
     * failed first (ct_comm_first_failure); validate keeps its own words */
    bool name_first;
    struct {
        bool valid;
        struct ct_job j;
        uint64_t seed;
    } expected;
    /* reserve (a sweep, ct_bench_reserve): per buffer, what its largest point needs; a
     * buffer that must grow is made this large at once, so growing sizes do not re-create
     * (and fault in, and have every peer map again) the buffers at each size: 16 MiB to
     * 256 MiB took 5 of them */
    size_t reserve[CT_BUF_COUNT];
    uint64_t seed;
    struct ct_sched barrier;
    char barrier_buf[2];
    double *times, *all_times;
    size_t times_cap;
    /* how a timed sample's per-rank times become one: enum ct_rank_time (nccl-tests -a) */
    int rank_time;
    int nflight;                  /* in-flight communicators available (0: none) */
    struct ct_comm *flight_comms; /* nflight communicators (borrowed) */
    /* What buf[CT_BUF_SEND] holds: the first `elems` check inputs of (dtype, op, seed) from
     * the last fill, while no schedule since has written it. Every collective's inputs are
     * the first ones of that sequence, so a point of any collective that needs no more of
     * them skips its fill; a point that is only timed takes them whatever op and seed. */
    struct {
        bool valid;
        enum ct_dtype dtype;
        enum ct_redop op;
        uint64_t elems, seed;
    } held;
    /* The job's buffers in another memory kind (--mem cuda; ct_bench_set_mem): with stage
     * set, its send and receive buffers are dev[SEND] and dev[RECV] of mem, laid out as
     * buf[]'s, and buf[] (pinned) is the host staging the transports move: every staged run
     * copies its inputs from dev to buf, runs the schedule there and copies its output back,
     * inside the timed run (a GPU job over host-memory transports); fills write dev, checks
     * read it. mem is borrowed. */
    struct ct_mem *mem;
    bool stage;
    /* shares (ct_mem_shares: cuda, host-ipc): scratch has its twin too, and a point the
     * resident path runs (one host; ct_exec_resident_ok: not mailboxes nor quantized ops; not
     * avg nor in-flight parts) runs in place on the twins, peers' included (res), with
     * nothing staged in the timed run; other points stage */
    bool shares;
    void *dev[CT_BUF_COUNT];
    bool dev_shared[CT_BUF_COUNT]; /* dev[i] was handed to the peers by an exchange */
    struct ct_resident res;
    uint64_t points_resident, points_staged; /* points timed each way (stage set) */
    /* Twins let go while peers may still map them: freed once every peer has unmapped them
     * (the next exchange, or the barrier of release). CUDA: freeing an exported buffer a
     * peer still has open is undefined. */
    void **retired;
    size_t nretired, capretired;
    /* the resident path was refused for the job (a buffer could not be shared or mapped,
     * agreed by every rank): why; its points run staged */
    char res_why[200];
};

/* The communicators in-flight parts run on: an AllReduce point whose inflight parameter
 * is K > 1 runs as K collectives at once over comms[0..K-1] (backend/inflight.h), and
 * needs K <= n; other collectives are unaffected. */
static inline void ct_bench_set_flight(struct ct_bench *b, int n, struct ct_comm *comms)
{
    b->nflight = n;
    b->flight_comms = comms;
}

struct ct_point {
    uint64_t size, count; /* bytes as nccl-tests prints, elements per rank parameter */
    bool in_place;
    int iters;
    double time_us, min_us, max_us; /* median, min, max of the per-iteration max over ranks */
    double algbw, busbw;            /* GB/s (1e9), from the median */
    long wrong;                     /* -1 when not checked; quantized: elements that differ
                                       from the quantized ring's model (engine/qcheck.h) */
    long diverged;                  /* quantized: elements differing from rank 0's; -1 when
                                       not checked or not quantized */
    double max_err, rms_err;        /* quantized: against the exact float32 sum */
    uint32_t steps;                 /* communication steps of this rank's schedule */
    uint64_t bytes_sent;            /* this rank */
    int reps;                       /* calls back to back per iteration (ct_bench_cfg) */
};

#define CT_BENCH_SAMPLED_MIN (16u << 20)

/* A sample's time from its ranks' times, numbered as nccl-tests' -a: rank 0's, the mean,
 * the fastest rank's, the slowest rank's (colltune's default; nccl-tests' is the mean). */
enum ct_rank_time { CT_RANK_TIME_RANK0, CT_RANK_TIME_MEAN, CT_RANK_TIME_MIN, CT_RANK_TIME_MAX };
const char *ct_rank_time_name(int rank_time);
/* out[i] = the rank_time statistic of sample i over all[r * iters + i], r < nranks */
void ct_rank_times_combine(const double *all, int nranks, int iters, int rank_time, double *out);

struct ct_bench_cfg {
    int iters, warmup;
    int check; /* verification passes (0 = none) */
    int reps;  /* runs back to back per timed sample (0 or 1: one, after a barrier; or
                * CT_BENCH_REPS_AUTO) */
    /* ct_backend_point only, over an engine whose samples are the slowest rank's (alike on
     * every rank: the library engines, NCCL): 0, iters timed iterations; else one timed
     * iteration after the warmup (with CT_BENCH_REPS_AUTO where an iteration is one call:
     * the probe's median), then as many as span max_s by it, at least CT_BENCH_SPAN_MIN and
     * at most iters (run --max-time: a 128 MiB AllReduce on 4 hosts at 1 Gbit took 3 s a
     * call) */
    double max_s;
};
#define CT_BENCH_SPAN_MIN 3

/*
 * Short collectives timed back to back (the sweep's samples, run --batch auto): one run per
 * barrier also times the barrier's exit skew (the rank whose barrier message arrived last
 * leaves a latency before the other), so a sample of a short collective is as many runs
 * back to back after one barrier as span about CT_BENCH_REPS_US at the median of
 * CT_BENCH_REPS_PROBE single runs after the warmup, at most CT_BENCH_REPS_MAX: the count
 * for that median (1 at CT_BENCH_REPS_US and above).
 */
#define CT_BENCH_REPS_AUTO (-1)
#define CT_BENCH_REPS_US 50.0
#define CT_BENCH_REPS_MAX 64
#define CT_BENCH_REPS_PROBE 3
int ct_bench_reps_for(double median_us);
/* The median of CT_BENCH_REPS_PROBE (3) times. */
double ct_bench_median3(const double *t);
/* After the probe's single calls pr: the calls per sample; where that is one, the probe's
 * calls are the first samples of iters, copied to t (*have of them; else none). */
int ct_bench_reps_auto(const double *pr, int iters, double *t, int *have);

/* A point ready to run: its schedule and executor arguments over b's buffers. Buffers may
 * move when another point is prepared: prepare, time, release, in that order. */
struct ct_bench_prep {
    struct ct_job j;
    const struct ct_algo *algo;
    struct ct_sched s;
    struct ct_exec_args a;
    struct ct_red red;
    bool filled; /* inputs written (by ct_bench_check, or by the first ct_bench_time) */
    bool res_want;  /* every rank decides alike to ask the resident path */
    bool res_local; /* ... and this rank can run the point there (ra is set) */
    bool resident;  /* run by the resident path: ra, on b->dev's twins (decided by
                       the exchange, the same on every rank) */
    struct ct_exec_args ra;
    struct ct_mem_red mred;
    struct ct_inflight fl; /* fl.k > 1: run as in-flight parts */
};

void ct_bench_init(struct ct_bench *b, struct ct_comm *c, uint64_t seed);
/* The job's buffers in memory kind mem (borrowed; NULL: host), staged through host memory
 * where mem is not host-visible. Buffers made before are let go (made again with their
 * twins at the next point). */
void ct_bench_set_mem(struct ct_bench *b, struct ct_mem *mem);
/* Raise b->reserve to what job j (its count, collective and type) needs under each of the
 * n algorithms that support it: the job's send and receive bytes, and the largest scratch
 * of their schedules at default parameters. */
void ct_bench_reserve(struct ct_bench *b, const struct ct_algo *const *algos, size_t n,
                      const struct ct_job *j);
/* Whether the send and receive buffers reserved (ct_bench_reserve) fit in the host memory
 * this machine has available for each of its ranks: 0, or CT_EUNSUPP on every rank, what
 * naming the largest point ("the largest point, 1 TiB"). Collective. */
int ct_bench_mem_check(struct ct_bench *b, const char *what, struct ct_err *err);

/* A run's --minbytes and --maxbytes: in order, up to 1 TiB, multiples of the type's size
 * (0 allowed), and no more than CT_BENCH_SIZES_MAX sizes at --stepfactor factor. CT_EINVAL
 * with a one-line message. */
#define CT_BENCH_BYTES_MAX (1ull << 40)
int ct_bench_sizes_check(uint64_t minb, uint64_t maxb, double factor, enum ct_dtype dtype,
                         struct ct_err *err);
/* The sizes of a run, nccl-tests' steps: minb, minb x factor, ... up to maxb, each rounded
 * down to a multiple of es. From minb 0 (which no factor leaves): 0, then the smallest size
 * with data on nranks (one element per rank's block: coll's size of count 1), then by factor.
 * *out is new memory (free()); returns the count (at most CT_BENCH_SIZES_MAX). */
#define CT_BENCH_SIZES_MAX 4096
size_t ct_bench_sizes(enum ct_coll coll, uint64_t minb, uint64_t maxb, double factor, size_t es,
                      int nranks, uint64_t **out);
/* The smallest and the largest of sizes[0..n) (0 when n is 0): a --sizes list's span. */
uint64_t ct_sizes_min(const uint64_t *sizes, size_t n);
uint64_t ct_sizes_max(const uint64_t *sizes, size_t n);
/* Whether a run of algorithm a over job j at every size of sizes[0..n) can run, before any
 * is measured: at each size, in and out of place, its schedule builds (ct_algo_supports:
 * oneshot's mailbox); at the first size with data it is prepared (transports with one-sided
 * access or a mailbox, buffers in shared memory). Every rank learns every rank's answer:
 * 0, or the same error on every rank, naming the collective and size (and the rank, unless
 * every rank refused), CT_EUNSUPP where only support refused. Collective. */
int ct_bench_can_run(struct ct_bench *b, const struct ct_algo *a, const struct ct_job *j,
                     const uint64_t *sizes, size_t n, struct ct_err *err);
/* Build the schedule and size the buffers (j's shape is set from the communicator); the
 * inputs are written once, by ct_bench_check or else the first ct_bench_time. */
int ct_bench_prepare(struct ct_bench *b, const struct ct_algo *a, const struct ct_job *j,
                     struct ct_bench_prep *p, struct ct_err *err);
void ct_bench_prep_release(struct ct_bench_prep *p);
/* warmup untimed runs, then iters timed samples, each after a barrier: reps runs back to
 * back; out_us[i] = the slowest rank's time of sample i divided by reps, or the statistic
 * b->rank_time names (identical on every rank). Collective.
 *
 * One run per sample measures the barrier's exit skew with it: on 2 ranks the rank whose
 * barrier message arrived last leaves one latency after the other, and whether a point
 * settles in that pattern or the synchronous one is a coin toss that then holds for the
 * point (mesh-1step AllReduce at 64 B: 0.55 or 0.71 us, point after point). Back to back,
 * the ranks settle into the collective's own rhythm and the skew is paid once per sample. */
int ct_bench_time(struct ct_bench *b, struct ct_bench_prep *p, int warmup, int iters, int reps,
                  double *out_us, struct ct_err *err);
void ct_bench_release(struct ct_bench *b);
struct ct_backend;
/* The same as ct_bench_point over any engine: begin (verified when check > 0), time, end.
 * Collective over every rank of the engine. */
int ct_backend_point(const struct ct_backend *be, void *ctx, const struct ct_algo *a,
                     const struct ct_job *j, const struct ct_bench_cfg *cfg, struct ct_point *out,
                     struct ct_err *err);
/* Run the point for job j (its shape.rank/nranks are set from the communicator).
 * Collective over every rank of comm. */
int ct_bench_point(struct ct_bench *b, const struct ct_algo *a, struct ct_job *j,
                   const struct ct_bench_cfg *cfg, struct ct_point *out, struct ct_err *err);
/* Run the prepared point once on fresh inputs and verify it (it also warms the point up);
 * wrong elements summed over ranks. Collective. */
int ct_bench_check(struct ct_bench *b, struct ct_bench_prep *p, long *wrong, struct ct_err *err);
/* A point's figures from the slowest-rank times t[0..iters) of job j on nranks ranks (t is
 * sorted): median, min, max, algbw, busbw (nccl-tests factors); wrong and diverged -1. */
void ct_point_stats(struct ct_point *out, const struct ct_job *j, int nranks, double *t,
                    int iters);
/* Run once and verify (no timing); wrong elements summed over ranks. */
int ct_bench_verify(struct ct_bench *b, const struct ct_algo *a, struct ct_job *j, long *wrong,
                    struct ct_err *err);
struct ct_qstats;
/* ct_bench_verify with the quantized checks' figures in *q (zero unless j->quant). */
int ct_bench_verify_q(struct ct_bench *b, const struct ct_algo *a, struct ct_job *j, long *wrong,
                      struct ct_qstats *q, struct ct_err *err);
/* Dissemination barrier over the data path of the communicator. */
int ct_bench_barrier(struct ct_bench *b, struct ct_err *err);

#endif
