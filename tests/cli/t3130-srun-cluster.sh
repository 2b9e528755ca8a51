#!/bin/sh
# srun across hosts: a Slurm of 4 nodes on the emulated cluster (4 network-namespace hosts,
# 1 Gbit links, tests/integration), one slurmd in each (its own host name, address and
# cgroup mounts; its PMIx clients in a folder of its own), slurmctld on this host's address
# on the cluster's bridge. srun -N 4 starts one rank per node: colltune's own engine over
# tcp between the hosts (srun --mpi=pmix; the shaped links carry the traffic), Open MPI's
# (--mpi=pmix) and MPICH's (--mpi=pmi2), results checked. Where MUNGE and writable cgroup v1
# hierarchies are there, the Slurm is a site's (tests/integration/slurm.sh, ct_slurm_site):
# credentials by MUNGE (one munged: the hosts share its socket's file system), every node's
# steps tracked and confined by cgroups of its own, each task bound to its node's 2 CPUs;
# else the plain one, and the site's check is skipped, saying why. Skips without root,
# namespaces or Slurm.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../integration/slurm.sh"
if ! why=$(ct_slurm_check); then
    for c in "a site's steps" "srun -N 4: run" "its results" "the links carried it" "run --lib ompi" \
        "its results" "run --lib mpich" "its results"; do
        skip "$c ($why)"
    done
    done_testing
    exit
fi
. "$(dirname "$0")/../integration/setup.sh"
ct_setup_cluster 4 1gbit
head_ip=$(ct_cluster_head) || not_ok "this host's address on the cluster's bridge"
S="$TMP/slurm"
ct_slurm_conf "$S" "$head_ip" "$CT_NET-node0:$(ct_node_ip 0):2" "$CT_NET-node1:$(ct_node_ip 1):2" \
    "$CT_NET-node2:$(ct_node_ip 2):2" "$CT_NET-node3:$(ct_node_ip 3):2"
ctld= site=
nodes="$CT_NET-node0 $CT_NET-node1 $CT_NET-node2 $CT_NET-node3"
# (the slurmds go with the cluster's namespaces; then their steps' cgroups, then munged)
trap 'kill $ctld 2>/dev/null; wait $ctld 2>/dev/null; ct_cluster_down; [ -z "$site" ] || ct_slurm_site_stop "$S" $nodes; rm -rf "$TMP"' EXIT
if no_site=$(ct_slurm_site_check); then
    site=1
    ct_slurm_site "$S" || { not_ok "munged did not start: $(tail -2 "$S/munge/munged.log")"; done_testing; exit; }
fi
slurmctld -D -f "$SLURM_CONF" >"$S/ctld.out" 2>&1 &
ctld=$!
# a node's slurmd: the cgroup v1 hierarchies it looks for, in the node's own mounts
cat >"$S/node.sh" <<'EOT'
#!/bin/sh
mount -t tmpfs cgroup_root /sys/fs/cgroup || exit 1
for c in cpu cpuacct cpuset memory devices freezer blkio pids; do
    mkdir -p /sys/fs/cgroup/$c && mount -t cgroup -o $c cgroup /sys/fs/cgroup/$c || exit 1
done
mkdir -p /sys/fs/cgroup/systemd && mount -t cgroup -o none,name=systemd cgroup /sys/fs/cgroup/systemd || exit 1
exec slurmd -D -f "$1"
EOT
chmod +x "$S/node.sh"
for k in 0 1 2 3; do
    d=$(ct_slurm_node_dir "$S" "$CT_NET-node$k")
    ct_node_spawn $k "$S/node.sh" "$d/slurm.conf" >"$S/slurmd$k.out" 2>&1
done
if ! ct_slurm_wait 4; then
    not_ok "Slurm's 4 nodes did not come up in 30 s: $(sinfo -h 2>&1 | tr '\n' ' ') $(tail -2 "$S/slurmd0.out" | tr '\n' ' ')"
    done_testing
    exit
fi
SR="timeout 180 srun -N 4 -n 4 -c 2"
results_ok() { grep -q "Out of bounds values : 0 OK" "$TMP/out" && ok "$1" || not_ok "$1: $(tail -3 "$TMP/out")"; }

# a site's: each node's task in that node's step cgroups, bound to the node's 2 CPUs
if [ -n "$site" ]; then
    $SR sh -c 'echo "$(hostname) $(grep -E "^[0-9]+:(cpuset|freezer):" /proc/self/cgroup | cut -d: -f3 | sort -u | tr "\n" " ")$(taskset -pc $$ | sed "s/.*: //")"' >"$TMP/out" 2>&1
    placed=0
    for nd in $nodes; do
        grep -Eq "^$nd /slurm_$nd/uid_0/job_[0-9]*/step_0 (0-1|0,1)\$" "$TMP/out" && placed=$((placed + 1))
    done
    [ "$placed" = 4 ] && ok "a site's steps: each node's task in its own node's cpuset and freezer cgroups (MUNGE credentials)" \
        || not_ok "a site's steps: $(cat "$TMP/out")"
else
    skip "a site's steps ($no_site)"
fi
tx() {
    for k in 0 1 2 3; do
        ip netns exec "${CT_NET}n$k" cat /sys/class/net/eth0/statistics/tx_bytes
    done | tr '\n' ' '
}

before=$(tx)
expect 0 "srun -N 4 --mpi=pmix: run, one rank per node" -- $SR --mpi=pmix $COLLTUNE run -e 1M
results_ok "its results"
after=$(tx)
moved=$(echo "$before $after" | awk '{ m = 1e18; for (k = 1; k <= 4; k++) { d = $(k + 4) - $k; if (d < m) m = d } print m }')
[ "$moved" -gt 2000000 ] && ok "the links carried it: every node's eth0 sent $moved bytes or more" \
    || not_ok "eth0 counters: before $before after $after"
# the libraries' own engines, one rank per node (UCX over tcp: the "hosts" share /dev/shm)
export UCX_TLS=tcp,self OMPI_MCA_mpi_yield_when_idle=1
# (--timeout 5: a rank left blocked in the library by a peer's crash, or in a stuck
# MPI_Finalize, leaves after 5 s, and a failure's whole stderr is kept. Open MPI 4.1's TCP
# BTL, when its connection wave meets a loaded machine, reports "failed to TCP connect to
# a peer MPI process ... Operation now in progress (115)" and a rank may then crash at a
# null address: 1 run in 25 with two CPU burners beside it, once in a CI run, none in 48
# other runs; its maintainers put it down to timeouts outside Open MPI,
# open-mpi/ompi#11508. That failure, and only that one, is said and run again once.)
lib_run() {
    desc=$1
    shift
    "$@" >"$TMP/out" 2>"$TMP/err"
    rc=$?
    if [ $rc -ne 0 ] && grep -q "failed to TCP connect to a peer MPI process" "$TMP/err"; then
        echo "# $desc: Open MPI's TCP connection wave failed (exit $rc; open-mpi/ompi#11508): once more"
        "$@" >"$TMP/out" 2>"$TMP/err"
        rc=$?
    fi
    [ $rc -eq 0 ] && ok "$desc" || { not_ok "$desc (exit $rc)"; sed 's/^/#   /' "$TMP/err" | head -40; }
}
lib_run "run --lib ompi (srun --mpi=pmix)" $SR --mpi=pmix $COLLTUNE run --lib ompi -e 64K --timeout 5
grep -q "ompi:default" "$TMP/out" && results_ok "its results: Open MPI's across 4 nodes, checked" \
    || not_ok "Open MPI's rows: $(tail -3 "$TMP/out")"
lib_run "run --lib mpich (srun --mpi=pmi2)" $SR --mpi=pmi2 $COLLTUNE run --lib mpich -e 64K --timeout 5
grep -q "mpich:default" "$TMP/out" && results_ok "its results: MPICH's across 4 nodes, checked" \
    || not_ok "MPICH's rows: $(tail -3 "$TMP/out")"
done_testing
