/* SPDX-License-Identifier: MIT */
/* The algorithm table, expanded from algos/list.h, and the checked build entry point. */
#include "algo.h"

#include <stdio.h>
#include <string.h>

#define CT_ALGO(n) extern const struct ct_algo ct_algo_##n;
#include "list.h"
#undef CT_ALGO

static const struct ct_algo *const algos[] = {
#define CT_ALGO(n) &ct_algo_##n,
#include "list.h"
#undef CT_ALGO
};

size_t ct_algo_count(void)
{
    return sizeof algos / sizeof algos[0];
}

const struct ct_algo *ct_algo_at(size_t i)
{
    return i < ct_algo_count() ? algos[i] : NULL;
}

const struct ct_algo *ct_algo_find(const char *name)
{
    for (size_t i = 0; i < ct_algo_count(); i++)
        if (!strcmp(algos[i]->name, name))
            return algos[i];
    return NULL;
}

int ct_algo_supports(const struct ct_algo *a, const struct ct_job *j, struct ct_err *why)
{
    const struct ct_shape *s = &j->shape;
    if (!(a->colls & CT_COLL_BIT(j->coll)))
        return ct_err_set(why, CT_EUNSUPP, "algorithm '%s' does not implement %s", a->name,
                          ct_coll_name(j->coll));
    if (j->quant != CT_QUANT_NONE && !a->quant)
        return ct_err_set(why, CT_EUNSUPP,
                          "algorithm '%s' has no quantized mode (--quant: ring AllReduce)",
                          a->name);
    if (s->nranks < 1 || s->rank < 0 || s->rank >= s->nranks)
        return ct_err_set(why, CT_EINVAL, "rank %d outside a communicator of %d", s->rank,
                          s->nranks);
    if (s->ranks_per_node < 0 || s->nranks % ct_shape_rpn(s))
        return ct_err_set(why, CT_EINVAL, "%d ranks do not divide into nodes of %d", s->nranks,
                          ct_shape_rpn(s));
    if (a->onesided && ct_shape_nodes(s) > 1)
        return ct_err_set(why, CT_EUNSUPP,
                          "%s reaches into its peers' memory: one node only (%d nodes here)",
                          a->name, ct_shape_nodes(s));
    return a->supports ? a->supports(j, why) : 0;
}

/* name appended to the list in buf ("a, b"), at off; the new end */
static size_t list_add(char *buf, size_t len, size_t off, const char *name)
{
    return off < len ? off + (size_t)snprintf(buf + off, len - off, "%s%s", off ? ", " : "", name)
                     : off;
}

static bool sub_rails(const char *name)
{
    const struct ct_algo *a = name ? ct_algo_find(name) : NULL;
    return a && a->rails;
}

int ct_algo_shape_opts(const struct ct_algo *const *as, size_t n, bool torus, bool rails,
                       const struct ct_params *p, struct ct_err *why)
{
    bool t = !torus, r = !rails;
    for (size_t i = 0; i < n; i++) {
        t = t || as[i]->torus; /* a sub-job maps no torus (algos/compose.c) */
        r = r || as[i]->rails || (as[i]->subs && p && (sub_rails(p->intra) || sub_rails(p->inter)));
    }
    if (t && r)
        return 0;
    char these[256] = "", those[256] = "";
    size_t off = 0, k = 0;
    for (size_t i = 0; i < n; i++)
        off = list_add(these, sizeof these, off, as[i]->name);
    off = 0;
    for (size_t i = 0; i < ct_algo_count(); i++)
        if (!t ? algos[i]->torus : algos[i]->rails)
            off = list_add(those, sizeof those, off, algos[i]->name), k++;
    const char *does = k == 1 ? "does" : "do";
    bool one = n == 1;
    return !t ? ct_err_set(why, CT_EINVAL, "--torus: %s%s maps %s torus (%s %s)",
                           one ? "" : "none of ", these, one ? "no" : "a", those, does)
              : ct_err_set(why, CT_EINVAL, "--rails: %s%s has %s ring per rail (%s %s)",
                           one ? "" : "none of ", these, one ? "no" : "a", those, does);
}

int ct_algo_build(const struct ct_algo *a, const struct ct_job *j, struct ct_sched *s,
                  struct ct_err *err)
{
    ct_sched_init(s);
    if (!a->build) /* a library engine's row: the library runs it, no schedule here */
        return ct_err_set(err, CT_EUNSUPP, "%s: no schedule (a library's algorithm)", a->name);
    CT_TRY(ct_algo_supports(a, j, err));
    struct ct_job jj = *j;
    ct_params_defaults(&jj.params);
    int rc = a->build(&jj, s, err);
    if (rc < 0) {
        ct_sched_release(s);
        return ct_err_wrap(err, "%s:%s: ", ct_coll_name(j->coll), a->name);
    }
    ct_sched_finish(s);
    return 0;
}

bool ct_algo_same_schedule(const struct ct_algo *a, const struct ct_algo *b, const struct ct_job *j)
{
    int n = j->shape.nranks > 0 ? j->shape.nranks : 1;
    int sample[4] = {0, 1, n / 2, n - 1}, nr = n <= 64 ? n : 4;
    bool same = true;
    for (int i = 0; same && i < nr; i++) {
        struct ct_job jj = *j;
        jj.shape.rank = n <= 64 ? i : sample[i];
        struct ct_sched sa, sb;
        int ra = ct_algo_build(a, &jj, &sa, NULL), rb = ct_algo_build(b, &jj, &sb, NULL);
        same = ra == 0 && rb == 0 && ct_sched_equal(&sa, &sb);
        if (ra == 0)
            ct_sched_release(&sa);
        if (rb == 0)
            ct_sched_release(&sb);
    }
    return same;
}
