/* SPDX-License-Identifier: MIT */
/* What the host-memory kinds share (host.c, hostipc.c): memcpy, and the caller's host kernel. */
#ifndef CT_DEVICE_HOST_H
#define CT_DEVICE_HOST_H

#include "device.h"

int ct_mem_host_copy(struct ct_mem *m, void *dst, const void *src, size_t bytes,
                     struct ct_err *err);
int ct_mem_host_reduce(struct ct_mem *m, void *dst, const void *a, const void *b, size_t n,
                       const struct ct_mem_red *r, struct ct_err *err);

#endif
