/* SPDX-License-Identifier: MIT */
/* Threads started with the stop signals blocked. */
#ifndef CT_THREAD_H
#define CT_THREAD_H

#include <pthread.h>
#include <signal.h>

/* The stop signals, in *set alone: SIGINT (Ctrl-C), SIGTERM (a launcher's, a scheduler's),
 * SIGHUP. */
void ct_sigset_stops(sigset_t *set);

/* pthread_create with SIGINT, SIGTERM and SIGHUP blocked in the new thread: a stop (Ctrl-C, a
 * launcher's SIGTERM) lands on a thread that acts on it, never on a helper (a reduction
 * worker, a watchdog, the screen), so that one a thread holds back (ct_file_write_atomic
 * until its rename) waits for it. Returns pthread_create's code. */
int ct_thread_start(pthread_t *t, void *(*fn)(void *), void *arg);

#endif
