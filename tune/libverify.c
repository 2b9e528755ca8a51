/* SPDX-License-Identifier: MIT */
/*
 * sweep --verify CONFIG --lib LIB, one rule set: paired launches (paired.c) of
 * `colltune run --lib LIB --sizes ...` with the export's loader variables set (A, run
 * --keep-rules) and cleared (B), warmed up past the library's one-time costs, through the
 * caller's job hook; then the judgement (the MPI libraries' verify and NCCL's), shown through
 * the caller's hooks.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../algos/coll.h"
#include "../backend/libmod.h"
#include "../lib/err.h"
#include "../lib/parse.h"
#include "libverify.h"

/* fmt's text (ap) given to say or warn */
static void vtell(const struct ct_verify_hooks *h, bool warn, const char *fmt, va_list ap)
    __attribute__((format(printf, 3, 0)));
static void vtell(const struct ct_verify_hooks *h, bool warn, const char *fmt, va_list ap)
{
    va_list aq;
    va_copy(aq, ap);
    int n = vsnprintf(NULL, 0, fmt, aq);
    va_end(aq);
    char *text = ct_xcalloc((size_t)(n > 0 ? n : 0) + 1, 1);
    vsnprintf(text, (size_t)n + 1, fmt, ap);
    (warn ? h->warn : h->say)(h->ctx, text);
    free(text);
}

void ct_verify_say(const struct ct_verify_hooks *h, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vtell(h, false, fmt, ap);
    va_end(ap);
}

void ct_verify_warn(const struct ct_verify_hooks *h, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vtell(h, true, fmt, ap);
    va_end(ap);
}

void ct_verify_side_env(const struct ct_libmod *m, const struct ct_loader *ld, bool with)
{
    bool own_loaded = false; /* B: the defaults even where a config file loads rules */
    for (int i = 0; i < ld->n; i++) {
        with ? setenv(ld->name[i], ld->value[i], 1) : unsetenv(ld->name[i]);
        own_loaded |= m->own_name && !strcmp(ld->name[i], m->own_name);
    }
    if (m->own_name && !with)
        setenv(m->own_name, m->own_value, 1);
    else if (m->own_name && !own_loaded)
        unsetenv(m->own_name);
}

/* What a launch set for its side is not left to the next: a loader variable or a setting a
 * later pass no longer names (one --each-setting left out, the copy exported again without
 * it, MPICH's CH4 tree of an export whose rules were set back) would otherwise stay set in this
 * environment, on both sides of every later launch and round. */
static void side_clear(const struct ct_verify_side *x)
{
    for (int i = 0; x->ld && i < x->ld->n; i++)
        unsetenv(x->ld->name[i]);
    for (int i = 0; x->env && i < x->env->nenv; i++)
        ct_libmod_env_put(x->m, x->env->env[i].name, NULL);
}

/* The release a launch's table names ("... transport: Open MPI 4.1.4"), where x checks one:
 * NULL, or the line that refuses it (into line). */
static const char *other_release(const struct ct_verify_side *x, const char *l, char *line,
                                 size_t len)
{
    const char *t = x->version ? strstr(l, "transport: ") : NULL;
    size_t n = strlen(x->m->title);
    if (l[0] != '#' || !t || strncmp(t += 11, x->m->title, n) || t[n] != ' ' ||
        ct_version_of(t + n + 1, x->version)) /* its major and minor */
        return NULL;
    snprintf(line, len,
             "--verify: the section was measured with %s %s, and the library its launches run is "
             "%s %.20s: its algorithm ids and names are %s's; verify where %s %s runs, or sweep "
             "--lib %s here",
             x->m->title, x->version, x->m->title, t + n + 1, x->version, x->m->title, x->version,
             x->m->name);
    return line;
}

/* One run of `run --lib` over the sizes with -w warm, the export's loader variables set (A)
 * or not (B); t[k] = out-of-place time at size k. */
static int run_part(const struct ct_verify_side *x, bool with, const uint64_t *sz, int nsz,
                    double *t, char *warm)
{
    const struct ct_ruleset *s = x->s;
    char n[16], sizes[CT_VERIFY_MAXSZ * 24];
    size_t off = 0;
    for (int k = 0; k < nsz; k++)
        off += (size_t)snprintf(sizes + off, sizeof sizes - off, "%s%llu", k ? "," : "",
                                (unsigned long long)sz[k]);
    snprintf(n, sizeof n, "%d", s->nranks);
    char *args[] = {"run",
                    "--lib",
                    (char *)x->m->name,
                    "--coll",
                    (char *)ct_coll_name(s->coll),
                    "--sizes",
                    (char *)sizes,
                    "-n",
                    "20",
                    "-w",
                    warm,
                    "-c",
                    "0",
                    "-d",
                    (char *)ct_dtype_name(s->dtype),
                    "-o",
                    (char *)ct_redop_name(s->op),
                    "--timeout",
                    (char *)x->timeout,
                    "--place",
                    "out",
                    "--max-time",
                    CT_VERIFY_SPAN,
                    "--batch", /* short collectives timed as the sweep timed them */
                    "auto",
                    "--keep-rules"}; /* A: the file the loader variables name */
    bool rules = with && !(x->env && x->env_alone);
    ct_verify_side_env(x->m, x->ld, rules);
    for (int i = 0; x->env && i < x->env->nenv; i++) /* after: the loader names them too */
        ct_libmod_env_put(x->m, x->env->env[i].name,
                          with || (!x->env_alone && !x->whole) ? x->env->env[i].value : NULL);
    char *out = NULL, line[480];
    bool said = false;
    int rc = x->h->job(x->h->ctx, s->nranks, (int)(sizeof args / sizeof args[0]) - !rules, args,
                       &out, &said),
        got = 0;
    side_clear(x);
    for (int k = 0; k < nsz; k++)
        t[k] = 0;
    for (char *l = out && !rc ? strtok(out, "\n") : NULL; l; l = strtok(NULL, "\n")) {
        unsigned long long size;
        double us;
        if (other_release(x, l, line, sizeof line)) {
            free(out);
            return x->h->failed(x->h->ctx, CT_VERIFY_USAGE, line);
        }
        /* a time a ratio can take (finite, above 0; the table's %.2f prints 0.00 under 5 ns),
         * each size once: else the run counts as failed, not as a size found fine */
        if (l[0] != '#' && sscanf(l, "%llu %*s %*s %*s %*s %*s %lf", &size, &us) == 2 &&
            isfinite(us) && us > 0)
            for (int k = 0; k < nsz; k++)
                if (sz[k] == size && !(t[k] > 0)) {
                    t[k] = us;
                    got++;
                }
    }
    free(out);
    if (said) /* interrupted, or the launcher could not bring the job up: said */
        return rc;
    if (rc == 0 && got == nsz)
        return 0;
    snprintf(line, sizeof line, "%s: a run with %s %s failed (exit %d, %d of %d sizes)",
             x->what ? x->what : "--verify", x->m->title,
             !with                    ? "defaults"
             : x->env && x->env_alone ? "and the launch settings"
                                      : "and the exported file",
             rc, got, nsz);
    return x->h->failed(x->h->ctx, rc, line);
}

/* One launch (ct_paired_launch_fn): the sizes up to CT_VERIFY_WARM_MAX after 200 warmup calls each,
 * the larger ones after 3. A library's one-time costs (MPICH 4.0.2's recursive doubling read
 * 18 us at 128 B on 2 ranks after 3 warmup calls, 0.7 us after 100) are not what a job's
 * calls cost; 200 calls at 256 KiB take about 10 ms here. */
int ct_libverify_launch(void *ctx, bool with, const uint64_t *sz, int nsz, double *t)
{
    /* ct_paired_measure hands it one part (split CT_VERIFY_WARM_MAX, as every caller here
     * passes: a size's controls are those its own process ran); the split below is a guard */
    int small = 0, code;
    while (small < nsz && sz[small] <= CT_VERIFY_WARM_MAX) /* sz is sorted */
        small++;
    code = small ? run_part(ctx, with, sz, small, t, "200") : 0;
    return code || small == nsz ? code
                                : run_part(ctx, with, sz + small, nsz - small, t + small, "3");
}

int ct_verify_again(struct ct_verify_side *x, const uint64_t *sz, const bool *own,
                    const struct ct_paired *pr, const struct ct_paired_row *w, bool groups,
                    const char *where, struct ct_paired_redo *r, bool *cleared)
{
    int code = ct_paired_again(pr, sz, own, w, groups, CT_VERIFY_WARM_MAX, ct_libverify_launch, x,
                               r, cleared);
    if (!code)
        x->h->again(x->h->ctx, sz, w, r, groups, where);
    return code;
}

int ct_libverify_set(const struct ct_verify_side *base, const struct ct_config *c,
                     const struct ct_ruleset *s, bool *slow, bool *nogain,
                     struct ct_paired_cut *cut, double *geo, double *tell)
{
    uint64_t sz[CT_VERIFY_MAXSZ];
    /* own: the file keeps the library's choice there, both sides run the same */
    bool own[CT_VERIFY_MAXSZ], swept[CT_VERIFY_MAXSZ];
    const struct ct_rule *rule[CT_VERIFY_MAXSZ];
    int group[CT_VERIFY_MAXSZ], nsz = ct_paired_sizes(&c->sweep, s, sz, swept, CT_VERIFY_MAXSZ);
    ct_verify_rules(s, sz, nsz, rule, own, group);
    struct ct_verify_side x = *base;
    x.s = s;
    struct ct_paired pr;
    int code = ct_paired_measure(sz, nsz, own, group, x.pairs, CT_VERIFY_WARM_MAX,
                                 ct_libverify_launch, &x, &pr);
    *geo = 0;
    if (tell)
        *tell = 0;
    bool cleared[CT_VERIFY_MAXSZ] = {false}; /* slower, but not again in fresh launches */
    struct ct_paired_redo r = {0};
    if (!code) {
        struct ct_paired_row w[CT_VERIFY_MAXSZ];
        struct ct_paired_sum t;
        ct_paired_judge(&pr, own, nsz, w, &t);
        if (t.slower)
            code = ct_verify_again(&x, sz, own, &pr, w, true, "in the table below", &r, cleared);
    }
    if (!code)
        code = ct_verify_judge(base->h, base->m->title, "alternating launches (A B B A A B ...)", s,
                               sz, nsz, swept, rule, own, cleared, &r, &pr, slow, nogain, cut, geo,
                               tell);
    ct_paired_redo_release(&r);
    ct_paired_release(&pr);
    return code;
}

void ct_verify_rules(const struct ct_ruleset *s, const uint64_t *sz, int nsz,
                     const struct ct_rule **rule, bool *own, int *group)
{
    for (int k = 0; k < nsz; k++) {
        rule[k] = ct_ruleset_find(s, sz[k]);
        own[k] = !rule[k] || rule[k]->id == 0;
        group[k] = own[k] ? -1 : (int)(rule[k] - s->rules);
    }
}

int ct_verify_judge(const struct ct_verify_hooks *h, const char *lib, const char *how,
                    const struct ct_ruleset *s, const uint64_t *sz, int nsz, const bool *swept,
                    const struct ct_rule *const *rule, const bool *own, const bool *cleared,
                    struct ct_paired_redo *again, struct ct_paired *pr, bool *slow, bool *nogain,
                    struct ct_paired_cut *cut, double *geo, double *tell)
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
    if (h) {
        struct ct_verify_judged j = {.lib = lib,
                                     .how = how,
                                     .s = s,
                                     .sz = sz,
                                     .nsz = nsz,
                                     .rule = rule,
                                     .own = own,
                                     .pr = pr,
                                     .w = w,
                                     .t = &t,
                                     .gain = gain,
                                     .rounds = rounds,
                                     .slow = slow,
                                     .nogain = nogain,
                                     .cut = cut};
        h->judged(h->ctx, &j);
    }
    int slower = 0; /* sizes of CONFIG's own slower: a tried row (--try-ties) is only set back */
    bool tried_slow = false;
    for (int k = 0; k < nsz; k++)
        if (w[k].slower && rule[k] && rule[k]->tried)
            tried_slow = true;
        else
            slower += w[k].slower;
    *geo = slower || tried_slow ? 0 : t.swept; /* the set changes from what ran: not verified */
    if (tell)
        *tell = *geo > 0 ? t.tell : 0;
    free(w);
    free(gain);
    free(rounds);
    return slower ? CT_VERIFY_SLOWER : 0;
}

int ct_libverify_copy_failed(const struct ct_libverify_in *in)
{
    char line[4200];
    snprintf(line, sizeof line, "--verify: cannot copy '%s'", in->path);
    return in->h->failed(in->h->ctx, 1, line);
}

struct ct_config *ct_libverify_copy(const struct ct_libverify_in *in, const struct ct_config *c,
                                    int *code)
{
    struct ct_config *d = in->f->copy(in->f->ctx, c);
    if (!d)
        *code = ct_libverify_copy_failed(in);
    return d;
}
