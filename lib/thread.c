/* SPDX-License-Identifier: MIT */
/* Threads started with the stop signals blocked (see thread.h). */
#include "thread.h"

#include <signal.h>

int ct_thread_start(pthread_t *t, void *(*fn)(void *), void *arg)
{
    sigset_t stops, was;
    sigemptyset(&stops);
    sigaddset(&stops, SIGINT);
    sigaddset(&stops, SIGTERM);
    sigaddset(&stops, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &stops, &was); /* the new thread inherits it */
    int rc = pthread_create(t, NULL, fn, arg);
    pthread_sigmask(SIG_SETMASK, &was, NULL);
    return rc;
}
