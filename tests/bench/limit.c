/* SPDX-License-Identifier: MIT */
/*
 * The hardware limit for a two-rank float-sum AllReduce on one host: two processes map
 * each other's buffers (one shared mapping) and each reduces its half of the two inputs
 * straight into both outputs. No library, no copies beyond that. Timed like colltune:
 * barrier, iteration, max over both processes, median. Prints
 * "size_bytes median_us busbw_GBps" per size.
 */
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct ctl {
    _Alignas(64) atomic_uint bar[2];
    _Alignas(64) double t[2][64];
};

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static void barrier(struct ctl *c, int me, unsigned *gen)
{
    (*gen)++;
    atomic_store_explicit(&c->bar[me], *gen, memory_order_release);
    while (atomic_load_explicit(&c->bar[!me], memory_order_acquire) < *gen)
        ;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void reduce_half(float *o0, float *o1, const float *a, const float *b, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        float v = a[i] + b[i];
        o0[i] = v;
        o1[i] = v;
    }
}

int main(int argc, char **argv)
{
    long minb = argc > 1 ? atol(argv[1]) : 8, maxb = argc > 2 ? atol(argv[2]) : 256L << 20;
    int factor = argc > 3 ? atoi(argv[3]) : 4, iters = argc > 4 ? atoi(argv[4]) : 20;
    if (iters > 64)
        iters = 64;
    size_t mb = (size_t)maxb;
    char *mem = mmap(NULL, sizeof(struct ctl) + 4 * mb, PROT_READ | PROT_WRITE,
                     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (mem == MAP_FAILED)
        return 1;
    struct ctl *c = (struct ctl *)mem;
    float *in[2] = {(float *)(mem + sizeof *c), (float *)(mem + sizeof *c + mb)};
    float *out[2] = {(float *)(mem + sizeof *c + 2 * mb), (float *)(mem + sizeof *c + 3 * mb)};
    for (size_t i = 0; i < mb / 4; i++)
        in[0][i] = in[1][i] = (float)(i % 5);
    pid_t pid = fork();
    int me = pid == 0;
    unsigned gen = 0;
    for (long size = minb; size <= maxb; size *= factor) {
        size_t n = (size_t)size / 4, lo = me ? n / 2 : 0, hi = me ? n : n / 2;
        for (int i = 0; i < 5 + iters; i++) {
            barrier(c, me, &gen);
            double t0 = now_us();
            reduce_half(out[0] + lo, out[1] + lo, in[0] + lo, in[1] + lo, hi - lo);
            barrier(c, me, &gen); /* the op ends when both halves are in both outputs */
            if (i >= 5)
                c->t[me][i - 5] = now_us() - t0;
        }
        barrier(c, me, &gen);
        if (!me) {
            double t[64];
            for (int i = 0; i < iters; i++)
                t[i] = c->t[0][i] > c->t[1][i] ? c->t[0][i] : c->t[1][i];
            qsort(t, (size_t)iters, sizeof(double), cmp);
            double med = iters % 2 ? t[iters / 2] : (t[iters / 2 - 1] + t[iters / 2]) / 2;
            printf("%ld %.3f %.4f\n", size, med, (double)size / med / 1e3);
            fflush(stdout);
        }
        barrier(c, me, &gen);
    }
    if (me)
        _exit(0);
    waitpid(pid, NULL, 0);
    return 0;
}
