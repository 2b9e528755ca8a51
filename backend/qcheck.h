/* SPDX-License-Identifier: MIT */
/*
 * Checking a quantized AllReduce (--quant): it cannot be exact, so instead of #wrong
 * against the exact sum it is checked three ways, collectively:
 *   wrong     elements that differ, bit for bit, from the result the quantized ring must
 *             produce (ct_qring_reference over every rank's inputs);
 *   diverged  elements of each rank's result that differ from rank 0's (rank 0 sends its
 *             result to every rank), summed over ranks: must be 0;
 *   max_err, rms_err  |result - exact float32 sum| over every element of every rank.
 */
#ifndef CT_QCHECK_H
#define CT_QCHECK_H

#include "../algos/algo.h"
#include "comm.h"

struct ct_qstats {
    long wrong, diverged;
    double max_err, rms_err;
};

/* got: this rank's AllReduce result of j (j->quant set) from ct_verify_fill inputs with
 * seed. Collective over c; every rank gets the totals. */
int ct_qcheck(struct ct_comm *c, const struct ct_job *j, const float *got, uint64_t seed,
              struct ct_qstats *out, struct ct_err *err);

#endif
