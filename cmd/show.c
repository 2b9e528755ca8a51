/* SPDX-License-Identifier: MIT */
/* colltune show: a tuned config (colltune-config/1) as a readable crossover table. */
#include <stdio.h>
#include <string.h>

#include "../output/config.h"
#include "cmd.h"


int cmd_show(int argc, char **argv)
{
    const char *path = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            fputs(ct_help_show, stdout);
            return CT_EXIT_OK;
        }
        if (argv[i][0] == '-' && argv[i][1])
            return ct_cmd_fail("show", CT_EXIT_USAGE, "unknown option '%s'", argv[i]);
        if (path)
            return ct_cmd_fail("show", CT_EXIT_USAGE, "unexpected argument '%s'", argv[i]);
        path = argv[i];
    }
    if (!path)
        return ct_cmd_fail("show", CT_EXIT_USAGE, "which config? (colltune show CONFIG)");
    struct ct_config c;
    struct ct_err err = {0};
    if (ct_config_json_read(path, &c, &err) < 0)
        return ct_cmd_fail("show", CT_EXIT_USAGE, "%s", err.msg);
    ct_config_print(stdout, &c);
    ct_config_release(&c);
    return CT_EXIT_OK;
}
