/* SPDX-License-Identifier: MIT */
/* backend/libshm.c: the launch settings that leave Open MPI's shared-memory segment too small
 * for the fragments its transport carves at MPI_Init (then the ranks of a host talk over TCP).
 * The rule's arithmetic; the check over the real ompi_info's own values, this environment's,
 * the settings', and the values a search gives; a setting that unsets a variable (a verify's
 * defaults' side, a searched variable); the transports a job selects (OMPI_MCA_btl: a
 * setting's, this environment's, a site's parameter file's). That the rule's edge is Open MPI's own
 * is tested against the real library in tests/cli/t3102-lib-shm-segment.sh. */
#include <criterion/criterion.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend/libmod.h"
#include "tune/libverify.h"

#define EAGER "OMPI_MCA_btl_vader_eager_limit"
#define SEG "OMPI_MCA_btl_vader_segment_size"

Test(libshm, need)
{
    unsigned long long v[CT_LIBMOD_SHM_VARS] = {0};
    v[CT_SHM_SEGMENT] = 4194304; /* Open MPI 4.1.4's own values (CMA) */
    v[CT_SHM_EAGER] = 4096;
    v[CT_SHM_MAX_SEND] = 32768;
    v[CT_SHM_INLINE] = 256;
    v[CT_SHM_FREE_LIST] = 8;
    v[CT_SHM_FREE_LIST_MAX] = 512;
    unsigned long long own = ct_libmod_shm_need(v);
    cr_expect_eq(own, 8 * (4352 + 33024 + 512) + 128ULL); /* size + 256, to 64 bytes */
    cr_expect_lt(own, v[CT_SHM_SEGMENT], "its own values fit its own segment");
    v[CT_SHM_EAGER] = 1048576; /* measured: 8 MiB does not start, 9 MiB does */
    cr_expect_gt(ct_libmod_shm_need(v), 8388608ULL);
    cr_expect_leq(ct_libmod_shm_need(v), 9437184ULL);
    v[CT_SHM_XPMEM] = 1; /* no max-send list beside XPMEM */
    cr_expect_eq(ct_libmod_shm_need(v), 8 * (1048832 + 512) + 128ULL);
    v[CT_SHM_FREE_LIST] = 16; /* each list counts free_list_num fragments ... */
    cr_expect_gt(ct_libmod_shm_need(v), 16 * 1048576ULL);
    v[CT_SHM_FREE_LIST_MAX] = 8; /* ... at most free_list_max */
    cr_expect_eq(ct_libmod_shm_need(v), 8 * (1048832 + 512) + 128ULL);
    v[CT_SHM_FREE_LIST] = v[CT_SHM_FREE_LIST_MAX] = v[CT_SHM_EAGER] = 1ULL << 40;
    cr_expect_eq(ct_libmod_shm_need(v), ULLONG_MAX, "saturates, does not wrap");
    unsigned long long x;
    cr_expect(!ct_libmod_shm_size("1m", &x) && x == 1048576);
    cr_expect(!ct_libmod_shm_size("0x10000", &x) && x == 65536);
    cr_expect(!ct_libmod_shm_size("2K", &x) && x == 2048);
    cr_expect(!ct_libmod_shm_size("9999999999999g", &x) && x == 1ULL << 40, "capped");
    cr_expect_eq(ct_libmod_shm_size("1mb", &x), -1);
    cr_expect_eq(ct_libmod_shm_size("-1", &x), -1);
    cr_expect_eq(ct_libmod_shm_size("", &x), -1);
    cr_expect_eq(ct_libmod_shm_size("big", &x), -1);
}

/* Open MPI 4.1.4's vader with its own values (CMA), whatever this environment sets: else
 * skipped (another version, an XPMEM build or a site's parameter files set others) */
static const struct ct_libmod *open_mpi(void)
{
    const struct ct_libmod *m = ct_libmod_find("ompi");
    for (int i = 0; i < 7; i++) /* nothing inherited: each test sets what it judges */
        unsetenv((const char *[]){SEG, EAGER, "OMPI_MCA_btl_vader_max_send_size",
                                  "OMPI_MCA_btl_vader_max_inline_send",
                                  "OMPI_MCA_btl_vader_free_list_num",
                                  "OMPI_MCA_btl_vader_free_list_max", "OMPI_MCA_btl"}[i]);
    static const char *const own[][2] = {{SEG, "4194304"},
                                         {EAGER, "4096"},
                                         {"OMPI_MCA_btl_vader_max_send_size", "32768"},
                                         {"OMPI_MCA_btl_vader_max_inline_send", "256"},
                                         {"OMPI_MCA_btl_vader_free_list_num", "8"},
                                         {"OMPI_MCA_btl_vader_free_list_max", "512"},
                                         {"OMPI_MCA_btl_vader_single_copy_mechanism", "cma"}};
    const char *names[7];
    char val[7][CT_LIBMOD_DVAL];
    bool listed[7];
    struct ct_err err = {0};
    if (system("command -v ompi_info >/dev/null 2>&1"))
        cr_skip_test("ompi_info is not installed");
    for (int i = 0; i < 7; i++)
        names[i] = own[i][0];
    if (ct_libmod_env_defaults(m, names, 7, val, listed, &err))
        cr_skip_test("%s", err.msg);
    for (int i = 0; i < 7; i++)
        if (!listed[i] || strcmp(val[i], own[i][1]))
            cr_skip_test("this Open MPI's %s is '%s', not 4.1.4's %s", own[i][0], val[i],
                         own[i][1]);
    return m;
}

Test(libshm, settings_against_the_segment)
{
    const struct ct_libmod *m = open_mpi();
    struct ct_libmod_shm c = {0};
    struct ct_err err = {0};
    const char *n1[] = {EAGER}, *big[] = {"1048576"}, *small[] = {"65536"}, *mib[] = {"1m"};
    cr_expect_eq(ct_libmod_shm_fits(m, &c, n1, small, 1, &err), 0, "%s", err.msg);
    cr_expect_eq(ct_libmod_shm_fits(m, &c, n1, big, 1, &err), CT_EINVAL);
    cr_expect(strstr(err.msg, EAGER "=1048576: ") && strstr(err.msg, "(" SEG "=4194304)") &&
                  strstr(err.msg, "set " SEG "=9437184 beside it") && !strchr(err.msg, '\n'),
              "%s", err.msg);
    cr_expect_eq(ct_libmod_shm_fits(m, &c, n1, mib, 1, &err), CT_EINVAL,
                 "1m, as Open MPI reads it");
    const char *n2[] = {EAGER, SEG}, *at8[] = {"1048576", "8388608"},
               *at9[] = {"1048576", "9437184"};
    cr_expect_eq(ct_libmod_shm_fits(m, &c, n2, at8, 2, &err), CT_EINVAL);
    cr_expect(strstr(err.msg, SEG "=8388608: "), "the last one named: %s", err.msg);
    err.msg[0] = 0;
    cr_expect_eq(ct_libmod_shm_fits(m, &c, n2, at9, 2, &err), 0, "%s", err.msg);
    /* a segment under 2 MiB is raised to it: Open MPI's own fragments fit 262144 */
    const char *n0[] = {SEG}, *segs[] = {"262144"};
    cr_expect_eq(ct_libmod_shm_fits(m, &c, n0, segs, 1, &err), 0, "%s", err.msg);
    const char *half[] = {"524288", "2097152"}; /* the segment named last: "set it" */
    cr_expect_eq(ct_libmod_shm_fits(m, &c, n2, half, 2, &err), CT_EINVAL);
    cr_expect(strstr(err.msg, SEG "=2097152: ") && strstr(err.msg, "set " SEG "=5242880") &&
                  !strstr(err.msg, "beside"),
              "%s", err.msg);
    /* free_list_num fragments of each list, at most free_list_max */
    const char *nl[] = {"OMPI_MCA_btl_vader_free_list_num"}, *n128[] = {"128"};
    cr_expect_eq(ct_libmod_shm_fits(m, &c, nl, n128, 1, &err), CT_EINVAL);
    const char *nlm[] = {"OMPI_MCA_btl_vader_free_list_num", "OMPI_MCA_btl_vader_free_list_max"},
               *capped[] = {"128", "64"};
    cr_expect_eq(ct_libmod_shm_fits(m, &c, nlm, capped, 2, &err), 0, "%s", err.msg);
    /* no segment holds it: refused, and the arithmetic does not wrap */
    const char *huge[] = {"8388608", "1099511627776"}, *nh[] = {nl[0], EAGER};
    cr_expect_eq(ct_libmod_shm_fits(m, &c, nh, huge, 2, &err), CT_EINVAL);
    cr_expect(strstr(err.msg, "more than a segment can be"), "%s", err.msg);
    /* the library's own values are read without touching this environment's */
    struct ct_libmod_shm fresh = {0};
    setenv("OMPI_MCA_btl_vader_max_send_size", "65536", 1);
    cr_expect_eq(ct_libmod_shm_fits(m, &fresh, n1, small, 1, &err), 0, "%s", err.msg);
    cr_expect(fresh.asked && getenv("OMPI_MCA_btl_vader_max_send_size") &&
                  !strcmp(getenv("OMPI_MCA_btl_vader_max_send_size"), "65536"),
              "this environment's setting kept");
    cr_expect_eq(fresh.dflt[CT_SHM_MAX_SEND], 32768, "the library's own read beside it");
    unsetenv("OMPI_MCA_btl_vader_max_send_size");
    /* the segment in this environment counts (the ranks inherit it); a setting's own wins */
    setenv(SEG, "33554432", 1);
    cr_expect_eq(ct_libmod_shm_fits(m, &c, n1, big, 1, &err), 0, "%s", err.msg);
    cr_expect_eq(ct_libmod_shm_fits(m, &c, n2, at8, 2, &err), CT_EINVAL);
    unsetenv(SEG);
    /* no setting of the transport's, a name it does not have, a word, another library */
    const char *glibc[] = {"MALLOC_MMAP_MAX_"}, *zero[] = {"0"}, *word[] = {"big"},
               *nx[] = {EAGER "X"};
    cr_expect_eq(ct_libmod_shm_fits(m, &c, glibc, zero, 1, &err), 0);
    cr_expect_eq(ct_libmod_shm_fits(m, &c, nx, big, 1, &err), 0);
    cr_expect_eq(ct_libmod_shm_fits(m, &c, n1, word, 1, &err), 0);
    cr_expect_eq(ct_libmod_shm_fits(ct_libmod_find("mpich"), &c, n1, big, 1, &err), 0);
    /* Open MPI 5's name on 4.1.4: not listed there, not judged */
    const char *n5[] = {"OMPI_MCA_btl_sm_eager_limit"};
    cr_expect_eq(ct_libmod_shm_fits(m, &c, n5, big, 1, &err), 0, "%s", err.msg);
}

/* sweep's check: the --env settings alone, then each value a search gives beside them */
Test(libshm, each_searched_value_beside_the_settings)
{
    const struct ct_libmod *m = open_mpi();
    struct ct_lib_env env[1] = {{SEG, "16777216"}}, s[1] = {{EAGER, "65536,1048576"}};
    struct ct_err err = {0};
    const char *by;
    cr_expect_eq(ct_lib_env_fits(m, env, 1, s, 1, &by, &err), 0, "%s", err.msg);
    snprintf(s[0].value, sizeof s[0].value, "65536,2097152");
    cr_expect_eq(ct_lib_env_fits(m, env, 1, s, 1, &by, &err), CT_EINVAL);
    cr_expect(by && !strcmp(by, "--env-search") && strstr(err.msg, EAGER "=2097152: ") &&
                  strstr(err.msg, SEG "=17825792"),
              "%s", err.msg);
    cr_expect_eq(ct_lib_env_fits(m, env, 0, s, 1, &by, &err), CT_EINVAL, "without the segment");
    struct ct_lib_env e2[1] = {{EAGER, "1048576"}}, s2[1] = {{SEG, "16777216,4194304"}};
    cr_expect_eq(ct_lib_env_fits(m, e2, 1, s2, 0, &by, &err), CT_EINVAL);
    cr_expect(by && !strcmp(by, "--env") && strstr(err.msg, EAGER "=1048576: "),
              "the setting's own: %s", err.msg);
    cr_expect_eq(ct_lib_env_fits(m, e2, 0, s2, 1, &by, &err), 0, "%s", err.msg);
    cr_expect_eq(ct_lib_env_fits(m, e2, 1, s2, 1, &by, &err), CT_EINVAL);
    s[0].value[0] = 0; /* NAME alone: its values are found later, around its own */
    cr_expect_eq(ct_lib_env_fits(m, env, 0, s, 1, &by, &err), 0);
    /* no setting, the environment's eager limit (run --lib, a config's verify): named as it */
    setenv(EAGER, "1048576", 1);
    cr_expect_eq(ct_lib_env_fits(m, env, 0, s, 0, &by, &err), CT_EINVAL);
    cr_expect(!by && strstr(err.msg, EAGER "=1048576 (this environment's"), "%s", err.msg);
    cr_expect_eq(ct_lib_env_fits(m, env, 1, s, 0, &by, &err), 0, "a config's segment holds it");
    unsetenv(EAGER);
}

/* this environment's settings alone are judged, and where the job leaves the transport out
 * (OMPI_MCA_btl), nothing is */
Test(libshm, the_environment_and_the_transports_selected)
{
    const struct ct_libmod *m = open_mpi();
    struct ct_libmod_shm c = {0};
    struct ct_err err = {0};
    const char *glibc[] = {"MALLOC_MMAP_MAX_"}, *zero[] = {"0"};
    cr_expect_eq(ct_libmod_shm_fits(m, &c, glibc, zero, 1, &err), 0, "nothing set");
    cr_expect(!c.asked, "the library's list not run for nothing");
    setenv(EAGER, "1048576", 1);
    cr_expect_eq(ct_libmod_shm_fits(m, &c, glibc, zero, 1, &err), CT_EINVAL);
    cr_expect(c.named < 0 && strstr(err.msg, EAGER "=1048576 (this environment's") &&
                  strstr(err.msg, "set " SEG "=9437184 beside it"),
              "%s", err.msg);
    cr_expect_eq(ct_libmod_shm_fits(m, &c, NULL, NULL, 0, &err), CT_EINVAL, "no settings at all");
    const char *n0[] = {SEG}, *at9[] = {"9437184"};
    cr_expect_eq(ct_libmod_shm_fits(m, &c, n0, at9, 1, &err), 0, "%s", err.msg);
    setenv(SEG, "9437184", 1);
    cr_expect_eq(ct_libmod_shm_fits(m, &c, NULL, NULL, 0, &err), 0, "%s", err.msg);
    unsetenv(SEG);
    /* unset by a setting (NULL: the search and verify's defaults' side unset it) */
    const char *ne[] = {EAGER}, *unset[] = {NULL};
    cr_expect_eq(ct_libmod_shm_fits(m, &c, ne, unset, 1, &err), 0, "%s", err.msg);
    /* the transport left out: a list without it, or excluding it ("^", as Open MPI reads any
     * number of them); 4.1.4's "sm" is a component of its own that starts nothing, not vader */
    const char *out[] = {"self,tcp", "^vader", "self,sm,tcp", "tcp", "^^vader"},
               *in[] = {"self,vader", "^tcp", "^tcp,sm", "vader", "^sm"};
    for (size_t i = 0; i < sizeof out / sizeof out[0]; i++) {
        setenv("OMPI_MCA_btl", out[i], 1);
        cr_expect_eq(ct_libmod_shm_fits(m, &c, NULL, NULL, 0, &err), 0, "btl=%s", out[i]);
        setenv("OMPI_MCA_btl", in[i], 1);
        cr_expect_eq(ct_libmod_shm_fits(m, &c, NULL, NULL, 0, &err), CT_EINVAL, "btl=%s", in[i]);
    }
    const char *nb[] = {"OMPI_MCA_btl"}, *tcp[] = {"self,tcp"}, *vader[] = {"vader,self"};
    cr_expect_eq(ct_libmod_shm_fits(m, &c, nb, tcp, 1, &err), 0, "a setting's list wins");
    unsetenv("OMPI_MCA_btl");
    cr_expect_eq(ct_libmod_shm_fits(m, &c, nb, vader, 1, &err), CT_EINVAL);
    /* a site's parameter file that leaves it out: read where it would be refused */
    char path[] = "/tmp/ct-libshm-XXXXXX";
    int fd = mkstemp(path);
    cr_assert(fd >= 0 && write(fd, "btl = self,tcp\n", 15) == 15);
    close(fd);
    setenv("OMPI_MCA_mca_base_param_files", path, 1);
    struct ct_libmod_shm site = {0};
    cr_expect_eq(ct_libmod_shm_fits(m, &site, NULL, NULL, 0, &err), 0, "%s", err.msg);
    cr_expect_str_eq(site.select, "self,tcp");
    cr_expect_eq(ct_libmod_shm_fits(m, &site, nb, vader, 1, &err), CT_EINVAL, "a setting's wins");
    unlink(path);
}

/* a config's verify, both sides: this environment's value of a variable the config sets does
 * not reach the ranks (each side sets it or unsets it); nor does a searched variable's */
Test(libshm, what_a_side_unsets)
{
    const struct ct_libmod *m = open_mpi();
    struct ct_err err = {0};
    const char *by;
    setenv(EAGER, "1048576", 1);
    struct ct_lib_env s[1] = {{EAGER, "65536,131072"}};
    struct ct_librules cfg = {.nenv = 1, .env = {{EAGER, "4096"}}};
    bool theirs;
    cr_expect_eq(ct_lib_config_fits(m, &cfg, &theirs, &err), 0, "%s", err.msg);
    cfg.env[0] = (struct ct_lib_env){SEG, "9437184"}; /* side A holds it, B does not */
    cr_expect_eq(ct_lib_config_fits(m, &cfg, &theirs, &err), CT_EINVAL);
    cr_expect(!theirs && strstr(err.msg, EAGER "=1048576 (this environment's") &&
                  strstr(err.msg, "(" SEG "=4194304)"),
              "the defaults' side: %s", err.msg);
    unsetenv(EAGER);
    cfg.env[0] = (struct ct_lib_env){EAGER, "1048576"}; /* side A: its own setting */
    cr_expect_eq(ct_lib_config_fits(m, &cfg, &theirs, &err), CT_EINVAL);
    cr_expect(theirs && strstr(err.msg, EAGER "=1048576: "), "%s", err.msg);
    setenv(EAGER, "1048576", 1);
    cr_expect_eq(ct_lib_env_fits(m, NULL, 0, s, 1, &by, &err), 0, "%s", err.msg);
    struct ct_lib_env s2[2] = {{"OMPI_MCA_btl_vader_max_send_size", "65536"}, {EAGER, ""}};
    cr_expect_eq(ct_lib_env_fits(m, NULL, 0, s2, 2, &by, &err), 0, "%s", err.msg);
    struct ct_lib_env s3[1] = {{"OMPI_MCA_btl_vader_max_send_size", "65536"}};
    cr_expect_eq(ct_lib_env_fits(m, NULL, 0, s3, 1, &by, &err), CT_EINVAL,
                 "the environment's eager limit beside a searched send size");
    cr_expect(by == NULL, "named as this environment's: %s", err.msg);
}
