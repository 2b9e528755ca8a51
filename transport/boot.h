/* SPDX-License-Identifier: MIT */
/*
 * Bootstrap: how ranks find each other before any transport exists. A bootstrap gives
 * rank, size, host layout, and two slow-path collectives (allgather of a fixed-size blob,
 * barrier) used for address exchange and result gathering.
 *
 * Kinds: tcp star through a root (COLLTUNE_ROOT=host:port, or a listening socket
 * inherited from `--local N`), and in-process (loop transport: ranks are threads).
 */
#ifndef CT_BOOT_H
#define CT_BOOT_H

#include <stddef.h>
#include <stdint.h>

#include "../lib/err.h"

struct ct_boot;

struct ct_boot_ops {
    int (*allgather)(struct ct_boot *b, const void *mine, size_t len, void *all,
                     struct ct_err *err);
    int (*barrier)(struct ct_boot *b, struct ct_err *err);
    void (*close)(struct ct_boot *b);
};

struct ct_boot {
    const struct ct_boot_ops *ops;
    int rank, size;
    int local_rank, local_size; /* among ranks with the same host name */
    int node, nnodes;           /* node index (hosts numbered by first rank) */
    char host[64];
    char (*hosts)[64]; /* host name of every rank (size entries) */
    uint64_t job_id;   /* random per job, same on every rank (names shm objects, auth) */
    int64_t timeout_ns; /* bootstrap timeout */
};

static inline int ct_boot_allgather(struct ct_boot *b, const void *mine, size_t len, void *all,
                                    struct ct_err *err)
{
    return b->ops->allgather(b, mine, len, all, err);
}
static inline int ct_boot_barrier(struct ct_boot *b, struct ct_err *err)
{
    return b->ops->barrier(b, err);
}
void ct_boot_close(struct ct_boot *b);

/*
 * TCP star bootstrap. Rank 0 serves: if listen_fd >= 0 it is used (inherited from the
 * --local launcher), else rank 0 binds root_addr ("host:port"). Others connect to
 * root_addr, retrying until timeout_ns. job_id: rank 0's value is broadcast.
 * Fills host layout (hosts, node, local_rank ...) from gethostname() or host_override.
 */
int ct_boot_tcp_open(struct ct_boot **b, int rank, int size, const char *root_addr, int listen_fd,
                     uint64_t job_id, const char *host_override, int64_t timeout_ns,
                     struct ct_err *err);

/* In-process bootstrap for n threads: create the shared world once, then each thread
 * opens its rank. */
struct ct_boot_world;
struct ct_boot_world *ct_boot_world_new(int n, int ranks_per_node);
void ct_boot_world_free(struct ct_boot_world *w);
/* Bootstrap timeout of the world's ranks (default 60 s). */
void ct_boot_world_set_timeout(struct ct_boot_world *w, int64_t timeout_ns);
int ct_boot_inproc_open(struct ct_boot **b, struct ct_boot_world *w, int rank, struct ct_err *err);

/* Shared data of the in-process world (the loop transport uses it): created by the first
 * caller, destroyed by ct_boot_world_free (after every thread is done). */
void *ct_boot_world_slot(struct ct_boot *b, void *(*create)(int n, void *arg),
                         void (*destroy)(void *), void *arg);

#endif
