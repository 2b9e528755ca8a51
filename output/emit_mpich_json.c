/* SPDX-License-Identifier: MIT */
/*
 * mpich-json: an MPICH collective selection tree (MPIR level, MPIR_CVAR_COLL_SELECTION_TUNING_
 * JSON_FILE). A user file replaces MPICH's built-in tree, so this writes a complete one: MPICH's
 * own generic tree with the tuned collectives' intra-communicator subtrees replaced. Sibling
 * keys are tried in file order; MPICH's guards (commutativity, in-place, power-of-two, built-in
 * ops) stay in front of algorithms that assert on them.
 *
 * A measured AllReduce also gets MPICH's CH4 tree (MPIR_CVAR_CH4_COLL_SELECTION_TUNING_JSON_FILE,
 * FILE.ch4.json), which runs first: as shipped it sends an intra-node communicator to
 * composition gamma (the shared-memory module's allreduce, which may run its own
 * release_gather algorithm and never read the MPIR tree) and others to alpha or beta. The
 * export sends the tuned ranges to beta (the network module's allreduce, which is the MPIR
 * tree's) and leaves every other range as shipped, so MPICH's device layer stays on. The other
 * three collectives have one CH4 composition, alpha, which reaches the MPIR tree.
 *
 * A mapped export (colltune's own rules, no measured section) turns the device collectives
 * off instead (MPIR_CVAR_DEVICE_COLLECTIVES=none: its rules for a multi-node communicator are
 * for the whole one, not CH4's node sub-communicators), and only when it writes an AllReduce
 * range of its own. Measured or mapped, a file that keeps MPICH's choices at every size is
 * refused (nothing to export).
 */
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export.h"

/*
 * MPICH's default MPIR tree: pmodels/mpich v4.0.2 maint/tuning/coll/mpir/generic.json,
 * compacted (MPICH COPYRIGHT, BSD-style). Its algorithm names exist in 4.0 through 5.0 except
 * MPIR_Barrier_intra_dissemination, which became _k_dissemination in 4.1 (patched below).
 */
static const char generic_402[] =
    "{\"collective=bcast\":{\"comm_type=intra\":{\"comm_size<8\":{\"comm_hierarchy=parent\":{\""
    "avg_msg_size<=0\":{\"algorithm=MPIR_Bcast_intra_smp\":{}},\"avg_msg_size=any\":{\"algorith"
    "m=MPIR_Bcast_intra_binomial\":{}}},\"comm_hierarchy=any\":{\"avg_msg_size=any\":{\"algorit"
    "hm=MPIR_Bcast_intra_binomial\":{}}}},\"comm_size=pow2\":{\"comm_hierarchy=parent\":{\"avg_"
    "msg_size<=0\":{\"algorithm=MPIR_Bcast_intra_smp\":{}},\"avg_msg_size<=12288\":{\"algorithm"
    "=MPIR_Bcast_intra_binomial\":{}},\"avg_msg_size<=524288\":{\"algorithm=MPIR_Bcast_intra_sc"
    "atter_recursive_doubling_allgather\":{}},\"avg_msg_size=any\":{\"algorithm=MPIR_Bcast_intr"
    "a_scatter_ring_allgather\":{}}},\"comm_hierarchy=any\":{\"avg_msg_size<=12288\":{\"algorit"
    "hm=MPIR_Bcast_intra_binomial\":{}},\"avg_msg_size<=524288\":{\"algorithm=MPIR_Bcast_intra_"
    "scatter_recursive_doubling_allgather\":{}},\"avg_msg_size=any\":{\"algorithm=MPIR_Bcast_in"
    "tra_scatter_ring_allgather\":{}}}},\"comm_size=any\":{\"comm_hierarchy=parent\":{\"avg_msg"
    "_size<=0\":{\"algorithm=MPIR_Bcast_intra_smp\":{}},\"avg_msg_size<=12288\":{\"algorithm=MP"
    "IR_Bcast_intra_binomial\":{}},\"avg_msg_size=any\":{\"algorithm=MPIR_Bcast_intra_scatter_r"
    "ing_allgather\":{}}},\"comm_hierarchy=any\":{\"avg_msg_size<=12288\":{\"algorithm=MPIR_Bca"
    "st_intra_binomial\":{}},\"avg_msg_size=any\":{\"algorithm=MPIR_Bcast_intra_scatter_ring_al"
    "lgather\":{}}}}},\"comm_type=inter\":{\"algorithm=MPIR_Bcast_inter_remote_send_local_bcast"
    "\":{}}},\"collective=allreduce\":{\"comm_type=intra\":{\"avg_msg_size<=0\":{\"is_commutati"
    "ve=yes\":{\"algorithm=MPIR_Allreduce_intra_smp\":{}},\"is_commutative=no\":{\"algorithm=MP"
    "IR_Allreduce_intra_recursive_doubling\":{}}},\"avg_msg_size<=8\":{\"algorithm=MPIR_Allredu"
    "ce_intra_recursive_doubling\":{}},\"avg_msg_size=any\":{\"is_op_built_in=no\":{\"algorithm"
    "=MPIR_Allreduce_intra_recursive_doubling\":{}},\"is_op_built_in=yes\":{\"count<pow2\":{\"a"
    "lgorithm=MPIR_Allreduce_intra_recursive_doubling\":{}},\"count=any\":{\"algorithm=MPIR_All"
    "reduce_intra_reduce_scatter_allgather\":{}}}}},\"comm_type=inter\":{\"algorithm=MPIR_Allre"
    "duce_inter_reduce_exchange_bcast\":{}}},\"collective=allgather\":{\"comm_type=intra\":{\"c"
    "omm_size=pow2\":{\"total_msg_size<524288\":{\"algorithm=MPIR_Allgather_intra_recursive_dou"
    "bling\":{}},\"total_msg_size=any\":{\"algorithm=MPIR_Allgather_intra_ring\":{}}},\"comm_si"
    "ze=any\":{\"total_msg_size<81920\":{\"algorithm=MPIR_Allgather_intra_brucks\":{}},\"total_"
    "msg_size=any\":{\"algorithm=MPIR_Allgather_intra_ring\":{}}}},\"comm_type=inter\":{\"algor"
    "ithm=MPIR_Allgather_inter_local_gather_remote_bcast\":{}}},\"collective=allgatherv\":{\"co"
    "mm_type=intra\":{\"comm_size=pow2\":{\"total_msg_size<524288\":{\"algorithm=MPIR_Allgather"
    "v_intra_recursive_doubling\":{}},\"total_msg_size=any\":{\"algorithm=MPIR_Allgatherv_intra"
    "_ring\":{}}},\"comm_size=any\":{\"total_msg_size<81920\":{\"algorithm=MPIR_Allgatherv_intr"
    "a_brucks\":{}},\"total_msg_size=any\":{\"algorithm=MPIR_Allgatherv_intra_ring\":{}}}},\"co"
    "mm_type=inter\":{\"algorithm=MPIR_Allgatherv_inter_remote_gather_local_bcast\":{}}},\"coll"
    "ective=reduce\":{\"comm_type=intra\":{\"comm_hierarchy=parent\":{\"avg_msg_size<=0\":{\"is"
    "_commutative=yes\":{\"algorithm=MPIR_Reduce_intra_smp\":{}},\"is_commutative=no\":{\"algor"
    "ithm=MPIR_Reduce_intra_binomial\":{}}},\"avg_msg_size<=2048\":{\"algorithm=MPIR_Reduce_int"
    "ra_binomial\":{}},\"avg_msg_size=any\":{\"is_op_built_in=yes\":{\"count<pow2\":{\"algorith"
    "m=MPIR_Reduce_intra_binomial\":{}},\"count=any\":{\"algorithm=MPIR_Reduce_intra_reduce_sca"
    "tter_gather\":{}}},\"is_op_built_in=no\":{\"algorithm=MPIR_Reduce_intra_binomial\":{}}}},"
    "\"comm_hierarchy=any\":{\"avg_msg_size<=2048\":{\"algorithm=MPIR_Reduce_intra_binomial\":{"
    "}},\"avg_msg_size=any\":{\"is_op_built_in=yes\":{\"count<pow2\":{\"algorithm=MPIR_Reduce_i"
    "ntra_binomial\":{}},\"count=any\":{\"algorithm=MPIR_Reduce_intra_reduce_scatter_gather\":{"
    "}}},\"is_op_built_in=no\":{\"algorithm=MPIR_Reduce_intra_binomial\":{}}}}},\"comm_type=int"
    "er\":{\"algorithm=MPIR_Reduce_inter_local_reduce_remote_send\":{}}},\"collective=reduce_sc"
    "atter\":{\"comm_type=intra\":{\"is_commutative=yes\":{\"total_msg_size<524288\":{\"algorit"
    "hm=MPIR_Reduce_scatter_intra_recursive_halving\":{}},\"total_msg_size=any\":{\"algorithm=M"
    "PIR_Reduce_scatter_intra_pairwise\":{}}},\"is_commutative=no\":{\"is_block_regular=yes\":{"
    "\"comm_size=pow2\":{\"algorithm=MPIR_Reduce_scatter_intra_noncommutative\":{}},\"comm_size"
    "=any\":{\"algorithm=MPIR_Reduce_scatter_intra_recursive_doubling\":{}}},\"is_block_regular"
    "=no\":{\"algorithm=MPIR_Reduce_scatter_intra_recursive_doubling\":{}}}},\"comm_type=inter"
    "\":{\"algorithm=MPIR_Reduce_scatter_inter_remote_reduce_local_scatter\":{}}},\"collective="
    "reduce_scatter_block\":{\"comm_type=intra\":{\"is_commutative=yes\":{\"total_msg_size<5242"
    "88\":{\"algorithm=MPIR_Reduce_scatter_block_intra_recursive_halving\":{}},\"total_msg_size"
    "=any\":{\"algorithm=MPIR_Reduce_scatter_block_intra_pairwise\":{}}},\"is_commutative=no\":"
    "{\"comm_size=pow2\":{\"algorithm=MPIR_Reduce_scatter_block_intra_noncommutative\":{}},\"co"
    "mm_size=any\":{\"algorithm=MPIR_Reduce_scatter_block_intra_recursive_doubling\":{}}}},\"co"
    "mm_type=inter\":{\"algorithm=MPIR_Reduce_scatter_block_inter_remote_reduce_local_scatter\""
    ":{}}},\"collective=gather\":{\"comm_type=intra\":{\"algorithm=MPIR_Gather_intra_binomial\""
    ":{}},\"comm_type=inter\":{\"total_msg_size<2048\":{\"algorithm=MPIR_Gather_inter_local_gat"
    "her_remote_send\":{}},\"total_msg_size=any\":{\"algorithm=MPIR_Gather_inter_linear\":{}}}}"
    ",\"collective=scatter\":{\"comm_type=intra\":{\"algorithm=MPIR_Scatter_intra_binomial\":{}"
    "},\"comm_type=inter\":{\"total_msg_size<2048\":{\"algorithm=MPIR_Scatter_inter_remote_send"
    "_local_scatter\":{}},\"total_msg_size=any\":{\"algorithm=MPIR_Scatter_inter_linear\":{}}}}"
    ",\"collective=gatherv\":{\"algorithm=MPIR_Gatherv_allcomm_linear\":{}},\"collective=scatte"
    "rv\":{\"algorithm=MPIR_Scatterv_allcomm_linear\":{}},\"collective=scan\":{\"comm_type=intr"
    "a\":{\"is_node_consecutive=yes\":{\"algorithm=MPIR_Scan_intra_smp\":{}},\"is_node_consecut"
    "ive=no\":{\"algorithm=MPIR_Scan_intra_recursive_doubling\":{}}},\"comm_type=inter\":{\"alg"
    "orithm=MPIR_Scan_intra_smp\":{}}},\"collective=exscan\":{\"algorithm=MPIR_Exscan_intra_rec"
    "ursive_doubling\":{}},\"collective=barrier\":{\"comm_type=intra\":{\"comm_hierarchy=parent"
    "\":{\"algorithm=MPIR_Barrier_intra_smp\":{}},\"comm_hierarchy=any\":{\"algorithm=MPIR_Barr"
    "ier_intra_dissemination\":{}}},\"comm_type=inter\":{\"algorithm=MPIR_Barrier_inter_bcast\""
    ":{}}},\"collective=alltoall\":{\"comm_type=intra\":{\"is_sendbuf_inplace=yes\":{\"algorith"
    "m=MPIR_Alltoall_intra_pairwise_sendrecv_replace\":{}},\"is_sendbuf_inplace=no\":{\"comm_si"
    "ze<8\":{\"avg_msg_size<=32768\":{\"algorithm=MPIR_Alltoall_intra_scattered\":{}},\"avg_msg"
    "_size=any\":{\"algorithm=MPIR_Alltoall_intra_pairwise\":{}}},\"comm_size=any\":{\"avg_msg_"
    "size<=256\":{\"algorithm=MPIR_Alltoall_intra_brucks\":{}},\"avg_msg_size<=32768\":{\"algor"
    "ithm=MPIR_Alltoall_intra_scattered\":{}},\"avg_msg_size=any\":{\"algorithm=MPIR_Alltoall_i"
    "ntra_pairwise\":{}}}}},\"comm_type=inter\":{\"algorithm=MPIR_Alltoall_inter_pairwise_excha"
    "nge\":{}}},\"collective=alltoallv\":{\"comm_type=intra\":{\"is_sendbuf_inplace=yes\":{\"al"
    "gorithm=MPIR_Alltoallv_intra_pairwise_sendrecv_replace\":{}},\"is_sendbuf_inplace=no\":{\""
    "algorithm=MPIR_Alltoallv_intra_scattered\":{}}},\"comm_type=inter\":{\"algorithm=MPIR_Allt"
    "oallv_inter_pairwise_exchange\":{}}},\"collective=alltoallw\":{\"comm_type=intra\":{\"is_s"
    "endbuf_inplace=yes\":{\"algorithm=MPIR_Alltoallw_intra_pairwise_sendrecv_replace\":{}},\"i"
    "s_sendbuf_inplace=no\":{\"algorithm=MPIR_Alltoallw_intra_scattered\":{}}},\"comm_type=inte"
    "r\":{\"algorithm=MPIR_Alltoallw_inter_pairwise_exchange\":{}}},\"collective=neighbor_allga"
    "ther\":{\"algorithm=MPIR_Neighbor_allgather_allcomm_nb\":{}},\"collective=neighbor_allgath"
    "erv\":{\"algorithm=MPIR_Neighbor_allgatherv_allcomm_nb\":{}},\"collective=neighbor_alltoal"
    "l\":{\"algorithm=MPIR_Neighbor_alltoall_allcomm_nb\":{}},\"collective=neighbor_alltoallv\""
    ":{\"algorithm=MPIR_Neighbor_alltoallv_allcomm_nb\":{}},\"collective=neighbor_alltoallw\":{"
    "\"algorithm=MPIR_Neighbor_alltoallw_allcomm_nb\":{}},\"collective=ibarrier\":{\"comm_type="
    "intra\":{\"algorithm=MPIR_Ibarrier_intra_sched_recursive_doubling\":{}},\"comm_type=inter"
    "\":{\"algorithm=MPIR_Ibarrier_inter_sched_bcast\":{}}},\"collective=iallreduce\":{\"comm_t"
    "ype=intra\":{\"avg_msg_size<=2048\":{\"algorithm=MPIR_Iallreduce_intra_sched_recursive_dou"
    "bling\":{}},\"avg_msg_size=any\":{\"is_op_built_in=no\":{\"algorithm=MPIR_Iallreduce_intra"
    "_sched_recursive_doubling\":{}},\"is_op_built_in=yes\":{\"count<pow2\":{\"algorithm=MPIR_I"
    "allreduce_intra_sched_recursive_doubling\":{}},\"count=any\":{\"algorithm=MPIR_Iallreduce_"
    "intra_sched_reduce_scatter_allgather\":{}}}}},\"comm_type=inter\":{\"algorithm=MPIR_Iallre"
    "duce_inter_sched_remote_reduce_local_bcast\":{}}},\"collective=iallgather\":{\"comm_type=i"
    "ntra\":{\"comm_size=pow2\":{\"total_msg_size<524288\":{\"algorithm=MPIR_Iallgather_intra_s"
    "ched_recursive_doubling\":{}},\"total_msg_size=any\":{\"algorithm=MPIR_Iallgather_intra_sc"
    "hed_ring\":{}}},\"comm_size=any\":{\"total_msg_size<81920\":{\"algorithm=MPIR_Iallgather_i"
    "ntra_sched_brucks\":{}},\"total_msg_size=any\":{\"algorithm=MPIR_Iallgather_intra_sched_ri"
    "ng\":{}}}},\"comm_type=inter\":{\"algorithm=MPIR_Iallgather_inter_sched_local_gather_remot"
    "e_bcast\":{}}},\"collective=iallgatherv\":{\"comm_type=intra\":{\"comm_size=pow2\":{\"tota"
    "l_msg_size<524288\":{\"algorithm=MPIR_Iallgatherv_intra_sched_recursive_doubling\":{}},\"t"
    "otal_msg_size=any\":{\"algorithm=MPIR_Iallgatherv_intra_sched_ring\":{}}},\"comm_size=any"
    "\":{\"total_msg_size<81920\":{\"algorithm=MPIR_Iallgatherv_intra_sched_brucks\":{}},\"tota"
    "l_msg_size=any\":{\"algorithm=MPIR_Iallgatherv_intra_sched_ring\":{}}}},\"comm_type=inter"
    "\":{\"algorithm=MPIR_Iallgatherv_inter_sched_remote_gather_local_bcast\":{}}},\"collective"
    "=ibcast\":{\"comm_type=intra\":{\"comm_hierarchy=parent\":{\"algorithm=MPIR_Ibcast_intra_s"
    "ched_smp\":{}},\"comm_hierarchy=any\":{\"comm_size<8\":{\"avg_msg_size=any\":{\"algorithm="
    "MPIR_Ibcast_intra_sched_binomial\":{}}},\"comm_size=pow2\":{\"avg_msg_size<12288\":{\"algo"
    "rithm=MPIR_Ibcast_intra_sched_binomial\":{}},\"avg_msg_size<524288\":{\"algorithm=MPIR_Ibc"
    "ast_intra_sched_scatter_recursive_doubling_allgather\":{}},\"avg_msg_size=any\":{\"algorit"
    "hm=MPIR_Ibcast_intra_sched_scatter_ring_allgather\":{}}},\"comm_size=any\":{\"avg_msg_size"
    "<12288\":{\"algorithm=MPIR_Ibcast_intra_sched_binomial\":{}},\"avg_msg_size=any\":{\"algor"
    "ithm=MPIR_Ibcast_intra_sched_scatter_ring_allgather\":{}}}}},\"comm_type=inter\":{\"algori"
    "thm=MPIR_Ibcast_inter_sched_flat\":{}}},\"collective=ireduce\":{\"comm_type=intra\":{\"com"
    "m_hierarchy=parent\":{\"is_commutative=yes\":{\"algorithm=MPIR_Ireduce_intra_sched_smp\":{"
    "}},\"is_commutative=no\":{\"algorithm=MPIR_Ireduce_intra_sched_binomial\":{}}},\"comm_hier"
    "archy=any\":{\"avg_msg_size<=2048\":{\"algorithm=MPIR_Ireduce_intra_sched_binomial\":{}},"
    "\"avg_msg_size=any\":{\"is_op_built_in=yes\":{\"count<pow2\":{\"algorithm=MPIR_Ireduce_int"
    "ra_sched_binomial\":{}},\"count=any\":{\"algorithm=MPIR_Ireduce_intra_sched_reduce_scatter"
    "_gather\":{}}},\"is_op_built_in=no\":{\"algorithm=MPIR_Ireduce_intra_sched_binomial\":{}}}"
    "}},\"comm_type=inter\":{\"algorithm=MPIR_Ireduce_inter_sched_local_reduce_remote_send\":{}"
    "}},\"collective=ireduce_scatter\":{\"comm_type=intra\":{\"is_commutative=yes\":{\"total_ms"
    "g_size<524288\":{\"algorithm=MPIR_Ireduce_scatter_intra_sched_recursive_halving\":{}},\"to"
    "tal_msg_size=any\":{\"algorithm=MPIR_Ireduce_scatter_intra_sched_pairwise\":{}}},\"is_comm"
    "utative=no\":{\"is_block_regular=yes\":{\"comm_size=pow2\":{\"algorithm=MPIR_Ireduce_scatt"
    "er_intra_sched_noncommutative\":{}},\"comm_size=any\":{\"algorithm=MPIR_Ireduce_scatter_in"
    "tra_sched_recursive_doubling\":{}}},\"is_block_regular=no\":{\"algorithm=MPIR_Ireduce_scat"
    "ter_intra_sched_recursive_doubling\":{}}}},\"comm_type=inter\":{\"algorithm=MPIR_Ireduce_s"
    "catter_inter_sched_remote_reduce_local_scatterv\":{}}},\"collective=igather\":{\"comm_type"
    "=intra\":{\"algorithm=MPIR_Igather_intra_sched_binomial\":{}},\"comm_type=inter\":{\"total"
    "_msg_size<2048\":{\"algorithm=MPIR_Igather_inter_sched_short\":{}},\"total_msg_size=any\":"
    "{\"algorithm=MPIR_Igather_inter_sched_long\":{}}}},\"collective=iscatter\":{\"comm_type=in"
    "tra\":{\"algorithm=MPIR_Iscatter_intra_sched_binomial\":{}},\"comm_type=inter\":{\"total_m"
    "sg_size<2048\":{\"algorithm=MPIR_Iscatter_inter_sched_remote_send_local_scatter\":{}},\"to"
    "tal_msg_size=any\":{\"algorithm=MPIR_Iscatter_inter_sched_linear\":{}}}},\"collective=igat"
    "herv\":{\"algorithm=MPIR_Igatherv_allcomm_sched_linear\":{}},\"collective=iscatterv\":{\"a"
    "lgorithm=MPIR_Iscatterv_allcomm_sched_linear\":{}},\"collective=iexscan\":{\"algorithm=MPI"
    "R_Iexscan_intra_sched_recursive_doubling\":{}},\"collective=ialltoall\":{\"comm_type=intra"
    "\":{\"is_sendbuf_inplace=yes\":{\"algorithm=MPIR_Ialltoall_intra_sched_inplace\":{}},\"is_"
    "sendbuf_inplace=no\":{\"comm_size<8\":{\"avg_msg_size<=32768\":{\"algorithm=MPIR_Ialltoall"
    "_intra_sched_permuted_sendrecv\":{}},\"avg_msg_size=any\":{\"algorithm=MPIR_Ialltoall_intr"
    "a_sched_pairwise\":{}}},\"comm_size=any\":{\"avg_msg_size<=2048\":{\"algorithm=MPIR_Iallto"
    "all_intra_sched_brucks\":{}},\"avg_msg_size<=32768\":{\"algorithm=MPIR_Ialltoall_intra_sch"
    "ed_permuted_sendrecv\":{}},\"avg_msg_size=any\":{\"algorithm=MPIR_Ialltoall_intra_sched_pa"
    "irwise\":{}}}}},\"comm_type=inter\":{\"algorithm=MPIR_Ialltoall_inter_sched_pairwise_excha"
    "nge\":{}}},\"collective=ialltoallv\":{\"comm_type=intra\":{\"is_sendbuf_inplace=yes\":{\"a"
    "lgorithm=MPIR_Ialltoallv_intra_sched_inplace\":{}},\"is_sendbuf_inplace=no\":{\"algorithm="
    "MPIR_Ialltoallv_intra_sched_blocked\":{}}},\"comm_type=inter\":{\"algorithm=MPIR_Ialltoall"
    "v_inter_sched_pairwise_exchange\":{}}},\"collective=ialltoallw\":{\"comm_type=intra\":{\"i"
    "s_sendbuf_inplace=yes\":{\"algorithm=MPIR_Ialltoallw_intra_sched_inplace\":{}},\"is_sendbu"
    "f_inplace=no\":{\"algorithm=MPIR_Ialltoallw_intra_sched_blocked\":{}}},\"comm_type=inter\""
    ":{\"algorithm=MPIR_Ialltoallw_inter_sched_pairwise_exchange\":{}}},\"collective=ireduce_sc"
    "atter_block\":{\"comm_type=intra\":{\"is_commutative=yes\":{\"total_msg_size<524288\":{\"a"
    "lgorithm=MPIR_Ireduce_scatter_block_intra_sched_recursive_halving\":{}},\"total_msg_size=a"
    "ny\":{\"algorithm=MPIR_Ireduce_scatter_block_intra_sched_pairwise\":{}}},\"is_commutative="
    "no\":{\"comm_size=pow2\":{\"algorithm=MPIR_Ireduce_scatter_block_intra_sched_noncommutativ"
    "e\":{}},\"comm_size=any\":{\"algorithm=MPIR_Ireduce_scatter_block_intra_sched_recursive_do"
    "ubling\":{}}}},\"comm_type=inter\":{\"algorithm=MPIR_Ireduce_scatter_block_inter_sched_rem"
    "ote_reduce_local_scatterv\":{}}},\"collective=iscan\":{\"comm_hierarchy=parent\":{\"algori"
    "thm=MPIR_Iscan_intra_sched_smp\":{}},\"comm_hierarchy=any\":{\"algorithm=MPIR_Iscan_intra_"
    "sched_recursive_doubling\":{}}},\"collective=ineighbor_allgather\":{\"algorithm=MPIR_Ineig"
    "hbor_allgather_allcomm_sched_linear\":{}},\"collective=ineighbor_allgatherv\":{\"algorithm"
    "=MPIR_Ineighbor_allgatherv_allcomm_sched_linear\":{}},\"collective=ineighbor_alltoall\":{"
    "\"algorithm=MPIR_Ineighbor_alltoall_allcomm_sched_linear\":{}},\"collective=ineighbor_allt"
    "oallv\":{\"algorithm=MPIR_Ineighbor_alltoallv_allcomm_sched_linear\":{}},\"collective=inei"
    "ghbor_alltoallw\":{\"algorithm=MPIR_Ineighbor_alltoallw_allcomm_sched_linear\":{}}}";

/*
 * MPICH's default CH4 tree: maint/tuning/coll/ch4/generic.json of MPICH 4.0.2 as compiled into
 * Debian's libmpich.so.12 (strings), compacted (MPICH COPYRIGHT, BSD-style).
 */
static const char ch4_402[] =
    "{\"collective=bcast\":{\"comm_type=intra\":{\"comm_hierarchy=parent\":{\"comm_size<8\":{\"a"
    "vg_msg_size=any\":{\"composition=MPIDI_Bcast_intra_composition_alpha\":{}}},\"comm_size=pow"
    "2\":{\"avg_msg_size<12288\":{\"composition=MPIDI_Bcast_intra_composition_alpha\":{}},\"avg_"
    "msg_size<524288\":{\"composition=MPIDI_Bcast_intra_composition_beta\":{}},\"avg_msg_size=an"
    "y\":{\"composition=MPIDI_Bcast_intra_composition_gamma\":{}}},\"comm_size=any\":{\"avg_msg_"
    "size<12288\":{\"composition=MPIDI_Bcast_intra_composition_alpha\":{}},\"avg_msg_size=any\":"
    "{\"composition=MPIDI_Bcast_intra_composition_gamma\":{}}}},\"comm_hierarchy=any\":{\"compos"
    "ition=MPIDI_Bcast_intra_composition_gamma\":{}}}},\"collective=allreduce\":{\"comm_type=int"
    "ra\":{\"comm_size=node_comm_size\":{\"composition=MPIDI_Allreduce_intra_composition_gamma\""
    ":{}},\"comm_size=any\":{\"comm_hierarchy=parent\":{\"is_commutative=yes\":{\"avg_msg_size=a"
    "ny\":{\"composition=MPIDI_Allreduce_intra_composition_alpha\":{}}},\"is_commutative=no\":{"
    "\"composition=MPIDI_Allreduce_intra_composition_beta\":{}}},\"comm_hierarchy=any\":{\"compo"
    "sition=MPIDI_Allreduce_intra_composition_beta\":{}}}}},\"collective=reduce\":{\"comm_type=i"
    "ntra\":{\"comm_hierarchy=parent\":{\"is_commutative=yes\":{\"avg_msg_size<=2048\":{\"compos"
    "ition=MPIDI_Reduce_intra_composition_beta\":{}},\"avg_msg_size=any\":{\"composition=MPIDI_R"
    "educe_intra_composition_alpha\":{}}},\"is_commutative=no\":{\"composition=MPIDI_Reduce_intr"
    "a_composition_gamma\":{}}},\"comm_hierarchy=any\":{\"composition=MPIDI_Reduce_intra_composi"
    "tion_gamma\":{}}}},\"collective=barrier\":{\"comm_type=intra\":{\"comm_hierarchy=parent\":{"
    "\"composition=MPIDI_Barrier_intra_composition_alpha\":{}},\"comm_hierarchy=any\":{\"composi"
    "tion=MPIDI_Barrier_intra_composition_beta\":{}}}},\"collective=gather\":{\"comm_type=intra"
    "\":{\"composition=MPIDI_Gather_intra_composition_alpha\":{}}},\"collective=gatherv\":{\"com"
    "m_type=intra\":{\"composition=MPIDI_Gatherv_intra_composition_alpha\":{}}},\"collective=sca"
    "tter\":{\"comm_type=intra\":{\"composition=MPIDI_Scatter_intra_composition_alpha\":{}}},\"c"
    "ollective=scatterv\":{\"comm_type=intra\":{\"composition=MPIDI_Scatterv_intra_composition_a"
    "lpha\":{}}},\"collective=alltoall\":{\"comm_type=intra\":{\"composition=MPIDI_Alltoall_intr"
    "a_composition_alpha\":{}}},\"collective=alltoallv\":{\"comm_type=intra\":{\"composition=MPI"
    "DI_Alltoallv_intra_composition_alpha\":{}}},\"collective=alltoallw\":{\"comm_type=intra\":{"
    "\"composition=MPIDI_Alltoallw_intra_composition_alpha\":{}}},\"collective=allgather\":{\"co"
    "mm_type=intra\":{\"composition=MPIDI_Allgather_intra_composition_alpha\":{}}},\"collective="
    "allgatherv\":{\"comm_type=intra\":{\"composition=MPIDI_Allgatherv_intra_composition_alpha\""
    ":{}}},\"collective=reduce_scatter\":{\"comm_type=intra\":{\"composition=MPIDI_Reduce_scatte"
    "r_intra_composition_alpha\":{}}},\"collective=reduce_scatter_block\":{\"comm_type=intra\":{"
    "\"composition=MPIDI_Reduce_scatter_block_intra_composition_alpha\":{}}},\"collective=scan\""
    ":{\"is_node_consecutive=yes\":{\"composition=MPIDI_Scan_intra_composition_alpha\":{}},\"is_"
    "node_consecutive=no\":{\"composition=MPIDI_Scan_intra_composition_beta\":{}}},\"collective="
    "exscan\":{\"composition=MPIDI_Exscan_intra_composition_alpha\":{}}}";
#define ALLREDUCE_BETA "composition=MPIDI_Allreduce_intra_composition_beta"

#define ALLREDUCE_RSA "MPIR_Allreduce_intra_reduce_scatter_allgather"
#define ALLGATHER_RD "MPIR_Allgather_intra_recursive_doubling"
#define ALLREDUCE_SMP "MPIR_Allreduce_intra_smp"
#define REDUCE_SCATTER_NC "MPIR_Reduce_scatter_intra_noncommutative"

static const char *mpich_coll(enum ct_coll c)
{
    return c == CT_REDUCESCATTER ? "reduce_scatter" : ct_coll_name(c);
}

static json_t *leaf(const char *algo)
{
    json_t *o = json_object();
    json_object_set_new(o, algo, json_object());
    return o;
}

/* {yes: then, no: MPICH's generic subtree}: the guard's two keys (the second the rest) */
static json_t *guarded(const char *yes, const char *no, json_t *then, json_t *gen)
{
    json_t *o = json_object();
    json_object_set_new(o, yes, then);
    json_object_set_new(o, no, json_deep_copy(gen));
    return o;
}

/* The leaf for an algorithm, behind the guard MPICH's algorithm asserts on or needs. */
static json_t *algo_leaf(const char *target, json_t *gen)
{
    char key[128];
    snprintf(key, sizeof key, "algorithm=%s", target);
    if (!strcmp(target, ALLREDUCE_RSA)) { /* asserts a built-in op and count >= pof2 */
        json_t *b = json_object();        /* a chain: its last key "=any" */
        json_object_set_new(b, "count<pow2", json_deep_copy(gen));
        json_object_set_new(b, "count=any", leaf(key));
        return guarded("is_op_built_in=yes", "is_op_built_in=no", b, gen);
    }
    if (!strcmp(target, ALLGATHER_RD)) /* asserts a power-of-two communicator */
        return guarded("comm_size=pow2", "comm_size=any", leaf(key), gen);
    if (!strcmp(target, ALLREDUCE_SMP)) /* on a communicator without a node hierarchy (one
                                         * rank per node; CH4 alpha's node_roots_comm) it only
                                         * copies: no sum */
        return guarded("comm_hierarchy=parent", "comm_hierarchy=any", leaf(key), gen);
    if (!strcmp(target, REDUCE_SCATTER_NC)) /* asserts equal counts and a power of two */
        return guarded("is_block_regular=yes", "is_block_regular=no",
                       guarded("comm_size=pow2", "comm_size=any", leaf(key), gen), gen);
    return leaf(key);
}

/* Size ranges of one ruleset: "<key><hi>" per range, "<key>=any" for the last. *changed
 * counts the ranges written with an algorithm of their own (not MPICH's default subtree). */
static json_t *ranges_tree(const struct ct_ruleset *s, const struct ct_export_opts *o, json_t *gen,
                           struct ct_export_out *out, struct ct_text *map, int *changed)
{
    const char *key = s->coll == CT_ALLREDUCE ? "avg_msg_size" : "total_msg_size";
    json_t *t = json_object();
    struct ct_xrange *xr;
    int n;
    char k[64], set[96], rg[64], rg2[64];
    ct_export_map(s, CT_LIB_MPICH, o, out, &xr, &n);
    for (int i = 0; i < n; i++) {
        const struct ct_xrange *x = &xr[i];
        bool last = i == n - 1 || x->hi > (uint64_t)INT_MAX; /* thresholds are read with atoi */
        if (last && i < n - 1)
            ct_export_note(out,
                           "%s: MPICH reads thresholds as int; sizes from %s on follow "
                           "the rule of %s",
                           ct_export_set_str(s, set, sizeof set),
                           ct_export_range_str(x->hi, CT_BYTES_INF, rg, sizeof rg),
                           ct_export_range_str(x->lo, x->hi, rg2, sizeof rg2));
        if (last)
            snprintf(k, sizeof k, "%s=any", key);
        else
            snprintf(k, sizeof k, "%s<%llu", key, (unsigned long long)x->hi);
        if (x->map) {
            ct_export_map_comment(map, "# ", s, x);
            json_object_set_new(t, k, algo_leaf(x->map->target, gen));
            (*changed)++;
        } else {
            ct_export_note_unmapped(out, NULL, "", s, CT_LIB_MPICH, x,
                                    "MPICH's default tree decides there");
            json_object_set_new(t, k, json_deep_copy(gen));
        }
        if (last)
            break;
    }
    free(xr);
    return t;
}

/* The key of rule i of a measured ruleset: "<key><max>", "<key>=any" for the last one
 * written (MPICH reads thresholds as int); true for that last one. */
static bool measured_key(const struct ct_ruleset *s, int i, char *k, size_t len)
{
    const char *key = s->coll == CT_ALLREDUCE ? "avg_msg_size" : "total_msg_size";
    const struct ct_rule *r = &s->rules[i];
    bool last = i == s->nrules - 1 || r->max_bytes > (uint64_t)INT_MAX;
    if (last)
        snprintf(k, len, "%s=any", key);
    else
        snprintf(k, len, "%s<%llu", key, (unsigned long long)r->max_bytes);
    return last;
}

/* Rule i of a measured ruleset written as one key with rule i + 1 (same(), the same
 * subtree): not the last key written. */
static bool joins_next(const struct ct_ruleset *s, int i,
                       bool (*same)(const struct ct_rule *, const struct ct_rule *))
{
    return i + 1 < s->nrules && s->rules[i].max_bytes <= (uint64_t)INT_MAX &&
           same(&s->rules[i], &s->rules[i + 1]);
}

static bool same_algo(const struct ct_rule *a, const struct ct_rule *b)
{
    return !strcmp(a->algo, b->algo);
}

static bool same_layer(const struct ct_rule *a, const struct ct_rule *b)
{
    return !strcmp(a->algo, "default") == !strcmp(b->algo, "default");
}

/*
 * A measured ruleset (sweep --lib mpich): MPICH's own names. "recursive_doubling" is
 * MPIR_<Coll>_intra_recursive_doubling, "nb" MPIR_<Coll>_allcomm_nb; "auto" (the MPIR tree's
 * own choice) and "default" (MPICH as shipped) keep MPICH's generic subtree (for AllReduce
 * the CH4 tree keeps the device path where "default" won, and sends "auto" past it: a
 * change). Neighbouring ranges of one algorithm are one key. *changed counts the keys that
 * change what MPICH runs.
 */
static json_t *measured_tree(const struct ct_ruleset *s, json_t *gen, struct ct_text *map,
                             struct ct_export_out *out, int *changed)
{
    static const char *const cap[CT_COLL_COUNT] = {"Allreduce", "Allgather", "Reduce_scatter",
                                                   "Alltoall"};
    json_t *t = json_object();
    char k[64], set[96], rg[64], target[160];
    uint64_t lo = s->nrules ? s->rules[0].min_bytes : 0; /* where r's run of ranges begins */
    for (int i = 0; i < s->nrules; i++) {
        const struct ct_rule *r = &s->rules[i];
        if (joins_next(s, i, same_algo))
            continue;
        bool last = measured_key(s, i, k, sizeof k);
        ct_export_set_str(s, set, sizeof set);
        uint64_t from = lo;
        lo = r->max_bytes;
        ct_export_range_str(from, last ? CT_BYTES_INF : r->max_bytes, rg, sizeof rg);
        if (last && i < s->nrules - 1) { /* the ranges above: said, not dropped silently */
            char up[64];
            ct_export_note(out,
                           "%s: MPICH reads thresholds as int; sizes from %s on follow the "
                           "rule of %s",
                           set, ct_export_range_str(r->max_bytes, CT_BYTES_INF, up, sizeof up),
                           ct_export_range_str(from, r->max_bytes, rg, sizeof rg));
            ct_export_range_str(from, CT_BYTES_INF, rg, sizeof rg);
        }
        if (!strcmp(r->algo, "default") || !strcmp(r->algo, "auto")) {
            bool ar_auto = s->coll == CT_ALLREDUCE && !strcmp(r->algo, "auto");
            if (!strcmp(r->algo, "default"))
                ct_text_printf(map, "# %s %s: MPICH as shipped measured best (left as shipped)\n",
                               set, rg);
            else
                ct_text_printf(map, "# %s %s: auto (the MPIR tree's own choice) measured best%s\n",
                               set, rg,
                               ar_auto ? "; the CH4 tree sends it there (composition beta)" : "");
            json_object_set_new(t, k, json_deep_copy(gen));
            *changed += ar_auto; /* past the device layer: a change (the CH4 tree's ranges) */
        } else {
            snprintf(target, sizeof target, "MPIR_%s_%s_%s", cap[s->coll],
                     strcmp(r->algo, "nb") ? "intra" : "allcomm", r->algo);
            ct_text_printf(map, "# %s %s: %s (measured)\n", set, rg, target);
            json_object_set_new(t, k, algo_leaf(target, gen));
            (*changed)++;
        }
        if (last)
            break;
    }
    return t;
}

/* The CH4 tree's ranges of a measured AllReduce ruleset: composition beta (the MPIR tree)
 * where an MPIR-level row won, MPICH's CH4 subtree (gen) where MPICH as shipped did; a run of
 * either one key. */
static json_t *ch4_tree(const struct ct_ruleset *s, json_t *gen)
{
    json_t *t = json_object();
    char k[64];
    for (int i = 0; i < s->nrules; i++) {
        if (joins_next(s, i, same_layer))
            continue;
        bool last = measured_key(s, i, k, sizeof k);
        json_object_set_new(
            t, k, strcmp(s->rules[i].algo, "default") ? leaf(ALLREDUCE_BETA) : json_deep_copy(gen));
        if (last)
            break;
    }
    return t;
}

/* The rules written: colltune's (mapped) or a measured MPICH section's. */
struct src {
    const struct ct_ruleset *sets;
    int nsets;
    bool measured;
    bool ch4;    /* write the CH4 tree's ranges (measured AllReduce) */
    int changed; /* ranges written with an algorithm of their own (not MPICH's choice) */
};

/* comm_size<=N1-1: default, comm_size<=N1: rules(N1), ..., comm_size=any: default. Never
 * "comm_size<N": MPICH 4.0.x's selector evaluates it as local_size <= N (csel.c, its search's
 * COMM_SIZE_LT case), so a guard "comm_size<2" took the 2-rank calls to the default subtree
 * before "comm_size<=2" was reached, and the file changed nothing on 2 ranks (seen with the
 * spy of tests/cli/t3100-lib-engines.sh). "<=" reads the same in every MPICH. */
static json_t *sizes_tree(struct src *src, const struct ct_export_opts *o, enum ct_coll coll,
                          json_t *gen, struct ct_export_out *out, struct ct_text *map)
{
    json_t *t = json_object();
    const struct ct_ruleset **l;
    int prev = 0, n = ct_export_by_ranks(src->sets, src->nsets, o, coll, &l);
    for (int i = 0; i < n; i++) {
        const struct ct_ruleset *s = l[i];
        char k[64];
        if (s->nranks > prev + 1) {
            snprintf(k, sizeof k, "comm_size<=%d", s->nranks - 1);
            json_object_set_new(t, k, json_deep_copy(gen));
        }
        snprintf(k, sizeof k, "comm_size<=%d", s->nranks);
        json_object_set_new(t, k,
                            src->ch4        ? ch4_tree(s, gen)
                            : src->measured ? measured_tree(s, gen, map, out, &src->changed)
                                            : ranges_tree(s, o, gen, out, map, &src->changed));
        prev = s->nranks;
    }
    free(l);
    json_object_set_new(t, "comm_size=any", json_deep_copy(gen));
    return t;
}

/* Replace coll's intra subtree in root; MPICH's default stays behind each guard. */
static int tune_coll(json_t *root, struct src *src, const struct ct_export_opts *o,
                     enum ct_coll coll, struct ct_export_out *out, struct ct_text *map,
                     struct ct_err *err)
{
    char ck[64];
    snprintf(ck, sizeof ck, "collective=%s", mpich_coll(coll));
    json_t *cn = json_object_get(root, ck);
    json_t *gen = cn ? json_object_get(cn, "comm_type=intra") : NULL;
    if (!gen)
        return ct_err_set(err, CT_EUNSUPP, "MPICH base tree has no '%s' intra subtree", ck);
    json_incref(gen);
    json_t *sizes = sizes_tree(src, o, coll, gen, out, map), *intra = sizes;
    if (coll == CT_ALLREDUCE || coll == CT_REDUCESCATTER) { /* colltune needs commutative ops */
        intra = json_object();
        json_object_set_new(intra, "is_commutative=no", json_deep_copy(gen));
        json_object_set_new(intra, "is_commutative=yes", sizes);
    } else if (coll == CT_ALLTOALL) { /* MPICH's alltoall algorithms assert not in place */
        intra = json_object();
        json_object_set_new(intra, "is_sendbuf_inplace=yes", json_deep_copy(gen));
        json_object_set_new(intra, "is_sendbuf_inplace=no", sizes);
    }
    json_object_set_new(cn, "comm_type=intra", intra);
    json_decref(gen);
    return 0;
}

int ct_emit_mpich_json(const struct ct_config *c, const struct ct_export_opts *o,
                       struct ct_export_out *out, struct ct_err *err)
{
    static const enum ct_coll colls[] = {CT_ALLREDUCE, CT_ALLGATHER, CT_REDUCESCATTER, CT_ALLTOALL};
    const struct ct_librules *lib = ct_config_lib(c, "mpich");
    /* a measured section targets the MPICH it was measured with, unless told otherwise */
    const char *ver = lib && !o->version ? lib->version : ct_export_version(o, CT_LIB_MPICH);
    const char *path = o->path ? o->path : "FILE";
    if (lib && ct_version_cmp(ver, "4.1") >= 0)
        return ct_err_set(err, CT_EUNSUPP,
                          "MPICH %s: from 4.1 some algorithms take parameters in the tree "
                          "(k=, tree_type=, ...) that the engine does not measure; colltune "
                          "writes measured MPICH 4.0 trees only",
                          ver);
    if (ct_version_cmp(ver, "4.0") < 0)
        return ct_err_set(err, CT_EUNSUPP,
                          "MPICH %s: colltune writes the selection JSON of "
                          "MPICH 4.0 and later",
                          ver);
    json_error_t je;
    json_t *root = json_loads(generic_402, 0, &je);
    if (!root)
        CT_BUG("embedded MPICH tree: %s", je.text);
    if (ct_version_cmp(ver, "4.1") >= 0) { /* dissemination -> k_dissemination, k=2 */
        json_t *b = json_object_get(json_object_get(root, "collective=barrier"), "comm_type=intra");
        json_t *k = json_object();
        json_object_set_new(k, "k=2", json_object());
        json_t *l = json_object();
        json_object_set_new(l, "algorithm=MPIR_Barrier_intra_k_dissemination", k);
        json_object_set_new(b, "comm_hierarchy=any", l);
    }
    int rc = 0;
    struct src src = {.sets = lib ? lib->sets : c->sets,
                      .nsets = lib ? lib->nsets : c->nsets,
                      .measured = lib != NULL};
    bool ar_changed = false; /* an AllReduce range the MPIR tree now decides */
    struct ct_text map;
    ct_text_init(&map);
    for (size_t i = 0; i < sizeof colls / sizeof colls[0] && rc == 0; i++) {
        bool tuned = false;
        for (int k = 0; k < src.nsets; k++)
            tuned |= src.sets[k].coll == colls[i] && ct_export_selected(o, &src.sets[k]);
        int before = src.changed;
        if (tuned)
            rc = tune_coll(root, &src, o, colls[i], out, &map, err);
        ar_changed |= colls[i] == CT_ALLREDUCE && src.changed > before;
    }
    out->unchanged = rc == 0 && !src.changed && !(lib && lib->nenv); /* a setting changes it */
    if (out->unchanged && !lib)
        rc = ct_export_maps_nothing(out, o, CT_LIB_MPICH,
                                    "the file would keep MPICH's default tree at every size", NULL,
                                    err);
    else if (out->unchanged)
        rc = ct_err_set(err, CT_EUNSUPP,
                        "nothing to export: MPICH's own choices measured best, or kept by "
                        "sweep --verify, at every size "
                        "(%s %s); they stay, no file written",
                        lib->name, lib->version);
    json_t *ch4 = NULL;
    if (rc == 0 && lib && ar_changed) { /* the tuned ranges past the device layer */
        ch4 = json_loads(ch4_402, 0, &je);
        if (!ch4)
            CT_BUG("embedded MPICH CH4 tree: %s", je.text);
        src.ch4 = true;
        rc = tune_coll(ch4, &src, o, CT_ALLREDUCE, out, &map, err);
    }
    char *txt = rc ? NULL : json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    char *txt4 = rc || !ch4 ? NULL : json_dumps(ch4, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    json_decref(root);
    json_decref(ch4);
    if (rc) {
        ct_text_release(&map);
        return rc;
    }
    ct_text_put(&out->body, txt);
    ct_text_put(&out->body, "\n");
    free(txt);
    out->side_suffix = ".ch4.json";
    if (txt4) {
        ct_text_put(&out->side, txt4);
        ct_text_put(&out->side, "\n");
        free(txt4);
    }

    if (!lib)
        ct_export_note_mapped(out, CT_LIB_MPICH);
    /* JSON has no comments: the header and the notes go into the env lines */
    ct_export_header(&out->env, "# ", "MPICH collective selection JSON (MPIR level)", c,
                     CT_LIB_MPICH, o);
    if (lib)
        ct_text_printf(&out->env,
                       "# measured with %s %s (colltune sweep --lib mpich); collectives not "
                       "listed keep MPICH's defaults\n",
                       lib->name, lib->version);
    for (int i = 0; lib && i < lib->nsets; i++)
        if (ct_export_selected(o, &lib->sets[i]))
            ct_export_verified(out, &out->env, "# ", lib, &lib->sets[i]);
    struct ct_settings set; /* the loader's variables: the launch settings first */
    ct_settings_init(&set);
    ct_export_lib_env(out, &out->env, "# ", lib, o, &set);
    ct_text_printf(&out->env,
                   "# target MPICH %s; the file replaces MPICH's whole built-in tree "
                   "(a complete copy with\n# the tuned collectives changed); a bad "
                   "file aborts MPI_Init\n",
                   ver);
    ct_text_put(&out->env, ct_text_str(&map));
    ct_text_release(&map);
    for (size_t i = 0; i < out->nnotes; i++)
        ct_text_printf(&out->env, "# %s\n", out->notes[i]);
    ct_text_printf(&out->env, "# load the MPICH selection file %s\n", path);
    ct_settings_add(&set, "MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE", path, NULL);
    if (!lib && ar_changed) /* the other three reach the MPIR tree through CH4's alpha */
        ct_settings_add(&set, "MPIR_CVAR_DEVICE_COLLECTIVES", "none",
                        "CH4 device selection runs first and gives multi-node allreduce to "
                        "sub-communicators; none applies these rules to the whole "
                        "communicator");
    if (out->side.len) {
        char p4[4200];
        snprintf(p4, sizeof p4, "%s%s", path, out->side_suffix);
        ct_settings_add(&set, "MPIR_CVAR_CH4_COLL_SELECTION_TUNING_JSON_FILE", p4,
                        "MPICH's CH4 tree, run first: the tuned AllReduce ranges go to "
                        "composition beta (the MPIR tree above), the others stay as shipped");
    }
    ct_settings_exports(&set, &out->env);
    ct_settings_release(&set);
    return 0;
}
