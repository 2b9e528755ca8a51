/* SPDX-License-Identifier: MIT */
/*
 * Bootstrap: how ranks find each other before any transport exists. A bootstrap gives
 * rank, size, host layout, the job's secret token, and two slow-path collectives
 * (allgather of a fixed-size blob, barrier) used for address exchange and result gathering.
 *
 * Kinds: a tcp star through rank 0 (reached at COLLTUNE_ROOT=host:port, through a listening
 * socket inherited from `--local N`, or at an address rank 0 published through a
 * launcher's key-value store: PMIx or PMI-1), and in-process (ranks are threads).
 */
#ifndef CT_BOOT_H
#define CT_BOOT_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "../lib/err.h"

#define CT_BOOT_TOKEN_BYTES 16
#define CT_BOOT_HOST_BYTES 64
#define CT_BOOT_ADDR_BYTES 48
#define CT_BOOT_MAX_RANKS (1 << 20)

struct ct_boot;

/* Receives notices (rejected connections and the like); cmd/ prints them. */
typedef void (*ct_notice_fn)(void *ctx, const char *msg);

struct ct_boot_ops {
    int (*allgather)(struct ct_boot *b, const void *mine, size_t len, void *all,
                     struct ct_err *err);
    int (*barrier)(struct ct_boot *b, struct ct_err *err);
    void (*close)(struct ct_boot *b);
    void (*beat)(struct ct_boot *b); /* NULL: none (one rank, threads of one process) */
    void (*stall)(struct ct_boot *b, int rank);    /* NULL: none, as beat */
    void (*poll)(struct ct_boot *b);               /* NULL: none, as beat */
    void (*linger)(struct ct_boot *b, int64_t ns); /* NULL: none, as beat */
    int (*first)(struct ct_boot *b, int peer, int64_t wait_ns); /* NULL: none, as beat */
};

struct ct_boot {
    const struct ct_boot_ops *ops;
    int rank, size;
    int local_rank, local_size; /* among ranks with the same host name */
    int host_size; /* ranks on this machine: local_size, or with virtual nodes (--ranks-per-node,
                      "host/nodeN") every node of the host; they share its CPUs */
    int node, nnodes;           /* node index (hosts numbered by first rank) */
    char host[CT_BOOT_HOST_BYTES];
    char (*hosts)[CT_BOOT_HOST_BYTES]; /* host name of every rank (size entries) */
    /* Address each rank's bootstrap connection came from, as the root saw it; entry 0 is
     * the address this rank reached the root at. "" where unknown (in-process, size 1). */
    char (*addrs)[CT_BOOT_ADDR_BYTES];
    uint64_t job_id; /* random per job, same on every rank (names shm objects) */
    /* The job's secret, same on every rank: transports put it in their connection
     * handshakes and drop connections that do not carry it. */
    unsigned char token[CT_BOOT_TOKEN_BYTES];
    int64_t timeout_ns;    /* bring-up (bootstrap and transport connection setup) */
    int64_t op_timeout_ns; /* allgather/barrier: no progress for this long fails */
    _Atomic int64_t beat_ns; /* the last ct_boot_beat sent (threads of --inflight share it) */
    _Atomic int64_t poll_ns; /* the last look for a stall's word (ct_boot_stalled) */
    _Atomic int stalled_1;   /* 1 + the rank a peer found stalled (ct_boot_tell_stalled), 0 none */
    const char *method;    /* "local", "env", "pmix", "pmi1", "single", "inproc" (static) */
    ct_notice_fn notice;   /* may be NULL */
    void *notice_ctx;
    void (*on_close)(void *ctx); /* launcher clean-up after close (PMI finalize) */
    void *on_close_ctx;
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
/* This rank is alive and busy in work that the job's next allgather waits for (a long pair
 * round, a transfer slower than the timeout): a rank waiting for it there waits
 * op_timeout_ns past the last beat, not past its own arrival, so a round longer than the
 * timeout is not read as a stall (a rank that stops beating still fails after it). The root
 * beats to every rank, the others to the root; the root passes on what it hears while it
 * waits. At most every op_timeout_ns / 4 (1 ms .. 10 s), by one thread of those that call it
 * at once; now: the caller's clock (b NULL: nothing). */
static inline void ct_boot_beat(struct ct_boot *b, int64_t now)
{
    int64_t every = b ? b->op_timeout_ns / 4 : 0;
    every = every < 1000000 ? 1000000 : every > 10000000000LL ? 10000000000LL : every;
    int64_t last = b ? atomic_load_explicit(&b->beat_ns, memory_order_relaxed) : 0;
    if (b && b->ops->beat && now - last >= every &&
        atomic_compare_exchange_strong_explicit(&b->beat_ns, &last, now, memory_order_relaxed,
                                                memory_order_relaxed))
        b->ops->beat(b);
}
/* A peer of this rank stopped answering (a data-path timeout while it was to be busy with
 * this rank): tell the job, so that ranks busy in long work that the next allgather waits
 * for stop it (the stalled rank is then named one timeout later, not after the longest of
 * that work). The root notes it and passes it on to every other rank at once; the others
 * send it to the root, which passes it on when it looks (ct_boot_stalled) or while it waits
 * in an allgather. The first word holds until an allgather has every rank's answer (the
 * stalled rank came back). Best effort; b NULL or a bootstrap of one process: nothing. */
static inline void ct_boot_tell_stalled(struct ct_boot *b, int rank)
{
    if (b && b->ops->stall)
        b->ops->stall(b, rank);
}
/* The rank a peer found stalled (ct_boot_tell_stalled), -1 none: what the word says, looked
 * for on the bootstrap's connections at most every op_timeout_ns / 8 (1 ms .. 1 s; now: the
 * caller's clock). For one thread's busy loop (a validate pair round), between its steps. */
static inline int ct_boot_stalled(struct ct_boot *b, int64_t now)
{
    if (!b)
        return -1;
    int64_t every = b->op_timeout_ns / 8;
    every = every < 1000000 ? 1000000 : every > 1000000000 ? 1000000000 : every;
    int64_t last = atomic_load_explicit(&b->poll_ns, memory_order_relaxed);
    if (b->ops->poll && now - last >= every &&
        atomic_compare_exchange_strong_explicit(&b->poll_ns, &last, now, memory_order_relaxed,
                                                memory_order_relaxed))
        b->ops->poll(b);
    return atomic_load_explicit(&b->stalled_1, memory_order_relaxed) - 1;
}
/* A rank but 0 that leaves on a failure whose report rank 0 prints: wait up to ns for rank 0
 * to leave first (its bootstrap connection closed), so that a launcher that ends the job at
 * its first failed rank (mpirun) does not end rank 0 before its report is out. b NULL, rank
 * 0, or a bootstrap of one process: nothing. */
static inline void ct_boot_linger(struct ct_boot *b, int64_t ns)
{
    if (b && b->rank != 0 && b->ops->linger)
        b->ops->linger(b, ns);
}
/* A rank that leaves on a failure its data path blamed on peer (gone or stalled): the rank that
 * failed first, as the job's words say; -1 none known (b NULL, a bootstrap of one process).
 * Each word is only whom its sender found gone or stalled. Rank 0 waits up to wait_ns for
 * peer's word or its close, reads the words on every connection, follows them from peer to the
 * rank that said nothing, takes it where it is known (closed, or blamed by two ranks), and
 * passes its answer (a rank, or none) on to every rank in a FIRST word. The others tell rank 0
 * peer and look once on its connection: its FIRST, else its close with nothing before it
 * (rank 0 died first; a close behind its ABORT or a STALL it passed on is rank 0 leaving on
 * another's failure). A rank's line then names the rank found first, not only the peer that
 * left on it (ranks started by hand: rank 0 named rank 1, which had left on rank 2's death). */
static inline int ct_boot_first_failure(struct ct_boot *b, int peer, int64_t wait_ns)
{
    return b && b->ops->first && peer >= 0 && peer < b->size ? b->ops->first(b, peer, wait_ns) : -1;
}
/* Close the bootstrap (NULL is fine), then run its on_close hook. */
void ct_boot_close(struct ct_boot *b);

/* Hand a formatted notice to b->notice ("bootstrap: rejected a connection from ..."). */
void ct_boot_notice(const struct ct_boot *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* "address:port" of a connected socket's peer ("?" when unknown), for notices. */
void ct_boot_peer_text(int fd, char *out, size_t len);

/*
 * The IPv4 address this rank publishes for data connections: ifname's address when
 * ifname is given (any address, loopback included: forced); 127.0.0.1 when every rank is
 * on this host; else the source address of the route to a rank on another host (through
 * the address its bootstrap connection came from), falling back to the route to that
 * rank's host name, then the first interface that is up. Never a loopback address when
 * another host is in the job (CT_EINVAL then, naming --ifname).
 */
int ct_boot_local_addr(const struct ct_boot *b, const char *ifname, char *host, size_t len,
                       struct ct_err *err);

/* ---------------------------------------------------------------- tokens */

/* 16 random bytes (/dev/urandom; the clock and pid where it is missing). */
void ct_boot_random(void *buf, size_t len);
/* Derive the 16-byte token from text (COLLTUNE_TOKEN): at least 16 characters, any
 * bytes; 32 hex digits are taken as the bytes themselves. CT_EINVAL if too short. */
int ct_boot_token_from_text(const char *text, unsigned char token[CT_BOOT_TOKEN_BYTES],
                            struct ct_err *err);
/* Constant-time comparison of two tokens: 1 if equal. */
int ct_boot_token_equal(const unsigned char *a, const unsigned char *b);
int ct_boot_token_is_zero(const unsigned char *t);
void ct_boot_token_hex(const unsigned char *t, char out[2 * CT_BOOT_TOKEN_BYTES + 1]);
int ct_boot_token_from_hex(const char *hex, unsigned char token[CT_BOOT_TOKEN_BYTES]);

/* ---------------------------------------------------------------- tcp star */

struct ct_boot_cfg {
    int rank, size;
    /* Where rank 0 is: "host:port", or several "host:port,host:port" tried in turn until
     * one answers (connecting ranks). Rank 0 binds its port unless listen_fd >= 0. */
    const char *root_addr;
    int listen_fd;   /* rank 0: listening socket to use (kept open; -1 = bind root_addr) */
    uint64_t job_id; /* rank 0's value is the job's */
    /* The job secret known before connecting (from the launcher, the environment, or the
     * --local parent): hellos must carry it. NULL: none yet; rank 0 draws one and sends it
     * to each rank it accepts (trust on first connection). */
    const unsigned char *token;
    const char *host;      /* host name override (NULL: gethostname()) */
    int64_t timeout_ns;    /* bring-up; 0 = 60 s */
    int64_t op_timeout_ns; /* collectives after bring-up; 0 = timeout_ns */
    const char *method;    /* recorded in the result (static string); NULL = "env" */
    ct_notice_fn notice;
    void *notice_ctx;
    /* launched bootstraps (PMIx, PMI-1): rank 0 listens on a port of [port_lo, port_hi]
     * (0, 0 = ephemeral) and publishes ifname's address (NULL: every interface's) */
    int port_lo, port_hi;
    const char *ifname;
};

void ct_boot_cfg_init(struct ct_boot_cfg *c);

/*
 * Bring up the tcp star. Rank 0 accepts size - 1 ranks: each connection must open with a
 * valid hello (ct_boot_hello_decode) carrying the job token (when one is known), the same
 * size and an unclaimed rank; anything else is closed unread and reported through the
 * notice hook, and never delays the others (connections are served concurrently). Rank 0
 * answers with the job id, the token and the host and address tables.
 * Errors name the rank, its host and the step.
 */
int ct_boot_tcp_start(struct ct_boot **b, const struct ct_boot_cfg *cfg, struct ct_err *err);

/* The same with the older argument list (no token known before connecting). */
int ct_boot_tcp_open(struct ct_boot **b, int rank, int size, const char *root_addr, int listen_fd,
                     uint64_t job_id, const char *host_override, int64_t timeout_ns,
                     struct ct_err *err);

/* Single rank: nothing to connect (method "single"). */
int ct_boot_single_open(struct ct_boot **b, const struct ct_boot_cfg *cfg, struct ct_err *err);

/*
 * Launchers with a key-value store: rank 0 listens (port range, every interface), draws
 * the token and puts "<token hex>;<host>;<addr:port>,..." under key "colltune-root";
 * after the store's fence every rank reads it and joins the tcp star with that token.
 * put/fence/get return 0 or < 0 with err.
 */
struct ct_boot_kvs {
    const char *name; /* "pmix", "pmi1" */
    void *ctx;
    int (*put)(void *ctx, const char *key, const char *value, struct ct_err *err);
    int (*fence)(void *ctx, struct ct_err *err);
    int (*get)(void *ctx, int rank, const char *key, char *value, size_t len, struct ct_err *err);
};
int ct_boot_kvs_start(struct ct_boot **b, const struct ct_boot_cfg *cfg,
                      const struct ct_boot_kvs *kvs, struct ct_err *err);

/* The root record a kvs bootstrap publishes, parsed (exposed for tests and fuzzing). */
struct ct_boot_root_rec {
    unsigned char token[CT_BOOT_TOKEN_BYTES];
    char host[CT_BOOT_HOST_BYTES];
    char addrs[512]; /* "addr:port,..." as rank 0 published them */
};
int ct_boot_root_rec_parse(const char *text, struct ct_boot_root_rec *r, struct ct_err *err);

/* ---------------------------------------------------------------- launchers */

/*
 * PMIx (Open MPI's mpirun, srun --mpi=pmix, PRRTE): rank and size from PMIx_Init and
 * PMIX_JOB_SIZE, the host name from PMIX_HOSTNAME (unless cfg->host), the root record
 * through Put/Commit/Fence/Get; a local rank that differs from PMIX_LOCAL_RANK is a notice.
 * CT_EUNSUPP when built without PMIx. cfg->rank/size are ignored. PMIx_Finalize runs at
 * close.
 */
int ct_boot_pmix_open(struct ct_boot **b, const struct ct_boot_cfg *cfg, struct ct_err *err);
int ct_boot_pmix_built(void);

/*
 * PMI-1 wire protocol on the inherited PMI_FD (MPICH hydra's mpiexec): init, get_maxes,
 * get_appnum, get_my_kvsname, put, barrier, get, finalize (at close). Rank and size
 * from PMI_RANK/PMI_SIZE. Works inside network namespaces (the fd is inherited).
 */
int ct_boot_pmi1_open(struct ct_boot **b, const struct ct_boot_cfg *cfg, struct ct_err *err);

/* ---------------------------------------------------------------- wire formats */

/*
 * Bootstrap hello: the first bytes a rank sends the root (kind HELLO) and the root's
 * answer (WELCOME, or REJECT with a reason). Fixed size, little endian, checksummed.
 */
#define CT_BOOT_HELLO_BYTES 128
#define CT_BOOT_HELLO_MAGIC 0x32425443u /* "CTB2" */
#define CT_BOOT_HELLO_VERSION 1
#define CT_BOOT_F_TOKEN 1u /* the token field carries the job secret */

enum ct_boot_hello_kind { CT_BOOT_HELLO = 1, CT_BOOT_WELCOME = 2, CT_BOOT_REJECT = 3 };
enum ct_boot_reject {
    CT_BOOT_REJ_TOKEN = 1, /* wrong or missing job token */
    CT_BOOT_REJ_SIZE = 2,  /* the rank's job size differs from the root's */
    CT_BOOT_REJ_DUP = 3,   /* the rank is already taken */
};

struct ct_boot_hello {
    uint8_t kind;
    uint16_t flags;
    uint16_t status; /* REJECT: enum ct_boot_reject; else 0 */
    uint32_t rank, size;
    uint32_t pid;
    uint64_t job_id;
    unsigned char token[CT_BOOT_TOKEN_BYTES];
    char host[CT_BOOT_HOST_BYTES]; /* NUL-terminated printable ASCII */
};

void ct_boot_hello_encode(const struct ct_boot_hello *h, unsigned char out[CT_BOOT_HELLO_BYTES]);
/* Parse and check on its own: magic, version, checksum, reserved bytes zero, known kind and
 * flags, 1 <= size <= CT_BOOT_MAX_RANKS, rank < size, a non-empty printable host name
 * terminated inside its field. Returns 0 or CT_EPEER ("bad bootstrap hello: ..."). */
int ct_boot_hello_decode(const unsigned char in[CT_BOOT_HELLO_BYTES], struct ct_boot_hello *h,
                         struct ct_err *err);

/* ---------------------------------------------------------------- in-process */

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

/* Every rank's mylen bytes at every rank: blocks of *stride bytes (the longest, zero
 * padded), rank r's at r * *stride; new memory (free()), NULL on failure. Collective. */
char *ct_boot_allgatherv(struct ct_boot *b, const void *mine, size_t mylen, size_t *stride,
                         struct ct_err *err);

/* Every rank of b: 0 where every rank's argv (argc words) is rank 0's, else CT_EINVAL naming
 * the first rank whose words differ and the first word that does (ranks a user's launcher
 * started with other options measured another job than rank 0's table says: wrong results,
 * a stall, or "message of 1 bytes does not match"). */
int ct_boot_same_args(struct ct_boot *b, int argc, char *const *argv, struct ct_err *err);

#endif
