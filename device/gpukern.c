/* SPDX-License-Identifier: MIT */
/* The reductions device/kernels.cu has, by name: what cuda can run on the GPU and what
 * host-ipc, cuda's stand-in, agrees to run (so both take the same path for a job). */
#include <string.h>

#include "device.h"

bool ct_mem_gpu_kernel(const struct ct_mem_red *r)
{
    static const char *const types[] = {"bfloat16", "float16", "float32", "float64"};
    static const char *const ops[] = {"sum", "prod", "min", "max"};
    bool t = false, o = false;
    for (size_t i = 0; i < 4; i++) {
        t = t || !strcmp(r->dtype, types[i]);
        o = o || !strcmp(r->op, ops[i]);
    }
    return t && o;
}
