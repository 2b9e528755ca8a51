/* SPDX-License-Identifier: MIT */
/* sysfs source: RDMA ports from /sys/class/infiniband (rate, state, link layer, counters) and
 * network interfaces from /sys/class/net, under a root tests can point at a captured tree;
 * CPUs/NUMA/PCI too when no other source supplied them. */
#include "probe_int.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char *root_of(const struct ct_probe_cfg *cfg)
{
    return cfg && cfg->sysfs_root && *cfg->sysfs_root ? cfg->sysfs_root : "/";
}

static int exists(const char *root, const char *rel)
{
    char path[4200];
    struct stat st;
    return stat(ct_path_cat(path, sizeof path, root, rel), &st) == 0;
}


/* "4: ACTIVE" -> 4 and "ACTIVE". */
static void state_pair(const char *s, int *num, char *str, size_t len)
{
    char word[32] = "";
    int n = 0;
    if (sscanf(s, "%d: %31s", &n, word) == 2) {
        *num = n;
        ct_strlcpy(str, word, len);
    }
}

static void port_attrs(struct ct_topo *t, int i, const char *root, const char *dir)
{
    char rel[4200], buf[256];
    struct ct_nic *n = &t->nic[i];
#define P(name) ct_path_cat(rel, sizeof rel, dir, name)
    if (ct_sysfs_read(root, P("rate"), buf, sizeof buf) < 0)
        ct_topo_note(t, "sysfs: '%s' is missing", P("rate"));
    else if (ct_ib_rate_parse(buf, &n->rate_gbps, &n->lanes, n->speed) < 0)
        ct_topo_note(t, "sysfs: '%s': cannot parse rate '%.64s'", P("rate"), buf);
    if (ct_sysfs_read(root, P("state"), buf, sizeof buf) == 0)
        state_pair(buf, &n->state, n->state_str, sizeof n->state_str);
    if (ct_sysfs_read(root, P("phys_state"), buf, sizeof buf) == 0)
        state_pair(buf, &n->phys_state, n->phys_str, sizeof n->phys_str);
    if (ct_sysfs_read(root, P("link_layer"), buf, sizeof buf) == 0)
        ct_strlcpy(n->link_layer, buf, sizeof n->link_layer);
    if (exists(root, P("counters")))
        ct_str_set(&n->counters, rel);
    if (exists(root, P("hw_counters")))
        ct_str_set(&n->hw_counters, rel);
#undef P
}

static void rdma_dev_attrs(struct ct_topo *t, int i, const char *root, const char *dir, int pci)
{
    char rel[4200], buf[256];
    struct ct_nic *n = &t->nic[i];
#define D(name) ct_path_cat(rel, sizeof rel, dir, name)
    if (ct_sysfs_read(root, D("node_guid"), buf, sizeof buf) == 0)
        ct_strlcpy(n->guid, buf, sizeof n->guid);
    if (ct_sysfs_read(root, D("sys_image_guid"), buf, sizeof buf) == 0)
        ct_strlcpy(n->sys_guid, buf, sizeof n->sys_guid);
    if (ct_sysfs_read(root, D("fw_ver"), buf, sizeof buf) == 0)
        ct_strlcpy(n->fw, buf, sizeof n->fw);
    if (ct_sysfs_read(root, D("hca_type"), buf, sizeof buf) == 0 ||
        ct_sysfs_read(root, D("board_id"), buf, sizeof buf) == 0)
        ct_strlcpy(n->model, buf, sizeof n->model);
    if (ct_sysfs_read(root, D("device/local_cpulist"), buf, sizeof buf) == 0)
        ct_str_set(&n->cpus, buf);
#undef D
    if (pci >= 0) {
        const struct ct_pci *p = &t->pci[pci];
        ct_strlcpy(n->busid, p->busid, sizeof n->busid);
        n->pci = pci;
        n->vendor = p->vendor;
        n->device = p->device;
        n->class_code = p->class_code;
        n->numa = p->numa;
    }
    int efa = n->vendor == 0x1d0f || !strncmp(n->dev, "efa", 3);
    n->kind = efa                                    ? CT_NIC_EFA
              : !strcmp(n->link_layer, "InfiniBand") ? CT_NIC_IB
              : !strcmp(n->link_layer, "Ethernet")   ? CT_NIC_ROCE
                                                     : CT_NIC_UNKNOWN;
}

static void rdma_device(struct ct_topo *t, const char *root, const char *name)
{
    char rel[512], dir[4096], pdir[4200];
    snprintf(rel, sizeof rel, "sys/class/infiniband/%s", name);
    if (ct_sysfs_resolve(root, rel, dir, sizeof dir) < 0) {
        ct_topo_note(t,
                     "sysfs: skipped RDMA device '%s': its link is dangling (virtual device "
                     "not captured)",
                     name);
        return;
    }
    int pci = ct_sysfs_pci_chain(t, root, dir);
    char **ports;
    size_t np = ct_sysfs_list(root, ct_path_cat(pdir, sizeof pdir, dir, "ports"), &ports);
    if (!np)
        ct_topo_note(t, "sysfs: RDMA device '%s' has no ports", name);
    for (size_t k = 0; k < np; k++) {
        long port;
        if (ct_parse_long(ports[k], 10, &port) < 0 || port < 1 || port > 255)
            continue;
        int i = ct_topo_find_nic(t, name, (int)port);
        if (i < 0)
            i = ct_topo_add_nic(t, name, (int)port, NULL);
        char sub[64];
        snprintf(sub, sizeof sub, "ports/%s", ports[k]);
        port_attrs(t, i, root, ct_path_cat(pdir, sizeof pdir, dir, sub));
        rdma_dev_attrs(t, i, root, dir, pci);
    }
    ct_dir_names_free(ports, np);
}

/* Attach a network interface to the RDMA port on the same PCI function, if any. */
static int rdma_port_of(const struct ct_topo *t, const char *busid, long devport)
{
    int any = -1;
    for (size_t i = 0; busid[0] && i < t->n_nic; i++) {
        const struct ct_nic *n = &t->nic[i];
        if (!n->dev[0] || strcmp(n->busid, busid) || n->netdev[0])
            continue;
        if (n->port == devport + 1)
            return (int)i;
        if (any < 0)
            any = (int)i;
    }
    return any;
}

static void netdev_attrs(struct ct_topo *t, int i, const char *root, const char *name, int rdma)
{
    char rel[512], buf[256];
    struct ct_nic *n = &t->nic[i];
    long v;
#define N(f) (snprintf(rel, sizeof rel, "sys/class/net/%s/" f, name), rel)
    if (ct_sysfs_read(root, N("type"), buf, sizeof buf) == 0 && ct_parse_long(buf, 10, &v) == 0)
        n->netdev_type = (int)v;
    if (ct_sysfs_read(root, N("address"), buf, sizeof buf) == 0 && !n->mac[0])
        ct_strlcpy(n->mac, buf, sizeof n->mac);
    if (ct_sysfs_read(root, N("operstate"), buf, sizeof buf) == 0)
        ct_strlcpy(n->oper, buf, sizeof n->oper);
    if (rdma && n->kind == CT_NIC_IB)
        return; /* IPoIB: the port's own state and rate stand */
    if (ct_sysfs_read(root, N("mtu"), buf, sizeof buf) == 0 && ct_parse_long(buf, 10, &v) == 0)
        n->mtu = (int)v;
    if (!rdma && ct_sysfs_read(root, N("operstate"), buf, sizeof buf) == 0)
        ct_strlcpy(n->state_str, buf, sizeof n->state_str);
    if (!rdma && ct_sysfs_read(root, N("speed"), buf, sizeof buf) == 0 && buf[0]) {
        if (ct_parse_long(buf, 10, &v) < 0)
            ct_topo_note(t, "sysfs: '%s': cannot parse speed '%.32s'", N("speed"), buf);
        else if (v > 0)
            n->rate_gbps = v / 1000.0;
    }
    if (!rdma && !n->link_layer[0] && n->netdev_type == 1)
        ct_strlcpy(n->link_layer, "Ethernet", sizeof n->link_layer);
#undef N
}

static void net_device(struct ct_topo *t, const char *root, const char *name, char *skipped,
                       size_t sklen)
{
    char rel[512], dir[4096], dev[4096];
    snprintf(rel, sizeof rel, "sys/class/net/%s", name);
    int ok = ct_sysfs_resolve(root, rel, dir, sizeof dir) == 0 && !strstr(dir, "/virtual/");
    snprintf(rel, sizeof rel, "sys/class/net/%s/device", name);
    if (!ok || ct_sysfs_resolve(root, rel, dev, sizeof dev) < 0) {
        size_t l = strlen(skipped);
        snprintf(skipped + l, sklen - l, "%s%s", l ? ", " : "", name);
        return;
    }
    int pci = ct_sysfs_pci_chain(t, root, dev);
    char busid[CT_BUSID_LEN] = "";
    if (pci >= 0)
        ct_strlcpy(busid, t->pci[pci].busid, sizeof busid);
    char buf[64];
    long devport = 0;
    snprintf(rel, sizeof rel, "sys/class/net/%s/dev_port", name);
    if (ct_sysfs_read(root, rel, buf, sizeof buf) == 0)
        ct_parse_long(buf, 10, &devport);
    int i = rdma_port_of(t, busid, devport), rdma = i >= 0;
    if (i < 0) {
        i = ct_topo_add_nic(t, NULL, 0, name);
        struct ct_nic *n = &t->nic[i];
        n->kind = CT_NIC_ETH;
        ct_strlcpy(n->busid, busid, sizeof n->busid);
        n->pci = pci;
        if (pci >= 0) {
            n->vendor = t->pci[pci].vendor;
            n->device = t->pci[pci].device;
            n->class_code = t->pci[pci].class_code;
            n->numa = t->pci[pci].numa;
        }
    }
    ct_strlcpy(t->nic[i].netdev, name, sizeof t->nic[i].netdev);
    netdev_attrs(t, i, root, name, rdma);
}

int ct_src_sysfs(struct ct_topo *t, const struct ct_probe_cfg *cfg, struct ct_err *err)
{
    const char *root = root_of(cfg);
    int live = !strcmp(root, "/");
    if (!exists(root, "sys") && live) {
        ct_topo_note(t, "sysfs: /sys is not mounted: no NIC ports or PCIe link state");
        return 0;
    }
    struct stat st; /* a capture as shipped (a .tar.bz2 file): the folder is inside it */
    if (!exists(root, "sys") && stat(root, &st) == 0 && S_ISREG(st.st_mode) && strstr(root, ".tar"))
        return ct_err_set(err, CT_EINVAL,
                          "sysfs root '%s' is an archive: unpack it (tar xf) and name the "
                          "folder that holds sys/",
                          root);
    if (!exists(root, "sys"))
        return ct_err_set(err, CT_EINVAL, "sysfs root '%s' has no sys/ directory", root);
    if (!t->n_numa && !t->n_pkg)
        CT_TRY(ct_sysfs_cpus(t, root));
    CT_TRY(ct_sysfs_pci_scan(t, root));
    char **v;
    size_t n = ct_sysfs_list(root, "sys/class/infiniband", &v);
    for (size_t i = 0; i < n; i++)
        rdma_device(t, root, v[i]);
    ct_dir_names_free(v, n);
    if (!n)
        ct_topo_note(t, "sysfs: no RDMA device (no /sys/class/infiniband entries)");
    char skipped[1024] = "";
    n = ct_sysfs_list(root, "sys/class/net", &v);
    for (size_t i = 0; i < n; i++)
        net_device(t, root, v[i], skipped, sizeof skipped);
    ct_dir_names_free(v, n);
    if (skipped[0])
        ct_topo_note(t, "sysfs: virtual network interfaces not listed: %s", skipped);
    return 0;
}
