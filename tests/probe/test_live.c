/* SPDX-License-Identifier: MIT */
/* Live discovery on the machine running the tests, checked against what /sys says directly:
 * CPUs, NUMA nodes, the PCI device of every physical network interface, GPUs, RDMA ports,
 * and notes for the sources that found nothing. */
#include "probe_test.h"

#include <ctype.h>
#include <dirent.h>
#include <sched.h>

static size_t count_dir(const char *path, const char *prefix)
{
    DIR *d = opendir(path);
    size_t n = 0;
    for (struct dirent *e; d && (e = readdir(d));)
        n += !strncmp(e->d_name, prefix, strlen(prefix)) && e->d_name[strlen(prefix)] >= '0' &&
             e->d_name[strlen(prefix)] <= '9';
    if (d)
        closedir(d);
    return n;
}

static long read_hex(const char *path)
{
    char *s = slurp(path, NULL);
    long v = strtol(s, NULL, 16);
    free(s);
    return v;
}

/* A compute GPU: a 3D controller, or an NVIDIA/AMD display controller (not a BMC's VGA). */
static int is_gpu(uint32_t cls, uint16_t vendor)
{
    return (cls >> 8) == 0x0302 || ((cls >> 16) == 0x03 && (vendor == 0x10de || vendor == 0x1002));
}

static struct ct_topo *probe_live(void)
{
    struct ct_topo *t = ct_topo_new();
    struct ct_err err = {0};
    cr_assert_eq(ct_probe_local(t, NULL, &err), 0, "%s", err.msg);
    return t;
}

Test(live, cpus_and_numa)
{
    struct ct_topo *t = probe_live();
    cpu_set_t mine; /* hwloc counts the CPUs this process may use (its cgroup) */
    cr_assert_eq(sched_getaffinity(0, sizeof mine, &mine), 0);
    cr_expect_geq(t->npus, CPU_COUNT(&mine));
    cr_expect_leq(t->npus, sysconf(_SC_NPROCESSORS_CONF));
    cr_expect_geq(t->n_pkg, 1);
    size_t nodes = count_dir("/sys/devices/system/node", "node");
    cr_expect_eq(t->n_numa, nodes ? nodes : 1);
    cr_expect_str_eq(t->origin, "live");
    cr_expect_not_null(t->hostname);
    char *s = render(t, "summary");
    cr_expect(strstr(s, "CPU: ") && strstr(s, "NUMA: ") && strstr(s, "host bridge"));
    free(s);
    ct_topo_free(t);
}

Test(live, network_interfaces)
{
    struct ct_topo *t = probe_live();
    DIR *d = opendir("/sys/class/net");
    cr_assert_not_null(d);
    int physical = 0;
    for (struct dirent *e; (e = readdir(d));) {
        char link[PATH_MAX], dev[PATH_MAX];
        snprintf(link, sizeof link, "/sys/class/net/%s/device", e->d_name);
        if (e->d_name[0] == '.' || !realpath(link, dev) || !strstr(dev, "/pci"))
            continue; /* virtual interface */
        physical++;
        int i = ct_topo_find_netdev(t, e->d_name);
        cr_assert_geq(i, 0, "%s not found", e->d_name);
        const char *bdf = strrchr(dev, '/') + 1;
        char want[CT_BUSID_LEN];
        if (ct_busid_canon(bdf, want) < 0) { /* virtio: the PCI function is one level up */
            *strrchr(dev, '/') = 0;
            cr_assert_eq(ct_busid_canon(strrchr(dev, '/') + 1, want), 0);
        }
        cr_expect_str_eq(t->nic[i].busid, want, "%s", e->d_name);
        cr_expect_geq(t->nic[i].pci, 0);
        cr_expect_neq(t->nic[i].state_str[0] || t->nic[i].state, 0);
    }
    closedir(d);
    if (access("/sys/class/net/eth0/device", F_OK) == 0) /* the build VM's virtio NIC */
        cr_expect_geq(ct_topo_find_netdev(t, "eth0"), 0);
    cr_expect_eq(physical > 0, t->n_nic > 0);
    cr_expect_lt(ct_topo_find_netdev(t, "lo"), 0, "loopback is virtual");
    ct_topo_free(t);
}

Test(live, gpus_and_rdma_match_sysfs)
{
    struct ct_topo *t = probe_live();
    size_t gpus = 0;
    DIR *d = opendir("/sys/bus/pci/devices");
    for (struct dirent *e; d && (e = readdir(d));) {
        char p[PATH_MAX];
        if (e->d_name[0] == '.')
            continue;
        snprintf(p, sizeof p, "/sys/bus/pci/devices/%s/class", e->d_name);
        uint32_t cls = (uint32_t)read_hex(p);
        snprintf(p, sizeof p, "/sys/bus/pci/devices/%s/vendor", e->d_name);
        gpus += is_gpu(cls, (uint16_t)read_hex(p));
    }
    if (d)
        closedir(d);
    cr_expect_eq(t->n_gpu, gpus);
    size_t rdma = count_dir("/sys/class/infiniband", "");
    if (!gpus) {
        char *s = render(t, "summary");
        cr_expect(strstr(s, "GPUs: none found"));
        free(s);
        cr_expect(has_note(t, "nvml:"), "the NVML source says why it saw nothing");
    }
    if (!rdma) {
        cr_expect(has_note(t, "no RDMA device"));
        for (size_t i = 0; i < t->n_nic; i++)
            cr_expect_eq(t->nic[i].dev[0], 0, "no RDMA port without /sys/class/infiniband");
    }
    ct_topo_free(t);
}

Test(live, root_slash_is_live)
{
    struct ct_probe_cfg cfg = {.sysfs_root = "/"};
    struct ct_topo *a = ct_topo_new(), *b = probe_live();
    struct ct_err err = {0};
    cr_assert_eq(ct_probe_local(a, &cfg, &err), 0, "%s", err.msg);
    cr_expect_eq(a->n_pci, b->n_pci);
    cr_expect_eq(a->n_nic, b->n_nic);
    cr_expect_eq(a->npus, b->npus);
    ct_topo_free(a);
    ct_topo_free(b);
}

/* A CPU model as /proc/cpuinfo pads it (this VM's "Turin-like Processor" plus 13 spaces)
 * is kept trimmed: it printed "Processor             , 2 cores". */
Test(live, cpu_models_are_trimmed)
{
    struct ct_topo *t = probe_live();
    for (size_t k = 0; k < t->n_pkg; k++) {
        const char *m = t->pkg[k].model;
        size_t n = m ? strlen(m) : 0;
        cr_expect(!n || (!isspace((unsigned char)m[0]) && !isspace((unsigned char)m[n - 1])),
                  "package %zu: '%s'", k, m);
    }
    ct_topo_free(t);
}
