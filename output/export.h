/* SPDX-License-Identifier: MIT */
/*
 * Exporters: a tuned config (colltune-config/1) in the formats collective libraries and job
 * launchers read. One table row per format, one emit function per format (emit_<fmt>.c); the
 * algorithm mapping and the size units come from algomap.h.
 */
#ifndef CT_OUTPUT_EXPORT_H
#define CT_OUTPUT_EXPORT_H

#include <stdbool.h>
#include <stdio.h>
#include <stddef.h>
#include <stdint.h>

#include "../backend/libmod.h"
#include "../tune/tune.h"
#include "../lib/err.h"
#include "algomap.h"

/* A growing text buffer (always NUL-terminated once written to). */
struct ct_text {
    char *s;
    size_t len, cap;
};
void ct_text_init(struct ct_text *t);
void ct_text_release(struct ct_text *t);
void ct_text_printf(struct ct_text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void ct_text_put(struct ct_text *t, const char *s);
/* s, or "" before anything was written. */
const char *ct_text_str(const struct ct_text *t);

enum ct_export_kind {
    CT_EXPORT_LOADED,   /* a file the library reads itself: --out FILE gets FILE.env beside it */
    CT_EXPORT_SETTINGS, /* settings as text (a conf file or export lines) */
    CT_EXPORT_SCRIPT,   /* an executable script (written 0755) */
    CT_EXPORT_DATA,     /* data for people and tools (json, csv) */
};

struct ct_export_opts {
    int lib;                /* --for (env, slurm): enum ct_lib, or CT_LIB_NONE */
    const char *path;       /* absolute path the main output will have; NULL: standard output */
    const char *rules_path; /* env/slurm for ompi|mpich|nccl: a rules file to point at, or NULL */
    const char *version;    /* --lib-version: target library version; NULL: the library default */
    int nranks;             /* export only rulesets of this many ranks; 0: all */
    const char *nccl_proto; /* NCCL protocol for the tuner CSV: "ll", "ll128", "simple" (NULL) */
    int nccl_channels;      /* tuner CSV channel count for every line; -1: from the config */
    const char *config_path; /* the config's file (nccl-plugin points NCCL at it), or NULL */
    bool one_file;           /* the output travels as one file (--push), as it does without path */
};
void ct_export_opts_init(struct ct_export_opts *o);

/* What one export produces. */
struct ct_export_out {
    struct ct_text body;    /* the main output */
    struct ct_text env;     /* export lines that make the library load body (CT_EXPORT_LOADED) */
    struct ct_text mca;     /* Open MPI: the same as an openmpi-mca-params.conf snippet */
    struct ct_text rules;   /* env/slurm with --rules-file: the rules file the lines point at */
    const char *rules_path; /* where rules goes (the options' rules_path); NULL: none */
    /* A second file the library reads with the first (MPICH's CH4 tree beside its MPIR tree):
     * side goes to <path><side_suffix>, rules_side to <rules_path><side_suffix>. */
    struct ct_text side, rules_side;
    const char *side_suffix;
    char **notes;           /* one line each: rules without counterpart, approximations dropped */
    size_t nnotes;
    /* the "<set>: verified against ..." lines the file's header carries (ct_export_verified),
     * without prefix: an env or slurm export that points at the file says them too */
    char **verified;
    size_t nverified;
    /* with CT_EUNSUPP: the only reason is that the file would keep the library's own choices
     * everywhere (measured best at every size): nothing to write, nothing wrong */
    bool unchanged;
};
void ct_export_out_init(struct ct_export_out *o);
void ct_export_out_release(struct ct_export_out *o);
/* Record a note (shown on stderr by the command; emitters also put it in the output). */
void ct_export_note(struct ct_export_out *o, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* The note of a file written from colltune's own rules (no measured section of lib, a
 * CT_LIB_*): "mapped from colltune's own algorithms, not measured; run `colltune sweep --lib
 * ompi`" (for a library colltune has no engine for, says so instead). */
void ct_export_note_mapped(struct ct_export_out *o, int lib);
/* The refusal of a mapped export (colltune's own rules) none of whose ranges has a
 * counterpart in lib: sets out->unchanged, returns CT_EUNSUPP with "nothing to export: no
 * rule of colltune's maps to an Open MPI 4.1 algorithm, so <so>; no file written (<hint>)",
 * hint NULL: "tune Open MPI itself: colltune sweep --lib ompi" (for a library colltune has
 * no engine for, says so instead). */
int ct_export_maps_nothing(struct ct_export_out *out, const struct ct_export_opts *o, int lib,
                           const char *so, const char *hint, struct ct_err *err);
/* Whether measured set s of section l was verified against the library's
 * defaults: a line in t after prefix when `sweep --verify` marked it ("... verified against
 * Open MPI 4.1.4's defaults at T (...): geomean G exported/default"), also kept in
 * o->verified, else a note (stderr and the file): measured, not verified; run `colltune sweep
 * --verify CONFIG --lib ompi` and export the NAME.verified.json it writes. */
void ct_export_verified(struct ct_export_out *o, struct ct_text *t, const char *prefix,
                        const struct ct_librules *l, const struct ct_ruleset *s);
/* Keep a copy of line (a verified line of another export's) in o->verified. */
void ct_export_verified_add(struct ct_export_out *o, const char *line);
struct ct_settings;
/* A measured section's launch settings (l->env, sweep --lib --env) into set, and what
 * verify found of them into the header t (lines with prefix) as ct_export_verified does; the
 * export as a whole only where opts selects every set of the section (it was measured so). */
void ct_export_lib_env(struct ct_export_out *o, struct ct_text *t, const char *prefix,
                       const struct ct_librules *l, const struct ct_export_opts *opts,
                       struct ct_settings *set);
/* The same for rule u of a measured NCCL section as colltune's tuner plugin read it (NCCL
 * version as the section names it); the note, where there is one, in t too. Nothing for a
 * rule no tuner is asked about (alltoall). */
struct ct_nr_rule;
void ct_export_verified_nccl(struct ct_export_out *o, struct ct_text *t, const char *prefix,
                             const char *version, const struct ct_nr_rule *u);

struct ct_emitter {
    const char *name;    /* --format value */
    const char *summary; /* one line for --help and --list */
    enum ct_export_kind kind;
    int lib;        /* the library the format is for; CT_LIB_NONE: any (--for picks) */
    bool needs_lib; /* --for is required */
    int (*emit)(const struct ct_config *c, const struct ct_export_opts *o,
                struct ct_export_out *out, struct ct_err *err);
};

const struct ct_emitter *ct_emitter_find(const char *name);
const struct ct_emitter *ct_emitter_at(size_t i); /* NULL past the end */
/* The closest format name for a typo (one edit or a prefix), or NULL. */
const char *ct_emitter_suggest(const char *name);
/* The format --format names (format), or with --for alone (lib, format NULL) lib's own:
 * ompi-rules, mpich-json, ucc, impi; *e NULL when neither is given. CT_EINVAL for an unknown
 * name (with the closest one) or for a lib with several formats (NCCL: naming them). */
int ct_emitter_choose(const char *format, int lib, const struct ct_emitter **e, struct ct_err *err);

/*
 * Run e on c: checks the options (a --for the format needs, a known target version, rulesets
 * left after --nranks) and fills out (initialised here; ct_export_out_release). CT_EINVAL
 * for options the format cannot use; CT_EUNSUPP when nothing in c can be expressed.
 */
int ct_export_run(const struct ct_emitter *e, const struct ct_config *c,
                  const struct ct_export_opts *o, struct ct_export_out *out, struct ct_err *err);

/* The file names written for --out path: path itself, then sidecars, then the rules file an
 * env/slurm export points at (and its side file). */
struct ct_export_files {
    char *path[6];
    const struct ct_text *text[6];
    int mode[6];
    int n;
    const char *input; /* the config read (NULL: none): no output may be it */
    bool rules; /* a rules file is among them (after path's files) */
};
/* Which files an export writes to path (FILE, FILE.env, FILE.mca.conf, FILE<side_suffix>;
 * none when path is NULL) and the rules file out->rules_path with its side file. Strings are
 * new memory; ct_export_files_release. */
void ct_export_files(const struct ct_emitter *e, const struct ct_export_out *out, const char *path,
                     struct ct_export_files *f);
void ct_export_files_release(struct ct_export_files *f);
/* Check that every file of f can be created (folder exists, writable; not a folder itself, not
 * a device, FIFO or socket, not f->input; a link is followed to the file it names). */
int ct_export_files_check(const struct ct_export_files *f, struct ct_err *err);
/* Write all files of f: each to a temp file first, then all renamed; on any failure nothing
 * is left behind (temp files removed, existing files untouched or, when a rename fails
 * after others, put back from hard links kept until all are in place). */
int ct_export_files_write(const struct ct_export_files *f, struct ct_err *err);

/* ---- for emitters (export.c) ---- */

/* One rule of a ruleset, in a library's size unit, with its mapping. */
struct ct_xrange {
    uint64_t lo, hi; /* [lo, hi) in the library's unit; hi == CT_BYTES_INF */
    const struct ct_rule *rule;
    const struct ct_algomap_row *map;   /* NULL: no counterpart */
    const struct ct_algomap_row *later; /* with map NULL: the row of a later library version */
};

/* Exporting a measured NCCL section: --nccl-proto and --nccl-channels refused (its rules carry
 * what NCCL ran; they would be ignored). */
int ct_export_nccl_measured(const struct ct_export_opts *o, struct ct_err *err);
/* True if s is selected by o (--nranks). */
bool ct_export_selected(const struct ct_export_opts *o, const struct ct_ruleset *s);
/*
 * The sets of coll that o selects, fewest ranks first, into *list (new memory, free());
 * returns the count. A config has at most one set of a collective per rank count (its reader
 * refuses two), which is all Open MPI's and MPICH's files tell communicators apart by.
 */
int ct_export_by_ranks(const struct ct_ruleset *sets, int nsets, const struct ct_export_opts *o,
                       enum ct_coll coll, const struct ct_ruleset ***list);
/*
 * s's rules for lib: sizes converted (algomap size table), rows looked up for o->version.
 * Rules that vanish in the conversion are left out with a note. *xr is new memory (free()),
 * *n its length; 0 rules when the library has no size selection for s->coll.
 */
void ct_export_map(const struct ct_ruleset *s, int lib, const struct ct_export_opts *o,
                   struct ct_export_out *out, struct ct_xrange **xr, int *n);
/* "allreduce on 8 ranks (1 x 8)" */
const char *ct_export_set_str(const struct ct_ruleset *s, char *buf, size_t len);
/* "64 KiB..1 MiB" (library units, inclusive upper end "1048575 B" style avoided) */
const char *ct_export_range_str(uint64_t lo, uint64_t hi, char *buf, size_t len);
/* Note (and comment, with prefix, into t) every unmapped range of xr: "<set> <range>:
 * colltune '<algo>' has no <Lib> counterpart[ before <since>]; <consequence>". */
void ct_export_note_unmapped(struct ct_export_out *out, struct ct_text *t, const char *prefix,
                             const struct ct_ruleset *s, int lib, const struct ct_xrange *x,
                             const char *consequence);
/* "<prefix><set> <range>: colltune <algo> -> <target> (<match>: <note>)\n" into t. */
void ct_export_map_comment(struct ct_text *t, const char *prefix, const struct ct_ruleset *s,
                           const struct ct_xrange *x);
/* Header comment lines (each starting with prefix): what, from which config, where measured
 * (the shapes of the sets a file for lib writes: its measured section's, else colltune's own;
 * those o selects). */
void ct_export_header(struct ct_text *t, const char *prefix, const char *what,
                      const struct ct_config *c, int lib, const struct ct_export_opts *o);
/* The version to target for lib: o->version or the library default. */
const char *ct_export_version(const struct ct_export_opts *o, int lib);

/* Emitters (emit_<fmt>.c). */
int ct_emit_nccl_tuner(const struct ct_config *c, const struct ct_export_opts *o,
                       struct ct_export_out *out, struct ct_err *err);
int ct_emit_nccl_plugin(const struct ct_config *c, const struct ct_export_opts *o,
                        struct ct_export_out *out, struct ct_err *err);
int ct_emit_nccl_env(const struct ct_config *c, const struct ct_export_opts *o,
                     struct ct_export_out *out, struct ct_err *err);
int ct_emit_ompi_rules(const struct ct_config *c, const struct ct_export_opts *o,
                       struct ct_export_out *out, struct ct_err *err);
int ct_emit_mpich_json(const struct ct_config *c, const struct ct_export_opts *o,
                       struct ct_export_out *out, struct ct_err *err);
int ct_emit_ucc(const struct ct_config *c, const struct ct_export_opts *o,
                struct ct_export_out *out, struct ct_err *err);
int ct_emit_impi(const struct ct_config *c, const struct ct_export_opts *o,
                 struct ct_export_out *out, struct ct_err *err);
int ct_emit_env(const struct ct_config *c, const struct ct_export_opts *o,
                struct ct_export_out *out, struct ct_err *err);
int ct_emit_slurm(const struct ct_config *c, const struct ct_export_opts *o,
                  struct ct_export_out *out, struct ct_err *err);
int ct_emit_json(const struct ct_config *c, const struct ct_export_opts *o,
                 struct ct_export_out *out, struct ct_err *err);
int ct_emit_csv(const struct ct_config *c, const struct ct_export_opts *o,
                struct ct_export_out *out, struct ct_err *err);

/*
 * Settings of one library as NAME=value pairs, shared by the settings formats and env/slurm:
 * nccl (NCCL_ALGO, channel bounds, ...), ucc (UCC_TL_UCP_TUNE, radixes), impi
 * (I_MPI_ADJUST_*). Comments (already prefixed "# ") go to notes_text.
 */
struct ct_setting {
    char name[64];
    char *value;       /* new memory */
    char comment[200]; /* one line shown above it, or "" */
};
struct ct_settings {
    struct ct_setting *v;
    size_t n;
    struct ct_text comments; /* lines "# ...\n" to show before the settings */
};
void ct_settings_init(struct ct_settings *s);
void ct_settings_release(struct ct_settings *s);
void ct_settings_add(struct ct_settings *s, const char *name, const char *value,
                     const char *comment);
int ct_nccl_settings(const struct ct_config *c, const struct ct_export_opts *o,
                     struct ct_export_out *out, struct ct_settings *set, struct ct_err *err);
int ct_ucc_settings(const struct ct_config *c, const struct ct_export_opts *o,
                    struct ct_export_out *out, struct ct_settings *set, struct ct_err *err);
int ct_impi_settings(const struct ct_config *c, const struct ct_export_opts *o,
                     struct ct_export_out *out, struct ct_settings *set, struct ct_err *err);
/* Write set as "export NAME='value'" lines (shell-quoted) into t. */
void ct_settings_exports(const struct ct_settings *set, struct ct_text *t);

/* Every format, a line each ("  name  summary"). */
void ct_emitter_list(FILE *f);
/* The Content-Type of a format's body when it is pushed over HTTP. */
const char *ct_emitter_mime(const struct ct_emitter *e);
/* "<prefix>wrote A, B and C" when an export wrote sidecars beside its file. */
void ct_export_files_print(FILE *f, const char *prefix, const struct ct_export_files *files);
/* "<prefix>load it with:" and the lines that make a library load the file (not comments). */
void ct_export_loader_print(FILE *f, const char *prefix, const struct ct_export_out *out);

/* The variables an export's loader lines set ("export NAME='VALUE'" in out->env), in
 * order, into l (struct ct_loader, backend/libmod.h): 0, or -1 when they are more than
 * CT_LOADER_MAX. */
int ct_export_loader(const struct ct_export_out *out, struct ct_loader *l);

#endif
