/* SPDX-License-Identifier: MIT */
/* Whether a peer process runs (lib/alive.h): a real process answering on its UDP port, asked
 * while it runs, while it is stopped (SIGSTOP), after it continues and once it is gone; a
 * reach whose tag is another process's, and one that is not a reach; its own answer sent
 * back to it, not answered; a peer at the 12th address of its reach, and one over IPv6. */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <endian.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../lib/alive.h"
#include "../../lib/sock.h"

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
        prctl(PR_SET_PDEATHSIG, SIGKILL); /* a failed check in the parent leaves none */
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

/* One datagram of len bytes to the reach's first address; what comes back within wait_ms
 * into got (its length; 0: nothing). */
static ssize_t exchange(int fd, const char *reach, const void *m, size_t len, void *got,
                        int wait_ms)
{
    char addr[32] = "";
    int port = 0;
    cr_assert_eq(sscanf(reach, "%d %*s %31s", &port, addr), 2, "%s", reach);
    struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    cr_assert_eq(inet_pton(AF_INET, addr, &to.sin_addr), 1);
    cr_assert_eq(sendto(fd, m, len, 0, (struct sockaddr *)&to, sizeof to), (ssize_t)len);
    struct pollfd p = {.fd = fd, .events = POLLIN};
    return poll(&p, 1, wait_ms) == 1 ? recv(fd, got, 64, 0) : 0;
}

Test(alive, a_responder_answers_questions_not_answers)
{
    char reach[CT_ALIVE_LEN];
    pid_t pid = answering_child(reach, sizeof reach);
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    cr_assert_geq(fd, 0);
    /* a question as lib/alive.c sends it: magic, nonce, tag, index (32 bytes) */
    unsigned char q[32] = "ctaliveQ", a[64], again[64];
    q[8] = 7;
    ssize_t n = exchange(fd, reach, q, sizeof q, a, 2000);
    cr_assert_eq(n, 32, "a question is answered (%zd bytes)", n);
    uint64_t tag = strtoull(strchr(reach, ' ') + 1, NULL, 16), got;
    memcpy(&got, a + 16, sizeof got);
    cr_expect_eq(be64toh(got), tag, "the answer carries the responder's tag, big-endian");
    cr_expect_eq(a[8], 7, "and the question's nonce");
    /* its answer sent back to it (as a forged source would make another responder do): no
     * reply, so two responders cannot be set answering each other for good */
    cr_expect_eq(exchange(fd, reach, a, 32, again, 300), 0, "an answer is not answered");
    cr_expect_eq(exchange(fd, reach, q, 31, again, 300), 0, "nor a datagram of another size");
    cr_expect_eq(exchange(fd, reach, q, sizeof q, again, 2000), 32, "it still answers questions");
    close(fd);
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
}

/* A host of many interfaces (a node with eight IPoIB ports, a management and a storage
 * network, bridges): its rank is asked at every address its reach lists, the 12th too. */
Test(alive, a_peer_is_asked_at_each_of_its_addresses)
{
    char reach[CT_ALIVE_LEN], many[CT_ALIVE_LEN];
    pid_t pid = answering_child(reach, sizeof reach);
    int port = 0, off;
    char tag[17] = "", addr[16] = "";
    cr_assert_eq(sscanf(reach, "%d %16s %15s", &port, tag, addr), 3, "%s", reach);
    off = snprintf(many, sizeof many, "%d %s", port, tag);
    /* documentation networks, where nothing answers: one this host is not on (a VM's own
     * address can be 192.0.2.2) */
    const char *net = strncmp(addr, "203.0.113.", 10) ? "203.0.113" : "198.51.100";
    for (int k = 1; k < 12; k++)
        off += snprintf(many + off, sizeof many - (size_t)off, " %s.%d", net, k);
    snprintf(many + off, sizeof many - (size_t)off, " %s", addr);
    cr_expect(ask1(many, 2.0), "answered at its last address (%s)", many);
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
}

/* A host reached over IPv6 only (its IPv4 addresses filtered, or none): asked at its global
 * IPv6 address, listed after its IPv4 ones; a host without IPv6 skips. */
Test(alive, a_peer_is_asked_over_ipv6)
{
    int probe = socket(AF_INET6, SOCK_DGRAM, 0);
    if (probe < 0)
        cr_skip_test("this host has no IPv6");
    close(probe);
    char reach[CT_ALIVE_LEN], six[CT_ALIVE_LEN];
    pid_t pid = answering_child(reach, sizeof reach);
    int port = 0;
    char tag[17] = "";
    cr_assert_eq(sscanf(reach, "%d %16s", &port, tag), 2, "%s", reach);
    const char *v6 = strchr(reach, ':'), *v4 = strchr(reach, '.');
    if (!v6) {
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
        cr_skip_test("this host has no global IPv6 address (%s)", reach);
    }
    while (v6[-1] != ' ')
        v6--;
    cr_expect(!v4 || v4 < v6, "its IPv4 addresses first (%s)", reach);
    snprintf(six, sizeof six, "%d %s %.*s", port, tag, (int)strcspn(v6, " "), v6);
    cr_expect(ask1(six, 2.0), "answered at its IPv6 address (%s)", six);
    snprintf(six, sizeof six, "%d %s ::1", port, tag);
    cr_expect(ask1(six, 2.0), "and at IPv6's loopback (%s)", six);
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
}

Test(alive, bridges_are_listed_last)
{
    const char *names[] = {"docker0", "eth0", "virbr0", "ib0", "veth1a2b", "eno1", "br-3f2e"};
    struct ct_ifaddr ifs[7];
    for (int i = 0; i < 7; i++)
        snprintf(ifs[i].name, sizeof ifs[i].name, "%s", names[i]);
    cr_expect_eq(ct_alive_order(ifs, 7), 3, "three are not bridges");
    const char *want[] = {"eth0", "ib0", "eno1", "docker0", "virbr0", "veth1a2b", "br-3f2e"};
    for (int i = 0; i < 7; i++)
        cr_expect_str_eq(ifs[i].name, want[i], "place %d", i);
}
