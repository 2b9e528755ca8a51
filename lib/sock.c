/* SPDX-License-Identifier: MIT */
/* Socket helpers: listen, connect with retry, exact I/O with deadlines. */
#include "sock.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "clock.h"

int ct_sock_parse_addr(const char *s, char *host, size_t hostlen, int *port, struct ct_err *err)
{
    const char *colon;
    const char *h = s;
    size_t hl;
    if (s[0] == '[') {
        const char *close = strchr(s, ']');
        if (!close || close[1] != ':')
            return ct_err_set(err, CT_EINVAL, "bad address '%s' (expected [v6addr]:port)", s);
        h = s + 1;
        hl = (size_t)(close - h);
        colon = close + 1;
    } else {
        colon = strrchr(s, ':');
        if (!colon)
            return ct_err_set(err, CT_EINVAL, "bad address '%s' (expected host:port)", s);
        hl = (size_t)(colon - s);
    }
    if (hl == 0 || hl >= hostlen)
        return ct_err_set(err, CT_EINVAL, "bad host in address '%s'", s);
    char *end;
    long p = strtol(colon + 1, &end, 10);
    if (*end || end == colon + 1 || p < 0 || p > 65535)
        return ct_err_set(err, CT_EINVAL, "bad port in address '%s'", s);
    memcpy(host, h, hl);
    host[hl] = 0;
    *port = (int)p;
    return 0;
}

int ct_sock_set_nonblock(int fd, int on)
{
    int fl = fcntl(fd, F_GETFL);
    if (fl < 0)
        return -1;
    return fcntl(fd, F_SETFL, on ? fl | O_NONBLOCK : fl & ~O_NONBLOCK);
}

void ct_sock_tune(int fd, int bufsize)
{
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (bufsize > 0) { /* past net.core.[rw]mem_max when privileged, else capped there */
        if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &bufsize, sizeof bufsize) < 0)
            setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &bufsize, sizeof bufsize);
        if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &bufsize, sizeof bufsize) < 0)
            setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &bufsize, sizeof bufsize);
    }
}

static int resolve(const char *host, int port, int passive, struct addrinfo **res,
                   struct ct_err *err)
{
    struct addrinfo hints = {0};
    char ps[16];
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = passive ? AI_PASSIVE : 0;
    snprintf(ps, sizeof ps, "%d", port);
    int rc = getaddrinfo(host && *host ? host : NULL, ps, &hints, res);
    if (rc)
        return ct_err_set(err, CT_EINVAL, "cannot resolve '%s': %s", host ? host : "*",
                          gai_strerror(rc));
    return 0;
}

/* bufsize: < 0 leaves the socket alone, 0 sets TCP_NODELAY only, > 0 also the buffers. */
static int listen_impl(const char *host, int port, int backlog, int bufsize, int *port_out,
                       struct ct_err *err)
{
    struct addrinfo *res, *ai;
    CT_TRY(resolve(host, port, 1, &res, err));
    int fd = -1;
    for (ai = res; ai; ai = ai->ai_next) {
        fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, 0);
        if (fd < 0)
            continue;
        int one = 1;
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        if (bufsize >= 0)
            ct_sock_tune(fd, bufsize);
        if (bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 && listen(fd, backlog) == 0)
            break;
        ct_err_sys(err, CT_EIO, "cannot listen on %s:%d", host && *host ? host : "*", port);
        close(fd);
        fd = -1;
    }
    freeaddrinfo(res);
    if (fd < 0)
        return err && err->code ? err->code : ct_err_set(err, CT_EIO, "cannot listen");
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    getsockname(fd, (struct sockaddr *)&ss, &sl);
    if (port_out)
        *port_out = ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
                                                   : ((struct sockaddr_in *)&ss)->sin_port);
    return fd;
}

int ct_sock_listen(const char *host, int port, int backlog, int *port_out, struct ct_err *err)
{
    return listen_impl(host, port, backlog, -1, port_out, err);
}

int ct_sock_listen_range(const char *host, int port_lo, int port_hi, unsigned start, int backlog,
                         int bufsize, int *port_out, struct ct_err *err)
{
    if (port_lo == 0 && port_hi == 0)
        return listen_impl(host, 0, backlog, bufsize < 0 ? 0 : bufsize, port_out, err);
    if (port_lo < 1 || port_hi < port_lo || port_hi > 65535)
        return ct_err_set(err, CT_EINVAL, "bad port range %d-%d", port_lo, port_hi);
    unsigned span = (unsigned)(port_hi - port_lo) + 1;
    for (unsigned i = 0; i < span; i++) {
        int port = port_lo + (int)((start + i) % span);
        struct ct_err e = {0};
        int fd = listen_impl(host, port, backlog, bufsize < 0 ? 0 : bufsize, port_out, &e);
        if (fd >= 0)
            return fd;
        if (e.sys_errno != EADDRINUSE) {
            if (err)
                *err = e;
            return e.code;
        }
    }
    return ct_err_set(err, CT_EIO, "cannot listen on %s: every port in %d-%d is in use",
                      host && *host ? host : "*", port_lo, port_hi);
}

const char *ct_sock_no_fd(int e)
{
    if (e == EMFILE)
        return " (ulimit -n: too few file descriptors for the connections)";
    return e == ENFILE || e == ENOBUFS || e == ENOMEM ? "" : NULL;
}

static int connect_impl(const char *host, int port, int bufsize, int64_t deadline_ns,
                        struct ct_err *err)
{
    int64_t delay_ms = 10;
    for (;;) {
        struct addrinfo *res, *ai;
        CT_TRY(resolve(host, port, 0, &res, err));
        for (ai = res; ai; ai = ai->ai_next) {
            int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, 0), e = errno;
            if (fd < 0 && ct_sock_no_fd(e)) { /* said now, not as a timeout with nothing after
                                                 its colon */
                freeaddrinfo(res);
                errno = e;
                return ct_err_sys(err, CT_EIO, "cannot open a socket to '%s:%d'%s", host, port,
                                  ct_sock_no_fd(e));
            }
            if (fd < 0) {
                ct_err_sys(err, CT_EIO, "cannot open a socket to '%s:%d'", host, port);
                continue;
            }
            if (bufsize >= 0)
                ct_sock_tune(fd, bufsize);
            if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0) {
                freeaddrinfo(res);
                return fd;
            }
            ct_err_sys(err, CT_EIO, "cannot connect to '%s:%d'", host, port);
            close(fd);
        }
        freeaddrinfo(res);
        if (ct_now_ns() + delay_ms * 1000000 > deadline_ns)
            return ct_err_wrap(err, "timed out: ");
        usleep((useconds_t)delay_ms * 1000);
        if (delay_ms < 200)
            delay_ms *= 2;
    }
}

int ct_sock_connect(const char *host, int port, int64_t deadline_ns, struct ct_err *err)
{
    return connect_impl(host, port, -1, deadline_ns, err);
}

int ct_sock_connect_tuned(const char *host, int port, int bufsize, int64_t deadline_ns,
                          struct ct_err *err)
{
    return connect_impl(host, port, bufsize < 0 ? 0 : bufsize, deadline_ns, err);
}

static int wait_fd(int fd, short ev, int64_t deadline_ns, struct ct_err *err)
{
    for (;;) {
        int64_t left = deadline_ns - ct_now_ns();
        if (left <= 0)
            return ct_err_set(err, CT_ETIMEDOUT, "timed out");
        struct pollfd p = {fd, ev, 0};
        int ms = (int)(left / 1000000) + 1;
        int rc = poll(&p, 1, ms > 1000 ? 1000 : ms);
        if (rc > 0)
            return 0;
        if (rc < 0 && errno != EINTR)
            return ct_err_sys(err, CT_EIO, "poll");
    }
}

int ct_sock_accept(int lfd, int64_t deadline_ns, struct ct_err *err)
{
    for (;;) {
        CT_TRY(wait_fd(lfd, POLLIN, deadline_ns, err));
        int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
        if (fd >= 0)
            return fd;
        if (errno != EINTR && errno != EAGAIN && errno != ECONNABORTED)
            return ct_err_sys(err, CT_EIO, "accept");
    }
}

int ct_sock_write_all(int fd, const void *buf, size_t len, int64_t deadline_ns, struct ct_err *err)
{
    const char *p = buf;
    while (len) {
        ssize_t n = send(fd, p, len, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n > 0) {
            p += n;
            len -= (size_t)n;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            CT_TRY(wait_fd(fd, POLLOUT, deadline_ns, err));
            continue;
        }
        return ct_err_sys(err, CT_EPEER, "send");
    }
    return 0;
}

int ct_sock_read_all(int fd, void *buf, size_t len, int64_t deadline_ns, struct ct_err *err)
{
    char *p = buf;
    while (len) {
        ssize_t n = recv(fd, p, len, MSG_DONTWAIT);
        if (n > 0) {
            p += n;
            len -= (size_t)n;
            continue;
        }
        if (n == 0)
            return ct_err_set(err, CT_EPEER, "connection closed");
        if (errno == EINTR)
            continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) {
            CT_TRY(wait_fd(fd, POLLIN, deadline_ns, err));
            continue;
        }
        return ct_err_sys(err, CT_EPEER, "recv");
    }
    return 0;
}

int ct_sock_local_host(int fd, char *host, size_t len)
{
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    if (getsockname(fd, (struct sockaddr *)&ss, &sl) < 0)
        return -1;
    return getnameinfo((struct sockaddr *)&ss, sl, host, (socklen_t)len, NULL, 0, NI_NUMERICHOST)
               ? -1
               : 0;
}

int ct_sock_parse_range(const char *s, int *lo, int *hi, struct ct_err *err)
{
    char *end;
    long a = strtol(s, &end, 10), b = a;
    if (end != s && *end == '-') {
        const char *t = end + 1;
        b = strtol(t, &end, 10);
        if (end == t)
            end = (char *)s;
    }
    if (end == s || *end || a < 1 || b < a || b > 65535)
        return ct_err_set(err, CT_EINVAL, "bad port range '%s' (expected lo-hi within 1-65535)", s);
    *lo = (int)a;
    *hi = (int)b;
    return 0;
}

int ct_sock_is_loopback(const char *host)
{
    struct in_addr a;
    return inet_pton(AF_INET, host, &a) == 1 && (ntohl(a.s_addr) >> 24) == 127;
}

static int addr_text(const struct sockaddr *sa, char *host, size_t len)
{
    const struct sockaddr_in *in = (const struct sockaddr_in *)sa;
    return inet_ntop(AF_INET, &in->sin_addr, host, (socklen_t)len) ? 0 : -1;
}

int ct_sock_if_addr(const char *ifname, char *host, size_t len, struct ct_err *err)
{
    struct ifaddrs *ifa, *i;
    if (getifaddrs(&ifa) < 0)
        return ct_err_sys(err, CT_EIO, "getifaddrs");
    int rc = if_nametoindex(ifname)
                 ? ct_err_set(err, CT_EINVAL, "interface '%s' has no IPv4 address", ifname)
                 : ct_err_set(err, CT_EINVAL, "no interface '%s' on this host", ifname);
    for (i = ifa; i; i = i->ifa_next)
        if (i->ifa_addr && i->ifa_addr->sa_family == AF_INET && !strcmp(i->ifa_name, ifname) &&
            addr_text(i->ifa_addr, host, len) == 0) {
            ct_err_clear(err);
            rc = 0;
            break;
        }
    freeifaddrs(ifa);
    return rc;
}

/* An address of family on an interface that is up, not loopback, whose name fits 16 bytes */
static bool if_usable(const struct ifaddrs *i, int family)
{
    return i->ifa_addr && i->ifa_addr->sa_family == family && (i->ifa_flags & IFF_UP) &&
           !(i->ifa_flags & IFF_LOOPBACK) && strlen(i->ifa_name) < sizeof(struct ct_ifaddr){0}.name;
}

int ct_sock_if_list(struct ct_ifaddr *out, int max, struct ct_err *err)
{
    struct ifaddrs *ifa, *i;
    if (getifaddrs(&ifa) < 0)
        return ct_err_sys(err, CT_EIO, "getifaddrs");
    int n = 0;
    for (i = ifa; i && n < max; i = i->ifa_next) {
        if (!if_usable(i, AF_INET) || !i->ifa_netmask)
            continue;
        struct ct_ifaddr *x = &out[n];
        memset(x, 0, sizeof *x);
        if (addr_text(i->ifa_addr, x->addr, sizeof x->addr) < 0)
            continue;
        snprintf(x->name, sizeof x->name, "%s", i->ifa_name);
        uint32_t a =
            ntohl(((const struct sockaddr_in *)(const void *)i->ifa_addr)->sin_addr.s_addr);
        uint32_t m =
            ntohl(((const struct sockaddr_in *)(const void *)i->ifa_netmask)->sin_addr.s_addr);
        x->net = a & m;
        x->prefix = __builtin_popcount(m);
        n++;
    }
    freeifaddrs(ifa);
    return n;
}

int ct_sock_if_list6(struct ct_ifaddr6 *out, int max, struct ct_err *err)
{
    _Static_assert(sizeof out->addr >= INET6_ADDRSTRLEN, "an IPv6 address's text");
    struct ifaddrs *ifa;
    if (getifaddrs(&ifa) < 0)
        return ct_err_sys(err, CT_EIO, "getifaddrs");
    int n = 0;
    for (struct ifaddrs *i = ifa; i && n < max; i = i->ifa_next) {
        if (!if_usable(i, AF_INET6))
            continue;
        const struct in6_addr *a =
            &((const struct sockaddr_in6 *)(const void *)i->ifa_addr)->sin6_addr;
        if (!IN6_IS_ADDR_LINKLOCAL(a) && !IN6_IS_ADDR_LOOPBACK(a) && !IN6_IS_ADDR_V4MAPPED(a) &&
            !IN6_IS_ADDR_MULTICAST(a) && inet_ntop(AF_INET6, a, out[n].addr, sizeof out->addr)) {
            snprintf(out[n].name, sizeof out[n].name, "%s", i->ifa_name);
            n++;
        }
    }
    freeifaddrs(ifa);
    return n;
}

int ct_sock_first_addr(char *host, size_t len, struct ct_err *err)
{
    struct ifaddrs *ifa, *i;
    if (getifaddrs(&ifa) < 0)
        return ct_err_sys(err, CT_EIO, "getifaddrs");
    int rc = ct_err_set(err, CT_EINVAL, "no interface with an IPv4 address is up");
    for (i = ifa; i; i = i->ifa_next)
        if (i->ifa_addr && i->ifa_addr->sa_family == AF_INET && (i->ifa_flags & IFF_UP) &&
            !(i->ifa_flags & IFF_LOOPBACK) && addr_text(i->ifa_addr, host, len) == 0) {
            ct_err_clear(err);
            rc = 0;
            break;
        }
    freeifaddrs(ifa);
    return rc;
}

int ct_sock_route_addr(const char *dest, char *host, size_t len, struct ct_err *err)
{
    struct addrinfo hints = {0}, *res;
    hints.ai_family = AF_INET;
    hints.ai_socktype = SOCK_DGRAM;
    int g = getaddrinfo(dest, "9", &hints, &res);
    if (g)
        return ct_err_set(err, CT_EINVAL, "cannot resolve '%s': %s", dest, gai_strerror(g));
    int rc = ct_err_set(err, CT_EIO, "no route to '%s'", dest);
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in local;
    socklen_t sl = sizeof local;
    /* connect() on a datagram socket only picks the route and the source address */
    if (fd >= 0 && connect(fd, res->ai_addr, res->ai_addrlen) == 0 &&
        getsockname(fd, (struct sockaddr *)&local, &sl) == 0 &&
        addr_text((struct sockaddr *)&local, host, len) == 0) {
        ct_err_clear(err);
        rc = 0;
    }
    if (fd >= 0)
        close(fd);
    freeaddrinfo(res);
    return rc;
}
