#!/bin/sh
# Run Criterion test binaries, two at a time (each runs two tests at a time; one binary's
# single long test leaves a core idle otherwise), and print each one's output in the order
# given, with its seconds; print a summary line; fail if any binary failed (or printed a
# sanitizer's report).
# Skipped tests are listed with their reason and counted (the GPU tests, suite gpu, apart;
# tests left out by a --filter/CRITERION_TEST_PATTERN are not counted).
# Usage: scripts/run-tests.sh BUILD_DIR BIN...   (CT_TEST_LANES: binaries at once, default 2)
[ $# -ge 1 ] || { echo "usage: scripts/run-tests.sh BUILD_DIR BIN..." >&2; exit 2; }
build=$1; shift
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
i=0
for t in "$@"; do
    i=$((i + 1))
    printf '%s %s\n' "$i" "$t"
done >"$dir/list"
# one binary: its output, TAP report, exit code and seconds in $dir/N.*
xargs -P "${CT_TEST_LANES:-2}" -L 1 sh -c '
    t0=$(date +%s)
    "$3" -j2 --short-filename --tap="$1/$2.tap" >"$1/$2.out" 2>&1
    echo $? >"$1/$2.rc"
    echo $(($(date +%s) - t0)) >"$1/$2.secs"' sh "$dir" <"$dir/list"
failed=0; passed=0; names=""; i=0
for t in "$@"; do
    i=$((i + 1))
    name=${t#"$build"/tests/}
    echo "== $name"
    cat "$dir/$i.out" 2>/dev/null
    # a sanitizer's report fails its binary: LeakSanitizer's comes when a test's process ends,
    # after Criterion counted the test as passed (a leak in output/export.c went by that way)
    san=$(grep -c 'ERROR: LeakSanitizer\|ERROR: AddressSanitizer\|runtime error:' "$dir/$i.out" 2>/dev/null)
    [ "${san:-0}" -gt 0 ] && echo "# $name: $san sanitizer report(s) above: failed"
    if [ "$(cat "$dir/$i.rc" 2>/dev/null)" = 0 ] && [ "${san:-0}" -eq 0 ]; then
        passed=$((passed + 1))
    else
        failed=$((failed + 1)); names="$names $name"
    fi
    echo "# $name: $(cat "$dir/$i.secs" 2>/dev/null) s"
    grep '# SKIP' "$dir/$i.tap" 2>/dev/null | grep -v '# SKIP test was skipped$' | sed "s#^ok - #  SKIP $name: #; s#  \# SKIP #: #" | tee -a "$dir/skips"
done
touch "$dir/skips"
nskip=$(wc -l <"$dir/skips"); ngpu=$(grep -c ': gpu::' "$dir/skips")
echo "test binaries: $passed passed, $failed failed${names:+ ($names )}; tests skipped: $nskip ($ngpu of them GPU tests)"
[ "$failed" -eq 0 ]
