/* SPDX-License-Identifier: MIT */
/*
 * Starting a library engine's job under its launcher, bounded: the launcher runs as a child,
 * and rank 0 of the job connects back once its library has started. A launcher that cannot
 * bring the job up (hydra waits for ever on a host it cannot reach; mpirun exits 255) is
 * stopped or reported instead of hanging or leaving a bare exit code; what its ranks leave in
 * /dev/shm when they are killed is removed.
 */
#include "libmod.h"
#include "launcherr.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
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
    bool any = *first || (ifname && *ifname);     /* else only this host's ranks call */
    int fd = ct_sock_listen_range(any ? NULL : "127.0.0.1", lo, hi, (unsigned)getpid(), 4, -1,
                                  &port, err);
    if (fd < 0)
        return fd;
    /* a token the caller must send back: a stray connection to the port says nothing */
    unsigned long long t = ct_random64();
    snprintf(notify, len, "%s:%d#%016llx", host, port, t);
    return fd;
}

int ct_libmod_notify(struct ct_err *err)
{
    const char *at = getenv(CT_LIBMOD_NOTIFY_ENV), *tok = at ? strchr(at, '#') : NULL;
    char host[256], addr[300];
    int port;
    if (!at || !*at)
        return 0;
    snprintf(addr, sizeof addr, "%.*s", tok ? (int)(tok - at) : (int)strlen(at), at);
    if (!tok || strlen(tok + 1) != CT_LIBMOD_TOKEN_LEN)
        return ct_err_set(err, CT_EINVAL, "%s='%s' is not HOST:PORT#TOKEN", CT_LIBMOD_NOTIFY_ENV,
                          at);
    CT_TRY(ct_sock_parse_addr(addr, host, sizeof host, &port, err));
    int fd = ct_sock_connect(host, port, ct_now_ns() + 5 * 1000000000LL, err);
    if (fd < 0)
        return ct_err_wrap(err,
                           "cannot tell the launching colltune at %s that the library started "
                           "(--ifname names the address it listens on, --port-range its port): ",
                           addr);
    int rc =
        ct_sock_write_all(fd, tok + 1, CT_LIBMOD_TOKEN_LEN, ct_now_ns() + 5 * 1000000000LL, err);
    close(fd);
    return rc;
}

static volatile sig_atomic_t g_pass; /* a signal to pass on to the launcher, 0: none */
static volatile sig_atomic_t g_sig;  /* the last one colltune received while it waited */

static void on_signal(int sig)
{
    int saved = errno; /* isatty sets it (ENOTTY): not the interrupted code's to see */
    g_sig = sig;
    /* the terminal sends its keys to the whole foreground group, the launcher too: a second
     * SIGINT would make mpirun abort at once; a signal from anywhere else is passed on */
    if ((sig != SIGINT && sig != SIGQUIT) || !isatty(STDIN_FILENO) ||
        tcgetpgrp(STDIN_FILENO) != getpgrp())
        g_pass = sig;
    errno = saved;
}

/* The launcher's descendants on this host (its ranks, its daemons, its ssh clients), each
 * named by pid and start time: once the launcher has ended they are init's, and only that
 * pair tells one of them from a later process with its pid. */
struct kin {
    int n, cap;
    int *pid;
    unsigned long long *start;
};

static bool kin_has(const struct kin *k, int pid, unsigned long long start)
{
    for (int j = 0; j < k->n; j++)
        if (k->pid[j] == pid && k->start[j] == start)
            return true;
    return false;
}

/* Whether /proc is this process's pid namespace's (its pids are those kill() reaches). */
static bool proc_is_ours(void)
{
    char b[32];
    ssize_t n = readlink("/proc/self", b, sizeof b - 1);
    if (n <= 0)
        return false;
    b[n] = 0;
    return atoi(b) == (int)getpid();
}

/* Adds to k the processes now below root (root > 0: colltune's child, not yet waited for, so
 * its pid is its own) or below one of k, each parent matched by pid and start time, read
 * from /proc; how many it added. */
static int kin_add(struct kin *k, pid_t root)
{
    DIR *d = opendir("/proc");
    if (!d)
        return 0;
    int n = 0, cap = 256, added = 0, *p = ct_xmalloc(sizeof *p * (size_t)cap),
        *pp = ct_xmalloc(sizeof *pp * (size_t)cap);
    unsigned long long *t = ct_xmalloc(sizeof *t * (size_t)cap);
    for (struct dirent *e; (e = readdir(d));) {
        if (!isdigit((unsigned char)e->d_name[0]))
            continue;
        if (n == cap) {
            cap *= 2;
            p = ct_xrealloc(p, sizeof *p * (size_t)cap);
            pp = ct_xrealloc(pp, sizeof *pp * (size_t)cap);
            t = ct_xrealloc(t, sizeof *t * (size_t)cap);
        }
        p[n] = atoi(e->d_name);
        n += ct_proc_stat(p[n], NULL, &pp[n], &t[n]) == 0;
    }
    closedir(d);
    for (bool more = true; more;) { /* to a fixed point: children of root or of one found */
        more = false;
        for (int i = 0; i < n; i++) {
            if (kin_has(k, p[i], t[i]))
                continue;
            bool below = root > 0 && pp[i] == (int)root;
            for (int j = 0; !below && j < n; j++) /* its parent, by pid and start time */
                below = p[j] == pp[i] && kin_has(k, p[j], t[j]);
            if (!below)
                continue;
            if (k->n == k->cap) {
                k->cap = k->cap ? 2 * k->cap : 16;
                k->pid = ct_xrealloc(k->pid, sizeof *k->pid * (size_t)k->cap);
                k->start = ct_xrealloc(k->start, sizeof *k->start * (size_t)k->cap);
            }
            k->pid[k->n] = p[i];
            k->start[k->n++] = t[i];
            added++;
            more = true;
        }
    }
    free(p);
    free(pp);
    free(t);
    return added;
}

/* The state of process i of k: 0 when it has ended (gone, a zombie, or its pid another's). */
static char kin_state(const struct kin *k, int i)
{
    char state;
    unsigned long long t;
    return ct_proc_stat(k->pid[i], &state, NULL, &t) == 0 && t == k->start[i] && state != 'Z'
               ? state
               : 0;
}

/* Sends sig to those of k still running, then waits until each has ended (up to 2 s) or,
 * for SIGSTOP, stopped (up to 0.5 s): a signal takes effect when its process next runs. */
static void kin_signal(const struct kin *k, int sig)
{
    for (int i = 0; i < k->n; i++)
        if (kin_state(k, i))
            kill(k->pid[i], sig);
    for (int w = 0, left = 1; w < (sig == SIGSTOP ? 100 : 400) && left; w++) {
        left = 0;
        for (int i = 0; i < k->n && !left; i++) {
            char st = kin_state(k, i);
            left = st && (sig != SIGSTOP || st != 'T');
        }
        if (left)
            usleep(5000);
    }
}

/* Ends what k holds and what it started meanwhile: stopped (SIGSTOP) so that none starts
 * another, its children added, until a round adds none; then SIGKILL to all. Frees k. */
static void kin_end(struct kin *k)
{
    for (int round = 0; round < 16; round++) {
        kin_signal(k, SIGSTOP);
        if (!kin_add(k, 0))
            break;
    }
    kin_signal(k, SIGKILL);
    free(k->pid);
    free(k->start);
}

/* The shared-memory files the job's processes here map (/dev/shm) that were not there when it
 * started: the library's own (Open MPI's vader segments, UCX's), which it leaves behind when
 * its ranks die by a signal (Ctrl-C reaches them at once). Each name once. */
struct names {
    int n, cap;
    char **s;
};
#define NAMES_MAX 4096 /* past it, names are not kept */

static bool names_has(const struct names *a, const char *s)
{
    for (int i = 0; i < a->n; i++)
        if (!strcmp(a->s[i], s))
            return true;
    return false;
}

static void names_add(struct names *a, const char *s)
{
    if (names_has(a, s) || a->n >= NAMES_MAX)
        return;
    if (a->n == a->cap)
        a->s = ct_xrealloc(a->s, sizeof *a->s * (size_t)(a->cap = a->cap ? 2 * a->cap : 16));
    a->s[a->n++] = ct_xstrdup(s);
}

static void names_free(struct names *a)
{
    for (int i = 0; i < a->n; i++)
        free(a->s[i]);
    free(a->s);
    *a = (struct names){0};
}

static void shm_now(struct names *a)
{
    DIR *d = opendir("/dev/shm");
    for (struct dirent *e; d && (e = readdir(d));)
        if (e->d_name[0] != '.')
            names_add(a, e->d_name);
    if (d)
        closedir(d);
}

/* The /dev/shm names pid maps or holds open, added to out: those in set when in is true,
 * else those not in it. */
static void shm_of(int pid, const struct names *set, bool in, struct names *out)
{
    char path[64], line[4096];
    snprintf(path, sizeof path, "/proc/%d/maps", pid);
    FILE *f = fopen(path, "r");
    while (f && fgets(line, sizeof line, f)) {
        char *m = strstr(line, " /dev/shm/");
        if (!m || strstr(m, " (deleted)"))
            continue;
        m += strlen(" /dev/shm/");
        m[strcspn(m, "\n")] = 0;
        if (*m && !strchr(m, '/') && names_has(set, m) == in)
            names_add(out, m);
    }
    if (f)
        fclose(f);
    snprintf(path, sizeof path, "/proc/%d/fd", pid);
    DIR *d = opendir(path);
    for (struct dirent *e; d && (e = readdir(d));) {
        char fd[64 + NAME_MAX + 2], to[512];
        snprintf(fd, sizeof fd, "%s/%s", path, e->d_name);
        ssize_t n = readlink(fd, to, sizeof to - 1);
        if (n <= 9 || strncmp(to, "/dev/shm/", 9))
            continue;
        to[n] = 0;
        if (!strchr(to + 9, '/') && !strstr(to, " (deleted)") && names_has(set, to + 9) == in)
            names_add(out, to + 9);
    }
    if (d)
        closedir(d);
}

/* Removes the files of left (this user's, plain files) that no process maps or holds open
 * once the job's processes here (k) have ended (waited for up to 5 s: a rank a signal killed
 * can take a second to let go of its memory): what they left. Frees left. */
static void shm_sweep(struct names *left, const struct kin *k)
{
    for (int w = 0, alive = 1; w < 100 && alive && left->n; w++) {
        alive = 0;
        for (int i = 0; i < k->n && !alive; i++)
            alive = kin_state(k, i) != 0;
        if (alive)
            usleep(50000);
    }
    struct names used = {0}; /* of left's names, those in use */
    DIR *d = left->n ? opendir("/proc") : NULL;
    for (struct dirent *e; d && (e = readdir(d));)
        if (isdigit((unsigned char)e->d_name[0]))
            shm_of(atoi(e->d_name), left, true, &used);
    if (d)
        closedir(d);
    for (int i = 0; i < left->n; i++) {
        char path[NAME_MAX + 16];
        struct stat st;
        snprintf(path, sizeof path, "/dev/shm/%s", left->s[i]);
        if (!names_has(&used, left->s[i]) && lstat(path, &st) == 0 && S_ISREG(st.st_mode) &&
            st.st_uid == geteuid())
            unlink(path);
    }
    names_free(&used);
    names_free(left);
}

/* Ends the launcher: SIGTERM, then SIGKILL after 5 s; then what it leaves running here of
 * what it started (a launcher killed, or one that ends without its ranks) is ended too
 * (where /proc is this pid namespace's); its status. Its processes on other hosts are its
 * own to end (an ssh client killed here closes the session they hang on). */
static int stop(pid_t pid)
{
    int st = 0;
    bool ours = proc_is_ours();
    struct kin k = {0};
    if (ours)
        kin_add(&k, pid); /* before it ends: after, its orphans are init's */
    kill(pid, SIGTERM);
    bool ended = false;
    for (int i = 0; i < 50 && !ended; i++) {
        pid_t w = waitpid(pid, &st, WNOHANG);
        ended = w == pid || (w < 0 && errno != EINTR);
        if (!ended)
            usleep(100000);
    }
    if (!ended) {
        if (ours)
            kin_add(&k, pid); /* and what it started since */
        kill(pid, SIGKILL);
        waitpid(pid, &st, 0);
    }
    if (ours)
        kin_end(&k);
    return st;
}

/* Where the launcher's standard output goes: captured (out), else this standard output, the
 * first failure of a write there kept (werr) and the rest dropped. */
struct sink {
    char **out;
    size_t n, cap;
    int werr;
    bool dropped; /* a signal came while standard output would not take it */
};

/* b[0..len) to this standard output, whole; the first failure kept, nothing more written. A
 * standard output that does not take it (non-blocking, or a reader that stopped reading) is
 * waited for, but not past a signal colltune has to act on: the rest is dropped then. */
static void pass_on(struct sink *k, const char *b, size_t len)
{
    while (len && !k->werr && !k->dropped) {
        ssize_t w = write(STDOUT_FILENO, b, len);
        if (w > 0)
            b += w, len -= (size_t)w;
        else if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            poll(&(struct pollfd){STDOUT_FILENO, POLLOUT, 0}, 1, 100);
        else if (w < 0 && errno != EINTR)
            k->werr = errno;
        k->dropped = g_pass || g_sig; /* passed on by the caller's loop, the job stopped */
    }
}

/* Reads once from the launcher's pipe fd: its standard output (std) to the sink, or its
 * standard error passed on (e); false at its end. */
static bool take(int fd, bool std, struct sink *k, struct ct_launcherr *e)
{
    char b[4096];
    ssize_t r = std && k->out ? read(fd, *k->out + k->n, k->cap - k->n - 1) : read(fd, b, sizeof b);
    if (r > 0 && std && k->out) {
        if ((k->n += (size_t)r) + 1 >= k->cap)
            *k->out = ct_xrealloc(*k->out, k->cap *= 2);
        (*k->out)[k->n] = 0;
    } else if (r > 0 && std) {
        pass_on(k, b, (size_t)r);
    } else if (r > 0) {
        ct_launcherr_put(e, b, (size_t)r);
    }
    return r > 0 || (r < 0 && (errno == EINTR || errno == EAGAIN));
}

/* Waits up to wait_ms for the launcher's pipes (pf[0] its standard output, pf[1] its standard
 * error; -1: closed) and lfd (-1: none) and reads what the pipes hold, once each; a pipe at its
 * end is closed and -1. Whether lfd has a connection waiting. */
static bool take_pipes(int pf[2], int lfd, int wait_ms, struct sink *k, struct ct_launcherr *e)
{
    struct pollfd p[3] = {{pf[0], POLLIN, 0}, {pf[1], POLLIN, 0}, {lfd, POLLIN, 0}};
    if (poll(p, 3, wait_ms) <= 0)
        return false;
    for (int i = 0; i < 2; i++)
        if (pf[i] >= 0 && (p[i].revents & (POLLIN | POLLHUP | POLLERR)) && !take(pf[i], !i, k, e)) {
            close(pf[i]);
            pf[i] = -1;
        }
    return lfd >= 0 && (p[2].revents & POLLIN);
}

int ct_libmod_start(char **v, int lfd, const char *notify, double boot_s, char **out, int err_fd,
                    struct ct_libmod_end *how, struct ct_err *err)
{
    static const int sigs[] = {SIGINT, SIGQUIT, SIGTERM, SIGHUP};
    const char *tok = strchr(notify, '#');
    int fd[2] = {-1, -1}, ef[2] = {-1, -1};
    struct sink sk = {.out = out, .cap = 4096};
    *how = (struct ct_libmod_end){0};
    if (out) {
        *out = ct_xmalloc(sk.cap);
        **out = 0;
    }
    if (pipe(fd) < 0)
        return ct_err_sys(err, CT_EIO, "pipe");
    if (pipe(ef) < 0) {
        close(fd[0]), close(fd[1]);
        return ct_err_sys(err, CT_EIO, "pipe");
    }
    struct ct_launcherr e;
    ct_launcherr_init(&e, err_fd);
    /* the shared-memory files there before the job (where /proc is this namespace's; none
     * swept where there were too many to list) */
    struct names before = {0}, left = {0};
    struct kin k = {0};
    bool shm = proc_is_ours();
    if (shm)
        shm_now(&before);
    shm = shm && before.n < NAMES_MAX; /* until the job's files are read */
    fflush(NULL);
    g_pass = g_sig = 0;
    /* a closed err_fd (colltune's stderr into a pager that quit) must not end colltune and
     * orphan the job: its lines are lost, the launcher is still waited for */
    struct sigaction on = {.sa_handler = on_signal}, old[4], ign = {.sa_handler = SIG_IGN},
                     pipe_old;
    sigset_t block, prev;
    sigemptyset(&block);
    for (int i = 0; i < 4; i++) {
        sigaddset(&block, sigs[i]);
        sigaction(sigs[i], &on, &old[i]);
    }
    sigaction(SIGPIPE, &ign, &pipe_old);
    sigprocmask(SIG_BLOCK, &block, &prev); /* the child takes the old handlers first */
    pid_t parent = getpid(), pid = fork();
    if (pid == 0) {
        /* colltune killed outright (SIGKILL, the OOM killer): the launcher ends its job, as
         * colltune's own ranks end with it, instead of running on and writing --out */
        prctl(PR_SET_PDEATHSIG, SIGTERM);
        if (getppid() != parent)
            _exit(127);
        for (int i = 0; i < 4; i++)
            sigaction(sigs[i], &old[i], NULL);
        sigaction(SIGPIPE, &pipe_old, NULL);
        sigprocmask(SIG_SETMASK, &prev, NULL);
        close(lfd);
        dup2(fd[1], STDOUT_FILENO);
        close(fd[0]);
        close(fd[1]);
        dup2(ef[1], STDERR_FILENO);
        close(ef[0]);
        close(ef[1]);
        execvp(v[0], v);
        _exit(127);
    }
    sigprocmask(SIG_SETMASK, &prev, NULL);
    close(fd[1]);
    close(ef[1]);
    int pf[2] = {fd[0], ef[0]}; /* the pipes still open */
    int st = 0, rc = 0;
    int64_t deadline = ct_now_ns() + (int64_t)(boot_s * 1e9);
    bool done = pid < 0;
    while (!done) {
        if (take_pipes(pf, lfd, 50, &sk, &e)) {
            int c = ct_sock_accept(lfd, ct_now_ns() + 1000000000LL, NULL);
            char got[CT_LIBMOD_TOKEN_LEN];
            if (c >= 0 && tok &&
                ct_sock_read_all(c, got, sizeof got, ct_now_ns() + 1000000000LL, NULL) == 0 &&
                !memcmp(got, tok + 1, sizeof got))
                how->started = true;
            if (c >= 0)
                close(c);
        }
        if (shm && how->started) { /* once, as it started: the files its processes map */
            shm = false;
            kin_add(&k, pid);
            for (int i = 0; i < k.n; i++)
                if (kin_state(&k, i))
                    shm_of(k.pid[i], &before, false, &left);
        }
        pid_t w = waitpid(pid, &st, WNOHANG);
        if (w == pid || (w < 0 && errno != EINTR)) {
            done = true;
        } else if (g_pass) {
            kill(pid, g_pass);
            g_pass = 0;
        } else if (!how->started && ct_now_ns() > deadline) {
            st = stop(pid);
            rc = ct_err_set(err, CT_ETIMEDOUT,
                            "%s did not start the job's library within %g s (--boot-timeout): a "
                            "host it cannot reach, or rank 0 cannot reach %.*s; stopped it",
                            v[0], boot_s, tok ? (int)(tok - notify) : (int)strlen(notify), notify);
            done = true;
        }
    }
    /* what the launcher wrote before it ended; bounded, in case a child of its keeps a pipe */
    for (int64_t end = ct_now_ns() + 2000000000LL, now;
         (pf[0] >= 0 || pf[1] >= 0) && (now = ct_now_ns()) < end;)
        take_pipes(pf, -1, (int)((end - now) / 1000000) + 1, &sk, &e);
    for (int i = 0; i < 2; i++)
        if (pf[i] >= 0)
            close(pf[i]);
    ct_launcherr_end(&e);
    shm_sweep(&left, &k); /* what the ranks left in /dev/shm: none where the library ended well */
    names_free(&before);
    free(k.pid);
    free(k.start);
    how->said = e.any;
    how->ours = e.ours;
    how->out_errno = sk.werr;
    for (int i = 0; i < 4; i++)
        sigaction(sigs[i], &old[i], NULL);
    sigaction(SIGPIPE, &pipe_old, NULL);
    how->sig = g_sig;
    if (pid < 0)
        return ct_err_sys(err, CT_EIO, "fork");
    if (rc < 0)
        return rc;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}
