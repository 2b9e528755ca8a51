/* SPDX-License-Identifier: MIT */
/* libFuzzer harness for the neuron-ls importer (see tests/fuzz/run.sh). */
#define FUZZ_FORMAT "neuron-ls"
#include "fuzz_parser.h"
