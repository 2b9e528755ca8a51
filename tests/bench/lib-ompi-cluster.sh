#!/bin/sh
# tests/bench/lib-ompi.sh on the emulated cluster: 4 network-namespace hosts x 1 rank, links
# shaped to 1 Gbit (tests/integration/cluster.sh), Open MPI started through its own rsh
# agent knob (MPICH, BENCH_LIB=mpich: hydra's) with tests/integration/rsh-agent.sh. Needs
# root. Environment as lib-ompi.sh's
# (BENCH_MAX defaults to 16M here: 128 MiB AllReduces at 1 Gbit take seconds each).
# Usage: tests/bench/lib-ompi-cluster.sh [OUTDIR] [NODES] [RATE]
set -eu
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../integration/cluster.sh"
why=$(ct_cluster_check) || { echo "lib-ompi-cluster: $why" >&2; exit 2; }
nodes=${2:-4}
trap 'ct_cluster_down' EXIT
trap 'exit 143' INT TERM HUP
ct_cluster_up "$nodes" "${3:-1gbit}"
ct_cluster_head >/dev/null || exit 1
hosts=""
k=0
while [ $k -lt "$nodes" ]; do hosts="$hosts${hosts:+,}$(ct_node_ip $k)"; k=$((k + 1)); done
export CT_NET OMPI_MCA_plm_rsh_agent="$here/../integration/rsh-agent.sh" OMPI_MCA_mpi_yield_when_idle=1
# the emulated hosts share this machine's cores: Open MPI would bind each host's rank to
# the core 0 it sees, all of them to one core (a real cluster's hosts bind as jobs do)
export OMPI_MCA_hwloc_base_binding_policy=none
export HYDRA_LAUNCHER=ssh HYDRA_LAUNCHER_EXEC="$here/../integration/rsh-agent.sh" HYDRA_IFACE="${CT_NET}br"
# one machine: UCX (MPICH's netmod) would reach the other "hosts" through shared memory, and
# the bench would time that, not the 1 Gbit links (as t3110)
export UCX_TLS=tcp,self
echo "emulated cluster $CT_NET: $nodes hosts x 1 rank at ${3:-1gbit}: $hosts"
BENCH_SHAPE="--hosts $hosts" BENCH_MAX=${BENCH_MAX:-16M} "$here/lib-ompi.sh" "${1:-build/bench-lib-cluster}"
