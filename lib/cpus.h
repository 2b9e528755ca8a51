/* SPDX-License-Identifier: MIT */
/* How many CPUs a job, and this process, may use on this host; the memory it has. */
#ifndef CT_CPUS_H
#define CT_CPUS_H

#include <stdint.h>

/* A launcher of ranks on its host says how many CPUs it may use (ct_cpus_usable) in this
 * variable; a rank counts no more (ct_cpus_host). */
#define CT_CPUS_ENV "COLLTUNE_CORES"

/* The CPUs of this host a job may use at once: its cgroup's cpuset (Slurm's allocation on
 * the node, a container's --cpuset-cpus; not a launcher's binding of one rank, nor a cgroup
 * of one task, task_N, as Slurm makes), fewer when the cgroup's CPU quota gives less time
 * (cgroup v2 cpu.max, v1 cpu.cfs_quota_us: docker --cpus), rounded up; the online CPUs where
 * no cpuset is readable; fewer when the process that launched this one said so in
 * CT_CPUS_ENV (taskset on colltune); at least 1. Ranks beyond it share CPUs and time the
 * scheduler. For a rank, which its launcher may have bound to one CPU. */
int ct_cpus_host(void);

/* The CPUs this process may run on at once: its affinity mask (taskset, a launcher's
 * binding, the cpuset), capped by the cgroup's quota as above; at least 1. For the process
 * that starts the ranks. */
int ct_cpus_usable(void);

/* The cgroup limits of a process whose /proc/self/cgroup reads self_cgroup, with the cgroup
 * file systems mounted under root ("/sys/fs/cgroup"), the tightest from its cgroup up (from
 * its parent when its own is a task's, task_N): the quota's ceil(quota / period) (0: no
 * quota) and the cpuset's CPU count (0: none readable). */
void ct_cpus_cgroup(const char *root, const char *self_cgroup, int *quota, int *cpuset);

/* The memory this host can give without swapping, in bytes (/proc/meminfo's MemAvailable,
 * below a cgroup v2 memory.max where that leaves less); 0 where unknown. */
unsigned long long ct_mem_available(void);
/* Whether ranks x per_rank bytes of buffers fit in what this host has available
 * (ct_mem_available; an amount it cannot read fits): 0, or CT_EUNSUPP with one line naming
 * what ("allreduce 1 TiB"), what the ranks need and what is there, and hint ("a smaller -e"). */
struct ct_err;
int ct_mem_fits(uint64_t per_rank, int ranks, const char *what, const char *hint,
                struct ct_err *err);

/* Number of CPUs in a cpulist ("0-3,8" -> 5); -1 on garbage. */
int ct_cpulist_count(const char *list);

#endif
