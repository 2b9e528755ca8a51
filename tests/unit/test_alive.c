/* SPDX-License-Identifier: MIT */
/* Whether a peer process runs (lib/alive.h): a real process answering on its UDP port, asked
 * while it runs, while it is stopped (SIGSTOP), after it continues and once it is gone; a
 * reach whose tag is another process's, and one that is not a reach. */
#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../lib/alive.h"

/* A child that answers; its reach into reach. */
static pid_t answering_child(char *reach, size_t len)
{
    int p[2];
    cr_assert_eq(pipe(p), 0);
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        char r[CT_ALIVE_LEN] = "";
        struct ct_err err = {0};
        close(p[0]);
        if (ct_alive_start(r, sizeof r, &err) < 0)
            r[0] = 0;
        (void)!write(p[1], r, sizeof r);
        for (;;)
            pause();
    }
    close(p[1]);
    cr_assert_eq(read(p[0], reach, len), (ssize_t)CT_ALIVE_LEN);
    close(p[0]);
    if (!*reach) {
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
        cr_skip_test("this host has no IPv4 interface but loopback: no peer could ask it");
    }
    return pid;
}

static bool ask1(const char *reach, double wait_s)
{
    bool ok = false;
    struct ct_err err = {0};
    const char *r[1] = {reach};
    cr_assert_eq(ct_alive_ask(r, 1, wait_s, &ok, &err), 1, "%s", err.msg);
    return ok;
}

Test(alive, a_running_process_answers_a_stopped_one_does_not)
{
    char reach[CT_ALIVE_LEN];
    pid_t pid = answering_child(reach, sizeof reach);
    cr_expect(ask1(reach, 2.0), "a running process answers (%s)", reach);
    cr_assert_eq(kill(pid, SIGSTOP), 0);
    usleep(100000);
    cr_expect(!ask1(reach, 0.5), "a stopped process does not answer");
    cr_assert_eq(kill(pid, SIGCONT), 0);
    cr_expect(ask1(reach, 2.0), "it answers again once it continues");
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    cr_expect(!ask1(reach, 0.5), "a process that is gone does not answer");
}

Test(alive, only_the_process_named_by_its_tag_counts)
{
    char reach[CT_ALIVE_LEN], other[CT_ALIVE_LEN];
    pid_t pid = answering_child(reach, sizeof reach);
    /* the same port and addresses, another tag: the answer is not this one's */
    snprintf(other, sizeof other, "%s", reach);
    char *tag = strchr(other, ' ') + 1;
    tag[0] = tag[0] == '0' ? '1' : '0';
    cr_expect(!ask1(other, 0.5), "another tag on the port is not taken for the peer");
    const char *rs[4] = {reach, "not a reach", "", NULL};
    bool ok[4];
    struct ct_err err = {0};
    cr_expect_eq(ct_alive_ask(rs, 4, 2.0, ok, &err), 1, "only the reach is asked");
    cr_expect(ok[0] && ok[1] && ok[2] && ok[3], "those not asked count as answered");
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
}

Test(alive, a_second_start_gives_the_same_place)
{
    char a[CT_ALIVE_LEN], b[CT_ALIVE_LEN];
    struct ct_err err = {0};
    cr_assert_eq(ct_alive_start(a, sizeof a, &err), 0, "%s", err.msg);
    cr_assert_eq(ct_alive_start(b, sizeof b, &err), 0, "%s", err.msg);
    cr_expect_str_eq(a, b);
    if (*a)
        cr_expect(ask1(a, 2.0), "this process answers itself");
    ct_alive_stop();
    if (*a)
        cr_expect(!ask1(a, 0.5), "stopped, it does not");
}
