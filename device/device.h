/* SPDX-License-Identifier: MIT */
/*
 * Memory kinds: where a collective's buffers live. One interface (alloc/free, copy to and from
 * the host, fill, check, reduce) with one file per kind and one row each in device.c's table:
 *   host  malloc'ed memory; real, and what the tests use through this same interface;
 *   cuda  GPU memory through libcudart, loaded by dlopen (colltune runs on hosts without
 *         CUDA); reductions by kernels nvcc built into a fatbin that colltune carries as data
 *         and loads through libcuda (cuModuleLoadData), so the binary links no CUDA library.
 *   host-ipc  host memory with cuda's shape: buffers apart from the transports' heap, which
 *         peers of the host map by handle (a memfd each) and an executor works in place, as
 *         cuda's are mapped by CUDA IPC; so that path runs and is checked without a GPU.
 * device/ knows no datatypes beyond names and sizes: the caller passes the host kernel and the
 * host fill/compare functions in (algos/ and backend/ sit above this layer).
 */
#ifndef CT_DEVICE_H
#define CT_DEVICE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../lib/err.h"
#include "../lib/redfn.h"

struct ct_mem;

/* A reduction: dtype and op by name ("float32", "sum"); host is the host kernel. */
struct ct_mem_red {
    const char *dtype, *op;
    size_t esize;
    ct_reduce_fn host;
};

/* Fill n elements of esize bytes at buf (host memory). */
typedef void (*ct_mem_fill_fn)(void *buf, size_t n, void *arg);
/* Number of elements of got that differ from want (both host memory). */
typedef size_t (*ct_mem_cmp_fn)(const void *got, const void *want, size_t n, void *arg);

/* A buffer's handle for another process of the host (cudaIpcMemHandle_t is 64 bytes). */
#define CT_MEM_IPC_BYTES 64
struct ct_mem_ipc {
    unsigned char b[CT_MEM_IPC_BYTES];
    uint64_t bytes;
};

struct ct_mem_kind {
    const char *name, *summary;
    int (*open)(struct ct_mem *m, struct ct_err *err);
    void (*close)(struct ct_mem *m);
    int (*alloc)(struct ct_mem *m, size_t bytes, void **p, struct ct_err *err);
    void (*free)(struct ct_mem *m, void *p);
    int (*to_host)(struct ct_mem *m, void *host, const void *src, size_t bytes, struct ct_err *err);
    int (*from_host)(struct ct_mem *m, void *dst, const void *host, size_t bytes,
                     struct ct_err *err);
    /* dst = a op b over n elements (all of this kind; dst may alias a or b) */
    int (*reduce)(struct ct_mem *m, void *dst, const void *a, const void *b, size_t n,
                  const struct ct_mem_red *r, struct ct_err *err);
    bool host_visible; /* buffers are host memory (fill and check need no staging) */
    /* Page-lock host memory (not of this kind) for copies to and from it; NULL: nothing to
     * do. unpin undoes it. cuda: cudaHostRegister, so a staging buffer moves by DMA at the
     * link's rate and a copy from it is synchronous, as a timed copy must be. */
    int (*pin)(struct ct_mem *m, void *host, size_t bytes, struct ct_err *err);
    void (*unpin)(struct ct_mem *m, void *host);
    /* bytes at src (of m) to dst (of to, another GPU of this kind), finished on return;
     * NULL: the kind has no such copies */
    int (*copy_peer)(struct ct_mem *m, void *dst, struct ct_mem *to, const void *src, size_t bytes,
                     struct ct_err *err);
    /* the PCI address of m's device ("0000:a4:00.0"); NULL: none */
    int (*bus_id)(struct ct_mem *m, char *buf, size_t len, struct ct_err *err);
    /* devices of this kind the host shows; NULL: none */
    int (*devices)(struct ct_mem *m);
    /* bytes from src to dst, both of this kind (own buffers or ones ipc_open mapped), in
     * order with the kind's other queued work: done once sync returned (NULL: done on
     * return, as reduce is then too) */
    int (*copy)(struct ct_mem *m, void *dst, const void *src, size_t bytes, struct ct_err *err);
    int (*sync)(struct ct_mem *m, struct ct_err *err);
    /* Sharing buffers with the processes of this host (NULL: the kind cannot): ipc_get makes
     * the handle of p, a whole buffer of alloc()'s of bytes; ipc_open maps a peer's handle
     * here (backend/resident.c maps each handle once); ipc_close unmaps it. The exporter
     * frees a buffer only once every importer closed it (CUDA: undefined otherwise). */
    int (*ipc_get)(struct ct_mem *m, void *p, size_t bytes, struct ct_mem_ipc *h,
                   struct ct_err *err);
    int (*ipc_open)(struct ct_mem *m, const struct ct_mem_ipc *h, void **p, struct ct_err *err);
    void (*ipc_close)(struct ct_mem *m, void *p, size_t bytes);
    /* whether reduce has r's kernel (NULL: every one the caller's host kernel covers) */
    bool (*has_kernel)(struct ct_mem *m, const struct ct_mem_red *r);
    /* the device's model name ("NVIDIA H200"), 0; -1 where it cannot say (NULL: none) */
    int (*device_name)(struct ct_mem *m, char *buf, size_t len);
};

/* An opened memory kind. */
struct ct_mem {
    const struct ct_mem_kind *kind;
    int gpu;     /* the GPU (cuda), -1 for host */
    void *lib;   /* the kind's runtime library (cuda: the dlopen'ed libcudart), or NULL:
                    an engine on this memory takes its stream and event calls from it */
    void *state; /* the kind's own */
};

const struct ct_mem_kind *ct_mem_kind_at(size_t i); /* NULL past the end */
const struct ct_mem_kind *ct_mem_kind_find(const char *name);

/* Open kind name on GPU gpu (ignored by host). CT_EINVAL: unknown kind; CT_EUNSUPP: the kind
 * cannot be used on this host (missing library, no GPU), with one line saying which. */
int ct_mem_open(struct ct_mem *m, const char *name, int gpu, struct ct_err *err);
void ct_mem_close(struct ct_mem *m);
/* Whether kind name opens on GPU gpu, checked in a child process (CUDA does not survive the
 * fork of the ranks that follows): 0, or ct_mem_open's error. */
int ct_mem_probe(const char *name, int gpu, struct ct_err *err);

int ct_mem_alloc(struct ct_mem *m, size_t bytes, void **p, struct ct_err *err);
void ct_mem_free(struct ct_mem *m, void *p);
int ct_mem_to_host(struct ct_mem *m, void *host, const void *src, size_t bytes, struct ct_err *err);
int ct_mem_from_host(struct ct_mem *m, void *dst, const void *host, size_t bytes,
                     struct ct_err *err);
int ct_mem_reduce(struct ct_mem *m, void *dst, const void *a, const void *b, size_t n,
                  const struct ct_mem_red *r, struct ct_err *err);
/* Queued work of a step (reductions and copies within the kind, peers' mapped buffers
 * included), done once ct_mem_sync returned: a GPU runs a step's ops back to back. */
int ct_mem_reduce_queued(struct ct_mem *m, void *dst, const void *a, const void *b, size_t n,
                         const struct ct_mem_red *r, struct ct_err *err);
int ct_mem_copy_queued(struct ct_mem *m, void *dst, const void *src, size_t bytes,
                       struct ct_err *err);
int ct_mem_sync(struct ct_mem *m, struct ct_err *err);
/* Whether m's reduce has r's kernel (the GPU kernels: sum, prod, min, max of bfloat16,
 * float16, float32, float64, where nvcc built them). */
bool ct_mem_has_kernel(struct ct_mem *m, const struct ct_mem_red *r);
/* Whether device/kernels.cu has r (its dtype and op names). */
bool ct_mem_gpu_kernel(const struct ct_mem_red *r);
/* Whether m's buffers can be mapped by the other processes of the host (ipc_*), or kind k's. */
bool ct_mem_shares(const struct ct_mem *m);
bool ct_mem_kind_shares(const struct ct_mem_kind *k);
int ct_mem_ipc_get(struct ct_mem *m, void *p, size_t bytes, struct ct_mem_ipc *h,
                   struct ct_err *err);
int ct_mem_ipc_open(struct ct_mem *m, const struct ct_mem_ipc *h, void **p, struct ct_err *err);
void ct_mem_ipc_close(struct ct_mem *m, void *p, size_t bytes);
/* The kinds' names, ", "-separated ("host, host-ipc, cuda"). */
const char *ct_mem_kind_names(void);
/* Pin (unpin) host memory for this kind's copies: nothing where the kind needs none. */
int ct_mem_pin(struct ct_mem *m, void *host, size_t bytes, struct ct_err *err);
void ct_mem_unpin(struct ct_mem *m, void *host);
/* Fill n elements of esize at buf with fn (through a host staging copy where needed). */
int ct_mem_fill(struct ct_mem *m, void *buf, size_t n, size_t esize, ct_mem_fill_fn fn, void *arg,
                struct ct_err *err);
/* *wrong = number of the n elements at buf that differ from want (host) by cmp. */
int ct_mem_check(struct ct_mem *m, const void *buf, const void *want, size_t n, size_t esize,
                 ct_mem_cmp_fn cmp, void *arg, size_t *wrong, struct ct_err *err);

/* Copy bandwidth of m's device: from page-locked host memory (H2D), to it (D2H), or to
 * peer's device (PEER; peer NULL otherwise). bytes per copy, GB/s (1e9) of the median of
 * iters timed copies after one untimed. CT_EUNSUPP where the kind has no such copy (host
 * memory). device/copybw.c */
enum ct_mem_dir { CT_MEM_H2D, CT_MEM_D2H, CT_MEM_PEER };
int ct_mem_copy_gbs(struct ct_mem *m, struct ct_mem *peer, enum ct_mem_dir dir, size_t bytes,
                    int iters, double *gbs, struct ct_err *err);
/* Devices of m's kind on this host (GPUs CUDA shows), 0 for host memory. */
int ct_mem_devices(struct ct_mem *m);
/* m's device's PCI address, lower case with a 4-digit domain ("0000:a4:00.0"). */
int ct_mem_bus_id(struct ct_mem *m, char *buf, size_t len, struct ct_err *err);
/* m's device as nccl-tests' "Using devices" lines name it after "device": " 0 [0000:a4:00]
 * NVIDIA H200" (the GPU's number, its PCI domain:bus:device, its name; "[?]" where the address
 * cannot be read, no name where the name cannot); " 0 [cpu]" for memory without a device, or
 * m NULL or not open. */
void ct_mem_describe(struct ct_mem *m, char *buf, size_t len);

/* --gpu-map "2,3,0,1": the GPU of each local rank (local rank i uses map[i % n]); empty or
 * NULL: local rank i uses GPU i. Returns the GPU of local_rank, or CT_EINVAL for a bad map. */
int ct_mem_gpu_of(const char *map, int local_rank, struct ct_err *err);
/* The highest GPU any of the first n local ranks uses (n < 1: one): the one to check before
 * they start. */
int ct_mem_gpu_max(const char *map, int n, struct ct_err *err);

#endif
