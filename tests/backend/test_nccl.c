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

static const enum ct_dtype types[] = {CT_BFLOAT16, CT_FLOAT16, CT_FLOAT32, CT_FLOAT64, CT_INT32};
static const enum ct_redop ops[] = {CT_SUM, CT_PROD, CT_MIN, CT_MAX};

Test(gpu, nccl_every_coll_type_op_correct)
{
    struct ct_err err = {0};
    if (ct_nccl_probe(0, &err) < 0)
        cr_skip_test("NCCL engine cannot run here: %s", err.msg);
    struct ct_boot_world *w = ct_boot_world_new(1, 1);
    struct ct_boot *boot;
    cr_assert_eq(ct_boot_inproc_open(&boot, w, 0, &err), 0, "%s", err.msg);
    struct ct_shape shape = {.nranks = 1, .rank = 0, .ranks_per_node = 1};
    struct ct_backend be;
    struct ct_nccl *n;
    cr_assert_eq(ct_nccl_open(&be, &n, boot, &shape, 0, &err), 0, "%s", err.msg);
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
    ct_nccl_close(n);
    ct_boot_close(boot);
    ct_boot_world_free(w);
}

/* Two ranks as threads on GPUs 0 and 1 through the in-process bootstrap: rank 0's
 * ncclUniqueId reaches rank 1, and every collective's result is exact on both. */
struct two {
    struct ct_boot_world *w;
    int rank;
    long wrong;
    char msg[600];
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
