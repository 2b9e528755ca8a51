/* SPDX-License-Identifier: MIT */
/* Natural order and the sorted folder listing shared by the probe and the NIC monitor. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../lib/file.h"

Test(file, natcmp)
{
    cr_expect_lt(ct_natcmp("mlx5_2", "mlx5_10"), 0);
    cr_expect_gt(ct_natcmp("eth10", "eth9"), 0);
    cr_expect_eq(ct_natcmp("ib0", "ib0"), 0);
    cr_expect_lt(ct_natcmp("ib", "ib0"), 0);
    cr_expect_lt(ct_natcmp("efa_0", "mlx5_0"), 0);
}

Test(file, dir_names_sorted_without_dot_files)
{
    char dir[] = "/tmp/ct-dirnames-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    const char *names[] = {"mlx5_10", ".hidden", "mlx5_2", "eth0"};
    char p[128];
    for (size_t i = 0; i < 4; i++) {
        snprintf(p, sizeof p, "%s/%s", dir, names[i]);
        cr_assert_eq(mkdir(p, 0700), 0);
    }
    char **v;
    size_t n = ct_dir_names(dir, &v);
    cr_assert_eq(n, 3);
    cr_expect_str_eq(v[0], "eth0");
    cr_expect_str_eq(v[1], "mlx5_2");
    cr_expect_str_eq(v[2], "mlx5_10");
    ct_dir_names_free(v, n);
    for (size_t i = 0; i < 4; i++) {
        snprintf(p, sizeof p, "%s/%s", dir, names[i]);
        rmdir(p);
    }
    rmdir(dir);
    n = ct_dir_names(dir, &v);
    cr_expect_eq(n, 0);
    cr_expect_null(v, "a folder that is gone lists nothing");
}
