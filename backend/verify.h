/* SPDX-License-Identifier: MIT */
/*
 * Verifiable inputs, nccl-tests style: every rank fills its buffers from a hash of
 * (seed, rank, global element index), and the exact reduced result can be computed
 * anywhere without the other ranks' data.
 */
#ifndef CT_VERIFY_H
#define CT_VERIFY_H

#include <stddef.h>
#include <stdint.h>

#include "../algos/algo.h"

/*
 * Fill n elements of type t standing for global element indices first_index ..
 * first_index + n - 1 of rank's contribution to a reduction op over nranks ranks.
 * The values are chosen per (t, op, nranks) so that reducing them with the kernels of
 * ct_reduce_fn_get in any order and any grouping gives one exact, bit-identical result:
 *   integers: sum any bits (wrapping is exact), prod odd values (products do not
 *             collapse to 0), min/max values that vary within a window per index;
 *   float sum/avg: small integers (multiples of 1/8 for float32/float64) bounded so that
 *             every partial sum over nranks ranks is exactly representable; past the
 *             type's limit (more than 256 ranks for bfloat16) some ranks contribute 0;
 *   float prod: +-1 everywhere except one rank per index, which holds +-(1 + k/8) * 2^e
 *             with e in [-8, 8];
 *   float min/max: finite multiples of 1/8 (of 1 for the 16-bit types).
 * Float inputs are never NaN or -0. Values differ between ranks and indices, and which
 * rank holds which value rotates with the index, so a block at the wrong offset, a
 * missing or a duplicated rank shows. For collectives without a reduction (allgather,
 * alltoall) pass CT_MAX: its inputs are the most varied. Costs two hashes per element.
 * Aborts (CT_BUG) on an invalid t or op, nranks < 1 or rank outside [0, nranks).
 */
void ct_verify_fill(enum ct_dtype t, enum ct_redop op, int rank, int nranks, uint64_t seed,
                    uint64_t first_index, void *buf, size_t n);

/*
 * The exact result at global indices first_index .. first_index + n - 1 of reducing all
 * nranks ranks' ct_verify_fill inputs with op. For avg it is the sum scaled by
 * ct_scale_fn_get(t) with divisor nranks, as the executor does. Closed form: one hash
 * per element (plus one per 64 ranks for float prod) after O(nranks) setup per call.
 */
void ct_verify_expected(enum ct_dtype t, enum ct_redop op, int nranks, uint64_t seed,
                        uint64_t first_index, void *out, size_t n);

/*
 * Number of elements whose bits differ between got and want; two NaNs of any payload
 * count as equal.
 */
size_t ct_verify_count_wrong(enum ct_dtype t, const void *got, const void *want, size_t n);

/* Index of the first element that ct_verify_count_wrong would count, or n if none. */
size_t ct_verify_first_wrong(enum ct_dtype t, const void *got, const void *want, size_t n);

/*
 * A job's inputs and result check, nccl-tests style, for any engine: fill rank's send buffer
 * of j (count elements for allreduce and allgather, nranks blocks of count for reducescatter
 * and alltoall), and count the wrong elements of j's receive buffer (host memory), building
 * the expected values want_elems at a time in want (scratch of want_elems elements).
 */
void ct_verify_fill_job(const struct ct_job *j, uint64_t seed, void *send);
long ct_verify_job(const struct ct_job *j, uint64_t seed, const void *recv, void *want,
                   size_t want_elems);

/*
 * A sampled check of a large receive buffer (a sweep's points of 16 MiB and more, where
 * poisoning, building the expected output and comparing took two thirds of the checks' time
 * and a third of the sweep's): per output block the first and last CT_VERIFY_EDGE elements
 * in full and CT_VERIFY_WIN elements every CT_VERIFY_STRIDE between them (a prime, so that
 * chunk and block edges at any offset fall into windows; a wrong region of a stride or more
 * always does). poison_sampled writes all ones (NaN) over exactly the elements that
 * ct_verify_job_sampled compares; want is scratch of CT_VERIFY_EDGE elements.
 */
#define CT_VERIFY_EDGE 16384u
#define CT_VERIFY_WIN 64u
#define CT_VERIFY_STRIDE 1031u
void ct_verify_job_poison_sampled(const struct ct_job *j, void *recv);
long ct_verify_job_sampled(const struct ct_job *j, uint64_t seed, const void *recv, void *want);

/* The whole expected receive buffer of j, ct_verify_job_elems(j) elements, into want: every
 * engine of one job expects the same, so a sweep builds it once per job and compares each
 * engine's result with ct_verify_count_wrong. */
uint64_t ct_verify_job_elems(const struct ct_job *j);
void ct_verify_job_expected(const struct ct_job *j, uint64_t seed, void *want);

#endif
