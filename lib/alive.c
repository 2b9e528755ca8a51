/* SPDX-License-Identifier: MIT */
#include "alive.h"

#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "clock.h"
#include "file.h"
#include "sock.h"

/*
 * A question and its answer: the magic (a question's and an answer's differ: a responder
 * answers questions only, so a datagram shaped as an answer, its source forged to another
 * responder's place, starts no exchange between the two that would not end), the asker's
 * nonce, the peer's index in its list, and in the answer the tag of the process that answers
 * (big-endian on the wire, as compared).
 */
#define ASK "ctaliveQ"
#define ANSWER "ctaliveA"
struct msg {
    char magic[8];
    uint64_t nonce, tag;
    uint64_t index; /* 64 bits: no padding goes out unset */
};

static struct {
    bool on;
    int fd, stop[2];
    uint64_t tag;
    char reach[CT_ALIVE_LEN];
    pthread_t t;
} g = {.fd = -1, .stop = {-1, -1}};

_Static_assert(CT_ALIVE_LEN >= 6 + 16 + CT_ALIVE_ADDRS * (1 + INET6_ADDRSTRLEN - 1) + 1,
               "a reach holds its addresses");

/* A UDP socket for both address families where the host has IPv6 (IPv4 peers reached as
 * ::ffff:a.b.c.d), else for IPv4; *v6 says which. */
static int udp_socket(bool *v6)
{
    int fd = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0), off = 0;
    if (fd >= 0 && setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof off) == 0) {
        *v6 = true;
        return fd;
    }
    if (fd >= 0)
        close(fd);
    *v6 = false;
    return socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
}

/* Bind fd to any address of its family, a port the kernel picks, into *a (*al its length). */
static int bind_any(int fd, bool v6, struct sockaddr_storage *a, socklen_t *al)
{
    memset(a, 0, sizeof *a);
    a->ss_family = v6 ? AF_INET6 : AF_INET;
    *al = v6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
    return fd >= 0 && bind(fd, (struct sockaddr *)a, *al) == 0 &&
                   getsockname(fd, (struct sockaddr *)a, al) == 0
               ? 0
               : -1;
}

/* addr (dotted IPv4 or IPv6 text) and port as a destination for a socket udp_socket made;
 * its length, 0 where the text is neither or the socket cannot reach it. */
static socklen_t dest(const char *addr, long port, bool v6, struct sockaddr_storage *to)
{
    memset(to, 0, sizeof *to);
    struct in_addr a4;
    if (inet_pton(AF_INET, addr, &a4) == 1) {
        if (!v6) {
            struct sockaddr_in *in = (struct sockaddr_in *)to;
            in->sin_family = AF_INET, in->sin_port = htons((uint16_t)port), in->sin_addr = a4;
            return sizeof *in;
        }
        struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)to; /* ::ffff:a.b.c.d */
        in6->sin6_family = AF_INET6, in6->sin6_port = htons((uint16_t)port);
        in6->sin6_addr.s6_addr[10] = in6->sin6_addr.s6_addr[11] = 0xff;
        memcpy(&in6->sin6_addr.s6_addr[12], &a4, 4);
        return sizeof *in6;
    }
    struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)to;
    if (!v6 || inet_pton(AF_INET6, addr, &in6->sin6_addr) != 1)
        return 0;
    in6->sin6_family = AF_INET6, in6->sin6_port = htons((uint16_t)port);
    return sizeof *in6;
}

static void *answer(void *arg)
{
    (void)arg; /* the process's signals are its other threads' to take (blocked from the start) */
    struct pollfd p[2] = {{.fd = g.fd, .events = POLLIN}, {.fd = g.stop[0], .events = POLLIN}};
    for (;;) {
        if (poll(p, 2, -1) < 0 && errno != EINTR)
            break;
        if (p[1].revents || (p[0].revents & (POLLERR | POLLNVAL)))
            break; /* stopped, or the socket gone: not a loop that spins on the rank's core */
        struct msg m;
        struct sockaddr_storage from;
        socklen_t fl = sizeof from;
        ssize_t n = recvfrom(g.fd, &m, sizeof m, MSG_DONTWAIT, (struct sockaddr *)&from, &fl);
        if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
            break;
        if (n != (ssize_t)sizeof m || memcmp(m.magic, ASK, sizeof m.magic))
            continue;
        memcpy(m.magic, ANSWER, sizeof m.magic);
        m.tag = htobe64(g.tag);
        (void)sendto(g.fd, &m, sizeof m, MSG_DONTWAIT, (struct sockaddr *)&from, fl);
    }
    return NULL;
}

static void close_all(void)
{
    for (int *f = (int[]){g.fd, g.stop[0], g.stop[1]}, k = 0; k < 3; k++)
        if (f[k] >= 0)
            close(f[k]);
    g.fd = g.stop[0] = g.stop[1] = -1;
}

/* Names of the bridges and virtual links that container and VM hosts add, every host alike
 * (docker0 is 172.17.0.1 on each): not where a peer on another host reaches this one. */
static bool local_bridge(const char *name)
{
    static const char *const pre[] = {"docker", "virbr", "br-",   "veth",   "cni", "flannel",
                                      "cali",   "lxcbr", "lxdbr", "podman", "vnet"};
    for (size_t k = 0; k < sizeof pre / sizeof *pre; k++)
        if (!strncmp(name, pre[k], strlen(pre[k])))
            return true;
    return false;
}

int ct_alive_order(struct ct_ifaddr *ifs, int n)
{
    struct ct_ifaddr tmp;
    int kept = 0;
    for (int i = 0; i < n; i++) /* stable: the others in getifaddrs order, then the bridges */
        if (!local_bridge(ifs[i].name)) {
            tmp = ifs[i];
            memmove(&ifs[kept + 1], &ifs[kept], (size_t)(i - kept) * sizeof *ifs);
            ifs[kept++] = tmp;
        }
    return kept;
}

int ct_alive_start(char *reach, size_t len, struct ct_err *err)
{
    if (g.on) {
        snprintf(reach, len, "%s", g.reach);
        return 0;
    }
    reach[0] = 0;
    struct ct_ifaddr ifs[32];
    struct ct_ifaddr6 six[CT_ALIVE_ADDRS];
    int nif = ct_sock_if_list(ifs, 32, err), kept = nif > 0 ? ct_alive_order(ifs, nif) : 0;
    if (nif < 0)
        return nif;
    bool v6;
    struct sockaddr_storage a;
    socklen_t al;
    g.fd = udp_socket(&v6);
    if (v6 && bind_any(g.fd, true, &a, &al) < 0) { /* a policy that bars IPv6: IPv4 alone */
        close(g.fd);
        g.fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        v6 = false;
    }
    int n6 = 0; /* its IPv6 addresses but bridges' (not where another host reaches it) */
    for (int k = 0, got = v6 ? ct_sock_if_list6(six, CT_ALIVE_ADDRS, err) : 0; k < got; k++)
        if (!local_bridge(six[k].name))
            six[n6++] = six[k];
    if (nif + n6 == 0) { /* no peer could reach this host */
        close_all();
        return 0;
    }
    if (g.fd < 0 || (!v6 && bind_any(g.fd, false, &a, &al) < 0) || pipe2(g.stop, O_CLOEXEC) < 0) {
        int rc = ct_err_sys(err, CT_EIO, "a UDP socket to answer on");
        close_all();
        return rc;
    }
    g.tag = ct_random64();
    in_port_t port =
        v6 ? ((struct sockaddr_in6 *)&a)->sin6_port : ((struct sockaddr_in *)&a)->sin_port;
    int off =
        snprintf(g.reach, sizeof g.reach, "%d %016llx", ntohs(port), (unsigned long long)g.tag);
    /* the IPv4 interfaces but bridges, the IPv6 addresses, then the bridges' */
    for (int k = 0; k < nif + n6 && k < CT_ALIVE_ADDRS; k++) {
        const char *x = k < kept        ? ifs[k].addr
                        : k < kept + n6 ? six[k - kept].addr
                                        : ifs[k - n6].addr;
        off += snprintf(g.reach + off, sizeof g.reach - (size_t)off, " %s", x);
    }
    sigset_t all, was; /* the thread starts with every signal blocked: none lands on it */
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &was);
    int made = off < (int)sizeof g.reach && pthread_create(&g.t, NULL, answer, NULL) == 0;
    pthread_sigmask(SIG_SETMASK, &was, NULL);
    if (!made) {
        close_all();
        return ct_err_set(err, CT_EIO, "cannot start the thread that answers peers");
    }
    g.on = true;
    snprintf(reach, len, "%s", g.reach);
    return 0;
}

void ct_alive_stop(void)
{
    if (!g.on)
        return;
    (void)!write(g.stop[1], "", 1);
    pthread_join(g.t, NULL);
    close_all();
    g.on = false;
}

/* The port and tag of a peer's reach; the addresses after *rest. false: not a reach. */
static bool parse_reach(const char *reach, long *port, uint64_t *tag, char **rest)
{
    char *end;
    *port = strtol(reach, &end, 10);
    if (*port <= 0 || *port > 65535 || *end != ' ')
        return false;
    *tag = strtoull(end + 1, rest, 16);
    return *rest == end + 17;
}

/* Send the question for peer i to each of its addresses. */
static void ask_one(int fd, bool v6, const char *reach, uint64_t nonce, uint64_t i)
{
    struct msg m = {.nonce = nonce, .index = i};
    memcpy(m.magic, ASK, sizeof m.magic);
    char *end;
    long port;
    uint64_t tag;
    if (!parse_reach(reach, &port, &tag, &end))
        return;
    for (int k = 0; k < CT_ALIVE_ADDRS && *end == ' '; k++) {
        char addr[INET6_ADDRSTRLEN];
        size_t l = strcspn(end + 1, " ");
        snprintf(addr, sizeof addr, "%.*s", (int)l, end + 1);
        end += 1 + l;
        struct sockaddr_storage to;
        socklen_t tl = dest(addr, port, v6, &to);
        if (tl)
            (void)sendto(fd, &m, sizeof m, MSG_DONTWAIT, (struct sockaddr *)&to, tl);
    }
}

static uint64_t tag_of(const char *reach)
{
    long port;
    uint64_t tag;
    char *end;
    return reach && parse_reach(reach, &port, &tag, &end) ? tag : 0;
}

int ct_alive_ask(const char *const *reach, int n, double wait_s, bool *answered, struct ct_err *err)
{
    bool v6;
    int fd = udp_socket(&v6), asked = 0, left = 0;
    uint64_t *tag = fd >= 0 ? calloc(n > 0 ? (size_t)n : 1, sizeof *tag) : NULL;
    if (!tag) {
        int rc = ct_err_sys(err, CT_EIO, "a UDP socket (and its list) to ask peers on");
        if (fd >= 0)
            close(fd);
        return rc;
    }
    uint64_t nonce = ct_random64();
    for (int i = 0; i < n; i++) { /* each peer's tag, as it goes on the wire; 0: not asked */
        tag[i] = tag_of(reach[i]);
        answered[i] = !tag[i];
        asked += !answered[i];
        tag[i] = htobe64(tag[i]);
    }
    int64_t t0 = ct_now_ns(), end = t0 + (int64_t)(wait_s * 1e9), next = t0;
    left = asked;
    for (int64_t gap = 100000000, now = t0; left > 0 && now < end; now = ct_now_ns()) {
        if (now >= next) { /* again to those that have not answered, at growing gaps */
            for (int i = 0; i < n; i++)
                if (!answered[i])
                    ask_one(fd, v6, reach[i], nonce, (uint64_t)i);
            next = now + gap;
            gap *= 2;
        }
        struct pollfd p = {.fd = fd, .events = POLLIN};
        int64_t until = next < end ? next : end;
        if (poll(&p, 1, (int)((until - now) / 1000000) + 1) <= 0)
            continue;
        struct msg m; /* at most 64 a wake: a flood of them does not hold the ask past end */
        for (int k = 0; k < 64 && recv(fd, &m, sizeof m, MSG_DONTWAIT) == (ssize_t)sizeof m; k++)
            if (!memcmp(m.magic, ANSWER, sizeof m.magic) && m.nonce == nonce &&
                m.index < (uint64_t)n && !answered[m.index] && m.tag == tag[m.index]) {
                answered[m.index] = true;
                left--;
            }
    }
    close(fd);
    free(tag);
    return asked;
}
