/* SPDX-License-Identifier: MIT */
/*
 * Reference limit kernels for `make bench`: AllGather, AllToAll and ReduceScatter between 2
 * processes on one host, derived line by line from ../shared/bench/shm_limit.c (the
 * AllReduce limit): both processes map each other's buffers, each moves its share straight
 * into the outputs, spin barriers, each process pinned to its own core, the same timing
 * (median of as many iterations as fit SECONDS_PER_SIZE, 5..4000). Built -O3
 * -march=native like shm_limit.
 *   allgather      rank r copies its block (bytes/2) into block r of both outputs
 *   alltoall       rank r copies its block q into block r of rank q's output (q = 0, 1)
 *   reducescatter  rank r adds block r of both inputs into its output (bytes/2): the
 *                  AllReduce kernel's shape with one output, since the collective reduces
 * BYTES is the nccl-tests size (allgather: the output; reducescatter: the input per rank;
 * alltoall: the buffer per rank). Prints: bytes time_us busbw_GBps wrong, with busbw the
 * nccl-tests bus bandwidth for 2 ranks (bytes / time / 2).
 * usage: coll_limit allgather|alltoall|reducescatter SECONDS_PER_SIZE BYTES...
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct ctl {
    _Atomic long arrive;
    _Atomic long gen;
    double t[2][4096];
};

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void barrier(struct ctl *c, long *mygen)
{
    long g = ++*mygen;
    if (atomic_fetch_add(&c->arrive, 1) == 2 * g - 1)
        atomic_store(&c->gen, g);
    else
        while (atomic_load(&c->gen) < g)
            ;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

enum { AG, A2A, RS };

/* One iteration of rank r's share; h = elements per block (n / 2). */
static void kernel(int mode, int r, float *const in[2], float *const out[2], size_t h)
{
    float *mine = in[r];
    size_t lo = r * h;
    if (mode == AG) {
        for (size_t i = 0; i < h; i++) {
            float v = mine[lo + i];
            out[0][lo + i] = v;
            out[1][lo + i] = v;
        }
    } else if (mode == A2A) {
        for (size_t i = 0; i < h; i++) {
            out[0][lo + i] = mine[i];
            out[1][lo + i] = mine[h + i];
        }
    } else {
        for (size_t i = 0; i < h; i++)
            out[r][i] = in[0][lo + i] + in[1][lo + i];
    }
}

/* Value rank p puts in element i of its input. */
static float val(int p, size_t i, size_t h)
{
    return (float)(1 + p * 2 + (i >= h));
}

static long wrong_of(int mode, int r, float *const out[2], size_t n)
{
    size_t h = n / 2;
    long w = 0;
    for (size_t i = 0; i < 2 * h; i++) {
        size_t blk = i >= h; /* block index of output element i */
        float want;
        if (mode == AG)
            want = val((int)blk, i, h);
        else if (mode == A2A)
            want = val((int)blk, r * h, h); /* rank blk's block r */
        else if (i < h)
            want = val(0, r * h + i, h) + val(1, r * h + i, h);
        else
            continue;
        w += out[r][i] != want;
    }
    return w;
}

int main(int argc, char **argv)
{
    if (argc < 4)
        return fprintf(stderr, "usage: coll_limit allgather|alltoall|reducescatter SECONDS BYTES...\n"), 2;
    int mode = !strcmp(argv[1], "allgather") ? AG : !strcmp(argv[1], "alltoall") ? A2A
               : !strcmp(argv[1], "reducescatter") ? RS : -1;
    if (mode < 0)
        return fprintf(stderr, "coll_limit: unknown collective '%s'\n", argv[1]), 2;
    double budget = atof(argv[2]);
    size_t maxb = 0;
    for (int a = 3; a < argc; a++) {
        size_t b = strtoull(argv[a], 0, 10);
        if (b > maxb)
            maxb = b;
    }
    size_t maxc = maxb / 4 + 16;
    struct ctl *c = mmap(0, sizeof *c, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    float *buf = mmap(0, 4 * maxc * sizeof(float), PROT_READ | PROT_WRITE,
                      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    float *in[2] = {buf, buf + maxc}, *out[2] = {buf + 2 * maxc, buf + 3 * maxc};
    memset(c, 0, sizeof *c);
    pid_t pid = fork();
    int r = pid == 0 ? 1 : 0;
    cpu_set_t cs;
    CPU_ZERO(&cs);
    CPU_SET(r, &cs);
    sched_setaffinity(0, sizeof cs, &cs);
    long gen = 0;
    for (int a = 3; a < argc; a++) {
        size_t bytes = strtoull(argv[a], 0, 10), n = bytes / 4 >= 2 ? bytes / 4 : 2, h = n / 2;
        for (size_t i = 0; i < n; i++)
            in[r][i] = val(r, i, h);
        int iters;
        double t0, dt;
        barrier(c, &gen);
        t0 = now();
        for (int w = 0; w < 3; w++) {
            kernel(mode, r, in, out, h);
            barrier(c, &gen);
        }
        dt = (now() - t0) / 3;
        iters = (int)(budget / (dt > 1e-7 ? dt : 1e-7));
        if (iters < 5)
            iters = 5;
        if (iters > 4000)
            iters = 4000;
        if (r == 0)
            c->t[0][0] = iters;
        barrier(c, &gen);
        iters = (int)c->t[0][0];
        barrier(c, &gen);
        double *ts = malloc(iters * sizeof(double));
        for (int it = 0; it < iters; it++) {
            barrier(c, &gen);
            t0 = now();
            kernel(mode, r, in, out, h);
            barrier(c, &gen);
            ts[it] = now() - t0;
        }
        long wrong = wrong_of(mode, r, out, n);
        c->t[r][1] = (double)wrong;
        barrier(c, &gen);
        if (r == 0) {
            qsort(ts, iters, sizeof(double), cmp);
            wrong += (long)c->t[1][1];
            printf("%zu %.3f %.4f %ld\n", n * 4, ts[iters / 2] * 1e6, n * 4 / ts[iters / 2] / 1e9 / 2,
                   wrong);
            fflush(stdout);
        }
        free(ts);
        barrier(c, &gen);
    }
    if (pid)
        waitpid(pid, 0, 0);
    return 0;
}
