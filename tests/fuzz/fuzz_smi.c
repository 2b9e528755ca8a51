/* SPDX-License-Identifier: MIT */
/* libFuzzer harness for the nvidia-smi importer (see tests/fuzz/run.sh). */
#define FUZZ_FORMAT "nvidia-smi"
#include "fuzz_parser.h"
