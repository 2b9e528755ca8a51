#!/bin/sh
# Run Criterion test binaries; print a summary line; fail if any binary failed.
# Usage: scripts/run-tests.sh BUILD_DIR BIN...
build=$1; shift
failed=0; passed=0; names=""
for t in "$@"; do
    name=${t#"$build"/tests/}
    echo "== $name"
    if "$t" --jobs 2 -j2 --short-filename 2>&1; then
        passed=$((passed + 1))
    else
        failed=$((failed + 1)); names="$names $name"
    fi
done
echo "test binaries: $passed passed, $failed failed${names:+ ($names )}"
[ "$failed" -eq 0 ]
