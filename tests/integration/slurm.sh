#!/bin/sh
# SPDX-License-Identifier: MIT
# A Slurm of its own for the srun tests (sourced after tests/cli/lib.sh): slurmctld and
# slurmd as root, in the foreground, with a config in a folder of the test's (auth/none, no
# accounting, no cgroup tasks, ports of their own; ct_slurm_site: MUNGE and cgroup tasks,
# with a munged, a node name and cgroups of the test's), so nothing of a site's Slurm is used
# or touched. Functions:
#   ct_slurm_check            say why Slurm cannot run here (exit 1), or nothing (exit 0)
#   ct_slurm_conf DIR CTLD NODE...  write DIR/slurm.conf: slurmctld on address CTLD, each NODE
#                             "name:address:cpus"; exports SLURM_CONF
#   ct_slurm_node_dir DIR NAME  a node's own config folder (a copy of slurm.conf and
#                             cgroup.conf where there is one, and an
#                             mpi.conf giving its PMIx clients a folder of their own: nodes that
#                             share a file system would collide in /tmp)
#   ct_slurm_wait N           wait (30 s at most) until N nodes are idle; exit 1 if not
#   ct_slurm_site_check       say why a site's Slurm cannot run here (exit 1), or nothing
#   ct_slurm_site DIR         after ct_slurm_conf DIR ...: make it a site's, as most clusters
#                             run it: munged started with a key and socket of DIR's, auth and
#                             credentials by munge, processes tracked and cores confined by
#                             cgroups (v1: freezer, cpuset; ConstrainCores), each task bound to
#                             its CPUs (task/affinity); exit 1 if munged does not start
#   ct_slurm_site_stop DIR NODE...  after slurmd: kill what each NODE's steps left running,
#                             remove the cgroups Slurm made for it (slurm_NODE: give each node
#                             a name of the test's), stop that munged and wait for it
ct_slurm_check() {
    [ "$(id -u)" = 0 ] || { echo "needs root (slurmd)"; return 1; }
    for t in slurmctld slurmd srun sinfo; do
        command -v "$t" >/dev/null 2>&1 || { echo "needs Slurm's $t"; return 1; }
    done
}

ct__free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("",0)); print(s.getsockname()[1])'
}

ct_slurm_conf() {
    dir=$1 ctld=$2
    shift 2
    mkdir -p "$dir/state"
    {
        echo "ClusterName=colltune-test"
        echo "SlurmctldHost=$(hostname -s)($ctld)"
        echo "AuthType=auth/none"
        echo "CredType=cred/none"
        echo "ProctrackType=proctrack/pgid"
        echo "TaskPlugin=task/none"
        echo "SelectType=select/cons_tres"
        echo "SelectTypeParameters=CR_Core"
        echo "SlurmUser=root"
        echo "SlurmdUser=root"
        echo "SlurmctldPort=$(ct__free_port)"
        echo "SlurmdPort=$(ct__free_port)"
        echo "SlurmctldPidFile=$dir/slurmctld.pid"
        echo "SlurmdPidFile=$dir/slurmd.%n.pid"
        echo "SlurmdSpoolDir=$dir/spool.%n"
        echo "StateSaveLocation=$dir/state"
        echo "SlurmctldLogFile=$dir/slurmctld.log"
        echo "SlurmdLogFile=$dir/slurmd.%n.log"
        echo "JobAcctGatherType=jobacct_gather/none"
        echo "AccountingStorageType=accounting_storage/none"
        echo "MpiDefault=none"
        echo "ReturnToService=2"
        echo "SlurmdParameters=config_overrides"
        for nd in "$@"; do
            IFS=: read -r name addr cpus <<EOT
$nd
EOT
            mkdir -p "$dir/spool.$name"
            echo "NodeName=$name NodeAddr=$addr CPUs=$cpus State=UNKNOWN"
        done
        echo "PartitionName=test Nodes=ALL Default=YES MaxTime=10 State=UP OverSubscribe=FORCE:8"
    } >"$dir/slurm.conf"
    export SLURM_CONF="$dir/slurm.conf"
}

ct_slurm_node_dir() {
    d="$1/node.$2"
    mkdir -p "$d/pmix"
    cp "$1/slurm.conf" "$d/"
    [ ! -e "$1/cgroup.conf" ] || cp "$1/cgroup.conf" "$d/"
    echo "PMIxCliTmpDirBase=$d/pmix" >"$d/mpi.conf"
    echo "$d"
}

ct_slurm_wait() {
    i=0
    while [ "$(sinfo -h -t idle -o %D 2>/dev/null)" != "$1" ]; do
        [ $i -ge 60 ] && return 1
        sleep 0.5
        i=$((i + 1))
    done
}

ct_slurm_site_check() {
    ct_slurm_check || return 1
    for t in munged munge; do
        command -v "$t" >/dev/null 2>&1 || { echo "needs MUNGE's $t"; return 1; }
    done
    for c in cpuset freezer; do # Slurm 22.05's cgroup/v2 wants systemd to delegate to it
        d=/sys/fs/cgroup/$c/colltune-probe.$$
        mkdir "$d" 2>/dev/null && rmdir "$d" ||
            { echo "needs a writable cgroup v1 $c hierarchy (/sys/fs/cgroup/$c)"; return 1; }
    done
}

ct_slurm_site() {
    m="$1/munge"
    mkdir -p "$m" && chmod 700 "$m"
    dd if=/dev/urandom of="$m/munge.key" bs=1024 count=1 2>/dev/null && chmod 400 "$m/munge.key"
    munged --force --key-file="$m/munge.key" --socket="$m/munge.sock" --pid-file="$m/munged.pid" \
        --log-file="$m/munged.log" --seed-file="$m/seed" --num-threads=2 || return 1
    sed -i -e "s|^AuthType=.*|AuthType=auth/munge\nAuthInfo=socket=$m/munge.sock|" \
        -e 's|^CredType=.*|CredType=cred/munge|' \
        -e 's|^ProctrackType=.*|ProctrackType=proctrack/cgroup|' \
        -e 's|^TaskPlugin=.*|TaskPlugin=task/cgroup,task/affinity|' "$1/slurm.conf"
    printf '%s\n' "CgroupPlugin=cgroup/v1" "CgroupMountpoint=/sys/fs/cgroup" \
        "ConstrainCores=yes" "ConstrainRAMSpace=no" >"$1/cgroup.conf"
}

# the pids in NODE's cgroups of controller C
ct__site_procs() {
    [ -d "/sys/fs/cgroup/$1/slurm_$2" ] &&
        find "/sys/fs/cgroup/$1/slurm_$2" -name cgroup.procs -exec cat {} + 2>/dev/null
}

ct_slurm_site_stop() {
    sdir=$1
    shift
    for nd in "$@"; do
        i=0 # a step's ranks past srun's timeout, a slurmstepd tearing down: gone within 5 s
        while [ -n "$(ct__site_procs freezer "$nd")" ] && [ $i -lt 50 ]; do
            ct__site_procs freezer "$nd" | xargs -r kill -9 2>/dev/null
            sleep 0.1
            i=$((i + 1))
        done
        for c in cpuset freezer; do # the deepest first
            [ -d "/sys/fs/cgroup/$c/slurm_$nd" ] &&
                find "/sys/fs/cgroup/$c/slurm_$nd" -depth -type d -exec rmdir {} \; 2>/dev/null
        done
    done
    pid=$(cat "$sdir/munge/munged.pid" 2>/dev/null) && kill "$pid" 2>/dev/null
    i=0 # it writes its seed as it leaves
    while [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && [ $i -lt 50 ]; do
        sleep 0.1
        i=$((i + 1))
    done
    return 0
}
