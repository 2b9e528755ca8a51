#!/bin/sh
# make bench: colltune over shm on this host against references measured in the same run:
#  - the AllReduce limit ../shared/bench/shm_limit.c (unchanged, -O3 -march=native), and
#    tests/bench/coll_limit.c, the same kernel shape for AllGather, AllToAll, ReduceScatter;
#  - Open MPI's MPI_Allreduce (tests/bench/mpi_allreduce.c);
#  - colltune run --local 2 and --local 4 (4 ranks on the host's cores: oversubscribed on a
#    2-core machine), every algorithm of each collective, float32 sum, 8 B..128 MiB x16,
#    with registered buffers (the default: the run's buffers live in the shm symmetric heap)
#    and, for AllReduce on 2 ranks, unregistered ones (COLLTUNE_SHM_UNREGISTERED=1); each
#    2-rank registered run twice: a sample's time the slowest rank's (-a 3, colltune's
#    default) and the mean of the ranks' times (-a 1, nccl-tests' default); Open MPI's
#    benchmark prints both, and each is compared with its like; against the limit kernels
#    the mean is the like figure: they print rank 0's time of iterations that end in a barrier, which keeps their ranks'
#    times close (shm_limit at 128 B: rank 0 0.25-0.27 us, rank 1 0.28-0.34, slowest rank
#    0.34-0.45, read with a copy that printed them all), while a collective without a
#    closing barrier leaves its ranks apart by the exit skew of the barrier before it
#    (AllReduce 128 B: 0.25 and 0.52 us). The report prints both ratios;
#  - paired rounds (tests/bench/paired.sh, BENCH_PAIRED_ROUNDS, default 12, 0 none): the
#    AllReduce limit, colltune's oneshot, mesh-1step and symm, the limit again, round after
#    round, each round's fastest compared with the faster of its own two limits;
#  - peak RSS per rank of a 128 MiB AllReduce.
# Everything is repeated BENCH_REPS times (default 2) and the best time per size is kept, since
# the machine may be shared. Prints the ratios (tests/bench/report.py); it does not pass or
# fail on them.
set -eu
cd "$(dirname "$0")/../.."
out=${BENCH_OUT:-build/bench}
rm -rf "$out"
mkdir -p "$out"
MINB=${BENCH_MINB:-8}
MAXB=${BENCH_MAXB:-134217728}
FACTOR=${BENCH_FACTOR:-16}
ITERS=${BENCH_ITERS:-20}
REPS=${BENCH_REPS:-2}
LIMIT_S=${BENCH_LIMIT_S:-0.2}
REF=../shared/bench/shm_limit.c

[ -f "$REF" ] || { echo "bench: $REF not found (the reference limit kernel)" >&2; exit 1; }
command -v mpicc >/dev/null || { echo "bench: mpicc not found (scripts/deps.sh installs Open MPI)" >&2; exit 1; }
mpicc -O2 -o "$out/mpi_allreduce" tests/bench/mpi_allreduce.c
gcc -O3 -march=native -o "$out/shm_limit" "$REF"
gcc -O3 -march=native -o "$out/coll_limit" tests/bench/coll_limit.c

sizes=""
s=$MINB
while [ "$s" -le "$MAXB" ]; do sizes="$sizes $s"; s=$((s * FACTOR)); done
colls="allreduce allgather reducescatter alltoall"

{ uptime; nproc; grep -m1 'model name' /proc/cpuinfo || true; } > "$out/machine.txt"
rep=1
while [ "$rep" -le "$REPS" ]; do
    echo "bench: repetition $rep of $REPS (load: $(cut -d' ' -f1-3 /proc/loadavg))" >&2
    uptime >> "$out/load.txt"
    "$out/shm_limit" "$LIMIT_S" $sizes > "$out/limit-allreduce-$rep.txt"
    for c in allgather alltoall reducescatter; do
        "$out/coll_limit" $c "$LIMIT_S" $sizes > "$out/limit-$c-$rep.txt"
    done
    # bound as Open MPI binds a job's 2 ranks (a core each), as colltune's are pinned
    mpirun --allow-run-as-root --oversubscribe -np 2 \
        "$out/mpi_allreduce" "$MINB" "$MAXB" "$FACTOR" "$ITERS" > "$out/ompi-$rep.txt" \
        2> "$out/ompi.err" || { cat "$out/ompi.err" >&2; exit 1; }
    for c in $colls; do
        for a in $(./colltune list algos | awk -v c=$c '{for (i = 2; i <= NF; i++) if ($i == c) print $1}'); do
            for n in 2 4; do
                for v in reg unreg mean; do
                    [ $v = unreg ] && { [ $c = allreduce ] && [ $n = 2 ] || continue; }
                    [ $v = mean ] && [ $n != 2 ] && continue
                    f="$out/ct-$c-$n-$v-$a-$rep"
                    ur=; [ $v = unreg ] && ur=1
                    av=3; [ $v = mean ] && av=1
                    maxb=$MAXB # oneshot's input fits its 16 KiB mailbox (algos/oneshot.c)
                    [ "$a" = oneshot ] && [ "$maxb" -gt 16384 ] && maxb=16384
                    if ! COLLTUNE_SHM_UNREGISTERED=$ur ./colltune run --local $n --transport shm --coll $c --algo "$a" \
                        -b "$MINB" -e "$maxb" -f "$FACTOR" -n "$ITERS" -w 5 -c 1 -a $av \
                        --json "$f.json" > "$f.txt" 2>&1; then
                        rm -f "$f.json"
                        [ $rep = 1 ] && [ $v = reg ] && echo "bench: $c $a on $n ranks did not run: $(tail -1 "$f.txt")" >&2
                    fi
                done
            done
        done
    done
    rep=$((rep + 1))
done
# colltune's AllReduce against the limit in adjacent runs, round by round (paired.sh):
# the VM's speed can change between the runs above and the limit's
echo "bench: paired rounds against the limit (${BENCH_PAIRED_ROUNDS:-12})" >&2
tests/bench/paired.sh "$out" "${BENCH_PAIRED_ROUNDS:-12}"
uptime >> "$out/load.txt"

# peak RSS per rank of a 128 MiB AllReduce (the launcher reaps the ranks: RUSAGE_CHILDREN
# of the launcher is the largest rank), with and without verification
python3 - "$out" <<'PY' > "$out/rss.txt"
import resource, subprocess, sys
for algo in ("mesh-1step", "ring", "rdh", "symm"):
    for check in ("1",):
        r = subprocess.run(["python3", "-c", "import resource, subprocess, sys; "
                            "subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, check=True); "
                            "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)",
                            "./colltune", "run", "--local", "2", "--transport", "shm", "--algo", algo,
                            "-b", "128M", "-e", "128M", "-n", "5", "-w", "1", "-c", check],
                           capture_output=True, text=True, check=True)
        print(algo, check, int(r.stdout.split()[-1]) // 1024)
PY
python3 tests/bench/report.py "$out" | tee "$out/report.txt"

# colltune probe on this live node: median of 11 runs (target: well under a second)
python3 - <<'PY'
import subprocess, time, statistics
t = []
for _ in range(11):
    s = time.perf_counter()
    subprocess.run(["./colltune", "probe"], stdout=subprocess.DEVNULL, check=True)
    t.append(time.perf_counter() - s)
print("colltune probe (live, all views): median %.1f ms, max %.1f ms" % (statistics.median(t) * 1e3, max(t) * 1e3))
PY

# A job's first calls against its warmed ones: the shm transport touches its channels' pages
# as it opens (until 2026-12-07 the first laps of a channel's 16 slots ran 30-100x slow, the
# first access to a page on this VM): simple-ring AllReduce of 8 B, -n 5 without warmup and
# with -w 200 (many laps of the slots), alternating, 7 runs each, the median of the out-of-place times
python3 - <<'PY'
import subprocess, statistics
def t(w):
    r = subprocess.run(["./colltune", "run", "--local", "2", "--transport", "shm", "--algo",
                        "simple-ring", "-b", "8", "-e", "8", "-n", "5", "-w", str(w)],
                       capture_output=True, text=True, check=True)
    return float([l for l in r.stdout.splitlines() if l.split()[:1] == ["8"]][0].split()[6])
cold, warm = [], []
for _ in range(7):
    cold.append(t(0)); warm.append(t(200))
c, w = statistics.median(cold), statistics.median(warm)
print("colltune run, first calls (2 ranks, shm, simple-ring 8 B, -n 5 -w 0) / warmed (-w 200): "
      "%.2f us / %.2f us = %.2fx (30-100x before the shm touched its pages at open)" % (c, w, c / w))
PY

# colltune model: scale of the pricer (wall time and peak memory from /usr/bin/time) and,
# with a local 4-rank sweep, the fit's median |error| per algorithm at >= 64 KiB.
echo "bench: colltune model" >&2
mt() { /usr/bin/time -f "%e s, peak %M KB" "$@" 2>&1 >/dev/null | tail -1; }
echo "colltune model, 16384 ranks (2048 x dgx-h100), ring allreduce, one size: $(mt ./colltune model --node dgx-h100 --nodes 2048 --algo ring -b 1G -e 1G)"
echo "colltune model, 16384 ranks (2048 x dgx-h100), rdh allreduce, one size: $(mt ./colltune model --node dgx-h100 --nodes 2048 --algo rdh -b 1G -e 1G)"
for c in allreduce allgather reducescatter alltoall; do
    echo "colltune model, 1024 ranks (128 x dgx-h100), $c, every algorithm, 28 sizes (8 B..1 GiB): $(mt ./colltune model --node dgx-h100 --nodes 128 --coll $c -b 8 -e 1G -f 2)"
done
if ./colltune sweep --local 4 --coll allreduce -b 4K -e 16M --budget 60 --out "$out/model-sweep" >"$out/model-sweep.txt" 2>&1; then
    ./colltune model --calibrate "$out/model-sweep/results.json" --out "$out/model-fit.json" >"$out/model-fit.txt"
    echo "colltune model --calibrate (local 4-rank sweep, allreduce): $(grep 'median |error|' "$out/model-fit.txt")"
else
    echo "colltune model --calibrate: the 4-rank sweep failed: $(tail -1 "$out/model-sweep.txt")"
fi
echo "colltune sweep --model, 1024 ranks (128 x dgx-h100), 4 collectives, 8 B..256 MiB: $(mt ./colltune sweep --model dgx-h100 --nodes 128 --out "$out/model-dgx128")"
# the emulated 4-host 1 Gbit cluster (root only): calibration error and crossover agreement
if [ "$(id -u)" = 0 ]; then
    scripts/model-cluster-bench.sh 150 2>&1 | sed 's/^/colltune model, emulated cluster: /'
else
    echo "colltune model, emulated cluster: skipped (needs root for network namespaces)"
fi
# Wide-area: many streams over the delay line, quantized ring on a 1 Gbit link (root only;
# says why it skips otherwise). COLLTUNE_BENCH_WAN=0 leaves it out.
if [ "${COLLTUNE_BENCH_WAN:-1}" != 0 ]; then
    tests/bench/wan.sh
fi
# The library engines' goal: Open MPI's four collectives swept with launch settings and
# verified against its own defaults in the same run (tests/bench/lib-goal.sh; 10-16 min on
# 2 ranks with its search of two settings; says why it skips). COLLTUNE_BENCH_LIB=0 leaves
# it out.
if [ "${COLLTUNE_BENCH_LIB:-1}" != 0 ]; then
    tests/bench/lib-goal.sh "$out/goal"
fi
# Verify's false alarms: a launch setting at the library's own value verified against the
# plain defaults, 8 times (tests/bench/lib-null.sh; 8-9 min). Only with COLLTUNE_BENCH_NULL=1.
if [ "${COLLTUNE_BENCH_NULL:-0}" = 1 ]; then
    tests/bench/lib-null.sh "$out/null"
fi
