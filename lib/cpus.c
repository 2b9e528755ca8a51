/* SPDX-License-Identifier: MIT */
#include "cpus.h"

#include <ctype.h>
#include <stdbool.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "err.h"
#include "file.h"
#include "parse.h"

int ct_cpulist_count(const char *list)
{
    if (!list)
        return -1;
    const char *p = list;
    int n = 0;
    while (isspace((unsigned char)*p))
        p++;
    while (*p) {
        char *end;
        long a = strtol(p, &end, 10), b = a;
        if (end == p || a < 0 || a > 1 << 20)
            return -1;
        p = end;
        if (*p == '-') {
            b = strtol(p + 1, &end, 10);
            if (end == p + 1 || b < a || b > 1 << 20)
                return -1;
            p = end;
        }
        n += (int)(b - a + 1);
        if (*p == ',')
            p++;
        else if (*p && !isspace((unsigned char)*p))
            return -1;
        while (isspace((unsigned char)*p))
            p++;
    }
    return n;
}

/* dir/name's text (new memory), NULL when it cannot be read */
static char *text_at(const char *dir, const char *name)
{
    char path[4096 + 64], *t = NULL;
    size_t n;
    struct ct_err err = {0};
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return ct_file_read(path, &t, &n, &err) == 0 ? t : NULL;
}

/* The quota's ceil(quota / period) in dir: v1's cpu.cfs_quota_us and cpu.cfs_period_us, or
 * v2's cpu.max ("max 100000", "200000 100000"); 0 when unlimited or unreadable. */
static int quota_at(const char *dir, bool v1)
{
    char *q = text_at(dir, v1 ? "cpu.cfs_quota_us" : "cpu.max"), *p = NULL, *end = q;
    long long quota = q ? strtoll(q, &end, 10) : 0, period = 0;
    bool num = q && end != q; /* not "max" */
    if (num && quota > 0)
        period = v1 ? ((p = text_at(dir, "cpu.cfs_period_us")) ? strtoll(p, NULL, 10) : 0)
                    : strtoll(end, NULL, 10);
    free(q);
    free(p);
    if (!num || quota <= 0 || period <= 0) /* "max", -1 */
        return 0;
    long long cap = (quota + period - 1) / period;
    return cap > 1 << 20 ? 1 << 20 : (int)cap;
}

/* The cpuset's CPU count in dir (v2 cpuset.cpus.effective, v1 cpuset.effective_cpus or
 * cpuset.cpus); 0 when unreadable or empty. */
static int cpuset_at(const char *dir, bool v1)
{
    char *t = text_at(dir, v1 ? "cpuset.effective_cpus" : "cpuset.cpus.effective");
    if (!t && v1)
        t = text_at(dir, "cpuset.cpus");
    int n = t ? ct_cpulist_count(t) : 0;
    free(t);
    return n > 0 ? n : 0;
}

/* *best the tighter of it and c (0: none) */
static void take(int *best, int c)
{
    *best = c > 0 && (*best == 0 || c < *best) ? c : *best;
}

/* The tightest of at() from the cgroup cg under the mount mnt up to the mount's top (a
 * parent's limit binds its children; under a cgroup namespace cg is "/", its own top); a
 * task's cgroup (Slurm's task_N, which may hold one rank's binding) not counted; 0 when
 * none. */
static int tightest(const char *mnt, const char *cg, bool v1, int (*at)(const char *, bool))
{
    char dir[4096];
    int best = 0;
    snprintf(dir, sizeof dir, "%s%s", mnt, strcmp(cg, "/") ? cg : "");
    size_t top = strlen(mnt);
    char *leaf = strrchr(dir, '/');
    if (leaf && (size_t)(leaf - dir) >= top && !strncmp(leaf, "/task_", 6))
        *leaf = '\0';
    for (;;) {
        take(&best, at(dir, v1));
        char *s = strrchr(dir, '/');
        if (!s || (size_t)(s - dir) < top)
            return best;
        *s = '\0';
    }
}

void ct_cpus_cgroup(const char *root, const char *self_cgroup, int *quota, int *cpuset)
{
    *quota = *cpuset = 0;
    for (const char *l = self_cgroup; l && *l;) { /* "hierarchy:controllers:/path" */
        const char *nl = strchr(l, '\n');
        char line[4096], mnt[4096 + 256];
        snprintf(line, sizeof line, "%.*s", nl ? (int)(nl - l) : (int)strlen(l), l);
        l = nl ? nl + 1 : NULL;
        char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        if (!c2 || c2[1] != '/')
            continue;
        *c2 = '\0';
        const char *ctl = c1 + 1, *cg = c2 + 1;
        if (!*ctl) { /* v2: "0::/path", the tree at root, or at root/unified beside v1's */
            for (int u = 0; u < 2; u++) {
                snprintf(mnt, sizeof mnt, u ? "%s/unified" : "%s", root);
                take(quota, tightest(mnt, cg, false, quota_at));
                take(cpuset, tightest(mnt, cg, false, cpuset_at));
            }
            continue;
        }
        char list[4096 + 2];
        snprintf(list, sizeof list, ",%s,", ctl);
        for (int k = 0; k < 2; k++) { /* v1: "4:cpu,cpuacct:/path", "3:cpuset:/path" */
            const char *want = k ? "cpuset" : "cpu";
            char w[16];
            snprintf(w, sizeof w, ",%s,", want);
            if (!strstr(list, w))
                continue;
            snprintf(mnt, sizeof mnt, "%s/%s", root, ctl); /* mounted as "cpu,cpuacct" */
            int c = tightest(mnt, cg, true, k ? cpuset_at : quota_at);
            if (!c) { /* or under the one name */
                snprintf(mnt, sizeof mnt, "%s/%s", root, want);
                c = tightest(mnt, cg, true, k ? cpuset_at : quota_at);
            }
            take(k ? cpuset : quota, c);
        }
    }
}

/* the cgroup's quota and cpuset of this process, 0 each where none */
static void limits(int *quota, int *cpuset)
{
    char *self = NULL;
    size_t len;
    struct ct_err err = {0};
    *quota = *cpuset = 0;
    if (ct_file_read("/proc/self/cgroup", &self, &len, &err) == 0)
        ct_cpus_cgroup("/sys/fs/cgroup", self, quota, cpuset);
    free(self);
}

/* n CPUs (<= 0: not known) under the quota (0: none), at least 1 */
static int capped(long n, int quota)
{
    n = quota > 0 && (n <= 0 || quota < n) ? quota : n;
    return n > 0 ? (int)n : 1;
}

int ct_cpus_host(void)
{
    int quota, cpuset;
    limits(&quota, &cpuset);
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    int n = capped(cpuset > 0 && (online <= 0 || cpuset < online) ? cpuset : online, quota);
    const char *t = getenv(CT_CPUS_ENV); /* what its launcher may use */
    int told = t ? atoi(t) : 0;
    return told > 0 && told < n ? told : n;
}

int ct_cpus_usable(void)
{
    int quota, cpuset;
    limits(&quota, &cpuset);
    cpu_set_t set;
    long n = sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0
                 ? CPU_COUNT(&set)
                 : sysconf(_SC_NPROCESSORS_ONLN);
    return capped(n, quota);
}

unsigned long long ct_mem_available(void)
{
    FILE *f = fopen("/proc/meminfo", "r");
    char line[128];
    unsigned long long kb = 0;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1)
            break;
    if (f)
        fclose(f);
    unsigned long long avail = kb * 1024, max = 0, cur = 0;
    /* a container's cgroup v2 limit (docker --memory), where it is below */
    f = fopen("/sys/fs/cgroup/memory.max", "r");
    bool lim = f && fscanf(f, "%llu", &max) == 1;
    if (f)
        fclose(f);
    f = lim ? fopen("/sys/fs/cgroup/memory.current", "r") : NULL;
    if (f && fscanf(f, "%llu", &cur) == 1 && max > cur && (!avail || max - cur < avail))
        avail = max - cur;
    if (f)
        fclose(f);
    return avail;
}

int ct_mem_fits(uint64_t per_rank, int ranks, const char *what, const char *hint,
                struct ct_err *err)
{
    unsigned long long avail = ct_mem_available();
    double need = (double)per_rank * ranks;
    char a[32], w[32];
    if (avail && need > (double)avail)
        return ct_err_set(err, CT_EUNSUPP,
                          "%s: the %d rank%s of this host need at least %s for their buffers, "
                          "more than the %s it has available (%s)",
                          what, ranks, ranks == 1 ? "" : "s",
                          ct_bytes_str((uint64_t)need, w, sizeof w),
                          ct_bytes_str(avail, a, sizeof a), hint);
    return 0;
}
