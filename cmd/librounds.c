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

#include "../output/config.h"
#include "../tune/tune.h"
#include "cmd.h"
#include "librun.h"

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

int ct_libverify_rounds(const struct ct_opts *o, const struct ct_config *c, const char *path,
                        unsigned colls)
{
    struct ct_opts x = *o;
    char copy[4200], cur[4200];
    struct ct_config *next = NULL;
    const struct ct_config *now = c;
    int code = 0, round = 0, first = 0;
    ct_verify_copy_path(path, copy, sizeof copy);
    snprintf(cur, sizeof cur, "%s", path);
    for (;; round++) {
        struct stat before;
        bool had = !stat(copy, &before);
        struct ct_verify_did did = {false, false, false, false};
        if (round)
            printf("--reverify: round %d of at most %d, verifying %s without --try-ties\n\n",
                   round + 1, o->reverify + 1, cur);
        code = ct_libverify(&x, now, cur, colls, &did); /* did.tried: ties were put in */
        first = round ? first : code;
        x.try_ties = false;
        bool wrote = rewritten(copy, &before, had);
        if ((code && code != CT_EXIT_CHECK) || (!code && !did.tried && !did.dropped) ||
            round == o->reverify)
            break; /* a failure, a round passed as it was, or the rounds are spent */
        if (!wrote && !did.tried)
            break; /* exit 3 and nothing to verify anew (said) */
        if (did.whole_slow || did.own_slow) { /* the copy runs as the file just measured */
            printf("--reverify: the copy runs as the file just found slower (%s): verifying it "
                   "again would repeat that measure until one passes; not done\n\n",
                   did.own_slow ? "only where it keeps the library's own choice; less any range "
                                  "without a gain"
                                : "its whole export");
            break;
        }
        const char *p = wrote ? copy : cur;
        struct ct_config *r = ct_xcalloc(1, sizeof *r);
        struct ct_err err = {0};
        if (ct_config_json_read(p, r, &err) < 0) {
            ct_config_release(r);
            free(r);
            code = ct_cmd_fail("sweep", CT_EXIT_FAIL, "--reverify: %s", err.msg);
            break;
        }
        const struct ct_librules *was = ct_config_lib(now, o->lib), *is = ct_config_lib(r, o->lib);
        if (was && is && !is->nenv && was->nenv) { /* not one of them (--each-setting) */
            printf("--reverify: the copy lost its launch settings, with which its rules were "
                   "measured: sweep again, not verify\n\n");
            ct_config_release(r);
            free(r);
            break;
        }
        if (next)
            ct_config_release(next);
        free(next);
        now = next = r;
        if (wrote) /* (else cur stays: CONFIG again) */
            snprintf(cur, sizeof cur, "%s", copy);
    }
    if (next)
        ct_config_release(next);
    free(next);
    fflush(stdout);
    if (round) /* the verdicts: CONFIG's, then the last copy's */
        fprintf(stderr,
                "colltune sweep: --reverify: %d rounds of verify: %s exit %d, the last (%s) exit "
                "%d%s\n",
                round + 1, path, first, cur, code,
                code == CT_EXIT_CHECK ? " (slower at a size)" : "");
    return code;
}
