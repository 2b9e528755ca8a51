/* SPDX-License-Identifier: MIT */
/*
 * Shared-memory transport: slot channels per ordered pair in POSIX shared memory between
 * the processes of one host, and a symmetric heap from which a receiver copies or reduces
 * a sender's large buffers in place (one pass, no bounce).
 */
#include "shm.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/futex.h>
#include <linux/membarrier.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "../lib/clock.h"
#include "../lib/cpus.h"
#include "../lib/file.h"
#include "../lib/memnt.h"
#include "../lib/parse.h"
#include "boot.h"
#include "shm_own.h"

/*
 * Layout. Every rank creates one control object, "/ct-<job>-c<rank>-<nonce>":
 *
 *   struct ctl        header (pid, geometry), doorbell line, free-epoch line, object table
 *   channel[l]        one inbound channel per local rank l (the sender's local index):
 *     struct chan     tail (slots consumed, written by the receiver), bad flag; own lines
 *     slot[nslots]    64-byte header line + slot_data bytes; the header's seq word is the
 *                     "head": the sender stores slot number + 1 (release) once filled
 *
 * A message is one of
 *   EAGER  len <= slot_data (heap buffers only up to rdv_min): copied into one slot; the
 *          send completes at once; up to INLINE_MAX bytes ride in the header line itself
 *   RDV    heap buffer above rdv_min: the slot carries (object index, id, offset, object
 *          size); the receiver maps the sender's object (once, cached), copies or reduces
 *          from it in place and releases the slot, which is the send's acknowledgement
 *   FRAG   other large buffers: pipelined through consecutive slots
 *   PUT    heap buffer above put_min (put_copy_min where every receive of the job copies:
 *          CT_POST_COPY), into a receiver's heap buffer: the receiver advertises
 *          each receive above put_min with a clear-to-send line (its object, offset and
 *          length, or "not in the heap"), indexed by the receive's ordinal; the sender of a
 *          RDV-sized message waits for it, copies straight into the receiver's buffer and
 *          publishes a slot that says so (the receive completes without touching the data,
 *          but for the bytes in the message's partial first and last lines, which ride in
 *          the slot and the receiver writes: put_edges()).
 *          A receiver never reads lines its peer has just modified, which is what a get of a
 *          freshly reduced buffer costs (measured: such lines cross cores at about 4 GB/s).
 *          Reducing receives and unregistered destinations answer "not in the heap" and the
 *          message goes RDV as before. Only messages posted with CT_POST_DIRECT on both ends
 *          take part. Two consequences: a put may land before an earlier receive from the
 *          same peer has completed (the executor never has two receives of one step touch
 *          the same bytes); and a sender whose length is above put_min waits for a receive
 *          at or below it (a length mismatch, a bug in the caller) until its timeout, which
 *          names the peer, instead of being told "does not match".
 *
 * Fences (tp.h fence_post/fence_test/peer_addr): each channel also ends with a fence line, the
 * count of fences its writer has posted toward its reader, and the writer's published buffers
 * (object, id, offset, size) for that fence. The reader maps them like a RDV source, and then
 * reads or writes them in place: the one-sided ops of the symmetric algorithms.
 *
 * COLLTUNE_SHM_UNREGISTERED=1 makes alloc() return private memory instead, so that every
 * message takes the copy path (make bench reports both).
 *
 * Heap objects are "/ct-<job>-h<rank>-<nonce>-<id>", one per alloc(), listed in the owner's
 * object table so peers can drop cached mappings of freed objects (free_epoch). Control
 * objects are unlinked as soon as every peer has mapped them; heap objects when freed.
 *
 * Waiting: wait() sets the owner's `sleeping` flag, re-checks its channels and sleeps on
 * the doorbell futex; whoever publishes a slot or releases one rings the doorbell of the
 * other side, with a syscall only when that side sleeps. The two sides order their store
 * before their load (a Dekker pair) with a full fence each, or, where every rank of the job
 * spins and the kernel offers it, asymmetrically (see ring()).
 * Spin mode sleeps only after SPIN_IDLE_NS without progress. Peers we wait on are checked
 * for exit through pidfds every LIVE_NS, from wait() and from idle progress().
 */

#define LINE 64
#define SHM_MAGIC                                                                                  \
    0x344d48535443ull /* "CTSHM4": channels with clear-to-send and fence lines, mailboxes */
#define MAX_OBJS 256
#define INLINE_MAX 40
#define PREFETCH_MAX                                                                               \
    512 /* eager receives up to this size fetch their data lines beside the                        \
           flag line instead of after it */
#define DEF_SLOT_DATA (32u << 10)
#define MIN_SLOT_DATA (1u << 10)
#define MAX_SLOT_DATA (4u << 20)
#define CHAN_TARGET (512u << 10) /* bytes of slot data per channel */
#define MIN_SLOTS 4u
#define MAX_SLOTS 64u
#define RDV_MIN                                                                                    \
    (1u << 10) /* heap messages above this go zero-copy (measured: 2 KiB 0.28 us vs 0.42 eager) */
#define RDV_NT_MIN                                                                                 \
    (16ull << 20)                   /* zero-copy receives this large stream their stores           \
                                        (measured: 10-30% faster at 16 and 128 MiB) */
#define MAP_SLACK (32u << 20)       /* peer bytes mapped in beyond the largest buffer read */
#define LIVE_NS (20 * 1000000LL)    /* peer liveness check period while waiting */
#define PUT_MIN (1u << 10)          /* see put_now(); at least rdv_min in effect */
/* The same where every receive copies (CT_POST_COPY): 2 ranks, AllGather ring at 576-1944 B
 * (messages of 288-972 B) took 0.79-0.98 us eager (the receiver pulls the slot's data lines
 * across cores) and 0.58-0.76 put, AllToAll ring 0.75-0.96 and 0.56-0.65; reducing receives
 * of that size stay eager (an answer "not in the heap" would cost the wait for it, and RDV
 * the wait for the acknowledgement) */
#define PUT_COPY_MIN 256u
/* mailbox bytes a waiting reader requests ahead (2 ranks, AllReduce, against 64: 512 B 0.33-0.36
 * us against 0.44-0.45, 4 KiB 0.68-0.70 against 0.92) */
#define MBOX_PREFETCH 4096u
#define CTS_N 16u                   /* clear-to-send lines per channel (receives in flight) */
#define NO_OBJ UINT32_MAX           /* clear-to-send: the destination is not in the heap */
#define SPIN_IDLE_NS (200 * 1000LL) /* spin mode: block after this long without progress */
#define IDLE_MASK 1023u             /* idle progress calls between clock reads */

enum { K_EAGER = 1, K_FRAG = 2, K_RDV = 3, K_PUT = 4 };
enum { P_OK = 0, P_EXITED, P_REJECTED, P_MISMATCH, P_GARBAGE, P_MAPFAIL };

struct obj_ent {
    _Atomic uint64_t id; /* 0 = free */
    uint64_t size;
};

/*
 * A mailbox publish. Up to MBOX_INLINE bytes go in its sequence number's line (one line
 * crosses cores); larger ones in the lines after it, aligned (after the sequence number, a
 * vector of 64 bytes straddled two lines: 2 ranks, AllReduce of 576 B-1 KiB took 1.0-1.4 us,
 * 0.38-0.47 aligned, against 0.39 at 512 B).
 */
#define MBOX_INLINE (LINE - 8)
struct mbox {
    _Alignas(LINE) _Atomic uint64_t seq; /* ordinal << 1 | inline, once written (ordinals from 1) */
    unsigned char inl[MBOX_INLINE];
    unsigned char data[CT_MBOX_MAX];
};

struct ctl {
    /* line 0: written once at open */
    uint64_t magic;
    int32_t rank, pid;
    uint32_t nchan, nslots;
    uint64_t slot_data, stride, chan_bytes, chan_off, total;
    /* line 1: futex word rung by peers, and whether the owner sleeps on it */
    _Alignas(LINE) _Atomic uint32_t doorbell;
    _Atomic uint32_t sleeping;
    /* line 2: bumped on every free() */
    _Alignas(LINE) _Atomic uint64_t free_epoch;
    _Alignas(LINE) struct obj_ent objs[MAX_OBJS];
    struct mbox box[2]; /* publish k in box[k & 1] (tp.h mbox_post) */
};

/* A receive's clear-to-send, written by the receiver, read by the sender of its message. */
struct cts {
    _Alignas(LINE) _Atomic uint64_t seq; /* the receive's ordinal + 1 once written */
    uint32_t obj_idx;                    /* NO_OBJ: not in the heap, send it the usual way */
    uint32_t pad;
    uint64_t obj_id, offset, obj_size, len;
};

/* A buffer published at a fence (obj_idx NO_OBJ: none). */
struct fdesc {
    uint32_t obj_idx, pad;
    uint64_t obj_id, offset, obj_size;
};

/*
 * Fences, written by the channel's sender side (the poster), read by its receiver. The
 * buffers of fence k are in d[k & 1]: the reader copies them as soon as it sees count k, and
 * the poster reaches fence k + 2 (the same half) only after the reader has posted fence k + 1,
 * which it does after that copy.
 */
struct fence {
    _Alignas(LINE) _Atomic uint64_t count;
    _Alignas(LINE) struct fdesc d[2][CT_FENCE_BUFS];
};

struct chan {
    _Alignas(LINE) _Atomic uint64_t tail; /* slots consumed by the receiver */
    _Alignas(LINE) _Atomic uint32_t bad;  /* the receiver rejected a message */
    struct cts cts[CTS_N];                /* receive ordinal k uses cts[k % CTS_N] */
    /* then the slots, then the sender -> receiver fences (struct fence, chan_fence()): after
     * the slots, so that adding them moved no slot (with the fences before them, 128 B
     * AllReduce took 0.03 us longer in 4 of 5 alternating runs) */
};

struct slot {
    _Atomic uint64_t seq; /* slot number + 1 once published */
    uint32_t kind;
    uint32_t obj_idx;
    uint64_t msg_len;
    union {
        struct {
            uint64_t obj_id, offset, obj_size;
        } rdv;
        unsigned char inl[INLINE_MAX];
    } u;
};
_Static_assert(sizeof(struct slot) == LINE, "slot header is one cache line");

/* Request private state, kept in ct_req.priv. */
struct __attribute__((may_alias)) rq {
    struct ct_req *next;
    union {
        const char *sbuf;
        char *dst;
    } b;
    union {
        const char *src; /* recv: reduction source */
        uint64_t offset; /* send RDV before posting: offset in its heap object */
        uint64_t ack;    /* send RDV after posting: tail value that completes it */
    } a;
    union {
        const struct ct_red *red; /* recv */
        uintptr_t kind;           /* send: K_* | heap object index << 8 */
    } c;
    uint64_t len;
    uint64_t done_bytes; /* send: bytes posted; recv: bytes delivered */
    uint64_t ord;        /* the message's ordinal on its channel (sends and receives alike) */
    uint64_t put;        /* send: 1 while it waits for its clear-to-send; recv: 3 to be
                            advertised, then 1 as in the heap or 2 as not */
};
_Static_assert(sizeof(struct rq) <= sizeof(((struct ct_req *)0)->priv), "rq fits in priv");

struct map {
    uint64_t id;
    void *base;
    size_t size;
    uint64_t lo, hi; /* bytes read since the pages were last dropped (lo == hi: none) */
    uint64_t used;   /* peer->tick at the last read */
};

struct peer {
    int rank, lrank;
    int state; /* P_* */
    pid_t pid;
    int pidfd;
    uint64_t nonce;
    struct ctl *ctl; /* the peer's control object */
    size_t ctl_len;
    struct chan *out; /* me -> peer (in the peer's object) */
    struct chan *in;  /* peer -> me (in mine) */
    struct fence *fout_line, *fin_line; /* the fences at the end of out and in */
    uint64_t out_mask, out_stride, out_data;
    uint64_t sseq, stail, rseq;
    uint64_t smsg, rposted, rdone; /* messages queued; receives posted; receives completed */
    struct ct_req *cts_next;       /* first receive whose clear-to-send is not yet decided */
    struct ct_req *sq_head, *sq_tail, *sq_post; /* sq_post: first send not fully posted */
    struct ct_req *rq_head, *rq_tail;
    uint64_t bad_got, bad_want;
    struct map *maps;        /* MAX_OBJS cached mappings of the peer's heap, lazily */
    uint64_t tick;           /* zero-copy reads so far */
    uint64_t spans, largest; /* sum of the maps' read spans; the largest buffer read */
    uint64_t map_bufs;       /* spans may reach map_bufs x largest + MAP_SLACK */
    uint64_t map_epoch;
    uint64_t fout;                   /* fences posted toward the peer */
    int fwait;                       /* the last one is not yet met */
    struct fdesc fin[CT_FENCE_BUFS]; /* the peer's buffers of the last fence met */
    int mwait;                       /* its mailbox publish this rank waits for is not there */
};

struct heap_ent {
    char *base;
    size_t size;
    uint64_t id;
    uint32_t idx;
};

struct tp_shm {
    struct ct_tp base;
    uint64_t job, nonce;
    int mode; /* CT_WAIT_SPIN or CT_WAIT_BLOCK once resolved */
    struct ctl *ctl;
    size_t ctl_len;
    int ctl_named;
    uint64_t in_mask, in_stride, in_data, rdv_min;
    int *pidx; /* rank -> index in peers, -1 if not served */
    struct peer *peers;
    int npeers;
    struct heap_ent heap[MAX_OBJS];
    int nheap;
    uint64_t next_id;
    int moved;
    int unregistered; /* COLLTUNE_SHM_UNREGISTERED: alloc() gives private memory */
    uint64_t nt_min;  /* zero-copy receives this large stream their stores */
    uint64_t put_min; /* RDV messages above this are put by the sender; UINT64_MAX: never */
    uint64_t put_copy_min; /* the same for messages posted with CT_POST_COPY */
    unsigned idle;
    int64_t idle_start, last_live;
    int asym; /* the doorbell's fences are asymmetric (ring()) */
    uint64_t mseq; /* mailbox publishes posted */
};

static inline struct rq *RQ(struct ct_req *r)
{
    return (struct rq *)(void *)r->priv;
}

/* ---------------------------------------------------------------- names, helpers */

static void ctl_name(char *buf, size_t len, uint64_t job, int rank, uint64_t nonce)
{
    snprintf(buf, len, "/ct-%016" PRIx64 "-c%d-%" PRIx64, job, rank, nonce);
}

static void heap_name(char *buf, size_t len, uint64_t job, int rank, uint64_t nonce, uint64_t id)
{
    snprintf(buf, len, "/ct-%016" PRIx64 "-h%d-%" PRIx64 "-%" PRIu64, job, rank, nonce, id);
}

static const char *host_of(struct tp_shm *t, int rank)
{
    return t->base.boot && t->base.boot->hosts ? t->base.boot->hosts[rank] : "?";
}

static size_t page_round(size_t n)
{
    size_t pg = (size_t)sysconf(_SC_PAGESIZE);
    return (n + pg - 1) / pg * pg;
}

static inline struct slot *chan_slot(struct chan *c, uint64_t stride, uint64_t mask, uint64_t seq)
{
    return (struct slot *)((char *)c + sizeof(struct chan) + (seq & mask) * stride);
}

static inline struct fence *chan_fence(struct chan *c, uint64_t stride, uint64_t nslots)
{
    return (struct fence *)((char *)c + sizeof(struct chan) + nslots * stride);
}

static inline char *slot_data(struct slot *s)
{
    return (char *)s + sizeof *s;
}

/*
 * A put's edges: the bytes of a destination [dst, dst + len) that lie in its first and last
 * lines where those lines are only partly the message's. Another writer may own the rest of
 * such a line (AllGather's block of the neighbour, or the receiver's own block), so a put
 * leaves them to the receiver, which writes them from the announcing slot: a line written
 * from two cores moves between them on every iteration, on the critical path of both (2
 * ranks, AllGather ring at 15,424 B: 0.98 us with the edges put, 0.70 without, as at
 * 15,360 B). The offset is the same in both address spaces (objects are mapped at page
 * boundaries). len is above put_min, at least a line, so head + tail <= len.
 */
struct edges {
    uint64_t head, tail;
};
static inline struct edges put_edges(uintptr_t dst, uint64_t len)
{
    uint64_t head = (LINE - (dst & (LINE - 1))) & (LINE - 1);
    return (struct edges){head, (dst + len) & (LINE - 1)};
}
/* Where a slot keeps a put's edge bytes: in its header line when they fit, else its data. */
static inline bool edges_in_data(struct edges e)
{
    return e.head + e.tail > INLINE_MAX;
}
static inline unsigned char *edge_bytes(struct slot *s, struct edges e)
{
    return edges_in_data(e) ? (unsigned char *)slot_data(s) : s->u.inl;
}

static struct chan *ctl_chan(struct ctl *c, int l)
{
    return (struct chan *)((char *)c + c->chan_off + (size_t)l * c->chan_bytes);
}

static long futex(_Atomic uint32_t *w, int op, uint32_t val, const struct timespec *ts)
{
    return syscall(SYS_futex, (uint32_t *)w, op, val, ts, NULL, 0);
}

static long membarrier(int cmd)
{
    return syscall(SYS_membarrier, cmd, 0, 0);
}

/*
 * Wake the owner of c if it advertised it sleeps. Call after publishing: a Dekker pair with
 * shm_wait, which sets `sleeping` and then re-checks what was published. Symmetric: a full
 * fence on both sides. Asymmetric (t->asym, every rank of the job spins and registered for
 * membarrier): the poster orders with the compiler only, and a waiter about to sleep has the
 * kernel run a full barrier on every CPU that runs a registered process
 * (MEMBARRIER_CMD_GLOBAL_EXPEDITED), the rare side paying for the frequent one. The poster's
 * fence waited for its slot store, whose line the peer had last read, to cross back from the
 * peer's core on every message.
 */
static inline void ring_fence(const struct tp_shm *t)
{
    if (t->asym)
        atomic_signal_fence(memory_order_seq_cst);
    else
        atomic_thread_fence(memory_order_seq_cst);
}

static inline void wake_if_sleeping(struct ctl *c)
{
    if (atomic_load_explicit(&c->sleeping, memory_order_relaxed)) {
        atomic_fetch_add_explicit(&c->doorbell, 1, memory_order_release);
        futex(&c->doorbell, FUTEX_WAKE, 1, NULL);
    }
}

static inline void ring(const struct tp_shm *t, struct ctl *c)
{
    ring_fence(t);
    wake_if_sleeping(c);
}

static int peer_error(struct tp_shm *t, struct peer *p, struct ct_err *err)
{
    const char *h = host_of(t, p->rank);
    switch (p->state) {
    case P_EXITED:
        return ct_err_set(err, CT_EPEER, "peer rank %d (%s): process %d exited", p->rank, h,
                          (int)p->pid);
    case P_REJECTED:
        return ct_err_set(err, CT_EPEER,
                          "peer rank %d (%s): rejected a message (length does not match its "
                          "receive)",
                          p->rank, h);
    case P_MISMATCH:
        return ct_err_set(err, CT_EPEER,
                          "peer rank %d (%s): message of %" PRIu64 " bytes does not match the "
                          "posted receive of %" PRIu64 " bytes",
                          p->rank, h, p->bad_got, p->bad_want);
    case P_GARBAGE:
        return ct_err_set(err, CT_EPEER, "peer rank %d (%s): corrupt message slot", p->rank, h);
    default:
        return ct_err_set(err, CT_EPEER, "peer rank %d (%s): cannot map its buffer", p->rank, h);
    }
}

static bool proc_alive(struct peer *p)
{
    if (p->pidfd >= 0) {
        struct pollfd pfd = {.fd = p->pidfd, .events = POLLIN};
        return poll(&pfd, 1, 0) == 0;
    }
    if (kill(p->pid, 0) < 0 && errno == ESRCH)
        return false;
    /* a zombie still answers kill(); look at its state */
    char st = ct_proc_state((int)p->pid);
    return st != 0 && st != 'Z' && st != 'X';
}

static inline bool pending(const struct peer *p)
{
    return p->sq_head || p->rq_head || p->fwait || p->mwait;
}

/* The peer's mailbox publish of this rank's last ordinal is there (*inl, unless NULL: in its
 * first line). */
static inline bool mbox_met(const struct tp_shm *t, const struct peer *p, bool *inl)
{
    uint64_t v = atomic_load_explicit(&p->ctl->box[t->mseq & 1].seq, memory_order_acquire);
    if (inl)
        *inl = v & 1;
    return v >> 1 == t->mseq;
}

/* The peer has posted the fence this rank waits for. */
static inline bool fence_met(const struct peer *p)
{
    return atomic_load_explicit(&p->fin_line->count, memory_order_acquire) >= p->fout;
}

/* Liveness of peers we wait on; a receiver's rejection of our message. */
static int check_peers(struct tp_shm *t, struct ct_err *err)
{
    for (int i = 0; i < t->npeers; i++) {
        struct peer *p = &t->peers[i];
        if (!pending(p))
            continue;
        if (p->state == P_OK && atomic_load_explicit(&p->out->bad, memory_order_acquire))
            p->state = P_REJECTED;
        if (p->state == P_OK && !proc_alive(p)) {
            /* what it published before it exited is still delivered: a receive whose
             * message is in the channel completes at the next progress, and only what stays
             * pending after that is the peer's death */
            const struct slot *sl = chan_slot(p->in, t->in_stride, t->in_mask, p->rseq);
            if (p->rq_head && atomic_load_explicit(&sl->seq, memory_order_acquire) == p->rseq + 1)
                continue;
            if (p->fwait && !p->sq_head && !p->rq_head && fence_met(p))
                continue;
            if (p->mwait && !p->fwait && !p->sq_head && !p->rq_head && mbox_met(t, p, NULL))
                continue;
            p->state = P_EXITED;
        }
        if (p->state != P_OK)
            return peer_error(t, p, err);
    }
    return 0;
}

/* ---------------------------------------------------------------- symmetric heap */

static const struct heap_ent *heap_find(const struct tp_shm *t, const void *buf, size_t len)
{
    uintptr_t a = (uintptr_t)buf;
    for (int i = 0; i < t->nheap; i++) {
        uintptr_t b = (uintptr_t)t->heap[i].base;
        if (a >= b && a - b <= t->heap[i].size && len <= t->heap[i].size - (a - b))
            return &t->heap[i];
    }
    return NULL;
}

static void *shm_alloc(struct ct_tp *tp, size_t bytes, struct ct_err *err)
{
    struct tp_shm *t = (struct tp_shm *)tp;
    if (t->unregistered) {
        /* private memory: every message takes the copy path through the slots */
        void *m = mmap(NULL, page_round(bytes ? bytes : 1), PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m == MAP_FAILED) {
            ct_err_sys(err, CT_ENOMEM, "shm: cannot allocate %zu bytes", bytes);
            return NULL;
        }
        return m;
    }
    uint32_t idx = 0;
    while (idx < MAX_OBJS && atomic_load_explicit(&t->ctl->objs[idx].id, memory_order_relaxed))
        idx++;
    if (idx == MAX_OBJS || t->nheap == MAX_OBJS) {
        ct_err_set(err, CT_ENOMEM, "shm: more than %d shared buffers", MAX_OBJS);
        return NULL;
    }
    uint64_t id = ++t->next_id;
    size_t size = page_round(bytes ? bytes : 1);
    char name[128];
    heap_name(name, sizeof name, t->job, tp->rank, t->nonce, id);
    int fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
    if (fd < 0) {
        ct_err_sys(err, CT_ENOMEM, "shm: cannot create '%s'", name);
        return NULL;
    }
    ct_shm_own_add(name);
    int e = posix_fallocate(fd, 0, (off_t)size);
    void *p = MAP_FAILED;
    /* the pages exist (fallocate): mapped in one pass, not one fault each (a fresh 256 MiB
     * buffer took 0.43 s to map and touch so, 0.79 s by faults, on a 2-core VM) */
    if (e == 0)
        p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
    else
        errno = e;
    if (p == MAP_FAILED) {
        ct_err_sys(err, CT_ENOMEM, "shm: cannot allocate %zu shared bytes", bytes);
        close(fd);
        ct_shm_own_unlink(name);
        return NULL;
    }
    close(fd);
    struct heap_ent *h = &t->heap[t->nheap++];
    h->base = p;
    h->size = size;
    h->id = id;
    h->idx = idx;
    t->ctl->objs[idx].size = size;
    atomic_store_explicit(&t->ctl->objs[idx].id, id, memory_order_release);
    return p;
}

static void heap_release(struct tp_shm *t, int i)
{
    struct heap_ent *h = &t->heap[i];
    char name[128];
    heap_name(name, sizeof name, t->job, t->base.rank, t->nonce, h->id);
    munmap(h->base, h->size);
    ct_shm_own_unlink(name);
    atomic_store_explicit(&t->ctl->objs[h->idx].id, 0, memory_order_release);
    atomic_fetch_add_explicit(&t->ctl->free_epoch, 1, memory_order_release);
    t->heap[i] = t->heap[--t->nheap];
}

static void shm_free(struct ct_tp *tp, void *p, size_t bytes)
{
    struct tp_shm *t = (struct tp_shm *)tp;
    for (int i = 0; p && i < t->nheap; i++)
        if (t->heap[i].base == p) {
            heap_release(t, i);
            return;
        }
    if (p && t->unregistered)
        munmap(p, page_round(bytes ? bytes : 1));
}

static void unmap_one(struct peer *p, struct map *m)
{
    if (m->base)
        munmap(m->base, m->size);
    p->spans -= m->hi - m->lo;
    m->lo = m->hi = 0;
    m->base = NULL;
    m->id = 0;
}

static void unmap_peer_heap(struct peer *p, bool only_dead)
{
    if (!p->maps)
        return;
    for (int i = 0; i < MAX_OBJS; i++) {
        struct map *m = &p->maps[i];
        if (!m->base)
            continue;
        if (only_dead && atomic_load_explicit(&p->ctl->objs[i].id, memory_order_acquire) == m->id)
            continue;
        unmap_one(p, m);
    }
}

/* Bytes of one of the peer's heap objects (a RDV slot's source, a clear-to-send's
 * destination), mapped read-write on first use and cached. */
static char *peer_obj(struct tp_shm *t, struct peer *p, uint32_t idx, uint64_t id, uint64_t off,
                      uint64_t size, uint64_t len)
{
    if (idx >= MAX_OBJS || !id || off > size || len > size - off)
        return NULL;
    if (!p->maps)
        p->maps = ct_xcalloc(MAX_OBJS, sizeof *p->maps);
    uint64_t ep = atomic_load_explicit(&p->ctl->free_epoch, memory_order_acquire);
    if (ep != p->map_epoch) {
        unmap_peer_heap(p, true);
        p->map_epoch = ep;
    }
    struct map *m = &p->maps[idx];
    if (m->id != id || m->size != size) {
        unmap_one(p, m);
        char name[128];
        heap_name(name, sizeof name, t->job, p->rank, p->nonce, id);
        int fd = shm_open(name, O_RDWR, 0);
        if (fd < 0)
            return NULL;
        struct stat st;
        void *b = MAP_FAILED;
        /* pages come in as touched: a rank's RSS holds only the peer bytes it reads or puts;
         * a rank that keeps every peer buffer (map_bufs > 1: a sweep) maps them in one pass
         * (puts into a fresh 256 MiB mapping took 0.33 s so, 0.71 s by faults, on a 2-core
         * VM) */
        int pop = p->map_bufs > 1 ? MAP_POPULATE : 0;
        if (fstat(fd, &st) == 0 && (uint64_t)st.st_size >= size)
            b = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | pop, fd, 0);
        close(fd);
        if (b == MAP_FAILED)
            return NULL;
        m->base = b;
        m->id = id;
        m->size = size;
        m->lo = m->hi = 0;
    }
    return (char *)m->base + off;
}

/* ---------------------------------------------------------------- data path */

/*
 * Bound the peer pages this rank maps in: pages of a peer's buffer read in place count in this
 * rank's resident set, so once the bytes read from the peer's buffers (per buffer, the span
 * read since its pages were last dropped) exceed the largest such buffer (map_bufs of them,
 * ct_tp_cfg) plus MAP_SLACK, the
 * least recently read buffers drop their pages (MADV_DONTNEED: only this process's mapping; the
 * bytes stay in the peer's object, a later read maps them again). A job that keeps reading the
 * same buffers keeps them mapped; one that moves on to other buffers (out of place, then in
 * place) does not accumulate them.
 */
static void note_read(struct peer *p, uint32_t idx, uint64_t off, uint64_t len)
{
    struct map *m = &p->maps[idx];
    m->used = ++p->tick;
    uint64_t before = m->hi - m->lo;
    if (m->lo == m->hi) {
        m->lo = off;
        m->hi = off + len;
    } else {
        m->lo = off < m->lo ? off : m->lo;
        m->hi = off + len > m->hi ? off + len : m->hi;
    }
    p->spans += m->hi - m->lo - before;
    p->largest = m->size > p->largest ? m->size : p->largest;
    while (p->spans > p->map_bufs * p->largest + MAP_SLACK) {
        struct map *old = NULL;
        for (int i = 0; i < MAX_OBJS; i++) {
            struct map *x = &p->maps[i];
            if (x->base && x != m && x->lo != x->hi && (!old || x->used < old->used))
                old = x;
        }
        if (!old)
            return;
        madvise(old->base, old->size, MADV_DONTNEED);
        p->spans -= old->hi - old->lo;
        old->lo = old->hi = 0;
    }
}

/*
 * A send that waits for its clear-to-send (a slot is free): < 0 while it has not come;
 * otherwise the send becomes a PUT, its bytes copied into the receiver's buffer, or stays
 * RDV when the receiver's destination is not in the heap or does not have the send's length
 * (the receiver then reports the mismatch).
 */
static int put_now(struct tp_shm *t, struct peer *p, struct rq *r)
{
    const struct cts *c = &p->out->cts[r->ord % CTS_N];
    if (atomic_load_explicit(&c->seq, memory_order_acquire) != r->ord + 1)
        return -1;
    if (c->obj_idx == NO_OBJ || c->len != r->len) {
        r->put = 0;
        return 0;
    }
    char *dst = peer_obj(t, p, c->obj_idx, c->obj_id, c->offset, c->obj_size, r->len);
    if (!dst) {
        p->state = P_MAPFAIL;
        return -1;
    }
    r->put = 0;
    struct edges e = put_edges((uintptr_t)dst, r->len);
    uint64_t mid = r->len - e.head - e.tail;
    if (r->len >= t->nt_min)
        ct_copy_nt(dst + e.head, r->b.sbuf + e.head, mid);
    else
        ct_copy(dst + e.head, r->b.sbuf + e.head, mid);
    r->a.offset = c->offset; /* the edges follow in the slot (post_sends) */
    note_read(p, c->obj_idx, c->offset, r->len);
    r->c.kind = K_PUT;
    return 0;
}

/* Copy queued sends into free slots. Returns slots published. */
static int post_sends(struct tp_shm *t, struct peer *p)
{
    int posted = 0;
    struct ct_req *req;
    while ((req = p->sq_post)) {
        if (p->sseq - p->stail > p->out_mask) {
            p->stail = atomic_load_explicit(&p->out->tail, memory_order_acquire);
            if (p->sseq - p->stail > p->out_mask)
                break;
        }
        struct rq *r = RQ(req);
        if (r->put && put_now(t, p, r) < 0)
            break;
        struct slot *s = chan_slot(p->out, p->out_stride, p->out_mask, p->sseq);
        uint32_t kind = (uint32_t)(r->c.kind & 0xff);
        s->kind = kind;
        s->msg_len = r->len;
        if (kind == K_EAGER) {
            if (r->len)
                memcpy(r->len <= INLINE_MAX ? (char *)s->u.inl : slot_data(s), r->b.sbuf, r->len);
            r->done_bytes = r->len;
        } else if (kind == K_RDV) {
            const struct obj_ent *o = &t->ctl->objs[r->c.kind >> 8];
            s->obj_idx = (uint32_t)(r->c.kind >> 8);
            s->u.rdv.obj_id = atomic_load_explicit(&o->id, memory_order_relaxed);
            s->u.rdv.offset = r->a.offset;
            s->u.rdv.obj_size = o->size;
            r->a.ack = p->sseq + 1;
            r->done_bytes = r->len;
        } else if (kind == K_PUT) {
            struct edges e = put_edges((uintptr_t)r->a.offset, r->len);
            unsigned char *eb = edge_bytes(s, e);
            memcpy(eb, r->b.sbuf, e.head);
            memcpy(eb + e.head, r->b.sbuf + r->len - e.tail, e.tail);
            r->done_bytes = r->len;
        } else {
            uint64_t n = r->len - r->done_bytes;
            if (n > p->out_data)
                n = p->out_data;
            ct_copy(slot_data(s), r->b.sbuf + r->done_bytes, n);
            r->done_bytes += n;
        }
        atomic_store_explicit(&s->seq, p->sseq + 1, memory_order_release);
        p->sseq++;
        posted++;
        if (r->done_bytes == r->len)
            p->sq_post = r->next;
    }
    if (posted)
        ring(t, p->ctl);
    return posted;
}

/* Complete sends in FIFO order: posted ones, and RDV ones once acknowledged. */
static int complete_sends(struct peer *p)
{
    int n = 0;
    struct ct_req *req;
    while ((req = p->sq_head) && req != p->sq_post) {
        struct rq *r = RQ(req);
        if ((r->c.kind & 0xff) == K_RDV && p->stail < r->a.ack) {
            p->stail = atomic_load_explicit(&p->out->tail, memory_order_acquire);
            if (p->stail < r->a.ack)
                break;
        }
        p->sq_head = r->next;
        if (!p->sq_head)
            p->sq_tail = NULL;
        req->status = 0;
        req->done = 1;
        n++;
    }
    return n;
}

/* nt: stream the result out (destinations far larger than the caches) */
static inline void deliver(struct rq *r, uint64_t off, const void *data, uint64_t n, bool nt)
{
    if (!n)
        return;
    if (nt && r->c.red)
        ct_reduce_nt(r->c.red, r->b.dst + off, r->a.src + off, data, n);
    else if (nt)
        ct_copy_nt(r->b.dst + off, data, n);
    else if (r->c.red)
        r->c.red->fn(r->b.dst + off, r->a.src + off, data,
                     n >> __builtin_ctzll(r->c.red->esize)); /* esize: a power of two */
    else
        ct_copy(r->b.dst + off, data, n);
}

/*
 * Advertise posted receives above put_min, in order, as far as their lines are free: receive
 * k reuses the line of receive k - CTS_N, which its sender stopped reading before it
 * published that message.
 */
static void post_cts(struct tp_shm *t, struct peer *p)
{
    int n = 0;
    struct ct_req *req;
    while ((req = p->cts_next)) {
        struct rq *r = RQ(req);
        if (r->put == 3) {
            if (r->ord >= p->rdone + CTS_N)
                break;
            struct cts *c = &p->in->cts[r->ord % CTS_N];
            const struct heap_ent *h = r->c.red ? NULL : heap_find(t, r->b.dst, r->len);
            c->obj_idx = h ? h->idx : NO_OBJ;
            c->obj_id = h ? h->id : 0;
            c->offset = h ? (uint64_t)(r->b.dst - h->base) : 0;
            c->obj_size = h ? h->size : 0;
            c->len = r->len;
            atomic_store_explicit(&c->seq, r->ord + 1, memory_order_release);
            r->put = h ? 1 : 2;
            n++;
        }
        p->cts_next = r->next;
    }
    if (n)
        ring(t, p->ctl);
}

/* Match arrived slots to posted receives in order. Adds completions to *ndone. */
static int recv_progress(struct tp_shm *t, struct peer *p, int *ndone, struct ct_err *err)
{
    int consumed = 0, rc = 0;
    struct ct_req *req;
    while ((req = p->rq_head)) {
        struct slot *s = chan_slot(p->in, t->in_stride, t->in_mask, p->rseq);
        struct rq *r = RQ(req);
        /* A small message's data lines, requested together with the flag line: the sender
         * wrote them first, so when the flag shows up they are on their way already rather
         * than a second cross-core transfer after it (the data is still read after the flag) */
        if (r->len > INLINE_MAX && r->len <= PREFETCH_MAX)
            for (uint64_t o = 0; o < r->len; o += LINE)
                __builtin_prefetch(slot_data(s) + o, 0, 3);
        else if (r->put == 1 && edges_in_data(put_edges((uintptr_t)r->b.dst, r->len)))
            for (uint64_t o = 0; o < 2 * LINE; o += LINE) /* a put's edge bytes */
                __builtin_prefetch(slot_data(s) + o, 0, 3);
        if (atomic_load_explicit(&s->seq, memory_order_acquire) != p->rseq + 1)
            break;
        if (r->done_bytes == 0 && s->msg_len != r->len) {
            p->state = P_MISMATCH;
            p->bad_got = s->msg_len;
            p->bad_want = r->len;
            atomic_store_explicit(&p->in->bad, 1, memory_order_release);
            ring(t, p->ctl);
            rc = peer_error(t, p, err);
            break;
        }
        if (s->kind == K_EAGER && r->len <= t->in_data) {
            deliver(r, 0, r->len <= INLINE_MAX ? (const char *)s->u.inl : slot_data(s), r->len,
                    false);
            r->done_bytes = r->len;
        } else if (s->kind == K_RDV) {
            const char *src = peer_obj(t, p, s->obj_idx, s->u.rdv.obj_id, s->u.rdv.offset,
                                       s->u.rdv.obj_size, s->msg_len);
            if (!src) {
                p->state = P_MAPFAIL;
                rc = peer_error(t, p, err);
                break;
            }
            /* the message's size, not its buffer's: a small message in a large buffer (a
             * sweep's buffers are sized for its largest point) must stay in the caches
             * (streamed, 8 KiB took 1.97 us instead of 0.74) */
            deliver(r, 0, src, r->len, r->len >= t->nt_min);
            r->done_bytes = r->len;
            note_read(p, s->obj_idx, s->u.rdv.offset, r->len);
        } else if (s->kind == K_PUT && r->put == 1) {
            /* the sender wrote it in place, all but its edges */
            struct edges e = put_edges((uintptr_t)r->b.dst, r->len);
            const unsigned char *eb = edge_bytes(s, e);
            memcpy(r->b.dst, eb, e.head);
            memcpy(r->b.dst + r->len - e.tail, eb + e.head, e.tail);
            r->done_bytes = r->len;
        } else if (s->kind == K_FRAG && r->len > r->done_bytes) {
            uint64_t n = r->len - r->done_bytes;
            if (n > t->in_data)
                n = t->in_data;
            deliver(r, r->done_bytes, slot_data(s), n, false);
            r->done_bytes += n;
        } else {
            p->state = P_GARBAGE;
            rc = peer_error(t, p, err);
            break;
        }
        p->rseq++;
        atomic_store_explicit(&p->in->tail, p->rseq, memory_order_release);
        consumed++;
        if (r->done_bytes == r->len) {
            p->rq_head = r->next;
            if (!p->rq_head)
                p->rq_tail = NULL;
            if (p->cts_next == req)
                p->cts_next = r->next;
            p->rdone++;
            req->status = 0;
            req->done = 1;
            (*ndone)++;
        }
    }
    if (consumed)
        ring(t, p->ctl);
    if (p->cts_next && rc == 0)
        post_cts(t, p);
    return rc;
}

static struct peer *get_peer(struct tp_shm *t, int rank)
{
    if (rank < 0 || rank >= t->base.size || t->pidx[rank] < 0)
        return NULL;
    return &t->peers[t->pidx[rank]];
}

static int no_peer(struct tp_shm *t, int rank, struct ct_err *err)
{
    return ct_err_set(err, CT_EINVAL, "shm: rank %d is not a peer of this endpoint (rank %d)", rank,
                      t->base.rank);
}

/* The peer posts go to: served by this endpoint and not failed. */
static int live_peer(struct tp_shm *t, int rank, struct peer **out, struct ct_err *err)
{
    struct peer *p = *out = get_peer(t, rank);
    if (!p)
        return no_peer(t, rank, err);
    return p->state == P_OK ? 0 : peer_error(t, p, err);
}

/* The size above which a message posted with these flags is put (both ends use it). A
 * message put below rdv_min that cannot be (the receiver reduces or its destination is not
 * in the heap) goes eager. */
static inline uint64_t put_min_of(const struct tp_shm *t, unsigned flags)
{
    if (!(flags & CT_POST_DIRECT))
        return UINT64_MAX;
    return flags & CT_POST_COPY ? t->put_copy_min : t->put_min;
}

static int shm_isend(struct ct_tp *tp, int peer, const void *buf, size_t len, struct ct_req *req,
                     struct ct_err *err)
{
    struct tp_shm *t = (struct tp_shm *)tp;
    struct peer *p;
    CT_TRY(live_peer(t, peer, &p, err));
    struct rq *r = RQ(req);
    req->done = 0;
    req->status = 0;
    r->next = NULL;
    r->b.sbuf = buf;
    r->len = len;
    r->done_bytes = 0;
    uint64_t put_min = put_min_of(t, tp->post_flags);
    const struct heap_ent *h = len > t->rdv_min || len > put_min ? heap_find(t, buf, len) : NULL;
    r->ord = p->smsg++;
    r->put = h && len > put_min;
    if (h && len > t->rdv_min) {
        r->c.kind = K_RDV | (uintptr_t)h->idx << 8;
        r->a.offset = (uint64_t)((uintptr_t)buf - (uintptr_t)h->base);
    } else {
        r->c.kind = len <= p->out_data ? K_EAGER : K_FRAG;
    }
    if (p->sq_tail)
        RQ(p->sq_tail)->next = req;
    else
        p->sq_head = req;
    p->sq_tail = req;
    if (!p->sq_post) {
        p->sq_post = req;
        post_sends(t, p);
        if (complete_sends(p))
            t->moved = 1;
    }
    return 0;
}

static int shm_irecv(struct ct_tp *tp, int peer, void *dst, const void *src, size_t len,
                     const struct ct_red *red, struct ct_req *req, struct ct_err *err)
{
    struct tp_shm *t = (struct tp_shm *)tp;
    struct peer *p;
    CT_TRY(live_peer(t, peer, &p, err));
    /* elements of a power-of-two size up to a line (no division on the latency path) */
    if (red && (!red->fn || !red->esize || red->esize > LINE || (red->esize & (red->esize - 1)) ||
                (len & (red->esize - 1))))
        return ct_err_set(err, CT_EINVAL,
                          "shm: reduction of %zu bytes in elements of %zu bytes is not supported",
                          len, red ? red->esize : 0);
    struct rq *r = RQ(req);
    req->done = 0;
    req->status = 0;
    r->next = NULL;
    r->b.dst = dst;
    r->a.src = src;
    r->c.red = red;
    r->len = len;
    r->done_bytes = 0;
    r->ord = p->rposted++;
    r->put = len > put_min_of(t, tp->post_flags) ? 3 : 0;
    if (p->rq_tail)
        RQ(p->rq_tail)->next = req;
    else
        p->rq_head = req;
    p->rq_tail = req;
    if (r->put) {
        if (!p->cts_next)
            p->cts_next = req;
        post_cts(t, p);
    }
    if (p->rq_head == req) {
        int n = 0;
        CT_TRY(recv_progress(t, p, &n, err));
        if (n)
            t->moved = 1;
    }
    return 0;
}

static int shm_progress(struct ct_tp *tp, struct ct_err *err)
{
    struct tp_shm *t = (struct tp_shm *)tp;
    int done = 0;
    for (int i = 0; i < t->npeers; i++) {
        struct peer *p = &t->peers[i];
        if (p->sq_head) {
            if (p->sq_post)
                post_sends(t, p);
            done += complete_sends(p);
        }
        if (p->rq_head)
            CT_TRY(recv_progress(t, p, &done, err));
        if (p->state != P_OK && pending(p))
            return peer_error(t, p, err);
    }
    if (done) {
        t->moved = 1;
        t->idle = 0;
        return done;
    }
    if ((++t->idle & IDLE_MASK) == 0) {
        int64_t now = ct_now_ns();
        if (now - t->last_live >= LIVE_NS) {
            t->last_live = now;
            CT_TRY(check_peers(t, err));
        }
    }
    return 0;
}

/* Whether progress() has anything to do (also refreshes cached tails). */
static bool any_ready(struct tp_shm *t)
{
    for (int i = 0; i < t->npeers; i++) {
        struct peer *p = &t->peers[i];
        if (p->state != P_OK)
            return true;
        if (p->fwait && fence_met(p))
            return true;
        if (p->mwait && mbox_met(t, p, NULL))
            return true;
        if (p->rq_head) {
            struct slot *s = chan_slot(p->in, t->in_stride, t->in_mask, p->rseq);
            if (atomic_load_explicit(&s->seq, memory_order_acquire) == p->rseq + 1)
                return true;
        }
        if (p->sq_head) {
            uint64_t tail = atomic_load_explicit(&p->out->tail, memory_order_acquire);
            if (tail != p->stail) {
                p->stail = tail;
                return true;
            }
            const struct rq *r = p->sq_post ? RQ(p->sq_post) : NULL;
            if (r && r->put &&
                atomic_load_explicit(&p->out->cts[r->ord % CTS_N].seq, memory_order_acquire) ==
                    r->ord + 1)
                return true;
        }
    }
    return false;
}

static int shm_wait(struct ct_tp *tp, int64_t timeout_ns, struct ct_err *err)
{
    struct tp_shm *t = (struct tp_shm *)tp;
    int64_t now = ct_now_ns();
    if (t->moved) {
        t->moved = 0;
        t->idle_start = now;
    }
    if (now - t->last_live >= LIVE_NS) {
        t->last_live = now;
        CT_TRY(check_peers(t, err));
    }
    if (t->mode == CT_WAIT_SPIN && now - t->idle_start < SPIN_IDLE_NS) {
        ct_cpu_relax();
        return 0;
    }
    if (timeout_ns <= 0)
        return 0;
    int64_t ns = timeout_ns < LIVE_NS ? timeout_ns : LIVE_NS;
    struct timespec ts = {(time_t)(ns / 1000000000LL), (long)(ns % 1000000000LL)};
    uint32_t v = atomic_load_explicit(&t->ctl->doorbell, memory_order_acquire);
    atomic_store_explicit(&t->ctl->sleeping, 1, memory_order_relaxed);
    /* registered at open, it does not fail; if it did, a poster might miss the flag: spin */
    bool ordered = true;
    if (t->asym)
        ordered = membarrier(MEMBARRIER_CMD_GLOBAL_EXPEDITED) == 0;
    else
        atomic_thread_fence(memory_order_seq_cst);
    if (ordered && !any_ready(t))
        futex(&t->ctl->doorbell, FUTEX_WAIT, v, &ts);
    atomic_store_explicit(&t->ctl->sleeping, 0, memory_order_relaxed);
    return 0;
}

/* ---------------------------------------------------------------- fences */

static int shm_fence_post(struct ct_tp *tp, int peer, void *const bufs[], int n, struct ct_err *err)
{
    struct tp_shm *t = (struct tp_shm *)tp;
    struct peer *p;
    CT_TRY(live_peer(t, peer, &p, err));
    struct fence *f = p->fout_line;
    p->fout++;
    struct fdesc *d = f->d[p->fout & 1];
    for (int i = 0; i < CT_FENCE_BUFS; i++) {
        /* a byte's length: a pointer at the end of one object may be the start of the next */
        const struct heap_ent *h = i < n && bufs[i] ? heap_find(t, bufs[i], 1) : NULL;
        struct fdesc nd = {.obj_idx = h ? h->idx : NO_OBJ,
                           .obj_id = h ? h->id : 0,
                           .offset = h ? (uint64_t)((const char *)bufs[i] - h->base) : 0,
                           .obj_size = h ? h->size : 0};
        /* written only when it changed: a store to these lines, which the peer read at the
         * fence before last, sends them back across cores when the peer reads them after the
         * count, a second wait on every fence (2 ranks, symm AllReduce, 3 alternating runs:
         * 8 B 0.87-0.89 us -> 0.63-0.66, 32 KiB 1.15-1.17 -> 0.94-0.96) */
        if (memcmp(&d[i], &nd, sizeof nd))
            d[i] = nd;
    }
    atomic_store_explicit(&f->count, p->fout, memory_order_release);
    ring(t, p->ctl);
    p->fwait = 1;
    return 0;
}

static int shm_fence_test(struct ct_tp *tp, int peer, struct ct_err *err)
{
    struct tp_shm *t = (struct tp_shm *)tp;
    struct peer *p = get_peer(t, peer);
    if (!p)
        return no_peer(t, peer, err);
    if (!p->fwait)
        return 1;
    if (!fence_met(p))
        return p->state == P_OK ? 0 : peer_error(t, p, err);
    memcpy(p->fin, p->fin_line->d[p->fout & 1], sizeof p->fin);
    p->fwait = 0;
    t->moved = 1;
    return 1;
}

static void *shm_peer_addr(struct ct_tp *tp, int peer, int i, uint64_t off, uint64_t len,
                           struct ct_err *err)
{
    struct tp_shm *t = (struct tp_shm *)tp;
    struct peer *p = get_peer(t, peer);
    if (!p) {
        no_peer(t, peer, err);
        return NULL;
    }
    const struct fdesc *d = i >= 0 && i < CT_FENCE_BUFS ? &p->fin[i] : NULL;
    if (!d || d->obj_idx == NO_OBJ || d->offset > d->obj_size || off > d->obj_size - d->offset ||
        len > d->obj_size - d->offset - off) {
        ct_err_set(err, CT_EUNSUPP, "peer rank %d (%s): buffer %d is not in its shared heap",
                   p->rank, host_of(t, p->rank), i);
        return NULL;
    }
    char *a = peer_obj(t, p, d->obj_idx, d->obj_id, d->offset + off, d->obj_size, len);
    if (!a) {
        p->state = P_MAPFAIL;
        peer_error(t, p, err);
        return NULL;
    }
    note_read(p, d->obj_idx, d->offset + off, len);
    return a;
}

/* ---------------------------------------------------------------- mailbox */

static int shm_mbox_post(struct ct_tp *tp, const void *src, size_t len, struct ct_err *err)
{
    struct tp_shm *t = (struct tp_shm *)tp;
    if (len > CT_MBOX_MAX)
        return ct_err_set(err, CT_EINVAL, "shm: mailbox publish of %zu bytes (at most %u)", len,
                          CT_MBOX_MAX);
    uint64_t k = ++t->mseq;
    struct mbox *b = &t->ctl->box[k & 1];
    bool inl = len <= MBOX_INLINE;
    ct_copy_handoff(inl ? b->inl : b->data, src, len);
    atomic_store_explicit(&b->seq, k << 1 | inl, memory_order_release);
    ring_fence(t); /* one for every peer's doorbell */
    for (int i = 0; i < t->npeers; i++)
        wake_if_sleeping(t->peers[i].ctl);
    return 0;
}

static int shm_mbox_test(struct ct_tp *tp, int peer, size_t need, const void **data,
                         struct ct_err *err)
{
    struct tp_shm *t = (struct tp_shm *)tp;
    struct peer *p = get_peer(t, peer);
    if (!p)
        return no_peer(t, peer, err);
    /* a larger publish's lines, requested with its first: its sequence number is written
     * after them, so when it shows they are most likely on their way already, not a second
     * cross-core transfer after it */
    const struct mbox *b = &p->ctl->box[t->mseq & 1];
    if (need > MBOX_INLINE)
        for (size_t o = 0; o < need && o < MBOX_PREFETCH; o += LINE)
            __builtin_prefetch(b->data + o, 0, 3);
    bool inl;
    if (!mbox_met(t, p, &inl)) {
        p->mwait = 1;
        return p->state == P_OK ? 0 : peer_error(t, p, err);
    }
    p->mwait = 0;
    t->moved = 1;
    *data = inl ? b->inl : b->data;
    return 1;
}

static bool shm_published(struct ct_tp *tp, const void *buf, size_t len)
{
    return heap_find((const struct tp_shm *)tp, buf, len) != NULL;
}

static int shm_pending_peers(struct ct_tp *tp, int *peers, int max)
{
    struct tp_shm *t = (struct tp_shm *)tp;
    int n = 0;
    for (int i = 0; i < t->npeers && n < max; i++)
        if (pending(&t->peers[i]))
            peers[n++] = t->peers[i].rank;
    return n;
}

/* ---------------------------------------------------------------- open / close */

static void shm_close(struct ct_tp *tp)
{
    struct tp_shm *t = (struct tp_shm *)tp;
    if (!t)
        return;
    for (int i = 0; i < t->npeers; i++) {
        struct peer *p = &t->peers[i];
        if (p->ctl) {
            unmap_peer_heap(p, false);
            munmap(p->ctl, p->ctl_len);
        }
        free(p->maps);
        if (p->pidfd >= 0)
            close(p->pidfd);
    }
    while (t->nheap)
        heap_release(t, t->nheap - 1);
    if (t->ctl) {
        munmap(t->ctl, t->ctl_len);
        if (t->ctl_named) {
            char name[128];
            ctl_name(name, sizeof name, t->job, tp->rank, t->nonce);
            ct_shm_own_unlink(name);
        }
    }
    free(t->peers);
    free(t->pidx);
    free(t);
    ct_shm_own_stop();
}

/* Which ranks this endpoint serves; they must share this host. */
static int plan_peers(struct tp_shm *t, const struct ct_tp_cfg *cfg, struct ct_err *err)
{
    struct ct_boot *b = t->base.boot;
    t->pidx = ct_xmalloc(sizeof(int) * (size_t)b->size);
    t->peers = ct_xcalloc((size_t)b->size, sizeof *t->peers);
    int l = 0;
    for (int r = 0; r < b->size; r++) {
        t->pidx[r] = -1;
        int same = !strcmp(b->hosts[r], b->host);
        int lr = same ? l++ : -1;
        if (r == b->rank || (cfg && cfg->peers && !cfg->peers[r]))
            continue;
        if (!same)
            return ct_err_set(err, CT_EINVAL,
                              "shm: peer rank %d is on host '%s', not on this host '%s'", r,
                              b->hosts[r], b->host);
        struct peer *p = &t->peers[t->npeers];
        p->rank = r;
        p->lrank = lr;
        p->pidfd = -1;
        p->map_bufs = cfg && cfg->map_bufs > 1 ? (uint64_t)cfg->map_bufs : 1;
        t->pidx[r] = t->npeers++;
    }
    if (l != b->local_size)
        return ct_err_set(err, CT_EINVAL, "shm: inconsistent host table (%d local ranks, not %d)",
                          l, b->local_size);
    return 0;
}

/* A rank's channels object on a host of n ranks: its slots' data bytes, how many a channel
 * has, a channel's bytes, where the first starts, and the whole (total). */
struct layout {
    uint64_t data, nslots, chan_bytes, chan_off;
    size_t total;
};

static struct layout layout_of(size_t slot_bytes, int n)
{
    struct layout y;
    uint64_t data = slot_bytes ? slot_bytes : DEF_SLOT_DATA;
    data = data < MIN_SLOT_DATA ? MIN_SLOT_DATA : data > MAX_SLOT_DATA ? MAX_SLOT_DATA : data;
    y.data = (data + LINE - 1) / LINE * LINE;
    y.nslots = MIN_SLOTS;
    while (y.nslots < MAX_SLOTS && y.nslots * y.data < CHAN_TARGET)
        y.nslots <<= 1;
    y.chan_bytes =
        sizeof(struct chan) + y.nslots * (sizeof(struct slot) + y.data) + sizeof(struct fence);
    y.chan_off = page_round(sizeof(struct ctl));
    y.total = page_round(y.chan_off + y.chan_bytes * (uint64_t)n);
    return y;
}

int ct_shm_host_fits(int ranks, int group, struct ct_err *err)
{
    uint64_t each = layout_of(0, group).total, need = each * (uint64_t)ranks;
    unsigned long long room = ct_mem_available(), shm = 0;
    struct statvfs sv;
    if (statvfs("/dev/shm", &sv) == 0 && (shm = (unsigned long long)sv.f_bavail * sv.f_frsize) &&
        (!room || shm < room))
        room = shm;
    char a[32], b[32], c[32];
    /* a tenth left to the processes (a rank's own memory measured 1.5-1.6 MB at --local 4) */
    if (!room || need <= room / 10 * 9)
        return 0;
    return ct_err_set(err, CT_EUNSUPP,
                      "%d ranks meeting in shared memory need %s for their channels (%d x %s: "
                      "each rank's grows with the ranks it meets), more than the %s this host "
                      "has free in %s, less a tenth: fewer ranks (--local)",
                      ranks, ct_bytes_str(need, a, sizeof a), ranks,
                      ct_bytes_str(each, b, sizeof b), ct_bytes_str(room, c, sizeof c),
                      shm && room == shm ? "/dev/shm" : "memory");
}

static int create_ctl(struct tp_shm *t, const struct ct_tp_cfg *cfg, struct ct_err *err)
{
    struct ct_boot *b = t->base.boot;
    struct layout y = layout_of(cfg ? cfg->slot_bytes : 0, b->local_size);
    uint64_t data = y.data, nslots = y.nslots, chan_bytes = y.chan_bytes, chan_off = y.chan_off;
    size_t total = y.total;
    t->in_data = data;
    t->in_mask = nslots - 1;
    t->in_stride = sizeof(struct slot) + data;
    t->rdv_min = RDV_MIN < data ? RDV_MIN : data;

    char name[128];
    ctl_name(name, sizeof name, t->job, b->rank, t->nonce);
    int fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
    if (fd < 0)
        return ct_err_sys(err, CT_EIO, "shm: cannot create '%s'", name);
    t->ctl_named = 1;
    ct_shm_own_add(name);
    int e = posix_fallocate(fd, 0, (off_t)total);
    void *p = MAP_FAILED;
    if (e == 0)
        p = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    else
        errno = e;
    close(fd);
    if (p == MAP_FAILED)
        return ct_err_sys(err, CT_ENOMEM, "shm: cannot map %zu bytes of channels", total);
    t->ctl = p;
    t->ctl_len = total;
    struct ctl *c = t->ctl;
    c->rank = b->rank;
    c->pid = (int32_t)getpid();
    c->nchan = (uint32_t)b->local_size;
    c->nslots = (uint32_t)nslots;
    c->slot_data = data;
    c->stride = t->in_stride;
    c->chan_bytes = chan_bytes;
    c->chan_off = chan_off;
    c->total = total;
    c->magic = SHM_MAGIC;
    return 0;
}

struct hello {
    int32_t status;
    int32_t pid;
    uint64_t nonce;
    int32_t asym; /* this rank can take the asymmetric doorbell (ring()) */
    int32_t pad;
};

static int map_peers(struct tp_shm *t, const struct hello *all, struct ct_err *err)
{
    struct ct_boot *b = t->base.boot;
    for (int i = 0; i < t->npeers; i++) {
        struct peer *p = &t->peers[i];
        char name[128];
        p->pid = all[p->rank].pid;
        p->nonce = all[p->rank].nonce;
        ctl_name(name, sizeof name, t->job, p->rank, p->nonce);
        int fd = shm_open(name, O_RDWR, 0);
        if (fd < 0)
            return ct_err_sys(err, CT_EPEER, "shm: peer rank %d (%s): cannot open '%s'", p->rank,
                              host_of(t, p->rank), name);
        struct stat st;
        void *m = MAP_FAILED;
        if (fstat(fd, &st) == 0 && (size_t)st.st_size >= sizeof(struct ctl))
            m = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        close(fd);
        if (m == MAP_FAILED)
            return ct_err_sys(err, CT_EPEER, "shm: peer rank %d (%s): cannot map '%s'", p->rank,
                              host_of(t, p->rank), name);
        p->ctl = m;
        p->ctl_len = (size_t)st.st_size;
        struct ctl *c = p->ctl;
        if (c->magic != SHM_MAGIC || c->rank != p->rank || c->total > p->ctl_len ||
            c->nchan != (uint32_t)b->local_size || (c->nslots & (c->nslots - 1)) ||
            c->chan_off + (uint64_t)c->nchan * c->chan_bytes > c->total)
            return ct_err_set(err, CT_EPEER, "shm: peer rank %d (%s): foreign object '%s'", p->rank,
                              host_of(t, p->rank), name);
        p->out = ctl_chan(c, b->local_rank);
        p->out_mask = c->nslots - 1;
        p->out_stride = c->stride;
        p->out_data = c->slot_data;
        p->in = ctl_chan(t->ctl, p->lrank);
        p->fout_line = chan_fence(p->out, p->out_stride, p->out_mask + 1);
        p->fin_line = chan_fence(p->in, t->in_stride, t->in_mask + 1);
        p->pidfd = (int)syscall(SYS_pidfd_open, p->pid, 0);
    }
    return 0;
}

/* Read one byte of every page of [b, b + len). */
static void touch_pages(const void *b, size_t len)
{
    size_t pg = (size_t)sysconf(_SC_PAGESIZE);
    const volatile char *c = b, *end = c + len;
    for (const volatile char *q = c; q < end;
         q = (const volatile char *)(((uintptr_t)q | (pg - 1)) + 1))
        (void)*q;
}

/*
 * Each slot header sits on its own page, and the first access to a page of the mapping costs
 * 6-40 us on a VM (not the minor fault alone: MAP_POPULATE and MADV_POPULATE_WRITE left
 * 18-20 us a call), so a job's first laps of the 16 slots ran 30-100x slow: the first 8 calls
 * of simple-ring on 2 ranks took 28-66 us where later ones take 0.8, the first size of
 * `run -w 5 -n 5` read 30-130 us. Touched here once, both directions of every peer: the
 * control headers, each channel's header, every slot's header and eager bytes, its fence
 * (0.5-5 ms a rank at open; a fragment's further data pages are touched on first use).
 */
static void touch_channels(struct tp_shm *t)
{
    touch_pages(t->ctl, t->ctl->chan_off);
    for (int i = 0; i < t->npeers; i++) {
        struct peer *p = &t->peers[i];
        touch_pages(p->ctl, p->ctl->chan_off);
        struct chan *ch[2] = {p->in, p->out};
        uint64_t stride[2] = {t->in_stride, p->out_stride}, mask[2] = {t->in_mask, p->out_mask},
                 data[2] = {t->in_data, p->out_data};
        for (int d = 0; d < 2; d++) {
            touch_pages(ch[d], sizeof(struct chan));
            for (uint64_t k = 0; k <= mask[d]; k++)
                touch_pages(chan_slot(ch[d], stride[d], mask[d], k),
                            sizeof(struct slot) + (data[d] < RDV_MIN ? data[d] : RDV_MIN));
            touch_pages(chan_fence(ch[d], stride[d], mask[d] + 1), sizeof(struct fence));
        }
    }
}

/* Allgather each rank's status; the first failure (ours preferred) becomes the error. */
static int agree(struct tp_shm *t, int rc, struct hello *mine, struct hello *all,
                 struct ct_err *lerr, struct ct_err *err)
{
    struct ct_boot *b = t->base.boot;
    mine->status = rc;
    CT_TRY(ct_boot_allgather(b, mine, sizeof *mine, all, err));
    if (rc < 0) {
        if (err)
            *err = *lerr;
        return rc;
    }
    for (int r = 0; r < b->size; r++)
        if (all[r].status < 0)
            return ct_err_set(err, CT_EPEER, "shm: rank %d (%s) could not open its endpoint", r,
                              b->hosts[r]);
    t->asym = 1; /* only if every rank can: a symmetric waiter would not wake the others */
    for (int r = 0; r < b->size; r++)
        t->asym &= all[r].asym;
    return 0;
}

/*
 * The asymmetric doorbell is for spinning ranks, which rarely sleep (a sleeping rank pays a
 * membarrier); COLLTUNE_SHM_DOORBELL=fence keeps the full fences, for measuring. Every rank
 * of the job must register before any rank relies on it: the hello exchange follows.
 */
static int asym_ok(const struct tp_shm *t)
{
    const char *e = getenv("COLLTUNE_SHM_DOORBELL");
    if (t->mode != CT_WAIT_SPIN || (e && !strcmp(e, "fence")))
        return 0;
    long q = membarrier(MEMBARRIER_CMD_QUERY);
    return q > 0 && (q & MEMBARRIER_CMD_GLOBAL_EXPEDITED) &&
           membarrier(MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED) == 0;
}

static int shm_open_tp(struct ct_tp **out, const struct ct_tp_cfg *cfg, struct ct_boot *boot,
                       struct ct_err *err)
{
    struct tp_shm *t = ct_xcalloc(1, sizeof *t);
    t->base.ops = &ct_tp_shm_ops;
    t->base.rank = boot->rank;
    t->base.size = boot->size;
    t->base.boot = boot;
    t->job = boot->job_id;
    t->nonce = ((uint64_t)getpid() << 24) ^ (uint64_t)ct_now_ns() ^ (uintptr_t)t;
    ct_shm_own_start(); /* the objects it makes are removed however it ends */
    enum ct_wait_mode w = cfg ? cfg->wait : CT_WAIT_AUTO;
    if (w == CT_WAIT_AUTO)
        w = boot->host_size <= ct_cpus_host() ? CT_WAIT_SPIN : CT_WAIT_BLOCK;
    t->mode = w;
    const char *ur = getenv("COLLTUNE_SHM_UNREGISTERED");
    t->unregistered = ur && *ur && strcmp(ur, "0");
    const char *nt = getenv("COLLTUNE_SHM_NT_MIN"); /* bytes; for measuring the threshold */
    t->nt_min = nt && *nt ? strtoull(nt, NULL, 0) : RDV_NT_MIN;
    /* every rank of a job reads the same environment, so both ends agree */
    const char *pm = getenv("COLLTUNE_SHM_PUT_MIN"); /* bytes; "off": never put */
    t->put_min = pm && !strcmp(pm, "off") ? UINT64_MAX
                 : pm && *pm              ? strtoull(pm, NULL, 0)
                                          : PUT_MIN;
    const char *pc = getenv("COLLTUNE_SHM_PUT_COPY_MIN"); /* the same for CT_POST_COPY */
    t->put_copy_min = pc && !strcmp(pc, "off") ? UINT64_MAX
                      : pc && *pc              ? strtoull(pc, NULL, 0)
                                               : PUT_COPY_MIN;
    if (t->put_copy_min < LINE) /* a put spans at least one whole line (put_edges) */
        t->put_copy_min = LINE;
    if (t->put_min < LINE)
        t->put_min = LINE;
    if (t->unregistered)
        t->put_min = t->put_copy_min = UINT64_MAX;
    t->last_live = t->idle_start = ct_now_ns();

    struct ct_err lerr;
    ct_err_clear(&lerr);
    struct hello mine = {0, (int32_t)getpid(), t->nonce, asym_ok(t), 0};
    struct hello *all = ct_xcalloc((size_t)boot->size, sizeof *all);
    int rc = plan_peers(t, cfg, &lerr);
    if (rc == 0)
        rc = create_ctl(t, cfg, &lerr);
    rc = agree(t, rc, &mine, all, &lerr, err);
    if (rc == 0) {
        rc = map_peers(t, all, &lerr);
        if (rc == 0)
            touch_channels(t);
        rc = agree(t, rc, &mine, all, &lerr, err);
    }
    free(all);
    if (rc < 0) {
        shm_close(&t->base);
        return rc;
    }
    /* every peer has mapped our channels: the name is no longer needed */
    char name[128];
    ctl_name(name, sizeof name, t->job, boot->rank, t->nonce);
    ct_shm_own_unlink(name);
    t->ctl_named = 0;
    *out = &t->base;
    return 0;
}

const char *ct_shm_doorbell(const struct ct_tp *tp)
{
    return ((const struct tp_shm *)tp)->asym ? "membarrier" : "fence";
}

int ct_shm_cleanup_job(uint64_t job_id)
{
    char pre[32];
    int n = snprintf(pre, sizeof pre, "ct-%016" PRIx64 "-", job_id);
    DIR *d = opendir("/dev/shm");
    if (!d)
        return CT_EIO;
    int removed = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (strncmp(e->d_name, pre, (size_t)n))
            continue;
        char name[NAME_MAX + 2];
        snprintf(name, sizeof name, "/%s", e->d_name);
        if (shm_unlink(name) == 0)
            removed++;
    }
    closedir(d);
    return removed;
}

const struct ct_tp_ops ct_tp_shm_ops = {
    .name = "shm",
    .summary = "POSIX shared memory between processes of one host (symmetric heap, zero-copy)",
    .caps = CT_TP_INTRA_NODE | CT_TP_SYMMETRIC,
    .built = true,
    .open = shm_open_tp,
    .close = shm_close,
    .alloc = shm_alloc,
    .free = shm_free,
    .isend = shm_isend,
    .irecv = shm_irecv,
    .progress = shm_progress,
    .wait = shm_wait,
    .pending_peers = shm_pending_peers,
    .fence_post = shm_fence_post,
    .fence_test = shm_fence_test,
    .mbox_post = shm_mbox_post,
    .mbox_test = shm_mbox_test,
    .peer_addr = shm_peer_addr,
    .published = shm_published,
};
