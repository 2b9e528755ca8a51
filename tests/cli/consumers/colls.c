/* SPDX-License-Identifier: MIT */
/*
 * Test program for tests/cli/t3000-export.sh: runs one MPI collective at the given sizes (in
 * colltune's nccl-tests bytes), checks the result, and prints per rank and size the algorithm
 * the LD_PRELOAD spy (backend/lib/ompi_spy.c) saw, or "-" without it. Built with Open MPI's
 * or MPICH's mpicc. Usage: colls COLL:VARIANT[,COLL:VARIANT...] SIZE...; COLL allreduce, allgather,
 * reducescatter, alltoall; VARIANT std, userop (user-defined commutative sum), noncomm (the
 * same, declared non-commutative), inplace, or inter (on an intercommunicator: the ranks' first
 * half one group, the rest the other; an even rank count).
 */
#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void sum_fn(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    for (int i = 0; i < *len; i++)
        ((int *)inout)[i] += ((int *)in)[i];
}

static int fail(int rank, const char *what, long long size)
{
    fprintf(stderr, "rank %d: %s at size %lld\n", rank, what, size);
    MPI_Abort(MPI_COMM_WORLD, 3);
    return 3;
}

/* One collective at one size; 0 or the exit code after MPI_Abort. On an intercommunicator
 * (inter) a rank's results come from the other group: its n ranks from world rank `base` on,
 * a rank of it at place p being world rank base + p. */
static int one(const char *coll, const char *variant, long long size, int rank, int n,
               const char *(*last)(void))
{
    MPI_Op op = MPI_SUM;
    MPI_Comm comm = MPI_COMM_WORLD;
    int world = n, base = 0, me = rank; /* me: this rank's place in its group */
    if (!strcmp(variant, "userop") || !strcmp(variant, "noncomm"))
        MPI_Op_create(sum_fn, !strcmp(variant, "userop"), &op);
    if (!strcmp(variant, "inter")) {
        if (n % 2)
            return fail(rank, "inter needs an even rank count", size);
        MPI_Comm half;
        int low = rank < n / 2;
        MPI_Comm_split(MPI_COMM_WORLD, !low, rank, &half);
        MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, low ? n / 2 : 0, 7, &comm);
        MPI_Comm_free(&half);
        n = n / 2, base = low ? n : 0, me = low ? rank : rank - n;
    }
    int inplace = !strcmp(variant, "inplace");
    int sum = n * (n + 1) / 2 + n * base; /* the ranks base..base+n-1, each adding rank + 1 */
    long long per = !strcmp(coll, "allreduce") ? size / 4 : size / 4 / world;
    if (size % (!strcmp(coll, "allreduce") ? 4 : 4 * world))
        return fail(rank, "size not a multiple of the element and rank count", size);
    int *s = calloc((size_t)(per * world + 1), sizeof(int)),
        *r = calloc((size_t)(per * world + 1), 4);
    if (last)
        last(); /* clear */
    if (!strcmp(coll, "allreduce")) {
        for (long long i = 0; i < per; i++)
            s[i] = r[i] = rank + 1;
        MPI_Allreduce(inplace ? MPI_IN_PLACE : s, r, (int)per, MPI_INT, op, comm);
        for (long long i = 0; i < per; i++)
            if (r[i] != sum)
                return fail(rank, "wrong allreduce result", size);
    } else if (!strcmp(coll, "allgather")) {
        for (long long i = 0; i < per; i++)
            s[i] = r[me * per + i] = rank + 1;
        MPI_Allgather(inplace ? MPI_IN_PLACE : s, (int)per, MPI_INT, r, (int)per, MPI_INT, comm);
        for (long long i = 0; i < per * n; i++)
            if (r[i] != base + i / per + 1)
                return fail(rank, "wrong allgather result", size);
    } else if (!strcmp(coll, "reducescatter")) {
        int *counts = malloc(sizeof(int) * (size_t)n);
        for (int p = 0; p < n; p++)
            counts[p] = (int)per;
        for (long long i = 0; i < per * n; i++)
            s[i] = rank + 1;
        MPI_Reduce_scatter(s, r, counts, MPI_INT, op, comm);
        for (long long i = 0; i < per; i++)
            if (r[i] != sum)
                return fail(rank, "wrong reduce_scatter result", size);
        free(counts);
    } else if (!strcmp(coll, "alltoall")) {
        for (long long i = 0; i < per * n; i++)
            s[i] = r[i] = rank * 1000 + (int)(i / per);
        MPI_Alltoall(inplace ? MPI_IN_PLACE : s, (int)per, MPI_INT, r, (int)per, MPI_INT, comm);
        for (long long i = 0; i < per * n; i++)
            if (r[i] != (base + i / per) * 1000 + me)
                return fail(rank, "wrong alltoall result", size);
    } else {
        return fail(rank, "unknown collective", size);
    }
    const char *fn = last ? last() : NULL;
    printf("%d %s %s %lld %s\n", rank, coll, variant, size, fn ? fn : "-");
    fflush(stdout);
    free(s);
    free(r);
    if (comm != MPI_COMM_WORLD)
        MPI_Comm_free(&comm);
    if (op != MPI_SUM)
        MPI_Op_free(&op);
    return 0;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    if (argc < 3)
        return fail(rank, "usage: colls COLL:VARIANT[,...] SIZE...", 0);
    const char *(*last)(void) = (const char *(*)(void))dlsym(RTLD_DEFAULT, "colltune_shim_last");
    char *specs = strdup(argv[1]), *save = NULL;
    for (char *sp = strtok_r(specs, ",", &save); sp; sp = strtok_r(NULL, ",", &save)) {
        char *colon = strchr(sp, ':');
        if (!colon)
            return fail(rank, "expected COLL:VARIANT", 0);
        *colon = 0;
        for (int a = 2; a < argc; a++)
            if (one(sp, colon + 1, atoll(argv[a]), rank, n, last))
                return 3;
    }
    free(specs);
    MPI_Finalize();
    return 0;
}
