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

# Wide-area: many streams over the delay line, quantized ring on a 1 Gbit link (root only;
# says why it skips otherwise). COLLTUNE_BENCH_WAN=0 leaves it out.
if [ "${COLLTUNE_BENCH_WAN:-1}" != 0 ]; then
    tests/bench/wan.sh
fi
