#!/bin/sh
# The resident path (backend/resident.h): --mem host-ipc is host memory with cuda's shape (each
# buffer its own memfd, mapped by the peers through a handle, as CUDA IPC maps a GPU's), so the
# path --mem cuda takes for one-sided algorithms runs here, between real processes: symm works
# in place on the kind's buffers and the peers' mapped ones, nothing staged; other algorithms
# (and avg, which has no GPU scaling kernel) are staged through host memory. Every result is
# checked. That symm really ran in place: with COLLTUNE_SHM_UNREGISTERED the transports' own
# buffers are private, which the staged path (and --mem host) refuse for symm, and the resident
# path does not use.
. "$(dirname "$0")/lib.sh"
every_coll symm 4 --mem host-ipc -b 8 -e 4M -f 32
R="$COLLTUNE run --local 2 --mem host-ipc"
expect 0 "ring staged on host-ipc" -- $R --algo ring -b 8 -e 4M -f 32
grep -q "Out of bounds values : 0 OK" "$TMP/out" && ok "ring results correct" || not_ok "results: $(tail -3 "$TMP/out")"
expect 0 "symm on host-ipc" -- $R --algo symm -b 8 -e 4M -f 32
grep -q "transport: shm; host-ipc memory: symm in place over IPC, others staged through host" "$TMP/out" \
    && ok "the header says how the memory moves" || not_ok "header: $(sed -n 2p "$TMP/out")"
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
$COLLTUNE show "$TMP/hs/config.json" >"$TMP/show" 2>&1
grep -q "host-ipc memory (symm in place over IPC, others staged through host)" "$TMP/show" \
    && ok "show says so" || not_ok "show: $(head -3 "$TMP/show")"
usage_error "--gpu-map is for cuda" -- $R --gpu-map 0
usage_error "--lib ompi moves host memory" -- $R --lib ompi
done_testing
