/* SPDX-License-Identifier: MIT */
/*
 * The coll/base spy (build/ct-spy-ompi.so, built with Open MPI's mpicc): interposes the
 * coll/base algorithm entry points libmpi exports (coll/tuned, a separate DSO, calls them
 * across the library boundary), records the first, outermost one a collective call runs,
 * and forwards to the real one. colltune_shim_last() returns that name and clears it.
 * Loaded one of two ways: by LD_PRELOAD (the tests: a job's own program), or by colltune's
 * library engine with dlopen(RTLD_GLOBAL) before the module pulls in libmpi
 * (backend/libmod.c), so that a sweep can tell a forced algorithm that runs what Open MPI's
 * own decision runs at that size (backend/lib/mpi_mod.c). Loaded before libmpi, RTLD_NEXT
 * cannot see it: the real function is then libmpi's own. Signatures: Open MPI 4.1.x and
 * 5.0.x ompi/mca/coll/base/coll_base_functions.h, the same in both (opaque handles as void *,
 * same ABI); 5.0 adds allgather's sparbit.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

/* -DCT_SHIM_LOG: also say on stderr, at every outermost call, which entry point ran and
 * its count, and the segmented ring's segment size (tests/cli/t3100-lib-engines.sh) */
#ifdef CT_SHIM_LOG
#include <stdio.h>
#define SHIM_LOG(name, count) fprintf(stderr, "shim: %s %d\n", name, (int)(count))
#define SHIM_SEG(seg) fprintf(stderr, "shim: segsize %u\n", (unsigned)(seg))
#else
#define SHIM_LOG(name, count) ((void)0)
#define SHIM_SEG(seg) ((void)0)
#endif

/* The signatures are Open MPI 4.1's and 5.0's; built against another Open MPI (or another
 * MPI), the spy is empty: colltune_shim_last is then missing, and the engine measures every
 * row as its own, as without a spy. */
#if defined(OMPI_MAJOR_VERSION) && ((OMPI_MAJOR_VERSION == 4 && OMPI_MINOR_VERSION == 1) ||        \
                                    (OMPI_MAJOR_VERSION == 5 && OMPI_MINOR_VERSION == 0))
static __thread int depth;
static __thread const char *seen;

const char *colltune_shim_last(void)
{
    const char *s = seen;
    seen = NULL;
    return s;
}

/* Every coll/tuned algorithm of the four collectives is wrapped below: a forced row's call
 * that ran none of them ran another component's code (backend/lib/mpi_mod.c refuses it),
 * and this says why. */
const char *colltune_shim_none(void)
{
    return "another coll component than coll/tuned ran it (coll/self on 1 rank; a site's "
           "hcoll or ucc; Open MPI 5's coll/han across hosts: sweep --env OMPI_MCA_coll=^han)";
}

static void *real_of(const char *fn)
{
    void *f = dlsym(RTLD_NEXT, fn), *mpi;
    if (!f && (mpi = dlopen("libmpi.so.40", RTLD_NOW | RTLD_NOLOAD)))
        f = dlsym(mpi, fn); /* a handle's lookup starts at libmpi, not at this object */
    return f;
}

#define WRAP(fn, params, args, count) WRAP_LOG(fn, params, args, count, (void)0)
#define WRAP_LOG(fn, params, args, count, also)                                                    \
    int fn params;                                                                                 \
    int fn params                                                                                  \
    {                                                                                              \
        typedef int(*fn_t) params;                                                                 \
        static fn_t real;                                                                          \
        if (!real)                                                                                 \
            real = (fn_t)real_of(#fn);                                                             \
        if (depth == 0) {                                                                          \
            SHIM_LOG(#fn, count);                                                                  \
            also;                                                                                  \
        }                                                                                          \
        if (depth++ == 0 && !seen)                                                                 \
            seen = #fn;                                                                            \
        int ret_ = real args;                                                                      \
        depth--;                                                                                   \
        return ret_;                                                                               \
    }

#define AR_P (const void *s, void *r, int c, void *dt, void *op, void *comm, void *m)
#define AR_A (s, r, c, dt, op, comm, m)
#define AG_P (const void *s, int sc, void *st, void *r, int rc, void *rt, void *comm, void *m)
#define AG_A (s, sc, st, r, rc, rt, comm, m)
#define RS_P (const void *s, void *r, const int rc[], void *dt, void *op, void *comm, void *m)
#define RS_A (s, r, rc, dt, op, comm, m)

WRAP(ompi_coll_base_allreduce_intra_basic_linear, AR_P, AR_A, c)
WRAP(ompi_coll_base_allreduce_intra_nonoverlapping, AR_P, AR_A, c)
WRAP(ompi_coll_base_allreduce_intra_recursivedoubling, AR_P, AR_A, c)
WRAP(ompi_coll_base_allreduce_intra_ring, AR_P, AR_A, c)
WRAP(ompi_coll_base_allreduce_intra_redscat_allgather, AR_P, AR_A, c)
WRAP_LOG(ompi_coll_base_allreduce_intra_ring_segmented,
         (const void *s, void *r, int c, void *dt, void *op, void *comm, void *m, uint32_t seg),
         (s, r, c, dt, op, comm, m, seg), c, SHIM_SEG(seg))
WRAP(ompi_coll_base_allgather_intra_basic_linear, AG_P, AG_A, sc)
WRAP(ompi_coll_base_allgather_intra_bruck, AG_P, AG_A, sc)
WRAP(ompi_coll_base_allgather_intra_recursivedoubling, AG_P, AG_A, sc)
WRAP(ompi_coll_base_allgather_intra_ring, AG_P, AG_A, sc)
WRAP(ompi_coll_base_allgather_intra_neighborexchange, AG_P, AG_A, sc)
WRAP(ompi_coll_base_allgather_intra_two_procs, AG_P, AG_A, sc)
#if OMPI_MAJOR_VERSION == 5
WRAP(ompi_coll_base_allgather_intra_sparbit, AG_P, AG_A, sc)
#endif
WRAP(ompi_coll_base_reduce_scatter_intra_nonoverlapping, RS_P, RS_A, rc[0])
WRAP(ompi_coll_base_reduce_scatter_intra_basic_recursivehalving, RS_P, RS_A, rc[0])
WRAP(ompi_coll_base_reduce_scatter_intra_ring, RS_P, RS_A, rc[0])
WRAP(ompi_coll_base_reduce_scatter_intra_butterfly, RS_P, RS_A, rc[0])
WRAP(ompi_coll_base_alltoall_intra_basic_linear, AG_P, AG_A, sc)
WRAP(ompi_coll_base_alltoall_intra_pairwise, AG_P, AG_A, sc)
WRAP(ompi_coll_base_alltoall_intra_bruck, AG_P, AG_A, sc)
WRAP(ompi_coll_base_alltoall_intra_two_procs, AG_P, AG_A, sc)
WRAP(ompi_coll_base_alltoall_intra_linear_sync,
     (const void *s, int sc, void *st, void *r, int rc, void *rt, void *comm, void *m, int mr),
     (s, sc, st, r, rc, rt, comm, m, mr), sc)
#else
typedef int ct_spy_empty; /* ISO C: a translation unit declares something */
#endif
