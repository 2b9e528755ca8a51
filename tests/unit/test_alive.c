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

/* A child that answers; its reach into reach (CT_ALIVE_LEN bytes). A start that fails fails
 * the test; a host with no interface but loopback skips it. */
static pid_t answering_child(char *reach)
{
    struct {
        int rc;
        char msg[sizeof(struct ct_err)], reach[CT_ALIVE_LEN];
    } got = {0};
    int p[2];
    cr_assert_eq(pipe(p), 0);
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        struct ct_err err = {0};
        close(p[0]);
        prctl(PR_SET_PDEATHSIG, SIGKILL); /* a failed check in the parent leaves none */
        got.rc = ct_alive_start(got.reach, sizeof got.reach, &err);
        snprintf(got.msg, sizeof got.msg, "%s", err.msg);
        (void)!write(p[1], &got, sizeof got);
        for (;;)
            pause();
    }
    close(p[1]);
    cr_assert_eq(read(p[0], &got, sizeof got), (ssize_t)sizeof got);
    close(p[0]);
    if (got.rc < 0 || !*got.reach) {
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
        cr_assert_geq(got.rc, 0, "the responder did not start: %s", got.msg);
        cr_skip_test("this host has no interface but loopback: no peer could ask it");
    }
    memcpy(reach, got.reach, CT_ALIVE_LEN);
    return pid;
}

/* The first IPv4 address a reach lists into addr (16 bytes); false where it lists none. */
static bool first_v4(const char *reach, char *addr)
{
    for (const char *t = strchr(reach, ' '); t && (t = strchr(t + 1, ' ')) != NULL;) {
        size_t l = strcspn(t + 1, " ");
        if (l < 16 && memchr(t + 1, '.', l) && !memchr(t + 1, ':', l)) {
            snprintf(addr, 16, "%.*s", (int)l, t + 1);
            return true;
        }
    }
    return false;
}

/* A child that answers, for a test that asks it over IPv4: skipped where it lists none. */
static pid_t answering_child_v4(char *reach, char *addr)
{
    pid_t pid = answering_child(reach);
    if (!first_v4(reach, addr)) {
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
        cr_skip_test("this host has no IPv4 interface but loopback (%s)", reach);
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
    pid_t pid = answering_child(reach);
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
    pid_t pid = answering_child(reach);
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

/* One datagram of len bytes to the reach's port at its IPv4 address addr; what comes back
 * within wait_ms into got (its length; 0: nothing). */
static ssize_t exchange(int fd, const char *reach, const char *addr, const void *m, size_t len,
                        void *got, int wait_ms)
{
    int port = 0;
    cr_assert_eq(sscanf(reach, "%d", &port), 1, "%s", reach);
    struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    cr_assert_eq(inet_pton(AF_INET, addr, &to.sin_addr), 1);
    cr_assert_eq(sendto(fd, m, len, 0, (struct sockaddr *)&to, sizeof to), (ssize_t)len);
    struct pollfd p = {.fd = fd, .events = POLLIN};
    return poll(&p, 1, wait_ms) == 1 ? recv(fd, got, 64, 0) : 0;
}

Test(alive, a_responder_answers_questions_not_answers)
{
    char reach[CT_ALIVE_LEN], addr[16];
    pid_t pid = answering_child_v4(reach, addr);
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    cr_assert_geq(fd, 0);
    /* a question as lib/alive.c sends it: magic, nonce, tag, index (32 bytes) */
    unsigned char q[32] = "ctaliveQ", a[64], again[64];
    q[8] = 7;
    ssize_t n = exchange(fd, reach, addr, q, sizeof q, a, 2000);
    cr_assert_eq(n, 32, "a question is answered (%zd bytes)", n);
    uint64_t tag = strtoull(strchr(reach, ' ') + 1, NULL, 16), got;
    memcpy(&got, a + 16, sizeof got);
    cr_expect_eq(be64toh(got), tag, "the answer carries the responder's tag, big-endian");
    cr_expect_eq(a[8], 7, "and the question's nonce");
    /* its answer sent back to it (as a forged source would make another responder do): no
     * reply, so two responders cannot be set answering each other for good */
    cr_expect_eq(exchange(fd, reach, addr, a, 32, again, 300), 0, "an answer is not answered");
    cr_expect_eq(exchange(fd, reach, addr, q, 31, again, 300), 0, "nor a datagram of another size");
    cr_expect_eq(exchange(fd, reach, addr, q, sizeof q, again, 2000), 32,
                 "it still answers questions");
    close(fd);
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
}

/* A host of many interfaces (a node with eight IPoIB ports, a management and a storage
 * network, bridges): its rank is asked at every address its reach lists, the 12th too. */
Test(alive, a_peer_is_asked_at_each_of_its_addresses)
{
    char reach[CT_ALIVE_LEN], many[CT_ALIVE_LEN], addr[16];
    pid_t pid = answering_child_v4(reach, addr);
    int port = 0, off;
    char tag[17] = "";
    cr_assert_eq(sscanf(reach, "%d %16s", &port, tag), 2, "%s", reach);
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

/* A host reached over IPv6 (its IPv4 addresses filtered, or none): asked at IPv6's loopback
 * where lo has it, and at each IPv6 address its reach lists, which come after its IPv4 ones
 * but the bridges'; a host without IPv6 skips. */
Test(alive, a_peer_is_asked_over_ipv6)
{
    int probe = socket(AF_INET6, SOCK_DGRAM, 0);
    if (probe < 0)
        cr_skip_test("this host has no IPv6");
    struct sockaddr_in6 lo = {.sin6_family = AF_INET6, .sin6_addr = IN6ADDR_LOOPBACK_INIT};
    bool has_lo = bind(probe, (struct sockaddr *)&lo, sizeof lo) == 0;
    close(probe);
    char reach[CT_ALIVE_LEN], six[CT_ALIVE_LEN];
    pid_t pid = answering_child(reach);
    int port = 0, asked = 0;
    char tag[17] = "";
    cr_assert_eq(sscanf(reach, "%d %16s", &port, tag), 2, "%s", reach);
    if (has_lo) {
        snprintf(six, sizeof six, "%d %s ::1", port, tag);
        cr_expect(ask1(six, 2.0), "answered at IPv6's loopback (%s)", six);
        asked++;
    }
    /* the bridges' IPv4 addresses, which alone may follow an IPv6 one */
    struct ct_ifaddr ifs[32];
    struct ct_err err = {0};
    int nif = ct_sock_if_list(ifs, 32, &err), kept = nif > 0 ? ct_alive_order(ifs, nif) : 0;
    bool seen6 = false;
    for (const char *t = strchr(reach, ' '); (t = strchr(t + 1, ' ')) != NULL;) {
        int l = (int)strcspn(t + 1, " ");
        bool bridge = false;
        for (int i = kept; i < nif; i++)
            bridge |= (int)strlen(ifs[i].addr) == l && !strncmp(ifs[i].addr, t + 1, (size_t)l);
        if (memchr(t + 1, ':', (size_t)l)) {
            seen6 = true;
            snprintf(six, sizeof six, "%d %s %.*s", port, tag, l, t + 1);
            cr_expect(ask1(six, 2.0), "answered at its IPv6 address (%s)", six);
            asked++;
        } else
            cr_expect(!seen6 || bridge, "its IPv4 addresses before its IPv6 ones (%s)", reach);
    }
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    if (!asked)
        cr_skip_test("no IPv6 address here to ask at, loopback included (%s)", reach);
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
