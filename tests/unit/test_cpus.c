/* SPDX-License-Identifier: MIT */
/* The CPUs a job and a process may use: cgroup v1 and v2 trees as the kernel lays them out
 * (cpuset and quota files, nested cgroups), and this process's own affinity. */
#include <criterion/criterion.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../lib/cpus.h"

static char root[] = "/tmp/ct-cgroup-XXXXXX";

static void tree_up(void)
{
    cr_assert_not_null(mkdtemp(root));
}

static void tree_down(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    cr_expect_eq(system(cmd), 0);
}

/* root/rel (its folders made) holds text */
static void put(const char *rel, const char *text)
{
    char p[512], cmd[600];
    snprintf(p, sizeof p, "%s/%s", root, rel);
    snprintf(cmd, sizeof cmd, "mkdir -p \"$(dirname '%s')\"", p);
    cr_assert_eq(system(cmd), 0);
    FILE *f = fopen(p, "w");
    cr_assert_not_null(f);
    fputs(text, f);
    fclose(f);
}

TestSuite(cpus, .init = tree_up, .fini = tree_down);

Test(cpus, v2_slurm_job_cpuset_and_quota)
{
    put("cpu.max", "max 100000\n"); /* the top has none: not a limit */
    put("cpuset.cpus.effective", "0-63\n");
    put("system.slice/slurmstepd.scope/job_7/cpu.max", "250000 100000\n");
    put("system.slice/slurmstepd.scope/job_7/cpuset.cpus.effective", "4-7,12\n");
    put("system.slice/slurmstepd.scope/job_7/step_0/cpu.max", "max 100000\n");
    int q, c;
    ct_cpus_cgroup(root, "0::/system.slice/slurmstepd.scope/job_7/step_0\n", &q, &c);
    cr_expect_eq(q, 3, "2.5 CPUs of time: 3 CPUs busy at once, got %d", q);
    cr_expect_eq(c, 5, "the job's cpuset, got %d", c);
}

Test(cpus, v2_a_parent_limit_binds_its_children)
{
    put("a/cpu.max", "100000 100000\n");
    put("a/b/cpu.max", "400000 100000\n");
    put("a/cpuset.cpus.effective", "0-1\n");
    put("a/b/cpuset.cpus.effective", "0-1\n");
    int q, c;
    ct_cpus_cgroup(root, "0::/a/b", &q, &c);
    cr_expect_eq(q, 1);
    cr_expect_eq(c, 2);
}

Test(cpus, v2_a_namespace_sees_its_own_top)
{
    put("cpu.max", "200000 100000\n"); /* docker --cpus 2 in its own cgroup namespace */
    int q, c;
    ct_cpus_cgroup(root, "0::/\n", &q, &c);
    cr_expect_eq(q, 2);
    cr_expect_eq(c, 0, "no cpuset file: none read");
}

Test(cpus, v1_controllers_mounted_together_or_apart)
{
    const char *self = "12:cpuset:/job\n4:cpu,cpuacct:/job\n1:name=systemd:/\n0::/\n";
    put("cpu,cpuacct/job/cpu.cfs_quota_us", "150000\n");
    put("cpu,cpuacct/job/cpu.cfs_period_us", "100000\n");
    put("cpuset/job/cpuset.cpus", "0-1\n"); /* no effective_cpus: the older kernels' */
    int q, c;
    ct_cpus_cgroup(root, self, &q, &c);
    cr_expect_eq(q, 2);
    cr_expect_eq(c, 2);
    tree_down();
    cr_assert_not_null(mkdtemp(strcpy(root, "/tmp/ct-cgroup-XXXXXX")));
    put("cpu/job/cpu.cfs_quota_us", "-1\n"); /* no quota */
    put("cpu/job/cpu.cfs_period_us", "100000\n");
    put("cpu/cpu.cfs_quota_us", "300000\n"); /* under the one name, a quota above */
    put("cpu/cpu.cfs_period_us", "100000\n");
    put("cpuset/cpuset.effective_cpus", "0-7\n");
    put("cpuset/job/cpuset.effective_cpus", "2,5\n");
    ct_cpus_cgroup(root, self, &q, &c);
    cr_expect_eq(q, 3);
    cr_expect_eq(c, 2);
}

Test(cpus, nothing_to_read)
{
    int q = -1, c = -1;
    ct_cpus_cgroup(root, "", &q, &c);
    cr_expect(q == 0 && c == 0);
    ct_cpus_cgroup(root, "garbage\n3:cpu:\n0::/missing\n", &q, &c);
    cr_expect(q == 0 && c == 0);
    put("cpuset.cpus.effective", "\n"); /* an empty cpuset reads as none */
    ct_cpus_cgroup(root, "0::/", &q, &c);
    cr_expect_eq(c, 0);
}

/* a rank counts no more CPUs than the process that launched it may use, when it says so */
Test(cpus, a_launcher_s_word_caps_the_host_s_count)
{
    unsetenv(CT_CPUS_ENV);
    int host = ct_cpus_host();
    setenv(CT_CPUS_ENV, "1", 1);
    cr_expect_eq(ct_cpus_host(), 1, "told fewer");
    setenv(CT_CPUS_ENV, "1000000", 1);
    cr_expect_eq(ct_cpus_host(), host, "told more than the host has");
    setenv(CT_CPUS_ENV, "0", 1); /* a launch across hosts tells none */
    cr_expect_eq(ct_cpus_host(), host);
    unsetenv(CT_CPUS_ENV);
}

/* Slurm's task cgroup (one rank's, which may bind it to one CPU) is not the job's count */
Test(cpus, a_task_s_own_cgroup_is_not_the_job_s)
{
    put("cpuset/slurm/uid_0/job_9/step_0/cpuset.cpus", "0-3\n");
    put("cpuset/slurm/uid_0/job_9/step_0/task_1/cpuset.cpus", "2\n");
    int q, c;
    ct_cpus_cgroup(root, "5:cpuset:/slurm/uid_0/job_9/step_0/task_1\n", &q, &c);
    cr_expect_eq(c, 4, "the step's four, not the task's one: %d", c);
}

/* this process: bound to one CPU it may use one; the host's count is not its binding */
Test(cpus, a_bound_process_and_its_host)
{
    cpu_set_t s;
    cr_assert_eq(sched_getaffinity(0, sizeof s, &s), 0);
    unsetenv(CT_CPUS_ENV);
    int host = ct_cpus_host(), mine = ct_cpus_usable();
    cr_expect(mine >= 1 && mine <= CPU_COUNT(&s), "usable %d of %d", mine, CPU_COUNT(&s));
    cr_expect(host >= mine, "host %d, usable %d", host, mine);
    cr_expect_leq(host, sysconf(_SC_NPROCESSORS_ONLN));
    pid_t p = fork();
    if (p == 0) {
        int first = 0;
        while (!CPU_ISSET(first, &s))
            first++;
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET(first, &one);
        _exit(sched_setaffinity(0, sizeof one, &one) != 0 ? 2
              : ct_cpus_usable() != 1                     ? 3
              : ct_cpus_host() != host                    ? 4
                                                          : 0);
    }
    int st;
    cr_assert_eq(waitpid(p, &st, 0), p);
    cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child exited %d (3: usable, 4: host)",
              WEXITSTATUS(st));
}
