/* SPDX-License-Identifier: MIT */
/* Round-robin tournament by the circle method: unit m-1 stays fixed, the others rotate. */
#include <stdlib.h>
#include <string.h>

#include "pairs.h"

int ct_pairs_rounds(int n)
{
    if (n < 2)
        return 0;
    return n % 2 ? n : n - 1;
}

int ct_pairs_build(struct ct_pairs *p, int n, struct ct_err *err)
{
    memset(p, 0, sizeof *p);
    if (n < 2 || n > (1 << 20))
        return ct_err_set(err, CT_EINVAL, "pair schedule: %d units (2..%d)", n, 1 << 20);
    int m = n % 2 ? n + 1 : n; /* with a dummy unit n when n is odd */
    p->n = n;
    p->rounds = m - 1;
    p->per_round = n / 2;
    p->pair = ct_xcalloc((size_t)p->rounds * (size_t)p->per_round, sizeof *p->pair);
    size_t k = 0;
    for (int r = 0; r < m - 1; r++) {
        for (int i = 0; i < m / 2; i++) {
            int a = i == 0 ? m - 1 : (r + i) % (m - 1);
            int b = (r - i + (m - 1)) % (m - 1);
            if (a >= n || b >= n)
                continue; /* the dummy: that unit sits out */
            p->pair[k].a = a < b ? a : b;
            p->pair[k].b = a < b ? b : a;
            k++;
        }
    }
    return 0;
}

void ct_pairs_release(struct ct_pairs *p)
{
    free(p->pair);
    memset(p, 0, sizeof *p);
}

const struct ct_pair *ct_pairs_round(const struct ct_pairs *p, int r)
{
    return &p->pair[(size_t)r * (size_t)p->per_round];
}

int ct_pairs_partner(const struct ct_pairs *p, int r, int u)
{
    const struct ct_pair *q = ct_pairs_round(p, r);
    for (int i = 0; i < p->per_round; i++) {
        if (q[i].a == u)
            return q[i].b;
        if (q[i].b == u)
            return q[i].a;
    }
    return -1;
}
