/* SPDX-License-Identifier: MIT */
/*
 * Bootstrap basics: closing, notices, host layout, the published address, job tokens,
 * the single-rank bootstrap and the in-process world for ranks that are threads.
 * The tcp star and the launcher bootstraps live in boot_tcp.c, boot_pmix.c, boot_pmi1.c.
 */
#include "boot.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../lib/clock.h"
#include "../lib/parse.h"
#include "../lib/sock.h"
#include "boot_int.h"

void ct_boot_close(struct ct_boot *b)
{
    if (!b)
        return;
    void (*hook)(void *) = b->on_close;
    void *ctx = b->on_close_ctx;
    b->ops->close(b);
    if (hook)
        hook(ctx);
}

void ct_boot_notice(const struct ct_boot *b, const char *fmt, ...)
{
    if (!b || !b->notice)
        return;
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    b->notice(b->notice_ctx, msg);
}

/* Hosts table -> node index, local rank/size. */
void ct_boot_fill_layout(struct ct_boot *b)
{
    b->nnodes = 0;
    b->local_rank = 0;
    b->local_size = 0;
    b->host_size = 0;
    b->node = -1;
    for (int r = 0; r < b->size; r++) {
        int first = 1;
        for (int q = 0; q < r; q++)
            if (!strcmp(b->hosts[q], b->hosts[r])) {
                first = 0;
                break;
            }
        if (first) {
            if (!strcmp(b->hosts[r], b->host))
                b->node = b->nnodes;
            b->nnodes++;
        }
        if (!strcmp(b->hosts[r], b->host)) {
            if (r < b->rank)
                b->local_rank++;
            b->local_size++;
        }
        size_t m = strcspn(b->host, "/"); /* a virtual node's machine */
        b->host_size += !strncmp(b->hosts[r], b->host, m) && strcspn(b->hosts[r], "/") == m;
    }
}

/* ---------------------------------------------------------------- published address */

int ct_boot_local_addr(const struct ct_boot *b, const char *ifname, char *host, size_t len,
                       struct ct_err *err)
{
    if (ifname && *ifname)
        return ct_sock_if_addr(ifname, host, len, err);
    if (b->nnodes <= 1) {
        snprintf(host, len, "127.0.0.1");
        return 0;
    }
    /* a rank on another host: the root when it is elsewhere, else the first such rank */
    int target = -1;
    if (strcmp(b->hosts[0], b->host))
        target = 0;
    for (int r = 0; r < b->size && target < 0; r++)
        if (strcmp(b->hosts[r], b->host))
            target = r;
    struct ct_err e = {0};
    if (target >= 0 && b->addrs && b->addrs[target][0] &&
        ct_sock_route_addr(b->addrs[target], host, len, &e) == 0 && !ct_sock_is_loopback(host))
        return 0;
    if (target >= 0 && ct_sock_route_addr(b->hosts[target], host, len, &e) == 0 &&
        !ct_sock_is_loopback(host))
        return 0;
    if (ct_sock_route_addr(b->host, host, len, &e) == 0 && !ct_sock_is_loopback(host))
        return 0;
    if (ct_sock_first_addr(host, len, &e) == 0 && !ct_sock_is_loopback(host))
        return 0;
    return ct_err_set(err, CT_EINVAL,
                      "no address reaches rank %d (%s) on another host, and 127.0.0.1 would not "
                      "(choose an interface with --ifname or COLLTUNE_SOCKET_IFNAME)",
                      target, target >= 0 ? b->hosts[target] : "?");
}

/* ---------------------------------------------------------------- tokens */

static uint64_t mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

void ct_boot_random(void *buf, size_t len)
{
    unsigned char *p = buf;
    size_t got = 0;
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    while (fd >= 0 && got < len) {
        ssize_t n = read(fd, p + got, len - got);
        if (n <= 0 && errno != EINTR)
            break;
        got += n > 0 ? (size_t)n : 0;
    }
    if (fd >= 0)
        close(fd);
    /* without /dev/urandom: the clock and pid, mixed (weak, but never all zero) */
    uint64_t s = (uint64_t)ct_now_ns() ^ ((uint64_t)getpid() << 32);
    for (size_t i = got; i < len; i++) {
        s = mix64(s + 0x9e3779b97f4a7c15ull);
        p[i] = (unsigned char)s;
    }
}

static int hexval(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

int ct_boot_token_from_hex(const char *hex, unsigned char token[CT_BOOT_TOKEN_BYTES])
{
    unsigned char t[CT_BOOT_TOKEN_BYTES];
    for (int i = 0; i < CT_BOOT_TOKEN_BYTES; i++) {
        int hi = hexval(hex[2 * i]), lo = hi < 0 ? -1 : hexval(hex[2 * i + 1]);
        if (hi < 0 || lo < 0)
            return -1;
        t[i] = (unsigned char)(hi << 4 | lo);
    }
    if (hex[2 * CT_BOOT_TOKEN_BYTES] && hex[2 * CT_BOOT_TOKEN_BYTES] != ';')
        return -1;
    memcpy(token, t, sizeof t);
    return 0;
}

void ct_boot_token_hex(const unsigned char *t, char out[2 * CT_BOOT_TOKEN_BYTES + 1])
{
    static const char digits[] = "0123456789abcdef";
    for (int i = 0; i < CT_BOOT_TOKEN_BYTES; i++) {
        out[2 * i] = digits[t[i] >> 4];
        out[2 * i + 1] = digits[t[i] & 15];
    }
    out[2 * CT_BOOT_TOKEN_BYTES] = 0;
}

int ct_boot_token_from_text(const char *text, unsigned char token[CT_BOOT_TOKEN_BYTES],
                            struct ct_err *err)
{
    size_t n = strlen(text);
    if (n < 16)
        return ct_err_set(err, CT_EINVAL,
                          "COLLTUNE_TOKEN has %zu characters; use at least 16 (e.g. the output "
                          "of 'openssl rand -hex 16')",
                          n);
    if (n == 2 * CT_BOOT_TOKEN_BYTES && ct_boot_token_from_hex(text, token) == 0)
        return 0;
    /* any other text: two independent 64-bit hashes of it */
    uint64_t a = 0x6a09e667f3bcc908ull, b = 0xbb67ae8584caa73bull;
    for (size_t i = 0; i < n; i++) {
        a = mix64(a ^ (unsigned char)text[i]);
        b = mix64(b + (unsigned char)text[i] * 0x100000001b3ull);
    }
    for (int i = 0; i < 8; i++) {
        token[i] = (unsigned char)(a >> (8 * i));
        token[8 + i] = (unsigned char)(b >> (8 * i));
    }
    return 0;
}

int ct_boot_token_equal(const unsigned char *a, const unsigned char *b)
{
    unsigned char d = 0;
    for (int i = 0; i < CT_BOOT_TOKEN_BYTES; i++)
        d |= (unsigned char)(a[i] ^ b[i]);
    return d == 0;
}

int ct_boot_token_is_zero(const unsigned char *t)
{
    static const unsigned char zero[CT_BOOT_TOKEN_BYTES];
    return ct_boot_token_equal(t, zero);
}

/* ---------------------------------------------------------------- single rank */

static int single_allgather(struct ct_boot *b, const void *mine, size_t len, void *all,
                            struct ct_err *err)
{
    memcpy(all, mine, len);
    return 0;
}

static int single_barrier(struct ct_boot *b, struct ct_err *err)
{
    return 0;
}

static void single_close(struct ct_boot *b)
{
    free(b->hosts);
    free(b->addrs);
    free(b);
}

static const struct ct_boot_ops single_ops = {
    single_allgather, single_barrier, single_close, NULL, NULL, NULL, NULL, NULL};

void ct_boot_host_name(const char *override, char out[CT_BOOT_HOST_BYTES])
{
    if (override && *override)
        snprintf(out, CT_BOOT_HOST_BYTES, "%s", override);
    else if (gethostname(out, CT_BOOT_HOST_BYTES) < 0 || !out[0])
        snprintf(out, CT_BOOT_HOST_BYTES, "unknown");
    out[CT_BOOT_HOST_BYTES - 1] = 0;
    /* host names travel in printable, ';'-separated fields: replace anything else */
    for (char *c = out; *c; c++)
        if (*c <= ' ' || *c > '~' || *c == ';' || *c == ',')
            *c = '_';
}

void ct_boot_init_common(struct ct_boot *b, const struct ct_boot_cfg *cfg, int rank, int size)
{
    b->rank = rank;
    b->size = size;
    b->timeout_ns = cfg->timeout_ns > 0 ? cfg->timeout_ns : 60 * 1000000000LL;
    b->op_timeout_ns = cfg->op_timeout_ns > 0 ? cfg->op_timeout_ns : b->timeout_ns;
    b->method = cfg->method ? cfg->method : "env";
    b->notice = cfg->notice;
    b->notice_ctx = cfg->notice_ctx;
    ct_boot_host_name(cfg->host, b->host);
    b->hosts = ct_xcalloc((size_t)size, sizeof *b->hosts);
    b->addrs = ct_xcalloc((size_t)size, sizeof *b->addrs);
    memcpy(b->hosts[rank], b->host, sizeof b->host);
}

int ct_boot_single_open(struct ct_boot **out, const struct ct_boot_cfg *cfg, struct ct_err *err)
{
    struct ct_boot *b = ct_xcalloc(1, sizeof *b);
    b->ops = &single_ops;
    ct_boot_init_common(b, cfg, 0, 1);
    b->method = cfg->method ? cfg->method : "single";
    ct_boot_random(&b->job_id, sizeof b->job_id);
    if (cfg->token)
        memcpy(b->token, cfg->token, CT_BOOT_TOKEN_BYTES);
    else
        ct_boot_random(b->token, sizeof b->token);
    ct_boot_fill_layout(b);
    *out = b;
    return 0;
}

void ct_boot_cfg_init(struct ct_boot_cfg *c)
{
    memset(c, 0, sizeof *c);
    c->listen_fd = -1;
    c->size = 1;
}

/* ---------------------------------------------------------------- in-process */

struct ct_boot_world {
    int n, rpn;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int arrived, departed, draining;
    char *blob; /* n * len */
    size_t len;
    void *shared;
    void (*destroy)(void *);
    int64_t timeout_ns;
    int broken; /* a rank timed out or disagreed: every later call fails */
    char why[160];
    uint64_t job_id;
};

struct boot_inproc {
    struct ct_boot b;
    struct ct_boot_world *w;
};

struct ct_boot_world *ct_boot_world_new(int n, int rpn)
{
    struct ct_boot_world *w = ct_xcalloc(1, sizeof *w);
    w->n = n;
    w->rpn = rpn > 0 ? rpn : n;
    pthread_mutex_init(&w->mu, NULL);
    pthread_cond_init(&w->cv, NULL);
    w->job_id = ((uint64_t)getpid() << 32) ^ (uint64_t)ct_now_ns();
    w->timeout_ns = 60 * 1000000000LL;
    return w;
}

void ct_boot_world_set_timeout(struct ct_boot_world *w, int64_t timeout_ns)
{
    w->timeout_ns = timeout_ns;
}

void ct_boot_world_free(struct ct_boot_world *w)
{
    if (!w)
        return;
    if (w->shared && w->destroy)
        w->destroy(w->shared);
    pthread_mutex_destroy(&w->mu);
    pthread_cond_destroy(&w->cv);
    free(w->blob);
    free(w);
}

static int world_broken(struct ct_boot_world *w, struct ct_err *err)
{
    pthread_cond_broadcast(&w->cv);
    pthread_mutex_unlock(&w->mu);
    return ct_err_set(err, CT_EPEER, "bootstrap: %s", w->why);
}

/* Wait on the world's condition until cond holds, the world breaks, or the deadline. */
#define WORLD_WAIT(w, cond, ts, rank)                                                              \
    while (!(cond) && !(w)->broken) {                                                              \
        if (pthread_cond_timedwait(&(w)->cv, &(w)->mu, &(ts)) == ETIMEDOUT && !(cond)) {           \
            (w)->broken = 1;                                                                       \
            snprintf((w)->why, sizeof(w)->why, "rank %d timed out waiting for the others",         \
                     (rank));                                                                      \
        }                                                                                          \
    }

static int inproc_allgather(struct ct_boot *bb, const void *mine, size_t len, void *all,
                            struct ct_err *err)
{
    struct ct_boot_world *w = ((struct boot_inproc *)bb)->w;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    int64_t ns = ts.tv_nsec + bb->timeout_ns;
    ts.tv_sec += ns / 1000000000LL;
    ts.tv_nsec = ns % 1000000000LL;
    pthread_mutex_lock(&w->mu);
    WORLD_WAIT(w, !w->draining, ts, bb->rank); /* the previous round is still being copied */
    if (w->broken)
        return world_broken(w, err);
    if (w->arrived == 0) {
        free(w->blob);
        w->blob = ct_xmalloc(len * (size_t)w->n + 1);
        w->len = len;
    } else if (w->len != len) {
        w->broken = 1;
        snprintf(w->why, sizeof w->why, "rank %d sent %zu bytes where others sent %zu", bb->rank,
                 len, w->len);
        return world_broken(w, err);
    }
    memcpy(w->blob + (size_t)bb->rank * len, mine, len);
    if (++w->arrived == w->n) {
        w->draining = 1;
        pthread_cond_broadcast(&w->cv);
    }
    WORLD_WAIT(w, w->draining, ts, bb->rank);
    if (w->broken)
        return world_broken(w, err);
    memcpy(all, w->blob, len * (size_t)w->n);
    if (++w->departed == w->n) {
        w->arrived = w->departed = 0;
        w->draining = 0;
        pthread_cond_broadcast(&w->cv);
    }
    pthread_mutex_unlock(&w->mu);
    return 0;
}

static int inproc_barrier(struct ct_boot *b, struct ct_err *err)
{
    char one = 1, *all = ct_xmalloc((size_t)b->size);
    int rc = inproc_allgather(b, &one, 1, all, err);
    free(all);
    return rc;
}

static void inproc_close(struct ct_boot *bb)
{
    free(bb->hosts);
    free(bb);
}

static const struct ct_boot_ops inproc_ops = {
    inproc_allgather, inproc_barrier, inproc_close, NULL, NULL, NULL, NULL, NULL};

int ct_boot_inproc_open(struct ct_boot **out, struct ct_boot_world *w, int rank, struct ct_err *err)
{
    if (rank < 0 || rank >= w->n)
        return ct_err_set(err, CT_EINVAL, "bootstrap: rank %d of %d is not valid", rank, w->n);
    struct boot_inproc *b = ct_xcalloc(1, sizeof *b);
    struct ct_boot *bb = &b->b;
    b->w = w;
    bb->ops = &inproc_ops;
    bb->rank = rank;
    bb->size = w->n;
    bb->job_id = w->job_id;
    bb->method = "inproc";
    bb->op_timeout_ns = w->timeout_ns;
    memcpy(bb->token, &w->job_id, sizeof w->job_id);
    bb->timeout_ns = w->timeout_ns;
    bb->hosts = ct_xcalloc((size_t)w->n, sizeof *bb->hosts);
    for (int r = 0; r < w->n; r++)
        snprintf(bb->hosts[r], sizeof bb->hosts[r], "thread-node%d", r / w->rpn);
    memcpy(bb->host, bb->hosts[rank], sizeof bb->host);
    ct_boot_fill_layout(bb);
    *out = bb;
    return 0;
}

void *ct_boot_world_slot(struct ct_boot *bb, void *(*create)(int n, void *arg),
                         void (*destroy)(void *), void *arg)
{
    struct ct_boot_world *w = ((struct boot_inproc *)bb)->w;
    pthread_mutex_lock(&w->mu);
    if (!w->shared) {
        w->shared = create(w->n, arg);
        w->destroy = destroy;
    }
    void *p = w->shared;
    pthread_mutex_unlock(&w->mu);
    return p;
}

char *ct_boot_allgatherv(struct ct_boot *b, const void *mine, size_t mylen, size_t *stride,
                         struct ct_err *err)
{
    uint64_t len = mylen, *lens = ct_xcalloc((size_t)b->size, sizeof *lens);
    if (ct_boot_allgather(b, &len, sizeof len, lens, err) < 0) {
        free(lens);
        return NULL;
    }
    uint64_t max = 0;
    for (int r = 0; r < b->size; r++)
        max = lens[r] > max ? lens[r] : max;
    free(lens);
    char *pad = ct_xcalloc(1, max), *all = ct_xmalloc(max * (size_t)b->size);
    memcpy(pad, mine, len);
    int rc = ct_boot_allgather(b, pad, max, all, err);
    free(pad);
    if (rc < 0) {
        free(all);
        return NULL;
    }
    *stride = max;
    return all;
}

/* Whether text (words each ended by a 0x1f) holds word w (ended by a 0x1f, or not). */
static bool has_word(const char *text, const char *w, size_t len)
{
    for (const char *t = text; *t; t += strcspn(t, "\x1f") + 1)
        if (strcspn(t, "\x1f") == len && !strncmp(t, w, len))
            return true;
    return false;
}

/* The first word of a that b lacks, in w (""), and b's word of the same option in o (""). */
static void first_missing(const char *a, const char *b, char *w, char *o, size_t n)
{
    *w = *o = 0;
    for (const char *t = a; *t && !*w; t += strcspn(t, "\x1f") + 1) {
        size_t l = strcspn(t, "\x1f");
        if (has_word(b, t, l))
            continue;
        snprintf(w, n, "%.*s", (int)(l < n ? l : n - 1), t);
        size_t ol = strcspn(w, " ");
        for (const char *u = b; *u && !*o; u += strcspn(u, "\x1f") + 1)
            if (!strncmp(u, w, ol) && (u[ol] == ' ' || u[ol] == '\x1f'))
                snprintf(o, n, "%.*s", (int)strcspn(u, "\x1f"), u);
    }
}

int ct_boot_same_args(struct ct_boot *boot, int argc, char *const *argv, struct ct_err *err)
{
    struct line {
        uint64_t hash;
        char text[496];
    } mine = {CT_FNV64_BASIS, ""}, *all = ct_xcalloc((size_t)boot->size, sizeof *all);
    size_t off = 0;
    for (int i = 0; i < argc; i++) {
        mine.hash = ct_fnv1a64(ct_fnv1a64(mine.hash, argv[i]), "\x1f");
        size_t l = strlen(argv[i]);
        if (off + l + 2 < sizeof mine.text) /* whole words only */
            off += (size_t)snprintf(mine.text + off, sizeof mine.text - off, "%s\x1f", argv[i]);
    }
    int rc = ct_boot_allgather(boot, &mine, sizeof mine, all, err);
    for (int q = 1; rc == 0 && q < boot->size; q++) {
        if (all[q].hash == all[0].hash)
            continue;
        char w[128], o[128], what[300];
        int who = q;
        first_missing(all[q].text, all[0].text, w, o, sizeof w);
        if (!*w) /* rank 0 has one rank q lacks */
            who = 0, first_missing(all[0].text, all[q].text, w, o, sizeof w);
        if (*w && *o)
            snprintf(what, sizeof what, ": '%s' where rank %d has '%s'", w, who ? 0 : q, o);
        else if (*w)
            snprintf(what, sizeof what, ": rank %d has '%s', rank %d not", who, w, who ? 0 : q);
        else
            snprintf(what, sizeof what, " (beyond what a line carries here)");
        rc = ct_err_set(err, CT_EINVAL,
                        "rank %d was started with other options than rank 0%s: every rank of a "
                        "job runs the same options",
                        q, what);
    }
    free(all);
    return rc;
}
