#!/bin/sh
# Run Criterion test binaries; print a summary line; fail if any binary failed.
# Skipped tests are listed with their reason and counted (the GPU tests, suite gpu, apart;
# tests left out by a --filter/CRITERION_TEST_PATTERN are not counted).
# Usage: scripts/run-tests.sh BUILD_DIR BIN...
build=$1; shift
failed=0; passed=0; names=""; skips=$(mktemp)
trap 'rm -f "$skips" "$skips.tap"' EXIT
for t in "$@"; do
    name=${t#"$build"/tests/}
    echo "== $name"
    rm -f "$skips.tap"
    t0=$(date +%s)
    if "$t" --jobs 2 -j2 --short-filename --tap="$skips.tap" 2>&1; then
        passed=$((passed + 1))
    else
        failed=$((failed + 1)); names="$names $name"
    fi
    echo "# $name: $(($(date +%s) - t0)) s"
    grep '# SKIP' "$skips.tap" 2>/dev/null | grep -v '# SKIP test was skipped$' | sed "s#^ok - #  SKIP $name: #; s#  \# SKIP #: #" | tee -a "$skips"
done
nskip=$(wc -l <"$skips"); ngpu=$(grep -c ': gpu::' "$skips")
echo "test binaries: $passed passed, $failed failed${names:+ ($names )}; tests skipped: $nskip ($ngpu of them GPU tests)"
[ "$failed" -eq 0 ]
