/* SPDX-License-Identifier: MIT */
/* Checks of a quantized AllReduce: against the model, across ranks, and the error. */
#include "qcheck.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "verify.h"

#define PIECE (1u << 16)     /* elements per model piece */
#define XFER (1u << 20)      /* bytes per message of rank 0's result */

struct fill_ctx {
    int nranks;
    uint64_t seed;
};

static void fill(void *arg, int rank, uint64_t first, uint64_t n, float *buf)
{
    const struct fill_ctx *f = arg;
    ct_verify_fill(CT_FLOAT32, CT_SUM, rank, f->nranks, f->seed, first, buf, n);
}

struct sums {
    long wrong, diverged;
    double max_err, sumsq;
};

/* Elements of got that differ in bits from rank 0's, received in XFER pieces. */
static int diverged_from_root(struct ct_comm *c, const float *got, uint64_t count, long *out,
                              struct ct_err *err)
{
    uint64_t bytes = count * 4;
    *out = 0;
    if (c->rank == 0) {
        for (int p = 1; p < c->size; p++)
            for (uint64_t o = 0; o < bytes; o += XFER)
                CT_TRY(ct_tp_send(c->tp_of[p], p, (const char *)got + o,
                                  bytes - o < XFER ? bytes - o : XFER, c->timeout_ns, err));
        return 0;
    }
    char *tmp = ct_xmalloc(XFER);
    int rc = 0;
    for (uint64_t o = 0; rc == 0 && o < bytes; o += XFER) {
        uint64_t len = bytes - o < XFER ? bytes - o : XFER;
        rc = ct_tp_recv(c->tp_of[0], 0, tmp, len, c->timeout_ns, err);
        if (rc == 0)
            *out += (long)ct_verify_count_wrong(CT_FLOAT32, (const char *)got + o, tmp, len / 4);
    }
    free(tmp);
    return rc < 0 ? ct_err_wrap(err, "comparing with rank 0's result: ") : 0;
}

int ct_qcheck(struct ct_comm *c, const struct ct_job *j, const float *got, uint64_t seed,
              struct ct_qstats *out, struct ct_err *err)
{
    int n = c->size;
    uint64_t count = j->count;
    struct fill_ctx fc = {n, seed};
    struct sums mine = {0, 0, 0, 0};
    float *ref = ct_xmalloc(PIECE * sizeof(float)), *exact = ct_xmalloc(PIECE * sizeof(float));
    for (uint64_t o = 0; o < count; o += PIECE) {
        uint64_t len = count - o < PIECE ? count - o : PIECE;
        ct_qring_reference(j->quant, n, (int)j->params.v[CT_P_CHANNELS], count, o, len, fill, &fc,
                           ref);
        ct_verify_expected(CT_FLOAT32, CT_SUM, n, seed, o, exact, len);
        mine.wrong += (long)ct_verify_count_wrong(CT_FLOAT32, got + o, ref, len);
        for (uint64_t i = 0; i < len; i++) {
            double e = fabs((double)got[o + i] - (double)exact[i]);
            if (!(e <= mine.max_err)) /* a NaN result shows as NaN */
                mine.max_err = e;
            mine.sumsq += e * e;
        }
    }
    free(ref);
    free(exact);
    CT_TRY(diverged_from_root(c, got, count, &mine.diverged, err));
    struct sums *all = ct_xmalloc(sizeof *all * (size_t)n);
    int rc = ct_boot_allgather(c->boot, &mine, sizeof mine, all, err);
    memset(out, 0, sizeof *out);
    double sumsq = 0;
    for (int r = 0; rc == 0 && r < n; r++) {
        out->wrong += all[r].wrong;
        out->diverged += all[r].diverged;
        if (!(all[r].max_err <= out->max_err))
            out->max_err = all[r].max_err;
        sumsq += all[r].sumsq;
    }
    free(all);
    out->rms_err = count ? sqrt(sumsq / ((double)count * n)) : 0;
    return rc;
}
