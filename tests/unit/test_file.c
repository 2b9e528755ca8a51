/* SPDX-License-Identifier: MIT */
/* Natural order and the sorted folder listing shared by the probe and the NIC monitor. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <time.h>
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

/* What a writer killed between writing and renaming left (NAME.tmp.PID, its PID gone, a
 * minute old) is removed by the next write of NAME (a killed sweep's results.json.tmp stayed
 * for good); a live writer's, a fresh one (another host's PID on a shared file system), and
 * another file's are not. */
Test(file, a_dead_writers_temporary_file_is_removed_by_the_next_write)
{
    char dir[] = "/tmp/ct-stale-XXXXXX", p[64], dead[128], live[128], other[128], fresh[128];
    cr_assert_not_null(mkdtemp(dir));
    pid_t kid = fork();
    if (kid == 0)
        _exit(0);
    cr_assert_eq(waitpid(kid, NULL, 0), kid);
    snprintf(p, sizeof p, "%s/results.json", dir);
    snprintf(dead, sizeof dead, "%s.tmp.%ld", p, (long)kid);
    snprintf(live, sizeof live, "%s.tmp.%ld", p, (long)getppid());
    snprintf(other, sizeof other, "%s/config.json.tmp.%ld", dir, (long)kid);
    snprintf(fresh, sizeof fresh, "%s.tmp.%ld", p, (long)kid + 1000000);
    const char *made[] = {dead, live, other, fresh};
    struct timespec old[2] = {{time(NULL) - 120, 0}, {time(NULL) - 120, 0}};
    for (size_t i = 0; i < 4; i++) {
        FILE *f = fopen(made[i], "w");
        cr_assert_not_null(f);
        fclose(f);
        cr_assert_eq(i == 3 ? 0 : utimensat(AT_FDCWD, made[i], old, 0), 0);
    }
    struct ct_err err = {0};
    cr_assert_eq(ct_file_write_atomic(p, "{}\n", 3, &err), 0, "%s", err.msg);
    cr_expect_neq(access(dead, F_OK), 0, "a dead writer's is removed");
    cr_expect_eq(access(live, F_OK), 0, "a live writer's is kept");
    cr_expect_eq(access(other, F_OK), 0, "another file's is kept");
    cr_expect_eq(access(fresh, F_OK), 0, "a fresh one is kept");
    cr_expect_eq(access(p, F_OK), 0);
    const char *gone[] = {live, other, fresh, p};
    for (size_t i = 0; i < 4; i++)
        unlink(gone[i]);
    cr_expect_eq(rmdir(dir), 0, "nothing else left");
}

/* An input that never ends is refused, not read until memory runs out (`show /dev/zero` grew
 * past 840 MB in 5 s); a file, and a pipe that ends, are read whole. */
Test(file, a_device_is_refused_a_file_and_a_pipe_read_whole)
{
    struct ct_err err = {0};
    char *txt = NULL;
    size_t len = 0;
    cr_expect_eq(ct_file_read("/dev/zero", &txt, &len, &err), CT_EINVAL);
    cr_expect(strstr(err.msg, "cannot read '/dev/zero': it is a device, not a file"), "%s",
              err.msg);
    char path[] = "/tmp/ct-read-XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    cr_assert_eq(write(fd, "{\"a\": 1}", 8), 8);
    close(fd);
    cr_assert_eq(ct_file_read(path, &txt, &len, &err), 0, "%s", err.msg);
    cr_expect_eq(len, 8);
    cr_expect_str_eq(txt, "{\"a\": 1}");
    free(txt);
    unlink(path);
    int p[2];
    cr_assert_eq(pipe(p), 0);
    cr_assert_eq(write(p[1], "xyz", 3), 3);
    close(p[1]);
    char name[64];
    snprintf(name, sizeof name, "/proc/self/fd/%d", p[0]);
    cr_assert_eq(ct_file_read(name, &txt, &len, &err), 0, "%s", err.msg);
    cr_expect_eq(len, 3);
    free(txt);
    close(p[0]);
}
