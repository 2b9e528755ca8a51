/* SPDX-License-Identifier: MIT */
/*
 * colltune algorithm -> library algorithm, per library, collective and version, with how close
 * each match is; and each library's message-size definition. Sources: ../shared/docs/formats.md
 * and the libraries' own code (Open MPI v4.1.4 coll_tuned_*_decision.c, MPICH v4.0.2
 * csel_container.c, UCC tags v1.0.0..v1.8.0 tl/ucp, NCCL plugins/tuner/example).
 */
#include "algomap.h"

#include <stdlib.h>
#include <string.h>

#include "../tune/tune.h"

#define AR CT_ALLREDUCE
#define AG CT_ALLGATHER
#define RS CT_REDUCESCATTER
#define A2A CT_ALLTOALL
#define C CT_MATCH_CLOSE
#define X CT_MATCH_APPROX

static const char *const lib_names[CT_LIB_COUNT] = {"nccl", "ompi", "mpich", "ucc", "impi"};
static const char *const lib_titles[CT_LIB_COUNT] = {"NCCL", "Open MPI", "MPICH", "UCC",
                                                     "Intel MPI"};
/* Defaults: the oldest version whose format colltune writes (NCCL: the CSV example plugin),
 * or the one Debian ships (Open MPI 4.1, MPICH 4.0), or the oldest documented ids. */
static const char *const lib_versions[CT_LIB_COUNT] = {"2.27.5", "4.1", "4.0", "1.2", "2019"};

/*
 * The mapping. Rows for the same (lib, coll, algo) are tried in order; the first whose
 * `since` is not newer than the target version wins. No row: no counterpart, and the
 * exporter says so in the output and on stderr.
 */
static const struct ct_algomap_row rows[] = {
    /* ---- NCCL (example tuner CSV names; NCCL_ALGO spellings derive from them) ---- */
    {CT_LIB_NCCL, AR, "ring", "ring", -1, NULL, C, NULL,
     "pipelined reduce-scatter + all-gather ring"},
    {CT_LIB_NCCL, AG, "ring", "ring", -1, NULL, C, NULL, "pipelined ring"},
    {CT_LIB_NCCL, RS, "ring", "ring", -1, NULL, C, NULL, "pipelined ring"},
    {CT_LIB_NCCL, AR, "flat-ring", "ring", -1, NULL, C, NULL,
     "NCCL rings chain a node's GPUs and cross nodes at the chain ends, as flat-ring"},
    {CT_LIB_NCCL, AG, "flat-ring", "ring", -1, NULL, C, NULL, "NCCL rings are node-chained"},
    {CT_LIB_NCCL, RS, "flat-ring", "ring", -1, NULL, C, NULL, "NCCL rings are node-chained"},
    {CT_LIB_NCCL, AR, "rail-ring", "ring", -1, NULL, C, NULL,
     "NCCL runs one ring per channel, each through same-index NICs"},
    {CT_LIB_NCCL, AG, "rail-ring", "ring", -1, NULL, C, NULL, "one ring per channel and rail"},
    {CT_LIB_NCCL, RS, "rail-ring", "ring", -1, NULL, C, NULL, "one ring per channel and rail"},
    {CT_LIB_NCCL, AR, "bidir-ring", "ring", -1, NULL, X, NULL,
     "NCCL rings are unidirectional per channel"},
    {CT_LIB_NCCL, AG, "bidir-ring", "ring", -1, NULL, X, NULL, "unidirectional per channel"},
    {CT_LIB_NCCL, AR, "torus-ring", "ring", -1, NULL, X, NULL, "rings not laid on torus cycles"},
    {CT_LIB_NCCL, AG, "torus-ring", "ring", -1, NULL, X, NULL, "rings not laid on torus cycles"},
    {CT_LIB_NCCL, RS, "torus-ring", "ring", -1, NULL, X, NULL, "rings not laid on torus cycles"},
    {CT_LIB_NCCL, AR, "rdh", "tree", -1, NULL, X, NULL,
     "both log-latency; NCCL's tree is a double binary tree reduce+broadcast"},
    {CT_LIB_NCCL, AR, "torus-rdh", "tree", -1, NULL, X, NULL, "log-latency; binary trees"},
    {CT_LIB_NCCL, AR, "hier", "tree", -1, NULL, X, NULL,
     "hierarchical: intra-node chain + inter-node trees, not colltune's sub-algorithms"},
    {CT_LIB_NCCL, AG, "rdh", "pat", -1, "2.23", X, NULL,
     "log-step PAT; NCCL runs it only with one GPU per node"},
    {CT_LIB_NCCL, RS, "rdh", "pat", -1, "2.23", X, NULL,
     "log-step PAT; NCCL runs it only with one GPU per node"},
    {CT_LIB_NCCL, AG, "torus-rdh", "pat", -1, "2.23", X, NULL, "log-step PAT, one GPU per node"},
    {CT_LIB_NCCL, RS, "torus-rdh", "pat", -1, "2.23", X, NULL, "log-step PAT, one GPU per node"},
    {CT_LIB_NCCL, AG, "bruck", "pat", -1, "2.23", X, NULL, "log-step PAT, one GPU per node"},

    /* ---- Open MPI coll/tuned (classic rules ids, identical in 4.1.x, 5.0.x, main) ---- */
    {CT_LIB_OMPI, AR, "ring", "segmented_ring", 5, NULL, C, NULL,
     "ring reduce-scatter + all-gather in segments; segsize = colltune chunk"},
    {CT_LIB_OMPI, AR, "flat-ring", "segmented_ring", 5, NULL, C, NULL,
     "rank-order ring = node-major flat ring when ranks are placed by node"},
    {CT_LIB_OMPI, AR, "bidir-ring", "segmented_ring", 5, NULL, X, NULL, "one direction only"},
    {CT_LIB_OMPI, AR, "rail-ring", "segmented_ring", 5, NULL, X, NULL,
     "one ring in rank order, not one per rail"},
    {CT_LIB_OMPI, AR, "torus-ring", "segmented_ring", 5, NULL, X, NULL,
     "one ring in rank order, not two torus cycles"},
    {CT_LIB_OMPI, AR, "rdh", "rabenseifner", 6, NULL, C, NULL,
     "recursive-halving reduce-scatter + recursive-doubling all-gather; fold differs"},
    {CT_LIB_OMPI, AR, "torus-rdh", "rabenseifner", 6, NULL, X, NULL,
     "partners by rank bits, not torus axes"},
    {CT_LIB_OMPI, AR, "simple-ring", "nonoverlapping", 2, NULL, X, NULL,
     "whole-buffer reduce then broadcast, over Open MPI's own reduce/bcast trees"},
    {CT_LIB_OMPI, AR, "mesh-1step", "allgather_reduce", 7, "6.0", C, NULL,
     "every rank gathers every buffer and reduces locally"},
    {CT_LIB_OMPI, AR, "oneshot", "allgather_reduce", 7, "6.0", X, NULL,
     "every rank gathers every buffer and reduces locally, by messages, not a shared mailbox"},
    {CT_LIB_OMPI, AG, "ring", "ring", 4, NULL, C, NULL, "unsegmented: colltune chunk unused"},
    {CT_LIB_OMPI, AG, "flat-ring", "ring", 4, NULL, C, NULL, "rank-order ring, unsegmented"},
    {CT_LIB_OMPI, AG, "bidir-ring", "ring", 4, NULL, X, NULL, "one direction only"},
    {CT_LIB_OMPI, AG, "rail-ring", "ring", 4, NULL, X, NULL, "one ring, not one per rail"},
    {CT_LIB_OMPI, AG, "torus-ring", "ring", 4, NULL, X, NULL, "one ring, not torus cycles"},
    {CT_LIB_OMPI, AG, "bruck", "bruck", 2, NULL, C, NULL,
     "radix-2 Bruck (6.0: bruck-k-fanout, radix 4 in the rule's faninout)"},
    {CT_LIB_OMPI, AG, "rdh", "recursive_doubling", 3, NULL, C, NULL,
     "Open MPI runs Bruck instead when ranks are not a power of two"},
    {CT_LIB_OMPI, AG, "torus-rdh", "recursive_doubling", 3, NULL, X, NULL,
     "partners by rank bits, not torus axes"},
    {CT_LIB_OMPI, AG, "simple-ring", "linear", 1, NULL, X, NULL,
     "gather to rank 0 then broadcast, not a chain"},
    {CT_LIB_OMPI, AG, "mesh", "direct_messaging", 8, "6.0", C, NULL,
     "every rank sends its block to every peer"},
    {CT_LIB_OMPI, AG, "oneshot", "direct_messaging", 8, "6.0", X, NULL,
     "every rank's block to every peer, by messages, not a shared mailbox"},
    {CT_LIB_OMPI, RS, "ring", "ring", 3, NULL, C, NULL, "unsegmented ring"},
    {CT_LIB_OMPI, RS, "flat-ring", "ring", 3, NULL, C, NULL, "rank-order ring"},
    {CT_LIB_OMPI, RS, "rail-ring", "ring", 3, NULL, X, NULL, "one ring, not one per rail"},
    {CT_LIB_OMPI, RS, "torus-ring", "ring", 3, NULL, X, NULL, "one ring, not torus cycles"},
    {CT_LIB_OMPI, RS, "rdh", "recursive_halving", 2, NULL, C, NULL, "recursive halving"},
    {CT_LIB_OMPI, RS, "torus-rdh", "recursive_halving", 2, NULL, X, NULL,
     "partners by rank bits, not torus axes"},
    {CT_LIB_OMPI, RS, "simple-ring", "non-overlapping", 1, NULL, X, NULL,
     "reduce to rank 0 then scatterv, not a chain"},
    {CT_LIB_OMPI, A2A, "ring", "pairwise", 2, NULL, C, NULL,
     "step k sends to rank+k and receives from rank-k"},
    {CT_LIB_OMPI, A2A, "mesh", "linear", 1, NULL, C, NULL, "all sends and receives posted at once"},
    {CT_LIB_OMPI, A2A, "oneshot", "linear", 1, NULL, X, NULL,
     "all peers at once, by messages, not a shared mailbox"},
    {CT_LIB_OMPI, A2A, "bruck", "modified_bruck", 3, NULL, C, NULL, "log-step Bruck"},

    /* ---- MPICH csel (MPIR level; names exist from 4.0 unless `since`) ---- */
    {CT_LIB_MPICH, AR, "ring", "MPIR_Allreduce_intra_ring", -1, "4.1", C, NULL,
     "ring reduce-scatter + all-gather"},
    {CT_LIB_MPICH, AR, "flat-ring", "MPIR_Allreduce_intra_ring", -1, "4.1", C, NULL,
     "rank-order ring"},
    {CT_LIB_MPICH, AR, "bidir-ring", "MPIR_Allreduce_intra_ring", -1, "4.1", X, NULL,
     "one direction only"},
    {CT_LIB_MPICH, AR, "rail-ring", "MPIR_Allreduce_intra_ring", -1, "4.1", X, NULL,
     "one ring, not one per rail"},
    {CT_LIB_MPICH, AR, "torus-ring", "MPIR_Allreduce_intra_ring", -1, "4.1", X, NULL,
     "one ring, not torus cycles"},
    {CT_LIB_MPICH, AR, "rdh", "MPIR_Allreduce_intra_reduce_scatter_allgather", -1, NULL, C, NULL,
     "Rabenseifner; MPICH's own guard sends user ops and count < pof2 to its default"},
    {CT_LIB_MPICH, AR, "torus-rdh", "MPIR_Allreduce_intra_reduce_scatter_allgather", -1, NULL, X,
     NULL, "partners by rank bits, not torus axes"},
    {CT_LIB_MPICH, AG, "ring", "MPIR_Allgather_intra_ring", -1, NULL, C, NULL, "ring"},
    {CT_LIB_MPICH, AG, "flat-ring", "MPIR_Allgather_intra_ring", -1, NULL, C, NULL,
     "rank-order ring"},
    {CT_LIB_MPICH, AG, "bidir-ring", "MPIR_Allgather_intra_ring", -1, NULL, X, NULL,
     "one direction only"},
    {CT_LIB_MPICH, AG, "rail-ring", "MPIR_Allgather_intra_ring", -1, NULL, X, NULL,
     "one ring, not one per rail"},
    {CT_LIB_MPICH, AG, "torus-ring", "MPIR_Allgather_intra_ring", -1, NULL, X, NULL,
     "one ring, not torus cycles"},
    {CT_LIB_MPICH, AG, "bruck", "MPIR_Allgather_intra_brucks", -1, NULL, C, NULL, "Bruck"},
    {CT_LIB_MPICH, AG, "rdh", "MPIR_Allgather_intra_recursive_doubling", -1, NULL, C, NULL,
     "power-of-two communicators only; others keep MPICH's default"},
    {CT_LIB_MPICH, AG, "torus-rdh", "MPIR_Allgather_intra_recursive_doubling", -1, NULL, X, NULL,
     "power-of-two only; partners by rank bits"},
    {CT_LIB_MPICH, RS, "rdh", "MPIR_Reduce_scatter_intra_recursive_halving", -1, NULL, C, NULL,
     "recursive halving (commutative ops)"},
    {CT_LIB_MPICH, RS, "torus-rdh", "MPIR_Reduce_scatter_intra_recursive_halving", -1, NULL, X,
     NULL, "partners by rank bits, not torus axes"},
    {CT_LIB_MPICH, RS, "mesh", "MPIR_Reduce_scatter_intra_pairwise", -1, NULL, C, NULL,
     "direct exchange with every peer, one peer per step instead of all at once"},
    {CT_LIB_MPICH, A2A, "ring", "MPIR_Alltoall_intra_pairwise", -1, NULL, C, NULL,
     "pairwise exchange (xor partners on power-of-two communicators)"},
    {CT_LIB_MPICH, A2A, "mesh", "MPIR_Alltoall_intra_scattered", -1, NULL, C, NULL,
     "all peers posted, in batches of MPIR_CVAR_ALLTOALL_THROTTLE"},
    {CT_LIB_MPICH, A2A, "bruck", "MPIR_Alltoall_intra_brucks", -1, NULL, C, NULL, "Bruck"},

    /* ---- UCC TL/UCP (names; first version that has them, read from the tags) ---- */
    {CT_LIB_UCC, AR, "ring", "ring", -1, "1.8", C, NULL, "ring reduce-scatter + all-gather"},
    {CT_LIB_UCC, AR, "flat-ring", "ring", -1, "1.8", C, NULL, "rank-order ring"},
    {CT_LIB_UCC, AR, "bidir-ring", "ring", -1, "1.8", X, NULL, "one direction only"},
    {CT_LIB_UCC, AR, "rail-ring", "ring", -1, "1.8", X, NULL, "one ring, not one per rail"},
    {CT_LIB_UCC, AR, "torus-ring", "ring", -1, "1.8", X, NULL, "one ring, not torus cycles"},
    {CT_LIB_UCC, AR, "rdh", "sra_knomial", -1, NULL, C, "ALLREDUCE_SRA_KN_RADIX=2",
     "scatter-reduce-allgather k-nomial with radix 2 = Rabenseifner"},
    {CT_LIB_UCC, AR, "torus-rdh", "sra_knomial", -1, NULL, X, "ALLREDUCE_SRA_KN_RADIX=2",
     "radix 2; partners by rank bits, not torus axes"},
    {CT_LIB_UCC, AG, "ring", "ring", -1, "1.2", C, NULL, "ring"},
    {CT_LIB_UCC, AG, "flat-ring", "ring", -1, "1.2", C, NULL, "rank-order ring"},
    {CT_LIB_UCC, AG, "bidir-ring", "ring", -1, "1.2", X, NULL, "one direction only"},
    {CT_LIB_UCC, AG, "rail-ring", "ring", -1, "1.2", X, NULL, "one ring, not one per rail"},
    {CT_LIB_UCC, AG, "torus-ring", "ring", -1, "1.2", X, NULL, "one ring, not torus cycles"},
    {CT_LIB_UCC, AG, "bruck", "bruck", -1, "1.4", C, NULL, "Bruck"},
    {CT_LIB_UCC, AG, "rdh", "knomial", -1, "1.2", C, "ALLGATHER_KN_RADIX=2",
     "k-nomial with radix 2 = recursive doubling"},
    {CT_LIB_UCC, AG, "torus-rdh", "knomial", -1, "1.2", X, "ALLGATHER_KN_RADIX=2",
     "radix 2; partners by rank bits"},
    {CT_LIB_UCC, AG, "mesh", "linear", -1, "1.5", C, NULL,
     "every rank sends its block to every peer"},
    {CT_LIB_UCC, RS, "ring", "ring", -1, "1.2", C, NULL, "ring"},
    {CT_LIB_UCC, RS, "flat-ring", "ring", -1, "1.2", C, NULL, "rank-order ring"},
    {CT_LIB_UCC, RS, "rail-ring", "ring", -1, "1.2", X, NULL, "one ring, not one per rail"},
    {CT_LIB_UCC, RS, "torus-ring", "ring", -1, "1.2", X, NULL, "one ring, not torus cycles"},
    {CT_LIB_UCC, RS, "rdh", "knomial", -1, "1.4", C, "REDUCE_SCATTER_KN_RADIX=2",
     "k-nomial with radix 2 = recursive halving"},
    {CT_LIB_UCC, RS, "torus-rdh", "knomial", -1, "1.4", X, "REDUCE_SCATTER_KN_RADIX=2",
     "radix 2; partners by rank bits"},
    {CT_LIB_UCC, A2A, "ring", "pairwise", -1, NULL, C, NULL, "pairwise exchange"},
    {CT_LIB_UCC, A2A, "mesh", "pairwise", -1, NULL, X, NULL,
     "pairwise with UCC_TL_UCP_ALLTOALL_PAIRWISE_NUM_POSTS in flight, not all at once"},
    {CT_LIB_UCC, A2A, "bruck", "bruck", -1, "1.2", C, NULL, "Bruck"},

    /* ---- Intel MPI I_MPI_ADJUST ids (2019 numbering; vendor documentation only) ---- */
    {CT_LIB_IMPI, AR, "rdh", "Rabenseifner", 2, NULL, C, NULL, "Rabenseifner"},
    {CT_LIB_IMPI, AR, "torus-rdh", "Rabenseifner", 2, NULL, X, NULL, "partners by rank bits"},
    {CT_LIB_IMPI, AR, "ring", "ring", 8, NULL, C, NULL, "ring"},
    {CT_LIB_IMPI, AR, "flat-ring", "ring", 8, NULL, C, NULL, "rank-order ring"},
    {CT_LIB_IMPI, AR, "bidir-ring", "ring", 8, NULL, X, NULL, "one direction only"},
    {CT_LIB_IMPI, AR, "rail-ring", "ring", 8, NULL, X, NULL, "one ring, not one per rail"},
    {CT_LIB_IMPI, AR, "torus-ring", "ring", 8, NULL, X, NULL, "one ring, not torus cycles"},
    {CT_LIB_IMPI, AR, "simple-ring", "Reduce + Bcast", 3, NULL, X, NULL,
     "whole-buffer reduce then broadcast, over trees"},
    {CT_LIB_IMPI, AG, "rdh", "recursive doubling", 1, NULL, C, NULL, "recursive doubling"},
    {CT_LIB_IMPI, AG, "torus-rdh", "recursive doubling", 1, NULL, X, NULL, "partners by rank bits"},
    {CT_LIB_IMPI, AG, "bruck", "Bruck's", 2, NULL, C, NULL, "Bruck"},
    {CT_LIB_IMPI, AG, "ring", "ring", 3, NULL, C, NULL, "ring"},
    {CT_LIB_IMPI, AG, "flat-ring", "ring", 3, NULL, C, NULL, "rank-order ring"},
    {CT_LIB_IMPI, AG, "bidir-ring", "ring", 3, NULL, X, NULL, "one direction only"},
    {CT_LIB_IMPI, AG, "rail-ring", "ring", 3, NULL, X, NULL, "one ring, not one per rail"},
    {CT_LIB_IMPI, AG, "torus-ring", "ring", 3, NULL, X, NULL, "one ring, not torus cycles"},
    {CT_LIB_IMPI, RS, "rdh", "recursive halving", 1, NULL, C, NULL, "recursive halving"},
    {CT_LIB_IMPI, RS, "torus-rdh", "recursive halving", 1, NULL, X, NULL, "partners by rank bits"},
    {CT_LIB_IMPI, RS, "mesh", "pairwise exchange", 2, NULL, C, NULL,
     "direct exchange, one peer per step"},
    {CT_LIB_IMPI, RS, "simple-ring", "Reduce + Scatterv", 4, NULL, X, NULL,
     "reduce then scatterv, over trees"},
    {CT_LIB_IMPI, A2A, "bruck", "Bruck's", 1, NULL, C, NULL, "Bruck"},
    {CT_LIB_IMPI, A2A, "mesh", "Isend/Irecv + waitall", 2, NULL, C, NULL, "all peers posted"},
    {CT_LIB_IMPI, A2A, "ring", "pairwise exchange", 3, NULL, C, NULL, "pairwise exchange"},
};
#undef C
#undef X

static const struct ct_size_meaning sizes[] = {
    {CT_LIB_NCCL, AR, CT_UNIT_SAME, "count*dtsize", "NVIDIA/nccl src/enqueue.cc ncclGetAlgoInfo"},
    {CT_LIB_NCCL, AG, CT_UNIT_SAME, "nranks*count*dtsize (whole output)",
     "NVIDIA/nccl src/include/enqueue.h ncclFuncMaxSendRecvCount"},
    {CT_LIB_NCCL, RS, CT_UNIT_SAME, "nranks*count*dtsize (whole input)",
     "NVIDIA/nccl src/include/enqueue.h ncclFuncMaxSendRecvCount"},
    {CT_LIB_NCCL, A2A, CT_UNIT_NONE, "alltoall runs as grouped send/recv: no tuner or NCCL_ALGO",
     "NVIDIA/nccl plugins/tuner/example"},
    {CT_LIB_OMPI, AR, CT_UNIT_SAME, "count*dtsize", "coll_tuned_decision_dynamic.c"},
    {CT_LIB_OMPI, AG, CT_UNIT_SAME, "comm_size*scount*dtsize", "coll_tuned_decision_dynamic.c"},
    {CT_LIB_OMPI, RS, CT_UNIT_SAME, "sum(rcounts)*dtsize", "coll_tuned_decision_dynamic.c"},
    {CT_LIB_OMPI, A2A, CT_UNIT_SAME, "comm_size*scount*dtsize", "coll_tuned_decision_dynamic.c"},
    {CT_LIB_MPICH, AR, CT_UNIT_SAME, "avg_msg_size = count*dtsize", "csel.c get_avg_msgsize"},
    {CT_LIB_MPICH, AG, CT_UNIT_SAME, "total_msg_size = recvcount*dtsize*comm_size",
     "csel.c get_total_msgsize"},
    {CT_LIB_MPICH, RS, CT_UNIT_SAME, "total_msg_size = sum(recvcounts)*dtsize",
     "csel.c get_total_msgsize"},
    {CT_LIB_MPICH, A2A, CT_UNIT_SAME, "total_msg_size = sendcount*dtsize*comm_size",
     "csel.c get_total_msgsize"},
    {CT_LIB_UCC, AR, CT_UNIT_SAME, "dst.count*dtsize", "ucc_coll_utils.c ucc_coll_args_msgsize"},
    {CT_LIB_UCC, AG, CT_UNIT_SAME, "dst.count*dtsize (whole gathered buffer)",
     "ucc_coll_utils.c ucc_coll_args_msgsize"},
    {CT_LIB_UCC, RS, CT_UNIT_PER_RANK, "dst.count*dtsize (one rank's result)",
     "ucc_coll_utils.c ucc_coll_args_msgsize"},
    {CT_LIB_UCC, A2A, CT_UNIT_SAME, "dst.count*dtsize (whole buffer)",
     "ucc_coll_utils.c ucc_coll_args_msgsize"},
    {CT_LIB_IMPI, AR, CT_UNIT_SAME, "count*type_size", "Intel MPI reference (doc only)"},
    {CT_LIB_IMPI, AG, CT_UNIT_PER_RANK, "recv_count*recv_type_size (one rank's block)",
     "Intel MPI reference (doc only)"},
    {CT_LIB_IMPI, RS, CT_UNIT_SAME, "total_recv_count*type_size", "Intel MPI reference (doc only)"},
    {CT_LIB_IMPI, A2A, CT_UNIT_PER_RANK, "send_count*send_type_size (one peer's block)",
     "Intel MPI reference (doc only)"},
};

const char *ct_lib_name(int lib)
{
    return lib >= 0 && lib < CT_LIB_COUNT ? lib_names[lib] : "?";
}

const char *ct_lib_title(int lib)
{
    return lib >= 0 && lib < CT_LIB_COUNT ? lib_titles[lib] : "?";
}

const char *ct_lib_default_version(int lib)
{
    return lib >= 0 && lib < CT_LIB_COUNT ? lib_versions[lib] : "0";
}

int ct_lib_find(const char *name)
{
    for (int l = 0; name && l < CT_LIB_COUNT; l++)
        if (!strcmp(name, lib_names[l]))
            return l;
    return -1;
}

const char *ct_match_name(enum ct_match m)
{
    return m == CT_MATCH_CLOSE ? "close" : "approx";
}

int ct_version_check(const char *v, struct ct_err *err)
{
    const char *p = v;
    bool digit = false;
    for (; p && *p; p++) {
        if (*p >= '0' && *p <= '9')
            digit = true;
        else if (*p != '.' || !digit)
            break;
        else
            digit = false;
    }
    if (!v || !*v || *p || !digit)
        return ct_err_set(err, CT_EINVAL, "version '%s' is not a dotted number like 4.1 or 2.27.5",
                          v ? v : "");
    return 0;
}

/* The release series (major versions) whose formats and ids colltune writes, per library. */
static const unsigned long lib_majors[CT_LIB_COUNT][2] = {
    {2, 2}, {4, 6}, {4, 4}, {1, 1}, {2019, 2021}};

int ct_version_check_for(int lib, const char *v, struct ct_err *err)
{
    if (ct_version_check(v, err) < 0)
        return -1;
    if (lib < 0 || lib >= CT_LIB_COUNT)
        return 0;
    unsigned long m = strtoul(v, NULL, 10), lo = lib_majors[lib][0], hi = lib_majors[lib][1];
    if (m >= lo && m <= hi)
        return 0;
    if (lo == hi)
        return ct_err_set(err, CT_EINVAL, "version '%s': colltune writes for %s %lu.x only", v,
                          lib_titles[lib], lo);
    return ct_err_set(err, CT_EINVAL, "version '%s': colltune writes for %s %lu.x to %lu.x only", v,
                      lib_titles[lib], lo, hi);
}

int ct_version_cmp(const char *a, const char *b)
{
    while (*a || *b) {
        char *ea, *eb;
        unsigned long x = strtoul(a, &ea, 10), y = strtoul(b, &eb, 10);
        if (x != y)
            return x < y ? -1 : 1;
        a = *ea == '.' ? ea + 1 : ea + strlen(ea);
        b = *eb == '.' ? eb + 1 : eb + strlen(eb);
    }
    return 0;
}

const struct ct_algomap_row *ct_algomap_find(int lib, enum ct_coll coll, const char *algo,
                                             const char *version,
                                             const struct ct_algomap_row **later)
{
    const char *v = version ? version : ct_lib_default_version(lib);
    if (later)
        *later = NULL;
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        const struct ct_algomap_row *r = &rows[i];
        if (r->lib != lib || r->coll != coll || strcmp(r->algo, algo))
            continue;
        if (!r->since || ct_version_cmp(r->since, v) <= 0)
            return r;
        if (later && !*later)
            *later = r;
    }
    return NULL;
}

const struct ct_algomap_row *ct_algomap_at(size_t i)
{
    return i < sizeof rows / sizeof rows[0] ? &rows[i] : NULL;
}

const struct ct_size_meaning *ct_algomap_size(int lib, enum ct_coll coll)
{
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        if (sizes[i].lib == lib && sizes[i].coll == coll)
            return &sizes[i];
    return NULL;
}

/* ceil(v / n) */
static uint64_t div_up(uint64_t v, uint64_t n)
{
    return v / n + (v % n != 0);
}

bool ct_algomap_range(const struct ct_size_meaning *m, int nranks, uint64_t min, uint64_t max,
                      uint64_t *lo, uint64_t *hi)
{
    uint64_t n = nranks > 0 ? (uint64_t)nranks : 1;
    if (!m || m->unit == CT_UNIT_NONE)
        return false;
    if (m->unit == CT_UNIT_SAME) {
        *lo = min;
        *hi = max;
    } else {
        /* S = n*s: n*s in [min, max)  <=>  s in [ceil(min/n), ceil(max/n)) */
        *lo = div_up(min, n);
        *hi = max == CT_BYTES_INF ? CT_BYTES_INF : div_up(max, n);
    }
    return *hi > *lo;
}
