/* SPDX-License-Identifier: MIT */
/*
 * Private to the libfabric transport: the endpoint state shared by tp_fabric.c (data path,
 * memory registration) and tp_fabric_open.c (provider choice, endpoint and liveness setup).
 */
#ifndef CT_FABRIC_INT_H
#define CT_FABRIC_INT_H

#ifdef HAVE_LIBFABRIC

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* libfabric's exported functions go through dlopen (transport/fabric_dl.c): rename them
 * before the headers declare them, so their inline helpers call ours too. */
#ifndef CT_FABRIC_DL_IMPL
#define fi_getinfo ct_fi_getinfo
#define fi_freeinfo ct_fi_freeinfo
#define fi_dupinfo ct_fi_dupinfo
#define fi_fabric ct_fi_fabric
#define fi_strerror ct_fi_strerror
#endif
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_tagged.h>

#include "tp.h"

/* The loader and the renamed entry points. */
int ct_fi_load(struct ct_err *err);
int ct_fi_getinfo(uint32_t version, const char *node, const char *service, uint64_t flags,
                  const struct fi_info *hints, struct fi_info **info);
void ct_fi_freeinfo(struct fi_info *info);
struct fi_info *ct_fi_dupinfo(const struct fi_info *info);
int ct_fi_fabric(struct fi_fabric_attr *attr, struct fid_fabric **fabric, void *context);
const char *ct_fi_strerror(int errnum);

/*
 * Tag of one piece: | sender rank (24 bits) | piece sequence number (40 bits) |. The sequence
 * counts pieces per ordered pair. (No ignore bits: some providers mishandle them.)
 */
#define FAB_SEQ_BITS 40
#define FAB_SEQ_MASK ((1ull << FAB_SEQ_BITS) - 1)
#define FAB_MAX_RANKS (1 << (64 - FAB_SEQ_BITS))

#define FAB_NAME_MAX 256 /* endpoint name bytes published through the bootstrap */

struct fab_peer;

/* One isend/irecv: len / piece full pieces, then one shorter (maybe empty) last piece. */
struct fab_op {
    struct ct_req *req;
    struct fab_peer *peer;
    bool is_send;
    bool bounce;     /* fused reduce whose dst overlaps src: pieces land in bounce buffers */
    char *dst;       /* receive: destination */
    const char *src; /* send: payload; reduce: left operand */
    size_t len;
    uint64_t seq0;    /* sequence number of piece 0 */
    uint64_t npieces; /* len / piece + 1 */
    uint64_t posted;  /* pieces handed to the provider */
    uint64_t left;    /* pieces not yet completed */
    void *desc;       /* memory descriptor of dst/src, NULL when none is needed */
    int cache_slot;   /* registration-cache slot held by this op, -1 if none */
    ct_reduce_fn fn;  /* NULL: plain receive */
    size_t esize;
    struct fab_op *next; /* free list */
};

/* Completion context of one posted piece (its first member is what FI_CONTEXT2 asks for). */
struct fab_piece {
    struct fi_context2 fctx;
    struct fab_op *op;
    uint64_t idx;
    int bounce; /* bounce buffer index, -1 if none */
    bool live;  /* handed to the provider (or about to be) */
    struct fab_piece *next;
};

/* Ops of one direction with one peer, indexed by message number: head is the oldest not yet
 * completed, post the first not yet fully posted, tail the next to be queued. */
struct fab_queue {
    struct fab_op **ring;
    uint64_t cap; /* power of two */
    uint64_t head, post, tail;
};

struct fab_peer {
    int rank;
    bool linked; /* endpoint address known and liveness socket connected */
    bool active; /* listed in fab_tp.active */
    bool gone;   /* its liveness socket closed */
    int64_t gone_at;
    fi_addr_t addr;
    uint64_t sseq, rseq; /* next piece sequence numbers, send and receive */
    struct fab_queue sq, rq;
    int live_fd;
    int nbounce;              /* bounce buffers held by its posted pieces */
    int tx_posted, rx_posted; /* its pieces in the provider's queues */
};

/* A registered memory range: alloc()'d buffers, bounce buffers, cached foreign buffers. */
struct fab_region {
    char *lo, *hi;
    struct fid_mr *mr;
    void *desc;
    int refs;      /* cache: ops in flight using it */
    uint64_t used; /* cache: LRU clock */
    bool valid;
    bool orphan; /* alloc()'d, freed by the caller while the provider held it: freed at close */
};

struct fab_bounce {
    char *p;
    struct fid_mr *mr;
    void *desc;
    bool busy;
};

struct fab_op_chunk {
    struct fab_op ops[64];
    struct fab_op_chunk *next;
};

struct fab_piece_chunk {
    struct fab_piece pieces[128];
    struct fab_piece_chunk *next;
};

struct fab_tp {
    struct ct_tp base;
    char prov[64]; /* provider actually used, e.g. "tcp;ofi_rxm" */
    struct fi_info *info;
    struct fid_fabric *fabric;
    struct fid_domain *domain;
    struct fid_av *av;
    struct fid_cq *cq;
    struct fid_ep *ep;
    bool tagged;        /* FI_TAGGED; else FI_MSG with FI_DIRECTED_RECV and send-after-send order */
    bool directed;      /* FI_DIRECTED_RECV: receives name their source address */
    bool mr_local;      /* every buffer needs a descriptor (FI_MR_LOCAL, or forced for tests) */
    bool mr_try;        /* the domain registers memory: give descriptors where we have them */
    size_t piece;       /* bytes per piece: min(max_msg_size of every rank, PIECE_MAX) */
    int tx_max, rx_max; /* provider queue depths */
    int tx_share, rx_share;   /* at most this many posted per peer, so no peer starves */
    int tx_posted, rx_posted; /* pieces in the provider's queues */
    bool retry;               /* a post was refused (EAGAIN): wait() must not block long */
    unsigned idle;            /* consecutive progress() calls that found no completion */
    int cq_fd;                /* FI_WAIT_FD descriptor of the CQ, -1 when the provider has none */
    int wait_ep;              /* epoll: cq_fd and live_ep */
    int live_ep;              /* epoll: the liveness sockets */
    int64_t live_next;
    struct fab_peer *peers; /* size entries */
    int *active;            /* peers with queued or posted work */
    int nactive;
    struct fab_region *regions; /* alloc()'d buffers, sorted by address */
    int nregions, capregions;
    struct fab_region *cache; /* foreign buffers (mr_local only) */
    int ncache;
    uint64_t clock, mr_key;
    struct fab_bounce *bounces;
    int nbounces;
    struct fab_op *free_ops;
    struct fab_op_chunk *op_chunks;
    struct fab_piece *free_pieces;
    struct fab_piece_chunk *piece_chunks;
    int failed;
    struct ct_err fail;
};

extern const struct ct_tp_ops ct_tp_fabric_ops;

/* Host name of a rank, for messages. */
const char *ct_fabric_host(const struct fab_tp *f, int rank);

/* Choose the provider, open fabric/domain/cq/av/endpoint, exchange names through the
 * bootstrap and connect the liveness sockets (collective). Fills f; on failure the caller
 * tears down what was opened with ct_fabric_teardown. */
int ct_fabric_setup(struct fab_tp *f, const struct ct_tp_cfg *cfg, struct ct_err *err);

/* Close the endpoint at once (after a failure: no later completion may touch user memory). */
void ct_fabric_close_ep(struct fab_tp *f);

/* Close every libfabric object and socket that setup opened (not memory regions). */
void ct_fabric_teardown(struct fab_tp *f);

#endif /* HAVE_LIBFABRIC */
#endif
