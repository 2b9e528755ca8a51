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
/*
 * A copy another core reads next (a mailbox publish): `rep movsb` from CT_HANDOFF_MOVSB_MIN
 * bytes where the CPU has fast strings (ERMS), else ct_copy. glibc starts `rep movsb` at
 * 2,112 bytes; below, its vector loop leaves lines that the peer's core then reads more
 * slowly (2-core AMD EPYC VM, 2 ranks, 3 alternating runs: oneshot AllReduce 1.5-2 KiB
 * 1.04-1.27 us -> 0.61-0.71, AllGather of 2 KiB blocks 1.05-1.36 -> 0.65-0.67; 4 KiB,
 * where glibc already uses it, 0.74-0.80 -> 0.72-0.73; below 1 KiB within noise). The slot
 * copies of the channels measured the same either way (unregistered ring and mesh-1step,
 * 1-8 KiB), so they keep ct_copy.
 */
#define CT_HANDOFF_MOVSB_MIN 1024
void ct_copy_handoff(void *dst, const void *src, size_t n);
/* memcpy with streaming stores (dst and src must not overlap). */
void ct_copy_nt(void *dst, const void *src, size_t n);
/* dst = a (op) b through red->fn in cache-sized blocks, each streamed out to dst; dst may be
 * a or b exactly. n is in bytes, a multiple of red->esize. */
void ct_reduce_nt(const struct ct_red *red, void *dst, const void *a, const void *b, size_t n);

#endif
