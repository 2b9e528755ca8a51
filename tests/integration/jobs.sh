#!/bin/sh
# SPDX-License-Identifier: MIT
# Starting colltune jobs on the emulated cluster (cluster.sh, already up with CT_NODES
# nodes), through three launchers:
#   env    one process per rank, COLLTUNE_ROOT=<node 0>:<port> COLLTUNE_RANK/SIZE
#   local  one `colltune run --local PER` per node with COLLTUNE_NNODES/COLLTUNE_NODE_RANK
#   hydra  MPICH's mpiexec.hydra (PMI-1 over PMI_FD); a wrapper puts rank r on node r/PER
# Functions:
#   ct_job_start METHOD PER DIR ARGS...  start `$COLLTUNE ARGS...` in the background
#   ct_job_wait SECS                     wait; after SECS kill whatever is left in the cluster
#                                        sets JOB_RC (worst exit code), JOB_CODES (each
#                                        process's, in start order), JOB_SECS, JOB_KILLED
#   ct_job METHOD PER DIR SECS ARGS...   both; rank 0's output is in $JOB_OUT
#   ct_job_rank_pid R                    pid of rank R (env method)
#   ct_busbw FILE                        the "Avg bus bandwidth" of a run's output
#   ct_hydra                             the hydra mpiexec (empty if none)
# Outputs: DIR/<rank>.out (env, hydra) or DIR/node<k>.out (local; rank 0 is on node 0).

CT_PORT=${CT_PORT:-29400}

ct_hydra() {
    for h in mpiexec.hydra mpiexec.mpich; do
        command -v "$h" >/dev/null 2>&1 && { command -v "$h"; return; }
    done
}

ct__now() { date +%s.%N; }
ct__alive() {
    s=$(sed 's/^.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f1)
    [ -n "$s" ] && [ "$s" != Z ]
}

ct_job_start() {
    method=$1; per=$2; JOB_DIR=$3; shift 3
    mkdir -p "$JOB_DIR"
    rm -f "$JOB_DIR"/*.out
    CT_PORT=$((CT_PORT + 1))
    size=$((CT_NODES * per))
    root="$(ct_node_ip 0):$CT_PORT"
    JOB_PIDS=""
    JOB_T0=$(ct__now)
    case $method in
    env)
        r=0
        while [ $r -lt $size ]; do
            COLLTUNE_ROOT=$root COLLTUNE_RANK=$r COLLTUNE_SIZE=$size \
                ct_node_spawn $((r / per)) "$COLLTUNE" "$@" >"$JOB_DIR/$r.out" 2>&1
            JOB_PIDS="$JOB_PIDS $!"
            eval "JOB_RANK_$r=$!"
            r=$((r + 1))
        done
        JOB_OUT="$JOB_DIR/0.out"
        ;;
    local)
        k=0
        while [ $k -lt "$CT_NODES" ]; do
            COLLTUNE_ROOT=$root COLLTUNE_NNODES=$CT_NODES COLLTUNE_NODE_RANK=$k \
                ct_node_spawn $k "$COLLTUNE" "$@" --local "$per" >"$JOB_DIR/node$k.out" 2>&1
            JOB_PIDS="$JOB_PIDS $!"
            k=$((k + 1))
        done
        JOB_OUT="$JOB_DIR/node0.out"
        ;;
    hydra)
        w="$JOB_DIR/rank.sh"
        cat >"$w" <<EOF
#!/bin/sh
# one hydra rank: into its node, output to its file
CT_NET=$CT_NET
. "$CT_INTEGRATION/cluster.sh"
exec >"$JOB_DIR/\$PMI_RANK.out" 2>&1
ct_node_exec \$((PMI_RANK / $per)) "\$@"
EOF
        "$(ct_hydra)" -n "$size" sh "$w" "$COLLTUNE" "$@" >"$JOB_DIR/hydra.log" 2>&1 &
        JOB_PIDS="$!"
        JOB_OUT="$JOB_DIR/0.out"
        ;;
    *) echo "ct_job_start: unknown method '$method'" >&2; return 2 ;;
    esac
}

ct_job_rank_pid() { eval "echo \$JOB_RANK_$1"; }

ct_job_wait() {
    limit=$1
    JOB_KILLED=0
    # a watchdog sleeps out what is left of SECS (from the start) and kills the job; this
    # shell waits on the processes themselves (no polling to take the job's CPU). It is
    # stopped, its sleep killed, then itself, with signals no trap takes (setup.sh traps TERM)
    left=$(awk -v t="$JOB_T0" -v s="$limit" -v n="$(ct__now)" 'BEGIN { x = t + s - n; printf "%.3f", (x > 0 ? x : 0) }')
    rm -f "$JOB_DIR/.killed"
    (
        sleep "$left"
        : >"$JOB_DIR/.killed"
        for p in $JOB_PIDS $(ct_cluster_pids); do kill -9 "$p" 2>/dev/null; done
    ) &
    wd=$!
    JOB_RC=0
    JOB_CODES=""
    for p in $JOB_PIDS; do
        wait "$p"; rc=$?
        [ $rc -gt $JOB_RC ] && JOB_RC=$rc
        JOB_CODES="$JOB_CODES $rc"
    done
    kill -STOP "$wd" 2>/dev/null
    pkill -KILL -P "$wd" 2>/dev/null
    kill -KILL "$wd" 2>/dev/null
    wait "$wd" 2>/dev/null
    [ -e "$JOB_DIR/.killed" ] && JOB_KILLED=1
    rm -f "$JOB_DIR/.killed"
    JOB_SECS=$(awk -v t="$JOB_T0" -v n="$(ct__now)" 'BEGIN { printf "%.1f", n - t }')
}

ct_job() {
    m=$1; per=$2; d=$3; secs=$4; shift 4
    ct_job_start "$m" "$per" "$d" "$@" && ct_job_wait "$secs"
}

ct_busbw() {
    awk '/^# Avg bus bandwidth/ { print $NF }' "$1"
}
