/* SPDX-License-Identifier: MIT */
/* hwloc source (live: CPUs, NUMA, PCI tree, GPUs) and the hwloc XML importer (the same plus
 * NICs from OS devices and the NVLinkBandwidth matrix), both through libhwloc itself. */
#include "probe_int.h"

#include <stdlib.h>
#include <string.h>

#ifdef HAVE_HWLOC
#include <hwloc.h>

struct conv {
    struct ct_topo *t;
    hwloc_topology_t h;
    int from_xml;
};

static char *bitmap_list(hwloc_const_bitmap_t b)
{
    char *s = NULL;
    if (!b || hwloc_bitmap_list_asprintf(&s, b) < 0)
        return ct_xstrdup("");
    char *c = ct_xstrdup(s);
    free(s);
    return c;
}

static void cpus_and_numa(struct conv *c)
{
    struct ct_topo *t = c->t;
    hwloc_topology_t h = c->h;
    hwloc_obj_t o = NULL;
    while ((o = hwloc_get_next_obj_by_type(h, HWLOC_OBJ_PACKAGE, o))) {
        char *cpus = bitmap_list(o->cpuset);
        int k = ct_topo_add_pkg(t, (int)o->os_index, cpus);
        free(cpus);
        const char *m = hwloc_obj_get_info_by_name(o, "CPUModel");
        t->pkg[k].model = m ? ct_str_trim(ct_xstrdup(m)) : NULL; /* padded in /proc/cpuinfo */
        t->pkg[k].ncores = hwloc_get_nbobjs_inside_cpuset_by_type(h, o->cpuset, HWLOC_OBJ_CORE);
        t->pkg[k].npus = hwloc_get_nbobjs_inside_cpuset_by_type(h, o->cpuset, HWLOC_OBJ_PU);
    }
    while ((o = hwloc_get_next_obj_by_type(h, HWLOC_OBJ_NUMANODE, o))) {
        char *cpus = bitmap_list(o->cpuset);
        int k = ct_topo_add_numa(t, (int)o->os_index, cpus);
        free(cpus);
        t->numa[k].mem_bytes = o->attr->numanode.local_memory;
    }
    t->npus = hwloc_get_nbobjs_by_type(h, HWLOC_OBJ_PU);
    t->ncores = hwloc_get_nbobjs_by_type(h, HWLOC_OBJ_CORE);
    unsigned nr = 1;
    struct hwloc_distances_s *d = NULL;
    if (hwloc_distances_get_by_type(h, HWLOC_OBJ_NUMANODE, &nr, &d,
                                    HWLOC_DISTANCES_KIND_MEANS_LATENCY, 0) == 0 &&
        nr == 1) {
        for (unsigned i = 0; i < d->nbobjs; i++) {
            int k = ct_topo_find_numa(t, (int)d->objs[i]->os_index);
            if (k < 0 || t->numa[k].n_dist)
                continue;
            t->numa[k].dist = ct_xcalloc(t->n_numa, sizeof(int));
            t->numa[k].n_dist = t->n_numa;
            for (unsigned j = 0; j < d->nbobjs; j++) {
                int m = ct_topo_find_numa(t, (int)d->objs[j]->os_index);
                if (m >= 0)
                    t->numa[k].dist[m] = (int)d->values[i * d->nbobjs + j];
            }
        }
        hwloc_distances_release(h, d);
    }
}

static void busid_of(hwloc_obj_t o, char out[CT_BUSID_LEN])
{
    const struct hwloc_pcidev_attr_s *p =
        o->type == HWLOC_OBJ_BRIDGE ? &o->attr->bridge.upstream.pci : &o->attr->pcidev;
    snprintf(out, CT_BUSID_LEN, "%04x:%02x:%02x.%x", p->domain, p->bus, p->dev, p->func);
}

static void add_gpu_from(struct conv *c, hwloc_obj_t o, int pci)
{
    struct ct_topo *t = c->t;
    int g = ct_topo_add_gpu(t, t->pci[pci].busid);
    struct ct_gpu *gpu = &t->gpu[g];
    gpu->pci = pci;
    gpu->vendor = o->attr->pcidev.vendor_id;
    gpu->device = o->attr->pcidev.device_id;
    for (hwloc_obj_t k = o->io_first_child; k; k = k->next_sibling) {
        if (k->type != HWLOC_OBJ_OS_DEVICE)
            continue;
        const char *m = hwloc_obj_get_info_by_name(k, "GPUModel");
        if (m && !gpu->model)
            gpu->model = ct_xstrdup(m);
        if (k->name && (!gpu->osname || !strncmp(k->name, "nvml", 4)))
            ct_str_set(&gpu->osname, k->name);
        long num; /* nvmlN: NVML's (and nvidia-smi's) GPU number */
        if (k->name && !strncmp(k->name, "nvml", 4) && ct_parse_long(k->name + 4, 10, &num) == 0 &&
            num >= 0 && num < 65536)
            gpu->index = (int)num;
    }
}

static void add_nics_from(struct conv *c, hwloc_obj_t o, int pci)
{
    struct ct_topo *t = c->t;
    const struct ct_pci *p = &t->pci[pci];
    int rdma = -1;
    for (hwloc_obj_t k = o->io_first_child; k; k = k->next_sibling)
        if (k->type == HWLOC_OBJ_OS_DEVICE && k->attr->osdev.type == HWLOC_OBJ_OSDEV_OPENFABRICS &&
            k->name && rdma < 0) {
            rdma = ct_topo_add_nic(t, k->name, 1, NULL);
            struct ct_nic *n = &t->nic[rdma];
            const char *g = hwloc_obj_get_info_by_name(k, "NodeGUID");
            ct_strlcpy(n->guid, g ? g : "", sizeof n->guid);
            n->kind = p->vendor == 0x1d0f              ? CT_NIC_EFA
                      : (p->class_code >> 8) == 0x0207 ? CT_NIC_IB
                                                       : CT_NIC_ROCE;
        }
    for (hwloc_obj_t k = o->io_first_child; k; k = k->next_sibling) {
        if (k->type != HWLOC_OBJ_OS_DEVICE || k->attr->osdev.type != HWLOC_OBJ_OSDEV_NETWORK ||
            !k->name)
            continue;
        int i = rdma >= 0 && !t->nic[rdma].netdev[0] ? rdma : ct_topo_add_nic(t, NULL, 0, k->name);
        struct ct_nic *n = &t->nic[i];
        ct_strlcpy(n->netdev, k->name, sizeof n->netdev);
        const char *mac = hwloc_obj_get_info_by_name(k, "Address");
        ct_strlcpy(n->mac, mac ? mac : "", sizeof n->mac);
        if (i != rdma)
            n->kind = CT_NIC_ETH;
    }
    for (size_t i = 0; i < t->n_nic; i++)
        if (!strcmp(t->nic[i].busid, "") && t->nic[i].pci < 0 &&
            (i == (size_t)rdma || !t->nic[i].dev[0])) {
            ct_strlcpy(t->nic[i].busid, p->busid, sizeof t->nic[i].busid);
            t->nic[i].pci = pci;
            t->nic[i].vendor = p->vendor;
            t->nic[i].device = p->device;
            t->nic[i].class_code = p->class_code;
        }
}

static int add_io(struct conv *c, hwloc_obj_t o, int parent)
{
    struct ct_topo *t = c->t;
    char bus[CT_BUSID_LEN];
    int i;
    if (o->type == HWLOC_OBJ_BRIDGE && o->attr->bridge.upstream_type == HWLOC_OBJ_BRIDGE_HOST) {
        snprintf(bus, sizeof bus, "pci%04x:%02x", o->attr->bridge.downstream.pci.domain,
                 o->attr->bridge.downstream.pci.secondary_bus);
        i = ct_topo_add_pci(t, bus, CT_PCI_HOST, parent);
        return i;
    }
    busid_of(o, bus);
    i = ct_topo_add_pci(t, bus, o->type == HWLOC_OBJ_BRIDGE ? CT_PCI_BRIDGE : CT_PCI_DEV, parent);
    const struct hwloc_pcidev_attr_s *a =
        o->type == HWLOC_OBJ_BRIDGE ? &o->attr->bridge.upstream.pci : &o->attr->pcidev;
    struct ct_pci *p = &t->pci[i];
    p->vendor = a->vendor_id;
    p->device = a->device_id;
    p->subvendor = a->subvendor_id;
    p->subdevice = a->subdevice_id;
    p->class_code = (uint32_t)a->class_id << 8;
    p->link_gbs = a->linkspeed;
    if (o->type != HWLOC_OBJ_PCI_DEVICE)
        return i;
    int nvs = (o->subtype && !strcmp(o->subtype, "NVSwitch")) ||
              ct_class_is_nvswitch(p->class_code, p->vendor);
    if (nvs)
        ct_topo_add_nvswitch(t, bus);
    else if (ct_class_is_gpu(p->class_code, p->vendor))
        add_gpu_from(c, o, i);
    else if (c->from_xml && (p->class_code >> 16) == 0x02)
        add_nics_from(c, o, i);
    return i;
}

static void locate_root(struct conv *c, hwloc_obj_t o, int i)
{
    hwloc_obj_t anc = hwloc_get_non_io_ancestor_obj(c->h, o);
    if (anc && anc->nodeset && hwloc_bitmap_weight(anc->nodeset) == 1)
        c->t->pci[i].numa = hwloc_bitmap_first(anc->nodeset);
    hwloc_obj_t pkg = anc ? hwloc_get_ancestor_obj_by_type(c->h, HWLOC_OBJ_PACKAGE, anc) : NULL;
    if (!pkg && anc && anc->type == HWLOC_OBJ_PACKAGE)
        pkg = anc;
    if (pkg)
        c->t->pci[i].package = (int)pkg->os_index;
}

static void walk(struct conv *c, hwloc_obj_t o, int parent, int depth)
{
    if (depth > 200)
        return;
    for (hwloc_obj_t k = o->first_child; k; k = k->next_sibling)
        walk(c, k, -1, depth + 1);
    for (hwloc_obj_t k = o->io_first_child; k; k = k->next_sibling) {
        if (k->type != HWLOC_OBJ_BRIDGE && k->type != HWLOC_OBJ_PCI_DEVICE)
            continue;
        int i = add_io(c, k, parent);
        if (parent < 0)
            locate_root(c, k, i);
        walk(c, k, i, depth + 1);
    }
}

/* Index of the GPU / NVSwitch / package an NVLinkBandwidth object stands for. */
static int nvlink_end(struct conv *c, hwloc_obj_t o, enum ct_end_kind *kind)
{
    char bus[CT_BUSID_LEN];
    if (o->type == HWLOC_OBJ_PACKAGE) {
        *kind = CT_END_CPU;
        return (int)o->os_index;
    }
    if (o->type == HWLOC_OBJ_OS_DEVICE)
        o = o->parent;
    if (!o || o->type != HWLOC_OBJ_PCI_DEVICE)
        return -1;
    busid_of(o, bus);
    int g = ct_topo_find_gpu(c->t, bus);
    *kind = g >= 0 ? CT_END_GPU : CT_END_NVSWITCH;
    return g >= 0 ? g : ct_topo_add_nvswitch(c->t, bus);
}

static void nvlinks(struct conv *c)
{
    unsigned nr = 1;
    struct hwloc_distances_s *d = NULL;
    if (hwloc_distances_get_by_name(c->h, "NVLinkBandwidth", &nr, &d, 0) < 0 || nr != 1)
        return;
    unsigned n = d->nbobjs;
    for (unsigned i = 0; i < n; i++)
        for (unsigned j = 0; j < n; j++) {
            enum ct_end_kind ki = CT_END_CPU, kj = CT_END_CPU;
            uint64_t v = d->values[i * n + j];
            int a = nvlink_end(c, d->objs[i], &ki), b = nvlink_end(c, d->objs[j], &kj);
            if (i == j || !v || a < 0 || b < 0 || ki != CT_END_GPU || (kj == CT_END_GPU && j < i))
                continue;
            struct ct_gpu *g = &c->t->gpu[a];
            double per = ct_nvlink_gbps_guess(g->model, 0);
            int count = per > 0 ? (int)(v / (per * 1000) + 0.5) : 1;
            ct_topo_add_nvlink(c->t, a, kj, b, count > 0 ? count : 1);
        }
    hwloc_distances_release(c->h, d);
}

static void convert(struct ct_topo *t, hwloc_topology_t h, int from_xml)
{
    struct conv c = {t, h, from_xml};
    hwloc_obj_t root = hwloc_get_root_obj(h);
    const char *host = hwloc_obj_get_info_by_name(root, "HostName");
    if (host && !t->hostname)
        t->hostname = ct_xstrdup(host);
    cpus_and_numa(&c);
    walk(&c, root, -1, 0);
    nvlinks(&c);
}

int ct_src_hwloc(struct ct_topo *t, const struct ct_probe_cfg *cfg, struct ct_err *err)
{
    if (cfg && cfg->sysfs_root && strcmp(cfg->sysfs_root, "/"))
        return 0; /* a captured tree: the sysfs source reads it */
    hwloc_topology_t h;
    if (hwloc_topology_init(&h) < 0) {
        ct_topo_note(t, "hwloc: cannot initialise");
        return 0;
    }
    /* GPU backends: NVML is our own source. "pci" (libpciaccess) leaks and is redundant on
     * Linux, where hwloc's linuxio reads the PCI tree from sysfs. */
    static const char *const skip[] = {"opencl", "gl", "cuda", "nvml", "rsmi", "levelzero",
#ifdef __linux__
                                       "pci"
#endif
    };
    for (size_t i = 0; i < sizeof skip / sizeof skip[0]; i++)
        hwloc_topology_set_components(h, HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST, skip[i]);
    hwloc_topology_set_io_types_filter(h, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
    if (hwloc_topology_load(h) < 0)
        ct_topo_note(t, "hwloc: topology discovery failed");
    else
        convert(t, h, 0);
    hwloc_topology_destroy(h);
    return 0;
}

int ct_imp_hwloc_xml(struct ct_topo *t, const char *buf, size_t len, const char *fname,
                     struct ct_err *err)
{
    struct ct_xml *doc = ct_xml_parse(buf, len, err);
    if (!doc)
        return ct_err_wrap(err, "'%s': ", fname);
    int is_topo = !strcmp(doc->kid[0]->name, "topology");
    ct_xml_free(doc);
    if (!is_topo)
        return ct_err_set(err, CT_EINVAL, "'%s': root element is not <topology> (not hwloc XML)",
                          fname);
    if (len > (size_t)1 << 30)
        return ct_err_set(err, CT_EINVAL, "'%s': too large", fname);
    char *copy = ct_xmalloc(len + 1);
    memcpy(copy, buf, len);
    copy[len] = 0;
    hwloc_topology_t h;
    int rc = 0;
    if (hwloc_topology_init(&h) < 0) {
        free(copy);
        return ct_err_set(err, CT_EIO, "'%s': cannot initialise hwloc", fname);
    }
    hwloc_topology_set_io_types_filter(h, HWLOC_TYPE_FILTER_KEEP_ALL);
    if (hwloc_topology_set_xmlbuffer(h, copy, (int)len + 1) < 0 || hwloc_topology_load(h) < 0)
        rc = ct_err_set(err, CT_EINVAL,
                        "'%s': hwloc cannot load this XML (not a valid hwloc "
                        "topology)",
                        fname);
    else
        convert(t, h, 1);
    hwloc_topology_destroy(h);
    free(copy);
    return rc;
}

#else /* !HAVE_HWLOC */

int ct_src_hwloc(struct ct_topo *t, const struct ct_probe_cfg *cfg, struct ct_err *err)
{
    ct_topo_note(t, "hwloc: support not built (CPU and PCI view from sysfs only)");
    return 0;
}

int ct_imp_hwloc_xml(struct ct_topo *t, const char *buf, size_t len, const char *fname,
                     struct ct_err *err)
{
    return ct_err_set(err, CT_EUNSUPP, "'%s': hwloc XML import needs libhwloc (not built)", fname);
}

#endif
