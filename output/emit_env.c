/* SPDX-License-Identifier: MIT */
/*
 * env: one file a job script or launcher can source, with the export lines of the library
 * chosen by --for. Libraries whose rules live in a file (Open MPI, MPICH; NCCL's tuner) get
 * lines that point at it: --rules-file names a copy every node can read, and the export writes
 * that file too (a line pointing at a missing file crashes MPICH 4.0.2 in MPI_Init).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export.h"

/* The rules file of o->lib into out->rules, for out->rules_path = o->rules_path. */
static int rules_file(const struct ct_config *c, const struct ct_export_opts *o,
                      struct ct_export_out *out, struct ct_err *err)
{
    struct ct_export_opts o2 = *o;
    struct ct_export_out sub;
    o2.path = o->rules_path;
    ct_export_out_init(&sub);
    int rc = o->lib == CT_LIB_OMPI    ? ct_emit_ompi_rules(c, &o2, &sub, err)
             : o->lib == CT_LIB_MPICH ? ct_emit_mpich_json(c, &o2, &sub, err)
                                      : ct_emit_nccl_tuner(c, &o2, &sub, err);
    if (rc == 0) {
        for (size_t i = 0; i < sub.nnotes; i++)
            ct_export_note(out, "%s", sub.notes[i]);
        ct_text_put(&out->rules, ct_text_str(&sub.body));
        out->rules_path = o->rules_path;
    }
    ct_export_out_release(&sub);
    return rc;
}

/* The settings of o->lib; rules files are referenced by path (o->rules_path) and written. */
static int lib_settings(const struct ct_config *c, const struct ct_export_opts *o,
                        struct ct_export_out *out, struct ct_settings *set, struct ct_err *err)
{
    const char *rp = o->rules_path;
    bool loaded = o->lib == CT_LIB_NCCL || o->lib == CT_LIB_OMPI || o->lib == CT_LIB_MPICH;
    if (rp && loaded) {
        int rc = rules_file(c, o, out, err);
        if (rc < 0)
            return rc;
    }
    switch (o->lib) {
    case CT_LIB_NCCL:
        if (!rp)
            return ct_nccl_settings(c, o, out, set, err);
        ct_settings_add(set, "NCCL_TUNER_PLUGIN", "example",
                        "NCCL's example tuner (libnccl-tuner-example.so on LD_LIBRARY_PATH) "
                        "reading the CSV of --format nccl-tuner");
        ct_settings_add(set, "NCCL_TUNER_CONFIG_FILE", rp, NULL);
        return 0;
    case CT_LIB_OMPI:
        if (!rp)
            break;
        ct_settings_add(set, "OMPI_MCA_coll_tuned_use_dynamic_rules", "1",
                        "Open MPI coll/tuned rules written by --format ompi-rules");
        ct_settings_add(set, "OMPI_MCA_coll_tuned_dynamic_rules_filename", rp, NULL);
        return 0;
    case CT_LIB_MPICH:
        if (!rp)
            break;
        ct_settings_add(set, "MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE", rp,
                        "MPICH selection tree written by --format mpich-json");
        ct_settings_add(set, "MPIR_CVAR_DEVICE_COLLECTIVES", "none",
                        "apply the MPIR-level tree to whole communicators (not CH4 "
                        "sub-communicators)");
        return 0;
    case CT_LIB_UCC: return ct_ucc_settings(c, o, out, set, err);
    case CT_LIB_IMPI: return ct_impi_settings(c, o, out, set, err);
    default: break;
    }
    return ct_err_set(err, CT_EINVAL,
                      "--for %s: the environment must name a rules file every "
                      "node can read: --rules-file PATH (write it with --format %s --out PATH)",
                      ct_lib_name(o->lib), o->lib == CT_LIB_OMPI ? "ompi-rules" : "mpich-json");
}

int ct_emit_env(const struct ct_config *c, const struct ct_export_opts *o,
                struct ct_export_out *out, struct ct_err *err)
{
    struct ct_settings set;
    char what[128];
    ct_settings_init(&set);
    int rc = lib_settings(c, o, out, &set, err);
    if (rc == 0) {
        snprintf(what, sizeof what, "%s settings for a job: source this file (sh, bash, zsh)",
                 ct_lib_title(o->lib));
        ct_export_header(&out->body, "# ", what, c);
        for (size_t i = 0; i < out->nnotes; i++)
            ct_text_printf(&out->body, "# %s\n", out->notes[i]);
        ct_text_put(&out->body, ct_text_str(&set.comments));
        if (!set.n)
            ct_text_printf(&out->body, "# nothing in the config maps to %s\n",
                           ct_lib_title(o->lib));
        ct_settings_exports(&set, &out->body);
    }
    ct_settings_release(&set);
    return rc;
}

/* ---- slurm ------------------------------------------------------------------------------ */

/* 'line' for sh */
static void sh_quoted(struct ct_text *t, const char *s)
{
    ct_text_put(t, "'");
    for (; *s; s++) {
        if (*s == '\'')
            ct_text_put(t, "'\\''");
        else
            ct_text_printf(t, "%c", *s);
    }
    ct_text_put(t, "'");
}

static uint64_t fnv1a(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

/* The rules file embedded in the script: written once per node under $TMPDIR, named by a
 * hash of its content, through a temp file and mv (tasks of a node race safely). */
static int embed_rules(const struct ct_config *c, const struct ct_export_opts *o,
                       struct ct_export_out *out, struct ct_text *t, struct ct_err *err)
{
    struct ct_export_opts o2 = *o;
    struct ct_export_out sub;
    o2.path = NULL;
    ct_export_out_init(&sub);
    int rc = o->lib == CT_LIB_OMPI ? ct_emit_ompi_rules(c, &o2, &sub, err)
                                   : ct_emit_mpich_json(c, &o2, &sub, err);
    if (rc == 0) {
        for (size_t i = 0; i < sub.nnotes; i++)
            ct_export_note(out, "%s", sub.notes[i]);
        const char *ext = o->lib == CT_LIB_OMPI ? "rules" : "json";
        ct_text_printf(t, "rules=\"${TMPDIR:-/tmp}/colltune-%016llx.%s\"\n",
                       (unsigned long long)fnv1a(ct_text_str(&sub.body)), ext);
        ct_text_put(t, "if [ ! -s \"$rules\" ]; then\n"
                       "    cat >\"$rules.$$\" <<'COLLTUNE_EOF' && mv -f \"$rules.$$\" "
                       "\"$rules\" || { echo \"print colltune: cannot write $rules\"; exit 0; }\n");
        ct_text_put(t, ct_text_str(&sub.body));
        ct_text_put(t, "COLLTUNE_EOF\nfi\n");
        if (o->lib == CT_LIB_OMPI)
            ct_text_put(t, "echo \"export OMPI_MCA_coll_tuned_use_dynamic_rules=1\"\n"
                           "echo \"export OMPI_MCA_coll_tuned_dynamic_rules_filename=$rules\"\n");
        else
            ct_text_put(t, "echo \"export MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE=$rules\"\n"
                           "echo \"export MPIR_CVAR_DEVICE_COLLECTIVES=none\"\n");
    }
    ct_export_out_release(&sub);
    return rc;
}

int ct_emit_slurm(const struct ct_config *c, const struct ct_export_opts *o,
                  struct ct_export_out *out, struct ct_err *err)
{
    struct ct_settings set;
    struct ct_text lines;
    char what[128];
    int rc = 0;
    ct_settings_init(&set);
    ct_text_init(&lines);
    bool embed = !o->rules_path && (o->lib == CT_LIB_OMPI || o->lib == CT_LIB_MPICH);
    if (embed)
        rc = embed_rules(c, o, out, &lines, err);
    else
        rc = lib_settings(c, o, out, &set, err);
    for (size_t i = 0; rc == 0 && i < set.n; i++) {
        if (strchr(set.v[i].value, '\n') || strlen(set.v[i].value) > 4000)
            rc = ct_err_set(err, CT_EINVAL, "%s does not fit a TaskProlog line", set.v[i].name);
        char l[4200];
        snprintf(l, sizeof l, "export %s=%s", set.v[i].name, set.v[i].value);
        ct_text_put(&lines, "printf '%s\\n' ");
        sh_quoted(&lines, l);
        ct_text_put(&lines, "\n");
    }
    if (rc == 0) {
        snprintf(what, sizeof what,
                 "Slurm TaskProlog for %s (srun --task-prolog=FILE, or "
                 "TaskProlog= in slurm.conf)",
                 ct_lib_title(o->lib));
        ct_text_put(&out->body, "#!/bin/sh\n");
        ct_export_header(&out->body, "# ", what, c);
        ct_text_put(&out->body, "# slurmstepd runs it before each task and sets every 'export "
                                "NAME=value' line it prints\n# (the value verbatim to the end "
                                "of the line, quotes included).\n");
        for (size_t i = 0; i < out->nnotes; i++)
            ct_text_printf(&out->body, "# %s\n", out->notes[i]);
        ct_text_put(&out->body, ct_text_str(&set.comments));
        if (!lines.len)
            ct_text_printf(&out->body, "# nothing in the config maps to %s\n",
                           ct_lib_title(o->lib));
        ct_text_put(&out->body, ct_text_str(&lines));
    }
    ct_text_release(&lines);
    ct_settings_release(&set);
    return rc;
}
