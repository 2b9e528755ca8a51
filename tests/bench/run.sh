#!/bin/sh
# make bench: colltune run --local 2 AllReduce float sum 8 B..256 MiB (x4) over shm with
# every algorithm, next to two references measured in the same run: Open MPI's
# MPI_Allreduce and the two-process limit kernel. Prints busbw per size, ratios, and
# geometric means. Not a test: it prints numbers, it does not pass or fail on them.
set -eu
cd "$(dirname "$0")/../.."
out=${BENCH_OUT:-build/bench}
mkdir -p "$out"
MINB=${BENCH_MINB:-8}
MAXB=${BENCH_MAXB:-268435456}
ITERS=${BENCH_ITERS:-20}

command -v mpicc >/dev/null || { echo "bench: mpicc not found (scripts/deps.sh installs Open MPI)" >&2; exit 1; }
mpicc -O2 -o "$out/mpi_allreduce" tests/bench/mpi_allreduce.c
cc -O2 -std=c17 -D_GNU_SOURCE -o "$out/limit" tests/bench/limit.c

echo "bench: limit kernel" >&2
"$out/limit" "$MINB" "$MAXB" 4 "$ITERS" > "$out/limit.txt"
echo "bench: Open MPI" >&2
mpirun --allow-run-as-root --oversubscribe -np 2 --bind-to none \
    "$out/mpi_allreduce" "$MINB" "$MAXB" 4 "$ITERS" > "$out/ompi.txt" 2> "$out/ompi.err" \
    || { cat "$out/ompi.err" >&2; exit 1; }
algos=$(./colltune list algos | awk '$0 ~ /allreduce/ {print $1}')
for a in $algos; do
    echo "bench: colltune --algo $a" >&2
    if ! ./colltune run --local 2 --transport shm --algo "$a" -b "$MINB" -e "$MAXB" -f 4 \
        -n "$ITERS" -w 5 -c 1 --json "$out/colltune-$a.json" > "$out/colltune-$a.txt" 2>&1; then
        echo "bench: --algo $a did not run on 2 ranks: $(tail -1 "$out/colltune-$a.txt")" >&2
        rm -f "$out/colltune-$a.json"
    fi
done
python3 tests/bench/report.py "$out"

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
