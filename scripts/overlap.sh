#!/bin/sh
# Run a background command at the lowest CPU priority while a foreground command runs; fail if
# either fails (the background's output, kept in LOG, is printed then). For `make test`:
# the ASan build takes the CPU the tests leave idle.
# Usage: scripts/overlap.sh LOG "BACKGROUND COMMAND" FOREGROUND COMMAND...
log=$1 bg=$2
shift 2
mkdir -p "$(dirname "$log")"
# nice 19: on a core both want, a nice-0 test gets about 98% of it. Its own process group
# (setsid does not fork here: a job of a non-interactive shell is not a group leader), so
# that stopping it stops the whole build.
setsid nice -n 19 sh -c "$bg" >"$log" 2>&1 &
bpid=$!
stop() { kill -- -$bpid 2>/dev/null || kill $bpid 2>/dev/null; }
trap 'stop; exit 130' INT TERM
"$@"
frc=$?
if [ $frc -ne 0 ]; then
    stop
    wait $bpid 2>/dev/null
    exit $frc
fi
echo "== waiting for: $bg (output in $log)"
wait $bpid
brc=$?
if [ $brc -ne 0 ]; then
    tail -40 "$log"
    echo "$bg failed (exit $brc); its output: $log"
    exit $brc
fi
