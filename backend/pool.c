/* SPDX-License-Identifier: MIT */
/* Persistent worker threads woken per job through a generation counter. */
#include "pool.h"

#include <pthread.h>
#include <stdlib.h>

#include "../lib/err.h"
#include "../lib/thread.h"

struct ct_pool {
    int n;
    pthread_t *th;
    pthread_mutex_t mu;
    pthread_cond_t go, done;
    unsigned long gen;
    int pending, stop;
    void (*fn)(void *, int, int);
    void *arg;
};

struct worker {
    struct ct_pool *p;
    int i;
};

static void *work(void *wa)
{
    struct worker *w = wa;
    struct ct_pool *p = w->p;
    int i = w->i;
    free(w);
    unsigned long seen = 0;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (p->gen == seen && !p->stop)
            pthread_cond_wait(&p->go, &p->mu);
        if (p->stop)
            break;
        seen = p->gen;
        pthread_mutex_unlock(&p->mu);
        p->fn(p->arg, i, p->n);
        pthread_mutex_lock(&p->mu);
        if (--p->pending == 0)
            pthread_cond_signal(&p->done);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

struct ct_pool *ct_pool_new(int n)
{
    struct ct_pool *p = ct_xcalloc(1, sizeof *p);
    p->n = n < 1 ? 1 : n;
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->go, NULL);
    pthread_cond_init(&p->done, NULL);
    p->th = ct_xcalloc((size_t)p->n, sizeof *p->th);
    for (int i = 1; i < p->n; i++) {
        struct worker *w = ct_xmalloc(sizeof *w);
        w->p = p;
        w->i = i;
        if (ct_thread_start(&p->th[i], work, w)) {
            free(w);
            p->n = i; /* run with the threads we got */
            break;
        }
    }
    return p;
}

int ct_pool_size(const struct ct_pool *p)
{
    return p ? p->n : 1;
}

void ct_pool_run(struct ct_pool *p, void (*fn)(void *arg, int i, int n), void *arg)
{
    if (!p || p->n == 1) {
        fn(arg, 0, 1);
        return;
    }
    pthread_mutex_lock(&p->mu);
    p->fn = fn;
    p->arg = arg;
    p->pending = p->n - 1;
    p->gen++;
    pthread_cond_broadcast(&p->go);
    pthread_mutex_unlock(&p->mu);
    fn(arg, 0, p->n);
    pthread_mutex_lock(&p->mu);
    while (p->pending)
        pthread_cond_wait(&p->done, &p->mu);
    pthread_mutex_unlock(&p->mu);
}

void ct_pool_free(struct ct_pool *p)
{
    if (!p)
        return;
    pthread_mutex_lock(&p->mu);
    p->stop = 1;
    pthread_cond_broadcast(&p->go);
    pthread_mutex_unlock(&p->mu);
    for (int i = 1; i < p->n; i++)
        pthread_join(p->th[i], NULL);
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->go);
    pthread_cond_destroy(&p->done);
    free(p->th);
    free(p);
}
