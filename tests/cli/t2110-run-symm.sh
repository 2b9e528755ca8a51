#!/bin/sh
# symm, the one-sided algorithm over shared memory: every collective verified on 1-5 ranks
# (oversubscribed past the 2 cores), in and out of place, several types and ops; refused with
# one line where it cannot run (tcp, private buffers, as a hier sub-algorithm).
. "$(dirname "$0")/lib.sh"

for spec in "float32 sum" "float64 max" "int32 prod" "bfloat16 avg"; do
    set -- $spec
    for nr in 1 2 3 5; do
        for coll in allreduce allgather reducescatter alltoall; do
            $COLLTUNE run --local $nr --coll $coll --algo symm -d $1 -o $2 -b 8 -e 2M -f 16 -n 3 -w 1 \
                >"$TMP/out" 2>"$TMP/err"; rc=$?
            rows=$(grep -vc '^#' "$TMP/out")
            wrong=$(awk '!/^#/ { w += $10 + $14 } END { print w + 0 }' "$TMP/out")
            if [ $rc -eq 0 ] && [ "$rows" -eq 5 ] && [ "$wrong" = 0 ] &&
                grep -q "Out of bounds values : 0 OK" "$TMP/out"; then
                ok "--local $nr $coll $1 $2: 5 sizes, in and out of place, #wrong 0"
            else
                not_ok "--local $nr $coll $1 $2: exit $rc, $rows rows, $wrong wrong"
                sed 's/^/#   /' "$TMP/err" | head -4
            fi
        done
    done
done

# refusals: one line each, naming why
expect 2 "tcp has no shared memory" -- $COLLTUNE run --local 2 --transport tcp --algo symm -b 8 -e 8
grep -q "needs shared memory, and transport tcp has none" "$TMP/err" && ok "the tcp refusal says why" ||
    { not_ok "tcp refusal"; sed 's/^/#   /' "$TMP/err"; }
COLLTUNE_SHM_UNREGISTERED=1 $COLLTUNE run --local 2 --algo symm -b 8 -e 8 >"$TMP/out" 2>"$TMP/err"
rc=$?
[ $rc -eq 2 ] && grep -q "needs the buffers in shared memory" "$TMP/err" &&
    ok "private buffers (COLLTUNE_SHM_UNREGISTERED): exit 2, says why" ||
    { not_ok "private buffers: exit $rc"; sed 's/^/#   /' "$TMP/err"; }
usage_error "hier cannot compose symm" -- $COLLTUNE run --local 4 --algo hier --intra symm -b 8 -e 8
done_testing
