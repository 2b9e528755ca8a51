/* SPDX-License-Identifier: MIT */
/* backend/launcherr.c: a launcher's standard error passed on less mpirun's boxes about a rank
 * that exited nonzero, whatever the chunks it comes in. The text is Open MPI 4.1.4's. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend/launcherr.h"

#define DASH "--------------------------------------------------------------------------\n"
static const char *const input =
    "colltune run: error: Open MPI 4.1.4 has no allreduce algorithm 'ompi:x'\n" DASH
    "Primary job  terminated normally, but 1 process returned\n"
    "a non-zero exit code. Per user-direction, the job has been aborted.\n" DASH DASH
    "The \"eager limit\" MCA parameter in the vader BTL was set to a value which\n"
    "is too low for Open MPI to function properly.\n" DASH DASH
    "mpirun.openmpi detected that one or more processes exited with non-zero status, thus "
    "causing\nthe job to be terminated. The first process to do so was:\n\n"
    "  Exit code:    2\n" DASH "[vm:1] *** An error occurred in MPI_Init\nlast words";
static const char *const want =
    "colltune run: error: Open MPI 4.1.4 has no allreduce algorithm 'ompi:x'\n" DASH
    "The \"eager limit\" MCA parameter in the vader BTL was set to a value which\n"
    "is too low for Open MPI to function properly.\n" DASH
    "[vm:1] *** An error occurred in MPI_Init\nlast words";

/* input fed in chunks of `step` bytes; what came out */
static char *feed(const char *in, size_t step, struct ct_launcherr *e)
{
    FILE *f = tmpfile();
    cr_assert_not_null(f);
    ct_launcherr_init(e, fileno(f));
    for (size_t at = 0, len = strlen(in); at < len; at += step)
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
        char *out = feed(input, steps[i], &e);
        cr_expect_str_eq(out, want, "chunks of %zu", steps[i]);
        cr_expect(e.any && e.ours);
        free(out);
    }
}

Test(launcherr, lines_come_out_as_they_end_a_box_when_it_closes)
{
    FILE *f = tmpfile();
    struct ct_launcherr e;
    ct_launcherr_init(&e, fileno(f));
    ct_launcherr_put(&e, "a line\npart", 11);
    cr_expect_eq(lseek(fileno(f), 0, SEEK_END), 7, "the ended line at once");
    ct_launcherr_put(&e, " of one\n" DASH "inside\n", 8 + strlen(DASH) + 7);
    cr_expect_eq(lseek(fileno(f), 0, SEEK_END), 7 + 12, "the box held until it closes");
    ct_launcherr_put(&e, DASH, strlen(DASH));
    cr_expect_eq(lseek(fileno(f), 0, SEEK_END), 7 + 12 + 2 * strlen(DASH) + 7);
    cr_expect(e.any && !e.ours, "no line of colltune's");
    ct_launcherr_end(&e);
    fclose(f);
}

Test(launcherr, a_box_never_closed_or_too_long_is_passed_on)
{
    struct ct_launcherr e;
    char *out = feed(DASH "Primary job  terminated normally, but\n", 5, &e);
    cr_expect_str_eq(out, DASH "Primary job  terminated normally, but\n", "never closed");
    free(out);
    size_t n = 70 * 1024;
    char *big = malloc(strlen(DASH) + n + 1);
    strcpy(big, DASH);
    for (size_t i = 0; i < n; i++)
        big[strlen(DASH) + i] = i % 64 == 63 ? '\n' : 'x';
    big[strlen(DASH) + n] = 0;
    out = feed(big, 4096, &e);
    cr_expect_str_eq(out, big, "a box past 64 KiB");
    free(out);
    free(big);
    out = feed("", 1, &e);
    cr_expect_str_eq(out, "");
    cr_expect(!e.any);
    free(out);
}
