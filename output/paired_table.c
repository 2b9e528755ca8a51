/* SPDX-License-Identifier: MIT */
/* The table of a verify against a library's defaults (sweep --verify --lib), see sweep_out.h. */
#include <stdio.h>
#include <string.h>

#include "../lib/parse.h"
#include "sweep_out.h"

void ct_paired_print(FILE *f, const char *lib, const char *how, const struct ct_ruleset *s,
                     const uint64_t *sz, int nsz, const struct ct_rule *const *rule,
                     const struct ct_paired *pr, const struct ct_paired_row *w,
                     const struct ct_paired_sum *t)
{
    char a[32];
    fprintf(f,
            "%s on %d ranks: exported vs defaults in %s, %d pairs at every size, up to %d where "
            "the file may be slower (not %gx beyond the interval) or a rule's gain is not yet "
            "shown\n",
            ct_coll_name(s->coll), s->nranks, how, pr->min, pr->max, CT_PAIRED_SETTLED);
    fprintf(f, "%12s  %-24s %12s %12s %5s %7s  %-16s %7s  %s\n", "size (B)", "exported rule",
            "exported us", "default us", "pairs", "ratio", "95% interval", "vs ctl",
            "95% interval");
    for (int k = 0; k < nsz; k++) {
        char iv[40], lr[16] = "-", li[40] = "-";
        snprintf(iv, sizeof iv, "[%.3f, %.3f]", w[k].q.lo, w[k].q.hi);
        if (w[k].nl) {
            snprintf(lr, sizeof lr, "%.3f", w[k].ql.ratio);
            snprintf(li, sizeof li, "[%.3f, %.3f]", w[k].ql.lo, w[k].ql.hi);
        }
        fprintf(f, "%12llu  %-24s %12.2f %12.2f %5d %7.3f  %-16s %7s  %-*s%s\n",
                (unsigned long long)sz[k], rule[k] ? rule[k]->algo : "?", w[k].ma, w[k].mb, w[k].n,
                w[k].q.ratio, iv, lr, w[k].slower ? 16 : 0, li,
                !w[k].slower         ? ""
                : !w[k].slow_local   ? "  SLOWER than the defaults by > 3%"
                : w[k].slow_measured ? "  SLOWER than the defaults by > 3% (also vs ctl)"
                                     : "  SLOWER than the defaults by > 3% (vs ctl)");
    }
    fprintf(f,
            "%s: geomean %.3f (exported/default time; below 1 is faster), worst %.3f at %s "
            "(%d rounds of launches)\n",
            ct_coll_name(s->coll), t->geo, t->worst, ct_bytes_str(sz[t->worst_k], a, sizeof a),
            pr->rounds);
    if (t->n_swept && t->n_swept < nsz) /* the figure recorded: the grid's, evenly spaced */
        fprintf(f,
                "  over the sweep's own %d sizes (the ranges' midpoints left out, the figure "
                "recorded): geomean %.3f\n",
                t->n_swept, t->swept);
    if (t->n_own && t->n_own < nsz) /* both sides run the same code there: a control */
        fprintf(f,
                "  where the file keeps %s's own choice (%d sizes, the same code on both "
                "sides): %.3f, this run's launch-to-launch noise; the tuned sizes: %.3f\n",
                lib, t->n_own, t->own, t->tuned);
    if (t->n_loc) /* the tuned sizes, each against its controls in the same launches */
        fprintf(f,
                "  the tuned sizes against the controls near them (up to %d each side within "
                "%dx), pair by pair (\"vs ctl\", the launches' state taken out): geomean %.3f "
                "over %d of %d\n",
                CT_PAIRED_NCTL / 2, CT_PAIRED_NEAR, t->local, t->n_loc, nsz - t->n_own);
    if (t->n_tell) /* how coarse the sieve was: ct_paired_tell, the median and the widest */
        fprintf(f,
                "  what it can tell: at the pairs each size took, a loss of %.3fx the "
                "defaults' time shows beyond its interval about half the time (the median over "
                "%d %s; %.3fx at %s, the widest), a smaller one less often, and a size found "
                "slower counts only when fresh launches find it again: more pairs (--pairs N) "
                "narrow it\n",
                t->tell, t->n_tell, t->n_own && t->n_own < nsz ? "tuned sizes" : "sizes",
                w[t->tell_k].tell, ct_bytes_str(sz[t->tell_k], a, sizeof a));
}

void ct_paired_print_own_slow(FILE *f, const char *lib, const uint64_t *sz, int nsz,
                              const bool *own, const struct ct_paired_row *w)
{
    char at[256] = "", b[32];
    int n = 0;
    size_t off = 0;
    for (int k = 0; k < nsz; k++)
        if (own[k] && w[k].slower && n++ < 8 && off < sizeof at)
            off += (size_t)snprintf(at + off, sizeof at - off, "%s%s", off ? ", " : "",
                                    ct_bytes_str(sz[k], b, sizeof b));
    if (n > 8 && off < sizeof at)
        snprintf(at + off, sizeof at - off, " and %d more", n - 8);
    if (n)
        fprintf(f,
                "  SLOWER at %s, where the file keeps %s's own choice: the same code runs on "
                "both sides there (the launches' noise, or a cost of loading the file), so no "
                "rule of the file's is to blame and none is set back\n\n",
                at, lib);
}

void ct_paired_print_gains(FILE *f, const char *lib, const struct ct_ruleset *s,
                           const struct ct_ratio *gain, const int *rounds, const bool *slow,
                           const bool *nogain, const struct ct_paired_cut *cut)
{
    bool any = false;
    for (int r = 0; r < s->nrules; r++) {
        const struct ct_rule *u = &s->rules[r];
        char lo[32], hi[32], range[72];
        if (u->id == 0 || (!rounds[r] && !slow[r] && !nogain[r]))
            continue; /* the library's own choice, or a rule no size checks */
        if (!any)
            fprintf(f,
                    "  each exported rule against the defaults (its sizes' geomean round by "
                    "round, each vs ctl where it has controls; kept when below %.3f with its "
                    "whole interval below 1, a sequential test's: %.1f%% before its sizes' last "
                    "pairs and where measured again, 95-96%% at them):\n",
                    1 / CT_PAIRED_TOL, 100 * (1 - 2 * CT_PAIRED_EARLY));
        any = true;
        snprintf(range, sizeof range, "%s-%s", ct_bytes_str(u->min_bytes, lo, sizeof lo),
                 u->max_bytes == CT_BYTES_INF ? "up" : ct_bytes_str(u->max_bytes, hi, sizeof hi));
        if (rounds[r])
            fprintf(f, "    %-24s %-18s %7.3f  [%.3f, %.3f]  %d rounds  ", u->algo, range,
                    gain[r].ratio, gain[r].lo, gain[r].hi, rounds[r]);
        else
            fprintf(f, "    %-24s %-18s %7s  %-16s  %d rounds  ", u->algo, range, "-", "-", 0);
        if (slow[r] && cut && cut[r].rounds) {
            const struct ct_paired_cut *x = &cut[r];
            fprintf(f,
                    "SLOWER at its edge: cut to %s-%s, where its sizes read %.3f [%.3f, "
                    "%.3f] over %d rounds: kept there\n",
                    ct_bytes_str(x->lo, lo, sizeof lo),
                    x->hi == CT_BYTES_INF ? "up" : ct_bytes_str(x->hi, hi, sizeof hi),
                    x->gain.ratio, x->gain.lo, x->gain.hi, x->rounds);
        } else if (slow[r] || nogain[r])
            fprintf(f, "%s: set back to %s's own choice\n",
                    slow[r] ? "SLOWER at a size"
                    : rounds[r] && ct_paired_slower(&gain[r])
                        ? "slower over its sizes (each inside its interval), no gain"
                        : "no gain shown",
                    lib);
        else
            fprintf(f, "faster: kept\n");
    }
    fprintf(f, "\n");
}

void ct_search_print(FILE *f, const char *name, const char *base, const struct ct_ruleset *sets,
                     int nsets, const struct ct_search_row *rows, int nrows, int coarse)
{
    fprintf(f,
            "--env-search %s (geomean with/without over the sweep's sizes%s; below 1 is "
            "faster):\n  %-16s",
            name, base, "value");
    for (int k = 0; k < nsets; k++)
        fprintf(f, " %14s", ct_coll_name(sets[k].coll));
    fprintf(f, " %9s  verdict\n", "geomean");
    for (int i = 0; i < nrows; i++) {
        const struct ct_search_row *d = &rows[i];
        fprintf(f, "  %-16s", d->value);
        for (int k = 0; k < nsets && !d->failed; k++)
            if (d->geo[k] > 0)
                fprintf(f, " %14.3f", d->geo[k]);
            else /* not judged: no size */
                fprintf(f, " %14s", "-");
        if (d->failed)
            fprintf(f, " %*s  %s\n", 15 * nsets + 9, "-", "FAILED: a run failed (above)");
        else
            fprintf(f, " %9.3f  %s\n", d->all,
                    d->slow   ? "SLOWER than the defaults at a size"
                    : d->gain ? "faster, no size slower"
                              : "no gain shown");
    }
    if (coarse < nrows)
        fprintf(f,
                "  (the last %d: the finer step's, between the best of the others and its "
                "neighbours, or one past an end of the values spaced)\n",
                nrows - coarse);
}

void ct_paired_print_again(FILE *f, const uint64_t *sz, const struct ct_paired_row *w,
                           const struct ct_paired_redo *r, bool groups, const char *where,
                           const char *again)
{
    int left = 0;
    if (!r->n)
        return;
    fprintf(f, "  the size(s) found slower %s, measured again in %s:", where, again);
    for (int j = 0; j < r->n; j++) {
        const struct ct_paired_row *a = &r->rows[j];
        char b[32];
        if (!w[r->map[j]].slower) /* a control or a rule's other size */
            continue;
        left += a->slower;
        fprintf(f, " %s %.3f [%.3f, %.3f]", ct_bytes_str(sz[r->map[j]], b, sizeof b), a->q.ratio,
                a->q.lo, a->q.hi);
        if (a->nl)
            fprintf(f, " vs ctl %.3f [%.3f, %.3f]", a->ql.ratio, a->ql.lo, a->ql.hi);
        fprintf(f, " %d pairs%s;", a->n, a->slower ? " SLOWER" : "");
    }
    fprintf(f, "\n  %s (%s)%s\n", left ? "slower again: counted" : "not slower again: not counted",
            left ? "sizes not slower again are not" : "the first measure's noise",
            groups ? "; their rules' other sizes were measured with them, and each such rule's "
                     "gain is judged over both measures"
                   : "");
}

void ct_search_print_pick(FILE *f, const char *name, const char *lib,
                          const struct ct_search_row *pick, const bool ends[2], bool alone)
{
    if (!pick && alone)
        fprintf(f,
                "no value is faster with no size slower: the sweep runs with %s's own value (%s "
                "unset)\n\n",
                lib, name);
    else if (!pick)
        fprintf(f, "no value is faster with no size slower: none found for %s (%s's own value)\n\n",
                name, lib);
    if (!pick)
        return;
    if (alone)
        fprintf(f,
                "the sweep runs with %s=%s (geomean %.3f); verify judges it again with the rules\n",
                name, pick->value, pick->all);
    else
        fprintf(f, "found: %s=%s (geomean %.3f)\n", name, pick->value, pick->all);
    if (ends[0] || ends[1])
        fprintf(f,
                "  (the %s value judged: one past it may be faster still; search it with "
                "%s=V1,V2,...)\n",
                !ends[0]   ? "largest"
                : !ends[1] ? "smallest"
                           : "only",
                name);
    fprintf(f, "\n");
}

void ct_search_print_found(FILE *f, const struct ct_lib_env *found, int n, const char *was)
{
    int k = 0;
    fprintf(f, "--env-search: the sweep runs with");
    for (int i = 0; i < n; i++)
        if (found[i].value[0])
            fprintf(f, "%s %s=%s", k++ ? "," : "", found[i].name, found[i].value);
    fprintf(f, "%s\n", k ? "" : " none of the values searched (the library's own)");
    if (was && !strcmp(was, found[0].value))
        fprintf(f, "  (%s searched again with %s's value: %s%s again, settled)\n", found[0].name,
                found[1].name, was[0] ? "" : "none found", was);
    else if (was)
        fprintf(f,
                "  (%s searched again with %s's value: %s%s, where it was %s before, and %s was "
                "found with that: not settled; verify judges the two together against the plain "
                "defaults)\n",
                found[0].name, found[1].name, found[0].value[0] ? "" : "none found", found[0].value,
                was[0] ? was : "none found", found[1].name);
    fprintf(f, "\n");
}
