# TAP helpers for CLI tests. $COLLTUNE is the binary under test.
n=0
fails=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
not_ok() { n=$((n + 1)); fails=$((fails + 1)); echo "not ok $n - $*"; }
skip() { n=$((n + 1)); echo "ok $n - $* # SKIP"; }
done_testing() { echo "1..$n"; [ "$fails" -eq 0 ]; }
# skip_all WHY: each of $NAMES ("a|b|...") skipped for WHY, and the test ends
skip_all() {
    IFS='|'
    for c in $NAMES; do
        skip "$c ($1)"
    done
    done_testing
    exit
}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# expect CODE DESC -- command...: exit code must be CODE
expect() {
    code=$1; desc=$2; shift 3
    "$@" >"$TMP/out" 2>"$TMP/err"; rc=$?
    if [ "$rc" -eq "$code" ]; then ok "$desc"; else
        not_ok "$desc (exit $rc, wanted $code)"; sed 's/^/#   /' "$TMP/err" | head -5; fi
}

# usage_error DESC -- command...: exit 2 and exactly one line on stderr naming the error
usage_error() {
    desc=$1; shift 2
    usage_says "$desc" "" -- "$@"
}

# usage_says DESC TEXT -- command...: the same, and that line says TEXT (a grep pattern)
usage_says() {
    desc=$1 want=$2; shift 3
    "$@" >"$TMP/out" 2>"$TMP/err"; rc=$?
    lines=$(wc -l <"$TMP/err")
    if [ "$rc" -eq 2 ] && [ "$lines" -eq 1 ] && grep -q "error:.*$want" "$TMP/err"; then
        ok "$desc: $(cat "$TMP/err")"
    else
        not_ok "$desc (exit $rc, $lines stderr lines${want:+, wanted '$want'})"
        sed 's/^/#   /' "$TMP/err" | head -5
    fi
}

# The cores colltune may use here: nproc (the CPU affinity), capped by a CPU quota at the top
# of this machine's (or container's) cgroup tree, v2 or v1 (lib/cpus.c reads its own cgroup).
usable_cores() {
    _n=$(nproc) _q=
    if [ -r /sys/fs/cgroup/cpu.max ]; then
        read -r _a _b </sys/fs/cgroup/cpu.max
        [ "$_a" != max ] && _q=$(( (_a + _b - 1) / _b ))
    elif [ -r /sys/fs/cgroup/cpu/cpu.cfs_quota_us ]; then
        _a=$(cat /sys/fs/cgroup/cpu/cpu.cfs_quota_us) _b=$(cat /sys/fs/cgroup/cpu/cpu.cfs_period_us)
        [ "$_a" -gt 0 ] && _q=$(( (_a + _b - 1) / _b ))
    fi
    [ -n "$_q" ] && [ "$_q" -lt "$_n" ] && _n=$_q
    echo "$_n"
}

# every_coll ALGO ROWS SIZE-FLAGS...: ALGO runs every collective on 1, 2, 3 and 5 ranks (past
# the 2 cores: oversubscribed), in and out of place, for float32 sum, float64 max, int32 prod
# and bfloat16 avg, printing ROWS sizes with #wrong 0 and nccl-tests' bounds line
every_coll() {
    algo=$1 want=$2; shift 2
    sizes="$*"
    for spec in "float32:sum" "float64:max" "int32:prod" "bfloat16:avg"; do
        t=${spec%:*} o=${spec#*:}
        for nr in 1 2 3 5; do
            for coll in allreduce allgather reducescatter alltoall; do
                $COLLTUNE run --local $nr --coll $coll --algo $algo -d $t -o $o -n 3 -w 1 $sizes \
                    >"$TMP/out" 2>"$TMP/err"; rc=$?
                rows=$(grep -vc '^#' "$TMP/out")
                wrong=$(awk '!/^#/ { w += $10 + $14 } END { print w + 0 }' "$TMP/out")
                if [ $rc -eq 0 ] && [ "$rows" -eq "$want" ] && [ "$wrong" = 0 ] &&
                    grep -q "Out of bounds values : 0 OK" "$TMP/out"; then
                    ok "$algo --local $nr $coll $t $o: $want sizes, in and out of place, #wrong 0"
                else
                    not_ok "$algo --local $nr $coll $t $o: exit $rc, $rows rows, $wrong wrong"
                    sed 's/^/#   /' "$TMP/err" | head -4
                fi
            done
        done
    done
}

# stop_rank RANK ROW CMD...: runs CMD (a library engine's run) with its output in $TMP/out and
# $TMP/err, stops rank RANK (SIGSTOP; its pid from the table's "Using devices" lines) once a
# row matching ROW is out (past MPI_Init), waits for CMD and kills the stopped rank; sets rc
# (CMD's exit) and stopped (the pid, "" where it was not found)
stop_rank() {
    sr_rank=$1 sr_row=$2; shift 2
    "$@" >"$TMP/out" 2>"$TMP/err" &
    sr_job=$!
    for i in $(seq 1 600); do
        grep -q "$sr_row" "$TMP/out" && break
        sleep 0.1
    done
    stopped=$(sed -n "s/^#  Rank  *$sr_rank Group  0 Pid  *\([0-9]*\) .*/\1/p" "$TMP/out")
    [ -n "$stopped" ] && grep -q "$sr_row" "$TMP/out" && kill -STOP "$stopped"
    wait $sr_job; rc=$?
    [ -n "$stopped" ] && kill -KILL "$stopped" 2>/dev/null
    return 0
}
