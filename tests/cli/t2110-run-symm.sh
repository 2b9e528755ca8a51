#!/bin/sh
# symm, the one-sided algorithm over shared memory: every collective verified on 1-5 ranks
# (oversubscribed past the 2 cores), in and out of place, several types and ops; refused with
# one line where it cannot run (tcp, private buffers, as a hier sub-algorithm).
. "$(dirname "$0")/lib.sh"

every_coll symm 5 -b 8 -e 2M -f 16

# refusals: one line each, naming why
usage_error "tcp has no shared memory" -- $COLLTUNE run --local 2 --transport tcp --algo symm -b 8 -e 64
[ ! -s "$TMP/out" ] && ok "tcp: nothing on stdout" || not_ok "tcp: stdout has $(wc -l <"$TMP/out") lines"
grep -q "needs shared memory, and transport tcp has none" "$TMP/err" && ok "the tcp refusal says why" ||
    { not_ok "tcp refusal"; sed 's/^/#   /' "$TMP/err"; }
COLLTUNE_SHM_UNREGISTERED=1 $COLLTUNE run --local 2 --algo symm -b 8 -e 8 >"$TMP/out" 2>"$TMP/err"
rc=$?
[ $rc -eq 2 ] && grep -q "needs the buffers in shared memory" "$TMP/err" &&
    ok "private buffers (COLLTUNE_SHM_UNREGISTERED): exit 2, says why" ||
    { not_ok "private buffers: exit $rc"; sed 's/^/#   /' "$TMP/err"; }
usage_error "hier cannot compose symm" -- $COLLTUNE run --local 4 --algo hier --intra symm -b 8 -e 8
done_testing
