/* SPDX-License-Identifier: MIT */
/*
 * A library launcher's standard error, passed on line by line as it comes, less the launcher's
 * own account of a job that ended nonzero (Open MPI's mpirun: "Primary job terminated
 * normally, but 1 process returned a non-zero exit code ...", "... detected that one or more
 * processes exited with non-zero status ..."): colltune says that itself, in one line. What
 * the library says of a failure (a setting it refuses in MPI_Init, ...) passes.
 */
#ifndef CT_BACKEND_LAUNCHERR_H
#define CT_BACKEND_LAUNCHERR_H

#include <stdbool.h>
#include <stddef.h>

struct ct_launcherr {
    int fd;    /* where the lines go */
    char *buf; /* a line not yet ended, or a boxed message not yet closed */
    size_t n, cap;
    size_t line; /* where the first line not yet looked at starts in buf */
    size_t box;  /* inside a box: where it starts in buf, else (size_t)-1 */
    bool any;    /* a line passed */
    bool ours;   /* a line of colltune's own ("colltune ...: error: ...") passed */
};

void ct_launcherr_init(struct ct_launcherr *e, int fd);
/* Takes len bytes of the launcher's standard error; passes on what is complete. */
void ct_launcherr_put(struct ct_launcherr *e, const char *s, size_t len);
/* At its end: passes on what is left (a box never closed, a last line without its newline)
 * and frees the buffer; e->any and e->ours stay. */
void ct_launcherr_end(struct ct_launcherr *e);

#endif
