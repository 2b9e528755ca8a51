#!/bin/sh
# SPDX-License-Identifier: MIT
# Sourced by the tests/cli/t259x-cluster-*.sh TAP scripts after tests/cli/lib.sh:
# ct_setup_cluster K RATE [RAILS] builds the emulated cluster (cluster.sh) and tears it down on
# every exit; where namespaces are not allowed it reports one skip and exits 0.
CT_INTEGRATION=$(cd "$(dirname "$0")/../integration" && pwd)
. "$CT_INTEGRATION/cluster.sh"
. "$CT_INTEGRATION/jobs.sh"

ct_setup_cluster() {
    if ! why=$(ct_cluster_check); then
        skip "emulated cluster: $why"
        done_testing
        exit 0
    fi
    trap 'ct_cluster_down; rm -rf "$TMP"' EXIT
    trap 'exit 143' INT TERM HUP PIPE
    if ! ct_cluster_up "$1" "$2" "${3:-1}" >"$TMP/up.log" 2>&1; then
        not_ok "build a cluster of $1 namespaces at $2"; sed 's/^/#   /' "$TMP/up.log" | head -5
        done_testing
        exit 1
    fi
}

# The ct-* objects in /dev/shm that no process maps: leftovers.
ct_shm_orphans() {
    for f in /dev/shm/ct-*; do
        [ -e "$f" ] || continue
        grep -qs "${f#/dev/shm/}" /proc/[0-9]*/maps || echo "${f#/dev/shm/}"
    done
}

# Print the last lines of a job's outputs as TAP diagnostics.
ct_job_diag() {
    for f in "$JOB_DIR"/*.out "$JOB_DIR"/hydra.log; do
        [ -s "$f" ] || continue
        echo "#   == ${f##*/}"; grep -v '^#  Rank\|^#$' "$f" | tail -${1:-3} | sed 's/^/#   /'
    done
}
