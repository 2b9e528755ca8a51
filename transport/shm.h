/* SPDX-License-Identifier: MIT */
/*
 * Shared-memory transport extras: the transport itself is the ct_tp_shm_ops table row;
 * this header adds the launcher's clean-up of a job's POSIX shm objects.
 */
#ifndef CT_SHM_H
#define CT_SHM_H

#include <stdint.h>

#include "tp.h"

extern const struct ct_tp_ops ct_tp_shm_ops;

/*
 * Unlink every POSIX shared-memory object a job may have left behind (all objects the shm
 * transport creates are named "/ct-<job_id as 16 hex digits>-..."). Safe while no rank of
 * the job is still running; used by the --local launcher after its children exit, also
 * when one was killed. Returns how many objects were removed, or CT_EIO when /dev/shm
 * cannot be read.
 */
int ct_shm_cleanup_job(uint64_t job_id);

/*
 * How the endpoint's doorbell orders a publish against a sleeping peer (tp_shm.c ring()):
 * "membarrier" (asymmetric: every rank of the job spins and the kernel has
 * MEMBARRIER_CMD_GLOBAL_EXPEDITED) or "fence" (a full fence on both sides).
 */
const char *ct_shm_doorbell(const struct ct_tp *tp);

/*
 * Whether ranks on this host, meeting in shared memory in groups of group (each rank's
 * channels object holds a channel from every rank of its group: 129 MiB a rank at 256), fit
 * in what /dev/shm has free and the memory available: 0, or CT_EUNSUPP with one line (256
 * ranks of a 23 GiB host called the OOM killer). For the launcher, before any rank starts.
 */
int ct_shm_host_fits(int ranks, int group, struct ct_err *err);

#endif
