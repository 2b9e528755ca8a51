/* SPDX-License-Identifier: MIT */
/* The command line every rank of a job must share: kept by main, compared once a job. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/err.h"
#include "../transport/boot.h"
#include "cmd.h"

static int g_argc;
static char **g_argv;

void ct_cmd_set_argv(int argc, char **argv)
{
    g_argc = argc, g_argv = argv;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int ct_cmd_same_line(struct ct_boot *boot, struct ct_err *err)
{
    /* what a host may set its own way (its NIC's name, sysfs capture, GPU order, ports,
     * pinning, patience) or rank 0 alone reads (its files, its screen) */
    static const char *const own[] = {"--ifname",     "--sysfs-root", "--gpu-map",
                                      "--port-range", "--no-bind",    "--boot-timeout",
                                      "--json",       "--out",        "--save-baseline",
                                      "--baseline",   "--tui"};
    static bool checked; /* once a job: its communicators reopened (--streams searched) too */
    if (checked)
        return 0;
    /* each option with its values, written one way ("--x=v" and "-nV" as "--x v", "-n V"),
     * in sorted order: ranks that wrote one command line two ways agree */
    char **g = ct_xcalloc((size_t)g_argc + 1, sizeof *g);
    int n = 0, rc;
    for (int i = 1; i < g_argc; i++) {
        const char *a = g_argv[i], *eq = a[0] == '-' && a[1] == '-' ? strchr(a, '=') : NULL;
        char opt[256], val[4096] = "";
        bool flag = a[0] != '-' || !a[1] || (a[1] >= '0' && a[1] <= '9');
        if (eq)
            snprintf(opt, sizeof opt, "%.*s", (int)(eq - a), a),
                snprintf(val, sizeof val, " %s", eq + 1);
        else if (!flag && a[1] != '-' && a[2]) /* -nV */
            snprintf(opt, sizeof opt, "%.2s", a), snprintf(val, sizeof val, " %s", a + 2);
        else
            snprintf(opt, sizeof opt, "%s", a);
        for (; !flag && !eq && (a[1] == '-' || !a[2]) && i + 1 < g_argc &&
               (g_argv[i + 1][0] != '-' || !g_argv[i + 1][1] ||
                (g_argv[i + 1][1] >= '0' && g_argv[i + 1][1] <= '9'));
             i++) /* its values ("-": standard output; "-1") */
            snprintf(val + strlen(val), sizeof val - strlen(val), " %s", g_argv[i + 1]);
        bool skip = false;
        for (size_t k = 0; k < sizeof own / sizeof *own; k++)
            skip |= !strcmp(opt, own[k]);
        if (!skip) {
            g[n] = ct_xmalloc(strlen(opt) + strlen(val) + 1);
            sprintf(g[n++], "%s%s", opt, val);
        }
    }
    qsort(g, (size_t)n, sizeof *g, cmp_str);
    rc = ct_boot_same_args(boot, n, g, err);
    checked = rc == 0;
    for (int i = 0; i < n; i++)
        free(g[i]);
    free(g);
    return rc;
}
