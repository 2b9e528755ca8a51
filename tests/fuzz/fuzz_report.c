/* SPDX-License-Identifier: MIT */
/* libFuzzer harness for the system report importer (lspci -tv, numactl, ibv_devinfo, and the
 * nvidia-smi matrix inside them); see tests/fuzz/run.sh. */
#define FUZZ_FORMAT "report"
#include "fuzz_parser.h"
