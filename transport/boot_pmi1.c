/* SPDX-License-Identifier: MIT */
/*
 * PMI-1 wire protocol client on the inherited PMI_FD (MPICH hydra's mpiexec): text lines
 * "cmd=<name> key=value ..." in both directions. Used to publish rank 0's address and the
 * job token; the tcp star does the rest.
 */
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../lib/clock.h"
#include "boot_int.h"

#define LINE_MAX_BYTES 2048
#define FINALIZE_NS (5 * 1000000000LL)

struct pmi1 {
    int fd;
    int64_t timeout_ns;
    int vallen_max;
    char kvs[260];
    char buf[LINE_MAX_BYTES];
    size_t have; /* bytes in buf not yet returned as a line */
};

int ct_pmi1_field(const char *line, const char *key, char *out, size_t len)
{
    size_t kl = strlen(key);
    const char *p = line;
    while (*p) {
        while (*p == ' ')
            p++;
        const char *tok = p;
        while (*p && *p != ' ')
            p++;
        size_t tl = (size_t)(p - tok);
        if (tl > kl && !strncmp(tok, key, kl) && tok[kl] == '=') {
            size_t vl = tl - kl - 1;
            if (vl >= len)
                return CT_EPEER;
            memcpy(out, tok + kl + 1, vl);
            out[vl] = 0;
            return 0;
        }
    }
    return -1;
}

int ct_pmi1_check(const char *line, const char *want_cmd, struct ct_err *err)
{
    char cmd[64], rc[16], msg[128];
    if (ct_pmi1_field(line, "cmd", cmd, sizeof cmd) != 0)
        return ct_err_set(err, CT_EPEER, "PMI-1: bad response '%.80s'", line);
    if (strcmp(cmd, want_cmd))
        return ct_err_set(err, CT_EPEER, "PMI-1: expected cmd=%s, got cmd=%s", want_cmd, cmd);
    if (ct_pmi1_field(line, "rc", rc, sizeof rc) == 0 && strcmp(rc, "0")) {
        if (ct_pmi1_field(line, "msg", msg, sizeof msg) != 0)
            snprintf(msg, sizeof msg, "no message");
        return ct_err_set(err, CT_EIO, "PMI-1: %s failed: rc=%s (%s)", want_cmd, rc, msg);
    }
    return 0;
}

static int pmi_write(struct pmi1 *p, const char *line, struct ct_err *err)
{
    size_t len = strlen(line), off = 0;
    int64_t dl = ct_now_ns() + p->timeout_ns;
    while (off < len) {
        ssize_t n = write(p->fd, line + off, len - off);
        if (n > 0) {
            off += (size_t)n;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno == EAGAIN && ct_now_ns() < dl) {
            struct pollfd pf = {p->fd, POLLOUT, 0};
            poll(&pf, 1, 100);
            continue;
        }
        return ct_err_sys(err, CT_EIO, "PMI-1: writing to PMI_FD %d", p->fd);
    }
    return 0;
}

/* One response line (without the newline) into line, within deadline. */
static int pmi_read(struct pmi1 *p, char *line, size_t len, int64_t dl, struct ct_err *err)
{
    for (;;) {
        char *nl = memchr(p->buf, '\n', p->have);
        if (nl) {
            size_t l = (size_t)(nl - p->buf);
            if (l >= len)
                return ct_err_set(err, CT_EPEER, "PMI-1: response line of %zu bytes", l);
            memcpy(line, p->buf, l);
            line[l] = 0;
            if (memchr(line, 0, l))
                return ct_err_set(err, CT_EPEER, "PMI-1: NUL byte in a response");
            memmove(p->buf, nl + 1, p->have - l - 1);
            p->have -= l + 1;
            return 0;
        }
        if (p->have == sizeof p->buf)
            return ct_err_set(err, CT_EPEER, "PMI-1: response longer than %zu bytes",
                              sizeof p->buf);
        int64_t left = dl - ct_now_ns();
        if (left <= 0)
            return ct_err_set(err, CT_ETIMEDOUT, "PMI-1: no answer from the launcher within %.1f s",
                              (double)p->timeout_ns / 1e9);
        struct pollfd pf = {p->fd, POLLIN, 0};
        int ms = (int)(left / 1000000) + 1;
        int rc = poll(&pf, 1, ms > 200 ? 200 : ms);
        if (rc < 0 && errno != EINTR)
            return ct_err_sys(err, CT_EIO, "PMI-1: poll");
        if (rc <= 0)
            continue;
        ssize_t n = read(p->fd, p->buf + p->have, sizeof p->buf - p->have);
        if (n == 0)
            return ct_err_set(err, CT_EPEER, "PMI-1: the launcher closed PMI_FD");
        if (n < 0 && errno != EINTR && errno != EAGAIN)
            return ct_err_sys(err, CT_EIO, "PMI-1: reading PMI_FD");
        if (n > 0)
            p->have += (size_t)n;
    }
}

/* Send a request line, read the answer, check its cmd and rc. */
static int pmi_cmd(struct pmi1 *p, const char *req, const char *want, char *resp, size_t len,
                   int64_t timeout_ns, struct ct_err *err)
{
    char line[LINE_MAX_BYTES];
    CT_TRY(pmi_write(p, req, err));
    CT_TRY(pmi_read(p, line, sizeof line, ct_now_ns() + timeout_ns, err));
    CT_TRY(ct_pmi1_check(line, want, err));
    if (resp)
        snprintf(resp, len, "%s", line);
    return 0;
}

static int pmi_put(void *ctx, const char *key, const char *value, struct ct_err *err)
{
    struct pmi1 *p = ctx;
    char req[LINE_MAX_BYTES];
    if (strlen(value) >= (size_t)p->vallen_max)
        return ct_err_set(err, CT_EINVAL, "PMI-1: value of %zu bytes exceeds vallen_max %d",
                          strlen(value), p->vallen_max);
    snprintf(req, sizeof req, "cmd=put kvsname=%s key=%s value=%s\n", p->kvs, key, value);
    return pmi_cmd(p, req, "put_result", NULL, 0, p->timeout_ns, err);
}

static int pmi_fence(void *ctx, struct ct_err *err)
{
    struct pmi1 *p = ctx;
    return pmi_cmd(p, "cmd=barrier_in\n", "barrier_out", NULL, 0, p->timeout_ns, err);
}

static int pmi_get(void *ctx, int rank, const char *key, char *value, size_t len,
                   struct ct_err *err)
{
    struct pmi1 *p = ctx;
    char req[512], resp[LINE_MAX_BYTES];
    snprintf(req, sizeof req, "cmd=get kvsname=%s key=%s\n", p->kvs, key);
    CT_TRY(pmi_cmd(p, req, "get_result", resp, sizeof resp, p->timeout_ns, err));
    int rc = ct_pmi1_field(resp, "value", value, len);
    if (rc != 0)
        return ct_err_set(err, CT_EPEER, "PMI-1: get '%s': %s", key,
                          rc < -1 ? "value too long" : "no value in the answer");
    return 0;
}

static void pmi_finalize(void *ctx)
{
    struct pmi1 *p = ctx;
    if (!p)
        return;
    pmi_cmd(p, "cmd=finalize\n", "finalize_ack", NULL, 0, FINALIZE_NS, NULL);
    close(p->fd);
    free(p);
}

/* init, get_maxes, get_appnum, get_my_kvsname */
static int pmi_init(struct pmi1 *p, struct ct_err *err)
{
    char resp[LINE_MAX_BYTES], v[300];
    CT_TRY(pmi_cmd(p, "cmd=init pmi_version=1 pmi_subversion=1\n", "response_to_init", resp,
                   sizeof resp, p->timeout_ns, err));
    if (ct_pmi1_field(resp, "pmi_version", v, sizeof v) != 0 || strcmp(v, "1"))
        return ct_err_set(err, CT_EUNSUPP, "PMI-1: the launcher speaks PMI version %s",
                          ct_pmi1_field(resp, "pmi_version", v, sizeof v) ? "?" : v);
    CT_TRY(pmi_cmd(p, "cmd=get_maxes\n", "maxes", resp, sizeof resp, p->timeout_ns, err));
    long vmax = 0;
    if (ct_pmi1_field(resp, "vallen_max", v, sizeof v) == 0)
        vmax = strtol(v, NULL, 10);
    p->vallen_max = vmax > 0 && vmax < LINE_MAX_BYTES - 300 ? (int)vmax : 256;
    CT_TRY(pmi_cmd(p, "cmd=get_appnum\n", "appnum", NULL, 0, p->timeout_ns, err));
    CT_TRY(pmi_cmd(p, "cmd=get_my_kvsname\n", "my_kvsname", resp, sizeof resp, p->timeout_ns, err));
    if (ct_pmi1_field(resp, "kvsname", p->kvs, sizeof p->kvs) != 0 || !p->kvs[0])
        return ct_err_set(err, CT_EPEER, "PMI-1: no kvsname in '%.80s'", resp);
    return 0;
}

static int env_int(const char *name, long lo, long hi, long *out, struct ct_err *err)
{
    const char *v = getenv(name);
    char *end;
    if (!v || !*v)
        return ct_err_set(err, CT_EINVAL, "PMI-1: %s is not set", name);
    long x = strtol(v, &end, 10);
    if (*end || x < lo || x > hi)
        return ct_err_set(err, CT_EINVAL, "PMI-1: %s='%s' is not valid", name, v);
    *out = x;
    return 0;
}

int ct_boot_pmi1_open(struct ct_boot **out, const struct ct_boot_cfg *cfg, struct ct_err *err)
{
    long fd, rank, size;
    CT_TRY(env_int("PMI_FD", 0, 1 << 20, &fd, err));
    CT_TRY(env_int("PMI_SIZE", 1, CT_BOOT_MAX_RANKS, &size, err));
    CT_TRY(env_int("PMI_RANK", 0, size - 1, &rank, err));
    struct pmi1 *p = ct_xcalloc(1, sizeof *p);
    p->fd = (int)fd;
    p->timeout_ns = cfg->timeout_ns > 0 ? cfg->timeout_ns : 60 * 1000000000LL;
    int rc = pmi_init(p, err);
    if (rc < 0) {
        if (err) {
            char why[sizeof err->msg];
            snprintf(why, sizeof why, "%s", err->msg);
            ct_err_set(err, err->code,
                       "bootstrap (pmi1): %.300s (srun --mpi=pmi2 speaks PMI-2, which colltune "
                       "does not: use srun --mpi=pmix, or COLLTUNE_ROOT with "
                       "COLLTUNE_BOOTSTRAP=env)",
                       why);
        }
        close(p->fd);
        free(p);
        return rc;
    }
    struct ct_boot_cfg c = *cfg;
    c.rank = (int)rank;
    c.size = (int)size;
    struct ct_boot_kvs kv = {"pmi1", p, pmi_put, pmi_fence, pmi_get};
    rc = ct_boot_kvs_start(out, &c, &kv, err);
    if (rc < 0) {
        pmi_finalize(p);
        return rc;
    }
    (*out)->on_close = pmi_finalize;
    (*out)->on_close_ctx = p;
    return 0;
}
