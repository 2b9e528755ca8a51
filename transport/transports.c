/* SPDX-License-Identifier: MIT */
/* The transport table: one row per transport file. */
#include "tp.h"

#include <string.h>

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
