/* SPDX-License-Identifier: MIT */
/*
 * libfabric is loaded with dlopen on first use of the fabric transport, not linked: its
 * dependencies (libpsm_infinipath, libinfinipath) calibrate timers in their constructors,
 * which cost every colltune start 0.2 s. Only five entry points are exported functions;
 * everything else in the libfabric API is an inline call through the objects' ops tables.
 */
#ifdef HAVE_LIBFABRIC
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

#define CT_FABRIC_DL_IMPL
#include "fabric_int.h"

static struct {
    int (*getinfo)(uint32_t, const char *, const char *, uint64_t, const struct fi_info *,
                   struct fi_info **);
    void (*freeinfo)(struct fi_info *);
    struct fi_info *(*dupinfo)(const struct fi_info *);
    int (*fabric)(struct fi_fabric_attr *, struct fid_fabric **, void *);
    const char *(*strerror)(int);
    char why[200];
} api;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void load(void)
{
    void *h = dlopen("libfabric.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        snprintf(api.why, sizeof api.why, "cannot load libfabric.so.1: %s", dlerror());
        return;
    }
    *(void **)&api.getinfo = dlsym(h, "fi_getinfo");
    *(void **)&api.freeinfo = dlsym(h, "fi_freeinfo");
    *(void **)&api.dupinfo = dlsym(h, "fi_dupinfo");
    *(void **)&api.fabric = dlsym(h, "fi_fabric");
    *(void **)&api.strerror = dlsym(h, "fi_strerror");
    if (!api.getinfo || !api.freeinfo || !api.dupinfo || !api.fabric || !api.strerror) {
        snprintf(api.why, sizeof api.why, "libfabric.so.1 lacks fi_getinfo/fi_fabric/...");
        api.getinfo = NULL;
    }
}

int ct_fi_load(struct ct_err *err)
{
    pthread_once(&once, load);
    return api.getinfo ? 0 : ct_err_set(err, CT_EUNSUPP, "fabric: %s", api.why);
}

int ct_fi_getinfo(uint32_t version, const char *node, const char *service, uint64_t flags,
                  const struct fi_info *hints, struct fi_info **info)
{
    return api.getinfo ? api.getinfo(version, node, service, flags, hints, info) : -FI_ENOSYS;
}

void ct_fi_freeinfo(struct fi_info *info)
{
    if (api.freeinfo)
        api.freeinfo(info);
}

struct fi_info *ct_fi_dupinfo(const struct fi_info *info)
{
    return api.dupinfo ? api.dupinfo(info) : NULL;
}

int ct_fi_fabric(struct fi_fabric_attr *attr, struct fid_fabric **fabric, void *context)
{
    return api.fabric ? api.fabric(attr, fabric, context) : -FI_ENOSYS;
}

const char *ct_fi_strerror(int errnum)
{
    return api.strerror ? api.strerror(errnum) : "libfabric not loaded";
}
#endif
