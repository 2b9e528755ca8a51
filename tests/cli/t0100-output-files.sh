#!/bin/sh
# Output files (--json, --save-baseline, --out) that cannot be written are refused before
# anything runs: one line, exit 2, nothing measured or priced.
. "$(dirname "$0")/lib.sh"
here=$(cd "$(dirname "$0")" && pwd)
C4="$here/../fixtures/export/config-4ranks.json"

for j in /nonexistent/dir/x.json "$TMP" /proc/colltune-nope.json; do
    usage_error "run --json $j" -- "$COLLTUNE" run --local 2 -b 8 -e 64 --json "$j"
    grep -q "^#  *size\|^ *8 " "$TMP/out" && not_ok "run --json $j: nothing ran" || ok "run --json $j: nothing ran"
    usage_error "validate --json $j" -- "$COLLTUNE" validate --local 2 --json "$j"
    grep -q "PASS\|FAIL" "$TMP/out" && not_ok "validate --json $j: nothing ran" || ok "validate --json $j: nothing ran"
    usage_error "validate --save-baseline $j" -- "$COLLTUNE" validate --local 2 --save-baseline "$j"
    usage_error "model --json $j" -- "$COLLTUNE" model --node dgx-h100 -b 8 -e 64 --json "$j"
    usage_error "model --calibrate --out $j" -- "$COLLTUNE" model --calibrate "$C4" --out "$j"
    usage_error "export --out $j" -- "$COLLTUNE" export "$C4" --format json --out "$j"
done
ls /proc/colltune-nope* /nonexistent 2>/dev/null && not_ok "nothing left behind" || ok "nothing left behind"

# an existing result is not truncated by the check
echo keep >"$TMP/old.json"
expect 0 "run --json over an existing file" -- "$COLLTUNE" run --local 2 -b 8 -e 8 -n 1 -w 0 --json "$TMP/old.json"
grep -q colltune-results "$TMP/old.json" && ok "the run's JSON replaced it" || not_ok "the run's JSON replaced it"
ls "$TMP"/*write-test* 2>/dev/null && not_ok "no probe file left" || ok "no probe file left"
done_testing
