/* SPDX-License-Identifier: MIT */
/* What a verify's judgement (tune/libverify.c) shows, as printed here: its tables and failures
 * (the MPI libraries' verify and NCCL's), and the sets it leaves to others. */
#include <stdio.h>
#include <stdlib.h>

#include "../output/export.h"
#include "../output/sweep_out.h"
#include "cmd.h"
#include "librun.h"

_Static_assert(CT_VERIFY_SLOWER == CT_EXIT_CHECK, "a verify's slower verdict is exit 3");
_Static_assert(CT_VERIFY_USAGE == CT_EXIT_USAGE, "a verify's failure of its input is exit 2");

static int job(const void *ctx, int nranks, int argc, char **argv, char **out, bool *said)
{
    return ct_lib_job(ctx, "sweep", nranks, argc, argv, out, said);
}

static int failed(const void *ctx, int rc, const char *line)
{
    (void)ctx;
    return ct_cmd_fail("sweep", rc == CT_VERIFY_USAGE ? CT_EXIT_USAGE : CT_EXIT_FAIL, "%s", line);
}

static void judged(const void *ctx, const struct ct_verify_judged *j)
{
    (void)ctx;
    ct_paired_print(stdout, j->lib, j->how, j->s, j->sz, j->nsz, j->rule, j->pr, j->w, j->t);
    if (j->gain) {
        ct_paired_print_gains(stdout, j->lib, j->s, j->gain, j->rounds, j->slow, j->nogain, j->cut);
        ct_paired_print_own_slow(stdout, j->lib, j->sz, j->nsz, j->own, j->w);
        fflush(stdout); /* before what goes to stderr next */
    }
}

static void say(const void *ctx, const char *text)
{
    (void)ctx;
    fputs(text, stdout);
}

static void warn(const void *ctx, const char *text)
{
    (void)ctx;
    fflush(stdout); /* what was said before it first */
    fprintf(stderr, "colltune sweep: %s\n", text);
}

static void again(const void *ctx, const uint64_t *sz, const struct ct_paired_row *w,
                  const struct ct_paired_redo *r, bool groups, const char *where)
{
    (void)ctx;
    ct_paired_print_again(stdout, sz, w, r, groups, where, "fresh launches");
}

void ct_verify_hooks_init(struct ct_verify_hooks *h, const struct ct_opts *o)
{
    *h = (struct ct_verify_hooks){.ctx = o,
                                  .job = job,
                                  .failed = failed,
                                  .judged = judged,
                                  .say = say,
                                  .warn = warn,
                                  .again = again};
}

const char *ct_verify_set_elsewhere(const struct ct_opts *o, const struct ct_ruleset *s)
{
    if (o->hosts ? s->nranks != o->hosts_ranks : s->nnodes > 1)
        return o->hosts ? "--hosts places other ranks" : "--hosts LIST runs it across hosts";
    int most, least, cores = ct_libmod_cores();
    if (o->hosts && ct_libmod_hosts_slots(o->hosts, &most, &least) > 0 &&
        (most != least || most != s->ranks_per_node))
        return "--hosts places them in another shape (ranks per host)";
    if (!o->hosts && cores > 0 && s->ranks_per_node > cores) /* as a sweep there writes none */
        return "its ranks on this host outnumber its cores: a verify would time the scheduler";
    return NULL;
}
