/* SPDX-License-Identifier: MIT */
/*
 * Pair schedule for point-to-point validation: a round-robin tournament (circle method) over
 * n units, so every pair meets exactly once, all pairs of a round run at once, in O(n) rounds.
 */
#ifndef CT_PAIRS_H
#define CT_PAIRS_H

#include "../lib/err.h"

struct ct_pair {
    int a, b; /* unit indices, a < b */
};

/* rounds x per_round pairs, round-major. n - 1 rounds of n / 2 pairs for even n; n rounds of
 * (n - 1) / 2 pairs for odd n (one unit sits out each round). */
struct ct_pairs {
    int n, rounds, per_round;
    struct ct_pair *pair;
};

/* Rounds the schedule takes for n units (0 for n < 2). */
int ct_pairs_rounds(int n);
/* Build the schedule for n units (2 <= n <= 1 << 20); CT_EINVAL otherwise. */
int ct_pairs_build(struct ct_pairs *p, int n, struct ct_err *err);
void ct_pairs_release(struct ct_pairs *p);
/* The pairs of round r (per_round of them). */
const struct ct_pair *ct_pairs_round(const struct ct_pairs *p, int r);
/* The partner of unit u in round r, -1 when u sits out. */
int ct_pairs_partner(const struct ct_pairs *p, int r, int u);

#endif
