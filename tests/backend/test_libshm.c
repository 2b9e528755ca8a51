/* SPDX-License-Identifier: MIT */
/* backend/libshm.c: the launch settings that leave Open MPI's shared-memory segment too small
 * for the fragments its transport carves at MPI_Init (then the ranks of a host talk over TCP).
 * The rule's arithmetic; the check over the real ompi_info's own values, this environment's,
 * the settings', and the values a search gives. That the rule's edge is Open MPI's own is
 * tested against the real library in tests/cli/t3102-lib-shm-segment.sh. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/libmod.h"
#include "tune/libverify.h"

#define EAGER "OMPI_MCA_btl_vader_eager_limit"
#define SEG "OMPI_MCA_btl_vader_segment_size"

Test(libshm, need)
{
    unsigned long long v[CT_LIBMOD_SHM_VARS] = {0};
    v[CT_SHM_SEGMENT] = 4194304; /* Open MPI 4.1.4's own values */
    v[CT_SHM_EAGER] = 4096;
    v[CT_SHM_MAX_SEND] = 32768;
    v[CT_SHM_INLINE] = 256;
    v[CT_SHM_FREE_LIST] = 8;
    v[CT_SHM_FBOX_SIZE] = 4096;
    v[CT_SHM_FBOX_MAX] = 32;
    unsigned long long own = ct_libmod_shm_need(v);
    cr_expect_eq(own, 8 * (4096 + 32768 + 256 + 3 * 128) + 32 * 4096 + 4096);
    cr_expect_lt(own, v[CT_SHM_SEGMENT], "its own values fit its own segment");
    v[CT_SHM_EAGER] = 1048576; /* measured: 8 MiB does not start, 9 MiB does */
    cr_expect_gt(ct_libmod_shm_need(v), 8388608ULL);
    cr_expect_leq(ct_libmod_shm_need(v), 9437184ULL);
    v[CT_SHM_FREE_LIST] = 16; /* each fragment size counts free_list_num times */
    cr_expect_gt(ct_libmod_shm_need(v), 16 * 1048576ULL);
}

static const struct ct_libmod *open_mpi(void)
{
    const struct ct_libmod *m = ct_libmod_find("ompi");
    if (system("command -v ompi_info >/dev/null 2>&1"))
        cr_skip_test("ompi_info is not installed");
    unsetenv(EAGER);
    unsetenv(SEG);
    char d[64];
    struct ct_err err = {0};
    if (ct_libmod_env_default(m, SEG, d, sizeof d, &err))
        cr_skip_test("this Open MPI has no vader (5.x names it sm)");
    return m;
}

Test(libshm, settings_against_the_segment)
{
    const struct ct_libmod *m = open_mpi();
    struct ct_libmod_shm c = {0};
    struct ct_err err = {0};
    const char *n1[] = {EAGER}, *big[] = {"1048576"}, *small[] = {"65536"};
    cr_expect_eq(ct_libmod_shm_fits(m, &c, n1, small, 1, &err), 0, "%s", err.msg);
    cr_expect_eq(ct_libmod_shm_fits(m, &c, n1, big, 1, &err), CT_EINVAL);
    cr_expect(strstr(err.msg, EAGER "=1048576") && strstr(err.msg, SEG "=16777216") &&
                  !strchr(err.msg, '\n'),
              "%s", err.msg);
    const char *n2[] = {EAGER, SEG}, *at8[] = {"1048576", "8388608"},
               *at9[] = {"1048576", "9437184"};
    cr_expect_eq(ct_libmod_shm_fits(m, &c, n2, at8, 2, &err), CT_EINVAL);
    err.msg[0] = 0;
    cr_expect_eq(ct_libmod_shm_fits(m, &c, n2, at9, 2, &err), 0, "%s", err.msg);
    const char *segs[] = {"262144"}, *n0[] = {SEG}; /* the segment alone, too small */
    cr_expect_eq(ct_libmod_shm_fits(m, &c, n0, segs, 1, &err), CT_EINVAL);
    cr_expect(strstr(err.msg, SEG "=262144: ") && strstr(err.msg, "set " SEG "=524288") &&
                  !strstr(err.msg, "beside"),
              "%s", err.msg);
    /* the segment in this environment counts (the ranks inherit it); a setting's own wins */
    setenv(SEG, "33554432", 1);
    cr_expect_eq(ct_libmod_shm_fits(m, &c, n1, big, 1, &err), 0, "%s", err.msg);
    cr_expect_eq(ct_libmod_shm_fits(m, &c, n2, at8, 2, &err), CT_EINVAL);
    unsetenv(SEG);
    /* no setting of the transport's, a word, another library: nothing judged */
    const char *glibc[] = {"MALLOC_MMAP_MAX_"}, *zero[] = {"0"}, *word[] = {"big"};
    cr_expect_eq(ct_libmod_shm_fits(m, &c, glibc, zero, 1, &err), 0);
    cr_expect_eq(ct_libmod_shm_fits(m, &c, n1, word, 1, &err), 0);
    cr_expect_eq(ct_libmod_shm_fits(ct_libmod_find("mpich"), &c, n1, big, 1, &err), 0);
}

/* sweep's check: the --env settings alone, then each value a search gives beside them */
Test(libshm, each_searched_value_beside_the_settings)
{
    const struct ct_libmod *m = open_mpi();
    struct ct_lib_env env[1] = {{SEG, "16777216"}}, s[1] = {{EAGER, "65536,1048576"}};
    struct ct_err err = {0};
    cr_expect_eq(ct_lib_env_fits(m, env, 1, s, 1, &err), 0, "%s", err.msg);
    snprintf(s[0].value, sizeof s[0].value, "65536,2097152");
    cr_expect_eq(ct_lib_env_fits(m, env, 1, s, 1, &err), CT_EINVAL);
    cr_expect(strstr(err.msg, EAGER "=2097152") && strstr(err.msg, SEG "=33554432"), "%s", err.msg);
    cr_expect_eq(ct_lib_env_fits(m, env, 0, s, 1, &err), CT_EINVAL, "without the segment");
    s[0].value[0] = 0; /* NAME alone: its values are found later, around its own */
    cr_expect_eq(ct_lib_env_fits(m, env, 0, s, 1, &err), 0);
}
