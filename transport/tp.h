/* SPDX-License-Identifier: MIT */
/*
 * Transports: a vtable per transport (loop, shm, tcp, ...), one file each, one row in
 * transport/transports.c. A transport moves bytes between this rank and its peers:
 * messages are matched FIFO per ordered pair (the k-th send from a to b meets the k-th
 * receive posted at b for a), lengths must agree (a mismatch is a CT_EPEER error), and
 * every operation is non-blocking: post, then drive with progress()/wait().
 *
 * Receives may reduce: irecv() with red != NULL computes dst = src (op) incoming
 * without an intermediate copy where the transport can (shm reads the peer's symmetric
 * heap in place); the default is to land the bytes in a bounce buffer and reduce.
 *
 * Failures name the peer: "peer rank 3 (node07): connection closed".
 */
#ifndef CT_TP_H
#define CT_TP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../lib/err.h"
#include "../lib/redfn.h"

struct ct_boot;
struct ct_tp;

enum ct_tp_caps {
    CT_TP_INTRA_NODE = 1u << 0, /* usable between ranks of one host */
    CT_TP_INTER_NODE = 1u << 1, /* usable across hosts */
    CT_TP_RDMA = 1u << 2,
    CT_TP_SYMMETRIC = 1u << 3,  /* alloc() memory is readable by peers in place */
    CT_TP_IN_PROCESS = 1u << 4, /* ranks are threads of one process (loop) */
};

enum ct_wait_mode {
    CT_WAIT_AUTO = 0, /* spin when ranks <= online cores, else spin briefly then block */
    CT_WAIT_SPIN,
    CT_WAIT_BLOCK,
};

/* A request: owned by the caller, must stay put until done. */
struct ct_req {
    volatile int done; /* set by the transport when complete */
    int status;        /* 0 or negative ct_status once done */
    uint64_t priv[8];  /* transport private */
};

struct ct_tp_cfg {
    int streams;               /* tcp: parallel streams per peer (>= 1) */
    size_t sockbuf;            /* tcp: SO_SNDBUF/SO_RCVBUF per connection; 0 = automatic
                                  (4 MiB when net.core.[rw]mem_max allow, else the kernel's
                                  autotuning). Set: forced past the caps as root
                                  (SO_*BUFFORCE), else capped by them */
    size_t slot_bytes;         /* shm: bytes per channel slot; 0 = default */
    int map_bufs;              /* shm: peer bytes kept mapped, in largest buffers read (plus
                                  32 MiB); 0 = 1. A sweep that alternates algorithms reading
                                  different peer buffers keeps them all (faulting a dropped
                                  256 MiB buffer in again took 0.35 s on a 2-core VM) */
    enum ct_wait_mode wait;    /* progress policy */
    int64_t timeout_ns;        /* data timeout used by blocking helpers; 0 = default 30 s */
    const char *ifname;        /* tcp: interface to publish; NULL = auto */
    const char *provider;      /* fabric: libfabric provider; NULL = automatic (or the
                                  COLLTUNE_FI_PROVIDER environment variable) */
    const unsigned char *peers; /* NULL: serve every peer; else peers[r] != 0 for the ranks
                                   this endpoint connects to (open is still collective) */
    /* loop transport fault injection (tests): act on the k-th message sent by
     * fault_rank (0-based, counting all its sends); kind 0 = none */
    int fault_kind;            /* 1 drop, 2 delay, 3 corrupt */
    int fault_rank;
    long fault_msg;
    int64_t fault_delay_ns;
};

struct ct_tp_ops {
    const char *name;
    const char *summary;
    unsigned caps;
    bool built; /* false: compiled out (listed as "not built") */
    /* Open this rank's endpoint; uses boot for address exchange (collective call). */
    int (*open)(struct ct_tp **tp, const struct ct_tp_cfg *cfg, struct ct_boot *boot,
                struct ct_err *err);
    void (*close)(struct ct_tp *tp);
    /* Benchmark buffer allocation (symmetric where CT_TP_SYMMETRIC). NULL + CT_ENOMEM. */
    void *(*alloc)(struct ct_tp *tp, size_t bytes, struct ct_err *err);
    void (*free)(struct ct_tp *tp, void *p, size_t bytes);
    int (*isend)(struct ct_tp *tp, int peer, const void *buf, size_t len, struct ct_req *req,
                 struct ct_err *err);
    /* red == NULL: dst = incoming; else dst = src (op) incoming (src may equal dst). */
    int (*irecv)(struct ct_tp *tp, int peer, void *dst, const void *src, size_t len,
                 const struct ct_red *red, struct ct_req *req, struct ct_err *err);
    /* Advance posted operations. Returns > 0 if any request completed, 0 if none,
     * < 0 on failure (err names the peer). */
    int (*progress)(struct ct_tp *tp, struct ct_err *err);
    /* Block until something may have happened or timeout_ns passed (no busy loop).
     * Returns 0 or < 0 on failure. Spinning transports may return at once. */
    int (*wait)(struct ct_tp *tp, int64_t timeout_ns, struct ct_err *err);
    /* Peers with unfinished operations, for timeout messages: fills up to max ranks,
     * returns how many. May be NULL. */
    int (*pending_peers)(struct ct_tp *tp, int *peers, int max);
    /*
     * One-sided access to a peer's buffers (CT_TP_SYMMETRIC transports; NULL elsewhere).
     * A fence with one peer: fence_post raises this rank's fence count toward peer and
     * publishes bufs[0..n) (n <= CT_FENCE_BUFS; NULL or outside alloc()'s memory: not
     * published), ringing the peer; fence_test returns 1 once the peer has posted its
     * fence of the same count, 0 while not yet (progress() and wait() watch for it), < 0
     * when the peer died. Fences are matched by count per ordered pair, like messages.
     * After fence_test returned 1, peer_addr gives bytes [off, off + len) of the peer's
     * published buffer i mapped in this process (NULL and CT_EUNSUPP where the peer did not
     * publish it or it is too short) until the next fence with that peer: what a rank
     * reads or writes there between two fences is the algorithm's to keep race-free.
     */
    int (*fence_post)(struct ct_tp *tp, int peer, void *const bufs[], int n, struct ct_err *err);
    int (*fence_test)(struct ct_tp *tp, int peer, struct ct_err *err);
    void *(*peer_addr)(struct ct_tp *tp, int peer, int i, uint64_t off, uint64_t len,
                       struct ct_err *err);
    /* Whether [buf, buf + len) is memory a fence can publish (alloc()'s shared heap). */
    bool (*published)(struct ct_tp *tp, const void *buf, size_t len);
    /*
     * A mailbox (optional, NULL where absent): CT_MBOX_MAX bytes per rank that every peer
     * reads in place, for small collectives without fences or slots. mbox_post copies
     * src[0, len) in as this rank's next publish and rings the peers. mbox_test sets *data to
     * the bytes of peer's publish of the same ordinal as this rank's last and returns 1 once
     * it is there, 0 while not yet (progress() and wait() watch for it), < 0 when the peer
     * died; need is how many of its bytes the caller will read (shm requests them early). A publish
     * stays readable until its rank's next-but-one: the caller's rule is that a rank reads every
     * peer's publish k before it posts k + 1 (the executor: a step that publishes reads from every
     * other rank), so a rank posting k + 2 has read every peer's k + 1, which each posted after
     * reading its k.
     */
    int (*mbox_post)(struct ct_tp *tp, const void *src, size_t len, struct ct_err *err);
    int (*mbox_test)(struct ct_tp *tp, int peer, size_t need, const void **data,
                     struct ct_err *err);
};

#define CT_FENCE_BUFS 3 /* buffers a fence publishes (the executor's send, recv, scratch) */
#define CT_MBOX_MAX (16u << 10) /* bytes of one mailbox publish */

/* Every transport's handle starts with this header. */
struct ct_tp {
    const struct ct_tp_ops *ops;
    int rank, size;
    struct ct_boot *boot; /* borrowed */
    unsigned post_flags;  /* CT_POST_*: apply to the messages posted while set (0 at open) */
};

/* The send and the receive of a message both carry it (the caller's rule must give both
 * ends the same answer, or the message waits until the timeout): the transport may have
 * the sender write straight into the receiver's buffer (shm: a PUT). */
#define CT_POST_DIRECT 1u
/* With CT_POST_DIRECT: every receive of the collective copies (no reduction), so smaller
 * messages may be put too (shm: put_copy_min). The same rule for both ends: a property of
 * the job, not of one op. */
#define CT_POST_COPY 2u

/* The measured window of a tcp endpoint's connections to one peer (TCP_INFO), summed or
 * ranged over its streams: what one long, fat link lets each connection keep in flight. */
struct ct_tcp_window {
    int streams;
    double cwnd_bytes_min, cwnd_bytes_max; /* tcpi_snd_cwnd * tcpi_snd_mss */
    double rcv_space_max;                  /* tcpi_rcv_space (receive autotuning) */
    double rtt_ms;                         /* smoothed RTT, mean over the streams */
    int sndbuf, rcvbuf;                    /* granted SO_SNDBUF / SO_RCVBUF (stream 0) */
};
/* CT_EUNSUPP when tp is not tcp or peer has no connection. */
int ct_tcp_window(struct ct_tp *tp, int peer, struct ct_tcp_window *w, struct ct_err *err);

/* The transport table (transport/transports.c). */
const struct ct_tp_ops *ct_tp_find(const char *name);
const struct ct_tp_ops *ct_tp_at(size_t i);

/*
 * Which peers an endpoint connects (collective): link[r] when this rank or r asked for the
 * other in its cfg->peers mask; has[r] says whether rank r gave a mask at all (a rank without
 * one serves every peer; each transport learns has[] in its own address exchange). The masks
 * are gathered only when some rank has one.
 */
int ct_tp_peer_links(struct ct_boot *boot, const unsigned char *peers, const bool *has,
                     bool *link, struct ct_err *err);

/* Open by table row. */
int ct_tp_open(const struct ct_tp_ops *ops, struct ct_tp **tp, const struct ct_tp_cfg *cfg,
               struct ct_boot *boot, struct ct_err *err);

/* Blocking helpers built on the vtable: spin then wait, bounded by timeout_ns
 * (0 = cfg default). On timeout the error names the pending peers. */
int ct_tp_wait_req(struct ct_tp *tp, struct ct_req *req, int64_t timeout_ns, struct ct_err *err);
int ct_tp_send(struct ct_tp *tp, int peer, const void *buf, size_t len, int64_t timeout_ns,
               struct ct_err *err);
int ct_tp_recv(struct ct_tp *tp, int peer, void *buf, size_t len, int64_t timeout_ns,
               struct ct_err *err);
/* Dissemination barrier over the data path (ceil(log2 n) rounds of 1-byte messages). */
int ct_tp_barrier(struct ct_tp *tp, int64_t timeout_ns, struct ct_err *err);
/* A timeout message naming the peers with pending operations. */
int ct_tp_timeout_error(struct ct_tp *tp, const char *what, int64_t timeout_ns, struct ct_err *err);

#endif
