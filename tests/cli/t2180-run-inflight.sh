#!/bin/sh
# colltune run --inflight K: one allreduce as K concurrent collectives, each on its own tcp
# connections; every result verified exact, odd sizes included.
. "$(dirname "$0")/lib.sh"
for spec in "2 2 1" "3 3 2" "4 2 4"; do
    set -- $spec
    d="--local $1 --transport tcp --inflight $2 --streams $3"
    if $COLLTUNE run $d -b 4 -e 4000004 -f 100 -n 2 -w 1 --json "$TMP/r.json" >"$TMP/out" 2>"$TMP/err" &&
        grep -q "Out of bounds values : 0 OK" "$TMP/out" &&
        python3 -c "
import json,sys
d=json.load(open(sys.argv[1]))
assert len(d['results'])==8 and all(r['wrong']==0 and 'inflight=$2' in r['params'] for r in d['results'])
" "$TMP/r.json"; then
        ok "$d: 4 sizes up to 4000004 B, 0 wrong, params say inflight=$2"
    else
        not_ok "$d"; sed 's/^/#   /' "$TMP/err" "$TMP/out" | tail -6
    fi
done
usage_error "needs tcp" -- $COLLTUNE run --local 2 --inflight 2
usage_error "needs allreduce" -- $COLLTUNE run --local 2 --transport tcp --inflight 2 --coll allgather
usage_error "not with --quant" -- $COLLTUNE run --local 2 --transport tcp --inflight 2 --quant int8
usage_error "range" -- $COLLTUNE run --local 2 --transport tcp --inflight 0
done_testing
