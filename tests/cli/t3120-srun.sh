#!/bin/sh
# Slurm's srun as the launcher. A one-node Slurm started here (slurmctld and slurmd as root,
# with their own config in a temporary folder: auth/none, one node of 8 CPUs on 127.0.0.1,
# ports of their own) runs colltune's ranks: srun --mpi=pmix joins them through PMIx, for
# colltune's own engine and Open MPI's (run and sweep --lib ompi); srun --mpi=pmi2 through
# PMI on PMI_FD, for colltune's and MPICH's; srun alone is refused as the mis-launch it is,
# until COLLTUNE_ROOT names the rendezvous. Skips without root or without Slurm's daemons.
. "$(dirname "$0")/lib.sh"
NAMES="srun --mpi=pmix: run|its results|its bootstrap|run --lib ompi|its results|sweep --lib ompi|its Open MPI section|srun --mpi=pmi2: run|run --lib mpich|its results|srun alone: refused|it says why|COLLTUNE_ROOT joins them|a rank killed under srun: said|a rank killed in MPICH's engine: its peer leaves"
. "$(dirname "$0")/../integration/slurm.sh"
why=$(ct_slurm_check) || skip_all "$why"
S="$TMP/slurm"
node=$(hostname -s)
ct_slurm_conf "$S" 127.0.0.1 "$node:127.0.0.1:8"
slurmctld -D -f "$SLURM_CONF" >"$S/ctld.out" 2>&1 &
ctld=$!
slurmd -D -f "$SLURM_CONF" >"$S/slurmd.out" 2>&1 &
sd=$!
trap 'kill $ctld $sd 2>/dev/null; wait $ctld $sd 2>/dev/null; rm -rf "$TMP"' EXIT
if ! ct_slurm_wait 1; then
    not_ok "Slurm did not come up in 30 s: $(tail -3 "$S/slurmctld.log" "$S/slurmd.out" | tr '\n' ' ')"
    done_testing
    exit
fi
SR="timeout 180 srun -n 2"
results_ok() { grep -q "Out of bounds values : 0 OK" "$TMP/out" && ok "$1" || not_ok "$1: $(tail -3 "$TMP/out")"; }

# PMIx: colltune's own engine, then Open MPI's in the ranks srun started
expect 0 "srun --mpi=pmix: run" -- $SR --mpi=pmix $COLLTUNE run -e 1M
results_ok "its results"
$SR --mpi=pmix $COLLTUNE run --print-bootstrap >"$TMP/out" 2>&1
[ "$(grep -c '^bootstrap: pmix, rank [01] of 2' "$TMP/out")" = 2 ] && ok "its bootstrap: PMIx, 2 ranks" \
    || not_ok "bootstrap: $(head -3 "$TMP/out")"
expect 0 "run --lib ompi" -- $SR --mpi=pmix $COLLTUNE run --lib ompi -e 64K
grep -q "ompi:default" "$TMP/out" && results_ok "its results: Open MPI's, checked" \
    || not_ok "Open MPI's rows: $(tail -3 "$TMP/out")"
expect 0 "sweep --lib ompi" -- $SR --mpi=pmix $COLLTUNE sweep --lib ompi --coll allreduce -b 8 -e 64K \
    --budget 20 --out "$TMP/so"
grep -q '"library": "ompi"' "$TMP/so/config.json" && ok "its Open MPI section" \
    || not_ok "config: $(head -c 400 "$TMP/so/config.json")"

# PMI on PMI_FD (Slurm's pmi2 plugin answers colltune's and MPICH's PMI)
expect 0 "srun --mpi=pmi2: run" -- $SR --mpi=pmi2 $COLLTUNE run -e 64K
expect 0 "run --lib mpich" -- $SR --mpi=pmi2 $COLLTUNE run --lib mpich -e 4K
grep -q "mpich:default" "$TMP/out" && results_ok "its results: MPICH's, checked" \
    || not_ok "MPICH's rows: $(tail -3 "$TMP/out")"

# srun alone: every process would be rank 0 of 1; refused, then joined by COLLTUNE_ROOT
$SR $COLLTUNE run -e 4K >"$TMP/out" 2>"$TMP/err"
rc=$?
[ $rc -ne 0 ] && ok "srun alone: refused (exit $rc)" || not_ok "srun alone ran"
grep -q "mis-launch: the launcher started 2 processes (SLURM_PROCID=[01], SLURM_NTASKS=2)" "$TMP/err" \
    && grep -q "srun --mpi=pmix" "$TMP/err" && ok "it says why, and how to launch" \
    || not_ok "message: $(head -2 "$TMP/err")"
COLLTUNE_ROOT=127.0.0.1:$(ct__free_port) expect 0 "COLLTUNE_ROOT joins them" -- $SR $COLLTUNE run -e 64K

# killed DESC SAYS MPI ARGS...: rank 1 of `srun --mpi=MPI colltune ARGS` is killed 2 s in;
# the step must end within 60 s, nonzero, rank 0's stderr matching SAYS
killed() {
    desc=$1 says=$2 mpi=$3
    shift 3
    start=$(date +%s)
    $SR --mpi=$mpi sh -c 'if [ "$SLURM_PROCID" = 1 ]; then (sleep 2; kill -9 $$) & fi; exec "$@"' \
        sh $COLLTUNE "$@" >"$TMP/out" 2>"$TMP/err"
    rc=$?
    took=$(($(date +%s) - start))
    [ $rc -ne 0 ] && grep -q "$says" "$TMP/err" && [ $took -lt 60 ] \
        && ok "$desc (exit $rc, ${took} s): $(grep "$says" "$TMP/err" | head -1)" \
        || not_ok "$desc: exit $rc after ${took} s: $(grep -v '^\[' "$TMP/err" | head -3)"
}
# colltune's engine: the other rank names it within the timeout, and the step ends; the kill
# lands in a step ("peer rank 1 (vm): ...") or, between sizes, in the bootstrap's exchange of
# the check ("bootstrap allgather #N: rank 1 (vm): connection closed"; 1 CI run in ~60)
killed "a rank killed under srun: said" "colltune run: error: rank 0 .*\(peer rank 1\([^0-9]\|$\)\|bootstrap [a-z]* #[0-9]*: rank 1 (\)" pmix \
    run -e 1G -n 1000
# MPICH's: the survivor blocks inside MPI, and srun --mpi=pmi2 (without --kill-on-bad-exit)
# leaves it there; colltune's watchdog ends it after --timeout. Now and then UCX sees the
# peer gone first and aborts the survivor itself (ucs_fatal_error_message: a line
# "[host:pid:...] FILE:LINE why", then "==== backtrace (tid: ...) ===="; seen in 1 fresh
# clone of 6 here): the step ends in time either way.
killed "a rank killed in MPICH's engine: its peer leaves after --timeout" \
    "rank 0: no call into MPICH [0-9.]* returned for 5 s\|^==== backtrace (tid:" pmi2 \
    run --lib mpich -e 256M -n 1000 --timeout 5
done_testing
