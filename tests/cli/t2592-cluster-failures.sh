#!/bin/sh
# Emulated cluster (tests/integration): 4 network-namespace nodes x 2 ranks on 1 Gbit links,
# one process per rank (environment rendezvous), a long AllReduce of 64 MiB messages with
# --timeout 5. Mid-collective, a rank is killed, a node's link is taken down, or a node's
# link is throttled to 8 kbit/s: every other rank must exit with an error within the
# timeout plus 10 s, naming a peer, and leave no process and no shared memory behind.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../integration/setup.sh"
ct_setup_cluster 4 1gbit

timeout=5
bound=$((timeout + 10))
args="run --wait block --timeout $timeout --boot-timeout 30 -b 64M -e 64M -n 100000 -w 0 -c 0"

# scenario NAME VICTIM_RANKS: start, break with $inject, check the aftermath
scenario() {
    name=$1; victims=$2
    ct_shm_orphans | sort >"$TMP/shm.before"
    # shellcheck disable=SC2086
    ct_job_start env 2 "$TMP/job" $args
    sleep 2
    running=1
    for p in $JOB_PIDS; do ct__alive "$p" || running=0; done
    if [ $running = 0 ]; then
        ct_job_wait 5
        not_ok "$name: the job was not running when the fault came"; ct_job_diag 3
        return
    fi
    t0=$(ct__now)
    eval "$inject"
    ct_job_wait 60
    took=$(awk -v t="$t0" -v n="$(ct__now)" 'BEGIN { printf "%.1f", n - t }')
    # every rank but the victims failed, within the bound
    r=0 bad=""
    for code in $JOB_CODES; do
        case " $victims " in *" $r "*) ;; *) [ "$code" -eq 0 ] && bad="$bad $r" ;; esac
        r=$((r + 1))
    done
    if [ "$JOB_KILLED" = 0 ] && [ -z "$bad" ] &&
        awk -v t="$took" -v b=$bound 'BEGIN { exit !(t <= b) }'; then
        ok "$name: every other rank exited with an error ${took}s after the fault (bound ${bound}s)"
    else
        killed=""
        [ "$JOB_KILLED" = 1 ] && killed=", had to be killed"
        not_ok "$name: exit codes$JOB_CODES after ${took}s$killed${bad:+, rank$bad succeeded}"
        ct_job_diag 2
    fi
    # each survivor's error names a peer rank and its host
    r=0 silent=""
    for code in $JOB_CODES; do
        case " $victims " in
        *" $r "*) ;;
        *) grep -q "error: rank $r (.*peer rank [0-9]* ($CT_NET-node[0-9])" "$JOB_DIR/$r.out" ||
            silent="$silent $r" ;;
        esac
        r=$((r + 1))
    done
    if [ -z "$silent" ] && cat "$JOB_DIR"/*.out | grep -q "$named"; then
        ok "$name: every surviving rank names the peer it lost; '$named' is named"
    else
        not_ok "$name: rank$silent name no peer, or nobody names '$named'"; ct_job_diag 2
    fi
    left=$(ct_cluster_pids)
    [ -z "$left" ] && ok "$name: no process left" || not_ok "$name: processes left: $left"
    ct_shm_orphans | sort >"$TMP/shm.after"
    new=$(comm -13 "$TMP/shm.before" "$TMP/shm.after")
    [ -z "$new" ] && ok "$name: no shared memory left in /dev/shm" ||
        not_ok "$name: left in /dev/shm: $(echo $new | head -c 200)"
}

inject='kill -9 $(ct_job_rank_pid 5)'
named="peer rank 5 ($CT_NET-node2)"
scenario "rank 5 killed" 5

inject='ct_node_link 2 down'
named="peer rank [45] ($CT_NET-node2)"
scenario "node 2's link down" ""
ct_node_link 2 up

inject='ct_node_shape 2 8kbit'
scenario "node 2's link throttled to 8 kbit/s" ""
ct_node_shape 2 1gbit
done_testing
