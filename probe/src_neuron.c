/* SPDX-License-Identifier: MIT */
/* Neuron source: devices and their torus neighbours from the Neuron driver's sysfs
 * (sys/devices/virtual/neuron_device/neuronN/{core_count,connected_devices}), then the
 * --torus RxC override. */
#include "probe_int.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>

#define NEURON_DIR "sys/devices/virtual/neuron_device"

static void read_device(struct ct_topo *t, const char *root, const char *name, long idx)
{
    char rel[512], buf[512];
    int i = ct_topo_find_accel(t, (int)idx);
    if (i < 0)
        i = ct_topo_add_accel(t, (int)idx);
    struct ct_accel *a = &t->accel[i];
    long v;
    snprintf(rel, sizeof rel, NEURON_DIR "/%s/core_count", name);
    if (ct_sysfs_read(root, rel, buf, sizeof buf) == 0 && ct_parse_long(buf, 10, &v) == 0)
        a->cores = (int)v;
    snprintf(rel, sizeof rel, NEURON_DIR "/%s/connected_devices", name);
    if (ct_sysfs_read(root, rel, buf, sizeof buf) == 0) {
        int nb[64], n = 0;
        char *save = NULL;
        for (char *p = strtok_r(buf, ", ", &save); p && n < 64; p = strtok_r(NULL, ", ", &save))
            if (ct_parse_long(p, 10, &v) == 0 && v >= 0 && v < 4096)
                nb[n++] = (int)v;
            else
                ct_topo_note(t, "neuron: '%s': cannot parse '%.16s'", rel, p);
        free(a->nbrs);
        a->nbrs = n ? ct_xmalloc((size_t)n * sizeof *nb) : NULL;
        if (n)
            memcpy(a->nbrs, nb, (size_t)n * sizeof *nb);
        a->n_nbrs = (size_t)n;
    }
    char dev[4096];
    snprintf(rel, sizeof rel, NEURON_DIR "/%s/device", name);
    if (ct_sysfs_resolve(root, rel, dev, sizeof dev) == 0) {
        int p = ct_sysfs_pci_chain(t, root, dev);
        if (p >= 0)
            ct_strlcpy(a->busid, t->pci[p].busid, sizeof a->busid);
    }
}

int ct_src_neuron(struct ct_topo *t, const struct ct_probe_cfg *cfg, struct ct_err *err)
{
    const char *root = cfg && cfg->sysfs_root && *cfg->sysfs_root ? cfg->sysfs_root : "/";
    char path[4200];
    DIR *d = opendir(ct_path_cat(path, sizeof path, root, NEURON_DIR));
    size_t found = 0;
    for (struct dirent *e; d && (e = readdir(d));) {
        long idx;
        if (strncmp(e->d_name, "neuron", 6) || ct_parse_long(e->d_name + 6, 10, &idx) < 0 ||
            idx < 0 || idx > 4096)
            continue;
        read_device(t, root, e->d_name, idx);
        found++;
    }
    if (d)
        closedir(d);
    if (!found && !t->n_accel)
        ct_topo_note(t, "neuron: no Neuron device");
    if (cfg && cfg->torus_rows > 0)
        CT_TRY(ct_topo_set_torus(t, cfg->torus_rows, cfg->torus_cols, err));
    return 0;
}
