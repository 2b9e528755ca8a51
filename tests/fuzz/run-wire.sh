#!/bin/sh
# Fuzz the parsers of bytes that arrive from the network (tcp frame header and handshake,
# bootstrap hello, PMI-1 lines and the root record) with libFuzzer, each for SECONDS
# (default 60), then merge what found new coverage into tests/fuzz/corpus/<target>/, which
# tests/transport/test_boot_replay.c replays on `make test`.
# Usage: tests/fuzz/run-wire.sh [SECONDS [TARGET...]]   TARGET: frame hello boot_hello pmi1
# Needs clang with the libFuzzer runtime (Debian: clang, libclang-rt-14-dev).
set -eu
cd "$(dirname "$0")/../.."
secs=${1:-60}
[ $# -gt 0 ] && shift
targets=${*:-frame hello boot_hello pmi1}
out=${FUZZ_BUILD:-build/fuzz}
mkdir -p "$out"
cflags="-std=c17 -D_GNU_SOURCE -g -O1 -I. -fsanitize=fuzzer,address,undefined"
cflags="$cflags -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
srcs="transport/frame.c transport/boot.c transport/boot_wire.c transport/boot_tcp.c"
srcs="$srcs transport/boot_kvs.c"
srcs="$srcs transport/boot_pmi1.c lib/err.c lib/sock.c"

for t in $targets; do
    echo "== fuzz_$t: building"
    # shellcheck disable=SC2086
    clang $cflags -o "$out/fuzz_$t" "tests/fuzz/fuzz_$t.c" $srcs -lpthread
    mkdir -p "tests/fuzz/corpus/$t" "$out/new_$t"
    echo "== fuzz_$t: ${secs}s"
    ASAN_OPTIONS=detect_leaks=1 "$out/fuzz_$t" -max_total_time="$secs" -max_len=4096 \
        -timeout=10 -print_final_stats=1 -artifact_prefix="$out/" \
        "$out/new_$t" "tests/fuzz/corpus/$t"
    # keep named seeds and regressions (seed-*, crash-*), plus the smallest set of other
    # inputs that covers what the whole corpus covers
    rm -rf "$out/min_$t" && mkdir -p "$out/min_$t"
    "$out/fuzz_$t" -merge=1 "$out/min_$t" "tests/fuzz/corpus/$t" "$out/new_$t" >/dev/null 2>&1
    find "tests/fuzz/corpus/$t" -type f ! -name 'seed-*' ! -name 'crash-*' -delete
    cp "$out/min_$t"/* "tests/fuzz/corpus/$t/" 2>/dev/null || true
    echo "== fuzz_$t: corpus $(ls "tests/fuzz/corpus/$t" | wc -l) files"
done
