#!/bin/sh
# colltune model against the emulated cluster: 4 hosts (network namespaces, each shaped to
# 1 Gbit with tc tbf, one rank per host; tests/integration/cluster.sh). A measured sweep
# there, the model calibrated from its results (model --calibrate), then the same sweep
# priced on the fitted topology (sweep --model). Prints the fit's median |error| per
# algorithm at >= 64 KiB and how much of the log-size range the predicted config chooses
# what the measured one does: by the configs (the same choice or a recorded tie;
# scripts/config-agree.py) and by the measured points (the measured winner, or an
# algorithm it does not beat beyond both intervals by the margin; scripts/model-agree.py).
# Needs root. Usage: scripts/model-cluster-bench.sh [BUDGET_S] [sweep options...]
# (the options go to both sweeps, measured and priced)
set -u
budget=${1:-150}
[ $# -gt 0 ] && shift
top=$(cd "$(dirname "$0")/.." && pwd)
COLLTUNE=${COLLTUNE:-$top/colltune}
TMP=$(mktemp -d /tmp/colltune-mcb.XXXXXX)
. "$top/tests/integration/cluster.sh"
. "$top/tests/integration/jobs.sh"
if ! why=$(ct_cluster_check); then
    echo "model-cluster-bench: cannot build the emulated cluster: $why"
    exit 2
fi
trap 'ct_cluster_down; [ -n "${KEEP:-}" ] || rm -rf "$TMP"' EXIT
trap 'exit 143' INT TERM HUP PIPE
CT_NODES=4
ct_cluster_up 4 1gbit 1 >"$TMP/up.log" 2>&1 || { cat "$TMP/up.log"; exit 1; }
SW="--coll allreduce,allgather -b 4K -e 16M -f 2 --streams 1 --inflight 1"
ct_job env 1 "$TMP/job" $((budget + 120)) sweep $SW --budget "$budget" --timeout 60 --out "$TMP/measured" "$@"
if [ "$JOB_RC" -ne 0 ]; then
    echo "model-cluster-bench: the measured sweep failed (exit $JOB_RC)"
    tail -5 "$JOB_OUT"
    exit 1
fi
grep '^sweep:' "$JOB_OUT" | sed 's/^/measured /'
"$COLLTUNE" model --calibrate "$TMP/measured/results.json" --out "$TMP/fit.json" >"$TMP/fit.txt" 2>&1 ||
    { cat "$TMP/fit.txt"; exit 1; }
grep 'median |error|' "$TMP/fit.txt" | sed 's/^/emulated cluster, calibrated: /'
"$COLLTUNE" sweep --model "$TMP/fit.json" $SW --out "$TMP/predicted" "$@" >"$TMP/pred.txt" 2>&1 ||
    { cat "$TMP/pred.txt"; exit 1; }
echo "measured crossovers:"
sed -n '/^allreduce:\|^allgather:/,/^$/p' "$JOB_OUT" | grep '^  [0-9]' | sed 's/^/ /'
echo "predicted crossovers (sweep --model on the fit):"
sed -n '/^allreduce:\|^allgather:/,/^$/p' "$TMP/pred.txt" | grep '^  [0-9]' | sed 's/^/ /'
python3 "$top/scripts/config-agree.py" "$TMP/measured/config.json" "$TMP/predicted/config.json" \
    >"$TMP/agree.txt" || { cat "$TMP/agree.txt"; exit 1; }
sed 's/^/predicted vs measured winner: /' "$TMP/agree.txt"
python3 "$top/scripts/model-agree.py" "$TMP/measured/results.json" "$TMP/predicted/config.json" \
    >"$TMP/agree.txt" || { cat "$TMP/agree.txt"; exit 1; }
sed 's/^/predicted vs measured, ties by the planner'"'"'s rule: /' "$TMP/agree.txt"
