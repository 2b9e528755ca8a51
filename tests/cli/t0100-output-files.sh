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
    usage_error "probe --out $j" -- "$COLLTUNE" probe --json --out "$j"
    usage_error "probe --local 2 --out $j" -- "$COLLTUNE" probe --local 2 --out "$j"
done
ls /proc/colltune-nope* /nonexistent 2>/dev/null && not_ok "nothing left behind" || ok "nothing left behind"

# '-' is standard output for --json alone: for --save-baseline it is a file, checked like any
cd /proc || exit 1
usage_error "validate --save-baseline - where it cannot be written" -- "$COLLTUNE" validate --local 2 --save-baseline -
cd - >/dev/null || exit 1
# a launched rank but the first writes nothing, so it does not check: rank 0 does
COLLTUNE_RANK=1 COLLTUNE_SIZE=2 COLLTUNE_ROOT=127.0.0.1:1 "$COLLTUNE" run --json /nonexistent/x.json --boot-timeout 1 >"$TMP/out" 2>"$TMP/err"
grep -q "json" "$TMP/err" && not_ok "rank 1 leaves --json to rank 0: $(cat "$TMP/err")" || ok "rank 1 leaves --json to rank 0"

# an existing result is not truncated by the check
echo keep >"$TMP/old.json"
expect 0 "run --json over an existing file" -- "$COLLTUNE" run --local 2 -b 8 -e 8 -n 1 -w 0 --json "$TMP/old.json"
grep -q colltune-results "$TMP/old.json" && ok "the run's JSON replaced it" || not_ok "the run's JSON replaced it"
ls "$TMP"/*write-test* 2>/dev/null && not_ok "no probe file left" || ok "no probe file left"
done_testing
