/* SPDX-License-Identifier: MIT */
/* The reduction function type shared by algos/ (kernels) and transport/ (fused recv). */
#ifndef CT_REDFN_H
#define CT_REDFN_H

#include <stddef.h>

/* dst[i] = a[i] (op) b[i] for n elements; dst may alias a or b. */
typedef void (*ct_reduce_fn)(void *dst, const void *a, const void *b, size_t n);

/* dst[i] = dst2[i] = a[i] (op) b[i]: one pass writing two places (dst may alias a or b
 * exactly; dst2 overlaps nothing). */
typedef void (*ct_reduce2_fn)(void *dst, void *dst2, const void *a, const void *b, size_t n);

struct ct_red {
    ct_reduce_fn fn;
    size_t esize;     /* element size in bytes */
    ct_reduce_fn rev; /* the same kernel with the operands swapped (dst = b op a), for
                         receives that put the incoming operand first; may be NULL */
    ct_reduce2_fn fn2; /* fn writing two places (a one-sided reduce and its put); may be NULL */
};

#endif
