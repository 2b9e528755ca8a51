#!/bin/sh
# Authenticated bootstrap and failure handling without a cluster: ranks with different
# COLLTUNE_TOKENs never form a job, a stray connection to the root is rejected and reported
# as a notice, a taken root port and a missing rank fail with clear errors in bounded time,
# --port-range is honoured, and SIGTERM to a --local launcher stops every rank and leaves
# no shared memory.
. "$(dirname "$0")/lib.sh"
port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])'
}
small="-b 8 -e 64K -f 8 -n 2 -w 0"
clean() {
    env -u COLLTUNE_ROOT -u COLLTUNE_RANK -u COLLTUNE_SIZE -u COLLTUNE_TOKEN \
        -u OMPI_COMM_WORLD_RANK -u OMPI_COMM_WORLD_SIZE -u PMI_RANK -u PMI_SIZE -u PMI_FD \
        -u PMIX_RANK -u MASTER_ADDR -u MASTER_PORT "$@"
}
# rank R of SIZE at root port P, with token T (may be empty): `as R SIZE P T args...`
as() {
    r=$1 s=$2 p=$3 t=$4
    shift 4
    clean COLLTUNE_ROOT=127.0.0.1:$p COLLTUNE_RANK=$r COLLTUNE_SIZE=$s ${t:+COLLTUNE_TOKEN=$t} \
        $COLLTUNE run $small "$@"
}
# two ranks with tokens T0 and T1: sets rc0 rc1, outputs in r0 r1
pair() {
    t0=$1 t1=$2 p=$(port)
    shift 2
    as 1 2 "$p" "$t1" "$@" >"$TMP/r1" 2>&1 &
    p1=$!
    as 0 2 "$p" "$t0" "$@" >"$TMP/r0" 2>&1
    rc0=$?
    wait $p1
    rc1=$?
}
diag() { tail -n 3 "$TMP/r0" "$TMP/r1" | sed 's/^/#   /'; }
secret=0123456789abcdef0123456789abcdef

pair $secret $secret
if [ $rc0 -eq 0 ] && [ $rc1 -eq 0 ] && grep -q "nRanks 2" "$TMP/r0"; then
    ok "same COLLTUNE_TOKEN: the job forms"
else
    not_ok "same token ($rc0/$rc1)"; diag
fi

start=$(date +%s)
pair $secret another-secret-of-another-job --boot-timeout 2
took=$(($(date +%s) - start))
notice="notice: bootstrap: rejected a connection from 127.0.0.1:[0-9]* (claims rank 1 on "
if [ $rc0 -ne 0 ] && [ $rc1 -ne 0 ] && [ $took -le 6 ] &&
    grep -q "rejected rank 1: wrong job token" "$TMP/r1" &&
    grep -q "$notice.*): wrong job token" "$TMP/r0" && grep -q "missing rank 1" "$TMP/r0"; then
    ok "different tokens: rank 1 refused, rank 0 reports it and gives up after ${took}s"
else
    not_ok "different tokens ($rc0/$rc1, ${took}s)"; diag
fi

# a stray client at the root port while the job forms: rejected, reported, harmless
p=$(port)
as 0 2 "$p" "" >"$TMP/r0" 2>&1 &
p0=$!
python3 - "$p" <<'PY'
import socket, sys, time
for i in range(100):
    try:
        s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
        break
    except OSError:
        time.sleep(0.05)
s.sendall(b"GET / HTTP/1.0\r\n\r\n" + b"x" * 200)
time.sleep(0.3)
PY
as 1 2 "$p" "" >"$TMP/r1" 2>&1
rc1=$?
wait $p0
rc0=$?
notice="notice: bootstrap: rejected a connection from 127.0.0.1:[0-9]*: bad bootstrap hello"
if [ $rc0 -eq 0 ] && [ $rc1 -eq 0 ] && grep -q "$notice: magic" "$TMP/r0"; then
    ok "a stray connection is rejected and reported; the job runs"
else
    not_ok "stray connection ($rc0/$rc1)"; diag
fi

# the root's port is taken: the holder binds a port of its own choosing and says which (a
# port found free first and bound a moment later was taken in between by another
# connection's ephemeral port, twice in a row on a busy machine)
python3 -c 'import socket, sys, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", 0)); s.listen(1); print(s.getsockname()[1], flush=True); time.sleep(5)' \
    >"$TMP/holder" &
holder=$!
for i in $(seq 50); do [ -s "$TMP/holder" ] && break; sleep 0.1; done
p=$(cat "$TMP/holder")
as 0 2 "$p" "" >"$TMP/r0" 2>&1
rc=$?
kill $holder 2>/dev/null
wait $holder 2>/dev/null
if [ $rc -eq 1 ] && grep -q "cannot listen on port $p .*address already in use" "$TMP/r0"; then
    ok "a taken root port: clear error"
else
    not_ok "taken port (exit $rc)"; diag
fi

# a rank that never comes: both sides give up within the bootstrap timeout, naming it
p=$(port)
start=$(date +%s)
as 1 3 "$p" "" --boot-timeout 2 >"$TMP/r1" 2>&1 &
p1=$!
as 0 3 "$p" "" --boot-timeout 2 >"$TMP/r0" 2>&1
rc0=$?
wait $p1
rc1=$?
took=$(($(date +%s) - start))
want="timed out after 2.0 s waiting for 1 of 3 ranks to connect (missing rank 2)"
if [ $rc0 -eq 1 ] && [ $rc1 -eq 1 ] && [ $took -le 6 ] && grep -q "$want" "$TMP/r0"; then
    ok "a missing rank: both exit after ${took}s, rank 0 names rank 2"
else
    not_ok "missing rank ($rc0/$rc1, ${took}s)"; diag
fi

# --port-range: the tcp transport listens only there
lo=$(($(port) / 16 * 16))
[ $lo -gt 65000 ] && lo=40000
range=$lo-$((lo + 15))
expect 0 "--port-range $range" -- $COLLTUNE run --local 2 --transport tcp --port-range $range $small

usage_error "bad --port-range" -- $COLLTUNE run --local 2 --port-range 9-5 $small
usage_error "bad --boot-timeout" -- $COLLTUNE run --local 2 --boot-timeout 0 $small
usage_error "bad --ifname" -- $COLLTUNE run --local 2 --ifname "" $small
expect 2 "a missing --ifname interface fails the transport (a request this host cannot meet)" -- \
    $COLLTUNE run --local 2 --transport tcp --ifname ct-none0 $small
grep -q "no interface 'ct-none0' on this host" "$TMP/err" && ok "... naming the interface" ||
    not_ok "ifname error: $(tail -1 "$TMP/err")"
# every rank of the host fails alike: its first says so, on one whole line (it was one line
# per rank)
bad=$(grep -vc "^colltune run: error: rank 0 ([^)]*): transport tcp: no interface 'ct-none0' on this host$" "$TMP/err")
[ "$bad" -eq 0 ] && [ "$(wc -l <"$TMP/err")" -eq 1 ] && ok "... one whole line, once" \
    || not_ok "ifname error lines: $(cat "$TMP/err")"
# a sweep failing so leaves no empty --out folder behind
expect 2 "a sweep whose transport cannot open" -- $COLLTUNE sweep --local 2 --transport tcp \
    --ifname ct-none0 --coll allreduce --budget 2 --out "$TMP/failed-sweep"
[ ! -e "$TMP/failed-sweep" ] && [ "$(wc -l <"$TMP/err")" -eq 1 ] \
    && ok "... one line, and the --out folder it made is gone" \
    || not_ok "failed sweep: $(ls -d "$TMP/failed-sweep" 2>&1), $(cat "$TMP/err")"
expect 0 "--ifname lo" -- $COLLTUNE run --local 2 --transport tcp --ifname lo $small

# SIGTERM to the --local launcher: ranks stop, exit 143, shared memory removed
before=$(ls /dev/shm | grep -c '^ct-')
$COLLTUNE run --local 3 --transport shm -b 16M -e 16M -n 100000 -w 0 -c 0 \
    >"$TMP/out" 2>"$TMP/err" &
pid=$!
i=0
while [ "$(pgrep -P $pid | wc -l)" -lt 3 ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
kids=$(pgrep -P $pid)
sleep 1
kill -TERM $pid
wait $pid
rc=$?
sleep 0.2
alive=0
for k in $kids; do kill -0 "$k" 2>/dev/null && alive=$((alive + 1)); done
after=$(ls /dev/shm | grep -c '^ct-')
if [ $rc -eq 143 ] && [ $alive -eq 0 ] && [ "$after" -le "$before" ] &&
    grep -q "interrupted by signal 15" "$TMP/err"; then
    ok "SIGTERM: exit 143, no rank left, no shared memory left"
else
    not_ok "SIGTERM: exit $rc, $alive ranks alive, shm $before -> $after"
fi
done_testing
