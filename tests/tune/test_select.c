/* SPDX-License-Identifier: MIT */
/* Selection on synthetic and recorded curves: ties, pruning, interpolation, ranges. */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tune/select.h"

/* A point with a symmetric interval of +-w (relative) around median t. */
static struct ct_sweep_point mk(enum ct_coll c, const char *algo, uint64_t size, double t, double w)
{
    struct ct_sweep_point p;
    memset(&p, 0, sizeof p);
    p.coll = c;
    snprintf(p.algo, sizeof p.algo, "%s", algo);
    ct_params_defaults(&p.params);
    p.size = size;
    p.count = size / 4;
    p.st.n = 20;
    p.st.median = t;
    p.st.lo = t * (1 - w);
    p.st.hi = t * (1 + w);
    p.st.min = p.st.lo;
    p.st.max = p.st.hi;
    return p;
}

/* Two curves over n sizes from size0 (doubling), time 10 + i at size i: algorithm a at that
 * times fa[i], b at that times fb; +-w each. Fills 2n points of p; returns 2n. */
static size_t two_curves(struct ct_sweep_point *p, enum ct_coll c, const char *a, const double *fa,
                         const char *b, double fb, int n, uint64_t size0, double w)
{
    for (int i = 0; i < n; i++) {
        double t = 10 + i;
        p[2 * i] = mk(c, a, size0 << i, t * fa[i], w);
        p[2 * i + 1] = mk(c, b, size0 << i, t * fb, w);
    }
    return 2 * (size_t)n;
}

static void check_cover(const struct ct_ruleset *s)
{
    struct ct_err err = {0};
    cr_assert_eq(ct_ruleset_check(s, &err), 0, "%s", err.msg);
    cr_assert_eq(s->rules[0].min_bytes, 0);
    cr_assert_eq(s->rules[s->nrules - 1].max_bytes, CT_BYTES_INF);
}

Test(select, beats_prunable_confidence)
{
    struct ct_sweep_point a = mk(CT_ALLREDUCE, "ring", 8, 10, 0.05);
    struct ct_sweep_point b = mk(CT_ALLREDUCE, "mesh", 8, 12, 0.05);
    struct ct_sweep_point c = mk(CT_ALLREDUCE, "mesh", 8, 10.5, 0.05);
    cr_assert(ct_select_beats(&a.st, &b.st)); /* 10.5 < 11.4 */
    cr_assert_not(ct_select_beats(&a.st, &c.st));
    cr_assert(ct_select_prunable(&b.st, &a.st, 0.05)); /* 11.4 > 10.5 * 1.05 */
    cr_assert_not(ct_select_prunable(&b.st, &a.st, 0.10));
    cr_assert_not(ct_select_prunable(&c.st, &a.st, 0.0));
    cr_assert(ct_select_confidence(&a.st, &b.st) > 0.99);
    cr_assert(ct_select_confidence(&b.st, &a.st) < 0.01);
    cr_assert_float_eq(ct_select_confidence(&a.st, &a.st), 0.5, 1e-12);
    cr_assert(ct_select_simplicity("ring") < ct_select_simplicity("mesh"));
    cr_assert_eq(ct_select_simplicity("no-such"), (int)ct_algo_count());
}

Test(select, clear_winner_and_tie_goes_to_the_simpler)
{
    struct ct_sweep_point p[] = {
        /* 1 KiB: mesh faster beyond both intervals */
        mk(CT_ALLREDUCE, "ring", 1024, 20, 0.05),
        mk(CT_ALLREDUCE, "mesh", 1024, 10, 0.05),
        /* 2 KiB: mesh nominally faster but the intervals overlap: tie, ring is simpler */
        mk(CT_ALLREDUCE, "ring", 2048, 21, 0.10),
        mk(CT_ALLREDUCE, "mesh", 2048, 20, 0.10),
        /* 4 KiB: ring clearly */
        mk(CT_ALLREDUCE, "ring", 4096, 10, 0.05),
        mk(CT_ALLREDUCE, "mesh", 4096, 20, 0.05),
    };
    struct ct_select_choice *c;
    size_t n = ct_select_choices(p, 6, CT_ALLREDUCE, 0.05, &c);
    cr_assert_eq(n, 3);
    cr_assert_eq(c[0].size, 1024);
    cr_assert_str_eq(p[c[0].chosen].algo, "mesh");
    cr_assert_not(c[0].tie);
    cr_assert(c[0].confidence > 0.99);
    cr_assert_float_eq(c[0].gain, 2.0, 1e-12);
    cr_assert_str_eq(p[c[1].chosen].algo, "ring");
    cr_assert(c[1].tie);
    cr_assert_eq(c[1].leader, 3);
    cr_assert_str_eq(p[c[1].runner].algo, "mesh");
    /* ring is nominally slower by exactly the margin (21 vs 20, 5%): even odds that keeping
     * it costs more than the margin */
    cr_assert_float_eq(c[1].confidence, 0.5, 1e-9);
    free(c);

    struct ct_ruleset s;
    struct ct_err err = {0};
    cr_assert_eq(ct_select_rules(p, 6, CT_ALLREDUCE, 0.05, &s, &err), 0, "%s", err.msg);
    cr_assert_eq(s.nrules, 2);
    check_cover(&s);
    cr_assert_str_eq(s.rules[0].algo, "mesh");
    cr_assert_not(s.rules[0].tie);
    cr_assert_str_eq(s.rules[0].runner_up, "ring");
    cr_assert_str_eq(s.rules[1].algo, "ring");
    cr_assert(s.rules[1].tie, "2K is a tie, 4K clear: the range says tie");
    cr_assert_str_eq(s.rules[1].runner_up, "mesh");
    /* the curves do not cross (mesh stays nominally faster): geometric midpoint */
    cr_assert_eq(s.rules[0].max_bytes, 1448); /* sqrt(1024 * 2048) */
    ct_ruleset_release(&s);
}

/* Latency-bound A (mesh: 10 us + 1 GB/s) vs bandwidth-bound B (ring: 20 us + 2 GB/s):
 * they cross at 20000 bytes. */
static size_t curves(struct ct_sweep_point *p, uint64_t lo, uint64_t hi, double w)
{
    size_t n = 0;
    for (uint64_t s = lo; s <= hi; s *= 2) {
        p[n++] = mk(CT_ALLREDUCE, "mesh", s, 10 + s / 1000.0, w);
        p[n++] = mk(CT_ALLREDUCE, "ring", s, 20 + s / 2000.0, w);
    }
    return n;
}

Test(select, ties_between_equal_neighbours_keep_their_choice)
{
    struct ct_sweep_point p[] = {
        mk(CT_ALLREDUCE, "ring", 1024, 20, 0.05),
        mk(CT_ALLREDUCE, "mesh", 1024, 10, 0.05),
        /* a tie in the middle: ring is simpler, but mesh is tied here and wins both sides */
        mk(CT_ALLREDUCE, "ring", 2048, 21, 0.10),
        mk(CT_ALLREDUCE, "mesh", 2048, 20, 0.10),
        mk(CT_ALLREDUCE, "ring", 4096, 40, 0.05),
        mk(CT_ALLREDUCE, "mesh", 4096, 20, 0.05),
        /* a tie at the end: follows its one neighbour too */
        mk(CT_ALLREDUCE, "ring", 8192, 41, 0.10),
        mk(CT_ALLREDUCE, "mesh", 8192, 40, 0.10),
    };
    struct ct_select_choice *c;
    size_t n = ct_select_choices(p, 8, CT_ALLREDUCE, 0.05, &c);
    cr_assert_eq(n, 4);
    for (size_t i = 0; i < n; i++)
        cr_assert_str_eq(p[c[i].chosen].algo, "mesh", "size %zu", i);
    cr_assert(c[1].tie && c[3].tie);
    cr_assert_str_eq(p[c[1].runner].algo, "ring");
    free(c);
    struct ct_ruleset s;
    cr_assert_eq(ct_select_rules(p, 8, CT_ALLREDUCE, 0.05, &s, NULL), 0);
    cr_assert_eq(s.nrules, 1, "one range, not four");
    cr_assert(s.rules[0].tie);
    ct_ruleset_release(&s);
    /* but never an algorithm that is beaten there */
    p[2].st.median = 10;
    p[2].st.lo = 9.9;
    p[2].st.hi = 10.1; /* ring clearly wins 2K now */
    n = ct_select_choices(p, 8, CT_ALLREDUCE, 0.05, &c);
    cr_assert_str_eq(p[c[1].chosen].algo, "ring");
    free(c);
}

Test(select, threshold_interpolated_in_log_space)
{
    struct ct_sweep_point p[64];
    size_t n = curves(p, 8, 1 << 20, 0.001);
    struct ct_ruleset s;
    cr_assert_eq(ct_select_rules(p, n, CT_ALLREDUCE, 0.05, &s, NULL), 0);
    check_cover(&s);
    cr_assert_eq(s.nrules, 2, "runs of equal choices merge into one range each");
    cr_assert_str_eq(s.rules[0].algo, "mesh");
    cr_assert_str_eq(s.rules[1].algo, "ring");
    uint64_t t = s.rules[0].max_bytes;
    /* between the grid sizes 16K and 32K, near the true crossing */
    cr_assert(t > 16384 && t <= 32768, "threshold %llu", (unsigned long long)t);
    cr_assert(t > 19000 && t < 21000, "threshold %llu far from 20000", (unsigned long long)t);
    cr_assert_eq(s.rules[1].min_bytes, t);
    cr_assert(s.rules[0].confidence > 0.9 && s.rules[1].confidence > 0.9);
    cr_assert(s.rules[0].gain > 1);
    ct_ruleset_release(&s);
}

Test(select, wide_intervals_make_everything_a_tie)
{
    struct ct_sweep_point p[64];
    size_t n = curves(p, 8, 1 << 20, 0.9);
    struct ct_ruleset s;
    cr_assert_eq(ct_select_rules(p, n, CT_ALLREDUCE, 0.05, &s, NULL), 0);
    check_cover(&s);
    /* mesh is faster at small sizes, but never beyond both intervals: ring (simpler) */
    cr_assert_eq(s.nrules, 1);
    cr_assert_str_eq(s.rules[0].algo, "ring");
    cr_assert(s.rules[0].tie);
    ct_ruleset_release(&s);
}

Test(select, parameters_split_ranges_and_params_that_do_not_matter_do_not)
{
    struct ct_sweep_point p[4];
    p[0] = mk(CT_ALLGATHER, "ring", 1024, 5, 0.01);
    p[1] = mk(CT_ALLGATHER, "ring", 2048, 6, 0.01);
    p[1].params.v[CT_P_THREADS] = 4; /* ring ignores threads: same choice */
    p[2] = mk(CT_ALLGATHER, "ring", 4096, 7, 0.01);
    p[2].params.v[CT_P_CHUNK] = 1 << 20; /* matters: a new range */
    p[3] = mk(CT_ALLGATHER, "ring", 8192, 8, 0.01);
    p[3].params.v[CT_P_CHUNK] = 1 << 20;
    struct ct_ruleset s;
    cr_assert_eq(ct_select_rules(p, 4, CT_ALLGATHER, 0.05, &s, NULL), 0);
    check_cover(&s);
    cr_assert_eq(s.nrules, 2);
    cr_assert_eq(s.rules[1].params.v[CT_P_CHUNK], 1 << 20);
    cr_assert_eq(s.rules[0].max_bytes, 2896); /* same algorithm: geometric midpoint */
    cr_assert_str_eq(s.rules[0].runner_up, "", "a single candidate has no runner-up");
    cr_assert_float_eq(s.rules[0].confidence, 1.0, 1e-12);
    ct_ruleset_release(&s);
}

Test(select, wrong_and_foreign_points_are_ignored)
{
    struct ct_sweep_point p[] = {
        mk(CT_ALLREDUCE, "ring", 64, 10, 0.01),
        mk(CT_ALLREDUCE, "mesh", 64, 1, 0.01),   /* fastest but wrong */
        mk(CT_ALLGATHER, "mesh", 64, 0.5, 0.01), /* other collective */
        mk(CT_ALLREDUCE, "rdh", 64, 2, 0.01),
    };
    p[1].wrong = 5;
    struct ct_ruleset s;
    cr_assert_eq(ct_select_rules(p, 4, CT_ALLREDUCE, 0.05, &s, NULL), 0);
    cr_assert_eq(s.nrules, 1);
    cr_assert_str_eq(s.rules[0].algo, "rdh");
    ct_ruleset_release(&s);
    struct ct_err err = {0};
    cr_assert_eq(ct_select_rules(p, 4, CT_ALLTOALL, 0.05, &s, &err), CT_EINVAL);
    cr_assert(strstr(err.msg, "alltoall"), "%s", err.msg);
}

Test(select, mark_pruned_flags_clear_losers_only)
{
    struct ct_sweep_point p[] = {
        mk(CT_ALLREDUCE, "ring", 64, 10, 0.02),
        mk(CT_ALLREDUCE, "mesh", 64, 10.3, 0.02), /* overlapping: kept */
        mk(CT_ALLREDUCE, "rdh", 64, 20, 0.02),    /* clearly losing */
        mk(CT_ALLREDUCE, "rdh", 128, 20, 0.02),   /* alone at its size: the leader */
    };
    ct_select_mark_pruned(p, 4, 0.05);
    cr_assert_not(p[0].pruned);
    cr_assert_not(p[1].pruned);
    cr_assert(p[2].pruned);
    cr_assert_not(p[3].pruned);
}

/* Recorded by `colltune sweep` (default settings): allreduce, 2 ranks over shm on the
 * 2-core development VM while another process kept one core busy (hence medians near
 * multiples of 0.81 ms). Median and 95% interval in microseconds. */
Test(select, recorded_curve_from_a_two_rank_sweep)
{
    static const struct {
        uint64_t size;
        const char *algo;
        double med, lo, hi;
    } rec[] = {
        {65536, "ring", 1634.05, 1625.17, 1672.18},
        {262144, "ring", 1672.58, 1650.78, 1709.81},
        {524288, "mesh-1step", 864.92, 861.80, 879.40},
        {524288, "ring", 1710.58, 1677.27, 1797.47},
        {1048576, "mesh-1step", 1757.53, 1708.18, 1800.53},
        {1048576, "ring", 1701.51, 1626.61, 1711.66},
        {2097152, "mesh-1step", 3657.09, 3501.34, 3659.29},
        {2097152, "ring", 3474.69, 3454.95, 4242.77},
        {4194304, "ring", 7107.99, 7008.18, 7194.38},
    };
    size_t n = sizeof rec / sizeof rec[0];
    struct ct_sweep_point p[16];
    for (size_t i = 0; i < n; i++) {
        p[i] = mk(CT_ALLREDUCE, rec[i].algo, rec[i].size, rec[i].med, 0);
        p[i].st.lo = rec[i].lo;
        p[i].st.hi = rec[i].hi;
    }
    struct ct_ruleset s;
    cr_assert_eq(ct_select_rules(p, n, CT_ALLREDUCE, 0.05, &s, NULL), 0);
    check_cover(&s);
    /* mesh-1step wins 512K clearly; 1M and 2M overlap: ring, the simpler one */
    cr_assert_eq(s.nrules, 3);
    cr_assert_str_eq(s.rules[0].algo, "ring");
    cr_assert_str_eq(s.rules[1].algo, "mesh-1step");
    cr_assert_not(s.rules[1].tie);
    cr_assert(s.rules[1].gain > 1.9 && s.rules[1].confidence > 0.99);
    cr_assert_str_eq(s.rules[2].algo, "ring");
    cr_assert(s.rules[2].tie);
    cr_assert_str_eq(s.rules[2].runner_up, "mesh-1step");
    /* mesh-1step was not measured at 256K: the geometric midpoint */
    cr_assert_eq(s.rules[0].max_bytes, 370728);
    /* the curves cross just below 1M (95% of the log step): interpolated, then kept a
     * tenth of the step away from the grid size */
    cr_assert_eq(s.rules[1].max_bytes, 978356);
    ct_ruleset_release(&s);
}

Test(select, parameters_move_only_for_a_clear_gain)
{
    struct ct_sweep_point p[] = {
        mk(CT_ALLREDUCE, "ring", 4096, 10, 0.01),   /* defaults */
        mk(CT_ALLREDUCE, "ring", 4096, 9.8, 0.005), /* beyond both intervals, but by 2% */
        mk(CT_ALLREDUCE, "ring", 8192, 20, 0.01),   /* defaults */
        mk(CT_ALLREDUCE, "ring", 8192, 18, 0.01),   /* 10% faster: a real gain */
    };
    p[1].params.v[CT_P_CHUNK] = 16384;
    p[3].params.v[CT_P_CHUNK] = 16384;
    cr_assert(ct_select_beats(&p[1].st, &p[0].st));
    cr_assert_not(ct_select_better_params(&p[1].st, &p[0].st, 0.05));
    cr_assert(ct_select_better_params(&p[3].st, &p[2].st, 0.05));
    struct ct_select_choice *c;
    size_t n = ct_select_choices(p, 2, CT_ALLREDUCE, 0.05, &c);
    cr_assert_eq(n, 1);
    cr_assert_eq(c[0].chosen, 0, "the defaults stay for a 2%% gain");
    free(c);
    n = ct_select_choices(p, 2, CT_ALLREDUCE, 0.0, &c);
    cr_assert_eq(c[0].chosen, 1, "without a margin any clear win counts");
    free(c);
    /* with 8 KiB, where chunk 16K is a clear gain: 4 KiB takes it too, as it is acceptable
     * there (the leader), so one range instead of two */
    n = ct_select_choices(p, 4, CT_ALLREDUCE, 0.05, &c);
    cr_assert_eq(n, 2);
    cr_assert_eq(c[0].chosen, 1);
    cr_assert_eq(c[1].chosen, 3);
    free(c);
}

/* Ties over the whole curve: ring and mesh statistically tied at every size, the nominal
 * leader alternating size by size, with one clear mesh-1step win in the middle. The tie
 * rule must give the fewest ranges (ring, mesh-1step, ring), never alternate, report gain 1
 * for the tied ranges and a real confidence in the tie. */
Test(select, ties_across_the_curve_do_not_alternate)
{
    struct ct_sweep_point p[40];
    size_t n = 0;
    for (int i = 0; i < 12; i++) {
        uint64_t size = 8ull << i;
        double t = 10 + i;
        bool mesh_ahead = i % 2 == 1;
        p[n++] = mk(CT_ALLREDUCE, "ring", size, mesh_ahead ? t * 1.01 : t, 0.03);
        p[n++] = mk(CT_ALLREDUCE, "mesh", size, mesh_ahead ? t : t * 1.01, 0.03);
        /* mesh-1step: clearly fastest at sizes 5 and 6 only */
        p[n++] = mk(CT_ALLREDUCE, "mesh-1step", size, i == 5 || i == 6 ? t * 0.5 : t * 1.6, 0.03);
    }
    struct ct_ruleset s;
    struct ct_err err = {0};
    cr_assert_eq(ct_select_rules(p, n, CT_ALLREDUCE, 0.05, &s, &err), 0, "%s", err.msg);
    check_cover(&s);
    cr_assert_eq(s.nrules, 3, "%d ranges", s.nrules);
    cr_assert_str_eq(s.rules[0].algo, "ring");
    cr_assert_str_eq(s.rules[1].algo, "mesh-1step");
    cr_assert_str_eq(s.rules[2].algo, "ring");
    cr_assert(s.rules[0].tie && s.rules[2].tie);
    cr_assert_not(s.rules[1].tie);
    for (int r = 0; r < s.nrules; r++)
        cr_assert(s.rules[r].gain >= 1.0, "range %d gain %.3f below 1", r, s.rules[r].gain);
    cr_assert(s.rules[0].confidence > 0.5, "tie confidence %.2f", s.rules[0].confidence);
    cr_assert(s.rules[1].confidence > 0.99);
    /* the tied ranges record mesh, acceptable at each of their sizes; the clear win none */
    cr_assert_eq(s.rules[0].ntied, 1);
    cr_assert_str_eq(s.rules[0].tied[0], "mesh");
    cr_assert_eq(s.rules[2].ntied, 1);
    cr_assert_eq(s.rules[1].ntied, 0);
    ct_ruleset_release(&s);
}

/* Ties per part of a range: ring is chosen over sizes 8 B .. 16 KiB (tied with mesh
 * throughout, a clear win over mesh-1step at 8-64 B); mesh-1step is tied at 128 B .. 1 KiB
 * only and beaten beyond. The range records mesh over all of it and mesh-1step over its
 * part, with bounds at the geometric midpoints to its beaten neighbours: so a second sweep
 * that chose mesh-1step at 512 B made a tied choice there, and one that chose it at 8 KiB
 * did not. Each span carries how fast its row ran against the choice there. */
Test(select, ties_are_recorded_per_part_of_a_range)
{
    struct ct_sweep_point p[40];
    size_t n = 0;
    for (int i = 0; i < 12; i++) {
        uint64_t size = 8ull << i;
        double t = 10 + i;
        p[n++] = mk(CT_ALLREDUCE, "ring", size, t, 0.02);
        p[n++] = mk(CT_ALLREDUCE, "mesh", size, t * 1.01, 0.02);
        p[n++] = mk(CT_ALLREDUCE, "mesh-1step", size, i >= 4 && i <= 7 ? t * 1.02 : t * 1.5, 0.02);
        p[n - 1].params.v[CT_P_CHUNK] = i == 7 ? 8192 : 4096; /* best at 4096 at 3 of its 4 */
    }
    struct ct_ruleset s;
    struct ct_err err = {0};
    cr_assert_eq(ct_select_rules(p, n, CT_ALLREDUCE, 0.05, &s, &err), 0, "%s", err.msg);
    check_cover(&s);
    cr_assert_eq(s.nrules, 1, "%d ranges", s.nrules);
    const struct ct_rule *r = &s.rules[0];
    cr_assert_str_eq(r->algo, "ring");
    cr_assert_eq(r->ntied, 1, "only mesh is tied over the whole range");
    cr_assert_eq(r->nties, 2, "%d spans", r->nties);
    cr_assert_str_eq(r->ties[0].algo, "mesh");
    cr_assert_eq(r->ties[0].min_bytes, r->min_bytes);
    cr_assert_eq(r->ties[0].max_bytes, r->max_bytes);
    cr_assert_str_eq(r->ties[1].algo, "mesh-1step");
    cr_assert_eq(r->ties[1].min_bytes, 91, "sqrt(64 x 128) = 90.5: %" PRIu64, r->ties[1].min_bytes);
    cr_assert_eq(r->ties[1].max_bytes, 1448, "sqrt(1024 x 2048): %" PRIu64, r->ties[1].max_bytes);
    /* each span's ratio: its sizes' geomean of the row's median over the choice's */
    cr_assert_float_eq(r->ties[0].ratio, 1.01, 1e-9);
    cr_assert_float_eq(r->ties[1].ratio, 1.02, 1e-9);
    /* and the parameters its best points ran at most of the span's sizes */
    cr_assert_eq(r->ties[1].params.v[CT_P_CHUNK], 4096);
    ct_ruleset_release(&s);
}

/* A tied range takes an algorithm that is faster by median at every size of it, by half the
 * margin or more over the range: no single size calls it a win, the whole range does. Where
 * it is behind at one size, or ahead by less, the simpler algorithm stays. */
Test(select, a_tie_faster_at_every_size_of_the_range_takes_it)
{
    double ahead[3][6] = {{1.06, 1.05, 1.08, 1.04, 1.06, 1.07},  /* 6% over the range */
                          {1.06, 1.05, 0.99, 1.04, 1.06, 1.07},  /* behind at one size */
                          {1.02, 1.01, 1.03, 1.02, 1.01, 1.02}}; /* 2%: under half the margin */
    const char *want[3] = {"mesh", "ring", "ring"};
    for (int c = 0; c < 3; c++) {
        struct ct_sweep_point p[12];
        size_t n = two_curves(p, CT_ALLREDUCE, "ring", ahead[c], "mesh", 1, 6, 1024, 0.08);
        struct ct_ruleset s;
        struct ct_err err = {0};
        cr_assert_eq(ct_select_rules(p, n, CT_ALLREDUCE, 0.10, &s, &err), 0, "%s", err.msg);
        check_cover(&s);
        cr_assert_eq(s.nrules, 1, "case %d: %d ranges", c, s.nrules);
        cr_assert_str_eq(s.rules[0].algo, want[c], "case %d", c);
        cr_assert(s.rules[0].tie, "case %d: still a tie", c);
        cr_assert(s.rules[0].gain >= 1.0, "case %d: gain %.3f", c, s.rules[0].gain);
        cr_assert_eq(s.rules[0].ntied, 1);
        cr_assert_str_eq(s.rules[0].tied[0], c == 0 ? "ring" : "mesh", "case %d", c);
        ct_ruleset_release(&s);
    }
}

/* A library engine's own decision is no rule: the fewest ranges that override it are
 * chosen. pairwise is tied with the default (1% ahead, under half the margin) at every size
 * but one, where the default loses clearly: the override is that size only (fewest ranges
 * overall would have been pairwise everywhere). Native algorithms keep the plain rule. */
Test(select, one_loss_of_a_library_default_does_not_hand_over_the_curve)
{
    const char *names[2][2] = {{"ompi:default", "ompi:pairwise"}, {"ring", "mesh"}};
    for (int lib = 0; lib < 2; lib++) {
        struct ct_sweep_point p[24];
        double slow[12] = {1, 1, 1, 1, 1, 1.6, 1, 1, 1, 1, 1, 1}; /* loses clearly at size 5 */
        size_t n =
            two_curves(p, CT_ALLTOALL, names[lib][0], slow, names[lib][1], 0.99, 12, 8, 0.03);
        struct ct_select_choice *c;
        size_t ns = ct_select_choices(p, n, CT_ALLTOALL, 0.05, &c);
        cr_assert_eq(ns, 12);
        for (size_t i = 0; i < ns; i++) {
            const char *want = lib == 1 || i == 5 ? names[lib][1] : names[lib][0];
            cr_assert_str_eq(p[c[i].chosen].algo, want, "%s, size %zu", names[lib][0], i);
        }
        free(c);
    }
}

/* One size won clearly between two close sizes that agree (within a quarter octave: the
 * check phase's moving midpoints) takes their choice; the same win two octaves from its
 * neighbours stands. */
Test(select, an_island_between_close_agreeing_sizes_takes_their_choice)
{
    for (int close = 0; close < 2; close++) {
        uint64_t size[3] = {19464, 19480, close ? 22480 : 77856};
        struct ct_sweep_point p[6];
        for (int i = 0; i < 3; i++) {
            p[2 * i] = mk(CT_REDUCESCATTER, "ompi:default", size[i], i == 1 ? 9.5 : 12.7, 0.02);
            p[2 * i + 1] =
                mk(CT_REDUCESCATTER, "ompi:butterfly", size[i], i == 1 ? 7.1 : 12.8, 0.02);
        }
        struct ct_select_choice *c;
        size_t ns = ct_select_choices(p, 6, CT_REDUCESCATTER, 0.05, &c);
        cr_assert_eq(ns, 3);
        cr_assert_str_eq(p[c[1].chosen].algo, close ? "ompi:default" : "ompi:butterfly");
        cr_assert(!close || c[1].tie, "kept against the measurement: not a clear choice");
        free(c);
        struct ct_ruleset rs;
        cr_assert_eq(ct_select_rules(p, 6, CT_REDUCESCATTER, 0.05, &rs, NULL), 0);
        cr_assert_eq(rs.nrules, close ? 1 : 3);
        ct_ruleset_release(&rs);
    }
}

/* A range of the default that faster tied algorithms could take goes to the one a
 * neighbouring range has (that range grows), not to the fastest by median (a range more). */
Test(select, a_faster_tie_joins_the_neighbouring_range)
{
    struct ct_sweep_point p[] = {
        mk(CT_REDUCESCATTER, "ompi:default", 32u << 20, 63, 0.02),
        mk(CT_REDUCESCATTER, "ompi:butterfly", 32u << 20, 75, 0.02),
        mk(CT_REDUCESCATTER, "ompi:non-overlapping", 32u << 20, 76, 0.02),
        mk(CT_REDUCESCATTER, "ompi:default", 64u << 20, 151, 0.02),
        mk(CT_REDUCESCATTER, "ompi:butterfly", 64u << 20, 153, 0.02),
        mk(CT_REDUCESCATTER, "ompi:non-overlapping", 64u << 20, 102, 0.05),
        mk(CT_REDUCESCATTER, "ompi:default", 128u << 20, 308, 0.04),
        mk(CT_REDUCESCATTER, "ompi:butterfly", 128u << 20, 250, 0.12),
        mk(CT_REDUCESCATTER, "ompi:non-overlapping", 128u << 20, 265, 0.03),
    };
    struct ct_ruleset rs;
    cr_assert_eq(ct_select_rules(p, 9, CT_REDUCESCATTER, 0.10, &rs, NULL), 0);
    cr_assert_eq(rs.nrules, 2);
    cr_assert_str_eq(rs.rules[0].algo, "ompi:default");
    cr_assert_str_eq(rs.rules[1].algo, "ompi:non-overlapping");
    cr_assert_eq(rs.rules[1].max_bytes, CT_BYTES_INF);
    ct_ruleset_release(&rs);
}

/* A tie never picks an algorithm the leader wins over: where only a complex algorithm and
 * one simpler one are tied, the simpler; where the simple one is clearly beaten, never it. */
Test(select, tie_never_picks_a_beaten_algorithm)
{
    struct ct_sweep_point p[] = {
        mk(CT_ALLREDUCE, "ring", 64, 10, 0.02),   mk(CT_ALLREDUCE, "rdh", 64, 10.1, 0.02),
        mk(CT_ALLREDUCE, "mesh", 64, 30, 0.02),   mk(CT_ALLREDUCE, "ring", 128, 30, 0.02),
        mk(CT_ALLREDUCE, "rdh", 128, 10.1, 0.02), mk(CT_ALLREDUCE, "mesh", 128, 10, 0.02),
    };
    struct ct_ruleset s;
    cr_assert_eq(ct_select_rules(p, 6, CT_ALLREDUCE, 0.05, &s, NULL), 0);
    /* 64: ring~rdh (ring simpler); 128: mesh~rdh, ring beaten: fewest ranges is rdh for both
     * (one range), and rdh is acceptable at both sizes */
    cr_assert_eq(s.nrules, 1, "%d ranges", s.nrules);
    cr_assert_str_eq(s.rules[0].algo, "rdh");
    ct_ruleset_release(&s);
}

/* The confidence of a tie is that keeping the simpler choice costs at most the margin: near
 * 1 when it is in fact faster, near 0 when it is slower well beyond the margin. */
Test(select, tie_confidence_is_the_chance_the_simpler_costs_at_most_the_margin)
{
    struct ct_sweep_point fast = mk(CT_ALLREDUCE, "ring", 1024, 10, 0.02);
    struct ct_sweep_point slow = mk(CT_ALLREDUCE, "mesh", 1024, 11.5, 0.02);
    cr_assert(ct_select_tie_confidence(&fast.st, &slow.st, 0.10) > 0.99, "a faster choice");
    cr_assert(ct_select_tie_confidence(&slow.st, &fast.st, 0.10) < 0.01, "15%% slower, margin 10%%");
    cr_assert(ct_select_tie_confidence(&slow.st, &fast.st, 0.20) > 0.99, "15%% slower, margin 20%%");
}

/* One setting measured twice (two phases of the plan): the measurement with more samples
 * counts, not the faster one, so that re-measuring an algorithm cannot make it win. */
Test(select, a_remeasured_setting_is_not_its_fastest_measurement)
{
    struct ct_sweep_point p[] = {
        mk(CT_ALLGATHER, "ring", 1 << 20, 100, 0.01), mk(CT_ALLGATHER, "ring", 1 << 20, 60, 0.5),
        mk(CT_ALLGATHER, "mesh", 1 << 20, 80, 0.01)};
    p[0].st.n = 500;
    p[1].st.n = 6; /* a noisy short batch of the same setting */
    p[2].st.n = 500;
    struct ct_select_choice *c;
    size_t ns = ct_select_choices(p, 3, CT_ALLGATHER, 0.10, &c);
    cr_assert_eq(ns, 1);
    cr_assert_str_eq(p[c[0].chosen].algo, "mesh", "ring's 6-sample 60 us must not count");
    cr_assert_eq(c[0].tie, false);
    free(c);
}

/* Collectives in flight are a setting of their own for every algorithm (no algorithm lists
 * the parameter): an in-flight point re-measured more often must not stand in for the
 * point without it, nor the other way round (a WAN sweep once kept inflight=2 at 82% of
 * the line over inflight=8 at 87% because all of them counted as one setting). */
Test(select, inflight_settings_are_distinct)
{
    struct ct_sweep_point p[] = {
        mk(CT_ALLREDUCE, "ring", 1 << 28, 5.0e6, 0.02), /* the default: 1 stream, 1 in flight */
        mk(CT_ALLREDUCE, "ring", 1 << 28, 2.6e6, 0.05),
        mk(CT_ALLREDUCE, "ring", 1 << 28, 2.2e6, 0.03),
    };
    p[1].params.v[CT_P_INFLIGHT] = 2;
    p[1].st.n = 30; /* measured more often than the default */
    p[2].params.v[CT_P_STREAMS] = 2;
    p[2].params.v[CT_P_INFLIGHT] = 8;
    cr_assert_not(ct_select_same_choice("ring", &p[0].params, "ring", &p[1].params));
    struct ct_params zero = p[0].params;
    zero.v[CT_P_INFLIGHT] = 0;
    cr_assert(ct_select_same_choice("ring", &zero, "ring", &p[0].params), "0 and 1: one");
    struct ct_ruleset rs;
    struct ct_err err = {0};
    cr_assert_eq(ct_select_rules(p, 3, CT_ALLREDUCE, 0.10, &rs, &err), 0, "%s", err.msg);
    cr_assert_eq(rs.nrules, 1);
    cr_assert_eq(rs.rules[0].params.v[CT_P_INFLIGHT], 8);
    cr_assert_eq(rs.rules[0].params.v[CT_P_STREAMS], 2);
    ct_ruleset_release(&rs);
}

/* A run of sizes with a setting of its own (ring with pipeline=8 between ring's defaults and
 * symm, as a 2-rank AllGather sweep chose at 662 KiB..1.08 MiB) takes a neighbour's setting
 * where that one is acceptable at each of its sizes: fewer ranges. Where no neighbour is
 * acceptable, the run stays. */
Test(select, a_run_with_parameters_of_its_own_joins_an_acceptable_neighbour)
{
    struct ct_sweep_point p[] = {
        mk(CT_ALLGATHER, "ring", 512 << 10, 20, 0.01), /* 0: clear winner */
        mk(CT_ALLGATHER, "symm", 512 << 10, 26, 0.01),
        mk(CT_ALLGATHER, "ring", 1 << 20, 33, 0.01),   /* 2: defaults, not beaten by 3 */
        mk(CT_ALLGATHER, "ring", 1 << 20, 29.8, 0.01), /* 3: pipeline 8, the leader */
        mk(CT_ALLGATHER, "symm", 1 << 20, 40, 0.01),   /* beaten */
        mk(CT_ALLGATHER, "ring", 2 << 20, 70, 0.01),
        mk(CT_ALLGATHER, "symm", 2 << 20, 50, 0.01), /* 6: clear winner */
    };
    p[3].params.v[CT_P_PIPELINE] = 8;
    size_t np = sizeof p / sizeof p[0];
    cr_assert(ct_select_better_params(&p[3].st, &p[2].st, 0.10), "pipeline 8 alone is a gain");
    cr_assert_not(ct_select_wins(&p[3].st, &p[2].st, 0.10), "but the defaults are acceptable");
    struct ct_select_choice *c;
    size_t n = ct_select_choices(p, np, CT_ALLGATHER, 0.10, &c);
    cr_assert_eq(n, 3);
    cr_assert_eq(c[0].chosen, 0);
    cr_assert_eq(c[1].chosen, 2, "ring's defaults, as on its left");
    cr_assert(c[1].tie);
    cr_assert_eq(c[1].leader, 3);
    cr_assert_eq(c[2].chosen, 6);
    free(c);
    struct ct_ruleset s;
    cr_assert_eq(ct_select_rules(p, np, CT_ALLGATHER, 0.10, &s, NULL), 0);
    check_cover(&s);
    cr_assert_eq(s.nrules, 2);
    cr_assert_str_eq(s.rules[0].algo, "ring");
    cr_assert_eq(s.rules[0].params.v[CT_P_PIPELINE], p[0].params.v[CT_P_PIPELINE]);
    cr_assert_str_eq(s.rules[1].algo, "symm");
    ct_ruleset_release(&s);
    /* the defaults beaten at 1 MiB: no neighbour is acceptable there, pipeline 8 stays */
    p[2].st.median = 36, p[2].st.lo = 35.6, p[2].st.hi = 36.4;
    n = ct_select_choices(p, np, CT_ALLGATHER, 0.10, &c);
    cr_assert_eq(c[1].chosen, 3);
    cr_assert_not(c[1].tie);
    free(c);
}

/* A winner whose time grows faster than the size between two grid sizes meets a cliff there
 * (recorded: MPICH 4.0.2's recursive doubling, 2 ranks, 2.36 us at 8 KiB, 23.3 us at 16 KiB,
 * MPICH's default 4.0 and 4.99 us): its range ends at the size it was measured at, where
 * interpolation gave it up to 9.55 KiB. A smooth crossing is still interpolated. */
Test(select, a_winner_past_a_cliff_keeps_only_what_was_measured)
{
    struct ct_sweep_point p[8] = {
        mk(CT_ALLREDUCE, "rdh", 4096, 1.9, 0.01),   mk(CT_ALLREDUCE, "ring", 4096, 3.3, 0.01),
        mk(CT_ALLREDUCE, "rdh", 8192, 2.36, 0.01),  mk(CT_ALLREDUCE, "ring", 8192, 4.0, 0.01),
        mk(CT_ALLREDUCE, "rdh", 16384, 23.3, 0.01), mk(CT_ALLREDUCE, "ring", 16384, 4.99, 0.01),
        mk(CT_ALLREDUCE, "rdh", 32768, 40, 0.01),   mk(CT_ALLREDUCE, "ring", 32768, 8, 0.01)};
    struct ct_ruleset s;
    cr_assert_eq(ct_select_rules(p, 8, CT_ALLREDUCE, 0.05, &s, NULL), 0);
    check_cover(&s);
    cr_assert_eq(s.nrules, 2);
    cr_assert_str_eq(s.rules[0].algo, "rdh");
    cr_assert_eq(s.rules[0].max_bytes, 8193, "rdh up to %llu",
                 (unsigned long long)s.rules[0].max_bytes);
    ct_ruleset_release(&s);
    p[4].st.median = 4.5; /* 1.9x for 2x the size: no cliff */
    p[4].st.lo = p[4].st.min = 4.45;
    p[4].st.hi = p[4].st.max = 4.55;
    p[5].st.median = 4.2;
    p[5].st.lo = p[5].st.min = 4.15;
    p[5].st.hi = p[5].st.max = 4.25;
    cr_assert_eq(ct_select_rules(p, 8, CT_ALLREDUCE, 0.05, &s, NULL), 0);
    cr_assert_str_eq(s.rules[0].algo, "rdh");
    cr_assert(s.rules[0].max_bytes > 8193 + 1000 && s.rules[0].max_bytes < 16384,
              "smooth: interpolated, %llu", (unsigned long long)s.rules[0].max_bytes);
    ct_ruleset_release(&s);
}
