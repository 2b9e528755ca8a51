/* SPDX-License-Identifier: MIT */
/*
 * glibc memcpy against ct_copy (lib/memnt.c) for destinations 0..60 bytes past the source
 * in page offset, 64 KiB copies: the case ct_copy avoids. Not a test; run by hand:
 *   cc -O2 -I. tests/bench/copy_alias.c lib/memnt.c -o /tmp/copy_alias && /tmp/copy_alias
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/memnt.h"

static double now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec * 1e-3;
}

int main(void)
{
    enum { N = 65536, R = 5000 };
    char *a = aligned_alloc(4096, 1 << 20), *b = aligned_alloc(4096, 1 << 20);
    memset(a, 1, 1 << 20);
    memset(b, 2, 1 << 20);
    printf("dst-src  memcpy us  ct_copy us   (%d B, mean of %d)\n", N, R);
    for (int rel = 0; rel < 64; rel += 4) {
        double t0 = now_us();
        for (int r = 0; r < R; r++) {
            memcpy(b + rel, a, N);
            __asm__ volatile("" ::"r"(b) : "memory");
        }
        double t1 = now_us();
        for (int r = 0; r < R; r++) {
            ct_copy(b + rel, a, N);
            __asm__ volatile("" ::"r"(b) : "memory");
        }
        double t2 = now_us();
        printf("%7d  %9.2f  %10.2f\n", rel, (t1 - t0) / R, (t2 - t1) / R);
    }
    free(a);
    free(b);
    return 0;
}
