#!/bin/sh
# model refuses the options that start, place or connect ranks, and
# names every algorithm it was asked for that it cannot price, with the reason.
. "$(dirname "$0")/lib.sh"
M="$COLLTUNE model --node dgx-h100 -b 8 -e 8"
for o in "--torus 2x4 --algo torus-ring" "--local 2" "--transport tcp" "--rails 2" "--streams 4" \
    "--sockbuf 1M" "--lib nccl" "--no-bind" "--mem cuda" "--wait spin"; do
    # shellcheck disable=SC2086
    usage_error "model $o" -- $M $o
    grep -q "predicted" "$TMP/out" && not_ok "model $o: nothing priced" || ok "model $o: nothing priced"
done
# --out is where --calibrate writes: alone it wrote nothing, exit 0
usage_says "model --out without --calibrate" "--out is where --calibrate writes" -- $M --out "$TMP/m.json"
# AllGather reduces nothing: its redop "none", as run prints it (the model said "sum")
expect 0 "model --coll allgather" -- $M -b 64 -e 64 --coll allgather --algo ring
grep -q "^ *64 *2 *float32 *none *-1 *ring " "$TMP/out" && ok "... its redop none" || not_ok "allgather's redop: $(grep -v '^#' "$TMP/out")"
# sizes as run takes them: -b 7 was priced as 4 B without a word
usage_says "model -b 7" "sizes must be multiples of the float32 size (4 bytes)" -- $M -b 7 -e 64
expect 0 "model -f 1.01: each size once" -- $M -b 8 -e 32 -f 1.01 --algo ring
[ "$(grep -v '^#' "$TMP/out" | awk 'NF { print $1 }' | tr '\n' ' ')" = "8 12 16 20 24 28 " ] \
    && ok "... 8, 12, ..., 28, as run steps them" || not_ok "model -f 1.01: $(grep -v '^#' "$TMP/out" | awk 'NF { print $1 }' | tr '\n' ' ')"
[ ! -e "$TMP/m.json" ] && ok "... nothing written" || not_ok "model --out wrote $TMP/m.json"
usage_error "torus-ring on a node without a torus" -- $M --algo torus-ring
grep -q "needs a torus shape (--torus" "$TMP/err" && not_ok "no advice to use --torus" || ok "no advice to use --torus"
grep -q "has no torus (node.torus" "$TMP/err" && ok "says where a torus comes from" || not_ok "says where a torus comes from: $(cat "$TMP/err")"
usage_error "bruck for allreduce" -- $M --algo bruck --coll allreduce
grep -q "()" "$TMP/err" && not_ok "no empty parentheses" || ok "no empty parentheses"
grep -q "bruck: no allreduce schedule" "$TMP/err" && ok "names bruck and why" || not_ok "names bruck and why: $(cat "$TMP/err")"
expect 0 "torus-ring on trn2 (its torus)" -- $COLLTUNE model --node trn2 --algo torus-ring -b 8 -e 64
expect 0 "executor parameters are priced" -- $M --chunk 64K --pipeline 2
for a in "" "," "ring,,mesh" "ring,"; do
    usage_says "model --algos '$a'" "bad --algos .*(an empty entry)" -- $M --algos "$a"
done
# given at their default values, as the help says, they are taken
for o in "--streams 1" "--mem host" "--wait auto" "--transport auto"; do
    # shellcheck disable=SC2086
    expect 0 "model $o (the default)" -- $M $o
done
# every algorithm too large from the first size: nothing to price (its rows released)
usage_says "--algos oneshot -b 1M" "no algorithm supports allreduce on 8 ranks of 'dgx-h100' (oneshot publishes the input, 1048576 bytes here, into a mailbox of 16384 (from 1048576 B: not priced above))" -- $COLLTUNE model --node dgx-h100 --algos oneshot -b 1M -e 2M
# an algorithm named twice is priced once, as sweep's --algos (each row printed twice)
expect 0 "--algos ring,ring,mesh" -- $M --algos ring,ring,mesh
[ "$(grep -c ' ring  ' "$TMP/out")" = 1 ] && [ "$(grep -c ' mesh  ' "$TMP/out")" = 1 ] &&
    ok "... one ring row, one mesh row" || not_ok "--algos twice: $(grep -c ' ring  ' "$TMP/out") ring rows"
done_testing
