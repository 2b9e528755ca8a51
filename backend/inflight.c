/* SPDX-License-Identifier: MIT */
/* K AllReduce collectives in flight over disjoint communicators, one thread each. */
#include "inflight.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

int ct_inflight_prepare(struct ct_inflight *f, int k, struct ct_comm *comms,
                        const struct ct_algo *al, const struct ct_job *j,
                        const struct ct_exec_args *a, struct ct_err *err)
{
    memset(f, 0, sizeof *f);
    if (j->coll != CT_ALLREDUCE)
        return ct_err_set(err, CT_EUNSUPP, "--inflight splits an allreduce (not %s)",
                          ct_coll_name(j->coll));
    f->k = k;
    f->comms = comms;
    f->execs = ct_xcalloc((size_t)k, sizeof *f->execs);
    f->scheds = ct_xcalloc((size_t)k, sizeof *f->scheds);
    f->args = ct_xcalloc((size_t)k, sizeof *f->args);
    f->scratch = ct_xcalloc((size_t)k, sizeof *f->scratch);
    size_t es = ct_dtype_size(j->dtype);
    for (int i = 0; i < k; i++) {
        struct ct_job sub = *j;
        uint64_t off = ct_part_off_line(j->count, (uint64_t)k, (uint64_t)i, es);
        sub.count = ct_part_len_line(j->count, (uint64_t)k, (uint64_t)i, es);
        ct_exec_init(&f->execs[i]);
        int rc = ct_algo_build(al, &sub, &f->scheds[i], err);
        if (rc < 0) {
            f->k = i;
            ct_inflight_release(f);
            return rc;
        }
        f->args[i] = *a;
        f->args[i].buf[CT_BUF_SEND] = (char *)a->buf[CT_BUF_SEND] + off * es;
        f->args[i].buf[CT_BUF_RECV] = (char *)a->buf[CT_BUF_RECV] + off * es;
        f->scratch[i] = ct_xmalloc(f->scheds[i].scratch_bytes + 64);
        f->args[i].buf[CT_BUF_SCRATCH] = f->scratch[i];
    }
    return 0;
}

struct part {
    struct ct_inflight *f;
    int i, rc;
    struct ct_err err;
};

static void *run_part(void *arg)
{
    struct part *p = arg;
    struct ct_inflight *f = p->f;
    p->rc = ct_exec_run(&f->execs[p->i], &f->comms[p->i], &f->scheds[p->i], &f->args[p->i],
                        &p->err);
    return NULL;
}

int ct_inflight_run(struct ct_inflight *f, struct ct_err *err)
{
    struct part *ps = ct_xcalloc((size_t)f->k, sizeof *ps);
    pthread_t *th = ct_xcalloc((size_t)f->k, sizeof *th);
    for (int i = 0; i < f->k; i++) {
        ps[i].f = f;
        ps[i].i = i;
        if (i && pthread_create(&th[i], NULL, run_part, &ps[i]) != 0) {
            ps[i].rc = ct_err_set(&ps[i].err, CT_ENOMEM, "cannot start a thread");
            th[i] = 0;
        }
    }
    run_part(&ps[0]);
    int rc = 0;
    for (int i = 0; i < f->k; i++) {
        if (i && th[i])
            pthread_join(th[i], NULL);
        if (ps[i].rc < 0 && rc == 0) {
            rc = ps[i].rc;
            if (err)
                *err = ps[i].err;
            ct_err_wrap(err, "in-flight collective %d of %d: ", i + 1, f->k);
        }
    }
    free(ps);
    free(th);
    return rc;
}

void ct_inflight_release(struct ct_inflight *f)
{
    for (int i = 0; i < f->k; i++) {
        ct_exec_release(&f->execs[i]);
        ct_sched_release(&f->scheds[i]);
        free(f->scratch[i]);
    }
    free(f->execs);
    free(f->scheds);
    free(f->args);
    free(f->scratch);
    memset(f, 0, sizeof *f);
}
