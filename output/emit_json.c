/* SPDX-License-Identifier: MIT */
/* json: the native config (colltune-config/1) as read, written back with the stable key order. */
#include <stdlib.h>

#include "config.h"
#include "export.h"

int ct_emit_json(const struct ct_config *c, const struct ct_export_opts *o,
                 struct ct_export_out *out, struct ct_err *err)
{
    char *txt = ct_config_json_dumps(c);
    if (!txt)
        return ct_err_set(err, CT_ENOMEM, "cannot encode the config");
    ct_text_put(&out->body, txt);
    ct_text_put(&out->body, "\n");
    free(txt);
    return 0;
}
