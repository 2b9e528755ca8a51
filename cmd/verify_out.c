/* SPDX-License-Identifier: MIT */
/* What sweep --verify writes beside CONFIG (the MPI libraries' verify and NCCL's), and the
 * environment of its two sides. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../algos/coll.h"
#include "../output/config.h"
#include "../output/export.h"
#include "../output/sweep_out.h"
#include "../lib/err.h"
#include "cmd.h"
#include "librun.h"

/* fixed written as NAME.verified.json beside path (into out): 0, or a failure (said). */
static int write_copy(const struct ct_config *fixed, const char *path, char *out, size_t len)
{
    struct ct_err err = {0};
    ct_verify_copy_path(path, out, len);
    /* a verdict (3) is lost with the copy: a runtime failure, as documented */
    if (ct_config_json_write(out, fixed, &err) < 0) /* what verify was run for: a failure */
        return ct_cmd_fail("sweep", CT_EXIT_FAIL, "%s", err.msg);
    return 0;
}

static void vsay_wrote(const char *out, const char *fmt, va_list ap)
    __attribute__((format(printf, 2, 0)));
static void say_wrote(const char *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int write_said(const struct ct_config *fixed, const char *path, int code, const char *fmt,
                      ...) __attribute__((format(printf, 4, 5)));

/* "colltune sweep: wrote OUT: CONFIG " and what the copy is (fmt, ap) on stderr */
static void vsay_wrote(const char *out, const char *fmt, va_list ap)
{
    fprintf(stderr, "colltune sweep: wrote %s: CONFIG ", out);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
}

static void say_wrote(const char *out, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsay_wrote(out, fmt, ap);
    va_end(ap);
}

/* fixed written (write_copy) and said (say_wrote: fmt): code, or a failure (said) */
static int write_said(const struct ct_config *fixed, const char *path, int code, const char *fmt,
                      ...)
{
    char out[4200];
    int rc = write_copy(fixed, path, out, sizeof out);
    if (rc)
        return rc;
    va_list ap;
    va_start(ap, fmt);
    vsay_wrote(out, fmt, ap);
    va_end(ap);
    return code;
}

int ct_verify_write_env_dropped(const struct ct_config *fixed, const char *path, bool slow,
                                int nenv, bool each_ran, const char *lib, int code)
{
    char each[256] = ""; /* judged together, one may cost what the others gain */
    if (nenv > 1)
        snprintf(each, sizeof each,
                 "; the %d were judged together%s, and one may cost what the others gain: judge "
                 "each with colltune sweep --lib %s --env-search NAME=VALUE, the others as "
                 "--env%s",
                 nenv,
                 each_ran ? nenv >= 3 ? " and with each left out, and alone, none holding"
                                      : " and with each left out, none holding"
                          : "",
                 lib, each_ran ? "" : ", or verify with --each-setting");
    return write_said(
        fixed, path, code,
        "without its launch settings (%s); its rules were measured with them and "
        "are not verified: sweep again without those --env settings, or with "
        "others%s",
        slow ? "slower than the defaults at a size" : "no gain shown over the defaults", each);
}

int ct_verify_write_unmarked(const struct ct_config *fixed, const char *path, const char *lib,
                             int code)
{
    return write_said(fixed, path, code,
                      "(the ranges without a gain set back, if any) with no verified marks: the "
                      "export as a job runs it (the launch settings and the rules together) is "
                      "slower than %s's plain defaults at a size, though each held apart (sweep "
                      "again, or without the settings)",
                      lib);
}

void ct_verify_say_slower(const char *lib, bool rules)
{
    if (rules)
        fprintf(stderr,
                "colltune sweep: the exported file is slower than %s's defaults at some size (by "
                "more than 3%%, beyond the intervals)\n",
                lib);
    else
        fprintf(stderr,
                "colltune sweep: the exported file read slower than %s's defaults only where it "
                "keeps %s's own choice (the same code on both sides; the lines above): no rule "
                "found slower\n",
                lib, lib);
}

void ct_verify_say_unchanged(void)
{
    fprintf(stderr, "colltune sweep: CONFIG stays as it is (no copy written: no rule found slower, "
                    "no verified mark to clear)\n");
}

int ct_verify_write_fixed(const struct ct_config *fixed, const char *path, const int *n,
                          int nstamped, int nown, int nunmarked, bool dropped, bool env_marked,
                          bool keeps_own, const char *lib, int code)
{
    int nslow = n[CT_JUDGED_SLOW], nnogain = n[CT_JUDGED_NOGAIN], ncut = n[CT_JUDGED_CUT],
        kept = n[CT_JUDGED_TRIED_KEPT], tried = kept + n[CT_JUDGED_TRIED_BACK],
        tcut = n[CT_JUDGED_TRIED_CUT];
    char out[4200], what[96] = "", cut[112] = "", ties[192] = "", own[224] = "";
    if (tried && !nstamped && !nslow && !nnogain && !ncut && !kept && !nunmarked && !dropped) {
        fprintf(stderr, /* all set back */
                "colltune sweep: none of the %d tied row(s) tried in %s's place gained; CONFIG "
                "stays as it is (no copy written; a verify without --try-ties marks what it "
                "verifies)\n",
                tried, lib);
        return code;
    }
    int rc = write_copy(fixed, path, out, sizeof out);
    if (rc)
        return rc;
    /* what to do with the copy: export it, unless it changes nothing a job runs (export
     * refuses that: the defaults stand) */
    char next[160] = "export that one";
    if (keeps_own)
        snprintf(next, sizeof next,
                 "it keeps %s's own choice at every size and sets nothing: nothing to export "
                 "(the defaults stand)",
                 lib);
    if (nslow && nnogain)
        snprintf(what, sizeof what, "the %d range(s) found slower and the %d that showed no gain",
                 nslow, nnogain);
    else if (nslow || nnogain)
        snprintf(what, sizeof what, "the %d range(s) %s", nslow + nnogain,
                 nslow ? "found slower" : "that showed no gain");
    if (ncut) /* slower at an edge only: the rest of the range kept */
        snprintf(cut, sizeof cut,
                 "the %d range(s) slower only at an edge cut to the sizes that gained", ncut);
    if (nown) /* slower only where it keeps lib's own choice: no rule to blame, not marked */
        snprintf(own, sizeof own,
                 "%d collective(s) slower than %s's defaults only where it keeps %s's own choice "
                 "left unmarked%s",
                 nown, lib, lib, nunmarked ? " (an earlier verify's mark cleared)" : "");
    char back[192] = "", stamped[64] = ""; /* the ranges set back; the sets marked */
    if (what[0])
        snprintf(back, sizeof back, "%s set back to %s's own choice", what, lib);
    if (tried) { /* --try-ties: what verify kept it also picked; a verify without it checks */
        char tcuts[64] = "";
        if (tcut) /* slower at an edge: kept on the sizes that gained */
            snprintf(tcuts, sizeof tcuts, " (%d of them cut to the sizes that gained)", tcut);
        if (kept)
            snprintf(ties, sizeof ties,
                     "%s%d of the %d tied row(s) tried in %s's place, where "
                     "they gained%s",
                     back[0] || cut[0] ? "; " : "", kept, tried, lib, tcuts);
        else
            snprintf(ties, sizeof ties, "%snone of the %d tied row(s) tried in %s's place gained",
                     back[0] || cut[0] ? "; " : "", tried, lib);
        if (nstamped)
            snprintf(stamped, sizeof stamped, "; its %d verified collective(s) marked so",
                     nstamped);
        say_wrote(out, "with %s%s%s%s%s%s%s; %s%s%s", back, back[0] && cut[0] ? "; " : "", cut,
                  ties, stamped, own[0] ? "; " : "", own, next,
                  keeps_own ? "" : " (and verify it again without --try-ties: ",
                  keeps_own ? ""
                  : kept    ? "the rows kept were picked on these launches)"
                            : "it marks what it verifies)");
        return code;
    }
    if (nstamped)
        snprintf(stamped, sizeof stamped, "%s its %d verified collective(s) marked so",
                 own[0] ? ";" : " and", nstamped);
    if (nslow || ncut)
        say_wrote(out, "with %s%s%s%s%s; %s%s", back, back[0] && cut[0] ? "; " : "", cut,
                  own[0] ? "; " : "", own, next, keeps_own ? "" : " (and verify it)");
    else if (nown)
        say_wrote(out, "with %s%s%s%s%s%s", back, back[0] ? "; " : "", own, stamped,
                  keeps_own ? "; " : "", keeps_own ? next : "");
    else if (nnogain)
        say_wrote(out, "with %s%s; %s", back, stamped, next);
    else if (!nstamped && !env_marked) /* settings left out, the rest of CONFIG as it was */
        say_wrote(out, "without the launch setting(s) --each-setting left out (above); %s", next);
    else if (!nstamped) /* the launch settings marked: every collective keeps lib's own choice */
        say_wrote(out,
                  "with its launch settings marked verified (its collectives keep %s's own "
                  "choice at every size); export that one",
                  lib);
    else
        say_wrote(out,
                  "with its %d verified collective(s) marked so (no size slower than %s's "
                  "defaults beyond its interval, each rule's gain shown); export that one",
                  nstamped, lib);
    return code;
}

int ct_verify_no_set(const struct ct_opts *o, const struct ct_librules *l, const char *title,
                     const char *path, unsigned colls)
{
    char has[512] = "", want[160] = "";
    for (int i = 0, off = 0; i < l->nsets && off < (int)sizeof has; i++)
        off += snprintf(has + off, sizeof has - (size_t)off, "%s%s on %d ranks", i ? ", " : "",
                        ct_coll_name(l->sets[i].coll), l->sets[i].nranks);
    for (int k = 0, off = 0; k < CT_COLL_COUNT && colls != CT_COLLS_ALL; k++)
        if (colls & CT_COLL_BIT(k) && off < (int)sizeof want)
            off += snprintf(want + off, sizeof want - (size_t)off, "%s%s ", off ? "or " : "",
                            ct_coll_name((enum ct_coll)k));
    if (*want) /* "allreduce or alltoall on " */
        snprintf(want + strlen(want), sizeof want - strlen(want), "on ");
    if (o->local_set)
        snprintf(want + strlen(want), sizeof want - strlen(want), "%d ranks, ", o->local_set);
    bool across = false; /* a set of those collectives across hosts: --hosts runs it */
    for (int i = 0; i < l->nsets; i++)
        across |= (colls & CT_COLL_BIT(l->sets[i].coll)) && l->sets[i].nnodes > 1;
    /* why its first set is not verified here */
    const char *why = l->nsets ? ct_verify_set_elsewhere(o, &l->sets[0]) : NULL;
    return ct_cmd_fail("sweep", CT_EXIT_USAGE,
                       "--verify: '%s' has no %s section for %s%s (it has %s%s%s)", path, title,
                       want,
                       o->hosts ? "the ranks --hosts places"
                       : across ? "one host (--hosts LIST runs the others)"
                                : "one host",
                       has, why ? "; the first: " : "", why ? why : "");
}
