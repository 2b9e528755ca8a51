/* SPDX-License-Identifier: MIT */
/* Parsing numbers from the command line and environment, printing byte counts, sorting sizes. */
#ifndef CT_PARSE_H
#define CT_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A byte size with an optional K/M/G/T suffix (powers of 1024, like nccl-tests) and an
 * optional trailing B, or KiB/MiB/GiB/TiB (as colltune prints them). Returns -1 on garbage, a
 * sign, or overflow. */
int ct_parse_size(const char *s, unsigned long long *out);
/* A comma-separated list of sizes (ct_parse_size), each a multiple of elem: their count, the
 * values in *out where out is not NULL (malloc'ed), or -1 with the bad item in bad ("" for an
 * empty list or entry: "8,,16", "8,"). */
long ct_parse_size_list(const char *s, size_t elem, uint64_t **out, char *bad, size_t badlen);
/* A decimal integer in [min, max]; -1 otherwise. */
int ct_parse_int(const char *s, long min, long max, long *out);

/* FNV-1a (64 bits) of the string s, continuing from h (CT_FNV64_BASIS to start): a file's or a
 * record's fingerprint, not a defence against a forger. */
#define CT_FNV64_BASIS 1469598103934665603ull
static inline uint64_t ct_fnv1a64(uint64_t h, const char *s)
{
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

/* "4 KiB", "22.6 KiB", "inf" (UINT64_MAX): a byte count for people. */
const char *ct_bytes_str(uint64_t b, char *buf, size_t len);
/* b exactly, in the largest unit that divides it, never rounded, sep between number and unit:
 * 65536 -> "64 KiB" (sep " ") or "64KiB" (sep "", as the size options read it), 1536 KiB ->
 * "1536 KiB", 1000 -> "1000 B". Returns buf. */
const char *ct_bytes_exact(uint64_t b, const char *sep, char *buf, size_t len);
/* Whether version v is of release series `series` (the first two parts, as many as series
 * has): "4.1.4" is of "4.1" and of "4", not of "5.0". */
bool ct_version_of(const char *v, const char *series);
/* Whether item[0..len) is one of the items of the comma-separated list (spaces after a
 * comma skipped; NULL: none). */
bool ct_list_has(const char *list, const char *item, size_t len);
/* The length of the first of the space-separated words of list that name matches: as an
 * fnmatch pattern (prefix false), or as its prefix (with more after it); 0 when none (NULL:
 * none). */
size_t ct_words_match(const char *list, const char *name, bool prefix);
/* The first control character of s (below 0x20, or 0x7f: a newline would end a line that
 * names s), or NULL where it has none. */
const char *ct_str_ctrl(const char *s);
/* Sort sizes ascending in place and drop repeats; returns the count left. */
size_t ct_sizes_sort_unique(uint64_t *v, size_t n);

#endif
