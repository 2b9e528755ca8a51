/* SPDX-License-Identifier: MIT */
/*
 * sweep --verify CONFIG --lib ompi|mpich --reverify N: the copy verify writes
 * (NAME.verified.json) verified again, up to N more rounds, in fresh launches each, until a
 * round passes as it was (no --try-ties, no setting left out by --each-setting): the verdict
 * repeated until the noise is known, and the second, plain verify --try-ties asks for made
 * part of one command.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../backend/libmod.h"
#include "libverify.h"

void ct_verify_copy_path(const char *path, char *out, size_t len)
{
    int n = (int)strlen(path), json = n > 5 && !strcmp(path + n - 5, ".json"),
        again = n > 14 && !strcmp(path + n - 14, ".verified.json"); /* that one again */
    snprintf(out, len, "%.*s.verified.json", again ? n - 14 : json ? n - 5 : n, path);
}

/* The copy at path changed since before (stat before; had: it existed) */
static bool rewritten(const char *path, const struct stat *before, bool had)
{
    struct stat now;
    if (stat(path, &now))
        return false;
    return !had || now.st_ino != before->st_ino || now.st_size != before->st_size ||
           now.st_mtim.tv_sec != before->st_mtim.tv_sec ||
           now.st_mtim.tv_nsec != before->st_mtim.tv_nsec;
}

static void release(struct ct_config *c)
{
    if (c)
        ct_config_release(c);
    free(c);
}

int ct_libverify_rounds(const struct ct_libverify_in *in, int reverify, const struct ct_config *c)
{
    const struct ct_verify_hooks *h = in->h;
    struct ct_libverify_in x = *in;
    char copy[4200], cur[4200];
    struct ct_config *next = NULL;
    const struct ct_config *now = c;
    int code = 0, round = 0, first = 0;
    ct_verify_copy_path(in->path, copy, sizeof copy);
    snprintf(cur, sizeof cur, "%s", in->path);
    for (;; round++) {
        struct stat before;
        bool had = !stat(copy, &before);
        struct ct_verify_did did = {false, false, false, false};
        if (round)
            ct_verify_say(h,
                          "--reverify: round %d of at most %d, verifying %s without --try-ties\n\n",
                          round + 1, reverify + 1, cur);
        x.path = cur;
        if (!ct_config_lib(now, in->m->name)) { /* CONFIG's was checked before (cmd/) */
            char line[9000];
            snprintf(line, sizeof line,
                     "--verify: '%s' has no measured %s section (colltune sweep --lib %s)", cur,
                     in->m->title, in->m->name);
            code = h->failed(h->ctx, CT_VERIFY_USAGE, line);
            break;
        }
        code = ct_libverify_config(&x, now, &did); /* did.tried: ties were put in */
        first = round ? first : code;
        x.try_ties = false;
        bool wrote = rewritten(copy, &before, had);
        if ((code && code != CT_VERIFY_SLOWER) || (!code && !did.tried && !did.dropped) ||
            round == reverify)
            break; /* a failure, a round passed as it was, or the rounds are spent */
        if (!wrote && !did.tried)
            break;                            /* exit 3 and nothing to verify anew (said) */
        if (did.whole_slow || did.own_slow) { /* the copy runs as the file just measured */
            ct_verify_say(h,
                          "--reverify: the copy runs as the file just found slower (%s): "
                          "verifying it again would repeat that measure until one passes; not "
                          "done\n\n",
                          did.own_slow ? "only where it keeps the library's own choice; less any "
                                         "range without a gain"
                                       : "its whole export");
            break;
        }
        struct ct_config *r = in->f->read(in->f->ctx, wrote ? copy : cur, &code);
        if (!r)
            break; /* said */
        const struct ct_librules *was = ct_config_lib(now, in->m->name),
                                 *is = ct_config_lib(r, in->m->name);
        if (was && is && !is->nenv && was->nenv) { /* not one of them (--each-setting) */
            ct_verify_say(h, "--reverify: the copy lost its launch settings, with which its rules "
                             "were measured: sweep again, not verify\n\n");
            release(r);
            break;
        }
        release(next);
        now = next = r;
        if (wrote) /* (else cur stays: CONFIG again) */
            snprintf(cur, sizeof cur, "%s", copy);
    }
    release(next);
    if (round) /* the verdicts: CONFIG's, then the last copy's */
        ct_verify_warn(h, "--reverify: %d rounds of verify: %s exit %d, the last (%s) exit %d%s",
                       round + 1, in->path, first, cur, code,
                       code == CT_VERIFY_SLOWER ? " (slower at a size)" : "");
    return code;
}
