#!/bin/sh
# colltune sweep --model: the sweep's planner and selection over the model's engine; the
# config, report and exports say "predicted" in every range; bad input gets one line and
# exit 2.
. "$(dirname "$0")/lib.sh"
S="$COLLTUNE sweep"
hdr='"schema":"colltune-model-topology/1","name":"bad"'
printf '{%s,"node":{"ranks":8,"intra":{"alpha_us":1,"gbps":-5}}}\n' "$hdr" >"$TMP/neg.json"
usage_error "unknown preset" -- $S --model dgx-z9 --out "$TMP/o0"
usage_error "negative bandwidth" -- $S --model "$TMP/neg.json" --out "$TMP/o0"
usage_error "--nodes without --model" -- $S --nodes 4 --out "$TMP/o0"
usage_error "--model with --verify" -- $S --model dgx-h100 --verify "$TMP/neg.json"
usage_error "--model with --local" -- $S --model dgx-h100 --local 2 --out "$TMP/o0"
usage_error "--model with --tui" -- $S --model dgx-h100 --tui --out "$TMP/o0"
usage_error "--model with --transport" -- $S --model dgx-h100 --transport tcp --out "$TMP/o0"
usage_error "--model with --torus" -- $S --model trn1 --torus 4x4 --out "$TMP/o0"
usage_error "--model with --rails" -- $S --model dgx-h100 --rails 8 --out "$TMP/o0"
# --streams prices the model's links: not refused as for ranks meeting in shared memory
expect 0 "--model with --streams 4 (a parameter of the model's links)" -- $S --model dgx-h100 --nodes 2 --streams 4 --coll allreduce --out "$TMP/o-streams"
# how ranks would connect or be placed: nothing to price (were ignored); --streams is a parameter
for o in "--sockbuf 1M" "--mem host-ipc" "--no-bind" "--wait spin" "--port-range 30000-30100"; do
    usage_says "--model with $o" "--model prices a topology: ${o%% *} is for commands that start ranks" -- $S --model dgx-h100 $o --out "$TMP/o0"
done
usage_error "an algorithm the shape cannot run" -- $S --model dgx-h100 --algos torus-ring --out "$TMP/o0"

expect 0 "dgx-h100 x 16 nodes (128 ranks), every collective" -- \
    $S --model dgx-h100 --nodes 16 --out "$TMP/m"
if grep -q "PREDICTED by colltune model (128 ranks on 16 x dgx-h100" "$TMP/out" &&
    grep -q "predicted: " "$TMP/out" && ! grep -q "measuring" "$TMP/out"; then
    ok "table says predicted"; else not_ok "table output"; sed 's/^/#   /' "$TMP/out" | head -12; fi
if python3 - "$TMP/m/config.json" "$TMP/m/results.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
assert c["sweep"]["predicted"].startswith("128 ranks on 16 x dgx-h100")
sets = c["rules"]
assert {s["coll"] for s in sets} == {"allreduce", "allgather", "reducescatter", "alltoall"}
for s in sets:
    assert s["nranks"] == 128 and s["nnodes"] == 16 and s["ranks_per_node"] == 8
    for r in s["ranges"]:
        assert r.get("predicted") is True, r
# every point priced: each one's samples are the same predicted time (an empty interval)
pts = json.load(open(sys.argv[2]))["points"]
assert len(pts) > 100
for p in pts:
    t = p["time_us"]
    assert t["lo"] == t["hi"] == t["median"] > 0, p
PY
then ok "config: every range predicted, the model's shape"; else not_ok "config JSON"; fi
expect 0 "export from a predicted config" -- \
    $COLLTUNE export --format ompi-rules "$TMP/m/config.json" -o "$TMP/m/rules"
if grep -q "PREDICTED by colltune model" "$TMP/m/rules" &&
    grep -q "PREDICTED" "$TMP/m/report.html"; then ok "export and report say predicted"; else
    not_ok "export/report label"; fi
expect 0 "csv export marks each rule" -- $COLLTUNE export --format csv "$TMP/m/config.json"
if head -1 "$TMP/out" | grep -q ",predicted,library$" && sed -n 2p "$TMP/out" | grep -q ",yes,colltune$"; then
    ok "csv predicted column"; else not_ok "csv"; fi
done_testing
