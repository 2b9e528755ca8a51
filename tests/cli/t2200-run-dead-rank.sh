#!/bin/sh
# A rank killed mid-run makes the others exit non-zero within 10 s, naming the rank,
# and leaves no shared-memory objects behind.
. "$(dirname "$0")/lib.sh"
for tp in shm tcp; do
    before=$(ls /dev/shm 2>/dev/null | grep -c '^ct-' || true)
    : >"$TMP/out" # not left to the job's redirection, which may run after the wait below
    $COLLTUNE run --local 4 --transport $tp -b 64M -e 64M -n 100000 -w 0 -c 0 >"$TMP/out" 2>"$TMP/err" &
    pid=$!
    # wait for rank 1's whole header line
    i=0
    while ! grep -q "Rank  1 Group .* Pid  *[0-9][0-9]* on " "$TMP/out" 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
    victim=$(awk '/Rank  1 /{for (k = 1; k <= NF; k++) if ($k == "Pid") print $(k + 1)}' "$TMP/out")
    sleep 0.5
    if [ -z "$victim" ]; then not_ok "$tp: no pid for rank 1"; kill $pid; continue; fi
    kill -9 "$victim"
    start=$(date +%s)
    wait $pid; rc=$?
    took=$(( $(date +%s) - start ))
    if [ $rc -ne 0 ] && [ $took -le 10 ] && grep -q "rank 1" "$TMP/err"; then
        ok "$tp: exit $rc after ${took}s naming rank 1"
    else
        not_ok "$tp: exit $rc after ${took}s"; sed 's/^/#   /' "$TMP/err" | head -8
    fi
    grep -v "killed by signal" "$TMP/err" | grep -q "peer rank 1\|rank 1 (" && ok "$tp: a surviving rank names the dead peer" || { not_ok "$tp: survivors name the peer"; sed 's/^/#   /' "$TMP/err" | head -8; }
    after=$(ls /dev/shm 2>/dev/null | grep -c '^ct-' || true)
    [ "$after" -le "$before" ] && ok "$tp: no shm leftovers" || not_ok "$tp: shm leftovers: $(ls /dev/shm | grep '^ct-' | head -3)"
done
# ranks started by hand (no launcher names the first death): rank 0 names the rank killed, also
# where its own peer is one that left on it ("peer rank 1 exited" where rank 2 was killed:
# "; rank 2 (host) failed first"; 6 ranks, rank 3 killed: it named rank 2, the first word to
# come), and no line names another as failed first; with rank 0 killed, every other rank
# names it (rank 2 named rank 1). A rank stopped (SIGSTOP): no line names another rank first.
for tp in shm tcp; do
    for case in "4 2 KILL" "6 3 KILL" "4 0 KILL" "4 2 STOP" "6 3 STOP"; do
        set -- $case
        nr=$1 dead=$2 sig=$3
        [ $tp = tcp ] && [ $sig = STOP ] && continue
        p=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])')
        pids=""
        for r in $(seq 0 $((nr - 1))); do
            COLLTUNE_ROOT=127.0.0.1:$p COLLTUNE_RANK=$r COLLTUNE_SIZE=$nr $COLLTUNE run \
                --transport $tp -b 64M -e 64M -n 100000 -w 0 -c 0 --timeout 2 >"$TMP/h$r" 2>&1 &
            pids="$pids $!"
        done
        i=0
        while ! grep -q "Rank  *$((nr - 1)) Group" "$TMP/h0" 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
        sleep 0.5
        victim=$(echo $pids | cut -d' ' -f$((dead + 1)))
        kill -$sig "$victim"
        start=$(date +%s) named=0 wrong=0 lines=""
        for r in $(seq 0 $((nr - 1))); do
            [ $r = $dead ] && continue
            wait "$(echo $pids | cut -d' ' -f$((r + 1)))"
            l=$(tail -1 "$TMP/h$r")
            lines="$lines | $l"
            echo "$l" | grep -q "; rank [0-9]* (.*) failed first, as its peers found$" &&
                ! echo "$l" | grep -q "; rank $dead (.*) failed first, as its peers found$" &&
                wrong=$((wrong + 1))
            echo "$l" | grep -q "peer rank $dead (\|; rank $dead (.*) failed first" &&
                { [ $r = 0 ] || [ $dead = 0 ]; } && named=$((named + 1))
        done 2>/dev/null
        kill -9 "$victim" 2>/dev/null
        wait "$victim" 2>/dev/null
        took=$(($(date +%s) - start))
        want=1
        [ $dead = 0 ] && want=$((nr - 1))
        [ $sig = STOP ] && want=0
        [ $wrong = 0 ] && [ $named -ge $want ] && [ $took -le 10 ] &&
            ok "$tp, $nr ranks started by hand, rank $dead SIG$sig: named as it should, no other first (${took}s)" ||
            not_ok "$tp, $nr ranks, rank $dead SIG$sig: $named named, $wrong wrong after ${took}s:$lines"
    done
done
# ranks a launcher or a scheduler ends with a signal (scancel and Slurm's time limit: SIGTERM;
# mpirun passes SIGTERM) remove their shared memory: 2 ranks started by hand (COLLTUNE_ROOT), 8
# MiB buffers in /dev/shm, then SIGTERM to both (they left 6 objects, 32 MiB, before). (SIGINT
# and SIGHUP take the same path, where they are not ignored: a shell's background jobs ignore
# SIGINT, nohup SIGHUP; a bound below ends ranks that do not die of it.) SIGKILL to both (hydra
# ends a dead rank's peers so; the OOM killer): the process each rank forked at its first object
# removes what it left, once the rank is gone (they left them all before)
for sig in TERM KILL; do
    before=$(ls /dev/shm 2>/dev/null | grep -c '^ct-' || true)
    port=$((29000 + $$ % 500))
    for r in 0 1; do
        COLLTUNE_ROOT=127.0.0.1:$port COLLTUNE_RANK=$r COLLTUNE_SIZE=2 \
            $COLLTUNE run -b 8M -e 8M -n 1000000 -w 1 -c 0 >"$TMP/sig$r" 2>&1 &
        eval "p$r=\$!"
    done
    i=0
    while [ "$(ls /dev/shm 2>/dev/null | grep -c '^ct-')" -le "$before" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
    sleep 1
    during=$(ls /dev/shm 2>/dev/null | grep -c '^ct-' || true)
    kill -$sig "$p0" "$p1"
    i=0
    while kill -0 "$p0" 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
    kill -9 "$p0" "$p1" 2>/dev/null # (still running: the test fails below, it does not hang)
    { wait "$p0"; rc0=$?; wait "$p1"; } 2>/dev/null
    i=0 # (the remover runs once the rank is gone: a moment after)
    while [ "$(ls /dev/shm 2>/dev/null | grep -c '^ct-')" -gt "$before" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
    after=$(ls /dev/shm 2>/dev/null | grep -c '^ct-' || true)
    [ "$during" -gt "$before" ] && [ "$after" -le "$before" ] && [ $rc0 -gt 128 ] \
        && ok "SIG$sig to the ranks: they die of it (exit $rc0) and leave no shm objects ($during during the run)" \
        || not_ok "SIG$sig: exit $rc0, $before before, $during during, $after after: $(ls /dev/shm | grep '^ct-' | head -3)"
done
done_testing
