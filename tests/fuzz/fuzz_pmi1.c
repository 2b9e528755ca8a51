/* SPDX-License-Identifier: MIT */
/* libFuzzer harness for the pmi1 parser (see tests/fuzz/fuzz_wire.h, tests/fuzz/run-wire.sh). */
#define FUZZ_WIRE "pmi1"
#include "tests/fuzz/fuzz_wire.h"
