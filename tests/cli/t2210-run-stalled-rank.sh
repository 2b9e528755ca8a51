#!/bin/sh
# A stopped (SIGSTOP) rank: every rank is gone within 10 s after --timeout expires, the
# run exits 1 and names the stalled rank (16 MiB messages, and 8 B ones: the executor's
# small-message path; symm: the waiting ranks sit at a fence; oneshot: at a mailbox); after
# kill -9 of any rank (first, middle, last) no rank process and no /dev/shm object of the job is left.
. "$(dirname "$0")/lib.sh"

# pid_of RANK: the pid of RANK from the run header in $TMP/out (waits for its whole line).
# The caller empties $TMP/out before starting the job: the job's own redirection truncates
# it only once its shell child runs, and a busy machine can run pid_of first, which then
# read the previous job's header and no pid.
pid_of() {
    i=0
    while ! grep -q "Rank  *$1 Group .* Pid  *[0-9][0-9]* on " "$TMP/out" 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
    awk -v r="$1" '$1 == "#" && $2 == "Rank" && $3 == r {for (k = 1; k <= NF; k++) if ($k == "Pid") print $(k + 1)}' "$TMP/out"
}
# pids_of: every rank pid in $TMP/out
pids_of() {
    awk '$1 == "#" && $2 == "Rank" {for (k = 1; k <= NF; k++) if ($k == "Pid") print $(k + 1)}' "$TMP/out"
}
shm_count() { ls /dev/shm 2>/dev/null | grep -c '^ct-' || true; }
alive() { for p in "$@"; do kill -0 "$p" 2>/dev/null && echo "$p"; done; }

TO=3
for cs in 2:16M:16M:ring 4:16M:16M:ring 2:8:1K:ring 3:8:1M:symm 3:8:1K:oneshot; do
    algo=${cs##*:} cs=${cs%:*}
    nr=${cs%%:*} b=${cs#*:} e=${cs##*:} b=${b%:*}
    before=$(shm_count)
    : >"$TMP/out"
    $COLLTUNE run --local $nr --transport shm --algo $algo --timeout $TO -b $b -e $e -n 1000000 \
        -w 1000000 -c 0 >"$TMP/out" 2>"$TMP/err" &
    pid=$!
    victim=$(pid_of 1)
    if [ -z "$victim" ]; then not_ok "$nr ranks, $algo $b..$e: no pid for rank 1"; kill $pid; wait $pid; continue; fi
    all=$(pids_of)
    sleep 0.5
    kill -STOP "$victim"
    start=$(date +%s)
    wait $pid; rc=$?
    took=$(( $(date +%s) - start ))
    limit=$((TO + 10))
    if [ $rc -eq 1 ] && [ $took -le $limit ]; then
        ok "$nr ranks, $algo $b..$e, rank 1 stopped, --timeout $TO: exit 1 after ${took}s (limit ${limit}s)"
    else
        not_ok "$nr ranks, $algo $b..$e, rank 1 stopped: exit $rc after ${took}s (limit ${limit}s)"; sed 's/^/#   /' "$TMP/err" | head -8
    fi
    grep -q "rank 1 (\|rank 1 is stopped" "$TMP/err" && ok "$nr ranks, $algo $b..$e: the stalled rank 1 is named" \
        || { not_ok "$nr ranks, $algo $b..$e: stalled rank not named"; sed 's/^/#   /' "$TMP/err" | head -8; }
    # also where the stop lands inside the bootstrap's exchange between sizes (a narrow window
    # at 8 B, where a million iterations take well under a second on a fast CPU): the
    # bootstrap says a stall in the same words
    grep -q "no progress for $TO.0 s .* peer rank 1" "$TMP/err" && ok "$nr ranks, $algo $b..$e: a waiting rank reports the stall on rank 1" \
        || { not_ok "$nr ranks, $algo $b..$e: no stall report"; sed 's/^/#   /' "$TMP/err" | head -8; }
    sleep 0.2
    left=$(alive $all)
    [ -z "$left" ] && ok "$nr ranks, $algo $b..$e: no rank process left" || { not_ok "$nr ranks, $algo $b..$e: orphans $left"; kill -9 $left; }
    [ "$(shm_count)" -le "$before" ] && ok "$nr ranks, $algo $b..$e: no /dev/shm leftovers" || not_ok "$nr ranks, $algo $b..$e: /dev/shm leftovers: $(ls /dev/shm | grep '^ct-' | head -3)"
done

for r in 0 2 3; do
    before=$(shm_count)
    : >"$TMP/out"
    $COLLTUNE run --local 4 --transport shm -b 16M -e 16M -n 1000000 -w 0 -c 0 >"$TMP/out" 2>"$TMP/err" &
    pid=$!
    victim=$(pid_of $r)
    if [ -z "$victim" ]; then not_ok "kill -9 rank $r: no pid"; kill $pid; wait $pid; continue; fi
    all=$(pids_of)
    sleep 0.5
    kill -9 "$victim"
    wait $pid; rc=$?
    sleep 0.2
    left=$(alive $all)
    [ $rc -ne 0 ] && [ -z "$left" ] && ok "kill -9 rank $r: exit $rc, no rank process left" \
        || { not_ok "kill -9 rank $r: exit $rc, left: $left"; [ -n "$left" ] && kill -9 $left; }
    [ "$(shm_count)" -le "$before" ] && ok "kill -9 rank $r: no /dev/shm leftovers" || not_ok "kill -9 rank $r: /dev/shm leftovers"
done
done_testing
