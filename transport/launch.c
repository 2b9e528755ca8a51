/* SPDX-License-Identifier: MIT */
/* --local N fork launcher and environment bootstrap. */
#include "launch.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../lib/clock.h"
#include "../lib/sock.h"
#include "shm.h"

static uint64_t random_id(void)
{
    uint64_t v = 0;
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        if (read(fd, &v, sizeof v) != (ssize_t)sizeof v)
            v = 0;
        close(fd);
    }
    return v ^ ((uint64_t)getpid() << 32) ^ (uint64_t)ct_now_ns();
}

static void rank_host(char *out, size_t len, int rank, int rpn)
{
    char h[48];
    if (gethostname(h, sizeof h) < 0)
        snprintf(h, sizeof h, "localhost");
    h[sizeof h - 1] = 0;
    if (rpn > 0)
        snprintf(out, len, "%.47s/node%d", h, rank / rpn);
    else
        snprintf(out, len, "%.47s", h);
}

static int run_local(const struct ct_launch_cfg *cfg, ct_rank_fn fn, void *arg, int *dead_rank,
                     int *dead_sig, struct ct_err *err)
{
    int n = cfg->local, port;
    int lfd = ct_sock_listen("127.0.0.1", 0, n + 8, &port, err);
    if (lfd < 0)
        return lfd;
    char root[64];
    snprintf(root, sizeof root, "127.0.0.1:%d", port);
    uint64_t job = random_id();
    pid_t *pids = ct_xcalloc((size_t)n, sizeof *pids);
    fflush(stdout);
    fflush(stderr);
    for (int r = 0; r < n; r++) {
        pid_t p = fork();
        if (p < 0) {
            ct_err_sys(err, CT_EIO, "fork rank %d", r);
            for (int q = 0; q < r; q++)
                kill(pids[q], SIGKILL);
            for (int q = 0; q < r; q++)
                waitpid(pids[q], NULL, 0);
            close(lfd);
            free(pids);
            return err->code;
        }
        if (p == 0) {
            struct ct_boot *b;
            struct ct_err e = {0};
            char host[64];
            rank_host(host, sizeof host, r, cfg->ranks_per_node);
            if (r != 0)
                close(lfd);
            int rc = ct_boot_tcp_open(&b, r, n, root, r == 0 ? lfd : -1, job, host,
                                      cfg->timeout_ns, &e);
            if (r == 0)
                close(lfd);
            if (rc < 0) {
                fprintf(stderr, "colltune: rank %d: %s\n", r, e.msg);
                _exit(1);
            }
            int code = fn(b, arg);
            ct_boot_close(b);
            fflush(stdout);
            fflush(stderr);
            _exit(code);
        }
        pids[r] = p;
    }
    close(lfd);
    int worst = 0;
    *dead_rank = -1;
    *dead_sig = 0;
    for (int left = n; left > 0; left--) {
        int st;
        pid_t p = wait(&st);
        if (p < 0) {
            if (errno == EINTR) {
                left++;
                continue;
            }
            break;
        }
        int r;
        for (r = 0; r < n && pids[r] != p; r++)
            ;
        if (WIFSIGNALED(st)) {
            if (*dead_rank < 0) {
                *dead_rank = r;
                *dead_sig = WTERMSIG(st);
            }
            worst = worst > 1 ? worst : 1;
        } else if (WIFEXITED(st) && WEXITSTATUS(st) > worst) {
            worst = WEXITSTATUS(st);
        }
    }
    ct_shm_cleanup_job(job);
    free(pids);
    return worst;
}

static const char *env_first(const char *const *names, const char **which)
{
    for (int i = 0; names[i]; i++) {
        const char *v = getenv(names[i]);
        if (v && *v) {
            if (which)
                *which = names[i];
            return v;
        }
    }
    return NULL;
}

static const char *const rank_vars[] = {"COLLTUNE_RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK",
                                        "SLURM_PROCID", NULL};
static const char *const size_vars[] = {"COLLTUNE_SIZE", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE",
                                        "SLURM_NTASKS", NULL};

int ct_launch_describe(char *buf, size_t len)
{
    const char *rn = NULL, *sn = NULL;
    const char *rv = env_first(rank_vars, &rn), *sv = env_first(size_vars, &sn);
    const char *root = getenv("COLLTUNE_ROOT");
    if (root && rv && sv)
        return snprintf(buf, len, "env: root %s, rank %s (%s), size %s (%s)", root, rv, rn, sv,
                        sn);
    if (rv || sv)
        return snprintf(buf, len, "env: rank/size variables present (%s=%s, %s=%s) but %s",
                        rn ? rn : "rank", rv ? rv : "?", sn ? sn : "size", sv ? sv : "?",
                        root ? "incomplete" : "COLLTUNE_ROOT is not set");
    return snprintf(buf, len, "single process (no launcher environment)");
}

static int run_env(const struct ct_launch_cfg *cfg, ct_rank_fn fn, void *arg, struct ct_err *err)
{
    const char *rv = env_first(rank_vars, NULL), *sv = env_first(size_vars, NULL);
    const char *root = getenv("COLLTUNE_ROOT");
    int rank = 0, size = 1;
    if (rv && sv) {
        char *e1, *e2;
        long r = strtol(rv, &e1, 10), s = strtol(sv, &e2, 10);
        if (*e1 || *e2 || s < 1 || s > 1000000 || r < 0 || r >= s)
            return ct_err_set(err, CT_EINVAL, "launcher environment: rank '%s' size '%s'", rv,
                              sv);
        rank = (int)r;
        size = (int)s;
        if (size > 1 && !root)
            return ct_err_set(err, CT_EINVAL,
                              "launched as rank %d of %d but COLLTUNE_ROOT=host:port is not set",
                              rank, size);
    }
    struct ct_boot *b;
    CT_TRY(ct_boot_tcp_open(&b, rank, size, root, -1, random_id(), NULL, cfg->timeout_ns, err));
    int code = fn(b, arg);
    ct_boot_close(b);
    return code;
}

int ct_launch(const struct ct_launch_cfg *cfg, ct_rank_fn fn, void *arg, int *dead_rank,
              int *dead_sig, struct ct_err *err)
{
    *dead_rank = -1;
    *dead_sig = 0;
    if (cfg->local > 0)
        return run_local(cfg, fn, arg, dead_rank, dead_sig, err);
    return run_env(cfg, fn, arg, err);
}
