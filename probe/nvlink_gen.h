/* SPDX-License-Identifier: MIT */
/* GENERATED from probe/nvlink_gen.csv by probe/nvlink_gen.awk: edit the CSV, then
 * awk -f probe/nvlink_gen.awk probe/nvlink_gen.csv > probe/nvlink_gen.h */
/* kind, key, fabric, gen, link_gbs, links, nvswitch, source */
{"nv", "18", "switch", "NVLink4", 25, 18, "NVSwitch gen3", "S1 S2 F (H100/H200 SXM: 18 x NVLink4)"},
{"nv", "12", "switch", "NVLink3", 25, 12, "NVSwitch gen2", "S1 S2 F (A100 SXM4: 12 x NVLink3)"},
{"nv", "6", "switch", "NVLink2", 25, 6, "NVSwitch gen1", "S1 S2 F (V100 SXM3 in DGX-2: 6 x NVLink2)"},
{"nv", "12", "mesh", "NVLink3", 25, 12, "none", "S1 (A100 SXM4 4-GPU board: NV4 to each of 3 peers = 12 links)"},
{"model", "GH200", "", "NVLink4", 25, 18, "", "S1 S2"},
{"model", "H100", "", "NVLink4", 25, 18, "", "S1 S2"},
{"model", "H200", "", "NVLink4", 25, 18, "", "S1 S2"},
{"model", "H800", "", "NVLink4", 25, 8, "", "S3"},
{"model", "A100", "", "NVLink3", 25, 12, "", "S1 S2"},
{"model", "A800", "", "NVLink3", 25, 8, "", "S3"},
{"model", "V100", "", "NVLink2", 25, 6, "", "S1 S2"},
{"model", "P100", "", "NVLink1", 20, 4, "", "S1 S2"},
{"model", "B100", "", "NVLink5", 50, 18, "", "S1 S2"},
{"model", "B200", "", "NVLink5", 50, 18, "", "S1 S2"},
{"model", "B300", "", "NVLink5", 50, 18, "", "S1 S2"},
{"sm", "100", "", "NVLink5", 50, 18, "", "S1 (Blackwell; a guess from the compute capability alone)"},
{"sm", "90", "", "NVLink4", 25, 18, "", "S1 (Hopper; a guess from the compute capability alone)"},
{"sm", "80", "", "NVLink3", 25, 12, "", "S1 (Ampere; a guess from the compute capability alone)"},
{"sm", "70", "", "NVLink2", 25, 6, "", "S1 (Volta; a guess from the compute capability alone)"},
{"sm", "60", "", "NVLink1", 20, 4, "", "S1 (Pascal; a guess from the compute capability alone)"},
