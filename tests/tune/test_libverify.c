/* SPDX-License-Identifier: MIT */
/*
 * One rule set of a library's section verified against its defaults (tune/libverify.c), its
 * launches answered by a job hook that reads the side from the environment verify sets (the
 * export's loader variable on side A, the library's own-defaults setting on B) and prints the
 * table `colltune run --lib` prints: a rule slower at its sizes is judged slower (exit 3's
 * verdict) and one faster kept; the run's sizes, warmup split, --keep-rules and launch
 * settings reach the launcher as verify means them, and nothing a launch set for its side is
 * left in the environment after it; a run that misses a size is a failure said once. The real
 * libraries' verify runs in tests/cli (t3100, t3105, t3110).
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/libmod.h"
#include "tune/libverify.h"

#define LOADER "CT_TEST_LOADER_RULES"
#define OWN "CT_TEST_OWN_DEFAULTS"
#define SETTING "CT_TEST_LAUNCH_SETTING"

struct fake {
    double a_factor; /* side A's time over B's at the rule's sizes (>= 8 KiB) */
    int drop;        /* a launch of side A prints this many sizes fewer */
    bool setting;    /* the section has a launch setting, on both sides */
    int with_setting; /* launches that had it */
    int launches, keep_rules_a, keep_rules_b, own_on_b, own_on_a, judged, again, failed;
    int warm200, warm3; /* launches of each warmup */
    char line[300];     /* the failure said */
    int nsz_judged;
};

static const char *arg(int argc, char **argv, const char *name)
{
    for (int i = 0; i + 1 < argc; i++)
        if (!strcmp(argv[i], name))
            return argv[i + 1];
    return NULL;
}

static int job(const void *ctx, int nranks, int argc, char **argv, char **out, bool *said)
{
    struct fake *f = (struct fake *)ctx;
    bool a = getenv(LOADER) != NULL, keep = !strcmp(argv[argc - 1], "--keep-rules");
    cr_assert_eq(nranks, 2);
    cr_assert_str_eq(argv[0], "run");
    cr_assert_str_eq(arg(argc, argv, "--lib"), "ompi");
    f->keep_rules_a += a && keep;
    f->keep_rules_b += !a && keep;
    f->own_on_b += !a && getenv(OWN) && !strcmp(getenv(OWN), "0");
    f->own_on_a += a && getenv(OWN) != NULL;
    f->with_setting += getenv(SETTING) && !strcmp(getenv(SETTING), "1");
    const char *w = arg(argc, argv, "-w");
    f->warm200 += !strcmp(w, "200");
    f->warm3 += !strcmp(w, "3");
    char sizes[4096];
    snprintf(sizes, sizeof sizes, "%s", arg(argc, argv, "--sizes"));
    size_t cap = 8192, off = 0;
    char *t = malloc(cap);
    off += (size_t)snprintf(t, cap, "#  size count type redop root algo time algbw busbw #wrong\n");
    int n = 0, launch = f->launches++;
    for (char *s = strtok(sizes, ","); s; s = strtok(NULL, ",")) {
        unsigned long long b = strtoull(s, NULL, 10);
        cr_assert(w && (b <= CT_VERIFY_WARM_MAX) == !strcmp(w, "200"), "%llu after -w %s", b, w);
        double us = 1.0 + (double)b / 1000.0, wobble = 1 + 0.01 * (launch % 3);
        if (a && b >= 8192)
            us *= f->a_factor;
        if (a && n++ < f->drop)
            continue;
        off +=
            (size_t)snprintf(t + off, cap - off, "%12llu %10llu float32 sum -1 ring %9.3f 0 0 0\n",
                             b, b / 4, us * wobble);
    }
    *out = t;
    *said = false;
    return 0;
}

static int failed(const void *ctx, int rc, const char *line)
{
    struct fake *f = (struct fake *)ctx;
    f->failed++;
    snprintf(f->line, sizeof f->line, "%s", line);
    return rc ? rc : 1;
}

static void judged(const void *ctx, const struct ct_verify_judged *j)
{
    struct fake *f = (struct fake *)ctx;
    f->judged++;
    f->nsz_judged = j->nsz;
}

static void again(const void *ctx, const uint64_t *sz, const struct ct_paired_row *w,
                  const struct ct_paired_redo *r, bool groups, const char *where)
{
    (void)sz, (void)w, (void)r, (void)groups, (void)where;
    ((struct fake *)ctx)->again++;
}

/* AllReduce on 2 ranks swept at 1 KiB-1 MiB x4: Open MPI's own choice below 8 KiB, a rule
 * (id 3) from there; verified at the six sizes and the two ranges' midpoints. *nsz, *nsmall:
 * how many sizes, and how many up to CT_VERIFY_WARM_MAX (a launch of their own). */
static int verify(struct fake *f, bool *slow, bool *nogain, double *geo, int *nsz, int *nsmall)
{
    struct ct_rule rules[2] = {{.min_bytes = 0, .max_bytes = 8192, .id = 0},
                               {.min_bytes = 8192, .max_bytes = CT_BYTES_INF, .id = 3}};
    snprintf(rules[0].algo, sizeof rules[0].algo, "default");
    snprintf(rules[1].algo, sizeof rules[1].algo, "ring");
    struct ct_ruleset s = {.coll = CT_ALLREDUCE,
                           .nnodes = 1,
                           .ranks_per_node = 2,
                           .nranks = 2,
                           .dtype = CT_FLOAT32,
                           .op = CT_SUM,
                           .rules = rules,
                           .nrules = 2};
    struct ct_config c;
    ct_config_init(&c);
    c.sweep.minbytes = 1024;
    c.sweep.maxbytes = 1 << 20;
    c.sweep.stepfactor = 4;
    struct ct_libmod m = {.name = "ompi", .title = "Open MPI", .own_name = OWN, .own_value = "0"};
    struct ct_loader ld = {.n = 1};
    snprintf(ld.name[0], sizeof ld.name[0], LOADER);
    snprintf(ld.value[0], sizeof ld.value[0], "/tmp/rules");
    struct ct_verify_hooks h = {
        .ctx = f, .job = job, .failed = failed, .judged = judged, .again = again};
    struct ct_librules l = {.nenv = 1};
    snprintf(l.env[0].name, sizeof l.env[0].name, SETTING);
    snprintf(l.env[0].value, sizeof l.env[0].value, "1");
    struct ct_verify_side side = {
        .m = &m, .h = &h, .ld = &ld, .timeout = "60", .env = f->setting ? &l : NULL};
    uint64_t sz[CT_VERIFY_MAXSZ];
    *nsz = ct_paired_sizes(&c.sweep, &s, sz, NULL, CT_VERIFY_MAXSZ);
    for (*nsmall = 0; *nsmall < *nsz && sz[*nsmall] <= CT_VERIFY_WARM_MAX;)
        ++*nsmall;
    struct ct_paired_cut cut[2] = {{0}};
    int code = ct_libverify_set(&side, &c, &s, slow, nogain, cut, geo);
    /* what the last launch set for its side is not left to the next pass */
    cr_assert_null(getenv(LOADER), "the loader variable left set");
    cr_assert_null(getenv(SETTING), "the launch setting left set");
    unsetenv(OWN);
    return code;
}

Test(libverify, a_rule_slower_at_its_sizes_is_judged_slower)
{
    struct fake f = {.a_factor = 1.5};
    bool slow[2] = {false}, nogain[2] = {false};
    double geo = -1;
    int nsz, nsmall;
    cr_assert_eq(verify(&f, slow, nogain, &geo, &nsz, &nsmall), CT_VERIFY_SLOWER);
    cr_assert(!slow[0] && slow[1], "the rule, not Open MPI's own choice: %d %d", slow[0], slow[1]);
    cr_assert_eq(geo, 0, "a set found slower is not verified: %g", geo);
    cr_assert_eq(f.judged, 1);
    cr_assert(nsz > 6 && nsmall < nsz, "the 6 swept sizes and the midpoints: %d", nsz);
    cr_assert_eq(f.nsz_judged, nsz, "%d sizes judged of %d", f.nsz_judged, nsz);
    cr_assert_eq(f.again, 1, "the sizes found slower measured again in fresh launches");
    cr_assert_eq(f.failed, 0);
}

Test(libverify, a_faster_rule_is_kept_and_each_side_runs_as_verify_means)
{
    struct fake f = {.a_factor = 0.6, .setting = true};
    bool slow[2] = {false}, nogain[2] = {false};
    double geo = -1;
    int nsz, nsmall;
    cr_assert_eq(verify(&f, slow, nogain, &geo, &nsz, &nsmall), 0);
    cr_assert(!slow[1] && !nogain[1], "a 1.67x gain: slow %d nogain %d", slow[1], nogain[1]);
    cr_assert(geo > 0.6 && geo < 1, "the swept sizes' geomean: %g", geo);
    cr_assert_eq(f.again, 0, "no size slower: nothing measured again");
    cr_assert(f.launches >= 2 * 2 * CT_PAIRED_MIN, "%d launches", f.launches);
    cr_assert_eq(f.warm200, f.warm3, "each side's run split at 256 KiB: %d, %d", f.warm200,
                 f.warm3);
    cr_assert(f.keep_rules_a > 0 && f.keep_rules_b == 0, "--keep-rules on A only: %d, %d",
              f.keep_rules_a, f.keep_rules_b);
    cr_assert(f.own_on_b == f.launches / 2 && f.own_on_a == 0,
              "B on the library's own defaults, A not: %d of %d, %d", f.own_on_b, f.launches,
              f.own_on_a);
    cr_assert_eq(f.with_setting, f.launches, "the rules judged with the setting on both sides");
}

Test(libverify, a_run_that_misses_a_size_is_one_failure_said)
{
    struct fake f = {.a_factor = 1, .drop = 1};
    bool slow[2] = {false}, nogain[2] = {false};
    double geo = -1;
    int nsz, nsmall;
    cr_assert_eq(verify(&f, slow, nogain, &geo, &nsz, &nsmall), 1);
    cr_assert_eq(f.failed, 1);
    char want[200]; /* the first launch: side A's sizes up to 256 KiB, one missing */
    snprintf(want, sizeof want,
             "--verify: a run with Open MPI and the exported file failed (exit 0, %d of %d sizes)",
             nsmall - 1, nsmall);
    cr_assert_str_eq(f.line, want);
    cr_assert_eq(f.judged, 0, "nothing judged on a failed measure");
}
