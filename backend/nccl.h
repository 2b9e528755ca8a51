/* SPDX-License-Identifier: MIT */
/*
 * The NCCL engine behind backend.h: libnccl and libcudart loaded by dlopen, buffers in GPU
 * memory through device/ (cuda kind), one NCCL communicator per job bootstrapped over
 * colltune's own bootstrap (rank 0's ncclUniqueId goes to every rank through the bootstrap's
 * allgather). nccl-tests conventions: out-of-place and in-place (allgather's send block at
 * rank * count of the output, reducescatter's output at rank * count of the input),
 * alltoall as grouped ncclSend/ncclRecv, inputs and checks as the native engine's
 * (backend/verify.h), times from CUDA events on the engine's stream.
 * Candidates (a sweep's rows): "nccl:default", NCCL's own choice, and "nccl:ALGO/PROTO" for each
 * algorithm and protocol a tuner may pick for the collective (ct_nccl_rows). A forced row runs
 * through colltune's tuner plugin (colltune_tuner_force, plugin/nccl_tuner.c), which NCCL loads
 * when NCCL_TUNER_PLUGIN names it at communicator creation; without it only the default row
 * is offered. A forced row NCCL cannot run for a call (its cost table marks the cell -1: the
 * plugin counts a miss) is refused at that point, on every rank alike (CT_EUNSUPP). A forced
 * row's channel count (CT_P_CHANNELS, a row's `own` parameter) is NCCL's own (CT_PARAM_OWN)
 * or the one the point names: a sweep starts at NCCL's own and searches 1..NCCL's MAXCHANNELS
 * (be->max_channels: 32 before NCCL 2.25, 64 from).
 * Not yet measured on a GPU: see README "GPU clusters".
 */
#ifndef CT_NCCL_H
#define CT_NCCL_H

#include "../device/device.h"
#include "../transport/boot.h"
#include "backend.h"

struct ct_nccl;

/* The candidate rows of coll: "nccl:default" (lib_id 0) first, then "nccl:ALGO/PROTO" for each
 * (algorithm, protocol) NCCL's tuner interface can select for it (alltoall, grouped send and
 * receive, has the default only). lib_id of a forced row: 1 + algorithm * 3 + protocol, in
 * NCCL's numbering (NCCL_ALGO_*, NCCL_PROTO_*); its parameter, the channel count. */
#define CT_NCCL_MAX_ROWS 22
struct ct_nccl_rows {
    struct ct_algo a[CT_NCCL_MAX_ROWS];
    char name[CT_NCCL_MAX_ROWS][32];
    int n;
};
void ct_nccl_rows(enum ct_coll coll, struct ct_nccl_rows *r);

/* colltune's NCCL tuner plugin (libnccl-tuner-colltune.so): $COLLTUNE_NCCL_PLUGIN, else beside
 * the colltune binary, in its build/ folder or in ../lib/colltune (make install). Its absolute
 * path into buf, or CT_EUNSUPP saying where it was looked for. */
int ct_nccl_plugin_path(char *buf, size_t len, struct ct_err *err);

/* Can this host run the NCCL engine on GPU gpu (libraries, driver, GPU)? 0, or CT_EUNSUPP
 * with one line saying what is missing. Local: no other rank is involved. Runs in a child
 * process, so that the caller can still fork ranks that use CUDA (CUDA does not survive a
 * fork once initialized). */
int ct_nccl_probe(int gpu, struct ct_err *err);

/* Collective over boot: every rank opens, or every rank fails (a rank's failure is reported
 * to all). Fills be with the engine (ctx *n): be->library "NCCL 2.28.9", be->candidates the
 * rows above (the forced ones only where colltune's plugin is loaded). */
int ct_nccl_open(struct ct_backend *be, struct ct_nccl **n, struct ct_boot *boot,
                 const struct ct_shape *shape, int gpu, struct ct_err *err);
void ct_nccl_close(struct ct_nccl *n);
/* The GPU memory n's buffers are on (its GPU, for the table's device line). */
struct ct_mem *ct_nccl_mem(struct ct_nccl *n);

/* Force NCCL's (algorithm, protocol, channels) for every following call of this process
 * through colltune's tuner plugin, which NCCL must have loaded (NCCL_TUNER_PLUGIN = its path):
 * the plugin's colltune_tuner_force, found with dlopen(RTLD_NOLOAD). algo NULL ends forcing.
 * *misses (may be NULL): the plugin's count of calls NCCL could not run as forced, so far.
 * CT_EUNSUPP when the plugin is not loaded or is not colltune's; CT_EINVAL for a bad name. */
int ct_nccl_tuner_force(const char *algo, const char *proto, int channels, long *misses,
                        struct ct_err *err);

/* Verify's sides on the same communicators: on, every following call of this process is left
 * to NCCL (the plugin's config aside: colltune_tuner_bypass); off, the plugin's config
 * applies again. CT_EUNSUPP when colltune's plugin is not loaded on every rank. ctx: the
 * engine (struct ct_nccl), for ct_paired_engine's side. */
int ct_nccl_tuner_bypass(void *ctx, bool on, struct ct_err *err);

struct ct_bench_cfg;
struct ct_point;
/* One point as `run` reports it (ct_bench_point's figures): cfg->check > 0 verifies once
 * before timing (nccl-tests -c 1). Collective. */
int ct_nccl_point(struct ct_nccl *n, struct ct_job *j, const struct ct_bench_cfg *cfg,
                  struct ct_point *out, struct ct_err *err);

#endif
