/* SPDX-License-Identifier: MIT */
/* colltune join's rule: the sets of several configs in one, what cannot be held twice refused
 * with dst unchanged, the verified marks kept where what they vouch for is unchanged. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "output/config.h"

#define OMPI2 "tests/fixtures/export/config-ompi-2ranks.json"
#define MPICH2 "tests/fixtures/export/config-mpich-2ranks.json"
#define FOUR "tests/fixtures/export/config-4ranks.json"

static const struct ct_join_names nm = {"a.json", "b.json"};

static void load(const char *path, struct ct_config *c)
{
    struct ct_err err = {0};
    cr_assert_eq(ct_config_json_read(path, c, &err), 0, "%s: %s", path, err.msg);
}

/* every set of c's library section l (colltune's own: l < 0) moved to n ranks on n nodes */
static void reshape(struct ct_config *c, int l, int n)
{
    struct ct_ruleset *s = l < 0 ? c->sets : c->libs[l].sets;
    for (int i = 0, k = l < 0 ? c->nsets : c->libs[l].nsets; i < k; i++) {
        s[i].nranks = s[i].nnodes = n;
        s[i].ranks_per_node = 1;
    }
}

static void mark(struct ct_verified *v, const char *at, double geomean)
{
    snprintf(v->at, sizeof v->at, "%s", at);
    v->geomean = geomean;
    v->tell = 1.1;
}

Test(join, sets_of_two_rank_counts_one_section_marks_of_what_is_unchanged)
{
    struct ct_config a, b;
    load(OMPI2, &a);
    load(OMPI2, &b);
    reshape(&b, 0, 4);
    struct ct_librules *la = &a.libs[0], *lb = &b.libs[0];
    la->nenv = lb->nenv = 2; /* one list, in another order */
    snprintf(la->env[0].name, sizeof la->env[0].name, "OMPI_MCA_x");
    snprintf(la->env[0].value, sizeof la->env[0].value, "1");
    snprintf(la->env[1].name, sizeof la->env[1].name, "OMPI_MCA_y");
    snprintf(la->env[1].value, sizeof la->env[1].value, "2");
    lb->env[0] = la->env[1];
    lb->env[1] = la->env[0];
    mark(&la->sets[0].verified, "2026-12-01T00:00:00Z", 1.4);
    mark(&lb->sets[1].verified, "2026-12-02T00:00:00Z", 1.2);
    mark(&la->env_verified, "2026-12-01T00:00:00Z", 1.10);
    mark(&lb->env_verified, "2026-12-02T00:00:00Z", 1.05);
    mark(&la->whole_verified, "2026-12-01T00:00:00Z", 1.3);
    int na = la->nsets, nb = lb->nsets;
    cr_assert(!ct_config_other_shapes(&a), "one sweep's shape");
    cr_assert(ct_config_other_shapes(&b), "its sets moved, its fingerprint not");
    struct ct_err err = {0};
    cr_assert_eq(ct_config_join(&a, &b, &nm, &err), 0, "%s", err.msg);
    cr_assert_eq(a.nlibs, 1);
    la = &a.libs[0];
    cr_assert_eq(la->nsets, na + nb);
    cr_assert_eq(la->sets[0].nranks, 2);
    cr_assert_eq(la->sets[na].nranks, 4);
    cr_assert_eq(la->sets[na].nrules, b.libs[0].sets[0].nrules);
    cr_assert_neq(la->sets[na].rules, b.libs[0].sets[0].rules, "the rules copied");
    cr_assert_str_eq(la->sets[0].verified.at, "2026-12-01T00:00:00Z");
    cr_assert_str_eq(la->sets[na + 1].verified.at, "2026-12-02T00:00:00Z");
    cr_assert_float_eq(la->env_verified.geomean, 1.10, 1e-9, "the one that found least: higher");
    cr_assert_eq(la->whole_verified.at[0], '\0', "the export it vouched for changed");
    cr_assert(ct_config_other_shapes(&a));
    ct_config_release(&b);

    /* written and read back: the marks of the unchanged sets hold (their "of"), one section
     * with both rank counts */
    char *text = ct_config_json_dumps(&a);
    struct ct_config back;
    cr_assert_eq(ct_config_json_parse(text, &back, &err), 0, "%s", err.msg);
    cr_assert_eq(back.libs[0].nsets, na + nb);
    cr_assert_str_eq(back.libs[0].sets[0].verified.at, "2026-12-01T00:00:00Z");
    cr_assert_str_eq(back.libs[0].sets[na + 1].verified.at, "2026-12-02T00:00:00Z");
    cr_assert_float_eq(back.libs[0].env_verified.geomean, 1.10, 1e-9);
    free(text);
    ct_config_release(&back);
    ct_config_release(&a);
}

Test(join, a_section_dst_lacks_is_copied_whole)
{
    struct ct_config a, b;
    load(OMPI2, &a);
    load(MPICH2, &b);
    mark(&b.libs[0].whole_verified, "2026-12-01T00:00:00Z", 1.3);
    /* each sweep's refusals kept (show says them), once */
    snprintf(a.sweep.refused, sizeof a.sweep.refused, "allreduce: ompi:x: no (at 2 sizes)");
    snprintf(b.sweep.refused, sizeof b.sweep.refused, "allreduce: mpich:smp: no (at 6 sizes)");
    struct ct_err err = {0};
    cr_assert_eq(ct_config_join(&a, &b, &nm, &err), 0, "%s", err.msg);
    cr_assert_str_eq(a.sweep.refused,
                     "allreduce: ompi:x: no (at 2 sizes); allreduce: mpich:smp: no (at 6 sizes)");
    cr_assert_eq(ct_config_join(&a, &b, &nm, &err), CT_EINVAL, "b's sets twice");
    cr_assert_str_eq(a.sweep.refused,
                     "allreduce: ompi:x: no (at 2 sizes); allreduce: mpich:smp: no (at 6 sizes)",
                     "a refused join changes nothing");
    cr_assert_eq(a.nlibs, 2);
    cr_assert_str_eq(a.libs[1].library, "mpich");
    cr_assert_eq(a.libs[1].nsets, b.libs[0].nsets);
    cr_assert_str_eq(a.libs[1].whole_verified.at, "2026-12-01T00:00:00Z", "nothing of it changed");
    ct_config_release(&b);
    ct_config_release(&a);
}

/* each refusal leaves dst as it was */
static void refused(struct ct_config *a, struct ct_config *b, const char *says)
{
    int nsets = a->nsets, nlibs = a->nlibs, lsets = a->nlibs ? a->libs[0].nsets : 0;
    struct ct_err err = {0};
    cr_assert_eq(ct_config_join(a, b, &nm, &err), CT_EINVAL);
    cr_assert(strstr(err.msg, says), "'%s' wanted in: %s", says, err.msg);
    cr_assert(strstr(err.msg, "a.json") && strstr(err.msg, "b.json"), "%s", err.msg);
    cr_assert_eq(a->nsets, nsets);
    cr_assert_eq(a->nlibs, nlibs);
    cr_assert_eq(a->nlibs ? a->libs[0].nsets : 0, lsets);
    ct_config_release(b);
    ct_config_release(a);
}

Test(join, what_a_config_cannot_hold_twice_is_refused)
{
    struct ct_config a, b;
    load(OMPI2, &a);
    load(OMPI2, &b);
    reshape(&b, 0, 4);
    b.libs[0].sets[0].nranks = 2; /* one set of a rank count a has, among new ones */
    b.libs[0].sets[0].nnodes = 2;
    refused(&a, &b,
            "b.json: a set of Open MPI's allreduce on 2 ranks, where a.json has one already");

    load(OMPI2, &a);
    load(OMPI2, &b);
    reshape(&b, 0, 4);
    snprintf(b.libs[0].version, sizeof b.libs[0].version, "5.0.3");
    refused(&a, &b, "b.json: Open MPI 5.0.3, where a.json has 4.1.4");

    load(OMPI2, &a);
    load(OMPI2, &b);
    reshape(&b, 0, 4);
    snprintf(b.libs[0].name, sizeof b.libs[0].name, "MPICH");
    refused(&a, &b, "b.json: its \"ompi\" section is MPICH's, where a.json's is Open MPI's");

    load(OMPI2, &a);
    load(OMPI2, &b);
    reshape(&b, 0, 4);
    b.libs[0].nenv = 1;
    snprintf(b.libs[0].env[0].name, sizeof b.libs[0].env[0].name, "OMPI_MCA_x");
    snprintf(b.libs[0].env[0].value, sizeof b.libs[0].env[0].value, "1");
    refused(&a, &b, "measured with launch settings OMPI_MCA_x=1; those of a.json with no launch");

    load(FOUR, &a);
    load(FOUR, &b);
    refused(&a, &b, "a set of colltune's own allreduce on 4 ranks, where a.json has one already");

    load(FOUR, &a);
    load(FOUR, &b);
    reshape(&b, -1, 8);
    snprintf(b.fp.transport, sizeof b.fp.transport, "tcp");
    refused(&a, &b, "tuned over tcp, where a.json has them over shm");

    load(FOUR, &a);
    load(FOUR, &b);
    reshape(&b, -1, 8);
    snprintf(b.fp.mem, sizeof b.fp.mem, "cuda");
    refused(&a, &b, "tuned over shm with memory cuda, where a.json has them over shm:");

    load(OMPI2, &a);
    load(OMPI2, &b);
    reshape(&b, 0, 4);
    b.sweep.dtype = CT_FLOAT64;
    refused(&a, &b, "float64 sum, where a.json was over 8 B..128 MiB x8, float32 sum");

    load(OMPI2, &a);
    load(OMPI2, &b);
    reshape(&b, 0, 4);
    b.sweep.maxbytes = 1 << 20;
    refused(&a, &b, "b.json: swept over 8 B..1 MiB x8");

    load(OMPI2, &a);
    load(OMPI2, &b);
    reshape(&b, 0, 4);
    b.libs[0].raw = strdup("{}");
    refused(&a, &b, "section, where a.json has one already: a section kept as its reader wrote");
}

Test(join, the_fingerprint_of_colltunes_own_rules)
{
    struct ct_config a, b;
    load(OMPI2, &a);
    load(FOUR, &b);
    b.sweep.maxbytes = a.sweep.maxbytes; /* one grid */
    b.sweep.stepfactor = a.sweep.stepfactor;
    b.partial = true;
    snprintf(a.sweep.refused, sizeof a.sweep.refused, "alltoall: ompi:x: no (at 1 size)");
    struct ct_err err = {0};
    cr_assert_eq(ct_config_join(&a, &b, &nm, &err), 0, "%s", err.msg);
    cr_assert_str_eq(a.sweep.refused, "alltoall: ompi:x: no (at 1 size)",
                     "the first's refusals kept beside the sweep settings of b, which has none");
    cr_assert_eq(a.nsets, b.nsets);
    cr_assert_str_eq(a.fp.transport, b.fp.transport, "where its own rules were tuned");
    cr_assert_eq(a.fp.nranks, 4);
    cr_assert(a.partial);
    cr_assert_eq(a.nlibs, 1);
    ct_config_release(&b);

    load(OMPI2, &b); /* a has its own rules now: its fingerprint stays */
    reshape(&b, 0, 8);
    cr_assert_eq(ct_config_join(&a, &b, &nm, &err), 0, "%s", err.msg);
    cr_assert_eq(a.fp.nranks, 4);
    cr_assert_eq(a.libs[0].nsets, 2 * b.libs[0].nsets);
    ct_config_release(&b);
    ct_config_release(&a);
}
