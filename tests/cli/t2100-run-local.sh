#!/bin/sh
# colltune run --local N over shm and tcp: every collective, verified, zero wrong.
. "$(dirname "$0")/lib.sh"
for tp in shm tcp; do
    for n in 2 4; do
        for coll in allreduce allgather reducescatter alltoall; do
            for algo in ring mesh; do
                d="--local $n --transport $tp --coll $coll --algo $algo"
                if $COLLTUNE run $d -b 8 -e 1M -f 8 -n 3 -w 1 -c 1 >"$TMP/out" 2>"$TMP/err" &&
                    grep -q "Out of bounds values : 0 OK" "$TMP/out"; then
                    ok "$d"
                else
                    not_ok "$d"; sed 's/^/#   /' "$TMP/err" "$TMP/out" | tail -8
                fi
            done
        done
    done
done
# odd sizes and datatypes through the whole stack
$COLLTUNE run --local 3 -b 12 -e 12 -d int8 -o max -n 2 -w 0 >"$TMP/out" 2>&1 && ok "3 ranks int8 max" || not_ok "3 ranks int8 max"
$COLLTUNE run --local 2 -b 6 -e 6 -d bfloat16 -o avg -n 2 -w 0 >"$TMP/out" 2>&1 && ok "bfloat16 avg" || not_ok "bfloat16 avg"
# JSON output is valid and has the schema
$COLLTUNE run --local 2 -b 8 -e 64 -n 2 -w 0 --json "$TMP/r.json" >/dev/null 2>&1 &&
    python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert d['schema']=='colltune-results/1'; assert all(r['wrong']==0 for r in d['results']); assert len(d['layout']['ranks'])==2" "$TMP/r.json" \
    && ok "results JSON" || not_ok "results JSON"
# -a (nccl-tests' --average): whose time a sample is, said in the header and in the JSON
for a in 0 1 2; do
    if $COLLTUNE run --local 2 -b 8 -e 1K -f 4 -n 20 -w 2 -a $a --json "$TMP/a.json" >"$TMP/out" 2>&1 &&
        grep -q "^# time: the median over iterations of .* time (-a)" "$TMP/out" &&
        python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert d['args']['rank_time']==sys.argv[2]" \
            "$TMP/a.json" "$(sed -n 's/^# time: the median over iterations of \(.*\) time (-a)$/\1/p' "$TMP/out")"; then
        ok "run -a $a"
    else
        not_ok "run -a $a"; tail -5 "$TMP/out" | sed 's/^/#   /'
    fi
done
$COLLTUNE run --local 2 -b 8 -e 8 -n 2 -w 0 -a 3 --json "$TMP/a.json" >"$TMP/out" 2>&1 &&
    ! grep -q "^# time:" "$TMP/out" &&
    python3 -c "import json,sys; assert 'rank_time' not in json.load(open(sys.argv[1]))['args']" "$TMP/a.json" \
    && ok "run -a 3 is the default: the slowest rank" || not_ok "run -a 3 is the default"
# --batch N|auto: calls back to back per timed iteration, said in the header and the JSON,
# every result still checked
for b in 8 auto; do
    want=$([ $b = auto ] && echo '"auto"' || echo $b)
    if $COLLTUNE run --local 2 -b 8 -e 64K -f 16 -n 5 -c 2 --batch $b --json "$TMP/b.json" >"$TMP/out" 2>&1 &&
        grep -q "^# time: per call, an iteration .*back to back" "$TMP/out" &&
        grep -q "Out of bounds values : 0 OK" "$TMP/out" &&
        python3 -c "import json,sys; d=json.load(open(sys.argv[1])); b=json.loads(sys.argv[2]); r=d['results']; assert d['args']['batch']==b and all(x['wrong']==0 for x in r)
assert all(x['batch']==8 for x in r) if b==8 else any('batch' in x for x in r) and all(1 < x.get('batch', 2) <= 64 for x in r), r" \
            "$TMP/b.json" "$want"; then
        ok "run --batch $b"
    else
        not_ok "run --batch $b"; tail -5 "$TMP/out" | sed 's/^/#   /'
    fi
done
python3 -c "import json,sys; assert 'batch' not in json.load(open(sys.argv[1]))['args']" "$TMP/a.json" \
    && ok "run: one call per iteration by default (no batch in the JSON)" || not_ok "run: batch in the default's JSON"
# launcher environment: two separately started processes rendezvous at COLLTUNE_ROOT
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
for tp in shm tcp; do
    COLLTUNE_ROOT=127.0.0.1:$port COLLTUNE_RANK=1 COLLTUNE_SIZE=2 $COLLTUNE run --transport $tp -b 8 -e 64K -f 8 -n 2 -w 0 >"$TMP/r1" 2>&1 &
    p1=$!
    COLLTUNE_ROOT=127.0.0.1:$port COLLTUNE_RANK=0 COLLTUNE_SIZE=2 $COLLTUNE run --transport $tp -b 8 -e 64K -f 8 -n 2 -w 0 >"$TMP/r0" 2>&1
    rc0=$?
    wait $p1; rc1=$?
    if [ $rc0 -eq 0 ] && [ $rc1 -eq 0 ] && grep -q "nRanks 2" "$TMP/r0" && grep -q "Out of bounds values : 0 OK" "$TMP/r0" && [ ! -s "$TMP/r1" ]; then
        ok "env bootstrap (COLLTUNE_ROOT/RANK/SIZE) over $tp"
    else
        not_ok "env bootstrap over $tp ($rc0/$rc1)"; sed 's/^/#   /' "$TMP/r0" "$TMP/r1" | tail -6
    fi
done
OMPI_COMM_WORLD_RANK=0 OMPI_COMM_WORLD_SIZE=2 $COLLTUNE run --print-bootstrap >"$TMP/out" 2>&1
grep -q "OMPI_COMM_WORLD_RANK" "$TMP/out" && ok "--print-bootstrap names the variables" || not_ok "--print-bootstrap"
# -b 0: size 0, then the smallest size with data (one element per rank's block), then x2
sizes_of() { grep -v '^#' "$TMP/out" | awk '{ printf "%s ", $1 }'; }
$COLLTUNE run --local 2 -b 0 -e 64 -n 2 -w 1 >"$TMP/out" 2>"$TMP/err"; rc=$?
[ $rc -eq 0 ] && [ "$(sizes_of)" = "0 4 8 16 32 64 " ] && ok "-b 0: 0 4 8 .. 64" ||
    { not_ok "-b 0: exit $rc, sizes $(sizes_of)"; sed 's/^/#   /' "$TMP/err"; }
$COLLTUNE run --local 2 --coll allgather -b 0 -e 64 -n 2 -w 1 >"$TMP/out" 2>"$TMP/err"; rc=$?
[ $rc -eq 0 ] && [ "$(sizes_of)" = "0 8 16 32 64 " ] && ok "-b 0 allgather on 2 ranks: 0 8 .. 64" ||
    { not_ok "-b 0 allgather: exit $rc, sizes $(sizes_of)"; sed 's/^/#   /' "$TMP/err"; }
$COLLTUNE run --local 2 -b 0 -e 0 -n 2 -w 1 >"$TMP/out" 2>"$TMP/err"; rc=$?
[ $rc -eq 0 ] && [ "$(sizes_of)" = "0 " ] && ok "-b 0 -e 0: size 0 once" ||
    { not_ok "-b 0 -e 0: exit $rc, sizes $(sizes_of)"; sed 's/^/#   /' "$TMP/err"; }
# --json to a FIFO (and a device, as /dev/null) is written through, never replaced: a rename
# over /dev/null, as root, put a regular file there; through a link, the file it names
mkfifo "$TMP/jf"
cat "$TMP/jf" >"$TMP/jf.got" &
reader=$!
$COLLTUNE run --local 2 -b 8 -e 8 -n 2 -w 0 --json "$TMP/jf" >/dev/null 2>"$TMP/err"; rc=$?
wait $reader
[ $rc -eq 0 ] && [ -p "$TMP/jf" ] && python3 -c "import json,sys; json.load(open(sys.argv[1]))" "$TMP/jf.got" \
    && ok "--json to a FIFO: written through, the FIFO kept" \
    || { not_ok "--json to a FIFO: exit $rc, $(ls -l "$TMP/jf")"; sed 's/^/#   /' "$TMP/err"; }
if [ "$(id -u)" = 0 ] && mknod "$TMP/null" c 1 3 2>/dev/null; then
    $COLLTUNE run --local 2 -b 8 -e 8 -n 2 -w 0 --json "$TMP/null" >/dev/null 2>&1; rc=$?
    [ $rc -eq 0 ] && [ -c "$TMP/null" ] && ok "--json to a device node (root): it stays a device" \
        || not_ok "--json to a device: exit $rc, $(ls -l "$TMP/null")"
else
    skip "--json to a device node: needs root (mknod)"
fi
echo old >"$TMP/jreal.json" && chmod 640 "$TMP/jreal.json" && ln -s jreal.json "$TMP/jlink.json"
$COLLTUNE run --local 2 -b 8 -e 8 -n 2 -w 0 --json "$TMP/jlink.json" >/dev/null 2>&1; rc=$?
[ $rc -eq 0 ] && [ -L "$TMP/jlink.json" ] && grep -q colltune-results "$TMP/jreal.json" \
    && [ "$(stat -c %a "$TMP/jreal.json")" = 640 ] && ok "--json through a link: the file it names, mode kept" \
    || not_ok "--json through a link: exit $rc, $(ls -l "$TMP/jlink.json" "$TMP/jreal.json")"
# --json /dev/stdout: into the pipe (it resolves to no path), or the file stdout is redirected
# to, after what is there (a rename replaced that file: the log before it, and the table, lost)
$COLLTUNE run --local 2 -b 8 -e 8 -n 2 -w 0 --json /dev/stdout 2>"$TMP/err" | grep -c colltune-results >"$TMP/piped"
[ "$(cat "$TMP/piped")" = 1 ] && ok "--json /dev/stdout into a pipe" || { not_ok "--json /dev/stdout piped"; sed 's/^/#   /' "$TMP/err"; }
echo "previous log" >"$TMP/app.log"
$COLLTUNE run --local 2 -b 8 -e 8 -n 2 -w 0 --json /dev/stdout >>"$TMP/app.log" 2>"$TMP/err"; rc=$?
[ $rc -eq 0 ] && grep -q "previous log" "$TMP/app.log" && grep -q "nRanks 2" "$TMP/app.log" && grep -q colltune-results "$TMP/app.log" \
    && ok "--json /dev/stdout redirected to a log: the log, the table and the JSON kept" \
    || { not_ok "--json /dev/stdout >> log (exit $rc)"; head -3 "$TMP/app.log" | sed 's/^/#   /'; }
done_testing
