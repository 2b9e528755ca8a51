#!/bin/sh
# colltune model: predictions in the nccl-tests layout and JSON; bad topologies and shapes
# get one clear line and exit 2.
. "$(dirname "$0")/lib.sh"
M="$COLLTUNE model"
hdr='"schema":"colltune-model-topology/1","name":"bad"'
printf '{%s,"node":{"ranks":8,"intra":{"alpha_us":1}}}\n' "$hdr" >"$TMP/missing.json"
printf '{%s,"node":{"ranks":8,"intra":{"alpha_us":1,"gbps":-5}}}\n' "$hdr" >"$TMP/neg.json"
printf '{%s,"node":{"ranks":4,"intra":{"alpha_us":1,"gbps":5}},"net":{"nodes":2}}\n' "$hdr" >"$TMP/nonic.json"
usage_error "missing link rate" -- $M --topology "$TMP/missing.json"
usage_error "negative bandwidth" -- $M --topology "$TMP/neg.json"
usage_error "several nodes without NICs" -- $M --topology "$TMP/nonic.json"
usage_error "rank count the topology cannot host" -- $M --node dgx-h100 --nodes 2 --ranks 12
usage_error "more ranks than the topology has" -- $M --node trn2 --ranks 17
usage_error "unknown preset" -- $M --node dgx-z9
usage_error "bad oversubscription" -- $M --node dgx-h100 --net railfat:1:2
usage_error "bad net spec" -- $M --node dgx-h100 --net dragonfly
usage_error "unknown algorithm" -- $M --node dgx-h100 --algos ring,nosuch
expect 2 "missing topology file (unusable input)" -- $M --topology "$TMP/none.json"
usage_error "calibrate from a non-results file" -- $M --calibrate "$TMP/neg.json"
expect 2 "calibrate from a missing file (unusable input)" -- $M --calibrate "$TMP/none.json"
printf '{%s,"node":{"ranks":4,"cores":-1,"intra":{"alpha_us":1,"gbps":5}}}\n' "$hdr" >"$TMP/negcores.json"
echo '{"schema":"colltune-model/1"}' >"$TMP/pred.json"
usage_says "a model's output given as --topology" \
    "neither a colltune-model-topology/1 file .* nor a colltune-topo/1 one (probe --json)" -- $M --topology "$TMP/pred.json"
# a probed GPU host (8 x H100, NV18 through NVSwitch, a real capture): its NVLinks price the
# intra-node rings, as the dgx-h100 preset's 450 GB/s do (it read 2.45 GB/s busbw at 1 GiB,
# this host's shared memory standing for NVLink)
FX="$(dirname "$0")/../fixtures/topologies"
$COLLTUNE probe --from nccl-xml "$FX/nccl-topo-dump_ibm-cloud-gx3d_8xH100_8xCX7-RoCE.xml" --json --out "$TMP/h100.json"
for t in "--topology $TMP/h100.json" "--node dgx-h100"; do
    $M $t --algo ring -b 1G -e 1G 2>&1 | awk '$1 == 1073741824 { print $8 }'
done >"$TMP/busbw"
awk 'NR == 1 { p = $1 } NR == 2 { d = $1 } END { exit !(NR == 2 && p > 0.95 * d && p < 1.05 * d) }' "$TMP/busbw" \
    && ok "a probed 8 x H100 host prices ring AllReduce at 1 GiB as the preset (algbw): $(tr '\n' ' ' <"$TMP/busbw")GB/s" \
    || not_ok "probed H100 vs the preset: $(tr '\n' ' ' <"$TMP/busbw")"
$M --topology "$TMP/h100.json" --algo ring -b 1G -e 1G 2>&1 | grep -q "of 'h100.json'" \
    && ok "... named by its file (the capture names no host), not this host" || not_ok "the probed host's name"
usage_error "negative core count" -- $M --topology "$TMP/negcores.json"
# time sharing: 4 ranks on 2 cores take twice as long in lockstep (ring) as on 4
for k in 2 4; do
    printf '{%s,"node":{"ranks":4,"cores":%d,"intra":{"alpha_us":1,"gbps":5}}}\n' "$hdr" $k >"$TMP/cores$k.json"
    $M --topology "$TMP/cores$k.json" --algo ring -b 1M -e 1M --json "$TMP/c$k.json" >/dev/null 2>&1
done
if python3 -c "
import json
t = [json.load(open('$TMP/c%d.json' % k))['results'][0]['time_us'] for k in (2, 4)]
assert abs(t[0] / t[1] - 2) < 1e-6, t" 2>/dev/null; then
    ok "4 ranks on 2 cores: ring priced twice as long as on 4"; else not_ok "time sharing"; fi

expect 0 "dgx-h100 x 4 nodes, every algorithm" -- \
    $M --node dgx-h100 --nodes 4 --coll allreduce -b 1K -e 64M -f 8 --json "$TMP/m.json"
if grep -q "predicted crossovers" "$TMP/out" && grep -q " hier " "$TMP/out" &&
    grep -q "nRanks 32 nNodes 4" "$TMP/out"; then ok "table, crossovers, shape"; else
    not_ok "table output"; sed 's/^/#   /' "$TMP/out" | tail -5; fi
if python3 - "$TMP/m.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
r = d["results"]
assert d["label"] == "predicted" and len(r) == 6 * len({x["algo"] for x in r})
for x in r:
    assert set(x) >= {"size", "algo", "time_us", "algbw", "busbw", "ranks", "nodes"}
    assert x["ranks"] == 32 and x["nodes"] == 4 and x["time_us"] > 0
    assert abs(x["algbw"] - x["size"] / x["time_us"] / 1e3) < 1e-6 * x["algbw"] + 1e-12
PY
then ok "JSON results: size, algo, time_us, algbw, busbw, ranks, nodes"; else not_ok "JSON results"; fi

# a schedule too large to price rank by rank is left out with its reason, not run out of memory
expect 0 "16k ranks, rail-ring with empty blocks left out" -- \
    $M --node dgx-h100 --nodes 2048 --algos ring,rail-ring -b 64K -e 64K
if grep -q "^# not priced: rail-ring: at this size its schedule has no symmetry" "$TMP/out" &&
    grep -q " ring " "$TMP/out"; then ok "the reason, and ring priced"; else
    not_ok "rail-ring at 16k ranks"; tail -3 "$TMP/out" | sed 's/^/#   /'; fi

# an oversubscribed spine can only slow a flat ring across 64 nodes down
$M --node dgx-h100 --nodes 64 --algo ring -b 256M -e 256M --json "$TMP/a.json" >/dev/null
$M --node dgx-h100 --nodes 64 --net railfat:4:1 --algo ring -b 256M -e 256M --json "$TMP/b.json" >/dev/null
if python3 -c "
import json,sys
a=json.load(open('$TMP/a.json'))['results'][0]['time_us']; b=json.load(open('$TMP/b.json'))['results'][0]['time_us']
sys.exit(0 if b > a else 1)"; then ok "railfat:4:1 slower than non-blocking"; else not_ok "oversubscription"; fi

# a fit from a (tiny) live run predicts that run back and writes a topology file
expect 0 "live 2-rank run for calibration" -- \
    $COLLTUNE run --local 2 --transport shm -b 64K -e 4M -f 4 -n 5 -w 2 --json "$TMP/run.json"
expect 0 "calibrate" -- $M --calibrate "$TMP/run.json" --out "$TMP/fit.json"
if grep -q "median |error|" "$TMP/out" && grep -q "colltune-model-topology/1" "$TMP/fit.json"; then
    ok "residuals reported, fit stored"; else not_ok "calibrate output"; fi
expect 0 "price with the fitted topology" -- $M --topology "$TMP/fit.json" -b 1M -e 1M
# points at one size cannot tell latency from bandwidth: refused (nine parameters were fitted)
expect 0 "a run at one size" -- $COLLTUNE run --local 2 --transport shm -b 1M -e 1M -n 5 -w 2 --json "$TMP/one.json"
usage_says "calibrate from one size" "points at 1 size(s), 1048576 to 1048576 bytes: a fit needs 3 or more sizes spanning 16x" -- \
    $M --calibrate "$TMP/one.json" --out "$TMP/fit1.json"
[ ! -e "$TMP/fit1.json" ] && ok "... no fit written" || not_ok "a fit of one size written"
# nor small sizes alone (8 B .. 4 KiB fitted a cache of 4e15 MiB): no bandwidth to fit
expect 0 "a run of small sizes" -- $COLLTUNE run --local 2 --transport shm -b 8 -e 4K -n 5 -w 2 --json "$TMP/small.json"
usage_says "calibrate from small sizes" "points at 10 size(s), 8 to 4096 bytes: .* up to 64 KiB or more" -- \
    $M --calibrate "$TMP/small.json" --out "$TMP/fit1.json"
# on a terminal a progress line says what is priced now (a point of thousands of ranks can
# take seconds) and is erased before the table; off a terminal, nothing (the logs stay clean)
if command -v script >/dev/null 2>&1; then
    script -qec "$M --node dgx-h100 --nodes 4 -b 8 -e 64K --algos ring,rdh 2>&1" /dev/null \
        >"$TMP/tty" </dev/null
    tr '\r' '\n' <"$TMP/tty" | grep -aq '^.*pricing allreduce r[a-z]* [0-9]* [KMG]*i*B | [0-9]*/~[0-9]* points' \
        && ok "a terminal shows the progress line" || not_ok "no progress line on a terminal"
    grep -aq '^# priced [0-9]* points' "$TMP/tty" && ok "... and the table after it" \
        || not_ok "no table after the progress line"
else
    skip "no script(1): the terminal's progress line is not checked"
fi
# an algorithm too large to price past a size keeps its rows and its range below it (oneshot's
# 16 KiB mailbox: past -e 16K it was left out whole, "0 B .. inf mesh-1step")
expect 0 "oneshot priced below its mailbox with -e 64K" -- $M --node dgx-h100 -b 8 -e 64K -f 8 --json "$TMP/os.json"
grep -q '^#   0 B  *\.\. 4 KiB  *oneshot' "$TMP/out" && grep -q 'from 32768 B: not priced above' "$TMP/out" &&
    python3 -c "
import json, sys
d = json.load(open(sys.argv[1]))
os = [r['size'] for r in d['results'] if r['algo'] == 'oneshot']
assert os == [8, 64, 512, 4096], os
assert d['ranges'][0]['algo'] == 'oneshot' and d['ranges'][0]['to_bytes'] == 4096, d['ranges'][0]
" "$TMP/os.json" && ok "... its range ends at the last size priced, its rows in the JSON up to there" ||
    not_ok "oneshot past its mailbox: $(grep '^#   ' "$TMP/out" | head -3)"
expect 0 "off a terminal" -- $M --node dgx-h100 --nodes 4 -b 8 -e 64K --algos ring,rdh
grep -q pricing "$TMP/err" "$TMP/out" && not_ok "a progress line off a terminal" \
    || ok "... no progress line"
done_testing
