/* SPDX-License-Identifier: MIT */
/*
 * Name tables for datatypes, reduction ops and collectives (with nccl-tests aliases),
 * the tunable parameter table with its range check, and per-collective buffer sizes.
 */
#include "algo.h"

#include <ctype.h>
#include <stdbool.h>
#include <strings.h>

struct dtype_row {
    const char *name;
    size_t size;
};

static const struct dtype_row dtypes[CT_DTYPE_COUNT] = {
    [CT_INT8] = {"int8", 1},       [CT_UINT8] = {"uint8", 1},       [CT_INT32] = {"int32", 4},
    [CT_UINT32] = {"uint32", 4},   [CT_INT64] = {"int64", 8},       [CT_UINT64] = {"uint64", 8},
    [CT_FLOAT16] = {"float16", 2}, [CT_BFLOAT16] = {"bfloat16", 2}, [CT_FLOAT32] = {"float32", 4},
    [CT_FLOAT64] = {"float64", 8},
};

/* Other spellings accepted on the command line (nccl-tests -d names and short forms). */
static const struct {
    const char *alias;
    enum ct_dtype t;
} dtype_aliases[] = {
    {"char", CT_INT8},   {"int", CT_INT32},      {"half", CT_FLOAT16},  {"fp16", CT_FLOAT16},
    {"f16", CT_FLOAT16}, {"bf16", CT_BFLOAT16},  {"float", CT_FLOAT32}, {"fp32", CT_FLOAT32},
    {"f32", CT_FLOAT32}, {"double", CT_FLOAT64}, {"fp64", CT_FLOAT64},  {"f64", CT_FLOAT64},
};

static const char *const redops[CT_REDOP_COUNT] = {
    [CT_SUM] = "sum", [CT_PROD] = "prod", [CT_MIN] = "min", [CT_MAX] = "max", [CT_AVG] = "avg",
};

static const char *const colls[CT_COLL_COUNT] = {
    [CT_ALLREDUCE] = "allreduce",
    [CT_ALLGATHER] = "allgather",
    [CT_REDUCESCATTER] = "reducescatter",
    [CT_ALLTOALL] = "alltoall",
};

static const struct ct_param_desc params[CT_P_COUNT] = {
    [CT_P_CHUNK] = {"chunk", 131072, 1, 1ull << 30, "bytes",
                    "bytes per pipelined slice (at least one element)"},
    [CT_P_PIPELINE] = {"pipeline", 4, 1, 64, "slices", "slices in flight per peer"},
    [CT_P_CHANNELS] = {"channels", 1, 1, 64, "channels", "parallel rings/channels"},
    [CT_P_STREAMS] = {"streams", 1, 1, 256, "streams", "streams per peer connection"},
    [CT_P_THREADS] = {"threads", 1, 1, 64, "threads", "reduction threads"},
    [CT_P_INFLIGHT] = {"inflight", 1, 1, 64, "collectives",
                       "AllReduce split into this many collectives in flight (tcp)"},
};

const char *ct_dtype_name(enum ct_dtype t)
{
    return (unsigned)t < CT_DTYPE_COUNT ? dtypes[t].name : "?";
}

size_t ct_dtype_size(enum ct_dtype t)
{
    return (unsigned)t < CT_DTYPE_COUNT ? dtypes[t].size : 0;
}

int ct_dtype_find(const char *name)
{
    if (!name)
        return -1;
    for (int t = 0; t < CT_DTYPE_COUNT; t++)
        if (!strcasecmp(name, dtypes[t].name))
            return t;
    for (size_t i = 0; i < sizeof dtype_aliases / sizeof dtype_aliases[0]; i++)
        if (!strcasecmp(name, dtype_aliases[i].alias))
            return (int)dtype_aliases[i].t;
    return -1;
}

const char *ct_redop_name(enum ct_redop op)
{
    return (unsigned)op < CT_REDOP_COUNT ? redops[op] : "?";
}

int ct_redop_find(const char *name)
{
    if (!name)
        return -1;
    for (int op = 0; op < CT_REDOP_COUNT; op++)
        if (!strcasecmp(name, redops[op]))
            return op;
    return -1;
}

const char *ct_coll_name(enum ct_coll c)
{
    return (unsigned)c < CT_COLL_COUNT ? colls[c] : "?";
}

/* Case-insensitive compare that skips '_' and '-' in s: "all_reduce" matches "allreduce". */
static bool coll_name_eq(const char *s, const char *name)
{
    for (;; s++) {
        if (*s == '_' || *s == '-')
            continue;
        if (tolower((unsigned char)*s) != *name)
            return false;
        if (!*name)
            return true;
        name++;
    }
}

int ct_coll_find(const char *name)
{
    if (!name || !*name)
        return -1;
    for (int c = 0; c < CT_COLL_COUNT; c++)
        if (coll_name_eq(name, colls[c]))
            return c;
    return -1;
}

const struct ct_param_desc *ct_param_desc(enum ct_param_id p)
{
    return (unsigned)p < CT_P_COUNT ? &params[p] : NULL;
}

unsigned ct_algo_params(const struct ct_algo *a, enum ct_coll c)
{
    bool split = c == CT_ALLREDUCE && (a->colls & CT_COLL_BIT(CT_ALLREDUCE)) && a->build;
    return a->params | (split ? CT_PBIT(CT_P_INFLIGHT) : 0u);
}

int ct_algo_params_read(const struct ct_algo *a, enum ct_coll c, const struct ct_params *given,
                        struct ct_err *err)
{
    unsigned reads = ct_algo_params(a, c);
    if ((given->intra || given->inter) && !a->subs) /* ran ring, the option recorded nowhere */
        return ct_err_set(err, CT_EINVAL,
                          "--%s: %s runs no sub-algorithms (--intra and --inter are for one "
                          "that does: --algo hier)",
                          given->intra ? "intra" : "inter", a->name);
    for (int p = 0; p < CT_P_COUNT; p++)
        if (given->v[p] && !(reads & CT_PBIT(p)))
            return ct_err_set(err, CT_EINVAL,
                              "--%s: %s reads no %s (colltune list algos --verbose: what each "
                              "reads)",
                              params[p].name, a->name, params[p].name);
    return 0;
}

unsigned ct_params_shown(const struct ct_algo *a, const struct ct_params *p)
{
    unsigned m = a ? a->params : (1u << CT_P_COUNT) - 1 - CT_PBIT(CT_P_INFLIGHT);
    return p->v[CT_P_INFLIGHT] > 1 ? m | CT_PBIT(CT_P_INFLIGHT) : m;
}

void ct_params_defaults(struct ct_params *p)
{
    for (int i = 0; i < CT_P_COUNT; i++)
        if (!p->v[i])
            p->v[i] = params[i].def;
}

int ct_params_check(const struct ct_params *p, size_t elem_size, struct ct_err *err)
{
    for (int i = 0; i < CT_P_COUNT; i++) {
        const struct ct_param_desc *d = &params[i];
        uint64_t v = p->v[i];
        if (!v)
            continue; /* 0: the algorithm's default */
        if (v < d->min || v > d->max)
            return ct_err_set(err, CT_EINVAL, "%s %llu is out of range [%llu, %llu]", d->name,
                              (unsigned long long)v, (unsigned long long)d->min,
                              (unsigned long long)d->max);
        if (i == CT_P_CHUNK && v < elem_size)
            return ct_err_set(err, CT_EINVAL, "chunk %llu is smaller than one element (%zu bytes)",
                              (unsigned long long)v, elem_size);
    }
    return 0;
}

uint64_t ct_job_send_bytes(const struct ct_job *j)
{
    uint64_t b = j->count * ct_dtype_size(j->dtype);
    bool per_peer = j->coll == CT_REDUCESCATTER || j->coll == CT_ALLTOALL;
    return per_peer ? b * (uint64_t)j->shape.nranks : b;
}

uint64_t ct_job_recv_bytes(const struct ct_job *j)
{
    uint64_t b = j->count * ct_dtype_size(j->dtype);
    bool per_peer = j->coll == CT_ALLGATHER || j->coll == CT_ALLTOALL;
    return per_peer ? b * (uint64_t)j->shape.nranks : b;
}
