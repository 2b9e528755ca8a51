/* SPDX-License-Identifier: MIT */
/* Size and integer parsing (command-line options). */
#include <criterion/criterion.h>
#include <stdlib.h>

#include "lib/parse.h"

Test(parse, sizes)
{
    unsigned long long v;
    cr_assert_eq(ct_parse_size("8", &v), 0);
    cr_assert_eq(v, 8);
    cr_assert_eq(ct_parse_size("4K", &v), 0);
    cr_assert_eq(v, 4096);
    cr_assert_eq(ct_parse_size("32M", &v), 0);
    cr_assert_eq(v, 32ull << 20);
    cr_assert_eq(ct_parse_size("1g", &v), 0);
    cr_assert_eq(v, 1ull << 30);
    cr_assert_eq(ct_parse_size("2TB", &v), 0);
    cr_assert_eq(v, 2ull << 40);
    cr_assert_eq(ct_parse_size("0", &v), 0);
    cr_assert_eq(v, 0);
    cr_assert_eq(ct_parse_size("1KiB", &v), 0); /* what colltune prints, read back */
    cr_assert_eq(v, 1024);
    cr_assert_eq(ct_parse_size("64MiB", &v), 0);
    cr_assert_eq(v, 64ull << 20);
}

Test(parse, bad_sizes)
{
    unsigned long long v;
    const char *bad[] = {
        "",   "-8", "+8",  "8Q",  "K",   "1.5M", "99999999999999999999", "99999999999999T",
        "8 ", " 8", "8KK", "8iB", "8Ki", "8KiBB"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        cr_assert_eq(ct_parse_size(bad[i], &v), -1, "'%s' should be rejected", bad[i]);
    cr_assert_eq(ct_parse_size(NULL, &v), -1);
}

Test(parse, ints)
{
    long v;
    cr_assert_eq(ct_parse_int("17", 1, 100, &v), 0);
    cr_assert_eq(v, 17);
    cr_assert_eq(ct_parse_int("-3", -5, 5, &v), 0);
    cr_assert_eq(v, -3);
    cr_assert_eq(ct_parse_int("0", 1, 100, &v), -1);
    cr_assert_eq(ct_parse_int("101", 1, 100, &v), -1);
    cr_assert_eq(ct_parse_int("1x", 1, 100, &v), -1);
    cr_assert_eq(ct_parse_int("", 1, 100, &v), -1);
    cr_assert_eq(ct_parse_int("99999999999999999999999", 1, 100, &v), -1);
}

Test(parse, sizes_sort_unique)
{
    uint64_t v[] = {4096, 8, UINT64_MAX, 8, 0, 4096, 16}, want[] = {0, 8, 16, 4096, UINT64_MAX};
    cr_assert_eq(ct_sizes_sort_unique(v, 7), 5);
    for (size_t i = 0; i < 5; i++)
        cr_assert_eq(v[i], want[i], "v[%zu] = %llu", i, (unsigned long long)v[i]);
    cr_assert_eq(ct_sizes_sort_unique(v, 0), 0);
}

Test(parse, list_has_whole_items_only)
{
    cr_expect(ct_list_has("ompi:ring,ompi:rdh", "ompi:rdh", 8));
    cr_expect(ct_list_has("ompi:ring, ompi:rdh", "ompi:rdh", 8), "a space after the comma");
    cr_expect(ct_list_has("ompi:ring,ompi:rdh", "ompi:ring,x", 9), "item is a prefix of its text");
    cr_expect(!ct_list_has("ompi:segmented_ring", "ompi:ring", 9), "not a part of an item");
    cr_expect(!ct_list_has("ompi:ring", "ompi:rin", 8), "not a prefix of an item");
    cr_expect(!ct_list_has("", "x", 1));
    cr_expect(!ct_list_has(NULL, "x", 1));
}

Test(parse, size_lists)
{
    uint64_t *v = NULL;
    char bad[16];
    cr_assert_eq(ct_parse_size_list("8,64K,1M", 4, &v, bad, sizeof bad), 3);
    cr_assert(v[0] == 8 && v[1] == 65536 && v[2] == 1 << 20);
    free(v);
    cr_assert_eq(ct_parse_size_list("16", 8, NULL, bad, sizeof bad), 1);
    const char *no[] = {"", ",", "8,", ",8", "8,,16", "6", "8,x", "99999999999999999999T"};
    for (size_t i = 0; i < sizeof no / sizeof *no; i++) {
        v = (uint64_t *)1;
        cr_assert_eq(ct_parse_size_list(no[i], 4, &v, bad, sizeof bad), -1, "%s", no[i]);
        cr_assert_eq(v, (uint64_t *)1, "out untouched on %s", no[i]);
    }
    cr_assert_eq(ct_parse_size_list("8,6", 4, NULL, bad, sizeof bad), -1);
    cr_assert_str_eq(bad, "6");
    cr_assert_eq(ct_parse_size_list("8,,16", 4, NULL, bad, sizeof bad), -1);
    cr_assert_str_eq(bad, "");
}

/* Exact sizes, as an export's ranges and a refusal naming a size to pass print them: the
 * largest unit that divides, never rounded; the option form parses back to the same bytes. */
Test(parse, bytes_exact_round_trips)
{
    char b[32];
    cr_expect_str_eq(ct_bytes_exact(65536, " ", b, sizeof b), "64 KiB");
    cr_expect_str_eq(ct_bytes_exact(1536u << 10, "", b, sizeof b), "1536KiB");
    cr_expect_str_eq(ct_bytes_exact(1000, " ", b, sizeof b), "1000 B");
    cr_expect_str_eq(ct_bytes_exact(0, " ", b, sizeof b), "0 B");
    cr_expect_str_eq(ct_bytes_exact(1ull << 40, "", b, sizeof b), "1TiB");
    const uint64_t v[] = {64, 1000064, 1536u << 10, 64u << 20, 3ull << 30};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        unsigned long long back = 0;
        ct_bytes_exact(v[i], "", b, sizeof b);
        cr_expect(ct_parse_size(b, &back) == 0 && back == v[i], "%s read back as %llu", b, back);
    }
}
