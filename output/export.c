/* SPDX-License-Identifier: MIT */
/*
 * The exporter table, option checks, the all-or-nothing writer of an export's files, and the
 * helpers every emitter shares (rule mapping, notes, header comments, settings lists).
 */
#include "export.h"

#include "../backend/libmod.h"
#include "../lib/file.h"
#include "../lib/parse.h"
#include "../plugin/nccl_rules.h"
#include "../tune/libverify.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const struct ct_emitter emitters[] = {
    {"nccl-tuner", "NCCL example tuner plugin CSV (NCCL >= 2.27.5) + the env lines that load it",
     CT_EXPORT_LOADED, CT_LIB_NCCL, false, ct_emit_nccl_tuner},
    {"nccl-env", "NCCL_ALGO per collective, protocol, sockets (nccl.conf form)", CT_EXPORT_LOADED,
     CT_LIB_NCCL, false, ct_emit_nccl_env},
    {"nccl-plugin", "export lines loading colltune's NCCL tuner plugin with the measured config",
     CT_EXPORT_SETTINGS, CT_LIB_NCCL, false, ct_emit_nccl_plugin},
    {"ompi-rules", "Open MPI coll/tuned dynamic rules file (classic) + its MCA parameters",
     CT_EXPORT_LOADED, CT_LIB_OMPI, false, ct_emit_ompi_rules},
    {"mpich-json", "MPICH collective selection JSON (complete tree) + the CVAR that loads it",
     CT_EXPORT_LOADED, CT_LIB_MPICH, false, ct_emit_mpich_json},
    {"ucc", "UCC_TL_UCP_TUNE string (and TL/UCP radixes) as export lines", CT_EXPORT_SETTINGS,
     CT_LIB_UCC, false, ct_emit_ucc},
    {"impi", "Intel MPI I_MPI_ADJUST_<COLL> strings as export lines", CT_EXPORT_SETTINGS,
     CT_LIB_IMPI, false, ct_emit_impi},
    {"env", "a file a launcher can source: export lines for --for LIB", CT_EXPORT_SETTINGS,
     CT_LIB_NONE, true, ct_emit_env},
    {"slurm", "a Slurm TaskProlog script printing 'export NAME=value' for --for LIB",
     CT_EXPORT_SCRIPT, CT_LIB_NONE, true, ct_emit_slurm},
    {"json", "the native config (colltune-config/1), unchanged", CT_EXPORT_DATA, CT_LIB_NONE, false,
     ct_emit_json},
    {"csv", "one row per rule, the library sections' too, for spreadsheets", CT_EXPORT_DATA,
     CT_LIB_NONE, false, ct_emit_csv},
};

/* ---- text buffer ------------------------------------------------------------------------ */

void ct_text_init(struct ct_text *t)
{
    memset(t, 0, sizeof *t);
}

void ct_text_release(struct ct_text *t)
{
    free(t->s);
    ct_text_init(t);
}

static void text_reserve(struct ct_text *t, size_t more)
{
    if (t->len + more + 1 <= t->cap)
        return;
    size_t cap = t->cap ? t->cap : 256;
    while (cap < t->len + more + 1)
        cap *= 2;
    t->s = ct_xrealloc(t->s, cap);
    t->cap = cap;
}

void ct_text_put(struct ct_text *t, const char *s)
{
    size_t n = strlen(s);
    text_reserve(t, n);
    memcpy(t->s + t->len, s, n + 1);
    t->len += n;
}

void ct_text_printf(struct ct_text *t, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n <= 0)
        return;
    text_reserve(t, (size_t)n);
    va_start(ap, fmt);
    vsnprintf(t->s + t->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    t->len += (size_t)n;
}

const char *ct_text_str(const struct ct_text *t)
{
    return t->s ? t->s : "";
}

/* ---- options, results -------------------------------------------------------------------- */

void ct_export_opts_init(struct ct_export_opts *o)
{
    memset(o, 0, sizeof *o);
    o->lib = CT_LIB_NONE;
    o->nccl_channels = -1;
}

void ct_export_out_init(struct ct_export_out *o)
{
    memset(o, 0, sizeof *o);
}

void ct_export_out_release(struct ct_export_out *o)
{
    ct_text_release(&o->body);
    ct_text_release(&o->env);
    ct_text_release(&o->mca);
    ct_text_release(&o->rules);
    ct_text_release(&o->side);
    ct_text_release(&o->rules_side);
    for (size_t i = 0; i < o->nnotes; i++)
        free(o->notes[i]);
    free(o->notes);
    for (size_t i = 0; i < o->nverified; i++)
        free(o->verified[i]);
    free(o->verified);
    ct_export_out_init(o);
}

void ct_export_note(struct ct_export_out *o, const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    o->notes = ct_xrealloc(o->notes, (o->nnotes + 1) * sizeof *o->notes);
    o->notes[o->nnotes++] = ct_xstrdup(buf);
}

/* colltune can measure lib's own collectives (sweep --lib) */
static bool has_engine(int lib)
{
    return lib == CT_LIB_OMPI || lib == CT_LIB_MPICH || lib == CT_LIB_NCCL;
}

void ct_export_note_mapped(struct ct_export_out *o, int lib)
{
    if (has_engine(lib))
        ct_export_note(o,
                       "mapped from colltune's own algorithms, not measured; run `colltune "
                       "sweep --lib %s`%s",
                       ct_lib_name(lib), lib == CT_LIB_NCCL ? " on a GPU host" : "");
    else
        ct_export_note(o,
                       "mapped from colltune's own algorithms, not measured (colltune has no "
                       "%s engine)",
                       ct_lib_title(lib));
}

int ct_export_maps_nothing(struct ct_export_out *out, const struct ct_export_opts *o, int lib,
                           const char *so, const char *hint, struct ct_err *err)
{
    char tune[96];
    if (has_engine(lib))
        snprintf(tune, sizeof tune, "tune %s itself: colltune sweep --lib %s", ct_lib_title(lib),
                 ct_lib_name(lib));
    else
        snprintf(tune, sizeof tune, "colltune cannot tune %s itself: it has no %s engine",
                 ct_lib_title(lib), ct_lib_title(lib));
    out->unchanged = true;
    return ct_err_set(err, CT_EUNSUPP,
                      "nothing to export: no rule of colltune's maps to %s %s %s algorithm, so "
                      "%s; no file written (%s)",
                      lib == CT_LIB_UCC ? "a" : "an", ct_lib_title(lib), ct_export_version(o, lib),
                      so, hint ? hint : tune);
}

/* A verified line in t after prefix, also kept in o->verified; else line is a note (stderr
 * and the file). */
static void said(struct ct_export_out *o, struct ct_text *t, const char *prefix, bool verified,
                 const char *line)
{
    if (!verified) {
        ct_export_note(o, "%s", line);
        return;
    }
    ct_text_printf(t, "%s%s\n", prefix, line);
    ct_export_verified_add(o, line);
}

/* What mark v's measure could tell, after its geomean (where: the median of what), into buf:
 * "" where it recorded none. */
static void tell_str(const struct ct_verified *v, const char *where, char *buf, size_t len)
{
    buf[0] = '\0';
    if (v->tell > 0)
        snprintf(buf, len,
                 "; what it could tell: a loss of %.2fx at a size would have shown about half "
                 "the time (%s)",
                 v->tell, where);
}

void ct_export_verified(struct ct_export_out *o, struct ct_text *t, const char *prefix,
                        const struct ct_librules *l, const struct ct_ruleset *s)
{
    char set[96], line[640], tell[160];
    ct_export_set_str(s, set, sizeof set);
    tell_str(&s->verified, "the median size", tell, sizeof tell);
    if (s->verified.at[0])
        snprintf(line, sizeof line,
                 "%s: verified against %s %s's defaults%s at %s (colltune sweep --verify: no "
                 "size slower beyond its interval): geomean %.3f exported/default%s",
                 set, l->name, l->version, l->nenv ? " with the launch settings" : "",
                 s->verified.at, s->verified.geomean, tell);
    else if (ct_ruleset_keeps_own(s)) /* alg 0 alone where written: nothing to verify */
        snprintf(line, sizeof line,
                 "%s: keeps %s's own choice at every size (measured best, or set back by "
                 "sweep --verify): nothing of it to verify",
                 set, l->name);
    else
        snprintf(line, sizeof line,
                 "%s: measured, not verified against %s's defaults; run `colltune sweep "
                 "--verify CONFIG --lib %s` and export the NAME.verified.json it writes",
                 set, l->name, l->library);
    said(o, t, prefix, s->verified.at[0] || ct_ruleset_keeps_own(s), line);
}

void ct_export_lib_env(struct ct_export_out *o, struct ct_text *t, const char *prefix,
                       const struct ct_librules *l, const struct ct_export_opts *opts,
                       struct ct_settings *set)
{
    char line[640], name[sizeof l->env[0].name + 16], tell[192];
    static const char each[] = "the median over the collectives of each one's median size",
                      whole[] = "the median over the collectives this pass measured of each one's "
                                "median size";
    for (int i = 0; l && i < l->nenv; i++) {
        ct_settings_add(set, l->env[i].name, l->env[i].value,
                        i ? NULL
                          : "the launch settings the rules were measured with (colltune sweep "
                            "--lib --env); they hold for every collective of a job");
        /* and under the name whose value wins, where that is another (the sweep's ranks ran
         * with no other name of it); a name that is no control variable of the library's
         * (read by getenv alone) keeps its own above */
        ct_libmod_env_winning(ct_libmod_find(l->library), l->env[i].name, name, sizeof name);
        if (strcmp(name, l->env[i].name))
            ct_settings_add(set, name, l->env[i].value,
                            "the same variable under the name the library reads last, so that "
                            "one set in a job's environment does not decide instead");
    }
    if (!l || !l->nenv)
        return;
    tell_str(&l->env_verified, each, tell, sizeof tell);
    if (l->env_verified.at[0])
        snprintf(line, sizeof line,
                 "launch settings: verified against %s %s's plain defaults at %s (colltune sweep "
                 "--verify: no size slower beyond its interval, faster somewhere): geomean %.3f%s",
                 l->name, l->version, l->env_verified.at, l->env_verified.geomean, tell);
    else
        snprintf(line, sizeof line,
                 "launch settings: measured with, not verified against %s's plain defaults; "
                 "run `colltune sweep --verify CONFIG --lib %s`",
                 l->name, l->library);
    said(o, t, prefix, l->env_verified.at[0], line);
    if (!l->whole_verified.at[0]) /* measured only where both held */
        return;
    int some = 0;
    for (int i = 0; i < l->nsets; i++)
        some += !ct_export_selected(opts, &l->sets[i]);
    if (some) { /* the whole was of all of them */
        snprintf(line, sizeof line,
                 "the export as a whole: verified with all %d of the section's rule sets; "
                 "--nranks %d leaves %d out, so not for this file",
                 l->nsets, opts->nranks, some);
        said(o, t, prefix, false, line);
        return;
    }
    tell_str(&l->whole_verified, whole, tell, sizeof tell);
    snprintf(line, sizeof line,
             "the export as a whole (the launch settings and the rules together): verified against "
             "%s %s's plain defaults at %s (colltune sweep --verify: no size slower beyond its "
             "interval): geomean %.3f exported/default%s",
             l->name, l->version, l->whole_verified.at, l->whole_verified.geomean, tell);
    said(o, t, prefix, true, line);
}

void ct_export_verified_add(struct ct_export_out *o, const char *line)
{
    o->verified = ct_xrealloc(o->verified, (o->nverified + 1) * sizeof *o->verified);
    o->verified[o->nverified++] = ct_xstrdup(line);
}

void ct_export_verified_nccl(struct ct_export_out *o, struct ct_text *t, const char *prefix,
                             const char *version, const struct ct_nr_rule *u)
{
    int coll = ct_coll_find(ct_nr_func_name(u->func));
    if (coll < 0) /* alltoall: no tuner is asked about it, nothing of it is verified */
        return;
    struct ct_librules l = {.library = "nccl", .name = "NCCL"};
    struct ct_ruleset s = {.coll = (enum ct_coll)coll,
                           .nranks = (int)u->nranks,
                           .nnodes = (int)u->nnodes,
                           .ranks_per_node = (int)(u->nranks / u->nnodes),
                           .verified.geomean = u->verified_geomean,
                           .verified.tell = u->verified_tell};
    snprintf(l.version, sizeof l.version, "%s", *version ? version : "(version not recorded)");
    snprintf(s.verified.at, sizeof s.verified.at, "%s", u->verified_at);
    size_t n0 = o->nnotes;
    ct_export_verified(o, t, prefix, &l, &s);
    if (o->nnotes > n0) /* the note goes in the file too */
        ct_text_printf(t, "%s%s\n", prefix, o->notes[o->nnotes - 1]);
}

/* ---- the table ---------------------------------------------------------------------------- */

const struct ct_emitter *ct_emitter_at(size_t i)
{
    return i < sizeof emitters / sizeof emitters[0] ? &emitters[i] : NULL;
}

const struct ct_emitter *ct_emitter_find(const char *name)
{
    for (size_t i = 0; name && ct_emitter_at(i); i++)
        if (!strcmp(emitters[i].name, name))
            return &emitters[i];
    return NULL;
}

/* Edit distance, capped (names are short). */
static int distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 31 || lb > 31)
        return 99;
    int d[32][32];
    for (size_t i = 0; i <= la; i++)
        d[i][0] = (int)i;
    for (size_t j = 0; j <= lb; j++)
        d[0][j] = (int)j;
    for (size_t i = 1; i <= la; i++)
        for (size_t j = 1; j <= lb; j++) {
            int sub = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
            int del = d[i - 1][j] + 1, ins = d[i][j - 1] + 1;
            d[i][j] = sub < del ? (sub < ins ? sub : ins) : (del < ins ? del : ins);
        }
    return d[la][lb];
}

const char *ct_emitter_suggest(const char *name)
{
    const char *best = NULL;
    int bd = 3;
    for (size_t i = 0; name && *name && ct_emitter_at(i); i++) {
        int dd =
            !strncmp(emitters[i].name, name, strlen(name)) ? 1 : distance(name, emitters[i].name);
        if (dd < bd) {
            bd = dd;
            best = emitters[i].name;
        }
    }
    return best;
}

int ct_emitter_choose(const char *format, int lib, const struct ct_emitter **e, struct ct_err *err)
{
    char names[128] = "";
    size_t off = 0;
    int n = 0;
    if (format && (*e = ct_emitter_find(format)))
        return 0;
    if (format) {
        const char *s = ct_emitter_suggest(format);
        return ct_err_set(err, CT_EINVAL, "unknown format '%s'%s%s%s (see --list)", format,
                          s ? "; did you mean '" : "", s ? s : "", s ? "'?" : "");
    }
    *e = NULL;
    for (size_t i = 0; lib != CT_LIB_NONE && ct_emitter_at(i); i++)
        if (emitters[i].lib == lib) {
            *e = &emitters[i];
            n++;
            if (off < sizeof names)
                off += (size_t)snprintf(names + off, sizeof names - off, "%s%s", off ? "|" : "",
                                        emitters[i].name);
        }
    if (n <= 1) /* none: no --for */
        return 0;
    *e = NULL;
    return ct_err_set(err, CT_EINVAL,
                      "--for %s without --format: which format? (--format %s, or env|slurm "
                      "with --for %s)",
                      ct_lib_name(lib), names, ct_lib_name(lib));
}

const char *ct_export_version(const struct ct_export_opts *o, int lib)
{
    return o->version ? o->version : ct_lib_default_version(lib);
}

int ct_export_nccl_measured(const struct ct_export_opts *o, struct ct_err *err)
{
    if (!o->nccl_proto && o->nccl_channels < 0)
        return 0;
    return ct_err_set(err, CT_EINVAL,
                      "--nccl-%s: CONFIG's NCCL section was measured: its rules carry the "
                      "protocol and channels NCCL ran (export without it)",
                      o->nccl_proto ? "proto" : "channels");
}

bool ct_export_selected(const struct ct_export_opts *o, const struct ct_ruleset *s)
{
    return o->nranks <= 0 || s->nranks == o->nranks;
}

int ct_export_by_ranks(const struct ct_ruleset *sets, int nsets, const struct ct_export_opts *o,
                       enum ct_coll coll, const struct ct_ruleset ***list)
{
    const struct ct_ruleset **l = ct_xcalloc((size_t)(nsets ? nsets : 1), sizeof *l);
    int n = 0;
    for (int i = 0; i < nsets; i++) {
        const struct ct_ruleset *s = &sets[i];
        if (s->coll != coll || !ct_export_selected(o, s))
            continue;
        int k = n;
        while (k > 0 && l[k - 1]->nranks > s->nranks)
            k--;
        memmove(&l[k + 1], &l[k], (size_t)(n - k) * sizeof *l);
        l[k] = s;
        n++;
    }
    *list = l;
    return n;
}

int ct_export_run(const struct ct_emitter *e, const struct ct_config *c,
                  const struct ct_export_opts *o, struct ct_export_out *out, struct ct_err *err)
{
    ct_export_out_init(out);
    if (e->needs_lib && o->lib == CT_LIB_NONE)
        return ct_err_set(err, CT_EINVAL, "--format %s needs --for nccl|ompi|mpich|ucc|impi",
                          e->name);
    if (!e->needs_lib && o->lib != CT_LIB_NONE && o->lib != e->lib && e->lib != CT_LIB_NONE)
        return ct_err_set(err, CT_EINVAL, "--for %s: --format %s is %s's file", ct_lib_name(o->lib),
                          e->name, ct_lib_title(e->lib));
    if (!e->needs_lib && o->lib != CT_LIB_NONE && o->lib != e->lib) /* its own, or none */
        return ct_err_set(err, CT_EINVAL,
                          "--for applies to --format env and slurm (and a library's own), not %s",
                          e->name);
    if (o->version && ct_version_check_for(e->needs_lib ? o->lib : e->lib, o->version, err) < 0)
        return ct_err_wrap(err, "--lib-version: ");
    /* options no line of this format reads: refused, not ignored */
    if (o->version && !e->needs_lib && e->lib == CT_LIB_NONE)
        return ct_err_set(err, CT_EINVAL,
                          "--lib-version applies to a library's formats (--for LIB, nccl-tuner, "
                          "ompi-rules, ...), not %s",
                          e->name);
    if (o->nranks > 0 && !strcmp(e->name, "json"))
        return ct_err_set(err, CT_EINVAL,
                          "--nranks applies to the formats that write rules, not json (the "
                          "config whole, as read)");
    bool nccl = e->lib == CT_LIB_NCCL || (e->needs_lib && o->lib == CT_LIB_NCCL);
    if (o->rules_path && !e->needs_lib)
        return ct_err_set(err, CT_EINVAL, "--rules-file applies to --format env and slurm, not %s",
                          e->name);
    bool csv = !strcmp(e->name, "nccl-tuner") || (nccl && e->needs_lib && o->rules_path);
    if ((o->nccl_proto && !nccl) || (o->nccl_channels >= 0 && !csv))
        return ct_err_set(err, CT_EINVAL, "--nccl-%s applies to %s, not %s",
                          o->nccl_proto && !nccl ? "proto" : "channels",
                          o->nccl_proto && !nccl
                              ? "NCCL's formats (nccl-tuner, nccl-env, --for nccl)"
                              : "--format nccl-tuner (and env/slurm --for nccl --rules-file, "
                                "which write its CSV)",
                          e->name);
    /* paths go into comments and export lines: a newline would start a line of its own */
    for (int i = 0; i < 2; i++)
        if (ct_str_ctrl(i ? o->rules_path : o->path))
            return ct_err_set(err, CT_EINVAL,
                              "%s: the path has a control character (a newline, a tab...): it "
                              "would break the lines that name it",
                              i ? "--rules-file" : "--out");
    int lib = e->lib != CT_LIB_NONE ? e->lib : o->lib;
    /* the rules this export reads: the library's measured section where it has one */
    const struct ct_librules *l = lib != CT_LIB_NONE ? ct_config_lib(c, ct_lib_name(lib)) : NULL;
    /* an MPI library's ids and names are its release's (NCCL's are not: --lib-version picks
     * what a release can read, its channel cap, NCCL_ALGO, the CSV plugin) */
    if (o->version && l && l->nsets && (lib == CT_LIB_OMPI || lib == CT_LIB_MPICH) &&
        (!strchr(o->version, '.') || !ct_version_of(l->version, o->version))) /* "4": 4.0 too */
        return ct_err_set(err, CT_EINVAL,
                          "--lib-version %s: the config's %s section was measured with %s %s, "
                          "and its algorithm ids and names are that release's; sweep --lib %s "
                          "with %s %s, or leave --lib-version out",
                          o->version, ct_lib_name(lib), l->name, l->version, ct_lib_name(lib),
                          ct_lib_title(lib), o->version);
    /* launch settings with which the library's shared-memory transport would not start (a
     * job's ranks of a host would talk over TCP, which Open MPI does not say): refused, as
     * verify and sweep refuse them (sizes not set: this environment's, else the library's
     * here; nothing judged where the library is not installed). Only where one of the
     * config's own settings is to blame: this shell's are not the jobs' */
    const struct ct_libmod *m = l && l->nenv ? ct_libmod_find(l->library) : NULL;
    const char *by = NULL;
    if (m && ct_lib_env_fits(m, l->env, l->nenv, NULL, 0, &by, err) < 0 && by)
        return ct_err_wrap(err, "the config's launch settings: ");
    ct_err_clear(err); /* a refusal of this shell's own: not the export's */
    const struct ct_ruleset *sets = l && l->nsets ? l->sets : c->sets;
    int nsets = l && l->nsets ? l->nsets : c->nsets;
    bool any = false;
    char have[128] = "";
    size_t off = 0;
    for (int i = 0; i < nsets; i++) {
        bool dup = false;
        any |= ct_export_selected(o, &sets[i]);
        for (int k = 0; k < i; k++)
            dup |= sets[k].nranks == sets[i].nranks;
        if (!dup && off < sizeof have)
            off += (size_t)snprintf(have + off, sizeof have - off, "%s%d", off ? ", " : "",
                                    sets[i].nranks);
    }
    if (!any && nsets)
        return ct_err_set(err, CT_EINVAL, "--nranks %d: the config has rules for %s ranks only",
                          o->nranks, have);
    if (!c->nsets && lib != CT_LIB_NONE && !ct_config_lib(c, ct_lib_name(lib))) {
        char how[96]; /* the libraries colltune has an engine for, measured; the others mapped */
        if (lib == CT_LIB_OMPI || lib == CT_LIB_MPICH || lib == CT_LIB_NCCL)
            snprintf(how, sizeof how, "measure it: colltune sweep --lib %s%s", ct_lib_name(lib),
                     lib == CT_LIB_NCCL ? " on a GPU host" : "");
        else
            snprintf(how, sizeof how, "a config with colltune's own rules maps to it");
        return ct_err_set(err, CT_EINVAL,
                          "the config has no rules for %s: only measured sections of other "
                          "libraries (%s, or --format json)",
                          ct_lib_title(lib), how);
    }
    int rc = e->emit(c, o, out, err);
    if (rc == 0 && out->side.len && (!o->path || o->one_file))
        rc = ct_err_set(err, CT_EINVAL,
                        "this %s export is two files, FILE and FILE%s (MPICH's CH4 tree for "
                        "the tuned AllReduce ranges), and one would be lost: write both with "
                        "--out FILE (standard output and --push carry one)",
                        e->name, out->side_suffix);
    if (rc < 0) {
        bool unchanged = out->unchanged; /* why, for the caller */
        ct_export_out_release(out);
        out->unchanged = unchanged;
    }
    return rc;
}

/* ---- files -------------------------------------------------------------------------------- */

static void add_file(struct ct_export_files *f, const char *path, const char *suffix,
                     const struct ct_text *t, int mode)
{
    size_t n = strlen(path) + strlen(suffix) + 1;
    f->path[f->n] = ct_xmalloc(n);
    snprintf(f->path[f->n], n, "%s%s", path, suffix);
    f->text[f->n] = t;
    f->mode[f->n] = mode;
    f->n++;
}

void ct_export_files(const struct ct_emitter *e, const struct ct_export_out *out, const char *path,
                     struct ct_export_files *f)
{
    memset(f, 0, sizeof *f);
    if (path) {
        add_file(f, path, "", &out->body, e->kind == CT_EXPORT_SCRIPT ? 0755 : 0644);
        if (out->env.len)
            add_file(f, path, ".env", &out->env, 0644);
        if (out->mca.len)
            add_file(f, path, ".mca.conf", &out->mca, 0644);
        if (out->side.len)
            add_file(f, path, out->side_suffix, &out->side, 0644);
    }
    if (out->rules_path) {
        char *abs = ct_path_absolute(out->rules_path);
        add_file(f, abs, "", &out->rules, 0644);
        if (out->rules_side.len)
            add_file(f, abs, out->side_suffix, &out->rules_side, 0644);
        free(abs);
        f->rules = true;
    }
}

void ct_export_files_release(struct ct_export_files *f)
{
    for (int i = 0; i < f->n; i++)
        free(f->path[i]);
    memset(f, 0, sizeof *f);
}

/* The file path names, as one name: its folder resolved (links, "..") and its own name, the
 * file it links to where it is a link; new memory. */
static char *same_name(const char *path)
{
    char *r = realpath(path, NULL);
    if (r)
        return r;
    char *dir = ct_xstrdup(path), *slash = strrchr(dir, '/');
    const char *base = slash ? slash + 1 : path;
    if (slash)
        slash[slash == dir] = 0;
    char *rd = realpath(slash ? dir : ".", NULL);
    size_t n = strlen(rd ? rd : dir) + strlen(base) + 2;
    char *out = ct_xmalloc(n);
    snprintf(out, n, "%s/%s", rd ? rd : dir, base);
    free(rd);
    free(dir);
    return out;
}

int ct_export_files_check(const struct ct_export_files *f, struct ct_err *err)
{
    for (int i = 0; i < f->n; i++) {
        const char *p = f->path[i];
        struct stat st;
        char *me = same_name(p);
        bool twice = false; /* as named, or through a link or a "..": one file written twice */
        for (int k = 0; k < i && !twice; k++) {
            char *other = same_name(f->path[k]);
            twice = !strcmp(f->path[k], p) || !strcmp(other, me);
            free(other);
        }
        free(me);
        if (twice)
            return ct_err_set(err, CT_EINVAL, "two outputs would be written to '%s'", p);
        if (stat(p, &st) == 0 && S_ISDIR(st.st_mode))
            return ct_err_set(err, CT_EINVAL, "cannot write '%s': it is a folder", p);
        char *real;
        int mode, kind = ct_file_target(p, &real, &mode, err);
        if (kind < 0)
            return kind;
        struct stat in;
        bool same = f->input && stat(f->input, &in) == 0 && stat(real, &st) == 0 &&
                    in.st_dev == st.st_dev && in.st_ino == st.st_ino;
        free(real);
        if (same)
            return ct_err_set(err, CT_EINVAL, "cannot write '%s': it is the config read", p);
        if (kind == 0) /* replaced by a rename: a device node turned into a file (root) */
            return ct_err_set(err, CT_EINVAL,
                              "cannot write '%s': not a regular file (a device, FIFO or "
                              "socket); without --out the export goes to standard output",
                              p);
        char *dir = ct_xstrdup(p);
        char *slash = strrchr(dir, '/');
        if (!slash)
            snprintf(dir, strlen(p) + 1, ".");
        else if (slash == dir)
            slash[1] = 0;
        else
            *slash = 0;
        int rc = 0;
        if (stat(dir, &st) < 0)
            rc = ct_err_sys(err, CT_EINVAL, "cannot write '%s'", p);
        else if (!S_ISDIR(st.st_mode))
            rc = ct_err_set(err, CT_EINVAL, "cannot write '%s': '%s' is not a folder", p, dir);
        else if (access(dir, W_OK | X_OK) < 0)
            rc = ct_err_sys(err, CT_EINVAL, "cannot write '%s': its folder '%s'", p, dir);
        else /* root passes access() where the file system refuses (/proc, read-only) */
            rc = ct_file_check_writable(p, err);
        free(dir);
        if (rc < 0)
            return rc;
    }
    return 0;
}

/* Write t to a new temp file beside path (the file a link names); its name in tmp. mode: the
 * new file's; keep: the mode of the file it replaces (-1: none there). */
static int write_temp(const char *path, const struct ct_text *t, int mode, int keep, char *tmp,
                      size_t len, struct ct_err *err)
{
    snprintf(tmp, len, "%.4096s.tmp.%ld", path, (long)getpid());
    unlink(tmp); /* a stale one from a killed run of the same pid */
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
    if (fd < 0)
        return ct_err_sys(err, CT_EIO, "cannot write '%s'", path);
    if (ct_file_keep(fd, path, keep) < 0 || ct_file_write_all(fd, ct_text_str(t), t->len) < 0)
        goto fail;
    if (fsync(fd) < 0 && errno != EINVAL)
        goto fail;
    if (close(fd) < 0) {
        fd = -1;
        goto fail;
    }
    return 0;
fail:
    ct_err_sys(err, CT_EIO, "cannot write '%s'", path);
    if (fd >= 0)
        close(fd);
    unlink(tmp);
    return CT_EIO;
}

int ct_export_files_write(const struct ct_export_files *f, struct ct_err *err)
{
    char tmp[6][4200], real[6][4200]; /* real: the file each path names (links followed) */
    int done = 0, rc = 0;
    for (; done < f->n; done++) {
        char *r;
        int keep, kind = ct_file_target(f->path[done], &r, &keep, err);
        if (kind >= 0 && strlen(r) > 4096)
            rc = ct_err_set(err, CT_EINVAL, "path too long: '%.60s...'", f->path[done]);
        else if (kind == 0)
            rc = ct_err_set(err, CT_EINVAL, "cannot write '%s': not a regular file", f->path[done]);
        else if (kind > 0)
            snprintf(real[done], sizeof real[done], "%s", r);
        free(r);
        if (keep >= 0 && (f->mode[done] & 0111)) /* a script stays one (a TaskProlog) */
            keep |= (keep & 0444) >> 2;
        if (rc < 0 || kind < 0 ||
            (rc = write_temp(real[done], f->text[done], f->mode[done], keep, tmp[done],
                             sizeof tmp[0], err)) < 0) {
            rc = rc < 0 ? rc : kind;
            break;
        }
    }
    if (rc < 0) {
        for (int i = 0; i < done; i++)
            unlink(tmp[i]);
        return rc;
    }
    /* every temp file is complete: keep a link to each file it replaces, rename the sidecars
     * first and the main file last, and on a failed rename put back what was replaced (a
     * sidecar of the new export beside the old main file points a job at rules it does
     * not read). A file system without hard links keeps the order only. */
    char bak[6][4200];
    enum { NONE, KEPT, UNKEPT } had[6]; /* no file there; linked to bak; there, not linked */
    for (int i = 0; i < f->n; i++) {
        snprintf(bak[i], sizeof bak[i], "%.4096s.old.%ld", real[i], (long)getpid());
        unlink(bak[i]);
        had[i] = link(real[i], bak[i]) == 0 ? KEPT : errno == ENOENT ? NONE : UNKEPT;
    }
    for (int i = f->n - 1; i >= 0; i--)
        if (rename(tmp[i], real[i]) < 0) {
            ct_err_sys(err, CT_EIO, "cannot write '%s'", f->path[i]);
            for (int j = 0; j <= i; j++)
                unlink(tmp[j]);
            for (int j = i + 1; j < f->n; j++)
                if (had[j] == KEPT)
                    rename(bak[j], real[j]);
                else if (had[j] == NONE)
                    unlink(real[j]);
            for (int j = 0; j < f->n; j++)
                if (had[j] == KEPT)
                    unlink(bak[j]);
            return CT_EIO;
        }
    for (int i = 0; i < f->n; i++)
        if (had[i] == KEPT)
            unlink(bak[i]);
    return 0;
}

/* ---- helpers for emitters ------------------------------------------------------------- */

const char *ct_export_set_str(const struct ct_ruleset *s, char *buf, size_t len)
{
    snprintf(buf, len, "%s on %d ranks (%d x %d)", ct_coll_name(s->coll), s->nranks, s->nnodes,
             s->ranks_per_node);
    return buf;
}

const char *ct_export_range_str(uint64_t lo, uint64_t hi, char *buf, size_t len)
{
    char a[32], b[32];
    if (hi == CT_BYTES_INF)
        snprintf(buf, len, "[%s, inf)", ct_bytes_exact(lo, " ", a, sizeof a));
    else
        snprintf(buf, len, "[%s, %s)", ct_bytes_exact(lo, " ", a, sizeof a),
                 ct_bytes_exact(hi, " ", b, sizeof b));
    return buf;
}

void ct_export_map(const struct ct_ruleset *s, int lib, const struct ct_export_opts *o,
                   struct ct_export_out *out, struct ct_xrange **xr, int *n)
{
    const struct ct_size_meaning *m = ct_algomap_size(lib, s->coll);
    *xr = ct_xcalloc((size_t)s->nrules + 1, sizeof **xr);
    *n = 0;
    if (!m || m->unit == CT_UNIT_NONE)
        return;
    for (int i = 0; i < s->nrules; i++) {
        const struct ct_rule *r = &s->rules[i];
        struct ct_xrange *x = &(*xr)[*n];
        if (!ct_algomap_range(m, s->nranks, r->min_bytes, r->max_bytes, &x->lo, &x->hi)) {
            char set[96], rg[64];
            ct_export_note(out, "%s %s: empty in %s's unit (%s); left out",
                           ct_export_set_str(s, set, sizeof set),
                           ct_export_range_str(r->min_bytes, r->max_bytes, rg, sizeof rg),
                           ct_lib_title(lib), m->what);
            continue;
        }
        x->rule = r;
        x->map = ct_algomap_find(lib, s->coll, r->algo, ct_export_version(o, lib), &x->later);
        (*n)++;
    }
}

void ct_export_note_unmapped(struct ct_export_out *out, struct ct_text *t, const char *prefix,
                             const struct ct_ruleset *s, int lib, const struct ct_xrange *x,
                             const char *consequence)
{
    char set[96], rg[64], why[96] = "";
    if (x->later)
        snprintf(why, sizeof why, " before %s %s", ct_lib_title(lib), x->later->since);
    ct_export_note(out, "%s %s: colltune '%s' has no %s counterpart%s; %s",
                   ct_export_set_str(s, set, sizeof set),
                   ct_export_range_str(x->lo, x->hi, rg, sizeof rg), x->rule->algo,
                   ct_lib_title(lib), why, consequence);
    if (t)
        ct_text_printf(t, "%s%s\n", prefix, out->notes[out->nnotes - 1]);
}

void ct_export_map_comment(struct ct_text *t, const char *prefix, const struct ct_ruleset *s,
                           const struct ct_xrange *x)
{
    char set[96], rg[64];
    ct_text_printf(t, "%s%s %s: colltune %s -> %s (%s: %s)\n", prefix,
                   ct_export_set_str(s, set, sizeof set),
                   ct_export_range_str(x->lo, x->hi, rg, sizeof rg), x->rule->algo, x->map->target,
                   ct_match_name(x->map->match), x->map->note);
}

/* The shapes of the rule sets a file for lib writes (the library's measured section's, else
 * colltune's own; those o selects), "H host(s) x R ranks" joined by ", " and " and ": the
 * fingerprint's first where a set has it (a joined config's sets can name others, and a
 * slice or one library's section can leave it out); the fingerprint's where no set is. */
static void export_shapes(const struct ct_config *c, int lib, const struct ct_export_opts *o,
                          char *buf, size_t len)
{
    const struct ct_librules *l = lib != CT_LIB_NONE ? ct_config_lib(c, ct_lib_name(lib)) : NULL;
    const struct ct_ruleset *s = l ? l->sets : c->sets;
    int n = l ? l->nsets : c->nsets, sh[8][2], k = 0, more = 0;
    for (int pass = 0; pass < 2; pass++) /* the fingerprint's shape first */
        for (int i = 0; i < n; i++) {
            bool fp = s[i].nnodes == c->fp.hosts && s[i].ranks_per_node == c->fp.ranks_per_host;
            bool have = false;
            for (int j = 0; j < k; j++)
                have |= sh[j][0] == s[i].nnodes && sh[j][1] == s[i].ranks_per_node;
            if ((pass == 0) != fp || have || !ct_export_selected(o, &s[i]))
                continue;
            if (k == (int)(sizeof sh / sizeof sh[0])) { /* counted, not named */
                more++;
                continue;
            }
            sh[k][0] = s[i].nnodes;
            sh[k++][1] = s[i].ranks_per_node;
        }
    if (!k) {
        sh[0][0] = c->fp.hosts;
        sh[0][1] = c->fp.ranks_per_host;
        k = 1;
    }
    size_t u = 0;
    buf[0] = '\0';
    for (int j = 0; j < k && u < len; j++)
        u += (size_t)snprintf(buf + u, len - u, "%s%d host(s) x %d ranks",
                              !j                    ? ""
                              : j == k - 1 && !more ? " and "
                                                    : ", ",
                              sh[j][0], sh[j][1]);
    if (more && u < len) /* sets of more shapes than named (a set each, at most) */
        snprintf(buf + u, len - u, " and up to %d more", more);
}

void ct_export_header(struct ct_text *t, const char *prefix, const char *what,
                      const struct ct_config *c, int lib, const struct ct_export_opts *o)
{
    const struct ct_fingerprint *f = &c->fp;
    ct_text_printf(t, "%s%s\n", prefix, what);
    ct_text_printf(t, "%sgenerated by 'colltune export' from a config of colltune %s, %s\n", prefix,
                   c->version, c->date);
    if (c->sweep.predicted[0]) /* sweep --model: no rule here was measured */
        ct_text_printf(t, "%sPREDICTED by colltune model for %s, %s %s: priced, not measured\n",
                       prefix, c->sweep.predicted, ct_dtype_name(c->sweep.dtype),
                       ct_redop_name(c->sweep.op));
    else {
        char tp[192] = ""; /* a library sweep's "transport" is the library, which the lines
                              below name (a joined config's: the first's): none said */
        if (c->nsets || !c->nlibs)
            snprintf(tp, sizeof tp, "transport %s%s, links %s, ", f->transport,
                     c->nlibs ? " (colltune's own rules)" : "",
                     *f->link_classes ? f->link_classes : "-");
        char shapes[8 * 32 + 32]; /* 8 shapes named, "and up to N more" */
        export_shapes(c, lib, o, shapes, sizeof shapes);
        ct_text_printf(t, "%smeasured on %s, %s%s %s\n", prefix, shapes, tp,
                       ct_dtype_name(c->sweep.dtype), ct_redop_name(c->sweep.op));
    }
    if (c->partial)
        ct_text_printf(t, "%spartial: the sweep stopped early; rules cover what was measured\n",
                       prefix);
}

/* ---- settings lists --------------------------------------------------------------------- */

void ct_settings_init(struct ct_settings *s)
{
    memset(s, 0, sizeof *s);
}

void ct_settings_release(struct ct_settings *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->v[i].value);
    free(s->v);
    ct_text_release(&s->comments);
    ct_settings_init(s);
}

void ct_settings_add(struct ct_settings *s, const char *name, const char *value,
                     const char *comment)
{
    s->v = ct_xrealloc(s->v, (s->n + 1) * sizeof *s->v);
    struct ct_setting *x = &s->v[s->n++];
    snprintf(x->name, sizeof x->name, "%s", name);
    x->value = ct_xstrdup(value);
    snprintf(x->comment, sizeof x->comment, "%s", comment ? comment : "");
}

/* 'value' for sh: single quotes, embedded ' as '\'' */
static void shell_quote(struct ct_text *t, const char *v)
{
    ct_text_put(t, "'");
    for (; *v; v++) {
        if (*v == '\'')
            ct_text_put(t, "'\\''");
        else
            ct_text_printf(t, "%c", *v);
    }
    ct_text_put(t, "'");
}

void ct_settings_exports(const struct ct_settings *set, struct ct_text *t)
{
    for (size_t i = 0; i < set->n; i++) {
        if (*set->v[i].comment)
            ct_text_printf(t, "# %s\n", set->v[i].comment);
        ct_text_printf(t, "export %s=", set->v[i].name);
        shell_quote(t, set->v[i].value);
        ct_text_put(t, "\n");
    }
}

/* Parses back what ct_settings_exports wrote. */
int ct_export_loader(const struct ct_export_out *out, struct ct_loader *l)
{
    l->n = 0;
    for (const char *p = ct_text_str(&out->env); p && *p;
         p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
        if (strncmp(p, "export ", 7))
            continue;
        p += 7;
        size_t nl = strcspn(p, "=\n");
        if (p[nl] != '=' || nl >= sizeof l->name[0])
            continue;
        if (l->n == CT_LOADER_MAX)
            return -1; /* a variable left out would load something else than the file says */
        snprintf(l->name[l->n], sizeof l->name[0], "%.*s", (int)nl, p);
        char *v = l->value[l->n];
        size_t k = 0;
        bool quoted = false; /* sh: inside '...' every character is itself; '\'' is a quote */
        for (const char *q = p + nl + 1; *q && *q != '\n' && k + 1 < sizeof l->value[0]; q++) {
            if (*q == '\'') {
                quoted = !quoted;
                continue;
            }
            if (!quoted && *q == '\\' && q[1] && q[1] != '\n')
                q++;
            v[k++] = *q;
        }
        v[k] = 0;
        l->n++;
    }
    return 0;
}

const char *ct_emitter_mime(const struct ct_emitter *e)
{
    return !strcmp(e->name, "json")         ? "application/json"
           : !strcmp(e->name, "mpich-json") ? "application/json"
           : !strcmp(e->name, "csv")        ? "text/csv; charset=utf-8"
                                            : "text/plain; charset=utf-8";
}

void ct_export_files_print(FILE *f, const char *prefix, const struct ct_export_files *files)
{
    if (files->n < 2 && !files->rules)
        return;
    fprintf(f, "%swrote %s", prefix, files->path[0]);
    for (int i = 1; i < files->n; i++)
        fprintf(f, "%s%s", i == files->n - 1 ? " and " : ", ", files->path[i]);
    fputs("\n", f);
}

void ct_export_loader_print(FILE *f, const char *prefix, const struct ct_export_out *out)
{
    if (!out->env.len)
        return;
    fprintf(f, "%sload it with:\n", prefix);
    for (const char *p = ct_text_str(&out->env); *p;) {
        size_t n = strcspn(p, "\n");
        if (*p != '#')
            fprintf(f, "  %.*s\n", (int)n, p);
        p += n + (p[n] == '\n');
    }
}

void ct_emitter_list(FILE *f)
{
    for (size_t i = 0; ct_emitter_at(i); i++)
        fprintf(f, "  %-11s %s\n", ct_emitter_at(i)->name, ct_emitter_at(i)->summary);
}
