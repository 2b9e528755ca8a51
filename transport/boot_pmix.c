/* SPDX-License-Identifier: MIT */
/*
 * PMIx bootstrap (Open MPI's mpirun, srun --mpi=pmix, PRRTE): rank, size, host name and
 * local rank from PMIx, rank 0's address and the job token through Put/Commit/Fence/Get,
 * then the tcp star.
 *
 * libpmix.so.2 is loaded with dlopen here, not linked into colltune: a library engine's rank
 * (backend/libmod.c) loads Open MPI 5's module, whose libopen-pal needs the libpmix.so.2 of
 * its own installation (an internal PMIx exports symbols Debian's 4.2.2 lacks:
 * pmix_framework_names), and a process holds one library of a name. The one on the loader's
 * path first (a site's, LD_LIBRARY_PATH), else the one colltune was built against.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "boot_int.h"

#ifdef HAVE_PMIX

#include <dlfcn.h>
#include <pmix.h>
#include <pthread.h>

/* The entry points used here; PMIx's macros (PMIX_VALUE_RELEASE ...) call them by name. */
static struct {
    pmix_status_t (*init)(pmix_proc_t *, pmix_info_t *, size_t);
    pmix_status_t (*finalize)(const pmix_info_t *, size_t);
    pmix_status_t (*put)(pmix_scope_t, const pmix_key_t, pmix_value_t *);
    pmix_status_t (*commit)(void);
    pmix_status_t (*fence)(const pmix_proc_t *, size_t, const pmix_info_t *, size_t);
    pmix_status_t (*get)(const pmix_proc_t *, const pmix_key_t, const pmix_info_t *, size_t,
                         pmix_value_t **);
    const char *(*error_string)(pmix_status_t);
    pmix_status_t (*value_load)(pmix_value_t *, const void *, pmix_data_type_t);
    void (*value_destruct)(pmix_value_t *);
    pmix_status_t (*info_load)(pmix_info_t *, const char *, const void *, pmix_data_type_t);
    char why[600];
} px;
static pthread_once_t px_once = PTHREAD_ONCE_INIT;

#define PMIx_Init px.init
#define PMIx_Finalize px.finalize
#define PMIx_Put px.put
#define PMIx_Commit px.commit
#define PMIx_Fence px.fence
#define PMIx_Get px.get
#define PMIx_Error_string px.error_string
#define PMIx_Value_load px.value_load
#define PMIx_Value_destruct px.value_destruct
#define PMIx_Info_load px.info_load

/* The entry points from h; false (px cleared) when one is missing. */
static bool px_resolve(void *h)
{
    *(void **)&px.init = dlsym(h, "PMIx_Init");
    *(void **)&px.finalize = dlsym(h, "PMIx_Finalize");
    *(void **)&px.put = dlsym(h, "PMIx_Put");
    *(void **)&px.commit = dlsym(h, "PMIx_Commit");
    *(void **)&px.fence = dlsym(h, "PMIx_Fence");
    *(void **)&px.get = dlsym(h, "PMIx_Get");
    *(void **)&px.error_string = dlsym(h, "PMIx_Error_string");
    *(void **)&px.value_load = dlsym(h, "PMIx_Value_load");
    *(void **)&px.value_destruct = dlsym(h, "PMIx_Value_destruct");
    *(void **)&px.info_load = dlsym(h, "PMIx_Info_load");
    if (px.init && px.finalize && px.put && px.commit && px.fence && px.get && px.error_string &&
        px.value_load && px.value_destruct && px.info_load)
        return true;
    px.init = NULL;
    return false;
}

/* The first of the loader's libpmix.so.2 and the one colltune was built against that has
 * every entry point (PMIx_Value_load and PMIx_Info_load: PMIx 4.2 or later); px.why says
 * why neither when none. */
static void px_load(void)
{
    static const char *const names[] = {"libpmix.so.2", CT_PMIX_LIBDIR "/libpmix.so.2"};
    size_t off = 0;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        void *h = dlopen(names[i], RTLD_NOW | RTLD_GLOBAL);
        const char *why = h ? NULL : dlerror();
        if (h && px_resolve(h))
            return;
        if (h) {
            dlclose(h);
            why = "lacks PMIx_Value_load, PMIx_Info_load or another entry point (PMIx 4.2 or "
                  "later is needed)";
        }
        if (off < sizeof px.why)
            off += (size_t)snprintf(px.why + off, sizeof px.why - off, "%s%s: %s", i ? "; " : "",
                                    names[i], why ? why : "?");
    }
}

struct pmixc {
    pmix_proc_t me;
    int timeout_s;
};

static int px_err(struct ct_err *err, pmix_status_t rc, const char *what)
{
    return ct_err_set(err, rc == PMIX_ERR_TIMEOUT ? CT_ETIMEDOUT : CT_EIO, "PMIx %s: %s", what,
                      PMIx_Error_string(rc));
}

static int px_put(void *ctx, const char *key, const char *value, struct ct_err *err)
{
    pmix_value_t v;
    PMIx_Value_load(&v, value, PMIX_STRING);
    pmix_status_t rc = PMIx_Put(PMIX_GLOBAL, key, &v);
    PMIx_Value_destruct(&v);
    if (rc != PMIX_SUCCESS)
        return px_err(err, rc, "Put");
    if ((rc = PMIx_Commit()) != PMIX_SUCCESS)
        return px_err(err, rc, "Commit");
    return 0;
}

static int px_fence(void *ctx, struct ct_err *err)
{
    struct pmixc *p = ctx;
    pmix_proc_t all;
    pmix_info_t info[2];
    bool collect = true;
    PMIX_LOAD_PROCID(&all, p->me.nspace, PMIX_RANK_WILDCARD);
    PMIx_Info_load(&info[0], PMIX_COLLECT_DATA, &collect, PMIX_BOOL);
    PMIx_Info_load(&info[1], PMIX_TIMEOUT, &p->timeout_s, PMIX_INT);
    pmix_status_t rc = PMIx_Fence(&all, 1, info, 2);
    PMIX_INFO_DESTRUCT(&info[0]);
    PMIX_INFO_DESTRUCT(&info[1]);
    return rc == PMIX_SUCCESS ? 0 : px_err(err, rc, "Fence");
}

static int px_get(void *ctx, int rank, const char *key, char *value, size_t len, struct ct_err *err)
{
    struct pmixc *p = ctx;
    pmix_proc_t who;
    pmix_info_t info;
    pmix_value_t *v = NULL;
    PMIX_LOAD_PROCID(&who, p->me.nspace, (pmix_rank_t)rank);
    PMIx_Info_load(&info, PMIX_TIMEOUT, &p->timeout_s, PMIX_INT);
    pmix_status_t rc = PMIx_Get(&who, key, &info, 1, &v);
    PMIX_INFO_DESTRUCT(&info);
    if (rc != PMIX_SUCCESS || !v)
        return px_err(err, rc, "Get");
    int out = 0;
    if (v->type != PMIX_STRING || !v->data.string || strlen(v->data.string) >= len)
        out = ct_err_set(err, CT_EPEER, "PMIx Get '%s': not a string of < %zu bytes", key, len);
    else
        snprintf(value, len, "%s", v->data.string);
    PMIX_VALUE_RELEASE(v);
    return out;
}

/* An unsigned job attribute (PMIX_JOB_SIZE ...) of proc; -1 when missing. */
static long px_get_uint(const pmix_proc_t *proc, const char *key)
{
    pmix_value_t *v = NULL;
    long out = -1;
    if (PMIx_Get(proc, key, NULL, 0, &v) != PMIX_SUCCESS || !v)
        return -1;
    switch (v->type) {
    case PMIX_UINT32: out = (long)v->data.uint32; break;
    case PMIX_UINT16: out = (long)v->data.uint16; break;
    case PMIX_INT: out = (long)v->data.integer; break;
    case PMIX_UINT: out = (long)v->data.uint; break;
    default: break;
    }
    PMIX_VALUE_RELEASE(v);
    return out;
}

static void px_finalize(void *ctx)
{
    PMIx_Finalize(NULL, 0);
    free(ctx);
}

int ct_boot_pmix_built(void)
{
    return 1;
}

int ct_boot_pmix_open(struct ct_boot **out, const struct ct_boot_cfg *cfg, struct ct_err *err)
{
    struct pmixc *p = ct_xcalloc(1, sizeof *p);
    int64_t to = cfg->timeout_ns > 0 ? cfg->timeout_ns : 60 * 1000000000LL;
    p->timeout_s = (int)((to + 999999999) / 1000000000LL);
    pthread_once(&px_once, px_load);
    if (!px.init) {
        free(p);
        return ct_err_set(err, CT_EUNSUPP, "bootstrap (pmix): cannot load libpmix: %s", px.why);
    }
    pmix_status_t rc = PMIx_Init(&p->me, NULL, 0);
    if (rc != PMIX_SUCCESS) {
        free(p);
        return ct_err_set(err, CT_EIO,
                          "bootstrap (pmix): PMIx_Init failed: %s (PMIX_RANK is set, but the "
                          "launcher's PMIx server cannot be reached; inside a network namespace "
                          "use PMI-1 (mpiexec.hydra) or COLLTUNE_ROOT instead)",
                          PMIx_Error_string(rc));
    }
    pmix_proc_t wild;
    PMIX_LOAD_PROCID(&wild, p->me.nspace, PMIX_RANK_WILDCARD);
    long size = px_get_uint(&wild, PMIX_JOB_SIZE);
    if (size < 1 || size > CT_BOOT_MAX_RANKS || p->me.rank >= (pmix_rank_t)size) {
        unsigned rank = (unsigned)p->me.rank;
        px_finalize(p);
        return ct_err_set(err, CT_EPEER, "bootstrap (pmix): job size %ld for rank %u", size, rank);
    }
    struct ct_boot_cfg c = *cfg;
    c.rank = (int)p->me.rank;
    c.size = (int)size;
    /* the node as the launcher names it, unless overridden */
    char host[CT_BOOT_HOST_BYTES] = "";
    pmix_value_t *hv = NULL;
    if (!c.host && PMIx_Get(&p->me, PMIX_HOSTNAME, NULL, 0, &hv) == PMIX_SUCCESS && hv) {
        if (hv->type == PMIX_STRING && hv->data.string)
            snprintf(host, sizeof host, "%s", hv->data.string);
        PMIX_VALUE_RELEASE(hv);
        c.host = host[0] ? host : NULL;
    }
    long local_rank = px_get_uint(&p->me, PMIX_LOCAL_RANK);
    struct ct_boot_kvs kv = {"pmix", p, px_put, px_fence, px_get};
    int r = ct_boot_kvs_start(out, &c, &kv, err);
    if (r < 0) {
        px_finalize(p);
        return r;
    }
    if (local_rank >= 0 && local_rank != (*out)->local_rank)
        ct_boot_notice(*out, "bootstrap (pmix): PMIx says local rank %ld, host names say %d",
                       local_rank, (*out)->local_rank);
    (*out)->on_close = px_finalize;
    (*out)->on_close_ctx = p;
    return 0;
}

#else

int ct_boot_pmix_built(void)
{
    return 0;
}

int ct_boot_pmix_open(struct ct_boot **out, const struct ct_boot_cfg *cfg, struct ct_err *err)
{
    return ct_err_set(err, CT_EUNSUPP,
                      "bootstrap: this colltune was built without PMIx (install libpmix-dev and "
                      "rebuild, or set COLLTUNE_ROOT=host:port)");
}

#endif
