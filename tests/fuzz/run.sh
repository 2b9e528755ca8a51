#!/bin/sh
# Fuzz the text importers (NCCL XML, nvidia-smi text, neuron-ls, system report) with
# libFuzzer, each for SECONDS (default 120), then merge what found new coverage into
# tests/fuzz/corpus/<parser>/, which tests/probe/test_fuzz_replay.c replays on `make test`.
# Usage: tests/fuzz/run.sh [SECONDS [PARSER...]]   PARSER: nccl smi neuron report
# Needs clang with the libFuzzer runtime (Debian: clang, libclang-rt-14-dev).
set -eu
cd "$(dirname "$0")/../.."
secs=${1:-120}
[ $# -gt 0 ] && shift
parsers=${*:-nccl smi neuron report}
out=${FUZZ_BUILD:-build/fuzz}
mkdir -p "$out"

have() { pkg-config --exists "$1" 2>/dev/null; }
defs="" libs="-ldl -lm -lpthread"
have hwloc && defs="$defs -DHAVE_HWLOC=1" && libs="$libs $(pkg-config --libs hwloc)"
have jansson && defs="$defs -DHAVE_JANSSON=1" && libs="$libs $(pkg-config --libs jansson)"
have libibverbs && defs="$defs -DHAVE_IBVERBS=1" && libs="$libs $(pkg-config --libs libibverbs)"
cflags="-std=c17 -D_GNU_SOURCE -g -O1 -I. $defs -fsanitize=fuzzer,address,undefined"
cflags="$cflags -fno-sanitize-recover=undefined -fno-omit-frame-pointer"

for p in $parsers; do
    echo "== fuzz_$p: building"
    # shellcheck disable=SC2086
    clang $cflags -o "$out/fuzz_$p" "tests/fuzz/fuzz_$p.c" probe/*.c lib/err.c $libs
    mkdir -p "tests/fuzz/corpus/$p" "$out/new_$p"
    echo "== fuzz_$p: ${secs}s"
    ASAN_OPTIONS=detect_leaks=1 "$out/fuzz_$p" -max_total_time="$secs" -max_len=65536 \
        -timeout=10 -dict="tests/fuzz/$p.dict" -print_final_stats=1 -artifact_prefix="$out/" \
        "$out/new_$p" "tests/fuzz/corpus/$p"
    "$out/fuzz_$p" -merge=1 "tests/fuzz/corpus/$p" "$out/new_$p" 2>&1 | tail -1
    # minimise: keep named seeds and regressions (seed-*, crash-*), plus the smallest set of
    # other inputs that reach every edge the whole corpus reaches
    rm -rf "$out/min_$p" && mkdir -p "$out/min_$p"
    "$out/fuzz_$p" -merge=1 -use_counters=0 "$out/min_$p" "tests/fuzz/corpus/$p" >/dev/null 2>&1
    find "tests/fuzz/corpus/$p" -type f ! -name 'seed-*' ! -name 'crash-*' -delete
    cp "$out/min_$p"/* "tests/fuzz/corpus/$p/"
    echo "== fuzz_$p: corpus $(ls "tests/fuzz/corpus/$p" | wc -l) files"
done
