#!/bin/sh
# SPDX-License-Identifier: MIT
# Two network namespaces joined by the delay line (tests/wan/delayline.c). Source it:
#   wan_up DELAY_MS RATE [MTU] [delayline options...]   build <WAN>a and <WAN>b, 10.77.0.1/.2
#   wan_down                                             kill the line, remove the namespaces
#   wan_exec a|b CMD...                                  run CMD inside one side (host <WAN>a|b)
# WAN (default "wan<pid mod 10000>") names everything; WAN_BIN is where delayline and
# pingpong are (default build/tests/wan).
: "${WAN:=wan$(($$ % 10000))}"
: "${WAN_BIN:=build/tests/wan}"
WAN_IP_A=10.77.0.1
WAN_IP_B=10.77.0.2

wan_up() {
    delay=$1; rate=$2; mtu=${3:-9000}; shift 3 2>/dev/null || shift $#
    ip netns add "${WAN}a" && ip netns add "${WAN}b" || return 1
    ip -n "${WAN}a" link set lo up
    ip -n "${WAN}b" link set lo up
    ${WAN_CHRT-chrt -f 20} "$WAN_BIN/delayline" "${WAN}a" "${WAN}b" --delay-ms "$delay" --rate "$rate" "$@" \
        >"/tmp/${WAN}.out" 2>"/tmp/${WAN}.err" &
    WAN_PID=$!
    i=0
    while ! grep -q ready "/tmp/${WAN}.out" 2>/dev/null; do
        i=$((i + 1)); [ $i -gt 100 ] && { cat "/tmp/${WAN}.err" >&2; return 1; }
        sleep 0.05
    done
    for s in a b; do
        ip=$WAN_IP_A; peer=$WAN_IP_B
        [ $s = b ] && { ip=$WAN_IP_B; peer=$WAN_IP_A; }
        ip -n "${WAN}$s" link set wan0 mtu "$mtu" up || return 1
        ip -n "${WAN}$s" addr add "$ip" peer "$peer" dev wan0 || return 1
        ip -n "${WAN}$s" link set wan0 txqueuelen 10000
    done
}

# For the CLI tests (tests/cli/lib.sh sourced; ROOT: the repository; WHAT: the test): WAN_BIN
# beside $COLLTUNE or under ROOT; where the delay line cannot run here, the test is a SKIP
# saying why and the script ends.
wan_cli_ready() {
    WAN_BIN="${WAN_BIN_SET:-$(dirname "$COLLTUNE")/build/tests/wan}"
    [ -x "$WAN_BIN/delayline" ] || WAN_BIN="$1/build/tests/wan"
    why=""
    if [ "$(id -u)" != 0 ]; then why="needs root"
    elif [ ! -c /dev/net/tun ]; then why="no /dev/net/tun"
    elif [ ! -x "$WAN_BIN/delayline" ]; then why="delayline not built (make wan-tools)"
    fi
    [ -z "$why" ] && return 0
    skip "$2: $why"
    done_testing
    exit 0
}

wan_down() {
    [ -n "$WAN_PID" ] && kill "$WAN_PID" 2>/dev/null && wait "$WAN_PID" 2>/dev/null
    for s in a b; do
        for p in $(ip netns pids "${WAN}$s" 2>/dev/null); do kill -9 "$p" 2>/dev/null; done
        ip netns del "${WAN}$s" 2>/dev/null
    done
    rm -f "/tmp/${WAN}.out" "/tmp/${WAN}.err"
    return 0
}

# Each side is its own host to colltune: its own UTS namespace, host name <WAN><side>.
wan_exec() {
    s=$1; shift
    ip netns exec "${WAN}$s" unshare --uts sh -c 'hostname "$0" && exec "$@"' "${WAN}$s" "$@"
}
