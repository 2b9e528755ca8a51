/* SPDX-License-Identifier: MIT */
/*
 * sweep --verify CONFIG --lib LIB: the passes of a verify in order, and the copy it writes.
 * The library loading the file `export` writes from CONFIG's measured section (A: the export's
 * loader variables set) against its defaults (B: cleared), paired launches (tune/paired.c) of
 * `colltune run --lib LIB --sizes ...` at the sweep's sizes and every range's midpoint
 * (ct_paired_sizes), warmed up past the library's one-time costs. The launch settings first,
 * alone (libverify_env.c; --each-setting, libverify_each.c): the rules were measured with them,
 * and are judged with them on both sides (libverify.c); then the copy's whole export
 * (libverify_whole.c). Per size the ratio A/B with a 95% interval over the pairs and, where the
 * file keeps the library's choice near it, against those sizes in the same launches
 * (ct_paired_judge); CT_VERIFY_SLOWER when a size is slower than the defaults by > 3% beyond
 * either interval. A rule that does not show a gain of > 3% beyond its interval over its sizes
 * (ct_paired_gains) is set back to the library's choice in the copy verify writes, as a slower
 * one is. The export, CONFIG's copies and what is written go through the caller's hooks
 * (struct ct_verify_files: cmd/ with output/'s emitters and config file).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../algos/coll.h"
#include "../backend/libmod.h"
#include "../lib/parse.h"
#include "libverify.h"

/* Set s is one --coll and --local N ask for. */
static bool asked(const struct ct_libverify_in *in, const struct ct_ruleset *s)
{
    return in->colls & CT_COLL_BIT(s->coll) && (!in->local || s->nranks == in->local);
}

static void release(struct ct_config *c)
{
    if (c)
        ct_config_release(c);
    free(c);
}

/* --try-ties: a copy of c with the rows the sweep found tied with the library's own choice put
 * in its place in the sets asked for (ct_config_lib_try_ties); NULL, said, when none. */
static struct ct_config *try_ties(const struct ct_libverify_in *in, const struct ct_config *c)
{
    const struct ct_libmod *m = in->m;
    struct ct_config *t = in->f->copy(in->f->ctx, c);
    const struct ct_librules *l = t ? ct_config_lib(t, m->name) : NULL;
    int n = 0;
    for (int i = 0; l && i < l->nsets; i++)
        n += asked(in, &l->sets[i]) ? ct_config_lib_try_ties(t, m->name, i) : 0;
    if (n)
        return t;
    ct_verify_say(in->h,
                  "--try-ties: CONFIG records no %s row tied with its own choice in the sets "
                  "asked for (a library sweep records them in each range's \"ties\"; a CONFIG "
                  "from before has none)\n\n",
                  m->title);
    release(t);
    return NULL;
}

/* The rows of s tried in the library's place (--try-ties), each on a line; how many. */
static int say_tried(const struct ct_libverify_in *in, const struct ct_ruleset *s)
{
    int n = 0;
    for (int k = 0; k < s->nrules; k++) {
        const struct ct_rule *r = &s->rules[k];
        char lo[32], hi[32] = "inf", seg[48] = "", b[32];
        if (!r->tried)
            continue;
        if (r->max_bytes != CT_BYTES_INF)
            ct_bytes_str(r->max_bytes - 1, hi, sizeof hi);
        if (r->params.v[CT_P_CHUNK]) /* the segment size it ran at in the sweep */
            snprintf(seg, sizeof seg, ", segsize %s", ct_bytes_str(r->params.v[CT_P_CHUNK], b, 32));
        ct_verify_say(in->h,
                      "try %s on %d ranks: %s (id %d%s) at %s..%s, tied with %s's choice in the "
                      "sweep\n",
                      ct_coll_name(s->coll), s->nranks, r->algo, r->id, seg,
                      ct_bytes_str(r->min_bytes, lo, sizeof lo), hi, in->m->title);
        n++;
    }
    if (n)
        ct_verify_say(in->h, "\n");
    return n;
}

/* A verify's state across its passes */
struct run {
    const struct ct_libverify_in *in;
    const struct ct_config *orig;   /* CONFIG as read */
    const struct ct_config *config; /* CONFIG, or CONFIG less a setting (own) */
    const struct ct_config *c;      /* the file verified: config, or tried */
    struct ct_config *fixed, *own, *tried;
    const struct ct_librules *l; /* c's section */
    struct ct_verify_file x;
    struct ct_verify_side side;
    bool *here; /* the sets verified here */
    double *env_each;
    int verified, nstamped, nown, nunmarked, n[CT_JUDGED_N];
    bool env_kept, env_slow, each_slow, env_marked, whole_slow;
    double env_geo, whole_geo, env_tell, whole_tell; /* the marks' figures */
    char tmo[32]; /* run's --timeout, as the side's launches pass it */
};

/* The launch settings alone, and with --each-setting each of them; where they do not hold, the
 * copy without them written. 0, CT_VERIFY_SLOWER, or a failure code (said). */
static int settings(struct run *v, struct ct_verify_did *did)
{
    const struct ct_libverify_in *in = v->in;
    const struct ct_libmod *m = in->m;
    int code = 0;
    if (v->l->nenv && v->verified)
        code = ct_libverify_envs(&v->side, v->c, v->here, in->each_setting, &v->env_kept,
                                 &v->env_slow, &v->env_geo, &v->env_tell, v->env_each);
    if (v->verified && !code && in->each_setting && v->l->nenv > 1 && /* CONFIG less one */
        !(code = ct_libverify_each(in, &v->side, v->env_kept, &v->config, &v->c, v->tried, &v->x,
                                   v->here, &v->env_geo, &v->env_tell, v->env_each, &v->own)) &&
        (did->dropped = v->own != NULL)) {
        v->l = ct_config_lib(v->c, m->name), v->env_kept = true;
        v->each_slow = v->env_slow, v->env_slow = false;
    }
    if (!v->env_kept && !code) { /* the copy without them; the rules are not judged */
        if ((v->fixed = ct_libverify_copy(in, v->config, &code)) &&
            ct_config_lib_env_drop(v->fixed, m->name, -1)) {
            struct ct_verify_end w = {.kind = CT_VEND_ENV_DROPPED,
                                      .fixed = v->fixed,
                                      .slow = v->env_slow,
                                      .nenv = v->l->nenv,
                                      .each_ran = in->each_setting && v->l->nenv > 1};
            code = in->f->end(in->f->ctx, in->path, &w, v->env_slow ? CT_VERIFY_SLOWER : 0);
        }
    } else if (v->l->nenv && !code && v->verified && v->verified < v->l->nsets)
        ct_verify_say(in->h,
                      "the launch settings were judged on %d of the section's %d collective(s): "
                      "not marked verified (a verify of all of them here marks them)\n\n",
                      v->verified, v->l->nsets); /* a job runs them all */
    else if (v->l->nenv && !code && v->verified &&
             (v->fixed = ct_libverify_copy(in, v->config, &code)))
        v->env_marked = ct_config_lib_env_verified(v->fixed, m->name, v->env_geo, v->env_tell);
    return code;
}

/* Set i of the file verified, with the launch settings on both sides: its verdict applied to
 * the copy. 0, CT_VERIFY_SLOWER, or a failure code (said). */
static int one_set(struct run *v, int i)
{
    const struct ct_libverify_in *in = v->in;
    const struct ct_libmod *m = in->m;
    const struct ct_ruleset *s = &v->l->sets[i];
    if (!v->here[i]) {
        ct_verify_say(in->h, "%s on %d ranks, %d nodes: not verified here (%s)\n\n",
                      ct_coll_name(s->coll), s->nranks, s->nnodes, in->f->elsewhere(in->f->ctx, s));
        return 0;
    }
    if (ct_ruleset_keeps_own(s)) { /* alg 0 alone where the file has it: no launches */
        ct_verify_say(in->h,
                      "%s on %d ranks: the file keeps %s's own choice at every size, the same "
                      "code on both sides: nothing to judge%s\n\n",
                      ct_coll_name(s->coll), s->nranks, m->title,
                      v->l->nenv ? " (the launch settings were, above)" : "");
        return 0;
    }
    int ntried = say_tried(in, s);
    bool *slow = ct_xcalloc((size_t)s->nrules, sizeof *slow),
         *nogain = ct_xcalloc((size_t)s->nrules, sizeof *nogain);
    struct ct_paired_cut *cut = ct_xcalloc((size_t)s->nrules, sizeof *cut);
    double geo, tell;
    int r = ct_libverify_set(&v->side, v->c, s, slow, nogain, cut, &geo, &tell), fail = 0;
    if (!v->fixed && !(v->fixed = ct_libverify_copy(in, v->config, &fail))) {
        free(slow), free(nogain), free(cut);
        return r && r != CT_VERIFY_SLOWER ? r : fail; /* a failure outweighs the verdict */
    }
    if (ntried) /* the set as verified, its tried rows in it */
        ct_config_lib_set_copy(v->fixed, v->c, m->name, i);
    int was = v->n[CT_JUDGED_SLOW] + v->n[CT_JUDGED_CUT];
    in->f->apply(in->f->ctx, v->fixed, m->name, i, s, slow, nogain, cut, v->n);
    /* slower only where it keeps the library's own choice: no rule found slower */
    bool own = r == CT_VERIFY_SLOWER && v->n[CT_JUDGED_SLOW] + v->n[CT_JUDGED_CUT] == was;
    if (ntried) /* the library's own choice as one range where no tried row stays */
        ct_config_lib_join_own(v->fixed, m->name, i);
    /* after the demotions, which clear it: a set found slower loses a record it had from an
     * earlier verify; one that only lost rules with no gain keeps this one, unless none is
     * left (the library's own choice at every size changes nothing: no mark, as the mark's
     * own rule has it); a set with rows tried is not marked: those kept were picked on these
     * launches, and they took the controls of CONFIG's own rules */
    v->nstamped += ct_config_lib_verified(v->fixed, m->name, i, r || ntried ? 0 : geo, tell);
    v->nown += own;
    /* and a mark from an earlier verify cleared: the copy must be written */
    v->nunmarked += own && ct_config_lib(v->orig, m->name)->sets[i].verified.at[0];
    free(slow);
    free(nogain);
    free(cut);
    return r;
}

/* The verdict said and the copy written: the code the verify ends with. */
static int finish(struct run *v, struct ct_verify_did *did, int code)
{
    const struct ct_libverify_in *in = v->in;
    const struct ct_libmod *m = in->m;
    const struct ct_verify_files *f = in->f;
    bool any = false;
    for (int k = 0; k < CT_JUDGED_N; k++)
        any |= v->n[k] > 0;
    if (!v->verified && !code) {
        struct ct_verify_end w = {.kind = CT_VEND_NO_SET, .l = v->l};
        return f->end(f->ctx, in->path, &w, CT_VERIFY_USAGE);
    }
    /* a rule slower (set back or cut); else slower only where it keeps the library's own */
    bool rules_slow = v->n[CT_JUDGED_SLOW] || v->n[CT_JUDGED_CUT];
    if (code == CT_VERIFY_SLOWER && v->env_kept && !v->whole_slow) { /* else said below, or above */
        struct ct_verify_end w = {.kind = CT_VEND_SLOWER, .slow = rules_slow};
        f->end(f->ctx, in->path, &w, code);
    }
    did->own_slow =
        code == CT_VERIFY_SLOWER && v->env_kept && !v->whole_slow && !rules_slow && !v->tried;
    code = v->each_slow && !code ? CT_VERIFY_SLOWER : code; /* together slower: CONFIG's */
    if ((did->whole_slow = v->whole_slow && code == CT_VERIFY_SLOWER)) { /* each held, not all */
        const struct ct_librules *l = ct_config_lib(v->fixed, m->name);
        for (int i = 0; l && i < l->nsets; i++)
            ct_config_lib_verified(v->fixed, m->name, i, 0, 0);
        ct_config_lib_env_verified(v->fixed, m->name, 0, 0);
        ct_config_lib_whole_verified(v->fixed, m->name, 0, 0);
        struct ct_verify_end w = {.kind = CT_VEND_UNMARKED, .fixed = v->fixed};
        return f->end(f->ctx, in->path, &w, code);
    }
    if (v->own && !v->fixed && !(v->fixed = f->copy(f->ctx, v->config))) /* CONFIG less one */
        return code == 0 || code == CT_VERIFY_SLOWER ? ct_libverify_copy_failed(in) : code;
    if (v->fixed && (v->nstamped || any || v->nunmarked || v->own || v->env_marked) &&
        (code == 0 || code == CT_VERIFY_SLOWER)) {
        struct ct_verify_end w = {.kind = CT_VEND_FIXED,
                                  .fixed = v->fixed,
                                  .n = v->n,
                                  .nstamped = v->nstamped,
                                  .nown = v->nown,
                                  .nunmarked = v->nunmarked,
                                  .dropped = v->own != NULL,
                                  .env_marked = v->env_marked};
        return f->end(f->ctx, in->path, &w, code);
    }
    if (code == CT_VERIFY_SLOWER && v->env_kept) {
        struct ct_verify_end w = {.kind = CT_VEND_UNCHANGED};
        f->end(f->ctx, in->path, &w, code);
    }
    return code;
}

/* The passes, the file exported: 0, CT_VERIFY_SLOWER, or a failure code (said). */
static int passes(struct run *v, struct ct_verify_did *did)
{
    const struct ct_libverify_in *in = v->in;
    const struct ct_libmod *m = in->m;
    const struct ct_loader *ld = v->x.ld;
    int code = 0;
    snprintf(v->tmo, sizeof v->tmo, "%g", in->timeout_s);
    v->here = ct_xcalloc((size_t)v->l->nsets, sizeof *v->here);
    for (int i = 0; i < v->l->nsets; i++)
        v->verified += v->here[i] =
            asked(in, &v->l->sets[i]) && !in->f->elsewhere(in->f->ctx, &v->l->sets[i]);
    if (!v->verified) /* nothing of it runs here: that line alone, no header before it */
        return finish(v, did, 0);
    ct_verify_say(in->h, "verify %s with %s %s (measured section) against its defaults\n", in->path,
                  v->l->name, v->l->version);
    for (int i = 0; i < ld->n; i++)
        ct_verify_say(in->h, "  with the export: %s=%s\n", ld->name[i], ld->value[i]);
    ct_verify_say(in->h, "\n");
    v->side = (struct ct_verify_side){.m = m,
                                      .h = in->h,
                                      .ld = ld,
                                      .timeout = v->tmo,
                                      .env = v->l->nenv ? v->l : NULL,
                                      .pairs = in->pairs,
                                      .version = v->l->version};
    v->env_each = ct_xcalloc((size_t)v->l->nsets, sizeof *v->env_each);
    v->env_kept = true;
    code = settings(v, did);
    for (int i = 0; i < v->l->nsets && v->env_kept && (!code || code == CT_VERIFY_SLOWER); i++) {
        if (!asked(in, &v->l->sets[i]))
            continue; /* --coll, --local N: those sets only */
        int r = one_set(v, i);
        if (r && (r != CT_VERIFY_SLOWER || !code)) /* a failure outweighs exit 3 */
            code = r;
    }
    /* both passes held: the copy's whole export against the plain defaults */
    if (v->l->nenv && v->env_kept && v->verified && !v->tried && !code && v->fixed)
        code = ct_libverify_whole(&v->side, in, v->fixed, v->here, v->env_each, &v->whole_slow,
                                  &v->whole_geo, &v->whole_tell);
    /* of every set, or none (a subset keeps CONFIG's, unless a set of it read slower) */
    if (v->fixed && (v->verified == v->l->nsets || v->nown))
        ct_config_lib_whole_verified(v->fixed, m->name, !code && !v->whole_slow ? v->whole_geo : 0,
                                     v->whole_tell);
    if (v->whole_slow && !code)
        code = CT_VERIFY_SLOWER;
    return finish(v, did, code);
}

int ct_libverify_config(const struct ct_libverify_in *in, const struct ct_config *c,
                        struct ct_verify_did *did)
{
    struct run v = {.in = in, .orig = c, .config = c, .c = c};
    /* --try-ties: the file verified is CONFIG with the tied rows tried; the copy written is
     * CONFIG, each set verified taken from it as judged */
    v.tried = in->try_ties ? try_ties(in, c) : NULL;
    *did = (struct ct_verify_did){v.tried != NULL, false, false, false};
    if (v.tried)
        v.c = v.tried;
    v.l = ct_config_lib(v.c, in->m->name);
    /* across hosts beside CONFIG: every host reads it */
    int code = in->f->export(in->f->ctx, in->path, v.c, CT_VEXP_CONFIG, &v.x);
    if (!code && !v.x.unchanged)
        code = passes(&v, did);
    in->f->unexport(in->f->ctx, &v.x);
    free(v.here);
    free(v.env_each);
    release(v.fixed);
    release(v.own);
    release(v.tried);
    return code;
}
