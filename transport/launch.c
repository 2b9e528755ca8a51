/* SPDX-License-Identifier: MIT */
/* Launch detection (--local, PMIx, PMI-1, environment), the fork launcher, mis-launches. */
#include "launch.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../lib/clock.h"
#include "../lib/cpus.h"
#include "../lib/file.h"
#include "../lib/sock.h"
#include "../lib/thread.h"
#include "shm.h"

#define SEC 1000000000LL
/* After a rank fails the others get this long, plus the data timeout when one is set, to
 * notice (a dead peer is seen within milliseconds, a stalled one within the data timeout
 * they share) before they are killed: a rank in the middle of a long measurement with a
 * healthy peer sees the failure only at its next exchange with the failed one (validate
 * with --timeout 2 on a busy 2-core VM: its rank 0 was killed after 5 s, before it could
 * report the failed host). A stopped rank (SIGSTOP, a tracer) can never exit by itself and
 * is killed at once. */
#define GRACE_NS (5 * SEC)

/* The first failure is also told to the others at once (SIGUSR1 with the failed rank as its
 * value), so that one in a long measurement with a healthy peer stops it and reports rather
 * than running into the grace: validate's pair rounds with 256 MiB x 50 took longer than the
 * grace on a slow 2-core VM, and its rank 0 was killed before it could name the dead host. */
static volatile sig_atomic_t lost_rank = -1, lost_how;

/* The notice's value: the rank (20 bits), its exit code or signal (8), a signal's bit. */
#define LOST_RANK_BITS 20
#define LOST_KILLED (1 << 28)
/* the "signal" of a rank a peer found stalled (ct_launch_tell_stalled) */
#define LOST_STALLED 0xff
static int lost_word(int rank, int code, bool killed)
{
    return (rank & ((1 << LOST_RANK_BITS) - 1)) | (code & 0xff) << LOST_RANK_BITS |
           (killed ? LOST_KILLED : 0);
}

static void on_lost(int sig, siginfo_t *si, void *uc)
{
    (void)sig;
    (void)uc;
    /* the first word, or a death after a stall's word (the stalled rank may come back) */
    if ((lost_rank < 0 || lost_how == CT_LAUNCH_LOST_STALLED) && si->si_code == SI_QUEUE) {
        int v = si->si_value.sival_int, code = (v >> LOST_RANK_BITS) & 0xff;
        lost_how = v & LOST_KILLED ? -code : code;
        lost_rank = v & ((1 << LOST_RANK_BITS) - 1);
    }
}

int ct_launch_lost_rank(void)
{
    return lost_rank;
}

int ct_launch_lost_how(void)
{
    return lost_rank >= 0 ? lost_how : 0;
}

static int forked_rank; /* this process is a rank of the fork launcher: 2 as one node of several */

int ct_launch_forked(void)
{
    return forked_rank;
}

void ct_launch_lost_clear_stalled(void)
{
    sigset_t one, old;
    sigemptyset(&one);
    sigaddset(&one, SIGUSR1); /* a death's word coming meanwhile is kept */
    pthread_sigmask(SIG_BLOCK, &one, &old);
    if (lost_rank >= 0 && lost_how == CT_LAUNCH_LOST_STALLED) {
        lost_rank = -1;
        lost_how = 0;
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
}

void ct_launch_tell_stalled(int rank)
{
    if (forked_rank && rank >= 0)
        sigqueue(getppid(), SIGUSR2,
                 (union sigval){.sival_int = lost_word(rank, LOST_STALLED, true)});
}

int ct_launch_lost_rank_wait(int64_t wait_ns)
{
    int64_t until = ct_now_ns() + wait_ns;
    while (forked_rank && lost_rank < 0 && ct_now_ns() < until) {
        struct timespec ts = {0, 10000000};
        nanosleep(&ts, NULL);
    }
    return lost_rank;
}

/* ---------------------------------------------------------------- environment */

static const char *env(const char *name)
{
    const char *v = getenv(name);
    return v && *v ? v : NULL;
}

static int env_long(const char *name, long lo, long hi, long *out)
{
    const char *v = env(name);
    char *end;
    if (!v)
        return -1;
    errno = 0;
    long x = strtol(v, &end, 10);
    if (*end || errno || x < lo || x > hi)
        return -2;
    *out = x;
    return 0;
}

static int in_srun_step(void)
{
    return env("SLURM_STEP_ID") || env("SLURM_STEPID");
}

static int with_master(void)
{
    return env("MASTER_ADDR") != NULL;
}

struct pair {
    const char *rank, *size;
    int (*applies)(void);
    int launcher; /* set by a launcher (not by the user for colltune) */
};

static const struct pair pairs[] = {
    {"COLLTUNE_RANK", "COLLTUNE_SIZE", NULL, 0},
    {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", NULL, 1},
    {"PMI_RANK", "PMI_SIZE", NULL, 1},
    {"SLURM_PROCID", "SLURM_NTASKS", in_srun_step, 1},
    {"RANK", "WORLD_SIZE", with_master, 1},
};
#define NPAIRS (sizeof pairs / sizeof pairs[0])

int ct_launch_env_size(void)
{
    struct ct_launch_cfg none = {0};
    struct ct_launch_info li;
    if (ct_launch_env_rank() < 0 || ct_launch_detect(&none, &li, NULL) < 0)
        return -1;
    if (li.kind == CT_LAUNCH_SINGLE && !li.size_var && li.launcher_size <= 0)
        return -1; /* a rank no variable sizes (PMIX_RANK alone, PMIx not built) */
    return li.size > 0 ? li.size : li.launcher_size > 0 ? li.launcher_size : -1;
}

int ct_launch_env_node(void)
{ /* (as --local N reads them) */
    struct ct_launch_cfg one = {.local = 1};
    struct ct_launch_info li;
    if (ct_launch_detect(&one, &li, NULL) < 0 || li.kind != CT_LAUNCH_LOCAL_NODES)
        return -1;
    return li.node_rank;
}

int ct_launch_env_rank(void)
{
    const char *v = NULL, *b = env("COLLTUNE_BOOTSTRAP");
    if (b && !strcmp(b, "single")) /* every process a job of its own */
        return -1;
    for (size_t i = 0; i < NPAIRS && !v; i++)
        if (!pairs[i].applies || pairs[i].applies())
            v = env(pairs[i].rank);
    v = v ? v : env("PMIX_RANK");
    char *end;
    long r = v ? strtol(v, &end, 10) : -1;
    return v && !*end && r >= 0 && r < CT_BOOT_MAX_RANKS ? (int)r : -1;
}

static int mislaunch(struct ct_launch_info *li, struct ct_err *err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int mislaunch(struct ct_launch_info *li, struct ct_err *err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(li->why, sizeof li->why, fmt, ap);
    va_end(ap);
    li->kind = CT_LAUNCH_MISLAUNCH;
    li->method = "refused";
    return ct_err_set(err, CT_EINVAL, "%s", li->why);
}

/* COLLTUNE_ROOT, else MASTER_ADDR:MASTER_PORT (torchrun; its agent's store holds
 * MASTER_PORT when TORCHELASTIC_USE_AGENT_STORE=True, so colltune takes the next port). */
static int find_root(struct ct_launch_info *li, struct ct_err *err)
{
    const char *r = env("COLLTUNE_ROOT");
    char host[256];
    int port;
    if (r) {
        snprintf(li->root, sizeof li->root, "%s", r);
        li->root_src = "COLLTUNE_ROOT";
    } else if (env("MASTER_ADDR") && env("MASTER_PORT")) {
        long p;
        if (env_long("MASTER_PORT", 1, 65535, &p) < 0)
            return mislaunch(li, err, "MASTER_PORT='%s' is not a port", env("MASTER_PORT"));
        const char *agent = env("TORCHELASTIC_USE_AGENT_STORE");
        if (agent && !strcmp(agent, "True") && p < 65535)
            p++;
        const char *a = env("MASTER_ADDR");
        snprintf(li->root, sizeof li->root, strchr(a, ':') ? "[%s]:%ld" : "%s:%ld", a, p);
        li->root_src = "MASTER_ADDR/MASTER_PORT";
    } else {
        return 0;
    }
    /* every candidate must be host:port with a real port */
    for (const char *p = li->root; *p;) {
        const char *e = strchr(p, ',');
        size_t l = e ? (size_t)(e - p) : strlen(p);
        char one[300];
        snprintf(one, sizeof one, "%.*s", (int)(l < sizeof one ? l : sizeof one - 1), p);
        if (ct_sock_parse_addr(one, host, sizeof host, &port, NULL) < 0 || port == 0)
            return mislaunch(li, err, "%s='%s' is not host:port", li->root_src, li->root);
        p += l + (e ? 1 : 0);
    }
    return 0;
}

/* The first applicable rank/size pair; li->launcher_size from the launcher pairs. */
static int find_pair(struct ct_launch_info *li, const struct pair **found, struct ct_err *err)
{
    *found = NULL;
    for (size_t i = 0; i < NPAIRS; i++) {
        const struct pair *p = &pairs[i];
        if (p->applies && !p->applies())
            continue;
        long s;
        if (p->launcher && env_long(p->size, 1, CT_BOOT_MAX_RANKS, &s) == 0 &&
            s > li->launcher_size) {
            li->launcher_size = (int)s;
            snprintf(li->launcher_var, sizeof li->launcher_var, "%s", p->size);
        }
        if (*found || (!env(p->rank) && !env(p->size)))
            continue;
        long r;
        if (env_long(p->size, 1, CT_BOOT_MAX_RANKS, &s) < 0 || env_long(p->rank, 0, s - 1, &r) < 0)
            return mislaunch(li, err, "%s='%s' and %s='%s' are not a valid rank and size", p->rank,
                             env(p->rank) ? env(p->rank) : "", p->size,
                             env(p->size) ? env(p->size) : "");
        *found = p;
        li->rank = (int)r;
        li->size = (int)s;
        li->rank_var = p->rank;
        li->size_var = p->size;
    }
    return 0;
}

static int detect_local(const struct ct_launch_cfg *cfg, struct ct_launch_info *li,
                        struct ct_err *err)
{
    long nn, nr;
    if (li->root[0] && env("COLLTUNE_NNODES")) {
        if (env_long("COLLTUNE_NNODES", 1, 65536, &nn) < 0 ||
            env_long("COLLTUNE_NODE_RANK", 0, nn - 1, &nr) < 0)
            return mislaunch(li, err,
                             "--local with %s: COLLTUNE_NNODES='%s' and COLLTUNE_NODE_RANK='%s' "
                             "are not a node count and a node index",
                             li->root_src, env("COLLTUNE_NNODES") ? env("COLLTUNE_NNODES") : "",
                             env("COLLTUNE_NODE_RANK") ? env("COLLTUNE_NODE_RANK") : "");
        if (nn * cfg->local > CT_BOOT_MAX_RANKS)
            return mislaunch(li, err, "%ld nodes of %d ranks is too many", nn, cfg->local);
        li->kind = CT_LAUNCH_LOCAL_NODES;
        li->method = "local";
        li->nnodes = (int)nn;
        li->node_rank = (int)nr;
        li->size = (int)nn * cfg->local;
        li->rank = (int)nr * cfg->local;
        return 0;
    }
    if (li->launcher_size > 1)
        return mislaunch(li, err,
                         "mis-launch: --local %d inside a launcher that started %d processes "
                         "(%s=%d): each process would run its own %d-rank job; drop --local "
                         "(the launcher provides the ranks) or start colltune once",
                         cfg->local, li->launcher_size, li->launcher_var, li->launcher_size,
                         cfg->local);
    li->kind = CT_LAUNCH_LOCAL;
    li->method = "local";
    li->rank = 0;
    li->size = cfg->local;
    return 0;
}

/* The "busbw 0" trap: several processes promised, none of the bootstraps can join them. */
static int trap(struct ct_launch_info *li, const struct pair *p, struct ct_err *err)
{
    char what[160];
    if (p)
        snprintf(what, sizeof what, "%s=%d, %s=%d", p->rank, li->rank, p->size, li->size);
    else
        snprintf(what, sizeof what, "%s=%d", li->launcher_var, li->launcher_size);
    return mislaunch(li, err,
                     "mis-launch: the launcher started %d processes (%s) but nothing can join "
                     "them: each would run alone as rank 0 of 1 (the nccl-tests 'busbw 0' "
                     "trap). %sSet COLLTUNE_ROOT=<rank 0's host>:<free port> on every rank, or "
                     "launch with mpirun or srun --mpi=pmix (PMIx), or mpiexec.hydra or srun "
                     "--mpi=pmi2 (PMI)",
                     p ? li->size : li->launcher_size, what,
                     env("PMIX_RANK") && !ct_boot_pmix_built()
                         ? "PMIX_RANK is set but this colltune was built without PMIx. "
                         : "");
}

int ct_launch_detect(const struct ct_launch_cfg *cfg, struct ct_launch_info *li, struct ct_err *err)
{
    memset(li, 0, sizeof *li);
    li->rank = li->size = -1;
    li->kind = CT_LAUNCH_SINGLE;
    li->method = "single";
    const char *f = env("COLLTUNE_BOOTSTRAP");
    static const char *const kinds[] = {"local", "pmix", "pmi1", "env", "single"};
    if (f) {
        for (size_t i = 0; i < sizeof kinds / sizeof kinds[0] && !li->forced; i++)
            if (!strcmp(f, kinds[i]))
                li->forced = kinds[i];
        if (!li->forced)
            return mislaunch(li, err, "COLLTUNE_BOOTSTRAP='%s' (local, pmix, pmi1, env, single)",
                             f);
    }
    const char *tok = env("COLLTUNE_TOKEN");
    struct ct_err e = {0};
    if (tok && ct_boot_token_from_text(tok, li->token, &e) < 0)
        return mislaunch(li, err, "%s", e.msg);
    li->have_token = tok != NULL;
    const struct pair *p;
    CT_TRY(find_root(li, err));
    CT_TRY(find_pair(li, &p, err));
    const char *want = li->forced;
#define WANTS(k) (!want || !strcmp(want, (k)))
    if (cfg->local > 0 && WANTS("local"))
        return detect_local(cfg, li, err);
    if (want && !strcmp(want, "local"))
        return mislaunch(li, err, "COLLTUNE_BOOTSTRAP=local needs --local N");
    if (env("PMIX_RANK") && WANTS("pmix") && ct_boot_pmix_built()) {
        li->kind = CT_LAUNCH_PMIX;
        li->method = "pmix";
        long r;
        li->rank = env_long("PMIX_RANK", 0, CT_BOOT_MAX_RANKS, &r) == 0 ? (int)r : -1;
        li->rank_var = "PMIX_RANK";
        li->size = li->launcher_size > 0 ? li->launcher_size : -1;
        li->size_var = li->launcher_size > 0 ? li->launcher_var : NULL;
        return 0;
    }
    if (want && !strcmp(want, "pmix"))
        return mislaunch(li, err, "COLLTUNE_BOOTSTRAP=pmix: %s",
                         ct_boot_pmix_built() ? "PMIX_RANK is not set"
                                              : "this colltune was built without PMIx");
    if (env("PMI_FD") && WANTS("pmi1")) {
        long r, s;
        li->kind = CT_LAUNCH_PMI1;
        li->method = "pmi1";
        if (env_long("PMI_SIZE", 1, CT_BOOT_MAX_RANKS, &s) < 0 ||
            env_long("PMI_RANK", 0, s - 1, &r) < 0)
            return mislaunch(li, err, "PMI_FD is set but PMI_RANK/PMI_SIZE are not valid");
        li->rank = (int)r;
        li->size = (int)s;
        li->rank_var = "PMI_RANK";
        li->size_var = "PMI_SIZE";
        return 0;
    }
    if (want && !strcmp(want, "pmi1"))
        return mislaunch(li, err, "COLLTUNE_BOOTSTRAP=pmi1: PMI_FD is not set");
    if (WANTS("env") && p && li->root[0]) {
        if (li->launcher_size > 1 && li->launcher_size != li->size)
            return mislaunch(li, err, "mis-launch: %s=%d but %s=%d", li->size_var, li->size,
                             li->launcher_var, li->launcher_size);
        li->kind = CT_LAUNCH_ENV;
        li->method = "env";
        return 0;
    }
    if (want && !strcmp(want, "env"))
        return mislaunch(li, err,
                         "COLLTUNE_BOOTSTRAP=env needs COLLTUNE_ROOT (or MASTER_ADDR/MASTER_PORT) "
                         "and a rank and size (COLLTUNE_RANK/COLLTUNE_SIZE ...)");
    if (!want && li->root[0] && !p)
        return mislaunch(li, err,
                         "%s is set but no rank and size are (COLLTUNE_RANK/COLLTUNE_SIZE, "
                         "OMPI_COMM_WORLD_RANK/SIZE, PMI_RANK/SIZE, SLURM_PROCID/NTASKS, "
                         "RANK/WORLD_SIZE)",
                         li->root_src);
    if (!want && ((p && li->size > 1) || li->launcher_size > 1))
        return trap(li, p, err);
#undef WANTS
    li->kind = CT_LAUNCH_SINGLE;
    li->method = "single";
    li->rank = 0;
    li->size = 1;
    return 0;
}

/* ---------------------------------------------------------------- fork launcher */

static void fatal(const struct ct_launch_opts *cfg, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void fatal(const struct ct_launch_opts *cfg, const char *fmt, ...)
{
    if (!cfg->fatal)
        return;
    char msg[5120]; /* a sweep's note names its folder (up to PATH_MAX) */
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    cfg->fatal(cfg->ctx, msg);
}

static void rank_host(char *out, size_t len, int rank, int rpn)
{
    char h[CT_BOOT_HOST_BYTES];
    const char *o = env("COLLTUNE_HOSTNAME");
    if (o)
        snprintf(h, sizeof h, "%s", o);
    else if (gethostname(h, sizeof h) < 0)
        snprintf(h, sizeof h, "localhost");
    h[sizeof h - 1] = 0;
    if (rpn > 0)
        snprintf(out, len, "%.47s/node%d", h, rank / rpn);
    else
        snprintf(out, len, "%.63s", h);
}

/* Rank 0's refusal (mine on rank 0; 0 on the others) told to every rank in one round of the
 * bootstrap: *code is rank 0's; 0 or the round's failure. */
static int refusal_round(struct ct_boot *b, int mine, int *code, struct ct_err *err)
{
    *code = mine;
    if (b->size == 1)
        return 0;
    int *all = calloc((size_t)b->size, sizeof *all);
    if (!all)
        return ct_err_set(err, CT_ENOMEM, "no memory");
    int rc = ct_boot_allgather(b, &mine, sizeof mine, all, err);
    *code = all[0];
    free(all);
    return rc;
}

/* A forked rank: bootstrap, report the job id to the parent, run fn. Never returns. round: a
 * job of one colltune a node, whose first node's refusal (x->refused) every rank learns before
 * anything runs. */
static _Noreturn void rank_main(const struct ct_launch_cfg *cfg, const struct ct_launch_opts *x,
                                struct ct_boot_cfg *bc, int idpipe, bool round, ct_rank_fn fn,
                                void *arg)
{
    struct ct_boot *b;
    struct ct_err e = {0};
    char host[CT_BOOT_HOST_BYTES];
    rank_host(host, sizeof host, bc->rank, cfg->ranks_per_node);
    bc->host = host;
    int rc = ct_boot_tcp_start(&b, bc, &e);
    if (bc->listen_fd >= 0)
        close(bc->listen_fd);
    if (rc < 0) { /* (a refusal already said: the job it would have told did not form) */
        if (!x->refused)
            fatal(x, "rank %d: %s", bc->rank, e.msg);
        _exit(x->refused ? x->refused : 1);
    }
    if (write(idpipe, &b->job_id, sizeof b->job_id) != (ssize_t)sizeof b->job_id) {
        /* the parent then cleans up by its own job id only */
    }
    close(idpipe);
    int code = 0;
    if (round && refusal_round(b, x->refused, &code, &e) < 0) {
        if (!x->refused)
            fatal(x, "rank %d: %s", bc->rank, e.msg);
        code = x->refused ? x->refused : 1;
    }
    code = code ? code : fn(b, arg);
    ct_boot_close(b);
    /* a table lost to a full disk or a closed pipe is a failure, as in a single process */
    int we = ct_file_stream_error(stdout);
    if (we && code == 0) {
        if (we != EPIPE)
            fatal(x, "rank %d: cannot write output: %s", bc->rank, strerror(we));
        code = we == EPIPE ? CT_LAUNCH_READER_LEFT : 1;
    }
    fflush(stderr);
    _exit(code);
}

struct kids {
    int n;
    pid_t *pids;
    int *state;  /* 0 running, 1 exited */
    int *killed; /* killed by the launcher after a failure */
};

/* Whether a rank is stopped (job control or ptrace stop): state T or t in /proc. */
static bool proc_stopped(pid_t pid)
{
    char st = ct_proc_state((int)pid);
    return st == 'T' || st == 't';
}

/*
 * Wait for every rank; after the first failure kill stopped ranks at once and give the
 * others grace_ns, then kill them.
 * SIGINT, SIGTERM and SIGHUP (blocked by the caller) are forwarded to the ranks, which
 * then get 2 s before SIGKILL; *sig_out is set to the signal. relay: a rank's word of a
 * stalled peer (SIGUSR2, ct_launch_tell_stalled) is passed to the others, once, while none
 * failed (a job of one host: where the ranks span nodes, a launcher tells only its own).
 */
static int reap(const struct ct_launch_opts *cfg, struct kids *k, int first, bool relay,
                int64_t grace_ns, const sigset_t *sigs, int *sig_out, int *dead_rank, int *dead_sig)
{
    int worst = 0, left = k->n, failed = -1, told = 0;
    int64_t kill_at = 0;
    while (left > 0) {
        int st;
        pid_t p = waitpid(-1, &st, WNOHANG);
        if (p < 0 && errno == EINTR)
            continue;
        if (p < 0)
            break;
        if (p == 0) {
            for (int i = 0; failed >= 0 && !*sig_out && i < k->n; i++)
                if (!k->state[i] && !k->killed[i] && proc_stopped(k->pids[i])) {
                    k->killed[i] = 1;
                    kill(k->pids[i], SIGKILL);
                    fatal(cfg,
                          "rank %d is stopped (pid %d) and cannot exit after rank %d failed; "
                          "killed it",
                          first + i, (int)k->pids[i], first + failed);
                }
            if (kill_at && ct_now_ns() > kill_at) {
                for (int i = 0; i < k->n; i++)
                    if (!k->state[i] && !k->killed[i]) {
                        k->killed[i] = 1;
                        kill(k->pids[i], SIGKILL);
                        if (!*sig_out)
                            fatal(cfg,
                                  "rank %d did not exit within %.0f s after rank %d failed; "
                                  "killed it",
                                  first + i, (double)grace_ns / 1e9, first + failed);
                    }
                kill_at = 0;
            }
            struct timespec ts = {0, 20000000};
            siginfo_t si;
            int sig = sigtimedwait(sigs, &si, &ts);
            if (sig == SIGUSR2) { /* a rank found a peer stalled: the others stop for it */
                int word =
                        si.si_code == SI_QUEUE && relay && !*sig_out ? si.si_value.sival_int : -1,
                    r = word & ((1 << LOST_RANK_BITS) - 1);
                for (int q = 0; word >= 0 && failed < 0 && !told && q < k->n; q++)
                    if (!k->state[q] && first + q != r)
                        sigqueue(k->pids[q], SIGUSR1, (union sigval){.sival_int = word});
                told |= word >= 0;
                continue;
            }
            if (sig > 0 && !*sig_out) {
                *sig_out = sig;
                for (int i = 0; i < k->n; i++)
                    if (!k->state[i])
                        kill(k->pids[i], sig);
                kill_at = ct_now_ns() + 2 * SEC;
            }
            continue;
        }
        int i;
        for (i = 0; i < k->n && k->pids[i] != p; i++)
            ;
        if (i == k->n)
            continue;
        k->state[i] = 1;
        left--;
        int bad = 0;
        if (WIFSIGNALED(st)) {
            bad = 1;
            if (!k->killed[i] && !*sig_out && *dead_rank < 0) {
                *dead_rank = first + i;
                *dead_sig = WTERMSIG(st);
            }
        } else if (WIFEXITED(st)) {
            /* its reader left (| head): the job ran to its end, nothing failed */
            bad = WEXITSTATUS(st) != 0 && WEXITSTATUS(st) != CT_LAUNCH_READER_LEFT;
            if (WEXITSTATUS(st) > worst)
                worst = WEXITSTATUS(st);
        }
        if (bad) {
            worst = worst > 1 ? worst : 1;
            if (failed < 0) {
                failed = i;
                int word = lost_word(first + i, WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st),
                                     WIFSIGNALED(st));
                /* a rank that left on a peer's death can be reaped before that peer: the one
                 * a signal killed, waiting to be reaped, failed first */
                for (int q = 0; !WIFSIGNALED(st) && q < k->n; q++) {
                    siginfo_t si = {0};
                    if (!k->state[q] && !k->killed[q] &&
                        waitid(P_PID, (id_t)k->pids[q], &si, WEXITED | WNOHANG | WNOWAIT) == 0 &&
                        si.si_pid && (si.si_code == CLD_KILLED || si.si_code == CLD_DUMPED)) {
                        failed = q;
                        word = lost_word(first + q, si.si_status, true);
                        break;
                    }
                }
                if (!kill_at)
                    kill_at = ct_now_ns() + grace_ns;
                /* also after a forwarded signal: a rank that caught it to save (a sweep's
                 * rank 0) stops waiting for the dead instead of being killed in 2 s */
                for (int q = 0; q < k->n; q++)
                    if (!k->state[q] && !k->killed[q])
                        sigqueue(k->pids[q], SIGUSR1, (union sigval){.sival_int = word});
            }
        }
    }
    return worst;
}

static int run_forked(const struct ct_launch_cfg *cfg, const struct ct_launch_opts *x,
                      const struct ct_launch_info *li, const struct ct_boot_cfg *base,
                      ct_rank_fn fn, void *arg, int *dead_rank, int *dead_sig, struct ct_err *err)
{
    int n = cfg->local, lfd = -1, port = 0, ids[2];
    if (x->refused && li->kind == CT_LAUNCH_LOCAL) /* rank 0's refusal, said: none started */
        return x->refused;
    struct ct_boot_cfg bc = *base;
    unsigned char token[CT_BOOT_TOKEN_BYTES];
    char root[320];
    uint64_t job = 0;
    if (li->kind == CT_LAUNCH_LOCAL) {
        lfd = ct_sock_listen("127.0.0.1", 0, n + 8, &port, err);
        if (lfd < 0)
            return lfd;
        snprintf(root, sizeof root, "127.0.0.1:%d", port);
        ct_boot_random(&job, sizeof job);
        if (!li->have_token) {
            ct_boot_random(token, sizeof token);
            bc.token = token;
        }
        bc.size = n;
    } else {
        snprintf(root, sizeof root, "%s", li->root);
        bc.size = li->size;
    }
    bc.root_addr = root;
    bc.job_id = job;
    bc.method = "local";
    if (pipe2(ids, O_CLOEXEC) < 0) {
        if (lfd >= 0)
            close(lfd);
        return ct_err_sys(err, CT_EIO, "pipe");
    }
    struct kids k = {n, ct_xcalloc((size_t)n, sizeof(pid_t)), ct_xcalloc((size_t)n, sizeof(int)),
                     ct_xcalloc((size_t)n, sizeof(int))};
    pid_t parent = getpid();
    /* pinning: local rank i on the i-th CPU the launcher may use, when every rank gets its
     * own (oversubscribed ranks stay unpinned so the scheduler can balance them) */
    cpu_set_t allowed;
    int ncpu = sched_getaffinity(0, sizeof allowed, &allowed) == 0 ? CPU_COUNT(&allowed) : 0;
    bool bind = !x->no_bind && n <= ncpu;
    char told[16]; /* the ranks count the CPUs this launcher may use, not only their one */
    snprintf(told, sizeof told, "%d", ct_cpus_usable());
    fflush(stdout);
    fflush(stderr);
    /* the launcher takes its termination signals synchronously in reap(), so that it
     * forwards them and still removes the job's shared memory */
    sigset_t sigs, old;
    ct_sigset_stops(&sigs);
    sigaddset(&sigs, SIGUSR2); /* a rank's word of a stalled peer (ct_launch_tell_stalled) */
    sigprocmask(SIG_BLOCK, &sigs, &old);
    /* the ranks inherit the handler at fork: no window where SIGUSR1 would kill one */
    struct sigaction lost_sa = {.sa_sigaction = on_lost, .sa_flags = SA_SIGINFO | SA_RESTART},
                     lost_old;
    sigemptyset(&lost_sa.sa_mask);
    sigaction(SIGUSR1, &lost_sa, &lost_old);
    int rc = 0, sig = 0;
    for (int i = 0; i < n; i++) {
        pid_t p = fork();
        if (p < 0) {
            rc = ct_err_sys(err, CT_EIO, "fork rank %d", li->rank + i);
            for (int q = 0; q < i; q++)
                kill(k.pids[q], SIGKILL);
            for (int q = 0; q < i; q++)
                waitpid(k.pids[q], NULL, 0);
            break;
        }
        if (p == 0) {
            /* a rank never outlives the launcher */
            sigprocmask(SIG_SETMASK, &old, NULL);
            prctl(PR_SET_PDEATHSIG, SIGKILL);
            if (getppid() != parent)
                _exit(1);
            forked_rank = li->kind == CT_LAUNCH_LOCAL_NODES ? 2 : 1;
            /* a reader that leaves (| head) does not kill the rank mid-job, which its peers
             * would report as a failure: its writes fail with EPIPE, it runs to its end */
            signal(SIGPIPE, SIG_IGN);
            for (int c = 0, seen = 0; bind && c < CPU_SETSIZE; c++)
                if (CPU_ISSET(c, &allowed) && seen++ == i) {
                    cpu_set_t one;
                    CPU_ZERO(&one);
                    CPU_SET(c, &one);
                    sched_setaffinity(0, sizeof one, &one); /* best effort */
                    break;
                }
            setenv(CT_CPUS_ENV, told, 1);
            close(ids[0]);
            bc.rank = li->rank + i;
            if (bc.rank == 0 && lfd >= 0)
                bc.listen_fd = lfd;
            else if (lfd >= 0)
                close(lfd);
            rank_main(cfg, x, &bc, ids[1], li->kind == CT_LAUNCH_LOCAL_NODES, fn, arg);
        }
        k.pids[i] = p;
    }
    if (lfd >= 0)
        close(lfd);
    close(ids[1]);
    int worst = 0;
    if (rc == 0) {
        worst = reap(x, &k, li->rank, li->kind == CT_LAUNCH_LOCAL, GRACE_NS + x->op_timeout_ns,
                     &sigs, &sig, dead_rank, dead_sig);
    }
    /* the job's shared-memory objects: by our id, and by the id each rank learnt */
    uint64_t seen[8];
    int nseen = 0;
    if (job)
        seen[nseen++] = job;
    uint64_t id;
    while (read(ids[0], &id, sizeof id) == (ssize_t)sizeof id) {
        int dup = 0;
        for (int i = 0; i < nseen; i++)
            dup |= seen[i] == id;
        if (!dup && nseen < 8)
            seen[nseen++] = id;
    }
    close(ids[0]);
    sigaction(SIGUSR1, &lost_old, NULL);
    for (int i = 0; i < nseen; i++)
        ct_shm_cleanup_job(seen[i]);
    free(k.pids);
    free(k.state);
    free(k.killed);
    /* drop signals that arrived meanwhile, then restore the mask */
    struct timespec zero = {0, 0};
    while (sigtimedwait(&sigs, NULL, &zero) > 0)
        ;
    sigprocmask(SIG_SETMASK, &old, NULL);
    if (rc == 0 && sig) {
        char note[4400] = "";
        if (x->stopped)
            x->stopped(x->stopped_ctx, sig, note, sizeof note);
        fatal(x, "interrupted by signal %d (%s); the ranks were stopped%s", sig, strsignal(sig),
              note);
        return 128 + sig;
    }
    return x->refused ? x->refused : rc < 0 ? rc : worst; /* (its ranks only told the others) */
}

/* ---------------------------------------------------------------- launch */

int ct_launch(const struct ct_launch_cfg *cfg, ct_rank_fn fn, void *arg, int *dead_rank,
              int *dead_sig, struct ct_err *err)
{
    return ct_launch_ext(cfg, NULL, fn, arg, dead_rank, dead_sig, err);
}

int ct_launch_ext(const struct ct_launch_cfg *cfg, const struct ct_launch_opts *xo, ct_rank_fn fn,
                  void *arg, int *dead_rank, int *dead_sig, struct ct_err *err)
{
    static const struct ct_launch_opts none;
    const struct ct_launch_opts *x = xo ? xo : &none;
    *dead_rank = -1;
    *dead_sig = 0;
    struct ct_launch_info li;
    CT_TRY(ct_launch_detect(cfg, &li, err));
    struct ct_boot_cfg bc;
    ct_boot_cfg_init(&bc);
    bc.timeout_ns = cfg->timeout_ns;
    bc.op_timeout_ns = x->op_timeout_ns;
    bc.notice = x->notice;
    bc.notice_ctx = x->ctx;
    bc.ifname = x->ifname;
    bc.port_lo = x->port_lo;
    bc.port_hi = x->port_hi;
    bc.host = env("COLLTUNE_HOSTNAME");
    bc.token = li.have_token ? li.token : NULL;
    bc.method = li.method;
    struct ct_boot *b = NULL;
    int rc;
    if (li.kind == CT_LAUNCH_PMIX || li.kind == CT_LAUNCH_PMI1) {
        /* the launcher's daemon forked this rank: it ends with it (mpirun SIGKILLed left its
         * ranks measuring for minutes, unattended) */
        pid_t pp = getppid();
        prctl(PR_SET_PDEATHSIG, SIGTERM);
        if (getppid() != pp)
            raise(SIGTERM);
    }
    switch (li.kind) {
    case CT_LAUNCH_LOCAL:
    case CT_LAUNCH_LOCAL_NODES:
        return run_forked(cfg, x, &li, &bc, fn, arg, dead_rank, dead_sig, err);
    case CT_LAUNCH_PMIX: rc = ct_boot_pmix_open(&b, &bc, err); break;
    case CT_LAUNCH_PMI1: rc = ct_boot_pmi1_open(&b, &bc, err); break;
    case CT_LAUNCH_ENV:
        bc.rank = li.rank;
        bc.size = li.size;
        bc.root_addr = li.root;
        rc = ct_boot_tcp_start(&b, &bc, err);
        break;
    default: rc = ct_boot_single_open(&b, &bc, err); break;
    }
    if (rc < 0)
        return rc;
    /* the bootstrap must have formed the job the launcher promised */
    if (li.launcher_size > 1 && b->size != li.launcher_size) {
        int got = b->size;
        ct_boot_close(b);
        return ct_err_set(err, CT_EINVAL,
                          "mis-launch: the %s bootstrap formed a job of %d ranks but %s=%d",
                          li.method, got, li.launcher_var, li.launcher_size);
    }
    int code;
    rc = refusal_round(b, x->refused, &code, err);
    if (rc < 0) {
        ct_boot_close(b);
        return rc;
    }
    code = code ? code : fn(b, arg);
    /* a failed job may leave a dead rank's shared memory on this host: remove the job's
     * objects (mappings stay valid for ranks still running; the job is over anyway) */
    if (code != 0 && b->size > 1)
        ct_shm_cleanup_job(b->job_id);
    ct_boot_close(b);
    return code;
}

/* ---------------------------------------------------------------- describe */

int ct_launch_describe_cfg(const struct ct_launch_cfg *cfg, const struct ct_launch_opts *x,
                           char *buf, size_t len)
{
    struct ct_launch_info li;
    ct_launch_detect(cfg, &li, NULL);
    size_t off = 0;
#define ADD(...)                                                                                   \
    do {                                                                                           \
        int n_ = snprintf(buf + off, off < len ? len - off : 0, __VA_ARGS__);                      \
        off += n_ > 0 ? (size_t)n_ : 0;                                                            \
    } while (0)
    ADD("bootstrap: ");
    switch (li.kind) {
    case CT_LAUNCH_MISLAUNCH: ADD("refused: %s", li.why); break;
    case CT_LAUNCH_SINGLE: ADD("single process, rank 0 of 1 (no launcher found)"); break;
    case CT_LAUNCH_LOCAL: ADD("local, %d ranks forked on this host", li.size); break;
    case CT_LAUNCH_LOCAL_NODES:
        ADD("local, ranks %d-%d of %d forked here (node %d of %d), root %s (%s)", li.rank,
            li.rank + cfg->local - 1, li.size, li.node_rank, li.nnodes, li.root, li.root_src);
        break;
    case CT_LAUNCH_PMIX:
        ADD("pmix, rank %s", env("PMIX_RANK"));
        if (li.size > 0)
            ADD(" of %d (%s)", li.size, li.size_var);
        ADD(", rank 0's address through PMIx");
        break;
    case CT_LAUNCH_PMI1:
        ADD("pmi1 (PMI_FD=%s), rank %d of %d (PMI_RANK/PMI_SIZE), rank 0's address through "
            "the PMI-1 store",
            env("PMI_FD"), li.rank, li.size);
        break;
    case CT_LAUNCH_ENV:
        ADD("env, rank %d of %d (%s/%s), root %s (%s)", li.rank, li.size, li.rank_var, li.size_var,
            li.root, li.root_src);
        break;
    }
    if (li.forced)
        ADD("; forced by COLLTUNE_BOOTSTRAP=%s", li.forced);
    if (li.kind != CT_LAUNCH_MISLAUNCH && li.kind != CT_LAUNCH_SINGLE) {
        if (li.have_token)
            ADD("; token: COLLTUNE_TOKEN");
        else if (li.kind == CT_LAUNCH_LOCAL)
            ADD("; token: drawn by the launcher");
        else if (li.kind == CT_LAUNCH_PMIX || li.kind == CT_LAUNCH_PMI1)
            ADD("; token: drawn by rank 0, passed through the launcher");
        else
            ADD("; token: drawn by rank 0 and sent to each rank as it joins (set "
                "COLLTUNE_TOKEN to authenticate the rendezvous)");
        if (x && x->ifname && *x->ifname)
            ADD("; address: interface %s", x->ifname);
        else if (li.kind != CT_LAUNCH_LOCAL)
            ADD("; address: the route to the other hosts");
    }
    ADD("\norder: --local N; PMIx (PMIX_RANK, %s); PMI-1 (PMI_FD); env (COLLTUNE_ROOT or "
        "MASTER_ADDR/MASTER_PORT with COLLTUNE_RANK/SIZE, OMPI_COMM_WORLD_RANK/SIZE, "
        "PMI_RANK/SIZE, SLURM_PROCID/NTASKS, RANK/WORLD_SIZE); single",
        ct_boot_pmix_built() ? "built" : "not built");
#undef ADD
    return (int)off;
}

int ct_launch_describe(char *buf, size_t len)
{
    struct ct_launch_cfg c;
    struct ct_launch_opts x;
    memset(&c, 0, sizeof c);
    memset(&x, 0, sizeof x);
    x.ifname = env("COLLTUNE_SOCKET_IFNAME");
    return ct_launch_describe_cfg(&c, &x, buf, len);
}
