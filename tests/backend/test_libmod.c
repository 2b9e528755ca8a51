/* SPDX-License-Identifier: MIT */
/*
 * The library engines' launch line (backend/libmod.h) with the real launchers: the ranks a
 * library engine measures are bound as the library binds its jobs' (Open MPI: one core each
 * for 2 ranks on a host with 2 or more cores; hydra: none), and --no-bind leaves them free.
 * Measured unbound, Open MPI's ranks were not what its jobs run: each launch was fast or slow
 * at small sizes as the scheduler placed them. The launch line starts `grep` in place of
 * colltune, which prints each rank's CPU list.
 */
#include <criterion/criterion.h>

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "backend/libmod.h"

static bool on_path(const char *prog)
{
    char cmd[256];
    snprintf(cmd, sizeof cmd, "command -v %s >/dev/null 2>&1", prog);
    return system(cmd) == 0;
}

/* Starts 2 ranks of `grep Cpus_allowed_list: /proc/self/status` with m's launch line; the
 * ranks' CPU lists in cpus[0..1] (the lines' order). Returns how many lines were read. */
static int rank_cpus(const struct ct_libmod *m, bool unbound, bool *flag, char cpus[2][64])
{
    char *args[] = {"Cpus_allowed_list:", "/proc/self/status"};
    char **v = ct_libmod_argv(m, 2, NULL, unbound, NULL, "/bin/grep", 2, args);
    *flag = false;
    for (int i = 0; v[i]; i++)
        *flag |= !strcmp(v[i], "--bind-to") || !strcmp(v[i], "-bind-to");
    int fd[2];
    cr_assert_eq(pipe(fd), 0);
    pid_t p = fork();
    if (p == 0) {
        dup2(fd[1], 1);
        close(fd[0]);
        execvp(v[0], v);
        _exit(127);
    }
    close(fd[1]);
    ct_libmod_argv_free(v);
    FILE *f = fdopen(fd[0], "r");
    char line[256];
    int n = 0;
    while (fgets(line, sizeof line, f))
        if (n < 2 && sscanf(line, "Cpus_allowed_list: %63s", cpus[n]) == 1)
            n++;
    fclose(f);
    int st;
    waitpid(p, &st, 0);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s exited %d", m->launcher,
              WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    return n;
}

/* This process's CPU list as /proc writes it ("0-1"). */
static void own_cpus(char *out, size_t len)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    out[0] = 0;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "Cpus_allowed_list: %63s", out) == 1)
            break;
    if (f)
        fclose(f);
    (void)len;
}

static int own_count(void)
{
    cpu_set_t s;
    return sched_getaffinity(0, sizeof s, &s) == 0 ? CPU_COUNT(&s) : 1;
}

Test(libmod, open_mpi_ranks_bound_as_its_jobs_are)
{
    const struct ct_libmod *m = ct_libmod_find("ompi");
    if (!on_path(m->launcher))
        cr_skip_test("%s is not installed", m->launcher);
    if (own_count() < 2)
        cr_skip_test("one CPU: Open MPI binds 2 ranks to none here");
    char cpus[2][64], all[64];
    bool flag;
    cr_assert_eq(rank_cpus(m, false, &flag, cpus), 2);
    cr_expect(!flag, "no binding flag: Open MPI's own");
    cr_expect(!strchr(cpus[0], '-') && !strchr(cpus[0], ','), "rank on one CPU: %s", cpus[0]);
    cr_expect(!strchr(cpus[1], '-') && !strchr(cpus[1], ','), "rank on one CPU: %s", cpus[1]);
    cr_expect_str_neq(cpus[0], cpus[1], "the two ranks on one CPU");
    own_cpus(all, sizeof all);
    cr_assert_eq(rank_cpus(m, true, &flag, cpus), 2);
    cr_expect(flag, "--no-bind: --bind-to none");
    cr_expect_str_eq(cpus[0], all, "--no-bind: rank 0 on %s, not every CPU %s", cpus[0], all);
    cr_expect_str_eq(cpus[1], all, "--no-bind: rank 1 on %s, not every CPU %s", cpus[1], all);
}

Test(libmod, hydra_ranks_unbound_as_its_jobs_are)
{
    const struct ct_libmod *m = ct_libmod_find("mpich");
    if (!on_path(m->launcher))
        cr_skip_test("%s is not installed", m->launcher);
    char cpus[2][64], all[64];
    bool flag;
    own_cpus(all, sizeof all);
    for (int unbound = 0; unbound < 2; unbound++) {
        cr_assert_eq(rank_cpus(m, unbound, &flag, cpus), 2);
        cr_expect(!flag, "hydra binds none by default: no flag");
        cr_expect_str_eq(cpus[0], all);
        cr_expect_str_eq(cpus[1], all);
    }
}
