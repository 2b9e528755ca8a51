/* SPDX-License-Identifier: MIT */
/*
 * The NCCL engine (backend/nccl.c). Here (any host): a missing libnccl and a host without a
 * usable GPU fail with one line and CT_EUNSUPP. Suite gpu (make test-gpu; SKIP with the
 * reason where no GPU is): one rank on GPU 0 through colltune's in-process bootstrap, results
 * exact for every collective x type x op, out of place and in place, and timings positive;
 * two ranks on two GPUs as threads (the ncclUniqueId broadcast), results exact.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

#include "algos/algo.h"
#include "backend/nccl.h"
#include "plugin/nccl_tuner_abi.h"

Test(nccl, missing_libnccl_is_one_line_naming_it)
{
    struct ct_err err = {0};
    setenv("COLLTUNE_LIBNCCL", "/nonexistent/libnccl.so.2", 1);
    cr_assert_eq(ct_nccl_probe(0, &err), CT_EUNSUPP);
    cr_expect(strstr(err.msg, "cannot load NCCL /nonexistent/libnccl.so.2"), "%s", err.msg);
    cr_expect_null(strchr(err.msg, '\n'));
    unsetenv("COLLTUNE_LIBNCCL");
}

Test(nccl, no_gpu_fails_cleanly)
{
    struct ct_err err = {0};
    int rc = ct_nccl_probe(0, &err);
    if (rc == 0)
        cr_skip_test("a GPU is present: the no-GPU path cannot be checked here");
    cr_expect_eq(rc, CT_EUNSUPP, "%s", err.msg);
    cr_expect_null(strchr(err.msg, '\n'), "%s", err.msg);
}

/* The sweep's forcing path, without NCCL: the plugin loaded as NCCL loads it (its path in
 * NCCL_TUNER_PLUGIN), then its cost table as NCCL would pass it. */
Test(nccl, tuner_force_reaches_the_loaded_plugin)
{
    struct ct_err err = {0};
    const char *path = CT_BUILD_DIR "/libnccl-tuner-colltune.so";
    unsetenv("NCCL_TUNER_PLUGIN");
    cr_expect_eq(ct_nccl_tuner_force("ring", "LL", 0, NULL, &err), CT_EUNSUPP);
    setenv("NCCL_TUNER_PLUGIN", path, 1);
    cr_expect_eq(ct_nccl_tuner_force("ring", "LL", 0, NULL, &err), CT_EUNSUPP);
    cr_expect(strstr(err.msg, "is not loaded"), "%s", err.msg);
    void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    cr_assert(lib, "%s", dlerror());
    const ncclTuner_v5_t *t = dlsym(lib, "ncclTunerPlugin_v5");
    cr_assert(t);
    void *ctx = NULL;
    unsetenv("COLLTUNE_CONFIG");
    cr_assert_eq(t->init(&ctx, 1, 8, 1, NULL, NULL, NULL), ncclSuccess);
    long misses = -1;
    cr_assert_eq(ct_nccl_tuner_force("tree", "LL128", 4, &misses, &err), 0, "%s", err.msg);
    cr_expect_eq(misses, 0);
    cr_expect_eq(ct_nccl_tuner_force("tree", "LL129", 4, NULL, &err), CT_EINVAL);
    float tab[NCCL_NUM_ALGORITHMS][NCCL_NUM_PROTOCOLS];
    for (int a = 0; a < NCCL_NUM_ALGORITHMS; a++)
        for (int p = 0; p < NCCL_NUM_PROTOCOLS; p++)
            tab[a][p] = 5.0f;
    int nch = 0;
    cr_assert_eq(t->getCollInfo(ctx, ncclFuncAllReduce, 1 << 20, 1, (float **)tab,
                                NCCL_NUM_ALGORITHMS, NCCL_NUM_PROTOCOLS, 0, &nch),
                 ncclSuccess);
    cr_expect_eq(tab[NCCL_ALGO_TREE][NCCL_PROTO_LL128], 0.0f);
    cr_expect_eq(tab[NCCL_ALGO_RING][NCCL_PROTO_SIMPLE], 5.0f);
    cr_expect_eq(nch, 4);
    cr_assert_eq(ct_nccl_tuner_force(NULL, NULL, 0, NULL, &err), 0, "%s", err.msg);
    tab[NCCL_ALGO_TREE][NCCL_PROTO_LL128] = 5.0f;
    nch = 0;
    t->getCollInfo(ctx, ncclFuncAllReduce, 1 << 20, 1, (float **)tab, NCCL_NUM_ALGORITHMS,
                   NCCL_NUM_PROTOCOLS, 0, &nch);
    cr_expect_eq(tab[NCCL_ALGO_TREE][NCCL_PROTO_LL128], 5.0f);
    cr_expect_eq(nch, 0);
    t->finalize(ctx);
    dlclose(lib);
    unsetenv("NCCL_TUNER_PLUGIN");
}

/* A sweep's rows: NCCL's own choice first, then every (algorithm, protocol) NCCL lets a tuner
 * select for the collective, named as the plugin reads them, with an id that names the pair. */
Test(nccl, rows_are_the_choices_a_tuner_selects)
{
    static const struct {
        enum ct_coll c;
        int n;
        const char *has, *hasnt;
    } want[] = {{CT_ALLREDUCE, 1 + 6 * 3, "nccl:nvls_tree/LL128", "nccl:pat/Simple"},
                {CT_ALLGATHER, 1 + 4 * 3, "nccl:pat/LL", "nccl:tree/LL"},
                {CT_REDUCESCATTER, 1 + 4 * 3, "nccl:collnet_direct/Simple", "nccl:nvls_tree/LL"},
                {CT_ALLTOALL, 1, "nccl:default", "nccl:ring/Simple"}};
    for (size_t k = 0; k < sizeof want / sizeof want[0]; k++) {
        struct ct_nccl_rows r;
        ct_nccl_rows(want[k].c, &r);
        cr_expect_eq(r.n, want[k].n, "%s: %d rows", ct_coll_name(want[k].c), r.n);
        cr_expect_str_eq(r.a[0].name, "nccl:default");
        cr_expect_eq(r.a[0].lib_id, 0);
        bool has = false, hasnt = false;
        for (int i = 0; i < r.n; i++) {
            has |= !strcmp(r.a[i].name, want[k].has);
            hasnt |= !strcmp(r.a[i].name, want[k].hasnt);
            cr_expect_eq(r.a[i].colls, CT_COLL_BIT(want[k].c));
            /* a forced row's channel count is searched from NCCL's own; the default's and
             * CollNet's (not capped by NCCL) are NCCL's */
            bool collnet = strstr(r.a[i].name, "collnet") != NULL;
            cr_expect_eq(r.a[i].params, i && !collnet ? CT_PBIT(CT_P_CHANNELS) : 0u, "%s",
                         r.a[i].name);
            cr_expect_eq(r.a[i].own, r.a[i].params, "%s", r.a[i].name);
            for (int m = 0; m < i; m++)
                cr_expect_neq(r.a[m].lib_id, r.a[i].lib_id, "%s", r.a[i].name);
            if (i == 0)
                continue;
            char algo[32];
            const char *slash = strchr(r.a[i].name, '/');
            cr_assert(slash && !strncmp(r.a[i].name, "nccl:", 5), "%s", r.a[i].name);
            snprintf(algo, sizeof algo, "%.*s", (int)(slash - r.a[i].name - 5), r.a[i].name + 5);
            int id = r.a[i].lib_id - 1; /* NCCL's numbering: algorithm * 3 + protocol */
            static const char *const algos[] = {
                "tree", "ring", "collnet_direct", "collnet_chain", "nvls", "nvls_tree", "pat"};
            static const char *const protos[] = {"LL", "LL128", "Simple"};
            cr_expect_str_eq(algo, algos[id / 3], "%s", r.a[i].name);
            cr_expect_str_eq(slash + 1, protos[id % 3], "%s", r.a[i].name);
        }
        cr_expect(has, "%s has %s", ct_coll_name(want[k].c), want[k].has);
        cr_expect(!hasnt, "%s has no %s", ct_coll_name(want[k].c), want[k].hasnt);
    }
    cr_expect_eq(NCCL_ALGO_PAT, 6, "the numbering above is nccl.h's");
    cr_expect_eq(NCCL_PROTO_SIMPLE, 2);
}

static const enum ct_dtype types[] = {CT_BFLOAT16, CT_FLOAT16, CT_FLOAT32, CT_FLOAT64, CT_INT32};
static const enum ct_redop ops[] = {CT_SUM, CT_PROD, CT_MIN, CT_MAX};

/* The NCCL engine as one rank on GPU 0, through the in-process bootstrap (skips the test
 * where it cannot run). */
struct one {
    struct ct_boot_world *w;
    struct ct_boot *boot;
    struct ct_shape shape;
    struct ct_backend be;
    struct ct_nccl *n;
};

static void one_open(struct one *o)
{
    struct ct_err err = {0};
    if (ct_nccl_probe(0, &err) < 0)
        cr_skip_test("NCCL engine cannot run here: %s", err.msg);
    o->w = ct_boot_world_new(1, 1);
    cr_assert_eq(ct_boot_inproc_open(&o->boot, o->w, 0, &err), 0, "%s", err.msg);
    o->shape = (struct ct_shape){.nranks = 1, .rank = 0, .ranks_per_node = 1};
    cr_assert_eq(ct_nccl_open(&o->be, &o->n, o->boot, &o->shape, 0, &err), 0, "%s", err.msg);
}

static void one_close(struct one *o)
{
    ct_nccl_close(o->n);
    ct_boot_close(o->boot);
    ct_boot_world_free(o->w);
}

Test(gpu, nccl_every_coll_type_op_correct)
{
    struct ct_err err = {0};
    struct one o1;
    one_open(&o1);
    struct ct_shape shape = o1.shape;
    struct ct_backend be = o1.be;
    struct ct_nccl *n = o1.n;
    for (int c = 0; c < CT_COLL_COUNT; c++)
        for (size_t t = 0; t < sizeof types / sizeof types[0]; t++)
            for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++)
                for (int in_place = 0; in_place < 2; in_place++) {
                    if (c == CT_ALLTOALL && in_place)
                        continue;
                    struct ct_job j = {.coll = (enum ct_coll)c, .dtype = types[t],
                                       .op = ops[o], .count = 100003, .in_place = in_place,
                                       .shape = shape};
                    long wrong = -1;
                    cr_assert_eq(be.begin(n, NULL, &j, true, &wrong, &err), 0, "%s", err.msg);
                    cr_expect_eq(wrong, 0, "coll %d type %d op %d in_place %d: %ld wrong", c,
                                 types[t], ops[o], in_place, wrong);
                    double us[5];
                    cr_assert_eq(be.time(n, 2, 5, 1, us, &err), 0, "%s", err.msg);
                    for (int i = 0; i < 5; i++)
                        cr_expect(us[i] > 0, "iteration %d: %g us", i, us[i]);
                    be.end(n);
                }
    one_close(&o1);
}

/* Two ranks as threads on GPUs 0 and 1 through the in-process bootstrap: rank 0's
 * ncclUniqueId reaches rank 1, and every collective's result is exact on both. */
struct two {
    struct ct_boot_world *w;
    int rank;
    long wrong;
    char msg[sizeof(struct ct_err){0}.msg + 88];
};

static void *two_rank(void *arg)
{
    struct two *t = arg;
    struct ct_err err = {0};
    struct ct_boot *boot;
    struct ct_backend be;
    struct ct_nccl *n = NULL;
    struct ct_shape shape = {.nranks = 2, .rank = t->rank, .ranks_per_node = 2};
    t->wrong = -1;
    if (ct_boot_inproc_open(&boot, t->w, t->rank, &err) < 0 ||
        ct_nccl_open(&be, &n, boot, &shape, t->rank, &err) < 0) {
        snprintf(t->msg, sizeof t->msg, "%s", err.msg);
        return NULL;
    }
    t->wrong = 0;
    for (int c = 0; c < CT_COLL_COUNT && !t->msg[0]; c++)
        for (int in_place = 0; in_place < 2; in_place++) {
            if (c == CT_ALLTOALL && in_place)
                continue;
            struct ct_job j = {.coll = (enum ct_coll)c, .dtype = CT_FLOAT32, .op = CT_SUM,
                               .count = 65537, .in_place = in_place, .shape = shape};
            long w = 0;
            double us[3];
            if (be.begin(n, NULL, &j, true, &w, &err) < 0 || be.time(n, 1, 3, 1, us, &err) < 0) {
                snprintf(t->msg, sizeof t->msg, "coll %d: %s", c, err.msg);
                break;
            }
            t->wrong += w;
            be.end(n);
        }
    ct_nccl_close(n);
    ct_boot_close(boot);
    return NULL;
}

Test(gpu, nccl_two_ranks_bootstrap_and_results)
{
    struct ct_err err = {0};
    if (ct_nccl_probe(1, &err) < 0)
        cr_skip_test("two GPUs needed: GPU 1: %s", err.msg);
    struct ct_boot_world *w = ct_boot_world_new(2, 2);
    struct two t[2] = {{w, 0, 0, ""}, {w, 1, 0, ""}};
    pthread_t th[2];
    for (int r = 0; r < 2; r++)
        cr_assert_eq(pthread_create(&th[r], NULL, two_rank, &t[r]), 0);
    for (int r = 0; r < 2; r++)
        pthread_join(th[r], NULL);
    for (int r = 0; r < 2; r++) {
        cr_expect_str_empty(t[r].msg, "rank %d: %s", r, t[r].msg);
        cr_expect_eq(t[r].wrong, 0, "rank %d: %ld wrong", r, t[r].wrong);
    }
    ct_boot_world_free(w);
}

/* A sweep's point in the tests below: 256 KiB of float32, summed. */
static struct ct_job sweep_job(enum ct_coll c, struct ct_shape shape)
{
    return (struct ct_job){
        .coll = c, .dtype = CT_FLOAT32, .op = CT_SUM, .count = 1 << 16, .shape = shape};
}

/* One rank: NCCL runs every call as a local copy without consulting an algorithm or the tuner
 * (src/enqueue.cc taskAppend, ncclLaunchOneRank), so the engine offers NCCL's own choice alone,
 * with the plugin loaded too. */
Test(gpu, nccl_one_rank_offers_only_nccls_own_choice)
{
    struct ct_err err = {0};
    struct one o1;
    setenv("NCCL_TUNER_PLUGIN", CT_BUILD_DIR "/libnccl-tuner-colltune.so", 1);
    unsetenv("COLLTUNE_CONFIG");
    one_open(&o1);
    cr_expect(o1.be.library && !strncmp(o1.be.library, "NCCL 2.", 7), "%s", o1.be.library);
    for (int c = 0; c < CT_COLL_COUNT; c++) {
        const struct ct_algo *rows[CT_NCCL_MAX_ROWS];
        int nr = o1.be.candidates(o1.n, (enum ct_coll)c, rows, CT_NCCL_MAX_ROWS, &err);
        cr_expect_eq(nr, 1, "%s: %d rows", ct_coll_name((enum ct_coll)c), nr);
        cr_expect_str_eq(rows[0]->name, "nccl:default");
    }
    one_close(&o1);
    unsetenv("NCCL_TUNER_PLUGIN");
}

/* What a sweep of NCCL does on two GPUs (two ranks as threads, sharing the process's one plugin,
 * so a miss either rank's NCCL counts is seen by both; a check that fails is written to the
 * rank's msg, and the rank stops): colltune's plugin loaded by NCCL (NCCL_TUNER_PLUGIN at
 * communicator creation), every row of every collective either runs forced with exact results
 * and positive times, or is refused alike as a choice NCCL cannot run there; ring/Simple and
 * NCCL's own choice always run, and ring/Simple runs on a forced channel count too (2, the
 * sweep's search) with exact results, never marked as NCCL's own choice. At NCCL's own channel
 * count, at most one forced row per call is marked as NCCL's own choice (the one its cost table
 * ranks first): measured, but named by no rule. */
#define FAIL(...)                                                                                  \
    do {                                                                                           \
        snprintf(t->msg, sizeof t->msg, __VA_ARGS__);                                              \
        goto out;                                                                                  \
    } while (0)
static void *rows_rank(void *arg)
{
    struct two *t = arg;
    struct ct_err err = {0};
    struct ct_boot *boot = NULL;
    struct ct_backend be;
    struct ct_nccl *n = NULL;
    struct ct_shape shape = {.nranks = 2, .rank = t->rank, .ranks_per_node = 2};
    if (ct_boot_inproc_open(&boot, t->w, t->rank, &err) < 0 ||
        ct_nccl_open(&be, &n, boot, &shape, t->rank, &err) < 0)
        FAIL("%s", err.msg);
    for (int c = 0; c < CT_COLL_COUNT; c++) {
        const struct ct_algo *rows[CT_NCCL_MAX_ROWS];
        int nr = be.candidates(n, (enum ct_coll)c, rows, CT_NCCL_MAX_ROWS, &err);
        if (nr <= (c == CT_ALLTOALL ? 0 : 1))
            FAIL("%s: %d rows: the forced rows need the loaded plugin",
                 ct_coll_name((enum ct_coll)c), nr);
        for (int i = 0; i < nr; i++) {
            struct ct_job j = sweep_job((enum ct_coll)c, shape);
            long wrong = -1;
            double us[3] = {0};
            int rc = be.begin(n, rows[i], &j, true, &wrong, &err);
            bool must = !strcmp(rows[i]->name, "nccl:default") ||
                        !strcmp(rows[i]->name, "nccl:ring/Simple");
            if (rc == CT_EUNSUPP && !must && strstr(err.msg, "NCCL does not run"))
                continue;
            if (rc < 0)
                FAIL("%s: %s", rows[i]->name, err.msg);
            if (wrong)
                FAIL("%s: %ld wrong", rows[i]->name, wrong);
            if (be.time(n, 1, 3, 1, us, &err) < 0 || !(us[0] > 0 && us[2] > 0))
                FAIL("%s: timed %g us: %s", rows[i]->name, us[0], err.msg);
            be.end(n);
            if (strcmp(rows[i]->name, "nccl:ring/Simple"))
                continue;
            j.params.v[CT_P_CHANNELS] = 2;
            if (be.begin(n, rows[i], &j, true, &wrong, &err) < 0 || wrong)
                FAIL("ring/Simple on 2 channels: %ld wrong: %s", wrong, err.msg);
            if (be.own_choice(n))
                FAIL("a forced channel count is never NCCL's own choice");
            be.end(n);
        }
    }
    for (int c = 0; c < CT_ALLTOALL; c++) {
        const struct ct_algo *rows[CT_NCCL_MAX_ROWS];
        int nr = be.candidates(n, (enum ct_coll)c, rows, CT_NCCL_MAX_ROWS, &err), mine = 0;
        for (int i = 0; i < nr; i++) {
            struct ct_job j = sweep_job((enum ct_coll)c, shape);
            j.params.v[CT_P_CHANNELS] = CT_PARAM_OWN;
            long wrong;
            if (be.begin(n, rows[i], &j, false, &wrong, &err) == 0) {
                mine += be.own_choice(n);
                if (i == 0 && be.own_choice(n))
                    FAIL("the default row is never marked");
                be.end(n);
            }
        }
        if (mine > 1)
            FAIL("%s: %d forced rows marked as NCCL's own choice", ct_coll_name((enum ct_coll)c),
                 mine);
    }
out:
    ct_nccl_close(n);
    ct_boot_close(boot);
    return NULL;
}
#undef FAIL

Test(gpu, nccl_sweep_rows_run_forced_or_are_refused)
{
    struct ct_err err = {0};
    if (ct_nccl_probe(1, &err) < 0)
        cr_skip_test("two GPUs needed (NCCL consults no tuner on one rank): GPU 1: %s", err.msg);
    setenv("NCCL_TUNER_PLUGIN", CT_BUILD_DIR "/libnccl-tuner-colltune.so", 1);
    unsetenv("COLLTUNE_CONFIG");
    struct ct_boot_world *w = ct_boot_world_new(2, 2);
    struct two t[2] = {{w, 0, 0, ""}, {w, 1, 0, ""}};
    pthread_t th[2];
    for (int r = 0; r < 2; r++)
        cr_assert_eq(pthread_create(&th[r], NULL, rows_rank, &t[r]), 0);
    for (int r = 0; r < 2; r++)
        pthread_join(th[r], NULL);
    for (int r = 0; r < 2; r++)
        cr_expect_str_empty(t[r].msg, "rank %d: %s", r, t[r].msg);
    ct_boot_world_free(w);
    unsetenv("NCCL_TUNER_PLUGIN");
}
