#!/bin/sh
# srun on a Slurm set up as sites run it (tests/integration/slurm.sh, ct_slurm_site): MUNGE
# for authentication and credentials, job steps tracked and confined to their cores by cgroups
# (proctrack/cgroup, task/cgroup with ConstrainCores), each task bound to its cores
# (task/affinity). colltune's ranks run inside the step's cpuset, each bound to one CPU; a
# library sweep counts the CPUs the job holds on the node, not a rank's binding: 2 ranks on
# 2 CPUs are tuned, 2 ranks overcommitted on 1 CPU are reported and not tuned. Skips
# without root, Slurm, MUNGE, 2 usable CPUs, or writable cgroup v1 cpuset and freezer
# hierarchies.
. "$(dirname "$0")/lib.sh"
NAMES="the steps run as a site's|srun --mpi=pmix: run|its results|run --lib ompi|its results|sweep --lib ompi, 2 ranks on 2 CPUs|tuned|sweep --lib ompi, 2 ranks on 1 CPU|not tuned|srun --mpi=pmi2: run --lib mpich|its results"
. "$(dirname "$0")/../integration/slurm.sh"
why=$(ct_slurm_site_check) || true
[ -n "$why" ] || [ "$(usable_cores)" -ge 2 ] || why="needs 2 usable CPUs"
[ -z "$why" ] || skip_all "$why"
S="$TMP/slurm"
node=ct$$ # a name of the test's: its cgroups are slurm_<node>, nothing of another Slurm's
ctld= sd=
trap 'kill $ctld $sd 2>/dev/null; wait $ctld $sd 2>/dev/null; ct_slurm_site_stop "$S" "$node"; rm -rf "$TMP"' EXIT
trap 'exit 130' INT TERM # through the EXIT trap
ct_slurm_conf "$S" 127.0.0.1 "$node:127.0.0.1:2"
ct_slurm_site "$S" || { not_ok "munged did not start: $(tail -2 "$S/munge/munged.log")"; done_testing; exit; }
slurmctld -D -f "$SLURM_CONF" >"$S/ctld.out" 2>&1 &
ctld=$!
slurmd -D -N "$node" -f "$SLURM_CONF" >"$S/slurmd.out" 2>&1 &
sd=$!
if ! ct_slurm_wait 1; then
    not_ok "Slurm did not come up in 30 s: $(tail -3 "$S/slurmctld.log" "$S/slurmd.$node.log" | tr '\n' ' ')"
    done_testing
    exit
fi
SR="timeout 180 srun -n 2"
results_ok() { grep -q "Out of bounds values : 0 OK" "$TMP/out" && ok "$1" || not_ok "$1: $(tail -3 "$TMP/out")"; }

# each task: in the step's cgroups, bound to a CPU of its own
$SR sh -c 'echo "$SLURM_PROCID $(grep -E "^[0-9]+:(cpuset|freezer):" /proc/self/cgroup | cut -d: -f3 | sort -u | tr "\n" " ")$(taskset -pc $$ | sed "s/.*: //")"' >"$TMP/out" 2>&1
steps=$(grep -c "^[01] /slurm_$node/uid_0/job_[0-9]*/step_0 [0-9]*\$" "$TMP/out")
cores=$(awk '{print $NF}' "$TMP/out" | sort -u | wc -l)
[ "$steps" = 2 ] && [ "$cores" = 2 ] && ok "the steps run as a site's: each task in the step's cpuset and freezer cgroups, bound to a CPU of its own" \
    || not_ok "tasks: $(cat "$TMP/out")"

# PMIx: colltune's own engine, then Open MPI's, in the ranks srun started
expect 0 "srun --mpi=pmix: run" -- $SR --mpi=pmix $COLLTUNE run -e 1M -n 5
results_ok "its results"
expect 0 "run --lib ompi" -- $SR --mpi=pmix $COLLTUNE run --lib ompi -e 64K -n 5
[ "$(grep -c "^#  Rank  [01] .* node 0 local [01]\$" "$TMP/out")" = 2 ] && grep -q "ompi:default" "$TMP/out" \
    && results_ok "its results: Open MPI's on 2 ranks, checked" || not_ok "Open MPI's run: $(head -8 "$TMP/out")"

# a library sweep counts the job's CPUs on the node (the step's cpuset), not a rank's one
sweep() { $SR "$@" --mpi=pmix $COLLTUNE sweep --lib ompi --coll allreduce -b 8 -e 1K --budget 5 --out "$TMP/sw" >"$TMP/out" 2>"$TMP/err"; }
rm -rf "$TMP/sw"
sweep; rc=$?
[ $rc -eq 0 ] && ok "sweep --lib ompi, 2 ranks on 2 CPUs" || not_ok "sweep on 2 CPUs (exit $rc): $(tail -3 "$TMP/err")"
[ -s "$TMP/sw/config.json" ] && ! grep -q "time the scheduler" "$TMP/err" && ok "tuned: config.json written, no warning" \
    || not_ok "2 CPUs: $(grep -i warning "$TMP/err")"
rm -rf "$TMP/sw"
sweep -c 1 --overcommit; rc=$?
[ $rc -eq 0 ] && ok "sweep --lib ompi, 2 ranks on 1 CPU (srun -c 1 --overcommit)" || not_ok "sweep on 1 CPU (exit $rc): $(tail -3 "$TMP/err")"
[ ! -e "$TMP/sw/config.json" ] && [ -s "$TMP/sw/results.json" ] \
    && grep -q "warning: 2 ranks on a host of 1 usable core time the scheduler more than Open MPI" "$TMP/err" \
    && ok "not tuned: reported, no config.json, said" || not_ok "1 CPU: $(ls "$TMP/sw") $(cat "$TMP/err")"

# PMI on PMI_FD (Slurm's pmi2 plugin), MPICH's engine
expect 0 "srun --mpi=pmi2: run --lib mpich" -- $SR --mpi=pmi2 $COLLTUNE run --lib mpich -e 4K -n 5
grep -q "mpich:default" "$TMP/out" && results_ok "its results: MPICH's, checked" \
    || not_ok "MPICH's rows: $(tail -3 "$TMP/out")"
done_testing
