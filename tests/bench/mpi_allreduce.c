/* SPDX-License-Identifier: MIT */
/*
 * Reference for `make bench`: MPI_Allreduce (float, sum) timed the way colltune times a
 * point: warmup, then iterations each between barriers, an iteration's time the slowest
 * rank's (colltune run -a 3) or the mean of the ranks' (-a 1), the median of each.
 * Prints "size_bytes median_us busbw_GBps mean_median_us" per size.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *t, int n)
{
    qsort(t, (size_t)n, sizeof *t, cmp);
    return n % 2 ? t[n / 2] : (t[n / 2 - 1] + t[n / 2]) / 2;
}

int main(int argc, char **argv)
{
    long minb = argc > 1 ? atol(argv[1]) : 8, maxb = argc > 2 ? atol(argv[2]) : 256L << 20;
    int factor = argc > 3 ? atoi(argv[3]) : 4, iters = argc > 4 ? atoi(argv[4]) : 20;
    int warmup = 5, rank, n;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    float *in = malloc((size_t)maxb), *out = malloc((size_t)maxb);
    double *t = malloc(sizeof(double) * (size_t)iters), *tm = malloc(sizeof(double) * (size_t)iters),
           *ts = malloc(sizeof(double) * (size_t)iters);
    for (long i = 0; i < maxb / 4; i++)
        in[i] = (float)(i % 7);
    for (long size = minb; size <= maxb; size *= factor) {
        int count = (int)(size / 4);
        for (int i = 0; i < warmup; i++)
            MPI_Allreduce(in, out, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        for (int i = 0; i < iters; i++) {
            MPI_Barrier(MPI_COMM_WORLD);
            double t0 = MPI_Wtime();
            MPI_Allreduce(in, out, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
            t[i] = (MPI_Wtime() - t0) * 1e6;
        }
        MPI_Reduce(t, tm, iters, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        MPI_Reduce(t, ts, iters, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
        if (rank == 0) {
            double med = median(tm, iters), mean = median(ts, iters) / n;
            printf("%ld %.3f %.4f %.3f\n", size, med, (double)size / med / 1e3 * 2.0 * (n - 1) / n,
                   mean);
        }
    }
    free(in);
    free(out);
    free(t);
    free(tm);
    free(ts);
    MPI_Finalize();
    return 0;
}
