/* SPDX-License-Identifier: MIT */
/* Shared collective/launch options: parsing, checks, launching, per-rank setup. */
#include "opts.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
    case CT_O_ALGO:
        if (!(o->algo = ct_algo_find(arg)))
            return ct_cmd_fail(cmd, 2, "unknown algorithm '%s' (see 'colltune list algos')", arg);
        return 0;
    case CT_O_CHUNK: return param(o, cmd, CT_P_CHUNK, arg);
    case CT_O_PIPELINE: return param(o, cmd, CT_P_PIPELINE, arg);
    case CT_O_CHANNELS: return param(o, cmd, CT_P_CHANNELS, arg);
    case CT_O_STREAMS: return param(o, cmd, CT_P_STREAMS, arg);
    case CT_O_THREADS: return param(o, cmd, CT_P_THREADS, arg);
    case CT_O_TRANSPORT:
        if (strcmp(arg, "auto") && !ct_tp_find(arg))
            return ct_cmd_fail(cmd, 2, "unknown transport '%s' (auto, shm, tcp, loop)", arg);
        o->transport = arg;
        return 0;
    case CT_O_LOCAL:
        if (ct_parse_int(arg, 1, 1024, &v))
            return ct_cmd_fail(cmd, 2, "bad --local '%s' (1..1024 ranks)", arg);
        o->local = (int)v;
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
        o->torus_rows = r;
        o->torus_cols = c;
        return 0;
    }
    case CT_O_RAILS:
        if (ct_parse_int(arg, 1, 64, &v))
            return ct_cmd_fail(cmd, 2, "bad --rails '%s' (1..64)", arg);
        o->rails = (int)v;
        return 0;
    case CT_O_NO_BIND:
        o->no_bind = true;
        return 0;
    case CT_O_WAIT:
        if (!strcmp(arg, "auto"))
            o->wait = CT_WAIT_AUTO;
        else if (!strcmp(arg, "spin"))
            o->wait = CT_WAIT_SPIN;
        else if (!strcmp(arg, "block"))
            o->wait = CT_WAIT_BLOCK;
        else
            return ct_cmd_fail(cmd, 2, "bad --wait '%s' (auto, spin, block)", arg);
        return 0;
    case CT_O_TIMEOUT:
    case CT_O_BOOT_TIMEOUT: {
        char *end;
        double t = strtod(arg, &end);
        if (*end || !(t > 0) || t > 86400)
            return ct_cmd_fail(cmd, 2, "bad --%s '%s' (seconds, > 0)",
                               id == CT_O_TIMEOUT ? "timeout" : "boot-timeout", arg);
        if (id == CT_O_TIMEOUT)
            o->timeout_s = t;
        else
            o->boot_timeout_s = t;
        return 0;
    }
    case CT_O_IFNAME:
        if (!*arg || strlen(arg) >= 16)
            return ct_cmd_fail(cmd, 2, "bad --ifname '%s' (an interface name)", arg);
        o->ifname = arg;
        return 0;
    case CT_O_PROVIDER:
        if (!*arg || strlen(arg) >= 64)
            return ct_cmd_fail(cmd, 2, "bad --provider '%s' (a libfabric provider name)", arg);
        o->provider = arg;
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
    if (ct_params_check(&o->params, ct_dtype_size(o->dtype), &err) < 0)
        return ct_cmd_fail(cmd, 2, "%s", err.msg);
    if (o->ranks_per_node && !o->local)
        return ct_cmd_fail(cmd, 2, "--ranks-per-node needs --local N");
    if (o->ranks_per_node && o->local % o->ranks_per_node)
        return ct_cmd_fail(cmd, 2, "--local %d does not divide into nodes of %d ranks", o->local,
                           o->ranks_per_node);
    if (!strcmp(o->transport, "loop"))
        return ct_cmd_fail(cmd, 2,
                           "the loop transport runs ranks as threads and is for tests; use shm "
                           "or tcp with --local");
    return 0;
}

/* Ranks the launch will have (1 when only the bootstrap can tell). */
static int launch_size(const struct ct_opts *o)
{
    struct ct_launch_cfg lc;
    struct ct_launch_opts lx;
    struct ct_launch_info li;
    ct_opts_launch_cfg(o, "run", &lc, &lx);
    if (ct_launch_detect(&lc, &li, NULL) < 0)
        return 1;
    return li.size > 0 ? li.size : li.launcher_size > 0 ? li.launcher_size : 1;
}

static void fill_job(const struct ct_opts *o, int n, int rank, int rpn, uint64_t count,
                     struct ct_job *j)
{
    memset(j, 0, sizeof *j);
    j->coll = o->coll;
    j->dtype = o->dtype;
    j->op = ct_coll_desc(o->coll)->needs_op ? o->op : CT_SUM;
    j->count = count;
    j->shape.nranks = n;
    j->shape.rank = rank;
    j->shape.ranks_per_node = rpn;
    j->shape.torus_rows = o->torus_rows;
    j->shape.torus_cols = o->torus_cols;
    j->shape.rails = o->rails;
    j->params = o->params;
    ct_params_defaults(&j->params);
}

int ct_opts_precheck(const struct ct_opts *o, const char *cmd)
{
    int n = launch_size(o);
    struct ct_job j;
    struct ct_err why = {0};
    fill_job(o, n, 0, o->ranks_per_node, (uint64_t)n, &j);
    if (ct_algo_supports(o->algo, &j, &why) < 0)
        return ct_cmd_fail(cmd, 2, "%s", why.msg);
    return 0;
}

static void print_notice(void *ctx, const char *msg)
{
    fprintf(stderr, "colltune %s: notice: %s\n", (const char *)ctx, msg);
}

static void print_fatal(void *ctx, const char *msg)
{
    fprintf(stderr, "colltune %s: error: %s\n", (const char *)ctx, msg);
}

static const char *ifname_of(const struct ct_opts *o)
{
    const char *e = getenv("COLLTUNE_SOCKET_IFNAME");
    return o->ifname ? o->ifname : e && *e ? e : NULL;
}

void ct_opts_launch_cfg(const struct ct_opts *o, const char *cmd, struct ct_launch_cfg *lc,
                        struct ct_launch_opts *lx)
{
    memset(lc, 0, sizeof *lc);
    memset(lx, 0, sizeof *lx);
    lc->local = o->local;
    lc->ranks_per_node = o->ranks_per_node;
    lc->timeout_ns = (int64_t)(o->boot_timeout_s * 1e9);
    lx->op_timeout_ns = (int64_t)(o->timeout_s * 1e9);
    lx->ifname = ifname_of(o);
    lx->port_lo = o->port_lo;
    lx->port_hi = o->port_hi;
    lx->no_bind = o->no_bind;
    lx->notice = print_notice;
    lx->fatal = print_fatal;
    lx->ctx = (void *)cmd;
}

void ct_opts_print_bootstrap(const struct ct_opts *o)
{
    struct ct_launch_cfg lc;
    struct ct_launch_opts lx;
    char buf[2048];
    ct_opts_launch_cfg(o, "run", &lc, &lx);
    ct_launch_describe_cfg(&lc, &lx, buf, sizeof buf);
    printf("%s\n", buf);
}

int ct_opts_launch(const struct ct_opts *o, const char *cmd, ct_rank_fn fn, void *arg)
{
    struct ct_launch_cfg lc;
    struct ct_launch_opts lx;
    struct ct_err err = {0};
    int dead, sig;
    ct_opts_launch_cfg(o, cmd, &lc, &lx);
    /* launched bootstraps and the tcp transport listen inside the port range; the
     * transport reads it from the environment, for this process and its ranks */
    const char *env_range = getenv("COLLTUNE_PORT_RANGE");
    if (o->port_range) {
        setenv("COLLTUNE_PORT_RANGE", o->port_range, 1);
    } else if (env_range && *env_range &&
               ct_sock_parse_range(env_range, &lx.port_lo, &lx.port_hi, &err) < 0) {
        return ct_cmd_fail(cmd, 2, "COLLTUNE_PORT_RANGE: %s", err.msg);
    }
    int rc = ct_launch_ext(&lc, &lx, fn, arg, &dead, &sig, &err);
    if (rc < 0)
        return ct_cmd_fail(cmd, err.code == CT_EINVAL ? 2 : 1, "%s", err.msg);
    if (dead >= 0)
        ct_cmd_fail(cmd, 1, "rank %d was killed by signal %d (%s)", dead, sig, strsignal(sig));
    return rc;
}

void ct_opts_comm_cfg(const struct ct_opts *o, struct ct_comm_cfg *cc)
{
    memset(cc, 0, sizeof *cc);
    cc->transport = o->transport;
    cc->timeout_ns = (int64_t)(o->timeout_s * 1e9);
    cc->tp.streams = (int)(o->params.v[CT_P_STREAMS] ? o->params.v[CT_P_STREAMS] : 1);
    cc->tp.wait = o->wait;
    cc->tp.timeout_ns = cc->timeout_ns;
    cc->tp.ifname = ifname_of(o);
    cc->tp.provider = o->provider;
}

int ct_opts_comm_open(const struct ct_opts *o, struct ct_boot *boot, struct ct_comm *c,
                      struct ct_err *err)
{
    struct ct_comm_cfg cc;
    ct_opts_comm_cfg(o, &cc);
    return ct_comm_open(c, boot, &cc, err);
}

void ct_opts_job(const struct ct_opts *o, const struct ct_comm *c, uint64_t count,
                 struct ct_job *j)
{
    int rpn = o->ranks_per_node;
    if (!rpn && c->nnodes > 0 && c->local_size * c->nnodes == c->size)
        rpn = c->local_size;
    fill_job(o, c->size, c->rank, rpn, count, j);
}

struct ct_rank_info *ct_opts_rank_infos(struct ct_comm *c, struct ct_err *err)
{
    struct ct_rank_info mine, *all = ct_xcalloc((size_t)c->size, sizeof *all);
    memset(&mine, 0, sizeof mine);
    mine.rank = c->rank;
    mine.node = c->node;
    mine.local_rank = c->local_rank;
    mine.pid = (long)getpid();
    memcpy(mine.host, c->boot->host, sizeof mine.host);
    if (ct_boot_allgather(c->boot, &mine, sizeof mine, all, err) < 0) {
        free(all);
        return NULL;
    }
    return all;
}

void ct_opts_params_str(const struct ct_opts *o, char *buf, size_t len)
{
    struct ct_params p = o->params;
    ct_params_defaults(&p);
    size_t off = 0;
    for (int i = 0; i < CT_P_COUNT && off < len; i++)
        if (o->algo->params & CT_PBIT(i))
            off += (size_t)snprintf(buf + off, len - off, "%s%s=%llu", off ? "," : "",
                                    ct_param_desc((enum ct_param_id)i)->name,
                                    (unsigned long long)p.v[i]);
}
