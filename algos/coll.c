/* SPDX-License-Identifier: MIT */
/* Per-collective facts, once: sizes as nccl-tests prints them and the busbw factors. */
#include "coll.h"

static uint64_t size_single(uint64_t count, size_t es, int n)
{
    return count * es;
}
static uint64_t size_total(uint64_t count, size_t es, int n)
{
    return count * es * (uint64_t)n;
}
static uint64_t count_single(uint64_t size, size_t es, int n)
{
    return size / es;
}
static uint64_t count_total(uint64_t size, size_t es, int n)
{
    return size / es / (uint64_t)n;
}
static double bus_allreduce(int n)
{
    return n > 1 ? 2.0 * (n - 1) / n : 0.0;
}
static double bus_nm1(int n)
{
    return n > 1 ? (double)(n - 1) / n : 0.0;
}

static const struct ct_coll_desc descs[CT_COLL_COUNT] = {
    [CT_ALLREDUCE] = {CT_ALLREDUCE, "allreduce", true, size_single, count_single, bus_allreduce},
    [CT_ALLGATHER] = {CT_ALLGATHER, "allgather", false, size_total, count_total, bus_nm1},
    [CT_REDUCESCATTER] = {CT_REDUCESCATTER, "reducescatter", true, size_total, count_total,
                          bus_nm1},
    [CT_ALLTOALL] = {CT_ALLTOALL, "alltoall", false, size_total, count_total, bus_nm1},
};

const struct ct_coll_desc *ct_coll_desc(enum ct_coll c)
{
    return c < CT_COLL_COUNT ? &descs[c] : NULL;
}
