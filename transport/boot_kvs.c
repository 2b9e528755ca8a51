/* SPDX-License-Identifier: MIT */
/*
 * Bootstraps through a launcher's key-value store (PMIx, PMI-1): rank 0 listens and
 * publishes its addresses and the job token, everyone joins the tcp star with them.
 */
#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../lib/sock.h"
#include "boot_int.h"

#define VALUE_MAX 700

/* The record: "<token hex>;<host>;<addr:port>,<addr:port>..." or "error;<message>". */
int ct_boot_root_rec_parse(const char *text, struct ct_boot_root_rec *r, struct ct_err *err)
{
    memset(r, 0, sizeof *r);
    if (!strncmp(text, "error;", 6))
        return ct_err_set(err, CT_EIO, "rank 0 could not start the bootstrap: %.400s", text + 6);
    if (strnlen(text, VALUE_MAX) >= VALUE_MAX)
        return ct_err_set(err, CT_EPEER, "bad root record: longer than %d bytes", VALUE_MAX - 1);
    if (ct_boot_token_from_hex(text, r->token) < 0 || text[2 * CT_BOOT_TOKEN_BYTES] != ';')
        return ct_err_set(err, CT_EPEER, "bad root record: no token");
    const char *h = text + 2 * CT_BOOT_TOKEN_BYTES + 1, *semi = strchr(h, ';');
    if (!semi || semi == h || semi - h >= CT_BOOT_HOST_BYTES)
        return ct_err_set(err, CT_EPEER, "bad root record: host name");
    for (const char *c = h; c < semi; c++)
        if (*c <= ' ' || *c > '~' || *c == ',')
            return ct_err_set(err, CT_EPEER, "bad root record: host name");
    memcpy(r->host, h, (size_t)(semi - h));
    const char *a = semi + 1;
    size_t al = strlen(a);
    if (al == 0 || al >= sizeof r->addrs)
        return ct_err_set(err, CT_EPEER, "bad root record: addresses");
    for (const char *c = a; *c; c++)
        if (!strchr("0123456789abcdefABCDEF.:,[]", *c))
            return ct_err_set(err, CT_EPEER, "bad root record: address byte 0x%02x",
                              (unsigned char)*c);
    /* every entry must parse as host:port */
    for (const char *p = a; *p;) {
        const char *e = strchr(p, ',');
        size_t l = e ? (size_t)(e - p) : strlen(p);
        char one[128], host[64];
        int port;
        if (l == 0 || l >= sizeof one)
            return ct_err_set(err, CT_EPEER, "bad root record: address entry");
        memcpy(one, p, l);
        one[l] = 0;
        if (ct_sock_parse_addr(one, host, sizeof host, &port, err) < 0 || port == 0)
            return ct_err_set(err, CT_EPEER, "bad root record: address '%s'", one);
        p += l + (e ? 1 : 0);
    }
    memcpy(r->addrs, a, al);
    return 0;
}

/* Rank 0's candidates: ifname's address, or every up non-loopback IPv4 address; then
 * 127.0.0.1 for ranks on the same host. */
static int root_candidates(const char *ifname, int port, char *out, size_t len, struct ct_err *err)
{
    size_t off = 0;
    out[0] = 0;
    if (ifname && *ifname) {
        char a[64];
        CT_TRY(ct_sock_if_addr(ifname, a, sizeof a, err));
        off += (size_t)snprintf(out, len, "%s:%d", a, port);
    } else {
        struct ifaddrs *ifa;
        if (getifaddrs(&ifa) == 0) {
            for (struct ifaddrs *i = ifa; i; i = i->ifa_next) {
                char a[64];
                if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET || !(i->ifa_flags & IFF_UP) ||
                    (i->ifa_flags & IFF_LOOPBACK) ||
                    !inet_ntop(AF_INET, &((struct sockaddr_in *)i->ifa_addr)->sin_addr, a,
                               sizeof a))
                    continue;
                if (off + strlen(a) + 24 >= len)
                    break;
                off += (size_t)snprintf(out + off, len - off, "%s%s:%d", off ? "," : "", a, port);
            }
            freeifaddrs(ifa);
        }
    }
    if (!ct_sock_is_loopback(out) && off + 24 < len)
        snprintf(out + off, len - off, "%s127.0.0.1:%d", off ? "," : "", port);
    return 0;
}

/* Whether IPv4 addr is on the subnet of one of this host's interfaces (ifname's only,
 * when given). */
static int on_my_subnet(const char *addr, const char *ifname)
{
    struct in_addr a;
    struct ifaddrs *ifa;
    if (inet_pton(AF_INET, addr, &a) != 1 || getifaddrs(&ifa) < 0)
        return 0;
    int hit = 0;
    for (struct ifaddrs *i = ifa; i && !hit; i = i->ifa_next) {
        if (!i->ifa_addr || !i->ifa_netmask || i->ifa_addr->sa_family != AF_INET ||
            !(i->ifa_flags & IFF_UP) || (i->ifa_flags & IFF_LOOPBACK) ||
            (ifname && *ifname && strcmp(ifname, i->ifa_name)))
            continue;
        uint32_t mine = ((struct sockaddr_in *)i->ifa_addr)->sin_addr.s_addr;
        uint32_t mask = ((struct sockaddr_in *)i->ifa_netmask)->sin_addr.s_addr;
        hit = (mine & mask) == (a.s_addr & mask);
    }
    freeifaddrs(ifa);
    return hit;
}

/* Order rank 0's candidates for this rank: loopback first on rank 0's host (and only
 * there), then addresses on a subnet of this host, then the rest. */
static void order_candidates(const struct ct_boot_root_rec *rec, const char *myhost,
                             const char *ifname, char *out, size_t len)
{
    int same = !strcmp(rec->host, myhost);
    size_t off = 0;
    out[0] = 0;
    for (int pass = 0; pass < 3; pass++)
        for (const char *p = rec->addrs; *p;) {
            const char *e = strchr(p, ',');
            size_t l = e ? (size_t)(e - p) : strlen(p);
            char one[128], host[64];
            int port;
            snprintf(one, sizeof one, "%.*s", (int)l, p);
            p += l + (e ? 1 : 0);
            if (ct_sock_parse_addr(one, host, sizeof host, &port, NULL) < 0)
                continue;
            int loop = ct_sock_is_loopback(host);
            int cls = loop ? 0 : on_my_subnet(host, ifname) ? 1 : 2;
            if (loop && !same)
                continue;
            if (cls != pass || off + l + 2 >= len)
                continue;
            off += (size_t)snprintf(out + off, len - off, "%s%s", off ? "," : "", one);
        }
}

int ct_boot_kvs_start(struct ct_boot **out, const struct ct_boot_cfg *cfg,
                      const struct ct_boot_kvs *kv, struct ct_err *err)
{
    struct ct_boot_cfg c = *cfg;
    unsigned char token[CT_BOOT_TOKEN_BYTES];
    char value[VALUE_MAX], order[VALUE_MAX];
    int lfd = -1, rc = 0;
    c.method = kv->name;
    if (c.size < 1 || c.rank < 0 || c.rank >= c.size)
        return ct_err_set(err, CT_EINVAL, "bootstrap (%s): rank %d of %d is not valid", kv->name,
                          c.rank, c.size);
    if (c.size == 1) {
        c.token = cfg->token;
        return ct_boot_single_open(out, &c, err);
    }
    if (c.rank == 0) {
        /* always publish something, so the others never wait for a record that never comes */
        int port = 0;
        char cands[512] = "", hex[2 * CT_BOOT_TOKEN_BYTES + 1], host[CT_BOOT_HOST_BYTES];
        if (cfg->token)
            memcpy(token, cfg->token, sizeof token);
        else
            ct_boot_random(token, sizeof token);
        ct_boot_token_hex(token, hex);
        ct_boot_host_name(cfg->host, host);
        lfd = ct_sock_listen_range(NULL, c.port_lo, c.port_hi, 0, c.size + 64, -1, &port, err);
        if (lfd < 0 || root_candidates(c.ifname, port, cands, sizeof cands, err) < 0) {
            rc = ct_err_wrap(err, "bootstrap (%s): rank 0: ", kv->name);
            snprintf(value, sizeof value, "error;%.400s", err ? err->msg : "failed");
        } else {
            snprintf(value, sizeof value, "%s;%s;%s", hex, host, cands);
        }
        struct ct_err e = {0};
        if (kv->put(kv->ctx, CT_BOOT_ROOT_KEY, value, &e) < 0 && rc == 0) {
            rc = e.code;
            if (err)
                *err = e;
            ct_err_wrap(err, "bootstrap (%s): put: ", kv->name);
        }
    }
    struct ct_err e = {0};
    if (kv->fence(kv->ctx, &e) < 0 && rc == 0) {
        rc = e.code;
        if (err)
            *err = e;
        ct_err_wrap(err, "bootstrap (%s): fence: ", kv->name);
    }
    if (rc == 0 && c.rank != 0) {
        struct ct_boot_root_rec rec;
        char host[CT_BOOT_HOST_BYTES];
        if ((rc = kv->get(kv->ctx, 0, CT_BOOT_ROOT_KEY, value, sizeof value, err)) < 0 ||
            (rc = ct_boot_root_rec_parse(value, &rec, err)) < 0) {
            ct_err_wrap(err, "bootstrap (%s): rank 0's address: ", kv->name);
        } else {
            ct_boot_host_name(cfg->host, host);
            order_candidates(&rec, host, c.ifname, order, sizeof order);
            if (!order[0])
                rc = ct_err_set(err, CT_EINVAL,
                                "bootstrap (%s): rank 0 (%s) published only addresses this host "
                                "cannot use (%s)",
                                kv->name, rec.host, rec.addrs);
            memcpy(token, rec.token, sizeof token);
            c.root_addr = order;
        }
    }
    if (rc == 0) {
        c.token = token;
        c.listen_fd = lfd;
        rc = ct_boot_tcp_start(out, &c, err);
    }
    if (lfd >= 0)
        close(lfd);
    return rc;
}
