/* SPDX-License-Identifier: MIT */
/* Pair schedule: every pair exactly once within the stated rounds, nobody twice in a round. */
#include <criterion/criterion.h>
#include <stdlib.h>

#include "validate/pairs.h"

Test(pairs, covers_every_pair_in_stated_rounds)
{
    for (int n = 2; n <= 64; n++) {
        struct ct_pairs p;
        struct ct_err err = {0};
        cr_assert_eq(ct_pairs_build(&p, n, &err), 0);
        cr_assert_eq(p.rounds, ct_pairs_rounds(n));
        cr_assert_eq(p.rounds, n % 2 ? n : n - 1, "n=%d: O(n) rounds", n);
        unsigned char *seen = calloc((size_t)n * (size_t)n, 1);
        int *in_round = calloc((size_t)n, sizeof *in_round);
        for (int r = 0; r < p.rounds; r++) {
            const struct ct_pair *q = ct_pairs_round(&p, r);
            for (int u = 0; u < n; u++)
                in_round[u] = 0;
            for (int i = 0; i < p.per_round; i++) {
                cr_assert(q[i].a >= 0 && q[i].a < q[i].b && q[i].b < n, "n=%d r=%d", n, r);
                cr_assert_eq(in_round[q[i].a]++, 0, "n=%d r=%d: unit %d twice", n, r, q[i].a);
                cr_assert_eq(in_round[q[i].b]++, 0, "n=%d r=%d: unit %d twice", n, r, q[i].b);
                cr_assert_eq(seen[q[i].a * n + q[i].b]++, 0, "n=%d: pair met twice", n);
                cr_assert_eq(ct_pairs_partner(&p, r, q[i].a), q[i].b);
                cr_assert_eq(ct_pairs_partner(&p, r, q[i].b), q[i].a);
            }
            int idle = 0;
            for (int u = 0; u < n; u++)
                idle += in_round[u] == 0;
            cr_assert_eq(idle, n % 2, "n=%d r=%d: %d idle", n, r, idle);
        }
        for (int a = 0; a < n; a++)
            for (int b = a + 1; b < n; b++)
                cr_assert_eq(seen[a * n + b], 1, "n=%d: pair %d-%d never met", n, a, b);
        free(seen);
        free(in_round);
        ct_pairs_release(&p);
    }
}

Test(pairs, rejects_bad_sizes)
{
    struct ct_pairs p;
    struct ct_err err = {0};
    cr_expect_eq(ct_pairs_build(&p, 1, &err), CT_EINVAL);
    cr_expect_eq(ct_pairs_build(&p, 0, &err), CT_EINVAL);
    cr_expect_eq(ct_pairs_rounds(1), 0);
    cr_expect_eq(ct_pairs_rounds(7), 7);
}
