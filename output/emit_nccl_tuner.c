/* SPDX-License-Identifier: MIT */
/*
 * nccl-tuner: the CSV of NCCL's example tuner plugin (plugins/tuner/example, ext-tuner/example
 * before 2.29.7; parser unchanged from 2.27.5 to 2.30.7), never with channels -1 (the stock
 * plugin's 1 channel; a mapped line writes 0, NCCL's own count), plus the env lines that load
 * it. Every line stays under the plugin's 256-byte line buffer.
 * From the config's measured NCCL section (sweep --lib nccl) where it has one, read with the
 * plugin's own reader; else mapped from colltune's rules, labelled so. Either way a file of no
 * line is refused: the stock plugin would run every call on 1 channel, slower than no file.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../plugin/nccl_rules.h"
#include "export.h"

#define NCCL_MIN_VERSION "2.27.5"

/* A mapped rule's channels: --nccl-channels, else 0 (NCCL keeps its own count: src/enqueue.cc
 * ncclGetAlgoInfo). A host-memory ring's channel count says nothing of NCCL's (it wrote 1:
 * every call of that collective capped at one channel). */
static int channels_of(const struct ct_export_opts *o)
{
    return o->nccl_channels >= 0 ? o->nccl_channels : 0;
}

/* A ruleset of colltune's own, mapped to NCCL's algorithms. Returns the lines written. */
static int emit_set(const struct ct_ruleset *s, const struct ct_export_opts *o, const char *proto,
                    struct ct_export_out *out)
{
    struct ct_text *t = &out->body;
    char set[96], rg[64];
    struct ct_xrange *xr;
    int n, lines = 0;
    if (s->coll == CT_ALLTOALL) {
        ct_export_note(out,
                       "%s: NCCL runs alltoall as grouped send/receive, which no tuner "
                       "line selects; left out",
                       ct_export_set_str(s, set, sizeof set));
        ct_text_printf(t, "# %s\n", out->notes[out->nnotes - 1]);
        return 0;
    }
    ct_export_map(s, CT_LIB_NCCL, o, out, &xr, &n);
    ct_text_printf(t, "# %s\n", ct_export_set_str(s, set, sizeof set));
    for (int i = 0; i < n; i++) {
        const struct ct_xrange *x = &xr[i];
        if (!x->map) {
            ct_export_note_unmapped(out, t, "# ", s, CT_LIB_NCCL, x,
                                    "no line: NCCL picks, on 1 channel (stock example plugin)");
            continue;
        }
        ct_text_printf(t, "# %s: colltune %s -> %s (%s: %s)\n",
                       ct_export_range_str(x->lo, x->hi, rg, sizeof rg), x->rule->algo,
                       x->map->target, ct_match_name(x->map->match), x->map->note);
        ct_text_printf(t, "%s,%llu,%llu,%s,%s,%d,%d,%d\n", ct_coll_name(s->coll),
                       (unsigned long long)x->lo,
                       (unsigned long long)(x->hi == CT_BYTES_INF ? CT_BYTES_INF : x->hi - 1),
                       x->map->target, proto, channels_of(o), s->nnodes, s->nranks);
        lines++;
    }
    free(xr);
    return lines;
}

/* The config's measured NCCL section (as colltune's plugin reads it), one line per range that
 * is not NCCL's own choice; with --nranks N the rules of N ranks only. */
static int emit_measured(const struct ct_nr_table *nt, const struct ct_export_opts *o,
                         struct ct_export_out *out)
{
    int lines = 0;
    struct ct_text *t = &out->body;
    ct_text_printf(t,
                   "# measured with NCCL %s (colltune sweep --lib nccl): each line is the "
                   "(algorithm, protocol)\n# measured fastest; channels as the section names "
                   "them, 0 where it names none (NCCL's own)\n",
                   *nt->version ? nt->version : "(version not recorded)");
    /* what sweep --verify --lib nccl measures is colltune's own plugin, which leaves NCCL's own
     * choice where this file has no line; the example plugin does not */
    ct_export_note(out, "not verified: `colltune sweep --verify --lib nccl` checks colltune's own "
                        "tuner plugin reading the config (--format nccl-plugin), not NCCL's "
                        "example plugin reading this CSV");
    ct_text_printf(t, "# %s\n", out->notes[out->nnotes - 1]);
    for (int i = 0; i < nt->nrules; i++) {
        const struct ct_nr_rule *u = &nt->rules[i];
        if (o->nranks > 0 && u->nranks != o->nranks)
            continue;
        if (u->func < 0) {
            ct_text_printf(t,
                           "# alltoall, %ld ranks on %ld nodes: grouped send/receive, which "
                           "no tuner line selects\n",
                           u->nranks, u->nnodes);
            continue;
        }
        for (int k = 0; k < u->nranges; k++) {
            const struct ct_nr_range *r = &u->ranges[k];
            char rg[64], proto[16];
            ct_export_range_str(r->lo, r->hi == CT_NR_INF ? CT_BYTES_INF : r->hi, rg, sizeof rg);
            if (r->keep) {
                ct_export_note(out,
                               "%s %s, %ld ranks on %ld nodes: NCCL's own choice measured "
                               "best: no line (the stock plugin runs such calls on 1 "
                               "channel; --format nccl-plugin leaves them to NCCL)",
                               ct_nr_func_name(u->func), rg, u->nranks, u->nnodes);
                ct_text_printf(t, "# %s\n", out->notes[out->nnotes - 1]);
                continue;
            }
            snprintf(proto, sizeof proto, "%s", ct_nr_proto_name(r->proto));
            for (char *q = proto; *q; q++)
                *q = (char)tolower((unsigned char)*q);
            ct_text_printf(t, "%s,%llu,%llu,%s,%s,%d,%ld,%ld\n", ct_nr_func_name(u->func),
                           (unsigned long long)r->lo,
                           (unsigned long long)(r->hi == CT_NR_INF ? CT_BYTES_INF : r->hi - 1),
                           ct_nr_algo_name(r->algo), proto, r->channels, u->nnodes, u->nranks);
            lines++;
        }
    }
    return lines;
}

int ct_emit_nccl_tuner(const struct ct_config *c, const struct ct_export_opts *o,
                       struct ct_export_out *out, struct ct_err *err)
{
    const char *proto = o->nccl_proto ? o->nccl_proto : "simple";
    if (strcmp(proto, "ll") && strcmp(proto, "ll128") && strcmp(proto, "simple"))
        return ct_err_set(err, CT_EINVAL, "--nccl-proto '%s': expected ll, ll128 or simple", proto);
    if (ct_version_cmp(ct_export_version(o, CT_LIB_NCCL), NCCL_MIN_VERSION) < 0)
        return ct_err_set(err, CT_EUNSUPP,
                          "NCCL %s has no CSV tuner plugin: the example plugin "
                          "reads CSV from NCCL " NCCL_MIN_VERSION " (use --format nccl-env)",
                          ct_export_version(o, CT_LIB_NCCL));
    struct ct_text *t = &out->body;
    const char *path = o->path ? o->path : "FILE";
    struct ct_nr_table nt = {0};
    char msg[512];
    if (o->config_path && ct_nr_load(o->config_path, &nt, msg, sizeof msg) < 0)
        return ct_err_set(err, CT_EINVAL,
                          "the config's NCCL section, as colltune's NCCL tuner plugin reads it: %s",
                          msg);
    ct_export_header(
        t, "# ",
        "NCCL example tuner plugin CSV (plugins/tuner/example, NCCL >= " NCCL_MIN_VERSION ")", c,
        CT_LIB_NCCL, o);
    ct_text_put(t, "# collective,min_bytes,max_bytes,algorithm,protocol,channels,nNodes,nRanks\n"
                   "# bytes: NCCL nBytes (allreduce count*dtsize; allgather, reducescatter\n"
                   "#   nranks*count*dtsize), the same numbers as colltune sizes; both ends "
                   "inclusive\n");
    if (nt.found && ct_export_nccl_measured(o, err) < 0) {
        ct_nr_free(&nt);
        return CT_EINVAL;
    }
    if (nt.found) {
        /* no line: the example plugin would run every call on 1 channel, a file that can only
         * make things slower (the Open MPI and MPICH exports refuse alike) */
        out->unchanged = !emit_measured(&nt, o, out);
        ct_nr_free(&nt);
        if (out->unchanged)
            return ct_err_set(err, CT_EUNSUPP,
                              "nothing to export: NCCL's own choices measured best at every "
                              "size%s; they stay, no file written",
                              o->nranks > 0 ? " of the rules for --nranks" : "");
        goto env;
    }
    ct_export_note_mapped(out, CT_LIB_NCCL);
    ct_text_printf(t, "# %s\n", out->notes[out->nnotes - 1]);
    ct_text_printf(t,
                   "# protocol: colltune does not measure NCCL protocols; every line says "
                   "'%s' (--nccl-proto)\n",
                   proto);
    ct_text_put(t, "# channels: 0 (NCCL's own count: a host-memory ring's says nothing of "
                   "NCCL's), or --nccl-channels;\n"
                   "#   never -1, which the stock plugin turns into 1 channel. Calls no line "
                   "matches\n"
                   "#   (broadcast, reduce, sizes noted below) also run on 1 channel with the "
                   "stock plugin.\n"
                   "# the stock plugin (2.28+) also rewrites some NCCL tuning constants at "
                   "init.\n");
    ct_text_printf(t, "# load: NCCL_TUNER_PLUGIN=example NCCL_TUNER_CONFIG_FILE=%.150s\n", path);
    int lines = 0;
    for (int i = 0; i < c->nsets; i++)
        if (ct_export_selected(o, &c->sets[i]))
            lines += emit_set(&c->sets[i], o, proto, out);
    if (!lines) /* every range symm, oneshot, ...: no line, 1 channel everywhere */
        return ct_export_maps_nothing(out, o, CT_LIB_NCCL,
                                      "the file would have no line and NCCL's example plugin "
                                      "would run every call on 1 channel",
                                      NULL, err);
env:

    ct_text_printf(&out->env,
                   "# load the NCCL tuner CSV %.150s: build NCCL's example plugin\n"
                   "# (make in plugins/tuner/example) and put "
                   "libnccl-tuner-example.so on LD_LIBRARY_PATH,\n"
                   "# or set NCCL_TUNER_PLUGIN to its absolute path. NCCL loads "
                   "one tuner: this replaces\n"
                   "# any other (e.g. the aws-ofi-nccl tuner).\n",
                   path);
    struct ct_settings set;
    ct_settings_init(&set);
    ct_settings_add(&set, "NCCL_TUNER_PLUGIN", "example", NULL);
    ct_settings_add(&set, "NCCL_TUNER_CONFIG_FILE", path, NULL);
    ct_settings_exports(&set, &out->env);
    ct_settings_release(&set);
    return 0;
}
