/* SPDX-License-Identifier: MIT */
/* Replays the wire-parser corpora (tests/fuzz/corpus/{frame,hello,boot_hello,pmi1}, grown
 * by tests/fuzz/run-wire.sh) through the same checks the fuzzers run: no crash, no broken
 * invariant, and under `make test-asan` no sanitizer report. Each corpus must hold inputs
 * that are accepted and inputs that are refused. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/fuzz/fuzz_wire.h"

/* tests/fuzz/corpus/<target> from the repository root (the working directory under make,
 * else three levels above build/tests/transport/<binary>). */
static void corpus_dir(const char *target, char *out, size_t len)
{
    struct stat st;
    snprintf(out, len, "tests/fuzz/corpus/%s", target);
    if (stat(out, &st) == 0)
        return;
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    cr_assert_gt(n, 0);
    exe[n] = 0;
    for (int up = 0; up < 4; up++) {
        char *s = strrchr(exe, '/');
        cr_assert_not_null(s);
        *s = 0;
    }
    snprintf(out, len, "%s/tests/fuzz/corpus/%s", exe, target);
}

static void replay(const char *target, int min_files)
{
    char dir[2 * PATH_MAX];
    corpus_dir(target, dir, sizeof dir);
    DIR *d = opendir(dir);
    cr_assert_not_null(d, "no corpus %s", dir);
    int files = 0, accepted = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.')
            continue;
        char path[3 * PATH_MAX];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        FILE *f = fopen(path, "rb");
        cr_assert_not_null(f, "%s", path);
        unsigned char buf[8192];
        size_t n = fread(buf, 1, sizeof buf, f);
        fclose(f);
        int rc = fuzz_wire(target, buf, n);
        cr_assert_geq(rc, 0);
        accepted += rc;
        files++;
    }
    closedir(d);
    cr_expect_geq(files, min_files, "%s: %d files", target, files);
    cr_expect_gt(accepted, 0, "%s: nothing accepted", target);
    cr_expect_lt(accepted, files, "%s: nothing refused", target);
}

Test(wire_replay, frame_header)
{
    replay("frame", 4);
}

Test(wire_replay, tcp_handshake)
{
    replay("hello", 3);
}

Test(wire_replay, bootstrap_hello)
{
    replay("boot_hello", 4);
}

Test(wire_replay, pmi1_lines)
{
    replay("pmi1", 7);
}
