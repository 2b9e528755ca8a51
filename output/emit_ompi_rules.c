/* SPDX-License-Identifier: MIT */
/*
 * ompi-rules: an Open MPI coll/tuned dynamic rules file in the classic format (read by 4.1,
 * 5.0 and 6.0 alike; comm-size sections from key 0, message-size rules from size 0), plus the
 * MCA parameters that load it as an openmpi-mca-params.conf snippet and OMPI_MCA_ exports.
 * Numbers are plain decimal: the reader uses fscanf("%li"), so a leading 0 would mean octal.
 * With a measured Open MPI section in the config (sweep --lib ompi) the file carries those
 * rules (Open MPI's own ids, alg 0 where its default measured best); without one, colltune's
 * rules mapped to Open MPI's algorithms, labelled as not measured. Either way a file that would
 * be alg 0 everywhere (changing nothing) is refused. A measured collective whose rules keep
 * Open MPI's own decision at every size, on every rank count, is left out of the file:
 * coll/tuned then keeps its fixed decision for it, with no rules lookup per call (as verify
 * measured it: the settings' figure); a set that keeps it beside another rank count's that
 * does not is one alg-0 rule in its section (the same algorithms, a rules lookup per call).
 * Where no collective is left but launch settings change the job, the loader lines set those
 * alone and do not load the file.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export.h"
#include "../backend/libmod.h"

/* classic COLL_ID (ompi/mca/coll/base/coll_base_functions.h, same in 4.1.x .. main) */
static int coll_id(enum ct_coll c)
{
    switch (c) {
    case CT_ALLGATHER: return 0;
    case CT_ALLREDUCE: return 2;
    case CT_ALLTOALL: return 3;
    case CT_REDUCESCATTER: return 12;
    default: return -1;
    }
}

static const char *ompi_coll_name(enum ct_coll c)
{
    return c == CT_REDUCESCATTER ? "reduce_scatter" : ct_coll_name(c);
}

/* The rule's faninout field. Only allgather's alg 2 reads it, from 6.0 (bruck-k-fanout: the
 * radix; 0 or 1 never ends its loop, `distance *= radix`): 4, coll_tuned_init_tree_fanout's
 * default, the radix a forced bruck-k-fanout runs with (coll_tuned_allgather_algorithm_tree_
 * fanout), so what sweep --lib ompi measured on 6.0. 4.1 and 5.0 ignore it (their alg 2 is
 * radix-2 Bruck); 0 elsewhere. */
static int faninout(enum ct_coll coll, int id)
{
    return coll == CT_ALLGATHER && id == 2 ? 4 : 0;
}

/* A comm-size section of one rule, Open MPI's fixed decision, from `from` ranks up to `to`
 * (0: no end). */
static void fixed_section(struct ct_text *t, int from, int to)
{
    char what[64];
    if (!from)
        snprintf(what, sizeof what, "communicators of fewer ranks");
    else if (!to)
        snprintf(what, sizeof what, "communicators of more ranks");
    else if (from == to)
        snprintf(what, sizeof what, "communicators of %d ranks", from);
    else
        snprintf(what, sizeof what, "communicators of %d to %d ranks", from, to);
    ct_text_printf(t, "%-12d # %s\n", from, what);
    ct_text_put(t, "1            # one message-size rule\n");
    ct_text_put(t, "0 0 0 0      # alg 0: Open MPI's fixed decision\n");
}

/* A set's comm-size section head: its rank count, then its n message-size rules. */
static void set_head(struct ct_text *t, const struct ct_ruleset *s, const char *whose, int n,
                     const struct ct_size_meaning *m)
{
    char set[96];
    ct_text_printf(t, "%-12d # communicators of %d ranks: %s rules of %s\n", s->nranks, s->nranks,
                   whose, ct_export_set_str(s, set, sizeof set));
    ct_text_printf(t, "%-12d # message-size rules; size = %s\n", n, m->what);
}

/* A measured ruleset (Open MPI's own ids): sizes converted to Open MPI's unit; ranges where
 * Open MPI's default measured best, or verify set a row back, keep alg 0, neighbours of them
 * one rule. Returns the rules that change something. */
static int emit_measured(const struct ct_ruleset *s, struct ct_export_out *out)
{
    struct ct_text *t = &out->body;
    const struct ct_size_meaning *m = ct_algomap_size(CT_LIB_OMPI, s->coll);
    char rg[64], line[64];
    int n = 0, changed = 0;
    uint64_t *lo = ct_xcalloc((size_t)s->nrules, sizeof *lo), hi;
    const struct ct_rule **r = ct_xcalloc((size_t)s->nrules, sizeof *r);
    for (int i = 0; i < s->nrules; i++)
        if (ct_algomap_range(m, s->nranks, s->rules[i].min_bytes, s->rules[i].max_bytes, &lo[n],
                             &hi) &&
            !(n > 0 && s->rules[i].id == 0 && r[n - 1]->id == 0))
            r[n++] = &s->rules[i];
    set_head(t, s, "measured", n, m);
    for (int i = 0; i < n; i++) {
        ct_export_range_str(lo[i], i + 1 < n ? lo[i + 1] : CT_BYTES_INF, rg, sizeof rg);
        snprintf(line, sizeof line, "%llu %d %d %llu", (unsigned long long)lo[i], r[i]->id,
                 faninout(s->coll, r[i]->id), (unsigned long long)r[i]->params.v[CT_P_CHUNK]);
        if (r[i]->id == 0 && r[i]->set_back[0])
            ct_text_printf(t, "%-28s # %s: Open MPI's own decision; %s set back by verify (%s)\n",
                           line, rg, r[i]->runner_up, ct_set_back_words(r[i]));
        else if (r[i]->id == 0)
            ct_text_printf(t, "%-28s # %s: Open MPI's own decision, no row measured faster; kept\n",
                           line, rg);
        else
            ct_text_printf(t, "%-28s # %s: %s, %.2fx vs %s, confidence %.2f%s\n", line, rg,
                           r[i]->algo, r[i]->gain, r[i]->runner_up[0] ? r[i]->runner_up : "-",
                           r[i]->confidence, r[i]->tie ? " (tie)" : "");
        changed += r[i]->id != 0;
    }
    free(lo);
    free(r);
    return changed;
}

/* The rules of a measured ruleset that name an algorithm (not alg 0) where Open MPI compares. */
static int measured_changes(const struct ct_ruleset *s)
{
    const struct ct_size_meaning *m = ct_algomap_size(CT_LIB_OMPI, s->coll);
    uint64_t lo, hi;
    int n = 0;
    for (int i = 0; i < s->nrules; i++)
        n += s->rules[i].id != 0 &&
             ct_algomap_range(m, s->nranks, s->rules[i].min_bytes, s->rules[i].max_bytes, &lo, &hi);
    return n;
}

/* A ruleset of colltune's own, mapped to Open MPI's ids. Returns the rules that name an
 * algorithm (not alg 0). */
static int emit_coll(const struct ct_ruleset *s, const struct ct_export_opts *o,
                     struct ct_export_out *out)
{
    struct ct_text *t = &out->body;
    const struct ct_size_meaning *m = ct_algomap_size(CT_LIB_OMPI, s->coll);
    struct ct_xrange *xr;
    int n, changed = 0;
    char rg[64];
    ct_export_map(s, CT_LIB_OMPI, o, out, &xr, &n);
    set_head(t, s, "colltune's", n, m);
    for (int i = 0; i < n; i++) {
        const struct ct_xrange *x = &xr[i];
        char line[64];
        ct_export_range_str(x->lo, x->hi, rg, sizeof rg);
        if (!x->map) {
            snprintf(line, sizeof line, "%llu 0 0 0", (unsigned long long)x->lo);
            ct_text_printf(t, "%-28s # ", line);
            ct_export_note_unmapped(out, t, "", s, CT_LIB_OMPI, x,
                                    "alg 0: Open MPI's fixed rules decide");
            continue;
        }
        uint64_t seg = 0;
        if (x->map->id == 5) { /* segmented_ring: SEGSIZE = colltune chunk */
            struct ct_params p = x->rule->params;
            ct_params_defaults(&p);
            seg = p.v[CT_P_CHUNK];
        }
        snprintf(line, sizeof line, "%llu %d %d %llu", (unsigned long long)x->lo, x->map->id,
                 faninout(s->coll, x->map->id), (unsigned long long)seg);
        ct_text_printf(t, "%-28s # %s: colltune %s -> %s (%s: %s)\n", line, rg, x->rule->algo,
                       x->map->target, ct_match_name(x->map->match), x->map->note);
        changed++;
    }
    free(xr);
    return changed;
}

/* A collective's sets in the file, fewest ranks first (ct_export_by_ranks). */
struct coll_sets {
    const struct ct_ruleset **s;
    int n;
    bool in_file;
};

/* A collective: its id, its comm-size sections (Open MPI takes the last whose size is not
 * above the communicator's): the fixed decision from 0 ranks, each set's rules at its rank
 * count with the fixed decision again between rank counts not measured and above the last.
 * Rules reach only communicators of the size they were measured (and verified) on. Returns
 * the rules that change something. */
static int emit_collective(const struct coll_sets *cs, bool measured,
                           const struct ct_export_opts *o, struct ct_export_out *out)
{
    struct ct_text *t = &out->body;
    const struct ct_ruleset *const *s = cs->s;
    int nsec = 2 + cs->n, changed = 0;
    for (int k = 1; k < cs->n; k++)
        nsec += s[k]->nranks > s[k - 1]->nranks + 1;
    ct_text_printf(t, "%-12d # %s: %s rules\n", coll_id(s[0]->coll), ompi_coll_name(s[0]->coll),
                   measured ? "measured" : "colltune's");
    ct_text_printf(t, "%-12d # comm-size sections: the rules only where measured\n", nsec);
    fixed_section(t, 0, 0);
    for (int k = 0; k < cs->n; k++) {
        if (k && s[k]->nranks > s[k - 1]->nranks + 1)
            fixed_section(t, s[k - 1]->nranks + 1, s[k]->nranks - 1);
        changed += measured ? emit_measured(s[k], out) : emit_coll(s[k], o, out);
    }
    fixed_section(t, s[cs->n - 1]->nranks + 1, 0);
    return changed;
}

int ct_emit_ompi_rules(const struct ct_config *c, const struct ct_export_opts *o,
                       struct ct_export_out *out, struct ct_err *err)
{
    static const enum ct_coll order[] = {CT_ALLREDUCE, CT_ALLGATHER, CT_REDUCESCATTER, CT_ALLTOALL};
    struct coll_sets cs[4];
    const struct ct_librules *lib = ct_config_lib(c, "ompi");
    /* a measured section targets the Open MPI it was measured with, unless --lib-version */
    const char *ver = lib && !o->version ? lib->version : ct_export_version(o, CT_LIB_OMPI);
    const char *path = o->path ? o->path : "FILE";
    struct ct_text *t = &out->body;
    int n = 0, changed = 0, nfile = 0;
    for (int i = 0; i < 4; i++) {
        cs[n] = (struct coll_sets){0};
        cs[n].n = ct_export_by_ranks(lib ? lib->sets : c->sets, lib ? lib->nsets : c->nsets, o,
                                     order[i], &cs[n].s);
        /* a measured collective at Open MPI's own choice everywhere: left out */
        for (int k = 0; k < cs[n].n; k++)
            cs[n].in_file |= !lib || measured_changes(cs[n].s[k]) > 0;
        if (cs[n].n) {
            nfile += cs[n].in_file;
            n++;
        } else
            free(cs[n].s);
    }
    /* no rule changes Open MPI's choice, but launch settings change the job: they alone */
    bool settings_only = lib && n && !nfile && lib->nenv;
    if (!lib)
        ct_export_note_mapped(out, CT_LIB_OMPI);
    ct_export_header(t, "# ", "Open MPI coll/tuned dynamic rules, classic format (4.1, 5.0, 6.0)",
                     c, CT_LIB_OMPI, o);
    if (lib)
        ct_text_printf(t,
                       "# measured with %s %s (colltune sweep --lib ompi); collectives not "
                       "listed keep Open MPI's\n# defaults\n",
                       lib->name, lib->version);
    for (int i = 0; lib && i < n; i++)
        for (int k = 0; k < cs[i].n; k++)
            ct_export_verified(out, t, "# ", lib, cs[i].s[k]);
    struct ct_settings set; /* the loader's variables: the launch settings first */
    ct_settings_init(&set);
    ct_export_lib_env(out, t, "# ", lib, o, &set);
    ct_text_printf(t,
                   "# target Open MPI %s. Each rule: size alg faninout segsize; it applies "
                   "from its size up\n# to the next rule's. alg 0 = Open MPI's fixed "
                   "decision.\n",
                   ver);
    if (settings_only)
        ct_text_put(t, "# not loaded: no rule changes Open MPI's own decision, so the export is "
                       "its launch settings\n# alone (the loader lines beside this file set "
                       "them, not dynamic rules)\n");
    else
        ct_text_printf(t,
                       "# load: OMPI_MCA_coll_tuned_use_dynamic_rules=1 "
                       "OMPI_MCA_coll_tuned_dynamic_rules_filename=%s\n",
                       path);
    for (size_t i = 0; i < out->nnotes; i++)
        ct_text_printf(t, "# %s\n", out->notes[i]);
    for (int i = 0; i < n; i++)
        for (int k = 0; !cs[i].in_file && k < cs[i].n; k++) {
            char set[96];
            ct_text_printf(t,
                           "# %s: Open MPI's own decision at every size: not in the file "
                           "(coll/tuned keeps its\n# fixed decision for a collective the "
                           "file does not name, with no rules lookup)\n",
                           ct_export_set_str(cs[i].s[k], set, sizeof set));
        }
    ct_text_printf(t, "%-12d # collectives\n", nfile);
    for (int i = 0; i < n; i++)
        if (cs[i].in_file)
            changed += emit_collective(&cs[i], lib != NULL, o, out);
    for (int i = 0; i < n; i++)
        free(cs[i].s);

    /* the loaders: MCA conf snippet and OMPI_MCA_ exports; on Open MPI 5.0+ what coll/han
     * does to them, unless the launch settings exclude it (sweep --env OMPI_MCA_coll=^han) */
    char excl[200] = "^han"; /* the coll value that excludes han: the settings' list + han */
    bool han_off = false, coll = false;
    for (int i = 0; lib && i < lib->nenv; i++)
        if (!strcmp(lib->env[i].name, "OMPI_MCA_coll") && lib->env[i].value[0] == '^') {
            char list[sizeof lib->env[i].value];
            snprintf(list, sizeof list, "%s", lib->env[i].value + 1);
            for (char *sp = NULL, *t = strtok_r(list, ",", &sp); t; t = strtok_r(NULL, ",", &sp))
                han_off |= !strcmp(t, "han");
            snprintf(excl, sizeof excl, "%.150s,han", lib->env[i].value);
            coll = true;
        }
    bool note = ct_version_cmp(ver, "5.0") >= 0 && !han_off && !settings_only;
    const char *instead = coll ? " (in place of the launch setting's line below)" : "";
    char han[640] = "";
    if (note)
        snprintf(han, sizeof han,
                 "# Open MPI 5.0+: coll/han (priority 35, above coll/tuned's 30) serves "
                 "communicators across\n# hosts with several ranks on a host and runs its own "
                 "AllReduce and AllGather there; these\n# rules reach only its "
                 "sub-communicators. To apply them to the whole one, measure with\n# "
                 "`colltune sweep --lib ompi --env OMPI_MCA_coll=%s` (verify judges that "
                 "against han), or%s:\n",
                 excl, instead);
    /* the sidecars say what they load, as the file does (a job reads only them) */
    char what[160];
    if (lib)
        snprintf(what, sizeof what,
                 "# measured with %.40s %.40s (colltune sweep --lib ompi); whether verified: "
                 "the rules file's header\n",
                 lib->name, lib->version);
    else
        snprintf(what, sizeof what,
                 "# mapped from colltune's own algorithms, not measured; run `colltune sweep "
                 "--lib ompi`\n");
    for (int i = 0; i < 2; i++) {
        ct_export_header(i ? &out->env : &out->mca, "# ", "Open MPI coll/tuned rules: its loader",
                         c, CT_LIB_OMPI, o);
        ct_text_put(i ? &out->env : &out->mca, what);
    }
    if (settings_only)
        ct_text_printf(&out->mca,
                       "# openmpi-mca-params.conf lines of the launch settings measured with "
                       "the rules in %s\n# (not loaded: none of them changes Open MPI's "
                       "choice; $HOME/.openmpi/mca-params.conf or\n# "
                       "$prefix/etc/openmpi-mca-params.conf; read on every node)\n",
                       path);
    else
        ct_text_printf(&out->mca,
                       "# openmpi-mca-params.conf lines that load the coll/tuned rules "
                       "in %s\n# ($HOME/.openmpi/mca-params.conf or "
                       "$prefix/etc/openmpi-mca-params.conf; read on every node)\n"
                       "coll_tuned_use_dynamic_rules = 1\n"
                       "coll_tuned_dynamic_rules_filename = %s\n",
                       path, path);
    if (note)
        ct_text_printf(&out->mca, "%s# coll = %s\n", han, excl);
    /* glibc's allocator variables: Open MPI passes them in a list (room for every setting) */
    char libc[CT_LIB_ENV_MAX * sizeof lib->env[0]] = "";
    size_t lo = 0;
    for (int i = 0, k = 0; lib && i < lib->nenv; i++) { /* OMPI_MCA_x is parameter x */
        bool glibc = ct_libmod_env_libc(lib->env[i].name);
        if (glibc && lo < sizeof libc)
            lo += (size_t)snprintf(libc + lo, sizeof libc - lo, "%s%s=%s", lo ? ";" : "",
                                   lib->env[i].name, lib->env[i].value);
        if (!glibc)
            ct_text_printf(&out->mca, "%s%s = %s\n",
                           k++ ? "" : "# the launch settings it was measured with\n",
                           lib->env[i].name + strlen("OMPI_MCA_"), lib->env[i].value);
    }
    if (libc[0])
        ct_text_printf(&out->mca,
                       "# glibc's allocator variables it was measured with, which Open MPI "
                       "sets in every rank's\n# environment from this list (a site's own "
                       "mca_base_env_list: add them to it, ';' between;\n# Open MPI 4.1's "
                       "mpirun refuses -x beside a list)\nmca_base_env_list = %s\n",
                       libc);
    ct_text_printf(&out->env,
                   settings_only ? "# the launch settings measured with the rules in %s (not "
                                   "loaded: none of them\n# changes Open MPI's choice; mpirun "
                                   "passes OMPI_MCA_ variables to every rank)\n%s"
                                 : "# load the Open MPI coll/tuned rules in %s (mpirun passes "
                                   "OMPI_MCA_ variables to every rank)\n%s",
                   path,
                   libc[0] ? "# glibc's MALLOC_ variables below reach only the ranks on "
                             "mpirun's own host: across hosts\n# add -x NAME to mpirun for "
                             "each, or load the .mca.conf's mca_base_env_list\n"
                           : "");
    if (note)
        ct_text_printf(&out->env, "%s# export OMPI_MCA_coll='%s'\n", han, excl);
    if (!settings_only) {
        ct_settings_add(&set, "OMPI_MCA_coll_tuned_use_dynamic_rules", "1", NULL);
        ct_settings_add(&set, "OMPI_MCA_coll_tuned_dynamic_rules_filename", path, NULL);
    }
    ct_settings_exports(&set, &out->env);
    ct_settings_release(&set);
    if (!n)
        return ct_err_set(err, CT_EUNSUPP, "no rules to export");
    out->unchanged = !changed && !(lib && lib->nenv); /* a launch setting changes the job */
    if (out->unchanged && !lib) /* a file of alg 0 only: Open MPI's fixed rules everywhere */
        return ct_export_maps_nothing(out, o, CT_LIB_OMPI,
                                      "the file would keep Open MPI's fixed rules at every size",
                                      NULL, err);
    if (out->unchanged)
        return ct_err_set(err, CT_EUNSUPP,
                          "nothing to export: Open MPI's defaults measured best, or kept by "
                          "sweep --verify, at every size "
                          "(%s %s); they stay, no file written",
                          lib->name, lib->version);
    return 0;
}
