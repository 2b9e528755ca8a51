/* SPDX-License-Identifier: MIT */
/* Importer for a pasted system report: any of `lspci -tv`, `numactl --hardware`,
 * `nvidia-smi topo -m` and `ibv_devinfo` in one text, merged into one topology. */
#include "probe_int.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#define MAXLINE 2048

struct rep {
    struct ct_topo *t;
    const char *fname;
    struct ct_err *err;
    int sections;
};

/* ---- lspci -tv ---- */

struct level {
    int col, pci, bus, dom;
};

struct tree {
    struct level st[64];
    int n;
};

static int hexval(const char *s, int n, int *out)
{
    int v = 0;
    for (int i = 0; i < n; i++) {
        if (!isxdigit((unsigned char)s[i]))
            return -1;
        v = v * 16 + (isdigit((unsigned char)s[i]) ? s[i] - '0' : tolower(s[i]) - 'a' + 10);
    }
    *out = v;
    return 0;
}

static void push(struct tree *tr, int col, int pci, int bus, int dom)
{
    while (tr->n && tr->st[tr->n - 1].col >= col)
        tr->n--;
    if (tr->n < 64)
        tr->st[tr->n++] = (struct level){col, pci, bus, dom};
}

/* Parse the node at s[pos] with parent level par; returns 0, -1 on a malformed line. */
static int lspci_node(struct rep *r, struct tree *tr, const char *s, int pos, struct level par)
{
    struct ct_topo *t = r->t;
    char bus[CT_BUSID_LEN];
    int idx, sec = -1, dom = par.dom;
    if (s[pos] == '[') { /* [dddd:bb] root */
        int d, b;
        if (hexval(s + pos + 1, 4, &d) || s[pos + 5] != ':' || hexval(s + pos + 6, 2, &b) ||
            s[pos + 8] != ']')
            return -1;
        snprintf(bus, sizeof bus, "pci%04x:%02x", d, b);
        idx = ct_topo_add_pci(t, bus, CT_PCI_HOST, -1);
        dom = d;
        sec = b;
        pos += 9;
    } else {
        int dv, fn;
        if (par.bus < 0 || hexval(s + pos, 2, &dv) || s[pos + 2] != '.' ||
            hexval(s + pos + 3, 1, &fn))
            return -1;
        snprintf(bus, sizeof bus, "%04x:%02x:%02x.%x", dom, par.bus, dv, fn);
        idx = ct_topo_add_pci(t, bus, CT_PCI_DEV, par.pci);
        pos += 4;
        if (s[pos] == '-' && s[pos + 1] == '[') { /* bridge with secondary bus range */
            if (hexval(s + pos + 2, 2, &sec))
                return -1;
            t->pci[idx].kind = CT_PCI_BRIDGE;
            const char *close = strchr(s + pos, ']');
            if (!close)
                return -1;
            pos = (int)(close - s) + 1;
        }
    }
    if (!strncmp(s + pos, "--+-", 4) || !strncmp(s + pos, "-+-", 3)) {
        int c = pos + (s[pos + 1] == '-' ? 2 : 1);
        push(tr, c, idx, sec, dom);
        return lspci_node(r, tr, s, c + 2, (struct level){c, idx, sec, dom});
    }
    if (!strncmp(s + pos, "----", 4))
        return lspci_node(r, tr, s, pos + 4, (struct level){-1, idx, sec, dom});
    while (s[pos] == ' ' || s[pos] == '-')
        pos++;
    if (s[pos]) {
        char name[256];
        ct_strlcpy(name, s + pos, sizeof name);
        ct_str_set(&t->pci[idx].name, ct_str_trim(name));
    }
    return 0;
}

static int lspci_line(struct rep *r, struct tree *tr, const char *s, int lineno)
{
    int i = 0;
    while (s[i] == ' ' || s[i] == '|')
        i++;
    struct level top = {-1, -1, -1, 0};
    int rc;
    if (!strncmp(s + i, "-+-", 3)) {
        tr->n = 0;
        push(tr, i + 1, -1, -1, 0);
        rc = lspci_node(r, tr, s, i + 3, top);
    } else if (!strncmp(s + i, "-[", 2)) {
        tr->n = 0;
        rc = lspci_node(r, tr, s, i + 1, top);
    } else if (!strncmp(s + i, "+-", 2) || !strncmp(s + i, "\\-", 2)) {
        int k = tr->n - 1;
        while (k >= 0 && tr->st[k].col != i)
            k--;
        if (k < 0)
            return ct_err_set(r->err, CT_EINVAL,
                              "'%s': line %d: lspci tree branch at column "
                              "%d has no parent",
                              r->fname, lineno, i + 1);
        tr->n = k + 1;
        rc = lspci_node(r, tr, s, i + 2, tr->st[k]);
    } else {
        return 1; /* end of the tree */
    }
    if (rc < 0)
        return ct_err_set(r->err, CT_EINVAL, "'%s': line %d: malformed lspci -tv line", r->fname,
                          lineno);
    return 0;
}

static int is_tree_start(const char *s)
{
    while (*s == ' ')
        s++;
    return !strncmp(s, "-+-[", 4) || !strncmp(s, "-[", 2);
}

/* ---- numactl --hardware ---- */

static void numactl_line(struct rep *r, const char *s, int *in_dist, int *cols, int *ncols)
{
    struct ct_topo *t = r->t;
    int node, used = 0;
    long long mb;
    if (sscanf(s, " node %d cpus:%n", &node, &used) == 1 && used) {
        char *l = ct_cpus_from_words(s + used);
        int k = ct_topo_find_numa(t, node);
        if (k < 0)
            k = ct_topo_add_numa(t, node, "");
        if (l)
            ct_str_set(&t->numa[k].cpus, l);
        free(l);
        *in_dist = 0;
    } else if (sscanf(s, " node %d size: %lld MB", &node, &mb) == 2) {
        int k = ct_topo_find_numa(t, node);
        if (k >= 0)
            t->numa[k].mem_bytes = (uint64_t)mb << 20;
    } else if (strstr(s, "node distances:")) {
        *in_dist = 1;
        *ncols = 0;
    } else if (*in_dist && sscanf(s, " node %d", &node) == 1 && !strchr(s, ':')) {
        const char *p = strstr(s, "node") + 4;
        char *end;
        for (long v; *ncols < 64 && (v = strtol(p, &end, 10), end != p); p = end)
            cols[(*ncols)++] = (int)v;
    } else if (*in_dist && sscanf(s, " %d:%n", &node, &used) == 1 && used) {
        int k = ct_topo_find_numa(t, node);
        const char *p = s + used;
        char *end;
        if (k < 0 || !*ncols)
            return;
        free(t->numa[k].dist);
        t->numa[k].dist = ct_xcalloc((size_t)*ncols, sizeof(int));
        t->numa[k].n_dist = 0;
        for (long v; t->numa[k].n_dist < (size_t)*ncols && (v = strtol(p, &end, 10), end != p);
             p = end)
            t->numa[k].dist[t->numa[k].n_dist++] = (int)v;
    }
}

/* ---- ibv_devinfo ---- */

struct ibv {
    char dev[32], guid[40], sys_guid[40], fw[32], model[64];
    int part, port;
};

static void ibv_port_key(struct ct_nic *n, const char *key, const char *val)
{
    const char *paren = strchr(val, '(');
    if (!strcmp(key, "state")) {
        n->state = paren ? atoi(paren + 1) : 0;
        if (sscanf(val, "PORT_%23[A-Z_]", n->state_str) != 1)
            ct_strlcpy(n->state_str, val, sizeof n->state_str);
    } else if (!strcmp(key, "phys_state")) {
        n->phys_state = paren ? atoi(paren + 1) : 0;
    } else if (!strcmp(key, "link_layer")) {
        ct_strlcpy(n->link_layer, val, sizeof n->link_layer);
        n->kind = !strcmp(val, "InfiniBand") ? CT_NIC_IB : CT_NIC_ROCE;
    } else if (!strcmp(key, "active_mtu")) {
        n->mtu = atoi(val);
    }
}

static void ibv_line(struct rep *r, const char *s, struct ibv *d)
{
    struct ct_topo *t = r->t;
    char key[64] = "", val[192] = "";
    if (sscanf(s, " %63[^:]: %191[^\n]", key, val) < 1)
        return;
    ct_str_trim(key);
    ct_str_trim(val);
    if (!strcmp(key, "hca_id")) {
        memset(d, 0, sizeof *d);
        ct_strlcpy(d->dev, val, sizeof d->dev);
    } else if (!d->dev[0]) {
        return;
    } else if (!strcmp(key, "node_guid")) {
        ct_strlcpy(d->guid, val, sizeof d->guid);
    } else if (!strcmp(key, "sys_image_guid")) {
        ct_strlcpy(d->sys_guid, val, sizeof d->sys_guid);
    } else if (!strcmp(key, "fw_ver")) {
        ct_strlcpy(d->fw, val, sizeof d->fw);
    } else if (!strcmp(key, "board_id")) {
        ct_strlcpy(d->model, val, sizeof d->model);
    } else if (!strcmp(key, "vendor_part_id")) {
        d->part = atoi(val);
    } else if (!strcmp(key, "port")) {
        d->port = atoi(val);
        if (d->port < 1 || d->port > 255)
            return;
        int i = ct_topo_find_nic(t, d->dev, d->port);
        if (i < 0)
            i = ct_topo_add_nic(t, d->dev, d->port, NULL);
        struct ct_nic *n = &t->nic[i];
        ct_strlcpy(n->guid, d->guid, sizeof n->guid);
        ct_strlcpy(n->sys_guid, d->sys_guid, sizeof n->sys_guid);
        ct_strlcpy(n->fw, d->fw, sizeof n->fw);
        ct_strlcpy(n->model, d->model, sizeof n->model);
        n->device = (uint16_t)d->part;
    } else if (d->port > 0) {
        int i = ct_topo_find_nic(t, d->dev, d->port);
        if (i >= 0)
            ibv_port_key(&t->nic[i], key, val);
    }
}

/* ---- scanning and merging ---- */

enum { SEC_LSPCI = 1, SEC_NUMACTL = 2, SEC_IBV = 4, SEC_SMI = 8 };

static int scan(struct rep *r, const char *buf, size_t len)
{
    enum { NONE, LSPCI, NUMACTL, IBV } mode = NONE;
    struct tree tr = {.n = 0};
    struct ibv d = {.port = 0};
    int in_dist = 0, cols[64], ncols = 0, lineno = 1;
    for (size_t i = 0; i < len; lineno++) {
        size_t j = i;
        while (j < len && buf[j] != '\n')
            j++;
        char s[MAXLINE];
        size_t n = j - i < sizeof s - 1 ? j - i : sizeof s - 1;
        memcpy(s, buf + i, n);
        s[n] = 0;
        i = j + 1;
        if (n && s[n - 1] == '\r')
            s[n - 1] = 0;
        const char *p = s;
        while (*p == ' ' || *p == '\t')
            p++;
        if (is_tree_start(s)) {
            mode = LSPCI;
            r->sections |= SEC_LSPCI;
        } else if (!strncmp(p, "available:", 10) && strstr(p, "node")) {
            mode = NUMACTL;
            r->sections |= SEC_NUMACTL;
        } else if (!strncmp(p, "hca_id:", 7)) {
            mode = IBV;
            r->sections |= SEC_IBV;
        } else if (!strncmp(p, "```", 3) || p[0] == '#' || p[0] == '$') {
            mode = NONE;
        }
        int rc = 0;
        if (mode == LSPCI)
            rc = lspci_line(r, &tr, s, lineno);
        else if (mode == NUMACTL)
            numactl_line(r, s, &in_dist, cols, &ncols);
        else if (mode == IBV)
            ibv_line(r, s, &d);
        if (rc < 0)
            return rc;
        if (rc == 1)
            mode = NONE;
    }
    return 0;
}

static size_t named_devs(const struct ct_topo *t, int (*match)(const char *), int *out, size_t max)
{
    size_t n = 0;
    for (size_t i = 0; i < t->n_pci && n < max; i++)
        if (t->pci[i].kind == CT_PCI_DEV && t->pci[i].name && match(t->pci[i].name))
            out[n++] = (int)i;
    for (size_t a = 1; a < n; a++) /* bus order */
        for (size_t b = a; b > 0 && strcmp(t->pci[out[b - 1]].busid, t->pci[out[b]].busid) > 0;
             b--) {
            int x = out[b];
            out[b] = out[b - 1];
            out[b - 1] = x;
        }
    return n;
}

static int is_gpu_name(const char *s)
{
    return strstr(s, "NVIDIA") && !strstr(s, "Audio") && !strstr(s, "USB") &&
           !strstr(s, "Bridge") && !strstr(s, "NVSwitch");
}

static int is_rdma_name(const char *s)
{
    return strstr(s, "Mellanox") || strstr(s, "ConnectX") || strstr(s, "Elastic Fabric");
}

static void map_gpus(struct rep *r)
{
    struct ct_topo *t = r->t;
    int dev[256];
    size_t n = named_devs(t, is_gpu_name, dev, 256);
    if (!n)
        return;
    if (t->n_gpu && t->n_gpu != n) {
        ct_topo_note(t,
                     "report '%s': %zu GPUs in the matrix but %zu NVIDIA functions in lspci: "
                     "bus ids not assigned",
                     r->fname, t->n_gpu, n);
        return;
    }
    for (size_t k = 0; k < n; k++) {
        struct ct_pci *p = &t->pci[dev[k]];
        p->vendor = 0x10de;
        p->class_code = 0x030000;
        int g = t->n_gpu == n ? (int)k : ct_topo_add_gpu(t, NULL);
        ct_strlcpy(t->gpu[g].busid, p->busid, sizeof t->gpu[g].busid);
        t->gpu[g].pci = dev[k];
        t->gpu[g].vendor = 0x10de;
        ct_str_set(&t->gpu[g].model, p->name);
        if (t->gpu[g].numa >= 0)
            p->numa = t->gpu[g].numa;
    }
}

/* Functions of one adapter share "dddd:bb:dd" and, per ibv_devinfo, the sys_image_guid. */
static int guid_consistent(const struct ct_topo *t, const int *dev, const char (*guid)[40],
                           size_t n)
{
    for (size_t a = 0; a < n; a++)
        for (size_t b = a + 1; b < n; b++) {
            int same_dev = !strncmp(t->pci[dev[a]].busid, t->pci[dev[b]].busid, 10);
            if (!guid[a][0] || !guid[b][0])
                return 0;
            if (same_dev != !strcmp(guid[a], guid[b]))
                return 0;
        }
    return 1;
}

static void map_nics(struct rep *r)
{
    struct ct_topo *t = r->t;
    int dev[256];
    char names[256][32], guid[256][40];
    size_t n = named_devs(t, is_rdma_name, dev, 256), nd = 0;
    for (size_t i = 0; i < t->n_nic && nd < 256; i++) {
        size_t k = 0;
        while (k < nd && strcmp(names[k], t->nic[i].dev))
            k++;
        if (t->nic[i].dev[0] && k == nd) {
            ct_strlcpy(names[nd], t->nic[i].dev, sizeof names[nd]);
            ct_strlcpy(guid[nd++], t->nic[i].sys_guid, sizeof guid[0]);
        }
    }
    if (!n || !nd)
        return;
    if (n != nd) {
        ct_topo_note(t,
                     "report '%s': %zu RDMA devices but %zu adapter functions in lspci: bus "
                     "ids not assigned",
                     r->fname, nd, n);
        return;
    }
    for (size_t a = 1; a < nd; a++) /* natural order: mlx5_2 < mlx5_10 */
        for (size_t b = a; b > 0 && ct_natcmp(names[b - 1], names[b]) > 0; b--) {
            char x[40];
            memcpy(x, names[b], 32), memcpy(names[b], names[b - 1], 32),
                memcpy(names[b - 1], x, 32);
            memcpy(x, guid[b], 40), memcpy(guid[b], guid[b - 1], 40), memcpy(guid[b - 1], x, 40);
        }
    for (size_t i = 0; i < t->n_nic; i++)
        for (size_t k = 0; k < nd; k++)
            if (!strcmp(t->nic[i].dev, names[k])) {
                struct ct_pci *p = &t->pci[dev[k]];
                p->vendor = 0x15b3;
                p->class_code = 0x020000;
                if (t->nic[i].device)
                    p->device = t->nic[i].device;
                ct_strlcpy(t->nic[i].busid, p->busid, sizeof t->nic[i].busid);
                t->nic[i].pci = dev[k];
                t->nic[i].vendor = 0x15b3;
            }
    ct_topo_note(t, "report '%s': RDMA device bus ids inferred from PCI order (%s)", r->fname,
                 guid_consistent(t, dev, guid, n) ? "consistent with sys_image_guid"
                                                  : "NOT confirmed by sys_image_guid");
}

/* A NIC a GPU reaches without crossing NUMA nodes sits on that GPU's NUMA node. */
static void infer_nic_numa(struct ct_topo *t)
{
    for (size_t i = 0; i < t->n_hint; i++) {
        const struct ct_hint *h = &t->hint[i];
        if (h->ka == h->kb || h->path == CT_PATH_SYS || h->path == CT_PATH_UNKNOWN)
            continue;
        int g = h->ka == CT_EP_GPU ? h->a : h->b, n = h->ka == CT_EP_NIC ? h->a : h->b;
        struct ct_nic *nic = &t->nic[n];
        if (nic->numa < 0 && t->gpu[g].numa >= 0) {
            nic->numa = t->gpu[g].numa;
            if (nic->pci >= 0 && t->pci[nic->pci].numa < 0)
                t->pci[nic->pci].numa = nic->numa;
        }
    }
}

int ct_imp_report(struct ct_topo *t, const char *buf, size_t len, const char *fname,
                  struct ct_err *err)
{
    struct rep r = {t, fname, err, 0};
    int rc = ct_smi_scan(t, buf, len, fname, err);
    if (rc < 0)
        return rc;
    if (rc == 0)
        r.sections |= SEC_SMI;
    CT_TRY(scan(&r, buf, len));
    if (!r.sections)
        return ct_err_set(err, CT_EINVAL,
                          "'%s': no lspci -tv, numactl --hardware, nvidia-smi "
                          "topo -m or ibv_devinfo output found",
                          fname);
    map_gpus(&r);
    map_nics(&r);
    infer_nic_numa(t);
    ct_topo_note(t, "report '%s': sections read:%s%s%s%s", fname,
                 r.sections & SEC_LSPCI ? " lspci" : "", r.sections & SEC_NUMACTL ? " numactl" : "",
                 r.sections & SEC_SMI ? " nvidia-smi" : "",
                 r.sections & SEC_IBV ? " ibv_devinfo" : "");
    return 0;
}
