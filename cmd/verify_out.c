/* SPDX-License-Identifier: MIT */
/* What sweep --verify writes beside CONFIG (the MPI libraries' verify and NCCL's), and the
 * environment of its two sides. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../backend/libmod.h"
#include "../output/config.h"
#include "../output/export.h"
#include "cmd.h"
#include "librun.h"

void ct_verify_side_env(const struct ct_libmod *m, const struct ct_loader *ld, bool with)
{
    bool own_loaded = false; /* B: the defaults even where a config file loads rules */
    for (int i = 0; i < ld->n; i++) {
        with ? setenv(ld->name[i], ld->value[i], 1) : unsetenv(ld->name[i]);
        own_loaded |= m->own_name && !strcmp(ld->name[i], m->own_name);
    }
    if (m->own_name && !with)
        setenv(m->own_name, m->own_value, 1);
    else if (m->own_name && !own_loaded)
        unsetenv(m->own_name);
}

int ct_verify_write_fixed(const struct ct_config *fixed, const char *path, int ndemoted,
                          int nstamped, const char *lib, int code)
{
    struct ct_err err = {0};
    char out[4200];
    int len = (int)strlen(path), json = len > 5 && !strcmp(path + len - 5, ".json");
    snprintf(out, sizeof out, "%.*s.verified.json", json ? len - 5 : len, path);
    if (ct_config_json_write(out, fixed, &err) < 0) /* what verify was run for: a failure */
        return ct_cmd_fail("sweep", code ? code : CT_EXIT_FAIL, "%s", err.msg);
    if (ndemoted)
        fprintf(stderr,
                "colltune sweep: wrote %s: CONFIG with the %d range(s) found slower set back to "
                "%s's own choice; export that one (and verify it)\n",
                out, ndemoted, lib);
    else
        fprintf(stderr,
                "colltune sweep: wrote %s: CONFIG with its %d verified collective(s) marked so "
                "(no size slower than %s's defaults beyond its interval); export that one\n",
                out, nstamped, lib);
    return code;
}
