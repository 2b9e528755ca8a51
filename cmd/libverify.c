/* SPDX-License-Identifier: MIT */
/*
 * sweep --verify CONFIG --lib LIB: the library loading the file `export` writes from CONFIG's
 * measured section (A: the export's loader variables set) against its defaults (B: cleared),
 * paired launches (tune/paired.c) of `colltune run --lib LIB --sizes ...` at the sweep's sizes
 * and every range's midpoint (ct_paired_sizes), warmed up past the library's one-time costs.
 * Per size the ratio A/B with a 95% interval over the pairs and, where the file keeps the
 * library's choice near it, against those sizes in the same launches (ct_paired_judge);
 * exit 3 when a size is slower than the defaults by > 3% beyond either interval. A rule that
 * does not show a gain of > 3% beyond its interval over its sizes (ct_paired_gains) is set
 * back to the library's choice in the copy verify writes, as a slower one is. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../algos/coll.h"
#include "../backend/libmod.h"
#include "../lib/parse.h"
#include "../output/config.h"
#include "../output/export.h"
#include "../output/sweep_out.h"
#include "../tune/stats.h"
#include "cmd.h"
#include "librun.h"

/* Set s is one --coll and --local N ask for. */
static bool asked(const struct ct_opts *o, unsigned colls, const struct ct_ruleset *s)
{
    return colls & CT_COLL_BIT(s->coll) && (!o->local_set || s->nranks == o->local_set);
}

/* --try-ties: a copy of c with the rows the sweep found tied with the library's own choice put
 * in its place in the sets asked for (ct_config_lib_try_ties); NULL, said, when none. */
static struct ct_config *try_ties(const struct ct_opts *o, const struct ct_libmod *m,
                                  const struct ct_config *c, unsigned colls)
{
    struct ct_config *t = ct_config_copy(c);
    const struct ct_librules *l = t ? ct_config_lib(t, m->name) : NULL;
    int n = 0;
    for (int i = 0; l && i < l->nsets; i++)
        n += asked(o, colls, &l->sets[i]) ? ct_config_lib_try_ties(t, m->name, i) : 0;
    if (n)
        return t;
    printf("--try-ties: CONFIG records no %s row tied with its own choice in the sets asked for "
           "(a library sweep records them in each range's \"ties\"; a CONFIG from before has "
           "none)\n\n",
           m->title);
    if (t)
        ct_config_release(t);
    free(t);
    return NULL;
}

/* The rows of s tried in the library's place (--try-ties), each on a line; how many. */
static int say_tried(const struct ct_libmod *m, const struct ct_ruleset *s)
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
        printf("try %s on %d ranks: %s (id %d%s) at %s..%s, tied with %s's choice in the sweep\n",
               ct_coll_name(s->coll), s->nranks, r->algo, r->id, seg,
               ct_bytes_str(r->min_bytes, lo, sizeof lo), hi, m->title);
        n++;
    }
    if (n)
        printf("\n");
    return n;
}

int ct_libverify(const struct ct_opts *o, const struct ct_config *c, const char *path,
                 unsigned colls, struct ct_verify_did *did)
{
    const struct ct_libmod *m = ct_libmod_find(o->lib);
    const struct ct_librules *l = ct_config_lib(c, o->lib);
    const struct ct_emitter *e = ct_emitter_find(m->format);
    struct ct_err err = {0};
    char *mod = NULL;
    int code = 0, verified = 0, nstamped = 0, nown = 0, nunmarked = 0, n[CT_JUDGED_N] = {0};
    /* CONFIG with the slower ranges and those with no gain set back to the defaults and the
     * sets found no slower marked verified */
    struct ct_config *fixed = NULL, *own = NULL; /* own: CONFIG less a setting */
    if (!l)
        code = ct_cmd_fail("sweep", CT_EXIT_USAGE,
                           "--verify: '%s' has no measured %s section (colltune sweep --lib %s)",
                           path, m->title, m->name);
    else if (ct_libmod_path(m, &mod, &err) < 0 || ct_libmod_launcher_check(m, &err) < 0)
        code = ct_cmd_fail("sweep", CT_EXIT_USAGE, "%s", err.msg);
    free(mod);
    if (code)
        return code;
    /* --try-ties: the file verified is CONFIG with the tied rows tried; the copy written is
     * CONFIG, each set verified taken from it as judged */
    const struct ct_config *config = c, *orig = c; /* orig: CONFIG as read */
    struct ct_config *tried = o->try_ties ? try_ties(o, m, c, colls) : NULL;
    *did = (struct ct_verify_did){tried != NULL, false, false, false};
    if (tried)
        l = ct_config_lib(c = tried, m->name);
    struct ct_verify_export x; /* across hosts beside CONFIG: every host reads it */
    int rc = ct_verify_export(o, e, path, c, &x, &err);
    if (rc == CT_EUNSUPP && x.out.unchanged)
        printf("the export keeps %s's defaults everywhere: nothing to verify (%s)\n", m->title,
               err.msg);
    else if (rc < 0)
        code = ct_cmd_fail("sweep", rc == CT_EIO ? CT_EXIT_FAIL : CT_EXIT_USAGE, "%s%s",
                           rc == CT_EIO ? "" : "--verify: ", err.msg);
    if (rc == 0) {
        const struct ct_loader *ld = x.ld;
        char tmo[32];
        snprintf(tmo, sizeof tmo, "%g", o->timeout_s);
        printf("verify %s with %s %s (measured section) against its defaults\n", path, l->name,
               l->version);
        for (int i = 0; i < ld->n; i++)
            printf("  with the export: %s=%s\n", ld->name[i], ld->value[i]);
        printf("\n");
        /* the launch settings first, alone: the rules were measured with them, and are judged
         * with them on both sides; settings that do not hold leave the rules unjudged */
        struct ct_verify_hooks h;
        ct_verify_hooks_init(&h, o);
        struct ct_verify_side side = {m, &h, NULL, ld, tmo, l->nenv ? l : NULL, false, NULL, false};
        bool *here = ct_xcalloc((size_t)l->nsets, sizeof *here), env_kept = true, env_slow = false,
             whole_slow = false, any = false, each_slow = false, env_marked = false;
        double *env_each = ct_xcalloc((size_t)l->nsets, sizeof *env_each), whole_geo = 0;
        for (int i = 0; i < l->nsets; i++)
            verified += here[i] =
                asked(o, colls, &l->sets[i]) && !ct_verify_set_elsewhere(o, &x.out, &l->sets[i]);
        double env_geo = 0;
        if (l->nenv && verified)
            code = ct_libverify_envs(&side, c, here, o->each_setting, &env_kept, &env_slow,
                                     &env_geo, env_each);
        if (verified && !code && o->each_setting && l->nenv > 1 && /* CONFIG less one */
            !(code = ct_libverify_each(o, e, path, &side, env_kept, &config, &c, tried, &x, here,
                                       &env_geo, env_each, &own)) &&
            (did->dropped = own != NULL))
            l = ct_config_lib(c, m->name), env_kept = true, each_slow = env_slow, env_slow = false;
        if (!env_kept && !code) { /* the copy without them; the rules are not judged */
            if (!(fixed = ct_config_copy(config)))
                code = ct_cmd_fail("sweep", CT_EXIT_FAIL, "--verify: cannot copy '%s'", path);
            else if (ct_config_lib_env_drop(fixed, m->name, -1))
                code = ct_verify_write_env_dropped(fixed, path, env_slow, l->nenv,
                                                   o->each_setting && l->nenv > 1, m->name,
                                                   env_slow ? CT_EXIT_CHECK : 0);
        } else if (l->nenv && !code && verified && verified < l->nsets) /* a job runs them all */
            printf("the launch settings were judged on %d of the section's %d collective(s): not "
                   "marked verified (a verify of all of them here marks them)\n\n",
                   verified, l->nsets);
        else if (l->nenv && !code && verified)
            env_marked =
                ct_config_lib_env_verified(fixed = ct_config_copy(config), m->name, env_geo);
        for (int i = 0; i < l->nsets && env_kept && (!code || code == CT_EXIT_CHECK); i++) {
            const struct ct_ruleset *s = &l->sets[i];
            if (!asked(o, colls, s))
                continue; /* --coll, --local N: those sets only */
            if (!here[i]) {
                printf("%s on %d ranks, %d nodes: not verified here (%s)\n\n",
                       ct_coll_name(s->coll), s->nranks, s->nnodes,
                       ct_verify_set_elsewhere(o, &x.out, s));
                continue;
            }
            if (ct_ruleset_keeps_own(s)) { /* nothing of it in the file: no launches */
                printf("%s on %d ranks: the file keeps %s's own choice at every size, the same "
                       "code on both sides: nothing to judge%s\n\n",
                       ct_coll_name(s->coll), s->nranks, m->title,
                       l->nenv ? " (the launch settings were, above)" : "");
                continue;
            }
            int ntried = say_tried(m, s);
            bool *slow = ct_xcalloc((size_t)s->nrules, sizeof *slow),
                 *nogain = ct_xcalloc((size_t)s->nrules, sizeof *nogain);
            struct ct_paired_cut *cut = ct_xcalloc((size_t)s->nrules, sizeof *cut);
            double geo;
            int r = ct_libverify_set(&side, c, s, slow, nogain, cut, &geo);
            if (r && (r != CT_EXIT_CHECK || !code)) /* a failure outweighs exit 3 */
                code = r;
            fixed = fixed ? fixed : ct_config_copy(config);
            if (ntried) /* the set as verified, its tried rows in it */
                ct_config_lib_set_copy(fixed, c, m->name, i);
            int was = n[CT_JUDGED_SLOW] + n[CT_JUDGED_CUT];
            ct_config_lib_judged(fixed, m->name, i, s, slow, nogain, cut, n);
            /* slower only where it keeps the library's own choice: no rule found slower */
            bool own = r == CT_EXIT_CHECK && n[CT_JUDGED_SLOW] + n[CT_JUDGED_CUT] == was;
            if (ntried) /* the library's own choice as one range where no tried row stays */
                ct_config_lib_join_own(fixed, m->name, i);
            /* after the demotions, which clear it: a set found slower loses a record it had
             * from an earlier verify; one that only lost rules with no gain keeps this one; a
             * set with rows tried is not marked: those kept were picked on these launches,
             * and they took the controls of CONFIG's own rules */
            bool stamped =
                fixed && ct_config_lib_verified(fixed, m->name, i, r || ntried ? 0 : geo);
            nstamped += stamped;
            nown += fixed && own;
            /* and a mark from an earlier verify cleared: the copy must be written */
            nunmarked += fixed && own && ct_config_lib(orig, m->name)->sets[i].verified.at[0];
            free(slow);
            free(nogain);
            free(cut);
        }
        for (int k = 0; k < CT_JUDGED_N; k++)
            any |= n[k] > 0;
        /* both passes held: the copy's whole export against the plain defaults */
        if (l->nenv && env_kept && verified && !tried && !code && fixed)
            code =
                ct_libverify_whole(&side, e, path, fixed, here, env_each, &whole_slow, &whole_geo);
        /* of every set, or none (a subset keeps CONFIG's, unless a set of it read slower) */
        if (fixed && (verified == l->nsets || nown))
            ct_config_lib_whole_verified(fixed, m->name, !code && !whole_slow ? whole_geo : 0);
        if (whole_slow && !code)
            code = CT_EXIT_CHECK;
        free(here);
        free(env_each);
        if (!verified && !code)
            code = ct_verify_no_set(o, l, m->title, path, colls);
        /* a rule slower (set back or cut); else slower only where it keeps the library's own */
        bool rules_slow = n[CT_JUDGED_SLOW] || n[CT_JUDGED_CUT];
        if (code == CT_EXIT_CHECK && env_kept && !whole_slow) /* else said below, or above */
            ct_verify_say_slower(m->title, rules_slow);
        did->own_slow = code == CT_EXIT_CHECK && env_kept && !whole_slow && !rules_slow && !tried;
        code = each_slow && !code ? CT_EXIT_CHECK : code;            /* together slower: CONFIG's */
        if ((did->whole_slow = whole_slow && code == CT_EXIT_CHECK)) /* each held, not the whole */
            code = ct_verify_write_unmarked(fixed, path, m, code);
        else if (own && !fixed && !(fixed = ct_config_copy(config)) && /* CONFIG less one */
                 (!code || code == CT_EXIT_CHECK))
            code = ct_cmd_fail("sweep", CT_EXIT_FAIL, "--verify: cannot copy '%s'", path);
        else if (fixed && (nstamped || any || nunmarked || own || env_marked) &&
                 (code == 0 || code == CT_EXIT_CHECK))
            code = ct_verify_write_fixed(fixed, path, n, nstamped, nown, nunmarked, own != NULL,
                                         env_marked, m->title, code);
        else if (code == CT_EXIT_CHECK && env_kept)
            ct_verify_say_unchanged();
    }
    ct_verify_export_release(&x);
    struct ct_config *made[] = {fixed, own, tried};
    for (int k = 0; k < 3; k++) {
        if (made[k])
            ct_config_release(made[k]);
        free(made[k]);
    }
    fflush(stdout);
    return code;
}
