#!/bin/sh
# Install the Debian/Ubuntu packages colltune's build and tests need, when missing.
# Runs apt-get as root, through sudo otherwise; says what to do where neither works.
# Usage: scripts/deps.sh [--check]   (--check: list what is missing, install nothing)
set -eu

PKGS="build-essential pkg-config libcriterion-dev libhwloc-dev hwloc libncurses-dev
libcurl4-openssl-dev libjansson-dev libfabric-dev libfabric-bin libibverbs-dev libpmix-dev
libopenmpi-dev openmpi-bin mpich libmpich-dev nginx prometheus-pushgateway curl openssl
tmux iproute2 python3 procps slurmctld slurmd slurm-client munge"

missing=""
for p in $PKGS; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
        missing="$missing $p"
    fi
done

if [ -z "$missing" ]; then
    exit 0
fi
if [ "${1:-}" = "--check" ]; then
    echo "missing:$missing"
    exit 1
fi

echo "colltune: installing missing packages:$missing" >&2
if [ "$(id -u)" = 0 ]; then
    SUDO=""
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    SUDO="sudo -n"
else
    echo "colltune: cannot install packages (not root, no passwordless sudo); run as root:" >&2
    echo "  apt-get install -y$missing" >&2
    exit 1
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq >&2 || true
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq --no-install-recommends $missing >&2
