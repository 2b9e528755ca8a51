/* SPDX-License-Identifier: MIT */
/*
 * The cost model: prices the exact per-rank schedules of algos/ on a topology model far
 * bigger than any machine at hand.
 *
 * Topology. Nodes of ranks_per_node ranks. Inside a node every rank has one port to a
 * switch (NVSwitch, shared memory) or, with a torus, one link to each of its four torus
 * neighbours (dimension-order routing). Between nodes, rank r uses NIC rail
 * local(r) * rails / ranks_per_node; every rail has its own leaf switches of
 * nodes_per_leaf nodes (a rail-optimized fat tree); a flow that changes leaf or rail
 * crosses the spine through its leaf's uplink, whose capacity is the leaf's NIC capacity
 * divided by the oversubscription. `full_mesh` is the textbook network: every ordered
 * pair has its own link of its class (no sharing at all).
 *
 * Cost. A link class (intra, nic) has a latency alpha and a bandwidth. The flows of one
 * step (every rank's sends of its step s) share every link they cross, max-min fair
 * (progressive filling). The executor's slicing applies: an op of B bytes moves in
 * k = ceil(B / chunk) slices, each slice after the first costs slice_us, and a
 * receive-reduce reduces slice i while slice i+1 travels (two-stage pipeline), so one
 * op costs alpha + (k-1) slice_us + B/rate + B/gamma when k = 1. Ops to one peer in
 * one direction run back to back (the executor's per-peer group). A step ends when all
 * its communication is done; its local ops (copy, reduce) follow; each communication
 * step adds step_us, and msg_us for every peer a rank sends to in it (a rank posts its
 * sends one after another: the software's post and the NIC's message rate). A message starts when
 * both its sender's and its receiver's steps have started. The schedule is the truth: no closed
 * form per algorithm.
 *
 * Memory hierarchy. With cache_mib and mem_factor > 1, a job whose node working set (its
 * ranks' inputs and outputs, ranks_per_node * (send + recv bytes)) W outgrows the cache C
 * takes each byte that misses mem_factor times as long: the bytes of transfers inside a
 * node, of reductions and of copies cost 1 + (mem_factor - 1) * (1 - C / W) times as much
 * (C >= W: no change). Bytes through a NIC and latencies are unchanged. One-sided gets and
 * puts inside a node (symm, oneshot) move at onesided_gbps where it is given, else at the
 * intra class's rate.
 *
 * Time sharing. With cores_per_node C > 0 and more ranks on a node than C (4 ranks on a
 * 2-core host), the ranks' work shares the cores: every part of a rank's step (latency,
 * transfer, reduction, overheads: a rank that waits sleeps, one that works needs a core)
 * takes max(1, k / C) times as long, where k is the mean number of the node's ranks busy
 * during that step (itself included). In lockstep every rank of the node is busy in every
 * step (k = ranks on the node); on a timeline, k comes from a first pass without sharing:
 * the time each other rank of the node spends inside its own steps' transfers and local
 * work (from the moment its messages can start) overlapping this step's, over this
 * step's length. So a chain (simple-ring), with two ranks busy at a time, keeps its
 * speed on 2 cores while a ring of 4 runs at half.
 *
 * Symmetry. When every sampled rank's schedule has the same steps with each peer a
 * fixed shift (r + d mod p) or xor (r ^ d) of the rank, all ranks are priced as one
 * in lockstep. Else, when rank r runs rank r mod P's schedule with its peers shifted by
 * r - r mod P for a period P of a pair, a node or two nodes (kangaring, hier, rail-ring),
 * those P ranks are priced in lockstep, each message at its slowest replica's cost.
 * Otherwise (or when the whole schedule breaks a period the samples kept) every rank's
 * schedule is built and the full timeline is priced. A step's link sharing is computed
 * once per distinct pattern (cached across steps, sizes and algorithms); a pattern of
 * shifts is solved on one leaf's sources over the links' orbits, since the network maps
 * onto itself under shifts by a leaf (ct_mnet_period).
 *
 * Units: time in microseconds, bandwidth in GB/s (1e9 bytes/s), as nccl-tests.
 */
#ifndef CT_MODEL_H
#define CT_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../algos/algo.h"
#include "../backend/backend.h"
#include "../lib/err.h"

struct ct_mclass {
    double alpha_us; /* latency of one message */
    double gbps;     /* bandwidth of one port / link / NIC, each direction */
};

struct ct_mtopo {
    char name[64];
    int nodes, ranks_per_node, rails; /* rails: NICs per node (0 = none: one node only) */
    int torus_rows, torus_cols;       /* intra-node torus (0 = a switch) */
    bool full_mesh;                   /* textbook: every pair its own link, no sharing */
    struct ct_mclass intra, nic;
    double hop_us;       /* extra latency per switch tier crossed above the leaf, per torus hop */
    int nodes_per_leaf;  /* nodes under one leaf of a rail; 0 = one leaf holds all */
    double oversub;      /* leaf downlink:uplink capacity ratio (1 = non-blocking) */
    double gamma_gbps;   /* reduction rate of one rank (bytes of result per s); 0 = free */
    double copy_gbps;    /* local copy rate of one rank; 0 = free */
    double onesided_gbps; /* a rank's one-sided get or put inside a node (0: intra.gbps) */
    double step_us;      /* synchronisation overhead of each communication step */
    double msg_us;       /* per peer a rank sends to in one step (posting, message rate) */
    double slice_us;     /* overhead of each slice after an op's first */
    int cores_per_node;  /* CPU cores a node's ranks share (0: one each, no time sharing) */
    double cache_mib;    /* the cache a node's ranks' buffers share (0: none modelled) */
    double mem_factor;   /* a byte from memory over one from cache, in time (<= 1: the same) */
    char intra_transport[64], inter_transport[64]; /* what the classes stand for (calibration) */
    char source[512]; /* where the numbers come from (preset citations, calibration) */
};

void ct_mtopo_init(struct ct_mtopo *t);
/* Check rates and shape: negative or missing bandwidths, a torus that does not fit. */
int ct_mtopo_check(const struct ct_mtopo *t, struct ct_err *err);
int ct_mtopo_ranks(const struct ct_mtopo *t);

/* Topology files (colltune-model-topology/1 JSON). A missing link rate is an error. */
int ct_mtopo_load(const char *path, struct ct_mtopo *t, struct ct_err *err);
int ct_mtopo_parse(const char *text, const char *what, struct ct_mtopo *t, struct ct_err *err);
int ct_mtopo_save(const char *path, const struct ct_mtopo *t, struct ct_err *err);
/* Node presets (data files in model/presets, built in): dgx-h100, dgx-b200, trn1, trn2,
 * this-host (the rates of shm/tcp on a host like this one; the caller fills the shape
 * from probe). */
int ct_mtopo_preset(const char *name, struct ct_mtopo *t, struct ct_err *err);
const char *ct_mtopo_preset_at(size_t i); /* names, NULL past the end */
/* Apply a network spec to a node topology: "railfat[:OVER[:1]]" (rail-optimized two-tier
 * fat tree, OVER:1 oversubscribed; default non-blocking), "fullmesh" (no sharing). */
int ct_mtopo_net(struct ct_mtopo *t, const char *spec, struct ct_err *err);

/* Pricing context: a topology and the caches of priced step patterns. */
struct ct_model;
struct ct_model *ct_model_new(const struct ct_mtopo *t);
void ct_model_free(struct ct_model *m);
const struct ct_mtopo *ct_model_topo(const struct ct_model *m);
/* Symmetry on (default) or off: off always prices the full timeline of every rank. */
void ct_model_set_symmetry(struct ct_model *m, bool on);
/* Built schedules kept for reuse by every model given the cache (a fit prices the same
 * jobs on many topologies; a schedule depends on the job, not on the topology). The cache
 * outlives the models; it stops taking schedules past a bound on their size. */
struct ct_msched_cache;
struct ct_msched_cache *ct_msched_cache_new(void);
void ct_msched_cache_free(struct ct_msched_cache *c);
void ct_model_use_scheds(struct ct_model *m, struct ct_msched_cache *c);

struct ct_model_cost {
    double time_us, algbw, busbw;
    int nranks, nnodes;
    uint64_t size, count;
    int period; /* priced by symmetry: 1 one rank, P a period of P ranks in lockstep; 0: the
                   full timeline of every rank */
};

/*
 * Price one job (coll, dtype, op, count, params; shape.nranks = ranks to use, which
 * must fill whole nodes of the topology or stay within one) with algorithm a.
 * CT_EUNSUPP when the algorithm does not support the job (message says why).
 */
int ct_model_price(struct ct_model *m, const struct ct_algo *a, const struct ct_job *j,
                   struct ct_model_cost *out, struct ct_err *err);
/* Same for a size in bytes as nccl-tests prints it; fills the job's count and shape
 * from the topology (nranks 0 = every rank it hosts). */
int ct_model_price_size(struct ct_model *m, const struct ct_algo *a, enum ct_coll coll,
                        enum ct_dtype dt, enum ct_redop op, const struct ct_params *p,
                        int nranks, uint64_t size, struct ct_model_cost *out,
                        struct ct_err *err);
/* Job shape on the topology: nranks ranks, node-major, torus/rails from the topology. */
int ct_model_shape(const struct ct_mtopo *t, int nranks, struct ct_shape *s, struct ct_err *err);

/*
 * Calibration: fit the class that measured points ran over (intra for one node, both
 * intra and nic otherwise), gamma, copy, step, slice and message overheads, minimising the sum
 * of absolute log ratios predicted/measured over points. Points come from
 * colltune-results/1 (run --json) or colltune-sweep/1 (sweep results.json) files.
 */
struct ct_mpoint {
    enum ct_coll coll;
    char algo[32];
    struct ct_params params;
    char intra[32], inter[32]; /* hier sub-algorithms */
    uint64_t size;
    bool in_place;
    double measured_us, predicted_us;
};
struct ct_mcalib {
    struct ct_mpoint *pts;
    size_t n;
    int nranks, nnodes;
    char transport[64];
    struct ct_msched_cache *scheds; /* during ct_mcalib_fit: the points' schedules */
};
/* The measured points of a run --json or sweep results.json: CT_EINVAL where they are too
 * few to fit (fewer than CT_MCALIB_MIN_SIZES sizes, spanning less than CT_MCALIB_MIN_SPAN
 * times, or none of CT_MCALIB_MIN_TOP bytes or more: no bandwidth to fit). */
#define CT_MCALIB_MIN_SIZES 3
#define CT_MCALIB_MIN_SPAN 16
#define CT_MCALIB_MIN_TOP (64 << 10)
int ct_mcalib_load(const char *path, struct ct_mcalib *c, struct ct_err *err);
void ct_mcalib_release(struct ct_mcalib *c);
/* Fit t (shape set from the points) in place; fills every point's predicted_us. */
int ct_mcalib_fit(struct ct_mcalib *c, struct ct_mtopo *t, struct ct_err *err);
/* Predict every point with t as it is. */
int ct_mcalib_predict(struct ct_mcalib *c, const struct ct_mtopo *t, struct ct_err *err);

/* ---- a model sweep: what `colltune model` runs ------------------------------------------ */

#define CT_MODEL_MAX_ALGOS 32

/* Where the topology comes from: a file (model topology or probe JSON), or a node preset
 * (this-host: probed live) times nodes over a network spec. */
struct ct_mtopo_spec {
    const char *file, *node, *net;
    int nodes; /* 0 = the file's / preset's */
};
int ct_mtopo_build(const struct ct_mtopo_spec *spec, struct ct_mtopo *t, struct ct_err *err);

/* What ct_model_run prices now (before the point: a large one can take seconds). */
struct ct_model_progress {
    const char *algo;
    uint64_t size;
    long done, total; /* points priced so far, and in all (fewer where one is left out) */
    double elapsed_s;
};

struct ct_model_req {
    struct ct_mtopo_spec topo;
    enum ct_coll coll;
    enum ct_dtype dtype;
    enum ct_redop op;
    const struct ct_algo *algos[CT_MODEL_MAX_ALGOS]; /* none: every one that implements coll */
    size_t nalgos;
    struct ct_params params;
    uint64_t minb, maxb;
    double factor;
    int nranks;           /* 0 = every rank the topology hosts */
    const char *json;     /* write colltune-model/1 JSON here, or NULL; "-": not written
                             (the caller prints ct_model_result_json) */
    void (*progress)(void *arg, const struct ct_model_progress *p); /* NULL: none */
    void *progress_arg;
};

struct ct_model_row {
    uint64_t size, count;
    const char *algo;
    double time_us, algbw, busbw;
    int nranks, nnodes;
    bool symmetric;
};

/* The fastest algorithm over [from, to) bytes (crossovers interpolated in log size). */
struct ct_model_range {
    double from, to; /* to < 0: infinity */
    const char *algo;
};

struct ct_model_result {
    struct ct_mtopo topo;
    struct ct_model_row *rows; /* per size, per algorithm in table order */
    size_t nrows;
    struct ct_model_range *ranges;
    size_t nranges;
    char skipped[1024]; /* "algo: reason; ..." for algorithms that do not support the job */
    double elapsed_s;
};

/* Build the topology, price every algorithm at every size, find the crossovers, write the
 * JSON when asked. */
int ct_model_run(const struct ct_model_req *q, struct ct_model_result *r, struct ct_err *err);
void ct_model_result_release(struct ct_model_result *r);
/* r as a colltune-model/1 document (new, NUL-terminated; NULL if it cannot be encoded). */
char *ct_model_result_json(const struct ct_model_req *q, const struct ct_model_result *r);

/* --calibrate: fit the topology from spec (default this-host) to the measured points of
 * path, write it to out, fill c with the points and their predictions. */
int ct_model_calibrate(const char *path, const struct ct_mtopo_spec *spec, const char *out,
                       struct ct_mcalib *c, struct ct_mtopo *fit, struct ct_err *err);

/* ---- the model as an engine: sweep --model ------------------------------------------------- */

/* sweep --model's default budget: the plan ends the sweep, not the clock. */
#define CT_MODEL_SWEEP_BUDGET_S 3600.0

/* A backend over topology t (nranks 0: every rank it hosts) whose points are priced: the
 * planner of `sweep` runs on it unchanged. be->predicted says what it prices. */
int ct_model_engine_open(const struct ct_mtopo *t, int nranks, struct ct_backend *be, void **ctx,
                         struct ct_err *err);

#endif
