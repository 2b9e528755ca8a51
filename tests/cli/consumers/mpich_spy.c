/* SPDX-License-Identifier: MIT */
/*
 * Spy on MPICH's own algorithms for tests/cli/t3100-lib-engines.sh. MPICH's shared library
 * does not export its algorithm functions (MPIR_Allreduce_intra_recursive_doubling, ...), so
 * no LD_PRELOAD shim can see them; its static archive holds each in its own object file.
 * The test program (consumers/colls.c) is linked with libmpich.a and `-Wl,--wrap=FN` for
 * every FN below: MPICH's selection code then calls __wrap_FN, which records the first,
 * outermost algorithm a collective call runs and forwards to __real_FN.
 * colltune_shim_last() returns that name and clears it (the interface of
 * backend/lib/ompi_spy.c). Linked into the test build of colltune with MPICH's engine
 * (t3100, consumers/mod_forward.c), it tells which algorithm each forced row ran.
 * Signatures: MPICH 4.0 src/include/mpir_coll.h; counts as MPI_Aint (an int parameter reads
 * the low half), the communicator and error flag as void *.
 */
#include <mpi.h>
#include <stddef.h>

/* -DCT_SHIM_LOG: when the environment has CT_SHIM_LOG, also say on stderr, at every
 * outermost call, which algorithm ran and its count (as backend/lib/ompi_spy.c does); without
 * it the calls cost no more than the spy's own bookkeeping, so a sweep's times stay MPICH's */
#ifdef CT_SHIM_LOG
#include <stdio.h>
#include <stdlib.h>
static int log_on = -1;
#define SHIM_LOG(name, count)                                                                      \
    ((log_on < 0 ? log_on = getenv("CT_SHIM_LOG") != NULL : 0),                                    \
     log_on ? (void)fprintf(stderr, "shim: %s %lld\n", name, (long long)(count)) : (void)0)
#else
#define SHIM_LOG(name, count) ((void)0)
#endif

static int depth;
static const char *seen;

const char *colltune_shim_last(void);
const char *colltune_shim_last(void)
{
    const char *s = seen;
    seen = NULL;
    return s;
}

#define WRAP(fn, params, args, count)                                                              \
    int __real_##fn params;                                                                        \
    int __wrap_##fn params;                                                                        \
    int __wrap_##fn params                                                                         \
    {                                                                                              \
        if (depth == 0)                                                                            \
            SHIM_LOG(#fn, count);                                                                  \
        if (depth++ == 0 && !seen)                                                                 \
            seen = #fn;                                                                            \
        int ret_ = __real_##fn args;                                                               \
        depth--;                                                                                   \
        return ret_;                                                                               \
    }

#define AR_P (const void *s, void *r, MPI_Aint c, MPI_Datatype dt, MPI_Op op, void *comm, void *e)
#define AR_A (s, r, c, dt, op, comm, e)
#define AG_P                                                                                       \
    (const void *s, MPI_Aint sc, MPI_Datatype st, void *r, MPI_Aint rc, MPI_Datatype rt,           \
     void *comm, void *e)
#define AG_A (s, sc, st, r, rc, rt, comm, e)
#define RS_P                                                                                       \
    (const void *s, void *r, const void *rc, MPI_Datatype dt, MPI_Op op, void *comm, void *e)
#define RS_A (s, r, rc, dt, op, comm, e)

/* t3100 links with -Wl,--wrap=FN for every WRAP line below (read from this file) */
WRAP(MPIR_Allreduce_intra_recursive_doubling, AR_P, AR_A, c)
WRAP(MPIR_Allreduce_intra_reduce_scatter_allgather, AR_P, AR_A, c)
WRAP(MPIR_Allreduce_intra_smp, AR_P, AR_A, c)
WRAP(MPIR_Allgather_intra_brucks, AG_P, AG_A, sc)
WRAP(MPIR_Allgather_intra_recursive_doubling, AG_P, AG_A, sc)
WRAP(MPIR_Allgather_intra_ring, AG_P, AG_A, sc)
WRAP(MPIR_Reduce_scatter_intra_noncommutative, RS_P, RS_A, ((const MPI_Aint *)rc)[0])
WRAP(MPIR_Reduce_scatter_intra_pairwise, RS_P, RS_A, ((const MPI_Aint *)rc)[0])
WRAP(MPIR_Reduce_scatter_intra_recursive_doubling, RS_P, RS_A, ((const MPI_Aint *)rc)[0])
WRAP(MPIR_Reduce_scatter_intra_recursive_halving, RS_P, RS_A, ((const MPI_Aint *)rc)[0])
WRAP(MPIR_Alltoall_intra_brucks, AG_P, AG_A, sc)
WRAP(MPIR_Alltoall_intra_pairwise, AG_P, AG_A, sc)
WRAP(MPIR_Alltoall_intra_pairwise_sendrecv_replace, AG_P, AG_A, sc)
WRAP(MPIR_Alltoall_intra_scattered, AG_P, AG_A, sc)
