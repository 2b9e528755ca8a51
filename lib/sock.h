/* SPDX-License-Identifier: MIT */
/* Small socket helpers shared by the bootstrap and the tcp transport. */
#ifndef CT_SOCK_H
#define CT_SOCK_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"

/* Parse "host:port" (host may be a name, IPv4, or [IPv6]). */
int ct_sock_parse_addr(const char *s, char *host, size_t hostlen, int *port, struct ct_err *err);
/* Listen on host:port (host NULL/"" = any, port 0 = ephemeral); returns fd, *port_out set. */
int ct_sock_listen(const char *host, int port, int backlog, int *port_out, struct ct_err *err);
/* Connect, retrying refused/unreachable until deadline_ns (ct_now_ns() clock). */
/* For errno e of a socket() or accept() that failed: NULL where waiting may help, else what
 * to add to the error (descriptors or kernel memory ran out: no retry makes one; "" or
 * " (ulimit -n: ...)"). */
const char *ct_sock_no_fd(int e);
int ct_sock_connect(const char *host, int port, int64_t deadline_ns, struct ct_err *err);
/* Accept one connection before deadline_ns. */
int ct_sock_accept(int lfd, int64_t deadline_ns, struct ct_err *err);
/* Exact read/write on a (blocking or non-blocking) fd before deadline_ns.
 * Read returns CT_EPEER on EOF. */
int ct_sock_write_all(int fd, const void *buf, size_t len, int64_t deadline_ns, struct ct_err *err);
int ct_sock_read_all(int fd, void *buf, size_t len, int64_t deadline_ns, struct ct_err *err);
/* TCP_NODELAY, and socket buffers of bufsize bytes (0 = leave). */
void ct_sock_tune(int fd, int bufsize);
int ct_sock_set_nonblock(int fd, int on);
/* The local address of a connected socket as text (for publishing). */
int ct_sock_local_host(int fd, char *host, size_t len);

/*
 * Listen on host (NULL/"" = any) on the first free port of [port_lo, port_hi], trying
 * port_lo + start % span first and wrapping (port_lo = port_hi = 0: an ephemeral port).
 * bufsize > 0 sets the socket buffers before listen() so accepted sockets inherit them and
 * the window scale is negotiated for them. Every port in use: CT_EIO naming the range.
 */
int ct_sock_listen_range(const char *host, int port_lo, int port_hi, unsigned start, int backlog,
                         int bufsize, int *port_out, struct ct_err *err);
/* ct_sock_connect with TCP_NODELAY and bufsize (> 0) socket buffers set before connect(). */
int ct_sock_connect_tuned(const char *host, int port, int bufsize, int64_t deadline_ns,
                          struct ct_err *err);
/* Parse "lo-hi" (1 <= lo <= hi <= 65535) or a single port "p". */
int ct_sock_parse_range(const char *s, int *lo, int *hi, struct ct_err *err);
/* The IPv4 address of interface ifname as text. CT_EINVAL if it has none. */
int ct_sock_if_addr(const char *ifname, char *host, size_t len, struct ct_err *err);
/* The local IPv4 address the kernel would use to reach dest (a name or address); no packet
 * is sent. */
int ct_sock_route_addr(const char *dest, char *host, size_t len, struct ct_err *err);
/* The IPv4 address of the first interface that is up and not loopback. */
/* An IPv4 interface that is up and not loopback: name, address text, network (host byte
 * order, address & mask) and prefix length. */
struct ct_ifaddr {
    char name[16];
    char addr[16];
    uint32_t net;
    int prefix;
};
/* Fill up to max of this host's usable IPv4 interfaces, in getifaddrs order; returns how
 * many (< 0 with err when the list cannot be read). */
int ct_sock_if_list(struct ct_ifaddr *out, int max, struct ct_err *err);
/* An IPv6 address of an interface that is up and not loopback, not link-local, v4-mapped or
 * multicast: the interface's name and the address's text. */
struct ct_ifaddr6 {
    char name[16];
    char addr[46]; /* INET6_ADDRSTRLEN */
};
/* Fill up to max of this host's such IPv6 addresses, in getifaddrs order; returns how many
 * (< 0 with err when the list cannot be read). */
int ct_sock_if_list6(struct ct_ifaddr6 *out, int max, struct ct_err *err);
int ct_sock_first_addr(char *host, size_t len, struct ct_err *err);
/* Whether host is an IPv4 loopback address (127.0.0.0/8) in dotted form. */
int ct_sock_is_loopback(const char *host);

#endif
