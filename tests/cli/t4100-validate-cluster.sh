#!/bin/sh
# colltune validate on the emulated cluster (tests/integration): 4 namespace nodes at 1 Gbit
# pass with measured/ceiling near the tbf goodput; one node at a quarter rate fails with
# exit 3 naming exactly that host; then 6 nodes. Skips where namespaces cannot be built.
# Times go to the TAP comments (and $COLLTUNE_FIGURES).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../integration/setup.sh"
ct_setup_cluster 4 1gbit

record() {
    echo "# $*"
    [ -n "$COLLTUNE_FIGURES" ] && echo "$*" >>"$COLLTUNE_FIGURES"
    return 0
}
# --min-pct 60: on a 2-core box four concurrent 1 Gbit pairs share the CPUs (one pair
# sometimes dips to ~70%); the quarter-rate node sits at ~25%, far below either threshold
VOPTS="validate --wait block --min-pct 60 --link-gbps 1 --p2p-size 8M --iters 2 --no-coll --timeout 20"

ct_job env 1 "$TMP/job" 120 $VOPTS
if [ "$JOB_RC" -eq 0 ] && grep -q '^PASS: 4 host(s)' "$JOB_OUT"; then
    ok "4 nodes at 1 Gbit: PASS in ${JOB_SECS}s"
else
    not_ok "4 nodes at 1 Gbit: exit $JOB_RC"; ct_job_diag 12
fi
JOB_SECS4=$JOB_SECS
record "validate 4 emulated hosts (1 Gbit, 8 MiB x 2, 3 rounds): ${JOB_SECS}s; $(grep '^PASS\|^FAIL' "$JOB_OUT")"
grep -E '^[^ #].* (ok|slow) ' "$JOB_OUT" | sed 's/^/# /'

if ct_node_shape 2 250mbit; then
    ct_job env 1 "$TMP/job" 120 $VOPTS
    slow=$(grep -c '^  \[host\] ' "$JOB_OUT")
    named=$(grep '^  \[host\] ' "$JOB_OUT" | head -1)
    if [ "$JOB_RC" -eq 3 ] && [ "$slow" -eq 1 ] && \
        [ "$(grep -c '^  \[' "$JOB_OUT")" -eq 1 ]; then
        ok "node 2 at 250 Mbit: exit 3, one finding: $named"
    else
        not_ok "node 2 at 250 Mbit: exit $JOB_RC, $slow host findings"; grep '^  \[' "$JOB_OUT" | sed 's/^/#   /'
        ct_job_diag 6
    fi
    ct_node_shape 2 1gbit
else
    not_ok "reshape node 2"
fi

# 6 nodes: 5 rounds of 3 concurrent pairs; the time per round stays that of 4 nodes
t4=$JOB_SECS4
ct_cluster_down
if ct_cluster_up 6 1gbit >"$TMP/up6.log" 2>&1; then
    ct_job env 1 "$TMP/job" 150 $VOPTS
    if [ "$JOB_RC" -eq 0 ] && grep -q '^PASS: 6 host(s)' "$JOB_OUT" &&
        grep -q '6 host(s), 5 pair round(s)' "$JOB_OUT"; then
        ok "6 nodes at 1 Gbit: PASS in ${JOB_SECS}s (5 rounds)"
    else
        not_ok "6 nodes at 1 Gbit: exit $JOB_RC"; ct_job_diag 12
    fi
    record "validate 6 emulated hosts (1 Gbit, 8 MiB x 2, 5 rounds): ${JOB_SECS}s; 4 hosts (3 rounds): ${t4}s; $(grep '^PASS\|^FAIL' "$JOB_OUT")"
else
    not_ok "build a cluster of 6 namespaces"; sed 's/^/#   /' "$TMP/up6.log" | head -5
fi
done_testing
