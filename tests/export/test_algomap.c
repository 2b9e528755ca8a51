/* SPDX-License-Identifier: MIT */
/*
 * The mapping table: every row names a real colltune algorithm for a collective it implements,
 * rows are unambiguous, versions gate rows, and the size conversion keeps every size of a
 * colltune range inside the converted range (and every size outside, outside).
 */
#include <criterion/criterion.h>
#include <string.h>

#include "tune/tune.h"
#include "output/algomap.h"

Test(algomap, rows_name_real_algorithms)
{
    size_t n = 0;
    for (const struct ct_algomap_row *r; (r = ct_algomap_at(n)); n++) {
        const struct ct_algo *a = ct_algo_find(r->algo);
        cr_assert_not_null(a, "row %zu: unknown colltune algorithm '%s'", n, r->algo);
        cr_assert(a->colls & CT_COLL_BIT(r->coll), "row %zu: %s does not implement %s", n, r->algo,
                  ct_coll_name(r->coll));
        cr_assert(r->lib >= 0 && r->lib < CT_LIB_COUNT);
        cr_assert(r->target && *r->target && r->note && *r->note, "row %zu", n);
        cr_assert(strlen(r->note) < 100, "row %zu: notes are one short line", n);
        if (r->lib == CT_LIB_OMPI || r->lib == CT_LIB_IMPI)
            cr_assert_gt(r->id, 0, "row %zu: numeric id", n);
        if (r->since)
            cr_assert_eq(ct_version_check(r->since, NULL), 0);
        for (size_t k = 0; k < n; k++) {
            const struct ct_algomap_row *q = ct_algomap_at(k);
            bool same = q->lib == r->lib && q->coll == r->coll && !strcmp(q->algo, r->algo);
            cr_assert(!same || (q->since && r->since && strcmp(q->since, r->since)),
                      "rows %zu and %zu map %s %s twice for the same versions", k, n,
                      ct_lib_name(r->lib), r->algo);
        }
    }
    cr_assert_gt(n, 80);
}

Test(algomap, size_table_covers_every_library_and_collective)
{
    for (int l = 0; l < CT_LIB_COUNT; l++)
        for (int c = 0; c < CT_COLL_COUNT; c++)
            cr_assert_not_null(ct_algomap_size(l, (enum ct_coll)c), "%s %s", ct_lib_name(l),
                               ct_coll_name((enum ct_coll)c));
    cr_assert_eq(ct_algomap_size(CT_LIB_NCCL, CT_ALLTOALL)->unit, CT_UNIT_NONE);
    cr_assert_eq(ct_algomap_size(CT_LIB_UCC, CT_REDUCESCATTER)->unit, CT_UNIT_PER_RANK);
    cr_assert_eq(ct_algomap_size(CT_LIB_IMPI, CT_ALLGATHER)->unit, CT_UNIT_PER_RANK);
    cr_assert_eq(ct_algomap_size(CT_LIB_OMPI, CT_ALLGATHER)->unit, CT_UNIT_SAME);
}

Test(algomap, versions)
{
    cr_assert_lt(ct_version_cmp("2.27.5", "2.28"), 0);
    cr_assert_eq(ct_version_cmp("4.1", "4.1.0"), 0);
    cr_assert_gt(ct_version_cmp("4.10", "4.9"), 0);
    cr_assert_gt(ct_version_cmp("2021.6", "2019"), 0);
    cr_assert_eq(ct_version_check("4.1.4", NULL), 0);
    cr_assert_neq(ct_version_check("4.x", NULL), 0);
    cr_assert_neq(ct_version_check("4..1", NULL), 0);
    cr_assert_neq(ct_version_check("", NULL), 0);
    cr_assert_neq(ct_version_check(".4", NULL), 0);
    cr_assert_neq(ct_version_check("4.", NULL), 0);
}

Test(algomap, rows_are_gated_by_version)
{
    const struct ct_algomap_row *later, *r;
    r = ct_algomap_find(CT_LIB_UCC, CT_ALLREDUCE, "ring", "1.2", &later);
    cr_assert_null(r, "UCC ring allreduce arrived in 1.8");
    cr_assert_not_null(later);
    cr_assert_str_eq(later->since, "1.8");
    r = ct_algomap_find(CT_LIB_UCC, CT_ALLREDUCE, "ring", "1.8.0", &later);
    cr_assert_not_null(r);
    cr_assert_str_eq(r->target, "ring");
    r = ct_algomap_find(CT_LIB_OMPI, CT_ALLREDUCE, "mesh-1step", NULL, &later);
    cr_assert_null(r, "default Open MPI 4.1 has no allgather_reduce");
    r = ct_algomap_find(CT_LIB_OMPI, CT_ALLREDUCE, "mesh-1step", "6.0", NULL);
    cr_assert_eq(r->id, 7);
    r = ct_algomap_find(CT_LIB_OMPI, CT_ALLREDUCE, "kangaring", "99", &later);
    cr_assert_null(r);
    cr_assert_null(later, "no version has it");
    r = ct_algomap_find(CT_LIB_MPICH, CT_ALLREDUCE, "rdh", NULL, NULL);
    cr_assert_str_eq(r->target, "MPIR_Allreduce_intra_reduce_scatter_allgather");
}

Test(algomap, range_conversion_keeps_every_size_on_its_side)
{
    const struct ct_size_meaning *per = ct_algomap_size(CT_LIB_UCC, CT_REDUCESCATTER);
    const struct ct_size_meaning *same = ct_algomap_size(CT_LIB_OMPI, CT_ALLREDUCE);
    uint64_t lo, hi;
    cr_assert(ct_algomap_range(same, 8, 4096, 65536, &lo, &hi));
    cr_assert(lo == 4096 && hi == 65536);
    static const int ranks[] = {1, 2, 3, 7, 8, 12};
    static const uint64_t bounds[][2] = {
        {0, 4096}, {100, 1000}, {4096, CT_BYTES_INF}, {13, 29}, {0, 1}};
    for (size_t a = 0; a < sizeof ranks / sizeof ranks[0]; a++)
        for (size_t b = 0; b < sizeof bounds / sizeof bounds[0]; b++) {
            int n = ranks[a];
            uint64_t min = bounds[b][0], max = bounds[b][1];
            bool nonempty = ct_algomap_range(per, n, min, max, &lo, &hi);
            /* every size S = n*s that occurs: S in [min, max) <=> s in [lo, hi) */
            for (uint64_t s = 0; s < 3000; s++) {
                uint64_t S = s * (uint64_t)n;
                bool in_c = S >= min && S < max;
                bool in_l = nonempty && s >= lo && s < hi;
                cr_assert_eq(in_c, in_l, "n=%d [%llu,%llu) s=%llu", n, (unsigned long long)min,
                             (unsigned long long)max, (unsigned long long)s);
            }
        }
    cr_assert_not(ct_algomap_range(ct_algomap_size(CT_LIB_NCCL, CT_ALLTOALL), 8, 0, 10, &lo, &hi));
}
