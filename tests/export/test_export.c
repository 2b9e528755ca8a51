/* SPDX-License-Identifier: MIT */
/*
 * The exporter table and its shared machinery: option checks, the all-or-nothing file writer
 * (temp files, sidecars, refusal of unwritable paths), shell quoting, notes for unmapped
 * rules, and the golden files of every format (CT_REGEN_GOLDEN=1 rewrites them, see
 * scripts/regen-golden.sh). Run from the repository root (fixtures are read by path).
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <jansson.h>
#include <ftw.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "backend/libmod.h"
#include "lib/file.h"
#include "output/config.h"
#include "output/export.h"
#include "plugin/nccl_rules.h"
#include "plugin/nccl_tuner_abi.h"
#include "tune/stats.h"

#define CLUSTER "tests/fixtures/export/config-cluster.json"
#define FOUR "tests/fixtures/export/config-4ranks.json"
#define GOLDEN "tests/golden/export/"

static void load(const char *path, struct ct_config *c)
{
    struct ct_err err = {0};
    cr_assert_eq(ct_config_json_read(path, c, &err), 0, "%s (run from the repository root)",
                 err.msg);
}

static int run(const char *fmt, const struct ct_export_opts *o, const struct ct_config *c,
               struct ct_export_out *out, struct ct_err *err)
{
    const struct ct_emitter *e = ct_emitter_find(fmt);
    cr_assert_not_null(e, "%s", fmt);
    return ct_export_run(e, c, o, out, err);
}

Test(table, rows_are_complete_and_unique)
{
    size_t n = 0;
    for (; ct_emitter_at(n); n++) {
        const struct ct_emitter *e = ct_emitter_at(n);
        cr_assert(e->name && *e->name && e->summary && *e->summary && e->emit, "row %zu", n);
        cr_assert_eq(ct_emitter_find(e->name), e);
        for (size_t k = 0; k < n; k++)
            cr_assert_str_neq(ct_emitter_at(k)->name, e->name);
    }
    cr_assert_eq(n, 11,
                 "nccl-tuner nccl-env nccl-plugin ompi-rules mpich-json ucc impi env slurm json csv");
    cr_assert_null(ct_emitter_find("ompi_rules"));
    cr_assert_null(ct_emitter_find(NULL));
}

Test(table, suggestions_for_typos)
{
    cr_assert_str_eq(ct_emitter_suggest("ompi-rule"), "ompi-rules");
    cr_assert_str_eq(ct_emitter_suggest("nccl-tunr"), "nccl-tuner");
    cr_assert_str_eq(ct_emitter_suggest("jsn"), "json");
    cr_assert_str_eq(ct_emitter_suggest("mpich"), "mpich-json");
    cr_assert_null(ct_emitter_suggest("spreadsheet"));
    cr_assert_null(ct_emitter_suggest(""));
}

/* --format names the format; --for LIB alone picks LIB's own, where it has one. */
Test(table, format_or_for_lib_alone)
{
    static const char *const own[CT_LIB_COUNT] = {NULL, "ompi-rules", "mpich-json", "ucc", "impi"};
    const struct ct_emitter *e;
    struct ct_err err = {0};
    for (int lib = 0; lib < CT_LIB_COUNT; lib++) {
        int rc = ct_emitter_choose(NULL, lib, &e, &err);
        if (own[lib]) {
            cr_assert_eq(rc, 0, "%s", err.msg);
            cr_assert_str_eq(e->name, own[lib]);
        } else {
            cr_assert_eq(rc, CT_EINVAL);
            cr_assert_null(e);
            cr_assert(strstr(err.msg, "nccl-tuner|nccl-env|nccl-plugin"), "%s", err.msg);
        }
    }
    cr_assert_eq(ct_emitter_choose("env", CT_LIB_OMPI, &e, &err), 0, "--format wins");
    cr_assert_str_eq(e->name, "env");
    cr_assert_eq(ct_emitter_choose(NULL, CT_LIB_NONE, &e, &err), 0);
    cr_assert_null(e, "neither: none");
    cr_assert_eq(ct_emitter_choose("ompi-rule", CT_LIB_NONE, &e, &err), CT_EINVAL);
    cr_assert(strstr(err.msg, "did you mean 'ompi-rules'"), "%s", err.msg);
}

/* An env export that points at a rules file carries that file, to be written with it. */
Test(run, env_carries_its_rules_file)
{
    struct ct_config c;
    struct ct_export_opts o;
    struct ct_export_out out, rules;
    struct ct_export_files f;
    struct ct_err err = {0};
    load(CLUSTER, &c);
    ct_export_opts_init(&o);
    o.lib = CT_LIB_MPICH;
    o.rules_path = "/shared/mpich.json";
    cr_assert_eq(run("env", &o, &c, &out, &err), 0, "%s", err.msg);
    cr_assert_str_eq(out.rules_path, "/shared/mpich.json");
    ct_export_opts_init(&o);
    o.path = "/shared/mpich.json";
    cr_assert_eq(run("mpich-json", &o, &c, &rules, &err), 0, "%s", err.msg);
    cr_assert_str_eq(ct_text_str(&out.rules), ct_text_str(&rules.body));
    ct_export_files(ct_emitter_find("env"), &out, NULL, &f);
    cr_assert_eq(f.n, 1, "no --out: only the rules file");
    cr_assert_str_eq(f.path[0], "/shared/mpich.json");
    ct_export_files_release(&f);
    ct_export_files(ct_emitter_find("env"), &out, "/shared/mpich.json", &f);
    cr_assert_eq(ct_export_files_check(&f, &err), CT_EINVAL, "--out and the rules file collide");
    ct_export_files_release(&f);
    ct_export_out_release(&rules);
    ct_export_out_release(&out);
    ct_config_release(&c);
}

Test(run, option_errors)
{
    struct ct_config c;
    struct ct_export_opts o;
    struct ct_export_out out;
    struct ct_err err = {0};
    load(CLUSTER, &c);
    ct_export_opts_init(&o);
    cr_assert_eq(run("env", &o, &c, &out, &err), CT_EINVAL);
    cr_assert(strstr(err.msg, "--for"), "%s", err.msg);
    o.lib = CT_LIB_NCCL;
    cr_assert_eq(run("ompi-rules", &o, &c, &out, &err), CT_EINVAL, "--for with a library format");
    cr_assert_eq(run("json", &o, &c, &out, &err), CT_EINVAL);
    o.lib = CT_LIB_OMPI;
    cr_assert_eq(run("env", &o, &c, &out, &err), CT_EINVAL, "ompi env without a rules file");
    cr_assert(strstr(err.msg, "--rules-file"), "%s", err.msg);
    cr_assert_eq(out.body.len, 0, "nothing produced on failure");
    ct_export_opts_init(&o);
    o.nranks = 7;
    cr_assert_eq(run("csv", &o, &c, &out, &err), CT_EINVAL);
    cr_assert(strstr(err.msg, "8, 16"), "lists the sizes there are: %s", err.msg);
    ct_export_opts_init(&o);
    o.version = "4.x";
    cr_assert_eq(run("ompi-rules", &o, &c, &out, &err), CT_EINVAL);
    o.version = "2.26";
    cr_assert_eq(run("nccl-tuner", &o, &c, &out, &err), CT_EUNSUPP, "CSV plugin is 2.27.5+");
    ct_export_opts_init(&o);
    o.nccl_proto = "LL";
    cr_assert_eq(run("nccl-tuner", &o, &c, &out, &err), CT_EINVAL, "names are lowercase");
    ct_config_release(&c);

    /* a measured section's ids and names are its release's: another release is refused */
    load("tests/fixtures/export/config-ompi-2ranks.json", &c);
    ct_export_opts_init(&o);
    o.path = "/x/r.conf";
    o.version = "5.0";
    cr_assert_eq(run("ompi-rules", &o, &c, &out, &err), CT_EINVAL, "4.1.4's rules for 5.0");
    cr_assert(strstr(err.msg, "measured with Open MPI 4.1.4"), "%s", err.msg);
    cr_assert_eq(out.body.len, 0, "nothing produced");
    o.lib = CT_LIB_OMPI, o.rules_path = "/x/r.conf";
    cr_assert_eq(run("env", &o, &c, &out, &err), CT_EINVAL, "nor its env");
    o.lib = CT_LIB_NONE, o.rules_path = NULL;
    for (int i = 0; i < 2; i++) { /* the same series, major and minor at least */
        o.version = (const char *[]){"4.1", "4.1.6"}[i];
        cr_assert_eq(run("ompi-rules", &o, &c, &out, &err), 0, "%s: %s", o.version, err.msg);
        ct_export_out_release(&out);
    }
    o.version = "4"; /* 4.0 is of it too */
    cr_assert_eq(run("ompi-rules", &o, &c, &out, &err), CT_EINVAL, "a major alone");
    ct_config_release(&c);
}

Test(run, nranks_selects_rulesets)
{
    struct ct_config c;
    struct ct_export_opts o;
    struct ct_export_out out;
    struct ct_err err = {0};
    load(CLUSTER, &c);
    ct_export_opts_init(&o);
    o.nranks = 16;
    cr_assert_eq(run("csv", &o, &c, &out, &err), 0, "%s", err.msg);
    const char *s = ct_text_str(&out.body);
    cr_assert(strstr(s, "allreduce,16,") && !strstr(s, "allreduce,8,"), "%s", s);
    ct_export_out_release(&out);
    o.nranks = 0; /* a comm-size section of each rank count */
    cr_assert_eq(run("ompi-rules", &o, &c, &out, &err), 0, "%s", err.msg);
    s = ct_text_str(&out.body);
    cr_assert(strstr(s, "\n8            # communicators of 8 ranks: colltune's rules of "
                        "allreduce on 8 ranks (2 x 4)\n") &&
                  strstr(s, "\n9            # communicators of 9 to 15 ranks\n") &&
                  strstr(s, "\n16           # communicators of 16 ranks: colltune's rules of "
                            "allreduce on 16 ranks (4 x 4)\n") &&
                  strstr(s, "\n17           # communicators of more ranks\n"),
              "%s", s);
    ct_export_out_release(&out);
    ct_config_release(&c);
}

/* Sets of 2, 8, 9 and 16 ranks: a section each, fewest first, Open MPI's fixed decision from 0
 * and in each gap (3 to 7, 10 to 15), none between 8 and 9, and above 16. */
Test(run, ompi_rules_has_a_section_per_rank_count)
{
    json_error_t je;
    json_t *j = json_load_file(CLUSTER, 0, &je), *rules = json_object_get(j, "rules");
    cr_assert_not_null(rules, "%s", je.text);
    for (int n = 9; n >= 2; n -= 7) { /* copies of allreduce on 8 ranks, before it and after */
        json_t *t = json_deep_copy(json_array_get(rules, 0));
        json_object_set_new(t, "nranks", json_integer(n));
        json_object_set_new(t, "nnodes", json_integer(n));
        json_object_set_new(t, "ranks_per_node", json_integer(1));
        json_array_append_new(rules, t);
    }
    char *txt = json_dumps(j, 0);
    json_decref(j);
    struct ct_config c;
    struct ct_export_opts o;
    struct ct_export_out out;
    struct ct_err err = {0};
    cr_assert_eq(ct_config_json_parse(txt, &c, &err), 0, "%s", err.msg);
    free(txt);
    ct_export_opts_init(&o);
    cr_assert_eq(run("ompi-rules", &o, &c, &out, &err), 0, "%s", err.msg);
    const char *b = ct_text_str(&out.body), *p = strstr(b, "# allreduce: colltune's rules\n");
    static const char *const want[] = {
        "8            # comm-size sections: the rules only where measured\n",
        "0            # communicators of fewer ranks\n",
        "2            # communicators of 2 ranks: colltune's rules of allreduce on 2 ranks (2 x "
        "1)\n",
        "3            # communicators of 3 to 7 ranks\n",
        "8            # communicators of 8 ranks: colltune's rules of allreduce on 8 ranks (2 x "
        "4)\n",
        "9            # communicators of 9 ranks: colltune's rules of allreduce on 9 ranks (9 x "
        "1)\n",
        "10           # communicators of 10 to 15 ranks\n",
        "16           # communicators of 16 ranks: colltune's rules of allreduce on 16 ranks (4 x "
        "4)\n",
        "17           # communicators of more ranks\n",
        "0            # allgather: colltune's rules\n"};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        cr_assert_not_null(p, "%s", b);
        p = strstr(p, want[i]);
        cr_assert_not_null(p, "in order: %s\n%s", want[i], b);
    }
    ct_export_out_release(&out);
    ct_config_release(&c);
}

Test(run, unmapped_rules_are_said_not_dropped)
{
    struct ct_config c;
    struct ct_export_opts o;
    struct ct_export_out out;
    struct ct_err err = {0};
    load(CLUSTER, &c);
    ct_export_opts_init(&o);
    o.nranks = 8;
    /* 'mesh' allreduce [1 MiB, inf) has no counterpart in NCCL, Open MPI 4.1, UCC, Intel MPI */
    static const char *const fmts[] = {"nccl-tuner", "ompi-rules", "ucc", "impi", "mpich-json"};
    for (size_t i = 0; i < sizeof fmts / sizeof fmts[0]; i++) {
        cr_assert_eq(run(fmts[i], &o, &c, &out, &err), 0, "%s: %s", fmts[i], err.msg);
        bool note = false;
        for (size_t k = 0; k < out.nnotes; k++)
            note |= strstr(out.notes[k], "[1 MiB, inf): colltune 'mesh' has no") != NULL;
        cr_assert(note, "%s: a note for the unmapped range", fmts[i]);
        const char *where =
            !strcmp(fmts[i], "mpich-json") ? ct_text_str(&out.env) : ct_text_str(&out.body);
        cr_assert(strstr(where, "'mesh' has no"), "%s: a comment in the output", fmts[i]);
        ct_export_out_release(&out);
    }
    ct_config_release(&c);
}

/* ---- files ------------------------------------------------------------------------------ */

static char *tmpdir(void)
{
    char *d = strdup("/tmp/ct-export-XXXXXX");
    cr_assert_not_null(mkdtemp(d));
    return d;
}

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
    return remove(p);
}

/* rm -rf d, and free it */
static void rmtree(char *d)
{
    nftw(d, rm_one, 8, FTW_DEPTH | FTW_PHYS);
    free(d);
}

static int count_entries(const char *dir)
{
    DIR *d = opendir(dir);
    int n = 0;
    for (struct dirent *e; (e = readdir(d));)
        n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

/* FOUR exported as ompi-rules to path: the rules file and its two sidecars. */
static void ompi_rules_at(const char *path, struct ct_config *c, struct ct_export_out *out,
                          struct ct_export_files *f)
{
    struct ct_export_opts o;
    struct ct_err err = {0};
    load(FOUR, c);
    ct_export_opts_init(&o);
    o.path = path;
    cr_assert_eq(run("ompi-rules", &o, c, out, &err), 0, "%s", err.msg);
    ct_export_files(ct_emitter_find("ompi-rules"), out, path, f);
    cr_assert_eq(f->n, 3);
}

static void files_release(struct ct_export_files *f, struct ct_export_out *out, struct ct_config *c,
                          char *d)
{
    ct_export_files_release(f);
    ct_export_out_release(out);
    ct_config_release(c);
    rmtree(d);
}

Test(files, loaded_format_writes_file_and_sidecars_atomically)
{
    struct ct_config c;
    struct ct_export_out out;
    struct ct_export_files f;
    struct ct_err err = {0};
    char *d = tmpdir(), path[256];
    snprintf(path, sizeof path, "%s/rules.conf", d);
    ompi_rules_at(path, &c, &out, &f);
    cr_assert_eq(ct_export_files_check(&f, &err), 0, "%s", err.msg);
    cr_assert_eq(ct_export_files_write(&f, &err), 0, "%s", err.msg);
    cr_assert_eq(count_entries(d), 3, "rules.conf, .env, .mca.conf and no temp file");
    char *txt;
    size_t len;
    cr_assert_eq(ct_file_read(f.path[2], &txt, &len, &err), 0);
    cr_assert(strstr(txt, "coll_tuned_dynamic_rules_filename = "), "%s", txt);
    cr_assert(strstr(txt, path), "the sidecar names the rules file by its path");
    free(txt);
    files_release(&f, &out, &c, d);
}

Test(files, a_failing_sidecar_leaves_nothing_behind)
{
    struct ct_config c;
    struct ct_export_out out;
    struct ct_export_files f;
    struct ct_err err = {0};
    char *d = tmpdir(), path[256], blocker[300];
    snprintf(path, sizeof path, "%s/rules.conf", d);
    snprintf(blocker, sizeof blocker, "%s.mca.conf", path);
    cr_assert_eq(mkdir(blocker, 0755), 0); /* the last sidecar cannot be renamed over a folder */
    ompi_rules_at(path, &c, &out, &f);
    cr_assert_eq(ct_export_files_check(&f, &err), CT_EINVAL, "a folder in the way is refused");
    cr_assert(strstr(err.msg, "folder"), "%s", err.msg);
    cr_assert_neq(ct_export_files_write(&f, &err), 0);
    cr_assert_eq(count_entries(d), 1, "only the blocking folder: no rules.conf, no temp files");
    files_release(&f, &out, &c, d);
}

Test(files, a_failing_main_file_puts_the_sidecars_back)
{
    struct ct_config c;
    struct ct_export_out out;
    struct ct_export_files f;
    struct ct_err err = {0};
    char *d = tmpdir(), path[256], env[300], *txt;
    size_t len;
    snprintf(path, sizeof path, "%s/rules.conf", d);
    snprintf(env, sizeof env, "%s.env", path);
    cr_assert_eq(mkdir(path, 0755), 0); /* the main file, renamed last, cannot be written */
    cr_assert_eq(ct_file_write_atomic(env, "old\n", 4, &err), 0, "%s", err.msg);
    ompi_rules_at(path, &c, &out, &f);
    /* no check first: a rename that fails after the sidecars' (a race with another writer) */
    cr_assert_eq(ct_export_files_write(&f, &err), CT_EIO);
    cr_assert(strstr(err.msg, "rules.conf"), "%s", err.msg);
    cr_assert_eq(ct_file_read(env, &txt, &len, &err), 0, "%s", err.msg);
    cr_assert_str_eq(txt, "old\n", "the old sidecar is back");
    free(txt);
    cr_assert_eq(count_entries(d), 2, "the folder and the old .env: no .mca.conf, temp or link");
    files_release(&f, &out, &c, d);
}

Test(files, missing_folder_is_refused)
{
    struct ct_export_out out;
    struct ct_export_files f;
    struct ct_err err = {0};
    ct_export_out_init(&out);
    ct_text_put(&out.body, "x\n");
    ct_export_files(ct_emitter_find("csv"), &out, "/nonexistent-colltune/dir/x.csv", &f);
    cr_assert_eq(f.n, 1);
    cr_assert_eq(ct_export_files_check(&f, &err), CT_EINVAL);
    cr_assert(strstr(err.msg, "/nonexistent-colltune/dir/x.csv"), "%s", err.msg);
    ct_export_files_release(&f);
    ct_export_out_release(&out);
}

Test(files, script_is_executable)
{
    struct ct_config c;
    struct ct_export_opts o;
    struct ct_export_out out;
    struct ct_export_files f;
    struct ct_err err = {0};
    struct stat st;
    char *d = tmpdir(), path[256];
    snprintf(path, sizeof path, "%s/prolog.sh", d);
    load(FOUR, &c);
    ct_export_opts_init(&o);
    o.lib = CT_LIB_IMPI;
    cr_assert_eq(run("slurm", &o, &c, &out, &err), 0, "%s", err.msg);
    ct_export_files(ct_emitter_find("slurm"), &out, path, &f);
    cr_assert_eq(ct_export_files_write(&f, &err), 0, "%s", err.msg);
    cr_assert_eq(stat(path, &st), 0);
    cr_assert(st.st_mode & S_IXUSR, "mode %o", st.st_mode);
    ct_export_files_release(&f);
    ct_export_out_release(&out);
    ct_config_release(&c);
    rmtree(d);
}

/* ---- quoting ---------------------------------------------------------------------------- */

Test(settings, export_lines_survive_the_shell)
{
    struct ct_settings s;
    struct ct_text t;
    ct_settings_init(&s);
    ct_text_init(&t);
    ct_settings_add(&s, "CT_A", "allreduce:Tree,Ring;allgather:Ring", "a comment");
    ct_settings_add(&s, "CT_B", "it's $HOME `x` \"q\"", NULL);
    ct_settings_exports(&s, &t);
    char *d = tmpdir(), path[256], cmd[512];
    struct ct_err err = {0};
    snprintf(path, sizeof path, "%s/e.sh", d);
    cr_assert_eq(ct_file_write_atomic(path, t.s, t.len, &err), 0);
    snprintf(cmd, sizeof cmd, ". %s && printf '%%s|%%s' \"$CT_A\" \"$CT_B\"", path);
    FILE *p = popen(cmd, "r");
    char buf[256] = "";
    cr_assert_not_null(fgets(buf, sizeof buf, p));
    pclose(p);
    cr_assert_str_eq(buf, "allreduce:Tree,Ring;allgather:Ring|it's $HOME `x` \"q\"");
    rmtree(d);
    ct_text_release(&t);
    ct_settings_release(&s);
}

/* The slurm prolog with the rules embedded prints a launch setting's value verbatim (the
 * shell expands only the file's path), and a rules file and its path are there after it ran. */
Test(settings, the_prolog_prints_values_verbatim)
{
    struct ct_config c;
    struct ct_export_opts o;
    struct ct_export_out out;
    struct ct_err err = {0};
    static const char odd[] = "it's $HOME `x` \"q\" \\";
    load("tests/fixtures/export/config-ompi-2ranks.json", &c);
    struct ct_librules *l = &c.libs[0];
    snprintf(l->env[l->nenv].name, sizeof l->env[0].name, "CT_ODD");
    snprintf(l->env[l->nenv].value, sizeof l->env[0].value, "%s", odd);
    l->nenv++;
    ct_export_opts_init(&o);
    o.lib = CT_LIB_OMPI;
    cr_assert_eq(run("slurm", &o, &c, &out, &err), 0, "%s", err.msg);
    char *d = tmpdir(), path[256], cmd[600], buf[512], want[300], rules[300] = "";
    snprintf(path, sizeof path, "%s/prolog", d);
    cr_assert_eq(ct_file_write_atomic(path, out.body.s, out.body.len, &err), 0);
    snprintf(cmd, sizeof cmd, "TMPDIR=%s sh %s", d, path);
    FILE *p = popen(cmd, "r");
    bool said = false;
    snprintf(want, sizeof want, "export CT_ODD=%s\n", odd);
    while (fgets(buf, sizeof buf, p)) {
        said |= !strcmp(buf, want);
        if (!strncmp(buf, "export OMPI_MCA_coll_tuned_dynamic_rules_filename=", 50))
            snprintf(rules, sizeof rules, "%.*s", (int)strcspn(buf + 50, "\n"), buf + 50);
    }
    cr_assert_eq(pclose(p), 0);
    cr_assert(said, "the value verbatim: %s", out.body.s);
    cr_assert(!strncmp(rules, d, strlen(d)) && access(rules, R_OK) == 0,
              "the rules file in TMPDIR, its path expanded: '%s'", rules);
    rmtree(d);
    ct_export_out_release(&out);
    ct_config_release(&c);
}

/* What sh makes of an export line is what verify's loader reads back from it (a backslash
 * inside single quotes is a backslash; '\'' is a quote). */
Test(settings, the_loader_reads_export_lines_as_the_shell_does)
{
    static const char *vals[] = {"plain", "it's", "a\\b", "a\\'b", "'\\''", ""};
    struct ct_settings s;
    struct ct_export_out out;
    struct ct_loader *l = malloc(sizeof *l);
    ct_settings_init(&s);
    ct_export_out_init(&out);
    for (int i = 0; i < 6; i++) {
        char name[16];
        snprintf(name, sizeof name, "CT_V%d", i);
        ct_settings_add(&s, name, vals[i], NULL);
    }
    ct_settings_exports(&s, &out.env);
    ct_export_loader(&out, l);
    cr_assert_eq(l->n, 6);
    for (int i = 0; i < 6; i++)
        cr_expect_str_eq(l->value[i], vals[i], "%s: %s", l->name[i], out.env.s);
    free(l);
    ct_export_out_release(&out);
    ct_settings_release(&s);
}

/* ---- golden files ------------------------------------------------------------------------ */

struct golden_case {
    const char *name; /* file stem under tests/golden/export/ */
    const char *fmt;
    int lib;
    const char *version;
    bool rules_file;
};

static const struct golden_case cases[] = {
    {"nccl-tuner", "nccl-tuner", CT_LIB_NONE, NULL, false},
    {"nccl-env", "nccl-env", CT_LIB_NONE, NULL, false},
    {"nccl-plugin", "nccl-plugin", CT_LIB_NONE, NULL, false}, /* no NCCL section: mapped */
    {"ompi-rules", "ompi-rules", CT_LIB_NONE, NULL, false},
    {"ompi-rules-6.0", "ompi-rules", CT_LIB_NONE, "6.0", false},
    {"mpich-json", "mpich-json", CT_LIB_NONE, NULL, false},
    {"mpich-json-4.1", "mpich-json", CT_LIB_NONE, "4.1", false},
    {"ucc", "ucc", CT_LIB_NONE, NULL, false},
    {"ucc-1.8", "ucc", CT_LIB_NONE, "1.8", false},
    {"impi", "impi", CT_LIB_NONE, NULL, false},
    {"env-nccl", "env", CT_LIB_NCCL, NULL, false},
    {"env-nccl-tuner", "env", CT_LIB_NCCL, NULL, true},
    {"env-ompi", "env", CT_LIB_OMPI, NULL, true},
    {"env-mpich", "env", CT_LIB_MPICH, NULL, true},
    {"env-ucc", "env", CT_LIB_UCC, NULL, false},
    {"env-impi", "env", CT_LIB_IMPI, NULL, false},
    {"slurm-ompi", "slurm", CT_LIB_OMPI, NULL, false},
    {"slurm-nccl", "slurm", CT_LIB_NCCL, NULL, false},
    {"json", "json", CT_LIB_NONE, NULL, false},
    {"csv", "csv", CT_LIB_NONE, NULL, false},
};

static void notes_text(const struct ct_export_out *out, struct ct_text *t)
{
    for (size_t i = 0; i < out->nnotes; i++)
        ct_text_printf(t, "%s\n", out->notes[i]);
}

/* Compare (or, with CT_REGEN_GOLDEN=1, write) one golden file; empty texts have none. */
static void golden(const char *stem, const char *suffix, const struct ct_text *t)
{
    char path[256];
    struct ct_err err = {0};
    snprintf(path, sizeof path, GOLDEN "%s%s", stem, suffix);
    if (getenv("CT_REGEN_GOLDEN")) {
        if (t->len)
            cr_assert_eq(ct_file_write_atomic(path, t->s, t->len, &err), 0, "%s", err.msg);
        else
            unlink(path);
        return;
    }
    char *want = NULL;
    size_t len = 0;
    if (!t->len) {
        cr_assert_neq(access(path, F_OK), 0, "%s exists but the export has no such part", path);
        return;
    }
    cr_assert_eq(ct_file_read(path, &want, &len, &err), 0,
                 "%s (scripts/regen-golden.sh "
                 "writes it; run from the repository root)",
                 err.msg);
    if (strcmp(want, t->s)) {
        size_t i = 0;
        while (want[i] && want[i] == t->s[i])
            i++;
        size_t line = 1;
        for (size_t k = 0; k < i; k++)
            line += want[k] == '\n';
        cr_assert_fail("%s differs from the export at line %zu (review, then "
                       "scripts/regen-golden.sh)",
                       path, line);
    }
    free(want);
}

Test(golden, every_format)
{
    struct ct_config c;
    load(CLUSTER, &c);
    bool seen[16] = {false};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const struct golden_case *g = &cases[i];
        struct ct_export_opts o;
        struct ct_export_out out;
        struct ct_text notes;
        struct ct_err err = {0};
        char path[128];
        ct_export_opts_init(&o);
        snprintf(path, sizeof path, "/etc/colltune/%s", g->name);
        o.path = path;
        o.config_path = CLUSTER;
        o.lib = g->lib;
        o.version = g->version;
        if (g->rules_file)
            o.rules_path = g->lib == CT_LIB_NCCL   ? "/shared/colltune/nccl_tuner.conf"
                           : g->lib == CT_LIB_OMPI ? "/shared/colltune/ompi-rules.conf"
                                                   : "/shared/colltune/mpich.json";
        cr_assert_eq(run(g->fmt, &o, &c, &out, &err), 0, "%s: %s", g->name, err.msg);
        ct_text_init(&notes);
        notes_text(&out, &notes);
        golden(g->name, "", &out.body);
        golden(g->name, ".env", &out.env);
        golden(g->name, ".mca.conf", &out.mca);
        golden(g->name, ".notes", &notes);
        ct_text_release(&notes);
        ct_export_out_release(&out);
        for (size_t k = 0; ct_emitter_at(k); k++)
            seen[k] |= !strcmp(ct_emitter_at(k)->name, g->fmt);
    }
    for (size_t k = 0; ct_emitter_at(k); k++)
        cr_assert(seen[k], "format %s has no golden file", ct_emitter_at(k)->name);
    ct_config_release(&c);
}

Test(golden, json_is_the_identity)
{
    struct ct_config c, back;
    struct ct_export_opts o;
    struct ct_export_out out;
    struct ct_err err = {0};
    load(CLUSTER, &c);
    ct_export_opts_init(&o);
    cr_assert_eq(run("json", &o, &c, &out, &err), 0);
    cr_assert_eq(ct_config_json_parse(out.body.s, &back, &err), 0, "%s", err.msg);
    char *a = ct_config_json_dumps(&c), *b = ct_config_json_dumps(&back);
    cr_assert_str_eq(a, b);
    free(a);
    free(b);
    ct_config_release(&back);
    ct_export_out_release(&out);
    ct_config_release(&c);
}

/* AllGather and AllToAll rules say "none" for their op (they reduce nothing: configs said
 * "sum"); the older "sum" still reads, "none" for a reduction is refused. */
Test(config, a_collective_without_a_reduction_says_none)
{
    struct ct_config c, back;
    struct ct_err err = {0};
    load(CLUSTER, &c);
    char *txt = ct_config_json_dumps(&c);
    cr_assert(strstr(txt, "\"coll\": \"allgather\"") && strstr(txt, "\"op\": \"none\""), "%s", txt);
    cr_assert_eq(ct_config_json_parse(txt, &back, &err), 0, "%s", err.msg);
    ct_config_release(&back);
    char *sum = strstr(txt, "\"op\": \"none\"");
    memcpy(sum, "\"op\": \"sum\" ", 12); /* as before: read alike */
    cr_assert_eq(ct_config_json_parse(txt, &back, &err), 0, "%s", err.msg);
    ct_config_release(&back);
    free(txt);
    txt = ct_config_json_dumps(&c);
    char *red = strstr(strstr(txt, "\"coll\": \"allreduce\""), "\"op\": \"sum\""),
         *doc = ct_xmalloc(strlen(txt) + 2);
    sprintf(doc, "%.*s\"op\": \"none\"%s", (int)(red - txt), txt, red + 11); /* allreduce's */
    free(txt);
    txt = doc;
    cr_assert_lt(ct_config_json_parse(txt, &back, &err), 0, "allreduce of op none taken");
    cr_expect(strstr(err.msg, "a reduction's op cannot be 'none'"), "%s", err.msg);
    free(txt);
    ct_config_release(&c);
}

/* A measured library section (colltune-config/1 "libraries") is read strictly and written
 * back the same; configs without one still parse (no section). */
Test(config, library_sections_round_trip)
{
    struct ct_config c, back, old;
    struct ct_err err = {0};
    load("tests/fixtures/export/config-ompi-2ranks.json", &c);
    cr_assert_eq(c.nsets, 0, "a library sweep alone has no native rules");
    const struct ct_librules *l = ct_config_lib(&c, "ompi");
    cr_assert(l && !strcmp(l->name, "Open MPI") && !strcmp(l->version, "4.1.4"));
    cr_assert_null(ct_config_lib(&c, "mpich"));
    cr_assert_eq(l->nsets, 2);
    const struct ct_ruleset *s = &l->sets[0];
    cr_assert_eq(s->nrules, 3);
    cr_assert_str_eq(s->rules[1].algo, "ring");
    cr_assert_eq(s->rules[1].id, 4);
    cr_assert_eq(s->rules[2].params.v[CT_P_CHUNK], 65536);
    cr_assert_eq(s->rules[2].max_bytes, CT_BYTES_INF);
    char *txt = ct_config_json_dumps(&c);
    cr_assert_eq(ct_config_json_parse(txt, &back, &err), 0, "%s", err.msg);
    char *txt2 = ct_config_json_dumps(&back);
    cr_assert_str_eq(txt, txt2, "written back the same");
    free(txt);
    free(txt2);
    load(CLUSTER, &old);
    cr_assert_eq(old.nlibs, 0);
    ct_config_release(&old);
    ct_config_release(&back);
    ct_config_release(&c);
}

Test(config, library_sections_strict)
{
    static const char *bad[] = {
        "\"libraries\": []", "\"libraries\": [{\"library\": \"ompi\"}]",
        "\"libraries\": [{\"library\": \"ompi\", \"name\": \"Open MPI\", \"version\": \"4.1.4\", "
        "\"rules\": []}]",
        /* no library colltune measures (show printed "(measured, --lib foo)") */
        "\"libraries\": [{\"library\": \"foo\", \"name\": \"Foo\", \"version\": \"1.0\"}]"};
    char *base;
    size_t len;
    struct ct_err err = {0};
    cr_assert_eq(ct_file_read(CLUSTER, &base, &len, &err), 0);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct ct_config c;
        char *doc = ct_xmalloc(len + strlen(bad[i]) + 4);
        char *brace = strchr(base, '{');
        sprintf(doc, "{%s, %s", bad[i], brace + 1);
        cr_assert_lt(ct_config_json_parse(doc, &c, &err), 0, "accepted %s", bad[i]);
        cr_assert(strstr(err.msg, "libraries"), "%s", err.msg);
        free(doc);
    }
    free(base);
}

/* A collective whose rules keep Open MPI's own decision at every size is left out of the file
 * (coll/tuned keeps its fixed decision for it, no lookup per call); the others load as before. */
Test(config, a_collective_at_the_default_everywhere_is_left_out)
{
    struct ct_config c;
    struct ct_err err = {0};
    load("tests/fixtures/export/config-ompi-2ranks.json", &c);
    struct ct_export_opts o;
    struct ct_export_out out;
    ct_export_opts_init(&o);
    cr_assert_eq(run("ompi-rules", &o, &c, &out, &err), 0, "%s", err.msg);
    cr_assert(strstr(out.body.s, "# alltoall on 2 ranks (1 x 2): Open MPI's own decision at every "
                                 "size: not in the file"),
              "%s", out.body.s);
    cr_assert(strstr(out.body.s, "\n1            # collectives\n2            # allreduce"), "%s",
              out.body.s);
    cr_assert(!strstr(out.body.s, "# alltoall: measured rules"), "%s", out.body.s);
    cr_assert(strstr(out.env.s, "export OMPI_MCA_coll_tuned_use_dynamic_rules='1'"), "%s",
              out.env.s);
    ct_export_out_release(&out);
    ct_config_release(&c);
}

/* A row verify set back beside Open MPI's own decision: one alg 0 rule in the file, not two. */
Test(config, own_decision_neighbours_are_one_rule)
{
    struct ct_config c;
    struct ct_err err = {0};
    load("tests/fixtures/export/config-ompi-2ranks.json", &c);
    cr_assert(ct_config_lib_demote(&c, "ompi", 0, 1, CT_SET_BACK_SLOW),
              "ring [4 KiB, 1 MiB) set back");
    struct ct_export_opts o;
    struct ct_export_out out;
    ct_export_opts_init(&o);
    cr_assert_eq(run("ompi-rules", &o, &c, &out, &err), 0, "%s", err.msg);
    cr_assert(strstr(out.body.s, "2            # message-size rules; size = count*dtsize\n"
                                 "0 0 0 0                      # [0 B, 1 MiB): Open MPI's own "
                                 "decision, no row measured faster; kept\n"
                                 "1048576 5 0 "),
              "%s", out.body.s);
    ct_export_out_release(&out);
    ct_config_release(&c);
}

/* A range verify set back says so, and why: in config.json ("set_back"), in show and in the
 * rules file's comment, where before it read as a measured choice ("default 1.00x vs
 * segmented_ring, confidence 1.00"); a value other than verify's two is refused, as is one on
 * a range that is not the library's own. */
Test(config, a_range_set_back_says_why_in_the_config_show_and_the_file)
{
    struct ct_config c, back;
    struct ct_err err = {0};
    load("tests/fixtures/export/config-ompi-2ranks.json", &c);
    cr_assert(ct_config_lib_demote(&c, "ompi", 0, 2, CT_SET_BACK_NOGAIN), "segmented_ring");
    cr_assert(ct_config_lib_demote(&c, "ompi", 0, 1, CT_SET_BACK_SLOW), "ring");
    char *txt = ct_config_json_dumps(&c);
    cr_assert(strstr(txt, "\"set_back\": \"no gain\"") && strstr(txt, "\"set_back\": \"slower\""),
              "%s", txt);
    cr_assert_eq(ct_config_json_parse(txt, &back, &err), 0, "%s", err.msg);
    cr_assert_str_eq(back.libs[0].sets[0].rules[2].set_back, CT_SET_BACK_NOGAIN);
    cr_assert_str_eq(back.libs[0].sets[0].rules[0].set_back, "", "the sweep's own default");
    char *shown = NULL;
    size_t slen = 0;
    FILE *sf = open_memstream(&shown, &slen);
    ct_config_print(sf, &back);
    fclose(sf);
    cr_assert(strstr(shown, "segmented_ring set back by verify (no gain shown)\n") &&
                  strstr(shown, "ring set back by verify (slower than the defaults)\n"),
              "%s", shown);
    free(shown);
    ct_config_release(&back);
    struct ct_export_opts o;
    struct ct_export_out out;
    ct_export_opts_init(&o);
    c.libs[0].sets[0].rules[1] = c.libs[0].sets[0].rules[2]; /* the set back one apart */
    c.libs[0].sets[0].rules[1].min_bytes = 4096;
    c.libs[0].sets[0].rules[0].id = 4, c.libs[0].sets[0].rules[0].max_bytes = 4096;
    snprintf(c.libs[0].sets[0].rules[0].algo, sizeof c.libs[0].sets[0].rules[0].algo, "ring");
    c.libs[0].sets[0].nrules = 2;
    cr_assert_eq(run("ompi-rules", &o, &c, &out, &err), 0, "%s", err.msg);
    cr_assert(strstr(out.body.s, "# [4 KiB, inf): Open MPI's own decision; segmented_ring set back "
                                 "by verify (no gain shown)\n"),
              "%s", out.body.s);
    ct_export_out_release(&out);
    char *at = strstr(txt, "\"set_back\": \"no gain\"");
    memcpy(at, "\"set_back\": \"nogain\" ", 21);
    cr_assert_neq(ct_config_json_parse(txt, &back, &err), 0);
    cr_assert(strstr(err.msg, "set_back") && strstr(err.msg, "'nogain'"), "%s", err.msg);
    free(txt);
    ct_config_release(&c);
}

/* sweep --verify --lib's record on a library set goes through config.json (absent: never
 * verified; a malformed one is refused naming it); demoting a range clears it (a changed file
 * is not the one verified); the export says, per set, verified (a header line) or not (a
 * note, which the command prints on stderr and the file carries); a set that keeps the
 * library's own choice at every size (the fixture's alltoall) has nothing to verify: a header
 * line, no note. */
Test(config, verified_record)
{
    struct ct_config c, back;
    struct ct_err err = {0};
    load("tests/fixtures/export/config-ompi-2ranks.json", &c);
    cr_assert_eq(c.libs[0].sets[0].verified.at[0], 0, "a config without the record: never");
    struct ct_export_opts o;
    struct ct_export_out out;
    ct_export_opts_init(&o);
    cr_assert_eq(run("ompi-rules", &o, &c, &out, &err), 0, "%s", err.msg);
    cr_assert_eq(out.nnotes, 1, "one note per set not verified, none for the set at its own");
    cr_assert(strstr(out.body.s, "# alltoall on 2 ranks (1 x 2): keeps Open MPI's own choice at "
                                 "every size (measured best, or set back by sweep --verify): "
                                 "nothing of it to verify\n"),
              "%s", out.body.s);
    cr_assert(strstr(out.notes[0], "allreduce on 2 ranks (1 x 2): measured, not verified against "
                                   "Open MPI's defaults; run `colltune sweep --verify CONFIG "
                                   "--lib ompi`"),
              "%s", out.notes[0]);
    cr_assert(strstr(out.body.s, out.notes[0]), "the file carries the note");
    ct_export_out_release(&out);
    cr_assert(ct_config_lib_verified(&c, "ompi", 0, 0.8125, 0));
    cr_assert(!ct_config_lib_verified(&c, "ompi", 2, 1, 0), "no set 2");
    cr_assert(!ct_config_lib_verified(&c, "mpich", 0, 1, 0), "no MPICH section");
    const char *at = c.libs[0].sets[0].verified.at;
    cr_assert(strlen(at) == 20 && at[10] == 'T' && at[19] == 'Z', "%s", at);
    char *txt = ct_config_json_dumps(&c);
    cr_assert(strstr(txt, "\"verified\""), "%s", txt);
    cr_assert_eq(ct_config_json_parse(txt, &back, &err), 0, "%s", err.msg);
    cr_assert_str_eq(back.libs[0].sets[0].verified.at, at);
    cr_assert_float_eq(back.libs[0].sets[0].verified.geomean, 0.8125, 1e-9);
    cr_assert_eq(back.libs[0].sets[1].verified.at[0], 0, "the other set: not verified");
    char *txt2 = ct_config_json_dumps(&back);
    cr_assert_str_eq(txt, txt2, "written back the same");
    ct_config_release(&back);
    cr_assert_eq(run("ompi-rules", &o, &c, &out, &err), 0, "%s", err.msg);
    cr_assert_eq(out.nnotes, 0, "the alltoall set keeps Open MPI's own: nothing to verify");
    char line[200];
    snprintf(line, sizeof line,
             "# allreduce on 2 ranks (1 x 2): verified against Open MPI 4.1.4's defaults at %s "
             "(colltune sweep --verify: no size slower beyond its interval): geomean 0.812 "
             "exported/default\n",
             at);
    cr_assert(strstr(out.body.s, line), "%s", out.body.s);
    ct_export_out_release(&out);
    /* what that verify could tell, recorded beside the geomean, read back and said */
    struct ct_config tc;
    char *tt = ct_config_json_dumps(&c);
    cr_assert_eq(ct_config_json_parse(tt, &tc, &err), 0, "%s", err.msg);
    free(tt);
    cr_assert(ct_config_lib_verified(&tc, "ompi", 0, 0.8125, 1.14));
    tt = ct_config_json_dumps(&tc);
    cr_assert(strstr(tt, "\"tell\": 1.14"), "%s", tt);
    cr_assert_eq(ct_config_json_parse(tt, &back, &err), 0, "%s", err.msg);
    cr_assert_float_eq(back.libs[0].sets[0].verified.tell, 1.14, 1e-9);
    cr_assert_float_eq(back.libs[0].sets[0].verified.geomean, 0.8125, 1e-9);
    ct_config_release(&back);
    cr_assert_eq(run("ompi-rules", &o, &tc, &out, &err), 0, "%s", err.msg);
    cr_assert(strstr(out.body.s, "geomean 0.812 exported/default; what it could tell: a loss of "
                                 "1.14x at a size would have shown about half the time (the "
                                 "median size)\n"),
              "%s", out.body.s);
    ct_export_out_release(&out);
    char *low = strstr(tt, "\"tell\": 1.14");
    memcpy(low, "\"tell\": 0.50", 12); /* below 1: no loss to tell */
    cr_assert_neq(ct_config_json_parse(tt, &back, &err), 0);
    cr_assert(strstr(err.msg, "verified.tell") && strstr(err.msg, "out of range"), "%s", err.msg);
    free(tt);
    cr_assert(ct_config_lib_verified(&tc, "ompi", 0, 0.8125, 0.5), "a tell below 1: not recorded");
    tt = ct_config_json_dumps(&tc);
    cr_assert_null(strstr(tt, "\"tell\""), "%s", tt);
    free(tt);
    ct_config_release(&tc);
    /* env and slurm, which point at (or embed) that file, say it in their own header */
    o.lib = CT_LIB_OMPI;
    for (int k = 0; k < 2; k++) {
        o.rules_path = k ? NULL : "/shared/ompi.rules";
        cr_assert_eq(run(k ? "slurm" : "env", &o, &c, &out, &err), 0, "%s", err.msg);
        cr_assert_eq(out.nverified, 2, "the verified set and the one at Open MPI's own");
        const char *rules = strstr(out.body.s, "\nrules=");
        cr_assert(strstr(out.body.s, line) && (!rules || strstr(out.body.s, line) < rules), "%s",
                  out.body.s);
        cr_assert(strstr(out.body.s, "# alltoall on 2 ranks (1 x 2): keeps Open MPI's own choice"),
                  "%s", out.body.s);
        ct_export_out_release(&out);
    }
    o.lib = CT_LIB_NONE;
    o.rules_path = NULL;
    static const char *bad[][2] = {{"\"geomean\": 0.8125", "\"geomean\": \"fast\""},
                                   {"\"geomean\": 0.8125", "\"geomean\": 0"},
                                   {"\"verified\": {", "\"verified\": {\"x\": 1, "}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char *doc = ct_xmalloc(strlen(txt) + 64), *p = strstr(txt, bad[i][0]);
        cr_assert_not_null(p, "%s", bad[i][0]);
        sprintf(doc, "%.*s%s%s", (int)(p - txt), txt, bad[i][1], p + strlen(bad[i][0]));
        int rc = ct_config_json_parse(doc, &back, &err);
        if (i < 2) {
            cr_assert_lt(rc, 0, "accepted %s", bad[i][1]);
            cr_assert(strstr(err.msg, "verified.geomean"), "%s", err.msg);
        } else { /* an unknown key beside them is left, as elsewhere in the document */
            cr_assert_eq(rc, 0, "%s", err.msg);
            ct_config_release(&back);
        }
        free(doc);
    }
    free(txt);
    free(txt2);
    cr_assert(ct_config_lib_demote(&c, "ompi", 0, 1, CT_SET_BACK_SLOW));
    cr_assert_eq(c.libs[0].sets[0].verified.at[0], 0, "demoting a range clears the record");
    cr_assert(ct_config_lib_verified(&c, "ompi", 0, 1.25, 0));
    cr_assert(!ct_config_lib_verified(&c, "ompi", 0, NAN, 0), "no geomean: not marked");
    cr_assert_eq(c.libs[0].sets[0].verified.at[0], 0, "and the earlier record is gone");
    cr_assert(!ct_config_lib_verified(&c, "ompi", 1, 1.25, 0),
              "alltoall, Open MPI's own choice everywhere: nothing to vouch for");
    cr_assert_eq(c.libs[0].sets[1].verified.at[0], 0);
    ct_config_release(&c);
}

/* A mark of figures with more digits than the file keeps (10) reads back as the mark it is: its
 * fingerprint is of the figures as written (the whole export's mark of a verify was lost). */
Test(config, verified_mark_of_long_figures_survives_its_file)
{
    struct ct_config c, back;
    struct ct_err err = {0};
    load("tests/fixtures/export/config-ompi-2ranks.json", &c);
    cr_assert(ct_config_lib_verified(&c, "ompi", 0, 0.8125, 0));
    c.libs[0].sets[0].verified.geomean = 0.44523456789123456;
    c.libs[0].sets[0].verified.tell = 1.0712345678912345;
    char *txt = ct_config_json_dumps(&c);
    cr_assert_eq(ct_config_json_parse(txt, &back, &err), 0, "%s", err.msg);
    cr_assert(back.libs[0].sets[0].verified.at[0], "the mark stays: %s", txt);
    ct_config_release(&back);
    free(txt);
    ct_config_release(&c);
}

/* A mark carries a fingerprint of what it vouches for ("of"): the file edited by hand after
 * the verify (a range's algorithm changed) is read with the mark gone, the export then says
 * "not verified"; read unedited, it stays. The rows the sweep read ("algorithms") bound what
 * a range may name: a name or id not among them is refused, naming it. */
Test(config, verified_mark_of_what_and_the_librarys_rows)
{
    struct ct_config c, back;
    struct ct_err err = {0};
    load("tests/fixtures/export/config-ompi-2ranks.json", &c);
    cr_assert(ct_config_lib_verified(&c, "ompi", 0, 0.8125, 0));
    struct ct_ruleset *s = &c.libs[0].sets[0];
    static const char *const rows[] = {"default",        "basic_linear",
                                       "nonoverlapping", "recursive_doubling",
                                       "ring",           "segmented_ring"};
    for (int i = 0; i < 6; i++) {
        snprintf(s->lib_rows[i].name, sizeof s->lib_rows[i].name, "%s", rows[i]);
        s->lib_rows[i].id = i;
    }
    s->nlib_rows = 6;
    char *txt = ct_config_json_dumps(&c);
    cr_assert(strstr(txt, "\"of\": \""), "%s", txt);
    cr_assert(strstr(txt, "\"algorithms\""), "%s", txt);
    cr_assert_eq(ct_config_json_parse(txt, &back, &err), 0, "%s", err.msg);
    cr_assert(back.libs[0].sets[0].verified.at[0], "unedited: the mark stays");
    cr_assert_eq(back.libs[0].sets[0].nlib_rows, 6);
    ct_config_release(&back);
    /* by hand: the ring range (id 4) to recursive_doubling (id 3) */
    char *r = strstr(txt, "\"algo\": \"ring\"");
    cr_assert(r, "%s", txt);
    char *id = strstr(r, "\"id\": 4");
    cr_assert(id);
    char *ed = ct_xmalloc(strlen(txt) + 32);
    size_t la = strlen("\"algo\": \"ring\""), li = strlen("\"id\": 4");
    snprintf(ed, strlen(txt) + 32, "%.*s\"algo\": \"recursive_doubling\"%.*s\"id\": 3%s",
             (int)(r - txt), txt, (int)(id - r - (long)la), r + la, id + li);
    cr_assert_eq(ct_config_json_parse(ed, &back, &err), 0, "%s", err.msg);
    cr_assert_eq(back.libs[0].sets[0].verified.at[0], 0, "edited: the mark is gone");
    struct ct_export_opts o;
    struct ct_export_out out;
    ct_export_opts_init(&o);
    cr_assert_eq(run("ompi-rules", &o, &back, &out, &err), 0, "%s", err.msg);
    cr_assert(out.nnotes >= 1 && strstr(out.notes[0], "measured, not verified"), "%s",
              out.nnotes ? out.notes[0] : "");
    ct_export_out_release(&out);
    ct_config_release(&back);
    /* by hand: the mark's own geomean, the library's release, a launch setting, the shape:
     * each drops the mark (they read as verified before) */
    static const char *const edits[][2] = {
        {"\"geomean\": 0.8125", "\"geomean\": 0.5"},
        {"\"version\": \"4.1.4\"", "\"version\": \"4.1.6\""},
        {"\"ranks_per_node\": 2", "\"ranks_per_node\": 2, \"x\": 0"}, /* (unchanged: stays) */
        {"\"name\": \"Open MPI\",", "\"name\": \"Open MPI\", \"env\": [{\"name\": "
                                    "\"OMPI_MCA_btl_vader_fbox_max\", \"value\": \"64\"}],"}};
    for (int k = 0; k < 4; k++) {
        char *at = strstr(txt, edits[k][0]);
        cr_assert(at, "%s in %s", edits[k][0], txt);
        size_t n = strlen(txt) + 256;
        char *e2 = ct_xmalloc(n);
        snprintf(e2, n, "%.*s%s%s", (int)(at - txt), txt, edits[k][1], at + strlen(edits[k][0]));
        cr_assert_eq(ct_config_json_parse(e2, &back, &err), 0, "%s: %s", edits[k][1], err.msg);
        cr_assert_eq(back.libs[0].sets[0].verified.at[0] != 0, k == 2, "edit %d: %s", k,
                     edits[k][1]);
        ct_config_release(&back);
        free(e2);
    }
    /* a name, then an id, the library does not have */
    snprintf(ed, strlen(txt) + 32, "%.*s\"algo\": \"nosuch\"%s", (int)(r - txt), txt, r + la);
    cr_assert_neq(ct_config_json_parse(ed, &back, &err), 0);
    cr_assert(strstr(err.msg, "'nosuch' (id 4) is not one of the library's rows the sweep read"),
              "%s", err.msg);
    snprintf(ed, strlen(txt) + 32, "%.*s\"id\": 9%s", (int)(id - txt), txt, id + li);
    cr_assert_neq(ct_config_json_parse(ed, &back, &err), 0);
    cr_assert(strstr(err.msg, "'ring' (id 9) is not one"), "%s", err.msg);
    free(ed);
    free(txt);
    ct_config_release(&c);
}

/* sweep --lib --env: a section's launch settings go through config.json (strictly: a name of
 * the library's own, not one that loads rules, not twice, at most 8), the exports set them
 * beside their file (and Open MPI's mca-params lines), an export of settings alone is not
 * "unchanged", and their verify records (the settings', the whole export's) are said; dropping
 * them clears every set's record, and any change to the rules the whole export's. */
Test(config, launch_settings)
{
    struct ct_config c, back;
    struct ct_err err = {0};
    load("tests/fixtures/export/config-ompi-2ranks.json", &c);
    struct ct_librules *l = &c.libs[0];
    cr_assert_eq(l->nenv, 0);
    snprintf(l->env[0].name, sizeof l->env[0].name, "OMPI_MCA_btl_vader_eager_limit");
    snprintf(l->env[0].value, sizeof l->env[0].value, "16384");
    l->nenv = 1;
    cr_assert(ct_config_lib_verified(&c, "ompi", 0, 0.9, 0));
    cr_assert(ct_config_lib_env_verified(&c, "ompi", 0.75, 1.2));
    cr_assert(ct_config_lib_whole_verified(&c, "ompi", 0.6, 1.3));
    char *txt = ct_config_json_dumps(&c);
    cr_assert(strstr(txt, "\"env\"") && strstr(txt, "\"env_verified\"") &&
                  strstr(txt, "\"whole_verified\""),
              "%s", txt);
    cr_assert_eq(ct_config_json_parse(txt, &back, &err), 0, "%s", err.msg);
    cr_assert_eq(back.libs[0].nenv, 1);
    cr_assert_str_eq(back.libs[0].env[0].value, "16384");
    cr_assert_float_eq(back.libs[0].env_verified.geomean, 0.75, 1e-9);
    cr_assert_float_eq(back.libs[0].whole_verified.geomean, 0.6, 1e-9);
    cr_assert_float_eq(back.libs[0].env_verified.tell, 1.2, 1e-9, "what it could tell, read back");
    cr_assert_float_eq(back.libs[0].whole_verified.tell, 1.3, 1e-9);
    char *shown = NULL; /* and shown */
    size_t slen = 0;
    FILE *sf = open_memstream(&shown, &slen);
    ct_config_print(sf, &back);
    fclose(sf);
    cr_assert(strstr(shown, "geomean 0.750 with/without, what it could tell 1.20x (the median "
                            "collective)\n") &&
                  strstr(shown, "geomean 0.600 with/without, what it could tell 1.30x (the "
                                "median collective it measured)\n"),
              "%s", shown);
    free(shown);
    char *txt2 = ct_config_json_dumps(&back);
    cr_assert_str_eq(txt, txt2, "written back the same");
    free(txt2);
    ct_config_release(&back);
    struct ct_export_opts o;
    struct ct_export_out out;
    ct_export_opts_init(&o);
    cr_assert_eq(run("ompi-rules", &o, &c, &out, &err), 0, "%s", err.msg);
    cr_assert(strstr(out.env.s, "export OMPI_MCA_btl_vader_eager_limit='16384'\n"), "%s",
              out.env.s);
    cr_assert(strstr(out.mca.s, "\nbtl_vader_eager_limit = 16384\n"), "%s", out.mca.s);
    cr_assert(strstr(out.body.s, "# launch settings: verified against Open MPI 4.1.4's plain "
                                 "defaults at "),
              "%s", out.body.s);
    cr_assert(strstr(out.body.s, "verified against Open MPI 4.1.4's defaults with the launch "
                                 "settings at "),
              "%s", out.body.s);
    cr_assert(strstr(out.body.s, "# the export as a whole (the launch settings and the rules "
                                 "together): verified against Open MPI 4.1.4's plain defaults at "),
              "%s", out.body.s);
    cr_assert(strstr(out.body.s, "faster somewhere): geomean 0.750; what it could tell: a loss "
                                 "of 1.20x at a size would have shown about half the time (the "
                                 "median over the collectives of each one's median size)\n"),
              "%s", out.body.s);
    cr_assert(strstr(out.body.s, "geomean 0.600 exported/default; what it could tell: a loss of "
                                 "1.30x at a size would have shown about half the time (the "
                                 "median over the collectives this pass measured of each one's "
                                 "median size)\n"),
              "%s", out.body.s);
    struct ct_loader ld;
    ct_export_loader(&out, &ld);
    cr_assert_eq(ld.n, 3, "the setting and the two rules variables");
    ct_export_out_release(&out);
    /* --nranks writing some of the sets: the whole, measured with all of them, is not said */
    cr_assert_eq(l->nsets, 2);
    l->sets[1].nranks = 4;
    o.nranks = 2;
    cr_assert_eq(run("ompi-rules", &o, &c, &out, &err), 0, "%s", err.msg);
    cr_assert_null(strstr(out.body.s, "# the export as a whole ("), "%s", out.body.s);
    cr_assert(strstr(out.notes[out.nnotes - 1], "the export as a whole: verified with all 2 of "
                                                "the section's rule sets; --nranks 2 leaves 1 "
                                                "out, so not for this file"),
              "%s", out.notes[out.nnotes - 1]);
    ct_export_out_release(&out);
    l->sets[1].nranks = 2;
    o.nranks = 0;
    /* the rules all at Open MPI's own choice: the settings alone still change the job */
    struct ct_config d;
    load("tests/fixtures/export/config-ompi-2ranks.json", &d);
    for (int i = 0; i < d.libs[0].nsets; i++)
        for (int k = 0; k < d.libs[0].sets[i].nrules; k++)
            ct_config_lib_demote(&d, "ompi", i, k, CT_SET_BACK_SLOW);
    cr_assert_neq(run("ompi-rules", &o, &d, &out, &err), 0, "the defaults everywhere: refused");
    ct_export_out_release(&out);
    d.libs[0].env[0] = l->env[0];
    d.libs[0].nenv = 1;
    cr_assert_eq(run("ompi-rules", &o, &d, &out, &err), 0, "%s", err.msg);
    cr_assert(!out.unchanged);
    cr_assert(strstr(out.notes[out.nnotes - 1], "launch settings: measured with, not verified"),
              "%s", out.notes[out.nnotes - 1]);
    /* no rule changes Open MPI's choice: the settings alone, no dynamic rules loaded */
    cr_assert(strstr(out.body.s, "\n0            # collectives\n"), "%s", out.body.s);
    cr_assert(strstr(out.body.s, "# not loaded: no rule changes Open MPI's own decision"), "%s",
              out.body.s);
    cr_assert(!strstr(out.env.s, "coll_tuned") && !strstr(out.mca.s, "coll_tuned"), "%s%s",
              out.env.s, out.mca.s);
    cr_assert(strstr(out.env.s, "export OMPI_MCA_btl_vader_eager_limit="), "%s", out.env.s);
    ct_export_out_release(&out);
    ct_config_release(&d);
    static const char *bad[][2] = {
        {"\"OMPI_MCA_btl_vader_eager_limit\"", "\"OMPI_MCA_coll_tuned_use_dynamic_rules\""},
        {"\"OMPI_MCA_btl_vader_eager_limit\"", "\"MPIR_CVAR_X\""},
        {"\"OMPI_MCA_btl_vader_eager_limit\"", "\"OMPI_MCA_a b\""},
        {"\"OMPI_MCA_btl_vader_eager_limit\"", "\"OMPI_MCA_coll_tuned_priority\""},
        {"\"16384\"", "\"$(reboot)\""},
        {"\"env\": [",
         "\"env\": [{\"name\": \"OMPI_MCA_btl_vader_eager_limit\", \"value\": \"1\"}, "},
        {"\"env\": [",
         "\"env\": [{\"name\": \"OMPI_MCA_a\", \"value\": \"1\"}, {\"name\": "
         "\"OMPI_MCA_b\", \"value\": \"1\"}, {\"name\": \"OMPI_MCA_c\", \"value\": \"1\"}, "
         "{\"name\": \"OMPI_MCA_d\", \"value\": \"1\"}, {\"name\": \"OMPI_MCA_e\", "
         "\"value\": \"1\"}, {\"name\": \"OMPI_MCA_f\", \"value\": \"1\"}, {\"name\": "
         "\"OMPI_MCA_g\", \"value\": \"1\"}, {\"name\": \"OMPI_MCA_h\", \"value\": \"1\"}, "}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char *doc = ct_xmalloc(strlen(txt) + 400), *p = strstr(txt, bad[i][0]);
        cr_assert_not_null(p, "%s", bad[i][0]);
        sprintf(doc, "%.*s%s%s", (int)(p - txt), txt, bad[i][1], p + strlen(bad[i][0]));
        cr_assert_lt(ct_config_json_parse(doc, &back, &err), 0, "accepted %s", bad[i][1]);
        cr_assert(strstr(err.msg, "libraries[0].env"), "%s", err.msg);
        free(doc);
    }
    { /* 8 settings (the last bad one less its last): read, all 8 */
        const char *more = bad[sizeof bad / sizeof bad[0] - 1][1];
        const char *key = "\"env\": [";
        char *doc = ct_xmalloc(strlen(txt) + 400), *p = strstr(txt, key);
        sprintf(doc, "%.*s%.*s%s", (int)(p - txt), txt,
                (int)(strstr(more, "{\"name\": \"OMPI_MCA_h\"") - more), more, p + strlen(key));
        cr_assert_eq(ct_config_json_parse(doc, &back, &err), 0, "%s", err.msg);
        cr_assert_eq(back.libs[0].nenv, 8);
        cr_assert_str_eq(back.libs[0].env[6].name, "OMPI_MCA_g");
        ct_config_release(&back);
        free(doc);
    }
    /* the whole export's record without settings (env and its record renamed away) */
    char *doc = ct_xstrdup(txt), *p = strstr(doc, "\"env\": ["),
         *q = strstr(doc, "\"env_verified\"");
    cr_assert(p && q);
    memcpy(p + 1, "ENV", 3);
    memcpy(q + 1, "ENV", 3);
    cr_assert_lt(ct_config_json_parse(doc, &back, &err), 0, "accepted whole_verified alone");
    cr_assert(strstr(err.msg, "whole_verified") && strstr(err.msg, "without env"), "%s", err.msg);
    free(doc);
    free(txt);
    /* a change to the rules clears it: a rule set back, a set's rules replaced */
    int k = 0;
    while (k < c.libs[0].sets[0].nrules && c.libs[0].sets[0].rules[k].id == 0)
        k++;
    cr_assert(ct_config_lib_demote(&c, "ompi", 0, k, CT_SET_BACK_SLOW));
    cr_assert_eq(c.libs[0].whole_verified.at[0], 0, "a rule set back: the whole is another file");
    cr_assert(ct_config_lib_whole_verified(&c, "ompi", 0.6, 0));
    cr_assert(!ct_config_lib_whole_verified(&c, "ompi", NAN, 0), "no geomean: cleared");
    cr_assert_eq(c.libs[0].whole_verified.at[0], 0);
    cr_assert(ct_config_lib_whole_verified(&c, "ompi", 0.6, 0));
    struct ct_config src; /* a set replaced (verify --try-ties: the set as verified) */
    load("tests/fixtures/export/config-ompi-2ranks.json", &src);
    ct_config_lib_set_copy(&c, &src, "ompi", 1);
    cr_assert_eq(c.libs[0].whole_verified.at[0], 0, "a set replaced");
    ct_config_release(&src);
    cr_assert(ct_config_lib_whole_verified(&c, "ompi", 0.6, 0));
    int ti = -1, tk = -1; /* a rule cut (verify: slower at an edge) */
    for (int i = 0; i < c.libs[0].nsets && tk < 0; i++)
        for (int j = 0; j < c.libs[0].sets[i].nrules && tk < 0; j++)
            if (c.libs[0].sets[i].rules[j].id != 0)
                ti = i, tk = j;
    cr_assert_geq(tk, 0);
    const struct ct_rule *tr = &c.libs[0].sets[ti].rules[tk];
    cr_assert(ct_config_lib_trim(&c, "ompi", ti, tk, tr->min_bytes,
                                 tr->min_bytes + (tr->max_bytes - tr->min_bytes) / 2));
    cr_assert_eq(c.libs[0].whole_verified.at[0], 0, "a rule cut");
    cr_assert(ct_config_lib_whole_verified(&c, "ompi", 0.6, 0));
    /* MPICH reads one variable by three prefixes: a second name of it is the same setting */
    const struct ct_libmod *mp = ct_libmod_find("mpich"), *om = ct_libmod_find("ompi");
    cr_assert(ct_libmod_env_same(mp, "MPICH_X", "MPIR_CVAR_X"));
    cr_assert(ct_libmod_env_same(mp, "MPIR_PARAM_X", "MPIR_CVAR_X"));
    cr_assert(!ct_libmod_env_same(mp, "MPICH_X", "MPICH_Y"));
    cr_assert(!ct_libmod_env_same(om, "OMPI_MCA_x", "OMPI_MCA_y"));
    cr_assert(ct_libmod_env_same(om, "OMPI_MCA_x", "OMPI_MCA_x"));
    cr_assert(!ct_libmod_env_same(NULL, "MPICH_X", "MPIR_CVAR_X"), "no library: names only");
    /* ... and the last one it reads, MPIR_CVAR_X, wins: the export sets that name too */
    struct ct_config m;
    load("tests/fixtures/export/config-mpich-2ranks.json", &m);
    snprintf(m.libs[0].env[0].name, sizeof m.libs[0].env[0].name, "MPICH_ASYNC_PROGRESS");
    snprintf(m.libs[0].env[0].value, sizeof m.libs[0].env[0].value, "1");
    m.libs[0].nenv = 1;
    o.path = "/shared/mpich.json";
    cr_assert_eq(run("mpich-json", &o, &m, &out, &err), 0, "%s", err.msg);
    cr_assert(strstr(out.env.s, "export MPIR_CVAR_ASYNC_PROGRESS='1'\n"), "%s", out.env.s);
    cr_assert(strstr(out.env.s, "export MPICH_ASYNC_PROGRESS='1'\n"), "as given, too: %s",
              out.env.s);
    ct_export_out_release(&out);
    ct_config_release(&m);
    char w[64];
    ct_libmod_env_winning(mp, "MPIR_PARAM_X", w, sizeof w);
    cr_assert_str_eq(w, "MPIR_CVAR_X");
    ct_libmod_env_winning(om, "OMPI_MCA_x", w, sizeof w);
    cr_assert_str_eq(w, "OMPI_MCA_x");
    ct_libmod_env_winning(mp, "X", w, sizeof w);
    cr_assert_str_eq(w, "X", "no prefix of MPICH's: as it is");
    /* a sweep on more ranks than cores keeps no section (cmd/librun.c) */
    struct ct_config x, y;
    load("tests/fixtures/export/config-ompi-2ranks.json", &x);
    load("tests/fixtures/export/config-mpich-2ranks.json", &y);
    cr_assert(!ct_config_lib_drop(&x, "mpich"), "no such section");
    x.libs = ct_xrealloc(x.libs, 2 * sizeof *x.libs); /* y's section moved in, after x's */
    x.libs[x.nlibs++] = y.libs[0];
    y.nlibs = 0;
    int nsets = x.libs[1].nsets;
    cr_assert(ct_config_lib_drop(&x, "ompi"), "the first of two");
    cr_assert_eq(x.nlibs, 1);
    cr_assert_null(ct_config_lib(&x, "ompi"));
    cr_assert_str_eq(x.libs[0].library, "mpich", "the second moved down, whole");
    cr_assert_eq(x.libs[0].nsets, nsets);
    cr_assert(ct_config_lib_drop(&x, "mpich"));
    cr_assert_eq(x.nlibs, 0);
    cr_assert(!ct_config_lib_drop(&x, "ompi"), "gone");
    ct_config_release(&x);
    ct_config_release(&y);
    struct ct_librules *le = &c.libs[0];
    cr_assert_gt(le->nenv, 0);
    le->nenv = 3; /* one of three (--each-setting), the others in their order */
    snprintf(le->env[1].name, sizeof le->env[1].name, "OMPI_MCA_b");
    snprintf(le->env[2].name, sizeof le->env[2].name, "OMPI_MCA_c");
    ct_config_lib_env_verified(&c, "ompi", 0.8, 0);
    cr_assert(!ct_config_lib_env_drop(&c, "ompi", 3), "no setting 3");
    cr_assert(ct_config_lib_env_drop(&c, "ompi", 1));
    cr_assert_eq(le->nenv, 2);
    cr_assert_str_eq(le->env[1].name, "OMPI_MCA_c");
    cr_assert_eq(le->env_verified.at[0], 0, "judged with the one taken out");
    cr_assert(ct_config_lib_env_drop(&c, "ompi", -1));
    cr_assert_eq(c.libs[0].nenv, 0);
    cr_assert_eq(c.libs[0].env_verified.at[0], 0);
    cr_assert_eq(c.libs[0].whole_verified.at[0], 0);
    cr_assert(!ct_config_lib_whole_verified(&c, "ompi", 0.6, 0), "no settings: no whole record");
    cr_assert_eq(c.libs[0].sets[0].verified.at[0], 0, "measured with them: no longer verified");
    cr_assert(!ct_config_lib_env_drop(&c, "ompi", -1), "none left");
    ct_config_release(&c);
}

static void tie(struct ct_rule *r, const char *algo, int id, uint64_t lo, uint64_t hi, double q)
{
    struct ct_tie_span *t = &r->ties[r->nties++];
    snprintf(t->algo, sizeof t->algo, "%s", algo);
    t->id = id;
    t->min_bytes = lo;
    t->max_bytes = hi;
    t->ratio = q;
    memset(&t->params, 0, sizeof t->params);
}

/* sweep --verify --try-ties: a library's tie spans (with the rows' ids, ratios and segment
 * sizes) go through
 * config.json; ct_config_lib_try_ties puts the tied rows in the place of the library's choice
 * (where two overlap, the one faster in the sweep takes the overlap, the other the parts
 * outside it; no ratio: the earlier first), marked tried; the verdict counts them apart from
 * CONFIG's rules; those set back join the library's choice again, with the spans that were
 * its; a rule of CONFIG's set back loses its spans (ties with it, not the library's). */
Test(config, library_ties_tried)
{
    struct ct_config c, back;
    struct ct_err err = {0};
    load("tests/fixtures/export/config-ompi-2ranks.json", &c);
    struct ct_rule *r = &c.libs[0].sets[0].rules[0]; /* allreduce: default [0, 4 KiB) */
    tie(r, "recursive_doubling", 3, 0, 1024, 0.9);
    tie(r, "basic_linear", 1, 512, 4096, 0.8);
    r->ties[1].params.v[CT_P_CHUNK] = 98304; /* the segment size the sweep ran it at */
    tie(r, "ring", 4, 0, 256, 1.01);
    r = &c.libs[0].sets[1].rules[0]; /* alltoall: default everywhere */
    tie(r, "pairwise", 2, 100, 200, 0);
    tie(r, "bruck", 3, 1000, CT_BYTES_INF, 0);
    tie(r, "linear", 1, 50, 2000, 0);
    char *txt = ct_config_json_dumps(&c);
    cr_assert_eq(ct_config_json_parse(txt, &back, &err), 0, "%s", err.msg);
    const struct ct_rule *b = &back.libs[0].sets[0].rules[0];
    cr_assert_eq(b->nties, 3);
    cr_assert_eq(b->ties[1].id, 1);
    cr_assert_float_eq(b->ties[1].ratio, 0.8, 1e-9);
    cr_assert_eq(b->ties[1].params.v[CT_P_CHUNK], 98304);
    cr_assert_eq(b->ties[0].params.v[CT_P_CHUNK], 0, "0: the library's own");
    cr_assert_float_eq(back.libs[0].sets[1].rules[0].ties[0].ratio, 0, 0, "no ratio: 0");
    char *txt2 = ct_config_json_dumps(&back);
    cr_assert_str_eq(txt, txt2, "written back the same");
    char *neg = strstr(txt2, "98304"); /* a span's segment size below 0: one line, refused */
    cr_assert_not_null(neg);
    memcpy(neg, "-9999", 5);
    struct ct_config no;
    cr_assert_neq(ct_config_json_parse(txt2, &no, &err), 0);
    cr_expect(strstr(err.msg, "\"segsize\": N >= 0 (optional)") != NULL, "%s", err.msg);
    ct_config_release(&back);
    free(txt2);
    /* a span past its range (the range's bounds edited by hand) is cut to it, or dropped */
    struct ct_config cut_back;
    struct ct_rule *e = &c.libs[0].sets[0].rules[0];
    e->ties[0].max_bytes = 8192;
    e->ties[1].min_bytes = 5000;
    e->ties[1].max_bytes = 6000;
    char *past = ct_config_json_dumps(&c);
    cr_assert_eq(ct_config_json_parse(past, &cut_back, &err), 0, "%s", err.msg);
    const struct ct_rule *eb = &cut_back.libs[0].sets[0].rules[0];
    cr_assert(eb->nties == 2 && eb->ties[0].max_bytes == 4096 && !strcmp(eb->ties[1].algo, "ring"),
              "%d spans", eb->nties);
    e->ties[0].max_bytes = 1024;
    e->ties[1].min_bytes = 512;
    e->ties[1].max_bytes = 4096;
    ct_config_release(&cut_back);
    free(past);
    char *id0 = strstr(txt, "\"id\": 1,"); /* a span of a library's without a row id */
    cr_assert_not_null(id0);
    memcpy(id0, "\"id\": 0,", 8);
    cr_assert_lt(ct_config_json_parse(txt, &back, &err), 0);
    cr_assert(strstr(err.msg, "ties") && strstr(err.msg, "\"id\": N > 0"), "%s", err.msg);
    free(txt);

    cr_assert(ct_config_lib_verified(&c, "ompi", 0, 0.9, 0));
    snprintf(c.libs[0].whole_verified.at, sizeof c.libs[0].whole_verified.at, "%s",
             c.libs[0].sets[0].verified.at); /* as a verify of a section with settings leaves */
    cr_assert_eq(ct_config_lib_try_ties(&c, "ompi", 0), 2,
                 "basic_linear, then recursive_doubling outside it; ring nowhere");
    cr_assert_eq(c.libs[0].sets[0].verified.at[0], 0, "a changed set: not verified");
    cr_assert_eq(c.libs[0].whole_verified.at[0], 0, "nor the whole export");
    const struct ct_ruleset *s = &c.libs[0].sets[0];
    cr_assert_eq(s->nrules, 4);
    static const struct {
        const char *algo;
        uint64_t lo;
        bool tried;
    } want[] = {{"recursive_doubling", 0, true},
                {"basic_linear", 512, true},
                {"ring", 4096, false},
                {"segmented_ring", 1u << 20, false}};
    for (int k = 0; k < 4; k++) {
        cr_assert_str_eq(s->rules[k].algo, want[k].algo, "rule %d", k);
        cr_assert_eq(s->rules[k].min_bytes, want[k].lo, "rule %d", k);
        cr_assert_eq(s->rules[k].tried, want[k].tried, "rule %d", k);
    }
    cr_assert_eq(s->rules[1].id, 1);
    cr_assert_eq(s->rules[1].params.v[CT_P_CHUNK], 98304, "tried at the sweep's segment size");
    cr_assert_eq(s->rules[0].params.v[CT_P_CHUNK], 0, "the library's own segment size");
    cr_assert_eq(s->rules[1].nties, 1, "recursive_doubling's part of it, not its own");
    cr_assert(!strcmp(s->rules[1].ties[0].algo, "recursive_doubling") &&
              s->rules[1].ties[0].min_bytes == 512 && s->rules[1].ties[0].max_bytes == 1024);
    cr_assert(s->rules[0].nties == 1 && !strcmp(s->rules[0].ties[0].algo, "ring"));
    cr_assert_eq(ct_config_lib_try_ties(&c, "ompi", 1), 4,
                 "no ratios: in their order, linear around pairwise and up to bruck");
    s = &c.libs[0].sets[1];
    static const struct {
        const char *algo;
        uint64_t lo, hi;
    } a2a[] = {{"default", 0, 50},
               {"linear", 50, 100},
               {"pairwise", 100, 200},
               {"linear", 200, 1000},
               {"bruck", 1000, CT_BYTES_INF}};
    cr_assert_eq(s->nrules, 5);
    for (int k = 0; k < 5; k++)
        cr_assert(!strcmp(s->rules[k].algo, a2a[k].algo) && s->rules[k].min_bytes == a2a[k].lo &&
                      s->rules[k].max_bytes == a2a[k].hi,
                  "alltoall rule %d: %s", k, s->rules[k].algo);
    cr_assert_eq(ct_config_lib_try_ties(&c, "ompi", 1), 0, "nothing left to try");
    cr_assert_eq(ct_config_lib_try_ties(&c, "mpich", 0), 0, "no such library");

    /* the verdict: allreduce's tried recursive_doubling slower, basic_linear cut to [1 KiB,
     * 4 KiB), CONFIG's ring without a gain; the set back ones join the library's choice */
    s = &c.libs[0].sets[0];
    bool slow[4] = {true, true, false, false}, nogain[4] = {false, false, true, false};
    struct ct_paired_cut cut[4] = {{0}};
    cut[1].lo = 1024;
    cut[1].hi = 4096;
    cut[1].rounds = 4;
    int n[CT_JUDGED_N] = {0};
    struct ct_ruleset copy; /* the verdict is on the set as verified, applied to c */
    ct_ruleset_copy(&copy, s);
    ct_config_lib_judged(&c, "ompi", 0, &copy, slow, nogain, cut, n);
    ct_ruleset_release(&copy);
    cr_assert(n[CT_JUDGED_TRIED_BACK] == 1 && n[CT_JUDGED_TRIED_KEPT] == 1 &&
                  n[CT_JUDGED_TRIED_CUT] == 1 && n[CT_JUDGED_NOGAIN] == 1 &&
                  !n[CT_JUDGED_SLOW] && !n[CT_JUDGED_CUT],
              "%d %d %d %d %d %d", n[0], n[1], n[2], n[3], n[4], n[5]);
    cr_assert_eq(s->rules[3].nties, 0, "CONFIG's ring set back: its spans (with ring) gone");
    ct_config_lib_join_own(&c, "ompi", 0);
    static const struct {
        const char *algo;
        uint64_t lo;
    } after[] = {
        {"default", 0}, {"basic_linear", 1024}, {"default", 4096}, {"segmented_ring", 1u << 20}};
    cr_assert_eq(s->nrules, 4);
    for (int k = 0; k < 4; k++)
        cr_assert(!strcmp(s->rules[k].algo, after[k].algo) && s->rules[k].min_bytes == after[k].lo,
                  "rule %d: %s from %llu", k, s->rules[k].algo,
                  (unsigned long long)s->rules[k].min_bytes);
    /* the joined range keeps the library's choice's spans: ring's, and recursive_doubling's
     * part under basic_linear (its own tried part is gone: tried) */
    const struct ct_rule *j = &s->rules[0];
    int rd = -1, ring = -1;
    for (int t = 0; t < j->nties; t++) {
        rd = strcmp(j->ties[t].algo, "recursive_doubling") ? rd : t;
        ring = strcmp(j->ties[t].algo, "ring") ? ring : t;
    }
    cr_assert(j->nties == 2 && rd >= 0 && ring >= 0, "%d spans", j->nties);
    cr_assert(j->ties[rd].min_bytes == 512 && j->ties[rd].max_bytes == 1024);
    cr_assert(j->ties[ring].min_bytes == 0 && j->ties[ring].max_bytes == 256);
    cr_assert_eq(ct_ruleset_check_lib(s, &err), 0, "%s", err.msg);
    ct_config_release(&c);
}

/* A predicted config (sweep --model) keeps its labels through config.json; configs without
 * them read as measured. */
Test(config, predicted_labels_round_trip)
{
    struct ct_config c, back;
    struct ct_err err = {0};
    load(CLUSTER, &c);
    cr_assert_eq(c.sweep.predicted[0], 0, "a measured config reads as measured");
    snprintf(c.sweep.predicted, sizeof c.sweep.predicted, "1024 ranks on 128 x dgx-h100");
    for (int i = 0; i < c.nsets; i++)
        for (int k = 0; k < c.sets[i].nrules; k++)
            c.sets[i].rules[k].predicted = true;
    char *txt = ct_config_json_dumps(&c);
    cr_assert_eq(ct_config_json_parse(txt, &back, &err), 0, "%s", err.msg);
    cr_assert_str_eq(back.sweep.predicted, c.sweep.predicted);
    cr_assert(back.nsets > 0 && back.sets[0].rules[0].predicted);
    char *txt2 = ct_config_json_dumps(&back);
    cr_assert_str_eq(txt, txt2, "written back the same");
    free(txt);
    free(txt2);
    ct_config_release(&back);
    ct_config_release(&c);
}

/* The algorithms a range is tied with go through config.json; configs written before the
 * list read with none; an entry that is not an algorithm is refused. */
Test(config, tied_lists_round_trip)
{
    struct ct_config c, back;
    struct ct_err err = {0};
    load(CLUSTER, &c);
    cr_assert(c.nsets > 0 && c.sets[0].nrules > 0);
    cr_assert_eq(c.sets[0].rules[0].ntied, 0, "a config without the list has none");
    struct ct_rule *r = &c.sets[0].rules[0];
    r->ntied = 2;
    snprintf(r->tied[0], sizeof r->tied[0], "ring");
    snprintf(r->tied[1], sizeof r->tied[1], "mesh");
    char *txt = ct_config_json_dumps(&c);
    cr_assert(strstr(txt, "\"tied_with\": [\n            \"ring\",") ||
                  strstr(txt, "\"tied_with\": [\"ring\""),
              "%s", txt);
    cr_assert_eq(ct_config_json_parse(txt, &back, &err), 0, "%s", err.msg);
    cr_assert_eq(back.sets[0].rules[0].ntied, 2);
    cr_assert_str_eq(back.sets[0].rules[0].tied[1], "mesh");
    char *txt2 = ct_config_json_dumps(&back);
    cr_assert_str_eq(txt, txt2, "written back the same");
    char *at = strstr(strstr(txt, "\"tied_with\""), "\"mesh\"");
    memcpy(at, "\"nope\"", 6);
    struct ct_config bad;
    cr_assert_lt(ct_config_json_parse(txt, &bad, &err), 0);
    cr_assert(strstr(err.msg, "tied_with"), "%s", err.msg);
    free(txt);
    free(txt2);
    ct_config_release(&back);
    ct_config_release(&c);
}

/* The spans of a range where other algorithms were tied go through config.json; configs
 * written before them read with none; a span outside its range is refused. */
Test(config, tie_spans_round_trip)
{
    struct ct_config c, back;
    struct ct_err err = {0};
    load(CLUSTER, &c);
    struct ct_rule *r = &c.sets[0].rules[0];
    cr_assert_eq(r->nties, 0, "a config without them has none");
    r->nties = 2;
    snprintf(r->ties[0].algo, sizeof r->ties[0].algo, "mesh");
    r->ties[0].min_bytes = r->min_bytes;
    r->ties[0].max_bytes = r->max_bytes;
    snprintf(r->ties[1].algo, sizeof r->ties[1].algo, "rdh");
    r->ties[1].min_bytes = r->min_bytes + 1;
    r->ties[1].max_bytes = r->min_bytes + 3;
    char *txt = ct_config_json_dumps(&c);
    cr_assert_eq(ct_config_json_parse(txt, &back, &err), 0, "%s", err.msg);
    const struct ct_rule *b = &back.sets[0].rules[0];
    cr_assert_eq(b->nties, 2);
    cr_assert_str_eq(b->ties[1].algo, "rdh");
    cr_assert_eq(b->ties[1].min_bytes, r->min_bytes + 1);
    cr_assert_eq(b->ties[0].max_bytes, r->max_bytes);
    char *txt2 = ct_config_json_dumps(&back);
    cr_assert_str_eq(txt, txt2, "written back the same");
    r->ties[1].min_bytes = r->min_bytes + 3; /* empty: refused */
    char *txt3 = ct_config_json_dumps(&c);
    struct ct_config bad;
    cr_assert_lt(ct_config_json_parse(txt3, &bad, &err), 0);
    cr_assert(strstr(err.msg, "ties"), "%s", err.msg);
    free(txt);
    free(txt2);
    free(txt3);
    ct_config_release(&back);
    ct_config_release(&c);
}

/* The Open MPI fixture's section as an NCCL sweep's (ring/LL128 from 4 KiB, tree/Simple
 * from 1 MiB). */
static void nccl_config(struct ct_config *c)
{
    load("tests/fixtures/export/config-ompi-2ranks.json", c);
    struct ct_librules *l = &c->libs[0];
    snprintf(l->library, sizeof l->library, "nccl");
    snprintf(l->name, sizeof l->name, "NCCL");
    snprintf(l->version, sizeof l->version, "2.28.9");
    struct ct_rule *r = l->sets[0].rules;
    snprintf(r[1].algo, sizeof r[1].algo, "ring/LL128");
    snprintf(r[2].algo, sizeof r[2].algo, "tree/Simple");
}

/* c's document written to a new file (path, a mkstemp template) and read by the plugin's
 * reader into t; returns the document (free()). */
static char *plugin_reads(const struct ct_config *c, char *path, struct ct_nr_table *t)
{
    char *txt = ct_config_json_dumps(c), msg[256];
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    cr_assert_eq(write(fd, txt, strlen(txt)), (ssize_t)strlen(txt));
    close(fd);
    cr_assert_eq(ct_nr_load(path, t, msg, sizeof msg), 0, "%s", msg);
    return txt;
}

/* c's copy as a config file read back has it: NCCL's section kept in the plugin's words. */
static struct ct_config *nccl_kept(const struct ct_config *c)
{
    struct ct_config *k = ct_config_copy(c);
    cr_assert_not_null(k);
    cr_assert_not_null(k->libs[0].raw, "NCCL's section is kept as written");
    return k;
}

static void kept_free(struct ct_config *k, struct ct_config *c)
{
    ct_config_release(k);
    free(k);
    ct_config_release(c);
}

/* NCCL's names do not change between releases: --lib-version of another one than the measured
 * section's picks what that one reads (the CSV plugin, channels), not a refusal */
Test(config, nccl_section_for_another_release)
{
    struct ct_config c;
    struct ct_export_opts o;
    struct ct_export_out out;
    struct ct_err err = {0};
    nccl_config(&c);
    char path[] = "/tmp/ct-nccl-version-XXXXXX";
    struct ct_nr_table t;
    free(plugin_reads(&c, path, &t));
    ct_nr_free(&t);
    ct_export_opts_init(&o);
    o.config_path = path;
    o.version = "2.27.5";
    cr_assert_eq(run("nccl-tuner", &o, &c, &out, &err), 0, "a 2.28.9 section for 2.27.5: %s",
                 err.msg);
    cr_assert(strstr(ct_text_str(&out.body), "measured with NCCL 2.28.9"));
    ct_export_out_release(&out);
    unlink(path);
    ct_config_release(&c);
}

/* A sweep of NCCL (--lib nccl) writes its section in the words colltune's tuner plugin reads
 * ("algo" and "params": {"proto"}, NCCL's own choice as "default"), which the plugin's reader
 * accepts (alltoall read and never matched), config.json keeps as written, and nccl-tuner
 * turns into measured CSV lines. */
Test(config, nccl_section_is_what_the_plugin_reads)
{
    struct ct_config c, back;
    struct ct_err err = {0};
    nccl_config(&c);
    char path[] = "/tmp/ct-nccl-section-XXXXXX";
    struct ct_nr_table t;
    char *txt = plugin_reads(&c, path, &t);
    cr_assert(t.found);
    cr_expect_str_eq(t.version, "2.28.9");
    cr_assert_eq(t.nrules, 2);
    cr_expect_eq(t.rules[0].func, ncclFuncAllReduce);
    cr_expect_eq(t.rules[1].func, -1, "alltoall: read, never asked");
    const struct ct_nr_range *g = t.rules[0].ranges;
    cr_expect(g[0].keep);
    cr_expect(!g[1].keep && g[1].algo == NCCL_ALGO_RING && g[1].proto == NCCL_PROTO_LL128);
    cr_expect(!g[2].keep && g[2].algo == NCCL_ALGO_TREE && g[2].proto == NCCL_PROTO_SIMPLE);
    cr_expect_eq(g[2].hi, CT_NR_INF);
    const struct ct_nr_range *m = ct_nr_match(&t, ncclFuncAllReduce, 2, 1, 100);
    cr_expect(m && m->keep, "below 4096: NCCL's own choice");
    m = ct_nr_match(&t, ncclFuncAllReduce, 2, 1, 5000);
    cr_expect(m && m->algo == NCCL_ALGO_RING);
    ct_nr_free(&t);
    cr_assert_eq(ct_config_json_parse(txt, &back, &err), 0, "%s", err.msg);
    char *txt2 = ct_config_json_dumps(&back);
    cr_expect_str_eq(txt, txt2, "written back the same");
    struct ct_export_opts o;
    struct ct_export_out out;
    ct_export_opts_init(&o);
    o.config_path = path;
    cr_assert_eq(run("nccl-tuner", &o, &back, &out, &err), 0, "%s", err.msg);
    const char *csv = ct_text_str(&out.body);
    cr_expect(strstr(csv, "\nallreduce,4096,1048575,ring,ll128,0,1,2\n"), "%s", csv);
    cr_expect(strstr(csv, "\nallreduce,1048576,18446744073709551615,tree,simple,0,1,2\n"), "%s",
              csv);
    cr_expect(strstr(csv, "measured with NCCL 2.28.9"), "%s", csv);
    cr_expect_null(strstr(csv, "not measured"), "%s", csv);
    cr_expect_null(strstr(csv, "\nallreduce,0,"), "NCCL's own choice gets no line: %s", csv);
    ct_export_out_release(&out);
    o.nranks = 4; /* --nranks: the section's rules of 4 ranks only, which it has none of: a
                     file of no line would run every call on 1 channel, so none is written */
    cr_assert_eq(run("nccl-tuner", &o, &back, &out, &err), CT_EUNSUPP);
    cr_expect(out.unchanged && strstr(err.msg, "nothing to export"), "%s", err.msg);
    ct_export_out_release(&out);
    unlink(path);
    free(txt);
    free(txt2);
    ct_config_release(&back);
    ct_config_release(&c);
}

/* c's colltune rules all 'symm' (no NCCL counterpart, as a one-host native sweep picks for
 * most sizes); with keep_ar, AllReduce's first range 'rdh' (NCCL's tree). */
static void all_symm(struct ct_config *c, bool keep_ar)
{
    for (int i = 0; i < c->nsets; i++)
        for (int k = 0; k < c->sets[i].nrules; k++)
            if (!keep_ar || k || c->sets[i].coll != CT_ALLREDUCE)
                snprintf(c->sets[i].rules[k].algo, sizeof c->sets[i].rules[k].algo, "symm");
}

/* A mapped NCCL export that would leave NCCL as it is, or (the stock plugin reading a CSV of no
 * line) run every call on 1 channel, is refused as the measured one is: nothing to export. So
 * are UCC's and Intel MPI's (settings of no entry; colltune has no engine for either). */
Test(run, mapped_exports_that_change_nothing_are_refused)
{
#define NCCL "an NCCL 2.27.5", "(tune NCCL itself: colltune sweep --lib nccl)"
#define UCC "a UCC 1.2", "(colltune cannot tune UCC itself: it has no UCC engine)"
#define IMPI                                                                                       \
    "an Intel MPI 2019", "(colltune cannot tune Intel MPI itself: it has no Intel MPI engine)"
    static const struct {
        const char *fmt;
        int lib;
        const char *rules;
        const char *says, *lib_ver, *hint; /* "... maps to <lib_ver> algorithm, so <says>" */
    } cases[] = {
        {"nccl-tuner", CT_LIB_NONE, NULL, "example plugin would run every call on 1 channel", NCCL},
        {"nccl-env", CT_LIB_NONE, NULL, "NCCL would keep its own choices everywhere", NCCL},
        {"nccl-plugin", CT_LIB_NONE, NULL, "NCCL would keep its own choices everywhere", NCCL},
        {"env", CT_LIB_NCCL, NULL, "NCCL would keep its own choices everywhere", NCCL},
        {"env", CT_LIB_NCCL, "/shared/t.csv", "example plugin would run every call on 1 channel",
         NCCL},
        {"slurm", CT_LIB_NCCL, NULL, "NCCL would keep its own choices everywhere", NCCL},
        {"ucc", CT_LIB_NONE, NULL, "no UCC_TL_UCP_TUNE entry would follow", UCC},
        {"env", CT_LIB_UCC, NULL, "no UCC_TL_UCP_TUNE entry would follow", UCC},
        {"slurm", CT_LIB_UCC, NULL, "no UCC_TL_UCP_TUNE entry would follow", UCC},
        {"impi", CT_LIB_NONE, NULL, "no I_MPI_ADJUST setting would follow", IMPI},
        {"env", CT_LIB_IMPI, NULL, "no I_MPI_ADJUST setting would follow", IMPI},
        {"slurm", CT_LIB_IMPI, NULL, "no I_MPI_ADJUST setting would follow", IMPI},
    };
#undef NCCL
#undef UCC
#undef IMPI
    struct ct_config c;
    struct ct_export_opts o;
    struct ct_export_out out;
    struct ct_err err = {0};
    char want[160];
    load(FOUR, &c);
    all_symm(&c, false);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ct_export_opts_init(&o);
        o.config_path = FOUR; /* no library section: mapped */
        o.lib = cases[i].lib;
        o.rules_path = cases[i].rules;
        cr_assert_eq(run(cases[i].fmt, &o, &c, &out, &err), CT_EUNSUPP, "%s: not refused",
                     cases[i].fmt);
        cr_expect(out.unchanged && !out.body.len && !out.rules.len, "%s", cases[i].fmt);
        snprintf(want, sizeof want,
                 "nothing to export: no rule of colltune's maps to %s algorithm, so ",
                 cases[i].lib_ver);
        cr_expect(strstr(err.msg, want) && strstr(err.msg, cases[i].says) &&
                      strstr(err.msg, cases[i].hint),
                  "%s (lib %d): %s", cases[i].fmt, cases[i].lib, err.msg);
        ct_export_out_release(&out);
    }
    /* whether a mapped UCC export changes anything depends on the version targeted: AllReduce
     * 'ring' everywhere (else 'symm') is UCC's from 1.8 only; Intel MPI has it (id 8) */
    for (int k = 0; k < c.nsets; k++)
        for (int r = 0; c.sets[k].coll == CT_ALLREDUCE && r < c.sets[k].nrules; r++)
            snprintf(c.sets[k].rules[r].algo, sizeof c.sets[k].rules[r].algo, "ring");
    ct_export_opts_init(&o);
    cr_assert_eq(run("ucc", &o, &c, &out, &err), CT_EUNSUPP);
    cr_expect(out.unchanged && strstr(err.msg, "a UCC 1.2 algorithm"), "%s", err.msg);
    ct_export_out_release(&out);
    o.version = "1.8";
    cr_assert_eq(run("ucc", &o, &c, &out, &err), 0, "%s", err.msg);
    cr_expect(!out.unchanged && strstr(ct_text_str(&out.body), "UCC_TL_UCP_TUNE='allreduce:0-"),
              "%s", ct_text_str(&out.body));
    ct_export_out_release(&out);
    ct_export_opts_init(&o);
    cr_assert_eq(run("impi", &o, &c, &out, &err), 0, "%s", err.msg);
    cr_expect(strstr(ct_text_str(&out.body), "I_MPI_ADJUST_ALLREDUCE='8:0-"), "%s",
              ct_text_str(&out.body));
    ct_export_out_release(&out);
    /* one range of NCCL's tree: the CSV has its line; NCCL_ALGO cannot follow sizes, so an
     * AllReduce with ranges without counterpart stays unrestricted and no setting is left */
    ct_config_release(&c);
    load(FOUR, &c);
    all_symm(&c, true);
    ct_export_opts_init(&o);
    cr_assert_eq(run("nccl-tuner", &o, &c, &out, &err), 0, "%s", err.msg);
    cr_expect(strstr(ct_text_str(&out.body), "\nallreduce,0,1023,tree,simple,0,1,4\n"), "%s",
              ct_text_str(&out.body));
    ct_export_out_release(&out);
    o.nccl_proto = "ll"; /* the caller's, not the config's */
    cr_assert_eq(run("nccl-env", &o, &c, &out, &err), CT_EUNSUPP);
    cr_expect(out.unchanged && strstr(err.msg, "nothing to export: no NCCL 2.27.5 setting follows "
                                               "from colltune's rules"),
              "%s", err.msg);
    ct_export_out_release(&out);
    ct_config_release(&c);
    /* only a measured NCCL section: the settings would say nothing; nccl-plugin exports it */
    nccl_config(&c);
    ct_export_opts_init(&o);
    cr_assert_eq(run("nccl-env", &o, &c, &out, &err), CT_EUNSUPP);
    cr_expect(strstr(err.msg, "(export its measured NCCL section: --format nccl-plugin)"), "%s",
              err.msg);
    ct_export_out_release(&out);
    ct_config_release(&c);
}

/* NCCL's verify sets a range it found slower back to NCCL's own choice by the range's start,
 * as the plugin read it (ct_config_lib_demote_at), in the section colltune keeps as written:
 * the copy it writes is read by the plugin as NCCL's own choice there and the same elsewhere;
 * a range no rule starts at is refused. */
Test(config, nccl_verified_copy_keeps_nccls_choice_where_slower)
{
    struct ct_config c;
    nccl_config(&c);
    struct ct_config *fixed = nccl_kept(&c);
    enum ct_coll coll = c.libs[0].sets[0].coll;
    cr_expect(!ct_config_lib_demote_at(fixed, "nccl", coll, 2, 1, 4097, CT_SET_BACK_SLOW),
              "no range starts there");
    cr_expect(!ct_config_lib_demote_at(fixed, "nccl", coll, 4, 1, 4096, CT_SET_BACK_SLOW),
              "no rule for 4 ranks");
    cr_expect(!ct_config_lib_demote_at(fixed, "ompi", coll, 2, 1, 4096, CT_SET_BACK_SLOW),
              "no such library");
    cr_assert(ct_config_lib_demote_at(fixed, "nccl", coll, 2, 1, 4096, CT_SET_BACK_SLOW));
    char path[] = "/tmp/ct-nccl-verified-XXXXXX";
    struct ct_nr_table t;
    char *txt = plugin_reads(fixed, path, &t);
    const struct ct_nr_range *m = ct_nr_match(&t, ncclFuncAllReduce, 2, 1, 5000);
    cr_expect(m && m->keep, "the slower range: NCCL's own choice");
    m = ct_nr_match(&t, ncclFuncAllReduce, 2, 1, 2u << 20);
    cr_expect(m && !m->keep && m->algo == NCCL_ALGO_TREE && m->proto == NCCL_PROTO_SIMPLE,
              "the others as measured");
    cr_expect(strstr(txt, "\"ring/LL128\""), "the old choice is the runner-up: %s", txt);
    ct_nr_free(&t);
    unlink(path);
    free(txt);
    kept_free(fixed, &c);
}

/* NCCL's verify cuts a range slower only at its edge to the sizes that gained
 * (ct_config_lib_trim_at), in the section colltune keeps as written: ring/LL128 [4 KiB, 1 MiB)
 * cut to [8 KiB, 512 KiB) gives [4, 8) KiB to NCCL's own choice below it (a neighbour that is
 * that already) and [512 KiB, 1 MiB) to a new range of NCCL's own choice (tree/Simple above it
 * is no such neighbour); the plugin reads the copy so, and the rule loses its verified mark.
 * A cut outside the range, or of a range no rule starts at, is refused. */
Test(config, nccl_verified_copy_cuts_a_range_slower_at_its_edge)
{
    struct ct_config c;
    nccl_config(&c);
    struct ct_config *fixed = nccl_kept(&c);
    enum ct_coll coll = c.libs[0].sets[0].coll;
    cr_assert_eq(ct_config_lib_verified_at(fixed, "nccl", coll, 2, 1, 0.8, 0), true);
    cr_expect(!ct_config_lib_trim_at(fixed, "nccl", coll, 2, 1, 4096, 2048, 65536),
              "below the range");
    cr_expect(!ct_config_lib_trim_at(fixed, "nccl", coll, 2, 1, 4096, 8192, 2u << 20), "beyond it");
    cr_expect(!ct_config_lib_trim_at(fixed, "nccl", coll, 2, 1, 4097, 8192, 65536),
              "no range starts there");
    cr_assert(ct_config_lib_trim_at(fixed, "nccl", coll, 2, 1, 4096, 8192, 512u << 10));
    char path[] = "/tmp/ct-nccl-cut-XXXXXX";
    struct ct_nr_table t;
    char *txt = plugin_reads(fixed, path, &t);
    static const struct {
        size_t bytes;
        int algo; /* -1: NCCL's own choice */
    } want[] = {{100, -1},
                {4096, -1},
                {8191, -1},
                {8192, NCCL_ALGO_RING},
                {(512u << 10) - 1, NCCL_ALGO_RING},
                {512u << 10, -1},
                {(1u << 20) - 1, -1},
                {1u << 20, NCCL_ALGO_TREE}};
    for (size_t k = 0; k < sizeof want / sizeof want[0]; k++) {
        const struct ct_nr_range *m = ct_nr_match(&t, ncclFuncAllReduce, 2, 1, want[k].bytes);
        cr_assert(m, "%zu B: a range", want[k].bytes);
        cr_expect(want[k].algo < 0 ? m->keep : !m->keep && m->algo == want[k].algo, "%zu B: %s",
                  want[k].bytes, m->keep ? "NCCL's own" : ct_nr_algo_name(m->algo));
    }
    cr_expect_eq(t.rules[0].nranges, 4, "default, ring/LL128, default, tree/Simple");
    cr_expect_eq(t.rules[0].verified_at[0], 0, "a changed rule is not verified");
    ct_nr_free(&t);
    unlink(path);
    free(txt);
    kept_free(fixed, &c);
}

/* A cut of the first range, which starts at 0 B, to its own start: cut, not set back whole
 * (0 meant "set back" to the copy, which then set the range back and counted it slower). */
Test(config, nccl_verified_copy_cuts_a_range_that_starts_at_0)
{
    struct ct_config c;
    nccl_config(&c);
    snprintf(c.libs[0].sets[0].rules[0].algo, sizeof c.libs[0].sets[0].rules[0].algo,
             "ring/Simple");
    c.libs[0].sets[0].rules[0].id = c.libs[0].sets[0].rules[1].id;
    struct ct_config *fixed = nccl_kept(&c);
    enum ct_coll coll = c.libs[0].sets[0].coll;
    cr_assert(ct_config_lib_trim_at(fixed, "nccl", coll, 2, 1, 0, 0, 2048));
    char path[] = "/tmp/ct-nccl-cut0-XXXXXX";
    struct ct_nr_table t;
    char *txt = plugin_reads(fixed, path, &t);
    const struct ct_nr_range *a = ct_nr_match(&t, ncclFuncAllReduce, 2, 1, 100),
                             *b = ct_nr_match(&t, ncclFuncAllReduce, 2, 1, 3000);
    cr_assert(a && b);
    cr_expect(!a->keep && a->algo == NCCL_ALGO_RING, "[0, 2 KiB): still ring");
    cr_expect(b->keep, "[2, 4) KiB: NCCL's own choice");
    ct_nr_free(&t);
    unlink(path);
    free(txt);
    kept_free(fixed, &c);
}

/* A range named "default" is NCCL's own choice whatever its optional "id" says (the plugin
 * reads no id): read back as id 0, a control for verify, not a rule judged on its gain. */
Test(config, nccl_default_range_is_nccls_own_whatever_its_id)
{
    struct ct_config c;
    nccl_config(&c);
    struct ct_config *fixed = nccl_kept(&c);
    struct ct_librules *l = &fixed->libs[0];
    char *at = strstr(l->raw, "\"id\":"); /* the first range's: the default's, 0 */
    cr_assert(at, "the default range's id in the section kept as written");
    at += strlen("\"id\":");
    at += strspn(at, " ");
    cr_assert_eq(*at, '0', "%.20s", at);
    *at = '7';
    struct ct_ruleset *sets = NULL;
    int n = ct_config_lib_raw_sets(l, &sets);
    cr_assert_geq(n, 1);
    cr_assert_str_eq(sets[0].rules[0].algo, "default");
    cr_expect_eq(sets[0].rules[0].id, 0, "id %d", sets[0].rules[0].id);
    cr_expect_neq(sets[0].rules[1].id, 0, "a forced range keeps its id");
    for (int i = 0; i < n; i++)
        ct_ruleset_release(&sets[i]);
    free(sets);
    kept_free(fixed, &c);
}

/* `show` (ct_config_print) shows an NCCL section read back, which colltune keeps in the
 * plugin's words (ct_config_lib_raw_sets): each range's ALGO/PROTO, its forced channel count,
 * the decision and the verify's record, as for the MPI libraries' sections. */
Test(config, show_prints_an_nccl_section_read_back)
{
    struct ct_config c;
    nccl_config(&c);
    c.libs[0].sets[0].rules[1].params.v[CT_P_CHANNELS] = 16;
    struct ct_config *back = nccl_kept(&c);
    cr_assert(ct_config_lib_verified_at(back, "nccl", CT_ALLREDUCE, 2, 1, 0.8, 1.12));
    char *txt = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&txt, &len);
    ct_config_print(f, back);
    fclose(f);
    cr_expect(strstr(txt, "geomean 0.800 exported/default, what it could tell 1.12x (the median "
                          "size)\n"),
              "%s", txt);
    cr_expect(strstr(txt, "NCCL 2.28.9 (measured, --lib nccl) allreduce: 2 ranks"), "%s", txt);
    cr_expect(strstr(txt, "ring/LL128   channels=16"), "%s", txt);
    cr_expect(strstr(txt, "tree/Simple  defaults"), "%s", txt);
    cr_expect(strstr(txt, "verified against the defaults at 20"), "%s", txt);
    cr_expect(strstr(txt, "geomean 0.800"), "%s", txt);
    free(txt);
    kept_free(back, &c);
}

/* csv writes every rule, the measured library sections' too (a config of them alone was a
 * header line): colltune's own rules as "colltune", each section's as its library, with the
 * parameters the library takes (Open MPI's segsize as chunk, NCCL's channels). */
Test(golden, csv_writes_the_library_sections)
{
    struct ct_config c;
    struct ct_export_opts o;
    struct ct_export_out out;
    struct ct_err err = {0};
    load("tests/fixtures/export/config-ompi-2ranks.json", &c);
    ct_export_opts_init(&o);
    cr_assert_eq(run("csv", &o, &c, &out, &err), 0, "%s", err.msg);
    cr_expect(strstr(out.body.s, "allreduce,2,1,2,float32,sum,1048576,inf,segmented_ring,65536,"),
              "%s", out.body.s);
    cr_expect(strstr(out.body.s, ",ring,1.5000,no,ompi\n"), "%s", out.body.s);
    cr_expect(!strstr(out.body.s, ",colltune\n"), "no rules of colltune's own: %s", out.body.s);
    ct_export_out_release(&out);
    ct_config_release(&c);
    nccl_config(&c);
    c.libs[0].sets[0].rules[1].params.v[CT_P_CHANNELS] = 16;
    struct ct_config *back = nccl_kept(&c); /* as read back: the section kept as written */
    cr_assert_eq(run("csv", &o, back, &out, &err), 0, "%s", err.msg);
    cr_expect(strstr(out.body.s, ",ring/LL128,,,16,"), "%s", out.body.s);
    cr_expect(strstr(out.body.s, ",nccl\n"), "%s", out.body.s);
    ct_export_out_release(&out);
    kept_free(back, &c);
}

/* Exports copy the config's strings into comments of files a shell sources (env, Slurm
 * TaskProlog): a string with a newline would end the comment, so the reader refuses control
 * characters, naming the field; so does the NCCL plugin's reader in its section. */
Test(config, strings_on_one_line)
{
    char *base;
    size_t len;
    struct ct_err err = {0};
    cr_assert_eq(ct_file_read(CLUSTER, &base, &len, &err), 0);
    char *v = strstr(base, "\"0.1.0-test\"");
    cr_assert_not_null(v);
    char *doc = ct_xmalloc(len + 32);
    sprintf(doc, "%.*s\"0.1\\ntouch /tmp/x\"%s", (int)(v - base), base,
            v + strlen("\"0.1.0-test\""));
    struct ct_config c;
    cr_assert_lt(ct_config_json_parse(doc, &c, &err), 0, "accepted a newline");
    cr_expect(strstr(err.msg, "version: control character 0x0a"), "%s", err.msg);
    free(doc);
    free(base);

    struct ct_config n;
    nccl_config(&n);
    snprintf(n.libs[0].version, sizeof n.libs[0].version, "2.28\techo");
    char *txt = ct_config_json_dumps(&n), path[] = "/tmp/ct-nccl-ctl-XXXXXX", msg[256];
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    cr_assert_eq(write(fd, txt, strlen(txt)), (ssize_t)strlen(txt));
    close(fd);
    struct ct_nr_table t;
    cr_assert_lt(ct_nr_load(path, &t, msg, sizeof msg), 0, "the plugin accepted a tab");
    cr_expect(strstr(msg, "libraries[0].version: control character 0x09"), "%s", msg);
    unlink(path);
    free(txt);
    ct_config_release(&n);
}

/* NCCL's verify marks a rule it found no slower in the section colltune keeps as written
 * (ct_config_lib_verified_at): the plugin's reader reads the record back, nccl-tuner says
 * verified where it was noted "measured, not verified"; the record survives a round trip, and
 * a failed verify or a range set back clears it. */
Test(config, nccl_verified_record)
{
    struct ct_config c, raw, back;
    struct ct_err err = {0};
    nccl_config(&c);
    char *txt0 = ct_config_json_dumps(&c);
    cr_assert_eq(ct_config_json_parse(txt0, &raw, &err), 0, "%s", err.msg);
    cr_assert_not_null(raw.libs[0].raw, "NCCL's section is kept as written");
    char p1[] = "/tmp/ct-nccl-vrec-XXXXXX", p2[] = "/tmp/ct-nccl-vrec-XXXXXX";
    struct ct_nr_table t;
    char *txt = plugin_reads(&raw, p1, &t);
    cr_expect_eq(t.rules[0].verified_at[0], 0, "never verified");
    ct_nr_free(&t);
    struct ct_export_opts o;
    struct ct_export_out out;
    ct_export_opts_init(&o);
    o.config_path = p1;
    setenv("COLLTUNE_NCCL_PLUGIN", p1, 1); /* the export only names the plugin: any file */
    const char *nv = "allreduce on 2 ranks (1 x 2): measured, not verified against NCCL's "
                     "defaults; run `colltune sweep --verify CONFIG --lib nccl`";
    cr_assert_eq(run("nccl-plugin", &o, &raw, &out, &err), 0, "%s", err.msg);
    bool noted = false;
    for (size_t i = 0; i < out.nnotes; i++)
        noted = noted || strstr(out.notes[i], nv);
    cr_expect(noted && strstr(out.body.s, nv), "noted, in the file too: %s", out.body.s);
    ct_export_out_release(&out);
    unlink(p1);
    free(txt);

    cr_expect(!ct_config_lib_verified_at(&raw, "nccl", CT_ALLREDUCE, 4, 1, 0.9, 0), "no such rule");
    cr_expect(!ct_config_lib_verified_at(&raw, "mpich", CT_ALLREDUCE, 2, 1, 0.9, 0), "no section");
    cr_assert(ct_config_lib_verified_at(&raw, "nccl", CT_ALLREDUCE, 2, 1, 0.875, 1.25));
    txt = plugin_reads(&raw, p2, &t);
    const char *at = t.rules[0].verified_at;
    cr_assert(strlen(at) == 20 && at[10] == 'T' && at[19] == 'Z', "%s", at);
    cr_expect_float_eq(t.rules[0].verified_geomean, 0.875, 1e-9);
    cr_expect_float_eq(t.rules[0].verified_tell, 1.25, 1e-9, "the plugin reads what it could tell");
    { /* a tell below 1 is not recorded: the plugin would refuse the file */
        struct ct_config low;
        char *doc = ct_config_json_dumps(&raw);
        cr_assert_eq(ct_config_json_parse(doc, &low, &err), 0, "%s", err.msg);
        free(doc);
        cr_assert(ct_config_lib_verified_at(&low, "nccl", CT_ALLREDUCE, 2, 1, 0.875, 0.5));
        doc = ct_config_json_dumps(&low);
        cr_expect_null(strstr(doc, "\"tell\""), "%s", doc);
        free(doc);
        struct ct_nr_table lt;
        char p3[] = "/tmp/ct-tell-XXXXXX";
        free(plugin_reads(&low, p3, &lt));
        unlink(p3);
        cr_expect_eq(lt.rules[0].verified_tell, 0);
        ct_nr_free(&lt);
        ct_config_release(&low);
    }
    cr_expect_eq(t.rules[1].verified_at[0], 0, "alltoall: not marked");
    char line[400];
    snprintf(line, sizeof line,
             "\n# allreduce on 2 ranks (1 x 2): verified against NCCL 2.28.9's defaults at %s "
             "(colltune sweep --verify: no size slower beyond its interval): geomean 0.875 "
             "exported/default; what it could tell: a loss of 1.25x at a size would have shown "
             "about half the time (the median size)\n",
             at);
    ct_nr_free(&t);
    o.config_path = p2;
    setenv("COLLTUNE_NCCL_PLUGIN", p2, 1);
    cr_assert_eq(run("nccl-plugin", &o, &raw, &out, &err), 0, "%s", err.msg);
    cr_expect(strstr(out.body.s, line), "%s", out.body.s);
    cr_expect_null(strstr(out.body.s, "not verified"), "%s", out.body.s);
    ct_export_out_release(&out);
    unlink(p2);
    cr_assert_eq(ct_config_json_parse(txt, &back, &err), 0, "%s", err.msg);
    char *txt2 = ct_config_json_dumps(&back);
    cr_expect_str_eq(txt, txt2, "written back the same");
    free(txt2);
    ct_config_release(&back);

    cr_assert(ct_config_lib_demote_at(&raw, "nccl", CT_ALLREDUCE, 2, 1, 4096, CT_SET_BACK_SLOW));
    txt2 = ct_config_json_dumps(&raw);
    cr_expect_null(strstr(txt2, "\"verified\""), "a range set back: no record: %s", txt2);
    free(txt2);
    cr_assert(ct_config_lib_verified_at(&raw, "nccl", CT_ALLREDUCE, 2, 1, 0.5, 0));
    cr_expect(!ct_config_lib_verified_at(&raw, "nccl", CT_ALLREDUCE, 2, 1, 0, 0),
              "failed: cleared");
    txt2 = ct_config_json_dumps(&raw);
    cr_expect_null(strstr(txt2, "\"verified\""), "%s", txt2);
    free(txt2);
    /* every range at NCCL's own choice: nothing to vouch for, no mark */
    struct ct_ruleset *rs = NULL;
    int nrs = ct_config_lib_raw_sets(ct_config_lib(&raw, "nccl"), &rs);
    bool others_own = true; /* the section's other rules */
    cr_expect(!ct_config_lib_keeps_own(&raw, "nccl"), "an allreduce range NCCL's choice is not");
    for (int i = 0; i < nrs; i++) {
        for (int k = 0; k < rs[i].nrules; k++)
            if (rs[i].coll == CT_ALLREDUCE)
                ct_config_lib_demote_at(&raw, "nccl", CT_ALLREDUCE, rs[i].nranks, rs[i].nnodes,
                                        rs[i].rules[k].min_bytes, CT_SET_BACK_NOGAIN);
            else
                others_own = others_own && !strcmp(rs[i].rules[k].algo, "default");
        ct_ruleset_release(&rs[i]);
    }
    free(rs);
    cr_expect(!ct_config_lib_verified_at(&raw, "nccl", CT_ALLREDUCE, 2, 1, 0.5, 0),
              "NCCL's own choice everywhere: not marked");
    cr_expect_eq(ct_config_lib_keeps_own(&raw, "nccl"), others_own,
                 "the section changes nothing once no rule does");
    cr_expect(ct_config_lib_keeps_own(&raw, "mpich"), "no section: nothing");
    unsetenv("COLLTUNE_NCCL_PLUGIN");
    free(txt);
    free(txt0);
    ct_config_release(&raw);
    ct_config_release(&c);
}

/* A sweep on GPU buffers staged through tcp is a tcp sweep (the memory in its own field of
 * the fingerprint, which the JSON keeps and a config without it reads as host memory) to
 * the NCCL env export: its streams become NCCL's sockets as without staging. */
Test(export, nccl_env_reads_a_staged_transport)
{
    struct ct_config c, back;
    load(CLUSTER, &c);
    cr_assert_str_eq(c.fp.transport, "tcp");
    cr_assert_str_eq(c.fp.mem, "", "a config without \"memory\" is on host memory");
    char *plain = ct_config_json_dumps(&c);
    cr_expect(!strstr(plain, "\"memory\""), "host memory is not written");
    free(plain);
    snprintf(c.fp.mem, sizeof c.fp.mem, "cuda");
    struct ct_export_opts o;
    struct ct_export_out out;
    struct ct_err err = {0};
    char *txt = ct_config_json_dumps(&c);
    cr_assert_eq(ct_config_json_parse(txt, &back, &err), 0, "%s", err.msg);
    cr_expect(strstr(txt, "\"memory\": \"cuda\""), "%s", txt);
    cr_expect_str_eq(back.fp.mem, "cuda");
    cr_expect_str_eq(back.fp.transport, "tcp");
    free(txt);
    ct_config_release(&back);
    ct_export_opts_init(&o);
    cr_assert_eq(run("nccl-env", &o, &c, &out, &err), 0, "%s", err.msg);
    cr_expect(strstr(ct_text_str(&out.body), "NCCL_NSOCKS_PERTHREAD=2"), "%s",
              ct_text_str(&out.body));
    ct_export_out_release(&out);
    ct_config_release(&c);
}
