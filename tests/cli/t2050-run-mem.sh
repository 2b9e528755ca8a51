#!/bin/sh
# run/sweep --mem: host runs as before; cuda on a host that cannot use it (no library, no
# driver, no GPU) is one line naming what is missing and exit 2; on a GPU host run and sweep
# move the job's GPU buffers in place over CUDA IPC (ranks of one host), or staged through
# host memory, results checked. --gpu-map is
# checked; other commands refuse --mem cuda.
# run and sweep --lib nccl (the NCCL engine) fail the same way where they cannot run; a sweep
# refuses another tuner plugin and a missing plugin of colltune's; sweep --verify --lib nccl
# checks the config's NCCL section first. Where NCCL runs: sweep, export and verify end to end.
. "$(dirname "$0")/lib.sh"
R="$COLLTUNE run --local 2 --maxbytes 4096"
expect 0 "--mem host runs and checks" -- $R --mem host
grep -q "Out of bounds values : 0 OK" "$TMP/out" && ok "host results correct" || not_ok "host results: $(tail -3 "$TMP/out")"
COLLTUNE_CUDART=/nonexistent/libcudart.so.13 usage_error "missing libcudart" -- $R --mem cuda
grep -q "cannot load the CUDA runtime /nonexistent/libcudart.so.13" "$TMP/err" && ok "names the library" || not_ok "message: $(cat "$TMP/err")"
COLLTUNE_CUDART=/nonexistent/libcudart.so.13 usage_error "sweep: missing libcudart" -- $COLLTUNE sweep --local 2 --mem cuda
usage_error "unknown kind" -- $R --mem rocm
usage_error "validate --mem cuda" -- $COLLTUNE validate --local 2 --mem cuda
grep -q -- "--mem cuda is for run and sweep" "$TMP/err" && ok "says which commands" || not_ok "message: $(cat "$TMP/err")"
# on a host where CUDA runs: the native engine on GPU buffers, in place or staged
# (both ranks on GPU 0: one GPU is enough); elsewhere one line naming what is missing
if $COLLTUNE run --mem cuda --local 1 -b 8 -e 8 >/dev/null 2>&1; then
    expect 0 "run --mem cuda" -- $R --mem cuda --gpu-map 0 -e 1M
    grep -q "Out of bounds values : 0 OK" "$TMP/out" && ok "cuda results correct" || not_ok "results: $(tail -3 "$TMP/out")"
    grep -q "shm; cuda memory in place over IPC" "$TMP/out" && ok "the header says how it moves" || not_ok "header: $(head -3 "$TMP/out")"
    # nccl-tests' "Using devices" line: the GPU's number, PCI domain:bus:device and name
    grep -E -q "^#  Rank  1 Group  0 Pid +[0-9]+ on +[^ ]+ device  0 \[[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\] [^ ].* node 0 local 1$" "$TMP/out" \
        && ok "each rank's line names its GPU" || not_ok "device lines: $(grep '^#  Rank' "$TMP/out")"
    grep -q "^# 2 ranks of [^ ]* share device 0 \[.*: unless MPS runs" "$TMP/out" \
        && ok "the two ranks on GPU 0 are said to share it" || not_ok "no note: $(sed -n 4,9p "$TMP/out")"
    # in place on the GPU buffers, the peer's mapped by CUDA IPC (two processes, one GPU):
    # symm's one-sided ops and ring's pulled receives; every point counted in place
    for a in symm ring; do
        for coll in allreduce allgather reducescatter alltoall; do
            expect 0 "run --mem cuda --algo $a $coll" -- $R --mem cuda --gpu-map 0 --algo $a --coll $coll -b 8 -e 4M -f 8
            grep -q "Out of bounds values : 0 OK" "$TMP/out" && grep -q "^# cuda memory: 14 of 14 timed points in place over IPC" "$TMP/out" \
                && ok "$a $coll on GPU memory correct, in place" || not_ok "results: $(tail -3 "$TMP/out")"
        done
    done
    expect 0 "sweep --mem cuda" -- $COLLTUNE sweep --local 2 --mem cuda --gpu-map 0 --coll allreduce -b 8 -e 1M --budget 20 --out "$TMP/cs"
    grep -q '"memory": "cuda"' "$TMP/cs/config.json" && grep -q '"transport": "shm"' "$TMP/cs/config.json" \
        && ok "the config's fingerprint says cuda memory, beside the transport" || not_ok "config: $(head -c 600 "$TMP/cs/config.json")"
    $COLLTUNE show "$TMP/cs/config.json" 2>&1 | grep -q "transport shm, .*cuda memory in place over IPC" \
        && ok "show says in place" || not_ok "show: $($COLLTUNE show "$TMP/cs/config.json" 2>&1 | head -3)"
    usage_error "a GPU beyond those present" -- $R --mem cuda --gpu-map 0,1023
    grep -q "GPU 1023 asked for" "$TMP/err" && ok "names the GPU" || not_ok "message: $(cat "$TMP/err")"
else
    usage_error "--mem cuda here" -- $R --mem cuda
    grep -q -- "--mem cuda: CUDA memory: " "$TMP/err" && ok "names CUDA" || not_ok "message: $(cat "$TMP/err")"
    for c in "run" "results" "header" "device line" "shared GPU" "symm allreduce" "its results" "symm allgather" "its results" \
        "symm reducescatter" "its results" "symm alltoall" "its results" "ring allreduce" \
        "its results" "ring allgather" "its results" "ring reducescatter" "its results" \
        "ring alltoall" "its results" "sweep" "config" "show" \
        "GPU beyond" "its name"; do skip "--mem cuda on a GPU: $c (no GPU here)"; done
fi
usage_error "--gpu-map without --mem cuda" -- $R --gpu-map 0,1
usage_error "bad --gpu-map" -- $R --mem cuda --gpu-map 0,,1
# --lib nccl: the NCCL engine needs libnccl, libcudart, a driver and a GPU; where it has
# them, the checks of a host that cannot run it are skipped, and the end-to-end block runs
NCCL_RUNS=
$COLLTUNE run --lib nccl --local 1 -b 8 -e 8 >/dev/null 2>&1 && NCCL_RUNS=1
# cannot_run NAME -- ARGS: one line naming the engine, exit 2, where NCCL cannot run
cannot_run() {
    name=$1
    shift 2
    if [ -n "$NCCL_RUNS" ]; then
        skip "$name (NCCL runs here)"
        skip "$name: the message (NCCL runs here)"
        return
    fi
    usage_error "$name" -- "$@"
    grep -q -- "--lib nccl: " "$TMP/err" && ok "names the engine" || not_ok "message: $(cat "$TMP/err")"
}
cannot_run "--lib nccl here" -- $R --lib nccl
COLLTUNE_LIBNCCL=/nonexistent/libnccl.so.2 usage_error "missing libnccl" -- $R --lib nccl
grep -q "cannot load NCCL /nonexistent/libnccl.so.2" "$TMP/err" && ok "names libnccl" || not_ok "message: $(cat "$TMP/err")"
usage_error "unknown --lib" -- $R --lib rccl
usage_error "--lib nccl on host memory" -- $R --lib nccl --mem host
# sweep --lib nccl: NCCL's choices forced through colltune's tuner plugin, which it sets
cannot_run "sweep --lib nccl here" -- $COLLTUNE sweep --local 2 --lib nccl
NCCL_TUNER_PLUGIN=/opt/other/libnccl-tuner.so usage_error "sweep --lib nccl, another tuner" -- $COLLTUNE sweep --local 2 --lib nccl
grep -q "NCCL_TUNER_PLUGIN=/opt/other/libnccl-tuner.so names another: unset it" "$TMP/err" && ok "names the other tuner" || not_ok "message: $(cat "$TMP/err")"
COLLTUNE_NCCL_PLUGIN=/nonexistent/p.so usage_error "sweep --lib nccl, no plugin" -- $COLLTUNE sweep --local 2 --lib nccl
grep -q "COLLTUNE_NCCL_PLUGIN=/nonexistent/p.so: cannot read" "$TMP/err" && ok "names the plugin" || not_ok "message: $(cat "$TMP/err")"
# sweep --verify --lib nccl: the config's NCCL section is checked before the GPU is looked at
C4="$(dirname "$0")/../fixtures/export/config-4ranks.json"
usage_error "verify: no NCCL section" -- $COLLTUNE sweep --local 2 --lib nccl --verify "$C4"
grep -q "has no measured NCCL section" "$TMP/err" && ok "says so" || not_ok "message: $(cat "$TMP/err")"
python3 - "$C4" >"$TMP/nccl.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
c["libraries"] = [{"library": "nccl", "name": "NCCL", "version": "2.28.9", "rules": [
    {"coll": "allreduce", "nnodes": 1, "ranks_per_node": 2, "nranks": 2, "dtype": "float32",
     "op": "sum", "ranges": [
        {"min_bytes": 0, "max_bytes": 65536, "algo": "default", "id": 0, "params": {},
         "default": True},
        {"min_bytes": 65536, "max_bytes": None, "algo": "ring", "id": 5,
         "params": {"proto": "LL128"}, "default": False}]}]}]
print(json.dumps(c))
PY
usage_error "verify: no rule for 4 ranks" -- $COLLTUNE sweep --local 4 --lib nccl --verify "$TMP/nccl.json"
grep -q "has no NCCL rule for 4 ranks on one host" "$TMP/err" && ok "says so" || not_ok "message: $(cat "$TMP/err")"
# without --local: one rank per CPU, checked as such before any GPU is looked at
ncpu=$(usable_cores); [ "$ncpu" -lt 2 ] && ncpu=2
if [ "$ncpu" = 2 ]; then
    cannot_run "verify, --local by default (2 CPUs)" -- $COLLTUNE sweep --lib nccl --verify "$TMP/nccl.json"
else
    usage_error "verify, --local by default ($ncpu CPUs)" -- $COLLTUNE sweep --lib nccl --verify "$TMP/nccl.json"
    grep -q "has no NCCL rule for $ncpu ranks on one host (--local N" "$TMP/err" && ok "says so" || not_ok "message: $(cat "$TMP/err")"
fi
echo '{' >"$TMP/broken.json"
usage_error "verify: unreadable config" -- $COLLTUNE sweep --local 2 --lib nccl --verify "$TMP/broken.json"
cannot_run "verify here" -- $COLLTUNE sweep --local 2 --lib nccl --verify "$TMP/nccl.json"
# on a host where NCCL runs: a sweep, its exports and the verify, end to end, on two GPUs
# where there are two; on one, one rank: NCCL runs every call as a local copy and consults no
# tuner, so its own choice is the sweep's one row and the export refuses to write a file
if [ -n "$NCCL_RUNS" ]; then
    np=1
    $COLLTUNE run --lib nccl --local 2 -b 8 -e 8 >/dev/null 2>&1 && np=2
    expect 0 "run --lib nccl ($np ranks)" -- $COLLTUNE run --lib nccl --local $np -b 8 -e 1M
    grep -q "Out of bounds values : 0 OK" "$TMP/out" && grep -q "transport: NCCL 2\.[0-9]*\.[0-9]*$" "$TMP/out" \
        && grep -E -q "^#  Rank  0 .* device  0 \[[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\] [^ ]" "$TMP/out" \
        && ok "NCCL's results correct, its version and GPU in the header" || not_ok "run: $(head -6 "$TMP/out")"
    expect 0 "sweep --lib nccl ($np ranks)" -- $COLLTUNE sweep --lib nccl --local $np --coll allreduce -b 8 -e 16M --budget 60 --out "$TMP/ns"
    grep -q '"library": "nccl"' "$TMP/ns/config.json" && ok "a measured nccl section" || not_ok "config: $(head -c 600 "$TMP/ns/config.json")"
    $COLLTUNE export "$TMP/ns/config.json" --format nccl-tuner >"$TMP/out" 2>"$TMP/err"
    rc=$?
    if [ $rc = 0 ]; then
        [ $np = 2 ] && ok "nccl-tuner from it" || not_ok "nccl-tuner on one rank wrote a file: $(head -5 "$TMP/out")"
        grep -q "^allreduce," "$TMP/out" && ! grep -q "not measured" "$TMP/out" && ok "measured CSV" || not_ok "csv: $(head -12 "$TMP/out")"
    else
        [ $rc = 2 ] && [ ! -s "$TMP/out" ] && ok "nccl-tuner from it: nothing to write (exit 2)" || not_ok "nccl-tuner exit $rc: $(cat "$TMP/err")"
        grep -q "nothing to export: NCCL's own choices measured best at every size" "$TMP/err" \
            && ok "says NCCL's own choices stay" || not_ok "message: $(cat "$TMP/err")"
    fi
    $COLLTUNE sweep --lib nccl --local $np --verify "$TMP/ns/config.json" >"$TMP/out" 2>"$TMP/err"
    rc=$?
    { [ $rc = 0 ] || [ $rc = 3 ]; } && grep -q "geomean" "$TMP/out" && ok "verify ran (exit $rc)" || not_ok "verify exit $rc: $(cat "$TMP/err")"
else
    for c in "run" "its header" "sweep" "its section" "nccl-tuner" "measured CSV" "verify"; do skip "NCCL on a GPU: $c (no GPU here)"; done
fi
usage_error "validate --lib nccl" -- $COLLTUNE validate --local 2 --lib nccl
done_testing
