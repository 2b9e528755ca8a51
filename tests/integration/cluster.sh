#!/bin/sh
# SPDX-License-Identifier: MIT
# An emulated cluster on one machine: K "nodes" are network namespaces on one bridge, each
# with a veth pair shaped by tc tbf to a set rate in both directions, and its own host name
# (processes run under `unshare --uts`). Source it for the ct_* functions, or run it:
#   cluster.sh up K RATE      print the cluster's name (CT_NET) after building it
#   cluster.sh down NAME      tear NAME down
#   cluster.sh check          say whether namespaces can be built here (exit 0 = yes)
# Functions (sourced): ct_cluster_check, ct_cluster_up K RATE, ct_cluster_down,
#   ct_node_ip K, ct_node_exec K CMD..., ct_node_spawn K CMD... (background, $! = CMD),
#   ct_node_shape K RATE, ct_node_link K up|down,
#   ct_cluster_pids (every process inside the cluster's namespaces).
# Everything is named after CT_NET (default "ct<pid mod 10000>"), so concurrent runs do
# not collide; ct_cluster_down removes only what that name owns, and kills only processes
# inside its namespaces.

ct_cluster_check() {
    if [ "$(id -u)" != 0 ]; then
        echo "needs root (network namespaces, veth, tc)"; return 1
    fi
    for t in ip tc unshare; do
        command -v "$t" >/dev/null 2>&1 || { echo "needs '$t'"; return 1; }
    done
    n="ctchk$$"
    if ! ip netns add "$n" 2>/dev/null; then
        echo "cannot create network namespaces here"
        return 1
    fi
    ok=1
    ip link add "${n}a" type veth peer name "${n}b" 2>/dev/null || ok=0
    if [ $ok = 1 ]; then
        tc qdisc add dev "${n}a" root tbf rate 1gbit burst 256kb latency 50ms 2>/dev/null || ok=2
        ip link del "${n}a" 2>/dev/null
    fi
    ip netns exec "$n" unshare --uts true 2>/dev/null || ok=3
    ip netns del "$n" 2>/dev/null
    case $ok in
    1) return 0 ;;
    0) echo "cannot create veth pairs here"; return 1 ;;
    2) echo "tc tbf is not available"; return 1 ;;
    *) echo "cannot unshare the UTS namespace"; return 1 ;;
    esac
}

: "${CT_NET:=ct$(($$ % 10000))}"
# 10.<a>.<b>.0/24 from the name's number, away from common site ranges
ct__num=$(echo "$CT_NET" | tr -cd 0-9); ct__num=${ct__num:-0}
CT_SUBNET="10.$((100 + ct__num % 100)).$((ct__num / 100 % 250))"

ct_node_ip() { echo "$CT_SUBNET.$(($1 + 1))"; }
ct__ns() { echo "${CT_NET}n$1"; }
ct__veth() { echo "${CT_NET}v$1"; }

# tbf for RATE (tc syntax: 1gbit, 250mbit): burst of about 2 ms, at least 64 KiB
ct__tbf() {
    dev=$1; ns=$2; rate=$3; verb=${4:-add}
    bits=$(echo "$rate" | awk '{r=$1; m=1; if (r ~ /gbit$/) m=1e9; else if (r ~ /mbit$/) m=1e6;
        else if (r ~ /kbit$/) m=1e3; sub(/[a-z]+$/, "", r); print r * m}')
    burst=$(awk -v b="$bits" 'BEGIN { x = int(b / 8 / 500); if (x < 65536) x = 65536; print x }')
    set -- qdisc "$verb" dev "$dev" root tbf rate "$rate" burst "$burst" latency 100ms
    if [ -n "$ns" ]; then ip netns exec "$ns" tc "$@"; else tc "$@"; fi
}

ct_cluster_up() {
    k=$1; rate=$2
    CT_NODES=$k
    br="${CT_NET}br"
    ip link add "$br" type bridge || return 1
    ip link set "$br" up
    i=0
    while [ $i -lt "$k" ]; do
        ns=$(ct__ns $i); v=$(ct__veth $i)
        ip netns add "$ns" || return 1
        ip link add "$v" type veth peer name "${v}p" || return 1
        ip link set "${v}p" netns "$ns"
        ip -n "$ns" link set "${v}p" name eth0
        ip link set "$v" master "$br"
        ip link set "$v" up
        ip -n "$ns" addr add "$(ct_node_ip $i)/24" dev eth0
        ip -n "$ns" link set eth0 up
        ip -n "$ns" link set lo up
        ct__tbf eth0 "$ns" "$rate" || return 1   # out of the node
        ct__tbf "$v" "" "$rate" || return 1      # into the node
        i=$((i + 1))
    done
}

# Every process inside the cluster's namespaces.
ct_cluster_pids() {
    for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep "^${CT_NET}n"); do
        ip netns pids "$ns" 2>/dev/null
    done
}

ct_cluster_down() {
    for p in $(ct_cluster_pids); do kill -9 "$p" 2>/dev/null; done
    for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep "^${CT_NET}n"); do
        ip netns del "$ns" 2>/dev/null
    done
    ip link del "${CT_NET}br" 2>/dev/null
    return 0
}

# Run CMD inside node K with host name "<CT_NET>-node<K>" (own UTS namespace).
ct_node_exec() {
    k=$1; shift
    ip netns exec "$(ct__ns "$k")" unshare --uts sh -c 'hostname "$0" && exec "$@"' \
        "${CT_NET}-node$k" "$@"
}

# The same in the background: $! is CMD's own pid (every step execs the next).
ct_node_spawn() {
    k=$1; shift
    (exec ip netns exec "$(ct__ns "$k")" unshare --uts sh -c 'hostname "$0" && exec "$@"' \
        "${CT_NET}-node$k" "$@") &
}

# Change node K's rate, both directions.
ct_node_shape() {
    ct__tbf eth0 "$(ct__ns "$1")" "$2" change && ct__tbf "$(ct__veth "$1")" "" "$2" change
}

# Take node K's link down or up (from inside the node).
ct_node_link() {
    ip -n "$(ct__ns "$1")" link set eth0 "$2"
}

if [ "${0##*/}" = cluster.sh ]; then
    case $1 in
    check) ct_cluster_check ;;
    up) CT_NET=${CT_NET:-ct$$}; ct_cluster_up "$2" "$3" && echo "$CT_NET" ;;
    down) CT_NET=$2; ct_cluster_down ;;
    *) echo "usage: cluster.sh check | up K RATE | down NAME" >&2; exit 2 ;;
    esac
fi
