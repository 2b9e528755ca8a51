/* SPDX-License-Identifier: MIT */
/* colltune: dispatch to a subcommand; global --help and --version. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "../lib/file.h"
#include "../transport/tp.h"
#include "cmd.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: colltune [--version] [--help] <command> [<args>]\n\n"
               "Probe a cluster's topology, run and verify collective algorithms, sweep and\n"
               "tune them, and export tuned configs.\n\ncommands:\n");
    for (int i = 0; ct_cmd_at(i); i++)
        fprintf(f, "  %-9s %s\n", ct_cmd_at(i)->name, ct_cmd_at(i)->summary);
    fprintf(
        f,
        "\n'colltune help <command>' or 'colltune <command> --help' for details.\n"
        "exit codes: 0 ok, 1 runtime failure, 2 usage error, 3 a check failed, 128+N stopped by\n"
        "signal N (141: a reader that left, | head)\n");
}

static void feature(const char *name, int built)
{
    printf("  %-12s %s\n", name, built ? "built" : "(not built)");
}

static void version(void)
{
    printf("colltune %s\n", CT_VERSION);
    printf("transports:\n");
    for (size_t i = 0; ct_tp_at(i); i++)
        feature(ct_tp_at(i)->name, ct_tp_at(i)->built);
    printf("libraries:\n");
#ifdef HAVE_HWLOC
    feature("hwloc", 1);
#else
    feature("hwloc", 0);
#endif
#ifdef HAVE_IBVERBS
    feature("libibverbs", 1);
#else
    feature("libibverbs", 0);
#endif
#ifdef HAVE_LIBFABRIC
    feature("libfabric", 1);
#else
    feature("libfabric", 0);
#endif
#ifdef HAVE_PMIX
    feature("pmix", 1);
#else
    feature("pmix", 0);
#endif
#ifdef HAVE_JANSSON
    feature("jansson", 1);
#else
    feature("jansson", 0);
#endif
#ifdef HAVE_CURL
    feature("libcurl", 1);
#else
    feature("libcurl", 0);
#endif
#ifdef HAVE_NCURSES
    feature("ncurses", 1);
#else
    feature("ncurses", 0);
#endif
    feature("nvml", 1); /* dlopen at run time */
}

int cmd_help(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") ||
        !strcmp(argv[1], "help")) {
        usage(stdout);
        return CT_EXIT_OK;
    }
    const struct ct_cmd *c = ct_cmd_find(argv[1]);
    if (!c)
        return ct_cmd_fail("help", CT_EXIT_USAGE, "unknown command '%s'", argv[1]);
    if (argc > 2)
        return ct_cmd_fail("help", CT_EXIT_USAGE, "unexpected argument '%s'", argv[2]);
    char *sub[] = {(char *)c->name, "--help", NULL};
    return c->fn(2, sub);
}

static int finish(const char *cmd, int code)
{
    /* a write error on stdout (full disk, closed pipe) is a failure, as in git; a command
     * that failed has said its one line already */
    int e = ct_file_stream_error(stdout);
    if (e && code == 0) {
        if (e != EPIPE)
            ct_cmd_fail(cmd, CT_EXIT_FAIL, "cannot write output: %s", strerror(e));
        return CT_EXIT_FAIL;
    }
    return code;
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return ct_cmd_fail(NULL, CT_EXIT_USAGE, "no command given (see 'colltune --help')");
    const char *a = argv[1];
    if (!strcmp(a, "--help") || !strcmp(a, "-h"))
        return finish(NULL, cmd_help(1, argv + 1));
    if (!strcmp(a, "--version") || !strcmp(a, "-V")) {
        version();
        return finish(NULL, CT_EXIT_OK);
    }
    if (a[0] == '-')
        return ct_cmd_fail(NULL, CT_EXIT_USAGE, "unknown option '%s' (see 'colltune --help')",
                           a);
    ct_cmd_set_argv(argc, argv);
    const struct ct_cmd *c = ct_cmd_find(a);
    if (!c)
        return ct_cmd_fail(NULL, CT_EXIT_USAGE, "unknown command '%s' (see 'colltune --help')",
                           a);
    return finish(c->name, c->fn(argc - 1, argv + 1));
}
