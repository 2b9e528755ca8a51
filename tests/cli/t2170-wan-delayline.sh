#!/bin/sh
# The WAN delay line (tests/wan/delayline.c) between two network namespaces: a UDP
# ping-pong comes back complete, in order, never early, the fastest datagram at twice the
# configured one-way delay within 1 ms. Late datagrams are reported, not failed: on a loaded
# VM the host wakes the line and the endpoints late (CI once saw 25 of 40 late by up to
# 16 ms), which a test cannot tell from the line; make bench prints the spread (wan.sh, 0.).
# Skipped without root, namespaces or /dev/net/tun.
. "$(dirname "$0")/lib.sh"
root=$(cd "$(dirname "$0")/../.." && pwd)
WAN_BIN_SET=$WAN_BIN
. "$root/tests/wan/wan.sh"
WAN="wl$(($$ % 10000))"
wan_cli_ready "$root" "delay line"
trap 'wan_down; rm -rf "$TMP"' EXIT
for spec in "25 1gbit" "5 100mbit" "50 1gbit"; do
    set -- $spec
    if ! wan_up "$1" "$2" 9000 >"$TMP/up" 2>&1; then
        not_ok "delay line up ($spec)"; sed 's/^/#   /' "$TMP/up" "/tmp/${WAN}.err" | tail -5
        wan_down; continue
    fi
    wan_exec b chrt -f 20 "$WAN_BIN/pingpong" echo 7777 &
    sleep 0.5
    rtt=$(($1 * 2))
    if wan_exec a chrt -f 20 "$WAN_BIN/pingpong" ping "$WAN_IP_B" 7777 40 10 "$rtt" 1 >"$TMP/pp" 2>&1; then
        ok "one-way $1 ms at $2: 40 datagrams back in order, none early, fastest RTT $rtt +- 1 ms ($(tail -1 "$TMP/pp" | sed 's/.*misordered or early, //'))"
    else
        not_ok "one-way $1 ms at $2"; sed 's/^/#   /' "$TMP/pp" | tail -8
    fi
    wan_down
done
# loss and reordering are settable: with --loss 1 nothing comes back
if wan_up 5 1gbit 9000 --loss 1 >"$TMP/up" 2>&1; then
    wan_exec b chrt -f 20 "$WAN_BIN/pingpong" echo 7777 &
    sleep 0.5
    if ! wan_exec a "$WAN_BIN/pingpong" ping "$WAN_IP_B" 7777 5 10 10 1 >"$TMP/pp" 2>&1 &&
        grep -q "5 sent, 0 back" "$TMP/pp"; then
        ok "--loss 1 drops every packet"
    else
        not_ok "--loss 1"; sed 's/^/#   /' "$TMP/pp" | tail -3
    fi
    wan_down
else
    not_ok "delay line up with --loss"
fi
# --reorder 0.5 --reorder-ms 5: some datagrams overtake others (the ping flags them)
if wan_up 5 1gbit 9000 --reorder 0.5 --reorder-ms 5 >"$TMP/up" 2>&1; then
    wan_exec b chrt -f 20 "$WAN_BIN/pingpong" echo 7777 &
    sleep 0.5
    wan_exec a "$WAN_BIN/pingpong" ping "$WAN_IP_B" 7777 40 1 10 20 >"$TMP/pp" 2>&1
    if grep -q "40 sent, 40 back" "$TMP/pp" && grep -q "out of order" "$TMP/pp"; then
        ok "--reorder: all back, some out of order"
    else
        not_ok "--reorder"; sed 's/^/#   /' "$TMP/pp" | tail -3
    fi
    wan_down
else
    not_ok "delay line up with --reorder"
fi
done_testing
