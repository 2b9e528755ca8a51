/* SPDX-License-Identifier: MIT */
/*
 * env: one file a job script or launcher can source, with the export lines of the library
 * chosen by --for. Libraries whose rules live in a file (Open MPI, MPICH; NCCL's tuner) get
 * lines that point at it: --rules-file names a copy every node can read, and the export writes
 * that file too, with MPICH's CH4 tree beside it where mpich-json writes one (a line pointing
 * at a missing file crashes MPICH 4.0.2 in MPI_Init). The lines are the ones the library's own
 * format writes in its .env (slurm without --rules-file: the files embedded in the script).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/parse.h"
#include "export.h"

/* Open MPI's or MPICH's own export of c with its files at path: the rules file in sub->body,
 * a second one in sub->side, the variables that load them in sub->env; its verified lines and
 * notes into out (unless NULL). */
static int lib_export(const struct ct_config *c, const struct ct_export_opts *o, const char *path,
                      struct ct_export_out *out, struct ct_export_out *sub, struct ct_err *err)
{
    struct ct_export_opts o2 = *o;
    o2.path = path;
    ct_export_out_init(sub);
    int rc = o->lib == CT_LIB_OMPI    ? ct_emit_ompi_rules(c, &o2, sub, err)
             : o->lib == CT_LIB_MPICH ? ct_emit_mpich_json(c, &o2, sub, err)
                                      : ct_emit_nccl_tuner(c, &o2, sub, err);
    if (out) /* refused as changing nothing: so is the export that points at it */
        out->unchanged = sub->unchanged;
    for (size_t i = 0; rc == 0 && out && i < sub->nverified; i++)
        ct_export_verified_add(out, sub->verified[i]);
    for (size_t i = 0; rc == 0 && out && i < sub->nnotes; i++)
        ct_export_note(out, "%s", sub->notes[i]);
    return rc;
}

/* The variables sub's own loader lines set, added to set (the first with a comment). */
static void loader_settings(const struct ct_export_out *sub, struct ct_settings *set,
                            const char *comment)
{
    struct ct_loader *l = ct_xmalloc(sizeof *l);
    ct_export_loader(sub, l);
    for (int i = 0; i < l->n; i++)
        ct_settings_add(set, l->name[i], l->value[i], i ? NULL : comment);
    free(l);
}

/* The rules file of o->lib into out->rules (and its side file), for out->rules_path =
 * o->rules_path; Open MPI's and MPICH's loader variables into set. */
static int rules_file(const struct ct_config *c, const struct ct_export_opts *o,
                      struct ct_export_out *out, struct ct_settings *set, struct ct_err *err)
{
    struct ct_export_out sub;
    int rc = lib_export(c, o, o->rules_path, out, &sub, err);
    if (rc == 0) {
        ct_text_put(&out->rules, ct_text_str(&sub.body));
        if (sub.side.len)
            ct_text_put(&out->rules_side, ct_text_str(&sub.side));
        out->side_suffix = sub.side_suffix;
        out->rules_path = o->rules_path;
        if (o->lib != CT_LIB_NCCL)
            loader_settings(&sub, set,
                            o->lib == CT_LIB_OMPI
                                ? "what --format ompi-rules loads: its launch settings, and "
                                  "its coll/tuned rules where a rule changes Open MPI's choice"
                                : "what --format mpich-json loads: its launch settings, and "
                                  "its selection trees where a rule changes MPICH's choice");
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
    if (rp && !loaded) /* its settings are the environment itself */
        return ct_err_set(err, CT_EINVAL, "--rules-file: --for %s reads no rules file",
                          ct_lib_name(o->lib));
    if (rp && loaded) {
        int rc = rules_file(c, o, out, set, err);
        if (rc < 0 || o->lib != CT_LIB_NCCL)
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
    case CT_LIB_MPICH: break; /* without --rules-file */
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
        ct_export_header(&out->body, "# ", what, c, o->lib, o);
        for (size_t i = 0; i < out->nverified; i++) /* the rules file's header says them */
            ct_text_printf(&out->body, "# %s\n", out->verified[i]);
        for (size_t i = 0; i < out->nnotes; i++)
            ct_text_printf(&out->body, "# %s\n", out->notes[i]);
        ct_text_put(&out->body, ct_text_str(&set.comments));
        ct_settings_exports(&set, &out->body); /* never none: a library's export refuses that */
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

/* One file of the embedded rules: written once per node, through a temp file of mktemp's (not a
 * name another user could plant a link at) and mv (tasks of a node race safely). */
static void embed_file(struct ct_text *t, const char *name, const struct ct_text *body)
{
    ct_text_printf(t,
                   "    tmp=$(mktemp \"%s.XXXXXX\") && cat >\"$tmp\" <<'COLLTUNE_EOF' && "
                   "mv -f \"$tmp\" \"%s\" || { rm -f \"$tmp\"; echo \"print colltune: cannot "
                   "write %s\"; exit 0; }\n",
                   name, name, name);
    ct_text_put(t, ct_text_str(body));
    ct_text_put(t, "COLLTUNE_EOF\n");
}

/* An export line the prolog prints: the value verbatim (a $, `, " or \ stays as it is), but
 * for its "$rules" where `rules` (the embedded file's path, which the shell expands). */
static void prolog_export(struct ct_text *t, const char *name, const char *value, bool rules)
{
    char l[4200];
    const char *at = rules ? strstr(value, "$rules") : NULL;
    int pre = at ? (int)(at - value) : (int)strlen(value);
    snprintf(l, sizeof l, "export %s=%.*s", name, pre, value);
    ct_text_put(t, at ? "printf '%s%s%s\\n' " : "printf '%s\\n' ");
    sh_quoted(t, l);
    if (at) {
        ct_text_put(t, " \"$rules\" ");
        sh_quoted(t, at + strlen("$rules"));
    }
    ct_text_put(t, "\n");
}

/* The rules file embedded in the script (with its side file, written first) as the library's
 * own export writes it: under $TMPDIR, named by a hash of their content. Then the lines that
 * export would print, with the file's path as $rules. */
static int embed_rules(const struct ct_config *c, const struct ct_export_opts *o,
                       struct ct_export_out *out, struct ct_text *t, struct ct_err *err)
{
    struct ct_export_out sub, at;
    ct_export_out_init(&at);
    int rc = lib_export(c, o, NULL, out, &sub, err);
    if (rc == 0)
        rc = lib_export(c, o, "$rules", NULL, &at, err);
    if (rc == 0) {
        const char *ext = o->lib == CT_LIB_OMPI ? "rules" : "json";
        uint64_t h =
            ct_fnv1a64(ct_fnv1a64(CT_FNV64_BASIS, ct_text_str(&sub.body)), ct_text_str(&sub.side));
        char side[64];
        snprintf(side, sizeof side, "$rules%s", sub.side.len ? sub.side_suffix : "");
        ct_text_printf(t, "rules=\"${TMPDIR:-/tmp}/colltune-$(id -u)-%016llx.%s\"\n",
                       (unsigned long long)h, ext);
        /* a link, or a file not the user's own, of that name (planted in a shared /tmp) is
         * never read nor written over: the files go to a folder of this task's own then */
        ct_text_put(t, "if [ -h \"$rules\" ] || { [ -e \"$rules\" ] && ! [ -O \"$rules\" ]; }");
        if (sub.side.len)
            ct_text_printf(t, " ||\n    [ -h \"%s\" ] || { [ -e \"%s\" ] && ! [ -O \"%s\" ]; }",
                           side, side, side);
        ct_text_printf(t,
                       "; then\n    d=$(mktemp -d \"${TMPDIR:-/tmp}/colltune-XXXXXX\") || { echo "
                       "\"print colltune: cannot make a folder in ${TMPDIR:-/tmp}\"; exit 0; }\n"
                       "    rules=\"$d/colltune-%016llx.%s\"\nfi\n",
                       (unsigned long long)h, ext);
        ct_text_put(t, "if ! [ -s \"$rules\" ]");
        if (sub.side.len)
            ct_text_printf(t, " || ! [ -s \"%s\" ]", side);
        ct_text_put(t, "; then\n");
        if (sub.side.len)
            embed_file(t, side, &sub.side);
        embed_file(t, "$rules", &sub.body);
        ct_text_put(t, "fi\n");
        struct ct_loader *l = ct_xmalloc(sizeof *l);
        ct_export_loader(&at, l);
        for (int i = 0; i < l->n; i++)
            prolog_export(t, l->name[i], l->value[i], true);
        free(l);
    }
    ct_export_out_release(&at);
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
        prolog_export(&lines, set.v[i].name, set.v[i].value, false);
    }
    if (rc == 0) {
        snprintf(what, sizeof what,
                 "Slurm TaskProlog for %s (srun --task-prolog=FILE, or "
                 "TaskProlog= in slurm.conf)",
                 ct_lib_title(o->lib));
        ct_text_put(&out->body, "#!/bin/sh\n");
        ct_export_header(&out->body, "# ", what, c, o->lib, o);
        ct_text_put(&out->body, "# slurmstepd runs it before each task and sets every 'export "
                                "NAME=value' line it prints\n# (the value verbatim to the end "
                                "of the line, quotes included).\n");
        for (size_t i = 0; i < out->nverified; i++)
            ct_text_printf(&out->body, "# %s\n", out->verified[i]);
        for (size_t i = 0; i < out->nnotes; i++)
            ct_text_printf(&out->body, "# %s\n", out->notes[i]);
        ct_text_put(&out->body, ct_text_str(&set.comments));
        ct_text_put(&out->body, ct_text_str(&lines));
    }
    ct_text_release(&lines);
    ct_settings_release(&set);
    return rc;
}
