/* SPDX-License-Identifier: MIT */
/* The engine a rank measures with: colltune's own (native) or NCCL (--lib nccl, in process;
 * the MPI libraries' engines are relaunched under their launchers: cmd/librun.c). */
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "../backend/libmod.h"
#include "../backend/nccl.h"
#include "../lib/parse.h"
#include "../tune/job.h"
#include "../tune/libverify.h"
#include "../tune/stats.h"
#include "cmd.h"
#include "librun.h"
#include "opts.h"

int ct_opts_engine_open(const struct ct_opts *o, struct ct_boot *boot, const struct ct_comm *c,
                        struct ct_backend *be, struct ct_nccl **n, struct ct_err *err)
{
    struct ct_job j;
    *n = NULL;
    if (!o->lib)
        return 0;
    int gpu = ct_mem_gpu_of(o->gpu_map, boot->local_rank, err);
    if (gpu < 0)
        return gpu;
    ct_opts_job(o, c, 1, &j);
    /* a peer that dies inside ncclCommInitRank leaves the others there for good */
    unsigned s = (unsigned)ct_lib_bound_s(o->boot_timeout_s + o->timeout_s);
    char msg[240];
    snprintf(msg, sizeof msg,
             "colltune: error: rank %d (%s): NCCL's communicator set-up did not finish within %u "
             "s (a peer died or cannot be reached; --boot-timeout)\n",
             boot->rank, boot->host, s);
    ct_lib_deadline(s, CT_EXIT_FAIL, msg);
    int rc = ct_nccl_open(be, n, boot, &j.shape, gpu, err);
    ct_lib_deadline_off();
    return rc;
}

int ct_opts_lib_pairs(struct ct_opts *o, const char *cmd, const char *arg)
{
    long v;
    if (ct_parse_int(arg, CT_PAIRED_MIN, CT_PAIRED_CAP, &v))
        return ct_cmd_fail(cmd, 2, "bad --pairs '%s' (%d..%d)", arg, CT_PAIRED_MIN, CT_PAIRED_CAP);
    o->pairs = (int)v;
    return 0;
}

int ct_opts_lib_env(struct ct_opts *o, const char *cmd, const char *arg, bool search)
{
    int n = (int)strcspn(arg, "=");
    const char *opt = search ? "--env-search" : "--env";
    if (search && o->nenv_search == CT_ENV_SEARCH_VARS)
        return ct_cmd_fail(cmd, 2,
                           "--env-search: at most %d variables, searched one after the other",
                           CT_ENV_SEARCH_VARS);
    struct ct_lib_env *e = search ? &o->env_search[o->nenv_search] : &o->lib_env[o->nlib_env];
    char v[CT_ENV_SEARCH_MAX][sizeof e->value];
    if (!n || (!arg[n] && !search)) /* --env-search NAME: values spaced around its default */
        return ct_cmd_fail(cmd, 2, "bad %s '%s' (%s, NAME one of the library's variables)", opt,
                           arg, search ? "NAME=V1,V2,... or NAME" : "NAME=VALUE");
    if (!search && o->nlib_env == CT_LIB_ENV_MAX)
        return ct_cmd_fail(cmd, 2, "--env: at most %d launch settings", CT_LIB_ENV_MAX);
    if (n >= (int)sizeof e->name || (arg[n] && strlen(arg + n + 1) >= sizeof e->value))
        return ct_cmd_fail(cmd, 2, "%s %.*s: too long", opt, n, arg);
    snprintf(e->name, sizeof e->name, "%.*s", n, arg);
    snprintf(e->value, sizeof e->value, "%s", arg[n] ? arg + n + 1 : "");
    if (search && arg[n] && ct_lib_env_values(e, v) < 0)
        return ct_cmd_fail(cmd, 2,
                           "bad --env-search '%s' (NAME=V1,V2,...: up to %d values, each once, "
                           "none empty)",
                           arg, CT_ENV_SEARCH_MAX);
    o->nlib_env += !search;
    o->nenv_search += search;
    return 0;
}

const char *ct_opts_verify_only(const struct ct_opts *o)
{
    return o->try_ties       ? "try-ties"
           : o->reverify     ? "reverify"
           : o->each_setting ? "each-setting"
                             : NULL;
}

int ct_opts_lib_check(const struct ct_opts *o, const char *cmd)
{
    const struct ct_libmod *m = o->lib ? ct_libmod_find(o->lib) : NULL;
    const struct ct_lib_env *all[CT_LIB_ENV_MAX + CT_ENV_SEARCH_VARS];
    if (o->lib && strcmp(cmd, "run") && strcmp(cmd, "sweep"))
        return ct_cmd_fail(cmd, 2, "--lib %s: only 'run' and 'sweep' drive library engines",
                           o->lib);
    int n = 0, ns = o->nenv_search;
    if ((o->nlib_env || ns) && (!m || strcmp(cmd, "sweep")))
        return ct_cmd_fail(cmd, 2, "--env%s is for sweep --lib %s (the library's launch settings)",
                           o->nlib_env ? "" : "-search", ct_libmod_names());
    for (int i = 0; i < o->nlib_env; i++)
        all[n++] = &o->lib_env[i];
    for (int i = 0; i < ns; i++)
        all[n++] = &o->env_search[i];
    for (int i = 0; i < n; i++) {
        struct ct_err err = {0};
        bool s = i >= o->nlib_env;
        char v[CT_ENV_SEARCH_MAX][sizeof all[i]->value];
        /* NAME alone: its name checked here, its values found before the search (libsearch.c) */
        int nv = !s ? 1 : all[i]->value[0] ? ct_lib_env_values(all[i], v) : 0;
        for (int k = 0; k < (nv ? nv : 1); k++)
            if (ct_libmod_env_check(m, all[i]->name,
                                    !s   ? all[i]->value
                                    : nv ? v[k]
                                         : NULL,
                                    &err) < 0)
                return ct_cmd_fail(cmd, 2, "--env%s: %s", s ? "-search" : "", err.msg);
        if (s && m->env_exclude && !strcmp(all[i]->name, m->env_exclude))
            return ct_cmd_fail(cmd, 2,
                               "--env-search %s: components are excluded with --env, not "
                               "searched",
                               all[i]->name);
        for (int j = 0; j < i; j++) { /* one variable twice, by any name */
            const char *a = all[j]->name, *b = all[i]->name;
            bool sj = j >= o->nlib_env;
            if (!ct_libmod_env_same(m, a, b))
                continue;
            if (sj == s && !strcmp(a, b))
                return ct_cmd_fail(cmd, 2, "--env%s %s twice", s ? "-search" : "", a);
            return ct_cmd_fail(cmd, 2, "--env%s %s beside --env%s %s: %s", sj ? "-search" : "", a,
                               s ? "-search" : "", b,
                               strcmp(a, b) ? "one variable of the library's, by two names"
                                            : "one or the other");
        }
    }
    if (ns && o->nlib_env + ns > CT_LIB_ENV_MAX)
        return ct_cmd_fail(cmd, 2, "--env-search: at most %d launch settings with the one%s found",
                           CT_LIB_ENV_MAX, ns > 1 ? "s" : "");
    struct ct_err ferr = {0}; /* the library's variables, what its shm segment holds; not */
    const char *by; /* in the ranks (the launching colltune checked), nor for a config's verify */
    if (m && !ct_libmod_in_rank() && !o->verify &&
        ct_lib_env_ok(m, o->lib_env, o->nlib_env, o->env_search, ns, &by, &ferr) < 0)
        return ct_cmd_fail(cmd, 2, "%s%s%s", by ? by : "", by ? ": " : "", ferr.msg);
    if (o->lib && o->own_algos)
        return ct_cmd_fail(cmd, 2,
                           "--algo (--algos) names colltune's own algorithms; --lib %s measures "
                           "the library's own, named %s:NAME",
                           o->lib, o->lib);
    if (o->lib && o->quant)
        return ct_cmd_fail(cmd, 2, "--quant is colltune's own wire format, not --lib %s's", o->lib);
    if (o->keep_rules && (!o->lib || !strcmp(o->lib, "nccl") || strcmp(cmd, "run")))
        return ct_cmd_fail(cmd, 2, "--keep-rules is for run --lib %s%s", ct_libmod_names(),
                           strcmp(cmd, "sweep") ? "" : ": a sweep measures the library's defaults");
    const char *vo = ct_opts_verify_only(o);
    if (vo && (!o->lib || !strcmp(o->lib, "nccl") || strcmp(cmd, "sweep")))
        return ct_cmd_fail(cmd, 2, "--%s is for sweep --verify CONFIG --lib %s", vo,
                           ct_libmod_names());
    if (o->pairs && (!o->lib || strcmp(cmd, "sweep"))) /* and --verify or --env-search: sweep.c */
        return ct_cmd_fail(cmd, 2, "%s", CT_PAIRS_FOR);
    /* the engines' own parameters: Open MPI's segment size (--chunk), NCCL's channels */
    const char *own = !o->lib           ? NULL
                      : o->params.intra ? "intra"
                      : o->params.inter ? "inter"
                      : o->torus_rows   ? "torus"
                      : o->rails        ? "rails"
                                        : NULL;
    for (int p = 0; o->lib && !own && p < CT_P_COUNT; p++)
        if (o->params.v[p] && !(p == CT_P_CHUNK && !strcmp(o->lib, "ompi")) &&
            !(p == CT_P_CHANNELS && !strcmp(o->lib, "nccl")))
            own = ct_param_desc((enum ct_param_id)p)->name;
    if (own)
        return ct_cmd_fail(cmd, 2, "--%s is for colltune's own algorithms, not --lib %s's", own,
                           o->lib);
    const char *mpi = !o->lib || !strcmp(o->lib, "nccl") ? NULL /* how colltune's ranks run */
                      : o->ranks_per_node ? "--ranks-per-node (its launcher places the ranks: "
                                            "--hosts HOST:SLOTS,... for nodes)"
                      : o->provider || o->sockbuf ? "--provider and --sockbuf (its own transports)"
                      : o->wait                   ? "--wait (its ranks wait their own way)"
                                                  : NULL;
    if (mpi)
        return ct_cmd_fail(cmd, 2, "%s: not for --lib %s", mpi, o->lib);
    if (o->lib && strcmp(o->transport, "auto"))
        return ct_cmd_fail(cmd, 2, "--transport %s: --lib %s moves data over its own transports",
                           o->transport, o->lib);
    return 0;
}

int ct_opts_engine_close(const struct ct_opts *o, struct ct_nccl *n, int rank, int code)
{
    if (!n)
        return code;
    unsigned s = (unsigned)ct_lib_bound_s(o->timeout_s);
    char msg[200];
    snprintf(msg, sizeof msg,
             "colltune: warning: rank %d: ncclCommDestroy did not return within %u s; leaving %s\n",
             rank, s,
             code == CT_EXIT_OK || code == CT_EXIT_CHECK ? "(the results are complete)"
                                                         : "(after the failure above)");
    ct_lib_deadline(s, code, msg);
    ct_nccl_close(n);
    ct_lib_deadline_off();
    return code;
}

int ct_opts_mem_open(const struct ct_opts *o, const struct ct_boot *boot, struct ct_mem *m,
                     struct ct_err *err)
{
    memset(m, 0, sizeof *m);
    if (!o->mem || !strcmp(o->mem, "host"))
        return 0;
    int gpu = ct_mem_gpu_of(o->gpu_map, boot->local_rank, err);
    return gpu < 0 ? gpu : ct_mem_open(m, o->mem, gpu, err);
}

int ct_opts_sweep_run(const struct ct_opts *o, struct ct_boot *boot, struct ct_sweep_job *j,
                      struct ct_comm **comm, struct ct_nccl **nccl, struct ct_err *err)
{
    *nccl = NULL;
    if (!o->lib) {
        struct ct_mem m;
        CT_TRY(ct_opts_mem_open(o, boot, &m, err));
        j->mem = m.kind ? &m : NULL;
        int rc = ct_sweep_job_run(j, comm, err);
        j->mem = NULL;
        ct_mem_close(&m);
        return rc;
    }
    struct ct_backend be;
    CT_TRY(ct_opts_engine_open(o, boot, *comm, &be, nccl, err));
    return ct_sweep_job_run_on(j, &be, *nccl, (*comm)->nnodes, be.library, boot->host, err);
}

int ct_opts_nccl_sweep_env(struct ct_err *err)
{
    char path[PATH_MAX];
    CT_TRY(ct_nccl_plugin_path(path, sizeof path, err));
    const char *set = getenv("NCCL_TUNER_PLUGIN");
    char *real = set && *set ? realpath(set, NULL) : NULL;
    bool other = set && *set && (!real || strcmp(real, path));
    free(real);
    if (other)
        return ct_err_set(err, CT_EUNSUPP,
                          "a sweep forces NCCL's choices through colltune's tuner plugin (%s), "
                          "and NCCL_TUNER_PLUGIN=%s names another: unset it",
                          path, set);
    setenv("NCCL_TUNER_PLUGIN", path, 1);
    unsetenv("COLLTUNE_CONFIG"); /* NCCL's own choice is the default row, not a config's */
    unsetenv("COLLTUNE_NCCL_FORCE");
    return 0;
}
