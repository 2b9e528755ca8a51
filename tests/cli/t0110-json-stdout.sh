#!/bin/sh
# --json - : the JSON document alone on standard output (the human report on stderr), for
# every command with --json; no file named '-' is created.
. "$(dirname "$0")/lib.sh"
here=$(cd "$(dirname "$0")" && pwd)
cd "$TMP" || exit 1
parses() { python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["schema"]==sys.argv[1], d["schema"]' "$1" <"$TMP/out" 2>/dev/null; }

expect 0 "run --json -" -- "$COLLTUNE" run --local 2 -b 8 -e 64 -n 2 -w 0 --json -
parses colltune-results/1 && ok "run --json -: stdout is one JSON document" || not_ok "run --json -: stdout is one JSON document"
grep -q "Avg bus bandwidth" "$TMP/err" && ok "run --json -: the table on stderr" || not_ok "run --json -: the table on stderr"

expect 0 "validate --json -" -- "$COLLTUNE" validate --local 2 --no-coll --json -
parses colltune-validate/1 && ok "validate --json -: stdout is one JSON document" || not_ok "validate --json -: stdout is one JSON document"
grep -q "^PASS" "$TMP/err" && ok "validate --json -: the report on stderr" || not_ok "validate --json -: the report on stderr"

expect 0 "model --json -" -- "$COLLTUNE" model --node dgx-h100 -b 8 -e 1M --json -
parses colltune-model/1 && ok "model --json -: stdout is one JSON document" || not_ok "model --json -: stdout is one JSON document"
grep -q "predicted crossovers" "$TMP/err" && ok "model --json -: the table on stderr" || not_ok "model --json -: the table on stderr"

[ -e "$TMP/-" ] && not_ok "no file named '-'" || ok "no file named '-'"

# standard output that cannot take the report (a full disk: /dev/full) is a failure: exit 1
# and one line naming the command and why (a large output's said EIO: its errno was lost), also
# where a forked rank writes the table
if [ -w /dev/full ]; then
    C=$here/../fixtures/export/config-ompi-2ranks.json
    for c in "run -b 8 -e 64 -n 2 -w 0" "run --local 2 -b 8 -e 64 -n 2 -w 0" "show $C" "probe" "probe --local 2" "--version" \
        "run --help" "export $C --format json"; do
        $COLLTUNE $c >/dev/full 2>"$TMP/err"; rc=$?
        sub=${c%% *}
        case $sub in -*) sub= ;; esac
        if [ $rc -eq 1 ] && [ "$(wc -l <"$TMP/err")" -eq 1 ] &&
            grep -q "^colltune${sub:+ $sub}: error: .*cannot write output: No space left on device" "$TMP/err"; then
            ok "$c >/dev/full: exit 1, $(cat "$TMP/err")"
        else
            not_ok "$c >/dev/full: exit $rc"; sed 's/^/#   /' "$TMP/err" | head -3
        fi
    done
else
    skip "standard output to /dev/full (no /dev/full here)"
fi
# a reader that leaves (| head) ends a forked job quietly, 141 as a killed producer: its rank 0
# is not killed mid-job (its peer said "peer rank 0 exited", colltune "killed by signal 13")
( $COLLTUNE run --local 2 -e 16M --json "$TMP/head.json" 2>"$TMP/err"; echo "rc=$?" >"$TMP/rc" ) | head -1 >/dev/null
[ "$(cat "$TMP/rc")" = rc=141 ] && [ ! -s "$TMP/err" ] && grep -q '"size": 16777216' "$TMP/head.json" \
    && ok "run --local 2 | head -1: quiet, 141, the job run to its end (its JSON written)" \
    || not_ok "| head: $(cat "$TMP/rc") $(cat "$TMP/err")"
# so do the other forked jobs whose rank 0 writes standard output, whatever path finds the
# write failing (validate said "Input/output error", run --json - "Broken pipe", exit 1)
for c in "validate --local 2" "probe --local 2" "run --local 2 -e 4M --json -"; do
    ( sleep 0.3; $COLLTUNE $c 2>"$TMP/err"; echo "rc=$?" >"$TMP/rc" ) | true
    if [ "$c" = "run --local 2 -e 4M --json -" ]; then grep -v '^[# ]' "$TMP/err" >"$TMP/err2"; mv "$TMP/err2" "$TMP/err"; fi
    [ "$(cat "$TMP/rc")" = rc=141 ] && [ ! -s "$TMP/err" ] && ok "$c | true: quiet, 141" \
        || not_ok "$c | true: $(cat "$TMP/rc") $(cat "$TMP/err")"
done
done_testing
