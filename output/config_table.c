/* SPDX-License-Identifier: MIT */
/* The crossover table of a tuned config, for `colltune show` and the end of a sweep. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "../backend/native.h"

/* 131072 -> "128K", 3 -> "3" */
static const char *short_num(uint64_t v, char *buf, size_t len)
{
    if (v >= (1u << 20) && v % (1u << 20) == 0)
        snprintf(buf, len, "%lluM", (unsigned long long)(v >> 20));
    else if (v >= 1024 && v % 1024 == 0)
        snprintf(buf, len, "%lluK", (unsigned long long)(v >> 10));
    else
        snprintf(buf, len, "%llu", (unsigned long long)v);
    return buf;
}

const char *ct_params_str(const char *algo, const struct ct_params *in, char *buf, size_t len)
{
    const struct ct_algo *a = ct_algo_find(algo);
    struct ct_params p = *in;
    ct_params_defaults(&p);
    size_t off = 0;
    buf[0] = 0;
    for (int q = 0; q < CT_P_COUNT && off < len; q++) {
        char num[32];
        if (a && !(ct_params_shown(a, &p) & CT_PBIT(q)))
            continue;
        off += (size_t)snprintf(buf + off, len - off, "%s%s=%s", off ? "," : "",
                                ct_param_desc((enum ct_param_id)q)->name,
                                short_num(p.v[q], num, sizeof num));
    }
    if (p.intra && off < len)
        off += (size_t)snprintf(buf + off, len - off, ",intra=%s", p.intra);
    if (p.inter && off < len)
        snprintf(buf + off, len - off, ",inter=%s", p.inter);
    return buf;
}

/* Only what differs from the defaults: "chunk=1M,pipeline=2", or "defaults". */
static const char *changed_params(const char *algo, const struct ct_params *in, char *buf,
                                  size_t len)
{
    const struct ct_algo *a = ct_algo_find(algo);
    struct ct_params p = *in, d;
    memset(&d, 0, sizeof d);
    ct_params_defaults(&p);
    ct_params_defaults(&d);
    size_t off = 0;
    buf[0] = 0;
    for (int q = 0; q < CT_P_COUNT && off < len; q++) {
        char num[32];
        if ((a && !(ct_params_shown(a, &p) & CT_PBIT(q))) || p.v[q] == d.v[q])
            continue;
        off += (size_t)snprintf(buf + off, len - off, "%s%s=%s", off ? "," : "",
                                ct_param_desc((enum ct_param_id)q)->name,
                                short_num(p.v[q], num, sizeof num));
    }
    if (p.intra && off < len)
        off += (size_t)snprintf(buf + off, len - off, "%sintra=%s", off ? "," : "", p.intra);
    if (p.inter && off < len)
        off += (size_t)snprintf(buf + off, len - off, "%sinter=%s", off ? "," : "", p.inter);
    if (!off)
        snprintf(buf, len, "defaults");
    return buf;
}

/* Where a tied range's runner-up is tied with its choice in part of it only: " at LO-HI" of
 * its first such part, "" where it is tied throughout (in `tied`, or a part that spans the
 * range: a library section records no `tied`) or no part is recorded. The range's gain then
 * averages won and tied sizes (1.00 each). */
static void tied_part(const struct ct_rule *r, char *buf, size_t len)
{
    char lo[32], hi[32];
    buf[0] = 0;
    for (int k = 0; k < r->ntied; k++)
        if (!strcmp(r->tied[k], r->runner_up))
            return;
    for (int k = 0; k < r->nties; k++)
        if (!strcmp(r->ties[k].algo, r->runner_up) && r->ties[k].min_bytes <= r->min_bytes &&
            r->ties[k].max_bytes >= r->max_bytes)
            return;
    for (int k = 0; k < r->nties; k++)
        if (!strcmp(r->ties[k].algo, r->runner_up)) {
            snprintf(buf, len, " at %s-%s", ct_bytes_str(r->ties[k].min_bytes, lo, sizeof lo),
                     ct_bytes_str(r->ties[k].max_bytes, hi, sizeof hi));
            return;
        }
}

/* lib: a library section's ruleset (the library's names; segsize or NCCL's channels the one
 * parameter) */
static void print_set(FILE *f, const struct ct_ruleset *s, bool lib)
{
    fprintf(f, "%s: %d rank%s (%d node%s x %d), %s", ct_coll_name(s->coll), s->nranks,
            s->nranks == 1 ? "" : "s", s->nnodes, s->nnodes == 1 ? "" : "s", s->ranks_per_node,
            ct_dtype_name(s->dtype));
    if (s->coll == CT_ALLREDUCE || s->coll == CT_REDUCESCATTER)
        fprintf(f, " %s", ct_redop_name(s->op));
    int w = 12; /* a library's names run longer than colltune's */
    for (int i = 0; i < s->nrules; i++)
        w = (int)strlen(s->rules[i].algo) > w ? (int)strlen(s->rules[i].algo) : w;
    fprintf(f, "\n  %-10s  %-10s  %-*s %-24s %s\n", "from", "to", w, "algorithm", "parameters",
            "decision");
    for (int i = 0; i < s->nrules; i++) {
        const struct ct_rule *r = &s->rules[i];
        char lo[32], hi[32], ps[160], dec[256], part[80] = "";
        if (lib && (r->params.v[CT_P_CHUNK] || r->params.v[CT_P_CHANNELS]))
            snprintf(ps, sizeof ps, "%s=%llu", r->params.v[CT_P_CHUNK] ? "segsize" : "channels",
                     (unsigned long long)(r->params.v[CT_P_CHUNK] ? r->params.v[CT_P_CHUNK]
                                                                  : r->params.v[CT_P_CHANNELS]));
        else if (lib)
            snprintf(ps, sizeof ps, "%s", r->id ? "defaults" : "(the library's choice)");
        else
            changed_params(r->algo, &r->params, ps, sizeof ps);
        if (r->predicted && !r->runner_up[0])
            snprintf(dec, sizeof dec, "predicted: only candidate");
        else if (r->predicted && r->tie) /* priced: no interval, no confidence */
            snprintf(dec, sizeof dec, "predicted: tie with %s", r->runner_up);
        else if (r->predicted)
            snprintf(dec, sizeof dec, "predicted: %.2fx vs %s", r->gain, r->runner_up);
        else if (r->set_back[0]) /* by sweep --verify: its row's verdict */
            snprintf(dec, sizeof dec, "%s set back by verify (%s)", r->runner_up,
                     ct_set_back_words(r));
        else if (!r->runner_up[0])
            snprintf(dec, sizeof dec, "only candidate");
        else if (r->tie) {
            tied_part(r, part, sizeof part);
            snprintf(dec, sizeof dec, "tie with %s%s, confidence %.2f", r->runner_up, part,
                     r->confidence);
        } else
            snprintf(dec, sizeof dec, "%.2fx vs %s, confidence %.2f", r->gain, r->runner_up,
                     r->confidence);
        fprintf(f, "  %-10s  %-10s  %-*s %-24s %s\n", ct_bytes_str(r->min_bytes, lo, sizeof lo),
                ct_bytes_str(r->max_bytes, hi, sizeof hi), w, r->algo, ps, dec);
    }
}

/* A verified mark's line ends: what its measure could tell (where: the median of what), where
 * it recorded that. */
static void tell_end(FILE *f, const struct ct_verified *v, const char *where)
{
    if (v->tell > 0)
        fprintf(f, ", what it could tell %.2fx (%s)", v->tell, where);
    fputc('\n', f);
}

void ct_config_print(FILE *f, const struct ct_config *c)
{
    const struct ct_fingerprint *fp = &c->fp;
    const struct ct_sweep_settings *sw = &c->sweep;
    char a[32], b[32];
    fprintf(f, "%s (colltune %s, %s)%s\n",
            c->report ? "measured, a report (not a config)" : "tuned config", c->version, c->date,
            c->partial ? " - PARTIAL: the sweep stopped early" : "");
    fprintf(f, "cluster: %d host%s x %d ranks (%d ranks), transport %s, host %s", fp->hosts,
            fp->hosts == 1 ? "" : "s", fp->ranks_per_host, fp->nranks, fp->transport, fp->host);
    if (fp->mem[0])
        fprintf(f, ", %s memory %s", fp->mem, ct_native_mem_words(fp->mem, fp->hosts <= 1));
    if (fp->nic_kinds[0])
        fprintf(f, ", NICs %s", fp->nic_kinds);
    if (fp->gpu_model[0])
        fprintf(f, ", GPU %s", fp->gpu_model);
    if (ct_config_other_shapes(c))
        fprintf(f, "; other shapes where a rule set names one");
    if (sw->joined) /* the lines of one sweep: said so (they read as the whole config's) */
        fprintf(f,
                "\njoined: %d sweeps' configs (colltune join); the cluster and sweep lines are "
                "one of them's (the first with colltune's own rules, else the first), each "
                "rule set names its shape",
                sw->joined);
    if (sw->predicted[0]) {
        fprintf(f,
                "\nPREDICTED by colltune model (%s): priced, not measured\n"
                "sweep: %s .. %s x%g, %ld points priced of %ld in the full cross product, "
                "in %.1f s\n",
                sw->predicted, ct_bytes_str(sw->minbytes, a, sizeof a),
                ct_bytes_str(sw->maxbytes, b, sizeof b), sw->stepfactor, sw->points,
                sw->full_points, sw->elapsed_s);
    } else {
        fprintf(f,
                "\nsweep: %s .. %s x%g, %ld measurements over a full cross product of %ld points, "
                "%.0f s of %.0f s budget, measuring %.0f s of %.0f s (%.0f%%)%s\n",
                ct_bytes_str(sw->minbytes, a, sizeof a), ct_bytes_str(sw->maxbytes, b, sizeof b),
                sw->stepfactor, sw->points, sw->full_points, sw->elapsed_s, sw->budget_s,
                sw->measuring_s, sw->elapsed_s,
                sw->elapsed_s > 0 ? 100 * sw->measuring_s / sw->elapsed_s : 0.0,
                sw->budget_out ? " (ran out: coarser than planned)" : "");
        if (sw->timing_s > 0) {
            double rest = sw->elapsed_s - sw->timing_s - sw->checking_s;
            fprintf(f,
                    "time: measuring %.1f s, warmup and barriers %.1f s, checking results "
                    "%.1f s, planning and setup %.1f s\n",
                    sw->measuring_s, sw->timing_s - sw->measuring_s, sw->checking_s,
                    rest > 0 ? rest : 0.0);
        }
    }
    if (sw->search[0]) /* space "": no candidate takes a parameter searched */
        fprintf(f, "search: %s%s%s\n", sw->search, sw->space[0] ? " over " : "", sw->space);
    if (sw->ranges)
        fprintf(f, "self-check: %d of %d ranges %s where --verify checks them%s\n",
                sw->checked, sw->ranges, sw->predicted[0] ? "priced" : "measured",
                sw->checked < sw->ranges ? " (the budget ended the check)" : "");
    if (sw->folded[0])
        fprintf(f, "same schedule at this shape, measured once under the simpler name: %s\n",
                sw->folded);
    if (sw->refused[0])
        fprintf(f, "not measured where the engine refused them: %s\n", sw->refused);
    for (int i = 0; i < c->nsets; i++) {
        fputc('\n', f);
        print_set(f, &c->sets[i], false);
    }
    for (int l = 0; l < c->nlibs; l++) {
        struct ct_ruleset *raw = NULL; /* NCCL's section, kept in the plugin's words */
        const struct ct_librules *lr = &c->libs[l];
        int ns = lr->raw ? ct_config_lib_raw_sets(lr, &raw) : lr->nsets;
        for (int e = 0; e < lr->nenv; e++) /* what every set below was measured with */
            fprintf(f, "%s%s=%s%s",
                    e ? " " : "\nlaunch settings (sweep --env, --env-search): ", lr->env[e].name,
                    lr->env[e].value, e + 1 < lr->nenv ? "" : "\n");
        if (lr->nenv && lr->env_verified.at[0]) {
            fprintf(f, "  verified against %s's plain defaults at %s: geomean %.3f with/without",
                    lr->name, lr->env_verified.at, lr->env_verified.geomean);
            tell_end(f, &lr->env_verified, "the median collective");
        } else if (lr->nenv && !c->report)
            fprintf(f,
                    "  not verified against %s's plain defaults (colltune sweep --verify "
                    "CONFIG --lib %s)\n",
                    lr->name, lr->library);
        if (lr->nenv && lr->whole_verified.at[0]) {
            fprintf(f, "  with the rules, the export as a whole at %s: geomean %.3f with/without",
                    lr->whole_verified.at, lr->whole_verified.geomean);
            tell_end(f, &lr->whole_verified, "the median collective it measured");
        }
        for (int i = 0; i < ns; i++) {
            fprintf(f, "\n%s %s (measured, --lib %s) ", c->libs[l].name, c->libs[l].version,
                    c->libs[l].library);
            const struct ct_ruleset *s = raw ? &raw[i] : &c->libs[l].sets[i];
            print_set(f, s, true);
            if (s->verified.at[0]) {
                fprintf(f, "verified against the defaults%s at %s: geomean %.3f exported/default",
                        lr->nenv ? " with the launch settings" : "", s->verified.at,
                        s->verified.geomean);
                tell_end(f, &s->verified, "the median size");
            } else if (!c->report)
                fprintf(f,
                        "not verified against the defaults (colltune sweep --verify CONFIG "
                        "--lib %s)\n",
                        c->libs[l].library);
        }
        for (int i = 0; raw && i < ns; i++)
            ct_ruleset_release(&raw[i]);
        free(raw);
    }
}
