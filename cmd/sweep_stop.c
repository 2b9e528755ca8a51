/* SPDX-License-Identifier: MIT */
/*
 * colltune sweep's rank 0 and the signals that stop a sweep: what was measured is saved
 * whole before the process ends (cmd.h: ct_cmd_catch_stop).
 */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <unistd.h>

#include "../output/sweep_out.h"
#include "../tune/job.h"
#include "cmd.h"

static volatile sig_atomic_t g_stop_sig;

/* Rank 0 alone got it and no peer stopped (kill -INT of its pid): it ends by that signal
 * after 3 s, as it would have at once before (its last save of every 2 s kept). */
static void on_late(int sig)
{
    (void)sig;
    signal(g_stop_sig, SIG_DFL);
    raise(g_stop_sig);
}

static void on_stop(int sig, siginfo_t *si, void *uc)
{
    (void)uc;
    int e = errno;
    /* Ctrl-C reaches the terminal's process group and the launcher forwards it too: its copy
     * (sent by the parent) is not a second signal */
    bool copy = si && si->si_code == SI_USER && si->si_pid == getppid();
    if (g_stop_sig && !copy) { /* a second one ends it as before */
        signal(sig, SIG_DFL);
        raise(sig);
    } else if (!g_stop_sig) {
        g_stop_sig = sig;
        struct sigaction late = {.sa_handler = on_late};
        sigemptyset(&late.sa_mask);
        sigaction(SIGALRM, &late, NULL);
        alarm(3);
    }
    errno = e;
}

static bool g_alone; /* one rank: no peer's end stops the sweep, its next point does */

void ct_cmd_catch_stop(int nranks)
{
    if (nranks < 1)
        return;
    g_alone = nranks == 1;
    static const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
    struct sigaction on = {.sa_sigaction = on_stop, .sa_flags = SA_RESTART | SA_SIGINFO};
    sigemptyset(&on.sa_mask);
    for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++)
        sigaction(sigs[i], &on, NULL);
}

int ct_cmd_stop_sig(void)
{
    return g_stop_sig;
}

int ct_cmd_sweep_save(const char *out, struct ct_sweep_job *j, const struct ct_sweep_point *pts,
                      size_t n, struct ct_err *err)
{
    j->meta.sweep.points = (long)n;
    return ct_sweep_outputs_running(out, &j->meta, pts, n, !j->saved++, err);
}

void ct_cmd_stop_alone(const char *out, struct ct_sweep_job *j, const struct ct_sweep_point *pts,
                       size_t n)
{
    int sig = g_stop_sig;
    if (!g_alone || !sig)
        return;
    struct ct_err err = {0};
    if (ct_cmd_sweep_save(out, j, pts, n, &err) < 0)
        ct_cmd_fail("sweep", CT_EXIT_FAIL, "%s", err.msg);
    ct_sweep_outputs_stopped(out, 128 + sig);
    signal(sig, SIG_DFL);
    raise(sig);
}
