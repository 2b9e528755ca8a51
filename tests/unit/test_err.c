/* SPDX-License-Identifier: MIT */
/* ct_err_in_child: a check in a child process returns its result and message; a child that
 * dies or does not answer in time is said, never waited for without end. */
#include <criterion/criterion.h>
#include <signal.h>
#include <string.h>
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
