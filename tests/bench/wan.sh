#!/bin/sh
# SPDX-License-Identifier: MIT
# Wide-area benchmark (needs root, /dev/net/tun, tc): prints the line's own accuracy
#  0. 40 UDP ping-pongs over the delay line at 100 ms RTT: median and p95 against 100 ms
#     (the test t2170 fails only on loss, reordering, early or an offset fastest datagram;
#     lateness is the host's scheduling, measured here),
# then busbw for
#  1. AllReduce 256 MiB between 2 namespaces over the delay line at 100 ms RTT, 1 Gbit/s
#     (tests/wan/delayline.c), tcp with 1..N streams (the stock window vs the BDP);
#  1b. the sweep over the same line, unprompted (ring, 256 MiB; WAN_SWEEP_BUDGET seconds,
#     default 900; WAN_SWEEP=0 skips it): the setting it chose, then that setting re-run;
#  2. exact vs int8-quantized ring AllReduce 64 MiB, 4 namespaces on a 1 Gbit tbf link
#     (tests/integration/cluster.sh).
# Usage: tests/bench/wan.sh [STREAMS[xINFLIGHT]...]   (default 1 4 16 64 4x4 8x4 16x4)
cd "$(dirname "$0")/../.." || exit 1
C=./colltune
[ "$(id -u)" = 0 ] && [ -c /dev/net/tun ] || { echo "wan bench: skipped (needs root and /dev/net/tun)"; exit 0; }
[ -x build/tests/wan/delayline ] || make -s wan-tools || exit 1
. tests/wan/wan.sh
WAN="wb$(($$ % 10000))"
trap 'wan_down' EXIT INT TERM
wan_up 50 1gbit 9000 || exit 1
echo "# 0. the delay line itself: 40 UDP datagrams 10 ms apart, want RTT 100 ms"
wan_exec b "$WAN_BIN/pingpong" echo 7777 &
sleep 0.5
wan_exec a chrt -f 20 "$WAN_BIN/pingpong" ping "$WAN_IP_B" 7777 40 10 100 1 | tail -1
kill $! 2>/dev/null
run2() { # args...: AllReduce on both sides, rank 0 prints
    port=$((20000 + $$ % 20000))
    wan_exec b env COLLTUNE_ROOT=$WAN_IP_A:$port COLLTUNE_RANK=1 COLLTUNE_SIZE=2 \
        $C run --transport tcp "$@" >/dev/null 2>&1 &
    wan_exec a env COLLTUNE_ROOT=$WAN_IP_A:$port COLLTUNE_RANK=0 COLLTUNE_SIZE=2 \
        $C run --transport tcp "$@"
    wait
}
echo "# 1. AllReduce float32 256 MiB, 2 ranks, delay line 100 ms RTT, 1 Gbit/s (line: 0.125 GB/s busbw)"
for sk in ${*:-1 4 16 64 4x4 8x4 16x4}; do
    s=${sk%x*}; k=1
    [ "$s" != "$sk" ] && k=${sk#*x}
    out=$(run2 -b 256M -e 256M -n 3 -w 1 -c 1 --streams "$s" --inflight "$k" --timeout 120 2>&1)
    # busbw from the median time (bus factor 1 for 2 ranks), more digits than the table
    bw=$(echo "$out" | awk '!/^#/ && NF > 10 { printf "%.4f", $1 / $7 / 1e3; exit }')
    win=$(echo "$out" | grep "tcp window")
    echo "streams $s inflight $k: busbw $bw GB/s = $(awk -v b="$bw" 'BEGIN { printf "%.0f", b / 0.125 * 100 }')% of the line  (${win#\# })"
done
if [ "${WAN_SWEEP:-1}" != 0 ]; then
    echo "# 1b. colltune sweep --transport tcp --coll allreduce --algo ring -b 256M -e 256M -w 1 --budget ${WAN_SWEEP_BUDGET:-900}"
    sd=/tmp/ct-wan-sweep.$$
    port=$((20000 + $$ % 20000 + 7))
    sw="sweep --transport tcp --coll allreduce --algo ring -b 256M -e 256M -w 1 --budget ${WAN_SWEEP_BUDGET:-900} --timeout 120"
    wan_exec b env COLLTUNE_ROOT=$WAN_IP_A:$port COLLTUNE_RANK=1 COLLTUNE_SIZE=2 $C $sw --out $sd.b >/dev/null 2>&1 &
    bpid=$!
    wan_exec a env COLLTUNE_ROOT=$WAN_IP_A:$port COLLTUNE_RANK=0 COLLTUNE_SIZE=2 $C $sw --out $sd.a | grep "^sweep:"
    wait $bpid
    # the chosen setting, and every connection setting the sweep measured at default chunk
    set -- $(python3 - "$sd.a" <<'EOF'
import csv, json, sys
d = sys.argv[1]
p = json.load(open(d + "/config.json"))["rules"][0]["ranges"][0]["params"]
for r in csv.DictReader(open(d + "/points.csv")):
    if r["median_us"] and (r["chunk"], r["pipeline"], r["channels"]) == ("131072", "4", "1"):
        print("measured streams %2s inflight %s: %.0f%% of the line (%s samples)" %
              (r["streams"], r["inflight"], 268435456 / float(r["median_us"]) / 1e3 / 0.125 * 100,
               r["samples"]), file=sys.stderr)
print(p["streams"], p.get("inflight", 1), p["chunk"], p["pipeline"], p["channels"])
EOF
)
    echo "chosen: streams $1 inflight $2 (chunk $3, pipeline $4, channels $5)"
    out=$(run2 -b 256M -e 256M -n 3 -w 1 -c 1 --streams "$1" --inflight "$2" --chunk "$3" \
        --pipeline "$4" --channels "$5" --timeout 120 2>&1)
    bw=$(echo "$out" | awk '!/^#/ && NF > 10 { printf "%.4f", $1 / $7 / 1e3; exit }')
    echo "chosen, re-run: busbw $bw GB/s = $(awk -v b="$bw" 'BEGIN { printf "%.0f", b / 0.125 * 100 }')% of the line"
    rm -rf "$sd.a" "$sd.b"
fi
wan_down
trap - EXIT
[ "${WAN_BENCH_QUANT:-1}" = 0 ] && exit 0
echo "# 2. AllReduce float32 64 MiB, 4 namespaces x 1 rank, 1 Gbit tbf: exact vs --quant int8"
sh -c '. tests/integration/cluster.sh; CT_NET=qb$$; trap ct_cluster_down EXIT
ct_cluster_up 4 1gbit || exit 1
port=$((20000 + $$ % 20000))
for q in "" "--quant int8" "--quant fp8e4m3" "--quant fp8e5m2"; do
  i=1; while [ $i -lt 4 ]; do
    ct_node_spawn $i env COLLTUNE_ROOT=$(ct_node_ip 0):$port COLLTUNE_RANK=$i COLLTUNE_SIZE=4 ./colltune run -b 64M -e 64M -n 3 -w 1 $q >/dev/null 2>&1
    i=$((i + 1)); done
  ct_node_exec 0 env COLLTUNE_ROOT=$(ct_node_ip 0):$port COLLTUNE_RANK=0 COLLTUNE_SIZE=4 ./colltune run -b 64M -e 64M -n 3 -w 1 $q | grep -v "^#  Rank\|Using devices\|^#$"
  wait
  port=$((port + 1))
done'
