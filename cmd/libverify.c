/* SPDX-License-Identifier: MIT */
/*
 * sweep --verify CONFIG --lib LIB: CONFIG's measured section, its launch settings (that they
 * leave the shared-memory transport room: a verify of its TCP), the library's module and its
 * launcher checked, then the verify itself and its --reverify rounds (tune/libverify_rounds.c)
 * with the hooks that start its jobs and print (cmd/verify_judge.c) and write its files
 * (cmd/verify_export.c). */
#include <stdio.h>
#include <stdlib.h>

#include "../backend/libmod.h"
#include "../lib/file.h"
#include "../output/export.h"
#include "cmd.h"
#include "librun.h"

int ct_libverify(const struct ct_opts *o, const struct ct_config *c, const char *path,
                 unsigned colls)
{
    const struct ct_libmod *m = ct_libmod_find(o->lib);
    struct ct_err err = {0};
    char *mod = NULL;
    int code = 0;
    const struct ct_librules *l = ct_config_lib(c, o->lib);
    bool theirs;
    if ((code = ct_lib_place_check(o, "sweep")))
        return code;
    if (!l)
        code = ct_cmd_fail("sweep", CT_EXIT_USAGE,
                           "--verify: '%s' has no measured %s section (colltune sweep --lib %s)",
                           path, m->title, m->name);
    else if (ct_lib_config_fits(m, l, &theirs, &err) < 0) /* its settings, both sides */
        code = ct_cmd_fail("sweep", CT_EXIT_USAGE, "--verify: %s'%s': %s",
                           theirs ? "the launch settings of " : "beside the launch settings of ",
                           path, err.msg);
    else if (ct_libmod_path(m, &mod, &err) < 0 ||
             ct_libmod_launch_check(m, o->hosts, -1, -1, &err) < 0)
        code = ct_cmd_fail("sweep", CT_EXIT_USAGE, "%s", err.msg);
    char copy[4200]; /* the copy it writes: found unwritable after minutes of launches, before */
    ct_verify_copy_path(path, copy, sizeof copy);
    if (!code && (ct_file_check_writable(copy, &err) < 0 || ct_file_check_regular(copy, &err) < 0))
        code = ct_cmd_fail("sweep", CT_EXIT_USAGE, "--verify: %s", err.msg);
    free(mod);
    if (code)
        return code;
    struct ct_verify_cmd x = {o, m, ct_emitter_find(m->format), path, colls};
    struct ct_verify_hooks h;
    struct ct_verify_files f;
    ct_verify_hooks_init(&h, o);
    ct_verify_files_init(&f, &x);
    struct ct_libverify_in in = {.h = &h,
                                 .f = &f,
                                 .m = m,
                                 .path = path,
                                 .colls = colls,
                                 .local = o->local_set,
                                 .try_ties = o->try_ties,
                                 .each_setting = o->each_setting,
                                 .timeout_s = o->timeout_s,
                                 .pairs = o->pairs};
    code = ct_libverify_rounds(&in, o->reverify, c);
    fflush(stdout);
    return code;
}
