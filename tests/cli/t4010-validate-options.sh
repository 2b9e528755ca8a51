#!/bin/sh
# validate refuses the shared collective options it has no use for (one line, exit 2,
# nothing runs) and says which it honours; its help lists only what it uses.
. "$(dirname "$0")/lib.sh"
for o in "--coll allgather" "--coll allreduce" "--algo mesh" "--algo=bruck" "--algo torus-ring" \
    "--torus 9x9" "--rails 3" "--intra ring" "--inter rdh"; do
    # shellcheck disable=SC2086
    usage_error "validate $o" -- "$COLLTUNE" validate --local 2 --no-coll $o
    grep -q "is not used" "$TMP/err" && ok "validate $o: says it is not used" || not_ok "validate $o: says it is not used"
    grep -q "PASS\|FAIL" "$TMP/out" && not_ok "validate $o: nothing ran" || ok "validate $o: nothing ran"
done
expect 0 "validate --chunk 64K --threads 2 (honoured)" -- "$COLLTUNE" validate --local 2 --chunk 64K --threads 2
expect 0 "validate -h" -- "$COLLTUNE" validate -h
for o in "--coll C" "--algo A" "--torus RxC" "--rails N" "--intra A"; do
    grep -q -- "^  $o" "$TMP/out" && not_ok "validate -h does not offer $o" || ok "validate -h does not offer $o"
done
done_testing
