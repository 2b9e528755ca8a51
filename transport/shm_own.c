/* SPDX-License-Identifier: MIT */
/*
 * The names of this process's shared-memory objects (the shm transport's channels until every
 * peer mapped them, its heap until freed), removed when the process ends holding them.
 *
 * A rank that a launcher or a scheduler ends removed none: each 2-rank run at 8 MiB left 6
 * objects, 32 MiB of /dev/shm, until a reboot (only --local's parent and a failing survivor
 * removed a job's). Two ways now, both reading one list:
 * - SIGINT, SIGTERM and SIGHUP (mpirun's Ctrl-C, scancel and Slurm's time limit, hydra's
 *   SIGINT), where the process leaves them at their default: the handler unlinks the names (a
 *   system call each, nothing that allocates), then dies of the signal as before;
 * - any other end, SIGKILL included (hydra ends a dead rank's peers so, and so does the OOM
 *   killer): a process forked as the first transport opens, before its first object, waits
 *   on a pipe whose only writer is this process; when the pipe closes (this process gone,
 *   however), it unlinks what the list still names. The list lives in memory the two share,
 *   so the names made after the fork are in it. When the last transport closes (its objects
 *   removed), the remover is ended and reaped: a process that ends normally leaves no zombie
 *   behind (an orphan's is its init's to reap, and a container's first process may not). It
 *   holds no descriptor but the pipe's (a socket of the rank's held there would keep its
 *   peers from seeing it die), leaves the launcher's process group (a signal to the group
 *   ends the rank, whose handler removes its own), and calls nothing that allocates (fork in
 *   a process with threads). A child the process forks otherwise starts with none of this
 *   (pthread_atfork): not its parent's list, remover or pipe (which it would hold open).
 */
#include "shm_own.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define OWN_MAX 1024
struct own_tab {
    atomic_int set[OWN_MAX]; /* 0 free, 1 taken (its name being written), 2 named */
    char name[OWN_MAX][128]; /* as the transport made them (heap_name, ctl_name) */
};
static struct own_tab g_local; /* where the shared one cannot be made */
static struct own_tab *g_tab = &g_local;
static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static int g_users;                /* transports open */
static int g_wfd = -1, g_pid = -1; /* the pipe's write end, the remover */
static bool g_handled;             /* the handlers installed */
static _Thread_local bool t_forking; /* this thread forks the remover (under g_mu) */
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

void ct_shm_own_add(const char *name) /* (a slot taken by compare-and-swap: threads may open) */
{
    for (int i = 0; i < OWN_MAX; i++) {
        int z = 0;
        if (atomic_compare_exchange_strong(&g_tab->set[i], &z, 1)) {
            snprintf(g_tab->name[i], sizeof g_tab->name[i], "%s", name);
            atomic_store(&g_tab->set[i], 2); /* the name before its flag */
            return;
        }
    }
}

void ct_shm_own_unlink(const char *name)
{
    for (int i = 0; i < OWN_MAX; i++)
        if (atomic_load(&g_tab->set[i]) == 2 && !strcmp(g_tab->name[i], name)) {
            atomic_store(&g_tab->set[i], 0);
            break;
        }
    shm_unlink(name);
}

static void unlink_all(struct own_tab *tab)
{
    for (int i = 0; i < OWN_MAX; i++) /* (lock-free atomics: safe in a handler) */
        if (atomic_load(&tab->set[i]) == 2)
            shm_unlink(tab->name[i]);
}

static void on_signal(int sig)
{
    unlink_all(g_tab);
    signal(sig, SIG_DFL);
    raise(sig);
}

static const int g_sigs[] = {SIGINT, SIGTERM, SIGHUP};

/* The forked process: fd is the pipe's read end, tab the list it shares. */
static _Noreturn void remover(int fd, struct own_tab *tab)
{
    for (size_t i = 0; i < sizeof g_sigs / sizeof *g_sigs; i++)
        signal(g_sigs[i], SIG_DFL); /* not the rank's handler: these are its live objects */
    if (dup2(fd, 0) != 0)
        _exit(0);
    if (syscall(SYS_close_range, 1U, ~0U, 0) != 0)
        for (long i = 1, n = sysconf(_SC_OPEN_MAX); i < (n > 0 && n < 65536 ? n : 65536); i++)
            close((int)i);
    setsid();
    syscall(SYS_prctl, PR_SET_NAME, "colltune-shm-rm"); /* (not a sanitizer's wrapper) */
    char c;
    ssize_t r;
    while ((r = read(0, &c, 1)) < 0 && errno == EINTR)
        ;
    if (r == 0) /* every writer gone: the process that made the objects has ended */
        unlink_all(tab);
    _exit(0);
}

/* Any other fork's child: none of it (no lock is taken around the fork, where glibc may hold
 * its own: start() forks under g_mu). */
static void fork_child(void)
{
    if (t_forking)
        return; /* the remover */
    if (g_wfd >= 0)
        close(g_wfd);
    g_wfd = g_pid = -1;
    g_users = 0;
    g_tab = &g_local;
    for (int i = 0; i < OWN_MAX; i++)
        atomic_store(&g_local.set[i], 0);
    pthread_mutex_init(&g_mu, NULL);
}

static void at_fork(void)
{
    pthread_atfork(NULL, NULL, fork_child);
}

/* Under g_mu, as the first transport opens. */
static void start(void)
{
    for (size_t i = 0; !g_handled && i < sizeof g_sigs / sizeof *g_sigs; i++) {
        struct sigaction old, on = {.sa_handler = on_signal};
        sigemptyset(&on.sa_mask);
        if (sigaction(g_sigs[i], NULL, &old) == 0 && old.sa_handler == SIG_DFL &&
            !(old.sa_flags & SA_SIGINFO))
            sigaction(g_sigs[i], &on, NULL);
    }
    g_handled = true;
    if (g_tab == &g_local) { /* once: the list stays where the next remover finds it */
        void *m =
            mmap(NULL, sizeof *g_tab, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        if (m == MAP_FAILED)
            return;
        g_tab = m;
    }
    int p[2];
    if (pipe2(p, O_CLOEXEC) < 0)
        return;
    t_forking = true;
    pid_t pid = fork();
    if (pid == 0)
        remover(p[0], g_tab);
    t_forking = false;
    close(p[0]);
    if (pid < 0) {
        close(p[1]);
        return;
    }
    g_wfd = p[1]; /* open while a transport is (closed by an exec) */
    g_pid = (int)pid;
}

/* Under g_mu, as the last transport closes: its objects are gone, and the remover has nothing
 * left to do (ended, not told: a later remover shares the list). */
static void stop(void)
{
    if (g_pid < 0)
        return;
    close(g_wfd);
    kill(g_pid, SIGKILL);
    while (waitpid(g_pid, NULL, 0) < 0 && errno == EINTR)
        ;
    g_wfd = g_pid = -1;
}

void ct_shm_own_start(void)
{
    pthread_once(&g_once, at_fork);
    pthread_mutex_lock(&g_mu); /* threads that open meanwhile wait for the list */
    if (g_users++ == 0)
        start();
    pthread_mutex_unlock(&g_mu);
}

void ct_shm_own_stop(void)
{
    pthread_mutex_lock(&g_mu);
    if (g_users > 0 && --g_users == 0) /* (a child's: none, fork_child) */
        stop();
    pthread_mutex_unlock(&g_mu);
}
