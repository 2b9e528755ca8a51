/* SPDX-License-Identifier: MIT */
/* The tables of discovery sources and file importers, and the two entry points that run them:
 * ct_probe_local (every source, in order) and ct_topo_import (one importer). */
#include "probe_int.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const struct ct_source sources[] = {
    {"hwloc", "CPUs, NUMA nodes, PCI tree, GPUs (libhwloc)", ct_src_hwloc},
    {"sysfs", "RDMA ports, network interfaces, PCIe link state (/sys)", ct_src_sysfs},
    {"ibverbs", "RDMA port attributes (libibverbs)", ct_src_ibverbs},
    {"nvml", "GPU models and NVLink (libnvidia-ml, loaded at run time)", ct_src_nvml},
    {"neuron", "Neuron devices and torus neighbours (Neuron sysfs)", ct_src_neuron},
};

static const struct ct_importer importers[] = {
    {"hwloc-xml", "hwloc XML (lstopo --of xml)", ct_imp_hwloc_xml},
    {"nccl-xml", "NCCL topology XML (NCCL_TOPO_FILE, NCCL_TOPO_DUMP_FILE)", ct_imp_nccl_xml},
    {"nvidia-smi", "`nvidia-smi topo -m` text", ct_imp_smi},
    {"neuron-ls", "`neuron-ls [--topology]` text or `neuron-ls -j` JSON", ct_imp_neuron},
    {"report", "system report: lspci -tv, numactl --hardware, nvidia-smi topo -m, ibv_devinfo",
     ct_imp_report},
    {"json", "colltune topology JSON (colltune probe --json)", ct_imp_json},
};

const struct ct_source *ct_source_at(size_t i)
{
    return i < sizeof sources / sizeof sources[0] ? &sources[i] : NULL;
}

const struct ct_importer *ct_importer_at(size_t i)
{
    return i < sizeof importers / sizeof importers[0] ? &importers[i] : NULL;
}

const struct ct_importer *ct_importer_find(const char *name)
{
    for (size_t i = 0; name && i < sizeof importers / sizeof importers[0]; i++)
        if (!strcmp(importers[i].name, name))
            return &importers[i];
    return NULL;
}

int ct_probe_local(struct ct_topo *t, const struct ct_probe_cfg *cfg, struct ct_err *err)
{
    struct ct_probe_cfg none = {0};
    if (!cfg)
        cfg = &none;
    int live = !cfg->sysfs_root || !strcmp(cfg->sysfs_root, "/");
    if (live && !t->hostname) {
        char host[256] = "";
        if (gethostname(host, sizeof host - 1) == 0 && host[0])
            t->hostname = ct_xstrdup(host);
    }
    if (!t->origin) {
        char o[4200];
        snprintf(o, sizeof o, "%s%s", live ? "live" : "sysfs:", live ? "" : cfg->sysfs_root);
        t->origin = ct_xstrdup(o);
    }
    for (size_t i = 0; i < sizeof sources / sizeof sources[0]; i++) {
        int rc = sources[i].discover(t, cfg, err);
        if (rc < 0)
            return ct_err_wrap(err, "probe source '%s': ", sources[i].name);
    }
    ct_topo_finalize(t);
    return 0;
}

int ct_topo_import_buf(struct ct_topo *t, const char *format, const char *buf, size_t len,
                       const char *fname, struct ct_err *err)
{
    const struct ct_importer *imp = ct_importer_find(format);
    if (!imp)
        return ct_err_set(err, CT_EINVAL, "unknown input format '%s'", format ? format : "");
    t->ordered = 1; /* a file states its GPUs and NICs in an order: keep it */
    CT_TRY(imp->parse(t, buf, len, fname, err));
    if (!t->origin) {
        char o[4200];
        snprintf(o, sizeof o, "%s:%s", format, fname);
        t->origin = ct_xstrdup(o);
    }
    ct_topo_finalize(t);
    return 0;
}

int ct_topo_import(struct ct_topo *t, const char *format, const char *path,
                   const struct ct_probe_cfg *cfg, struct ct_err *err)
{
    if (!ct_importer_find(format))
        return ct_err_set(err, CT_EINVAL, "unknown input format '%s'", format ? format : "");
    char *buf;
    size_t len;
    int rc = ct_read_file(path, &buf, &len, err);
    if (rc < 0)
        return rc;
    rc = ct_topo_import_buf(t, format, buf, len, path, err);
    free(buf);
    if (!rc && cfg && cfg->torus_rows > 0)
        rc = ct_topo_set_torus(t, cfg->torus_rows, cfg->torus_cols, err);
    return rc;
}
