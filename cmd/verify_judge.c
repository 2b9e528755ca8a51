/* SPDX-License-Identifier: MIT */
/* A verify's judgement of one rule set against the library's defaults (the MPI libraries' verify
 * and NCCL's): each size's rule, the table and verdicts, and the sets it leaves to others. */
#include <stdio.h>
#include <stdlib.h>

#include "../output/export.h"
#include "../output/sweep_out.h"
#include "cmd.h"
#include "librun.h"

void ct_verify_rules(const struct ct_ruleset *s, const uint64_t *sz, int nsz,
                     const struct ct_rule **rule, bool *own, int *group)
{
    for (int k = 0; k < nsz; k++) {
        rule[k] = ct_ruleset_find(s, sz[k]);
        own[k] = !rule[k] || rule[k]->id == 0;
        group[k] = own[k] ? -1 : (int)(rule[k] - s->rules);
    }
}

int ct_verify_judge(const char *lib, const char *how, const struct ct_ruleset *s,
                    const uint64_t *sz, int nsz, const bool *swept,
                    const struct ct_rule *const *rule, const bool *own, const bool *cleared,
                    struct ct_paired_redo *again, struct ct_paired *pr, bool print, bool *slow,
                    bool *nogain, struct ct_paired_cut *cut, double *geo)
{
    struct ct_paired_row *w = ct_xcalloc(nsz > 0 ? (size_t)nsz : 1, sizeof *w);
    struct ct_ratio *gain = ct_xcalloc((size_t)s->nrules, sizeof *gain);
    int *rounds = ct_xcalloc((size_t)s->nrules, sizeof *rounds);
    struct ct_paired_sum t;
    ct_paired_judge(pr, own, nsz, w, &t);
    ct_paired_swept(w, swept, nsz, &t);
    for (int k = 0; cleared && k < nsz; k++) /* not slower again in fresh launches */
        if (cleared[k] && w[k].slower) {
            w[k].slower = w[k].slow_measured = w[k].slow_local = false;
            t.slower--;
        }
    ct_paired_rules(pr, again && again->measured ? &again->q : NULL, s, rule, own, w, nsz, slow,
                    nogain, gain, rounds);
    for (int r = 0; r < s->nrules; r++) /* a tried row no size checked: no gain shown */
        nogain[r] |= s->rules[r].tried && !rounds[r];
    for (int r = 0; cut && r < s->nrules; r++)
        if (slow[r])
            ct_paired_trim(pr, again, s, r, sz, rule, own, w, nsz, &cut[r]);
    if (print) {
        ct_paired_print(stdout, lib, how, s, sz, nsz, rule, pr, w, &t);
        ct_paired_print_gains(stdout, lib, s, gain, rounds, slow, nogain, cut);
        ct_paired_print_own_slow(stdout, lib, sz, nsz, own, w);
        fflush(stdout); /* before what goes to stderr next */
    }
    int slower = 0; /* sizes of CONFIG's own slower: a tried row (--try-ties) is only set back */
    bool tried_slow = false;
    for (int k = 0; k < nsz; k++)
        if (w[k].slower && rule[k] && rule[k]->tried)
            tried_slow = true;
        else
            slower += w[k].slower;
    *geo = slower || tried_slow ? 0 : t.swept; /* the set changes from what ran: not verified */
    free(w);
    free(gain);
    free(rounds);
    return slower ? CT_EXIT_CHECK : 0;
}

const char *ct_verify_set_elsewhere(const struct ct_opts *o, const struct ct_export_out *out,
                                    const struct ct_ruleset *s)
{
    for (int k = 0; k < out->nleft_out; k++)
        if (out->left_out[k] == s) /* not in the file: a job of its shape runs another set's */
            return "the file carries one rule set per collective, not this";
    if (o->hosts ? s->nranks != o->hosts_ranks : s->nnodes > 1)
        return o->hosts ? "--hosts places other ranks" : "--hosts LIST runs it across hosts";
    return NULL;
}
