/* SPDX-License-Identifier: MIT */
/*
 * Hierarchical: an intra-node algorithm and an inter-node algorithm, both chosen from
 * this library (params.intra, default mesh; params.inter, default ring).
 *
 * Summary   With M nodes of Y ranks, rank (node m, local l): the node group is the Y
 *           ranks of node m; the rail group l is the M ranks of local index l, one per
 *           node, and the Y rail groups run side by side.
 *           AllReduce = intra ReduceScatter (rank l keeps part l of the node sum) +
 *           inter AllReduce of part l in rail group l + intra AllGather. The count%Y
 *           tail elements take an intra AllReduce + inter AllReduce afterwards.
 *           AllGather = inter AllGather (rail group l gathers the blocks of its
 *           members) then intra AllGather of those columns, in scratch, then one
 *           reordering copy. ReduceScatter = intra ReduceScatter of the columns
 *           (after a reordering copy into scratch) then inter ReduceScatter.
 *           One node (M = 1): intra only; one rank per node (Y = 1): inter only.
 * Cost      intra + inter: e.g. mesh + ring AllReduce 2 + 2(M-1) steps,
 *           2(Y-1)/Y n b_intra + 2(M-1)/(MY) n b_inter per rank: each inter link
 *           carries 1/Y of the data, Y links in parallel.
 * Requires  the sub-algorithms must support their sub-jobs (intra: Y ranks on one
 *           node; inter: M ranks, one per node); hier cannot nest itself.
 * Limits    AllGather/ReduceScatter pay a local reordering copy of the whole buffer;
 *           a count not divisible by Y adds two phases for the tail.
 *
 *   AllReduce, 2 nodes x 2 ranks, buffer halves A B:
 *     intra RS:  rank (m,0) holds A summed over node m, rank (m,1) holds B
 *     inter AR:  (0,0) <-> (1,0) on A, (0,1) <-> (1,1) on B (two rails at once)
 *     intra AG:  every rank gets A and B
 */
#include "compose.h"

#include <stdlib.h>
#include <string.h>

struct hier {
    const struct ct_job *j;
    const struct ct_algo *intra, *inter;
    const char *intra_name, *inter_name;
    int Y, M, l, m;  /* ranks per node, nodes, local index, node */
    int *node_ranks; /* the Y ranks of my node */
    int *rail_ranks; /* the M ranks of my local index */
    uint64_t es, bb;
};

static int find_sub(const char *name, const char *role, const struct ct_algo **out,
                    struct ct_err *why)
{
    *out = ct_algo_find(name);
    if (!*out)
        return ct_err_set(why, CT_EINVAL, "hier: unknown %s algorithm '%s'", role, name);
    if (!strcmp(name, "hier"))
        return ct_err_set(why, CT_EUNSUPP, "hier cannot use itself as its %s algorithm", role);
    if ((*out)->onesided)
        return ct_err_set(why, CT_EUNSUPP,
                          "hier cannot use '%s' as its %s algorithm (one-sided: it reaches into "
                          "the memory of every rank of the job)",
                          name, role);
    return 0;
}

static int hier_init(struct hier *h, const struct ct_job *j, struct ct_err *why)
{
    memset(h, 0, sizeof *h);
    h->j = j;
    h->intra_name = j->params.intra ? j->params.intra : "mesh";
    h->inter_name = j->params.inter ? j->params.inter : "ring";
    CT_TRY(find_sub(h->intra_name, "intra", &h->intra, why));
    CT_TRY(find_sub(h->inter_name, "inter", &h->inter, why));
    h->Y = ct_shape_rpn(&j->shape);
    h->M = ct_shape_nodes(&j->shape);
    h->l = j->shape.rank % h->Y;
    h->m = j->shape.rank / h->Y;
    h->es = ct_dtype_size(j->dtype);
    h->bb = j->count * h->es;
    return 0;
}

static void hier_alloc(struct hier *h)
{
    h->node_ranks = ct_xmalloc((size_t)h->Y * sizeof *h->node_ranks);
    h->rail_ranks = ct_xmalloc((size_t)h->M * sizeof *h->rail_ranks);
    for (int i = 0; i < h->Y; i++)
        h->node_ranks[i] = h->m * h->Y + i;
    for (int i = 0; i < h->M; i++)
        h->rail_ranks[i] = i * h->Y + h->l;
}

static void hier_release(struct hier *h)
{
    free(h->node_ranks);
    free(h->rail_ranks);
}

static struct ct_compose_map map3(enum ct_bufid sb, uint64_t so, enum ct_bufid rb, uint64_t ro,
                                  uint64_t scratch_base)
{
    struct ct_compose_map m;
    m.at[CT_BUF_SEND] = ct_loc(sb, so);
    m.at[CT_BUF_RECV] = ct_loc(rb, ro);
    m.at[CT_BUF_SCRATCH] = ct_loc(CT_BUF_SCRATCH, scratch_base);
    return m;
}

/*
 * One phase on the node group (inter = 0) or rail group (inter = 1). Without a
 * schedule it only checks that the sub-algorithm supports the sub-job.
 */
static int phase(const struct hier *h, struct ct_sched *s, int inter, enum ct_coll coll,
                 uint64_t count, bool in_place, const struct ct_compose_map *map,
                 struct ct_err *err)
{
    const struct ct_algo *a = inter ? h->inter : h->intra;
    struct ct_job sub = inter ? ct_compose_subjob(h->j, coll, count, in_place, h->M, h->m, 1)
                              : ct_compose_subjob(h->j, coll, count, in_place, h->Y, h->l, 0);
    int rc = s ? ct_compose_append(s, a, &sub, inter ? h->rail_ranks : h->node_ranks, map, err)
               : ct_algo_supports(a, &sub, err);
    if (rc < 0)
        return ct_err_wrap(err, "hier %s '%s': ", inter ? "inter" : "intra",
                           inter ? h->inter_name : h->intra_name);
    return 0;
}

/* Reorder blocks between rank order (m*Y + l) and column order (l*M + m). */
static void reorder(const struct hier *h, struct ct_sched *s, struct ct_loc rank_order,
                    struct ct_loc col_order, int to_col)
{
    ct_sched_step(s);
    for (int l = 0; l < h->Y; l++)
        for (int m = 0; m < h->M; m++) {
            struct ct_loc a = ct_loc((enum ct_bufid)rank_order.buf,
                                     rank_order.off + (uint64_t)(m * h->Y + l) * h->bb);
            struct ct_loc c = ct_loc((enum ct_bufid)col_order.buf,
                                     col_order.off + (uint64_t)(l * h->M + m) * h->bb);
            if (to_col)
                ct_sched_copy(s, c, a, h->bb);
            else
                ct_sched_copy(s, a, c, h->bb);
        }
}

static int plan_allreduce(const struct hier *h, struct ct_sched *s, struct ct_err *err)
{
    const struct ct_job *j = h->j;
    uint64_t b = j->count / (uint64_t)h->Y, tail = j->count % (uint64_t)h->Y;
    uint64_t part = (uint64_t)h->l * b * h->es, main = (uint64_t)h->Y * b * h->es;
    struct ct_compose_map whole = map3(CT_BUF_SEND, 0, CT_BUF_RECV, 0, 0);
    if (h->Y == 1)
        return phase(h, s, 1, CT_ALLREDUCE, j->count, j->in_place, &whole, err);
    if (b) {
        struct ct_compose_map rs = map3(CT_BUF_SEND, 0, CT_BUF_RECV, part, 0);
        struct ct_compose_map mine = map3(CT_BUF_RECV, part, CT_BUF_RECV, part, 0);
        struct ct_compose_map ag = map3(CT_BUF_RECV, part, CT_BUF_RECV, 0, 0);
        CT_TRY(phase(h, s, 0, CT_REDUCESCATTER, b, j->in_place, &rs, err));
        if (h->M > 1)
            CT_TRY(phase(h, s, 1, CT_ALLREDUCE, b, true, &mine, err));
        CT_TRY(phase(h, s, 0, CT_ALLGATHER, b, true, &ag, err));
    }
    if (tail) {
        struct ct_compose_map t = map3(CT_BUF_SEND, main, CT_BUF_RECV, main, 0);
        struct ct_compose_map ti = map3(CT_BUF_RECV, main, CT_BUF_RECV, main, 0);
        CT_TRY(phase(h, s, 0, CT_ALLREDUCE, tail, j->in_place, &t, err));
        if (h->M > 1)
            CT_TRY(phase(h, s, 1, CT_ALLREDUCE, tail, true, &ti, err));
    }
    return 0;
}

/* Scratch: columns (l*M + m order) in [0, N blocks), sub-algorithm scratch after. */
static int plan_allgather(const struct hier *h, struct ct_sched *s, struct ct_err *err)
{
    const struct ct_job *j = h->j;
    uint64_t all = (uint64_t)h->Y * (uint64_t)h->M * h->bb, col = (uint64_t)h->l * h->M * h->bb;
    struct ct_compose_map whole = map3(CT_BUF_SEND, 0, CT_BUF_RECV, 0, 0);
    if (h->Y == 1 || h->M == 1)
        return phase(h, s, h->Y == 1, CT_ALLGATHER, j->count, j->in_place, &whole, err);
    struct ct_compose_map inter = map3(CT_BUF_SEND, 0, CT_BUF_SCRATCH, col, all);
    struct ct_compose_map intra = map3(CT_BUF_SCRATCH, col, CT_BUF_SCRATCH, 0, all);
    CT_TRY(phase(h, s, 1, CT_ALLGATHER, j->count, false, &inter, err));
    CT_TRY(phase(h, s, 0, CT_ALLGATHER, j->count * (uint64_t)h->M, true, &intra, err));
    if (s)
        reorder(h, s, ct_loc(CT_BUF_RECV, 0), ct_loc(CT_BUF_SCRATCH, 0), 0);
    return 0;
}

/* Scratch: send blocks in column order [0, N), node sums of my column [N, N+M), then
 * the sub-algorithms' scratch. */
static int plan_reducescatter(const struct hier *h, struct ct_sched *s, struct ct_err *err)
{
    const struct ct_job *j = h->j;
    uint64_t all = (uint64_t)h->Y * (uint64_t)h->M * h->bb, sums = (uint64_t)h->M * h->bb;
    struct ct_compose_map whole = map3(CT_BUF_SEND, 0, CT_BUF_RECV, 0, 0);
    if (h->Y == 1 || h->M == 1)
        return phase(h, s, h->Y == 1, CT_REDUCESCATTER, j->count, j->in_place, &whole, err);
    struct ct_compose_map intra = map3(CT_BUF_SCRATCH, 0, CT_BUF_SCRATCH, all, all + sums);
    struct ct_compose_map inter = map3(CT_BUF_SCRATCH, all, CT_BUF_RECV, 0, all + sums);
    if (s)
        reorder(h, s, ct_loc(CT_BUF_SEND, 0), ct_loc(CT_BUF_SCRATCH, 0), 1);
    CT_TRY(phase(h, s, 0, CT_REDUCESCATTER, j->count * (uint64_t)h->M, false, &intra, err));
    CT_TRY(phase(h, s, 1, CT_REDUCESCATTER, j->count, false, &inter, err));
    return 0;
}

/* Check (s == NULL) or build the whole plan. */
static int plan(const struct ct_job *j, struct ct_sched *s, struct ct_err *err)
{
    struct hier h;
    CT_TRY(hier_init(&h, j, err));
    hier_alloc(&h);
    int rc;
    switch (j->coll) {
    case CT_ALLREDUCE: rc = plan_allreduce(&h, s, err); break;
    case CT_ALLGATHER: rc = plan_allgather(&h, s, err); break;
    case CT_REDUCESCATTER: rc = plan_reducescatter(&h, s, err); break;
    default:
        rc = ct_err_set(err, CT_EUNSUPP, "hier does not implement %s", ct_coll_name(j->coll));
        break;
    }
    hier_release(&h);
    return rc;
}

static int supports(const struct ct_job *j, struct ct_err *why)
{
    struct ct_job jj = *j;
    ct_params_defaults(&jj.params);
    return plan(&jj, NULL, why);
}

static int build(const struct ct_job *j, struct ct_sched *s, struct ct_err *err)
{
    return plan(j, s, err);
}

const struct ct_algo ct_algo_hier = {
    .name = "hier",
    .summary = "hierarchical: intra-node + inter-node sub-algorithms (--intra, --inter)",
    .colls = CT_COLL_BIT(CT_ALLREDUCE) | CT_COLL_BIT(CT_ALLGATHER) | CT_COLL_BIT(CT_REDUCESCATTER),
    .params = CT_PBIT(CT_P_CHUNK) | CT_PBIT(CT_P_PIPELINE) | CT_PBIT(CT_P_CHANNELS) |
              CT_PBIT(CT_P_STREAMS) | CT_PBIT(CT_P_THREADS),
    .subs = true,
    .supports = supports,
    .build = build,
};
