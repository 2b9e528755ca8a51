# TAP helpers for CLI tests. $COLLTUNE is the binary under test.
n=0
fails=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
not_ok() { n=$((n + 1)); fails=$((fails + 1)); echo "not ok $n - $*"; }
skip() { n=$((n + 1)); echo "ok $n - $* # SKIP"; }
done_testing() { echo "1..$n"; [ "$fails" -eq 0 ]; }
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# expect CODE DESC -- command...: exit code must be CODE
expect() {
    code=$1; desc=$2; shift 3
    "$@" >"$TMP/out" 2>"$TMP/err"; rc=$?
    if [ "$rc" -eq "$code" ]; then ok "$desc"; else
        not_ok "$desc (exit $rc, wanted $code)"; sed 's/^/#   /' "$TMP/err" | head -5; fi
}

# usage_error DESC -- command...: exit 2 and exactly one line on stderr naming the error
usage_error() {
    desc=$1; shift 2
    "$@" >"$TMP/out" 2>"$TMP/err"; rc=$?
    lines=$(wc -l <"$TMP/err")
    if [ "$rc" -eq 2 ] && [ "$lines" -eq 1 ] && grep -q "error:" "$TMP/err"; then
        ok "$desc: $(cat "$TMP/err")"
    else
        not_ok "$desc (exit $rc, $lines stderr lines)"; sed 's/^/#   /' "$TMP/err" | head -5
    fi
}
