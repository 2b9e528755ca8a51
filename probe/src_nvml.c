/* SPDX-License-Identifier: MIT */
/* NVML source (live only), loaded with dlopen so the build needs no GPU stack: GPU names,
 * compute capability, NVLink state and the remote end (GPU or NVSwitch) of every active link. */
#include "probe_int.h"
#include "nvml_min.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

struct sym {
    const char *name;
    size_t off;
    int required;
};

#define S(field, name, req)                                                                        \
    {                                                                                              \
        name, offsetof(struct ct_nvml_api, field), req                                             \
    }
static const struct sym syms[] = {
    S(init, "nvmlInit_v2", 1),
    S(shutdown, "nvmlShutdown", 1),
    S(error_string, "nvmlErrorString", 1),
    S(count, "nvmlDeviceGetCount_v2", 1),
    S(handle, "nvmlDeviceGetHandleByIndex_v2", 1),
    S(name, "nvmlDeviceGetName", 1),
    S(pci, "nvmlDeviceGetPciInfo_v3", 1),
    S(cc, "nvmlDeviceGetCudaComputeCapability", 0),
    S(link_state, "nvmlDeviceGetNvLinkState", 0),
    S(link_remote, "nvmlDeviceGetNvLinkRemotePciInfo_v2", 0),
    S(link_version, "nvmlDeviceGetNvLinkVersion", 0),
    S(ancestor, "nvmlDeviceGetTopologyCommonAncestor", 0),
};
#undef S

static int load(void *lib, struct ct_nvml_api *api, const char **missing)
{
    memset(api, 0, sizeof *api);
    for (size_t i = 0; i < sizeof syms / sizeof syms[0]; i++) {
        void *p = dlsym(lib, syms[i].name);
        if (!p && syms[i].required) {
            *missing = syms[i].name;
            return -1;
        }
        memcpy((char *)api + syms[i].off, &p, sizeof p);
    }
    return 0;
}

/* GB/s per link and direction of nvmlDeviceGetNvLinkVersion's answer, an nvmlNvlinkVersion_t
 * (nvml.h: 1 is NVLink 1.0, 2 is 2.0, 3 is 2.2, 4 is 3.0, 5 is 3.1, 6 is 4.0, 7 is 5.0), not
 * the generation itself: an A100 answers 5 and an H100 6. Some H100 drivers answer 7 (5.0);
 * NVLink 4 is the truth on sm_90. 0 for anything newer: the model and sm guess decide. */
static double version_gbps(unsigned v, int sm)
{
    if (v == 7 && sm == 90)
        return 25;
    return v == 1 ? 20 : v >= 2 && v <= 6 ? 25 : v == 7 ? 50 : 0;
}

static void add_gpu(struct ct_topo *t, const struct ct_nvml_api *api, ct_nvmlDevice_t d,
                    unsigned idx)
{
    ct_nvmlPciInfo_t pci;
    char bus[CT_BUSID_LEN], name[96] = "", os[16];
    if (api->pci(d, &pci) != CT_NVML_SUCCESS || ct_busid_canon(pci.busId, bus) < 0)
        return;
    int g = ct_topo_find_gpu(t, bus);
    if (g < 0)
        g = ct_topo_add_gpu(t, bus);
    struct ct_gpu *gpu = &t->gpu[g];
    gpu->vendor = (uint16_t)(pci.pciDeviceId & 0xffff);
    gpu->device = (uint16_t)(pci.pciDeviceId >> 16);
    if (api->name(d, name, sizeof name) == CT_NVML_SUCCESS)
        ct_str_set(&gpu->model, name);
    snprintf(os, sizeof os, "nvml%u", idx);
    ct_str_set(&gpu->osname, os);
    gpu->index = (int)idx; /* nvidia-smi's GPU number */
    int maj, min;
    if (api->cc && api->cc(d, &maj, &min) == CT_NVML_SUCCESS)
        gpu->sm = maj * 10 + min;
}

static void add_links(struct ct_topo *t, const struct ct_nvml_api *api, ct_nvmlDevice_t d)
{
    ct_nvmlPciInfo_t pci;
    char bus[CT_BUSID_LEN];
    if (!api->link_state || !api->link_remote || api->pci(d, &pci) != CT_NVML_SUCCESS ||
        ct_busid_canon(pci.busId, bus) < 0)
        return;
    int g = ct_topo_find_gpu(t, bus);
    for (unsigned l = 0; g >= 0 && l < CT_NVML_NVLINK_MAX_LINKS; l++) {
        int active = 0;
        ct_nvmlPciInfo_t rp;
        char rbus[CT_BUSID_LEN];
        if (api->link_state(d, l, &active) != CT_NVML_SUCCESS || !active ||
            api->link_remote(d, l, &rp) != CT_NVML_SUCCESS || ct_busid_canon(rp.busId, rbus) < 0)
            continue;
        unsigned ver = 0;
        if (api->link_version && api->link_version(d, l, &ver) == CT_NVML_SUCCESS &&
            version_gbps(ver, t->gpu[g].sm) > 0)
            t->gpu[g].nvlink_gbps = version_gbps(ver, t->gpu[g].sm);
        int peer = ct_topo_find_gpu(t, rbus);
        if (peer >= 0)
            ct_topo_add_nvlink(t, g, CT_END_GPU, peer, 1);
        else
            ct_topo_add_nvlink(t, g, CT_END_NVSWITCH, ct_topo_add_nvswitch(t, rbus), 1);
    }
}

static int gpu_of(struct ct_topo *t, const struct ct_nvml_api *api, ct_nvmlDevice_t d)
{
    ct_nvmlPciInfo_t pci;
    char bus[CT_BUSID_LEN];
    if (api->pci(d, &pci) != CT_NVML_SUCCESS || ct_busid_canon(pci.busId, bus) < 0)
        return -1;
    return ct_topo_find_gpu(t, bus);
}

/* NVML's own path class for every GPU pair, kept as a hint: the PCI tree decides, and a
 * warning shows where NVML disagrees with it. */
static void ancestors(struct ct_topo *t, const struct ct_nvml_api *api, ct_nvmlDevice_t *d,
                      unsigned n)
{
    for (unsigned i = 0; api->ancestor && i < n; i++)
        for (unsigned j = i + 1; j < n; j++) {
            int level, a = gpu_of(t, api, d[i]), b = gpu_of(t, api, d[j]);
            if (a < 0 || b < 0 || api->ancestor(d[i], d[j], &level) != CT_NVML_SUCCESS)
                continue;
            enum ct_path p = level <= 10   ? CT_PATH_PIX
                             : level <= 20 ? CT_PATH_PXB
                             : level <= 30 ? CT_PATH_PHB
                             : level <= 40 ? CT_PATH_NODE
                                           : CT_PATH_SYS;
            ct_topo_add_hint(t, CT_EP_GPU, a, CT_EP_GPU, b, p);
        }
}

int ct_src_nvml(struct ct_topo *t, const struct ct_probe_cfg *cfg, struct ct_err *err)
{
    if (cfg && cfg->sysfs_root && strcmp(cfg->sysfs_root, "/"))
        return 0;
    void *lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        ct_topo_note(t, "nvml: libnvidia-ml.so.1 not found (no NVIDIA driver)%s",
                     t->n_gpu ? ": GPU models and NVLink unknown" : "");
        return 0;
    }
    struct ct_nvml_api api;
    const char *missing = NULL;
    ct_nvmlReturn_t rc;
    unsigned n = 0;
    if (load(lib, &api, &missing) < 0) {
        ct_topo_note(t, "nvml: libnvidia-ml.so.1 lacks %s", missing);
    } else if ((rc = api.init()) != CT_NVML_SUCCESS) {
        ct_topo_note(t, "nvml: init failed: %s", api.error_string(rc));
    } else {
        if ((rc = api.count(&n)) != CT_NVML_SUCCESS)
            ct_topo_note(t, "nvml: cannot count GPUs: %s", api.error_string(rc));
        for (unsigned i = 0; i < n; i++) {
            ct_nvmlDevice_t d;
            if (api.handle(i, &d) == CT_NVML_SUCCESS)
                add_gpu(t, &api, d, i);
        }
        ct_nvmlDevice_t *dev = ct_xcalloc(n + 1, sizeof *dev);
        unsigned got = 0;
        for (unsigned i = 0; i < n; i++)
            if (api.handle(i, &dev[got]) == CT_NVML_SUCCESS)
                add_links(t, &api, dev[got++]);
        ancestors(t, &api, dev, got);
        free(dev);
        api.shutdown();
    }
    dlclose(lib);
    return 0;
}
