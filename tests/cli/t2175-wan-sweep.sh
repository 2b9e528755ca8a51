#!/bin/sh
# The sweep finds the connections a long link needs, unprompted: two namespaces joined by
# the delay line (20 ms RTT, 1 Gbit/s) with 128 KiB socket buffers, so one tcp stream is
# window-limited to ~6 MB/s. The tuned config must use several connections (streams x
# in flight >= 4) and be at least twice as fast as one stream (--budget 30: it reaches 16-32
# streams in about 22 s here; 60 took 55 s to the same choice). Skipped without root,
# namespaces or /dev/net/tun.
. "$(dirname "$0")/lib.sh"
root=$(cd "$(dirname "$0")/../.." && pwd)
WAN_BIN_SET=$WAN_BIN
. "$root/tests/wan/wan.sh"
WAN="wq$(($$ % 10000))"
wan_cli_ready "$root" "sweep over the delay line"
trap 'wan_down; rm -rf "$TMP"' EXIT
if ! wan_up 10 1gbit 9000 >"$TMP/up" 2>&1; then
    not_ok "delay line up"; sed 's/^/#   /' "$TMP/up" | tail -5
    done_testing
    exit 1
fi
port=$((20000 + $$ % 20000))
args="sweep --transport tcp --sockbuf 64K --coll allreduce --algo ring -b 2M -e 2M --budget 30
 --min-iters 3 -w 1 --timeout 60"
wan_exec b env COLLTUNE_ROOT=$WAN_IP_A:$port COLLTUNE_RANK=1 COLLTUNE_SIZE=2 \
    "$COLLTUNE" $args --out "$TMP/b" >"$TMP/b.log" 2>&1 &
bpid=$!
wan_exec a env COLLTUNE_ROOT=$WAN_IP_A:$port COLLTUNE_RANK=0 COLLTUNE_SIZE=2 \
    "$COLLTUNE" $args --out "$TMP/a" >"$TMP/a.log" 2>&1
rc=$?
wait $bpid
if [ $rc -eq 0 ] && python3 - "$TMP/a/config.json" "$TMP/a/points.csv" >"$TMP/why" 2>&1 <<'EOF'
import csv, json, sys
rule = json.load(open(sys.argv[1]))["rules"][0]["ranges"][0]
p = rule["params"]
conns = p["streams"] * p.get("inflight", 1)
rows = list(csv.DictReader(open(sys.argv[2])))
def med(s, k, defaults):
    m = [float(r["median_us"]) for r in rows if r["streams"] == s and r["inflight"] == k
         and r["median_us"] and (not defaults or (r["chunk"], r["pipeline"]) == ("131072", "4"))]
    return min(m) if m else None
one = med("1", "1", True)  # the survey's point
chosen = med(str(p["streams"]), str(p.get("inflight", 1)), False)
print("chose streams=%d inflight=%d: %.0f us, one stream %.0f us" %
      (p["streams"], p.get("inflight", 1), chosen or 0, one or 0))
assert conns >= 4, "too few connections"
assert one and chosen and one / chosen >= 2, "not twice one stream"
EOF
then
    ok "the sweep chose several connections by itself: $(cat "$TMP/why")"
else
    not_ok "sweep over the delay line (exit $rc)"
    sed 's/^/#   /' "$TMP/why" "$TMP/a.log" "$TMP/b.log" | tail -12
fi
done_testing
