/* SPDX-License-Identifier: MIT */
/* Importer for NCCL topology XML (NCCL_TOPO_FILE / NCCL_TOPO_DUMP_FILE): <system> of <cpu>
 * NUMA nodes holding nested <pci> switches and devices with <gpu>/<nvlink> and <nic>/<net>. */
#include "probe_int.h"

#include <stdlib.h>
#include <string.h>

struct nccl {
    struct ct_topo *t;
    const char *fname;
    struct ct_err *err;
    struct pending {
        int gpu, count;
        char target[CT_BUSID_LEN];
        int line;
    } * pend;
    size_t n_pend;
};

static int bad(struct nccl *c, const struct ct_xml *x, const char *attr, const char *v)
{
    return ct_err_set(c->err, CT_EINVAL, "'%s': line %d: <%s> %s='%s' is not valid", c->fname,
                      x->line, x->name, attr, v ? v : "");
}

/* Optional integer attribute in [lo, hi] (base 0: "0x" prefixes allowed); def when absent. */
static int attr_range(struct nccl *c, const struct ct_xml *x, const char *name, long def, long lo,
                      long hi, long *out)
{
    const char *v = ct_xml_attr(x, name);
    *out = def;
    if (!v || !*v)
        return 0;
    if (ct_parse_long(v, 0, out) < 0 || *out < lo || *out > hi)
        return bad(c, x, name, v);
    return 0;
}

#define attr_long(c, x, name, def, out) attr_range(c, x, name, def, -1, 0x7fffffff, out)
#define attr_id(c, x, name, out) attr_range(c, x, name, 0, 0, 0xffff, out)

static enum ct_nic_kind nic_kind(uint32_t cls, uint16_t vendor, const char *name)
{
    if (vendor == 0x1d0f || (name && !strncmp(name, "efa", 3)))
        return CT_NIC_EFA;
    if ((cls >> 8) == 0x0207)
        return CT_NIC_IB;
    if (vendor == 0x15b3 || (name && !strncmp(name, "mlx", 3)))
        return CT_NIC_ROCE;
    if ((cls >> 16) == 0x02)
        return name ? CT_NIC_ROCE : CT_NIC_ETH;
    return CT_NIC_UNKNOWN;
}

static int add_net(struct nccl *c, const struct ct_xml *x, int pci)
{
    const char *name = ct_xml_attr(x, "name");
    long port, speed, dev;
    CT_TRY(attr_range(c, x, "port", 1, 0, 255, &port));
    CT_TRY(attr_range(c, x, "dev", -1, 0, 4095, &dev));
    CT_TRY(attr_range(c, x, "speed", 0, 0, 100000000, &speed));
    struct ct_topo *t = c->t;
    int i = ct_topo_add_nic(t, name, (int)port, NULL);
    struct ct_nic *n = &t->nic[i];
    n->index = (int)dev; /* NCCL's NET/<dev> number */
    n->rate_gbps = speed / 1000.0; /* <net speed> is in Mb/s */
    const char *guid = ct_xml_attr(x, "guid");
    ct_strlcpy(n->guid, guid ? guid : "", sizeof n->guid);
    if (pci >= 0) {
        struct ct_pci *p = &t->pci[pci];
        ct_strlcpy(n->busid, p->busid, sizeof n->busid);
        n->pci = pci;
        n->vendor = p->vendor;
        n->device = p->device;
        n->class_code = p->class_code;
    }
    n->kind = nic_kind(n->class_code, n->vendor, name);
    if (n->kind == CT_NIC_IB)
        ct_strlcpy(n->link_layer, "InfiniBand", sizeof n->link_layer);
    else if (n->kind == CT_NIC_ROCE)
        ct_strlcpy(n->link_layer, "Ethernet", sizeof n->link_layer);
    return 0;
}

static int add_gpu(struct nccl *c, const struct ct_xml *x, int pci)
{
    struct ct_topo *t = c->t;
    long sm = 0, dev = -1;
    if (x) {
        CT_TRY(attr_range(c, x, "sm", 0, 0, 10000, &sm));
        CT_TRY(attr_range(c, x, "dev", -1, 0, 4095, &dev));
    }
    int g = ct_topo_add_gpu(t, pci >= 0 ? t->pci[pci].busid : NULL);
    t->gpu[g].index = (int)dev; /* CUDA device number */
    t->gpu[g].pci = pci;
    t->gpu[g].sm = (int)sm;
    if (pci >= 0) {
        t->gpu[g].vendor = t->pci[pci].vendor;
        t->gpu[g].device = t->pci[pci].device;
    }
    for (size_t k = 0; x && k < x->n_kid; k++) {
        const struct ct_xml *l = x->kid[k];
        if (strcmp(l->name, "nvlink"))
            continue;
        const char *target = ct_xml_attr(l, "target");
        char bus[CT_BUSID_LEN];
        long count, tclass;
        if (!target || ct_busid_canon(target, bus) < 0)
            return bad(c, l, "target", target);
        CT_TRY(attr_range(c, l, "count", 1, 1, 64, &count));
        CT_TRY(attr_range(c, l, "tclass", 0, 0, 0xffffff, &tclass));
        if ((tclass >> 8) == 0x0680) {
            ct_topo_add_nvlink(t, g, CT_END_NVSWITCH, ct_topo_add_nvswitch(t, bus), (int)count);
        } else if ((tclass >> 16) == 0x03) {
            c->pend = ct_xrealloc(c->pend, (c->n_pend + 1) * sizeof *c->pend);
            c->pend[c->n_pend] = (struct pending){g, (int)count, "", l->line};
            ct_strlcpy(c->pend[c->n_pend++].target, bus, CT_BUSID_LEN);
        } else {
            ct_topo_add_nvlink(t, g, CT_END_CPU, ct_pci_numa(t, pci), (int)count);
        }
    }
    return 0;
}

static int walk_pci(struct nccl *c, const struct ct_xml *x, int parent, int numa);

static int walk_kids(struct nccl *c, const struct ct_xml *x, int pci, int numa)
{
    int has_nic = 0;
    for (size_t k = 0; k < x->n_kid; k++) {
        const struct ct_xml *y = x->kid[k];
        if (!strcmp(y->name, "pci")) {
            CT_TRY(walk_pci(c, y, pci, numa));
        } else if (!strcmp(y->name, "gpu")) {
            CT_TRY(add_gpu(c, y, pci));
        } else if (!strcmp(y->name, "nic")) {
            has_nic = 1;
            for (size_t j = 0; j < y->n_kid; j++)
                if (!strcmp(y->kid[j]->name, "net"))
                    CT_TRY(add_net(c, y->kid[j], pci));
        }
    }
    return has_nic;
}

static int walk_pci(struct nccl *c, const struct ct_xml *x, int parent, int numa)
{
    struct ct_topo *t = c->t;
    const char *busid = ct_xml_attr(x, "busid");
    char bus[CT_BUSID_LEN];
    if (!busid || ct_busid_canon(busid, bus) < 0)
        return bad(c, x, "busid", busid);
    long cls, vendor, device, subv, subd, width;
    CT_TRY(attr_range(c, x, "class", 0, 0, 0xffffff, &cls));
    CT_TRY(attr_id(c, x, "vendor", &vendor));
    CT_TRY(attr_id(c, x, "device", &device));
    CT_TRY(attr_id(c, x, "subsystem_vendor", &subv));
    CT_TRY(attr_id(c, x, "subsystem_device", &subd));
    CT_TRY(attr_range(c, x, "link_width", 0, 0, 32, &width));
    double gts = ct_pcie_gts_parse(ct_xml_attr(x, "link_speed"));
    if (gts < 0)
        return bad(c, x, "link_speed", ct_xml_attr(x, "link_speed"));
    int is_bridge = (cls >> 8) == 0x0604;
    int i = ct_topo_add_pci(t, bus, is_bridge ? CT_PCI_SWITCH : CT_PCI_DEV, parent);
    struct ct_pci *p = &t->pci[i];
    p->numa = parent < 0 ? numa : -1;
    p->class_code = (uint32_t)cls;
    p->vendor = (uint16_t)vendor;
    p->device = (uint16_t)device;
    p->subvendor = (uint16_t)subv;
    p->subdevice = (uint16_t)subd;
    p->link_gts = (float)gts;
    p->link_width = (int)width;
    int has_nic = walk_kids(c, x, i, numa);
    if (has_nic < 0)
        return has_nic;
    p = &t->pci[i];
    if ((p->class_code >> 16) == 0x02 && !has_nic) { /* NIC without <net>: no name, no speed */
        int n = ct_topo_add_nic(t, NULL, 1, NULL);
        struct ct_nic *nic = &t->nic[n];
        ct_strlcpy(nic->busid, bus, sizeof nic->busid);
        nic->pci = i;
        nic->vendor = p->vendor;
        nic->device = p->device;
        nic->class_code = p->class_code;
        nic->kind = nic_kind(p->class_code, p->vendor, NULL);
        if (nic->kind == CT_NIC_IB)
            ct_strlcpy(nic->link_layer, "InfiniBand", sizeof nic->link_layer);
    }
    if (ct_topo_find_gpu(t, bus) < 0 && ct_class_is_gpu(p->class_code, p->vendor))
        CT_TRY(add_gpu(c, NULL, i)); /* GPU with no <gpu> child (static files) */
    return 0;
}

static int walk_cpu(struct nccl *c, const struct ct_xml *x)
{
    struct ct_topo *t = c->t;
    long numaid, fam, model;
    CT_TRY(attr_range(c, x, "numaid", -1, -1, 65535, &numaid));
    CT_TRY(attr_long(c, x, "familyid", -1, &fam));
    CT_TRY(attr_long(c, x, "modelid", -1, &model));
    const char *aff = ct_xml_attr(x, "affinity"), *vendor = ct_xml_attr(x, "vendor");
    char *cpus = aff ? ct_cpumask_to_list(aff) : NULL;
    if (aff && !cpus)
        return bad(c, x, "affinity", aff);
    if (numaid >= 0 && ct_topo_find_numa(t, (int)numaid) < 0) {
        int k = ct_topo_add_numa(t, (int)numaid, cpus);
        if (vendor || fam >= 0) {
            char m[128];
            snprintf(m, sizeof m, "%s family %ld model %ld", vendor ? vendor : "?", fam, model);
            t->numa[k].model = ct_xstrdup(m);
        }
    }
    free(cpus);
    int rc = walk_kids(c, x, -1, (int)numaid);
    return rc < 0 ? rc : 0;
}

static int resolve_pending(struct nccl *c)
{
    struct ct_topo *t = c->t;
    for (size_t i = 0; i < c->n_pend; i++) {
        int peer = ct_topo_find_gpu(t, c->pend[i].target);
        if (peer < 0)
            ct_topo_note(t, "nccl-xml '%s': line %d: NVLink target %s is not a GPU in the file",
                         c->fname, c->pend[i].line, c->pend[i].target);
        else
            ct_topo_add_nvlink(t, c->pend[i].gpu, CT_END_GPU, peer, c->pend[i].count);
    }
    return 0;
}

int ct_imp_nccl_xml(struct ct_topo *t, const char *buf, size_t len, const char *fname,
                    struct ct_err *err)
{
    struct ct_xml *doc = ct_xml_parse(buf, len, err);
    if (!doc)
        return ct_err_wrap(err, "'%s': ", fname);
    struct nccl c = {t, fname, err, NULL, 0};
    const struct ct_xml *sys = doc->kid[0];
    int rc = 0;
    if (strcmp(sys->name, "system"))
        rc = ct_err_set(err, CT_EINVAL, "'%s': root element is <%s>, expected <system>", fname,
                        sys->name);
    for (size_t i = 0; !rc && i < sys->n_kid; i++)
        if (!strcmp(sys->kid[i]->name, "cpu"))
            rc = walk_cpu(&c, sys->kid[i]);
    if (!rc)
        rc = resolve_pending(&c);
    if (!rc && !t->n_numa && !t->n_pci)
        rc = ct_err_set(err, CT_EINVAL, "'%s': <system> has no <cpu> element", fname);
    free(c.pend);
    ct_xml_free(doc);
    if (!rc && !t->n_gpu)
        ct_topo_note(t, "nccl-xml '%s': no GPU in the file", fname);
    return rc;
}
