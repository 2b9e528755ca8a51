/* SPDX-License-Identifier: MIT */
/*
 * delayline: a WAN emulator for the tests (this kernel has tbf and htb but no netem).
 * Joins two network namespaces through TUN devices ("wan0" in each) and forwards every
 * IP packet from one to the other after a fixed one-way delay, serialized at a rate
 * (a link of that speed: each packet leaves the queue len*8/rate after the previous one,
 * then travels the delay). Optional loss and reordering (default none), and a queue limit
 * (tail drop once the backlog waiting for the link exceeds it).
 *
 *   delayline NS_A NS_B [--delay-ms D] [--rate BITS] [--loss P] [--reorder P]
 *             [--reorder-ms R] [--limit BYTES] [--seed S]
 *
 * It creates wan0 in each named namespace (/var/run/netns/NAME), prints "ready" on
 * stdout, and runs until killed; the caller sets addresses and MTU (ip -n NS ...).
 * Reordered packets (probability P) are held R ms longer than the others (default 1).
 * Needs root and /dev/net/tun. One thread: read every ready packet, stamp it, write out
 * every packet whose time has come, sleep in ppoll until the next one is due.
 * Limits: see README "Wide-area collectives" (rates measured on this machine).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <linux/if.h>
#include <linux/if_tun.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#define SLOT 65536u /* bytes per packet slot (largest TUN MTU) */

struct pkt {
    int64_t due;
    uint32_t len;
    char *data;
};

/* One direction: a FIFO in time order (a fixed delay keeps arrival order) and a second
 * FIFO for reordered packets (all held the same extra time, so also in time order). */
struct fifo {
    struct pkt *q;
    uint32_t cap, head, n;
};

struct dir {
    int in, out;
    struct fifo main, late;
    char *buf; /* SLOT bytes: the next packet is read here */
    int64_t link_free; /* when the link finishes serializing the last packet */
    uint64_t fwd, dropped_loss, dropped_queue, reordered;
};

struct cfg {
    int64_t delay_ns, reorder_ns;
    double rate_bps, loss, reorder;
    uint64_t limit;
    uint64_t rng;
};

static int64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000LL + t.tv_nsec;
}

static double rnd(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return (double)(*s >> 11) / 9007199254740992.0;
}

static int tun_in(const char *ns)
{
    char path[256];
    snprintf(path, sizeof path, "/var/run/netns/%s", ns);
    int nfd = open(path, O_RDONLY | O_CLOEXEC);
    if (nfd < 0 || setns(nfd, CLONE_NEWNET) < 0) {
        fprintf(stderr, "delayline: namespace %s: %s\n", ns, strerror(errno));
        return -1;
    }
    close(nfd);
    int fd = open("/dev/net/tun", O_RDWR | O_CLOEXEC);
    struct ifreq ifr;
    memset(&ifr, 0, sizeof ifr);
    ifr.ifr_flags = IFF_TUN | IFF_NO_PI;
    snprintf(ifr.ifr_name, IFNAMSIZ, "wan0");
    if (fd < 0 || ioctl(fd, TUNSETIFF, &ifr) < 0) {
        fprintf(stderr, "delayline: tun in %s: %s\n", ns, strerror(errno));
        return -1;
    }
    fcntl(fd, F_SETFL, O_NONBLOCK);
    return fd;
}

static void fifo_init(struct fifo *f, uint32_t cap)
{
    f->q = calloc(cap, sizeof *f->q);
    f->cap = cap;
}

static struct pkt *fifo_head(struct fifo *f)
{
    return f->n ? &f->q[f->head] : NULL;
}

/* Read every ready packet of d->in into the queues. */
static void take(struct dir *d, struct cfg *c)
{
    while (d->main.n < d->main.cap && d->late.n < d->late.cap) {
        ssize_t len = read(d->in, d->buf, SLOT);
        if (len <= 0)
            return;
        int64_t now = now_ns();
        if (c->loss > 0 && rnd(&c->rng) < c->loss) {
            d->dropped_loss++;
            continue;
        }
        int64_t start = d->link_free > now ? d->link_free : now;
        if (c->limit && c->rate_bps > 0 &&
            (double)(start - now) * c->rate_bps / 8e9 > (double)c->limit) {
            d->dropped_queue++; /* tail drop: the backlog waiting for the link is full */
            continue;
        }
        int64_t tx = c->rate_bps > 0 ? (int64_t)((double)len * 8e9 / c->rate_bps) : 0;
        d->link_free = start + tx;
        int late = c->reorder > 0 && rnd(&c->rng) < c->reorder;
        struct fifo *f = late ? &d->late : &d->main;
        struct pkt *p = &f->q[(f->head + f->n) % f->cap];
        p->data = malloc((size_t)len);
        if (!p->data)
            return;
        memcpy(p->data, d->buf, (size_t)len);
        p->due = d->link_free + c->delay_ns + (late ? c->reorder_ns : 0);
        p->len = (uint32_t)len;
        f->n++;
        d->reordered += (uint64_t)late;
    }
}

/* Write out every due packet; returns the next due time (or INT64_MAX). */
static int64_t give(struct dir *d)
{
    int64_t now = now_ns(), next = INT64_MAX;
    struct fifo *fs[2] = {&d->main, &d->late};
    for (int k = 0; k < 2; k++) {
        struct pkt *p;
        while ((p = fifo_head(fs[k])) && p->due <= now) {
            if (write(d->out, p->data, p->len) < 0 && errno == EAGAIN)
                return now + 20000; /* retry shortly */
            free(p->data);
            fs[k]->head = (fs[k]->head + 1) % fs[k]->cap;
            fs[k]->n--;
            d->fwd++;
        }
        if (p && p->due < next)
            next = p->due;
    }
    return next;
}

static volatile sig_atomic_t stop;
static void on_sig(int s)
{
    (void)s;
    stop = 1;
}

static double num(const char *s)
{
    char *e;
    double v = strtod(s, &e);
    if (*e == 'k' || *e == 'K')
        v *= 1e3;
    else if (*e == 'm' || *e == 'M')
        v *= 1e6;
    else if (*e == 'g' || *e == 'G')
        v *= 1e9;
    return v;
}

int main(int argc, char **argv)
{
    struct cfg c = {.delay_ns = 50000000, .reorder_ns = 1000000, .rng = 0x9e3779b97f4a7c15ULL,
                    .limit = 4u << 20};
    if (argc < 3) {
        fprintf(stderr, "usage: delayline NS_A NS_B [--delay-ms D] [--rate BITS(k/m/g)] "
                        "[--loss P] [--reorder P] [--reorder-ms R] [--limit BYTES] [--seed S]\n");
        return 2;
    }
    for (int i = 3; i + 1 < argc; i += 2) {
        const char *k = argv[i], *v = argv[i + 1];
        if (!strcmp(k, "--delay-ms"))
            c.delay_ns = (int64_t)(atof(v) * 1e6);
        else if (!strcmp(k, "--rate"))
            c.rate_bps = num(v);
        else if (!strcmp(k, "--loss"))
            c.loss = atof(v);
        else if (!strcmp(k, "--reorder"))
            c.reorder = atof(v);
        else if (!strcmp(k, "--reorder-ms"))
            c.reorder_ns = (int64_t)(atof(v) * 1e6);
        else if (!strcmp(k, "--limit"))
            c.limit = (uint64_t)num(v);
        else if (!strcmp(k, "--seed"))
            c.rng = strtoull(v, NULL, 0) | 1;
        else {
            fprintf(stderr, "delayline: unknown option %s\n", k);
            return 2;
        }
    }
    int a = tun_in(argv[1]), b = tun_in(argv[2]);
    if (a < 0 || b < 0)
        return 1;
    struct dir d[2];
    memset(d, 0, sizeof d);
    for (int i = 0; i < 2; i++) {
        d[i].in = i ? b : a;
        d[i].out = i ? a : b;
        d[i].buf = malloc(SLOT);
        fifo_init(&d[i].main, 1u << 20);
        fifo_init(&d[i].late, 1u << 18);
        if (!d[i].buf || !d[i].main.q || !d[i].late.q) {
            fprintf(stderr, "delayline: out of memory\n");
            return 1;
        }
    }
    signal(SIGTERM, on_sig);
    signal(SIGINT, on_sig);
    printf("ready\n");
    fflush(stdout);
    while (!stop) {
        take(&d[0], &c);
        take(&d[1], &c);
        int64_t n0 = give(&d[0]), n1 = give(&d[1]), next = n0 < n1 ? n0 : n1;
        struct pollfd pf[2] = {{a, POLLIN, 0}, {b, POLLIN, 0}};
        int64_t wait = next == INT64_MAX ? 100000000 : next - now_ns();
        if (wait <= 0)
            continue;
        struct timespec ts = {wait / 1000000000, wait % 1000000000};
        ppoll(pf, 2, &ts, NULL);
    }
    for (int i = 0; i < 2; i++)
        fprintf(stderr,
                "delayline: %s->%s forwarded %llu, lost %llu, queue drops %llu, reordered %llu\n",
                i ? argv[2] : argv[1], i ? argv[1] : argv[2], (unsigned long long)d[i].fwd,
                (unsigned long long)d[i].dropped_loss, (unsigned long long)d[i].dropped_queue,
                (unsigned long long)d[i].reordered);
    return 0;
}
