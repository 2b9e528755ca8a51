/* SPDX-License-Identifier: MIT */
/* Per-collective facts (nccl-tests' conventions): sizes as printed and busbw factors. */
#ifndef CT_COLL_H
#define CT_COLL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "algo.h"

/* Per-collective facts (nccl-tests' getBw): bytes moved and bus factor. */
struct ct_coll_desc {
    enum ct_coll coll;
    const char *name;
    bool needs_op;
    /* size in bytes as nccl-tests prints it, for a per-rank count */
    uint64_t (*size_bytes)(uint64_t count, size_t esize, int nranks);
    /* per-rank count for a requested size (rounded down like nccl-tests) */
    uint64_t (*count_for)(uint64_t size, size_t esize, int nranks);
    double (*bus_factor)(int nranks);
};
const struct ct_coll_desc *ct_coll_desc(enum ct_coll c);

#endif
