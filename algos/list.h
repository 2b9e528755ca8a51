/* SPDX-License-Identifier: MIT */
/* The algorithm table: one row per algorithm (file algos/<name>.c defines ct_algo_<name>,
 * '-' in the command-line name becomes '_'). Order is the listing order. */
CT_ALGO(ring)
CT_ALGO(mesh)
CT_ALGO(simple_ring)
CT_ALGO(bidir_ring)
CT_ALGO(mesh_1step)
CT_ALGO(symm)
CT_ALGO(oneshot)
CT_ALGO(rdh)
CT_ALGO(kangaring)
CT_ALGO(hier)
CT_ALGO(flat_ring)
CT_ALGO(rail_ring)
CT_ALGO(bruck)
CT_ALGO(torus_ring)
CT_ALGO(torus_rdh)
