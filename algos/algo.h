/* SPDX-License-Identifier: MIT */
/*
 * The algorithm library: data types, reduction ops, collectives, the job an algorithm
 * is asked to schedule, its parameters, and the algorithm table. Schedules are built
 * without a communicator (pure data), so the same generator runs live, in tests on
 * the loop transport, and in the cost model for clusters of any size.
 */
#ifndef CT_ALGO_H
#define CT_ALGO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../lib/err.h"
#include "../lib/redfn.h"
#include "quant.h"
#include "sched.h"

enum ct_dtype {
    CT_INT8,
    CT_UINT8,
    CT_INT32,
    CT_UINT32,
    CT_INT64,
    CT_UINT64,
    CT_FLOAT16,
    CT_BFLOAT16,
    CT_FLOAT32,
    CT_FLOAT64,
    CT_DTYPE_COUNT
};

enum ct_redop { CT_SUM, CT_PROD, CT_MIN, CT_MAX, CT_AVG, CT_REDOP_COUNT };

enum ct_coll { CT_ALLREDUCE, CT_ALLGATHER, CT_REDUCESCATTER, CT_ALLTOALL, CT_COLL_COUNT };
#define CT_COLL_BIT(c) (1u << (c))
#define CT_COLLS_ALL ((1u << CT_COLL_COUNT) - 1)

/* Names as on the command line; lookups return -1 when unknown. */
const char *ct_dtype_name(enum ct_dtype t);
size_t ct_dtype_size(enum ct_dtype t);
int ct_dtype_find(const char *name); /* accepts nccl-tests aliases: float, half, bf16, ... */
const char *ct_redop_name(enum ct_redop op);
int ct_redop_find(const char *name);
const char *ct_coll_name(enum ct_coll c);
int ct_coll_find(const char *name);

/*
 * Reduction kernels: dst[i] = a[i] (op) b[i] for n elements; dst may alias a or b.
 * Integer ops wrap (two's complement), float16/bfloat16 compute through float and
 * round to nearest even. min/max: a NaN operand propagates (the result is NaN).
 * avg reduces as sum; the executor divides by the rank count at the end
 * (ct_reduce_scale_fn).
 */
ct_reduce_fn ct_reduce_fn_get(enum ct_dtype t, enum ct_redop op);
/* The same kernel with its operands swapped: dst[i] = b[i] (op) a[i]. */
ct_reduce_fn ct_reduce_fn_rev_get(enum ct_dtype t, enum ct_redop op);
/* The kernel writing two places (ct_reduce2_fn). */
ct_reduce2_fn ct_reduce2_fn_get(enum ct_dtype t, enum ct_redop op);
/* dst[i] = dst[i] / divisor, for avg. */
typedef void (*ct_scale_fn)(void *dst, size_t n, int divisor);
ct_scale_fn ct_scale_fn_get(enum ct_dtype t);

/*
 * The kernel table (algos/reduce.c): one per instruction set, every variant giving the
 * same bits. ct_reduce_fn_get/ct_scale_fn_get read the table of ct_isa_best(): the widest
 * set this CPU supports, no wider than the COLLTUNE_ISA environment variable when it names
 * one (generic, avx2, avx512).
 */
enum ct_isa { CT_ISA_GENERIC, CT_ISA_AVX2, CT_ISA_AVX512, CT_ISA_COUNT };
typedef void *(*ct_copy_fn)(void *dst, const void *src, size_t n);
struct ct_kernels {
    ct_reduce_fn red[CT_DTYPE_COUNT][4]; /* op: sum, prod, min, max */
    ct_reduce_fn rev[CT_DTYPE_COUNT][4]; /* the same with the operands swapped */
    ct_reduce2_fn red2[CT_DTYPE_COUNT][4]; /* red writing two places in one pass */
    ct_scale_fn scale[CT_DTYPE_COUNT];
    ct_copy_fn copy;
};
const char *ct_isa_name(enum ct_isa isa);
bool ct_isa_supported(enum ct_isa isa); /* built in and supported by this CPU */
enum ct_isa ct_isa_best(void);
const struct ct_kernels *ct_kernels_for(enum ct_isa isa); /* NULL when not supported */
const struct ct_kernels *ct_kernels_isa(void);            /* ct_kernels_for(ct_isa_best()) */

/* Communicator shape as a schedule sees it. Ranks are laid out node-major:
 * node(r) = r / ranks_per_node. */
struct ct_shape {
    int nranks;
    int rank;           /* the rank whose schedule is built */
    int ranks_per_node; /* nranks must be a multiple; 0 means nranks (one node) */
    int torus_rows, torus_cols; /* 0 if no torus; ranks map row-major:
                                   rank = row * torus_cols + col */
    int rails;          /* NIC rails per node; 0 = unknown */
};

static inline int ct_shape_rpn(const struct ct_shape *s)
{
    return s->ranks_per_node > 0 ? s->ranks_per_node : s->nranks;
}
static inline int ct_shape_nodes(const struct ct_shape *s)
{
    return s->nranks / ct_shape_rpn(s);
}

/* Tunable parameters. 0 means "the algorithm's default"; CT_PARAM_OWN, "the library's own"
 * (a library row's parameter the library decides unless one is forced: NCCL's channel count). */
#define CT_PARAM_OWN UINT64_MAX
enum ct_param_id {
    CT_P_CHUNK,    /* bytes per pipelined slice */
    CT_P_PIPELINE, /* slices in flight per peer */
    CT_P_CHANNELS, /* parallel rings/channels */
    CT_P_STREAMS,  /* streams per peer connection (transport) */
    CT_P_THREADS,  /* reduction threads */
    CT_P_INFLIGHT, /* AllReduce split into this many collectives at once (tcp; not an
                      algorithm's own parameter: no algorithm lists it) */
    CT_P_COUNT
};
#define CT_PBIT(p) (1u << (p))

struct ct_params {
    uint64_t v[CT_P_COUNT];
    const char *intra; /* hier: sub-algorithm names (NULL = default) */
    const char *inter;
};

struct ct_param_desc {
    const char *name; /* flag name: "chunk", "pipeline", ... */
    uint64_t def, min, max;
    const char *unit;
    const char *summary;
};
const struct ct_param_desc *ct_param_desc(enum ct_param_id p);
/* The parameters that describe a point of algorithm a (NULL: any) with values p: the
 * algorithm's own, plus inflight when it is above 1. Tables, configs and reports print
 * these. */
struct ct_algo;
unsigned ct_params_shown(const struct ct_algo *a, const struct ct_params *p);
/* Fill unset (0) values with defaults. */
void ct_params_defaults(struct ct_params *p);
/* Range check; message names the parameter. */
int ct_params_check(const struct ct_params *p, size_t elem_size, struct ct_err *err);

/*
 * What is being scheduled. count follows nccl-tests' per-rank parameter count:
 *   allreduce:     send = recv = count elements
 *   allgather:     send = count, recv = count * nranks
 *   reducescatter: send = count * nranks, recv = count
 *   alltoall:      send = recv = count * nranks (count elements to each peer)
 * In place: allreduce/alltoall recv == send; allgather send = recv + rank*count;
 * reducescatter recv = send + rank*count. Schedules must be correct either way.
 */
struct ct_job {
    enum ct_coll coll;
    enum ct_dtype dtype;
    enum ct_redop op;
    uint64_t count;
    bool in_place;
    struct ct_shape shape;
    struct ct_params params;
    enum ct_quant quant; /* CT_QUANT_NONE: exact; else a quantized wire format (ring
                            AllReduce of float32 sums only: algos/quant.h) */
};

uint64_t ct_job_send_bytes(const struct ct_job *j);
uint64_t ct_job_recv_bytes(const struct ct_job *j);

struct ct_algo {
    const char *name;    /* command-line name, unique */
    const char *summary; /* one line */
    unsigned colls;      /* CT_COLL_BIT set */
    unsigned params;     /* CT_PBIT set of the parameters that matter */
    bool quant;          /* implements --quant (its supports() says for what) */
    bool onesided;       /* reaches into peers' memory (fences, mailboxes): one node
                            only (ct_algo_supports), not a sub-algorithm */
    bool torus;          /* maps the ranks onto --torus RxC (shape.torus_rows/cols) */
    bool rails;          /* one ring per --rails NIC rail (shape.rails) */
    bool subs;           /* runs --intra and --inter sub-algorithms (algos/compose.c) */
    int lib_id;          /* a library engine's row (build NULL): the library's own id */
    unsigned own;        /* of params, those the library decides unless one is forced: a
                            sweep starts them at CT_PARAM_OWN */
    /* CT_EUNSUPP with a reason, or 0. May be NULL (always supported). */
    int (*supports)(const struct ct_job *j, struct ct_err *why);
    /* Build the schedule of j->shape.rank into *s (initialised by the caller). */
    int (*build)(const struct ct_job *j, struct ct_sched *s, struct ct_err *err);
};

/* The parameters that matter to a on collective c: its own, plus inflight for a native
 * AllReduce (K parts, each this algorithm: backend/inflight.h). */
unsigned ct_algo_params(const struct ct_algo *a, enum ct_coll c);
/* given (a value set: 0 is not) against what a reads on c: 0, or CT_EINVAL with one line
 * naming the first it reads not ("--chunk: oneshot reads no chunk ..."). */
int ct_algo_params_read(const struct ct_algo *a, enum ct_coll c, const struct ct_params *given,
                        struct ct_err *err);

/* The table (algos/registry.c). */
const struct ct_algo *ct_algo_find(const char *name);
const struct ct_algo *ct_algo_at(size_t i); /* NULL past the end */
size_t ct_algo_count(void);
/* supports(): coll bit, then the algorithm's own check, then shape sanity. */
int ct_algo_supports(const struct ct_algo *a, const struct ct_job *j, struct ct_err *why);
/* --torus or --rails given (torus, rails) where none of the n algorithms as reads it (nor a
 * sub-algorithm p->intra or p->inter of one that runs them, which keeps the rails): CT_EINVAL
 * naming the algorithms that do, or 0. p may be NULL. */
int ct_algo_shape_opts(const struct ct_algo *const *as, size_t n, bool torus, bool rails,
                       const struct ct_params *p, struct ct_err *why);
/* Build with checks; sched is initialised here and finished. */
/* a and b build the same schedule for job j on every rank (every rank up to 64 ranks; ranks
 * 0, 1, n/2 and n-1 beyond): running either is the same work. */
bool ct_algo_same_schedule(const struct ct_algo *a, const struct ct_algo *b, const struct ct_job *j);
int ct_algo_build(const struct ct_algo *a, const struct ct_job *j, struct ct_sched *s,
                  struct ct_err *err);

/* Helpers for generators: split n elements into parts as evenly as possible. */
static inline uint64_t ct_part_off(uint64_t n, uint64_t parts, uint64_t i)
{
    return (n / parts) * i + (i < n % parts ? i : n % parts);
}
static inline uint64_t ct_part_len(uint64_t n, uint64_t parts, uint64_t i)
{
    return n / parts + (i < n % parts ? 1 : 0);
}
/* The same in whole units of `unit` elements (the last part takes the remainder): parts that
 * start on a cache line when unit elements fill one, so no line has two writers and no
 * vector of a part straddles two lines. */
static inline uint64_t ct_part_off_unit(uint64_t n, uint64_t parts, uint64_t i, uint64_t unit)
{
    uint64_t off = ct_part_off((n + unit - 1) / unit, parts, i) * unit;
    return off < n ? off : n;
}
static inline uint64_t ct_part_len_unit(uint64_t n, uint64_t parts, uint64_t i, uint64_t unit)
{
    return ct_part_off_unit(n, parts, i + 1, unit) - ct_part_off_unit(n, parts, i, unit);
}
/* The same in whole cache lines of elements of es bytes: how every generator splits a buffer
 * it may cut anywhere (AllReduce's blocks, channels, threads). Split evenly by element, a
 * part starts mid-line at most sizes off a power of two (2 ranks, 263,000 B, medians of 5
 * alternating runs: ring 11.2 us, on lines 10.2; mesh-1step 12.3 and 11.9; symm was
 * 2.5-3.1x slower). Below a line per part the split stays by element, so every part keeps
 * data (and a schedule the same on every rank: 16k ranks at 64 KiB). */
static inline uint64_t ct_line_elems(uint64_t n, uint64_t parts, uint64_t es)
{
    uint64_t u = es < 64 ? 64 / es : 1;
    return n / u >= parts ? u : 1;
}
static inline uint64_t ct_part_off_line(uint64_t n, uint64_t parts, uint64_t i, uint64_t es)
{
    return ct_part_off_unit(n, parts, i, ct_line_elems(n, parts, es));
}
static inline uint64_t ct_part_len_line(uint64_t n, uint64_t parts, uint64_t i, uint64_t es)
{
    return ct_part_len_unit(n, parts, i, ct_line_elems(n, parts, es));
}

#endif
