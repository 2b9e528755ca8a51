/* SPDX-License-Identifier: MIT */
/* NCCL topology XML importer: every fact SOURCES.md states for the AWS p4d, Azure NDv4,
 * Alibaba and IBM Cloud files, and clear errors for malformed XML. */
#include "probe_test.h"

static void nic_paths(const struct ct_topo *t, const char *const gpus[], int ng,
                      const char *const nics[], int nn, const enum ct_path *want)
{
    struct ct_matrix m;
    ct_matrix_build(t, 0, &m);
    char a[16], b[16];
    for (int g = 0; g < ng; g++)
        for (int n = 0; n < nn; n++) {
            enum ct_path p = gpu_nic(&m, gpu_by_bus(t, gpus[g]), nic_by_bus(t, nics[n]));
            cr_expect_eq(p, want[g * nn + n], "%s-%s: %s, want %s", gpus[g], nics[n],
                         ct_path_name(p, 0, a, sizeof a), ct_path_name(want[g * nn + n], 0, b, 16));
        }
    ct_matrix_release(&m);
}

static int pci_parent(const struct ct_topo *t, const char *bus, const char *parent)
{
    int i = ct_topo_find_pci(t, bus);
    cr_assert_geq(i, 0, "no PCI %s", bus);
    int p = t->pci[i].parent;
    return parent ? p >= 0 && !strcmp(t->pci[p].busid, parent) : p < 0;
}

Test(nccl, p4d_static_file)
{
    struct ct_topo *t = load("nccl-xml", FIX_P4D);
    cr_assert_eq(t->n_numa, 2);
    cr_expect_str_eq(t->numa[0].cpus, "0-23,48-71");
    cr_expect_str_eq(t->numa[1].cpus, "24-47,72-95");
    cr_expect_str_eq(t->numa[0].model, "GenuineIntel family 6 model 85");
    static const char *const gpus[] = {"0000:10:1c.0", "0000:10:1d.0", "0000:20:1c.0",
                                       "0000:20:1d.0", "0000:90:1c.0", "0000:90:1d.0",
                                       "0000:a0:1c.0", "0000:a0:1d.0"};
    static const char *const nics[] = {"0000:10:1b.0", "0000:20:1b.0", "0000:90:1b.0",
                                       "0000:a0:1b.0"};
    static const char *const sw[] = {"ffff:ff:01.0", "ffff:ff:02.0", "ffff:ff:03.0",
                                     "ffff:ff:04.0"};
    cr_assert_eq(t->n_gpu, 8);
    cr_assert_eq(t->n_nic, 4);
    for (int g = 0; g < 8; g++) { /* the comments' GPU 0-7 order is bus order */
        cr_expect_str_eq(t->gpu[g].busid, gpus[g]);
        cr_expect_eq(t->gpu[g].vendor, 0x10de);
        cr_expect_eq(t->gpu[g].device, 0x20b0);
        cr_expect_eq(t->pci[t->gpu[g].pci].class_code, 0x030200);
        cr_expect(pci_parent(t, gpus[g], sw[g / 2]));
        cr_expect_eq(t->gpu[g].numa, g < 4 ? 0 : 1);
    }
    for (int n = 0; n < 4; n++) {
        const struct ct_nic *x = &t->nic[n];
        cr_expect_str_eq(x->busid, nics[n]);
        cr_expect_eq(x->vendor, 0x1d0f);
        cr_expect_eq(x->device, 0xefa0);
        cr_expect_eq(x->class_code, 0x020000);
        cr_expect_eq(x->kind, CT_NIC_EFA);
        cr_expect_eq(x->rate_gbps, 0, "no <net>: no speed");
        cr_expect(pci_parent(t, nics[n], sw[n]));
        cr_expect_eq(t->pci[ct_topo_find_pci(t, sw[n])].kind, CT_PCI_SWITCH);
    }
    cr_expect_eq(ct_pci_numa(t, ct_topo_find_pci(t, sw[2])), 1);
    cr_expect_eq(t->n_nvlink, 0);
    enum ct_path want[32];
    for (int g = 0; g < 8; g++)
        for (int n = 0; n < 4; n++)
            want[g * 4 + n] = g / 2 == n       ? CT_PATH_PIX
                              : g / 4 == n / 2 ? CT_PATH_NODE
                                               : CT_PATH_SYS;
    nic_paths(t, gpus, 8, nics, 4, want);
    ct_topo_free(t);
}

Test(nccl, azure_ndv4)
{
    struct ct_topo *t = load("nccl-xml", FIX_AZURE);
    static const char *const cpus[] = {"0-23", "24-47", "48-71", "72-95"};
    cr_assert_eq(t->n_numa, 4);
    for (int i = 0; i < 4; i++) {
        cr_expect_eq(t->numa[i].os_index, i);
        cr_expect_str_eq(t->numa[i].cpus, cpus[i]);
        cr_expect_str_eq(t->numa[i].model, "AuthenticAMD family 23 model 49");
    }
    /* switch, GPUs, NICs per NUMA node */
    static const struct {
        const char *sw, *gpu[2], *nic[2];
        int numa;
    } node[] = {
        {"ffff:ff:01.0", {"0003:00:00.0", "0004:00:00.0"}, {"0103:00:00.0", "0104:00:00.0"}, 0},
        {"ffff:ff:02.0", {"0001:00:00.0", "0002:00:00.0"}, {"0101:00:00.0", "0102:00:00.0"}, 1},
        {"ffff:ff:03.0", {"000d:00:00.0", "000e:00:00.0"}, {"0107:00:00.0", "0108:00:00.0"}, 2},
        {"ffff:ff:04.0", {"000b:00:00.0", "000c:00:00.0"}, {"0105:00:00.0", "0106:00:00.0"}, 3},
    };
    cr_assert_eq(t->n_gpu, 8);
    cr_assert_eq(t->n_nic, 8);
    const char *gpus[8], *nics[8];
    for (int k = 0; k < 4; k++)
        for (int j = 0; j < 2; j++) {
            int g = gpu_by_bus(t, node[k].gpu[j]), n = nic_by_bus(t, node[k].nic[j]);
            cr_expect(pci_parent(t, node[k].gpu[j], node[k].sw));
            cr_expect(pci_parent(t, node[k].nic[j], node[k].sw));
            cr_expect_eq(t->gpu[g].numa, node[k].numa);
            cr_expect_eq(t->pci[t->gpu[g].pci].class_code, 0x030200);
            cr_expect_eq(t->nic[n].class_code, 0x020700);
            cr_expect_eq(t->nic[n].kind, CT_NIC_IB);
            cr_expect_eq(t->nic[n].rate_gbps, 0, "link rates are not in the file");
            const struct ct_pci *p = &t->pci[t->gpu[g].pci];
            cr_expect_float_eq(p->link_gts, 16, 1e-6);
            cr_expect_eq(p->link_width, 16);
            gpus[2 * k + j] = node[k].gpu[j];
            nics[2 * k + j] = node[k].nic[j];
        }
    /* GPUs numbered by bus id: GPU0=0001, GPU1=0002, GPU2=0003 ... GPU7=000e */
    static const char *const order[] = {"0001:00:00.0", "0002:00:00.0", "0003:00:00.0",
                                        "0004:00:00.0", "000b:00:00.0", "000c:00:00.0",
                                        "000d:00:00.0", "000e:00:00.0"};
    for (int g = 0; g < 8; g++)
        cr_expect_str_eq(t->gpu[g].busid, order[g]);
    enum ct_path want[64];
    for (int g = 0; g < 8; g++)
        for (int n = 0; n < 8; n++)
            want[g * 8 + n] = g / 2 == n / 2 ? CT_PATH_PIX : CT_PATH_SYS;
    nic_paths(t, gpus, 8, nics, 8, want);
    struct ct_matrix m;
    ct_matrix_build(t, 0, &m);
    for (size_t i = 0; i < m.n * m.n; i++)
        cr_expect(m.cls[i] != CT_PATH_NODE && m.cls[i] != CT_PATH_PHB, "no NODE/PHB pair");
    ct_matrix_release(&m);
    ct_topo_free(t);
}

Test(nccl, alibaba_dump)
{
    struct ct_topo *t = load("nccl-xml", FIX_ALIBABA);
    cr_assert_eq(t->n_numa, 2);
    cr_expect_str_eq(t->numa[0].cpus, "0-31,64-95");
    cr_expect_str_eq(t->numa[1].cpus, "32-63,96-127");
    cr_expect_str_eq(t->numa[1].model, "GenuineIntel family 6 model 106");
    static const char *const gpus[] = {"0000:13:00.0", "0000:19:00.0", "0000:48:00.0",
                                       "0000:4d:00.0", "0000:89:00.0", "0000:8e:00.0",
                                       "0000:ad:00.0", "0000:b3:00.0"};
    cr_assert_eq(t->n_gpu, 8);
    for (int g = 0; g < 8; g++) {
        cr_expect_str_eq(t->gpu[g].busid, gpus[g]);
        cr_expect_eq(t->gpu[g].device, 0x20b2);
        cr_expect_eq(t->gpu[g].sm, 80);
        cr_expect_eq(t->gpu[g].numa, g < 4 ? 0 : 1);
        /* the switch level right above each GPU is subsystem 10de:13b8 */
        const struct ct_pci *up = &t->pci[t->pci[t->gpu[g].pci].parent];
        cr_expect_eq(up->vendor, 0x1000);
        cr_expect_eq(up->device, 0xc010);
        cr_expect_eq(up->subvendor, 0x10de);
        cr_expect_eq(up->subdevice, 0x13b8);
        cr_expect_eq(t->pci[up->parent].subdevice, 0xa096);
        cr_expect_float_eq(up->link_gts, 16, 1e-6);
        cr_expect_eq(up->link_width, 16);
        cr_expect_eq(ct_topo_nvlink_total(t, g), 12);
    }
    cr_expect_eq(t->n_nvswitch, 6);
    for (size_t s = 0; s < t->n_nvswitch; s++)
        cr_expect(!strncmp(t->nvswitch[s].busid, "0000:c", 6));
    for (int a = 0; a < 8; a++)
        for (int b = 0; b < 8; b++)
            cr_expect_eq(ct_topo_nvlink_count(t, a, b), a == b ? 0 : 12);
    static const char *const nics[] = {"0000:06:00.0", "0000:1a:00.0", "0000:4f:00.0",
                                       "0000:90:00.0", "0000:b4:00.0"};
    cr_assert_eq(t->n_nic, 5);
    for (int n = 0; n < 5; n++) {
        char name[32];
        snprintf(name, sizeof name, "mlx5_bond_%d", n);
        const struct ct_nic *x = &t->nic[nic_by_dev(t, name)];
        cr_expect_str_eq(x->busid, nics[n]);
        cr_expect_eq(x->vendor, 0x15b3);
        cr_expect_eq(x->device, 0x101d);
        cr_expect_eq(x->class_code, 0x020000);
        cr_expect_float_eq(x->rate_gbps, 200, 1e-9);
        cr_expect_eq(x->port, 1);
        cr_expect_eq(x->kind, CT_NIC_ROCE);
    }
    cr_expect(pci_parent(t, "0000:06:00.0", NULL), "bond_0 sits directly under CPU 0");
    cr_expect(pci_parent(t, "0000:1a:00.0", "0000:15:00.0"));
    cr_expect(pci_parent(t, "0000:15:00.0", "0000:0c:00.0"));
    cr_expect(pci_parent(t, "0000:4f:00.0", "0000:49:00.0"));
    cr_expect(pci_parent(t, "0000:49:00.0", "0000:41:00.0"));
    cr_expect(pci_parent(t, "0000:90:00.0", "0000:8a:00.0"));
    cr_expect(pci_parent(t, "0000:8a:00.0", "0000:82:00.0"));
    cr_expect(pci_parent(t, "0000:b4:00.0", "0000:af:00.0"));
    cr_expect(pci_parent(t, "0000:af:00.0", "0000:a6:00.0"));
    enum ct_path want[40];
    for (int g = 0; g < 8; g++)
        for (int n = 0; n < 5; n++)
            want[g * 5 + n] = n == 1 + g / 2       ? CT_PATH_PXB
                              : (n < 3) == (g < 4) ? CT_PATH_NODE
                                                   : CT_PATH_SYS;
    nic_paths(t, gpus, 8, nics, 5, want);
    ct_topo_free(t);
}

Test(nccl, ibm_cloud_h100)
{
    struct ct_topo *t = load("nccl-xml", FIX_IBM);
    cr_assert_eq(t->n_numa, 2);
    cr_expect_str_eq(t->numa[0].cpus, "0-79");
    cr_expect_str_eq(t->numa[1].cpus, "80-159");
    cr_expect_str_eq(t->numa[0].model, "GenuineIntel family 6 model 143");
    static const char *const gpus[] = {"0000:a4:00.0", "0000:ae:00.0", "0000:b8:00.0",
                                       "0000:c2:00.0", "0000:cc:00.0", "0000:d6:00.0",
                                       "0000:e0:00.0", "0000:ea:00.0"};
    static const char *const nics[] = {"0000:a3:00.0", "0000:ad:00.0", "0000:b7:00.0",
                                       "0000:c1:00.0", "0000:cb:00.0", "0000:d5:00.0",
                                       "0000:df:00.0", "0000:e9:00.0"};
    cr_assert_eq(t->n_gpu, 8);
    cr_assert_eq(t->n_nic, 8);
    cr_expect_eq(t->n_nvswitch, 4);
    for (int g = 0; g < 8; g++) {
        cr_expect_str_eq(t->gpu[g].busid, gpus[g]);
        cr_expect_eq(t->gpu[g].device, 0x2330);
        cr_expect_eq(t->gpu[g].sm, 90);
        cr_expect_eq(ct_topo_nvlink_total(t, g), 18, "counts 5+5+4+4");
        for (int h = 0; h < 8; h++)
            cr_expect_eq(ct_topo_nvlink_count(t, g, h), g == h ? 0 : 18);
        /* GPU k and mlx5_(7-k) share one virtual bridge 104c:8232 at 2.5 GT/s x1 */
        char name[16];
        snprintf(name, sizeof name, "mlx5_%d", 7 - g);
        const struct ct_nic *x = &t->nic[nic_by_dev(t, name)];
        cr_expect_str_eq(x->busid, nics[g]);
        cr_expect_eq(x->device, 0x101e);
        cr_expect_eq(x->class_code, 0x020000);
        cr_expect_float_eq(x->rate_gbps, 200, 1e-9);
        const struct ct_pci *br = &t->pci[t->pci[t->gpu[g].pci].parent];
        cr_expect_eq(t->pci[x->pci].parent, t->pci[t->gpu[g].pci].parent);
        cr_expect_eq(br->vendor, 0x104c);
        cr_expect_eq(br->device, 0x8232);
        cr_expect_float_eq(br->link_gts, 2.5, 1e-6);
        cr_expect_eq(br->link_width, 1);
        cr_expect_eq(t->pci[t->gpu[g].pci].link_width, 0, "link_width=\"0\" accepted");
    }
    enum ct_path want[64];
    for (int g = 0; g < 8; g++)
        for (int n = 0; n < 8; n++)
            want[g * 8 + n] = g == n ? CT_PATH_PIX : g / 4 == n / 4 ? CT_PATH_NODE : CT_PATH_SYS;
    nic_paths(t, gpus, 8, nics, 8, want);
    ct_topo_free(t);
}

/* ---- malformed input ---- */

static int import_text(const char *text, struct ct_err *err)
{
    struct ct_topo *t = ct_topo_new();
    int rc = ct_topo_import_buf(t, "nccl-xml", text, strlen(text), "bad.xml", err);
    ct_topo_free(t);
    return rc;
}

Test(nccl, truncated_file_names_file_and_element)
{
    size_t len;
    struct ct_err err = {0};
    char *buf = slurp(fixture(FIX_ALIBABA), &len);
    char *cut = buf + len / 2;
    while (cut[-1] != '>')
        cut--;
    *cut = 0; /* after a complete tag: elements are left open */
    cr_expect_eq(import_text(buf, &err), CT_EINVAL);
    cr_expect(strstr(err.msg, "'bad.xml'"), "%s", err.msg);
    cr_expect(strstr(err.msg, "is not closed"), "%s", err.msg);
    char *full = slurp(fixture(FIX_ALIBABA), NULL);
    for (size_t at = 1; at < len; at += 97) { /* any cut point is an error, never a crash */
        char *copy = strndup(full, at);
        struct ct_err e = {0};
        cr_expect_eq(import_text(copy, &e), CT_EINVAL, "cut at %zu accepted", at);
        cr_expect(strstr(e.msg, "'bad.xml'"), "%s", e.msg);
        free(copy);
    }
    free(full);
    free(buf);
}

Test(nccl, malformed_inputs)
{
    static const struct {
        const char *text, *want;
    } cases[] = {
        {"", "no XML element"},
        {"garbage, not xml at all", "text outside the root element"},
        {"<system version=\"1\"><cpu numaid=\"0\"></system>", "does not close <cpu>"},
        {"<topology/>", "expected <system>"},
        {"<system><cpu numaid=\"x\"/></system>", "numaid='x'"},
        {"<system><cpu numaid=\"0\"><pci busid=\"zz:yy\"/></cpu></system>", "busid='zz:yy'"},
        {"<system><cpu numaid=\"0\"><pci busid=\"0000:01:00.0\" class=\"0x030200\"><gpu>"
         "<nvlink target=\"0000:c0:00.0\" count=\"lots\" tclass=\"0x068000\"/></gpu></pci>"
         "</cpu></system>",
         "count='lots'"},
        {"<system><cpu numaid=\"0\"><pci busid=\"0000:01:00.0\" link_speed=\"fast\"/></cpu>"
         "</system>",
         "link_speed='fast'"},
        {"<system a=b/>", "without quotes"},
        {"<system><!-- never closed", "comment"},
        {"<system></system><system></system>", "more than one root"},
        {"<system>\n<cpu numaid=\"0\" affinity=\"xyz\"/></system>", "affinity='xyz'"},
        {"<system/>", "no <cpu>"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct ct_err err = {0};
        cr_expect_eq(import_text(cases[i].text, &err), CT_EINVAL, "case %zu accepted", i);
        cr_expect(strstr(err.msg, cases[i].want), "case %zu: '%s' lacks '%s'", i, err.msg,
                  cases[i].want);
        cr_expect(strstr(err.msg, "bad.xml"), "case %zu: '%s' does not name the file", i, err.msg);
    }
}

Test(nccl, tolerant_xml)
{
    static const char text[] =
        "\xef\xbb\xbf<?xml version=\"1.0\"?>\n<!DOCTYPE system>\n<!-- c -->\n"
        "<system version='1'><![CDATA[ <not> parsed ]]>\n"
        "  <cpu numaid='0' affinity='0000000f' vendor='A&amp;B'>\n"
        "    <pci busid='0000:01:00.0' class='0x030200' link_speed='' link_width='0'>text"
        "      <gpu dev='0' sm='90'><nvlink target='0000:02:00.0' count='4' tclass='0x030200'/>"
        "</gpu></pci>\n"
        "    <pci busid='0000:02:00.0' class='0x030200'><gpu/></pci>\n"
        "    <unknown-element foo='bar'/>\n"
        "  </cpu>\n</system>\n";
    struct ct_topo *t = ct_topo_new();
    struct ct_err err = {0};
    cr_assert_eq(ct_topo_import_buf(t, "nccl-xml", text, sizeof text - 1, "ok.xml", &err), 0, "%s",
                 err.msg);
    cr_expect_eq(t->n_gpu, 2);
    cr_expect_str_eq(t->numa[0].cpus, "0-3");
    cr_expect_str_eq(t->numa[0].model, "A&B family -1 model -1");
    cr_expect_eq(ct_topo_nvlink_count(t, 0, 1), 4, "direct GPU-GPU NVLink");
    ct_topo_free(t);
}
