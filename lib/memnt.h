/* SPDX-License-Identifier: MIT */
/*
 * Non-temporal (streaming) stores for destinations far larger than the caches: the bytes go
 * to memory without first reading the destination lines (no read-for-ownership) and without
 * evicting what the caches hold. Only worth it above a measured size (shm: RDV_NT_MIN).
 */
#ifndef CT_MEMNT_H
#define CT_MEMNT_H

#include <stddef.h>

#include "redfn.h"

/*
 * memcpy for the data path. glibc's memcpy copies 4 KiB..1 MiB with `rep movsb`, which on
 * this AMD EPYC VM runs 13-27x slower when the destination lies 1..15 bytes past the
 * source modulo the 4 KiB page (64 KiB at +4: 21.4 us instead of 1.4; measured by
 * tests/bench/copy_alias.c). Those copies take a plain vector loop here (1.5 us); every
 * other copy is memcpy (from 16 bytes on the loop is no faster).
 */
void ct_copy(void *dst, const void *src, size_t n);
/* memcpy with streaming stores (dst and src must not overlap). */
void ct_copy_nt(void *dst, const void *src, size_t n);
/* dst = a (op) b through red->fn in cache-sized blocks, each streamed out to dst; dst may be
 * a or b exactly. n is in bytes, a multiple of red->esize. */
void ct_reduce_nt(const struct ct_red *red, void *dst, const void *a, const void *b, size_t n);

#endif
