#!/bin/sh
# colltune top: refuses without a terminal; --once / --json / --replay for scripts; the live
# screen in a real terminal (tmux): NIC rows, a rate on lo while loopback traffic runs,
# help, q and SIGTERM restore the terminal; a veth pair in a network namespace: the rate
# shown is within 10% of the rate the traffic generator measured; run --tui when wired.
. "$(dirname "$0")/lib.sh"
FIXTURE=tests/fixtures/topologies/sysfs-root_2xE5-2680_connectx3-mlx4-FDR56_mic.tar.bz2

# ---- scripts -------------------------------------------------------------------------------

usage_error "top without a terminal" -- $COLLTUNE top </dev/null
grep -q -- "--once --json" "$TMP/err" && ok "the refusal suggests --once --json" ||
    not_ok "the refusal suggests --once --json: $(cat "$TMP/err")"
usage_error "--interval out of range" -- $COLLTUNE top --once --interval 5
usage_error "unknown view" -- $COLLTUNE top --once --view nope
usage_error "unreadable replay" -- $COLLTUNE top --once --replay "$TMP/none.json"
usage_error "missing sysfs root" -- $COLLTUNE top --once --sysfs-root "$TMP/none"
usage_says "--frames beside --once (was ignored)" "--frames N counts a stream's samples; --once prints one" -- $COLLTUNE top --once --frames 3
usage_says "--view beside --json (was ignored)" "--view is the screen's or --once's text, not --json's" -- $COLLTUNE top --once --json --view plot
expect 0 "--view topology --once" -- $COLLTUNE top --once --view topology
grep -q "^CPU: " "$TMP/out" && ! grep -q "the probe did not run" "$TMP/out" && ok "--view topology --once prints the probe's views" \
    || not_ok "--view topology --once: $(head -3 "$TMP/out")"

if $COLLTUNE top --once --interval 100 >"$TMP/once" 2>"$TMP/err" &&
    grep -q "^ NIC  *KIND  *LINK  *TX Gb/s  *RX Gb/s" "$TMP/once" && grep -q "^ lo  *lo  *up" "$TMP/once"; then
    ok "--once prints the NIC table (lo up)"
else
    not_ok "--once"; sed 's/^/#   /' "$TMP/once" "$TMP/err" | head -8
fi

$COLLTUNE top --once --json --interval 100 >"$TMP/once.json" 2>"$TMP/err"
python3 - "$TMP/once.json" <<'EOF' && ok "--once --json: one colltune-snapshot/1 with rates" || not_ok "--once --json"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["schema"] == "colltune-snapshot/1"
lo = [n for n in d["nics"] if n["name"] == "lo"][0]
assert lo["kind"] == "lo" and lo["up"] and lo["tx_gbps"] is not None, lo
assert d["interval_s"] > 0.05
EOF

$COLLTUNE top --json --frames 3 --interval 100 >"$TMP/rec.json" 2>"$TMP/err"
[ "$(wc -l <"$TMP/rec.json")" -eq 3 ] && ok "--json --frames 3: three lines" || not_ok "--json --frames 3"
$COLLTUNE top --replay "$TMP/rec.json" --json >"$TMP/replayed.json" 2>"$TMP/err" &&
    cmp -s "$TMP/rec.json" "$TMP/replayed.json" && ok "--replay --json gives the recording back" ||
    not_ok "--replay --json"

if [ -r "$FIXTURE" ]; then
    # thousands of small files: tmpfs is much faster than a disk-backed /tmp
    FX=$(mktemp -d /dev/shm/colltune-t5000-XXXXXX 2>/dev/null || mktemp -d)
    tar xjf "$FIXTURE" -C "$FX" --wildcards '*/sys/class/*' \
        '*/sys/devices/pci0000:00/*' '*/sys/devices/pci0000:80/*' '*/sys/devices/virtual/*'
    $COLLTUNE top --once --interval 50 --sysfs-root "$FX/32em64t-2n8c+1mic" >"$TMP/fx.txt" 2>&1
    rm -rf "$FX"
    grep -q "^ mlx4_0:1 ib0 *IB *ACTIVE *56G" "$TMP/fx.txt" &&
        ok "--sysfs-root: the captured ConnectX-3 port" || { not_ok "--sysfs-root"; sed 's/^/#   /' "$TMP/fx.txt"; }
else
    skip "--sysfs-root (fixture missing)"
fi

# ---- the live screen in tmux -----------------------------------------------------------------

if ! command -v tmux >/dev/null 2>&1 || ! command -v python3 >/dev/null 2>&1; then
    skip "live screen (no tmux or python3)"
    done_testing
    exit $?
fi
TM="tmux -S $TMP/tmux.sock" # under $TMP: removed with it
trap '$TM kill-server 2>/dev/null; cleanup_ns; rm -rf "$TMP"' EXIT
cleanup_ns() { :; }

# screen S: the pane's text
screen() { $TM capture-pane -p -t "$1" 2>/dev/null; }
# wait_for S PATTERN SECONDS: until the pane shows PATTERN
wait_for() {
    i=0
    while [ $i -lt $(($3 * 10)) ]; do
        screen "$1" | grep -q -- "$2" && return 0
        sleep 0.1; i=$((i + 1))
    done
    return 1
}
# wait_file F SECONDS
wait_file() {
    i=0
    while [ $i -lt $(($2 * 10)) ]; do [ -s "$1" ] && return 0; sleep 0.1; i=$((i + 1)); done
    return 1
}
# field S NIC COLUMN: a column of the NIC's row (1 name, 2 kind, 3 state, 4 rate, 5 TX, 6 RX)
field() { screen "$1" | awk -v n="$2" -v c="$3" '$1 == n { print $c; exit }'; }

# A paced TCP sender: host port mbit seconds -> prints the rate it achieved (Gb/s); a sink.
cat >"$TMP/traffic.py" <<'EOF'
import socket, sys, time
if sys.argv[1] == "sink":
    s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((sys.argv[2], int(sys.argv[3]))); s.listen(1)
    print("ready", flush=True)
    c, _ = s.accept()
    while c.recv(1 << 20):
        pass
    sys.exit(0)
host, port, mbit, secs = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
s = socket.create_connection((host, port))
chunk = b"x" * 65536
tick = 0.005
per_tick = mbit * 1e6 / 8 * tick
sent, t0, debt = 0, time.monotonic(), 0.0
while time.monotonic() - t0 < secs:
    t = time.monotonic() - t0
    want = per_tick * (t // tick + 1)          # absolute schedule: catch up after a late tick
    while sent + len(chunk) <= want:
        s.sendall(chunk); sent += len(chunk)
    time.sleep(max(0.0, tick - (time.monotonic() - t0) % tick))
el = time.monotonic() - t0
s.close()
print("%.6f" % (sent * 8 / el / 1e9), flush=True)
EOF

# The pane runs top between two stty snapshots, then keeps the pane open.
run_in_pane() { # session command...
    s=$1; shift
    cat >"$TMP/$s.sh" <<EOF
stty -g >"$TMP/$s.before"
echo \$\$ >"$TMP/$s.pid"
$*
echo \$? >"$TMP/$s.rc"
stty -g >"$TMP/$s.after"
exec sleep 120
EOF
    $TM new-session -d -s "$s" -x 100 -y 30 "sh $TMP/$s.sh"
}

run_in_pane live "$COLLTUNE top --interval 250"
if wait_for live "colltune top" 10 && wait_for live "^ lo  *lo" 5; then
    ok "the screen shows the NIC rows (lo)"
else
    not_ok "the screen"; screen live | sed 's/^/#   /'
fi
screen live | grep -q "^ eth0 " && ok "the screen shows eth0" || skip "eth0 (no such interface here)"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
python3 "$TMP/traffic.py" sink 127.0.0.1 "$port" >"$TMP/sink.out" 2>&1 &
wait_file "$TMP/sink.out" 5
python3 "$TMP/traffic.py" 127.0.0.1 "$port" 800 2.5 >"$TMP/lo.rate" 2>&1 &
sender=$!
sleep 1.5
tx=$(field live lo 5)
if python3 -c "import sys; sys.exit(0 if float('$tx') > 0.05 else 1)" 2>/dev/null; then
    ok "lo shows a rate while loopback traffic runs ($tx Gb/s)"
else
    not_ok "lo rate under traffic ('$tx')"; screen live | sed 's/^/#   /' | head -12
fi
wait $sender
$TM send-keys -t live h
wait_for live "colltune top help" 3 && screen live | grep -q "q  *quit" &&
    ok "h shows the help from the key table" || { not_ok "help"; screen live | sed 's/^/#   /'; }
$TM send-keys -t live x
$TM send-keys -t live 4
wait_for live "node x" 3 || wait_for live "nodes* x" 3
screen live | grep -q "NIC.*of line rate" && ok "4 switches to the cluster view" || not_ok "cluster view"
$TM send-keys -t live q
if wait_file "$TMP/live.rc" 5 && [ "$(cat "$TMP/live.rc")" = 0 ] && wait_file "$TMP/live.after" 2 &&
    cmp -s "$TMP/live.before" "$TMP/live.after" &&
    [ "$($TM display -p -t live '#{alternate_on}')" = 0 ] && ! screen live | grep -q "colltune top"; then
    ok "q exits 0 and restores the terminal (modes, main screen)"
else
    not_ok "q restores the terminal (rc $(cat "$TMP/live.rc" 2>/dev/null))"
fi

run_in_pane sig "$COLLTUNE top --interval 200"
wait_for sig "colltune top" 10
# the pane shell's child is top
pid=$(pgrep -P "$(cat "$TMP/sig.pid")" -x colltune 2>/dev/null | head -1)
[ -n "$pid" ] || pid=$(pgrep -P "$(cat "$TMP/sig.pid")" | head -1)
kill -TERM "$pid" 2>/dev/null
if wait_file "$TMP/sig.rc" 5 && [ "$(cat "$TMP/sig.rc")" = 143 ] && wait_file "$TMP/sig.after" 2 &&
    cmp -s "$TMP/sig.before" "$TMP/sig.after" && [ "$($TM display -p -t sig '#{alternate_on}')" = 0 ]; then
    ok "SIGTERM: top dies of the signal with the terminal restored"
else
    not_ok "SIGTERM restores the terminal (rc $(cat "$TMP/sig.rc" 2>/dev/null))"
fi

# NO_COLOR and a small terminal still work
$TM new-session -d -s small -x 80 -y 24 "NO_COLOR=1 $COLLTUNE top --interval 200 --frames 50; sleep 30"
wait_for small "q quit" 10 && screen small | grep -q "^ lo " && ok "80x24 under NO_COLOR" ||
    { not_ok "80x24 under NO_COLOR"; screen small | sed 's/^/#   /'; }
$TM send-keys -t small q

# ---- run --tui (once cmd/run.c has it) -------------------------------------------------------

if $COLLTUNE run --help 2>/dev/null | grep -q -- "--tui"; then
    run_in_pane run "$COLLTUNE run --local 2 --tui -b 8 -e 256M -f 2 -n 50 -w 2"
    wait_for run "point [0-9]" 15
    p1=$(screen run | sed -n 's/.*point \([0-9][0-9]*\).*/\1/p' | head -1)
    sleep 2
    p2=$(screen run | sed -n 's/.*point \([0-9][0-9]*\).*/\1/p' | head -1)
    [ -n "$p1" ] && [ -n "$p2" ] && [ "$p2" -gt "$p1" ] && ok "run --tui: the progress advances ($p1 -> $p2)" ||
        { not_ok "run --tui progress ('$p1' -> '$p2')"; screen run | sed 's/^/#   /'; }
    $TM send-keys -t run q
    wait_file "$TMP/run.after" 20 && cmp -s "$TMP/run.before" "$TMP/run.after" &&
        ok "run --tui: q restores the terminal" || not_ok "run --tui: q restores the terminal"
else
    skip "run --tui (not wired into cmd/run.c yet)"
fi

# ---- real traffic through a veth pair in a network namespace ----------------------------------

ns=ctns$$ va=ctva$$ vb=ctvb$$
if [ "$(id -u)" != 0 ] || ! ip netns add "$ns" 2>/dev/null; then
    skip "veth rate (needs root and 'ip netns')"
    done_testing
    exit $?
fi
cleanup_ns() { ip netns del "$ns" 2>/dev/null; ip link del "$va" 2>/dev/null; }
if ip link add "$va" type veth peer name "$vb" && ip link set "$vb" netns "$ns" &&
    ip addr add 10.213.$(($$ % 250)).1/30 dev "$va" && ip link set "$va" mtu 65000 up &&
    ip -n "$ns" addr add 10.213.$(($$ % 250)).2/30 dev "$vb" && ip -n "$ns" link set "$vb" mtu 65000 up; then
    peer=10.213.$(($$ % 250)).2
    ip netns exec "$ns" python3 "$TMP/traffic.py" sink "$peer" 5201 >"$TMP/vsink.out" 2>&1 &
    wait_file "$TMP/vsink.out" 5
    run_in_pane veth "$COLLTUNE top --interval 500"
    wait_for veth "^ $va " 10
    python3 "$TMP/traffic.py" "$peer" 5201 400 4.5 >"$TMP/veth.rate" 2>&1 &
    sender=$!
    sleep 1.6
    seen=""
    for i in 1 2 3 4; do seen="$seen $(field veth "$va" 5)"; sleep 0.55; done
    wait $sender
    gen=$(cat "$TMP/veth.rate")
    if python3 - "$gen" $seen <<'EOF'; then
import statistics, sys
gen = float(sys.argv[1]); shown = [float(x) for x in sys.argv[2:] if x not in ("-", "")]
med = statistics.median(shown)
print("# generator %.4f Gb/s, screen %s" % (gen, shown))
sys.exit(0 if shown and abs(med - gen) <= 0.10 * gen else 1)
EOF
        ok "veth: TX shown within 10% of the generator's rate ($gen Gb/s; screen:$seen)"
    else
        not_ok "veth: TX shown vs generator ($gen Gb/s; screen:$seen)"; screen veth | sed 's/^/#   /' | head -12
    fi
    $TM send-keys -t veth q
else
    not_ok "could not set up the veth pair"
fi
cleanup_ns
done_testing
