/* SPDX-License-Identifier: MIT */
/* Shared collective/launch options: parsing and checks (launching and per-rank setup: launch.c). */
#include "opts.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../backend/nccl.h"
#include "../device/device.h"
#include "../backend/libmod.h"
#include "../lib/sock.h"
#include "cmd.h"

void ct_opts_init(struct ct_opts *o)
{
    memset(o, 0, sizeof *o);
    o->coll = CT_ALLREDUCE;
    o->dtype = CT_FLOAT32;
    o->op = CT_SUM;
    o->algo = ct_algo_find("ring");
    o->transport = "auto";
    o->timeout_s = 30;
    o->boot_timeout_s = 60;
}

int ct_opts_set_op(struct ct_opts *o, const char *cmd, const char *arg)
{
    int v = ct_redop_find(arg);
    if (v < 0)
        return ct_cmd_fail(cmd, 2, "unknown op '%s' (sum, prod, min, max, avg)", arg);
    o->op = (enum ct_redop)v;
    return 0;
}

int ct_opts_set_dtype(struct ct_opts *o, const char *cmd, const char *arg)
{
    int v = ct_dtype_find(arg);
    if (v < 0)
        return ct_cmd_fail(cmd, 2, "unknown datatype '%s' (see 'colltune list datatypes')", arg);
    o->dtype = (enum ct_dtype)v;
    return 0;
}

static int param(struct ct_opts *o, const char *cmd, enum ct_param_id p, const char *arg)
{
    unsigned long long v;
    const struct ct_param_desc *d = ct_param_desc(p);
    if (ct_parse_size(arg, &v) || v > d->max || (p != CT_P_CHUNK && v < d->min))
        return ct_cmd_fail(cmd, 2, "bad --%s '%s' (%llu..%llu)", d->name, arg,
                           (unsigned long long)d->min, (unsigned long long)d->max);
    if (v == 0)
        return ct_cmd_fail(cmd, 2, "--%s must be at least %llu", d->name,
                           (unsigned long long)(d->min ? d->min : 1));
    o->params.v[p] = v;
    return 0;
}

int ct_opts_parse_long(struct ct_opts *o, const char *cmd, int id, const char *arg)
{
    long v;
    switch (id) {
    case CT_O_COLL: {
        int c = ct_coll_find(arg);
        if (c < 0)
            return ct_cmd_fail(cmd, 2,
                               "unknown collective '%s' (allreduce, allgather, reducescatter, "
                               "alltoall)",
                               arg);
        o->coll = (enum ct_coll)c;
        return 0;
    }
    case CT_O_LIB:
        if (strcmp(arg, "nccl") && !ct_libmod_find(arg))
            return ct_cmd_fail(cmd, 2, "unknown --lib '%s' (nccl, %s)", arg, ct_libmod_names());
        o->lib = arg;
        return 0;
    case CT_O_ALGO:
        if (strchr(arg, ':'))
            o->lib_algo = arg; /* a library's algorithm: the engine knows its names */
        else if (!(o->own_algos = (o->algo = ct_algo_find(arg)) != NULL))
            return ct_cmd_fail(cmd, 2, "unknown algorithm '%s' (see 'colltune list algos')", arg);
        return 0;
    case CT_O_CHUNK: return param(o, cmd, CT_P_CHUNK, arg);
    case CT_O_PIPELINE: return param(o, cmd, CT_P_PIPELINE, arg);
    case CT_O_CHANNELS: return param(o, cmd, CT_P_CHANNELS, arg);
    case CT_O_STREAMS: return param(o, cmd, CT_P_STREAMS, arg);
    case CT_O_THREADS: return param(o, cmd, CT_P_THREADS, arg);
    case CT_O_INFLIGHT: return param(o, cmd, CT_P_INFLIGHT, arg);
    case CT_O_TRANSPORT:
        if (strcmp(arg, "auto") && !ct_tp_find(arg))
            return ct_cmd_fail(cmd, 2, "unknown transport '%s' (auto, shm, tcp, fabric)", arg);
        o->transport = arg;
        return 0;
    case CT_O_HOSTS:
        if ((o->hosts_ranks = ct_libmod_hosts_ranks(arg)) < 0)
            return ct_cmd_fail(cmd, 2, "bad --hosts '%s' (HOST[:SLOTS],...)", arg);
        o->hosts = arg;
        return 0;
    case CT_O_LOCAL:
        if (ct_parse_int(arg, 1, 1024, &v))
            return ct_cmd_fail(cmd, 2, "bad --local '%s' (1..1024 ranks)", arg);
        o->local = o->local_set = (int)v;
        return 0;
    case CT_O_RPN:
        if (ct_parse_int(arg, 1, 1024, &v))
            return ct_cmd_fail(cmd, 2, "bad --ranks-per-node '%s' (1..1024)", arg);
        o->ranks_per_node = (int)v;
        return 0;
    case CT_O_INTRA:
    case CT_O_INTER:
        if (!ct_algo_find(arg))
            return ct_cmd_fail(cmd, 2, "unknown algorithm '%s' for --%s", arg,
                               id == CT_O_INTRA ? "intra" : "inter");
        *(id == CT_O_INTRA ? &o->params.intra : &o->params.inter) = arg;
        return 0;
    case CT_O_TORUS: {
        int r, c;
        char tail;
        if (sscanf(arg, "%dx%d%c", &r, &c, &tail) != 2 || r < 1 || c < 1 || r > 4096 || c > 4096)
            return ct_cmd_fail(cmd, 2, "bad --torus '%s' (RxC, e.g. 4x4)", arg);
        return o->torus_rows = r, o->torus_cols = c, 0;
    }
    case CT_O_RAILS:
    case CT_O_REVERIFY: { /* rails: 1..64; verify rounds after the first: 1..5 */
        bool rails = id == CT_O_RAILS;
        if (ct_parse_int(arg, 1, rails ? 64 : 5, &v))
            return ct_cmd_fail(cmd, 2, "bad --%s '%s' (1..%d)", rails ? "rails" : "reverify", arg,
                               rails ? 64 : 5);
        return *(rails ? &o->rails : &o->reverify) = (int)v, 0;
    }
    case CT_O_NO_BIND: o->no_bind = true; return 0;
    case CT_O_KEEP_RULES: o->keep_rules = true; return 0;
    case CT_O_TRY_TIES: o->try_ties = true; return 0;
    case CT_O_EACH_SETTING: o->each_setting = true; return 0;
    case CT_O_ENV:
    case CT_O_ENV_SEARCH: return ct_opts_lib_env(o, cmd, arg, id != CT_O_ENV);
    case CT_O_PAIRS: return ct_opts_lib_pairs(o, cmd, arg);
    case CT_O_MEM:
        if (!ct_mem_kind_find(arg))
            return ct_cmd_fail(cmd, 2, "unknown --mem '%s' (%s)", arg, ct_mem_kind_names());
        o->mem = arg;
        return 0;
    case CT_O_GPU_MAP: {
        struct ct_err err = {0};
        if (ct_mem_gpu_of(arg, 0, &err) < 0)
            return ct_cmd_fail(cmd, 2, "%s", err.msg);
        o->gpu_map = arg;
        return 0;
    }
    case CT_O_WAIT: { /* in enum ct_wait_mode's order */
        int w, rc = ct_arg_word(cmd, "wait", arg, (const char *[]){"auto", "spin", "block", 0}, &w);
        o->wait = rc ? o->wait : (enum ct_wait_mode)w;
        return rc;
    }
    case CT_O_TIMEOUT:
    case CT_O_BOOT_TIMEOUT: {
        char *end;
        double t = strtod(arg, &end), *to = id == CT_O_TIMEOUT ? &o->timeout_s : &o->boot_timeout_s;
        if (*end || !(t > 0) || t > 86400)
            return ct_cmd_fail(cmd, 2, "bad --%s '%s' (seconds, > 0 and at most 86400)",
                               id == CT_O_TIMEOUT ? "timeout" : "boot-timeout", arg);
        *to = t;
        return 0;
    }
    case CT_O_IFNAME:
    case CT_O_PROVIDER: { /* names: an interface's (< 16), a libfabric provider's (< 64) */
        bool ifn = id == CT_O_IFNAME;
        if (!*arg || strlen(arg) >= (ifn ? 16u : 64u))
            return ct_cmd_fail(cmd, 2, "bad --%s '%s' (%s)", ifn ? "ifname" : "provider", arg,
                               ifn ? "an interface name" : "a libfabric provider name");
        *(ifn ? &o->ifname : &o->provider) = arg;
        return 0;
    }
    case CT_O_SOCKBUF:
        if (ct_parse_size(arg, &o->sockbuf) || o->sockbuf < 4096 || o->sockbuf > (1ull << 30))
            return ct_cmd_fail(cmd, 2, "bad --sockbuf '%s' (4K..1G)", arg);
        return 0;
    case CT_O_PORT_RANGE: {
        struct ct_err err = {0};
        if (ct_sock_parse_range(arg, &o->port_lo, &o->port_hi, &err) < 0)
            return ct_cmd_fail(cmd, 2, "bad --port-range: %s", err.msg);
        o->port_range = arg;
        return 0;
    }
    }
    return ct_cmd_fail(cmd, 2, "unhandled option");
}

int ct_opts_check(const struct ct_opts *o, const char *cmd)
{
    struct ct_err err = {0};
    /* NCCL runs in process (backend/nccl.c), an MPI library's engine under its launcher */
    bool nccl = o->lib && !strcmp(o->lib, "nccl");
    /* (a sweep forks one rank a CPU where neither --local nor --hosts says: cmd/sweep.c) */
    int local = o->local || o->hosts || strcmp(cmd, "sweep") ? o->local : ct_cmd_local_ranks();
    ct_cmd_forks_ranks(local > 0 && (!o->lib || nccl));
    if (ct_params_check(&o->params, ct_dtype_size(o->dtype), &err) < 0)
        return ct_cmd_fail(cmd, 2, "%s", err.msg);
    for (const char *t = o->lib_algo; t && *t; t += strcspn(t, ",") + (t[strcspn(t, ",")] == ',')) {
        int len = (int)strcspn(t, ","), lib = (int)strcspn(t, ":");
        if (lib >= len || !o->lib || strncmp(t, o->lib, strlen(o->lib)) || t[strlen(o->lib)] != ':')
            return ct_cmd_fail(cmd, 2,
                               lib >= len
                                   ? "--algos %.*s: colltune's own beside a library's"
                                   : "--algo %.*s is a library's algorithm: it needs --lib %.*s",
                               len, t, lib, t);
    }
    if (o->ranks_per_node && !o->local)
        return ct_cmd_fail(cmd, 2, "--ranks-per-node needs --local N");
    int inflight = (int)o->params.v[CT_P_INFLIGHT];
    if (inflight > 1 && strcmp(cmd, "run") && strcmp(cmd, "sweep"))
        return ct_cmd_fail(cmd, 2, "--inflight is for run and sweep");
    if (inflight > 1 && strcmp(o->transport, "tcp"))
        return ct_cmd_fail(cmd, 2, "--inflight needs --transport tcp");
    if (inflight > 1 && !strcmp(cmd, "run") && o->coll != CT_ALLREDUCE)
        return ct_cmd_fail(cmd, 2, "--inflight splits an allreduce (not %s)",
                           ct_coll_name(o->coll));
    if (inflight > 1 && o->quant)
        return ct_cmd_fail(cmd, 2, "--inflight and --quant do not combine yet");
    if (o->ranks_per_node && o->local % o->ranks_per_node)
        return ct_cmd_fail(cmd, 2, "--local %d does not divide into nodes of %d ranks", o->local,
                           o->ranks_per_node);
    if (!strcmp(o->transport, "loop"))
        return ct_cmd_fail(cmd, 2,
                           "the loop transport runs ranks as threads and is for tests; use shm "
                           "or tcp with --local");
    if (o->lib && !nccl && o->mem && strcmp(o->mem, "host"))
        return ct_cmd_fail(cmd, 2, "--lib %s moves host memory only", o->lib);
    if (o->gpu_map && !nccl && (!o->mem || strcmp(o->mem, "cuda")))
        return ct_cmd_fail(cmd, 2, "--gpu-map needs --mem cuda or --lib nccl");
    CT_TRY_OPT(ct_opts_lib_check(o, cmd)); /* --lib and what only an engine takes */
    if (nccl && o->mem && strcmp(o->mem, "cuda"))
        return ct_cmd_fail(cmd, 2, "--lib nccl moves GPU memory only (--mem cuda)");
    if (o->hosts && (!o->lib || nccl)) /* the rest of an MPI engine's launch: cmd/librun.c */
        return ct_cmd_fail(cmd, 2, "--hosts is for --lib %s (their launchers' host list)",
                           ct_libmod_names());
    if (nccl) { /* every rank opens the engine later: say now, once, if this host cannot */
        if ((!strcmp(cmd, "sweep") && ct_opts_nccl_sweep_env(&err) < 0) ||
            ct_nccl_probe(ct_mem_gpu_max(o->gpu_map, o->local, &err), &err) < 0)
            return ct_cmd_fail(cmd, 2, "--lib nccl: %s", err.msg);
    } else if (!o->lib && o->mem && strcmp(o->mem, "host")) {
        if (strcmp(cmd, "run") && strcmp(cmd, "sweep"))
            return ct_cmd_fail(cmd, 2, "--mem %s is for run and sweep", o->mem);
        if (ct_mem_probe(o->mem, ct_mem_gpu_max(o->gpu_map, o->local, &err), &err) < 0)
            return ct_cmd_fail(cmd, 2, "--mem %s: %s", o->mem, err.msg);
    }
    return 0;
}
