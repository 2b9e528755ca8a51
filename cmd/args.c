/* SPDX-License-Identifier: MIT */
/* Option values shared by the subcommands: numbers in a range, sizes, iteration counts,
 * lists of collectives and algorithms. Each prints its one-line error and returns the exit code. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "../output/push.h"
#include "opts.h"
#include "../algos/algo.h"
#include "../algos/quant.h"

int ct_arg_num(const char *cmd, const char *opt, const char *arg, double lo, double hi,
               double *out)
{
    char *end;
    double v = strtod(arg, &end);
    if (*end || end == arg || !(v >= lo && v <= hi))
        return ct_cmd_fail(cmd, CT_EXIT_USAGE, "bad --%s '%s' (%g..%g)", opt, arg, lo, hi);
    *out = v;
    return 0;
}

int ct_arg_quant(const char *cmd, const char *arg, struct ct_opts *o)
{
    int q = ct_quant_find(arg);
    if (q < 0)
        return ct_cmd_fail(cmd, CT_EXIT_USAGE, "bad --quant '%s' (none, int8, fp8e4m3, fp8e5m2)",
                           arg);
    o->quant = (enum ct_quant)q;
    return 0;
}

int ct_arg_word(const char *cmd, const char *opt, const char *arg, const char *const *words,
                int *out)
{
    char list[256];
    size_t off = 0;
    for (int i = 0; words[i]; i++) {
        if (!strcmp(arg, words[i]))
            return (*out = i), 0;
        off += (size_t)snprintf(list + off, off < sizeof list ? sizeof list - off : 0, "%s%s",
                                i ? ", " : "", words[i]);
    }
    return ct_cmd_fail(cmd, CT_EXIT_USAGE, "bad --%s '%s' (%s)", opt, arg, list);
}

int ct_arg_place(const char *cmd, const char *arg, int *place)
{
    static const char *const word[] = {"out", "in", "both", NULL};
    int rc = ct_arg_word(cmd, "place", arg, word, place);
    *place += !rc; /* out 1 (CT_PLACE_OUT), in 2 (CT_PLACE_IN), both 3 */
    return rc;
}

int ct_arg_int(const char *cmd, const char *opt, const char *arg, long lo, long hi, int *out)
{
    long v;
    if (ct_parse_int(arg, lo, hi, &v))
        return ct_cmd_fail(cmd, CT_EXIT_USAGE, "bad --%s '%s' (%ld..%ld)", opt, arg, lo, hi);
    *out = (int)v;
    return 0;
}

int ct_arg_batch(const char *cmd, const char *arg, int *batch)
{
    if (!strcmp(arg, "auto"))
        return (*batch = CT_BENCH_REPS_AUTO), 0;
    long v;
    if (ct_parse_int(arg, 1, 4096, &v))
        return ct_cmd_fail(cmd, CT_EXIT_USAGE, "bad --batch '%s' (1..4096 or auto)", arg);
    *batch = (int)v;
    return 0;
}

int ct_arg_size(const char *cmd, const char *opt, const char *arg, unsigned long long *out)
{
    if (ct_parse_size(arg, out))
        return ct_cmd_fail(cmd, CT_EXIT_USAGE, "bad --%s '%s'", opt, arg);
    return 0;
}

int ct_arg_iters(const char *cmd, const char *opt, const char *arg, long lo, int *out)
{
    return ct_arg_int(cmd, opt, arg, lo, 1000000, out);
}

/* The list's words are read from a copy: argv is what a library sweep passes on to its
 * ranks, and cut at the first comma they saw one collective of "allreduce,allgather". */
int ct_arg_colls(const char *cmd, const char *arg, unsigned *colls)
{
    char *save = NULL, *list = ct_xstrdup(arg);
    int rc = 0;
    for (char *t = strtok_r(list, ",", &save); t && !rc; t = strtok_r(NULL, ",", &save)) {
        int c = ct_coll_find(t);
        if (c < 0)
            rc = ct_cmd_fail(cmd, CT_EXIT_USAGE, "unknown collective '%s' (%s)", t,
                             "allreduce, allgather, reducescatter, alltoall");
        else
            *colls |= CT_COLL_BIT(c);
    }
    free(list);
    return rc ? rc : *colls ? 0 : ct_cmd_fail(cmd, CT_EXIT_USAGE, "empty --coll list");
}

int ct_arg_algo_list(const char *cmd, const char *arg, const struct ct_algo **v, size_t *n,
                     size_t max)
{
    size_t len = strlen(arg);
    if (!len || *arg == ',' || arg[len - 1] == ',' || strstr(arg, ",,"))
        return ct_cmd_fail(cmd, CT_EXIT_USAGE, "bad --algos '%.40s%s' (an empty entry)", arg,
                           len > 40 ? "..." : "");
    char *save = NULL, *list = ct_xstrdup(arg); /* a copy, as ct_arg_colls' */
    int rc = 0;
    for (char *t = strtok_r(list, ",", &save); t && !rc; t = strtok_r(NULL, ",", &save)) {
        const struct ct_algo *a = ct_algo_find(t);
        size_t seen = 0;
        while (a && seen < *n && v[seen] != a) /* named twice (or again in --algo): once */
            seen++;
        if (a && seen < *n)
            continue;
        if (!a)
            rc = ct_cmd_fail(cmd, CT_EXIT_USAGE, "unknown algorithm '%s' (colltune list algos)", t);
        else if (*n == max)
            rc = ct_cmd_fail(cmd, CT_EXIT_USAGE, "--algos: at most %zu algorithms", max);
        else
            v[(*n)++] = a;
    }
    free(list);
    return rc;
}

int ct_arg_algos(struct ct_opts *o, const char *arg, const struct ct_algo **v, size_t *n)
{
    if (strchr(arg, ':')) { /* a library's rows (LIB:NAME,...): the engine knows their names */
        o->lib_algo = arg;
        return 0;
    }
    return ct_arg_algo_list("sweep", arg, v, n, CT_ARG_MAX_ALGOS);
}

int ct_arg_push(int which, const char *arg, struct ct_push_opts *po)
{
    struct ct_err err = {0};
    switch (which) {
    case 0: /* --push-method */
        if (strcmp(arg, "PUT") && strcmp(arg, "POST"))
            return ct_cmd_fail("export", CT_EXIT_USAGE, "bad --push-method '%s' (PUT or POST)",
                               arg);
        po->method = arg;
        return 0;
    case 1: { /* --header */
        char *h;
        if (ct_push_header_resolve(arg, &h, &err) < 0)
            return ct_cmd_fail("export", CT_EXIT_USAGE, "%s", err.msg);
        po->headers = ct_xrealloc(po->headers, (po->nheaders + 1) * sizeof h);
        po->headers[po->nheaders++] = h;
        return 0;
    }
    case 2: /* --cacert */
        if (access(arg, R_OK) < 0)
            return ct_cmd_fail("export", CT_EXIT_USAGE, "cannot read --cacert '%s'", arg);
        po->cacert = arg;
        return 0;
    case 3: po->insecure = true; return 0;
    case 4: /* --push-timeout */
        CT_TRY_OPT(ct_arg_num("export", "push-timeout", arg, 0.01, 86400, &po->timeout_s));
        po->connect_timeout_s = po->timeout_s < 10 ? po->timeout_s : 10;
        return 0;
    default: /* --push-retries: a whole number */
        return ct_arg_int("export", "push-retries", arg, 0, 20, &po->retries);
    }
}
