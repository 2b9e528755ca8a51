/* SPDX-License-Identifier: MIT */
/* sysfs under a root (live "/" or a captured tree): file and link helpers, CPUs/NUMA/packages
 * from /sys/devices/system, and the PCI tree from the device paths of interesting devices. */
#include "probe_int.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void join(char *out, size_t len, const char *root, const char *rel)
{
    if (!root || !*root)
        root = "/";
    size_t n = strlen(root);
    snprintf(out, len, "%s%s%s", root, n && root[n - 1] == '/' ? "" : "/", rel);
}

int ct_sysfs_read(const char *root, const char *rel, char *buf, size_t len)
{
    char path[4096];
    join(path, sizeof path, root, rel);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    size_t n = fread(buf, 1, len - 1, f);
    int bad = ferror(f);
    fclose(f);
    if (bad)
        return -1;
    buf[n] = 0;
    ct_str_trim(buf);
    return 0;
}

/* Lexically normalise "a/b/../c/./d" (no leading '/') in place. */
static void normalise(char *p)
{
    char *seg[512];
    int n = 0;
    char *save = NULL;
    for (char *s = strtok_r(p, "/", &save); s; s = strtok_r(NULL, "/", &save)) {
        if (!strcmp(s, "."))
            continue;
        if (!strcmp(s, "..")) {
            if (n)
                n--;
            continue;
        }
        if (n < 512)
            seg[n++] = s;
    }
    char out[4096] = "";
    size_t len = 0;
    for (int i = 0; i < n && len < sizeof out; i++)
        len += (size_t)snprintf(out + len, sizeof out - len, "%s%s", i ? "/" : "", seg[i]);
    strcpy(p, out);
}

/* Resolve rel component by component, following every symlink on the way (relative targets
 * against the link's directory, absolute ones against root), like realpath under root. */
int ct_sysfs_resolve(const char *root, const char *rel, char *out, size_t len)
{
    char work[4096], cur[4096] = "", cand[4096], path[8300], target[4096], tmp[8300];
    int hops = 0;
    ct_strlcpy(work, rel, sizeof work);
    char *save = NULL;
    for (char *c = strtok_r(work, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
        if (!strcmp(c, "."))
            continue;
        if (!strcmp(c, "..")) {
            char *slash = strrchr(cur, '/');
            if (slash)
                *slash = 0;
            else
                cur[0] = 0;
            continue;
        }
        if (cur[0])
            ct_path_cat(cand, sizeof cand, cur, c);
        else
            ct_strlcpy(cand, c, sizeof cand);
        join(path, sizeof path, root, cand);
        ssize_t n = readlink(path, target, sizeof target - 1);
        if (n < 0 || ++hops > 40) {
            ct_strlcpy(cur, cand, sizeof cur);
            continue;
        }
        target[n] = 0;
        if (target[0] == '/')
            ct_strlcpy(tmp, target + 1, sizeof tmp);
        else if (cur[0])
            ct_path_cat(tmp, sizeof tmp, cur, target);
        else
            ct_strlcpy(tmp, target, sizeof tmp);
        normalise(tmp);
        ct_strlcpy(cur, tmp, sizeof cur);
    }
    struct stat st;
    join(path, sizeof path, root, cur);
    if (!cur[0] || stat(path, &st) < 0 || strlen(cur) >= len)
        return -1;
    ct_strlcpy(out, cur, len);
    return 0;
}

size_t ct_sysfs_list(const char *root, const char *rel, char ***out)
{
    char path[4096];
    join(path, sizeof path, root, rel);
    return ct_dir_names(path, out);
}

static long read_long(const char *root, const char *rel, int base, long def)
{
    char buf[64];
    long v;
    if (ct_sysfs_read(root, rel, buf, sizeof buf) < 0 || ct_parse_long(buf, base, &v) < 0)
        return def;
    return v;
}

/* ---- CPUs, NUMA nodes, packages ---- */

static void numa_nodes(struct ct_topo *t, const char *root)
{
    char **v, rel[512], buf[4096];
    size_t n = ct_sysfs_list(root, "sys/devices/system/node", &v);
    for (size_t i = 0; i < n; i++) {
        long id;
        if (strncmp(v[i], "node", 4) || ct_parse_long(v[i] + 4, 10, &id) < 0)
            continue;
        snprintf(rel, sizeof rel, "sys/devices/system/node/%s/cpulist", v[i]);
        int k = ct_topo_add_numa(t, (int)id, ct_sysfs_read(root, rel, buf, sizeof buf) ? "" : buf);
        snprintf(rel, sizeof rel, "sys/devices/system/node/%s/meminfo", v[i]);
        char *m = ct_sysfs_read(root, rel, buf, sizeof buf) ? NULL : strstr(buf, "MemTotal:");
        if (m)
            t->numa[k].mem_bytes = strtoull(m + 9, NULL, 10) * 1024;
        snprintf(rel, sizeof rel, "sys/devices/system/node/%s/distance", v[i]);
        if (ct_sysfs_read(root, rel, buf, sizeof buf) == 0) {
            int d[256], nd = 0;
            char *save = NULL;
            for (char *s = strtok_r(buf, " ", &save); s && nd < 256; s = strtok_r(NULL, " ", &save))
                d[nd++] = atoi(s);
            t->numa[k].dist = ct_xmalloc((size_t)(nd ? nd : 1) * sizeof(int));
            memcpy(t->numa[k].dist, d, (size_t)nd * sizeof(int));
            t->numa[k].n_dist = (size_t)nd;
        }
    }
    ct_dir_names_free(v, n);
}

static void packages(struct ct_topo *t, const char *root)
{
    char **v, rel[512], model[256] = "";
    size_t n = ct_sysfs_list(root, "sys/devices/system/cpu", &v);
    char *info = NULL;
    size_t len;
    join(rel, sizeof rel, root, "proc/cpuinfo");
    if (ct_read_file(rel, &info, &len, NULL) == 0) {
        char *m = strstr(info, "model name");
        char *colon = m ? strchr(m, ':') : NULL;
        if (colon)
            sscanf(colon + 1, " %255[^\n]", model);
        free(info);
    }
    long seen_core[4096][2];
    size_t ncore = 0;
    for (size_t i = 0; i < n; i++) {
        long cpu;
        if (strncmp(v[i], "cpu", 3) || ct_parse_long(v[i] + 3, 10, &cpu) < 0)
            continue;
        snprintf(rel, sizeof rel, "sys/devices/system/cpu/%s/topology/physical_package_id", v[i]);
        long pkg = read_long(root, rel, 10, -1);
        snprintf(rel, sizeof rel, "sys/devices/system/cpu/%s/topology/core_id", v[i]);
        long core = read_long(root, rel, 10, -1);
        if (pkg < 0)
            continue;
        t->npus++;
        int k = -1;
        for (size_t j = 0; j < t->n_pkg; j++)
            if (t->pkg[j].os_index == pkg)
                k = (int)j;
        if (k < 0) {
            k = ct_topo_add_pkg(t, (int)pkg, "");
            t->pkg[k].model = model[0] ? ct_str_trim(ct_xstrdup(model)) : NULL; /* padded */
        }
        t->pkg[k].npus++;
        size_t j = 0;
        while (j < ncore && (seen_core[j][0] != pkg || seen_core[j][1] != core))
            j++;
        if (j == ncore && ncore < 4096) {
            seen_core[ncore][0] = pkg;
            seen_core[ncore++][1] = core;
            t->pkg[k].ncores++;
            t->ncores++;
        }
        char piece[32];
        snprintf(piece, sizeof piece, "%s%ld", t->pkg[k].cpus[0] ? " " : "", cpu);
        char *w = ct_xmalloc(strlen(t->pkg[k].cpus) + strlen(piece) + 1);
        strcpy(w, t->pkg[k].cpus);
        strcat(w, piece);
        free(t->pkg[k].cpus);
        t->pkg[k].cpus = w;
    }
    ct_dir_names_free(v, n);
    for (size_t j = 0; j < t->n_pkg; j++) { /* "0 1 2" -> "0-2" */
        char *l = ct_cpus_from_words(t->pkg[j].cpus);
        free(t->pkg[j].cpus);
        t->pkg[j].cpus = l ? l : ct_xstrdup("");
    }
}

int ct_sysfs_cpus(struct ct_topo *t, const char *root)
{
    numa_nodes(t, root);
    packages(t, root);
    if (!t->n_numa)
        ct_topo_note(t, "sysfs: no NUMA node information under sys/devices/system/node");
    return 0;
}

/* ---- PCI ---- */

static void pci_attrs(struct ct_topo *t, int i, const char *root, const char *dir)
{
    char rel[4200], buf[128];
    struct ct_pci *p = &t->pci[i];
#define ATTR(name) ct_path_cat(rel, sizeof rel, dir, name)
    if (!p->vendor)
        p->vendor = (uint16_t)read_long(root, ATTR("vendor"), 16, 0);
    if (!p->device)
        p->device = (uint16_t)read_long(root, ATTR("device"), 16, 0);
    if (!p->class_code)
        p->class_code = (uint32_t)read_long(root, ATTR("class"), 16, 0);
    if (!p->subvendor)
        p->subvendor = (uint16_t)read_long(root, ATTR("subsystem_vendor"), 16, 0);
    if (!p->subdevice)
        p->subdevice = (uint16_t)read_long(root, ATTR("subsystem_device"), 16, 0);
    long numa = read_long(root, ATTR("numa_node"), 10, -1);
    if (p->numa < 0 && numa >= 0)
        p->numa = (int)numa;
    if (ct_sysfs_read(root, ATTR("current_link_speed"), buf, sizeof buf) == 0)
        p->link_gts = (float)(ct_pcie_gts_parse(buf) > 0 ? ct_pcie_gts_parse(buf) : 0);
    if (ct_sysfs_read(root, ATTR("max_link_speed"), buf, sizeof buf) == 0)
        p->max_gts = (float)(ct_pcie_gts_parse(buf) > 0 ? ct_pcie_gts_parse(buf) : 0);
    long w = read_long(root, ATTR("current_link_width"), 10, 0);
    p->link_width = w > 0 && w <= 32 ? (int)w : p->link_width;
    w = read_long(root, ATTR("max_link_width"), 10, 0);
    p->max_width = w > 0 && w <= 32 ? (int)w : p->max_width;
#undef ATTR
}

int ct_sysfs_pci_chain(struct ct_topo *t, const char *root, const char *devpath)
{
    if (strncmp(devpath, "sys/devices/pci", 15))
        return -1;
    char path[4096], bus[CT_BUSID_LEN];
    ct_strlcpy(path, devpath, sizeof path);
    char *comp = path + strlen("sys/devices/"), *next = strchr(comp, '/');
    if (next)
        *next = 0;
    int parent = ct_topo_find_pci(t, comp);
    if (parent < 0)
        parent = ct_topo_add_pci(t, comp, CT_PCI_HOST, -1);
    int last = -1;
    while (next) {
        *next = '/';
        comp = next + 1;
        next = strchr(comp, '/');
        if (next)
            *next = 0;
        if (ct_busid_canon(comp, bus) < 0)
            break;
        int i = ct_topo_find_pci(t, bus);
        if (i < 0)
            i = ct_topo_add_pci(t, bus, CT_PCI_DEV, parent);
        if (last >= 0 && t->pci[last].kind == CT_PCI_DEV)
            t->pci[last].kind = CT_PCI_BRIDGE;
        pci_attrs(t, i, root, path); /* path ends at this component */
        parent = last = i;
    }
    return last;
}

static int interesting(uint32_t cls, uint16_t vendor)
{
    unsigned base = cls >> 16;
    return base == 0x01 || base == 0x02 || base == 0x03 || base == 0x0b || base == 0x12 ||
           ct_class_is_nvswitch(cls, vendor) || (vendor == 0x1d0f && base == 0x08);
}

int ct_sysfs_pci_scan(struct ct_topo *t, const char *root)
{
    char **v, rel[512], dev[4096];
    size_t n = ct_sysfs_list(root, "sys/bus/pci/devices", &v);
    for (size_t i = 0; i < n; i++) {
        snprintf(rel, sizeof rel, "sys/bus/pci/devices/%s/class", v[i]);
        uint32_t cls = (uint32_t)read_long(root, rel, 16, 0);
        snprintf(rel, sizeof rel, "sys/bus/pci/devices/%s/vendor", v[i]);
        uint16_t vendor = (uint16_t)read_long(root, rel, 16, 0);
        snprintf(rel, sizeof rel, "sys/bus/pci/devices/%s", v[i]);
        if (!interesting(cls, vendor) || ct_sysfs_resolve(root, rel, dev, sizeof dev) < 0)
            continue;
        int p = ct_sysfs_pci_chain(t, root, dev);
        if (p < 0)
            continue;
        const struct ct_pci *x = &t->pci[p];
        if (ct_class_is_nvswitch(x->class_code, x->vendor))
            ct_topo_add_nvswitch(t, x->busid);
        else if (ct_class_is_gpu(x->class_code, x->vendor) && ct_topo_find_gpu(t, x->busid) < 0) {
            int g = ct_topo_add_gpu(t, x->busid);
            t->gpu[g].vendor = x->vendor;
            t->gpu[g].device = x->device;
        }
    }
    ct_dir_names_free(v, n);
    return 0;
}
