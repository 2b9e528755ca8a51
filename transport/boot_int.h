/* SPDX-License-Identifier: MIT */
/* Bootstrap internals shared by boot.c, boot_tcp.c and the launcher bootstraps. */
#ifndef CT_BOOT_INT_H
#define CT_BOOT_INT_H

#include "boot.h"

/* Hosts table -> node index, local rank and size. */
void ct_boot_fill_layout(struct ct_boot *b);
/* Rank, size, timeouts, method, notice hook, host name (sanitised), hosts and addrs
 * tables (zeroed; this rank's host filled in). */
void ct_boot_init_common(struct ct_boot *b, const struct ct_boot_cfg *cfg, int rank, int size);

/* The host name this rank goes by: override, else gethostname(), made printable. */
void ct_boot_host_name(const char *override, char out[CT_BOOT_HOST_BYTES]);

/* PMI-1 line parsing (boot_pmi1.c; exposed for tests and fuzzing). The value of key in a
 * line "cmd=x k=v ...", copied into out: 0, -1 when absent, CT_EPEER when longer than len. */
int ct_pmi1_field(const char *line, const char *key, char *out, size_t len);
/* The line answers want_cmd and its rc (if any) is 0; else CT_EPEER/CT_EIO with err. */
int ct_pmi1_check(const char *line, const char *want_cmd, struct ct_err *err);

/* Little-endian fields, independent of host byte order and alignment. */
static inline void ct_boot_put16(unsigned char *p, uint16_t v)
{
    p[0] = (unsigned char)v;
    p[1] = (unsigned char)(v >> 8);
}
static inline void ct_boot_put32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}
static inline void ct_boot_put64(unsigned char *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}
static inline uint16_t ct_boot_get16(const unsigned char *p)
{
    return (uint16_t)(p[0] | (unsigned)p[1] << 8);
}
static inline uint32_t ct_boot_get32(const unsigned char *p)
{
    uint32_t v = 0;
    for (int i = 3; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}
static inline uint64_t ct_boot_get64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}
/* FNV-1a, the hello's checksum. */
static inline uint32_t ct_boot_fnv1a(const unsigned char *p, size_t n)
{
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 16777619u;
    }
    return h;
}

#define CT_BOOT_ROOT_KEY "colltune-root"

#endif
