#!/bin/sh
# Run the TAP shell tests in tests/cli/ against a colltune binary; fail if any fails.
# Usage: scripts/run-cli-tests.sh ./colltune [tests/cli/tNNNN-*.sh ...]
bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1"); shift
[ $# -gt 0 ] || set -- tests/cli/t[0-9]*.sh
export COLLTUNE="$bin"
pass=0; fail=0; skip=0; failed=""
for t in "$@"; do
    echo "== $t"
    t0=$(date +%s)
    out=$(sh "$t" 2>&1); rc=$?
    printf '%s\n' "$out"
    echo "# $t: $(($(date +%s) - t0)) s"
    p=$(printf '%s\n' "$out" | grep -c '^ok .*')
    s=$(printf '%s\n' "$out" | grep -c '^ok .*# SKIP')
    f=$(printf '%s\n' "$out" | grep -c '^not ok ')
    pass=$((pass + p - s)); skip=$((skip + s)); fail=$((fail + f))
    if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then fail=$((fail + 1)); echo "not ok - $t exited $rc"; fi
    [ "$f" -gt 0 ] || [ "$rc" -ne 0 ] && failed="$failed $t"
done
echo "cli: $pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
