/* SPDX-License-Identifier: MIT */
/* Streaming-store copy and block-wise reduction (SSE2: every x86-64 CPU; memcpy elsewhere). */
#include "memnt.h"

#include <stdint.h>
#include <string.h>

#if defined(__x86_64__)
#include <cpuid.h>
#include <emmintrin.h>
#include <stdatomic.h>

/* Copy 64 bytes at a time from s to d (unaligned loads) with STORE; i is left at the
 * first byte not copied. */
#define COPY64(STORE)                                                                              \
    size_t i = 0;                                                                                  \
    for (; i + 64 <= n; i += 64) {                                                                 \
        __m128i x0 = _mm_loadu_si128((const __m128i *)(s + i));                                    \
        __m128i x1 = _mm_loadu_si128((const __m128i *)(s + i + 16));                               \
        __m128i x2 = _mm_loadu_si128((const __m128i *)(s + i + 32));                               \
        __m128i x3 = _mm_loadu_si128((const __m128i *)(s + i + 48));                               \
        STORE((__m128i *)(d + i), x0);                                                             \
        STORE((__m128i *)(d + i + 16), x1);                                                        \
        STORE((__m128i *)(d + i + 32), x2);                                                        \
        STORE((__m128i *)(d + i + 48), x3);                                                        \
    }

/* rep movsb's slow case: the destination 1..15 bytes after the source in page offset. */
static inline int movsb_slow(const void *dst, const void *src)
{
    uintptr_t rel = ((uintptr_t)dst - (uintptr_t)src) & 4095;
    return rel > 0 && rel < 16;
}

/* ... at sizes where glibc uses it */
static inline int movsb_aliases(const void *dst, const void *src, size_t n)
{
    return n >= 2048 && n < (2u << 20) && movsb_slow(dst, src);
}

/* Enhanced rep movsb (CPUID leaf 7, EBX bit 9), asked once. */
static int has_erms(void)
{
    static _Atomic int erms = -1; /* -1: not asked yet; racing askers get the same answer */
    int v = atomic_load_explicit(&erms, memory_order_relaxed);
    if (v < 0) {
        unsigned a, b = 0, c, d;
        v = __get_cpuid_count(7, 0, &a, &b, &c, &d) && (b & (1u << 9));
        atomic_store_explicit(&erms, v, memory_order_relaxed);
    }
    return v;
}

void ct_copy_handoff(void *dst, const void *src, size_t n)
{
    if (n < CT_HANDOFF_MOVSB_MIN || movsb_slow(dst, src) || !has_erms()) {
        ct_copy(dst, src, n);
        return;
    }
    __asm__ volatile("rep movsb" : "+D"(dst), "+S"(src), "+c"(n) : : "memory");
}

void ct_copy(void *dst, const void *src, size_t n)
{
    if (!movsb_aliases(dst, src, n)) {
        memcpy(dst, src, n);
        return;
    }
    char *d = dst;
    const char *s = src;
    COPY64(_mm_storeu_si128)
    memcpy(d + i, s + i, n - i);
}

void ct_copy_nt(void *dst, const void *src, size_t n)
{
    char *d = dst;
    const char *s = src;
    size_t head = (16 - ((uintptr_t)d & 15)) & 15;
    if (head > n)
        head = n;
    memcpy(d, s, head);
    d += head;
    s += head;
    n -= head;
    COPY64(_mm_stream_si128)
    for (; i + 16 <= n; i += 16)
        _mm_stream_si128((__m128i *)(d + i), _mm_loadu_si128((const __m128i *)(s + i)));
    memcpy(d + i, s + i, n - i);
    _mm_sfence();
}
#else
void ct_copy(void *dst, const void *src, size_t n)
{
    memcpy(dst, src, n);
}

void ct_copy_handoff(void *dst, const void *src, size_t n)
{
    memcpy(dst, src, n);
}

void ct_copy_nt(void *dst, const void *src, size_t n)
{
    memcpy(dst, src, n);
}
#endif

#define BLOCK 4096 /* reduced in L1, then streamed out */

void ct_reduce_nt(const struct ct_red *red, void *dst, const void *a, const void *b, size_t n)
{
    _Alignas(64) unsigned char tmp[BLOCK];
    size_t step = BLOCK / red->esize * red->esize;
    for (size_t i = 0; i < n; i += step) {
        size_t m = n - i < step ? n - i : step;
        red->fn(tmp, (const char *)a + i, (const char *)b + i, m / red->esize);
        ct_copy_nt((char *)dst + i, tmp, m);
    }
}
