#!/bin/sh
# make bench, paired rounds: colltune's AllReduce against the limit kernel adjacent in time.
# A VM's speed can change within seconds (on the 2-core AMD EPYC VM the limit kernel reads
# 0.06-0.16 us or 0.33-0.60 us at 8 B from one run to the next), so a limit measured minutes
# before colltune's run may come from another state of the machine. Each round runs the
# limit, then colltune's candidate algorithms, then the limit again; report.py compares each
# round's fastest candidate with the faster of its two limits and prints the per-round ratios
# (their median and range, and the rounds in which the two limits agree within 25%).
# Usage: tests/bench/paired.sh OUTDIR [ROUNDS]; needs OUTDIR/shm_limit (run.sh builds it).
set -eu
cd "$(dirname "$0")/../.."
out=$1
rounds=${2:-${BENCH_PAIRED_ROUNDS:-12}}
sizes="8 128 2048 32768 524288 8388608"
mkdir -p "$out/paired"
r=1
while [ "$r" -le "$rounds" ]; do
    "$out/shm_limit" 0.2 $sizes > "$out/paired/limit-a-$r.txt"
    for a in oneshot mesh-1step symm; do
        e=8M
        [ "$a" = oneshot ] && e=2K # oneshot's input fits its 16 KiB mailbox (algos/oneshot.c)
        ./colltune run --local 2 --transport shm --coll allreduce --algo "$a" -b 8 -e "$e" -f 16 \
            -n 1000 -w 100 -c 1 -a 1 --json "$out/paired/ct-$a-$r.json" > /dev/null 2>&1 ||
            rm -f "$out/paired/ct-$a-$r.json"
    done
    "$out/shm_limit" 0.2 $sizes > "$out/paired/limit-b-$r.txt"
    r=$((r + 1))
done
