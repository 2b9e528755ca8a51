/* SPDX-License-Identifier: MIT */
/*
 * A library engine module (build/ct-lib-<lib>.so, compiled by that library's own mpicc and
 * loaded by backend/libmod.c with dlopen). mpi_mod.c is the MPI part every library shares
 * (buffers, verification, timing, the struct ct_backend it fills); <lib>_mod.c is what
 * differs: reading the library's algorithm list and making a communicator run one of them.
 * The module links none of colltune's objects but lib/err.c; it never prints.
 */
#ifndef CT_LIB_MOD_H
#define CT_LIB_MOD_H

#include <mpi.h>

#include "../libmod.h"

/* One candidate: the row the planner sees and the library's own id for it. */
struct ct_mod_row {
    struct ct_algo a;
    char name[64], summary[160];
    int id; /* the library's enum value (0: its own default decision) */
};
#define CT_MOD_ROWS 32

/* ---- what each library provides (<lib>_mod.c) ---- */
struct ct_mod_lib;
/* Before MPI_Init: environment the library reads at start-up; a negative status (with one
 * line) where the library would not survive it (MPICH's selection files), the environment
 * then left so that MPI_Init survives without it: the rank starts, and every rank fails after
 * it, rank 0 saying that line (mpi_mod.c). */
int ct_mod_preinit(struct ct_err *err);
/* After MPI_Init: read the algorithm lists; *lib is new. Takes no collective: a rank may
 * fail here alone (mpi_mod.c agrees on the outcome afterwards). */
int ct_mod_lib_open(struct ct_mod_lib **lib, struct ct_err *err);
/* After every rank opened: what the ranks must agree on (collectives on MPI_COMM_WORLD, every
 * rank alike); 0. */
int ct_mod_lib_agreed(struct ct_mod_lib *lib);
void ct_mod_lib_close(struct ct_mod_lib *lib);
/* The candidates of coll (rows owned by lib); their count, or a negative status. */
int ct_mod_lib_rows(struct ct_mod_lib *lib, enum ct_coll coll, struct ct_mod_row **rows,
                    struct ct_err *err);
/* A communicator (new) on which coll runs row r with j's parameters. */
int ct_mod_lib_comm(struct ct_mod_lib *lib, const struct ct_mod_row *r, const struct ct_job *j,
                    MPI_Comm *out, struct ct_err *err);
/* On just before the measured calls on the point's communicator, off just after them: what
 * must hold only while they run (MPICH's algorithm variables are global, and the engine's own
 * collectives on MPI_COMM_WORLD must keep the library's defaults). */
void ct_mod_lib_force(struct ct_mod_lib *lib, bool on);
/* "Open MPI" */
const char *ct_mod_lib_title(void);

/* ---- shared helpers (mpi_mod.c) ---- */
/* MPI_T control variable index of name, or -1. */
int ct_mod_cvar_find(const char *name);
/* Read an int control variable (no object binding): 0, or -1 (absent, unreadable). */
int ct_mod_cvar_read_int(int idx, int *v);
/* Write an int control variable (no object binding). */
int ct_mod_cvar_write_int(int idx, int v, struct ct_err *err);

#endif
