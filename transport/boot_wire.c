/* SPDX-License-Identifier: MIT */
/* The bootstrap hello: encoding and the checks every received hello goes through. */
#include <string.h>

#include "boot_int.h"

/*
 * Layout: 0 magic u32 | 4 version u8 | 5 kind u8 | 6 flags u16 | 8 status u16 |
 * 10 reserved u16 (0) | 12 rank u32 | 16 size u32 | 20 pid u32 | 24 job u64 | 32 token[16] |
 * 48 host[64] (NUL-terminated, zero-padded) | 112 reserved[12] (0) | 124 csum u32
 */
void ct_boot_hello_encode(const struct ct_boot_hello *h, unsigned char out[CT_BOOT_HELLO_BYTES])
{
    memset(out, 0, CT_BOOT_HELLO_BYTES);
    ct_put32(out, CT_BOOT_HELLO_MAGIC);
    out[4] = CT_BOOT_HELLO_VERSION;
    out[5] = h->kind;
    ct_put16(out + 6, h->flags);
    ct_put16(out + 8, h->status);
    ct_put32(out + 12, h->rank);
    ct_put32(out + 16, h->size);
    ct_put32(out + 20, h->pid);
    ct_put64(out + 24, h->job_id);
    memcpy(out + 32, h->token, CT_BOOT_TOKEN_BYTES);
    size_t hl = strnlen(h->host, CT_BOOT_HOST_BYTES - 1);
    memcpy(out + 48, h->host, hl);
    ct_put32(out + 124, ct_fnv1a(out, 124));
}

static int zeros(const unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i])
            return 0;
    return 1;
}

int ct_boot_hello_decode(const unsigned char in[CT_BOOT_HELLO_BYTES], struct ct_boot_hello *h,
                         struct ct_err *err)
{
    uint32_t magic = ct_get32(in);
    if (magic != CT_BOOT_HELLO_MAGIC)
        return ct_err_set(err, CT_EPEER, "bad bootstrap hello: magic 0x%08x (expected 0x%08x)",
                          magic, CT_BOOT_HELLO_MAGIC);
    if (ct_get32(in + 124) != ct_fnv1a(in, 124))
        return ct_err_set(err, CT_EPEER, "bad bootstrap hello: checksum mismatch");
    if (in[4] != CT_BOOT_HELLO_VERSION)
        return ct_err_set(err, CT_EPEER, "bad bootstrap hello: version %u (expected %u)", in[4],
                          CT_BOOT_HELLO_VERSION);
    if (!zeros(in + 10, 2) || !zeros(in + 112, 12))
        return ct_err_set(err, CT_EPEER, "bad bootstrap hello: reserved bytes are not zero");
    memset(h, 0, sizeof *h);
    h->kind = in[5];
    h->flags = ct_get16(in + 6);
    h->status = ct_get16(in + 8);
    h->rank = ct_get32(in + 12);
    h->size = ct_get32(in + 16);
    h->pid = ct_get32(in + 20);
    h->job_id = ct_get64(in + 24);
    memcpy(h->token, in + 32, CT_BOOT_TOKEN_BYTES);
    if (h->kind < CT_BOOT_HELLO || h->kind > CT_BOOT_REJECT)
        return ct_err_set(err, CT_EPEER, "bad bootstrap hello: kind %u", h->kind);
    if (h->flags & ~CT_BOOT_F_TOKEN)
        return ct_err_set(err, CT_EPEER, "bad bootstrap hello: unknown flags 0x%x", h->flags);
    if (h->kind == CT_BOOT_REJECT ? h->status < CT_BOOT_REJ_TOKEN || h->status > CT_BOOT_REJ_DUP
                                  : h->status != 0)
        return ct_err_set(err, CT_EPEER, "bad bootstrap hello: status %u", h->status);
    if (h->size < 1 || h->size > CT_BOOT_MAX_RANKS || h->rank >= h->size)
        return ct_err_set(err, CT_EPEER, "bad bootstrap hello: rank %u of %u", h->rank, h->size);
    const unsigned char *host = in + 48;
    size_t hl = strnlen((const char *)host, CT_BOOT_HOST_BYTES);
    if (hl == 0 || hl == CT_BOOT_HOST_BYTES || !zeros(host + hl, CT_BOOT_HOST_BYTES - hl))
        return ct_err_set(err, CT_EPEER, "bad bootstrap hello: host name field");
    for (size_t i = 0; i < hl; i++)
        if (host[i] <= ' ' || host[i] > '~')
            return ct_err_set(err, CT_EPEER, "bad bootstrap hello: host name byte 0x%02x", host[i]);
    memcpy(h->host, host, hl);
    return 0;
}
