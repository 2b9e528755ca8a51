/* SPDX-License-Identifier: MIT */
/* Error values, messages, fatal hook and never-failing bookkeeping allocators. */
#include "err.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void (*fatal_hook)(void);

void ct_set_fatal_hook(void (*hook)(void))
{
    fatal_hook = hook;
}

/* src into dst (len bytes), its middle cut ("...") where it is longer: a path of thousands
 * of bytes keeps its start and the end of the line, the reason said after it. */
static void fit(char *dst, size_t len, const char *src)
{
    size_t n = strlen(src), head = len / 3;
    if (n < len) {
        memcpy(dst, src, n + 1);
        return;
    }
    memcpy(dst, src, head);
    memcpy(dst + head, "...", 3);
    memcpy(dst + head + 3, src + n - (len - 1 - head - 3), len - head - 3); /* with its NUL */
}

static int set_va(struct ct_err *err, enum ct_status code, int sys, const char *fmt, va_list ap)
{
    if (!err)
        return code;
    char line[4608]; /* a path as long as PATH_MAX, and the words around it */
    err->code = code;
    err->sys_errno = sys;
    vsnprintf(line, sizeof line, fmt, ap);
    if (sys) {
        size_t n = strlen(line);
        snprintf(line + n, sizeof line - n, ": %s", strerror(sys));
    }
    fit(err->msg, sizeof err->msg, line);
    return code;
}

int ct_err_set(struct ct_err *err, enum ct_status code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    set_va(err, code, 0, fmt, ap);
    va_end(ap);
    return code;
}

int ct_err_sys(struct ct_err *err, enum ct_status code, const char *fmt, ...)
{
    int e = errno;
    va_list ap;
    va_start(ap, fmt);
    set_va(err, code, e, fmt, ap);
    va_end(ap);
    return code;
}

int ct_err_wrap(struct ct_err *err, const char *fmt, ...)
{
    if (!err)
        return CT_EIO;
    char line[4608 + sizeof err->msg];
    va_list ap;
    va_start(ap, fmt);
    int pl = vsnprintf(line, 4608, fmt, ap);
    va_end(ap);
    pl = pl < 0 ? 0 : pl < 4608 ? pl : 4607;
    snprintf(line + pl, sizeof line - (size_t)pl, "%.*s", (int)sizeof err->msg - 1, err->msg);
    fit(err->msg, sizeof err->msg, line);
    return err->code ? err->code : CT_EIO;
}

void ct_err_clear(struct ct_err *err)
{
    if (err) {
        err->code = CT_OK;
        err->sys_errno = 0;
        err->msg[0] = 0;
    }
}

const char *ct_status_str(int code)
{
    switch (code) {
    case CT_OK: return "ok";
    case CT_EINVAL: return "invalid argument";
    case CT_ENOMEM: return "out of memory";
    case CT_EIO: return "i/o error";
    case CT_ETIMEDOUT: return "timed out";
    case CT_EUNSUPP: return "unsupported";
    case CT_EPEER: return "peer failure";
    case CT_EVERIFY: return "verification failed";
    }
    return "unknown error";
}

_Noreturn void ct_bug(const char *file, int line, const char *fmt, ...)
{
    if (fatal_hook)
        fatal_hook();
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "colltune: BUG at %s:%d: ", file, line);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    abort();
}

static void *oom(size_t n)
{
    ct_bug(__FILE__, __LINE__, "out of memory allocating %zu bytes", n);
}

void *ct_xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    return p ? p : oom(n);
}

void *ct_xcalloc(size_t n, size_t sz)
{
    void *p = calloc(n ? n : 1, sz ? sz : 1);
    return p ? p : oom(n * sz);
}

void *ct_xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    return q ? q : oom(n);
}

char *ct_xstrdup(const char *s)
{
    char *p = strdup(s);
    return p ? p : oom(strlen(s));
}

/* Milliseconds left of timeout_s seconds from t0 (CLOCK_MONOTONIC); <= 0: none. */
static long ms_left(const struct timespec *t0, int timeout_s)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return timeout_s * 1000L -
           ((t.tv_sec - t0->tv_sec) * 1000L + (t.tv_nsec - t0->tv_nsec) / 1000000L);
}

/*
 * Fork; the child runs body(arg, wfd) and _exits with its result. Here what it writes to wfd
 * is read until it closes it (or, unless drain, until len bytes came), keeping the first len
 * bytes in buf; then it is reaped (*status). Whatever is left of timeout_s seconds then, it
 * is killed and *timed_out set. Returns the bytes kept, or a negative status when the child
 * could not be started.
 */
static ssize_t child_collect(const char *what, int (*body)(void *arg, int wfd), void *arg,
                             int timeout_s, void *buf, size_t len, bool drain, int *status,
                             bool *timed_out, struct ct_err *err)
{
    int fd[2];
    if (pipe(fd) < 0)
        return ct_err_sys(err, CT_EIO, "%s: pipe", what);
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        close(fd[0]);
        close(fd[1]);
        return ct_err_sys(err, CT_EIO, "%s: fork", what);
    }
    if (pid == 0) {
        close(fd[0]);
        _exit(body(arg, fd[1]));
    }
    close(fd[1]);
    size_t kept = 0;
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    *timed_out = false;
    for (;;) {
        long left = ms_left(&t0, timeout_s);
        struct pollfd p = {fd[0], POLLIN, 0};
        int ready = left > 0 ? poll(&p, 1, (int)left) : 0;
        if (ready < 0 && errno == EINTR)
            continue;
        if (ready <= 0) {
            *timed_out = ready == 0;
            break;
        }
        char sink[512];
        char *to = kept < len ? (char *)buf + kept : sink;
        ssize_t got = read(fd[0], to, kept < len ? len - kept : sizeof sink);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            break;
        if (kept < len && (kept += (size_t)got) == len && !drain)
            break;
    }
    close(fd[0]);
    /* it may keep running after its last write: waited for until the same deadline */
    *status = 0;
    pid_t done;
    while (!*timed_out && (done = waitpid(pid, status, WNOHANG)) <= 0) {
        struct timespec nap = {0, 5000000};
        if (done < 0 && errno != EINTR)
            return (ssize_t)kept;
        *timed_out = ms_left(&t0, timeout_s) <= 0;
        if (!*timed_out)
            nanosleep(&nap, NULL);
    }
    if (*timed_out) {
        kill(pid, SIGKILL);
        while (waitpid(pid, status, 0) < 0 && errno == EINTR)
            ;
    }
    return (ssize_t)kept;
}

struct in_child {
    int (*fn)(void *arg, struct ct_err *err);
    void *arg;
};

static int err_body(void *arg, int wfd)
{
    struct in_child *c = arg;
    struct ct_err e = {0};
    int rc = c->fn(c->arg, &e);
    e.code = rc < 0 ? (e.code ? e.code : (enum ct_status)rc) : CT_OK;
    ssize_t w = write(wfd, &e, sizeof e);
    return w == (ssize_t)sizeof e ? 0 : 1;
}

int ct_err_in_child(const char *what, int (*fn)(void *arg, struct ct_err *err), void *arg,
                    int timeout_s, struct ct_err *err)
{
    struct in_child c = {fn, arg};
    struct ct_err e = {0};
    int status;
    bool timed_out;
    ssize_t got =
        child_collect(what, err_body, &c, timeout_s, &e, sizeof e, false, &status, &timed_out, err);
    if (got < 0)
        return (int)got;
    if (timed_out && got != (ssize_t)sizeof e) /* an answer given before it wedged stands */
        return ct_err_set(err, CT_ETIMEDOUT,
                          "%s: the check did not finish within %d s (a wedged driver?)", what,
                          timeout_s);
    if (got != (ssize_t)sizeof e)
        return ct_err_set(err, CT_EIO, "%s: the checking process died (status %d)", what, status);
    if (e.code == CT_OK)
        return 0;
    e.msg[sizeof e.msg - 1] = 0;
    return ct_err_set(err, e.code, "%s", e.msg);
}

struct output_child {
    int (*fn)(void *arg);
    void *arg;
};

static int output_body(void *arg, int wfd)
{
    struct output_child *c = arg;
    int null = open("/dev/null", O_RDONLY);
    if (null < 0 || dup2(null, 0) < 0 || dup2(wfd, 1) < 0 || dup2(wfd, 2) < 0)
        return 127;
    close(null);
    close(wfd);
    int rc = c->fn(c->arg);
    fflush(NULL);
    return rc;
}

int ct_err_child_output(const char *what, int (*fn)(void *arg), void *arg, int timeout_s, char *out,
                        size_t len, int *status, struct ct_err *err)
{
    struct output_child c = {fn, arg};
    bool timed_out;
    ssize_t got = child_collect(what, output_body, &c, timeout_s, out, len ? len - 1 : 0, true,
                                status, &timed_out, err);
    if (got < 0)
        return (int)got;
    if (len)
        out[got] = 0;
    if (timed_out)
        return ct_err_set(err, CT_ETIMEDOUT, "%s: did not end within %d s", what, timeout_s);
    return 0;
}
