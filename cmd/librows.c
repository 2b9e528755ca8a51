/* SPDX-License-Identifier: MIT */
/*
 * run|sweep --lib LIB, in each rank: the engine's rows. The names --algos asks for are the
 * library's, a --chunk fixed for the sweep is a segment size some row asked for reads, and
 * run's one row (--algo LIB:NAME, LIB:list, or the default row).
 */
#include <stdio.h>
#include <string.h>

#include "../lib/parse.h"
#include "../tune/sweep.h"
#include "cmd.h"
#include "librun.h"

/* The names of the engine's rows for the collectives of colls, each once, ", "-separated;
 * how many of those asked (asked: --algos, NULL for all) read a segment size. */
static int row_names(const struct ct_backend *be, void *ctx, unsigned colls, const char *asked,
                     char *names, size_t len, struct ct_err *err)
{
    const struct ct_algo *rows[64];
    size_t off = 0;
    int seg = 0;
    names[0] = 0;
    for (int c = 0; c < CT_COLL_COUNT; c++) {
        int n = colls & CT_COLL_BIT(c) ? be->candidates(ctx, (enum ct_coll)c, rows, 64, err) : 0;
        if (n < 0)
            return n;
        for (int i = 0; i < n && i < 64; i++) {
            seg +=
                ct_sweep_row_asked(asked, rows[i]->name) && (rows[i]->params & CT_PBIT(CT_P_CHUNK));
            if (off < len && !ct_list_has(names, rows[i]->name, strlen(rows[i]->name)))
                off += (size_t)snprintf(names + off, len - off, "%s%s", off ? ", " : "",
                                        rows[i]->name);
        }
    }
    return seg;
}

int ct_lib_rows_check(const struct ct_opts *o, unsigned colls, const struct ct_backend *be,
                      void *ctx)
{
    char names[1024];
    struct ct_err err = {0};
    int seg = row_names(be, ctx, colls, o->lib_algo, names, sizeof names, &err);
    if (seg < 0)
        return be->root ? ct_cmd_fail("sweep", CT_EXIT_USAGE, "%s", err.msg) : CT_EXIT_USAGE;
    if (o->params.v[CT_P_CHUNK] && !seg) /* a fixed segment size no row swept reads */
        return be->root ? ct_cmd_fail("sweep", CT_EXIT_USAGE,
                                      "--chunk: no %s row swept sets a segment size (swept: %s)",
                                      be->library, o->lib_algo ? o->lib_algo : names)
                        : CT_EXIT_USAGE;
    for (const char *t = o->lib_algo ? o->lib_algo : ""; *t;
         t += strcspn(t, ",") + (t[strcspn(t, ",")] == ','))
        if (!ct_list_has(names, t, strcspn(t, ",")))
            return be->root ? ct_cmd_fail("sweep", CT_EXIT_USAGE,
                                          "%s has no algorithm '%.*s' for the collectives swept "
                                          "(it has %s)",
                                          be->library, (int)strcspn(t, ","), t, names)
                            : CT_EXIT_USAGE;
    return 0;
}

const struct ct_algo *ct_lib_candidate(const struct ct_opts *o, const char *cmd,
                                       const struct ct_backend *be, void *ctx)
{
    const struct ct_algo *rows[64];
    struct ct_err err = {0};
    char want[96], names[1024] = "";
    snprintf(want, sizeof want, "%s", o->lib_algo ? o->lib_algo : "");
    if (!*want)
        snprintf(want, sizeof want, "%s:default", o->lib);
    int n = be->candidates(ctx, o->coll, rows, 64, &err);
    if (n < 0) {
        if (be->root)
            ct_cmd_fail(cmd, CT_EXIT_USAGE, "%s", err.msg);
        return NULL;
    }
    for (int i = 0; i < n && i < 64; i++) {
        if (strcmp(rows[i]->name, want))
            continue;
        if (!o->params.v[CT_P_CHUNK] || rows[i]->params & CT_PBIT(CT_P_CHUNK))
            return rows[i];
        if (be->root) /* --chunk is the segment size: a row that has none would ignore it */
            ct_cmd_fail(cmd, CT_EXIT_USAGE,
                        "--chunk: %s sets no segment size (%s's segmented "
                        "rows do)",
                        want, be->library);
        return NULL;
    }
    row_names(be, ctx, CT_COLL_BIT(o->coll), NULL, names, sizeof names, &err);
    bool list = !strcmp(strchr(want, ':'), ":list"); /* run --algo LIB:list: the names */
    if (be->root && list)
        printf("%s %s algorithms: %s\n", be->library, ct_coll_name(o->coll), names);
    else if (be->root)
        ct_cmd_fail(cmd, CT_EXIT_USAGE, "%s has no %s algorithm '%s' (it has %s)", be->library,
                    ct_coll_name(o->coll), want, names);
    return NULL;
}
