/* SPDX-License-Identifier: MIT */
/* libFuzzer harness for the nccl-xml importer (see tests/fuzz/run.sh). */
#define FUZZ_FORMAT "nccl-xml"
#include "fuzz_parser.h"
