/* SPDX-License-Identifier: MIT */
/* The tcp star bootstrap: hello wire format, tokens, strays and mis-launches refused and
 * reported (also by the tcp transport's handshake), timeouts and aborts naming the rank,
 * the published address. Ranks are forked processes on 127.0.0.1. */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/clock.h"
#include "lib/sock.h"
#include "transport/boot.h"
#include "transport/boot_int.h"
#include "transport/tp.h"

#define SEC 1000000000LL
#define MAXR 8

/* ---------------------------------------------------------------- wire format */

static uint32_t fnv(const unsigned char *p, size_t n)
{
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 16777619u;
    }
    return h;
}

static void reseal(unsigned char *w)
{
    uint32_t c = fnv(w, 124);
    for (int i = 0; i < 4; i++)
        w[124 + i] = (unsigned char)(c >> (8 * i));
}

static void sample(struct ct_boot_hello *h)
{
    memset(h, 0, sizeof *h);
    h->kind = CT_BOOT_HELLO;
    h->flags = CT_BOOT_F_TOKEN;
    h->rank = 3;
    h->size = 8;
    h->pid = 4242;
    h->job_id = 0x1122334455667788ull;
    for (int i = 0; i < CT_BOOT_TOKEN_BYTES; i++)
        h->token[i] = (unsigned char)(0xa0 + i);
    snprintf(h->host, sizeof h->host, "node07/node1");
}

/* host_size counts every rank of this machine: with virtual nodes (--ranks-per-node,
 * "host/nodeN") all of the host's nodes (auto wait spun with 4 ranks on 2 CPUs, each node's
 * 2 ranks counted alone); another host sharing a prefix is not this one */
Test(boot_layout, host_size_over_virtual_nodes)
{
    static const char *const names[] = {"vm/node0", "vm/node0",  "vm/node1",
                                        "vm/node1", "vmx/node0", "vm"};
    char hosts[6][CT_BOOT_HOST_BYTES];
    struct ct_boot b;
    memset(&b, 0, sizeof b);
    for (int r = 0; r < 6; r++)
        snprintf(hosts[r], sizeof hosts[r], "%s", names[r]);
    b.hosts = hosts;
    b.size = 6;
    b.rank = 2;
    snprintf(b.host, sizeof b.host, "%s", names[2]);
    ct_boot_fill_layout(&b);
    cr_assert_eq(b.local_size, 2);
    cr_assert_eq(b.local_rank, 0);
    cr_assert_eq(b.nnodes, 4);
    cr_assert_eq(b.host_size, 5, "vm/node0 x2, vm/node1 x2 and vm: %d", b.host_size);
    b.rank = 4;
    snprintf(b.host, sizeof b.host, "%s", names[4]);
    ct_boot_fill_layout(&b);
    cr_assert_eq(b.host_size, 1);
    cr_assert_eq(b.local_size, 1);
}

Test(boot_wire, hello_round_trip)
{
    struct ct_boot_hello h, g;
    unsigned char w[CT_BOOT_HELLO_BYTES];
    sample(&h);
    ct_boot_hello_encode(&h, w);
    struct ct_err err = {0};
    cr_assert_eq(ct_boot_hello_decode(w, &g, &err), 0, "%s", err.msg);
    cr_assert_eq(g.kind, h.kind);
    cr_assert_eq(g.flags, h.flags);
    cr_assert_eq(g.rank, 3);
    cr_assert_eq(g.size, 8);
    cr_assert_eq(g.pid, 4242);
    cr_assert_eq(g.job_id, h.job_id);
    cr_assert_arr_eq(g.token, h.token, CT_BOOT_TOKEN_BYTES);
    cr_assert_str_eq(g.host, "node07/node1");
    /* a 63-character host name is the longest that fits */
    memset(h.host, 'x', sizeof h.host - 1);
    h.host[sizeof h.host - 1] = 0;
    ct_boot_hello_encode(&h, w);
    cr_assert_eq(ct_boot_hello_decode(w, &g, &err), 0, "%s", err.msg);
    cr_assert_eq(strlen(g.host), 63);
}

/* Each mutation (offset, byte), resealed or not, must be refused with its reason. */
Test(boot_wire, hello_refusals)
{
    static const struct {
        int off;
        unsigned char val;
        int reseal;
        const char *why;
    } cases[] = {
        {0, 0x00, 1, "magic"},
        {124, 0x00, 0, "checksum"},
        {40, 0x55, 0, "checksum"},
        {4, 9, 1, "version"},
        {10, 1, 1, "reserved"},
        {115, 1, 1, "reserved"},
        {5, 0, 1, "kind 0"},
        {5, 4, 1, "kind 4"},
        {6, 2, 1, "flags"},
        {8, 1, 1, "status"},
        {12, 8, 1, "rank 8 of 8"},
        {16, 0, 1, "rank 3 of 0"},
        {18, 0x10, 1, "rank 3 of"},
        {48, 0, 1, "host name field"},
        {52, 0x07, 1, "host name byte"},
        {53, ' ', 1, "host name byte"},
        {70, 'z', 1, "host name field"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct ct_boot_hello h, g;
        unsigned char w[CT_BOOT_HELLO_BYTES];
        sample(&h);
        ct_boot_hello_encode(&h, w);
        w[cases[i].off] = cases[i].val;
        if (cases[i].reseal)
            reseal(w);
        struct ct_err err = {0};
        cr_expect_eq(ct_boot_hello_decode(w, &g, &err), CT_EPEER, "case %zu accepted", i);
        cr_expect(strstr(err.msg, cases[i].why), "case %zu: '%s' lacks '%s'", i, err.msg,
                  cases[i].why);
    }
    /* a host name that fills its field has no terminator */
    struct ct_boot_hello h, g;
    unsigned char w[CT_BOOT_HELLO_BYTES];
    sample(&h);
    ct_boot_hello_encode(&h, w);
    memset(w + 48, 'a', 64);
    reseal(w);
    cr_expect_eq(ct_boot_hello_decode(w, &g, NULL), CT_EPEER);
}

Test(boot_wire, root_record)
{
    struct ct_boot_root_rec r;
    struct ct_err err = {0};
    const char *good = "000102030405060708090a0b0c0d0e0f;node-a;10.0.0.1:4000,127.0.0.1:4000";
    cr_assert_eq(ct_boot_root_rec_parse(good, &r, &err), 0, "%s", err.msg);
    cr_assert_eq(r.token[15], 0x0f);
    cr_assert_str_eq(r.host, "node-a");
    cr_assert_str_eq(r.addrs, "10.0.0.1:4000,127.0.0.1:4000");
    static const struct {
        const char *text, *why;
    } bad[] = {
        {"error;rank 0 cannot listen", "could not start the bootstrap: rank 0 cannot listen"},
        {"0001;node;1.2.3.4:5", "no token"},
        {"000102030405060708090a0b0c0d0e0g;n;1.2.3.4:5", "no token"},
        {"000102030405060708090a0b0c0d0e0f;;1.2.3.4:5", "host name"},
        {"000102030405060708090a0b0c0d0e0f;a b;1.2.3.4:5", "host name"},
        {"000102030405060708090a0b0c0d0e0f;node", "host name"},
        {"000102030405060708090a0b0c0d0e0f;node;", "addresses"},
        {"000102030405060708090a0b0c0d0e0f;node;1.2.3.4", "address '1.2.3.4'"},
        {"000102030405060708090a0b0c0d0e0f;node;1.2.3.4:0", "address"},
        {"000102030405060708090a0b0c0d0e0f;node;1.2.3.4:5,,", "address entry"},
        {"000102030405060708090a0b0c0d0e0f;node;1.2.3.4:5;x", "address byte"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ct_err_clear(&err);
        cr_expect_lt(ct_boot_root_rec_parse(bad[i].text, &r, &err), 0, "accepted '%s'",
                     bad[i].text);
        cr_expect(strstr(err.msg, bad[i].why), "'%s': '%s' lacks '%s'", bad[i].text, err.msg,
                  bad[i].why);
    }
    char longv[800];
    memset(longv, '1', sizeof longv - 1);
    longv[sizeof longv - 1] = 0;
    cr_expect_lt(ct_boot_root_rec_parse(longv, &r, NULL), 0);
}

Test(boot_wire, tokens)
{
    unsigned char a[CT_BOOT_TOKEN_BYTES], b[CT_BOOT_TOKEN_BYTES];
    struct ct_err err = {0};
    cr_assert_eq(ct_boot_token_from_text("short", a, &err), CT_EINVAL);
    cr_assert(strstr(err.msg, "at least 16"), "%s", err.msg);
    cr_assert_eq(ct_boot_token_from_text("00112233445566778899aabbccddeeff", a, NULL), 0);
    cr_assert_eq(a[0], 0x00);
    cr_assert_eq(a[15], 0xff);
    char hex[33];
    ct_boot_token_hex(a, hex);
    cr_assert_str_eq(hex, "00112233445566778899aabbccddeeff");
    /* other text is hashed: deterministic, and one character changes it */
    cr_assert_eq(ct_boot_token_from_text("a passphrase of our job", a, NULL), 0);
    cr_assert_eq(ct_boot_token_from_text("a passphrase of our job", b, NULL), 0);
    cr_assert(ct_boot_token_equal(a, b));
    cr_assert_eq(ct_boot_token_from_text("a passphrase of our jog", b, NULL), 0);
    cr_assert_not(ct_boot_token_equal(a, b));
    cr_assert_not(ct_boot_token_is_zero(a));
    ct_boot_random(a, sizeof a);
    ct_boot_random(b, sizeof b);
    cr_assert_not(ct_boot_token_equal(a, b));
}

/* ---------------------------------------------------------------- forked star jobs */

struct result {
    int code[MAXR]; /* 0 ok, < 0 the failure */
    char msg[MAXR][sizeof(struct ct_err){0}.msg];
    int notices;
    char notice[4096];
};

struct job;
/* After bring-up, in every rank; returns 0 or < 0 with err. */
typedef int (*rank_fn)(const struct job *j, struct ct_boot *b, struct result *res,
                       struct ct_err *err);

struct job {
    int n;
    int64_t timeout_ns;
    const char *token;                 /* every rank's secret (NULL: none, rank 0 draws one) */
    int odd_rank;                      /* this rank gets the odd_* settings (0: none) */
    const char *odd_token;             /* its own secret */
    int odd_size;                      /* its own job size (0: same) */
    int odd_claims;                    /* the rank it claims to be (0: its own) */
    int skip_rank;                     /* this rank never starts (0: none) */
    rank_fn fn;                        /* after bring-up (NULL: a barrier only) */
    int (*attack)(int port, int *fds); /* in the test, between rank 0 and the others:
                                          opens connections, returns how many */
};

static void on_notice(void *ctx, const char *msg)
{
    struct result *res = ctx;
    res->notices++;
    size_t off = strlen(res->notice);
    snprintf(res->notice + off, sizeof res->notice - off, "%s\n", msg);
}

static int child(const struct job *j, int r, int port, struct result *res)
{
    struct ct_boot_cfg c;
    unsigned char tok[CT_BOOT_TOKEN_BYTES];
    char root[64], host[32];
    int odd = j->odd_rank && r == j->odd_rank;
    ct_boot_cfg_init(&c);
    snprintf(root, sizeof root, "127.0.0.1:%d", port);
    snprintf(host, sizeof host, "host-%d", r / 2);
    c.rank = odd && j->odd_claims ? j->odd_claims : r;
    c.size = odd && j->odd_size ? j->odd_size : j->n;
    c.root_addr = root;
    c.host = host;
    c.timeout_ns = j->timeout_ns;
    c.op_timeout_ns = j->timeout_ns;
    c.notice = on_notice;
    c.notice_ctx = res;
    const char *t = odd && j->odd_token ? j->odd_token : j->token;
    if (t) {
        ct_boot_token_from_text(t, tok, NULL);
        c.token = tok;
    }
    struct ct_boot *b = NULL;
    struct ct_err err = {0};
    int rc = ct_boot_tcp_start(&b, &c, &err);
    if (rc == 0 && j->fn)
        rc = j->fn(j, b, res, &err);
    if (rc == 0)
        rc = ct_boot_barrier(b, &err);
    res->code[r] = rc;
    snprintf(res->msg[r], sizeof res->msg[r], "%s", rc < 0 ? err.msg : "");
    ct_boot_close(b);
    return rc < 0 ? 1 : 0;
}

static int free_port(void)
{
    int port = 0, fd = ct_sock_listen("127.0.0.1", 0, 1, &port, NULL);
    cr_assert_geq(fd, 0);
    close(fd);
    return port;
}

static pid_t spawn(const struct job *j, int r, int port, struct result *res)
{
    fflush(NULL);
    pid_t p = fork();
    cr_assert_geq(p, 0);
    if (p == 0)
        _exit(child(j, r, port, res));
    return p;
}

/* Run the job; every rank's code and message end up in the returned page (munmap it). */
static struct result *run(const struct job *j, int port)
{
    struct result *res =
        mmap(NULL, sizeof *res, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    cr_assert_neq(res, MAP_FAILED);
    memset(res, 0, sizeof *res);
    pid_t pids[MAXR];
    int fds[64], nfd = 0;
    if (!port)
        port = free_port();
    pids[0] = spawn(j, 0, port, res);
    if (j->attack) {
        nfd = j->attack(port, fds);
        usleep(300000); /* let the root see them before the job completes */
    }
    for (int r = 1; r < j->n; r++)
        pids[r] = j->skip_rank && r == j->skip_rank ? 0 : spawn(j, r, port, res);
    int64_t end = ct_now_ns() + 3 * j->timeout_ns + 5 * SEC;
    for (int r = 0; r < j->n; r++) {
        while (pids[r] && waitpid(pids[r], NULL, WNOHANG) == 0) {
            if (ct_now_ns() > end) {
                kill(pids[r], SIGKILL);
                waitpid(pids[r], NULL, 0);
                snprintf(res->msg[r], sizeof res->msg[r], "hung");
                res->code[r] = -100;
                break;
            }
            usleep(10000);
        }
    }
    for (int i = 0; i < nfd; i++)
        close(fds[i]);
    return res;
}

static void expect_ok(const struct result *res, int n)
{
    for (int r = 0; r < n; r++)
        cr_expect_eq(res->code[r], 0, "rank %d: %s", r, res->msg[r]);
}

/* Every rank: same job id and token (not zero), host table, addresses seen by the root. */
static int check_tables(const struct job *j, struct ct_boot *b, struct result *res,
                        struct ct_err *err)
{
    struct mine {
        uint64_t job;
        unsigned char token[CT_BOOT_TOKEN_BYTES];
    } m, all[MAXR];
    m.job = b->job_id;
    memcpy(m.token, b->token, sizeof m.token);
    CT_TRY(ct_boot_allgather(b, &m, sizeof m, all, err));
    for (int r = 0; r < b->size; r++)
        if (all[r].job != all[0].job || !ct_boot_token_equal(all[r].token, all[0].token))
            return ct_err_set(err, CT_EINVAL, "rank %d has another job id or token", r);
    if (ct_boot_token_is_zero(b->token))
        return ct_err_set(err, CT_EINVAL, "zero token");
    if (j->token) {
        unsigned char t[CT_BOOT_TOKEN_BYTES];
        ct_boot_token_from_text(j->token, t, NULL);
        if (!ct_boot_token_equal(t, b->token))
            return ct_err_set(err, CT_EINVAL, "not the configured token");
    }
    for (int r = 0; r < b->size; r++) {
        char want[32];
        snprintf(want, sizeof want, "host-%d", r / 2);
        if (strcmp(b->hosts[r], want))
            return ct_err_set(err, CT_EINVAL, "host of %d is '%s'", r, b->hosts[r]);
        if (r != b->rank && strcmp(b->addrs[r], "127.0.0.1"))
            return ct_err_set(err, CT_EINVAL, "address of %d is '%s'", r, b->addrs[r]);
    }
    if (b->nnodes != (b->size + 1) / 2 || b->node != b->rank / 2 || b->local_rank != b->rank % 2)
        return ct_err_set(err, CT_EINVAL, "layout: node %d of %d, local %d", b->node, b->nnodes,
                          b->local_rank);
    if (strcmp(b->method, "env"))
        return ct_err_set(err, CT_EINVAL, "method '%s'", b->method);
    return 0;
}

Test(boot_tcp, star_with_token)
{
    struct job j = {
        .n = 5, .timeout_ns = 10 * SEC, .token = "a shared secret of this job", .fn = check_tables};
    struct result *res = run(&j, 0);
    expect_ok(res, j.n);
    cr_expect_eq(res->notices, 0, "%s", res->notice);
    munmap(res, sizeof *res);
}

Test(boot_tcp, star_trust_on_first_connection)
{
    struct job j = {.n = 4, .timeout_ns = 10 * SEC, .fn = check_tables};
    struct result *res = run(&j, 0);
    expect_ok(res, j.n);
    munmap(res, sizeof *res);
}

/* An allgather of different sizes per rank, and of each rank's rank. */
static int gathers(const struct job *j, struct ct_boot *b, struct result *res, struct ct_err *err)
{
    for (size_t len = 1; len <= 1 << 20; len *= 16) {
        unsigned char *mine = malloc(len), *all = malloc(len * (size_t)b->size);
        memset(mine, b->rank + 1, len);
        int rc = ct_boot_allgather(b, mine, len, all, err);
        for (int r = 0; rc == 0 && r < b->size; r++)
            if (all[(size_t)r * len] != r + 1 || all[(size_t)r * len + len - 1] != r + 1)
                rc = ct_err_set(err, CT_EINVAL, "wrong bytes from %d at %zu", r, len);
        free(mine);
        free(all);
        CT_TRY(rc);
    }
    return 0;
}

Test(boot_tcp, allgather_sizes)
{
    struct job j = {.n = 3, .timeout_ns = 10 * SEC, .fn = gathers};
    struct result *res = run(&j, 0);
    expect_ok(res, j.n);
    munmap(res, sizeof *res);
}

/* Strays at the root: junk, a silent connection, hellos with a wrong token and a wrong
 * size, a connection closed half-way. None delays the job; each is reported. */
static int strays(int port, int *fds)
{
    int n = 0;
    int64_t dl = ct_now_ns() + 5 * SEC;
    struct ct_boot_hello h;
    unsigned char w[CT_BOOT_HELLO_BYTES];
    for (int k = 0; k < 5; k++) {
        int fd = ct_sock_connect("127.0.0.1", port, dl, NULL);
        cr_assert_geq(fd, 0, "cannot reach the root");
        fds[n++] = fd;
        sample(&h);
        h.rank = 1;
        h.size = 3;
        ct_boot_hello_encode(&h, w);
        switch (k) {
        case 0: memset(w, 'G', sizeof w); break; /* "GGGG..." like an HTTP client */
        case 1: continue;                        /* silent */
        case 2: break;                           /* wrong token */
        case 3:
            h.size = 9; /* wrong size, right token */
            ct_boot_token_from_text("a shared secret of this job", h.token, NULL);
            ct_boot_hello_encode(&h, w);
            break;
        case 4: /* half a hello, then gone */
            cr_assert_eq(write(fd, w, 20), 20);
            close(fd);
            n--;
            continue;
        }
        cr_assert_eq(write(fd, w, sizeof w), (ssize_t)sizeof w);
    }
    return n;
}

Test(boot_tcp, strays_rejected_and_reported)
{
    struct job j = {.n = 3,
                    .timeout_ns = 10 * SEC,
                    .token = "a shared secret of this job",
                    .fn = check_tables,
                    .attack = strays};
    int64_t t0 = ct_now_ns();
    struct result *res = run(&j, 0);
    expect_ok(res, j.n);
    cr_expect_lt(ct_now_ns() - t0, 5 * SEC, "strays delayed the job");
    cr_expect_geq(res->notices, 4, "notices:\n%s", res->notice);
    cr_expect(strstr(res->notice, "bad bootstrap hello: magic"), "%s", res->notice);
    cr_expect(strstr(res->notice, "wrong job token"), "%s", res->notice);
    cr_expect(strstr(res->notice, "rejected rank 1 of 9"), "%s", res->notice);
    cr_expect(strstr(res->notice, "closed after 20 bytes"), "%s", res->notice);
    cr_expect(strstr(res->notice, "127.0.0.1:"), "notices name the source: %s", res->notice);
    munmap(res, sizeof *res);
}

Test(boot_tcp, wrong_token_fails_fast)
{
    struct job j = {.n = 3,
                    .timeout_ns = 2 * SEC,
                    .token = "a shared secret of this job",
                    .odd_rank = 2,
                    .odd_token = "the secret of another job"};
    struct result *res = run(&j, 0);
    cr_expect(strstr(res->msg[2], "rejected rank 2: wrong job token"), "%s", res->msg[2]);
    cr_expect(strstr(res->msg[0], "missing rank 2"), "%s", res->msg[0]);
    cr_expect(strstr(res->notice, "claims rank 2 on host-1"), "%s", res->notice);
    munmap(res, sizeof *res);
}

Test(boot_tcp, no_token_when_one_is_required)
{
    /* the root knows a token, rank 1 none */
    struct job k = {.n = 2, .timeout_ns = 2 * SEC};
    int port = free_port();
    struct result *res =
        mmap(NULL, sizeof *res, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    memset(res, 0, sizeof *res);
    struct job root = k;
    root.token = "a shared secret of this job";
    pid_t p0 = spawn(&root, 0, port, res);
    pid_t p1 = spawn(&k, 1, port, res);
    waitpid(p1, NULL, 0);
    waitpid(p0, NULL, 0);
    cr_expect(strstr(res->msg[1], "wrong job token"), "%s", res->msg[1]);
    cr_expect(strstr(res->notice, "no job token"), "%s", res->notice);
    munmap(res, sizeof *res);
}

Test(boot_tcp, size_mismatch_is_a_mislaunch)
{
    struct job j = {.n = 3, .timeout_ns = 2 * SEC, .odd_rank = 2, .odd_size = 4};
    struct result *res = run(&j, 0);
    cr_expect(strstr(res->msg[2], "mis-launch: the root at 127.0.0.1"), "%s", res->msg[2]);
    cr_expect(strstr(res->msg[2], "runs a job of 3 ranks, this process was launched as rank 2 "
                                  "of 4"),
              "%s", res->msg[2]);
    cr_expect_neq(res->code[0], 0);
    munmap(res, sizeof *res);
}

Test(boot_tcp, duplicate_rank_is_a_mislaunch)
{
    /* rank 2 claims to be rank 1 as well; with a shared token the root stops at once */
    struct job j = {.n = 3,
                    .timeout_ns = 5 * SEC,
                    .token = "a shared secret of this job",
                    .odd_rank = 2,
                    .odd_claims = 1};
    int64_t t0 = ct_now_ns();
    struct result *res = run(&j, 0);
    cr_expect(strstr(res->msg[0], "mis-launch: two processes claim rank 1"), "%s", res->msg[0]);
    cr_expect(strstr(res->msg[2], "rank 1 is already taken") ||
                  strstr(res->msg[1], "rank 1 is already taken"),
              "%s | %s", res->msg[1], res->msg[2]);
    cr_expect_lt(ct_now_ns() - t0, 4 * SEC);
    munmap(res, sizeof *res);
}

Test(boot_tcp, timeout_names_the_missing_ranks)
{
    struct job j = {.n = 4, .timeout_ns = SEC, .skip_rank = 2};
    int64_t t0 = ct_now_ns();
    struct result *res = run(&j, 0);
    cr_expect(strstr(res->msg[0], "timed out after 1.0 s waiting for 1 of 4 ranks to connect "
                                  "(missing rank 2)"),
              "%s", res->msg[0]);
    cr_expect(strstr(res->msg[1], "waiting for the other ranks"), "%s", res->msg[1]);
    cr_expect_lt(ct_now_ns() - t0, 4 * SEC);
    munmap(res, sizeof *res);
}

Test(boot_tcp, root_never_there)
{
    struct job j = {.n = 2, .timeout_ns = SEC, .skip_rank = 0};
    struct result *res =
        mmap(NULL, sizeof *res, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    memset(res, 0, sizeof *res);
    pid_t p = spawn(&j, 1, free_port(), res);
    waitpid(p, NULL, 0);
    cr_expect(strstr(res->msg[1], "rank 1 cannot reach the root (rank 0) at 127.0.0.1:"), "%s",
              res->msg[1]);
    munmap(res, sizeof *res);
}

Test(boot_tcp, root_port_in_use)
{
    int port = 0, busy = ct_sock_listen(NULL, 0, 1, &port, NULL);
    cr_assert_geq(busy, 0);
    struct job j = {.n = 2, .timeout_ns = SEC};
    struct result *res = run(&j, port);
    cr_expect(strstr(res->msg[0], "address already in use"), "%s", res->msg[0]);
    cr_expect(strstr(res->msg[0], "launched as rank 0"), "%s", res->msg[0]);
    close(busy);
    munmap(res, sizeof *res);
}

/* Rank 2 leaves after bring-up: the root's allgather fails naming it, and tells rank 1. */
static int leave_early(const struct job *j, struct ct_boot *b, struct result *res,
                       struct ct_err *err)
{
    if (b->rank == 2)
        _exit(0);
    int x = b->rank, all[MAXR];
    return ct_boot_allgather(b, &x, sizeof x, all, err);
}

Test(boot_tcp, abort_names_the_failed_rank)
{
    struct job j = {.n = 3, .timeout_ns = 5 * SEC, .fn = leave_early};
    struct result *res = run(&j, 0);
    cr_expect(strstr(res->msg[0], "bootstrap allgather #1: rank 2 (host-1)"), "%s", res->msg[0]);
    cr_expect(strstr(res->msg[1], "rank 0 (host-0) gave up: bootstrap allgather #1: rank 2 "
                                  "(host-1)"),
              "%s", res->msg[1]);
    munmap(res, sizeof *res);
}

/* Ranks disagree on the size of an allgather. */
static int disagree(const struct job *j, struct ct_boot *b, struct result *res, struct ct_err *err)
{
    char mine[16] = {0}, all[16 * MAXR];
    return ct_boot_allgather(b, mine, b->rank == 1 ? 16 : 8, all, err);
}

Test(boot_tcp, allgather_length_mismatch)
{
    struct job j = {.n = 2, .timeout_ns = 5 * SEC, .fn = disagree};
    struct result *res = run(&j, 0);
    cr_expect(strstr(res->msg[0], "rank 1 (host-0) sent 16 bytes, expected 8 (ranks disagree"),
              "%s", res->msg[0]);
    cr_expect_neq(res->code[1], 0);
    munmap(res, sizeof *res);
}

/* The root named rank 1 stalled after the 1 s timeout, and rank 2 learnt it from the root;
 * res released. */
static void expect_rank1_stalled(struct result *res)
{
    cr_expect(strstr(res->msg[0], "bootstrap allgather #1: no progress for 1.0 s waiting for peer "
                                  "rank 1 (host-0)"),
              "%s", res->msg[0]);
    cr_expect(strstr(res->msg[2], "gave up") && strstr(res->msg[2], "rank 1 (host-0)"), "%s",
              res->msg[2]);
    munmap(res, sizeof *res);
}

/* Busy for busy_ns, beating (ct_boot_beat) for the first beat_ns of it, then an allgather. */
static int busy_for(struct ct_boot *b, int64_t busy_ns, int64_t beat_ns, struct ct_err *err)
{
    int64_t t0 = ct_now_ns();
    while (ct_now_ns() - t0 < busy_ns) {
        if (ct_now_ns() - t0 < beat_ns)
            ct_boot_beat(b, ct_now_ns());
        usleep(20000);
    }
    int x = b->rank, all[MAXR];
    return ct_boot_allgather(b, &x, sizeof x, all, err);
}

/* Nobody answers: a silent rank stalls the collective for op_timeout, then everyone knows. */
static int stall(const struct job *j, struct ct_boot *b, struct result *res, struct ct_err *err)
{
    (void)j, (void)res;
    return busy_for(b, b->rank == 1 ? 2 * SEC : 0, 0, err);
}

Test(boot_tcp, silent_rank_times_out)
{
    struct job j = {.n = 3, .timeout_ns = SEC, .fn = stall};
    struct result *res = run(&j, 0);
    expect_rank1_stalled(res);
}

/* Rank 1 busy for 5x the timeout, beating: the root waits for it on its beats, rank 2 waits
 * for the root on the beats the root passes on (its own wait, the timeout plus 2 s, is shorter
 * than the work), and nobody gives up (a validate pair round longer than --timeout named a
 * healthy busy rank failed). */
static int busy_beating(const struct job *j, struct ct_boot *b, struct result *res,
                        struct ct_err *err)
{
    (void)j, (void)res;
    return busy_for(b, b->rank == 1 ? 5 * SEC : 0, 5 * SEC, err);
}

Test(boot_tcp, busy_ranks_beat_past_the_timeout)
{
    struct job j = {.n = 3, .timeout_ns = SEC, .fn = busy_beating};
    struct result *res = run(&j, 0);
    for (int r = 0; r < 3; r++)
        cr_expect_eq(res->code[r], 0, "rank %d: %s", r, res->msg[r]);
    munmap(res, sizeof *res);
}

/* Rank 1 beats for 2 s, then stays silent until 6 s: the root names it one timeout after its
 * last beat (2.75-3 s: not at 1 s, its beats unheard; not at 6 s, masked), and the others
 * learn it. */
static int beats_then_silence(const struct job *j, struct ct_boot *b, struct result *res,
                              struct ct_err *err)
{
    (void)j, (void)res;
    int64_t t0 = ct_now_ns();
    int rc = busy_for(b, b->rank == 1 ? 6 * SEC : 0, 2 * SEC, err);
    double s = (double)(ct_now_ns() - t0) / 1e9;
    if (b->rank == 0 && rc < 0 && (s < 2.5 || s > 4.5))
        return ct_err_set(err, CT_EIO, "gave up after %.1f s, not 2.5-4.5 s", s);
    return rc;
}

Test(boot_tcp, a_rank_that_stops_beating_times_out)
{
    struct job j = {.n = 3, .timeout_ns = SEC, .fn = beats_then_silence};
    struct result *res = run(&j, 0);
    expect_rank1_stalled(res);
}

/* Work until the bootstrap's word of a stalled (or dead) rank comes, beating as a busy rank
 * does; the rank it names, -1 none in 8 s; *secs: how long it took. */
static int wait_word(struct ct_boot *b, double *secs)
{
    int64_t t0 = ct_now_ns();
    int seen = -1;
    while (ct_now_ns() - t0 < 8 * SEC && (seen = ct_boot_stalled(b, ct_now_ns())) < 0) {
        ct_boot_beat(b, ct_now_ns());
        usleep(5000);
    }
    *secs = (double)(ct_now_ns() - t0) / 1e9;
    return seen;
}

/* A rank's result where another rank died: the harness's barrier after the rank's function
 * cannot pass, so the rank records its code here and leaves. */
static _Noreturn void leave(struct result *res, int rank, int rc, const char *msg)
{
    res->code[rank] = rc;
    snprintf(res->msg[rank], sizeof res->msg[rank], "%s", rc < 0 ? msg : "");
    _exit(0);
}

/* Run a job of n ranks with each function; every rank must end 0. */
static void expect_each_ok(const rank_fn *fns, int nfn, int n, int64_t timeout_ns)
{
    for (int i = 0; i < nfn; i++) {
        struct job j = {.n = n, .timeout_ns = timeout_ns, .fn = fns[i]};
        struct result *res = run(&j, 0);
        for (int r = 0; r < n; r++)
            cr_expect_eq(res->code[r], 0, "case %d, rank %d: %s", i, r, res->msg[r]);
        munmap(res, sizeof *res);
    }
}

/* Rank 3 finds rank 2 stalled 0.2 s in (rank 2 is silent for 0.6 s, then answers): the busy
 * ranks (rank 1, and the root where root_busy) learn it within a timeout while they work,
 * the root where it works or where it waits in the allgather for rank 1 (it passes the word
 * on at rank 1's beats); the allgather then has every rank's answer, and the word is over. */
static int told_stalled(struct ct_boot *b, bool root_busy, struct ct_err *err)
{
    int seen = -1;
    double s;
    if (b->rank == 3) {
        usleep(200000);
        ct_boot_tell_stalled(b, 2);
    } else if (b->rank == 2) {
        usleep(600000);
    } else if (b->rank == 1 || root_busy) {
        if ((seen = wait_word(b, &s)) != 2 || s > 1.5)
            return ct_err_set(err, CT_EIO, "word of rank %d after %.2f s, not of rank 2 by 1.5 s",
                              seen, s);
    }
    int x = b->rank, all[MAXR];
    CT_TRY(ct_boot_allgather(b, &x, sizeof x, all, err));
    seen = ct_boot_stalled(b, ct_now_ns() + 2 * SEC);
    return seen < 0 ? 0
                    : ct_err_set(err, CT_EIO, "the word of rank %d kept after the allgather", seen);
}

static int told_busy_root(const struct job *j, struct ct_boot *b, struct result *res,
                          struct ct_err *err)
{
    (void)j, (void)res;
    return told_stalled(b, true, err);
}

static int told_waiting_root(const struct job *j, struct ct_boot *b, struct result *res,
                             struct ct_err *err)
{
    (void)j, (void)res;
    return told_stalled(b, false, err);
}

Test(boot_tcp, a_stall_word_reaches_the_busy_ranks)
{
    rank_fn fns[] = {told_busy_root, told_waiting_root}; /* the root busy, the root waiting */
    expect_each_ok(fns, 2, 4, SEC);
}

/* A rank whose bootstrap connection closes (it died: its sockets closed by the kernel) reads
 * as its STALL at the root, which passes it on to the busy ranks; a dead root's close, at
 * every rank itself (nobody passes that on). It was named only at the next allgather: a
 * healthy pair ran its round to the end (60 s of 256 MiB x 1000, ranks started by hand). */
static _Noreturn void told_dead(struct ct_boot *b, int dead, struct result *res)
{
    if (b->rank == dead) {
        usleep(300000);
        _exit(0);
    }
    char msg[128];
    double s;
    int seen = wait_word(b, &s);
    snprintf(msg, sizeof msg, "word of rank %d after %.2f s, not of rank %d by 1.5 s", seen, s,
             dead);
    leave(res, b->rank, seen == dead && s < 1.5 ? 0 : -1, msg);
}

static int told_dead_rank(const struct job *j, struct ct_boot *b, struct result *res,
                          struct ct_err *err)
{
    (void)j, (void)err;
    told_dead(b, 2, res);
}

static int told_dead_root(const struct job *j, struct ct_boot *b, struct result *res,
                          struct ct_err *err)
{
    (void)j, (void)err;
    told_dead(b, 0, res);
}

Test(boot_tcp, a_closed_connection_reads_as_that_ranks_stall)
{
    rank_fn fns[] = {told_dead_rank, told_dead_root}; /* rank 2 dead, the root dead */
    expect_each_ok(fns, 2, 4, SEC);
}

/* The root gives up on a dead rank (1) and leaves while rank 2 is busy; rank 2 comes to the
 * allgather late: it reads the root's ABORT, not "rank 0: send: Broken pipe" (a root that
 * died, "no report", where rank 0 had reported). */
static int late_after_abort(const struct job *j, struct ct_boot *b, struct result *res,
                            struct ct_err *err)
{
    (void)j;
    if (b->rank == 1)
        _exit(0);
    if (b->rank == 2)
        usleep(500000);
    int x = b->rank, all[MAXR];
    int rc = ct_boot_allgather(b, &x, sizeof x, all, err);
    if (b->rank == 0)
        rc = rc < 0 ? 0 : ct_err_set(err, CT_EIO, "the allgather passed without rank 1");
    else if (rc == 0 || !strstr(err->msg, ") gave up: "))
        rc = ct_err_set(err, CT_EIO, "rank 2: %s", rc ? err->msg : "passed");
    else
        rc = 0;
    leave(res, b->rank, rc, err->msg);
}

/* Rank 2 sends its answer to an allgather and dies 300 ms later while the root is busy: its
 * closed connection behind that answer reads as its word (the others stop), and the ranks the
 * root has not answered when its answer to rank 2 fails read the root's ABORT, not a silence
 * of a timeout ("no report" where rank 0 reported). */
static void *die_soon(void *arg)
{
    (void)arg;
    usleep(300000);
    _exit(0);
}

static int dead_behind_its_answer(const struct job *j, struct ct_boot *b, struct result *res,
                                  struct ct_err *err)
{
    (void)j;
    int x = b->rank, all[MAXR], seen, rc;
    double s;
    if (b->rank == 2) {
        pthread_t th;
        pthread_create(&th, NULL, die_soon, NULL);
        ct_boot_allgather(b, &x, sizeof x, all, err);
        _exit(0);
    }
    if ((seen = wait_word(b, &s)) != 2 || s > 1.5)
        rc = ct_err_set(err, CT_EIO, "word of rank %d after %.2f s, not of rank 2 by 1.5 s", seen,
                        s);
    else if ((rc = ct_boot_allgather(b, &x, sizeof x, all, err)) < 0 && b->rank == 3 &&
             !strstr(err->msg, ") gave up: "))
        rc = ct_err_set(err, CT_EIO, "rank 3: %s", err->msg);
    else
        rc = b->rank == 0 && rc == 0 ? ct_err_set(err, CT_EIO, "the allgather passed") : 0;
    leave(res, b->rank, rc, err->msg);
}

Test(boot_tcp, a_rank_dead_behind_its_answer)
{
    rank_fn fns[] = {dead_behind_its_answer};
    expect_each_ok(fns, 1, 4, 2 * SEC);
}

/* A rank leaving on a peer's failure learns the rank that failed first (ct_boot_first_failure;
 * ranks started by hand: rank 0 said "peer rank 1 exited" where rank 1 had left on rank 2's
 * death). Rank 2 dies; rank 1 found it gone, tells and leaves; rank 0, its data path blaming
 * rank 1, reads rank 1's word before its close (2), and passes it on (rank 3, later). */
static int first_after_death(const struct job *j, struct ct_boot *b, struct result *res,
                             struct ct_err *err)
{
    (void)j, (void)err;
    char msg[128];
    int w = -1;
    if (b->rank == 2) {
        usleep(200000);
        _exit(0);
    }
    usleep(b->rank == 1 ? 300000 : b->rank == 0 ? 400000 : 700000);
    w = ct_boot_first_failure(b, b->rank == 0 ? 1 : 2, SEC / 5);
    snprintf(msg, sizeof msg, "rank %d, not rank 2", w);
    leave(res, b->rank, w == 2 || (b->rank == 1 && w < 0) ? 0 : -1, msg);
}

/* Rank 0 dies: a rank whose data path blames another (a peer that left on it) reads rank 0's
 * close, with no word before it, as rank 0's failure (nobody else could say it). */
static int first_root_death(const struct job *j, struct ct_boot *b, struct result *res,
                            struct ct_err *err)
{
    (void)j, (void)err;
    if (b->rank == 0) {
        usleep(200000);
        _exit(0);
    }
    usleep(400000);
    int w = ct_boot_first_failure(b, b->rank % 3 + 1, SEC);
    char msg[64];
    snprintf(msg, sizeof msg, "rank %d, not rank 0", w);
    leave(res, b->rank, w == 0 ? 0 : -1, msg);
}

/* Rank 0 times out on rank 1, alive and silent (no word, no close within 0.3 s: it may time out
 * on another a moment later) and leaves: nobody is named, and no rank reads rank 0's close as
 * rank 0 failing first (rank 0 had passed its own peer on: rank 3 named rank 1, stalled rank 2
 * beside it, 1 run in 4). */
static int first_none_known(const struct job *j, struct ct_boot *b, struct result *res,
                            struct ct_err *err)
{
    (void)j, (void)err;
    int w;
    if (b->rank == 0) {
        w = ct_boot_first_failure(b, 1, SEC * 3 / 10);
        leave(res, 0, w < 0 ? 0 : -1, "rank 0 named a rank");
    }
    usleep(800000);
    w = ct_boot_first_failure(b, b->rank == 1 ? 2 : 0, SEC);
    char msg[64];
    snprintf(msg, sizeof msg, "rank %d named", w);
    leave(res, b->rank, w < 0 ? 0 : -1, msg);
}

/* Rank 0 in an exchange passes on at once the first STALL it hears (rank 1's: rank 2, which
 * had found rank 3 stalled): a rank that leaves on a failure does not take that raw word for
 * the rank that failed first (rank 4 named rank 2 so). */
static int first_not_raw(const struct job *j, struct ct_boot *b, struct result *res,
                         struct ct_err *err)
{
    (void)j;
    int x = b->rank, all[MAXR], w;
    if (b->rank == 0)
        leave(res, 0, ct_boot_allgather(b, &x, sizeof x, all, err) < 0 ? 0 : -1, "passed");
    if (b->rank == 1) {
        usleep(200000);
        ct_boot_first_failure(b, 2, 0);
    }
    if (b->rank != 4) {
        usleep(900000);
        leave(res, b->rank, 0, "");
    }
    usleep(500000);
    w = ct_boot_first_failure(b, 3, SEC / 5);
    char msg[64];
    snprintf(msg, sizeof msg, "rank %d: the raw word", w);
    leave(res, 4, w != 2 ? 0 : -1, msg);
}

/* Each word says only whom its sender found gone: rank 3 dies, rank 2 found it, rank 1 found
 * rank 2 gone (it left on rank 3's death); rank 0, its peer rank 1, follows the words to the
 * rank that said nothing: 3 (the first word to come, rank 1's, named 2). */
static int first_down_a_chain(const struct job *j, struct ct_boot *b, struct result *res,
                              struct ct_err *err)
{
    (void)j, (void)err;
    usleep(100000 * (unsigned)(4 - b->rank) + (b->rank == 0 ? 150000 : 0));
    if (b->rank == 3)
        _exit(0);
    int w = ct_boot_first_failure(b, b->rank + 1, SEC / 5);
    char msg[64];
    snprintf(msg, sizeof msg, "rank %d, not rank 3", w);
    leave(res, b->rank, b->rank && w < 0 ? 0 : w == 3 ? 0 : -1, msg);
}

/* Rank 0 gives up on a dead rank 1 in an exchange (its ABORT) and leaves: a rank still at work
 * does not read that close as rank 0 failing first. */
static int first_after_abort(const struct job *j, struct ct_boot *b, struct result *res,
                             struct ct_err *err)
{
    (void)j;
    int x = b->rank, all[MAXR], w = -1;
    if (b->rank == 1) {
        usleep(100000);
        _exit(0);
    }
    if (b->rank == 0)
        leave(res, 0, ct_boot_allgather(b, &x, sizeof x, all, err) < 0 ? 0 : -1, "passed");
    usleep(600000);
    w = ct_boot_first_failure(b, 1, SEC);
    char msg[64];
    snprintf(msg, sizeof msg, "rank %d: rank 0 read as failed first", w);
    leave(res, b->rank, w != 0 ? 0 : -1, msg);
}

Test(boot_tcp, a_leaving_rank_learns_who_failed_first)
{
    rank_fn fns[] = {first_after_death, first_root_death, first_none_known, first_down_a_chain,
                     first_after_abort};
    expect_each_ok(fns, 5, 4, 2 * SEC);
    rank_fn five[] = {first_not_raw};
    expect_each_ok(five, 1, 5, 2 * SEC);
}

Test(boot_tcp, a_late_rank_reads_the_roots_abort)
{
    rank_fn fns[] = {late_after_abort};
    expect_each_ok(fns, 1, 3, 2 * SEC);
}

/* ---------------------------------------------------------------- published address */

Test(boot_addr, local_addr_choices)
{
    char hosts[2][CT_BOOT_HOST_BYTES] = {"a", "b"};
    char addrs[2][CT_BOOT_ADDR_BYTES] = {"127.0.0.1", "127.0.0.1"};
    struct ct_boot b;
    memset(&b, 0, sizeof b);
    b.size = 2;
    b.rank = 1;
    b.hosts = hosts;
    b.addrs = addrs;
    snprintf(b.host, sizeof b.host, "b");
    char out[64];
    struct ct_err err = {0};
    /* one host: loopback */
    b.nnodes = 1;
    cr_assert_eq(ct_boot_local_addr(&b, NULL, out, sizeof out, &err), 0, "%s", err.msg);
    cr_assert_str_eq(out, "127.0.0.1");
    /* forced interface, loopback included */
    b.nnodes = 2;
    cr_assert_eq(ct_boot_local_addr(&b, "lo", out, sizeof out, &err), 0, "%s", err.msg);
    cr_assert_str_eq(out, "127.0.0.1");
    cr_assert_eq(ct_boot_local_addr(&b, "ct-none0", out, sizeof out, &err), CT_EINVAL);
    /* two hosts: never loopback, even when the bootstrap ran over it */
    char first[64];
    if (ct_sock_first_addr(first, sizeof first, NULL) < 0) {
        cr_expect_eq(ct_boot_local_addr(&b, NULL, out, sizeof out, &err), CT_EINVAL);
        cr_expect(strstr(err.msg, "--ifname"), "%s", err.msg);
        return;
    }
    cr_assert_eq(ct_boot_local_addr(&b, NULL, out, sizeof out, &err), 0, "%s", err.msg);
    cr_assert_not(ct_sock_is_loopback(out), "%s", out);
    /* the route to the root's address: towards our own non-loopback address, that one */
    snprintf(addrs[0], sizeof addrs[0], "%.47s", first);
    cr_assert_eq(ct_boot_local_addr(&b, NULL, out, sizeof out, &err), 0, "%s", err.msg);
    cr_assert_str_eq(out, first);
}

/* ---------------------------------------------------------------- tcp transport handshake */

struct stray_arg {
    int lo, hi, hit;
};

/* Connect to the first listening port of the range and send a handshake of another job. */
static void *stray_thread(void *p)
{
    struct stray_arg *a = p;
    int64_t end = ct_now_ns() + 5 * SEC;
    while (!a->hit && ct_now_ns() < end) {
        for (int port = a->lo; port <= a->hi && !a->hit; port++) {
            int fd = ct_sock_connect("127.0.0.1", port, ct_now_ns(), NULL);
            if (fd < 0)
                continue;
            unsigned char junk[64];
            memset(junk, 0x5a, sizeof junk);
            if (write(fd, junk, sizeof junk) == (ssize_t)sizeof junk)
                a->hit = port;
            usleep(200000);
            close(fd);
        }
        usleep(5000);
    }
    return NULL;
}

/* Rank 1 lets a stray reach rank 0's tcp listener before it opens its own connections:
 * rank 0 rejects it and reports it through the bootstrap's notice hook. */
static int open_tcp(const struct job *j, struct ct_boot *b, struct result *res,
                    struct ct_err *err)
{
    const struct ct_tp_ops *ops = ct_tp_find("tcp");
    struct ct_tp_cfg cfg = {.streams = 1};
    struct ct_tp *tp;
    if (b->rank == 1) {
        struct stray_arg a = {0, 0, 0};
        ct_sock_parse_range(getenv("COLLTUNE_PORT_RANGE"), &a.lo, &a.hi, NULL);
        pthread_t th;
        pthread_create(&th, NULL, stray_thread, &a);
        pthread_join(th, NULL);
        if (!a.hit)
            return ct_err_set(err, CT_EIO, "no listener found in %d-%d", a.lo, a.hi);
    }
    CT_TRY(ops->open(&tp, &cfg, b, err));
    int rc = ct_tp_barrier(tp, 5 * SEC, err);
    ops->close(tp);
    return rc;
}

Test(boot_tcp, transport_reports_strays)
{
    char range[32];
    int lo = 21000 + (int)(getpid() % 1000) * 8;
    snprintf(range, sizeof range, "%d-%d", lo, lo + 7);
    setenv("COLLTUNE_PORT_RANGE", range, 1);
    struct job j = {.n = 2, .timeout_ns = 10 * SEC, .fn = open_tcp};
    struct result *res = run(&j, 0);
    expect_ok(res, j.n);
    cr_expect(strstr(res->notice, "tcp: rejected a connection from 127.0.0.1:"), "notices: %s",
              res->notice);
    cr_expect(strstr(res->notice, "bad handshake: magic 0x5a5a5a5a"), "notices: %s", res->notice);
    munmap(res, sizeof *res);
}
