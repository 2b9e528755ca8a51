/* SPDX-License-Identifier: MIT */
/* backend/launcherr.c: a launcher's standard error passed on less mpirun's boxes about a rank
 * that exited nonzero, whatever the chunks it comes in, and kept in step by stray lines of
 * dashes and boxes that never close. The text is Open MPI 4.1.4's. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend/launcherr.h"

#define DASH "--------------------------------------------------------------------------\n"
#define DROP1                                                                                      \
    DASH "Primary job  terminated normally, but 1 process returned\n"                              \
         "a non-zero exit code. Per user-direction, the job has been aborted.\n" DASH
static const char *const input =
    "colltune run: error: Open MPI 4.1.4 has no allreduce algorithm 'ompi:x'\n" DROP1 DASH
    "The \"eager limit\" MCA parameter in the vader BTL was set to a value which\n"
    "is too low for Open MPI to function properly.\n" DASH DASH
    "mpirun.openmpi detected that one or more processes exited with non-zero status, thus "
    "causing\nthe job to be terminated. The first process to do so was:\n\n"
    "  Exit code:    2\n" DASH DASH
    "mpirun.openmpi has exited due to process rank 0 with PID 0 on\n"
    "node vm exiting improperly.\n" DASH "[vm:1] *** An error occurred in MPI_Init\nlast words";
static const char *const want =
    "colltune run: error: Open MPI 4.1.4 has no allreduce algorithm 'ompi:x'\n" DASH
    "The \"eager limit\" MCA parameter in the vader BTL was set to a value which\n"
    "is too low for Open MPI to function properly.\n" DASH
    "[vm:1] *** An error occurred in MPI_Init\nlast words";

/* in fed in chunks of `step` bytes; what came out */
static char *feed(const char *in, size_t len, size_t step, struct ct_launcherr *e)
{
    FILE *f = tmpfile();
    cr_assert_not_null(f);
    ct_launcherr_init(e, fileno(f));
    for (size_t at = 0; at < len; at += step)
        ct_launcherr_put(e, in + at, at + step > len ? len - at : step);
    ct_launcherr_end(e);
    long n = lseek(fileno(f), 0, SEEK_END);
    char *out = calloc(1, (size_t)n + 1);
    cr_assert_eq(pread(fileno(f), out, (size_t)n, 0), n);
    fclose(f);
    return out;
}

Test(launcherr, boxes_about_a_nonzero_exit_left_out_in_any_chunks)
{
    size_t steps[] = {1, 2, 3, 7, 64, 100000};
    for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
        struct ct_launcherr e;
        char *out = feed(input, strlen(input), steps[i], &e);
        cr_expect_str_eq(out, want, "chunks of %zu", steps[i]);
        cr_expect(e.any && e.ours);
        free(out);
    }
}

Test(launcherr, a_line_passes_as_it_ends_a_line_of_dashes_with_the_next)
{
    FILE *f = tmpfile();
    struct ct_launcherr e;
    ct_launcherr_init(&e, fileno(f));
    ct_launcherr_put(&e, "a line\npart", 11);
    cr_expect_eq(lseek(fileno(f), 0, SEEK_END), 7, "the ended line at once");
    ct_launcherr_put(&e, " of one\n" DASH, 8 + strlen(DASH));
    cr_expect_eq(lseek(fileno(f), 0, SEEK_END), 7 + 12, "the dashes held");
    ct_launcherr_put(&e, "inside\n", 7);
    cr_expect_eq(lseek(fileno(f), 0, SEEK_END), 7 + 12 + strlen(DASH) + 7, "with the next");
    cr_expect(e.any && !e.ours, "no failure of colltune's");
    ct_launcherr_end(&e);
    cr_expect_eq(lseek(fileno(f), 0, SEEK_END), 7 + 12 + strlen(DASH) + 7);
    fclose(f);
}

Test(launcherr, a_failure_of_colltune_s_is_seen_in_any_line)
{
    struct ct_launcherr e;
    const char *in[] = {"a\ncolltune sweep: warning: x\n", "a\ncolltune run: error: x\nb\n",
                        "[1,0]<stderr>:colltune: error: rank 0: no call\n"};
    for (int i = 0; i < 3; i++) {
        char *out = feed(in[i], strlen(in[i]), 100, &e);
        cr_expect_eq(e.ours, i > 0, "%s", in[i]);
        cr_expect_str_eq(out, in[i]);
        free(out);
    }
}

/* A box to drop that never closes is passed on whole, and what follows is read in step; so are
 * stray lines of dashes, and a line too long to hold. */
Test(launcherr, kept_in_step_by_stray_dashes_and_a_box_never_closed)
{
    size_t n = 70 * 1024, h = strlen(DASH "Primary job  terminated normally, but\n");
    const char *after = "after\n" DROP1 "x\n" DASH "y\n" DASH DASH DROP1 "tail\n";
    char *big = malloc(h + n + strlen(after) + 1);
    memcpy(big, DASH "Primary job  terminated normally, but\n", h);
    for (size_t i = 0; i < n; i++)
        big[h + i] = i % 64 == 63 ? '\n' : 'x';
    strcpy(big + h + n, after);
    struct ct_launcherr e;
    char *out = feed(big, strlen(big), 4096, &e);
    size_t keep = h + n;
    cr_expect(!strncmp(out, big, keep), "the box never closed, passed on");
    cr_expect_str_eq(out + keep, "after\nx\n" DASH "y\n" DASH DASH "tail\n");
    free(out);
    memset(big, 'z', n); /* one line of 70 KiB, without its newline until the end */
    strcpy(big + n, "\nend\n");
    out = feed(big, n + 5, 1000, &e);
    cr_expect_str_eq(out, big);
    free(out);
    free(big);
    out = feed("", 0, 1, &e);
    cr_expect_str_eq(out, "");
    cr_expect(!e.any);
    free(out);
}
