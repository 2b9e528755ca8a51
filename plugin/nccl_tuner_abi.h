/* SPDX-License-Identifier: MIT */
/*
 * The NCCL tuner plugin ABI, versions 5 (NCCL 2.28), 4 (NCCL 2.24-2.27) and 3 (NCCL 2.22-2.23,
 * which look for no other; 2.28 still loads 4 and 3): only the declarations colltune's plugin
 * needs, restated from NCCL 2.28.9 (the NCCL installed here, tag v2.28.9-1), and v3 from tag
 * v2.23.4-1 (src/include/nccl_tuner.h: v4's getCollInfo without regBuff):
 *   ext-tuner/example/nccl/common.h  ncclDebugLogLevel, ncclDebugLogSubSys, ncclDebugLogger_t
 *   ext-tuner/example/nccl/err.h     ncclResult_t
 *   ext-tuner/example/nccl/tuner.h   ncclFunc_t, NCCL_ALGO_*, NCCL_PROTO_*
 *   src/include/plugin/tuner/tuner_v5.h, tuner_v4.h   ncclTuner_v5_t, ncclTuner_v4_t
 * NCCL finds a plugin by dlsym(lib, "ncclTunerPlugin_v5"), then "_v4", ... (src/plugin/tuner.cc,
 * newest first). The cost table NCCL passes as float** is float[numAlgo][numProto] (src/enqueue.cc
 * initCollCostTable); NCCL picks the smallest non-negative cell; -1.0 marks a choice NCCL cannot
 * run for this call. nChannels starts at 0 (NCCL's own count) and is left there unless set.
 * The tuner constants of v5 are passed through untouched: their layout differs between NCCL's
 * core header and its example header in 2.28.9, so colltune keeps them opaque.
 */
#ifndef CT_PLUGIN_NCCL_TUNER_ABI_H
#define CT_PLUGIN_NCCL_TUNER_ABI_H

#include <stddef.h>
#include <stdint.h>

typedef enum {
    ncclSuccess = 0,
    ncclUnhandledCudaError = 1,
    ncclSystemError = 2,
    ncclInternalError = 3,
    ncclInvalidArgument = 4,
    ncclInvalidUsage = 5,
    ncclRemoteError = 6
} ncclResult_t;

typedef enum {
    NCCL_LOG_NONE = 0,
    NCCL_LOG_VERSION = 1,
    NCCL_LOG_WARN = 2,
    NCCL_LOG_INFO = 3,
    NCCL_LOG_ABORT = 4,
    NCCL_LOG_TRACE = 5
} ncclDebugLogLevel;

enum { NCCL_INIT = 1, NCCL_TUNING = 64, NCCL_ENV = 128 }; /* ncclDebugLogSubSys (those used) */

typedef void (*ncclDebugLogger_t)(ncclDebugLogLevel level, unsigned long flags, const char *file,
                                  int line, const char *fmt, ...);

typedef enum {
    ncclFuncBroadcast = 0,
    ncclFuncReduce = 1,
    ncclFuncAllGather = 2,
    ncclFuncReduceScatter = 3,
    ncclFuncAllReduce = 4,
    ncclFuncSendRecv = 5,
    ncclFuncSend = 6,
    ncclFuncRecv = 7,
    ncclNumFuncs = 8
} ncclFunc_t;

#define NCCL_NUM_ALGORITHMS 7 /* Tree, Ring, CollNetDirect, CollNetChain, NVLS, NVLSTree, PAT */
#define NCCL_ALGO_TREE 0
#define NCCL_ALGO_RING 1
#define NCCL_ALGO_COLLNET_DIRECT 2
#define NCCL_ALGO_COLLNET_CHAIN 3
#define NCCL_ALGO_NVLS 4
#define NCCL_ALGO_NVLS_TREE 5
#define NCCL_ALGO_PAT 6

#define NCCL_NUM_PROTOCOLS 3 /* LL, LL128, Simple */
#define NCCL_PROTO_LL 0
#define NCCL_PROTO_LL128 1
#define NCCL_PROTO_SIMPLE 2

#define NCCL_ALGO_PROTO_IGNORE -1.0

typedef struct {
    int nNvlDomains;          /* number of NVLink domains */
    int minRanksPerNvlDomain; /* minimum ranks across all NVLink domains */
    int maxRanksPerNvlDomain; /* maximum ranks across all NVLink domains */
} ncclNvlDomainInfo_v5_t;

typedef struct ncclTunerConstants_v5 ncclTunerConstants_v5_t; /* opaque here (see above) */

typedef struct {
    const char *name;
    ncclResult_t (*init)(void **ctx, uint64_t commId, size_t nRanks, size_t nNodes,
                         ncclDebugLogger_t logFunction, ncclNvlDomainInfo_v5_t *nvlDomainInfo,
                         ncclTunerConstants_v5_t *constants);
    ncclResult_t (*getCollInfo)(void *context, ncclFunc_t collType, size_t nBytes, int numPipeOps,
                                float **collCostTable, int numAlgo, int numProto, int regBuff,
                                int *nChannels);
    ncclResult_t (*finalize)(void *context);
} ncclTuner_v5_t;

typedef struct {
    const char *name;
    ncclResult_t (*init)(size_t nRanks, size_t nNodes, ncclDebugLogger_t logFunction,
                         void **context);
    ncclResult_t (*getCollInfo)(void *context, ncclFunc_t collType, size_t nBytes, int numPipeOps,
                                float **collCostTable, int numAlgo, int numProto, int regBuff,
                                int *nChannels);
    ncclResult_t (*destroy)(void *context);
} ncclTuner_v4_t;

typedef struct {
    const char *name;
    ncclResult_t (*init)(size_t nRanks, size_t nNodes, ncclDebugLogger_t logFunction,
                         void **context);
    ncclResult_t (*getCollInfo)(void *context, ncclFunc_t collType, size_t nBytes, int numPipeOps,
                                float **collCostTable, int numAlgo, int numProto, int *nChannels);
    ncclResult_t (*destroy)(void *context);
} ncclTuner_v3_t;

#endif
