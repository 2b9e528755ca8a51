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
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>

#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "backend/libmod.h"
#include "lib/clock.h"
#include "lib/cpus.h"
#include "lib/file.h"
#include "lib/sock.h"

static bool on_path(const char *prog)
{
    char cmd[256];
    snprintf(cmd, sizeof cmd, "command -v %s >/dev/null 2>&1", prog);
    return system(cmd) == 0;
}

/* Starts 2 ranks of prog args with m's launch line; what each line's fmt reads in
 * out[0..1] (the lines' order). Returns how many lines were read. */
static int rank_out(const struct ct_libmod *m, bool unbound, bool *flag, const char *prog,
                    char **args, const char *fmt, char out[2][64])
{
    char **v = ct_libmod_argv(m, 2, NULL, unbound, NULL, prog, 2, args);
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
        if (n < 2 && sscanf(line, fmt, out[n]) == 1)
            n++;
    fclose(f);
    int st;
    waitpid(p, &st, 0);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s exited %d", m->launcher,
              WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    return n;
}

/* The ranks' CPU lists (`grep Cpus_allowed_list: /proc/self/status`) in cpus[0..1]. */
static int rank_cpus(const struct ct_libmod *m, bool unbound, bool *flag, char cpus[2][64])
{
    char *args[] = {"Cpus_allowed_list:", "/proc/self/status"};
    return rank_out(m, unbound, flag, "/bin/grep", args, "Cpus_allowed_list: %63s", cpus);
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

/* A rank that its launcher binds to one CPU counts its host's cores, or fewer when the process
 * that launched it may use fewer (taskset): it is told them. */
Test(libmod, ranks_count_the_cores_their_launching_process_may_use)
{
    unsetenv(CT_LIBMOD_ENV);
    unsetenv(CT_CPUS_ENV);
    cr_assert(!ct_libmod_in_rank(), "run outside a launcher");
    cr_expect_eq(ct_libmod_cores(), ct_cpus_usable(), "the launching process: its own");
    setenv(CT_LIBMOD_ENV, "ompi", 1);
    cr_expect_eq(ct_libmod_cores(), ct_cpus_host(), "a rank: its host's");
    setenv(CT_CPUS_ENV, "1", 1);
    cr_expect_eq(ct_libmod_cores(), 1, "told fewer");
    unsetenv(CT_LIBMOD_ENV);
    unsetenv(CT_CPUS_ENV);
    char want[64], got[2][64];
    snprintf(want, sizeof want, "%d", ct_cpus_usable());
    for (int l = 0; l < 2; l++) {
        const struct ct_libmod *m = ct_libmod_find(l ? "mpich" : "ompi");
        if (!on_path(m->launcher))
            continue;
        char *args[] = {"-c", "echo cores=$" CT_CPUS_ENV};
        bool flag;
        cr_assert_eq(rank_out(m, false, &flag, "/bin/sh", args, "cores=%63s", got), 2);
        cr_expect(!strcmp(got[0], want) && !strcmp(got[1], want),
                  "%s's ranks told %s and %s, not %s", m->title, got[0], got[1], want);
    }
}

/* A folder of stand-ins for a site's programs: name (a shell script printing says) for each
 * pair, and timeout (the real one, which colltune's reading of --version runs). */
static void stand_ins(char *dir, const char *const progs[][2], int n)
{
    char path[256];
    cr_assert_not_null(mkdtemp(dir));
    for (int i = 0; i < n; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, progs[i][0]);
        FILE *f = fopen(path, "w");
        cr_assert_not_null(f);
        fprintf(f, "#!/bin/sh\nprintf '%%s\\n' '%s'\n", progs[i][1]);
        fclose(f);
        chmod(path, 0755);
    }
    snprintf(path, sizeof path, "%s/timeout", dir);
    cr_assert_eq(
        symlink(access("/usr/bin/timeout", X_OK) ? "/bin/timeout" : "/usr/bin/timeout", path), 0);
    setenv("PATH", dir, 1);
}

/* The stand-ins' folder removed, with what is in it. */
static void stand_ins_gone(const char *dir)
{
    DIR *d = opendir(dir);
    char path[512];
    for (struct dirent *e; d && (e = readdir(d));) {
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (e->d_name[0] != '.')
            unlink(path);
    }
    if (d)
        closedir(d);
    rmdir(dir);
}

/* A site whose library is its only MPI (modules, a vendor's build) has a plain `mpirun` or
 * `mpiexec`, not Debian's names: taken, by its path, where Debian's is not on PATH and its
 * --version names the library; one that names another is not, and the line says what was
 * looked for (case c: Open MPI's taken, another MPI's mpiexec not; then MPICH's hydra taken,
 * another MPI's mpirun not). */
static void plain_launchers(int c)
{
    static const char *const progs[2][2][2] = {
        {{"mpirun", "mpirun (Open MPI) 4.1.4"}, {"mpiexec", "mpiexec (another MPI) 1.0"}},
        {{"mpirun", "mpirun (another MPI) 1.0"}, {"mpiexec", "HYDRA build details:"}}};
    char dir[] = "/tmp/ct-bin-XXXXXX", want[64], said[160];
    stand_ins(dir, progs[c], 2);
    const struct ct_libmod *yes = ct_libmod_find(c ? "mpich" : "ompi"),
                           *no = ct_libmod_find(c ? "ompi" : "mpich");
    struct ct_err err = {0};
    snprintf(want, sizeof want, "%s/%s", dir, c ? "mpiexec" : "mpirun");
    cr_expect_str_eq(ct_libmod_launcher(yes), want);
    cr_expect_eq(ct_libmod_launcher_check(yes, &err), 0, "%s", err.msg);
    char **v = ct_libmod_argv(yes, 2, NULL, false, NULL, "prog", 0, NULL);
    cr_expect_str_eq(v[0], want);
    ct_libmod_argv_free(v);
    cr_expect_str_eq(ct_libmod_launcher(no), no->launcher, "another MPI's is not taken");
    cr_expect_lt(ct_libmod_launcher_check(no, &err), 0);
    snprintf(said, sizeof said, "neither %s nor a %s whose --version says %s", no->launcher,
             no->launcher_alt, no->launcher_says);
    cr_expect(strstr(err.msg, said), "%s", err.msg);
    stand_ins_gone(dir);
}

Test(libmod, a_site_s_plain_mpirun_where_debian_s_is_absent)
{
    plain_launchers(0);
}

Test(libmod, a_site_s_plain_hydra_where_debian_s_is_absent)
{
    plain_launchers(1);
}

/* A site's mca_base_env_list, from its parameter files (as ompi_info lists it: a value with a
 * ':' in quotes) or this environment (set, even empty): the ranks' variables go first on the
 * list mpirun is given (Open MPI stops at a name it cannot pass on), the site's after them,
 * its delimiter used; no -x beside it. Stand-ins for ompi_info and the site's file. */
Test(libmod, the_ranks_variables_ride_first_on_a_site_s_env_list)
{
    static const char *const progs[][2] = {
        {"ompi_info", "mca:mca:base:param:mca_base_env_list:value:\"A=x:1 y\"\n"
                      "mca:mca:base:param:mca_base_env_list_delimiter:value:;"}};
    char dir[] = "/tmp/ct-bin-XXXXXX", conf[128], want[256];
    stand_ins(dir, progs, 1);
    static const char *const unset[] = {"OMPI_MCA_mca_base_env_list",
                                        "OMPI_MCA_mca_base_env_list_delimiter",
                                        "OMPI_MCA_mca_base_param_files",
                                        "OMPI_MCA_mca_base_param_file_prefix",
                                        "OMPI_MCA_mca_base_envar_file_prefix",
                                        "OPAL_PREFIX",
                                        "OPAL_SYSCONFDIR"};
    for (size_t i = 0; i < sizeof unset / sizeof unset[0]; i++)
        unsetenv(unset[i]);
    snprintf(conf, sizeof conf, "%s/site.conf", dir);
    FILE *f = fopen(conf, "w");
    cr_assert_not_null(f);
    fputs("mca_base_env_list = A=x:1 y\n", f);
    fclose(f);
    setenv("OMPI_MCA_mca_base_param_files", conf, 1);
    const struct ct_libmod *m = ct_libmod_find("ompi");
    static const char *const env[][2] = {{NULL, NULL}, {"", NULL}, {"B=2", ","}, {NULL, NULL}};
    for (int c = 0; c < 4; c++) {
        if (env[c][0])
            setenv("OMPI_MCA_mca_base_env_list", env[c][0], 1);
        else
            unsetenv("OMPI_MCA_mca_base_env_list");
        if (env[c][1])
            setenv("OMPI_MCA_mca_base_env_list_delimiter", env[c][1], 1);
        else
            unsetenv("OMPI_MCA_mca_base_env_list_delimiter");
        const char *d = env[c][1] ? env[c][1] : ";";
        char **v = ct_libmod_argv(m, 2, "h1,h2", false, "H:1#t", "prog", 0, NULL);
        snprintf(want, sizeof want,
                 "COLLTUNE_LIB_RANK=ompi%sCOLLTUNE_LIB_NOTIFY=H:1#t%s"
                 "COLLTUNE_CORES=0%s%s",
                 d, d, env[c][0] && !*env[c][0] ? "" : d, env[c][0] ? env[c][0] : "A=x:1 y");
        int at = -1, x = 0, dl = -1;
        for (int i = 0; v[i]; i++) {
            x += !strcmp(v[i], "-x");
            if (!strcmp(v[i], "mca_base_env_list") && i && !strcmp(v[i - 1], "--mca") && v[i + 1])
                at = i + 1;
            if (!strcmp(v[i], "mca_base_env_list_delimiter") && v[i + 1])
                dl = i + 1;
        }
        cr_expect(at > 0 && !strcmp(v[at], want), "case %d: %s, not %s", c, at > 0 ? v[at] : "none",
                  want);
        cr_expect(dl > 0 && !strcmp(v[dl], d), "case %d: the delimiter passed as %s, not %s", c,
                  dl > 0 ? v[dl] : "none", d);
        cr_expect_eq(x, 0, "case %d: -x beside the list", c);
        ct_libmod_argv_free(v);
    }
    /* a delimiter in the ranks' variables (':' in the address rank 0 reports to) or the site's
     * list: another, passed on; one of more than one character (Open MPI then ignores the
     * list, and its jobs get none of it): the ranks' with ';' alone */
    static const char *const odd[][3] = {
        {":", "B=2:C=,;",
         "COLLTUNE_LIB_RANK=ompi|COLLTUNE_LIB_NOTIFY=H:1#t|COLLTUNE_CORES=0|B=2|C=,;"},
        {"ab", "BabC=2", "COLLTUNE_LIB_RANK=ompi;COLLTUNE_LIB_NOTIFY=H:1#t;COLLTUNE_CORES=0"}};
    for (int c = 0; c < 2; c++) {
        setenv("OMPI_MCA_mca_base_env_list", odd[c][1], 1);
        setenv("OMPI_MCA_mca_base_env_list_delimiter", odd[c][0], 1);
        char **v = ct_libmod_argv(m, 2, "h1,h2", false, "H:1#t", "prog", 0, NULL);
        const char *list = NULL, *delim = NULL;
        for (int i = 1; v[i] && v[i + 1]; i++)
            if (!strcmp(v[i - 1], "--mca") && !strcmp(v[i], "mca_base_env_list"))
                list = v[i + 1];
            else if (!strcmp(v[i - 1], "--mca") && !strcmp(v[i], "mca_base_env_list_delimiter"))
                delim = v[i + 1];
        cr_expect(list && !strcmp(list, odd[c][2]), "delimiter %s: %s, not %s", odd[c][0],
                  list ? list : "none", odd[c][2]);
        cr_expect(delim && !strcmp(delim, c ? ";" : "|"), "delimiter %s: passed as %s", odd[c][0],
                  delim ? delim : "none");
        ct_libmod_argv_free(v);
    }
    stand_ins_gone(dir);
}

/* glibc's allocator variables (a launch setting of either library, read by the ranks' C
 * library): Open MPI's launcher is told to pass them (-x, or in a site's env list), as it
 * passes no variable but its own to other hosts; hydra passes its whole environment. */
Test(libmod, glibc_s_allocator_variables_ride_with_the_ranks)
{
    const struct ct_libmod *m = ct_libmod_find("ompi"), *h = ct_libmod_find("mpich");
    struct ct_err err = {0};
    cr_expect_eq(ct_libmod_env_check(m, "MALLOC_MMAP_MAX_", "0", &err), 0, "%s", err.msg);
    cr_expect_eq(ct_libmod_env_check(h, "MALLOC_TRIM_THRESHOLD_", "4294967296", &err), 0, "%s",
                 err.msg);
    cr_expect_eq(ct_libmod_env_check(m, "MALLOC_CHECK_", "3", &err), CT_EINVAL);
    cr_expect_eq(ct_libmod_env_check(m, "MALLOC_MMAP_MAX", "0", &err), CT_EINVAL);
    /* GLIBC_TUNABLES with the allocator's tunables alone */
    cr_expect_eq(ct_libmod_env_check(m, "GLIBC_TUNABLES", "glibc.malloc.hugetlb=1", &err), 0, "%s",
                 err.msg);
    cr_expect_eq(ct_libmod_env_check(h, "GLIBC_TUNABLES",
                                     "glibc.malloc.hugetlb=1:glibc.malloc.arena_max=2", &err),
                 0, "%s", err.msg);
    const char *bad[] = {"glibc.cpu.hwcaps=-AVX2", "glibc.malloc.hugetlb=1:glibc.rtld.nns=2",
                         "glibc.malloc.hugetlb",   "glibc.malloc.=1",
                         "glibc.malloc.hugetlb=",  "glibc.malloc.hugetlb=1:",
                         ":glibc.malloc.hugetlb=1"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        cr_expect_eq(ct_libmod_env_check(m, "GLIBC_TUNABLES", bad[i], &err), CT_EINVAL, "%s",
                     bad[i]);
        cr_expect(strstr(err.msg, "only the allocator's tunables"), "%s: %s", bad[i], err.msg);
    }
    cr_expect(ct_libmod_env_same(h, "MALLOC_MMAP_MAX_", "MALLOC_MMAP_MAX_"));
    cr_expect(!ct_libmod_env_same(h, "MALLOC_MMAP_MAX_", "MALLOC_TOP_PAD_"));
    char name[64];
    ct_libmod_env_winning(h, "MALLOC_TOP_PAD_", name, sizeof name);
    cr_expect_str_eq(name, "MALLOC_TOP_PAD_");
    unsetenv("OMPI_MCA_mca_base_env_list");
    setenv("OMPI_MCA_mca_base_param_files", "/dev/null", 1); /* no site list */
    setenv("MALLOC_MMAP_MAX_", "0", 1);
    char pad[160], padded[200]; /* the longest value a launch setting may have */
    memset(pad, '0', sizeof pad - 1);
    pad[sizeof pad - 1] = 0;
    setenv("MALLOC_TOP_PAD_", pad, 1);
    snprintf(padded, sizeof padded, "MALLOC_TOP_PAD_=%s", pad);
    setenv("MALLOC_CHECK_", "3", 1); /* not a setting: not passed by colltune */
    setenv("GLIBC_TUNABLES", "glibc.malloc.hugetlb=1", 1);
    for (int c = 0; c < 3; c++) {
        if (c == 1)
            setenv("OMPI_MCA_mca_base_env_list", "A=1", 1);
        char **v = ct_libmod_argv(c == 2 ? h : m, 2, "h1,h2", false, "H:1#t", "prog", 0, NULL);
        int x = 0, p = 0, check = 0, t = 0;
        for (int i = 1; v[i]; i++) {
            x += !strcmp(v[i], "MALLOC_MMAP_MAX_=0") && !strcmp(v[i - 1], "-x");
            t += !strcmp(v[i], "GLIBC_TUNABLES=glibc.malloc.hugetlb=1") && !strcmp(v[i - 1], "-x");
            p += !strcmp(v[i], padded) && !strcmp(v[i - 1], "-x");
            bool list = !strcmp(v[i - 1], "mca_base_env_list");
            x += list && strstr(v[i], ";MALLOC_MMAP_MAX_=0;") && strstr(v[i], ";A=1");
            p += list && strstr(v[i], padded);
            t += list && strstr(v[i], ";GLIBC_TUNABLES=glibc.malloc.hugetlb=1;");
            check += strstr(v[i], "MALLOC_CHECK_") != NULL;
        }
        cr_expect_eq(x, c < 2, "case %d: passed %d times", c, x);
        cr_expect_eq(p, c < 2, "case %d: a value of 159 bytes passed %d times", c, p);
        cr_expect_eq(check, 0, "case %d: MALLOC_CHECK_ passed", c);
        cr_expect_eq(t, c < 2, "case %d: GLIBC_TUNABLES passed %d times", c, t);
        ct_libmod_argv_free(v);
    }
    unsetenv("OMPI_MCA_mca_base_env_list");
    unsetenv("OMPI_MCA_mca_base_param_files");
    unsetenv("MALLOC_MMAP_MAX_");
    unsetenv("MALLOC_TOP_PAD_");
    unsetenv("MALLOC_CHECK_");
    unsetenv("GLIBC_TUNABLES");
}

/* A site whose Open MPI tags or timestamps its ranks' lines (mca-params.conf, or here the
 * environment): the ranks' lines reach colltune as they print them (verify and the search
 * read their tables; every run of theirs failed, "0 of N sizes"). */
Test(libmod, open_mpi_s_ranks_lines_come_untagged)
{
    const struct ct_libmod *m = ct_libmod_find("ompi");
    if (!on_path(m->launcher))
        cr_skip_test("%s not found", m->launcher);
    setenv("OMPI_MCA_orte_tag_output", "1", 1);
    setenv("OMPI_MCA_orte_timestamp_output", "1", 1);
    char *args[] = {"-c", "echo said=here"}, got[2][64];
    bool flag;
    cr_expect_eq(rank_out(m, false, &flag, "/bin/sh", args, "said=%63s", got), 2);
}

/* Open MPI may place more --local ranks than cores (--oversubscribe), but a host list's
 * slots place the ranks: told to oversubscribe, Open MPI 5.0.9's mapper put both ranks of
 * `--host A,B` (or A:1,B:1) on A, one host measured as two. */
Test(libmod, open_mpi_oversubscribes_this_host_only)
{
    const struct ct_libmod *m = ct_libmod_find("ompi");
    for (int hosts = 0; hosts < 2; hosts++) {
        char **v = ct_libmod_argv(m, 2, hosts ? "h1,h2" : NULL, false, NULL, "prog", 0, NULL);
        int over = 0;
        for (int i = 0; v[i]; i++)
            over += !strcmp(v[i], "--oversubscribe");
        cr_expect_eq(over, !hosts, "%s: --oversubscribe %d times", hosts ? "h1,h2" : "local", over);
        ct_libmod_argv_free(v);
    }
}

/* A site that passes variables to Open MPI's ranks with mca_base_env_list (in its
 * mca-params.conf; mpirun refuses -x beside it, and every run failed): the ranks' own variables
 * ride on that list, and the site's still reach them. */
Test(libmod, open_mpi_s_env_list_carries_the_ranks_variables)
{
    const struct ct_libmod *m = ct_libmod_find("ompi");
    if (!on_path(m->launcher))
        cr_skip_test("%s not found", m->launcher);
    char home[] = "/tmp/ct-home-XXXXXX", dir[64], conf[96], want[64], got[2][64];
    cr_assert_not_null(mkdtemp(home));
    snprintf(dir, sizeof dir, "%s/.openmpi", home);
    snprintf(conf, sizeof conf, "%s/mca-params.conf", dir);
    cr_assert_eq(mkdir(dir, 0700), 0);
    FILE *f = fopen(conf, "w");
    cr_assert_not_null(f);
    fputs("mca_base_env_list = CT_SITE=7\n", f);
    fclose(f);
    setenv("HOME", home, 1);
    static const char *const unset[] = {
        "OMPI_MCA_mca_base_env_list", "OMPI_MCA_mca_base_param_files",
        "OMPI_MCA_mca_base_param_file_prefix", "OMPI_MCA_mca_base_envar_file_prefix", CT_CPUS_ENV};
    for (size_t i = 0; i < sizeof unset / sizeof unset[0]; i++)
        unsetenv(unset[i]);
    char *args[] = {"-c", "echo got=$CT_SITE,$" CT_LIBMOD_ENV ",$" CT_CPUS_ENV};
    bool flag;
    int n = rank_out(m, false, &flag, "/bin/sh", args, "got=%63s", got);
    unlink(conf);
    rmdir(dir);
    rmdir(home);
    snprintf(want, sizeof want, "7,ompi,%d", ct_cpus_usable());
    cr_assert_eq(n, 2);
    cr_expect(!strcmp(got[0], want) && !strcmp(got[1], want), "the ranks got %s and %s, not %s",
              got[0], got[1], want);
}

/*
 * The bounded launch (ct_libmod_start): rank 0 says the library started by sending the token
 * of CT_LIBMOD_NOTIFY_ENV; a connection that sends nothing, or another token, does not count
 * and does not hold the wait (a blocking read of it once did), and without the word the
 * launcher is stopped after boot_s.
 */
static pid_t caller(const char *notify, const char *say, double after_s)
{
    pid_t p = fork();
    if (p == 0) {
        usleep((useconds_t)(after_s * 1e6));
        char host[64];
        int port;
        snprintf(host, sizeof host, "%.*s", (int)strcspn(notify, ":"), notify);
        port = atoi(notify + strcspn(notify, ":") + 1);
        if (!say) { /* the library's word, as rank 0 sends it */
            setenv(CT_LIBMOD_NOTIFY_ENV, notify, 1);
            _exit(ct_libmod_notify(NULL) == 0 ? 0 : 1);
        }
        int fd = ct_sock_connect(host, port, ct_now_ns() + 2000000000LL, NULL);
        if (fd >= 0 && *say)
            (void)!write(fd, say, strlen(say));
        sleep(6); /* holds the connection open, saying nothing more */
        _exit(0);
    }
    return p;
}

static int start(const char *cmd, const char *notify_say, double after_s, double boot_s,
                 bool *started, double *secs)
{
    char notify[128];
    struct ct_err err = {0};
    int lfd = ct_libmod_notify_open(NULL, NULL, NULL, notify, sizeof notify, &err);
    cr_assert_geq(lfd, 0, "%s", err.msg);
    cr_assert_eq(strlen(strchr(notify, '#') + 1), CT_LIBMOD_TOKEN_LEN, "%s", notify);
    pid_t c = caller(notify, notify_say, after_s);
    char *v[] = {"/bin/sh", "-c", (char *)cmd, NULL};
    struct ct_libmod_end how;
    int64_t t0 = ct_now_ns();
    int rc = ct_libmod_start(v, lfd, notify, boot_s, NULL, STDERR_FILENO, &how, &err);
    *started = how.started;
    *secs = (double)(ct_now_ns() - t0) * 1e-9;
    close(lfd);
    kill(c, SIGKILL);
    waitpid(c, NULL, 0);
    return rc;
}

Test(libmod, the_word_of_rank_0_counts)
{
    bool started;
    double secs;
    int rc = start("sleep 1", NULL, 0.2, 10, &started, &secs);
    cr_expect_eq(rc, 0);
    cr_expect(started, "the token sent by ct_libmod_notify was not taken");
}

Test(libmod, a_silent_connection_neither_counts_nor_holds_the_wait)
{
    bool started;
    double secs;
    int rc = start("exec sleep 30", "", 0.1, 1.0, &started, &secs);
    cr_expect_eq(rc, CT_ETIMEDOUT);
    cr_expect(!started);
    cr_expect_lt(secs, 4.0, "the wait took %.1f s", secs);
}

Test(libmod, another_token_does_not_count)
{
    bool started;
    double secs;
    int rc = start("exec sleep 30", "0123456789abcdef", 0.1, 1.0, &started, &secs);
    cr_expect_eq(rc, CT_ETIMEDOUT);
    cr_expect(!started);
}

/* The pids a launcher stand-in wrote to path, one a line; how many of them still run (a
 * zombie, ended and waiting for init, does not). */
static int still_running(const char *path, int *n)
{
    FILE *f = fopen(path, "r");
    int pid, alive = 0;
    *n = 0;
    while (f && fscanf(f, "%d", &pid) == 1) {
        char st = ct_proc_state(pid), proc[64], comm[32] = "";
        snprintf(proc, sizeof proc, "/proc/%d/comm", pid);
        FILE *c = fopen(proc, "r");
        if (c) {
            (void)!fgets(comm, sizeof comm, c);
            fclose(c);
        }
        bool ours = !strcmp(comm, "sleep\n"); /* not a later process with its pid */
        (*n)++;
        alive += ours && st && st != 'Z';
        if (ours && st && st != 'Z')
            kill(pid, SIGKILL); /* the next test's machine as it found it */
    }
    if (f)
        fclose(f);
    return alive;
}

/*
 * A launcher stopped after boot_s leaves nothing it started running on this host: one that
 * ends on SIGTERM without its children (orphans, init's once it has ended), one that ignores
 * SIGTERM, as do its children (ended by SIGKILL after 5 s), and one whose child goes on
 * starting processes (each 20 ms) while it is being stopped.
 */
Test(libmod, a_stopped_launcher_leaves_nothing_it_started_running, .timeout = 60)
{
    static const char *const cmds[] = {
        "sleep 300 & echo $! >%s; (sleep 300 & echo $! >>%s; wait) & exec sleep 300",
        "trap '' TERM; sleep 300 & echo $! >%s; (sleep 300 & echo $! >>%s; wait) & wait",
        "sleep 300 & echo $! >%s; (while :; do sleep 300 & echo $! >>%s; sleep 0.02; done) & "
        "exec sleep 300"};
    for (int c = 0; c < 3; c++) {
        char path[] = "/tmp/ct-kin-XXXXXX", cmd[512];
        int fd = mkstemp(path);
        cr_assert_geq(fd, 0);
        close(fd);
        snprintf(cmd, sizeof cmd, cmds[c], path, path);
        bool started;
        double secs;
        int rc = start(cmd, "", 0.1, 0.5, &started, &secs);
        cr_expect_eq(rc, CT_ETIMEDOUT);
        int n, alive = still_running(path, &n);
        unlink(path);
        cr_expect(c == 2 ? n > 2 : n == 2, "launcher %d: the stand-in wrote %d pids", c, n);
        cr_expect_eq(alive, 0, "launcher %d (%s): %d of its children left running", c,
                     c == 1 ? "ignores SIGTERM"
                     : c    ? "a child starting more"
                            : "ends on SIGTERM",
                     alive);
        cr_expect_lt(secs, c == 1 ? 9.0 : 4.0, "launcher %d: stopped in %.1f s", c, secs);
    }
}

/* The launcher's standard error passes on to err_fd, less mpirun's box about a nonzero exit,
 * and a child of the launcher's that holds the pipe open, writing on, does not hold the wait
 * more than 2 s past the launcher's end (the child ends by itself after 10 s: no .timeout,
 * as a second one in this binary leaks in criterion under ASan). */
Test(libmod, its_standard_error_passes_and_a_child_holding_it_does_not_hold_the_wait)
{
    static const char *const d =
        "--------------------------------------------------------------------------";
    char path[] = "/tmp/ct-err-XXXXXX", pids[] = "/tmp/ct-pid-XXXXXX", cmd[1024], notify[128];
    int fd = mkstemp(path), pf = mkstemp(pids);
    cr_assert(fd >= 0 && pf >= 0);
    close(pf);
    snprintf(cmd, sizeof cmd,
             "echo said >&2; echo %s >&2; echo 'Primary job  terminated normally, but 1 process "
             "returned' >&2; echo %s >&2; (sleep 0.3; i=0; while [ $i -lt 50 ]; do echo on >&2; "
             "sleep 0.2; i=$((i + 1)); done) & echo $! >%s; exit 1",
             d, d, pids);
    struct ct_err err = {0};
    int lfd = ct_libmod_notify_open(NULL, NULL, NULL, notify, sizeof notify, &err);
    cr_assert_geq(lfd, 0, "%s", err.msg);
    char *v[] = {"/bin/sh", "-c", cmd, NULL};
    struct ct_libmod_end how;
    int64_t t0 = ct_now_ns();
    int rc = ct_libmod_start(v, lfd, notify, 10, NULL, fd, &how, &err);
    double secs = (double)(ct_now_ns() - t0) * 1e-9;
    close(lfd);
    FILE *f = fopen(pids, "r");
    int pid = 0;
    if (f && fscanf(f, "%d", &pid) == 1 && pid > 0)
        kill(pid, SIGKILL);
    if (f)
        fclose(f);
    unlink(pids);
    char got[4096] = "";
    ssize_t n = pread(fd, got, sizeof got - 1, 0);
    got[n > 0 ? n : 0] = 0;
    close(fd);
    unlink(path);
    cr_expect_eq(rc, 1);
    cr_expect(how.said && !how.ours && !how.started);
    cr_expect(!strncmp(got, "said\non\n", 8), "%s", got);
    cr_expect_null(strstr(got, "Primary job"), "%s", got);
    cr_expect_null(strstr(got, "-----"), "%s", got);
    cr_expect_lt(secs, 4.0, "waited %.1f s", secs);
}

/* MPICH reads MPIR_CVAR_X, MPICH_X and MPIR_PARAM_X as one variable, the last one read
 * winning: a value put under one name leaves no other for the ranks to inherit, and a name
 * that only ends like it (no prefix of MPICH's) is not touched. */
Test(libmod, one_variable_under_one_name)
{
    const struct ct_libmod *m = ct_libmod_find("mpich");
    setenv("MPICH_CT_TEST_LIMIT", "1", 1);
    setenv("MPIR_PARAM_CT_TEST_LIMIT", "2", 1);
    setenv("CT_TEST_LIMIT", "3", 1);
    ct_libmod_env_put(m, "MPIR_CVAR_CT_TEST_LIMIT", "4");
    cr_expect_null(getenv("MPICH_CT_TEST_LIMIT"));
    cr_expect_null(getenv("MPIR_PARAM_CT_TEST_LIMIT"));
    cr_expect_str_eq(getenv("MPIR_CVAR_CT_TEST_LIMIT"), "4");
    cr_expect_str_eq(getenv("CT_TEST_LIMIT"), "3", "not MPICH's variable");
    setenv("MPICH_CT_TEST_LIMIT", "1", 1);
    ct_libmod_env_put(m, "MPIR_CVAR_CT_TEST_LIMIT", NULL); /* the defaults' side */
    cr_expect_null(getenv("MPICH_CT_TEST_LIMIT"));
    cr_expect_null(getenv("MPIR_CVAR_CT_TEST_LIMIT"));
    const struct ct_libmod *o = ct_libmod_find("ompi"); /* one prefix: the name alone */
    setenv("OMPI_MCA_ct_test_limit", "5", 1);
    ct_libmod_env_put(o, "OMPI_MCA_ct_test_limit", NULL);
    cr_expect_null(getenv("OMPI_MCA_ct_test_limit"));
    unsetenv("CT_TEST_LIMIT");
}

/* --env-search NAME: the library's own value of NAME, as its own program lists it (Open MPI's
 * ompi_info, MPICH's mpivars), whatever this environment sets, and the values spaced around
 * it; a value that is no number to space around, and a name the program does not list, are
 * one line each. */
static void own_value(const char *lib, const char *name, const char *other)
{
    const struct ct_libmod *m = ct_libmod_find(lib);
    char prog[64], d[64], list[128], want[128];
    snprintf(prog, sizeof prog, "%.*s", (int)strcspn(m->info, " "), m->info);
    if (!on_path(prog))
        cr_skip_test("%s is not installed", prog);
    struct ct_err err = {0};
    if (ct_libmod_env_default(m, name, d, sizeof d, &err) == CT_EINVAL)
        cr_skip_test("this %s has no %s (another version or build)", m->title, name);
    setenv(name, "3", 1); /* this environment's, not the library's own */
    setenv(other, "5", 1);
    cr_assert_eq(ct_libmod_env_around(m, name, list, sizeof list, d, sizeof d, &err), 0, "%s",
                 err.msg);
    cr_expect_null(getenv(name));
    cr_expect_null(getenv(other));
    unsigned long long v = strtoull(d, NULL, 10);
    cr_assert(v >= 2 && strcmp(d, "3") && strcmp(d, "5"), "%s: %s", name, d);
    snprintf(want, sizeof want, "%llu,%llu,%llu,%llu", v / 2, 2 * v, 4 * v, 8 * v);
    cr_expect_str_eq(list, want);
}

Test(libmod, open_mpi_s_own_value_spaced)
{
    own_value("ompi", "OMPI_MCA_btl_vader_eager_limit", "OMPI_MCA_btl_vader_eager_limit");
    const struct ct_libmod *m = ct_libmod_find("ompi");
    char d[64], list[128];
    struct ct_err err = {0};
    cr_expect_eq(ct_libmod_env_default(m, "OMPI_MCA_btl_no_such_limit", d, sizeof d, &err),
                 CT_EINVAL);
    cr_expect(strstr(err.msg, "ompi_info does not list OMPI_MCA_btl_no_such_limit"), "%s", err.msg);
    int rc =
        ct_libmod_env_default(m, "OMPI_MCA_btl_vader_single_copy_mechanism", d, sizeof d, &err);
    if (rc == CT_EINVAL && strstr(err.msg, "does not list")) /* Open MPI 5 renamed vader */
        cr_skip_test("this Open MPI has no btl_vader_single_copy_mechanism: %s", err.msg);
    cr_assert_eq(rc, 0, "%s", err.msg);
    cr_expect_eq(ct_libmod_env_around(m, "OMPI_MCA_btl_vader_single_copy_mechanism", list,
                                      sizeof list, d, sizeof d, &err),
                 CT_EINVAL, "a name (%s), not a number", d);
    cr_expect(strstr(err.msg, "not a whole number"), "%s", err.msg);
}

/* The library's own value is read from the launcher's installation, not from another
 * library's ompi_info first on PATH (a site's module): a stand-in ompi_info ahead of the
 * launcher's folder says 999; beside Debian's mpirun.openmpi Debian's is read (in a child,
 * first: the launcher chosen is kept per process), and beside a site's plain mpirun
 * (stand-ins) the one there, 777. */
Test(libmod, the_own_value_comes_from_the_launcher_s_installation)
{
    static const char *const site[][2] = {
        {"mpirun", "mpirun (Open MPI) 4.1.4"},
        {"ompi_info", "mca:btl:vader:param:btl_vader_eager_limit:value:777"}};
    static const char *const other[][2] = {
        {"ompi_info", "mca:btl:vader:param:btl_vader_eager_limit:value:999"}};
    const char *name = "OMPI_MCA_btl_vader_eager_limit";
    const struct ct_libmod *m = ct_libmod_find("ompi");
    char a[] = "/tmp/ct-bin-XXXXXX", b[] = "/tmp/ct-bin-XXXXXX", path[128], d[64];
    struct ct_err err = {0};
    bool debian = access("/usr/bin/mpirun.openmpi", X_OK) == 0;
    stand_ins(a, site, 2);
    stand_ins(b, other, 1);
    unsetenv(name);
    if (debian) {
        pid_t p = fork();
        if (p == 0) {
            snprintf(path, sizeof path, "%s:/usr/bin:/bin", b);
            setenv("PATH", path, 1);
            int rc = ct_libmod_env_default(m, name, d, sizeof d, &err);
            _exit(rc || !strcmp(d, "999") || !strcmp(d, "777")); /* a stand-in's */
        }
        int st;
        waitpid(p, &st, 0);
        cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 0, "Debian's ompi_info not read");
    }
    snprintf(path, sizeof path, "%s:%s", b, a);
    setenv("PATH", path, 1);
    cr_expect_eq(ct_libmod_env_default(m, name, d, sizeof d, &err), 0, "%s", err.msg);
    cr_expect_str_eq(d, "777", "the site's mpirun's own ompi_info");
    stand_ins_gone(a);
    stand_ins_gone(b);
}

Test(libmod, mpich_s_own_value_spaced)
{
    own_value("mpich", "MPIR_CVAR_CH4_OFI_MULTI_NIC_STRIPING_THRESHOLD",
              "MPICH_CH4_OFI_MULTI_NIC_STRIPING_THRESHOLD");
    const struct ct_libmod *m = ct_libmod_find("mpich");
    char d[64], list[128];
    struct ct_err err = {0};
    if (ct_libmod_env_default(m, "MPIR_CVAR_CH4_OFI_EAGER_MAX_MSG_SIZE", d, sizeof d, &err) == 0) {
        cr_expect_str_eq(d, "-1", "MPICH's 'the provider says'");
        cr_expect_eq(ct_libmod_env_around(m, "MPIR_CVAR_CH4_OFI_EAGER_MAX_MSG_SIZE", list,
                                          sizeof list, d, sizeof d, &err),
                     CT_EINVAL, "-1: no number to space values around");
    }
    cr_expect_eq(ct_libmod_env_default(m, "MPIR_CVAR_CH4_OFI", d, sizeof d, &err), CT_EINVAL,
                 "a prefix of listed names is not one");
}

/* --env-search's finer step: the midpoints between the best value and its neighbours among
 * the values that ran and the library's own, rounded to a quarter of their power of two. */
Test(libmod, the_values_between_the_best_and_its_neighbours)
{
    static const struct {
        const char *v[4];
        bool ok[4];
        int n, best;
        const char *own;
        int k;
        unsigned long long want[2];
        bool ends[2]; /* nothing below, above */
    } c[] = {
        {{"2048", "8192", "16384", "32768"}, {1, 1, 1, 1}, 4, 2, "4096", 2, {12288, 24576}, {0, 0}},
        {{"2048", "8192", "16384", "32768"}, {1, 1, 1, 1}, 4, 3, "4096", 1, {24576}, {0, 1}},
        /* the library's own, 4096, the neighbour below; nothing above */
        {{"2048", "8192"}, {1, 1}, 2, 1, "4096", 1, {6144}, {0, 1}},
        /* a value that did not run is no neighbour; own not known */
        {{"1", "4096", "65536"}, {0, 1, 1}, 3, 1, NULL, 1, {16384}, {1, 0}},
        {{"1", "4096", "65536"}, {0, 1, 1}, 3, 2, "", 1, {16384}, {0, 1}},
        /* no room between, no neighbour, not a number */
        {{"1", "2"}, {1, 1}, 2, 1, NULL, 0, {0}, {0, 1}},
        {{"3", "4"}, {1, 1}, 2, 1, "2", 0, {0}, {0, 1}},
        {{"8192"}, {1}, 1, 0, "auto", 0, {0}, {1, 1}},
        {{"sm", "cma"}, {1, 1}, 2, 0, "cma", 0, {0}, {0, 0}},
        {{"100", "1000"}, {1, 1}, 2, 0, "10", 2, {32, 320}, {0, 0}},
        /* 0 a neighbour (no whole number between); a midpoint that is a value that failed */
        {{"0", "4096"}, {1, 1}, 2, 1, NULL, 0, {0}, {0, 1}},
        {{"4096", "6144", "8192"}, {1, 0, 1}, 3, 0, NULL, 0, {0}, {1, 0}},
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        unsigned long long out[2] = {0};
        bool ends[2] = {1, 1};
        int k =
            ct_libmod_env_between(c[i].v, c[i].ok, c[i].n, c[i].best, c[i].own, false, out, ends);
        cr_expect_eq(k, c[i].k, "case %zu: %d value(s)", i, k);
        cr_expect(ends[0] == c[i].ends[0] && ends[1] == c[i].ends[1], "case %zu: ends %d %d", i,
                  ends[0], ends[1]);
        for (int j = 0; j < k && j < c[i].k; j++)
            cr_expect_eq(out[j], c[i].want[j], "case %zu: %llu", i, out[j]);
    }
}

/* With the values spaced by the tool (past), a best at an end also takes the next value past
 * it, twice or half it, where that was not judged already (a value that failed). */
Test(libmod, a_spaced_search_goes_one_value_past_its_end)
{
    const char *v[] = {"2048", "8192", "16384", "32768", "65536"};
    const bool ok[] = {1, 1, 1, 1, 0};
    unsigned long long out[2] = {0};
    bool ends[2];
    cr_expect_eq(ct_libmod_env_between(v, ok, 4, 3, "4096", true, out, ends), 2);
    cr_expect(out[0] == 24576 && out[1] == 65536 && !ends[0] && ends[1], "%llu %llu", out[0],
              out[1]);
    cr_expect_eq(ct_libmod_env_between(v, ok, 4, 3, "4096", false, out, ends), 1, "not spaced");
    cr_expect_eq(ct_libmod_env_between(v, ok, 4, 0, "4096", true, out, ends), 2);
    cr_expect(out[0] == 1024 && out[1] == 3072 && ends[0] && !ends[1], "%llu %llu", out[0], out[1]);
    cr_expect_eq(ct_libmod_env_between(v, ok, 5, 3, "4096", true, out, ends), 1,
                 "65536 failed: not judged again");
    cr_expect_eq(out[0], 24576);
    const char *one[] = {"1"};
    cr_expect_eq(ct_libmod_env_between(one, ok, 1, 0, NULL, true, out, ends), 1, "no half of 1");
    cr_expect_eq(out[0], 2);
}

/* The launcher's standard output passes through colltune's own: whole, to a file; a write
 * that fails there (a full disk) is said in how.out_errno, the launcher still waited for. */
Test(libmod, the_launchers_output_passes_through)
{
    char path[] = "/tmp/ct-out-XXXXXX", notify[128];
    int fd = mkstemp(path), saved = dup(STDOUT_FILENO);
    cr_assert(fd >= 0 && saved >= 0);
    struct ct_err err = {0};
    char *v[] = {"/bin/sh", "-c", "seq 1 20000; exit 3", NULL};
    struct ct_libmod_end how;
    for (int full = 0; full < 2; full++) {
        int lfd = ct_libmod_notify_open(NULL, NULL, NULL, notify, sizeof notify, &err);
        cr_assert_geq(lfd, 0, "%s", err.msg);
        int out = full ? open("/dev/full", O_WRONLY) : fd;
        cr_assert_geq(out, 0);
        fflush(stdout);
        dup2(out, STDOUT_FILENO);
        int rc = ct_libmod_start(v, lfd, notify, 10, NULL, STDERR_FILENO, &how, &err);
        dup2(saved, STDOUT_FILENO);
        close(lfd);
        if (full)
            close(out);
        cr_expect_eq(rc, 3, "the launcher's own code");
        cr_expect_eq(how.out_errno, full ? ENOSPC : 0, "%s", strerror(how.out_errno));
    }
    struct stat st;
    cr_assert_eq(fstat(fd, &st), 0);
    cr_expect_eq(st.st_size, 108894, "every line of seq 1 20000: %lld bytes",
                 (long long)st.st_size);
    close(fd);
    close(saved);
    unlink(path);
}
