/* SPDX-License-Identifier: MIT */
/*
 * The NCCL engine behind backend.h: libnccl and libcudart loaded by dlopen, buffers in GPU
 * memory through device/ (cuda kind), one NCCL communicator per job bootstrapped over
 * colltune's own bootstrap (rank 0's ncclUniqueId goes to every rank through the bootstrap's
 * allgather). nccl-tests conventions: out-of-place and in-place (allgather's send block at
 * rank * count of the output, reducescatter's output at rank * count of the input),
 * alltoall as grouped ncclSend/ncclRecv, inputs and checks as the native engine's
 * (backend/verify.h), times from CUDA events on the engine's stream.
 * The algorithm of a point is NCCL's own choice; colltune's tuner plugin forces one
 * (COLLTUNE_NCCL_FORCE or colltune_tuner_force, plugin/nccl_tuner.c) when NCCL loads it.
 * Not yet measured on a GPU: see README "GPU clusters".
 */
#ifndef CT_NCCL_H
#define CT_NCCL_H

#include "../device/device.h"
#include "../transport/boot.h"
#include "backend.h"

struct ct_nccl;

/* Can this host run the NCCL engine on GPU gpu (libraries, driver, GPU)? 0, or CT_EUNSUPP
 * with one line saying what is missing. Local: no other rank is involved. Runs in a child
 * process, so that the caller can still fork ranks that use CUDA (CUDA does not survive a
 * fork once initialized). */
int ct_nccl_probe(int gpu, struct ct_err *err);

/* Collective over boot: every rank opens, or every rank fails (a rank's failure is reported
 * to all). Fills be with the engine (ctx *n). */
int ct_nccl_open(struct ct_backend *be, struct ct_nccl **n, struct ct_boot *boot,
                 const struct ct_shape *shape, int gpu, struct ct_err *err);
void ct_nccl_close(struct ct_nccl *n);

/* Force NCCL's (algorithm, protocol, channels) for every following call of this process
 * through colltune's tuner plugin, which NCCL must have loaded (NCCL_TUNER_PLUGIN = its path):
 * the plugin's colltune_tuner_force, found with dlopen(RTLD_NOLOAD). algo NULL ends forcing.
 * *misses (may be NULL): the plugin's count of calls NCCL could not run as forced, so far.
 * CT_EUNSUPP when the plugin is not loaded or is not colltune's; CT_EINVAL for a bad name. */
int ct_nccl_tuner_force(const char *algo, const char *proto, int channels, long *misses,
                        struct ct_err *err);

struct ct_bench_cfg;
struct ct_point;
/* One point as `run` reports it (ct_bench_point's figures): cfg->check > 0 verifies once
 * before timing (nccl-tests -c 1). Collective. */
int ct_nccl_point(struct ct_nccl *n, struct ct_job *j, const struct ct_bench_cfg *cfg,
                  struct ct_point *out, struct ct_err *err);

#endif
