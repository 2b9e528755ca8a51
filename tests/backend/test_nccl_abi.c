/* SPDX-License-Identifier: MIT */
/*
 * backend/nccl_abi.h, the NCCL declarations the engine restates, against the installed nccl.h
 * (make passes -DHAVE_NCCL_H and its folder where $(CUDA_HOME)/include/nccl.h exists; SKIP
 * elsewhere): every restated ncclConfig_t field at nccl.h's offset, the constants equal, and
 * NCCL_CONFIG_INITIALIZER's values.
 */
#include <criterion/criterion.h>
#include <stddef.h>
#include <string.h>

#include "backend/nccl_abi.h"

#ifdef HAVE_NCCL_H
#include <nccl.h>

#define SAME(f) cr_expect_eq(offsetof(struct ct_nccl_config, f), offsetof(ncclConfig_t, f), #f)

Test(nccl_abi, restated_config_has_nccl_h_layout)
{
    SAME(size);
    SAME(magic);
    SAME(version);
    SAME(blocking);
    SAME(cgaClusterSize);
    SAME(minCTAs);
    SAME(maxCTAs);
    SAME(netName);
    SAME(splitShare);
    SAME(trafficClass);
    SAME(commName);
    SAME(collnetEnable);
    SAME(CTAPolicy);
    SAME(shrinkShare);
    SAME(nvlsCTAs);
    SAME(nChannelsPerNetPeer);
    SAME(nvlinkCentricSched);
    /* a newer nccl.h may append fields: ours is a prefix */
    cr_expect_leq(sizeof(struct ct_nccl_config), sizeof(ncclConfig_t));
    cr_expect_geq(NCCL_VERSION(NCCL_MAJOR, NCCL_MINOR, NCCL_PATCH), CT_NCCL_CONFIG_VERSION);
    cr_expect_eq(NCCL_UNIQUE_ID_BYTES, CT_NCCL_UNIQUE_ID_BYTES);
    cr_expect_eq(NCCL_CONFIG_UNDEF_INT, CT_NCCL_CONFIG_UNDEF);
    cr_expect_eq(ncclInProgress, CT_NCCL_IN_PROGRESS);
    cr_expect_eq(cudaErrorNotReady, CT_CUDA_NOT_READY);
}

Test(nccl_abi, default_config_is_nccl_config_initializer)
{
    ncclConfig_t ref = NCCL_CONFIG_INITIALIZER;
    struct ct_nccl_config c = ct_nccl_config_default();
    cr_expect_eq(c.magic, ref.magic);
    cr_expect_eq(c.size, sizeof c);
    /* every attribute after the header as NCCL's initializer sets it */
    size_t from = offsetof(struct ct_nccl_config, blocking);
    cr_expect_eq(memcmp((char *)&c + from, (char *)&ref + from, sizeof c - from), 0);
}
#else
Test(nccl_abi, restated_config_has_nccl_h_layout)
{
    cr_skip_test("no nccl.h in $(CUDA_HOME)/include: the restated layout is unchecked here");
}
#endif
