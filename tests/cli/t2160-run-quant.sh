#!/bin/sh
# colltune run --quant over shm (--local N): every format, 2-8 ranks, odd sizes; the
# results are identical on every rank (#divg 0) and equal to the quantized ring's model
# (#wrong 0); the table and the JSON say the result is quantized.
. "$(dirname "$0")/lib.sh"
for q in int8 fp8e4m3 fp8e5m2; do
    for n in 2 3 5 8; do
        d="--local $n --quant $q"
        # 4 B (1 element), 1028 B (257: one partial block), 1 MiB + 12 B (odd blocks)
        good=0
        for sz in 4 1028 1048588; do
            $COLLTUNE run $d -b $sz -e $sz -n 2 -w 1 -c 1 --channels 2 >"$TMP/out" 2>"$TMP/err" &&
                grep -q "Out of bounds values : 0 OK" "$TMP/out" &&
                awk '!/^#/ && NF { if ($10 != 0 || $11 != 0 || $17 != 0 || $18 != 0) bad = 1; rows++ }
                     END { exit !(rows == 1 && !bad) }' "$TMP/out" && good=$((good + 1))
        done
        if [ $good -eq 3 ]; then
            ok "$d: sizes 4, 1028, 1048588: #wrong 0, #divg 0"
        else
            not_ok "$d"; sed 's/^/#   /' "$TMP/err" "$TMP/out" | tail -8
        fi
    done
done
$COLLTUNE run --local 4 --quant int8 -b 64K -e 64K -n 2 -w 0 --json "$TMP/r.json" >"$TMP/out" 2>&1 &&
    grep -q "Quantized: int8" "$TMP/out" && grep -q "ring:int8" "$TMP/out" &&
    python3 -c "
import json,sys
d=json.load(open(sys.argv[1]))
assert d['args']['quant']=='int8'
for r in d['results']:
    assert r['quant']=='int8' and r['diverged']==0 and r['wrong']==0, r
    assert r['max_err']>0 and r['rms_err']>0 and r['rms_err']<=r['max_err'], r
" "$TMP/r.json" && ok "table and JSON name the quantization and carry the error" ||
    { not_ok "quantized JSON"; sed 's/^/#   /' "$TMP/out" | tail -5; }
# the default stays exact
$COLLTUNE run --local 2 -b 64K -e 64K -n 2 -w 0 --json "$TMP/e.json" >"$TMP/out" 2>&1 &&
    ! grep -q "Quantized" "$TMP/out" &&
    python3 -c "
import json,sys
d=json.load(open(sys.argv[1]))
assert d['args']['quant'] is None and all(r['quant'] is None and r['wrong']==0 for r in d['results'])
" "$TMP/e.json" && ok "default run is exact and says so" || not_ok "default run exact"
usage_error "unknown format" -- $COLLTUNE run --local 2 --quant int4
usage_error "not ring" -- $COLLTUNE run --local 2 --quant int8 --algo mesh
usage_error "not float32" -- $COLLTUNE run --local 2 --quant int8 -d float64
usage_error "not sum" -- $COLLTUNE run --local 2 --quant fp8e4m3 -o max
usage_error "not allreduce" -- $COLLTUNE run --local 2 --quant int8 --coll allgather
done_testing
