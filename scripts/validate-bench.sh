#!/bin/sh
# Trustworthiness of validate's blame: N runs of `colltune validate` on the emulated 4-host
# cluster (network namespaces, every host shaped to 1 Gbit with tc tbf; tests/integration),
# then N runs with host 2 throttled to 250 Mbit. Prints each run's verdict and findings and
# the two rates: uniform runs that PASS, throttled runs that name host 2 and only host 2.
# Needs root (namespaces). Usage: scripts/validate-bench.sh [N] [validate options...]
set -u
n=${1:-10}
[ $# -gt 0 ] && shift
root=$(cd "$(dirname "$0")/.." && pwd)
COLLTUNE=${COLLTUNE:-$root/colltune}
TMP=$(mktemp -d /tmp/colltune-vb.XXXXXX)
. "$root/tests/integration/cluster.sh"
. "$root/tests/integration/jobs.sh"
if ! why=$(ct_cluster_check); then
    echo "validate-bench: cannot build the emulated cluster: $why"
    exit 2
fi
trap 'ct_cluster_down; rm -rf "$TMP"' EXIT
trap 'exit 143' INT TERM HUP PIPE
CT_NODES=4
ct_cluster_up 4 1gbit 1 >"$TMP/up.log" 2>&1 || { cat "$TMP/up.log"; exit 1; }
VOPTS="validate --wait block --link-gbps 1 --p2p-size 8M --iters 2 --no-coll --timeout 20 $*"
pass=0
i=1
while [ "$i" -le "$n" ]; do
    ct_job env 1 "$TMP/job" 120 $VOPTS
    v=$(grep '^PASS\|^FAIL' "$JOB_OUT")
    [ "$JOB_RC" -eq 0 ] && pass=$((pass + 1))
    echo "uniform run $i: exit $JOB_RC, ${JOB_SECS}s: $v"
    grep '^  \[' "$JOB_OUT" | sed 's/^/    /'
    i=$((i + 1))
done
ct_node_shape 2 250mbit
named=0
i=1
while [ "$i" -le "$n" ]; do
    ct_job env 1 "$TMP/job" 120 $VOPTS
    total=$(grep -c '^  \[' "$JOB_OUT")
    host2=$(grep -c "^  \[host\] host ${CT_NET}-node2 " "$JOB_OUT")
    [ "$JOB_RC" -eq 3 ] && [ "$total" -eq 1 ] && [ "$host2" -eq 1 ] && named=$((named + 1))
    echo "throttled run $i: exit $JOB_RC, ${JOB_SECS}s, $total finding(s), host 2 named: $host2"
    grep '^  \[' "$JOB_OUT" | sed 's/^/    /'
    grep '^# .*noise\|repeat' "$JOB_OUT" | head -2 | sed 's/^/    /'
    i=$((i + 1))
done
echo "validate: uniform cluster passed $pass of $n; throttled host named alone $named of $n"
