/* SPDX-License-Identifier: MIT */
/* libFuzzer harness for the boot_hello parser (see tests/fuzz/fuzz_wire.h, tests/fuzz/run-wire.sh).
 */
#define FUZZ_WIRE "boot_hello"
#include "tests/fuzz/fuzz_wire.h"
