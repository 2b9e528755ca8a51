/* SPDX-License-Identifier: MIT */
/*
 * ABI harness for colltune's NCCL tuner plugin: dlopens the built plugin and calls it the way
 * NCCL 2.28 does (src/plugin/tuner.cc: dlsym "ncclTunerPlugin_v5", then "_v4", "_v3"; init
 * with NCCL's logger; getCollInfo with float[NCCL_NUM_ALGORITHMS][NCCL_NUM_PROTOCOLS] passed as
 * float** and nChannels 0; finalize/destroy), for each ABI version (v3: what NCCL 2.22 and 2.23
 * look for, and all they look for).
 */
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "plugin/nccl_tuner_abi.h"

#define PLUGIN CT_BUILD_DIR "/libnccl-tuner-colltune.so"

static char logged[8192];
static int nwarn;

static void logger(ncclDebugLogLevel level, unsigned long flags, const char *file, int line,
                   const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (level == NCCL_LOG_WARN)
        nwarn++;
    size_t n = strlen(logged);
    snprintf(logged + n, sizeof logged - n, "%s %s\n", level == NCCL_LOG_WARN ? "WARN" : "INFO",
             buf);
}

/* One tuner through one ABI version. */
struct tuner {
    int version;
    void *lib;
    const ncclTuner_v5_t *v5;
    const ncclTuner_v4_t *v4;
    const ncclTuner_v3_t *v3;
    void *ctx;
};

static void load(struct tuner *t, int version)
{
    memset(t, 0, sizeof *t);
    t->version = version;
    t->lib = dlopen(PLUGIN, RTLD_NOW | RTLD_LOCAL);
    cr_assert(t->lib, "dlopen %s: %s", PLUGIN, dlerror());
    if (version == 5)
        cr_assert((t->v5 = dlsym(t->lib, "ncclTunerPlugin_v5")));
    else if (version == 4)
        cr_assert((t->v4 = dlsym(t->lib, "ncclTunerPlugin_v4")));
    else
        cr_assert((t->v3 = dlsym(t->lib, "ncclTunerPlugin_v3")));
    cr_assert_str_eq(t->v5 ? t->v5->name : t->v4 ? t->v4->name : t->v3->name, "colltune");
}

static double constants[1024]; /* stands in for ncclTunerConstants_v5_t (opaque to the plugin) */

static ncclResult_t init(struct tuner *t, size_t nranks, size_t nnodes)
{
    ncclNvlDomainInfo_v5_t nvl = {1, (int)nranks, (int)nranks};
    logged[0] = 0;
    nwarn = 0;
    t->ctx = NULL;
    if (t->version == 5)
        return t->v5->init(&t->ctx, 0x1234, nranks, nnodes, logger, &nvl,
                           (ncclTunerConstants_v5_t *)constants);
    return (t->v4 ? t->v4->init : t->v3->init)(nranks, nnodes, logger, &t->ctx);
}

/* getCollInfo through t's version (v3 has no regBuff) */
static ncclResult_t info(struct tuner *t, ncclFunc_t f, size_t nbytes,
                         float tab[NCCL_NUM_ALGORITHMS][NCCL_NUM_PROTOCOLS], int *nch)
{
    if (t->v3)
        return t->v3->getCollInfo(t->ctx, f, nbytes, 1, (float **)tab, NCCL_NUM_ALGORITHMS,
                                  NCCL_NUM_PROTOCOLS, nch);
    return (t->v5 ? t->v5->getCollInfo : t->v4->getCollInfo)(
        t->ctx, f, nbytes, 1, (float **)tab, NCCL_NUM_ALGORITHMS, NCCL_NUM_PROTOCOLS, 0, nch);
}

/* A cost table as NCCL fills it: distinct positive times, -1 where a choice cannot run. */
static void fill(float tab[NCCL_NUM_ALGORITHMS][NCCL_NUM_PROTOCOLS])
{
    for (int a = 0; a < NCCL_NUM_ALGORITHMS; a++)
        for (int p = 0; p < NCCL_NUM_PROTOCOLS; p++)
            tab[a][p] = 10.0f + (float)(a * NCCL_NUM_PROTOCOLS + p);
    tab[NCCL_ALGO_NVLS][NCCL_PROTO_SIMPLE] = (float)NCCL_ALGO_PROTO_IGNORE;
    tab[NCCL_ALGO_COLLNET_DIRECT][NCCL_PROTO_LL] = (float)NCCL_ALGO_PROTO_IGNORE;
}

/* Call getCollInfo; expect cell (a, p) set to 0 and nothing else changed (a < 0: nothing at
 * all), and nChannels ch (0: NCCL's own). */
static void expect(struct tuner *t, ncclFunc_t f, size_t nbytes, int a, int p, int ch)
{
    float tab[NCCL_NUM_ALGORITHMS][NCCL_NUM_PROTOCOLS], ref[NCCL_NUM_ALGORITHMS][NCCL_NUM_PROTOCOLS];
    fill(tab);
    fill(ref);
    int nch = 0;
    cr_assert_eq(info(t, f, nbytes, tab, &nch), ncclSuccess);
    if (a >= 0)
        ref[a][p] = 0.0f;
    for (int i = 0; i < NCCL_NUM_ALGORITHMS; i++)
        for (int k = 0; k < NCCL_NUM_PROTOCOLS; k++)
            cr_expect_eq(tab[i][k], ref[i][k], "v%d func %d %zu bytes: cell [%d][%d] %g, want %g",
                         t->version, f, nbytes, i, k, tab[i][k], ref[i][k]);
    cr_expect_eq(nch, ch, "v%d func %d %zu bytes: nChannels %d, want %d", t->version, f, nbytes,
                 nch, ch);
}

static void fini(struct tuner *t)
{
    if (t->ctx)
        cr_assert_eq((t->v5   ? t->v5->finalize
                      : t->v4 ? t->v4->destroy
                              : t->v3->destroy)(t->ctx),
                     ncclSuccess);
    dlclose(t->lib);
}

static void config(const char *json)
{
    static char path[64];
    snprintf(path, sizeof path, "/tmp/ct-tuner-XXXXXX");
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    cr_assert_eq(write(fd, json, strlen(json)), (ssize_t)strlen(json));
    close(fd);
    setenv("COLLTUNE_CONFIG", path, 1);
}

static void unconfig(void)
{
    const char *p = getenv("COLLTUNE_CONFIG");
    if (p)
        unlink(p);
}

#define RANGE(lo, hi, algo, extra) \
    "{\"min_bytes\": " #lo ", \"max_bytes\": " #hi ", \"algo\": \"" algo "\"" extra "}"

static const char *good =
    "{\"format\": \"colltune-config/1\", \"libraries\": ["
    "{\"library\": \"ompi\", \"rules\": \"not read by the NCCL plugin\"},"
    "{\"library\": \"nccl\", \"name\": \"NCCL\", \"version\": \"2.28.9\", \"rules\": ["
    " {\"coll\": \"allreduce\", \"nnodes\": 1, \"ranks_per_node\": 8, \"nranks\": 8,"
    "  \"dtype\": \"float32\", \"op\": \"sum\", \"ranges\": ["
    RANGE(0, 65536, "ring", ", \"id\": 1, \"params\": {\"proto\": \"LL\", \"channels\": 8},"
          " \"confidence\": 0.9, \"tie\": false, \"runner_up\": \"tree\", \"gain\": 1.3,"
          " \"default\": false") ","
    RANGE(65536, 1048576, "ring", ", \"params\": {\"proto\": \"Simple\"}, \"default\": true") ","
    RANGE(1048576, 1073741824, "tree", ", \"params\": {\"proto\": \"simple\"}") ","
    RANGE(1073741824, null, "nvls_tree", ", \"params\": {\"proto\": \"LL128\", \"channels\": 32}")
    "]},"
    " {\"coll\": \"allgather\", \"nnodes\": 2, \"nranks\": 16, \"ranges\": ["
    RANGE(4096, 8192, "pat", ", \"params\": {\"proto\": \"Simple\", \"channels\": 2}") ","
    RANGE(8192, 16384, "nvls", ", \"params\": {\"proto\": \"Simple\"}") ","
    "{\"min_bytes\": 16384, \"max_bytes\": null, \"default\": true}]},"
    /* the same shape again for another datatype: NCCL's tuner sees no datatype, the first
     * rule holding the size wins */
    " {\"coll\": \"allreduce\", \"nnodes\": 1, \"nranks\": 8, \"dtype\": \"float16\","
    "  \"ranges\": [" RANGE(0, null, "pat", ", \"params\": {\"proto\": \"LL128\"}") "]}"
    "]}]}";

static void check_good(int version)
{
    struct tuner t;
    config(good);
    load(&t, version);
    cr_assert_eq(init(&t, 8, 1), ncclSuccess);
    cr_expect_eq(nwarn, 0, "%s", logged);
    const int R = NCCL_ALGO_RING, T = NCCL_ALGO_TREE, NT = NCCL_ALGO_NVLS_TREE;
    /* every range edge: min_bytes, max_bytes - 1, max_bytes (the next range's min) */
    expect(&t, ncclFuncAllReduce, 0, R, NCCL_PROTO_LL, 8);
    expect(&t, ncclFuncAllReduce, 1, R, NCCL_PROTO_LL, 8);
    expect(&t, ncclFuncAllReduce, 65535, R, NCCL_PROTO_LL, 8);
    expect(&t, ncclFuncAllReduce, 65536, -1, 0, 0); /* "default": true */
    expect(&t, ncclFuncAllReduce, 1048575, -1, 0, 0);
    expect(&t, ncclFuncAllReduce, 1048576, T, NCCL_PROTO_SIMPLE, 0);
    expect(&t, ncclFuncAllReduce, 1073741823, T, NCCL_PROTO_SIMPLE, 0);
    expect(&t, ncclFuncAllReduce, 1073741824, NT, NCCL_PROTO_LL128, 32);
    expect(&t, ncclFuncAllReduce, SIZE_MAX, NT, NCCL_PROTO_LL128, 32);
    for (size_t b = 1; b < ((size_t)1 << 40); b *= 3) { /* many sizes */
        int a = b < 65536 ? R : b < 1048576 ? -1 : b < 1073741824 ? T : NT;
        int p = b < 65536 ? NCCL_PROTO_LL : b < 1073741824 ? NCCL_PROTO_SIMPLE : NCCL_PROTO_LL128;
        expect(&t, ncclFuncAllReduce, b, a, a < 0 ? 0 : p, b < 65536 ? 8 : b < 1073741824 ? 0 : 32);
    }
    /* other collectives of this shape: NCCL's choice */
    expect(&t, ncclFuncBroadcast, 1024, -1, 0, 0);
    expect(&t, ncclFuncReduceScatter, 1024, -1, 0, 0);
    expect(&t, ncclFuncAllGather, 4096, -1, 0, 0); /* allgather's rule is for 2 x 8 */
    fini(&t);

    /* other shapes: the same 8 ranks on 2 nodes, 4 ranks on 1 node */
    load(&t, version);
    cr_assert_eq(init(&t, 8, 2), ncclSuccess);
    expect(&t, ncclFuncAllReduce, 0, -1, 0, 0);
    expect(&t, ncclFuncAllReduce, 1048576, -1, 0, 0);
    fini(&t);
    load(&t, version);
    cr_assert_eq(init(&t, 4, 1), ncclSuccess);
    expect(&t, ncclFuncAllReduce, 1024, -1, 0, 0);
    fini(&t);

    /* 16 ranks on 2 nodes: allgather ranges; a cell NCCL marks -1 stays -1 */
    load(&t, version);
    cr_assert_eq(init(&t, 16, 2), ncclSuccess);
    expect(&t, ncclFuncAllGather, 4095, -1, 0, 0);
    expect(&t, ncclFuncAllGather, 4096, NCCL_ALGO_PAT, NCCL_PROTO_SIMPLE, 2);
    expect(&t, ncclFuncAllGather, 8191, NCCL_ALGO_PAT, NCCL_PROTO_SIMPLE, 2);
    expect(&t, ncclFuncAllGather, 8192, -1, 0, 0); /* nvls/Simple is -1 in the table */
    expect(&t, ncclFuncAllGather, 16383, -1, 0, 0);
    expect(&t, ncclFuncAllGather, 16384, -1, 0, 0);
    expect(&t, ncclFuncAllReduce, 0, -1, 0, 0);
    fini(&t);
    unconfig();
}

Test(nccl_tuner, v5_sets_config_choice_at_every_edge) { check_good(5); }
Test(nccl_tuner, v4_sets_config_choice_at_every_edge) { check_good(4); }
Test(nccl_tuner, v3_sets_config_choice_at_every_edge)
{
    check_good(3);
}

Test(nccl_tuner, no_config_leaves_nccl_alone)
{
    for (int v = 3; v <= 5; v++) {
        struct tuner t;
        unsetenv("COLLTUNE_CONFIG");
        load(&t, v);
        cr_assert_eq(init(&t, 8, 1), ncclSuccess);
        cr_expect(strstr(logged, "COLLTUNE_CONFIG not set"), "%s", logged);
        expect(&t, ncclFuncAllReduce, 1024, -1, 0, 0);
        fini(&t);
        config("{\"format\": \"colltune-config/1\", \"rulesets\": []}");
        load(&t, v);
        cr_assert_eq(init(&t, 8, 1), ncclSuccess);
        cr_expect(strstr(logged, "no measured NCCL section"), "%s", logged);
        expect(&t, ncclFuncAllReduce, 1024, -1, 0, 0);
        fini(&t);
        unconfig();
    }
}

#define RULE(ranges) \
    "{\"libraries\": [{\"library\": \"nccl\", \"rules\": [{\"coll\": \"allreduce\", " \
    "\"nnodes\": 1, \"nranks\": 8, \"ranges\": [" ranges "]}]}]}"

#define VERIFIED(record)                                                                           \
    "{\"libraries\": [{\"library\": \"nccl\", \"rules\": [{\"coll\": \"allreduce\", "              \
    "\"nnodes\": 1, \"nranks\": 8, \"ranges\": [" RANGE(                                           \
        0, 64, "ring", ", \"params\": {\"proto\": \"LL\"}") "], \"verified\": {" record "}}]}]}"

/* The section as `sweep --lib nccl` writes it: NCCL's own choice as "algo": "default" with
 * empty params, and an alltoall rule (NCCL asks no tuner about alltoall), both read without a
 * warning; the forced range is set, the rest left to NCCL. */
Test(nccl_tuner, a_sweeps_section_is_read_as_written)
{
    for (int v = 3; v <= 5; v++) {
        struct tuner t;
        config("{\"libraries\": [{\"library\": \"nccl\", \"name\": \"NCCL\", \"version\": "
               "\"2.28.9\", \"rules\": [{\"coll\": \"allreduce\", \"nnodes\": 1, \"nranks\": 8, "
               "\"ranges\": [" RANGE(
                   0, 4096, "default",
                   ", \"id\": 0, \"params\": {}, "
                   "\"default\": true") "," RANGE(4096, null, "ring",
                                                  ", \"id\": 5, \"params\": {\"proto\": "
                                                  "\"LL128\"}, "
                                                  "\"default\": false") "]}, "
                                                                        "{\"coll\": \"alltoall\", "
                                                                        "\"nnodes\": 1, "
                                                                        "\"nranks\": 8, "
                                                                        "\"ranges\": [" RANGE(
                                                                            0, null, "default",
                                                                            ", \"id\": 0, "
                                                                            "\"params\": {}, "
                                                                            "\"default\": true") "]"
                                                                                                 "}"
                                                                                                 "]"
                                                                                                 "}"
                                                                                                 "]"
                                                                                                 "}");
        unsetenv("COLLTUNE_TUNER_STRICT");
        load(&t, v);
        cr_assert_eq(init(&t, 8, 1), ncclSuccess);
        cr_expect_eq(nwarn, 0, "%s", logged);
        expect(&t, ncclFuncAllReduce, 4095, -1, 0, 0);
        expect(&t, ncclFuncAllReduce, 4096, NCCL_ALGO_RING, NCCL_PROTO_LL128, 0);
        expect(&t, ncclFuncAllGather, 4096, -1, 0, 0);
        fini(&t);
        unconfig();
    }
}

static const struct {
    const char *json, *field;
} malformed[] = {
    {"{\"libraries\": [", "line 1"},
    {"[1, 2]", "expected a JSON object"},
    {"{\"libraries\": {}}", "libraries: expected an array"},
    {"{\"libraries\": [{\"library\": \"nccl\"}]}", "libraries[0].rules: missing"},
    {"{\"libraries\": [{\"library\": \"nccl\", \"rules\": [{\"coll\": \"alltoal\", \"nnodes\": 1,"
     " \"nranks\": 8, \"ranges\": []}]}]}",
     "libraries[0].rules[0].coll: 'alltoal'"},
    {"{\"libraries\": [{\"library\": \"nccl\", \"rules\": [{\"coll\": \"allreduce\", \"nnodes\": 1,"
     " \"nranks\": \"8\", \"ranges\": []}]}]}",
     "libraries[0].rules[0].nranks: expected an integer"},
    {"{\"libraries\": [{\"library\": \"nccl\", \"rules\": [{\"coll\": \"allreduce\", \"nnodes\": 2,"
     " \"ranks_per_node\": 3, \"nranks\": 8, \"ranges\": []}]}]}",
     "libraries[0].rules[0].ranks_per_node"},
    {RULE(RANGE(0, 64, "ring", ", \"params\": {\"proto\": \"LLX\"}")),
     "libraries[0].rules[0].ranges[0].params.proto: 'LLX'"},
    {RULE(RANGE(0, 64, "rings", ", \"params\": {\"proto\": \"LL\"}")),
     "libraries[0].rules[0].ranges[0].algo: 'rings'"},
    {RULE(RANGE(0, 64, "ring", "")), "libraries[0].rules[0].ranges[0].params: missing"},
    {RULE(RANGE(0, 64, "ring", ", \"params\": {\"proto\": \"LL\", \"channels\": 65}")),
     "ranges[0].params.channels: 65 out of range"},
    {RULE(RANGE(64, 64, "ring", ", \"params\": {\"proto\": \"LL\"}")),
     "ranges[0].max_bytes: 64 not above min_bytes"},
    {RULE("{\"min_bytes\": 0, \"algo\": \"ring\", \"params\": {\"proto\": \"LL\"}}"),
     "ranges[0].max_bytes: missing"},
    {RULE(RANGE(0, 64, "ring", ", \"params\": {\"proto\": \"LL\"}, \"gain\": \"x\"")),
     "ranges[0].gain: expected a number"},
    {RULE(RANGE(0, 64, "ring", ", \"params\": {\"proto\": \"LL\"}") "," RANGE(
         32, 128, "tree", ", \"params\": {\"proto\": \"LL\"}")),
     "ranges[1].min_bytes: 32 overlaps"},
    {"{\"libraries\": [{\"library\": \"nccl\", \"rules\": []}, {\"library\": \"nccl\", "
     "\"rules\": []}]}",
     "libraries[1].library: a second NCCL section"},
    /* a rule's verify record: when, the geomean, what it could tell (1 at least) */
    {VERIFIED("\"at\": 5, \"geomean\": 0.9"), "rules[0].verified.at: expected a UTC time"},
    {VERIFIED("\"at\": \"2026-12-04T18:00:00Z\", \"geomean\": 0"),
     "rules[0].verified.geomean: expected a number"},
    {VERIFIED("\"at\": \"2026-12-04T18:00:00Z\", \"geomean\": 0.9, \"tell\": 0.5"),
     "rules[0].verified.tell: expected a number in [1, 1e+06]"},
};

static void check_malformed(int version)
{
    for (size_t i = 0; i < sizeof malformed / sizeof malformed[0]; i++) {
        struct tuner t;
        config(malformed[i].json);
        /* default: one WARN naming the field, then NCCL's own choices */
        unsetenv("COLLTUNE_TUNER_STRICT");
        load(&t, version);
        cr_assert_eq(init(&t, 8, 1), ncclSuccess);
        cr_expect_eq(nwarn, 1, "%s", logged);
        cr_expect(strstr(logged, malformed[i].field), "config %zu: want '%s' in: %s", i,
                  malformed[i].field, logged);
        expect(&t, ncclFuncAllReduce, 0, -1, 0, 0);
        fini(&t);
        /* strict: init fails cleanly, no context */
        setenv("COLLTUNE_TUNER_STRICT", "1", 1);
        load(&t, version);
        cr_expect_eq(init(&t, 8, 1), ncclInvalidUsage);
        cr_expect_null(t.ctx);
        cr_expect(strstr(logged, malformed[i].field), "%s", logged);
        fini(&t);
        unconfig();
    }
}

Test(nccl_tuner, v5_malformed_config_fails_init_cleanly) { check_malformed(5); }
Test(nccl_tuner, v4_malformed_config_fails_init_cleanly) { check_malformed(4); }
Test(nccl_tuner, v3_malformed_config_fails_init_cleanly)
{
    check_malformed(3);
}

Test(nccl_tuner, force_env_and_call_override_config)
{
    for (int v = 3; v <= 5; v++) {
        struct tuner t;
        config(good);
        setenv("COLLTUNE_NCCL_FORCE", "tree,LL128,4", 1);
        load(&t, v);
        cr_assert_eq(init(&t, 8, 1), ncclSuccess);
        expect(&t, ncclFuncAllReduce, 0, NCCL_ALGO_TREE, NCCL_PROTO_LL128, 4);
        expect(&t, ncclFuncBroadcast, 1 << 20, NCCL_ALGO_TREE, NCCL_PROTO_LL128, 4);
        /* the process-wide call wins over the environment, and is undone by NULL, NULL */
        int (*force)(const char *, const char *, int) = dlsym(t.lib, "colltune_tuner_force");
        long (*misses)(void) = dlsym(t.lib, "colltune_tuner_force_misses");
        cr_assert(force && misses);
        cr_expect_eq(force("ring", "bogus", 0), -1);
        cr_expect_eq(force("pat", "simple", 0), 0);
        expect(&t, ncclFuncAllGather, 77, NCCL_ALGO_PAT, NCCL_PROTO_SIMPLE, 0);
        cr_expect_eq(force("nvls", "Simple", 16), 0); /* -1 in the table: a miss, NCCL chooses */
        long m = misses();
        expect(&t, ncclFuncAllReduce, 0, -1, 0, 0);
        cr_expect_eq(misses(), m + 1);
        cr_expect_eq(force(NULL, NULL, 0), 0);
        expect(&t, ncclFuncAllReduce, 1, NCCL_ALGO_TREE, NCCL_PROTO_LL128, 4);
        fini(&t);
        unsetenv("COLLTUNE_NCCL_FORCE");
        load(&t, v);
        cr_assert_eq(init(&t, 8, 1), ncclSuccess);
        expect(&t, ncclFuncAllReduce, 1, NCCL_ALGO_RING, NCCL_PROTO_LL, 8); /* the config again */
        fini(&t);
        setenv("COLLTUNE_NCCL_FORCE", "ring", 1);
        load(&t, v);
        cr_assert_eq(init(&t, 8, 1), ncclSuccess);
        cr_expect(strstr(logged, "COLLTUNE_NCCL_FORCE='ring'"), "%s", logged);
        fini(&t);
        unsetenv("COLLTUNE_NCCL_FORCE");
        unconfig();
    }
}

/* Verify's two sides on one communicator: bypass leaves every call to NCCL (config and
 * COLLTUNE_NCCL_FORCE alike) until it is turned off; a process-wide force still applies. */
Test(nccl_tuner, bypass_gives_nccl_its_own_choice_and_back)
{
    for (int v = 3; v <= 5; v++) {
        struct tuner t;
        config(good);
        load(&t, v);
        cr_assert_eq(init(&t, 8, 1), ncclSuccess);
        int (*bypass)(int) = dlsym(t.lib, "colltune_tuner_bypass");
        int (*force)(const char *, const char *, int) = dlsym(t.lib, "colltune_tuner_force");
        cr_assert(bypass && force);
        expect(&t, ncclFuncAllReduce, 1, NCCL_ALGO_RING, NCCL_PROTO_LL, 8); /* the config */
        cr_expect_eq(bypass(1), 0);
        expect(&t, ncclFuncAllReduce, 1, -1, 0, 0);
        cr_expect_eq(force("pat", "Simple", 0), 0);
        expect(&t, ncclFuncAllGather, 77, NCCL_ALGO_PAT, NCCL_PROTO_SIMPLE, 0);
        cr_expect_eq(force(NULL, NULL, 0), 0);
        expect(&t, ncclFuncAllReduce, 1, -1, 0, 0);
        cr_expect_eq(bypass(0), 0);
        expect(&t, ncclFuncAllReduce, 1, NCCL_ALGO_RING, NCCL_PROTO_LL, 8);
        fini(&t);
        setenv("COLLTUNE_NCCL_FORCE", "tree,LL128,4", 1);
        load(&t, v);
        cr_assert_eq(init(&t, 8, 1), ncclSuccess);
        bypass = dlsym(t.lib, "colltune_tuner_bypass");
        cr_expect_eq(bypass(1), 0);
        expect(&t, ncclFuncAllReduce, 0, -1, 0, 0);
        cr_expect_eq(bypass(0), 0);
        expect(&t, ncclFuncAllReduce, 0, NCCL_ALGO_TREE, NCCL_PROTO_LL128, 4);
        fini(&t);
        unsetenv("COLLTUNE_NCCL_FORCE");
        unconfig();
    }
}

/* NCCL's own choice for the last call (the cheapest cell it can run, before any change), for
 * the sweep's mark on a forced row that is that choice (measured, named by no rule): with and
 * without a forced choice, and where NCCL marks the cheapest cell -1. */
Test(nccl_tuner, own_choice_is_the_cheapest_runnable_cell)
{
    for (int v = 3; v <= 5; v++) {
        struct tuner t;
        unsetenv("COLLTUNE_CONFIG");
        load(&t, v);
        cr_assert_eq(init(&t, 8, 1), ncclSuccess);
        int (*own)(int *, int *) = dlsym(t.lib, "colltune_tuner_own_choice");
        int (*force)(const char *, const char *, int) = dlsym(t.lib, "colltune_tuner_force");
        cr_assert(own && force);
        float tab[NCCL_NUM_ALGORITHMS][NCCL_NUM_PROTOCOLS];
        int nch = 0, a = -1, p = -1;
        fill(tab); /* 10 + algo * 3 + proto: tree/LL cheapest */
        info(&t, ncclFuncAllReduce, 64, tab, &nch);
        cr_assert_eq(own(&a, &p), 0);
        cr_expect(a == NCCL_ALGO_TREE && p == NCCL_PROTO_LL, "%d/%d", a, p);
        fill(tab);
        tab[NCCL_ALGO_TREE][NCCL_PROTO_LL] = (float)NCCL_ALGO_PROTO_IGNORE;
        tab[NCCL_ALGO_RING][NCCL_PROTO_SIMPLE] = 1.0f;
        cr_assert_eq(force("pat", "Simple", 0), 0);
        info(&t, ncclFuncAllGather, 1 << 20, tab, &nch);
        cr_expect_eq(tab[NCCL_ALGO_PAT][NCCL_PROTO_SIMPLE], 0.0f, "forced as before");
        cr_assert_eq(own(&a, &p), 0);
        cr_expect(a == NCCL_ALGO_RING && p == NCCL_PROTO_SIMPLE,
                  "NCCL's own, not the forced: %d/%d", a, p);
        cr_assert_eq(force(NULL, NULL, 0), 0);
        fini(&t);
    }
}

/* The sweep's search over channel counts: a forced (algorithm, protocol) at NCCL's own channel
 * count (0, the search's start) leaves nChannels as NCCL passed it; a forced count sets it, on
 * every interface version; a choice NCCL cannot run sets no count either. */
Test(nccl_tuner, a_forced_channel_count_or_nccls_own)
{
    for (int v = 3; v <= 5; v++) {
        struct tuner t;
        unsetenv("COLLTUNE_CONFIG");
        load(&t, v);
        cr_assert_eq(init(&t, 8, 1), ncclSuccess);
        int (*force)(const char *, const char *, int) = dlsym(t.lib, "colltune_tuner_force");
        cr_assert(force);
        float tab[NCCL_NUM_ALGORITHMS][NCCL_NUM_PROTOCOLS];
        static const int counts[] = {0, 1, 16, 32, 64};
        for (size_t k = 0; k < sizeof counts / sizeof counts[0]; k++) {
            int nch = 0;
            fill(tab);
            cr_assert_eq(force("ring", "Simple", counts[k]), 0);
            info(&t, ncclFuncAllReduce, 1 << 20, tab, &nch);
            cr_expect_eq(tab[NCCL_ALGO_RING][NCCL_PROTO_SIMPLE], 0.0f);
            cr_expect_eq(nch, counts[k], "v%d: forced %d channels, NCCL given %d", v, counts[k],
                         nch);
        }
        cr_expect_lt(force("ring", "Simple", 65), 0, "above 64: refused");
        int nch = 0;
        fill(tab);
        tab[NCCL_ALGO_RING][NCCL_PROTO_SIMPLE] = (float)NCCL_ALGO_PROTO_IGNORE;
        cr_assert_eq(force("ring", "Simple", 8), 0);
        info(&t, ncclFuncAllReduce, 1 << 20, tab, &nch);
        cr_expect_eq(nch, 0, "NCCL cannot run ring/Simple here: no count either");
        nch = 0; /* CollNet: NCCL takes a count unchecked as its last channel; never set */
        fill(tab);
        cr_assert_eq(force("collnet_direct", "Simple", 8), 0);
        info(&t, ncclFuncAllReduce, 1 << 20, tab, &nch);
        cr_expect_eq(tab[NCCL_ALGO_COLLNET_DIRECT][NCCL_PROTO_SIMPLE], 0.0f);
        cr_expect_eq(nch, 0, "v%d: collnet_direct forced on 8 channels, NCCL given %d", v, nch);
        cr_assert_eq(force(NULL, NULL, 0), 0);
        fini(&t);
    }
}
