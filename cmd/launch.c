/* SPDX-License-Identifier: MIT */
/* Launching ranks and opening their communicators from the shared options (cmd/opts.h):
 * the launch configuration, the pre-launch support check, the communicator and job of a
 * rank, and the rank table the run header prints. */
#include "opts.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../backend/libmod.h"
#include "../lib/file.h"
#include "../lib/sock.h"
#include "../output/sweep_out.h"
#include "../transport/shm.h"
#include "cmd.h"

/* What the environment and options say of the launch, in *li; false for a mis-launch. */
static bool launch_known(const struct ct_opts *o, struct ct_launch_info *li)
{
    struct ct_launch_cfg lc;
    struct ct_launch_opts lx;
    ct_opts_launch_cfg(o, "run", &lc, &lx);
    return ct_launch_detect(&lc, li, NULL) == 0;
}

/* Ranks the launch will have (1 when only the bootstrap can tell). */
static int launch_size(const struct ct_opts *o)
{
    struct ct_launch_info li;
    return !launch_known(o, &li)  ? 1
           : li.size > 0          ? li.size
           : li.launcher_size > 0 ? li.launcher_size
                                  : 1;
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
    j->quant = o->quant;
    ct_params_defaults(&j->params);
}

int ct_opts_precheck(const struct ct_opts *o, const char *cmd)
{
    int n = launch_size(o);
    struct ct_job j;
    struct ct_err why = {0};
    fill_job(o, n, 0, o->ranks_per_node, (uint64_t)n, &j);
    /* a parameter the algorithm reads not: refused, not recorded as if it ran (a library's
     * rows take --chunk as their segment size: ct_opts_lib_check) */
    if (ct_algo_supports(o->algo, &j, &why) < 0 ||
        ct_algo_shape_opts(&o->algo, 1, o->torus_rows > 0, o->rails > 0, &o->params, &why) < 0 ||
        (!o->lib && ct_algo_params_read(o->algo, o->coll, &o->params, &why) < 0))
        return ct_cmd_fail(cmd, 2, "%s", why.msg);
    return ct_opts_links_check(o, cmd);
}

/* The ranks of this job on this host alone: --local N as one node (not virtual nodes), or no
 * launcher (a run's one rank; a sweep or validate forks --local of the cores). */
static bool one_host(const struct ct_opts *o)
{
    struct ct_launch_info li;
    return launch_known(o, &li) && !o->ranks_per_node &&
           (li.kind == CT_LAUNCH_SINGLE || li.kind == CT_LAUNCH_LOCAL);
}

int ct_opts_links_check(const struct ct_opts *o, const char *cmd)
{
    if (o->lib) /* a library's engine: its own transports (ct_opts_lib_check) */
        return 0;
    struct ct_err err = {0};
    if (o->params.v[CT_P_STREAMS] > 1 && /* one_host() reads the launch: only where it matters */
        ct_comm_streams_check(o->transport, one_host(o), (int)o->params.v[CT_P_STREAMS], &err) < 0)
        return ct_cmd_fail(cmd, 2, "%s", err.msg);
    if (o->provider && strcmp(o->transport, "fabric"))
        return ct_cmd_fail(cmd, 2, "--provider is for --transport fabric");
    if (o->sockbuf && ct_comm_shm_alone(o->transport, one_host(o)))
        return ct_cmd_fail(cmd, 2,
                           "--sockbuf sizes tcp's socket buffers: the ranks meet in shared "
                           "memory alone (one host) (--transport tcp)");
    /* --local's ranks meeting in shared memory (a virtual node's among themselves) */
    if (o->local > 1 && (!strcmp(o->transport, "shm") || !strcmp(o->transport, "auto")) &&
        ct_shm_host_fits(o->local, o->ranks_per_node ? o->ranks_per_node : o->local, &err) < 0)
        return ct_cmd_fail(cmd, 2, "%s", err.msg);
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
    lx->refused = ct_cmd_refused();
    lx->notice = print_notice;
    lx->fatal = print_fatal;
    lx->ctx = (void *)cmd;
    lx->stopped = o->kept_in ? ct_sweep_outputs_stop_note : NULL;
    lx->stopped_ctx = (void *)o->kept_in;
}

void ct_opts_print_bootstrap(const struct ct_opts *o)
{
    struct ct_launch_cfg lc;
    struct ct_launch_opts lx;
    char buf[2048];
    const struct ct_libmod *m = o->lib ? ct_libmod_find(o->lib) : NULL;
    if (m) { /* an MPI library's engine: its launcher starts the ranks */
        char *args[] = {"run", "..."}, self[4096] = "colltune";
        (void)ct_self_path(self, sizeof self, 0);
        char **v = ct_libmod_argv(m, o->local ? o->local : o->hosts_ranks, o->hosts, o->no_bind,
                                  "HOST:PORT", self, 2, args);
        printf("%s's launcher starts the ranks:", m->title);
        for (int i = 0; v[i]; i++)
            printf(" %s", v[i]);
        printf("\nrank 0 tells this colltune at HOST:PORT when %s has started (within "
               "--boot-timeout)\n",
               m->title);
        ct_libmod_argv_free(v);
        return;
    }
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
    /* bootstraps and tcp listen in the port range; tcp reads it from the environment */
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
    cc->tp.map_bufs = o->map_bufs;
    cc->tp.sockbuf = (size_t)o->sockbuf;
    cc->tp.timeout_ns = cc->timeout_ns;
    cc->tp.ifname = ifname_of(o);
    cc->tp.provider = o->provider;
}

int ct_opts_comm_open(const struct ct_opts *o, struct ct_boot *boot, struct ct_comm *c,
                      struct ct_err *err)
{
    struct ct_comm_cfg cc;
    ct_opts_comm_cfg(o, &cc);
    CT_TRY(ct_cmd_same_line(boot, err)); /* before the transports: they disagree too */
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

struct ct_rank_info *ct_opts_rank_infos(struct ct_comm *c, struct ct_mem *mem, struct ct_err *err)
{
    struct ct_rank_info mine = {0}, *all = ct_xcalloc((size_t)c->size, sizeof *all);
    ct_mem_describe(mem, mine.device, sizeof mine.device);
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

void ct_opts_params_str(const struct ct_opts *o, const struct ct_algo *a, char *buf, size_t len)
{
    struct ct_params p = o->params;
    ct_params_defaults(&p);
    size_t off = 0;
    for (int i = 0; i < CT_P_COUNT && off < len; i++)
        if (ct_params_shown(a, &p) & CT_PBIT(i))
            off += (size_t)snprintf(buf + off, len - off, "%s%s=%llu", off ? "," : "",
                                    ct_param_desc((enum ct_param_id)i)->name,
                                    (unsigned long long)p.v[i]);
}
