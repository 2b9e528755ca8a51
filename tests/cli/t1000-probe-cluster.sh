#!/bin/sh
# colltune probe in cluster mode: every rank probes, rank 0 prints each host shape once.
. "$(dirname "$0")/lib.sh"
expect 0 "probe --local 2" -- $COLLTUNE probe --local 2 --view summary
grep -q "host shape 1 of 1: 1 host(s)" "$TMP/out" && ok "one shape for one host" || not_ok "one shape"
grep -q "ranks 0..1" "$TMP/out" && ok "ranks of the host listed" || not_ok "ranks listed"
grep -q "1 host(s), 1 shape(s)" "$TMP/out" && ok "heterogeneity report" || not_ok "heterogeneity report"
expect 0 "probe --local 3 --json" -- $COLLTUNE probe --local 3 --json
python3 -c "import json,sys; d=json.load(sys.stdin); assert d['schema']=='colltune-cluster/1'; h=d['hosts'][0]; assert h['ranks']==3 and h['topology']['schema']=='colltune-topo/1' and h['topology']['ranks']=={'first': 0, 'count': 3}" <"$TMP/out" && ok "cluster JSON: one host, 3 ranks, its topology (which names them too)" || not_ok "cluster JSON"
usage_error "--local with --from" -- $COLLTUNE probe --local 2 --from json /dev/null
usage_error "--local 0" -- $COLLTUNE probe --local 0
done_testing
