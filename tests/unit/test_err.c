/* SPDX-License-Identifier: MIT */
/* ct_err_in_child: a check in a child process returns its result and message; a child that
 * dies or does not answer in time is said, never waited for without end. ct_err_child_output:
 * the same bounds for a child whose printed output is the answer. */
#include <criterion/criterion.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lib/err.h"

static int passes(void *arg, struct ct_err *err)
{
    return 0;
}

static int refuses(void *arg, struct ct_err *err)
{
    return ct_err_set(err, CT_EUNSUPP, "no %s here", (const char *)arg);
}

static int dies(void *arg, struct ct_err *err)
{
    raise(SIGKILL);
    return 0;
}

static int hangs(void *arg, struct ct_err *err)
{
    pause();
    return 0;
}

Test(err, in_child_result_and_message)
{
    struct ct_err err = {0};
    cr_expect_eq(ct_err_in_child("check", passes, NULL, 10, &err), 0);
    cr_expect_eq(ct_err_in_child("check", refuses, "GPU", 10, &err), CT_EUNSUPP);
    cr_expect_str_eq(err.msg, "no GPU here");
    cr_expect_eq(ct_err_in_child("check", dies, NULL, 10, &err), CT_EIO);
    cr_expect(strstr(err.msg, "check: the checking process died"), "%s", err.msg);
}

Test(err, in_child_that_hangs_is_killed)
{
    struct ct_err err = {0};
    time_t t0 = time(NULL);
    cr_expect_eq(ct_err_in_child("memory check", hangs, NULL, 1, &err), CT_ETIMEDOUT);
    cr_expect(strstr(err.msg, "memory check: the check did not finish within 1 s"), "%s", err.msg);
    cr_expect_leq(time(NULL) - t0, 5, "bounded");
}

/* ct_err_child_output: what the child prints on both streams comes back, cut to the buffer;
 * one that prints more than a pipe holds is read to its end, not left blocked; one that
 * closes its streams and keeps running is killed at the deadline. */
static int prints(void *arg)
{
    printf("on stdout\n");
    fprintf(stderr, "%s\n", (const char *)arg);
    return 3;
}

static int floods(void *arg)
{
    for (int i = 0; i < 100000; i++)
        printf("line %d of a long output\n", i);
    return *(int *)arg;
}

static int silent_hang(void *arg)
{
    close(1);
    close(2);
    pause();
    return 0;
}

Test(err, child_output_read_and_bounded)
{
    struct ct_err err = {0};
    char out[256];
    int status = -1;
    cr_expect_eq(ct_err_child_output("trial", prints, "assertion in file x", 10, out, sizeof out,
                                     &status, &err),
                 0);
    cr_expect(strstr(out, "on stdout\n") && strstr(out, "assertion in file x\n"), "%s", out);
    cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 3, "status %d", status);
    char small[16];
    int rc = 0;
    cr_expect_eq(ct_err_child_output("trial", floods, &rc, 30, small, sizeof small, &status, &err),
                 0);
    cr_expect_str_eq(small, "line 0 of a lon");
    cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0, "status %d", status);
    time_t t0 = time(NULL);
    cr_expect_eq(ct_err_child_output("trial", silent_hang, NULL, 1, out, sizeof out, &status, &err),
                 CT_ETIMEDOUT);
    cr_expect(strstr(err.msg, "trial: did not end within 1 s"), "%s", err.msg);
    cr_expect(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL, "status %d", status);
    cr_expect_leq(time(NULL) - t0, 5, "bounded");
}

/* A line longer than a message holds keeps its start and its end: a path of thousands of
 * bytes cut in the middle, the reason after it said (it was cut before the reason). */
Test(err, long_line_cut_in_the_middle)
{
    struct ct_err err = {0};
    char path[4096];
    memset(path, 'd', sizeof path - 1);
    path[0] = '/';
    path[sizeof path - 1] = 0;
    errno = ENAMETOOLONG;
    cr_assert_eq(ct_err_sys(&err, CT_EINVAL, "cannot write '%s'", path), CT_EINVAL);
    size_t n = strlen(err.msg);
    cr_assert_eq(n, sizeof err.msg - 1);
    cr_assert(!strncmp(err.msg, "cannot write '/ddd", 18), "%s", err.msg);
    cr_assert(strstr(err.msg, "..."), "%s", err.msg);
    const char *tail = "ddd': File name too long";
    cr_assert_str_eq(err.msg + n - strlen(tail), tail);
    ct_err_set(&err, CT_EIO, "short: %d", 7); /* a short one as it is */
    cr_assert_str_eq(err.msg, "short: 7");
    ct_err_wrap(&err, "%s: ", path); /* a long prefix keeps the message's end */
    n = strlen(err.msg);
    cr_assert_str_eq(err.msg + n - 11, "d: short: 7");
    cr_assert_eq(n, sizeof err.msg - 1);
}
