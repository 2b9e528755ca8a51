/* SPDX-License-Identifier: MIT */
/* What sweep --verify writes beside CONFIG (the MPI libraries' verify and NCCL's). */
#include <stdio.h>
#include <string.h>

#include "../output/config.h"
#include "librun.h"

void ct_verify_write_fixed(const struct ct_config *fixed, const char *path, int ndemoted,
                           int nstamped, const char *lib)
{
    struct ct_err err = {0};
    char out[4200];
    int len = (int)strlen(path), json = len > 5 && !strcmp(path + len - 5, ".json");
    snprintf(out, sizeof out, "%.*s.verified.json", json ? len - 5 : len, path);
    if (ct_config_json_write(out, fixed, &err) < 0)
        fprintf(stderr, "colltune sweep: warning: %s\n", err.msg);
    else if (ndemoted)
        fprintf(stderr,
                "colltune sweep: wrote %s: CONFIG with the %d range(s) found slower set back to "
                "%s's own choice; export that one (and verify it)\n",
                out, ndemoted, lib);
    else
        fprintf(stderr,
                "colltune sweep: wrote %s: CONFIG with its %d verified collective(s) marked so "
                "(no size slower than %s's defaults beyond its interval); export that one\n",
                out, nstamped, lib);
}
