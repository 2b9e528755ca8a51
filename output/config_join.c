/* SPDX-License-Identifier: MIT */
/* colltune join's files: configs read, joined (tune/join.c), read back and written. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/file.h"
#include "config.h"

/* A config read: an input that cannot be read or is not one is unusable input (CT_EINVAL) */
static int read_in(const char *path, struct ct_config *c, struct ct_err *err)
{
    int rc = ct_config_json_read(path, c, err);
    if (rc < 0 && err)
        err->code = CT_EINVAL;
    return rc < 0 ? CT_EINVAL : 0;
}

int ct_config_join_files(const char *const *paths, int n, const char *out, struct ct_config *c,
                         struct ct_err *err)
{
    ct_config_init(c);
    int rc = n > 0 ? read_in(paths[0], c, err) : ct_err_set(err, CT_EINVAL, "no config");
    char before[1024], dst[1040]; /* the files read before: "A", "one of A, B" */
    snprintf(before, sizeof before, "%s", n > 0 ? paths[0] : "");
    for (int i = 1; i < n && rc == 0; i++) {
        struct ct_config s;
        snprintf(dst, sizeof dst, "%s%s", i > 1 ? "one of " : "", before);
        struct ct_join_names nm = {dst, paths[i]};
        rc = read_in(paths[i], &s, err);
        if (rc == 0)
            rc = ct_config_join(c, &s, &nm, err);
        ct_config_release(&s);
        size_t o = strlen(before);
        snprintf(before + o, sizeof before - o, ", %s", paths[i]);
    }
    char *text = rc == 0 ? ct_config_json_dumps(c) : NULL;
    if (rc == 0 && text) { /* what is written reads back, with the reader's every check */
        struct ct_config back;
        struct ct_err why = {0};
        if (ct_config_json_parse(text, &back, &why) < 0)
            rc = ct_err_set(err, CT_EINVAL, "the joined config does not read back: %s", why.msg);
        ct_config_release(&back);
    }
    if (rc == 0) /* that text, written (NULL: "cannot encode") */
        rc = ct_file_write_doc(out, text, "the config", err);
    else
        free(text);
    if (rc < 0)
        ct_config_release(c);
    return rc;
}
