#!/bin/sh
# run --lib: colltune starts itself under the library's launcher and measures the library's
# own collectives through its engine module (build/ct-lib-<lib>.so). Forcing each Open MPI
# algorithm really runs it: an LD_PRELOAD shim names the coll/base entry point each call of
# the measured size ran. Bad input (unknown library, a library algorithm without --lib, an
# algorithm the library lacks, no --local, a missing module) is one line and exit 2.
. "$(dirname "$0")/lib.sh"
here=$(cd "$(dirname "$0")" && pwd)
X="$COLLTUNE run"
have() { command -v "$1" >/dev/null 2>&1; }

usage_error "unknown --lib" -- $X --lib openmpi --local 2
usage_error "a library's algorithm without --lib" -- $X --algo ompi:ring --local 2
usage_error "another library's algorithm" -- $X --lib mpich --algo ompi:ring --local 2
usage_error "--lib without --local" -- $X --lib ompi
mkdir "$TMP/empty"
cp "$COLLTUNE" "$TMP/empty/colltune"
usage_error "no module beside the binary" -- "$TMP/empty/colltune" run --lib ompi --local 2
grep -q "ct-lib-ompi.so" "$TMP/err" && ok "names the module" || not_ok "names the module: $(cat "$TMP/err")"

if ! have mpicc.openmpi || ! have mpirun.openmpi; then
    skip "Open MPI engine (mpicc.openmpi/mpirun.openmpi not found)"
    done_testing; exit
fi
usage_error "no launcher on PATH" -- env PATH="$TMP/empty" "$COLLTUNE" run --lib ompi --local 2
usage_error "an algorithm Open MPI lacks" -- $X --lib ompi --local 2 --algo ompi:nope
grep -q "it has ompi:default, .*ompi:ring" "$TMP/err" && ok "lists what Open MPI has" || not_ok "lists: $(cat "$TMP/err")"

expect 0 "run --lib ompi: the default decision, checked results" -- $X --lib ompi --local 2 -b 8 -e 64K -f 64 -n 3 -w 1
grep -q "transport: Open MPI [0-9]" "$TMP/out" && [ "$(grep -c " ompi:default " "$TMP/out")" -eq 3 ] \
    && grep -q "Out of bounds values : 0 OK" "$TMP/out" && ok "nccl-tests table, 3 sizes, no wrong values" \
    || not_ok "table: $(cat "$TMP/out")"

mpicc.openmpi -DCT_SHIM_LOG -O1 -shared -fPIC -o "$TMP/spy.so" "$here/consumers/ompi_shim.c" -ldl \
    && ok "built the coll/base spy" || not_ok "mpicc.openmpi spy"
# force COLL ALGO FUNCTION: at 64 KiB, the calls of the measured size ran FUNCTION
force() {
    count=$(( 65536 / 4 )); [ "$1" = allgather ] || [ "$1" = alltoall ] || [ "$1" = reducescatter ] && count=$((count / 2))
    LD_PRELOAD="$TMP/spy.so" $X --lib ompi --local 2 --coll "$1" --algo "ompi:$2" -b 64K -e 64K -n 1 -w 0 \
        >"$TMP/out" 2>"$TMP/err"
    ran=$(sed -n "s/^shim: ompi_coll_base_\(.*\) $count\$/\1/p" "$TMP/err" | sort -u | tr '\n' ' ')
    [ "$ran" = "$3 " ] && ok "$1 forced to ompi:$2 runs $3" || not_ok "$1 ompi:$2 ran '$ran', wanted $3"
}
# Open MPI 4.1's enum names -> coll/base entry points (coll_tuned_*_decision.c)
force allreduce basic_linear allreduce_intra_basic_linear
force allreduce nonoverlapping allreduce_intra_nonoverlapping
force allreduce recursive_doubling allreduce_intra_recursivedoubling
force allreduce ring allreduce_intra_ring
force allreduce segmented_ring allreduce_intra_ring_segmented
force allreduce rabenseifner allreduce_intra_redscat_allgather
force allgather linear allgather_intra_basic_linear
force allgather bruck allgather_intra_bruck
force allgather ring allgather_intra_ring
force allgather two_proc allgather_intra_two_procs
force reducescatter recursive_halving reduce_scatter_intra_basic_recursivehalving
# observed with Open MPI 4.1.4 on 2 ranks: forcing reduce_scatter's ring runs butterfly
force reducescatter ring reduce_scatter_intra_butterfly
force reducescatter butterfly reduce_scatter_intra_butterfly
force alltoall pairwise alltoall_intra_pairwise
force alltoall modified_bruck alltoall_intra_bruck
# alltoall's two_proc is in the enum but the variable refuses it: no candidate
usage_error "alltoall two_proc (refused by the variable)" -- $X --lib ompi --local 2 --coll alltoall --algo ompi:two_proc
done_testing
