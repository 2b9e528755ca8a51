/* SPDX-License-Identifier: MIT */
/*
 * sweep --lib LIB --env-search NAME[=V1,V2,...]: the search (tune/libverify_search.c) started
 * with verify's hooks, its tables printed.
 */
#include <stdio.h>

#include "../backend/libmod.h"
#include "../output/sweep_out.h"
#include "cmd.h"
#include "librun.h"

static void table(const void *ctx, const char *name, const char *base,
                  const struct ct_ruleset *sets, int nsets, const struct ct_search_row *rows,
                  int nrows, int coarse)
{
    (void)ctx;
    ct_search_print(stdout, name, base, sets, nsets, rows, nrows, coarse);
}

static void pick(const void *ctx, const char *name, const char *lib, const struct ct_search_row *p,
                 const bool ends[2], bool alone)
{
    (void)ctx;
    ct_search_print_pick(stdout, name, lib, p, ends, alone);
    fflush(stdout);
}

static void found(const void *ctx, const struct ct_lib_env *f, int n, const char *was)
{
    (void)ctx;
    ct_search_print_found(stdout, f, n, was);
}

int ct_libsearch(const struct ct_opts *o, const struct ct_sweep_cfg *cfg)
{
    struct ct_verify_hooks h;
    ct_verify_hooks_init(&h, o);
    h.search_table = table, h.search_pick = pick, h.search_found = found;
    struct ct_libsearch_in in = {.h = &h,
                                 .m = ct_libmod_find(o->lib),
                                 .vars = o->env_search,
                                 .nvars = o->nenv_search,
                                 .env_set = o->nlib_env > 0,
                                 .nranks = o->local ? o->local : o->hosts_ranks,
                                 .timeout_s = o->timeout_s,
                                 .pairs = o->pairs};
    int code = ct_libverify_search(&in, cfg);
    fflush(stdout);
    return code;
}
