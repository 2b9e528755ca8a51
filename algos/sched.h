/* SPDX-License-Identifier: MIT */
/*
 * Schedules: an algorithm is a generator of per-rank step lists. A step is a set of
 * communication ops (posted together, completed together) followed by local ops run
 * in order. The executor (engine/exec.c) slices every communication op into chunks
 * and pipelines them; the model prices the same schedule.
 *
 * Matching rule (checked by ct_sched_check): for every ordered pair (a -> b), the
 * sequence of SEND byte counts at a addressed to b, in (step, op) order, equals the
 * sequence of RECV/RECV_REDUCE byte counts at b from a. Transports are FIFO per pair.
 *
 * Two more rules every generator keeps (tests/algos/sim.h enforces them):
 *  - within a step, no communication op writes memory another communication op of the
 *    same step reads or writes (a fused receive-reduce may only reduce exactly in place);
 *  - a schedule must not deadlock when sends are rendezvous (a send completes only once
 *    received), since bounded slots and pipeline depth behave that way.
 */
#ifndef CT_SCHED_H
#define CT_SCHED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../lib/err.h"

enum ct_opk {
    CT_OP_SEND,        /* send src[bytes] to peer */
    CT_OP_RECV,        /* receive bytes from peer into dst */
    CT_OP_RECV_REDUCE, /* dst = src (op) incoming, or incoming (op) src when rev; src may
                          equal dst */
    CT_OP_REDUCE,      /* local: dst = src (op) src2 */
    CT_OP_COPY,        /* local: dst = src */
    /* local, quantized (algos/quant.h; bytes = float32 bytes, the wire side is
     * ct_quant_wire_bytes(fmt, bytes / 4)): */
    CT_OP_QUANT,       /* dst (wire) = encode(src) */
    CT_OP_DEQUANT,     /* dst = decode(src (wire)) */
    CT_OP_DEQUANT_ADD, /* dst = src2 + decode(src (wire)) */
    /* one-sided, over memory the peer published at the last fence (transport fence_post;
     * shared memory only): */
    CT_OP_SYNC,       /* a fence with peer: run before the step's other ops; the k-th fence
                         of a with b meets the k-th of b with a (no bytes) */
    CT_OP_GET_REDUCE, /* local dst = src (op) the peer's src2, or the peer's src2 (op) src
                         when rev */
    CT_OP_PUT,        /* the peer's dst = local src */
    CT_OP_GET,        /* local dst = the peer's src */
    /* a mailbox (transport mbox_post; shared memory only): no fences, no slots */
    CT_OP_PUBLISH,     /* this rank's mailbox = src[bytes] (no peer); run first in its step */
    CT_OP_MGET,        /* local dst = bytes [src.off, +bytes) of the peer's publish of the same
                          ordinal (the k-th publish of a rank meets the k-th of each peer) */
    CT_OP_MGET_REDUCE, /* local dst = src (op) the peer's publish at src2.off, or that (op) src
                          when rev */
};
/* Mailbox rules (ct_sched_check): a step has at most one publish; a step that publishes reads
 * from every other rank, and a step that reads publishes (transport mbox_test says why). */
/* Between two fences with a peer, what a rank reads of the peer's buffers the peer does not
 * write, and what a rank writes there nobody else reads or writes (tests/algos/sim.h). */

enum ct_bufid { CT_BUF_SEND = 0, CT_BUF_RECV = 1, CT_BUF_SCRATCH = 2, CT_BUF_COUNT = 3 };

struct ct_loc {
    uint8_t buf;  /* enum ct_bufid */
    uint64_t off; /* byte offset */
};

struct ct_op {
    uint8_t kind; /* enum ct_opk */
    uint8_t fmt;  /* quantized ops: enum ct_quant */
    uint8_t rev;  /* RECV_REDUCE: the incoming operand comes first */
    int32_t peer; /* communication ops only */
    uint64_t bytes;
    struct ct_loc dst, src, src2;
};

struct ct_sched {
    struct ct_op *ops;
    uint32_t nops, opcap;
    uint32_t *step_start; /* ops of step s: [step_start[s], step_start[s+1]) */
    uint32_t nsteps, stepcap;
    uint64_t scratch_bytes; /* scratch the schedule needs (max offset+bytes used) */
    uint64_t bytes_sent;    /* sum of SEND bytes */
    uint32_t max_comm_ops;  /* most communication ops in one step */
    uint32_t onesided_ops;  /* ops of kind CT_OP_SYNC and after (0: the executor skips them) */
};

static inline struct ct_loc ct_loc(enum ct_bufid b, uint64_t off)
{
    struct ct_loc l = {(uint8_t)b, off};
    return l;
}

void ct_sched_init(struct ct_sched *s);
void ct_sched_release(struct ct_sched *s);
/* Start a new step. Empty steps are dropped by ct_sched_finish. */
void ct_sched_step(struct ct_sched *s);
/* Append ops to the current step; zero-byte ops are dropped (both sides drop alike). */
void ct_sched_send(struct ct_sched *s, int peer, struct ct_loc src, uint64_t bytes);
void ct_sched_recv(struct ct_sched *s, int peer, struct ct_loc dst, uint64_t bytes);
void ct_sched_recv_reduce(struct ct_sched *s, int peer, struct ct_loc dst, struct ct_loc src,
                          uint64_t bytes);
/* dst = incoming (op) src: keeps rank order when the sender's rank comes first. */
void ct_sched_recv_reduce_rev(struct ct_sched *s, int peer, struct ct_loc dst, struct ct_loc src,
                              uint64_t bytes);
void ct_sched_reduce(struct ct_sched *s, struct ct_loc dst, struct ct_loc src, struct ct_loc src2,
                     uint64_t bytes);
/* A quantized local op (kind CT_OP_QUANT, CT_OP_DEQUANT or CT_OP_DEQUANT_ADD) on
 * bytes / 4 float32 elements; src2 only for CT_OP_DEQUANT_ADD. */
void ct_sched_quant(struct ct_sched *s, enum ct_opk kind, int fmt, struct ct_loc dst,
                    struct ct_loc src, struct ct_loc src2, uint64_t bytes);
/* Bytes op touches at its location k (0 dst, 1 src, 2 src2): the wire side of a
 * quantized op is smaller than op->bytes. */
uint64_t ct_op_loc_bytes(const struct ct_op *op, int k);
/* A fence with peer (a step that has one runs it before its other ops). */
void ct_sched_sync(struct ct_sched *s, int peer);
/* dst = src (op) the peer's src2 (rev: the peer's operand first). */
void ct_sched_get_reduce(struct ct_sched *s, int peer, struct ct_loc dst, struct ct_loc src,
                         struct ct_loc peer_src2, bool rev, uint64_t bytes);
/* The peer's dst = src. */
void ct_sched_put(struct ct_sched *s, int peer, struct ct_loc peer_dst, struct ct_loc src,
                  uint64_t bytes);
/* dst = the peer's src. */
void ct_sched_get(struct ct_sched *s, int peer, struct ct_loc dst, struct ct_loc peer_src,
                  uint64_t bytes);
/* Whether location k (0 dst, 1 src, 2 src2) of op is in the peer's buffers. */
static inline bool ct_op_loc_remote(const struct ct_op *op, int k)
{
    return (op->kind == CT_OP_GET_REDUCE && k == 2) || (op->kind == CT_OP_PUT && k == 0) ||
           (op->kind == CT_OP_GET && k == 1);
}
/* This rank's mailbox = src[bytes]. */
void ct_sched_publish(struct ct_sched *s, struct ct_loc src, uint64_t bytes);
/* dst = bytes [off, +bytes) of the peer's publish. */
void ct_sched_mget(struct ct_sched *s, int peer, struct ct_loc dst, uint64_t off, uint64_t bytes);
/* dst = src (op) the peer's publish at off (rev: the peer's operand first). */
void ct_sched_mget_reduce(struct ct_sched *s, int peer, struct ct_loc dst, struct ct_loc src,
                          uint64_t off, bool rev, uint64_t bytes);
/* Whether location k of op is an offset in the peer's mailbox publish (no buffer). */
static inline bool ct_op_loc_mbox(const struct ct_op *op, int k)
{
    return (op->kind == CT_OP_MGET && k == 1) || (op->kind == CT_OP_MGET_REDUCE && k == 2);
}
/* Copies with dst == src are dropped. */
void ct_sched_copy(struct ct_sched *s, struct ct_loc dst, struct ct_loc src, uint64_t bytes);
/* Close the last step, drop empty steps, compute the summary fields. */
void ct_sched_finish(struct ct_sched *s);
/* The same steps with the same ops (kinds, peers, byte ranges, buffers) in the same order,
 * but for the order of a step's two-sided messages, which are posted together (messages in
 * one direction with one peer keep theirs): executing either does exactly the same work. */
bool ct_sched_equal(const struct ct_sched *a, const struct ct_sched *b);
/* Number of steps that contain communication. */
uint32_t ct_sched_comm_steps(const struct ct_sched *s);

/*
 * Check a whole job's schedules (one per rank): matching sequences per pair, peers in
 * range, no op on a buffer beyond its size. sizes[CT_BUF_*] are the per-rank buffer
 * sizes (scratch from each schedule). Fills err with the first problem.
 */
int ct_sched_check(const struct ct_sched *scheds, int nranks, uint64_t send_bytes,
                   uint64_t recv_bytes, struct ct_err *err);

#endif
