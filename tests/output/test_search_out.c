/* SPDX-License-Identifier: MIT */
/*
 * sweep --lib --env-search's closing lines (output/paired_table.c): what a variable's search
 * found, said as the sweep's value where it is the only variable searched and as found where
 * there are two; and, of two, the values the sweep runs with and whether the first variable,
 * searched again with the second's value found, settled.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "output/sweep_out.h"

static char *said(void (*f)(FILE *, const void *), const void *arg)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    cr_assert_not_null(m);
    f(m, arg);
    fclose(m);
    return buf;
}

static const struct ct_lib_env vars[2] = {{"A_LIMIT", "65536"}, {"B_SIZE", "131072"}};

static void found_settled(FILE *f, const void *w)
{
    ct_search_print_found(f, vars, 2, w);
}

static void second_none(FILE *f, const void *w)
{
    struct ct_lib_env v[2] = {{"A_LIMIT", "65536"}, {"B_SIZE", ""}};
    ct_search_print_found(f, v, 2, w);
}

Test(search_out, found_says_the_values_and_whether_the_first_settled)
{
    char *s = said(second_none, NULL); /* the second found none: the first not searched again */
    cr_expect_str_eq(s, "--env-search: the sweep runs with A_LIMIT=65536\n\n");
    free(s);
    s = said(found_settled, "65536");
    cr_expect_str_eq(s, "--env-search: the sweep runs with A_LIMIT=65536, B_SIZE=131072\n"
                        "  (A_LIMIT searched again with B_SIZE's value: 65536 again, settled)\n\n");
    free(s);
    s = said(found_settled, "16384");
    cr_expect_str_eq(s,
                     "--env-search: the sweep runs with A_LIMIT=65536, B_SIZE=131072\n"
                     "  (A_LIMIT searched again with B_SIZE's value: 65536, where it was 16384 "
                     "before, and B_SIZE was found with that: not settled; verify judges the two "
                     "together against the plain defaults)\n\n");
    free(s);
}

static void none_found(FILE *f, const void *w)
{
    struct ct_lib_env v[2] = {{"A_LIMIT", ""}, {"B_SIZE", "131072"}};
    ct_search_print_found(f, v, 2, w);
}

Test(search_out, none_found_is_said_as_the_librarys_own)
{
    char *s = said(none_found, "8192");
    cr_expect_str_eq(s, "--env-search: the sweep runs with B_SIZE=131072\n"
                        "  (A_LIMIT searched again with B_SIZE's value: none found, where it was "
                        "8192 before, and B_SIZE was found with that: not settled; verify judges "
                        "the two together against the plain defaults)\n\n");
    free(s);
    s = said(none_found, "");
    cr_expect_str_eq(
        s, "--env-search: the sweep runs with B_SIZE=131072\n"
           "  (A_LIMIT searched again with B_SIZE's value: none found again, settled)\n\n");
    free(s);
}

static void pick(FILE *f, const void *alone)
{
    struct ct_search_row r = {.value = "65536", .all = 0.553};
    bool ends[2] = {false, true}; /* none above it */
    ct_search_print_pick(f, "A_LIMIT", "Open MPI", &r, ends, *(const bool *)alone);
    ct_search_print_pick(f, "A_LIMIT", "Open MPI", NULL, ends, *(const bool *)alone);
}

Test(search_out, a_pick_is_the_sweeps_only_where_one_variable_is_searched)
{
    bool alone = true;
    char *s = said(pick, &alone);
    cr_expect_str_eq(s, "the sweep runs with A_LIMIT=65536 (geomean 0.553); verify judges it again "
                        "with the rules\n"
                        "  (the largest value judged: one past it may be faster still; search it "
                        "with A_LIMIT=V1,V2,...)\n\n"
                        "no value is faster with no size slower: the sweep runs with Open MPI's "
                        "own value (A_LIMIT unset)\n\n");
    free(s);
    alone = false;
    s = said(pick, &alone);
    cr_expect_str_eq(s, "found: A_LIMIT=65536 (geomean 0.553)\n"
                        "  (the largest value judged: one past it may be faster still; search it "
                        "with A_LIMIT=V1,V2,...)\n\n"
                        "no value is faster with no size slower: none found for A_LIMIT (Open "
                        "MPI's own value)\n\n");
    free(s);
}
