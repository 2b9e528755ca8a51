/* SPDX-License-Identifier: MIT */
/* Threads started with the stop signals blocked (see thread.h). */
#include "thread.h"

#include <signal.h>

void ct_sigset_stops(sigset_t *set)
{
    sigemptyset(set);
    sigaddset(set, SIGINT);
    sigaddset(set, SIGTERM);
    sigaddset(set, SIGHUP);
}

int ct_thread_start(pthread_t *t, void *(*fn)(void *), void *arg)
{
    sigset_t stops, was;
    ct_sigset_stops(&stops);
    pthread_sigmask(SIG_BLOCK, &stops, &was); /* the new thread inherits it */
    int rc = pthread_create(t, NULL, fn, arg);
    pthread_sigmask(SIG_SETMASK, &was, NULL);
    return rc;
}
