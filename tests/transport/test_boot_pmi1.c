/* SPDX-License-Identifier: MIT */
/* The PMI-1 bootstrap against a PMI-1 server in the test (the wire protocol MPICH's hydra
 * speaks on PMI_FD): a job forms and gathers, finalize is sent; a server that answers
 * garbage, too long a line or nothing makes the rank fail with the reason. */
#include <criterion/criterion.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/clock.h"
#include "transport/boot.h"
#include "transport/boot_int.h"

#define SEC 1000000000LL
#define MAXR 6

enum mode { NORMAL, GARBAGE, SILENT, LONG_LINE, GET_FAILS };

struct srv {
    int n, fd[MAXR];
    char buf[MAXR][4096];
    size_t have[MAXR];
    char keys[8][64], vals[8][1024];
    int nkv, barrier, finalized, puts;
    enum mode mode;
};

static void say(int fd, const char *line)
{
    size_t len = strlen(line);
    cr_assert_eq(write(fd, line, len), (ssize_t)len);
}

static void serve_line(struct srv *s, int r, const char *line)
{
    char cmd[64], key[64], val[1024];
    cr_assert_eq(ct_pmi1_field(line, "cmd", cmd, sizeof cmd), 0, "no cmd in '%s'", line);
    int fd = s->fd[r];
    if (!strcmp(cmd, "init")) {
        if (s->mode == GARBAGE) {
            say(fd, "hello there\n");
        } else if (s->mode == LONG_LINE) {
            static char big[5000];
            memset(big, 'x', sizeof big - 1);
            say(fd, big);
        } else if (s->mode != SILENT) {
            say(fd, "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0\n");
        }
    } else if (!strcmp(cmd, "get_maxes")) {
        say(fd, "cmd=maxes kvsname_max=256 keylen_max=64 vallen_max=1024\n");
    } else if (!strcmp(cmd, "get_appnum")) {
        say(fd, "cmd=appnum appnum=0\n");
    } else if (!strcmp(cmd, "get_my_kvsname")) {
        say(fd, "cmd=my_kvsname kvsname=kvs_4711_0\n");
    } else if (!strcmp(cmd, "put")) {
        cr_assert_eq(ct_pmi1_field(line, "kvsname", val, sizeof val), 0);
        cr_assert_str_eq(val, "kvs_4711_0");
        cr_assert_eq(ct_pmi1_field(line, "key", key, sizeof key), 0);
        cr_assert_eq(ct_pmi1_field(line, "value", val, sizeof val), 0);
        cr_assert_lt(s->nkv, 8);
        snprintf(s->keys[s->nkv], sizeof s->keys[0], "%s", key);
        snprintf(s->vals[s->nkv++], sizeof s->vals[0], "%s", val);
        s->puts++;
        say(fd, "cmd=put_result rc=0 msg=success\n");
    } else if (!strcmp(cmd, "barrier_in")) {
        if (++s->barrier == s->n) {
            for (int q = 0; q < s->n; q++)
                say(s->fd[q], "cmd=barrier_out\n");
            s->barrier = 0;
        }
    } else if (!strcmp(cmd, "get")) {
        cr_assert_eq(ct_pmi1_field(line, "key", key, sizeof key), 0);
        char out[1200];
        snprintf(out, sizeof out, "cmd=get_result rc=-1 msg=key_%s_not_found value=unknown\n", key);
        for (int i = 0; s->mode != GET_FAILS && i < s->nkv; i++)
            if (!strcmp(s->keys[i], key))
                snprintf(out, sizeof out, "cmd=get_result rc=0 msg=success value=%s\n", s->vals[i]);
        say(fd, out);
    } else if (!strcmp(cmd, "finalize")) {
        s->finalized++;
        say(fd, "cmd=finalize_ack\n");
    } else {
        cr_assert_fail("unexpected PMI-1 command '%s'", line);
    }
}

struct outcome {
    int codes[MAXR];
    char err[MAXR][512];
};

static int rank_main(int r, int n, int fd, int *pfd, int64_t timeout_ns)
{
    char v[16];
    snprintf(v, sizeof v, "%d", fd);
    setenv("PMI_FD", v, 1);
    snprintf(v, sizeof v, "%d", r);
    setenv("PMI_RANK", v, 1);
    snprintf(v, sizeof v, "%d", n);
    setenv("PMI_SIZE", v, 1);
    struct ct_boot_cfg c;
    ct_boot_cfg_init(&c);
    c.timeout_ns = timeout_ns;
    struct ct_boot *b;
    struct ct_err err = {0};
    int rc = ct_boot_pmi1_open(&b, &c, &err);
    if (rc == 0) {
        int all[MAXR], me = r * 10;
        rc = ct_boot_allgather(b, &me, sizeof me, all, &err);
        for (int q = 0; rc == 0 && q < n; q++)
            if (all[q] != q * 10)
                rc = ct_err_set(&err, CT_EINVAL, "wrong value from %d", q);
        if (rc == 0 && (strcmp(b->method, "pmi1") || b->rank != r || b->size != n ||
                        ct_boot_token_is_zero(b->token)))
            rc = ct_err_set(&err, CT_EINVAL, "method %s rank %d size %d", b->method, b->rank,
                            b->size);
        ct_boot_close(b);
    }
    if (write(pfd[1], err.msg, sizeof err.msg) < 0)
        return 3;
    return rc < 0 ? 1 : 0;
}

/* Run n ranks against the server in this process. */
static struct srv *job(int n, enum mode mode, int64_t timeout_ns, struct outcome *o)
{
    struct srv *s = calloc(1, sizeof *s);
    s->n = n;
    s->mode = mode;
    pid_t pids[MAXR];
    int pipes[MAXR][2];
    fflush(NULL);
    for (int r = 0; r < n; r++) {
        int sp[2];
        cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp), 0);
        cr_assert_eq(pipe(pipes[r]), 0);
        pids[r] = fork();
        cr_assert_geq(pids[r], 0);
        if (pids[r] == 0) {
            close(sp[0]);
            int fd = dup(sp[1]); /* without CLOEXEC, as a launcher hands it over */
            _exit(rank_main(r, n, fd, pipes[r], timeout_ns));
        }
        close(sp[1]);
        close(pipes[r][1]);
        s->fd[r] = sp[0];
    }
    int left = n;
    int64_t end = ct_now_ns() + 2 * timeout_ns + 5 * SEC;
    int done[MAXR] = {0};
    while (left > 0 && ct_now_ns() < end) {
        struct pollfd pf[MAXR];
        for (int r = 0; r < n; r++)
            pf[r] = (struct pollfd){s->fd[r], POLLIN, 0};
        if (poll(pf, (nfds_t)n, 20) > 0)
            for (int r = 0; r < n; r++) {
                if (!(pf[r].revents & POLLIN))
                    continue;
                ssize_t got =
                    read(s->fd[r], s->buf[r] + s->have[r], sizeof s->buf[r] - 1 - s->have[r]);
                if (got <= 0)
                    continue;
                s->have[r] += (size_t)got;
                char *nl;
                while ((nl = memchr(s->buf[r], '\n', s->have[r]))) {
                    *nl = 0;
                    serve_line(s, r, s->buf[r]);
                    size_t used = (size_t)(nl - s->buf[r]) + 1;
                    memmove(s->buf[r], nl + 1, s->have[r] - used);
                    s->have[r] -= used;
                }
            }
        for (int r = 0; r < n; r++) {
            int st;
            if (!done[r] && waitpid(pids[r], &st, WNOHANG) == pids[r]) {
                done[r] = 1;
                left--;
                o->codes[r] = WIFEXITED(st) ? WEXITSTATUS(st) : 100;
                if (read(pipes[r][0], o->err[r], sizeof o->err[r]) < 0)
                    o->err[r][0] = 0;
            }
        }
    }
    for (int r = 0; r < n; r++) {
        if (!done[r]) {
            kill(pids[r], SIGKILL);
            waitpid(pids[r], NULL, 0);
            o->codes[r] = 101;
        }
        close(s->fd[r]);
        close(pipes[r][0]);
    }
    return s;
}

Test(boot_pmi1, job_forms)
{
    struct outcome o = {0};
    struct srv *s = job(4, NORMAL, 10 * SEC, &o);
    for (int r = 0; r < 4; r++)
        cr_expect_eq(o.codes[r], 0, "rank %d: %s", r, o.err[r]);
    cr_expect_eq(s->puts, 1, "only rank 0 publishes");
    cr_expect_str_eq(s->keys[0], "colltune-root");
    cr_expect_eq(strlen(s->vals[0]) > 34 && s->vals[0][32] == ';', 1, "%s", s->vals[0]);
    cr_expect(strstr(s->vals[0], "127.0.0.1:"), "%s", s->vals[0]);
    cr_expect_eq(s->finalized, 4);
    free(s);
}

Test(boot_pmi1, single_rank)
{
    struct outcome o = {0};
    struct srv *s = job(1, NORMAL, 10 * SEC, &o);
    cr_expect_eq(o.codes[0], 0, "%s", o.err[0]);
    cr_expect_eq(s->finalized, 1);
    free(s);
}

Test(boot_pmi1, garbage_answer)
{
    struct outcome o = {0};
    free(job(2, GARBAGE, 2 * SEC, &o));
    for (int r = 0; r < 2; r++) {
        cr_expect_eq(o.codes[r], 1);
        cr_expect(strstr(o.err[r], "bootstrap (pmi1): PMI-1: bad response 'hello there'"), "%s",
                  o.err[r]);
    }
}

Test(boot_pmi1, overlong_answer)
{
    struct outcome o = {0};
    free(job(1, LONG_LINE, 2 * SEC, &o));
    cr_expect_eq(o.codes[0], 1);
    cr_expect(strstr(o.err[0], "longer than 2048 bytes"), "%s", o.err[0]);
}

Test(boot_pmi1, silent_launcher_times_out)
{
    struct outcome o = {0};
    int64_t t0 = ct_now_ns();
    free(job(1, SILENT, SEC, &o));
    cr_expect_eq(o.codes[0], 1);
    cr_expect(strstr(o.err[0], "no answer from the launcher within 1.0 s"), "%s", o.err[0]);
    cr_expect_lt(ct_now_ns() - t0, 4 * SEC);
}

Test(boot_pmi1, get_fails)
{
    struct outcome o = {0};
    free(job(2, GET_FAILS, 2 * SEC, &o));
    cr_expect_eq(o.codes[1], 1);
    cr_expect(strstr(o.err[1], "PMI-1: get_result failed: rc=-1 (key_colltune-root_not_found)"),
              "%s", o.err[1]);
}

Test(boot_pmi1, line_fields)
{
    char v[16];
    cr_assert_eq(ct_pmi1_field("cmd=get_result rc=0 msg=success value=a;b:1", "value", v, 16), 0);
    cr_assert_str_eq(v, "a;b:1");
    cr_assert_eq(ct_pmi1_field("cmd=x  rc=0", "rc", v, sizeof v), 0);
    cr_assert_str_eq(v, "0");
    cr_assert_eq(ct_pmi1_field("cmd=x rcx=1", "rc", v, sizeof v), -1);
    cr_assert_eq(ct_pmi1_field("cmd=x value=0123456789abcdef", "value", v, sizeof v), CT_EPEER);
    cr_assert_eq(ct_pmi1_field("", "cmd", v, sizeof v), -1);
    cr_assert_eq(ct_pmi1_field("cmd=", "cmd", v, sizeof v), 0);
    cr_assert_str_eq(v, "");
    struct ct_err err = {0};
    cr_assert_eq(ct_pmi1_check("cmd=put_result rc=0", "put_result", &err), 0);
    cr_assert_eq(ct_pmi1_check("cmd=barrier_out", "put_result", &err), CT_EPEER);
    cr_assert(strstr(err.msg, "expected cmd=put_result, got cmd=barrier_out"), "%s", err.msg);
    cr_assert_eq(ct_pmi1_check("cmd=put_result rc=3 msg=full", "put_result", &err), CT_EIO);
    cr_assert(strstr(err.msg, "rc=3 (full)"), "%s", err.msg);
}
