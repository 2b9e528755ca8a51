/* SPDX-License-Identifier: MIT */
/* Launch detection (the documented order, mis-launches refused with a reason) and the fork
 * launcher: tokens, exit codes, forwarded signals, no orphans. Each Criterion test runs in
 * its own process, so the environment changes stay local to it. */
#include <criterion/criterion.h>
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/clock.h"
#include "lib/cpus.h"
#include "transport/launch.h"

#define SEC 1000000000LL

static const char *const launcher_vars[] = {"COLLTUNE_ROOT",
                                            "COLLTUNE_RANK",
                                            "COLLTUNE_SIZE",
                                            "COLLTUNE_TOKEN",
                                            "COLLTUNE_BOOTSTRAP",
                                            "COLLTUNE_NNODES",
                                            "COLLTUNE_NODE_RANK",
                                            "COLLTUNE_HOSTNAME",
                                            "OMPI_COMM_WORLD_RANK",
                                            "OMPI_COMM_WORLD_SIZE",
                                            "PMI_RANK",
                                            "PMI_SIZE",
                                            "PMI_FD",
                                            "PMIX_RANK",
                                            "SLURM_PROCID",
                                            "SLURM_NTASKS",
                                            "SLURM_STEP_ID",
                                            "SLURM_STEPID",
                                            "MASTER_ADDR",
                                            "MASTER_PORT",
                                            "RANK",
                                            "WORLD_SIZE",
                                            "TORCHELASTIC_USE_AGENT_STORE",
                                            CT_CPUS_ENV,
                                            NULL};

static void clean_env(void)
{
    for (int i = 0; launcher_vars[i]; i++)
        unsetenv(launcher_vars[i]);
}

static struct ct_launch_info detect(int local, int want_rc)
{
    struct ct_launch_cfg c = {local, 0, 0};
    struct ct_launch_info li;
    struct ct_err err = {0};
    int rc = ct_launch_detect(&c, &li, &err);
    cr_assert_eq(rc, want_rc, "rc %d: %s", rc, err.msg);
    if (rc < 0)
        cr_assert_str_eq(err.msg, li.why);
    return li;
}

TestSuite(launch_detect, .init = clean_env);

Test(launch_detect, nothing_is_a_single_rank)
{
    struct ct_launch_info li = detect(0, 0);
    cr_assert_eq(li.kind, CT_LAUNCH_SINGLE);
    cr_assert_eq(li.size, 1);
}

Test(launch_detect, environment_rendezvous)
{
    setenv("COLLTUNE_ROOT", "node01:29500", 1);
    setenv("COLLTUNE_RANK", "3", 1);
    setenv("COLLTUNE_SIZE", "8", 1);
    struct ct_launch_info li = detect(0, 0);
    cr_assert_eq(li.kind, CT_LAUNCH_ENV);
    cr_assert_eq(li.rank, 3);
    cr_assert_eq(li.size, 8);
    cr_assert_str_eq(li.rank_var, "COLLTUNE_RANK");
    cr_assert_str_eq(li.root, "node01:29500");
    cr_assert_str_eq(li.root_src, "COLLTUNE_ROOT");
    cr_assert_eq(li.have_token, 0);
}

Test(launch_detect, open_mpi_variables_with_a_root)
{
    setenv("COLLTUNE_ROOT", "10.0.0.1:29500", 1);
    setenv("OMPI_COMM_WORLD_RANK", "1", 1);
    setenv("OMPI_COMM_WORLD_SIZE", "4", 1);
    struct ct_launch_info li = detect(0, 0);
    cr_assert_eq(li.kind, CT_LAUNCH_ENV);
    cr_assert_str_eq(li.size_var, "OMPI_COMM_WORLD_SIZE");
    cr_assert_eq(li.launcher_size, 4);
}

Test(launch_detect, torchrun)
{
    setenv("MASTER_ADDR", "10.1.2.3", 1);
    setenv("MASTER_PORT", "29500", 1);
    setenv("RANK", "5", 1);
    setenv("WORLD_SIZE", "16", 1);
    struct ct_launch_info li = detect(0, 0);
    cr_assert_eq(li.kind, CT_LAUNCH_ENV);
    cr_assert_str_eq(li.root, "10.1.2.3:29500");
    cr_assert_str_eq(li.root_src, "MASTER_ADDR/MASTER_PORT");
    cr_assert_eq(li.rank, 5);
    cr_assert_eq(li.size, 16);
    /* torchrun's agent holds MASTER_PORT: colltune takes the next one */
    setenv("TORCHELASTIC_USE_AGENT_STORE", "True", 1);
    li = detect(0, 0);
    cr_assert_str_eq(li.root, "10.1.2.3:29501");
    setenv("MASTER_ADDR", "fd00::1", 1);
    li = detect(0, 0);
    cr_assert_str_eq(li.root, "[fd00::1]:29501");
}

Test(launch_detect, rank_without_master_is_not_torchrun)
{
    /* RANK alone is a common variable name: only with MASTER_ADDR is it a launch */
    setenv("RANK", "2", 1);
    setenv("WORLD_SIZE", "4", 1);
    cr_assert_eq(detect(0, 0).kind, CT_LAUNCH_SINGLE);
}

Test(launch_detect, busbw_zero_trap)
{
    setenv("OMPI_COMM_WORLD_RANK", "0", 1);
    setenv("OMPI_COMM_WORLD_SIZE", "4", 1);
    struct ct_launch_info li = detect(0, CT_EINVAL);
    cr_assert_eq(li.kind, CT_LAUNCH_MISLAUNCH);
    cr_assert(strstr(li.why, "the launcher started 4 processes (OMPI_COMM_WORLD_RANK=0, "
                             "OMPI_COMM_WORLD_SIZE=4)"),
              "%s", li.why);
    cr_assert(strstr(li.why, "rank 0 of 1 (the nccl-tests 'busbw 0' trap)"), "%s", li.why);
    cr_assert(strstr(li.why, "COLLTUNE_ROOT"), "%s", li.why);
}

Test(launch_detect, slurm_step)
{
    /* in a batch script (no step) the task variables are not a launch */
    setenv("SLURM_PROCID", "0", 1);
    setenv("SLURM_NTASKS", "8", 1);
    cr_assert_eq(detect(0, 0).kind, CT_LAUNCH_SINGLE);
    /* in an srun step they are, and alone they cannot join */
    setenv("SLURM_STEP_ID", "0", 1);
    struct ct_launch_info li = detect(0, CT_EINVAL);
    cr_assert(strstr(li.why, "SLURM_PROCID=0, SLURM_NTASKS=8"), "%s", li.why);
    setenv("COLLTUNE_ROOT", "n1:4000", 1);
    li = detect(0, 0);
    cr_assert_eq(li.kind, CT_LAUNCH_ENV);
    cr_assert_eq(li.size, 8);
}

/* The rank a launcher's variables give before any bootstrap (a rank but the first writes no
 * output, so it does not check the output's path): srun's only within a step, torchrun's
 * only with MASTER_ADDR, PMIx's last; nothing or garbage: -1. */
Test(launch_detect, env_rank_before_bootstrap)
{
    cr_expect_eq(ct_launch_env_rank(), -1);
    setenv("SLURM_PROCID", "5", 1);
    cr_expect_eq(ct_launch_env_rank(), -1, "a batch script's task variables are no launch");
    setenv("SLURM_STEP_ID", "0", 1);
    cr_expect_eq(ct_launch_env_rank(), 5);
    setenv("OMPI_COMM_WORLD_RANK", "2", 1);
    cr_expect_eq(ct_launch_env_rank(), 2, "mpirun's before srun's");
    clean_env();
    setenv("RANK", "7", 1);
    cr_expect_eq(ct_launch_env_rank(), -1, "RANK without MASTER_ADDR");
    setenv("MASTER_ADDR", "n1", 1);
    cr_expect_eq(ct_launch_env_rank(), 7);
    clean_env();
    setenv("PMIX_RANK", "1", 1);
    cr_expect_eq(ct_launch_env_rank(), 1);
    setenv("PMIX_RANK", "x1", 1);
    cr_expect_eq(ct_launch_env_rank(), -1);
}

/* The node of a job of one colltune --local N a node (its node 0 alone checks and writes the
 * outputs): with a root and a node count only; a forced other bootstrap or garbage: -1. */
Test(launch_detect, env_node_before_bootstrap)
{
    cr_expect_eq(ct_launch_env_node(), -1);
    setenv("COLLTUNE_NNODES", "3", 1);
    setenv("COLLTUNE_NODE_RANK", "2", 1);
    cr_expect_eq(ct_launch_env_node(), -1, "no root: no job of nodes");
    setenv("COLLTUNE_ROOT", "n1:4000", 1);
    cr_expect_eq(ct_launch_env_node(), 2);
    setenv("COLLTUNE_NODE_RANK", "0", 1);
    cr_expect_eq(ct_launch_env_node(), 0);
    cr_expect_eq(ct_launch_env_rank(), -1, "no rank of a launcher's");
    setenv("COLLTUNE_NODE_RANK", "3", 1);
    cr_expect_eq(ct_launch_env_node(), -1, "past the node count");
    setenv("COLLTUNE_NODE_RANK", "1", 1);
    setenv("COLLTUNE_BOOTSTRAP", "single", 1);
    cr_expect_eq(ct_launch_env_node(), -1, "every process a job of its own");
    unsetenv("COLLTUNE_BOOTSTRAP");
    unsetenv("COLLTUNE_ROOT");
    setenv("MASTER_ADDR", "n1", 1);
    setenv("MASTER_PORT", "29500", 1);
    cr_expect_eq(ct_launch_env_node(), 1, "torchrun's root");
}

Test(launch_detect, sizes_disagree)
{
    setenv("COLLTUNE_ROOT", "n1:4000", 1);
    setenv("COLLTUNE_RANK", "0", 1);
    setenv("COLLTUNE_SIZE", "1", 1);
    setenv("OMPI_COMM_WORLD_RANK", "2", 1);
    setenv("OMPI_COMM_WORLD_SIZE", "4", 1);
    struct ct_launch_info li = detect(0, CT_EINVAL);
    cr_assert(strstr(li.why, "mis-launch: COLLTUNE_SIZE=1 but OMPI_COMM_WORLD_SIZE=4"), "%s",
              li.why);
}

Test(launch_detect, bad_values)
{
    setenv("COLLTUNE_ROOT", "n1:4000", 1);
    setenv("COLLTUNE_RANK", "4", 1);
    setenv("COLLTUNE_SIZE", "4", 1);
    cr_assert(strstr(detect(0, CT_EINVAL).why, "COLLTUNE_RANK='4' and COLLTUNE_SIZE='4' are not"));
    setenv("COLLTUNE_RANK", "x", 1);
    detect(0, CT_EINVAL);
    setenv("COLLTUNE_RANK", "1", 1);
    setenv("COLLTUNE_ROOT", "n1", 1);
    cr_assert(strstr(detect(0, CT_EINVAL).why, "COLLTUNE_ROOT='n1' is not host:port"));
    setenv("COLLTUNE_ROOT", "n1:0", 1);
    detect(0, CT_EINVAL);
    unsetenv("COLLTUNE_RANK");
    unsetenv("COLLTUNE_SIZE");
    setenv("COLLTUNE_ROOT", "n1:4000", 1);
    cr_assert(strstr(detect(0, CT_EINVAL).why, "COLLTUNE_ROOT is set but no rank and size"));
    setenv("COLLTUNE_TOKEN", "short", 1);
    cr_assert(strstr(detect(0, CT_EINVAL).why, "COLLTUNE_TOKEN has 5 characters"));
    setenv("COLLTUNE_TOKEN", "0123456789abcdef0123", 1);
    unsetenv("COLLTUNE_ROOT");
    struct ct_launch_info li = detect(0, 0);
    cr_assert(li.have_token);
}

Test(launch_detect, local_and_local_nodes)
{
    struct ct_launch_info li = detect(4, 0);
    cr_assert_eq(li.kind, CT_LAUNCH_LOCAL);
    cr_assert_eq(li.size, 4);
    /* one `--local 4` per node of a 3-node job */
    setenv("COLLTUNE_ROOT", "n0:4000", 1);
    setenv("COLLTUNE_NNODES", "3", 1);
    setenv("COLLTUNE_NODE_RANK", "2", 1);
    li = detect(4, 0);
    cr_assert_eq(li.kind, CT_LAUNCH_LOCAL_NODES);
    cr_assert_eq(li.rank, 8);
    cr_assert_eq(li.size, 12);
    setenv("COLLTUNE_NODE_RANK", "3", 1);
    cr_assert(strstr(detect(4, CT_EINVAL).why, "COLLTUNE_NNODES='3' and COLLTUNE_NODE_RANK='3'"));
}

Test(launch_detect, local_under_a_launcher)
{
    setenv("PMI_RANK", "1", 1);
    setenv("PMI_SIZE", "4", 1);
    struct ct_launch_info li = detect(2, CT_EINVAL);
    cr_assert(strstr(li.why, "--local 2 inside a launcher that started 4 processes (PMI_SIZE=4)"),
              "%s", li.why);
}

Test(launch_detect, launchers_in_order)
{
    setenv("PMI_FD", "7", 1);
    setenv("PMI_RANK", "1", 1);
    setenv("PMI_SIZE", "3", 1);
    struct ct_launch_info li = detect(0, 0);
    cr_assert_eq(li.kind, CT_LAUNCH_PMI1);
    cr_assert_eq(li.rank, 1);
    cr_assert_eq(li.size, 3);
    setenv("PMIX_RANK", "1", 1);
    li = detect(0, 0);
    cr_assert_eq(li.kind, ct_boot_pmix_built() ? CT_LAUNCH_PMIX : CT_LAUNCH_PMI1);
    /* forcing */
    setenv("COLLTUNE_BOOTSTRAP", "pmi1", 1);
    cr_assert_eq(detect(0, 0).kind, CT_LAUNCH_PMI1);
    setenv("COLLTUNE_BOOTSTRAP", "single", 1);
    cr_assert_eq(detect(0, 0).kind, CT_LAUNCH_SINGLE);
    setenv("COLLTUNE_BOOTSTRAP", "env", 1);
    cr_assert(strstr(detect(0, CT_EINVAL).why, "COLLTUNE_BOOTSTRAP=env needs COLLTUNE_ROOT"));
    setenv("COLLTUNE_BOOTSTRAP", "mpi", 1);
    cr_assert(strstr(detect(0, CT_EINVAL).why, "COLLTUNE_BOOTSTRAP='mpi'"));
}

Test(launch_detect, describe)
{
    char buf[2048];
    setenv("COLLTUNE_ROOT", "n0:4000", 1);
    setenv("COLLTUNE_RANK", "1", 1);
    setenv("COLLTUNE_SIZE", "2", 1);
    ct_launch_describe(buf, sizeof buf);
    cr_assert(strstr(buf, "bootstrap: env, rank 1 of 2 (COLLTUNE_RANK/COLLTUNE_SIZE), root "
                          "n0:4000 (COLLTUNE_ROOT)"),
              "%s", buf);
    cr_assert(strstr(buf, "set COLLTUNE_TOKEN to authenticate"), "%s", buf);
    cr_assert(strstr(buf, "\norder: --local N; PMIx"), "%s", buf);
    /* a short buffer is cut, never overrun */
    char small[40];
    int need = ct_launch_describe(small, sizeof small);
    cr_assert_gt(need, 40);
    cr_assert_eq(strlen(small), 39);
}

/* ---------------------------------------------------------------- fork launcher */

struct probe {
    int fd; /* pipe: each rank writes rank, size, token, method */
    int fail_rank, fail_code;
    int sleep_s;
};

struct report {
    int rank, size;
    pid_t pid;
    unsigned char token[CT_BOOT_TOKEN_BYTES];
    char method[8];
};

static int probe_rank(struct ct_boot *b, void *arg)
{
    struct probe *p = arg;
    struct report r = {b->rank, b->size, getpid(), {0}, {0}};
    memcpy(r.token, b->token, sizeof r.token);
    snprintf(r.method, sizeof r.method, "%s", b->method);
    if (write(p->fd, &r, sizeof r) != (ssize_t)sizeof r)
        return 9;
    if (p->sleep_s)
        sleep((unsigned)p->sleep_s);
    return b->rank == p->fail_rank ? p->fail_code : 0;
}

static int collect(int fd, struct report *out, int n)
{
    int got = 0;
    while (got < n && read(fd, &out[got], sizeof *out) == (ssize_t)sizeof *out)
        got++;
    return got;
}

TestSuite(launch_fork, .init = clean_env);

Test(launch_fork, ranks_share_a_drawn_token)
{
    int pfd[2];
    cr_assert_eq(pipe(pfd), 0);
    struct probe p = {pfd[1], -1, 0, 0};
    struct ct_launch_cfg c = {3, 0, 10 * SEC};
    int dead, sig;
    struct ct_err err = {0};
    cr_assert_eq(ct_launch(&c, probe_rank, &p, &dead, &sig, &err), 0, "%s", err.msg);
    close(pfd[1]);
    struct report r[3];
    cr_assert_eq(collect(pfd[0], r, 3), 3);
    for (int i = 0; i < 3; i++) {
        cr_expect_eq(r[i].size, 3);
        cr_expect_str_eq(r[i].method, "local");
        cr_expect(ct_boot_token_equal(r[i].token, r[0].token));
    }
    cr_expect_not(ct_boot_token_is_zero(r[0].token));
    cr_expect_eq(dead, -1);
}

/* 0 when this rank counts as many of its host's cores as arg says, else 7 */
static int count_rank(struct ct_boot *b, void *arg)
{
    (void)b;
    return ct_cpus_host() == *(int *)arg ? 0 : 7;
}

/* Ranks on one CPU (taskset on the launcher) count that one, not the host's: each waits by
 * blocking (--wait auto) instead of spinning through the other's time slice. */
Test(launch_fork, ranks_count_the_cores_their_launcher_may_use)
{
    cpu_set_t s, one;
    cr_assert_eq(sched_getaffinity(0, sizeof s, &s), 0);
    int first = 0, want = 1;
    while (!CPU_ISSET(first, &s))
        first++;
    CPU_ZERO(&one);
    CPU_SET(first, &one);
    cr_assert_eq(sched_setaffinity(0, sizeof one, &one), 0);
    struct ct_launch_cfg c = {2, 0, 10 * SEC};
    int dead, sig;
    struct ct_err err = {0};
    cr_expect_eq(ct_launch(&c, count_rank, &want, &dead, &sig, &err), 0,
                 "a rank counted other than 1 core: %s", err.msg);
}

Test(launch_fork, worst_exit_code)
{
    int pfd[2];
    cr_assert_eq(pipe(pfd), 0);
    struct probe p = {pfd[1], 1, 5, 0};
    struct ct_launch_cfg c = {3, 0, 10 * SEC};
    int dead, sig;
    cr_assert_eq(ct_launch(&c, probe_rank, &p, &dead, &sig, NULL), 5);
    cr_expect_eq(dead, -1);
}

/* Rank 1 finds rank 2 stalled: ranks 0 and 3 learn it from the launcher (rank 2, "stalled"),
 * rank 2 is not told; 0 where so, else 20 + the rank (a lost word wrong or never come) */
static int stall_rank(struct ct_boot *b, void *arg)
{
    (void)arg;
    if (b->rank == 1) {
        ct_launch_tell_stalled(2);
        return 0;
    }
    if (b->rank == 2) /* nothing comes to it in 1 s */
        return ct_launch_lost_rank_wait(SEC) < 0 ? 0 : 22;
    int lost = ct_launch_lost_rank_wait(5 * SEC);
    if (lost != 2 || ct_launch_lost_how() != CT_LAUNCH_LOST_STALLED)
        return 20 + b->rank;
    ct_launch_lost_clear_stalled(); /* the stalled rank answered again: the word is over */
    return ct_launch_lost_rank() == -1 && ct_launch_lost_how() == 0 ? 0 : 30 + b->rank;
}

Test(launch_fork, a_stalled_peer_told_to_the_others)
{
    struct ct_launch_cfg c = {4, 0, 10 * SEC};
    int dead, sig;
    struct ct_err err = {0};
    cr_expect_eq(ct_launch(&c, stall_rank, NULL, &dead, &sig, &err), 0,
                 "a rank's word of rank 2 stalled: %s", err.msg);
    cr_expect_eq(dead, -1);
}

static void count_fatal(void *ctx, const char *msg)
{
    (*(int *)ctx)++;
}

/* SIGTERM to the launcher reaches the ranks, which are gone when it returns 128 + 15. */
Test(launch_fork, signal_forwarded_no_orphans)
{
    int pfd[2];
    cr_assert_eq(pipe(pfd), 0);
    fflush(NULL);
    pid_t l = fork();
    cr_assert_geq(l, 0);
    if (l == 0) {
        struct probe p = {pfd[1], -1, 0, 60};
        struct ct_launch_cfg c = {2, 0, 10 * SEC};
        int fatals = 0;
        struct ct_launch_opts x = {.fatal = count_fatal, .ctx = &fatals};
        int dead, sig;
        int rc = ct_launch_ext(&c, &x, probe_rank, &p, &dead, &sig, NULL);
        _exit(rc == 128 + SIGTERM && fatals == 1 ? 0 : 1);
    }
    close(pfd[1]);
    struct report r[2];
    cr_assert_eq(collect(pfd[0], r, 2), 2);
    int64_t t0 = ct_now_ns();
    kill(l, SIGTERM);
    int st;
    cr_assert_eq(waitpid(l, &st, 0), l);
    cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 0, "launcher status 0x%x", st);
    cr_expect_lt(ct_now_ns() - t0, 3 * SEC);
    for (int i = 0; i < 2; i++)
        cr_expect(kill(r[i].pid, 0) < 0 && errno == ESRCH, "rank %d (pid %d) survived", r[i].rank,
                  (int)r[i].pid);
}

/* SIGKILL to the launcher: the ranks die with it (PR_SET_PDEATHSIG). */
Test(launch_fork, ranks_die_with_the_launcher)
{
    int pfd[2];
    cr_assert_eq(pipe(pfd), 0);
    fflush(NULL);
    pid_t l = fork();
    cr_assert_geq(l, 0);
    if (l == 0) {
        struct probe p = {pfd[1], -1, 0, 60};
        struct ct_launch_cfg c = {2, 0, 10 * SEC};
        int dead, sig;
        _exit(ct_launch(&c, probe_rank, &p, &dead, &sig, NULL));
    }
    close(pfd[1]);
    struct report r[2];
    cr_assert_eq(collect(pfd[0], r, 2), 2);
    kill(l, SIGKILL);
    waitpid(l, NULL, 0);
    int64_t end = ct_now_ns() + 3 * SEC;
    for (int i = 0; i < 2; i++) {
        while (kill(r[i].pid, 0) == 0 && ct_now_ns() < end)
            usleep(10000);
        cr_expect(kill(r[i].pid, 0) < 0, "rank %d (pid %d) outlived the launcher", r[i].rank,
                  (int)r[i].pid);
    }
}
