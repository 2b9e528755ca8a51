/* SPDX-License-Identifier: MIT */
/*
 * run|sweep --lib LIB: colltune starts itself again under the library's own launcher (with
 * backend/libmod.h's marker in the ranks' environment); each rank loads the library's engine
 * module, finds the row to measure, and closes the library within a bound.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "../backend/libmod.h"
#include "../lib/cpus.h"
#include "../lib/file.h"
#include "../lib/parse.h"
#include "../output/sweep_out.h"
#include "cmd.h"
#include "librun.h"

/* A library's teardown that does not return (UCX 1.13's tcp transport can leave a rank
 * progressing a peer that has already left, openucx/ucx#8738) must not hang the job once its
 * results are out: after FINALIZE_S (or --timeout, when shorter) the rank says so and leaves
 * with the job's code. */
#define FINALIZE_S 20

int ct_lib_close_bounded(const struct ct_backend *be, void *ctx, int code, double timeout_s)
{
    int b = ct_lib_bound_s(timeout_s);
    unsigned s = b < FINALIZE_S ? (unsigned)b : FINALIZE_S;
    char msg[160];
    snprintf(msg, sizeof msg,
             "colltune: warning: rank %d: %s's MPI_Finalize did not return within %u s; leaving "
             "%s\n",
             be->shape.rank, be->library, s,
             code == CT_EXIT_OK || code == CT_EXIT_CHECK ? "(the results are complete)"
                                                         : "(after the failure above)");
    return ct_lib_close_within(be, ctx, code, s, msg);
}

int ct_lib_launch(const struct ct_opts *o, const char *cmd, unsigned colls, uint64_t top, int argc,
                  char **argv)
{
    bool said;
    int rc = ct_cmd_refused() ? ct_cmd_refused() : ct_lib_launch_check(o, cmd, colls, top);
    return rc ? rc : ct_lib_job(o, cmd, 0, argc, argv, NULL, &said);
}

long ct_lib_sizes(const struct ct_opts *o, const char *sizes, uint64_t **list)
{
    char bad[40];
    long n = ct_parse_size_list(sizes, ct_dtype_size(o->dtype), list, bad, sizeof bad);
    if (n < 0 && !(ct_libmod_in_rank() && ct_libmod_rank())) /* every rank: rank 0 says it */
        ct_cmd_fail("run", CT_EXIT_USAGE,
                    "--sizes: %s%s%s (sizes in bytes, K/M/G/T, each a multiple of the %zu-byte "
                    "element, comma-separated)",
                    *bad ? "bad size '" : "an empty entry", bad, *bad ? "'" : "",
                    ct_dtype_size(o->dtype));
    return n;
}

int ct_lib_sizes_exact(const struct ct_opts *o, const uint64_t *list, long n, int nranks, bool root)
{
    const struct ct_coll_desc *d = ct_coll_desc(o->coll);
    size_t es = ct_dtype_size(o->dtype);
    for (long k = 0; k < n; k++) {
        uint64_t c = d->count_for(list[k], es, nranks), lo = d->size_bytes(c, es, nranks);
        char a[32], b[32];
        if (lo != list[k])
            return root ? ct_cmd_fail("run", CT_EXIT_USAGE,
                                      "--sizes: %llu B is no size %s runs on %d ranks (whole "
                                      "%zu-byte elements for each rank: %s or %s)",
                                      (unsigned long long)list[k], d->name, nranks, es,
                                      ct_bytes_str(lo, a, sizeof a),
                                      ct_bytes_str(d->size_bytes(c + 1, es, nranks), b, sizeof b))
                        : CT_EXIT_USAGE;
    }
    return 0;
}

int ct_lib_place_check(const struct ct_opts *o, const char *cmd)
{
    return o->local && o->hosts
               ? ct_cmd_fail(cmd, CT_EXIT_USAGE, "--local N and --hosts LIST do not combine")
               : 0;
}

/* With --local N, every rank on this host: the buffers of size top (the largest) of the
 * collectives colls fit in what it has available (the library's ranks map their send and
 * receive buffers as colltune's do; 1 TiB had the OOM killer end a rank). */
static int mem_check(const struct ct_opts *o, const char *cmd, unsigned colls, uint64_t top,
                     struct ct_err *err)
{
    uint64_t per = 0;
    char what[64], b[32];
    bool run = !strcmp(cmd, "run");
    snprintf(what, sizeof what, "%s %s", run ? ct_coll_name(o->coll) : "the largest point,",
             ct_bytes_str(top, b, sizeof b));
    for (int c = 0; o->local && c < CT_COLL_COUNT; c++) {
        if (!(colls & CT_COLL_BIT(c)))
            continue;
        const struct ct_coll_desc *d = ct_coll_desc((enum ct_coll)c);
        struct ct_job j = {.coll = (enum ct_coll)c, .dtype = o->dtype};
        j.shape.nranks = o->local;
        j.count = d->count_for(top / ct_dtype_size(o->dtype) * ct_dtype_size(o->dtype),
                               ct_dtype_size(o->dtype), o->local);
        uint64_t need = ct_job_send_bytes(&j) + ct_job_recv_bytes(&j);
        per = need > per ? need : per;
    }
    return ct_mem_fits(per, o->local, what, run ? "a smaller -e or --sizes" : "a smaller -e", err);
}

int ct_lib_launch_check(const struct ct_opts *o, const char *cmd, unsigned colls, uint64_t top)
{
    const struct ct_libmod *m = ct_libmod_find(o->lib);
    struct ct_err err = {0};
    char *mod = NULL;
    int rc = ct_lib_place_check(o, cmd);
    if (rc)
        return rc;
    if (!o->local && !o->hosts)
        return ct_cmd_fail(cmd, CT_EXIT_USAGE,
                           "--lib %s needs --local N or --hosts LIST, or colltune under %s", o->lib,
                           ct_libmod_launcher(m));
    if (ct_libmod_path(m, &mod, &err) < 0 ||
        ct_libmod_launch_check(m, o->hosts, (int)o->dtype, (int)o->op, &err) < 0 ||
        mem_check(o, cmd, colls, top, &err) < 0)
        return ct_cmd_fail(cmd, CT_EXIT_USAGE, "%s", err.msg);
    free(mod);
    return 0;
}

int ct_lib_job(const struct ct_opts *o, const char *cmd, int nranks, int argc, char **argv,
               char **out, bool *said)
{
    const struct ct_libmod *m = ct_libmod_find(o->lib);
    struct ct_err err = {0};
    char self[4096];
    *said = true;
    if (out)
        *out = NULL;
    if (ct_self_path(self, sizeof self, 0) < 0)
        return ct_cmd_fail(cmd, CT_EXIT_FAIL, "cannot find the colltune binary");
    char notify[128];
    int lfd =
        ct_libmod_notify_open(o->hosts, o->ifname, o->port_range, notify, sizeof notify, &err);
    if (lfd < 0) /* --ifname of no interface, or one without an address: as native runs */
        return ct_cmd_fail(cmd, err.code == CT_EINVAL ? CT_EXIT_USAGE : CT_EXIT_FAIL, "%s",
                           err.msg);
    nranks = nranks ? nranks : o->local ? o->local : o->hosts_ranks;
    char **v = ct_libmod_argv(m, nranks, o->hosts, o->no_bind, notify, self, argc, argv);
    struct ct_libmod_end how;
    int rc = ct_libmod_start(v, lfd, notify, o->boot_timeout_s, out, STDERR_FILENO, &how, &err);
    close(lfd);
    ct_libmod_argv_free(v);
    char note[4400] = "";
    if (how.sig && o->kept_in) /* as colltune's own launcher says it */
        ct_sweep_outputs_stop_note((void *)o->kept_in, how.sig, note, sizeof note);
    if (how.sig)
        return ct_cmd_fail(cmd, 128 + how.sig,
                           "interrupted by signal %d (%s); the ranks were stopped%s", how.sig,
                           strsignal(how.sig), note);
    if (rc < 0)
        return ct_cmd_fail(cmd, CT_EXIT_FAIL, "%s", err.msg);
    if (rc == 127 && !how.started)
        return ct_cmd_fail(cmd, CT_EXIT_USAGE, "cannot start %s", ct_libmod_launcher(m));
    if (how.out_errno == EPIPE && !rc) /* its reader left (| head): quiet, as a killed producer */
        return 128 + SIGPIPE;
    if (how.out_errno && how.out_errno != EPIPE) /* mpirun dropped it and exited 0 */
        ct_cmd_fail(cmd, CT_EXIT_FAIL, "cannot write the ranks' output: %s (the job %s)",
                    strerror(how.out_errno),
                    rc ? "failed too: its code stands" : "itself ended well");
    if (how.out_errno && !rc)
        return CT_EXIT_FAIL;
    /* the ranks' own failures exit 1..3, said by them (a check's exit 3 by its table); not a
     * rank a library ended in MPI_Init (Open MPI refusing a setting says why in its own words,
     * not ours), nor one killed (hydra exits with the signal's number) */
    bool unsaid = rc > CT_EXIT_CHECK || (rc && !how.ours && (rc != CT_EXIT_CHECK || !how.started));
    *said = rc > CT_EXIT_CHECK; /* else the caller may say what the run was */
    if (unsaid)
        ct_cmd_fail(cmd, CT_EXIT_FAIL, "%s exited %d %s (%s%s)", ct_libmod_launcher(m), rc,
                    how.started ? "after the library started"
                                : "before the library started on every rank",
                    how.said ? "its lines above" : "nothing on stderr",
                    how.started           ? ": a rank died?"
                    : rc <= CT_EXIT_CHECK ? ": a setting it refused in MPI_Init?"
                    : o->hosts ? ": a host it cannot reach, or a rank that died starting?"
                               : ": a rank that died starting?");
    return unsaid ? CT_EXIT_FAIL : rc;
}

int ct_lib_engine_open(const struct ct_opts *o, const char *cmd, struct ct_backend *be, void **ctx)
{
    struct ct_err err = {0};
    const struct ct_libmod *m = ct_libmod_find(o->lib);
    char left[512], msg[240];
    int nleft =
        (o->keep_rules ? ct_libmod_forced_env : ct_libmod_defaults_env)(m, left, sizeof left);
    /* a rank that never reaches MPI_Init (its module did not load) leaves the others there
     * for good under hydra. The deadline exits 2 as it does (hydra ORs codes: 1 | 2 is 3) */
    unsigned s = (unsigned)ct_lib_bound_s(o->boot_timeout_s + o->timeout_s);
    snprintf(msg, sizeof msg,
             "colltune: error: rank %d: %s did not start within %u s (a rank that did not reach "
             "MPI_Init? its line, or the launcher's, says why; --boot-timeout)\n",
             ct_libmod_rank(), m->title, s);
    ct_lib_deadline(s, CT_EXIT_USAGE, msg);
    int rc = ct_libmod_open(m, ct_cmd_refused(), be, ctx, &err);
    ct_lib_deadline_off();
    if (rc == 0) {
        if (nleft && be->root) /* an export sourced here: said; a forcing kept, said too */
            fprintf(stderr, "colltune %s: note: measuring %s%s %s %s\n", cmd, m->title,
                    o->keep_rules ? " with" : "'s defaults:", left,
                    o->keep_rules ? "of the ranks' environment: its default rows run what they "
                                    "force"
                                  : "left out of the ranks' environment (run --keep-rules "
                                    "measures with them)");
        if (be->root && ct_libmod_notify(&err) < 0) { /* the launching colltune waits for it */
            ct_cmd_fail(cmd, CT_EXIT_FAIL, "%s", err.msg);
            return ct_lib_close_bounded(be, *ctx, CT_EXIT_FAIL, o->timeout_s);
        }
        ct_lib_watch(be, *ctx, o->timeout_s);
        return 0;
    }
    /* said before the (collective) close lets any rank leave: once where every rank has the
     * line (be->agreed: it names the rank that failed); else by rank 0 and by every other
     * rank that failed, naming it, or under colltune's own launcher, whose ranks of a host
     * share their environment and fail alike, by the first rank of every other host (one
     * without the module or its library) */
    int rank = ct_libmod_rank(), code = CT_EXIT_USAGE;
    char host[256] = "?";
    if (be->agreed ? be->root && !ct_cmd_refused() : !rank) /* a refusal: said before */
        ct_cmd_fail(cmd, CT_EXIT_USAGE, "%s", err.msg);
    else if (!be->agreed && (!getenv(CT_LIBMOD_ENV) || ct_libmod_local_rank() <= 0)) {
        (void)gethostname(host, sizeof host - 1);
        ct_cmd_fail(cmd, CT_EXIT_USAGE, "rank %d on %s: %s", rank, host, err.msg);
    }
    fflush(stderr);
    if (!be->close)
        return code;
    /* bounded: the peers that did open may be in a collective */
    s = (unsigned)ct_lib_bound_s(o->timeout_s);
    snprintf(msg, sizeof msg,
             "colltune: rank %d: MPI_Finalize did not return within %u s after the failure "
             "above; leaving\n",
             rank, s);
    return ct_lib_close_within(be, *ctx, code, s, msg);
}
