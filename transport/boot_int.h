/* SPDX-License-Identifier: MIT */
/* Bootstrap internals shared by boot.c, boot_tcp.c and the launcher bootstraps. */
#ifndef CT_BOOT_INT_H
#define CT_BOOT_INT_H

#include "boot.h"
#include "../lib/wire.h"

/* Hosts table -> node index, local rank and size. */
void ct_boot_fill_layout(struct ct_boot *b);
/* Rank, size, timeouts, method, notice hook, host name (sanitised), hosts and addrs
 * tables (zeroed; this rank's host filled in). */
void ct_boot_init_common(struct ct_boot *b, const struct ct_boot_cfg *cfg, int rank, int size);

/* The host name this rank goes by: override, else gethostname(), made printable. */
void ct_boot_host_name(const char *override, char out[CT_BOOT_HOST_BYTES]);

/* PMI-1 line parsing (boot_pmi1.c; exposed for tests and fuzzing). The value of key in a
 * line "cmd=x k=v ...", copied into out: 0, -1 when absent, CT_EPEER when longer than len. */
int ct_pmi1_field(const char *line, const char *key, char *out, size_t len);
/* The line answers want_cmd and its rc (if any) is 0; else CT_EPEER/CT_EIO with err. */
int ct_pmi1_check(const char *line, const char *want_cmd, struct ct_err *err);


#define CT_BOOT_ROOT_KEY "colltune-root"

#endif
