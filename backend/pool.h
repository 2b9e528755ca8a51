/* SPDX-License-Identifier: MIT */
/* A small persistent thread pool for splitting a local reduction across threads. */
#ifndef CT_POOL_H
#define CT_POOL_H

struct ct_pool;

/* n threads in all (the caller counts as thread 0, so n-1 workers are started). */
struct ct_pool *ct_pool_new(int n);
void ct_pool_free(struct ct_pool *p);
int ct_pool_size(const struct ct_pool *p);
/* Run fn(arg, i, n) for i = 0..n-1 in parallel (i = 0 on the caller); returns when all
 * are done. */
void ct_pool_run(struct ct_pool *p, void (*fn)(void *arg, int i, int n), void *arg);

#endif
