/* SPDX-License-Identifier: MIT */
/* libFuzzer body shared by the parser harnesses: import the input with FUZZ_FORMAT and, when
 * it is accepted, drive every view and the JSON round trip over the resulting topology. */
#ifndef CT_FUZZ_PARSER_H
#define CT_FUZZ_PARSER_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probe/topo.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static FILE *sink;
    if (!sink)
        sink = fopen("/dev/null", "w");
    struct ct_topo *t = ct_topo_new();
    struct ct_err err = {0};
    if (ct_topo_import_buf(t, FUZZ_FORMAT, (const char *)data, size, "fuzz", &err) == 0) {
        ct_view_render_all(t, sink, &err);
        char *json = ct_topo_to_json(t, &err);
        if (json) {
            struct ct_topo *u = ct_topo_from_json(json, strlen(json), &err);
            if (!u)
                abort(); /* our own output must read back */
            ct_topo_free(u);
            free(json);
        }
    }
    ct_topo_free(t);
    return 0;
}

#endif
