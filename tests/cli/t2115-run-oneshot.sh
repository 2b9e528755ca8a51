#!/bin/sh
# oneshot, small collectives through a mailbox over shared memory: every collective verified
# on 1-5 ranks (oversubscribed past the 2 cores), in and out of place, several types and ops,
# also with private buffers (the publish is a copy); refused with one line where it cannot run
# (tcp, above the mailbox's 16 KiB, across nodes, as a hier sub-algorithm).
. "$(dirname "$0")/lib.sh"

every_coll oneshot 5 -b 8 -e 2K -f 4

COLLTUNE_SHM_UNREGISTERED=1 $COLLTUNE run --local 3 --algo oneshot -b 8 -e 16K -f 2 -n 3 -w 1 >"$TMP/out" 2>"$TMP/err"
rc=$?
wrong=$(awk '!/^#/ { w += $10 + $14 } END { print w + 0 }' "$TMP/out")
[ $rc -eq 0 ] && [ "$wrong" = 0 ] && [ "$(grep -vc '^#' "$TMP/out")" -eq 12 ] &&
    ok "private buffers (COLLTUNE_SHM_UNREGISTERED): 8 B..16 KiB run, #wrong 0" ||
    { not_ok "private buffers: exit $rc, $wrong wrong"; sed 's/^/#   /' "$TMP/err"; }

# refusals: one line each (rank 0's), naming why, before anything runs or prints
nothing_printed() { [ ! -s "$TMP/out" ] && ok "$1: nothing on stdout" || not_ok "$1: stdout has $(wc -l <"$TMP/out") lines"; }
usage_error "tcp has no shared memory" -- $COLLTUNE run --local 2 --transport tcp --algo oneshot -b 8 -e 64
nothing_printed "tcp"
grep -q "a mailbox needs shared memory, and transport tcp has none" "$TMP/err" && ok "the tcp refusal says why" ||
    { not_ok "tcp refusal"; sed 's/^/#   /' "$TMP/err"; }
usage_error "above the mailbox" -- $COLLTUNE run --local 2 --algo oneshot -b 32K -e 32K
grep -q "oneshot publishes the input, 32768 bytes here, into a mailbox of 16384" "$TMP/err" &&
    ok "the size refusal says why" || { not_ok "size refusal"; sed 's/^/#   /' "$TMP/err"; }
# a range crossing the mailbox: refused whole, not run up to 16 KiB first
usage_error "a range past the mailbox" -- $COLLTUNE run --local 2 --algo oneshot -b 8 -e 64K
nothing_printed "a range past the mailbox"
grep -q "allreduce 32768 bytes: oneshot publishes the input" "$TMP/err" &&
    ok "the range refusal names the first size" || { not_ok "range refusal"; sed 's/^/#   /' "$TMP/err"; }
# the size a refusal names is the one its row would show: AllToAll on 3 ranks takes whole
# elements per rank (32 KiB is 32760 B), where it named 32768
usage_error "alltoall on 3 ranks past the mailbox" -- $COLLTUNE run --local 3 --coll alltoall --algo oneshot -b 16K -e 64K -f 2
grep -q "alltoall 32760 bytes: oneshot publishes the input, 32760 bytes here" "$TMP/err" &&
    ok "names the size as its row would show it" || { not_ok "size named"; sed 's/^/#   /' "$TMP/err"; }
expect 2 "two virtual nodes" -- $COLLTUNE run --local 4 --ranks-per-node 2 --algo oneshot -b 8 -e 8
grep -q "oneshot reaches into its peers' memory: one node only (2 nodes here)" "$TMP/err" &&
    ok "the node refusal says why" || { not_ok "node refusal"; sed 's/^/#   /' "$TMP/err"; }
usage_error "hier cannot compose oneshot" -- $COLLTUNE run --local 4 --algo hier --intra oneshot -b 8 -e 8
done_testing
