/* SPDX-License-Identifier: MIT */
/* NVLink generations (probe/nvlink_gen.csv, compiled in through the generated nvlink_gen.h):
 * lookups by GPU model and by the links-per-GPU pattern a source shows. */
#include "probe_int.h"

#include <stdlib.h>
#include <string.h>

static const struct ct_nvlink_gen gens[] = {
#include "nvlink_gen.h"
};

const struct ct_nvlink_gen *ct_nvlink_gen_at(size_t i)
{
    return i < sizeof gens / sizeof gens[0] ? &gens[i] : NULL;
}

const struct ct_nvlink_gen *ct_nvlink_gen_model(const char *model)
{
    for (size_t i = 0; model && i < sizeof gens / sizeof gens[0]; i++)
        if (!strcmp(gens[i].kind, "model") && strstr(model, gens[i].key))
            return &gens[i];
    return NULL;
}

const struct ct_nvlink_gen *ct_nvlink_gen_links(int links, int switched)
{
    char key[16];
    snprintf(key, sizeof key, "%d", links);
    for (size_t i = 0; i < sizeof gens / sizeof gens[0]; i++)
        if (!strcmp(gens[i].kind, "nv") && !strcmp(gens[i].key, key) &&
            !strcmp(gens[i].fabric, switched ? "switch" : "mesh"))
            return &gens[i];
    return NULL;
}

const struct ct_nvlink_gen *ct_nvlink_gen_sm(int sm)
{
    const struct ct_nvlink_gen *best = NULL;
    for (size_t i = 0; sm > 0 && i < sizeof gens / sizeof gens[0]; i++) {
        int k = atoi(gens[i].key);
        if (!strcmp(gens[i].kind, "sm") && k <= sm && (!best || k > atoi(best->key)))
            best = &gens[i];
    }
    return best;
}

double ct_nvlink_gbps_guess(const char *model, int sm)
{
    const struct ct_nvlink_gen *g = ct_nvlink_gen_model(model);
    if (!g)
        g = ct_nvlink_gen_sm(sm);
    return g ? g->link_gbs : 0;
}

const char *ct_nvlink_basis(const char *gen, const char *basis, char *buf, size_t len)
{
    if (!gen[0])
        snprintf(buf, len, "%s", "");
    else if (!basis[0])
        snprintf(buf, len, "%s", gen);
    else if (!strcmp(basis, "model"))
        snprintf(buf, len, "%s by the GPU model", gen);
    else if (!strncmp(basis, "NV", 2))
        snprintf(buf, len, "%s, inferred from %s", gen, basis);
    else
        snprintf(buf, len, "%s, a guess from %s", gen, basis);
    return buf;
}
