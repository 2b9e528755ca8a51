/* SPDX-License-Identifier: MIT */
/* libFuzzer harness for the hello parser (see tests/fuzz/fuzz_wire.h, tests/fuzz/run-wire.sh). */
#define FUZZ_WIRE "hello"
#include "tests/fuzz/fuzz_wire.h"
