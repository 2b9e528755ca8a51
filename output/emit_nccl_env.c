/* SPDX-License-Identifier: MIT */
/*
 * nccl-env: NCCL settings (NCCL_ALGO per collective, NCCL_PROTO, socket/QP counts; no
 * channel bounds or buffer size: channel_note) in nccl.conf form (NAME=value, read from
 * /etc/nccl.conf or NCCL_CONF_FILE), with the same settings as export lines beside it.
 * Environment variables cannot follow size ranges: NCCL_ALGO only limits which algorithms
 * NCCL's own cost model may pick. Settings that would leave NCCL as it is (no rule of colltune's
 * maps to an NCCL algorithm, or none of the rules gives a setting) are refused, for env/slurm --for
 * nccl and a mapped nccl-plugin too.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export.h"

#define PER_COLL_ALGO "2.24" /* NCCL_ALGO "coll:list;coll:list" syntax (src/graph/tuning.cc) */

/* CSV name -> NCCL_ALGO spelling (src/init.cc ncclAlgoStr) */
static const char *algo_env_name(const char *csv)
{
    static const char *const names[][2] = {
        {"tree", "Tree"},
        {"ring", "Ring"},
        {"collnet_direct", "CollNetDirect"},
        {"collnet_chain", "CollNetChain"},
        {"nvls", "NVLS"},
        {"nvls_tree", "NVLSTree"},
        {"pat", "PAT"},
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (!strcmp(csv, names[i][0]))
            return names[i][1];
    return csv;
}

/* NCCL_ALGO entry for coll ("allreduce:Tree,Ring") into buf; "" when not restricted. */
static void algo_entry(const struct ct_config *c, const struct ct_export_opts *o, enum ct_coll coll,
                       struct ct_export_out *out, struct ct_text *map, char *buf, size_t len)
{
    const char *used[8];
    int nused = 0;
    bool open = false, any = false;
    buf[0] = 0;
    for (int i = 0; i < c->nsets; i++) {
        const struct ct_ruleset *s = &c->sets[i];
        struct ct_xrange *xr;
        int n;
        if (s->coll != coll || !ct_export_selected(o, s))
            continue;
        any = true;
        ct_export_map(s, CT_LIB_NCCL, o, out, &xr, &n);
        for (int k = 0; k < n; k++) {
            if (!xr[k].map) {
                ct_export_note_unmapped(out, NULL, "", s, CT_LIB_NCCL, &xr[k],
                                        "NCCL_ALGO leaves this collective unrestricted");
                open = true;
                continue;
            }
            ct_export_map_comment(map, "# ", s, &xr[k]);
            const char *name = algo_env_name(xr[k].map->target);
            bool seen = false;
            for (int u = 0; u < nused; u++)
                seen |= !strcmp(used[u], name);
            if (!seen && nused < 7)
                used[nused++] = name;
        }
        free(xr);
    }
    if (!any || open || !nused)
        return;
    bool ring = false;
    for (int u = 0; u < nused; u++)
        ring |= !strcmp(used[u], "Ring");
    if (!ring)
        used[nused++] = "Ring"; /* a fallback NCCL always has: see the comment in the output */
    size_t off = (size_t)snprintf(buf, len, "%s:", ct_coll_name(coll));
    for (int u = 0; u < nused && off < len; u++)
        off += (size_t)snprintf(buf + off, len - off, "%s%s", u ? "," : "", used[u]);
}

/* The ruleset of coll with the most ranks among the selected ones, or NULL. */
static const struct ct_ruleset *largest(const struct ct_config *c, const struct ct_export_opts *o,
                                        enum ct_coll coll)
{
    const struct ct_ruleset *best = NULL;
    for (int i = 0; i < c->nsets; i++)
        if (c->sets[i].coll == coll && ct_export_selected(o, &c->sets[i]) &&
            (!best || c->sets[i].nranks > best->nranks))
            best = &c->sets[i];
    return best;
}

/*
 * NCCL_MIN/MAX_NCHANNELS bound every collective NCCL runs, at communicator set-up, whatever
 * NCCL_ALGO allows: bounds taken from colltune's ring rules (host memory, one collective's
 * sizes, often 1 channel) would cap NCCL's other collectives too, its allreduce among them,
 * where NCCL sets up as many channels as the GPUs' links feed. They are not written; the note says
 * where the counts go instead (the tuner CSV: per collective and size).
 */
static void channel_note(const struct ct_config *c, const struct ct_export_opts *o,
                         struct ct_export_out *out)
{
    for (int i = 0; i < c->nsets; i++) {
        const struct ct_ruleset *s = &c->sets[i];
        if (!ct_export_selected(o, s) || s->coll == CT_ALLTOALL)
            continue;
        for (int k = 0; k < s->nrules; k++) {
            const struct ct_algo *a = ct_algo_find(s->rules[k].algo);
            const struct ct_algomap_row *m = ct_algomap_find(
                CT_LIB_NCCL, s->coll, s->rules[k].algo, ct_export_version(o, CT_LIB_NCCL), NULL);
            if (a && m && !strcmp(m->target, "ring") && (a->params & CT_PBIT(CT_P_CHANNELS))) {
                ct_export_note(out, "channel counts and NCCL_BUFFSIZE: not set (a host-memory "
                                    "ring's say nothing of NCCL's channels and GPU buffers, and "
                                    "they would bound every collective NCCL runs; sweep --lib "
                                    "nccl measures NCCL's own)");
                return;
            }
        }
    }
}

/* Socket/QP counts from the rule for the largest allreduce sizes (the network's, as NCCL's
 * sockets and QPs use it). No NCCL_BUFFSIZE: a host-memory ring's chunk x pipeline says
 * nothing of NCCL's per-channel GPU buffers, and the setting bounds every collective (it
 * wrote 512 KiB where NCCL's default is 4 MiB). */
static void transfer_settings(const struct ct_config *c, const struct ct_export_opts *o,
                              struct ct_settings *set)
{
    const struct ct_ruleset *s = largest(c, o, CT_ALLREDUCE);
    if (!s || !s->nrules)
        return;
    const struct ct_rule *r = &s->rules[s->nrules - 1];
    const struct ct_algo *a = ct_algo_find(r->algo);
    struct ct_params p = r->params;
    char v[32];
    ct_params_defaults(&p);
    if (!a || !(a->params & CT_PBIT(CT_P_STREAMS)) || p.v[CT_P_STREAMS] <= 1)
        return;
    snprintf(v, sizeof v, "%llu", (unsigned long long)p.v[CT_P_STREAMS]);
    if (!strcmp(c->fp.transport, "tcp")) {
        ct_settings_add(set, "NCCL_SOCKET_NTHREADS", "1",
                        "approx: colltune streams per peer as NCCL sockets per connection");
        ct_settings_add(set, "NCCL_NSOCKS_PERTHREAD", v, NULL);
    } else if (!strcmp(c->fp.transport, "fabric")) {
        ct_settings_add(set, "NCCL_IB_QPS_PER_CONNECTION", v,
                        "approx: colltune streams per peer as queue pairs per connection");
    }
}

/* The rules of the selected sets that map to an NCCL algorithm. */
static int mapped_rules(const struct ct_config *c, const struct ct_export_opts *o)
{
    int n = 0;
    for (int i = 0; i < c->nsets; i++) {
        const struct ct_ruleset *s = &c->sets[i];
        const struct ct_size_meaning *m = ct_algomap_size(CT_LIB_NCCL, s->coll);
        if (!ct_export_selected(o, s) || !m || m->unit == CT_UNIT_NONE)
            continue;
        for (int k = 0; k < s->nrules; k++)
            n += ct_algomap_find(CT_LIB_NCCL, s->coll, s->rules[k].algo,
                                 ct_export_version(o, CT_LIB_NCCL), NULL) != NULL;
    }
    return n;
}

int ct_nccl_settings(const struct ct_config *c, const struct ct_export_opts *o,
                     struct ct_export_out *out, struct ct_settings *set, struct ct_err *err)
{
    const char *ver = ct_export_version(o, CT_LIB_NCCL);
    size_t n0 = set->n;
    static const enum ct_coll colls[] = {CT_ALLREDUCE, CT_ALLGATHER, CT_REDUCESCATTER};
    char algo[256] = "";
    ct_export_note_mapped(out, CT_LIB_NCCL);
    if (ct_version_cmp(ver, PER_COLL_ALGO) < 0) {
        ct_export_note(out,
                       "NCCL_ALGO per collective needs NCCL " PER_COLL_ALGO
                       " or later (target %s): not set",
                       ver);
    } else {
        for (size_t i = 0; i < sizeof colls / sizeof colls[0]; i++) {
            char e[96];
            algo_entry(c, o, colls[i], out, &set->comments, e, sizeof e);
            if (*e)
                snprintf(algo + strlen(algo), sizeof algo - strlen(algo), "%s%s", *algo ? ";" : "",
                         e);
        }
    }
    for (int i = 0; i < c->nsets; i++)
        if (c->sets[i].coll == CT_ALLTOALL && ct_export_selected(o, &c->sets[i])) {
            char s[96];
            ct_export_note(out, "%s: NCCL runs alltoall as grouped send/receive; no setting",
                           ct_export_set_str(&c->sets[i], s, sizeof s));
        }
    if (*algo)
        ct_settings_add(set, "NCCL_ALGO", algo,
                        "algorithms NCCL may pick per collective (sizes are NCCL's choice); "
                        "Ring stays allowed: NCCL fails a call none of whose allowed "
                        "algorithms can run");
    if (o->nccl_proto) {
        const char *p = !strcmp(o->nccl_proto, "ll")       ? "LL"
                        : !strcmp(o->nccl_proto, "ll128")  ? "LL128"
                        : !strcmp(o->nccl_proto, "simple") ? "Simple"
                                                           : NULL;
        if (!p)
            return ct_err_set(err, CT_EINVAL, "--nccl-proto '%s': expected ll, ll128 or simple",
                              o->nccl_proto);
        ct_settings_add(set, "NCCL_PROTO", p, "protocol from --nccl-proto");
    }
    channel_note(c, o, out);
    transfer_settings(c, o, set);
    /* a file that leaves NCCL as it is (--nccl-proto is the caller's, not the config's) */
    const char *hint = ct_config_lib(c, "nccl") ? "export its measured NCCL section: --format "
                                                  "nccl-plugin"
                                                : "tune NCCL itself: colltune sweep --lib nccl";
    out->unchanged = true;
    if (!mapped_rules(c, o))
        return ct_export_maps_nothing(out, o, CT_LIB_NCCL,
                                      "no NCCL setting would follow and NCCL would keep its own "
                                      "choices everywhere",
                                      hint, err);
    if (set->n - n0 == (o->nccl_proto ? 1u : 0u))
        return ct_err_set(err, CT_EUNSUPP,
                          "nothing to export: no NCCL %s setting follows from colltune's rules "
                          "(NCCL_ALGO, from NCCL " PER_COLL_ALGO ", stays unrestricted for a "
                          "collective with a range without counterpart), so NCCL would keep its "
                          "own choices everywhere; no file written (%s)",
                          ver, hint);
    out->unchanged = false;
    return 0;
}

/* A comment for nccl.conf: before NCCL 2.26 a '#' line holding '=' becomes a variable. */
static void conf_comment(struct ct_text *t, const char *s)
{
    ct_text_put(t, "# ");
    for (; *s && *s != '\n'; s++)
        ct_text_printf(t, "%c", *s == '=' ? ':' : *s);
    ct_text_put(t, "\n");
}

int ct_emit_nccl_env(const struct ct_config *c, const struct ct_export_opts *o,
                     struct ct_export_out *out, struct ct_err *err)
{
    struct ct_settings set;
    struct ct_text head;
    ct_settings_init(&set);
    ct_text_init(&head);
    int rc = ct_nccl_settings(c, o, out, &set, err);
    if (rc < 0)
        goto out;
    ct_export_header(&head, "",
                     "NCCL settings in nccl.conf form (/etc/nccl.conf, or the file "
                     "named by NCCL_CONF_FILE from 2.23)",
                     c, CT_LIB_NCCL, o);
    ct_text_printf(&head, "target NCCL %s; the real environment overrides this file\n",
                   ct_export_version(o, CT_LIB_NCCL));
    for (size_t i = 0; i < out->nnotes; i++)
        ct_text_printf(&head, "%s\n", out->notes[i]);
    for (const char *p = ct_text_str(&head); *p; p = strchr(p, '\n') + 1)
        conf_comment(&out->body, p);
    for (const char *p = ct_text_str(&set.comments); *p; p = strchr(p, '\n') + 1)
        conf_comment(&out->body, p + 2); /* "# " lines */
    for (size_t i = 0; i < set.n; i++) {
        if (*set.v[i].comment)
            conf_comment(&out->body, set.v[i].comment);
        ct_text_printf(&out->body, "%s=%s\n", set.v[i].name, set.v[i].value);
    }
    ct_text_put(&out->env, "# the same NCCL settings as export lines\n");
    ct_text_put(&out->env, ct_text_str(&set.comments));
    ct_settings_exports(&set, &out->env);
out:
    ct_text_release(&head);
    ct_settings_release(&set);
    return rc;
}
