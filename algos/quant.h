/* SPDX-License-Identifier: MIT */
/*
 * Block-scaled quantization for the quantized ring AllReduce (--quant). A float32 buffer
 * travels as blocks of CT_QUANT_BLOCK elements, each one float32 scale (amax / the
 * format's largest value) followed by one byte per element: int8 (-127..127), OCP fp8
 * e4m3 (max 448, no infinities) or fp8 e5m2 (max 57344). Encoding rounds to nearest
 * (int8: half away from zero; fp8: half to even) and saturates; a block of zeros has
 * scale 0. Wire layout of n elements: ceil(n / CT_QUANT_BLOCK) scales, then n codes.
 *
 * The rule that keeps ranks bitwise identical (PCCL's): a value is only ever used in its
 * decoded form once it has been encoded, by every rank alike, including the rank that
 * encoded it; and a rank forwards received codes unchanged rather than re-encoding them.
 * The kernels are plain C with no data-dependent evaluation order, so one binary gives
 * the same bits on every rank.
 */
#ifndef CT_QUANT_H
#define CT_QUANT_H

#include <stdint.h>

#include "../lib/err.h"

enum ct_quant { CT_QUANT_NONE = 0, CT_QUANT_INT8, CT_QUANT_FP8E4M3, CT_QUANT_FP8E5M2,
                CT_QUANT_COUNT };

#define CT_QUANT_BLOCK 256u /* elements per scale */

/* "none", "int8", "fp8e4m3", "fp8e5m2"; find returns -1 when unknown. */
const char *ct_quant_name(enum ct_quant q);
int ct_quant_find(const char *name);

/* Bytes on the wire for n float32 elements (0 for CT_QUANT_NONE: not quantized). */
static inline uint64_t ct_quant_wire_bytes(enum ct_quant q, uint64_t n)
{
    return q == CT_QUANT_NONE ? 0 : (n + CT_QUANT_BLOCK - 1) / CT_QUANT_BLOCK * 4 + n;
}
/* wire = encode(src[0..n)). wire must be 4-byte aligned. */
void ct_quant_encode(enum ct_quant q, void *wire, const float *src, uint64_t n);
/* dst[i] = decode(wire)[i]. */
void ct_quant_decode(enum ct_quant q, float *dst, const void *wire, uint64_t n);
/* dst[i] = a[i] + decode(wire)[i]; dst may alias a. */
void ct_quant_decode_add(enum ct_quant q, float *dst, const float *a, const void *wire,
                         uint64_t n);

/*
 * The quantized ring's partition of count elements: channel c of nch, ring block b of
 * nranks, aligned to whole quantization blocks. *off and *n in elements (n may be 0).
 */
void ct_qring_block(uint64_t count, int nch, int nranks, int c, int b, uint64_t *off,
                    uint64_t *n);

/*
 * The result every rank of a quantized ring AllReduce (sum) must hold, bit for bit,
 * computed serially: for each element range of ring block b the partial sum starts at
 * rank b and picks up ranks b+1, ..., b+N-1, passing through encode/decode at every hop
 * and once more before the AllGather. fill(ctx, rank, first, n, buf) supplies rank's
 * float32 inputs for global indices first..first+n-1. Writes out[first..first+n) for
 * [first, first + n) of the buffer (any range; used piecewise to bound memory).
 */
typedef void (*ct_qring_fill_fn)(void *ctx, int rank, uint64_t first, uint64_t n, float *buf);
void ct_qring_reference(enum ct_quant q, int nranks, int nch, uint64_t count, uint64_t first,
                        uint64_t n, ct_qring_fill_fn fill, void *ctx, float *out);

struct ct_job;
struct ct_sched;
/* The quantized ring AllReduce schedule of j->shape.rank (algos/ring.c calls it). */
int ct_qring_build(const struct ct_job *j, struct ct_sched *s, struct ct_err *err);

#endif
