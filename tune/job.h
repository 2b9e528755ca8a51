/* SPDX-License-Identifier: MIT */
/*
 * One rank's part of `colltune sweep` on a communicator: the native backend over it, the
 * sweep (or the re-measurement of a config), and the tuned config built from the points.
 * What the user sees (progress, saving, the table) stays with the caller, through the
 * callbacks of the sweep configuration.
 */
#ifndef CT_JOB_H
#define CT_JOB_H

#include "../backend/native.h"
#include "sweep.h"

struct ct_sweep_job {
    /* in */
    struct ct_sweep_cfg cfg; /* shape from the communicator, callbacks included; the run sets
                                tcp (streams searched) and max_threads (cores per rank) */
    const struct ct_config *verify;   /* re-measure this config instead of sweeping */
    const char *version;              /* of colltune, for the config */
    ct_native_conns_fn set_conns; /* used when tcp carries traffic; NULL: fixed */
    void *conns_arg;
    struct ct_mem *mem; /* the job's memory (borrowed; NULL: host): ct_native_set_mem */
    /* out */
    struct ct_config meta; /* sweep: header from the start (callbacks may save it), rules at
                              the end, also after a failure (partial) */
    struct ct_sweep_result res;
    struct ct_sweep_regret *regrets; /* verify */
    size_t nregrets;
    /* memory not the transports' (mem set, a sweep or a verify): its kind, how many timed
       points ran in place over IPC and how many staged through host, why the buffers were
       not shared ("" if they were) (bench.h) */
    char mem_kind[16];
    uint64_t points_resident, points_staged;
    char res_why[200];
    /* the caller's: times it saved the running sweep in its folder (the first removed what
       an earlier sweep left there) */
    int saved;
};

/* The same over any engine (be, ctx): hosts, transport and host for the config's
 * fingerprint (a library engine: "Open MPI 4.1.4" as transport). */
int ct_sweep_job_run_on(struct ct_sweep_job *j, const struct ct_backend *be, void *ctx, int hosts,
                        const char *transport, const char *host, struct ct_err *err);
/* Every rank of *comm. Returns what ct_sweep_run or ct_sweep_verify returned. */
int ct_sweep_job_run(struct ct_sweep_job *j, struct ct_comm **comm, struct ct_err *err);
void ct_sweep_job_release(struct ct_sweep_job *j);

#endif
