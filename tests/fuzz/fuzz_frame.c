/* SPDX-License-Identifier: MIT */
/* libFuzzer harness for the frame parser (see tests/fuzz/fuzz_wire.h, tests/fuzz/run-wire.sh). */
#define FUZZ_WIRE "frame"
#include "tests/fuzz/fuzz_wire.h"
