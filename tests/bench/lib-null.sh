#!/bin/sh
# Verify's false alarms, measured (a benchmark, not a test): a launch setting that changes
# nothing, Open MPI's vader eager limit set to the value the library itself reports
# (ompi_info), judged by `sweep --verify` against the plain defaults, BENCH_NULL_REPS times
# (default 8) in fresh launches each. Both sides run the same code, so every "slower" verdict
# is a false alarm and every gain a false one: what verify's intervals, its second measure in
# fresh launches and its 3% bound let through on this machine. Prints per verify the sizes
# judged (each table's rows), those flagged slower in the first measure, those slower again in
# fresh launches (counted), whether the first measure read a gain (measured again), the
# verdict; then the totals, and the median half-width of the sizes' 95% intervals in the first
# measures (up to 32 KiB, and above): the smallest change verify can tell from the launches'
# noise here, and the median of the verifies' "what it can tell" (the loss at a size a
# first measure's interval shows about half the time, over the sizes) with each verify's
# time: what more pairs
# buy (BENCH_NULL_PAIRS=N: verify --pairs N; default 3). It does not pass or fail on them.
# BENCH_LIB: ompi only (MPICH's variables have no null value read back the same way);
# BENCH_SHAPE: how the ranks are placed (default "--local 2"); BENCH_NULL_COLL: the
# collectives (default allreduce; a comma list); 8 B..128 MiB x16, float32 sum.
# Usage: tests/bench/lib-null.sh [OUTDIR]
set -eu
cd "$(dirname "$0")/../.."
out=${1:-build/bench-null}
SHAPE=${BENCH_SHAPE:---local 2}
REPS=${BENCH_NULL_REPS:-8}
COLL=${BENCH_NULL_COLL:-allreduce}
PAIRS=${BENCH_NULL_PAIRS:-}
X=./colltune
[ "${BENCH_LIB:-ompi}" = ompi ] || { echo "verify null: skipped (Open MPI only)"; exit 0; }
info=$(command -v ompi_info.openmpi || command -v ompi_info || true)
[ -n "$info" ] || { echo "verify null: skipped (no ompi_info: Open MPI is not installed)"; exit 0; }
[ -e build/ct-lib-ompi.so ] || { echo "verify null: skipped (no build/ct-lib-ompi.so)"; exit 0; }
name=btl_vader_eager_limit
case $("$info" --version 2>/dev/null | head -1) in
*" v5."* | *" 5."*) name=btl_sm_eager_limit ;;
esac
val=$("$info" --param btl all --level 9 --parsable 2>/dev/null |
    sed -n "s/^mca:btl:[a-z]*:param:$name:value:\(.*\)$/\1/p" | head -1)
[ -n "$val" ] || { echo "verify null: skipped ($info reports no $name)"; exit 0; }
mkdir -p "$out"
rm -rf "$out"/config*.json "$out/sweep"
# shellcheck disable=SC2086 # SHAPE is flags
$X sweep --lib ompi $SHAPE --coll "$COLL" -b 8 -e 128M -f 16 --env "OMPI_MCA_$name=$val" \
    --budget 300 --out "$out/sweep" > "$out/sweep.txt" 2>&1 ||
    { echo "verify null: the sweep failed (exit $?; $out/sweep.txt)"; exit 1; }
cp "$out/sweep/config.json" "$out/config.json"
echo "verify null: OMPI_MCA_$name=$val (Open MPI's own value) against the plain defaults,"
echo "  $COLL, $SHAPE, $REPS verifies in fresh launches (a false alarm is any 'slower'),"
echo "  ${PAIRS:-3} pairs at every size"
printf "%6s %6s %14s %13s %11s %6s %5s  %s\n" verify sizes "slower first" "slower again" \
    "gain first" tells s verdict
r=1 n=0 f1=0 f2=0 g1=0 slow=0 gain=0
rm -f "$out/tells.txt"
touch "$out/tells.txt"
while [ "$r" -le "$REPS" ]; do
    rm -f "$out/config.verified.json"
    code=0 t0=$(date +%s)
    # shellcheck disable=SC2086
    $X sweep --verify "$out/config.json" --lib ompi $SHAPE ${PAIRS:+--pairs $PAIRS} \
        > "$out/verify-$r.txt" 2>&1 || code=$?
    v=$out/verify-$r.txt secs=$(($(date +%s) - t0))
    # the first measure's resolution: the least loss at a size its verdict would have found
    tell=$(sed -n 's/^  what it can tell: at the pairs each size took, a loss of \([0-9.]*\)x.*/\1/p' "$v" | head -1)
    # the settings' tables: their size rows (each size judged once per collective)
    sz=$(awk '/exported vs defaults in/ {t = 1; next} t && /^ +[0-9]+ / {n++} /: geomean / {t = 0} END {print n + 0}' "$v")
    a1=$(grep -o ' [0-9.]*[KMG]*i*B [0-9.]* \[[0-9.]*, [0-9.]*\]\( vs ctl [^;]*\)\? [0-9]* pairs\( SLOWER\)\?;' "$v" | wc -l)
    a2=$(grep -o ' pairs SLOWER;' "$v" | wc -l)
    b1=$(grep -c 'rounds: faster: measured again' "$v" || true)
    if grep -q 'launch settings (slower than the defaults' "$v"; then
        verdict="slower (a false alarm)" slow=$((slow + 1))
    elif grep -q 'launch settings (no gain shown' "$v"; then
        verdict="no gain shown (right)"
    elif [ "$code" = 0 ]; then
        verdict="kept: a gain (a false one)" gain=$((gain + 1))
    else
        verdict="exit $code (see $v)"
    fi
    printf "%6d %6d %14d %13d %11d %6s %5d  %s\n" "$r" "$sz" "$a1" "$a2" "$b1" "${tell:--}" \
        "$secs" "$verdict"
    [ -z "$tell" ] || echo "$tell $secs" >> "$out/tells.txt"
    n=$((n + sz)) f1=$((f1 + a1)) f2=$((f2 + a2)) g1=$((g1 + b1))
    r=$((r + 1))
done
echo "verify null: $n sizes judged; flagged slower in the first measure $f1, slower again in"
echo "  fresh launches $f2; a gain read in the first measure $g1 of $REPS, shown again $gain;"
echo "  verdicts: $slow of $REPS slower (false alarms), $gain of $REPS a gain (false)"
# the first table of each verify: a size's interval [lo, hi] about its ratio, as +-% of it
for r in $(seq 1 "$REPS"); do
    awk '/exported vs defaults in alternating/ {t = 1; next}
         t && /^ +[0-9]+ / && match($0, /[0-9.]+ +\[[0-9.]+, [0-9.]+\]/) {
             split(substr($0, RSTART, RLENGTH), q, /[][, ]+/); print $1, 100 * (q[3] / q[1] - 1)}
         /: geomean / {t = 0}' \
        "$out/verify-$r.txt"
done | sort -n -k2 | awk '
    $1 <= 32768 {s[++ns] = $2} $1 > 32768 {l[++nl] = $2}
    END {printf "verify null: the 95%% intervals (first measures) reach +%.0f%% up to 32 KiB (median of %d), +%.0f%% above (median of %d)\n",
         ns ? (s[int((ns + 1) / 2)] + s[int(ns / 2) + 1]) / 2 : 0, ns,
         nl ? (l[int((nl + 1) / 2)] + l[int(nl / 2) + 1]) / 2 : 0, nl}'
sort -n "$out/tells.txt" | awk -v p="${PAIRS:-3}" '{t[++n] = $1; s += $2}
    END {printf "verify null: what it can tell, %d pairs: a loss of %.3fx shows about half the time (the median of %d verifies; %.3f-%.3f), %.0f s a verify\n",
         p, n ? (t[int((n + 1) / 2)] + t[int(n / 2) + 1]) / 2 : 0, n, n ? t[1] : 0, n ? t[n] : 0, n ? s / n : 0}'
