/* SPDX-License-Identifier: MIT */
/*
 * The one table that maps colltune's algorithms onto each collective library's (NCCL, Open MPI
 * coll/tuned, MPICH csel, UCC TL/UCP, Intel MPI), and what "message size" means to each library
 * per collective. Exporters look rows up here and never hard-code a mapping of their own.
 */
#ifndef CT_OUTPUT_ALGOMAP_H
#define CT_OUTPUT_ALGOMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../algos/algo.h"

enum ct_lib { CT_LIB_NCCL, CT_LIB_OMPI, CT_LIB_MPICH, CT_LIB_UCC, CT_LIB_IMPI, CT_LIB_COUNT };
#define CT_LIB_NONE (-1)

/* "nccl", "ompi", "mpich", "ucc", "impi"; lookups return -1 when unknown. */
const char *ct_lib_name(int lib);
/* "NCCL", "Open MPI", ... for comments and messages. */
const char *ct_lib_title(int lib);
int ct_lib_find(const char *name);
/* The library version exported for when --lib-version is not given ("4.1" for Open MPI). */
const char *ct_lib_default_version(int lib);

/* Dotted numeric versions: "2.27.5" < "2.28"; "4.1" == "4.1.0". A missing or malformed part
 * counts as 0. */
int ct_version_cmp(const char *a, const char *b);
/* 0 if v is a dotted number ("4.1", "2021.6"), CT_EINVAL otherwise. */
int ct_version_check(const char *v, struct ct_err *err);
/* ct_version_check, and a release series of `lib` colltune writes for (not 9.9). */
int ct_version_check_for(int lib, const char *v, struct ct_err *err);

enum ct_match {
    CT_MATCH_CLOSE,  /* the same algorithm up to details the note names */
    CT_MATCH_APPROX, /* same family and cost shape, different structure (note says how) */
};
const char *ct_match_name(enum ct_match m); /* "close", "approx" */

struct ct_algomap_row {
    int lib; /* enum ct_lib */
    enum ct_coll coll;
    const char *algo;   /* colltune algorithm name */
    const char *target; /* the library's name for it */
    int id;             /* numeric id where the library uses ids (Open MPI, Intel MPI), else -1 */
    const char *since;  /* first library version that has it; NULL: every supported version */
    enum ct_match match;
    const char *extra; /* a library setting the match needs ("ALLREDUCE_SRA_KN_RADIX=2"), or NULL */
    const char *note;  /* how close the match is, one short line */
};

/*
 * The row for colltune's algo on lib/coll at library version (NULL: the default). NULL when
 * the library has no counterpart at that version; then, when a later version has one, *later
 * (if non-NULL) points at that row so the caller can say "needs <lib> >= <since>".
 */
const struct ct_algomap_row *ct_algomap_find(int lib, enum ct_coll coll, const char *algo,
                                             const char *version,
                                             const struct ct_algomap_row **later);
/* Rows in table order (NULL past the end): for tests and documentation. */
const struct ct_algomap_row *ct_algomap_at(size_t i);

/* How a library measures the size of one call, relative to colltune's (nccl-tests) size S. */
enum ct_size_unit {
    CT_UNIT_SAME,     /* the library's size is S */
    CT_UNIT_PER_RANK, /* S / nranks: one rank's block */
    CT_UNIT_NONE,     /* the library has no size-based selection for this collective */
};

struct ct_size_meaning {
    int lib;
    enum ct_coll coll;
    enum ct_size_unit unit;
    const char *what;   /* the library's formula, e.g. "comm_size*scount*dtsize" */
    const char *source; /* where it was read */
};
const struct ct_size_meaning *ct_algomap_size(int lib, enum ct_coll coll);

/*
 * colltune's range [min, max) of sizes S (max == CT_BYTES_INF: open) in the library's unit
 * for a communicator of nranks: [*lo, *hi). A size S in [min, max) always has its library
 * size in [*lo, *hi) and conversely for the sizes that occur (PER_RANK: multiples of nranks).
 * Returns false when the converted range is empty.
 */
bool ct_algomap_range(const struct ct_size_meaning *m, int nranks, uint64_t min, uint64_t max,
                      uint64_t *lo, uint64_t *hi);

#endif
