#!/bin/sh
# The resident path (backend/resident.h): --mem host-ipc is host memory with cuda's shape (each
# buffer its own memfd, mapped by the peers through a handle, as CUDA IPC maps a GPU's), so the
# path --mem cuda takes on one host runs here, between real processes: every algorithm's
# schedule runs in place on the kind's buffers and the peers' mapped ones (one-sided ops on
# them directly, receives pulled from the sender's buffer), nothing staged, but for mailbox
# (oneshot), quantized, avg (no GPU scaling kernel), in-flight points and reductions the GPU
# kernels lack (int32), which are staged through host memory. Every result is checked, and run counts after its table the points
# that ran each way. For symm it also shows by itself: with COLLTUNE_SHM_UNREGISTERED the
# transports' own buffers are private, which the staged path (and --mem host) refuse for
# symm, and the resident path does not use.
. "$(dirname "$0")/lib.sh"
every_coll symm 4 --mem host-ipc -b 8 -e 4M -f 32
every_coll ring 4 --mem host-ipc -b 8 -e 4M -f 32
every_coll mesh 4 --mem host-ipc -b 8 -e 4M -f 32
R="$COLLTUNE run --local 2 --mem host-ipc"
# each algorithm (its collectives and shapes) in place, every point counted; run --local 4
inplace() { # NAME WANT ARGS...: exit 0, #wrong 0, and WANT points of 8 in place
    name=$1 want=$2; shift 2
    "$@" -b 8 -e 2M -f 32 -n 3 -w 1 >"$TMP/out" 2>"$TMP/err"; rc=$?
    wrong=$(awk '!/^#/ { w += $10 + $14 } END { print w + 0 }' "$TMP/out")
    [ $rc = 0 ] && [ "$wrong" = 0 ] && grep -q "Out of bounds values : 0 OK" "$TMP/out" &&
        grep -q "^# host-ipc memory: $want of 8 timed points in place over IPC, $((8 - want)) staged through host" "$TMP/out" \
        && ok "$name: #wrong 0, $want of 8 points in place" \
        || not_ok "$name: exit $rc, $wrong wrong, $(grep 'timed points' "$TMP/out") $(head -2 "$TMP/err")"
}
for a in ring simple-ring bidir-ring mesh mesh-1step rdh kangaring hier flat-ring rail-ring; do
    inplace "$a allreduce on 4 ranks" 8 $COLLTUNE run --local 4 --mem host-ipc --algo $a
done
inplace "bruck alltoall on 3 ranks" 8 $COLLTUNE run --local 3 --mem host-ipc --algo bruck --coll alltoall
inplace "rdh reducescatter on 3 ranks" 8 $COLLTUNE run --local 3 --mem host-ipc --algo rdh --coll reducescatter
inplace "torus-ring allgather on a 2x2 torus" 8 $COLLTUNE run --local 4 --torus 2x2 --mem host-ipc --algo torus-ring --coll allgather
inplace "torus-rdh allreduce on a 2x2 torus" 8 $COLLTUNE run --local 4 --torus 2x2 --mem host-ipc --algo torus-rdh
inplace "avg is staged (no GPU scaling kernel)" 0 $R --algo ring -o avg -d bfloat16
inplace "int32 is staged (no GPU kernel for it)" 0 $COLLTUNE run --local 3 --mem host-ipc --algo ring -d int32
inplace "int32 allgather moves no reduction: in place" 8 $COLLTUNE run --local 3 --mem host-ipc --algo ring -d int32 --coll allgather
expect 0 "sweep --mem host-ipc of int32 on 3 ranks" -- $COLLTUNE sweep --local 3 --mem host-ipc -d int32 --coll allreduce -b 8 -e 1M --out "$TMP/hi"
grep -q '"memory": "host-ipc"' "$TMP/hi/config.json" && ok "... its config written" || not_ok "config: $(tail -3 "$TMP/err")"
grep -Eq "^# host-ipc memory: 0 of [1-9][0-9]* timed batches in place over IPC, [1-9][0-9]* staged through host$" "$TMP/out" \
    && ok "... every batch counted staged" || not_ok "int32 sweep count: $(grep 'timed' "$TMP/out")"
expect 0 "oneshot (a mailbox) is staged" -- $R --algo oneshot -b 8 -e 8K -f 4
grep -q "^# host-ipc memory: 0 of 12 timed points in place over IPC, 12 staged through host" "$TMP/out" \
    && grep -q "Out of bounds values : 0 OK" "$TMP/out" && ok "oneshot results correct, all staged" \
    || not_ok "oneshot: $(grep -E 'timed points|Out of' "$TMP/out")"
grep -q "transport: shm; host-ipc memory in place over IPC" "$TMP/out" \
    && ok "the header says how the memory moves" || not_ok "header: $(sed -n 2p "$TMP/out")"
expect 0 "run --mem host prints no count" -- $COLLTUNE run --local 2 -e 64K
! grep -q "timed points in place" "$TMP/out" && ok "no count on host memory" || not_ok "$(grep 'timed points' "$TMP/out")"
for coll in allreduce allgather reducescatter alltoall; do
    for nr in 2 3; do
        COLLTUNE_SHM_UNREGISTERED=1 $COLLTUNE run --local $nr --mem host-ipc --algo symm --coll $coll \
            -b 8 -e 2M -f 16 >"$TMP/out" 2>"$TMP/err"; rc=$?
        wrong=$(awk '!/^#/ { w += $10 + $14 } END { print w + 0 }' "$TMP/out")
        [ $rc = 0 ] && [ "$wrong" = 0 ] && grep -q "Out of bounds values : 0 OK" "$TMP/out" \
            && ok "symm $coll on $nr ranks in place over IPC, transports' buffers private: #wrong 0" \
            || not_ok "symm $coll on $nr ranks, private transport buffers: exit $rc, $wrong wrong: $(head -2 "$TMP/err")"
    done
done
COLLTUNE_SHM_UNREGISTERED=1 usage_error "symm on host memory needs the transports' shared buffers" -- \
    $COLLTUNE run --local 2 --algo symm -e 1K
COLLTUNE_SHM_UNREGISTERED=1 usage_error "so does avg on host-ipc (staged)" -- $R --algo symm -o avg -e 1K
# a sweep on it: every candidate checked, the config says which memory and how it moves
expect 0 "sweep --mem host-ipc" -- $COLLTUNE sweep --local 2 --mem host-ipc --coll allreduce -b 8 -e 1M --out "$TMP/hs"
grep -q '"memory": "host-ipc"' "$TMP/hs/config.json" && ok "the fingerprint says host-ipc" \
    || not_ok "config: $(head -c 600 "$TMP/hs/config.json")"
grep -q '"algo": "symm"' "$TMP/hs/results.json" && ok "symm was measured" || not_ok "no symm point"
# its batches counted each way: oneshot (a mailbox) staged, the rest in place
c=$(awk '/^# host-ipc memory: [0-9]+ of [0-9]+ timed batches in place over IPC, [0-9]+ staged through host$/ {
    if ($4 > 0 && $13 > 0 && $4 + $13 == $6) print $4 " in place, " $13 " staged" }' "$TMP/out")
[ -n "$c" ] && ok "the sweep counts its batches: $c" || not_ok "sweep count: $(grep 'timed' "$TMP/out")"
$COLLTUNE show "$TMP/hs/config.json" >"$TMP/show" 2>&1
grep -q "transport shm, .*host-ipc memory in place over IPC" "$TMP/show" \
    && ok "show says so" || not_ok "show: $(head -3 "$TMP/show")"
usage_error "--gpu-map is for cuda" -- $R --gpu-map 0
usage_error "--lib ompi moves host memory" -- $R --lib ompi
done_testing
