/* SPDX-License-Identifier: MIT */
/*
 * sweep --verify CONFIG --lib nccl's measure and verdict (tune/ncclverify.c) over an engine of
 * known times, its sides switched as the plugin's bypass switches them: a rule faster than
 * NCCL's own choice is kept and its set marked verified; a slower one is set back in the copy,
 * said slower and the copy written; a set of another shape is said and not measured; a pass
 * that fails is one failure said. NCCL itself runs it in tests/cli/t2050 where a GPU is.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/comm.h"
#include "output/config.h"
#include "tune/libverify.h"
#include "verify_fixture.h"

struct fake {
    double a_factor; /* side A's time over B's at the rule's sizes (>= 8 KiB) */
    bool fail;       /* the engine's time fails */
    int fail_code;   /* with that code (0: CT_EIO) */
    bool other_rank; /* the verify runs as rank 1: it measures, shows and writes nothing */
    bool with;       /* the side now */
    int switches, calls, judged, again, failed, said_elsewhere, applied, slow_applied;
    int stamps, ends[CT_VEND_NO_SET + 1], nstamped, nslow;
    double stamp_geo, stamp_tell, judged_tell;
    char order[8]; /* the ends in the order said: S slower, F fixed, U unchanged */
    char line[300];
    struct ct_job j;
};

static int side(void *arg, bool with, struct ct_err *err)
{
    (void)err;
    struct fake *f = arg;
    f->with = with;
    f->switches++;
    return 0;
}

static int begin(void *ctx, const struct ct_algo *a, const struct ct_job *j, bool verify,
                 long *wrong, struct ct_err *err)
{
    (void)a, (void)verify, (void)err;
    struct fake *f = ctx;
    f->j = *j;
    f->calls++;
    *wrong = 0;
    return 0;
}

static int time_(void *ctx, int warmup, int iters, int reps, double *out, struct ct_err *err)
{
    (void)warmup, (void)reps;
    struct fake *f = ctx;
    if (f->fail)
        return ct_err_set(err, f->fail_code ? f->fail_code : CT_EIO, "NCCL: unhandled cuda error");
    double bytes = (double)f->j.count * 4; /* allreduce float32 */
    /* pair to pair noise, wider at larger sizes: the sizes' intervals (and tells) differ */
    double jitter = 1 + 0.004 * ((f->calls * 7) % 5) * (1 + bytes / 262144);
    for (int i = 0; i < iters; i++)
        out[i] = (5 + bytes / 1e4) * (f->with && bytes >= 8192 ? f->a_factor : 1) * jitter *
                 (1 + 0.002 * (i % 3));
    return 0;
}

static void end_(void *ctx)
{
    (void)ctx;
}

static int failed(const void *ctx, int rc, const char *line)
{
    struct fake *f = (struct fake *)ctx;
    f->failed++;
    snprintf(f->line, sizeof f->line, "%s", line);
    return rc;
}

static void judged(const void *ctx, const struct ct_verify_judged *j)
{
    struct fake *f = (struct fake *)ctx;
    f->judged++;
    f->judged_tell = j->t->tell;
}

static void say(const void *ctx, const char *text)
{
    struct fake *f = (struct fake *)ctx;
    f->said_elsewhere += strstr(text, "not verified here (another shape)") != NULL;
}

static void again(const void *ctx, const uint64_t *sz, const struct ct_paired_row *w,
                  const struct ct_paired_redo *r, bool groups, const char *where)
{
    (void)sz, (void)w, (void)r, (void)groups, (void)where;
    ((struct fake *)ctx)->again++;
}

static struct ct_config *copy(const void *ctx, const struct ct_config *c)
{
    (void)ctx, (void)c;
    struct ct_config *t = calloc(1, sizeof *t);
    ct_config_init(t);
    return t;
}

static void apply(const void *ctx, struct ct_config *c, const char *lib, int i,
                  const struct ct_ruleset *s, const bool *slow, const bool *nogain,
                  const struct ct_paired_cut *cut, int n[CT_JUDGED_N])
{
    (void)c, (void)nogain, (void)cut;
    struct fake *f = (struct fake *)ctx;
    cr_expect_str_eq(lib, "nccl");
    cr_expect_eq(i, -1, "NCCL's sets are found by their shape");
    f->applied++;
    for (int r = 0; r < s->nrules; r++)
        if (slow[r]) {
            f->slow_applied++;
            n[CT_JUDGED_SLOW]++;
        }
}

static bool stamp(const void *ctx, struct ct_config *c, const char *lib, const struct ct_ruleset *s,
                  double geo, double tell)
{
    (void)c, (void)lib, (void)s;
    struct fake *f = (struct fake *)ctx;
    f->stamps++;
    f->stamp_geo = geo;
    f->stamp_tell = tell;
    return geo > 0;
}

static int end(const void *ctx, const char *path, const struct ct_verify_end *w, int code)
{
    struct fake *f = (struct fake *)ctx;
    cr_expect_str_eq(path, "config.json");
    f->ends[w->kind]++;
    size_t n = strlen(f->order);
    if (n + 1 < sizeof f->order)
        f->order[n] = w->kind == CT_VEND_SLOWER ? 'S' : w->kind == CT_VEND_FIXED ? 'F' : 'U';
    if (w->kind == CT_VEND_FIXED) {
        f->nstamped = w->nstamped;
        f->nslow = w->n[CT_JUDGED_SLOW];
    }
    return code;
}

/* AllReduce on 2 ranks swept at 1 KiB-1 MiB x4: NCCL's own choice below 8 KiB, ring/LL from
 * there; a set of 4 ranks beside it where other is set. */
static int verify(struct fake *f, bool other, int *verified)
{
    struct ct_rule rules[2];
    struct ct_ruleset s[2] = {verify_set_of(rules, 1, "ring/LL")};
    s[1] = s[0];
    s[1].nranks = s[1].ranks_per_node = 4;
    struct ct_config c;
    verify_config_of(&c);
    struct ct_backend be = {.name = "test", .begin = begin, .time = time_, .end = end_};
    struct ct_verify_hooks h = {
        .ctx = f, .failed = failed, .judged = judged, .say = say, .again = again};
    struct ct_verify_files fl = {
        .ctx = f, .copy = copy, .apply = apply, .stamp = stamp, .end = end};
    struct ct_comm comm = {.rank = f->other_rank, .size = 2};
    struct ct_ncclverify_in in = {.h = &h,
                                  .f = &fl,
                                  .c = &c,
                                  .path = "config.json",
                                  .sets = other ? &s[1] : s,
                                  .nsets = 1,
                                  .comm = &comm,
                                  .be = &be,
                                  .ctx = f,
                                  .root = !f->other_rank,
                                  .side = side,
                                  .arg = f};
    in.job.shape = (struct ct_shape){.nranks = 2, .rank = 0, .ranks_per_node = 2};
    return ct_ncclverify(&in, verified);
}

Test(ncclverify, a_faster_rule_is_kept_and_marked)
{
    struct fake f = {.a_factor = 0.8};
    int verified = -1;
    cr_assert_eq(verify(&f, false, &verified), 0, "%s", f.line);
    cr_expect_eq(verified, 1);
    cr_expect_geq(f.switches, 6, "at least 3 pairs of sides: %d switches", f.switches);
    cr_expect_eq(f.judged, 1);
    cr_expect_eq(f.applied, 1);
    cr_expect_eq(f.slow_applied, 0);
    cr_expect_eq(f.stamps, 1);
    /* the geomean over the sweep's sizes (1 and 4 KiB at NCCL's own, 16 KiB-1 MiB at 0.8) */
    cr_expect(f.stamp_geo > 0.8 && f.stamp_geo < 0.9, "geomean %g", f.stamp_geo);
    /* what the measure could tell, as its table says it (the median over the tuned sizes) */
    cr_expect(f.judged_tell > 1.03 && f.judged_tell < 1.5, "tell %g", f.judged_tell);
    cr_expect_eq(f.stamp_tell, f.judged_tell, "recorded %g, shown %g", f.stamp_tell, f.judged_tell);
    cr_expect_str_eq(f.order, "F");
    cr_expect_eq(f.ends[CT_VEND_FIXED], 1);
    cr_expect_eq(f.nstamped, 1);
    cr_expect_eq(f.ends[CT_VEND_SLOWER] + f.ends[CT_VEND_UNCHANGED], 0);
}

Test(ncclverify, a_slower_rule_is_set_back_and_said)
{
    struct fake f = {.a_factor = 1.5};
    int verified = -1;
    cr_assert_eq(verify(&f, false, &verified), CT_VERIFY_SLOWER, "%s", f.line);
    cr_expect_eq(verified, 1);
    cr_expect_geq(f.again, 1, "measured again in fresh passes");
    cr_expect_eq(f.slow_applied, 1, "the rule set back");
    cr_expect_eq(f.stamp_geo, 0, "a slower set's record cleared");
    cr_expect_eq(f.stamp_tell, 0);
    cr_expect_eq(f.ends[CT_VEND_SLOWER], 1);
    cr_expect_eq(f.ends[CT_VEND_FIXED], 1);
    cr_expect_eq(f.nslow, 1);
    cr_expect_eq(f.nstamped, 0);
    cr_expect_str_eq(f.order, "SF", "said slower, then the copy written");
}

Test(ncclverify, another_shape_is_said_and_not_measured)
{
    struct fake f = {.a_factor = 0.8};
    int verified = -1;
    cr_assert_eq(verify(&f, true, &verified), 0);
    cr_expect_eq(verified, 0);
    cr_expect_eq(f.said_elsewhere, 1);
    cr_expect_eq(f.calls + f.switches + f.applied + f.ends[CT_VEND_FIXED], 0);
}

Test(ncclverify, a_failed_pass_is_one_failure_said)
{
    struct fake f = {.a_factor = 0.8, .fail = true};
    int verified = -1;
    cr_assert_eq(verify(&f, false, &verified), 1);
    cr_expect_eq(f.failed, 1);
    cr_expect(strstr(f.line, "rank 0: --verify: NCCL: unhandled cuda error"), "%s", f.line);
    cr_expect_eq(f.judged, 0);
    cr_expect_eq(f.ends[CT_VEND_FIXED] + f.ends[CT_VEND_SLOWER], 0);
}

Test(ncclverify, another_rank_measures_alike_and_shows_and_writes_nothing)
{
    struct fake f = {.a_factor = 1.5, .other_rank = true};
    int verified = -1;
    cr_assert_eq(verify(&f, false, &verified), CT_VERIFY_SLOWER, "%s", f.line);
    cr_expect_eq(verified, 1);
    cr_expect_geq(f.switches, 6, "it takes its part in every pass");
    cr_expect_eq(f.judged + f.again + f.applied + f.stamps, 0, "the root's tables and copy");
    cr_expect_str_eq(f.order, "", "nothing written or said");
}

Test(ncclverify, a_pass_that_cannot_run_here_is_the_inputs_failure)
{
    struct fake f = {.a_factor = 0.8, .fail = true, .fail_code = CT_EUNSUPP};
    int verified = -1;
    cr_assert_eq(verify(&f, false, &verified), CT_VERIFY_USAGE);
    cr_expect_eq(f.failed, 1);
}
