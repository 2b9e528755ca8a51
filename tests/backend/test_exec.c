/* SPDX-License-Identifier: MIT */
/* Executor + algorithms on the loop transport: results verified bit-exact. */
#include <criterion/criterion.h>

#include "tests/loopworld.h"

struct vjob {
    const char *algo;
    enum ct_coll coll;
    enum ct_dtype dtype;
    enum ct_redop op;
    uint64_t count;
    bool in_place;
    uint64_t chunk;
    int depth;
    long wrong;
    int rpn, trows, tcols;
};

static int g_threads; /* reduction threads for verify_rank (0 = default) */

static int verify_rank(struct ct_comm *c, void *arg, struct ct_err *err)
{
    struct vjob *v = arg;
    struct ct_bench b;
    ct_bench_init(&b, c, 42);
    struct ct_job j;
    memset(&j, 0, sizeof j);
    j.coll = v->coll;
    j.dtype = v->dtype;
    j.op = v->op;
    j.count = v->count;
    j.in_place = v->in_place;
    j.params.v[CT_P_CHUNK] = v->chunk;
    j.params.v[CT_P_PIPELINE] = (uint64_t)v->depth;
    j.params.v[CT_P_THREADS] = (uint64_t)g_threads;
    j.shape.ranks_per_node = v->rpn;
    j.shape.torus_rows = v->trows;
    j.shape.torus_cols = v->tcols;
    long wrong = -1;
    int rc = ct_bench_verify(&b, ct_algo_find(v->algo), &j, &wrong, err);
    if (c->rank == 0)
        v->wrong = wrong;
    ct_bench_release(&b);
    return rc;
}

static void check(const char *algo, enum ct_coll coll, int n, uint64_t count, enum ct_dtype t,
                  enum ct_redop op, bool in_place, uint64_t chunk, int depth)
{
    struct vjob v = {algo, coll, t, op, count, in_place, chunk, depth, -1, 0, 0, 0};
    struct ct_err err = {0};
    int rc = lw_run(n, 0, verify_rank, &v, &err);
    cr_assert_eq(rc, 0, "%s %s n=%d count=%llu: %s", algo, ct_coll_name(coll), n,
                 (unsigned long long)count, err.msg);
    cr_assert_eq(v.wrong, 0, "%s %s n=%d count=%llu %s %s %s: %ld wrong", algo,
                 ct_coll_name(coll), n, (unsigned long long)count, ct_dtype_name(t),
                 ct_redop_name(op), in_place ? "in-place" : "out-of-place", v.wrong);
}

Test(exec, ring_mesh_matrix)
{
    static const int ns[] = {1, 2, 3, 4, 5, 7, 8};
    static const char *algos[] = {"ring", "mesh"};
    for (size_t a = 0; a < 2; a++)
        for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++) {
            int n = ns[i];
            uint64_t counts[] = {0, 1, (uint64_t)n - 1, (uint64_t)n, (uint64_t)n + 1, 1001};
            for (size_t k = 0; k < 6; k++)
                for (int coll = 0; coll < CT_COLL_COUNT; coll++)
                    for (int ip = 0; ip < 2; ip++) {
                        enum ct_dtype t = (enum ct_dtype)((k + (size_t)coll) % CT_DTYPE_COUNT);
                        enum ct_redop op = (enum ct_redop)((k + i) % CT_REDOP_COUNT);
                        check(algos[a], (enum ct_coll)coll, n, counts[k], t, op, ip, 64, 2);
                    }
        }
}

Test(exec, chunking_and_depth)
{
    /* slices smaller than a block, depth 1 and deep pipelines */
    uint64_t chunks[] = {4, 12, 4096, 1 << 20};
    int depths[] = {1, 3, 16};
    for (size_t c = 0; c < 4; c++)
        for (size_t d = 0; d < 3; d++)
            for (int coll = 0; coll < CT_COLL_COUNT; coll++)
                check("ring", (enum ct_coll)coll, 4, 5000, CT_FLOAT32, CT_SUM, false, chunks[c],
                      depths[d]);
}

/* Fault injection: a corrupted message is counted as wrong elements, a dropped one
 * times out naming the peer, a delayed one still verifies. */
static int run_faulty(int kind, long *wrong, struct ct_err *err)
{
    struct vjob v = {"ring", CT_ALLREDUCE, CT_INT32, CT_SUM, 4096, false, 1024, 2, -1, 0, 0, 0};
    struct ct_tp_cfg cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.fault_kind = kind;
    cfg.fault_rank = 1;
    cfg.fault_msg = 8; /* past the bench barrier's messages */
    cfg.fault_delay_ns = 50000000;
    int rc = lw_run_cfg(4, 0, verify_rank, &v, &cfg, 500000000LL, err);
    *wrong = v.wrong;
    return rc;
}

Test(exec, fault_corrupt_detected)
{
    long wrong;
    struct ct_err err = {0};
    cr_assert_eq(run_faulty(3, &wrong, &err), 0, "%s", err.msg);
    cr_assert_gt(wrong, 0, "a corrupted message must show up as wrong elements");
}

Test(exec, fault_delay_still_correct)
{
    long wrong;
    struct ct_err err = {0};
    cr_assert_eq(run_faulty(2, &wrong, &err), 0, "%s", err.msg);
    cr_assert_eq(wrong, 0);
}

Test(exec, fault_drop_times_out_naming_peer)
{
    long wrong;
    struct ct_err err = {0};
    int rc = run_faulty(1, &wrong, &err);
    cr_assert_eq(rc, CT_ETIMEDOUT, "rc %d: %s", rc, err.msg);
    cr_assert(strstr(err.msg, "peer rank 1"), "message should name rank 1: %s", err.msg);
}

/* Every algorithm of the table, live on the loop transport (threads exchanging real
 * messages through the executor), against the verifier: each supported collective, rank
 * counts, awkward counts, node layouts and torus shapes. */
Test(exec, every_algorithm_live)
{
    static const int ns[] = {1, 2, 3, 4, 5, 6, 8};
    int ran = 0, refused = 0;
    for (size_t ai = 0; ct_algo_at(ai); ai++) {
        const struct ct_algo *al = ct_algo_at(ai);
        int torus = !strncmp(al->name, "torus", 5);
        for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++) {
            int n = ns[i];
            int rpns[] = {0, n % 2 == 0 && n > 2 ? 2 : 0};
            uint64_t counts[] = {0, 1, (uint64_t)n + 1, 1001};
            for (int coll = 0; coll < CT_COLL_COUNT; coll++) {
                if (!(al->colls & CT_COLL_BIT(coll)))
                    continue;
                for (size_t k = 0; k < 4; k++)
                    for (int ri = 0; ri < 2; ri++) {
                        if (ri && !rpns[1])
                            continue;
                        struct vjob v = {al->name, (enum ct_coll)coll,
                                         (enum ct_dtype)((k + ai) % CT_DTYPE_COUNT),
                                         (enum ct_redop)((k + i) % CT_REDOP_COUNT), counts[k],
                                         (k + ai) % 2 == 1, 256, 2, -1, rpns[ri], 0, 0};
                        if (torus) {
                            v.trows = n >= 4 && n % 2 == 0 ? 2 : 1;
                            v.tcols = n / v.trows;
                        }
                        struct ct_job j = {0};
                        j.coll = v.coll;
                        j.dtype = v.dtype;
                        j.op = v.op;
                        j.count = v.count;
                        j.shape = (struct ct_shape){n, 0, v.rpn, v.trows, v.tcols, 0};
                        ct_params_defaults(&j.params);
                        struct ct_err why = {0};
                        if (ct_algo_supports(al, &j, &why) < 0) {
                            cr_assert(why.msg[0], "%s refused without a reason", al->name);
                            refused++;
                            continue;
                        }
                        struct ct_err err = {0};
                        int rc = lw_run(n, v.rpn, verify_rank, &v, &err);
                        cr_assert_eq(rc, 0, "%s %s n=%d rpn=%d count=%llu: %s", al->name,
                                     ct_coll_name(v.coll), n, v.rpn,
                                     (unsigned long long)v.count, err.msg);
                        cr_assert_eq(v.wrong, 0, "%s %s n=%d rpn=%d count=%llu %s %s: %ld wrong",
                                     al->name, ct_coll_name(v.coll), n, v.rpn,
                                     (unsigned long long)v.count, ct_dtype_name(v.dtype),
                                     ct_redop_name(v.op), v.wrong);
                        ran++;
                    }
            }
        }
    }
    cr_log_info("%d configurations ran live, %d refused with a reason", ran, refused);
    cr_assert_gt(ran, 500);
}

/* Reduction threads split local reductions (mesh-1step reduces locally) and stay exact. */
Test(exec, reduction_threads)
{
    for (int threads = 1; threads <= 3; threads++) {
        struct vjob v = {"mesh-1step", CT_ALLREDUCE, CT_FLOAT32, CT_SUM, (1 << 18) + 3, false,
                         1 << 16, 2, -1, 0, 0, 0};
        struct ct_err err = {0};
        g_threads = threads;
        cr_assert_eq(lw_run(3, 0, verify_rank, &v, &err), 0, "%s", err.msg);
        cr_assert_eq(v.wrong, 0, "threads=%d: %ld wrong", threads, v.wrong);
    }
    g_threads = 0;
}

/* ---- inputs kept between points: only while no schedule wrote the send buffer ---- */

/* ring AllReduce, then the result copied over the send buffer (a schedule that writes it) */
static int build_scribble(const struct ct_job *j, struct ct_sched *s, struct ct_err *err)
{
    CT_TRY(ct_algo_build(ct_algo_find("ring"), j, s, err));
    ct_sched_step(s);
    ct_sched_copy(s, ct_loc(CT_BUF_SEND, 0), ct_loc(CT_BUF_RECV, 0),
                  j->count * ct_dtype_size(j->dtype));
    return 0;
}

static const struct ct_algo scribble = {
    .name = "scribble",
    .summary = "ring, then the result written over the inputs",
    .colls = CT_COLL_BIT(CT_ALLREDUCE),
    .build = build_scribble,
};

/* A float32 sum job of coll with count elements, default parameters. */
static struct ct_job float_sum_job(enum ct_coll coll, uint64_t count)
{
    struct ct_job j;
    memset(&j, 0, sizeof j);
    j.dtype = CT_FLOAT32;
    j.op = CT_SUM;
    j.coll = coll;
    j.count = count;
    ct_params_defaults(&j.params);
    return j;
}

/* Points of one AllReduce job (5000 floats) run one after another on one bench, each
 * checked and, with `timed`, then timed as a sweep's point is: what each check found and
 * whether the inputs were held after it. */
struct held_log {
    const struct ct_algo *seq[4];
    int n;
    bool timed;
    enum ct_coll coll[4]; /* 0: AllReduce */
    uint64_t count[4]; /* 0: 5000 */
    long wrong[4];
    bool held[4];
    uint64_t held_count[4];
};

static int held_rank(struct ct_comm *c, void *arg, struct ct_err *err)
{
    struct held_log *log = arg;
    struct ct_bench b;
    ct_bench_init(&b, c, 42);
    struct ct_job j = float_sum_job(CT_ALLREDUCE, 5000);
    int rc = 0;
    for (int k = 0; k < log->n && rc == 0; k++) {
        struct ct_bench_prep p;
        long wrong = -1;
        double t[3];
        j.count = log->count[k] ? log->count[k] : 5000;
        j.coll = log->coll[k];
        rc = ct_bench_prepare(&b, log->seq[k], &j, &p, err);
        if (rc == 0) {
            rc = ct_bench_check(&b, &p, &wrong, err);
            if (rc == 0 && log->timed)
                rc = ct_bench_time(&b, &p, 1, 3, 1, t, err);
            ct_bench_prep_release(&p);
        }
        if (c->rank == 0) {
            log->wrong[k] = wrong;
            log->held[k] = b.held.valid;
            log->held_count[k] = b.held.elems;
        }
    }
    ct_bench_release(&b);
    return rc;
}

Test(exec, inputs_kept_only_while_no_schedule_wrote_them)
{
    struct held_log log = {
        .seq = {ct_algo_find("ring"), ct_algo_find("mesh"), &scribble, ct_algo_find("ring")},
        .n = 4};
    struct ct_err err = {0};
    cr_assert_eq(lw_run(3, 0, held_rank, &log, &err), 0, "%s", err.msg);
    cr_assert(log.held[0] && log.held[1], "ring and mesh leave the inputs in place");
    cr_assert_not(log.held[2], "a schedule that writes the send buffer leaves nothing held");
    cr_assert(log.held[3]);
    for (int k = 0; k < 4; k++)
        cr_assert_eq(log.wrong[k], 0, "point %d: %ld wrong", k, log.wrong[k]);
}

/* AllReduce and AllGather number a rank's inputs from 0 whatever the count: the inputs of
 * 5000 elements serve a point of 3000 without a new fill, and its result checks right.
 * symm's fences and oneshot's publishes write nothing, so they keep them too. */
Test(exec, smaller_points_check_on_the_inputs_of_a_larger_one)
{
    const enum ct_coll colls[2] = {CT_ALLREDUCE, CT_ALLGATHER};
    for (int i = 0; i < 2; i++) {
        struct held_log log = {.seq = {ct_algo_find("ring"), ct_algo_find("symm"),
                                       ct_algo_find("oneshot"), ct_algo_find("mesh")},
                               .n = 4,
                               .coll = {colls[i], colls[i], colls[i], colls[i]},
                               .count = {5000, 5000, 3000, 3000}};
        struct ct_err err = {0};
        cr_assert_eq(lw_run(2, 0, held_rank, &log, &err), 0, "%s", err.msg);
        for (int k = 0; k < 4; k++) {
            cr_assert_eq(log.wrong[k], 0, "%s point %d: %ld wrong", ct_coll_name(colls[i]), k,
                         log.wrong[k]);
            cr_assert(log.held[k] && log.held_count[k] == 5000, "%s point %d: held %d, count %llu",
                      ct_coll_name(colls[i]), k, log.held[k],
                      (unsigned long long)log.held_count[k]);
        }
    }
}

/* Every collective numbers its inputs from the same sequence: AllReduce's 8000 serve the
 * smaller points of every other collective after it, without a new fill (one fill per
 * collective made fills 18% of a 64-256 MiB sweep's CPU time), and each checks right. */
Test(exec, every_collective_checks_on_the_inputs_of_a_larger_one)
{
    struct held_log log = {
        .seq = {ct_algo_find("ring"), ct_algo_find("ring"), ct_algo_find("ring"),
                ct_algo_find("ring")},
        .n = 4,
        .coll = {CT_ALLREDUCE, CT_ALLGATHER, CT_REDUCESCATTER, CT_ALLTOALL},
        .count = {8000, 3000, 2000, 1500}, /* inputs of 8000, 3000, 4000, 3000 elements */
        .timed = true};
    struct ct_err err = {0};
    cr_assert_eq(lw_run(2, 0, held_rank, &log, &err), 0, "%s", err.msg);
    for (int k = 0; k < 4; k++) {
        cr_assert_eq(log.wrong[k], 0, "point %d: %ld wrong", k, log.wrong[k]);
        cr_assert(log.held[k] && log.held_count[k] == 8000, "point %d: held %d, %llu elements", k,
                  log.held[k], (unsigned long long)log.held_count[k]);
    }
}

/* An algorithm that runs nothing: its result is whatever the receive buffer held. */
static int build_idle(const struct ct_job *j, struct ct_sched *s, struct ct_err *err)
{
    (void)j;
    (void)err;
    ct_sched_step(s);
    return 0;
}

static const struct ct_algo idle = {
    .name = "idle",
    .summary = "writes nothing",
    .colls = CT_COLL_BIT(CT_ALLREDUCE),
    .build = build_idle,
};

/* A sweep runs every candidate of a size on the same buffers and inputs: the right result
 * of one must not pass for the next, which wrote nothing. */
Test(exec, a_result_left_by_the_previous_point_is_not_taken)
{
    struct held_log log = {.seq = {ct_algo_find("ring"), &idle}, .n = 2, .timed = true};
    struct ct_err err = {0};
    cr_assert_eq(lw_run(2, 0, held_rank, &log, &err), 0, "%s", err.msg);
    cr_assert_eq(log.wrong[0], 0, "ring: %ld wrong", log.wrong[0]);
    cr_assert_eq(log.wrong[1], 2 * 5000, "idle: %ld wrong of 10000", log.wrong[1]);
}

/* ---- a sweep's buffers are made once, for its largest point ---- */

struct reserve_log {
    size_t reserve;
    void *send[3], *recv[3];
    size_t cap[3];
    long wrong[3];
};

/* ring AllReduce at 1,000, 100,000 and 1,000,000 floats on one bench */
static int reserve_rank(struct ct_comm *c, void *arg, struct ct_err *err)
{
    static const uint64_t counts[3] = {1000, 100000, 1000000};
    struct reserve_log *log = arg;
    struct ct_bench b;
    ct_bench_init(&b, c, 7);
    for (int i = 0; i < CT_BUF_COUNT; i++)
        b.reserve[i] = log->reserve;
    struct ct_job j = float_sum_job(CT_ALLREDUCE, counts[0]);
    int rc = 0;
    for (int k = 0; k < 3 && rc == 0; k++) {
        struct ct_bench_prep p;
        long wrong = -1;
        j.count = counts[k];
        rc = ct_bench_prepare(&b, ct_algo_find("ring"), &j, &p, err);
        if (rc == 0) {
            rc = ct_bench_check(&b, &p, &wrong, err);
            ct_bench_prep_release(&p);
        }
        if (c->rank == 0) {
            log->send[k] = b.buf[CT_BUF_SEND];
            log->recv[k] = b.buf[CT_BUF_RECV];
            log->cap[k] = b.cap[CT_BUF_RECV];
            log->wrong[k] = wrong;
        }
    }
    ct_bench_release(&b);
    return rc;
}

/* Growing sizes re-created (and faulted in, and had every peer map again) each buffer at
 * each size: 16 MiB to 256 MiB took five. With the sweep's largest point reserved, the
 * first point makes them at that size and every later point uses the same ones. */
Test(exec, a_reserve_makes_each_buffer_once)
{
    struct reserve_log log = {.reserve = 4000000};
    struct ct_err err = {0};
    cr_assert_eq(lw_run(2, 0, reserve_rank, &log, &err), 0, "%s", err.msg);
    for (int k = 0; k < 3; k++) {
        cr_assert_eq(log.wrong[k], 0, "point %d: %ld wrong", k, log.wrong[k]);
        cr_assert_eq(log.send[k], log.send[0], "point %d: a new send buffer", k);
        cr_assert_eq(log.recv[k], log.recv[0], "point %d: a new receive buffer", k);
        cr_assert_geq(log.cap[k], log.reserve, "point %d: %zu bytes", k, log.cap[k]);
    }
    struct reserve_log grow = {.reserve = 0};
    cr_assert_eq(lw_run(2, 0, reserve_rank, &grow, &err), 0, "%s", err.msg);
    cr_assert_lt(grow.cap[0], grow.cap[2], "without a reserve the buffers grow with the points");
}

/* The reserve of a sweep's largest AllToAll: its send and receive bytes, and bruck's
 * scratch (packed blocks beside the rotated ones), not just the message size. */
static int reserve_of_rank(struct ct_comm *c, void *arg, struct ct_err *err)
{
    (void)err;
    size_t *out = arg;
    struct ct_bench b;
    ct_bench_init(&b, c, 7);
    struct ct_job j = float_sum_job(CT_ALLTOALL, 1 << 16);
    const struct ct_algo *al[2] = {ct_algo_find("ring"), ct_algo_find("bruck")};
    ct_bench_reserve(&b, al, 2, &j);
    if (c->rank == 0)
        for (int i = 0; i < CT_BUF_COUNT; i++)
            out[i] = b.reserve[i];
    ct_bench_release(&b);
    return 0;
}

Test(exec, the_reserve_covers_every_candidates_scratch)
{
    size_t r[CT_BUF_COUNT] = {0};
    struct ct_err err = {0};
    cr_assert_eq(lw_run(4, 0, reserve_of_rank, r, &err), 0, "%s", err.msg);
    size_t msg = (size_t)4 * (1 << 16) * 4; /* 4 ranks x 65,536 floats */
    cr_assert_eq(r[CT_BUF_SEND], msg);
    cr_assert_eq(r[CT_BUF_RECV], msg);
    cr_assert_gt(r[CT_BUF_SCRATCH], msg, "bruck's scratch: %zu bytes for %zu", r[CT_BUF_SCRATCH],
                 msg);
}

Test(exec, a_sample_is_the_statistic_of_its_ranks_times)
{
    /* 3 ranks x 2 samples, rank-major as ct_bench_time gathers them */
    const double all[] = {2, 9, 5, 1, 8, 3};
    const double want[4][2] = {{2, 9}, {5, 13.0 / 3}, {2, 1}, {8, 9}};
    for (int s = CT_RANK_TIME_RANK0; s <= CT_RANK_TIME_MAX; s++) {
        double out[2];
        ct_rank_times_combine(all, 3, 2, s, out);
        for (int i = 0; i < 2; i++)
            cr_assert_float_eq(out[i], want[s][i], 1e-12, "%s time of sample %d: %g, want %g",
                               ct_rank_time_name(s), i, out[i], want[s][i]);
    }
}
