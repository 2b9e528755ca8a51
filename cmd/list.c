/* SPDX-License-Identifier: MIT */
/* colltune list: generated from the tables. */
#include <stdio.h>
#include <string.h>

#include "../algos/algo.h"
#include "../transport/tp.h"
#include "cmd.h"

static void list_algos(int verbose)
{
    for (size_t i = 0; ct_algo_at(i); i++) {
        const struct ct_algo *a = ct_algo_at(i);
        printf("%-12s", a->name);
        for (int c = 0; c < CT_COLL_COUNT; c++)
            if (a->colls & CT_COLL_BIT(c))
                printf(" %s", ct_coll_name((enum ct_coll)c));
        printf("\n");
        if (!verbose)
            continue;
        printf("    %s\n", a->summary);
        unsigned own = ct_algo_params(a, CT_ALLREDUCE);
        for (int p = 0; p < CT_P_COUNT; p++) {
            const struct ct_param_desc *d = ct_param_desc((enum ct_param_id)p);
            printf("    --%-9s default %-8llu range %llu..%llu %-6s %s%s\n", d->name,
                   (unsigned long long)d->def, (unsigned long long)d->min,
                   (unsigned long long)d->max, d->unit, own & CT_PBIT(p) ? "" : "(no effect) ",
                   d->summary);
        }
    }
}

int cmd_list(int argc, char **argv)
{
    int verbose = 0;
    const char *what = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            printf("usage: colltune list algos|colls|transports|datatypes|ops [--verbose]\n");
            return CT_EXIT_OK;
        } else if (!strcmp(argv[i], "-v") || !strcmp(argv[i], "--verbose")) {
            verbose = 1;
        } else if (argv[i][0] == '-') {
            return ct_cmd_fail("list", CT_EXIT_USAGE, "unknown option '%s'", argv[i]);
        } else if (what) {
            return ct_cmd_fail("list", CT_EXIT_USAGE, "unexpected argument '%s'", argv[i]);
        } else {
            what = argv[i];
        }
    }
    if (!what)
        return ct_cmd_fail("list", CT_EXIT_USAGE,
                           "what to list? algos, colls, transports, datatypes or ops");
    if (!strcmp(what, "algos") || !strcmp(what, "algorithms")) {
        list_algos(verbose);
    } else if (!strcmp(what, "colls") || !strcmp(what, "collectives")) {
        for (int c = 0; c < CT_COLL_COUNT; c++)
            printf("%s\n", ct_coll_name((enum ct_coll)c));
    } else if (!strcmp(what, "transports")) {
        for (size_t i = 0; ct_tp_at(i); i++)
            printf("%-6s %s%s\n", ct_tp_at(i)->name, ct_tp_at(i)->built ? "" : "(not built) ",
                   ct_tp_at(i)->summary);
    } else if (!strcmp(what, "datatypes") || !strcmp(what, "types")) {
        for (int t = 0; t < CT_DTYPE_COUNT; t++)
            printf("%-9s %zu bytes\n", ct_dtype_name((enum ct_dtype)t),
                   ct_dtype_size((enum ct_dtype)t));
    } else if (!strcmp(what, "ops")) {
        for (int o = 0; o < CT_REDOP_COUNT; o++)
            printf("%s\n", ct_redop_name((enum ct_redop)o));
    } else {
        return ct_cmd_fail("list", CT_EXIT_USAGE,
                           "cannot list '%s' (algos, colls, transports, datatypes, ops)", what);
    }
    return CT_EXIT_OK;
}
