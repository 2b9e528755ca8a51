/* SPDX-License-Identifier: MIT */
/* Parsing numbers and lists from the command line and environment. */
#include "parse.h"

#include <errno.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int ct_parse_size(const char *s, unsigned long long *out)
{
    if (!s || !(*s >= '0' && *s <= '9'))
        return -1;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s)
        return -1;
    unsigned shift = 0;
    switch (*end) {
    case 'k': case 'K': shift = 10; end++; break;
    case 'm': case 'M': shift = 20; end++; break;
    case 'g': case 'G': shift = 30; end++; break;
    case 't': case 'T': shift = 40; end++; break;
    default: break;
    }
    if (shift && (end[0] == 'i' || end[0] == 'I') && (end[1] == 'B' || end[1] == 'b'))
        end++; /* KiB, MiB, GiB, TiB: the same powers of two */
    if (*end == 'B' || *end == 'b')
        end++;
    if (*end)
        return -1;
    if (shift && v > (ULLONG_MAX >> shift))
        return -1;
    *out = v << shift;
    return 0;
}

long ct_parse_size_list(const char *s, size_t elem, uint64_t **out, char *bad, size_t badlen)
{
    long n = 0;
    uint64_t *v = out ? calloc(strlen(s ? s : "") / 2 + 1, sizeof *v) : NULL;
    for (const char *p = s ? s : "";; p++) {
        size_t len = strcspn(p, ",");
        char tok[32];
        unsigned long long x = 0;
        snprintf(tok, sizeof tok, "%.*s", (int)len, p);
        if ((out && !v) || len >= sizeof tok || ct_parse_size(tok, &x) || !elem || x % elem) {
            snprintf(bad, badlen, "%.*s", (int)len, p);
            free(v);
            return -1;
        }
        if (v)
            v[n] = x;
        n++;
        p += len;
        if (!*p)
            break;
    }
    if (out)
        *out = v;
    return n;
}

int ct_parse_int(const char *s, long min, long max, long *out)
{
    if (!s || !((*s >= '0' && *s <= '9') || (*s == '-' && s[1] >= '0' && s[1] <= '9')))
        return -1;
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || *end || end == s || v < min || v > max)
        return -1;
    *out = v;
    return 0;
}

const char *ct_bytes_exact(uint64_t b, const char *sep, char *buf, size_t len)
{
    static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int u = 0;
    while (u < 4 && b && b % 1024 == 0) {
        b /= 1024;
        u++;
    }
    snprintf(buf, len, "%llu%s%s", (unsigned long long)b, sep, unit[u]);
    return buf;
}

const char *ct_bytes_str(uint64_t b, char *buf, size_t len)
{
    static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    if (b == UINT64_MAX) {
        snprintf(buf, len, "inf");
        return buf;
    }
    int u = 0;
    double v = (double)b;
    while (v >= 1024 && u < 6) {
        v /= 1024;
        u++;
    }
    if (u == 0 || (b % (1ull << (10 * u))) == 0)
        snprintf(buf, len, "%.0f %s", v, unit[u]);
    else
        snprintf(buf, len, "%.*f %s", v < 10 ? 2 : v < 100 ? 1 : 0, v, unit[u]);
    return buf;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

size_t ct_sizes_sort_unique(uint64_t *v, size_t n)
{
    qsort(v, n, sizeof *v, cmp_u64);
    size_t u = 0;
    for (size_t i = 0; i < n; i++)
        if (!u || v[u - 1] != v[i])
            v[u++] = v[i];
    return u;
}

bool ct_list_has(const char *list, const char *item, size_t len)
{
    for (const char *t = list; t && *t; t += strcspn(t, ",") + (t[strcspn(t, ",")] == ',')) {
        while (*t == ' ')
            t++;
        if (strcspn(t, ",") == len && !strncmp(t, item, len))
            return true;
    }
    return false;
}

size_t ct_words_match(const char *list, const char *name, bool prefix)
{
    for (const char *p = list ? list : ""; *p; p += strcspn(p, " ") + (p[strcspn(p, " ")] == ' ')) {
        char w[128];
        size_t n = strcspn(p, " ");
        snprintf(w, sizeof w, "%.*s", (int)n, p);
        if (n && (prefix ? !strncmp(name, w, n) && name[n] : !fnmatch(w, name, 0)))
            return n;
    }
    return 0;
}

const char *ct_str_ctrl(const char *s)
{
    for (; s && *s; s++)
        if ((unsigned char)*s < 0x20 || *s == 0x7f)
            return s;
    return NULL;
}

bool ct_version_of(const char *v, const char *series)
{
    for (int part = 0; part < 2 && *series; part++) {
        char *ev, *es;
        if (strtoul(v, &ev, 10) != strtoul(series, &es, 10))
            return false;
        v = *ev == '.' ? ev + 1 : ev + strlen(ev);
        series = *es == '.' ? es + 1 : es + strlen(es);
    }
    return true;
}
