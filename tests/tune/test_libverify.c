/* SPDX-License-Identifier: MIT */
/*
 * One rule set of a library's section verified against its defaults (tune/libverify.c), its
 * launches answered by a job hook that reads the side from the environment verify sets (the
 * export's loader variable on side A, the library's own-defaults setting on B) and prints the
 * table `colltune run --lib` prints: a rule slower at its sizes is judged slower (exit 3's
 * verdict) and one faster kept; the run's sizes, warmup split, --keep-rules and launch
 * settings reach the launcher as verify means them, and nothing a launch set for its side is
 * left in the environment after it; a run that misses a size is a failure said once. Then a
 * whole CONFIG verified through the hooks (tune/libverify_config.c): the passes in order and the
 * copy each verdict writes. The real libraries' verify runs in tests/cli (t3100, t3105, t3110).
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend/libmod.h"
#include "output/config.h"
#include "tune/libverify.h"
#include "verify_fixture.h"

#define LOADER "CT_TEST_LOADER_RULES"
#define OWN "CT_TEST_OWN_DEFAULTS"
#define SETTING "CT_TEST_LAUNCH_SETTING"
#define SETTING2 "CT_TEST_LAUNCH_SETTING2"
#define SETTING3 "CT_TEST_LAUNCH_SETTING3"
#define SETTING4 "CT_TEST_LAUNCH_SETTING4"

struct fake {
    double a_factor; /* side A's time over B's at the rule's sizes (>= 8 KiB) */
    int drop;        /* a launch of side A prints this many sizes fewer */
    const char *bad; /* side A prints this for its first size's time ("nan", "0.000") */
    bool setting;    /* the section has a launch setting, on both sides */
    int with_setting; /* launches that had it */
    int launches, keep_rules_a, keep_rules_b, own_on_b, own_on_a, judged, again, failed;
    int warm200, warm3; /* launches of each warmup */
    char line[300];     /* the failure said */
    int nsz_judged;
    double tell_judged; /* what the rules' measure could tell, as its table says */
    double tells[16];   /* and the settings' measures, their tables in order */
    int ntells, tells_before_rules;
    bool noise_grows; /* launches' wobble wider every 6 launches (else the same in each measure) */
    /* a whole CONFIG's verify: the settings' factors on every size where set (1: none) */
    double set_factor, set2_factor, set3_factor, set4_factor;
    bool unchanged; /* the export changes nothing */
    int exports[3], unexports, ends[CT_VEND_NO_SET + 1];
    struct ct_config *written; /* the copy the last end wrote (a copy of it) */
    struct ct_verify_end last; /* and what it said */
    int nwritten[CT_JUDGED_N];
    bool in_dir;      /* the copy written as a file (in a directory of the test's own) */
    int reads;        /* --reverify: the copies read */
    char warned[400]; /* the last warning */
    double own_factor;   /* side A's time over B's below 8 KiB (Open MPI's own choice there) */
    double whole_factor; /* side A's after the copy's whole export was made */
    bool premark;        /* CONFIG's set carries an earlier verify's mark */
    int copy_fail_at;    /* the copy that fails (1: the first; 0: none) */
    int copies;
    bool section_gone;                  /* --reverify reads a copy without the section */
    int fixed_env_marked;               /* FIXED ends with the settings marked */
    char end_path[64], export_path[64]; /* the CONFIG the last end and export were of */
    int pairs;                          /* --pairs N (0: none) */
    int least_pairs, pr_min;            /* the fewest pairs at a size judged, the measure's own */
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
        double us = 1.0 + (double)b / 1000.0,
               wobble = 1 + 0.01 * (launch % 3) * (f->noise_grows ? 1 + launch / 6 : 1);
        if (a && b >= 8192)
            us *= f->a_factor;
        if (a && b < 8192 && f->own_factor > 0)
            us *= f->own_factor;
        if (a && f->exports[CT_VEXP_COPY] && f->whole_factor > 0)
            us *= f->whole_factor;
        us *= getenv(SETTING) && f->set_factor > 0 ? f->set_factor : 1;
        us *= getenv(SETTING2) && f->set2_factor > 0 ? f->set2_factor : 1;
        us *= getenv(SETTING3) && f->set3_factor > 0 ? f->set3_factor : 1;
        us *= getenv(SETTING4) && f->set4_factor > 0 ? f->set4_factor : 1;
        if (a && n++ < f->drop)
            continue;
        if (a && f->bad && n == 1) {
            off +=
                (size_t)snprintf(t + off, cap - off, "%12llu %10llu float32 sum -1 ring %s 0 0 0\n",
                                 b, b / 4, f->bad);
            continue;
        }
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
    f->pr_min = j->pr->min;
    if (j->gain) /* the rules' judgement (the settings' show their table alone) */
        f->tell_judged = j->t->tell, f->tells_before_rules = f->ntells;
    else if (f->ntells < 16)
        f->tells[f->ntells++] = j->t->tell;
    for (int k = 0; k < j->nsz; k++)
        if (!f->least_pairs || j->w[k].n < f->least_pairs)
            f->least_pairs = j->w[k].n;
}

static void again(const void *ctx, const uint64_t *sz, const struct ct_paired_row *w,
                  const struct ct_paired_redo *r, bool groups, const char *where)
{
    (void)sz, (void)w, (void)r, (void)groups, (void)where;
    ((struct fake *)ctx)->again++;
}

/* One rule set verified (verify_fixture.h: Open MPI's own choice below 8 KiB, a rule, id 3,
 * from there); at the six sizes and the two ranges' midpoints. *nsz, *nsmall: how many sizes,
 * and how many up to CT_VERIFY_WARM_MAX (a launch of their own). */
static int verify(struct fake *f, bool *slow, bool *nogain, double *geo, int *nsz, int *nsmall)
{
    struct ct_rule rules[2];
    struct ct_ruleset s = verify_set_of(rules, 3, "ring");
    struct ct_config c;
    verify_config_of(&c);
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
    int code = ct_libverify_set(&side, &c, &s, slow, nogain, cut, geo, NULL);
    /* what the last launch set for its side is not left to the next pass */
    cr_assert_null(getenv(LOADER), "the loader variable left set");
    cr_assert_null(getenv(SETTING), "the launch setting left set");
    unsetenv(OWN);
    return code;
}

/* A mark's tell over its collectives: their median (the mean of the middle two where even), none
 * without any */
Test(libverify, a_marks_tell_is_the_median_of_its_collectives)
{
    double odd[] = {1.4, 1.1, 1.2}, even[] = {1.5, 1.1, 1.3, 1.2};
    cr_assert_float_eq(ct_libverify_tell_median(odd, 3), 1.2, 1e-12);
    cr_assert_float_eq(ct_libverify_tell_median(even, 4), 1.25, 1e-12);
    cr_assert_eq(ct_libverify_tell_median(even, 0), 0);
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
    /* a time no ratio can take (0.00 is what %.2f prints under 5 ns) is a size missing too,
     * not a size found fine */
    static const char *const bad[] = {"nan", "inf", "0.000", "-1.5"};
    for (int i = 0; i < 4; i++) {
        struct fake g = {.a_factor = 1, .bad = bad[i]};
        cr_assert_eq(verify(&g, slow, nogain, &geo, &nsz, &nsmall), 1, "%s", bad[i]);
        cr_assert_eq(g.failed, 1, "%s", bad[i]);
        cr_assert(strstr(g.line, "failed (exit 0,"), "%s: %s", bad[i], g.line);
    }
}

/* A whole CONFIG: the same set, with launch settings (SETTING=1, and SETTING2=1 where nenv is
 * 2), verified through the file hooks below; none start anything but the job hook. */
static struct ct_config *config_dup(const struct ct_config *c)
{
    struct ct_config *d = calloc(1, sizeof *d);
    *d = *c;
    d->sets = NULL, d->nsets = 0;
    d->libs = calloc((size_t)c->nlibs, sizeof *d->libs);
    for (int l = 0; l < c->nlibs; l++) {
        d->libs[l] = c->libs[l];
        d->libs[l].sets = calloc((size_t)c->libs[l].nsets, sizeof *d->libs[l].sets);
        for (int i = 0; i < c->libs[l].nsets; i++)
            ct_ruleset_copy(&d->libs[l].sets[i], &c->libs[l].sets[i]);
    }
    return d;
}

static void release(struct ct_config *c)
{
    if (c)
        ct_config_release(c);
    free(c);
}

static struct ct_config *copy(const void *ctx, const struct ct_config *c)
{
    struct fake *f = (struct fake *)ctx;
    return ++f->copies == f->copy_fail_at ? NULL : config_dup(c);
}

static struct ct_loader loader = {.n = 1, .name = {LOADER}, .value = {"/tmp/rules"}};

static int export(const void *ctx, const char *path, const struct ct_config *c,
                  enum ct_verify_export_kind kind, struct ct_verify_file *x)
{
    struct fake *f = (struct fake *)ctx;
    (void)c;
    f->exports[kind]++;
    snprintf(f->export_path, sizeof f->export_path, "%s", path);
    *x = (struct ct_verify_file){.ld = f->unchanged ? NULL : &loader, .unchanged = f->unchanged};
    return 0;
}

static void unexport(const void *ctx, struct ct_verify_file *x)
{
    ((struct fake *)ctx)->unexports++;
    memset(x, 0, sizeof *x);
}

static const char *elsewhere(const void *ctx, const struct ct_ruleset *s)
{
    (void)ctx;
    return s->nranks == 2 ? NULL : "another shape";
}

static void apply(const void *ctx, struct ct_config *c, const char *lib, int i,
                  const struct ct_ruleset *s, const bool *slow, const bool *nogain,
                  const struct ct_paired_cut *cut, int n[CT_JUDGED_N])
{
    (void)ctx;
    ct_config_lib_judged(c, lib, i, s, slow, nogain, cut, n);
}

static int end(const void *ctx, const char *path, const struct ct_verify_end *w, int code)
{
    struct fake *f = (struct fake *)ctx;
    char out[64];
    ct_verify_copy_path(path, out, sizeof out);
    cr_assert_str_eq(out, "config.verified.json");
    if (f->in_dir && w->fixed) { /* a copy made, for --reverify's stat */
        FILE *fp = fopen(out, "w");
        cr_assert_not_null(fp);
        fprintf(fp, "%d\n", f->ends[w->kind]);
        fclose(fp);
    }
    f->ends[w->kind]++;
    f->last = *w;
    f->fixed_env_marked += w->kind == CT_VEND_FIXED && w->env_marked;
    snprintf(f->end_path, sizeof f->end_path, "%s", path);
    if (w->fixed) {
        release(f->written);
        f->written = config_dup(w->fixed);
    }
    if (w->n)
        memcpy(f->nwritten, w->n, sizeof f->nwritten);
    return code;
}

static struct ct_config *read_copy(const void *ctx, const char *path, int *code)
{
    struct fake *f = (struct fake *)ctx;
    (void)code;
    cr_assert_str_eq(path, "config.verified.json");
    f->reads++;
    struct ct_config *r = config_dup(f->written);
    if (f->section_gone)
        ct_config_lib_drop(r, "ompi");
    return r;
}

static void quiet(const void *ctx, const char *text)
{
    (void)ctx, (void)text;
}

static void warned(const void *ctx, const char *text)
{
    snprintf(((struct fake *)ctx)->warned, sizeof((struct fake *)ctx)->warned, "%s", text);
}

/* CONFIG as verify_config builds it: the set of verify() with nenv launch settings */
static int verify_config(struct fake *f, int nenv, unsigned colls, bool each,
                         struct ct_verify_did *did, int reverify)
{
    struct ct_config c;
    verify_config_of(&c);
    c.libs = calloc(1, sizeof *c.libs);
    c.nlibs = 1;
    struct ct_librules *l = &c.libs[0];
    snprintf(l->library, sizeof l->library, "ompi");
    snprintf(l->name, sizeof l->name, "Open MPI");
    snprintf(l->version, sizeof l->version, "4.1.4");
    l->sets = calloc(1, sizeof *l->sets);
    l->nsets = 1;
    l->sets[0] = verify_set_of(calloc(2, sizeof(struct ct_rule)), 3, "ring");
    if (f->premark)
        ct_config_lib_verified(&c, "ompi", 0, 0.9, 0);
    const char *names[] = {SETTING, SETTING2, SETTING3, SETTING4};
    for (l->nenv = 0; l->nenv < nenv; l->nenv++) {
        snprintf(l->env[l->nenv].name, sizeof l->env[0].name, "%s", names[l->nenv]);
        snprintf(l->env[l->nenv].value, sizeof l->env[0].value, "1");
    }
    struct ct_libmod m = {.name = "ompi", .title = "Open MPI", .own_name = OWN, .own_value = "0"};
    struct ct_verify_hooks h = {.ctx = f,
                                .job = job,
                                .failed = failed,
                                .judged = judged,
                                .say = quiet,
                                .warn = warned,
                                .again = again};
    struct ct_verify_files files = {.ctx = f,
                                    .export = export,
                                    .unexport = unexport,
                                    .elsewhere = elsewhere,
                                    .copy = copy,
                                    .apply = apply,
                                    .end = end,
                                    .read = read_copy};
    struct ct_libverify_in in = {.h = &h,
                                 .f = &files,
                                 .m = &m,
                                 .path = "config.json",
                                 .colls = colls,
                                 .each_setting = each,
                                 .timeout_s = 60,
                                 .pairs = f->pairs};
    int code =
        reverify ? ct_libverify_rounds(&in, reverify, &c) : ct_libverify_config(&in, &c, did);
    cr_assert_null(getenv(LOADER), "the loader variable left set");
    cr_assert_null(getenv(SETTING), "a launch setting left set");
    cr_assert_null(getenv(SETTING2), "a launch setting left set");
    cr_assert_null(getenv(SETTING3), "a launch setting left set");
    cr_assert_null(getenv(SETTING4), "a launch setting left set");
    cr_assert_eq(f->unexports, f->exports[0] + f->exports[1] + f->exports[2],
                 "each export released");
    unsetenv(OWN);
    ct_config_release(&c);
    return code;
}

static const struct ct_librules *written(const struct fake *f)
{
    cr_assert_not_null(f->written, "a copy written");
    return ct_config_lib(f->written, "ompi");
}

Test(libverify_config, a_faster_rule_marks_the_set_verified_in_the_copy)
{
    struct fake f = {.a_factor = 0.6};
    struct ct_verify_did did;
    cr_assert_eq(verify_config(&f, 0, CT_COLLS_ALL, false, &did, 0), 0);
    cr_assert_eq(f.ends[CT_VEND_FIXED], 1);
    cr_assert_eq(f.last.nstamped, 1, "the set marked verified");
    cr_assert(written(&f)->sets[0].verified.geomean > 0.6 &&
                  written(&f)->sets[0].verified.geomean < 1,
              "its geomean: %g", written(&f)->sets[0].verified.geomean);
    /* and what the measure could tell: 1.03 over the ratio's top at the tuned sizes, their
     * median (ct_paired_tell), at least 1.03 */
    cr_assert(f.tell_judged > 1.03 && f.tell_judged < 1.5, "what it could tell: %g", f.tell_judged);
    cr_assert_eq(written(&f)->sets[0].verified.tell, f.tell_judged,
                 "what it could tell, as its table said: %g", written(&f)->sets[0].verified.tell);
    cr_assert_eq(written(&f)->sets[0].rules[1].id, 3, "the rule kept");
    cr_assert(!did.tried && !did.dropped && !did.whole_slow && !did.own_slow);
    release(f.written);
}

Test(libverify_config, pairs_asked_for_run_at_every_size_of_every_pass)
{
    for (int pairs = 0; pairs <= 12; pairs += 12) {
        struct fake f = {.a_factor = 0.6, .set_factor = 0.8, .pairs = pairs};
        struct ct_verify_did did;
        cr_assert_eq(verify_config(&f, 1, CT_COLLS_ALL, false, &did, 0), 0);
        int want = pairs ? pairs : CT_PAIRED_MIN;
        cr_assert(f.judged >= 3,
                  "the settings (twice: a gain shown again), the rules, the "
                  "whole export: %d tables",
                  f.judged);
        cr_assert(f.least_pairs == want && f.pr_min == want, "%d pairs: %d, %d", pairs,
                  f.least_pairs, f.pr_min);
        cr_assert(f.launches >= f.judged * 2 * want, "%d launches", f.launches);
        release(f.written);
    }
}

Test(libverify_config, a_slower_rule_is_set_back_in_the_copy_and_said)
{
    struct fake f = {.a_factor = 1.5};
    struct ct_verify_did did;
    cr_assert_eq(verify_config(&f, 0, CT_COLLS_ALL, false, &did, 0), CT_VERIFY_SLOWER);
    cr_assert_eq(f.ends[CT_VEND_SLOWER], 1, "exit 3 said");
    cr_assert_eq(f.ends[CT_VEND_FIXED], 1, "the copy written");
    cr_assert_eq(f.nwritten[CT_JUDGED_SLOW], 1);
    cr_assert_eq(written(&f)->sets[0].rules[written(&f)->sets[0].nrules - 1].id, 0,
                 "the rule set back to Open MPI's own choice");
    cr_assert_eq(written(&f)->sets[0].verified.at[0], 0, "not marked");
    release(f.written);
}

/* Its one rule no faster than the defaults: set back, the set then at Open MPI's own choice
 * everywhere, which changes nothing: not marked, and the copy said to have nothing to export;
 * beside launch settings that gain, the copy still sets them */
Test(libverify_config, a_rule_without_gain_set_back_leaves_nothing_to_export_and_no_mark)
{
    for (int nenv = 0; nenv <= 1; nenv++) {
        struct fake f = {.a_factor = 1, .set_factor = 0.8};
        struct ct_verify_did did;
        cr_assert_eq(verify_config(&f, nenv, CT_COLLS_ALL, false, &did, 0), 0);
        cr_assert_eq(f.ends[CT_VEND_FIXED], 1, "the copy written");
        cr_assert_eq(f.nwritten[CT_JUDGED_NOGAIN], 1, "no gain shown");
        cr_assert(ct_ruleset_keeps_own(&written(&f)->sets[0]), "set back");
        cr_assert_str_eq(written(&f)->sets[0].rules[1].set_back, CT_SET_BACK_NOGAIN, "and why");
        cr_assert_eq(f.last.nstamped, 0, "%d settings: no set marked", nenv);
        cr_assert_eq(written(&f)->sets[0].verified.at[0], 0, "%d settings: not marked", nenv);
        cr_assert_eq(ct_librules_keeps_own(written(&f)), !nenv, "%d settings: nothing to export",
                     nenv);
        release(f.written);
    }
}

Test(libverify_config, settings_slower_alone_leave_the_rules_unjudged)
{
    struct fake f = {.a_factor = 0.6, .set_factor = 1.5};
    struct ct_verify_did did;
    cr_assert_eq(verify_config(&f, 1, CT_COLLS_ALL, false, &did, 0), CT_VERIFY_SLOWER);
    cr_assert_eq(f.ends[CT_VEND_ENV_DROPPED], 1, "the copy without its settings");
    cr_assert(f.last.slow && f.last.nenv == 1);
    cr_assert_eq(written(&f)->nenv, 0);
    cr_assert_eq(f.judged, 1, "the settings' table only: the rules not judged");
    cr_assert_eq(f.ends[CT_VEND_FIXED] + f.ends[CT_VEND_SLOWER], 0);
    release(f.written);
}

Test(libverify_config, settings_and_rules_that_hold_are_measured_whole_and_marked)
{
    struct fake f = {.a_factor = 0.6, .set_factor = 0.8, .noise_grows = true};
    struct ct_verify_did did;
    cr_assert_eq(verify_config(&f, 1, CT_COLLS_ALL, false, &did, 0), 0);
    cr_assert_eq(f.exports[CT_VEXP_COPY], 1, "the copy's whole export measured");
    cr_assert_eq(f.ends[CT_VEND_FIXED], 1);
    cr_assert(f.last.env_marked && f.last.nstamped == 1);
    const struct ct_librules *l = written(&f);
    cr_assert(l->env_verified.geomean > 0.7 && l->env_verified.geomean < 0.9, "%g",
              l->env_verified.geomean);
    cr_assert(l->whole_verified.geomean > 0.4 && l->whole_verified.geomean < 0.9, "%g",
              l->whole_verified.geomean);
    /* what each mark's measure could tell: of one collective, the last measure of each pass
     * (its verdict's), as its table said */
    cr_assert(f.tells_before_rules == 2 && f.ntells == 4, "settings measured twice a pass: %d, %d",
              f.tells_before_rules, f.ntells);
    cr_assert(l->env_verified.tell > 1.03 && l->env_verified.tell < 1.5, "%g",
              l->env_verified.tell);
    cr_assert_eq(l->env_verified.tell, f.tells[1], "the settings' second measure: %g, %g",
                 l->env_verified.tell, f.tells[1]);
    cr_assert_eq(l->whole_verified.tell, f.tells[3], "the whole export's second: %g, %g",
                 l->whole_verified.tell, f.tells[3]);
    release(f.written);
}

Test(libverify_config, each_setting_leaves_out_the_one_that_costs_beside_the_other)
{
    /* together 0.7 x 1.05: kept; beside the first, the second is slower: left out where the
     * first holds alone */
    struct fake f = {.a_factor = 0.6, .set_factor = 0.7, .set2_factor = 1.05, .noise_grows = true};
    struct ct_verify_did did;
    cr_assert_eq(verify_config(&f, 2, CT_COLLS_ALL, true, &did, 0), 0);
    cr_assert(did.dropped, "a setting left out");
    cr_assert(f.ends[CT_VEND_FIXED] == 1 && f.last.dropped);
    cr_assert_eq(f.exports[CT_VEXP_LESS_ONE], 1, "CONFIG less it exported again");
    const struct ct_librules *l = written(&f);
    cr_assert_eq(l->nenv, 1);
    cr_assert_str_eq(l->env[0].name, SETTING, "the one that gains kept");
    /* marked with what the judgement of the one kept alone could tell (its last measure, the
     * last settings' table before the rules') */
    cr_assert(f.tells_before_rules > 2 && f.ntells < 16, "%d, %d", f.tells_before_rules, f.ntells);
    cr_assert(l->env_verified.at[0] && l->env_verified.tell > 1.03, "%g", l->env_verified.tell);
    cr_assert_eq(l->env_verified.tell, f.tells[f.tells_before_rules - 1], "%g, %g",
                 l->env_verified.tell, f.tells[f.tells_before_rules - 1]);
    release(f.written);
}

Test(libverify_config, each_setting_keeps_the_one_that_holds_alone_where_two_cost)
{
    /* together 0.7 x 1.6 x 1.6, and each pair with a 1.6 in it: slower; alone, the first
     * holds (0.7) and the other two do not: it is kept alone */
    struct fake f = {.a_factor = 0.6, .set_factor = 0.7, .set2_factor = 1.6, .set3_factor = 1.6};
    struct ct_verify_did did;
    int code = verify_config(&f, 3, CT_COLLS_ALL, true, &did, 0);
    cr_assert_eq(code, CT_VERIFY_SLOWER, "the settings together were slower: %d", code);
    cr_assert(did.dropped, "settings left out");
    cr_assert_eq(f.exports[CT_VEXP_LESS_ONE], 1, "CONFIG with it alone exported again");
    const struct ct_librules *l = written(&f);
    cr_assert_eq(l->nenv, 1);
    cr_assert_str_eq(l->env[0].name, SETTING, "the one that gains, kept alone");
    cr_assert(l->env_verified.at[0] && l->env_verified.tell > 1.03, "marked, with its tell");
    cr_assert(l->env_verified.geomean > 0.65 && l->env_verified.geomean < 0.75,
              "with its figure alone (0.7), not the others': %g", l->env_verified.geomean);
    cr_assert(strstr(f.warned, "all but " SETTING "=1 left out of the copy: the 3 settings "
                               "together did not hold, nor any 2 of them, it alone did"),
              "%s", f.warned);
    release(f.written);
}

Test(libverify_config, each_setting_keeps_the_lowest_of_those_that_hold_alone)
{
    /* four: every three of them carry a 3x, so none holds with one left out; alone, the
     * second (0.8) and the third (0.7) hold: the third, the lower, is kept alone */
    struct fake f = {
        .a_factor = 0.6, .set_factor = 3, .set2_factor = 0.8, .set3_factor = 0.7, .set4_factor = 3};
    struct ct_verify_did did;
    cr_assert_eq(verify_config(&f, 4, CT_COLLS_ALL, true, &did, 0), CT_VERIFY_SLOWER);
    const struct ct_librules *l = written(&f);
    cr_assert(did.dropped && l->nenv == 1, "%d", l->nenv);
    cr_assert_str_eq(l->env[0].name, SETTING3, "the lower of the two that hold alone");
    cr_assert(l->env_verified.geomean > 0.65 && l->env_verified.geomean < 0.75, "%g",
              l->env_verified.geomean);
    release(f.written);
}

Test(libverify_config, each_setting_keeps_none_where_none_holds_alone)
{
    /* each of the three slower on its own: none kept, alone or with others */
    struct fake f = {.a_factor = 0.6, .set_factor = 1.6, .set2_factor = 1.6, .set3_factor = 1.6};
    struct ct_verify_did did;
    cr_assert_eq(verify_config(&f, 3, CT_COLLS_ALL, true, &did, 0), CT_VERIFY_SLOWER);
    cr_assert(!did.dropped && f.last.slow && f.last.nenv == 3, "all left out, as judged together");
    cr_assert_eq(written(&f)->nenv, 0);
    release(f.written);
}

Test(libverify_config, nothing_asked_here_and_nothing_to_export)
{
    struct fake f = {.a_factor = 1};
    struct ct_verify_did did;
    cr_assert_eq(verify_config(&f, 0, CT_COLL_BIT(CT_ALLTOALL), false, &did, 0), CT_VERIFY_USAGE);
    cr_assert_eq(f.ends[CT_VEND_NO_SET], 1);
    cr_assert_eq(f.launches, 0);
    struct fake g = {.a_factor = 1, .unchanged = true};
    cr_assert_eq(verify_config(&g, 0, CT_COLLS_ALL, false, &did, 0), 0);
    cr_assert_eq(g.launches, 0, "a file that changes nothing: nothing run");
    cr_assert_eq(g.ends[CT_VEND_FIXED] + g.ends[CT_VEND_NO_SET], 0);
}

/* CONFIG with two settings verified with --each-setting --reverify 2, the copy written as a
 * file in a directory of the test's own (--reverify sees a round's copy by its file) */
static int reverify_in_dir(struct fake *f)
{
    char dir[] = "/tmp/ct-test-reverify-XXXXXX", cwd[4096];
    struct ct_verify_did did;
    cr_assert_not_null(mkdtemp(dir));
    cr_assert_not_null(getcwd(cwd, sizeof cwd));
    cr_assert_eq(chdir(dir), 0);
    f->in_dir = true;
    int code = verify_config(f, 2, CT_COLLS_ALL, true, &did, 2);
    unlink("config.verified.json");
    cr_assert_eq(chdir(cwd), 0);
    rmdir(dir);
    return code;
}

Test(libverify_config, reverify_verifies_the_copy_a_setting_left_out_of)
{
    struct fake f = {.a_factor = 0.6, .set_factor = 0.7, .set2_factor = 1.05};
    int code = reverify_in_dir(&f);
    cr_assert_eq(code, 0);
    cr_assert_eq(f.reads, 1, "the copy read once");
    cr_assert_eq(f.exports[CT_VEXP_CONFIG], 2, "two rounds: CONFIG, then its copy");
    cr_assert_eq(f.exports[CT_VEXP_LESS_ONE], 1, "the second round left nothing out");
    cr_assert_str_eq(f.warned, "--reverify: 2 rounds of verify: config.json exit 0, the last "
                               "(config.verified.json) exit 0");
    cr_assert_eq(written(&f)->nenv, 1);
    cr_assert(f.ends[CT_VEND_FIXED] == 2 && f.fixed_env_marked == 2,
              "each round's copy with its setting marked: %d of %d", f.fixed_env_marked,
              f.ends[CT_VEND_FIXED]);
    cr_assert_str_eq(f.export_path, "config.verified.json", "round 2 verifies the copy");
    cr_assert_str_eq(f.end_path, "config.verified.json");
    release(f.written);
}

Test(libverify_config, slower_only_at_the_librarys_own_sizes_clears_an_earlier_mark)
{
    struct fake f = {.a_factor = 0.6, .own_factor = 1.5, .premark = true};
    struct ct_verify_did did;
    cr_assert_eq(verify_config(&f, 0, CT_COLLS_ALL, false, &did, 0), CT_VERIFY_SLOWER);
    cr_assert(did.own_slow, "slower only where the file keeps Open MPI's own choice");
    cr_assert_eq(f.ends[CT_VEND_SLOWER], 1);
    cr_assert_eq(f.ends[CT_VEND_FIXED], 1, "the copy written: its mark cleared");
    cr_assert(f.last.nown == 1 && f.last.nunmarked == 1 && f.last.nstamped == 0);
    cr_assert_eq(written(&f)->sets[0].verified.at[0], 0);
    cr_assert_eq(written(&f)->sets[0].rules[1].id, 3, "no rule found slower: kept");
    release(f.written);
    struct fake g = {.a_factor = 0.6, .own_factor = 1.5};
    cr_assert_eq(verify_config(&g, 0, CT_COLLS_ALL, false, &did, 0), CT_VERIFY_SLOWER);
    cr_assert_eq(g.ends[CT_VEND_UNCHANGED], 1, "no mark to clear: nothing written");
    cr_assert_eq(g.ends[CT_VEND_FIXED], 0);
    release(g.written);
}

Test(libverify_config, the_whole_export_slower_though_each_held_leaves_no_mark)
{
    struct fake f = {.a_factor = 0.6, .set_factor = 0.8, .whole_factor = 2, .premark = true};
    struct ct_verify_did did;
    cr_assert_eq(verify_config(&f, 1, CT_COLLS_ALL, false, &did, 0), CT_VERIFY_SLOWER);
    cr_assert(did.whole_slow && !did.own_slow);
    cr_assert_eq(f.ends[CT_VEND_UNMARKED], 1);
    cr_assert_eq(f.ends[CT_VEND_FIXED] + f.ends[CT_VEND_SLOWER], 0, "said once, as unmarked");
    const struct ct_librules *l = written(&f);
    cr_assert(!l->sets[0].verified.at[0] && !l->env_verified.at[0] && !l->whole_verified.at[0],
              "no verified mark left");
    cr_assert_eq(l->nenv, 1, "the settings kept: each held");
    release(f.written);
}

Test(libverify_config, a_copy_that_cannot_be_made_is_a_failure_said)
{
    struct fake f = {.a_factor = 0.6, .set_factor = 0.8, .copy_fail_at = 1};
    struct ct_verify_did did;
    cr_assert_eq(verify_config(&f, 1, CT_COLLS_ALL, false, &did, 0), 1);
    cr_assert_str_eq(f.line, "--verify: cannot copy 'config.json'");
    cr_assert_eq(f.ends[CT_VEND_FIXED] + f.ends[CT_VEND_UNMARKED], 0, "nothing written");
    struct fake g = {.a_factor = 0.6, .copy_fail_at = 1}; /* the first set's verdict's copy */
    cr_assert_eq(verify_config(&g, 0, CT_COLLS_ALL, false, &did, 0), 1);
    cr_assert_str_eq(g.line, "--verify: cannot copy 'config.json'");
    cr_assert_eq(g.ends[CT_VEND_FIXED], 0, "nothing written");
}

Test(libverify_config, reverify_of_a_copy_without_the_section_fails_as_usage)
{
    struct fake f = {.a_factor = 0.6, .set_factor = 0.7, .set2_factor = 1.05, .section_gone = true};
    int code = reverify_in_dir(&f);
    cr_assert_eq(code, CT_VERIFY_USAGE);
    cr_assert_str_eq(f.line, "--verify: 'config.verified.json' has no measured Open MPI section "
                             "(colltune sweep --lib ompi)");
    cr_assert_str_eq(f.warned, "--reverify: 2 rounds of verify: config.json exit 0, the last "
                               "(config.verified.json) exit 2");
    release(f.written);
}
