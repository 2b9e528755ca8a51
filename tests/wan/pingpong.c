/* SPDX-License-Identifier: MIT */
/*
 * pingpong: the delay line's checks.
 *   pingpong echo PORT                 UDP echo server (runs until killed)
 *   pingpong ping HOST PORT N GAP_MS RTT_MS TOL_MS
 *                                      N numbered datagrams GAP_MS apart; each must come
 *                                      back once, in order, never earlier than RTT_MS -
 *                                      TOL_MS, and the fastest within TOL_MS of RTT_MS.
 *                                      Late ones are counted, not failed: lateness is the
 *                                      host's (a VM preempted or slow to wake), not the
 *                                      line's, and a test cannot tell them apart; the
 *                                      spread (median, p95) is printed for the bench.
 *                                      Prints every RTT; exit 0 when all hold.
 *   pingpong sink PORT                 TCP: accept one connection, read until EOF
 *   pingpong source HOST PORT SECONDS [SNDBUF]
 *                                      TCP: send for SECONDS, print the goodput (Mbit/s)
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static int64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000LL + t.tv_nsec;
}

static struct sockaddr_in addr(const char *host, const char *port)
{
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)atoi(port));
    a.sin_addr.s_addr = host ? inet_addr(host) : INADDR_ANY;
    return a;
}

static int do_echo(const char *port)
{
    int s = socket(AF_INET, SOCK_DGRAM, 0);
    struct sockaddr_in a = addr(NULL, port);
    if (bind(s, (struct sockaddr *)&a, sizeof a) < 0)
        return perror("bind"), 1;
    char buf[2048];
    for (;;) {
        struct sockaddr_in from;
        socklen_t fl = sizeof from;
        ssize_t n = recvfrom(s, buf, sizeof buf, 0, (struct sockaddr *)&from, &fl);
        if (n > 0)
            sendto(s, buf, (size_t)n, 0, (struct sockaddr *)&from, fl);
    }
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

struct msg {
    uint32_t seq;
    int64_t sent;
};

static int do_ping(char **v)
{
    int n = atoi(v[2]);
    double gap = atof(v[3]), rtt = atof(v[4]), tol = atof(v[5]);
    int s = socket(AF_INET, SOCK_DGRAM, 0);
    struct sockaddr_in a = addr(v[0], v[1]);
    if (connect(s, (struct sockaddr *)&a, sizeof a) < 0)
        return perror("connect"), 1;
    int sent = 0, got = 0, bad = 0, late = 0;
    uint32_t expect = 0;
    int64_t next = now_ns(), deadline = 0;
    double lo = 1e9, hi = 0, *rs = calloc((size_t)n + 1, sizeof *rs);
    if (!rs)
        return perror("calloc"), 1;
    while (got < n) {
        int64_t now = now_ns();
        if (sent < n && now >= next) {
            struct msg m = {(uint32_t)sent, now};
            send(s, &m, sizeof m, 0);
            sent++;
            next += (int64_t)(gap * 1e6);
            if (sent == n)
                deadline = now + (int64_t)((rtt + tol) * 1e6) + 2000000000LL;
        }
        if (deadline && now > deadline)
            break;
        struct pollfd pf = {s, POLLIN, 0};
        int64_t w = sent < n ? (next - now) / 1000000 : 100;
        poll(&pf, 1, w > 0 ? (int)w : 0);
        struct msg m;
        while (recv(s, &m, sizeof m, MSG_DONTWAIT) == (ssize_t)sizeof m) {
            double r = (double)(now_ns() - m.sent) / 1e6;
            /* out of order or early is the line's fault; late can be the host's */
            int order = m.seq == expect, early = r < rtt - tol, tardy = r > rtt + tol;
            printf("seq %u rtt %.3f ms%s\n", m.seq, r,
                   !order ? "  <-- out of order" : early ? "  <-- early" : tardy ? "  <-- late" : "");
            bad += !order || early;
            late += order && tardy;
            expect = m.seq + 1;
            if (got < n)
                rs[got] = r;
            got++;
            lo = r < lo ? r : lo;
            hi = r > hi ? r : hi;
        }
    }
    int k = got < n ? got : n;
    qsort(rs, (size_t)k, sizeof *rs, cmp_double);
    double med = k ? rs[k / 2] : 0, p95 = k ? rs[(k * 95) / 100 < k ? (k * 95) / 100 : k - 1] : 0;
    free(rs);
    int fast = lo >= rtt - tol && lo <= rtt + tol;
    printf("%d sent, %d back, %d misordered or early, %d late; rtt min %.3f median %.3f p95 %.3f "
           "max %.3f ms (want %.3f +- %.3f%s)\n",
           n, got, bad, late, lo, med, p95, hi, rtt, tol, fast ? "" : ": the fastest is off");
    return got == n && !bad && fast ? 0 : 1;
}

static int do_sink(const char *port)
{
    int l = socket(AF_INET, SOCK_STREAM, 0), one = 1;
    setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in a = addr(NULL, port);
    if (bind(l, (struct sockaddr *)&a, sizeof a) < 0 || listen(l, 1) < 0)
        return perror("bind"), 1;
    int s = accept(l, NULL, NULL);
    static char buf[1 << 20];
    while (read(s, buf, sizeof buf) > 0) {
    }
    return 0;
}

static int do_source(char **v, int argc)
{
    int s = socket(AF_INET, SOCK_STREAM, 0);
    if (argc > 3) {
        int b = atoi(v[3]);
        setsockopt(s, SOL_SOCKET, SO_SNDBUF, &b, sizeof b);
    }
    struct sockaddr_in a = addr(v[0], v[1]);
    if (connect(s, (struct sockaddr *)&a, sizeof a) < 0)
        return perror("connect"), 1;
    static char buf[1 << 20];
    double secs = atof(v[2]);
    int64_t t0 = now_ns(), end = t0 + (int64_t)(secs * 1e9);
    uint64_t bytes = 0;
    while (now_ns() < end) {
        ssize_t n = write(s, buf, sizeof buf);
        if (n <= 0)
            return perror("write"), 1;
        bytes += (uint64_t)n;
    }
    double dt = (double)(now_ns() - t0) / 1e9;
    struct tcp_info ti;
    socklen_t tl = sizeof ti;
    getsockopt(s, IPPROTO_TCP, TCP_INFO, &ti, &tl);
    printf("%.1f Mbit/s (%llu bytes in %.2f s; cwnd %u x mss %u, rtt %.1f ms)\n",
           (double)bytes * 8 / dt / 1e6, (unsigned long long)bytes, dt, ti.tcpi_snd_cwnd,
           ti.tcpi_snd_mss, ti.tcpi_rtt / 1e3);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc >= 3 && !strcmp(argv[1], "echo"))
        return do_echo(argv[2]);
    if (argc >= 8 && !strcmp(argv[1], "ping"))
        return do_ping(argv + 2);
    if (argc >= 3 && !strcmp(argv[1], "sink"))
        return do_sink(argv[2]);
    if (argc >= 5 && !strcmp(argv[1], "source"))
        return do_source(argv + 2, argc - 2);
    fprintf(stderr, "usage: pingpong echo PORT | ping HOST PORT N GAP_MS RTT_MS TOL_MS | "
                    "sink PORT | source HOST PORT SECONDS [SNDBUF]\n");
    return 2;
}
