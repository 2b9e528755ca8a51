/* SPDX-License-Identifier: MIT */
/* Subcommands: one file each, one row in cmd/commands.c. Only cmd/ prints and exits. */
#ifndef CT_CMD_H
#define CT_CMD_H

#include <stdarg.h>

#include "../lib/parse.h"

enum ct_exit {
    CT_EXIT_OK = 0,
    CT_EXIT_FAIL = 1,  /* runtime failure (peer died, I/O, timeout) */
    CT_EXIT_USAGE = 2, /* bad command line or unusable input */
    CT_EXIT_CHECK = 3, /* ran, but a check or threshold failed (wrong results, regret, validate) */
};

struct ct_cmd {
    const char *name;
    int (*fn)(int argc, char **argv); /* argv[0] is the subcommand name; returns enum ct_exit */
    const char *summary;
    const char *usage; /* SYNOPSIS line(s) after "colltune " */
};

const struct ct_cmd *ct_cmd_find(const char *name);
const struct ct_cmd *ct_cmd_at(int i);

/* "colltune <cmd>: error: <msg>" on stderr; returns code. */
int ct_cmd_fail(const char *cmd, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* "colltune <cmd>: warning: <msg>" on stderr. */
void ct_cmd_warn(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Subcommand entry points. */
int cmd_run(int argc, char **argv);
int cmd_list(int argc, char **argv);
int cmd_probe(int argc, char **argv);
int cmd_help(int argc, char **argv);
int cmd_sweep(int argc, char **argv);
int cmd_show(int argc, char **argv);
int cmd_top(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_validate(int argc, char **argv);
int cmd_model(int argc, char **argv);

#endif
