#!/bin/sh
# sweep --lib ompi's launch settings that leave Open MPI's shared-memory segment too small for
# the fragments its transport (vader) carves at MPI_Init: one line and exit 2 naming the
# segment size that holds them, for --env settings, the segment in this environment, and each
# value --env-search is given (the search passes over a value it finds itself that the
# segment does not hold); a config's settings on both sides of its verify; run's environment
# (not judged where OMPI_MCA_btl leaves vader out). The edge is Open MPI's own: with only vader and self allowed,
# an eager limit of 1 MiB in an 8 MiB segment fails in MPI_Init, and a sweep with it in a 9 MiB
# one runs; with TCP allowed, as jobs run, the 8 MiB one runs too, over TCP, without a word.
. "$(dirname "$0")/lib.sh"
here=$(cd "$(dirname "$0")" && pwd)
have() { command -v "$1" >/dev/null 2>&1; }
NAMES="settings refused|the edge is Open MPI's"
if ! have mpicc.openmpi || ! have mpirun.openmpi || ! have ompi_info; then
    skip_all "mpicc.openmpi/mpirun.openmpi/ompi_info not found"
fi
unset OMPI_MCA_btl_vader_segment_size OMPI_MCA_btl_vader_eager_limit OMPI_MCA_btl
# the sizes below are Open MPI 4.1.4's vader with its own values (CMA): not another version,
# an XPMEM build, or a site's parameter files that set others
own=$(ompi_info --parsable --level 9 --param btl vader 2>/dev/null | sed -n \
    's/^mca:btl:vader:param:btl_vader_\(segment_size\|eager_limit\|max_send_size\|max_inline_send\|free_list_num\|free_list_max\|single_copy_mechanism\):value:/\1=/p' | sort | tr '\n' ' ')
[ "$own" = "eager_limit=4096 free_list_max=512 free_list_num=8 max_inline_send=256 max_send_size=32768 segment_size=4194304 single_copy_mechanism=cma " ] \
    || skip_all "this Open MPI's vader is not 4.1.4's with its own values: $own"
EAGER=OMPI_MCA_btl_vader_eager_limit SEG=OMPI_MCA_btl_vader_segment_size
X="$COLLTUNE sweep --lib ompi --local 2 --coll allreduce -b 8 -e 8"

# sizes Open MPI takes without a word and misreads: a negative one (eager_limit=-5 gave wrong
# results and a hang), a segment past an int (refused in a box, its default used: over TCP)
usage_says "a negative eager limit" "$EAGER=-5: a negative size" -- $X --env $EAGER=-5
usage_says "a segment past 2147483647" "$SEG=5000000000: past 2147483647" -- $X --env $SEG=5000000000
usage_says "a negative eager limit in run's environment" "$EAGER=-5 (this environment's): a negative size" -- \
    env $EAGER=-5 $COLLTUNE run --lib ompi --local 2 -b 8 -e 8
usage_says "an eager limit of 1 MiB in Open MPI's own segment" \
    "--env: $EAGER=1048576: .*segment ($SEG=4194304) holds less than the first 8 fragments.* over TCP: set $SEG=9437184 beside it" -- \
    $X --env $EAGER=1048576
usage_says "in an 8 MiB segment" "$SEG=8388608: .*($SEG=8388608)" -- \
    $X --env $EAGER=1048576 --env $SEG=8388608
usage_says "the segment this environment gives the ranks" "($SEG=8388608)" -- \
    env $SEG=8388608 $X --env $EAGER=1048576
usage_says "a searched value the segment does not hold" \
    "--env-search: $EAGER=2097152: .*set $SEG=17825792 beside it" -- \
    $X --env $SEG=16777216 --env-search $EAGER=65536,2097152
usage_says "a searched max send size" "--env-search: OMPI_MCA_btl_vader_max_send_size=4194304: .*set $SEG=34603008" -- \
    $X --env-search OMPI_MCA_btl_vader_max_send_size=131072,4194304

# values the search finds itself (spaced around Open MPI's own 8: 4, 16, 32, 64) that the
# segment does not hold beside the --env setting are passed over, said, and the setting stays
$X --env $EAGER=393216 --env-search OMPI_MCA_btl_vader_free_list_num --budget 5 --out "$TMP/f" \
    >"$TMP/out" 2>"$TMP/err"
rc=$?
[ "$rc" -eq 0 ] && [ "$(grep -c '^not judged: OMPI_MCA_btl_vader_free_list_num=\(16\|32\|64\): ' "$TMP/out")" -eq 3 ] \
    && grep -q '^OMPI_MCA_btl_vader_free_list_num=4 against' "$TMP/out" \
    && tr -d ' \n' <"$TMP/f/config.json" | grep -q '"env":\[{"name":"OMPI_MCA_btl_vader_eager_limit","value":"393216"}\]' \
    && ok "the search passes over the values it finds that the segment does not hold" \
    || not_ok "search of free_list_num: exit $rc, $(grep -c 'not judged' "$TMP/out") passed over, $(tail -2 "$TMP/err")"

# Open MPI itself at that edge: the test program, the ranks' vader and self only
if ! mpicc.openmpi -O1 -o "$TMP/colls" "$here/consumers/colls.c"; then
    not_ok "mpicc.openmpi program"
    done_testing; exit
fi
RUN="mpirun.openmpi --oversubscribe -np 2"
[ "$(id -u)" = 0 ] && RUN="$RUN --allow-run-as-root"
if $RUN --mca btl self,vader --mca btl_vader_eager_limit 1048576 --mca btl_vader_segment_size 8388608 \
    "$TMP/colls" allreduce:std 8 >"$TMP/out" 2>"$TMP/err"; then
    not_ok "Open MPI's vader started with 1 MiB fragments in an 8 MiB segment"
else
    grep -q "MPI_Init" "$TMP/err" && ok "Open MPI's vader does not start in the 8 MiB segment colltune refuses: MPI_Init fails" \
        || not_ok "MPI_Init not named: $(head -3 "$TMP/err")"
fi
# (Open MPI's TCP leaves out loopback: it needs another address)
if ! ip -o -4 addr show scope global 2>/dev/null | grep -q .; then
    skip "with TCP allowed (no address but loopback here)"
else
    $RUN --mca btl_vader_eager_limit 1048576 --mca btl_vader_segment_size 8388608 \
        "$TMP/colls" allreduce:std 8 524288 >"$TMP/out" 2>"$TMP/err" && [ ! -s "$TMP/err" ] \
        && ok "with TCP allowed the job runs anyway, and says nothing" \
        || not_ok "with TCP allowed: $(head -3 "$TMP/err")"
fi
# the segment colltune names for it: vader starts there, and the sweep runs (only
# vader and self allowed between the ranks)
OMPI_MCA_btl=self,vader $X --env $EAGER=1048576 --env $SEG=9437184 --budget 5 --out "$TMP/s" \
    >"$TMP/out" 2>"$TMP/err" && [ -s "$TMP/s/config.json" ] \
    && ok "a sweep with it in a 9 MiB segment runs over vader alone" \
    || not_ok "the 9 MiB sweep: $(tail -3 "$TMP/err")"
# ... a config whose launch settings starve it: its verify is refused before any launch
if [ -s "$TMP/s/config.json" ]; then
    sed 's/"9437184"/"8388608"/' "$TMP/s/config.json" >"$TMP/bad.json"
    usage_says "a config's settings" \
        "--verify: the launch settings of '$TMP/bad.json': $SEG=8388608: .*set $SEG=9437184" -- \
        $COLLTUNE sweep --verify "$TMP/bad.json" --lib ompi --local 2
    # the segment alone in the config, the eager limit in this environment: the config's
    # side holds it, the defaults' side (the config's settings unset) would run over TCP
    python3 -c 'import json, sys; d = json.load(open(sys.argv[1]))
d["libraries"][0]["env"] = [e for e in d["libraries"][0]["env"] if "eager" not in e["name"]]
json.dump(d, open(sys.argv[2], "w"))' "$TMP/s/config.json" "$TMP/seg.json"
    usage_says "the defaults' side of a verify" \
        "--verify: beside the launch settings of '$TMP/seg.json': $EAGER=1048576 (this environment's.*($SEG=4194304)" -- \
        env $EAGER=1048576 $COLLTUNE sweep --verify "$TMP/seg.json" --lib ompi --local 2
    # ... and its export: a job sourcing it would run over TCP; refused, nothing written
    mkdir "$TMP/x"
    usage_says "the export of a config whose settings starve the segment" \
        "the config's launch settings: $SEG=8388608: .*over TCP: set $SEG=9437184" -- \
        $COLLTUNE export "$TMP/bad.json" --format ompi-rules --out "$TMP/x/r"
    [ -z "$(ls -A "$TMP/x")" ] && ok "... nothing written" || not_ok "export wrote $(ls "$TMP/x")"
    expect 0 "the export of its config with the segment that holds them" -- \
        $COLLTUNE export "$TMP/s/config.json" --format ompi-rules --out "$TMP/x/ok.rules"
fi
# ... and the environment reaches colltune's ranks: `run` (no launch settings) with vader
# starved the same way in its environment is refused too (Open MPI would fail in MPI_Init with
# vader and self alone, as above, else run over TCP); with vader left out it is not judged
usage_says "run, the environment's settings" \
    "$EAGER=1048576 (this environment's, which the ranks inherit): .*($SEG=8388608).* set $SEG=9437184 beside it" -- \
    env OMPI_MCA_btl=self,vader $EAGER=1048576 $SEG=8388608 $COLLTUNE run --lib ompi --local 2 -b 8 -e 8
if ! ip -o -4 addr show scope global 2>/dev/null | grep -q .; then
    skip "run with vader left out (no address but loopback for TCP here)"
else
    env OMPI_MCA_btl=self,tcp $EAGER=1048576 $COLLTUNE run --lib ompi --local 2 -b 8 -e 8 \
        >"$TMP/out" 2>"$TMP/err" && grep -q '^ *8 ' "$TMP/out" \
        && ok "run with vader left out (OMPI_MCA_btl=self,tcp): its sizes not judged, it runs" \
        || not_ok "run with vader left out: $(head -3 "$TMP/err")"
fi
done_testing
