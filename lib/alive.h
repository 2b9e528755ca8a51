/* SPDX-License-Identifier: MIT */
/*
 * Whether a peer process on another host still runs: each process answers datagrams on a UDP
 * port from a thread of its own, which runs while the process's other threads wait in a
 * library call, and stops with the process (SIGSTOP, a debugger, death, its host gone). A
 * process whose calls have not returned for long asks its peers, and names those that do not
 * answer. Over IPv4 and, where the host has it, IPv6 (one socket for both); a peer whose
 * datagrams are filtered reads as one that does not answer.
 */
#ifndef CT_ALIVE_H
#define CT_ALIVE_H

#include <stdbool.h>
#include <stddef.h>

#include "err.h"

struct ct_ifaddr; /* sock.h */

/* Where a process answers: "PORT TAG ADDR [ADDR...]" (TAG: 16 hex digits the process drew,
 * which its answers carry: another process on that port of an address, a bridge's that
 * every host has, is not taken for it; ADDR: its interfaces' IPv4 addresses that are up,
 * not loopback, then its IPv6 ones where it has IPv6 (not link-local), the bridges'
 * IPv4 last (ct_alive_order; a bridge's IPv6 not listed), at most CT_ALIVE_ADDRS), at most
 * CT_ALIVE_LEN bytes with the NUL. */
#define CT_ALIVE_ADDRS 12
/* "65535 " + 16 hex digits + 12 x " " and an IPv6 address (45), the NUL */
#define CT_ALIVE_LEN 576

/* Order a host's interfaces as its reach lists them: the container and VM bridges (docker*,
 * virbr*, br-*, veth*, ...: the same addresses on every host) after the others, each group in
 * its given order; returns how many are not such bridges. */
int ct_alive_order(struct ct_ifaddr *ifs, int n);

/* Start this process's answering thread (once: a second call gives the same place) and write
 * where it answers into reach; "" where the host has no such interface (then it answers
 * nothing). */
int ct_alive_start(char *reach, size_t len, struct ct_err *err);
/* Stop it (a process about to exec or end); harmless where it did not start. */
void ct_alive_stop(void);

/* Ask each peer reach[0..n) (NULL, "" or not a reach: not asked) whether it runs, sending to each
 * of its addresses, again until wait_s has passed or all answered; answered[i] says (true too for
 * one not asked: none is named). Returns how many were asked, or < 0 with err (no socket). */
int ct_alive_ask(const char *const *reach, int n, double wait_s, bool *answered,
                 struct ct_err *err);

#endif
