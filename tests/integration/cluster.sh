#!/bin/sh
# SPDX-License-Identifier: MIT
# An emulated cluster on one machine: K "nodes" are network namespaces on one bridge, each
# with a veth pair shaped by tc tbf to a set rate in both directions, and its own host name
# (processes run under `unshare --uts`). Source it for the ct_* functions, or run it:
#   cluster.sh up K RATE [RAILS]  print the cluster's name (CT_NET) after building it
#   cluster.sh down NAME      tear NAME down
#   cluster.sh check          say whether namespaces can be built here (exit 0 = yes)
# Functions (sourced): ct_cluster_check, ct_cluster_up K RATE [RAILS], ct_cluster_down,
#   ct_node_ip K [RAIL], ct_node_exec K CMD..., ct_node_spawn K CMD... (background, $! = CMD),
#   ct_node_shape K RATE [RAIL], ct_node_link K up|down, ct_cluster_head (this host's address),
# RAILS > 1 gives every node that many NICs (eth0, eth1, ...), rail r on its own bridge and
# subnet, each shaped to RATE: a multi-rail cluster.
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

ct__rail_subnet() {
    echo "${CT_SUBNET%.*}.$(((${CT_SUBNET##*.} + $1) % 250))"
}
ct_node_ip() { echo "$(ct__rail_subnet "${2:-0}").$(($1 + 1))"; }
ct__ns() { echo "${CT_NET}n$1"; }
ct__veth() { if [ "${2:-0}" -gt 0 ]; then echo "${CT_NET}v$1r$2"; else echo "${CT_NET}v$1"; fi; }
ct__br() { if [ "${1:-0}" -gt 0 ]; then echo "${CT_NET}br$1"; else echo "${CT_NET}br"; fi; }

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
    k=$1; rate=$2; rails=${3:-1}
    CT_NODES=$k
    r=0
    while [ $r -lt "$rails" ]; do
        ip link add "$(ct__br $r)" type bridge || return 1
        ip link set "$(ct__br $r)" up
        r=$((r + 1))
    done
    i=0
    while [ $i -lt "$k" ]; do
        ns=$(ct__ns $i)
        ip netns add "$ns" || return 1
        ip -n "$ns" link set lo up
        r=0
        while [ $r -lt "$rails" ]; do
            ns=$(ct__ns $i); v=$(ct__veth $i $r)   # (ct__tbf sets ns)
            ip link add "$v" type veth peer name "${v}p" || return 1
            ip link set "${v}p" netns "$ns"
            ip -n "$ns" link set "${v}p" name "eth$r"
            ip link set "$v" master "$(ct__br $r)"
            ip link set "$v" up
            ip -n "$ns" addr add "$(ct_node_ip $i $r)/24" dev "eth$r"
            ip -n "$ns" link set "eth$r" up
            ct__tbf "eth$r" "$ns" "$rate" || return 1   # out of the node
            ct__tbf "$v" "" "$rate" || return 1         # into the node
            r=$((r + 1))
        done
        i=$((i + 1))
    done
}

# Every process inside the cluster's namespaces.
ct_cluster_pids() {
    for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep "^${CT_NET}n"); do
        ip netns pids "$ns" 2>/dev/null
    done
}

# Every step may fail (a veth goes with its peer): under a caller's set -e none may end it.
ct_cluster_down() {
    for p in $(ct_cluster_pids); do kill -9 "$p" 2>/dev/null || :; done
    for ns in $(ip netns list 2>/dev/null | awk '{print $1}' | grep "^${CT_NET}n"); do
        ip netns del "$ns" 2>/dev/null || :
    done
    # host ends of the veths (a namespace whose killed processes are still exiting keeps its
    # pairs alive for a moment), then the bridges
    for l in $(ip -o link show 2>/dev/null | awk -F': ' '{sub(/@.*/, "", $2); print $2}' |
        grep -E "^${CT_NET}(v[0-9]+(r[0-9]+)?p?|br[0-9]*)$"); do
        ip link del "$l" 2>/dev/null || :
    done
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

# Give this host (the root namespace) an address on rail 0's bridge and print it: launchers
# that start their daemons through tests/integration/rsh-agent.sh are reached there.
ct_cluster_head() {
    ip addr add "$(ct_node_ip 253)/24" dev "$(ct__br 0)" && ct_node_ip 253
}

# Change node K's rate on RAIL (default 0), both directions.
ct_node_shape() {
    ct__tbf "eth${3:-0}" "$(ct__ns "$1")" "$2" change &&
        ct__tbf "$(ct__veth "$1" "${3:-0}")" "" "$2" change
}

# Take node K's link down or up (from inside the node).
ct_node_link() {
    ip -n "$(ct__ns "$1")" link set eth0 "$2"
}

if [ "${0##*/}" = cluster.sh ]; then
    case $1 in
    check) ct_cluster_check ;;
    up) CT_NET=${CT_NET:-ct$$}; ct_cluster_up "$2" "$3" "${4:-1}" && echo "$CT_NET" ;;
    down) CT_NET=$2; ct_cluster_down ;;
    *) echo "usage: cluster.sh check | up K RATE [RAILS] | down NAME" >&2; exit 2 ;;
    esac
fi
