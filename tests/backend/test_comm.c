/* SPDX-License-Identifier: MIT */
/*
 * Communicator bring-up with real processes: two forked ranks on a tcp bootstrap, each
 * pinned to one CPU the way `run --local` pins its ranks, open a communicator over shm.
 */
#include <criterion/criterion.h>

#include <linux/membarrier.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "backend/comm.h"
#include "lib/clock.h"
#include "lib/cpus.h"
#include "lib/sock.h"
#include "transport/boot.h"
#include "transport/shm.h"

#define SEC 1000000000LL

/*
 * The shm transport waits the way the communicator resolved for the host (auto: spin while
 * every local rank has a core), not by its own count of the one CPU a pinned rank may use:
 * it had taken 2 ranks on 2 cores for oversubscribed, and blocked, while the executor spun.
 * Its doorbell shows it: membarrier only in spin mode (where the kernel has it).
 */
static int rank_main(int rank, int lfd, int port, uint64_t job, const char *want)
{
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(rank, &one);
    if (sched_setaffinity(0, sizeof one, &one) != 0)
        return 10;
    struct ct_err err = {0};
    struct ct_boot *boot;
    char root[64];
    snprintf(root, sizeof root, "127.0.0.1:%d", port);
    if (ct_boot_tcp_open(&boot, rank, 2, root, rank == 0 ? lfd : -1, job, NULL, 10 * SEC, &err) < 0)
        return 11;
    struct ct_comm c;
    struct ct_comm_cfg cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.transport = "shm";
    int rc = ct_comm_open(&c, boot, &cfg, &err) < 0 ? 12 : 0;
    if (!rc && c.wait != CT_WAIT_SPIN)
        rc = 13;
    if (!rc && strcmp(ct_shm_doorbell(c.tps[0]), want))
        rc = 14;
    if (!rc || rc > 12)
        ct_comm_close(&c);
    ct_boot_close(boot);
    return rc;
}

Test(comm, pinned_ranks_with_a_core_each_spin_in_the_transport_too)
{
    if (ct_cpus_host() < 2) /* what --wait auto counts */
        cr_skip_test("needs 2 CPUs");
    long q = syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
    const char *want = q > 0 && (q & MEMBARRIER_CMD_GLOBAL_EXPEDITED) ? "membarrier" : "fence";
    unsetenv("COLLTUNE_SHM_DOORBELL");
    struct ct_err err = {0};
    int port = 0;
    int lfd = ct_sock_listen(NULL, 0, 16, &port, &err);
    cr_assert(lfd >= 0, "listen: %s", err.msg);
    uint64_t job = ((uint64_t)getpid() << 40) ^ (uint64_t)ct_now_ns();
    pid_t pid[2];
    for (int r = 0; r < 2; r++)
        if ((pid[r] = fork()) == 0)
            _exit(rank_main(r, lfd, port, job, want));
    close(lfd);
    for (int r = 0; r < 2; r++) {
        int st = 0;
        waitpid(pid[r], &st, 0);
        cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 0,
                  "rank %d: exit %d (10 pin, 11 boot, 12 open, 13 comm not spinning, 14 "
                  "transport's doorbell not %s)",
                  r, WIFEXITED(st) ? WEXITSTATUS(st) : -1, want);
    }
    ct_shm_cleanup_job(job);
}

/* More than one stream is refused where no connection streams: shm, or auto on one host. */
Test(comm, streams_where_no_connection_streams_are_refused)
{
    struct ct_err err = {0};
    cr_assert_eq(ct_comm_streams_check("auto", true, 4, &err), CT_EINVAL);
    cr_assert(strstr(err.msg, "--streams 4: the ranks meet in shared memory alone"), "%s", err.msg);
    cr_assert_eq(ct_comm_streams_check("shm", false, 2, &err), CT_EINVAL);
    cr_assert_eq(ct_comm_streams_check("auto", false, 4, &err), 0, "across hosts: tcp streams");
    cr_assert_eq(ct_comm_streams_check("tcp", true, 4, &err), 0);
    cr_assert_eq(ct_comm_streams_check("auto", true, 1, &err), 0);
    cr_assert_eq(ct_comm_streams_check("fabric", false, 2, &err), CT_EINVAL,
                 "one endpoint a peer, across hosts too");
    cr_assert(strstr(err.msg, "the fabric transport opens one endpoint a peer"), "%s", err.msg);
    cr_assert_eq(ct_comm_streams_check("shm", true, 0, &err), 0);
}
