/* SPDX-License-Identifier: MIT */
/*
 * The cuda memory kind. libcudart is loaded by dlopen ($COLLTUNE_CUDART, else libcudart.so.13,
 * .so.12, .so: load_runtime), so colltune runs where CUDA is not installed; every failure (no
 * library, no driver, no GPU, a GPU index beyond those present) is one line naming what is missing,
 * and CT_EUNSUPP. Reductions run the kernels of device/kernels.cu: nvcc built them into a fatbin
 * (build/gen/cuda_kernels.c carries it as data; empty when nvcc was absent at build time),
 * loaded on the first reduction through libcuda.so.1 (cuModuleLoadData, cuLaunchKernel) into
 * the primary context the runtime made current. No CUDA header is needed to build this file.
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "device.h"

extern const unsigned char ct_cuda_fatbin[];
extern const size_t ct_cuda_fatbin_len;
extern const char ct_cuda_fatbin_archs[];

enum { H2D = 1, D2H = 2, D2D = 3 }; /* cudaMemcpyKind */

struct ipc_handle { /* cudaIpcMemHandle_t: passed by value, its exact type */
    char reserved[64];
};

struct cuda {
    void *rt, *drv;
    int (*getDeviceCount)(int *);
    int (*setDevice)(int);
    int (*malloc_)(void **, size_t);
    int (*free_)(void *);
    int (*memcpy_)(void *, const void *, size_t, int);
    int (*memcpyAsync)(void *, const void *, size_t, int, void *);
    int (*ipcGet)(void *, void *);                         /* cudaIpcMemHandle_t *, ptr */
    int (*ipcOpen)(void **, struct ipc_handle, unsigned); /* the handle by value */
    int (*ipcClose)(void *);
    int (*sync)(void);
    int (*hostRegister)(void *, size_t, unsigned);
    int (*hostUnregister)(void *);
    int (*memcpyPeer)(void *, int, const void *, int, size_t);
    int (*canAccessPeer)(int *, int, int);
    int (*enablePeerAccess)(int, unsigned);
    int (*getLastError)(void);
    int (*busId)(char *, int, int);
    const char *(*errstr)(int);
    /* libcuda, on the first reduction */
    int (*cuInit)(unsigned);
    int (*cuModuleLoadData)(void **, const void *);
    int (*cuModuleGetFunction)(void **, void *, const char *);
    int (*cuLaunchKernel)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                          unsigned, void *, void **, void **);
    void *module;
};

static int rt_fail(struct cuda *c, struct ct_err *err, const char *call, int e)
{
    return ct_err_set(err, CT_EIO, "CUDA memory: %s: %s (cudaError %d)", call,
                      c->errstr ? c->errstr(e) : "?", e);
}

#define SYM(lib, field, name)                                                                      \
    do {                                                                                           \
        *(void **)&(field) = dlsym(lib, name);                                                     \
        if (!(field))                                                                              \
            return ct_err_set(err, CT_EUNSUPP, "CUDA memory: %s has no symbol %s", libname, name); \
    } while (0)

/*
 * The first runtime of the list ($COLLTUNE_CUDART, colon-separated, else libcudart.so.13, .so.12,
 * .so) that loads and that the driver can serve: a runtime newer than the driver answers
 * cudaErrorInsufficientDriver (35) to everything (CUDA 13's before driver 580, which hosts of
 * CUDA 12 still run), or 803/804 (driver mismatch, forward compatibility not supported), and
 * the next one of the list may still work. The last that loads is
 * kept all the same: cuda_open then says what is wrong.
 */
static int load_runtime(struct cuda *c, struct ct_err *err)
{
    const char *env = getenv("COLLTUNE_CUDART");
    char list[512], why[300] = "", *save = NULL;
    snprintf(list, sizeof list, "%s",
             env && *env ? env : "libcudart.so.13:libcudart.so.12:libcudart.so");
    const char *libname = NULL;
    for (char *name = strtok_r(list, ":", &save); name; name = strtok_r(NULL, ":", &save)) {
        void *rt = dlopen(name, RTLD_NOW | RTLD_LOCAL);
        if (!rt) {
            snprintf(why, sizeof why, "%s", dlerror());
            continue;
        }
        if (c->rt)
            dlclose(c->rt);
        c->rt = rt;
        libname = name;
        int (*count)(int *) = (int (*)(int *))dlsym(rt, "cudaGetDeviceCount"), n = 0;
        int e = count ? count(&n) : 0; /* 35 insufficient driver, 803 driver mismatch, 804
                                          forward compatibility not supported on the device */
        if (e != 35 && e != 803 && e != 804)
            break;
    }
    if (!c->rt)
        return ct_err_set(err, CT_EUNSUPP, "CUDA memory: cannot load the CUDA runtime %s (%s)",
                          env && *env ? env : "libcudart.so.13/.12/.so", why);
    SYM(c->rt, c->getDeviceCount, "cudaGetDeviceCount");
    SYM(c->rt, c->setDevice, "cudaSetDevice");
    SYM(c->rt, c->malloc_, "cudaMalloc");
    SYM(c->rt, c->free_, "cudaFree");
    SYM(c->rt, c->memcpy_, "cudaMemcpy");
    SYM(c->rt, c->sync, "cudaDeviceSynchronize");
    SYM(c->rt, c->memcpyAsync, "cudaMemcpyAsync");
    SYM(c->rt, c->ipcGet, "cudaIpcGetMemHandle");
    SYM(c->rt, c->ipcOpen, "cudaIpcOpenMemHandle");
    SYM(c->rt, c->ipcClose, "cudaIpcCloseMemHandle");
    SYM(c->rt, c->errstr, "cudaGetErrorString");
    SYM(c->rt, c->hostRegister, "cudaHostRegister");
    SYM(c->rt, c->hostUnregister, "cudaHostUnregister");
    SYM(c->rt, c->memcpyPeer, "cudaMemcpyPeer");
    SYM(c->rt, c->canAccessPeer, "cudaDeviceCanAccessPeer");
    SYM(c->rt, c->enablePeerAccess, "cudaDeviceEnablePeerAccess");
    SYM(c->rt, c->getLastError, "cudaGetLastError");
    SYM(c->rt, c->busId, "cudaDeviceGetPCIBusId");
    return 0;
}

static void cuda_close(struct ct_mem *m)
{
    struct cuda *c = m->state;
    if (!c)
        return;
    if (c->drv)
        dlclose(c->drv);
    if (c->rt)
        dlclose(c->rt);
    free(c);
    m->state = NULL;
}

static int cuda_open(struct ct_mem *m, struct ct_err *err)
{
    struct cuda *c = calloc(1, sizeof *c);
    if (!c)
        return ct_err_set(err, CT_ENOMEM, "CUDA memory: out of memory");
    m->state = c;
    int n = 0, e, rc = load_runtime(c, err);
    void *drv = NULL;
    if (rc == 0 && (e = c->getDeviceCount(&n)) != 0 && !(drv = dlopen("libcuda.so.1", RTLD_LAZY)))
        rc = ct_err_set(err, CT_EUNSUPP,
                        "CUDA memory: no NVIDIA driver: libcuda.so.1 cannot be "
                        "loaded (cudaGetDeviceCount: cudaError %d)",
                        e);
    else if (rc == 0 && e)
        rc = ct_err_set(err, CT_EUNSUPP,
                        "CUDA memory: no usable GPU: cudaGetDeviceCount: %s "
                        "(cudaError %d)",
                        c->errstr(e), e);
    else if (rc == 0 && n == 0)
        rc = ct_err_set(err, CT_EUNSUPP, "CUDA memory: no CUDA GPU on this host");
    else if (rc == 0 && (m->gpu < 0 || m->gpu >= n))
        rc = ct_err_set(err, CT_EUNSUPP, "CUDA memory: GPU %d asked for, %d present (--gpu-map)",
                        m->gpu, n);
    else if (rc == 0 && (e = c->setDevice(m->gpu)) != 0)
        rc = rt_fail(c, err, "cudaSetDevice", e);
    else if (rc == 0 && (e = c->free_(NULL)) != 0) /* makes the primary context current */
        rc = rt_fail(c, err, "cudaFree(NULL)", e);
    if (drv)
        dlclose(drv);
    if (rc < 0)
        cuda_close(m);
    else
        m->lib = c->rt;
    return rc;
}

/* On m's GPU (another kind opened in this thread may have made its own current). */
static int cuda_alloc(struct ct_mem *m, size_t bytes, void **p, struct ct_err *err)
{
    struct cuda *c = m->state;
    int e = c->setDevice(m->gpu);
    if (e)
        return rt_fail(c, err, "cudaSetDevice", e);
    e = c->malloc_(p, bytes ? bytes : 1);
    return e ? rt_fail(c, err, "cudaMalloc", e) : 0;
}

static void cuda_free(struct ct_mem *m, void *p)
{
    struct cuda *c = m->state;
    c->setDevice(m->gpu);
    c->free_(p);
}

static int copy(struct ct_mem *m, void *dst, const void *src, size_t bytes, int kind,
                struct ct_err *err)
{
    struct cuda *c = m->state;
    int e = bytes ? c->memcpy_(dst, src, bytes, kind) : 0;
    return e ? rt_fail(c, err, "cudaMemcpy", e) : 0;
}

static int cuda_to_host(struct ct_mem *m, void *host, const void *src, size_t bytes,
                        struct ct_err *err)
{
    return copy(m, host, src, bytes, D2H, err);
}

static int cuda_from_host(struct ct_mem *m, void *dst, const void *host, size_t bytes,
                          struct ct_err *err)
{
    return copy(m, dst, host, bytes, H2D, err);
}

static int cuda_pin(struct ct_mem *m, void *host, size_t bytes, struct ct_err *err)
{
    struct cuda *c = m->state;
    int e = c->hostRegister(host, bytes, 0); /* cudaHostRegisterDefault */
    return e ? rt_fail(c, err, "cudaHostRegister", e) : 0;
}

static void cuda_unpin(struct ct_mem *m, void *host)
{
    struct cuda *c = m->state;
    c->hostUnregister(host);
}

/* Peer access enabled where the GPUs have it (NVLink, or PCIe peer to peer), so the copy
 * goes GPU to GPU and not through host memory; the copy is on m's GPU's default stream,
 * waited for. */
static int cuda_copy_peer(struct ct_mem *m, void *dst, struct ct_mem *to, const void *src,
                          size_t bytes, struct ct_err *err)
{
    struct cuda *c = m->state;
    int can = 0, e = c->setDevice(m->gpu);
    if (e)
        return rt_fail(c, err, "cudaSetDevice", e);
    if (c->canAccessPeer(&can, m->gpu, to->gpu) == 0 && can &&
        (e = c->enablePeerAccess(to->gpu, 0)) != 0) {
        c->getLastError();
        if (e != 704) /* cudaErrorPeerAccessAlreadyEnabled; else the copy would go through
                         host memory and its time blame the GPUs' links */
            return rt_fail(c, err, "cudaDeviceEnablePeerAccess", e);
    }
    if ((e = c->memcpyPeer(dst, to->gpu, src, m->gpu, bytes)) != 0)
        return rt_fail(c, err, "cudaMemcpyPeer", e);
    e = c->sync();
    return e ? rt_fail(c, err, "cudaMemcpyPeer (synchronize)", e) : 0;
}

static int cuda_bus_id(struct ct_mem *m, char *buf, size_t len, struct ct_err *err)
{
    struct cuda *c = m->state;
    int e = c->busId(buf, (int)len, m->gpu);
    return e ? rt_fail(c, err, "cudaDeviceGetPCIBusId", e) : 0;
}

/* The GPU's name: cudaDeviceProp's first member in every CUDA release (char name[256]); the
 * struct grows from release to release, so it is read into room to spare. */
static int cuda_name(struct ct_mem *m, char *buf, size_t len)
{
    struct cuda *c = m->state;
    int (*props)(void *, int) = NULL;
    *(void **)&props =
        dlsym(c->rt, "cudaGetDeviceProperties_v2"); /* CUDA 12's; 13 has the plain one */
    if (!props)
        *(void **)&props = dlsym(c->rt, "cudaGetDeviceProperties");
    char *p = calloc(1, 16384);
    int rc = -1;
    if (props && p && !props(p, m->gpu)) {
        p[255] = 0;
        snprintf(buf, len, "%s", p);
        rc = 0;
    }
    free(p);
    return rc;
}

static int cuda_devices(struct ct_mem *m)
{
    struct cuda *c = m->state;
    int n = 0;
    return c->getDeviceCount(&n) ? 0 : n;
}

static int load_kernels(struct cuda *c, struct ct_err *err)
{
    if (c->module)
        return 0;
    if (!ct_cuda_fatbin_len)
        return ct_err_set(err, CT_EUNSUPP,
                          "CUDA memory: colltune was built without nvcc: no "
                          "GPU reduction kernels");
    const char *env = getenv("COLLTUNE_LIBCUDA");
    const char *libname = env && *env ? env : "libcuda.so.1";
    if (!c->drv && !(c->drv = dlopen(libname, RTLD_NOW | RTLD_LOCAL)))
        return ct_err_set(err, CT_EUNSUPP, "CUDA memory: cannot load the CUDA driver %s (%s)",
                          libname, dlerror());
    SYM(c->drv, c->cuInit, "cuInit");
    SYM(c->drv, c->cuModuleLoadData, "cuModuleLoadData");
    SYM(c->drv, c->cuModuleGetFunction, "cuModuleGetFunction");
    SYM(c->drv, c->cuLaunchKernel, "cuLaunchKernel");
    int e = c->cuInit(0);
    if (!e)
        e = c->cuModuleLoadData(&c->module, ct_cuda_fatbin);
    if (e)
        return ct_err_set(err, CT_EIO, "CUDA memory: loading the kernels (%s): CUresult %d",
                          ct_cuda_fatbin_archs, e);
    return 0;
}

/* r's kernel, with m's GPU's primary context current (the module's, and the buffers'). */
static int kernel_of(struct ct_mem *m, const struct ct_mem_red *r, void **fn, char *name,
                     size_t len, struct ct_err *err)
{
    struct cuda *c = m->state;
    *fn = NULL;
    snprintf(name, len, "ct_reduce_%s_%s", r->op, r->dtype);
    int e = c->setDevice(m->gpu);
    if (e)
        return rt_fail(c, err, "cudaSetDevice", e);
    CT_TRY(load_kernels(c, err));
    if (!ct_mem_gpu_kernel(r) || c->cuModuleGetFunction(fn, c->module, name) || !*fn)
        return ct_err_set(err, CT_EUNSUPP,
                          "CUDA memory: no GPU kernel for %s %s (kernels: sum, prod, min, max of "
                          "bfloat16, float16, float32, float64)",
                          r->op, r->dtype);
    return 0;
}

static bool cuda_has_kernel(struct ct_mem *m, const struct ct_mem_red *r)
{
    char name[64];
    void *fn;
    struct ct_err e = {0};
    return kernel_of(m, r, &fn, name, sizeof name, &e) == 0;
}

static int cuda_reduce(struct ct_mem *m, void *dst, const void *a, const void *b, size_t n,
                       const struct ct_mem_red *r, struct ct_err *err)
{
    struct cuda *c = m->state;
    char name[64];
    void *fn = NULL;
    int e;
    CT_TRY(kernel_of(m, r, &fn, name, sizeof name, err));
    if (!n)
        return 0;
    unsigned long long n64 = n;
    void *args[] = {&dst, &a, &b, &n64};
    size_t blocks = (n + 255) / 256;
    e = c->cuLaunchKernel(fn, (unsigned)(blocks < 4096 ? blocks : 4096), 1, 1, 256, 1, 1, 0, NULL,
                          args, NULL);
    if (e)
        return ct_err_set(err, CT_EIO, "CUDA memory: cuLaunchKernel %s: CUresult %d", name, e);
    return 0; /* queued on the legacy default stream: ct_mem_reduce waits (cuda_sync) */
}

/* Within GPU memory, this GPU's or a peer's that cuda_ipc_open mapped (unified addressing:
 * cudaMemcpyDefault), on the legacy default stream after the kernels queued before it. */
static int cuda_copy(struct ct_mem *m, void *dst, const void *src, size_t bytes,
                     struct ct_err *err)
{
    struct cuda *c = m->state;
    int e = bytes ? c->memcpyAsync(dst, src, bytes, 4 /* cudaMemcpyDefault */, NULL) : 0;
    return e ? rt_fail(c, err, "cudaMemcpyAsync", e) : 0;
}

/* Everything queued on m's GPU done; a kernel's fault or a copy's error surfaces here. */
static int cuda_sync(struct ct_mem *m, struct ct_err *err)
{
    struct cuda *c = m->state;
    int e = c->sync();
    return e ? rt_fail(c, err, "cudaDeviceSynchronize", e) : 0;
}

/* cudaIpcGetMemHandle of a whole cudaMalloc buffer (a handle names the allocation's base). */
static int cuda_ipc_get(struct ct_mem *m, void *p, size_t bytes, struct ct_mem_ipc *h,
                        struct ct_err *err)
{
    struct cuda *c = m->state;
    _Static_assert(CT_MEM_IPC_BYTES == sizeof(struct ipc_handle), "cudaIpcMemHandle_t");
    int e = c->ipcGet(h->b, p);
    return e ? rt_fail(c, err, "cudaIpcGetMemHandle", e) : 0;
}

/* Mapped into m's GPU's context with peer access enabled on first use
 * (cudaIpcMemLazyEnablePeerAccess): kernels and copies of this GPU then read and write the
 * peer's memory over NVLink or PCIe directly. */
static int cuda_ipc_open(struct ct_mem *m, const struct ct_mem_ipc *h, void **p,
                         struct ct_err *err)
{
    struct cuda *c = m->state;
    struct ipc_handle x;
    memcpy(x.reserved, h->b, sizeof x.reserved);
    int e = c->setDevice(m->gpu);
    if (!e)
        e = c->ipcOpen(p, x, 1 /* cudaIpcMemLazyEnablePeerAccess */);
    return e ? rt_fail(c, err, "cudaIpcOpenMemHandle", e) : 0;
}

static void cuda_ipc_close(struct ct_mem *m, void *p, size_t bytes)
{
    struct cuda *c = m->state;
    c->ipcClose(p);
}

const struct ct_mem_kind ct_mem_cuda = {
    "cuda",          "GPU memory (libcudart by dlopen; kernels built by nvcc)",
    cuda_open,       cuda_close,
    cuda_alloc,      cuda_free,
    cuda_to_host,    cuda_from_host,
    cuda_reduce,     false,
    cuda_pin,        cuda_unpin,
    cuda_copy_peer,  cuda_bus_id,
    cuda_devices,    cuda_copy,
    cuda_sync,       cuda_ipc_get,
    cuda_ipc_open,   cuda_ipc_close,
    cuda_has_kernel, cuda_name,
};
