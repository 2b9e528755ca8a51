/* SPDX-License-Identifier: MIT */
/* Error values, messages, fatal hook and never-failing bookkeeping allocators. */
#include "err.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

static void (*fatal_hook)(void);

void ct_set_fatal_hook(void (*hook)(void))
{
    fatal_hook = hook;
}

static int set_va(struct ct_err *err, enum ct_status code, int sys, const char *fmt, va_list ap)
{
    if (!err)
        return code;
    err->code = code;
    err->sys_errno = sys;
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    if (sys) {
        size_t n = strlen(err->msg);
        snprintf(err->msg + n, sizeof err->msg - n, ": %s", strerror(sys));
    }
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
    char pre[256], old[sizeof err->msg];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(pre, sizeof pre, fmt, ap);
    va_end(ap);
    memcpy(old, err->msg, sizeof old);
    size_t pl = strlen(pre);
    if (pl >= sizeof err->msg)
        pl = sizeof err->msg - 1;
    memcpy(err->msg, pre, pl);
    size_t ol = strnlen(old, sizeof old - 1);
    if (ol > sizeof err->msg - 1 - pl)
        ol = sizeof err->msg - 1 - pl;
    memcpy(err->msg + pl, old, ol);
    err->msg[pl + ol] = 0;
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

int ct_err_in_child(const char *what, int (*fn)(void *arg, struct ct_err *err), void *arg,
                    int timeout_s, struct ct_err *err)
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
        struct ct_err e = {0};
        int rc = fn(arg, &e);
        e.code = rc < 0 ? (e.code ? e.code : (enum ct_status)rc) : CT_OK;
        ssize_t w = write(fd[1], &e, sizeof e);
        _exit(w == (ssize_t)sizeof e ? 0 : 1);
    }
    close(fd[1]);
    struct ct_err e = {0};
    ssize_t got = -1;
    struct pollfd p = {fd[0], POLLIN, 0};
    int ready;
    while ((ready = poll(&p, 1, timeout_s * 1000)) < 0 && errno == EINTR)
        ;
    if (ready > 0)
        while ((got = read(fd[0], &e, sizeof e)) < 0 && errno == EINTR)
            ;
    close(fd[0]);
    if (ready == 0)
        kill(pid, SIGKILL);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (ready == 0)
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
