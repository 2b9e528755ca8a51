#!/bin/sh
# colltune validate on an emulated multi-rail cluster: 4 namespace nodes with two NICs each
# (eth0 on one bridge and subnet, eth1 on another, every link shaped to 1 Gbit). validate
# drives each rail in turn, so every NIC of every host carries pairs; the NIC counters
# confirm it. Then one node's eth1 is shaped to a quarter rate: exactly that NIC is named.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../integration/setup.sh"
ct_setup_cluster 4 1gbit 2

VOPTS="validate --wait block --min-pct 60 --link-gbps 1 --p2p-size 8M --iters 2 --no-coll --timeout 20"
ct_job env 1 "$TMP/job" 120 $VOPTS --json "$TMP/v.json"
if [ "$JOB_RC" -eq 0 ] && grep -q '^PASS: 4 host(s)' "$JOB_OUT"; then
    ok "4 nodes x 2 rails at 1 Gbit: PASS in ${JOB_SECS}s"
else
    not_ok "4 nodes x 2 rails: exit $JOB_RC"; ct_job_diag 12
fi
grep -q "^# rails, driven one after another (3 rounds each): $(ct_node_ip 0 0 | sed 's/\.[0-9]*$/.0/')/24 $(ct_node_ip 0 1 | sed 's/\.[0-9]*$/.0/')/24" "$JOB_OUT" \
    && ok "two rails, 3 rounds each" || { not_ok "rails line"; grep '^#' "$JOB_OUT" | head -4 | sed 's/^/#   /'; }
# every host's eth0 and eth1 carried pairs, and their counters moved
cov=$(python3 - "$TMP/v.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
seen = {(p["a"], p["nic_a"]) for p in d["pairs"]} | {(p["b"], p["nic_b"]) for p in d["pairs"]}
moved = sum(1 for u in d["hosts"] for n in u.get("nics", []) if n["name"] in ("eth0", "eth1")
            and n.get("tx_bytes", 0) > 8e6 and n.get("rx_bytes", 0) > 8e6)
print(len([s for s in seen if s[1] in ("eth0", "eth1")]), moved, len(d["pairs"]))
PY
)
[ "$cov" = "8 8 12" ] && ok "all 8 NICs carried pairs (counters moved on each; 12 pairs)" \
    || not_ok "NIC coverage: $cov (NICs in pairs, NICs whose counters moved, pairs)"

if ct_node_shape 2 250mbit 1; then
    ct_job env 1 "$TMP/job" 120 $VOPTS
    finds=$(grep '^  \[' "$JOB_OUT")
    if [ "$JOB_RC" -eq 3 ] && [ "$(echo "$finds" | wc -l)" -eq 1 ] &&
        echo "$finds" | grep -q "^  \[nic\] NIC eth1 of host ${CT_NET}-node2 is slow"; then
        ok "node 2 eth1 at 250 Mbit: exit 3, one finding: $finds"
    else
        not_ok "node 2 eth1 at 250 Mbit: exit $JOB_RC"; echo "$finds" | sed 's/^/#   /'
        ct_job_diag 8
    fi
    ct_node_shape 2 1gbit 1
else
    not_ok "reshape node 2 eth1"
fi
done_testing
