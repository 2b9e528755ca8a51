/* SPDX-License-Identifier: MIT */
/*
 * Starting a library engine's job under its launcher, bounded: the launcher runs as a child,
 * and rank 0 of the job connects back once its library has started. A launcher that cannot
 * bring the job up (hydra waits for ever on a host it cannot reach; mpirun exits 255) is
 * stopped or reported instead of hanging or leaving a bare exit code.
 */
#include "libmod.h"

#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../lib/clock.h"
#include "../lib/file.h"
#include "../lib/sock.h"

int ct_libmod_notify_open(const char *hosts, const char *ifname, const char *port_range,
                          char *notify, size_t len, struct ct_err *err)
{
    char host[64] = "127.0.0.1", first[256];
    int lo = 0, hi = 0, port;
    if (port_range && *port_range)
        CT_TRY(ct_sock_parse_range(port_range, &lo, &hi, err));
    snprintf(first, sizeof first, "%.*s", hosts ? (int)strcspn(hosts, ":,") : 0,
             hosts ? hosts : "");
    if (ifname && *ifname)
        CT_TRY(ct_sock_if_addr(ifname, host, sizeof host, err));
    else if (*first && ct_sock_route_addr(first, host, sizeof host, NULL) < 0 &&
             ct_sock_first_addr(host, sizeof host, NULL) < 0)
        snprintf(host, sizeof host, "127.0.0.1"); /* the launcher will say why */
    int fd = ct_sock_listen_range(*first ? NULL : "127.0.0.1", lo, hi, (unsigned)getpid(), 4, -1,
                                  &port, err);
    if (fd < 0)
        return fd;
    snprintf(notify, len, "%s:%d", host, port);
    return fd;
}

int ct_libmod_notify(struct ct_err *err)
{
    const char *at = getenv(CT_LIBMOD_NOTIFY_ENV);
    char host[256];
    int port;
    if (!at || !*at)
        return 0;
    CT_TRY(ct_sock_parse_addr(at, host, sizeof host, &port, err));
    int fd = ct_sock_connect(host, port, ct_now_ns() + 5 * 1000000000LL, err);
    if (fd < 0)
        return ct_err_wrap(err,
                           "cannot tell the launching colltune at %s that the library "
                           "started (--ifname, --port-range): ",
                           at);
    char one = 1;
    int rc = ct_sock_write_all(fd, &one, 1, ct_now_ns() + 5 * 1000000000LL, err);
    close(fd);
    return rc;
}

static volatile sig_atomic_t g_term; /* SIGTERM or SIGHUP to colltune: passed to the launcher */
static volatile sig_atomic_t g_int;  /* SIGINT or SIGQUIT: the terminal sent it to the launcher */

static void on_term(int sig)
{
    g_term = sig;
}

static void on_int(int sig)
{
    g_int = sig;
}

/* Ends the launcher: SIGTERM, then SIGKILL after 5 s; its status. */
static int stop(pid_t pid)
{
    int st = 0;
    kill(pid, SIGTERM);
    for (int i = 0; i < 50; i++) {
        if (waitpid(pid, &st, WNOHANG) == pid)
            return st;
        usleep(100000);
    }
    kill(pid, SIGKILL);
    waitpid(pid, &st, 0);
    return st;
}

int ct_libmod_start(char **v, int lfd, double boot_s, char **out, bool *started, int *sig,
                    struct ct_err *err)
{
    int fd[2] = {-1, -1};
    size_t n = 0, cap = 4096;
    *started = false;
    if (out) {
        *out = ct_xmalloc(cap);
        **out = 0;
        if (pipe(fd) < 0)
            return ct_err_sys(err, CT_EIO, "pipe");
    }
    fflush(NULL);
    struct sigaction intr = {.sa_handler = on_int}, term = {.sa_handler = on_term}, old[4];
    sigaction(SIGINT, &intr, &old[0]); /* the terminal's keys reach the launcher itself */
    sigaction(SIGQUIT, &intr, &old[1]);
    sigaction(SIGTERM, &term, &old[2]);
    sigaction(SIGHUP, &term, &old[3]);
    g_term = g_int = 0;
    pid_t pid = fork();
    if (pid == 0) {
        sigaction(SIGINT, &old[0], NULL);
        sigaction(SIGQUIT, &old[1], NULL);
        sigaction(SIGTERM, &old[2], NULL);
        sigaction(SIGHUP, &old[3], NULL);
        close(lfd);
        if (out) {
            dup2(fd[1], STDOUT_FILENO);
            close(fd[0]);
            close(fd[1]);
        }
        execvp(v[0], v);
        _exit(127);
    }
    if (out)
        close(fd[1]);
    int st = 0, rc = 0;
    int64_t deadline = ct_now_ns() + (int64_t)(boot_s * 1e9);
    bool done = pid < 0;
    while (!done) {
        struct pollfd p[2] = {{lfd, POLLIN, 0}, {out ? fd[0] : -1, POLLIN, 0}};
        if (poll(p, 2, 100) > 0) {
            if (p[0].revents & POLLIN) {
                int c = ct_sock_accept(lfd, ct_now_ns() + 1000000000LL, NULL);
                char b;
                if (c >= 0 && read(c, &b, 1) == 1)
                    *started = true;
                if (c >= 0)
                    close(c);
            }
            if (p[1].revents & (POLLIN | POLLHUP)) {
                ssize_t r = read(fd[0], *out + n, cap - n - 1);
                if (r > 0 && (n += (size_t)r) + 1 >= cap)
                    *out = ct_xrealloc(*out, cap *= 2);
                (*out)[n] = 0;
                if (r == 0) {
                    close(fd[0]);
                    fd[0] = -1;
                }
            }
        }
        if (waitpid(pid, &st, WNOHANG) == pid) {
            done = true;
        } else if (g_term) {
            kill(pid, g_term);
            g_term = 0;
        } else if (!*started && ct_now_ns() > deadline) {
            st = stop(pid);
            rc = ct_err_set(err, CT_ETIMEDOUT,
                            "%s did not start the job's library within %.0f s (--boot-timeout): a "
                            "host it cannot reach, or rank 0 cannot reach this host; stopped it",
                            v[0], boot_s);
            done = true;
        }
    }
    while (out && fd[0] >= 0) { /* what the launcher wrote before it ended */
        ssize_t r = read(fd[0], *out + n, cap - n - 1);
        if (r <= 0)
            break;
        if ((n += (size_t)r) + 1 >= cap)
            *out = ct_xrealloc(*out, cap *= 2);
        (*out)[n] = 0;
    }
    if (out && fd[0] >= 0)
        close(fd[0]);
    sigaction(SIGINT, &old[0], NULL);
    sigaction(SIGQUIT, &old[1], NULL);
    sigaction(SIGTERM, &old[2], NULL);
    sigaction(SIGHUP, &old[3], NULL);
    *sig = g_int;
    if (pid < 0)
        return ct_err_sys(err, CT_EIO, "fork");
    if (rc < 0)
        return rc;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}
