/* SPDX-License-Identifier: MIT */
/* One rank's part of a sweep on a communicator (see job.h). */
#include "job.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"

int ct_sweep_job_run(struct ct_sweep_job *j, struct ct_comm **comm, struct ct_err *err)
{
    char tp[64];
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    int local = (*comm)->local_size > 0 ? (*comm)->local_size : 1;
    j->cfg.tcp = strstr(ct_comm_tp_names(*comm, tp, sizeof tp), "tcp") != NULL;
    j->cfg.max_threads = (int)(cores / local);
    struct ct_backend be;
    struct ct_native nat;
    ct_native_open(&be, &nat, comm, j->cfg.tcp ? j->set_streams : NULL, j->streams_arg);
    int rc;
    if (j->verify) {
        rc = ct_sweep_verify(&j->cfg, &be, &nat, j->verify, &j->regrets, &j->nregrets, err);
    } else {
        ct_sweep_meta_init(&j->meta, &j->cfg, j->version, (*comm)->nnodes,
                           ct_comm_tp_names(*comm, tp, sizeof tp), (*comm)->boot->host);
        rc = ct_sweep_run(&j->cfg, &be, &nat, &j->res, err);
        ct_sweep_config_build(&j->meta, &j->cfg, &j->res, rc < 0);
    }
    ct_native_close(&nat);
    return rc;
}

void ct_sweep_job_release(struct ct_sweep_job *j)
{
    ct_sweep_result_release(&j->res);
    ct_config_release(&j->meta);
    free(j->regrets);
    j->regrets = NULL;
    j->nregrets = 0;
}
