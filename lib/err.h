/* SPDX-License-Identifier: MIT */
/*
 * Errors: fallible functions return 0 or a negative enum ct_status and fill an
 * optional struct ct_err with a one-line message. Only cmd/ prints.
 */
#ifndef CT_ERR_H
#define CT_ERR_H

#include <stdarg.h>
#include <stddef.h>

enum ct_status {
    CT_OK = 0,
    CT_EINVAL = -1,    /* bad argument or input */
    CT_ENOMEM = -2,    /* allocation failed */
    CT_EIO = -3,       /* I/O or system call failed */
    CT_ETIMEDOUT = -4, /* a bounded wait ran out */
    CT_EUNSUPP = -5,   /* not supported for this request (message says why) */
    CT_EPEER = -6,     /* a peer died, closed or sent garbage */
    CT_EVERIFY = -7,   /* a result check failed */
};

struct ct_err {
    enum ct_status code;
    int sys_errno; /* errno at the failure, 0 if none */
    char msg[1024]; /* one line: a path of some 400 characters and the library's own words fit */
};

/* Fill *err (may be NULL) and return code (negative). */
int ct_err_set(struct ct_err *err, enum ct_status code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Same, recording errno and appending strerror(errno). */
int ct_err_sys(struct ct_err *err, enum ct_status code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Prepend context to an existing message: "probe nic 'mlx5_0': " + msg. Returns err->code. */
int ct_err_wrap(struct ct_err *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void ct_err_clear(struct ct_err *err);
/* fn(arg, err) run in a child process, its result and message returned here: for a check
 * that must not leave state in this process (CUDA does not survive the fork of the ranks
 * that follows). "what" names the check in the message when the child dies, or does not
 * answer within timeout_s seconds (killed: CT_ETIMEDOUT). */
int ct_err_in_child(const char *what, int (*fn)(void *arg, struct ct_err *err), void *arg,
                    int timeout_s, struct ct_err *err);
/* fn(arg) run in a child process whose stdout and stderr are read here (stdin /dev/null):
 * their first len-1 bytes in out, NUL-terminated, its wait status in *status (fn's result is
 * its exit status). For a library that reports a fault by printing and aborting (MPICH's
 * selection files). 0, or a negative status when no child could start, or when it did not
 * end within timeout_s seconds (killed: CT_ETIMEDOUT). */
int ct_err_child_output(const char *what, int (*fn)(void *arg), void *arg, int timeout_s, char *out,
                        size_t len, int *status, struct ct_err *err);
const char *ct_status_str(int code);

#define CT_TRY(x)                                                                                  \
    do {                                                                                           \
        int rc_ = (x);                                                                             \
        if (rc_ < 0)                                                                               \
            return rc_;                                                                            \
    } while (0)

/* Invariant violation: always compiled in, calls the fatal hook, aborts. */
#define CT_BUG(...) ct_bug(__FILE__, __LINE__, __VA_ARGS__)
_Noreturn void ct_bug(const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Hook run before abort on CT_BUG / allocation failure (the TUI restores the terminal). */
void ct_set_fatal_hook(void (*hook)(void));

/* Bookkeeping allocations: never NULL (abort through the fatal hook). */
void *ct_xmalloc(size_t n);
void *ct_xcalloc(size_t n, size_t sz);
void *ct_xrealloc(void *p, size_t n);
char *ct_xstrdup(const char *s);

#endif
