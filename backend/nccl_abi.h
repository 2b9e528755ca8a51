/* SPDX-License-Identifier: MIT */
/*
 * The few NCCL declarations the NCCL engine passes by layout, restated from NCCL 2.28.9's
 * nccl.h (the NCCL installed here) so that colltune builds without NCCL's headers;
 * tests/backend/test_nccl.c checks them against nccl.h where it is installed.
 */
#ifndef CT_BACKEND_NCCL_ABI_H
#define CT_BACKEND_NCCL_ABI_H

#include <limits.h>
#include <stddef.h>

#define CT_NCCL_UNIQUE_ID_BYTES 128 /* NCCL_UNIQUE_ID_BYTES */
#define CT_NCCL_CONFIG_MAGIC 0xcafebeefu
#define CT_NCCL_CONFIG_UNDEF INT_MIN /* NCCL_CONFIG_UNDEF_INT: NCCL's default */
#define CT_NCCL_CONFIG_VERSION 22809 /* NCCL_VERSION(2, 28, 9): the layout below */
enum { CT_NCCL_SUCCESS = 0, CT_NCCL_IN_PROGRESS = 7 }; /* ncclResult_t */
enum { CT_CUDA_SUCCESS = 0, CT_CUDA_NOT_READY = 600 }; /* cudaError_t */

/* ncclConfig_t (ncclConfig_v22800). NCCL from 2.17 copies the first `size` bytes over its
 * defaults and ignores the fields newer than `version` (src/init.cc parseCommConfig); 2.14-2.16
 * read `blocking` alone. Fields are only ever appended, so this prefix serves every NCCL from
 * 2.14 on. */
struct ct_nccl_config {
    size_t size;
    unsigned magic, version;
    int blocking, cgaClusterSize, minCTAs, maxCTAs;
    const char *netName;
    int splitShare, trafficClass;
    const char *commName;
    int collnetEnable, CTAPolicy, shrinkShare, nvlsCTAs, nChannelsPerNetPeer;
    int nvlinkCentricSched; /* 2.28 */
};

/* NCCL_CONFIG_INITIALIZER: every attribute NCCL's default */
static inline struct ct_nccl_config ct_nccl_config_default(void)
{
    const int u = CT_NCCL_CONFIG_UNDEF;
    struct ct_nccl_config c = {.size = sizeof c, .magic = CT_NCCL_CONFIG_MAGIC};
    c.version = CT_NCCL_CONFIG_VERSION;
    c.blocking = c.cgaClusterSize = c.minCTAs = c.maxCTAs = c.splitShare = c.trafficClass = u;
    c.collnetEnable = c.CTAPolicy = c.shrinkShare = c.nvlsCTAs = c.nChannelsPerNetPeer = u;
    c.nvlinkCentricSched = u;
    return c;
}

#endif
