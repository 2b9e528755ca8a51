/* SPDX-License-Identifier: MIT */
/*
 * nccl-plugin: export lines that make NCCL load colltune's own tuner plugin
 * (libnccl-tuner-colltune.so, plugin/) with the config's measured NCCL section:
 *   NCCL_TUNER_PLUGIN=<absolute path of the plugin> COLLTUNE_CONFIG=<absolute path of CONFIG>
 * The section is read with the plugin's own reader (plugin/nccl_rules.c), so a config the
 * plugin would refuse is refused here. A config without a measured NCCL section gets the mapped
 * NCCL settings of --format env --for nccl instead, labelled "mapped from colltune's own
 * algorithms, not measured" in the file and in a note (stderr).
 * The plugin is found by ct_nccl_plugin_path (backend/nccl.h): $COLLTUNE_NCCL_PLUGIN, else
 * beside the colltune binary, in its build/ folder (a source tree) or ../lib/colltune/.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../backend/nccl.h"
#include "../lib/file.h"
#include "../plugin/nccl_rules.h"
#include "export.h"

/* No measured NCCL section: the mapped settings of --format env --for nccl, labelled there. */
static int mapped(const struct ct_config *c, const struct ct_export_opts *o,
                  struct ct_export_out *out, struct ct_err *err)
{
    struct ct_export_opts o2 = *o;
    o2.lib = CT_LIB_NCCL;
    o2.rules_path = NULL;
    return ct_emit_env(c, &o2, out, err);
}

int ct_emit_nccl_plugin(const struct ct_config *c, const struct ct_export_opts *o,
                        struct ct_export_out *out, struct ct_err *err)
{
    if (!o->config_path)
        return ct_err_set(err, CT_EINVAL, "--format nccl-plugin needs the config's path");
    struct ct_nr_table t;
    char msg[512], plugin[PATH_MAX];
    if (ct_nr_load(o->config_path, &t, msg, sizeof msg) < 0)
        return ct_err_set(err, CT_EINVAL,
                          "the config's NCCL section, as colltune's NCCL tuner plugin reads it: %s",
                          msg);
    bool found = t.found;
    if (!found || ct_export_nccl_measured(o, err) < 0) {
        ct_nr_free(&t);
        return found ? CT_EINVAL : mapped(c, o, out, err);
    }
    int rc = ct_nccl_plugin_path(plugin, sizeof plugin, err);
    if (rc < 0) {
        ct_nr_free(&t);
        return rc;
    }
    char *cfg = ct_path_absolute(o->config_path);
    ct_export_header(&out->body, "# ",
                     "NCCL settings for a job: colltune's NCCL tuner plugin with the config's "
                     "measured NCCL section; source this file (sh, bash, zsh)",
                     c, CT_LIB_NCCL, o);
    ct_text_printf(&out->body,
                   "# %d NCCL rule(s) measured with NCCL %s; calls outside their collectives, "
                   "shapes and ranges keep NCCL's own choice\n"
                   "# both paths must be readable on every node; NCCL loads one tuner: this "
                   "replaces any other\n"
                   "# check it loaded: NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=TUNING shows "
                   "'TUNER/colltune' lines\n",
                   t.nrules, *t.version ? t.version : "(version not recorded)");
    for (int i = 0; i < t.nrules; i++)
        ct_export_verified_nccl(out, &out->body, "# ", t.version, &t.rules[i]);
    ct_nr_free(&t);
    struct ct_settings set;
    ct_settings_init(&set);
    ct_settings_add(&set, "NCCL_TUNER_PLUGIN", plugin, NULL);
    ct_settings_add(&set, "COLLTUNE_CONFIG", cfg, NULL);
    ct_settings_exports(&set, &out->body);
    ct_settings_release(&set);
    free(cfg);
    return 0;
}
