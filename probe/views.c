/* SPDX-License-Identifier: MIT */
/* The table of text views of a topology; `colltune probe --view NAME` and the default "all"
 * come from it. */
#include "probe_int.h"

#include <string.h>

static const struct ct_view views[] = {
    {"summary", "host, CPUs, NUMA, PCI tree, GPUs, notes", ct_view_summary},
    {"matrix", "GPU/NIC matrix in nvidia-smi topo -m form", ct_view_matrix},
    {"nics", "NIC ports like ibstatus, with rates and nearest GPUs", ct_view_nics},
    {"torus", "accelerator torus, Hamiltonian cycles, hypercube", ct_view_torus},
    {"rails", "nearest NIC (rail) of each GPU", ct_view_rails},
    {"ceilings", "bus bandwidth ceilings per collective", ct_view_ceilings},
    {"warnings", "what looks wrong", ct_view_warnings},
};

const struct ct_view *ct_view_at(size_t i)
{
    return i < sizeof views / sizeof views[0] ? &views[i] : NULL;
}

const struct ct_view *ct_view_find(const char *name)
{
    for (size_t i = 0; name && i < sizeof views / sizeof views[0]; i++)
        if (!strcmp(views[i].name, name))
            return &views[i];
    return NULL;
}

int ct_view_render_all(const struct ct_topo *t, FILE *out, struct ct_err *err)
{
    for (size_t i = 0; i < sizeof views / sizeof views[0]; i++) {
        if (!strcmp(views[i].name, "torus") && !t->n_accel)
            continue;
        if (i)
            fputc('\n', out);
        CT_TRY(views[i].render(t, out, err));
    }
    return 0;
}
