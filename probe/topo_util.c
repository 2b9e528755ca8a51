/* SPDX-License-Identifier: MIT */
/* Small parsers and string helpers for the probe: bus ids, IB rates, PCIe speeds, cpumasks,
 * cpulists, path class names, whole-file reads. */
#include "probe_int.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *ct_str_trim(char *s)
{
    size_t n = strlen(s);
    while (n && isspace((unsigned char)s[n - 1]))
        s[--n] = 0;
    size_t i = 0;
    while (isspace((unsigned char)s[i]))
        i++;
    if (i)
        memmove(s, s + i, n - i + 1);
    return s;
}

void ct_strlcpy(char *dst, const char *src, size_t size)
{
    if (!size)
        return;
    size_t n = src ? strlen(src) : 0;
    if (n >= size)
        n = size - 1;
    if (n)
        memcpy(dst, src, n);
    dst[n] = 0;
}

void ct_str_set(char **dst, const char *src)
{
    char *c = src ? ct_xstrdup(src) : NULL;
    free(*dst);
    *dst = c;
}

const char *ct_path_cat(char *out, size_t len, const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la + 1 + lb >= len) {
        out[0] = 0;
        return out;
    }
    memcpy(out, a, la);
    out[la] = '/';
    memcpy(out + la + 1, b, lb + 1);
    return out;
}

int ct_parse_long(const char *s, int base, long *out)
{
    if (!s)
        return -1;
    while (isspace((unsigned char)*s))
        s++;
    if (!*s)
        return -1;
    char *end;
    errno = 0;
    long v = strtol(s, &end, base);
    while (isspace((unsigned char)*end))
        end++;
    if (errno || *end)
        return -1;
    *out = v;
    return 0;
}

int ct_read_file(const char *path, char **buf, size_t *len, struct ct_err *err)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return ct_err_sys(err, CT_EIO, "cannot open '%s'", path);
    size_t cap = 65536, n = 0;
    char *b = ct_xmalloc(cap);
    for (;;) {
        if (n + 1 >= cap) {
            if (cap >= (size_t)1 << 28) {
                fclose(f);
                free(b);
                return ct_err_set(err, CT_EINVAL, "'%s' is larger than 256 MiB", path);
            }
            cap *= 2;
            b = ct_xrealloc(b, cap);
        }
        size_t r = fread(b + n, 1, cap - n - 1, f);
        n += r;
        if (r == 0)
            break;
    }
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        free(b);
        return ct_err_sys(err, CT_EIO, "cannot read '%s'", path);
    }
    b[n] = 0;
    *buf = b;
    *len = n;
    return 0;
}

/* ---- bus ids ---- */

static int hexnum(const char **p, int maxdig, unsigned long *v)
{
    int n = 0;
    *v = 0;
    while (isxdigit((unsigned char)**p) && n < maxdig) {
        int c = tolower((unsigned char)**p);
        *v = *v * 16 + (unsigned long)(isdigit(c) ? c - '0' : c - 'a' + 10);
        (*p)++;
        n++;
    }
    return n;
}

int ct_busid_canon(const char *in, char out[CT_BUSID_LEN])
{
    if (!in)
        return -1;
    while (isspace((unsigned char)*in))
        in++;
    unsigned long f1, f2, dev, fn, dom = 0, bus;
    const char *p = in;
    int n1 = hexnum(&p, 8, &f1);
    if (!n1 || *p++ != ':')
        return -1;
    int n2 = hexnum(&p, 8, &f2);
    if (!n2)
        return -1;
    if (*p == ':') { /* domain:bus:dev.fn */
        p++;
        if (n2 > 2 || !hexnum(&p, 2, &dev))
            return -1;
        dom = f1;
        bus = f2;
    } else { /* bus:dev.fn */
        if (n1 > 2 || n2 > 2)
            return -1;
        bus = f1;
        dev = f2;
    }
    if (*p++ != '.' || !hexnum(&p, 1, &fn) || dev > 0x1f || fn > 7)
        return -1;
    while (isspace((unsigned char)*p))
        p++;
    if (*p)
        return -1;
    snprintf(out, CT_BUSID_LEN, "%04lx:%02lx:%02lx.%lx", dom & 0xfffffffful, bus, dev, fn);
    return 0;
}

/* ---- link rates ---- */

int ct_ib_rate_parse(const char *s, double *gbps, int *lanes, char speed[16])
{
    if (!s)
        return -1;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || errno || !(v >= 0 && v <= 1e6))
        return -1;
    while (*end == ' ')
        end++;
    if (strncmp(end, "Gb/sec", 6) && strncmp(end, "Gb/s", 4))
        return -1;
    end += strncmp(end, "Gb/sec", 6) ? 4 : 6;
    while (*end == ' ')
        end++;
    int l = 0;
    char name[16] = "";
    if (*end == '(') {
        int used = 0;
        if (sscanf(end, "(%dX %15[A-Za-z0-9])%n", &l, name, &used) != 2 || !used || l < 1 || l > 32)
            return -1;
        end += used;
    }
    while (isspace((unsigned char)*end))
        end++;
    if (*end)
        return -1;
    *gbps = v;
    *lanes = l;
    ct_strlcpy(speed, name, 16);
    return 0;
}

double ct_nic_data_gbps(const struct ct_nic *n)
{
    const char *s = n->speed;
    /* RoCE names an Ethernet speed in InfiniBand's words (10 GbE: "10 Gb/sec (1X QDR)"):
     * its rate is the data rate */
    if (n->kind == CT_NIC_ROCE || !strcmp(n->link_layer, "Ethernet"))
        return n->rate_gbps;
    if (!strcmp(s, "SDR") || !strcmp(s, "DDR") || !strcmp(s, "QDR"))
        return n->rate_gbps * 0.8; /* 8b/10b */
    if (!strcmp(s, "FDR"))         /* 14.0625 Gbaud a lane, 64b/66b */
        return n->lanes > 0 ? n->lanes * 14.0625 * 64 / 66 : n->rate_gbps * 14.0625 / 14 * 64 / 66;
    return n->rate_gbps;
}

double ct_pcie_gts_parse(const char *s)
{
    if (!s)
        return 0;
    while (isspace((unsigned char)*s))
        s++;
    if (!*s || !strncmp(s, "Unknown", 7))
        return 0;
    char *end;
    double v = strtod(s, &end);
    if (end == s || !(v > 0 && v <= 1000))
        return -1;
    while (*end == ' ')
        end++;
    return strncmp(end, "GT/s", 4) ? -1 : v;
}

double ct_pcie_gbs(double gts, int width)
{
    if (gts <= 0 || width <= 0)
        return 0;
    double eff = gts < 8 ? 8.0 / 10 : gts < 64 ? 128.0 / 130 : 242.0 / 256;
    return gts * eff * width / 8;
}

/* ---- cpu sets ---- */

static char *list_from_bits(const unsigned char *bit, size_t n)
{
    size_t cap = 64, len = 0;
    char *s = ct_xmalloc(cap);
    s[0] = 0;
    for (size_t i = 0; i < n; i++) {
        if (!bit[i])
            continue;
        size_t j = i;
        while (j + 1 < n && bit[j + 1])
            j++;
        char piece[48];
        int k = j > i ? snprintf(piece, sizeof piece, "%s%zu-%zu", len ? "," : "", i, j)
                      : snprintf(piece, sizeof piece, "%s%zu", len ? "," : "", i);
        while (len + (size_t)k + 1 > cap)
            s = ct_xrealloc(s, cap *= 2);
        memcpy(s + len, piece, (size_t)k + 1);
        len += (size_t)k;
        i = j;
    }
    return s;
}

char *ct_cpumask_to_list(const char *mask)
{
    if (!mask || !*mask)
        return NULL;
    size_t groups = 1;
    for (const char *p = mask; *p; p++)
        groups += *p == ',';
    if (groups > 1024)
        return NULL;
    unsigned char *bit = ct_xcalloc(groups * 32, 1);
    const char *p = mask;
    for (size_t g = 0; g < groups; g++) {
        unsigned long v;
        int nd = hexnum(&p, 8, &v);
        if (!nd || (*p && *p != ',' && !isspace((unsigned char)*p))) {
            free(bit);
            return NULL;
        }
        if (*p == ',')
            p++;
        size_t base = (groups - 1 - g) * 32;
        for (int b = 0; b < 32; b++)
            bit[base + (size_t)b] = (v >> b) & 1;
    }
    while (isspace((unsigned char)*p))
        p++;
    char *list = *p ? NULL : list_from_bits(bit, groups * 32);
    free(bit);
    return list;
}

char *ct_cpus_from_words(const char *s)
{
    unsigned char *bit = ct_xcalloc(1 << 16, 1);
    const char *p = s;
    long maxc = -1;
    while (*p) {
        while (*p == ' ' || *p == '\t')
            p++;
        if (!*p)
            break;
        char *end;
        long c = strtol(p, &end, 10);
        if (end == p || c < 0 || c >= 1 << 16) {
            free(bit);
            return NULL;
        }
        bit[c] = 1;
        maxc = c > maxc ? c : maxc;
        p = end;
    }
    char *list = list_from_bits(bit, (size_t)(maxc + 1));
    free(bit);
    return list;
}

/* ---- names ---- */

const char *ct_nic_kind_name(enum ct_nic_kind k)
{
    switch (k) {
    case CT_NIC_IB: return "IB";
    case CT_NIC_ROCE: return "RoCE";
    case CT_NIC_EFA: return "EFA";
    case CT_NIC_ETH: return "Eth";
    default: return "?";
    }
}

static const char *const path_names[] = {"X", "NV", "PIX", "PXB", "PHB", "NODE", "SYS", "N/A"};

const char *ct_path_name(enum ct_path p, int nv, char *buf, size_t len)
{
    if (p == CT_PATH_NV)
        snprintf(buf, len, "NV%d", nv);
    else
        snprintf(buf, len, "%s", path_names[p <= CT_PATH_UNKNOWN ? p : CT_PATH_UNKNOWN]);
    return buf;
}

int ct_path_parse(const char *s, enum ct_path *p, int *nv)
{
    *nv = 0;
    if (!strcmp(s, "SOC")) { /* pre-2017 nvidia-smi name of SYS */
        *p = CT_PATH_SYS;
        return 0;
    }
    if (!strncmp(s, "NV", 2) && s[2]) {
        long v;
        if (ct_parse_long(s + 2, 10, &v) < 0 || v < 1 || v > 1024)
            return -1;
        *p = CT_PATH_NV;
        *nv = (int)v;
        return 0;
    }
    for (int i = 0; i < CT_PATH_UNKNOWN; i++)
        if (i != CT_PATH_NV && !strcmp(s, path_names[i])) {
            *p = (enum ct_path)i;
            return 0;
        }
    return -1;
}

int ct_class_is_gpu(uint32_t class_code, uint16_t vendor)
{
    if ((class_code >> 8) == 0x0302)
        return 1;
    return (class_code >> 16) == 0x03 && (vendor == 0x10de || vendor == 0x1002);
}

int ct_class_is_nvswitch(uint32_t class_code, uint16_t vendor)
{
    return vendor == 0x10de && (class_code >> 8) == 0x0680;
}
