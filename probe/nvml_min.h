/* SPDX-License-Identifier: MIT */
/* The few NVML declarations colltune uses, so the NVML source builds without the CUDA toolkit;
 * the library is opened at run time with dlopen("libnvidia-ml.so.1"). Layouts follow nvml.h. */
#ifndef CT_NVML_MIN_H
#define CT_NVML_MIN_H

typedef int ct_nvmlReturn_t; /* NVML_SUCCESS = 0 */
typedef struct ct_nvmlDevice_st *ct_nvmlDevice_t;

#define CT_NVML_SUCCESS 0
#define CT_NVML_NVLINK_MAX_LINKS 18

/* nvmlPciInfo_t as filled by nvmlDeviceGetPciInfo_v3 / nvmlDeviceGetNvLinkRemotePciInfo_v2. */
typedef struct {
    char busIdLegacy[16];
    unsigned int domain, bus, device;
    unsigned int pciDeviceId; /* (device << 16) | vendor */
    unsigned int pciSubSystemId;
    char busId[32]; /* "00000000:C0:00.0" */
} ct_nvmlPciInfo_t;

struct ct_nvml_api {
    ct_nvmlReturn_t (*init)(void);                                  /* nvmlInit_v2 */
    ct_nvmlReturn_t (*shutdown)(void);                              /* nvmlShutdown */
    const char *(*error_string)(ct_nvmlReturn_t);                   /* nvmlErrorString */
    ct_nvmlReturn_t (*count)(unsigned int *);                       /* nvmlDeviceGetCount_v2 */
    ct_nvmlReturn_t (*handle)(unsigned int, ct_nvmlDevice_t *);     /* ..GetHandleByIndex_v2 */
    ct_nvmlReturn_t (*name)(ct_nvmlDevice_t, char *, unsigned int); /* nvmlDeviceGetName */
    ct_nvmlReturn_t (*pci)(ct_nvmlDevice_t, ct_nvmlPciInfo_t *);    /* ..GetPciInfo_v3 */
    ct_nvmlReturn_t (*cc)(ct_nvmlDevice_t, int *, int *);           /* ..GetCudaComputeCapability */
    ct_nvmlReturn_t (*link_state)(ct_nvmlDevice_t, unsigned int, int *); /* ..GetNvLinkState */
    ct_nvmlReturn_t (*link_remote)(ct_nvmlDevice_t, unsigned int,
                                   ct_nvmlPciInfo_t *); /* ..GetNvLinkRemotePciInfo_v2 */
    ct_nvmlReturn_t (*link_version)(ct_nvmlDevice_t, unsigned int,
                                    unsigned int *); /* ..GetNvLinkVersion */
    /* nvmlDeviceGetTopologyCommonAncestor; level 0 internal, 10 single switch, 20 multiple
     * switches, 30 host bridge, 40 NUMA node, 50 system */
    ct_nvmlReturn_t (*ancestor)(ct_nvmlDevice_t, ct_nvmlDevice_t, int *);
};

#endif
