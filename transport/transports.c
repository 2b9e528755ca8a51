/* SPDX-License-Identifier: MIT */
/* The transport table: one row per transport file. */
#include "tp.h"

#include <stdlib.h>
#include <string.h>

#include "boot.h"

extern const struct ct_tp_ops ct_tp_loop_ops;
extern const struct ct_tp_ops ct_tp_shm_ops;
extern const struct ct_tp_ops ct_tp_tcp_ops;
extern const struct ct_tp_ops ct_tp_fabric_ops;

static const struct ct_tp_ops *const table[] = {
    &ct_tp_shm_ops,
    &ct_tp_tcp_ops,
    &ct_tp_fabric_ops,
    &ct_tp_loop_ops,
};

const struct ct_tp_ops *ct_tp_at(size_t i)
{
    return i < sizeof table / sizeof table[0] ? table[i] : NULL;
}

const struct ct_tp_ops *ct_tp_find(const char *name)
{
    for (size_t i = 0; ct_tp_at(i); i++)
        if (!strcmp(table[i]->name, name))
            return table[i];
    return NULL;
}

int ct_tp_open(const struct ct_tp_ops *ops, struct ct_tp **tp, const struct ct_tp_cfg *cfg,
               struct ct_boot *boot, struct ct_err *err)
{
    if (!ops->built)
        return ct_err_set(err, CT_EUNSUPP, "transport '%s' was not built", ops->name);
    return ops->open(tp, cfg, boot, err);
}

int ct_tp_peer_links(struct ct_boot *boot, const unsigned char *peers, const bool *has,
                     bool *link, struct ct_err *err)
{
    int n = boot->size, me = boot->rank;
    bool any = false;
    for (int r = 0; r < n; r++)
        any |= has[r];
    size_t nb = ((size_t)n + 7) / 8;
    unsigned char *bits = NULL;
    if (any) {
        unsigned char *my = ct_xcalloc(nb, 1);
        for (int r = 0; peers && r < n; r++)
            if (peers[r])
                my[r / 8] |= (unsigned char)(1u << (r % 8));
        bits = ct_xcalloc((size_t)n, nb);
        int rc = ct_boot_allgather(boot, my, nb, bits, err);
        free(my);
        if (rc < 0) {
            free(bits);
            return rc;
        }
    }
#define WANTS(a, b) (!has[a] || ((bits[(size_t)(a)*nb + (size_t)(b) / 8] >> ((b) % 8)) & 1))
    for (int r = 0; r < n; r++)
        link[r] = r != me && (WANTS(me, r) || WANTS(r, me));
#undef WANTS
    free(bits);
    return 0;
}
