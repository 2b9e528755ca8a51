/* SPDX-License-Identifier: MIT */
/* Monotonic clock helpers. */
#ifndef CT_CLOCK_H
#define CT_CLOCK_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

static inline int64_t ct_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Now, UTC, ISO 8601 ("2026-11-29T13:22:05Z": 21 bytes with its NUL) into buf; returns buf. */
static inline char *ct_utc_iso(char *buf, size_t len)
{
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

static inline void ct_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

#endif
