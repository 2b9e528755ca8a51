/* SPDX-License-Identifier: MIT */
/*
 * sweep --verify CONFIG --lib LIB: the file the export writes for a verify to load (a new file,
 * beside CONFIG across hosts), and the variables that point the library at it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../lib/file.h"
#include "../output/export.h"
#include "cmd.h"
#include "librun.h"

int ct_verify_export(const struct ct_opts *o, const struct ct_emitter *e, const char *path,
                     const struct ct_config *cfg, struct ct_verify_export *x, struct ct_err *err)
{
    struct ct_export_opts eo;
    memset(x, 0, sizeof *x);
    x->ld = ct_xcalloc(1, sizeof *x->ld);
    x->tmp = o->hosts ? ct_path_sibling(path, ".colltune-verify-XXXXXX")
                      : ct_xstrdup("/tmp/colltune-verify-XXXXXX");
    int fd = mkstemp(x->tmp);
    if (fd < 0) {
        ct_err_set(err, CT_EIO, "cannot create %s: %s", x->tmp, strerror(errno));
        free(x->tmp);
        x->tmp = NULL; /* nothing made here to remove */
        return CT_EIO;
    }
    ct_export_opts_init(&eo);
    eo.path = x->tmp;
    int rc = ct_export_run(e, cfg, &eo, &x->out, err);
    if (rc == 0) {
        ct_export_files(e, &x->out, x->tmp, &x->f);
        rc = ct_export_files_write(&x->f, err) < 0 ? CT_EIO : 0;
    }
    close(fd);
    if (rc == 0 && ct_export_loader(&x->out, x->ld) < 0)
        rc = ct_err_set(err, CT_EINVAL, "the export's loader sets more than %d variables",
                        CT_LOADER_MAX);
    return rc;
}

void ct_verify_export_release(struct ct_verify_export *x)
{
    if (x->tmp)
        unlink(x->tmp);
    for (int i = 1; i < x->f.n; i++)
        unlink(x->f.path[i]);
    ct_export_files_release(&x->f);
    ct_export_out_release(&x->out);
    free(x->tmp);
    free(x->ld);
    memset(x, 0, sizeof *x);
}
