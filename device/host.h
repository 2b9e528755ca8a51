/* SPDX-License-Identifier: MIT */
/* What the host-memory kinds share (host.c, hostipc.c): memcpy. */
#ifndef CT_DEVICE_HOST_H
#define CT_DEVICE_HOST_H

#include "device.h"

int ct_mem_host_copy(struct ct_mem *m, void *dst, const void *src, size_t bytes,
                     struct ct_err *err);

#endif
