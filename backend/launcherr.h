/* SPDX-License-Identifier: MIT */
/*
 * A library launcher's standard error, passed on line by line as it comes, less the launcher's
 * own boxed account of a job that ended nonzero (Open MPI 4.1's mpirun: "Primary job
 * terminated normally, but 1 process returned a non-zero exit code ...", "... detected that
 * one or more processes exited with non-zero status ...", "... has exited due to process rank
 * N ... exiting improperly"): the rank's own line says what happened, and colltune says the
 * rest in one line. What the library says of a failure (a setting it refuses in MPI_Init, a
 * rank killed by a signal) passes, as do its other messages.
 */
#ifndef CT_BACKEND_LAUNCHERR_H
#define CT_BACKEND_LAUNCHERR_H

#include <stdbool.h>
#include <stddef.h>

struct ct_launcherr {
    int fd;     /* where the lines go */
    char *part; /* a line not yet ended */
    size_t npart, cpart;
    char *hold; /* a line of dashes held (a box may start), or a box being dropped */
    size_t nhold, chold;
    int state; /* 0: nothing held; 1: a line of dashes; 2: a box being dropped */
    bool any;  /* a line passed */
    bool ours; /* a line of a colltune rank's failure ("colltune ...error: ...") */
};

void ct_launcherr_init(struct ct_launcherr *e, int fd);
/* Takes len bytes of the launcher's standard error; passes on each line as it ends but a line
 * of dashes, held until the next line says whether its box is one to leave out. */
void ct_launcherr_put(struct ct_launcherr *e, const char *s, size_t len);
/* At its end: passes on what is held (a box to drop that never closed, a last line without
 * its newline) and frees the buffers; e->any and e->ours stay. */
void ct_launcherr_end(struct ct_launcherr *e);

#endif
