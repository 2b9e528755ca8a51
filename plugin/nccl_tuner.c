/* SPDX-License-Identifier: MIT */
/*
 * libnccl-tuner-colltune.so: colltune's NCCL tuner plugin (tuner ABI v5 and v4, see
 * nccl_tuner_abi.h). Loaded by NCCL with NCCL_TUNER_PLUGIN=<path of this file>.
 *
 * Job time: COLLTUNE_CONFIG=<colltune config> names a config whose NCCL section
 * ("libraries": [{"library": "nccl", "rules": [...]}]) says, per collective and (nRanks,
 * nNodes), which (algorithm, protocol, channels) NCCL runs for each size range [min_bytes,
 * max_bytes). For a call inside a range the plugin sets that cell of NCCL's cost table to 0.0
 * and leaves the other cells (as NCCL's example plugin does), and sets nChannels when the range
 * names channels. Everything else (other collectives, shapes, sizes, "default": true ranges, a
 * cell NCCL marks -1 = cannot run here) is left to NCCL.
 * A config that cannot be read: one NCCL WARN line naming the field, and the communicator runs
 * on NCCL's own choices (NCCL 2.28 fails communicator creation when a tuner's init fails, so
 * init still succeeds); COLLTUNE_TUNER_STRICT=1 makes init fail instead (ncclInvalidUsage).
 *
 * Sweep time (forcing one choice for every call of the process, whatever the config says):
 *   - colltune_tuner_force("ring", "LL128", 8) (exported; the caller dlopens this same file
 *     with RTLD_NOLOAD and calls it between measurements): process-wide, atomic, no
 *     communicator re-creation; colltune_tuner_force(NULL, NULL, 0) ends forcing.
 *   - COLLTUNE_NCCL_FORCE=ring,LL128[,8] in the environment: read at each communicator's init.
 *   colltune_tuner_force_misses() counts calls where the forced cell was -1 (NCCL cannot run
 *   that choice for that call, so NCCL chose): a measurement of such calls is not one of the
 *   forced choice. NCCL_ALGO/NCCL_PROTO per communicator remain the fallback without the plugin.
 * colltune_tuner_own_choice(&algo, &proto) says what NCCL itself would have run for the last
 * call (the cheapest cell of the cost table NCCL passed, before any change: NCCL runs the
 * lowest cost), forced or not: in a sweep, a forced row at NCCL's own channel count that is
 * NCCL's own choice there is measured as the start of its channel search and named by no rule
 * (the default row measures the same).
 * Verify time: colltune_tuner_bypass(1) leaves every following call of the process to NCCL,
 * config and COLLTUNE_NCCL_FORCE alike, until colltune_tuner_bypass(0): the same communicators
 * run with the config (A) and with NCCL's defaults (B) in alternation (sweep --verify --lib
 * nccl). A choice forced by colltune_tuner_force still applies.
 * Logging goes through NCCL's logger only (NCCL_DEBUG=INFO, NCCL_DEBUG_SUBSYS=TUNING).
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nccl_rules.h"
#include "nccl_tuner_abi.h"

#define EXPORT __attribute__((visibility("default")))
#define NAME "colltune"

struct ctx {
    size_t nranks, nnodes;
    ncclDebugLogger_t log;
    struct ct_nr_table table;
    int force_algo, force_proto, force_channels; /* from COLLTUNE_NCCL_FORCE; -1: none */
};

/* Forced choice of the process: 0 none, else (algo+1) | (proto+1) << 8 | channels << 16. */
static atomic_int forced;
static atomic_int bypass; /* 1: NCCL's own choice for every call not forced */
static atomic_int own;    /* NCCL's choice for the last call: (algo+1) | (proto+1) << 8; 0 none */
static atomic_long force_misses;

#define LOG(c, lvl, ...)                                                                           \
    do {                                                                                           \
        if ((c)->log)                                                                              \
            (c)->log(lvl, NCCL_TUNING, __FILE__, __LINE__, "TUNER/colltune: " __VA_ARGS__);        \
    } while (0)

EXPORT int colltune_tuner_force(const char *algo, const char *proto, int channels)
{
    if (!algo && !proto) {
        atomic_store(&forced, 0);
        return 0;
    }
    int a = ct_nr_algo(algo), p = ct_nr_proto(proto);
    if (a < 0 || p < 0 || channels < 0 || channels > 64)
        return -1;
    atomic_store(&forced, (a + 1) | (p + 1) << 8 | channels << 16);
    return 0;
}

EXPORT int colltune_tuner_bypass(int on)
{
    atomic_store(&bypass, on != 0);
    return 0;
}

EXPORT int colltune_tuner_own_choice(int *algo, int *proto)
{
    int o = atomic_load(&own);
    if (!o)
        return -1;
    *algo = (o & 0xff) - 1;
    *proto = ((o >> 8) & 0xff) - 1;
    return 0;
}

EXPORT long colltune_tuner_force_misses(void)
{
    return atomic_load(&force_misses);
}

/* "ring,LL128[,8]" -> algo, proto, channels; -1 if malformed. */
static int parse_force(const char *s, int *a, int *p, int *ch)
{
    char buf[64], *save = NULL;
    snprintf(buf, sizeof buf, "%s", s);
    char *an = strtok_r(buf, ",", &save), *pn = strtok_r(NULL, ",", &save);
    char *cn = strtok_r(NULL, ",", &save), *end = NULL;
    *a = ct_nr_algo(an);
    *p = ct_nr_proto(pn);
    *ch = cn ? (int)strtol(cn, &end, 10) : 0;
    if (*a < 0 || *p < 0 || (cn && (*end || *ch < 0 || *ch > 64)) || strtok_r(NULL, ",", &save))
        return -1;
    return 0;
}

static ncclResult_t init_common(void **context, size_t nranks, size_t nnodes, ncclDebugLogger_t log)
{
    struct ctx *c = calloc(1, sizeof *c);
    if (!c)
        return ncclSystemError;
    c->nranks = nranks;
    c->nnodes = nnodes;
    c->log = log;
    c->force_algo = c->force_proto = -1;
    const char *strict = getenv("COLLTUNE_TUNER_STRICT");
    bool must = strict && *strict && strcmp(strict, "0");
    const char *force = getenv("COLLTUNE_NCCL_FORCE");
    if (force && *force &&
        parse_force(force, &c->force_algo, &c->force_proto, &c->force_channels)) {
        LOG(c, NCCL_LOG_WARN,
            "COLLTUNE_NCCL_FORCE='%s': expected ALGO,PROTO[,CHANNELS] (e.g. ring,LL128,8); "
            "not forcing",
            force);
        c->force_algo = c->force_proto = -1;
        if (must) {
            free(c);
            return ncclInvalidUsage;
        }
    }
    const char *path = getenv("COLLTUNE_CONFIG");
    char msg[512];
    if (!path || !*path)
        LOG(c, NCCL_LOG_INFO, "COLLTUNE_CONFIG not set: NCCL's own choices");
    else if (ct_nr_load(path, &c->table, msg, sizeof msg)) {
        LOG(c, NCCL_LOG_WARN, "COLLTUNE_CONFIG=%s: %s; %s", path, msg,
            must ? "failing (COLLTUNE_TUNER_STRICT)" : "running on NCCL's own choices");
        if (must) {
            free(c);
            return ncclInvalidUsage;
        }
    } else if (!c->table.found)
        LOG(c, NCCL_LOG_WARN, "COLLTUNE_CONFIG=%s has no measured NCCL section: NCCL's own choices",
            path);
    else
        LOG(c, NCCL_LOG_INFO,
            "COLLTUNE_CONFIG=%s: %d NCCL rules (NCCL %s), communicator of %zu "
            "ranks on %zu nodes",
            path, c->table.nrules, c->table.version[0] ? c->table.version : "?", nranks, nnodes);
    *context = c;
    return ncclSuccess;
}

/* Set cell (a, p) of the table to 0.0 unless NCCL marked it -1; true if set. */
/* A channel count for algorithm a: NCCL caps ring, tree, NVLS and PAT plans at the
 * communicator's channels, but a CollNet plan takes the tuner's count as its last channel
 * unchecked (src/enqueue.cc, NCCL 2.28: channelHi = nMaxChannels - 1), which could name
 * channels never set up: CollNet keeps NCCL's own. */
static bool count_settable(int a)
{
    return a != NCCL_ALGO_COLLNET_DIRECT && a != NCCL_ALGO_COLLNET_CHAIN;
}

static bool choose(float **table, int numAlgo, int numProto, int a, int p)
{
    if (a >= numAlgo || p >= numProto)
        return false;
    float *cell = (float *)table + (size_t)a * (size_t)numProto + (size_t)p;
    if (*cell == (float)NCCL_ALGO_PROTO_IGNORE)
        return false;
    *cell = 0.0f;
    return true;
}

/* What NCCL runs when the table stays as it is: the cheapest cell that can run (>= 0). */
static void note_own(float **table, int numAlgo, int numProto)
{
    const float *t = (const float *)table;
    int best = -1;
    for (int i = 0; i < numAlgo * numProto; i++)
        if (t[i] >= 0 && (best < 0 || t[i] < t[best]))
            best = i;
    atomic_store(&own, best < 0 || numProto > 0xfe || numAlgo > 0xfe
                           ? 0
                           : (best / numProto + 1) | (best % numProto + 1) << 8);
}

static ncclResult_t get_coll_info(void *context, ncclFunc_t coll, size_t nbytes, int npipe,
                                  float **table, int numAlgo, int numProto, int regBuff,
                                  int *nChannels)
{
    struct ctx *c = context;
    if (!c || !table)
        return ncclInternalError;
    note_own(table, numAlgo, numProto);
    int f = atomic_load(&forced), a, p, ch;
    if (!f && atomic_load(&bypass))
        return ncclSuccess; /* verify's defaults side: NCCL's own choice */
    if (f) {
        a = (f & 0xff) - 1;
        p = ((f >> 8) & 0xff) - 1;
        ch = f >> 16;
    } else {
        a = c->force_algo;
        p = c->force_proto;
        ch = c->force_channels;
    }
    if (a >= 0) { /* forcing (sweep) */
        if (!choose(table, numAlgo, numProto, a, p)) {
            atomic_fetch_add(&force_misses, 1);
            LOG(c, NCCL_LOG_TRACE, "forced %s/%s cannot run %s of %zu bytes: NCCL chooses",
                ct_nr_algo_name(a), ct_nr_proto_name(p), ct_nr_func_name(coll), nbytes);
        } else if (ch > 0 && count_settable(a))
            *nChannels = ch;
        return ncclSuccess;
    }
    const struct ct_nr_range *r = ct_nr_match(&c->table, coll, c->nranks, c->nnodes, nbytes);
    if (!r || r->keep)
        return ncclSuccess;
    if (!choose(table, numAlgo, numProto, r->algo, r->proto)) {
        LOG(c, NCCL_LOG_TRACE, "%s of %zu bytes: %s/%s not available here, NCCL chooses",
            ct_nr_func_name(coll), nbytes, ct_nr_algo_name(r->algo), ct_nr_proto_name(r->proto));
        return ncclSuccess;
    }
    if (r->channels > 0 && count_settable(r->algo))
        *nChannels = r->channels;
    LOG(c, NCCL_LOG_TRACE, "%s of %zu bytes: %s/%s, %d channels (0: NCCL's count)",
        ct_nr_func_name(coll), nbytes, ct_nr_algo_name(r->algo), ct_nr_proto_name(r->proto),
        *nChannels);
    return ncclSuccess;
}

static ncclResult_t finalize(void *context)
{
    struct ctx *c = context;
    if (c) {
        ct_nr_free(&c->table);
        free(c);
    }
    return ncclSuccess;
}

static ncclResult_t init_v5(void **context, uint64_t commId, size_t nRanks, size_t nNodes,
                            ncclDebugLogger_t log, ncclNvlDomainInfo_v5_t *nvl,
                            ncclTunerConstants_v5_t *constants)
{
    return init_common(context, nRanks, nNodes, log);
}

static ncclResult_t init_v4(size_t nRanks, size_t nNodes, ncclDebugLogger_t log, void **context)
{
    return init_common(context, nRanks, nNodes, log);
}

/* v3 (NCCL 2.22 and 2.23): no regBuff, which colltune's choice does not use */
static ncclResult_t get_coll_info_v3(void *context, ncclFunc_t coll, size_t nbytes, int npipe,
                                     float **table, int numAlgo, int numProto, int *nChannels)
{
    return get_coll_info(context, coll, nbytes, npipe, table, numAlgo, numProto, 0, nChannels);
}

EXPORT const ncclTuner_v5_t ncclTunerPlugin_v5 = {NAME, init_v5, get_coll_info, finalize};
EXPORT const ncclTuner_v4_t ncclTunerPlugin_v4 = {NAME, init_v4, get_coll_info, finalize};
EXPORT const ncclTuner_v3_t ncclTunerPlugin_v3 = {NAME, init_v4, get_coll_info_v3, finalize};
