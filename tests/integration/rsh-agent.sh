#!/bin/sh
# SPDX-License-Identifier: MIT
# The emulated cluster's "ssh": an rsh agent for MPI launchers (Open MPI's plm_rsh_agent,
# hydra's -launcher-exec) that runs COMMAND inside the node whose address is HOST, as
# ssh would on a real host. CT_NET names the cluster (cluster.sh).
#   rsh-agent.sh [ssh options] HOST COMMAND...
# COMMAND is one shell command line, as ssh takes it. HOST is ct_node_ip K (rail 0).
while [ "${1#-}" != "$1" ]; do shift; done
host=$1
shift
. "$(dirname "$0")/cluster.sh"
k=$((${host##*.} - 1))
if [ "$(ct_node_ip "$k")" != "$host" ]; then
    echo "rsh-agent.sh: $host is no node of cluster $CT_NET" >&2
    exit 255
fi
ct_node_exec "$k" sh -c "$*"
