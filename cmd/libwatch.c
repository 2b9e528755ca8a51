/* SPDX-License-Identifier: MIT */
/*
 * The library engines' watchdog. A rank whose peer died stays blocked inside the MPI library,
 * and only mpirun ends such a job: srun (without --kill-on-bad-exit) and mpiexec.hydra leave
 * the survivors waiting. A thread reads the engine's progress count (backend.h) once a second;
 * when it has not moved for --timeout seconds the rank says so, naming the library, and
 * leaves with exit 1, as the native engine's ranks do when a peer makes no progress, naming
 * the peers of its host that are stopped or gone (the ranks' places, backend.h) and those on
 * other hosts that do not answer whether they run (lib/alive.h: a stopped or dead process,
 * or its host gone, answers nothing; one that waits as this one does answers). And the
 * bound on the library's teardown (MPI_Finalize), which the watchdog no longer covers, and on
 * NCCL's communicator set-up and teardown (cmd/engine.c).
 */
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../lib/alive.h"
#include "../lib/file.h"
#include "../lib/thread.h"
#include "cmd.h"
#include "librun.h"

static struct {
    const struct ct_backend *be;
    void *ctx;
    int timeout_s;
    bool on, stop;
    pthread_t t;
    pthread_mutex_t mu;
    pthread_cond_t cv;
} w = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};

/* The ranks on this rank's host that are stopped (SIGSTOP, a debugger) or gone: ": rank 1
 * (pid 123) stopped, ..." into buf, or "" where none is or the places are not known. */
static void stuck_peers(char *buf, size_t len)
{
    const struct ct_rank_info *r = w.be->ranks, *me = r ? &r[w.be->shape.rank] : NULL;
    size_t off = 0;
    buf[0] = 0;
    for (int q = 0; me && q < w.be->shape.nranks && off < len; q++) {
        char st = 0;
        if (q == me->rank || strcmp(r[q].host, me->host))
            continue;
        bool gone = ct_proc_stat((int)r[q].pid, &st, NULL, NULL) < 0 || st == 'Z';
        if (gone || st == 'T' || st == 't')
            off += (size_t)snprintf(buf + off, len - off, "%s rank %d (pid %ld) %s",
                                    off ? "," : ":", q, r[q].pid, gone ? "gone" : "stopped");
    }
}

/*
 * After stuck_peers' off bytes of buf: the other hosts whose asked rank does not answer within
 * 2 s (", rank 3 on node3 (pid 77) does not answer", ...). One rank of each other node (the
 * ranks' places) is asked, each asker its own (the node's rank at the local place of its rank
 * modulo the node's count: a stalled job of N ranks sends
 * each responder about as many questions as there are hosts, not N): a host whose rank
 * answers runs, and its own ranks name its stopped ones (stuck_peers). Where several hosts
 * were asked and none answers, that alone (the network, or UDP filtered between the hosts, as
 * likely as them all stopped). Returns how many were asked.
 */
static int silent_peers(char *buf, size_t len, size_t off)
{
    const struct ct_rank_info *r = w.be->ranks, *me = r ? &r[w.be->shape.rank] : NULL;
    int n = w.be->shape.nranks, silent = 0, nodes = me ? ct_rank_info_nodes(r, n) : 0;
    const char **reach = nodes > 0 ? calloc((size_t)n, sizeof *reach) : NULL;
    bool *ok = reach ? calloc((size_t)n, sizeof *ok) : NULL;
    int *per = ok ? calloc((size_t)nodes, sizeof *per) : NULL; /* ranks per node */
    struct ct_err err = {0};
    for (int q = 0; per && q < n; q++)
        if (r[q].node >= 0)
            per[r[q].node]++;
    for (int q = 0; per && q < n; q++) /* the node's rank at local place me % its count */
        if (r[q].node >= 0 && r[q].node != me->node && r[q].local_rank == me->rank % per[r[q].node])
            reach[q] = r[q].reach;
    int asked = per ? ct_alive_ask(reach, n, 2.0, ok, &err) : 0;
    for (int q = 0; q < n && asked > 0; q++)
        silent += !ok[q];
    if (asked >= 2 && silent == asked)
        snprintf(buf + off, len - off, "%s none of the %d other hosts answers (the network?)",
                 off ? "," : ":", asked);
    for (int q = 0; q < n && asked > 0 && silent < asked && off < len; q++)
        if (!ok[q])
            off += (size_t)snprintf(buf + off, len - off,
                                    "%s rank %d on %s (pid %ld) does not answer%s", off ? "," : ":",
                                    q, r[q].host, r[q].pid,
                                    asked == 1 ? " (or UDP is filtered between the hosts)" : "");
    free(reach);
    free(ok);
    free(per);
    return asked > 0 ? asked : 0;
}

static void *watch(void *arg)
{
    (void)arg;
    unsigned long last = w.be->progress(w.ctx);
    int still = 0;
    pthread_mutex_lock(&w.mu);
    while (!w.stop) {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_sec += 1;
        if (pthread_cond_timedwait(&w.cv, &w.mu, &until) == 0 || w.stop)
            continue;                              /* woken: stopping */
        unsigned long now = w.be->progress(w.ctx); /* under the lock: not after the stop */
        still = now == last ? still + 1 : 0;
        last = now;
        if (still >= w.timeout_s) {
            char msg[512], peers[240];
            stuck_peers(peers, sizeof peers);
            int asked = silent_peers(peers, sizeof peers, strlen(peers));
            if ((now = w.be->progress(w.ctx)) != last) { /* it returned while asking */
                still = 0;
                last = now;
                continue;
            }
            int n = snprintf(msg, sizeof msg,
                             "colltune: error: rank %d: no call into %s returned for %d s%s (a "
                             "peer died or stalled; --timeout); leaving\n",
                             w.be->shape.rank, w.be->library ? w.be->library : "the library",
                             w.timeout_s, peers);
            n = n < (int)sizeof msg ? n : (int)sizeof msg - 1;
            (void)!write(STDERR_FILENO, msg, (size_t)n);
            /* still answering for as long as a peer on another host, whose watchdog ticks up
             * to a second later, asks (2 s): not taken for the one that stalled */
            if (asked > 0)
                nanosleep(&(struct timespec){3, 0}, NULL);
            _exit(CT_EXIT_FAIL);
        }
    }
    pthread_mutex_unlock(&w.mu);
    return NULL;
}

int ct_lib_bound_s(double timeout_s)
{
    return timeout_s >= 1 ? (int)timeout_s : 1;
}

void ct_lib_watch(const struct ct_backend *be, void *ctx, double timeout_s)
{
    if (!be->progress || w.on)
        return;
    w.be = be;
    w.ctx = ctx;
    w.timeout_s = ct_lib_bound_s(timeout_s);
    w.stop = false;
    w.on = ct_thread_start(&w.t, watch, NULL) == 0;
}

void ct_lib_watch_stop(void)
{
    if (!w.on)
        return;
    pthread_mutex_lock(&w.mu);
    w.stop = true;
    pthread_cond_signal(&w.cv);
    pthread_mutex_unlock(&w.mu);
    pthread_join(w.t, NULL);
    w.on = false;
}

/* ---- a bounded teardown -----------------------------------------------------------------------
 */

static volatile sig_atomic_t close_code;
static char close_msg[240];
static void close_stuck(int sig)
{
    (void)sig;
    if (write(STDERR_FILENO, close_msg, strlen(close_msg)) < 0)
        _exit(CT_EXIT_FAIL);
    _exit(close_code);
}

void ct_lib_deadline(unsigned s, int code, const char *msg)
{
    fflush(NULL);
    close_code = code;
    snprintf(close_msg, sizeof close_msg, "%s", msg);
    signal(SIGALRM, close_stuck);
    alarm(s);
}

void ct_lib_deadline_off(void)
{
    alarm(0);
}

int ct_lib_close_within(const struct ct_backend *be, void *ctx, int code, unsigned s,
                        const char *msg)
{
    ct_lib_watch_stop(); /* the teardown has its own bound */
    ct_lib_deadline(s, code, msg);
    be->close(ctx);
    ct_lib_deadline_off();
    return code;
}
