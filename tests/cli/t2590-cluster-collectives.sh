#!/bin/sh
# Emulated cluster (tests/integration): 4 network-namespace nodes x 2 ranks on 1 Gbit links.
# Every collective with every algorithm, verified (-c 1, zero wrong), launched through
# PMI-1 (MPICH hydra), and every algorithm through `--local 2` per node (every collective
# where hydra is missing); a tcp-only pass through environment
# rendezvous; every algorithm over the fabric transport too when it is built (the
# collectives in turn, AllToAll with each algorithm that has it). Skips where namespaces
# are not allowed (needs root).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../integration/setup.sh"
ct_setup_cluster 4 1gbit

small="-b 8 -e 256K -f 32 -n 1 -w 0 -c 1"

# check DESC: the job passed, with 8 ranks on 4 nodes and zero wrong; a one-node algorithm
# (symm: one-sided over shared memory; oneshot: mailboxes in it) is refused on every rank,
# saying why
check() {
    case $1 in *" symm"|*" oneshot")
        if [ "$JOB_RC" -ne 0 ] && grep -q "${1##* } reaches into its peers' memory: one node only (4 nodes here)" "$JOB_OUT"; then
            ok "$1: refused across nodes (${JOB_SECS}s)"
        else
            not_ok "$1: not refused across nodes (exit $JOB_RC)"
            ct_job_diag 3
        fi
        return ;;
    esac
    if [ "$JOB_RC" -eq 0 ] && grep -q "nRanks 8 nNodes 4" "$JOB_OUT" &&
        grep -q "Out of bounds values : 0 OK" "$JOB_OUT"; then
        ok "$1 (${JOB_SECS}s)"
    else
        not_ok "$1 (exit $JOB_RC after ${JOB_SECS}s$([ "$JOB_KILLED" = 1 ] && echo ', killed'))"
        ct_job_diag 3
    fi
}

$COLLTUNE list algos >"$TMP/algos"
methods=local
if [ -n "$(ct_hydra)" ]; then
    methods="hydra local"
else
    skip "PMI-1: mpiexec.hydra is not installed"
fi
# every collective of every algorithm through hydra; through `--local 2` (how the ranks come
# up, not what they run) each algorithm with one of its collectives, taken in turn (ring's
# AllToAll first), or every one where hydra is missing
for m in $methods; do
    i=3
    while read -r algo colls; do
        extra=""
        case $algo in torus-*) extra="--torus 2x4" ;; esac
        if [ "$m" = local ] && [ "$methods" != local ]; then
            # shellcheck disable=SC2086
            set -- $colls
            shift $((i % $#))
            colls=$1
            i=$((i + 1))
        fi
        for coll in $colls; do
            # shellcheck disable=SC2086
            ct_job "$m" 2 "$TMP/job" 60 run --wait block --coll "$coll" --algo "$algo" $extra $small
            check "$m: $coll $algo"
        done
    done <"$TMP/algos"
done

# the whole job over tcp (also between the ranks of a node), environment rendezvous
for coll in allreduce allgather reducescatter alltoall; do
    # shellcheck disable=SC2086
    ct_job env 2 "$TMP/job" 60 run --wait block --transport tcp --coll "$coll" --algo ring $small
    check "env, tcp only: $coll ring"
done

# the fabric transport (libfabric tcp provider), when this colltune has it, through
# environment rendezvous: every algorithm (its message pattern is what the transport
# sees) with one of its collectives, taken in turn, and AllToAll (every pair at once)
# with each algorithm that has it; a job's libfabric bring-up takes 1.5 s of the 2 cores
# here, and the whole cross product took 74 s
if $COLLTUNE list transports | grep -q '^fabric  *[^(]'; then
    i=0
    while read -r algo colls; do
        extra=""
        case $algo in torus-*) extra="--torus 2x4" ;; esac
        # shellcheck disable=SC2086
        set -- $colls
        shift $((i % $#))
        i=$((i + 1))
        picked=$1
        case " $colls " in *" alltoall "*) [ "$picked" = alltoall ] || set -- "$picked" alltoall ;;
            *) set -- "$picked" ;; esac
        for coll in "$@"; do
            # shellcheck disable=SC2086
            ct_job env 2 "$TMP/job" 60 run --wait block --transport fabric --coll "$coll" \
                --algo "$algo" $extra $small
            check "env, fabric: $coll $algo"
        done
    done <"$TMP/algos"
else
    skip "fabric transport: not built"
fi
done_testing
