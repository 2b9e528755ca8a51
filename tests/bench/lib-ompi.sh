#!/bin/sh
# Library engine benchmark (not a test): Open MPI 4.1 (BENCH_LIB=mpich: MPICH 4.0), 2 ranks,
# float32 sum, 8 B..128 MiB x2
# (BENCH_FACTOR), for each collective of BENCH_COLLS (default allreduce; e.g. "allreduce
# allgather reducescatter alltoall"), in the same session:
#  1. colltune sweep --lib LIB (one collective): its wall time and the measured section;
#  2. the per-size oracle: every algorithm of the library forced by the engine (run --lib LIB
#     --algo LIB:NAME; a segmented one also at each segment size of BENCH_SEGSIZES, plain
#     bytes, default "16384 65536 131072 262144 1048576 4194304" (every value the sweep may
#     give the chunk: its start, 131072, and its grid, tune/measure.c ct_sweep_grid), as
#     NAME@BYTES, --chunk BYTES; session 78's run had 65536, 262144 and 1048576), each
#     launched beside a launch of
#     its default (LIB:default), the
#     pair's order alternating, BENCH_REPS pairs each (sizes up to 256 KiB after 200 warmup
#     calls, as verify: a library's one-time costs; short collectives timed back to back,
#     `--batch auto`, as the sweep and verify time them, since session 78: one call per
#     barrier also times the barrier's exit skew; session 76, 2 ranks, Open MPI's AllReduce at
#     1-10 B: 0.95-1.15 us so, 0.56-0.64 back to back); oracle = per size the best row's gain
#     over the default beside it (geomean over the pairs; the default itself when none
#     gains); and the oracle held out (each size's row chosen on one rep's pairs, its gain
#     measured on another's: no winner's curse);
#  3. colltune sweep --verify of the sweep's config: the exported file vs the defaults in
#     alternating launches (ratio of geometric means, 95% interval);
#  4. the oracle's per-size choices written as a file of their own (the sweep's config with
#     that collective's ranges replaced) and verified the same way: what the oracle is
#     worth on the instrument that judges the export, not only in the pairs that chose it;
#  5. the export's gain (1 / verify's geomean, the sizes of rules it set back counted as 1;
#     1 where it keeps the defaults) as a share of the oracle's, in logs: raw, held out, and
#     the oracle's choices verified (as chosen, and as verify keeps them).
# Prints load averages before and after. Usage: tests/bench/lib-ompi.sh [OUTDIR]
# BENCH_SHAPE: how the ranks are placed (default "--local 2"; lib-ompi-cluster.sh gives
# "--hosts ..." on the emulated cluster); BENCH_MAX: the largest size (default 128M);
# BENCH_TRY_TIES=1: verify with --try-ties (the sweep's ties tried in fresh launches), then
# verify the copy it writes again without it (step 3's figure).
# BENCH_ENV: launch settings, space-separated NAME=VALUE, exported for every run of the bench
# (the sweep's rows, the oracle's pairs, both sides of each verify): the rules judged with the
# settings on both sides, as verify's second pass judges a section's rules (e.g. lib-goal.sh's
# Open MPI 4.x default; session 57).
set -eu
for kv in ${BENCH_ENV:-}; do export "${kv?}"; done
cd "$(dirname "$0")/../.."
out=${1:-build/bench-lib}
FACTOR=${BENCH_FACTOR:-2}
REPS=${BENCH_REPS:-2}
BUDGET=${BENCH_BUDGET:-100}
SHAPE=${BENCH_SHAPE:---local 2}
MAX=${BENCH_MAX:-128M}
COLLS=${BENCH_COLLS:-allreduce}
LIB=${BENCH_LIB:-ompi}
TIES=; [ "${BENCH_TRY_TIES:-0}" = 0 ] || TIES=--try-ties
X=./colltune
rm -rf "$out"; mkdir -p "$out"
echo "load before: $(uptime)"
[ -z "${BENCH_ENV:-}" ] || echo "launch settings on every run: $BENCH_ENV"
for coll in $COLLS; do
d="$out/$coll"
mkdir -p "$d"
start=$(date +%s.%N)
# shellcheck disable=SC2086
$X sweep --lib "$LIB" $SHAPE --coll "$coll" -b 8 -e "$MAX" -f "$FACTOR" --budget "$BUDGET" \
    --out "$d/sweep" >"$d/sweep.txt" 2>&1 || echo "(sweep of $coll failed: $(tail -1 "$d/sweep.txt"))"
end=$(date +%s.%N)
echo "sweep --lib $LIB $SHAPE, $coll 8 B..$MAX x$FACTOR, budget $BUDGET s: $(echo "$end - $start" | bc) s wall"
sed -n "/(measured, --lib $LIB)/,/^\$/p" "$d/sweep.txt"
# shellcheck disable=SC2086
algos=$($X run --lib "$LIB" $SHAPE --coll "$coll" --algo "$LIB:list" 2>&1 | sed -n 's/.* algorithms: \(.*\)$/\1/p' | tr -d ',')
# the segment sizes the sweep tunes (its `chunk`): each segmented row also forced at each of
# BENCH_SEGSIZES as NAME@BYTES (`--chunk`), so that the oracle's best forced setting has the
# parameter the sweep's rules carry (Open MPI's own for a forced row is 0: segmented_ring runs
# unsegmented, 1.3x slower than at 262144 at 8 MiB on 2 ranks, session 78)
for a in $algos; do
    case $a in *segment*) for z in ${BENCH_SEGSIZES-16384 65536 131072 262144 1048576 4194304}; do algos="$algos $a@$z"; done ;; esac
done
# the sizes up to 256 KiB after 200 warmup calls, the larger (when BENCH_MAX reaches them)
# after 2, as verify runs them
maxb=$(echo "$MAX" | awk '{ n = $0 + 0; u = toupper(substr($0, length($0)))
    print n * (u == "K" ? 1024 : u == "M" ? 1048576 : u == "G" ? 1073741824 : 1) }')
small=256K big=yes
[ "$maxb" -lt 524288 ] && small=$MAX big=
# the oracle: each forced row against the library's default launched beside it (their order
# alternating with the rep), so that what the machine does over minutes touches both sides
# of a pair: session 39, with every row launched once a rep, ReduceScatter's default read
# 0.57-0.78 us at 16 B and 89-90 us at 256 KiB in all four of its launches, where launches
# on a rested machine read it, and ring, at 0.29-0.36 and 35-52. Pairing does not remove
# the other noise seen then: the machine is in a fast or a slow state for seconds at a time
# (8 B at 0.33 or 0.45 us, any row; session 40: 0.28 or 0.59, switching inside a launch too),
# so a launch of a second or so mostly sees one, which two reps cannot average out (the
# held-out oracle shows it)
run_row() { # ROW[@SEGSIZE] FILE: the small sizes, then the large
    seg=; case $1 in *@*) seg="--chunk ${1#*@}" ;; esac
    # shellcheck disable=SC2086
    { timeout 300 $X run --lib "$LIB" $SHAPE --coll "$coll" --algo "${1%@*}" $seg -b 8 -e "$small" \
        -f "$FACTOR" -n 10 -w 200 -c 0 --batch auto && { [ -z "$big" ] || timeout 300 $X run \
        --lib "$LIB" $SHAPE --coll "$coll" --algo "${1%@*}" $seg -b 512K -e "$MAX" -f "$FACTOR" -n 10 -w 2 \
        -c 0 --batch auto; }; } \
        >"$2" 2>&1 || echo "($coll $1 run failed or timed out: $2)"
}
for r in $(seq "$REPS"); do
    for a in $algos; do
        [ "$a" = "$LIB:default" ] && continue
        if [ $((r % 2)) = 1 ]; then
            run_row "$LIB:default" "$d/pair-$a-$r.txt"; run_row "$a" "$d/run-$a-$r.txt"
        else
            run_row "$a" "$d/run-$a-$r.txt"; run_row "$LIB:default" "$d/pair-$a-$r.txt"
        fi
    done
done
# shellcheck disable=SC2086
python3 - "$d" "$LIB:default" $algos <<'PY' | tee "$d/oracle.txt"
import json, math, os, statistics, sys
out, default, algos = sys.argv[1], sys.argv[2], [a for a in sys.argv[3:] if a != sys.argv[2]]
def times(f):  # {size: out-of-place us}
    t = {}
    for line in open(f) if os.path.exists(f) else []:
        p = line.split()
        if len(p) >= 7 and p[0].isdigit() and int(p[0]) > 0:  # 0 B: nothing moves
            t[int(p[0])] = float(p[6])
    return t
reps = sorted({int(f.rsplit("-", 1)[1][:-4]) for f in os.listdir(out) if f.startswith("pair-")})
# r[a][rep][size]: the default's time over the row's in the pair
r, row_t, def_t = {}, {}, {}
for a in algos:
    for k in reps:
        ta, td = times(f"{out}/run-{a}-{k}.txt"), times(f"{out}/pair-{a}-{k}.txt")
        for s in ta.keys() & td.keys():
            r.setdefault(a, {}).setdefault(k, {})[s] = td[s] / ta[s]
            row_t.setdefault(a, {}).setdefault(s, []).append(ta[s])
            def_t.setdefault(s, []).append(td[s])
def gain(a, s, ks):  # the row's geomean gain over the default in the pairs of reps ks
    v = [r[a][k][s] for k in ks if s in r.get(a, {}).get(k, {})]
    return math.exp(sum(map(math.log, v)) / len(v)) if v else 0
print(f"{'size':>10} {'default us':>12} {'best forced':>28} {'us':>10} {'oracle':>7}")
ratios, choice = [], {}
for s in sorted(def_t):
    g, a = max((gain(a, s, reps), a) for a in algos)
    if g <= 1:  # the default is a row too
        g, a = 1.0, default
    ratios.append(g)
    choice[s] = a
    t = statistics.median(row_t[a][s]) if a != default else statistics.median(def_t[s])
    print(f"{s:>10} {statistics.median(def_t[s]):>12.2f} {a:>28} {t:>10.2f} {g:>7.2f}")
g = math.exp(sum(map(math.log, ratios)) / len(ratios))
print(f"oracle (default time / best forced time, each row against the default launched beside "
      f"it): geomean {g:.2f}, min {min(ratios):.2f}, max {max(ratios):.2f}")
# The best of several noisy rows is biased toward gain (the winner's curse: among rows that
# are really equal, the largest gain wins by its noise). Held out: choose each size's row on
# one rep's pairs and measure its gain on another's; every ordered pair of reps.
held = []
for s in sorted(def_t):
    logs = []
    for i in reps:
        for j in reps:
            if i != j:
                g, a = max((gain(a, s, [i]), a) for a in algos)
                logs.append(math.log(gain(a, s, [j]) or 1) if g > 1 else 0.0)
    if logs:
        held.append(sum(logs) / len(logs))
if len(reps) >= 2 and held:
    gh = math.exp(sum(held) / len(held))
    print(f"oracle held out (chosen on one run, measured on another, {len(reps)} runs): "
          f"geomean {gh:.2f}, min {math.exp(min(held)):.2f}, max {math.exp(max(held)):.2f}")
else:
    print("oracle held out: needs BENCH_REPS >= 2")
json.dump({str(s): a for s, a in choice.items()}, open(f"{out}/oracle-choice.json", "w"))
PY
# shellcheck disable=SC2086,SC2046
$X sweep --verify "$d/sweep/config.json" --lib "$LIB" $TIES $(echo "$SHAPE" | grep -o -- '--hosts [^ ]*') 2>&1 | tee "$d/verify.txt" || true
# with --try-ties, what that verify kept it also picked: the copy's own verify (fresh
# launches, none of them the ones it was picked on) is the figure
if [ -n "$TIES" ] && [ -e "$d/sweep/config.verified.json" ]; then
    mv "$d/verify.txt" "$d/verify-ties.txt"
    # shellcheck disable=SC2046
    $X sweep --verify "$d/sweep/config.verified.json" --lib "$LIB" $(echo "$SHAPE" | grep -o -- '--hosts [^ ]*') 2>&1 | tee "$d/verify.txt" || true
fi
# the oracle's choices as a file of their own (each size's best forced row, from the
# geometric midpoint below its size to the one above), verified as the export is: what the
# oracle's choice is worth on the instrument that judges the export (verify's alternating
# launches, controls and intervals), not only in the pairs it was chosen on
# shellcheck disable=SC2086
if [ -e "$d/sweep/config.json" ] && python3 - "$d" "$coll" "$LIB" $algos <<'PY'
import json, math, sys
d, coll, lib, algos = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
ids = {a.split(":", 1)[1]: i for i, a in enumerate(algos) if "@" not in a}  # the library's order
choice = sorted((int(z), a.split(":", 1)[1]) for z, a in
                json.load(open(f"{d}/oracle-choice.json")).items())  # NAME or NAME@SEGSIZE
c = json.load(open(f"{d}/sweep/config.json"))
sets = [r for l in c.get("libraries", []) if l["library"] == lib for r in l["rules"]
        if r["coll"] == coll]
if not sets or not choice:
    sys.exit(1)
# the ids are the library's list's order; the sweep's config holds the engine's own ids
seen = {(x["algo"], x["id"]) for x in sets[0]["ranges"]} | {
    (y["algo"], y["id"]) for x in sets[0]["ranges"] for y in x.get("ties", [])}
bad = [(a, i) for a, i in seen if ids.get(a, i) != i]
if bad:
    print(f"(oracle file not written: {lib}'s list order is not its ids: {bad})")
    sys.exit(1)
ranges = []
for k, (z, a) in enumerate(choice):
    lo = 0 if k == 0 else max(math.isqrt(choice[k - 1][0] * z), choice[k - 1][0] + 1)
    name, _, seg = a.partition("@")
    if ranges and (ranges[-1]["algo"], ranges[-1]["params"]["segsize"]) == (name, int(seg or 0)):
        continue
    if ranges:
        ranges[-1]["max_bytes"] = lo
    ranges.append({"min_bytes": lo, "max_bytes": None, "algo": name, "id": ids[name],
                   "params": {"segsize": int(seg or 0)}, "confidence": 0.5, "tie": False,
                   "runner_up": None, "gain": 1.0, "default": ids[name] == 0})
sets[0]["ranges"] = ranges
sets[0].pop("verified", None)
json.dump(c, open(f"{d}/oracle.json", "w"), indent=1)
PY
then
    # shellcheck disable=SC2046
    $X sweep --verify "$d/oracle.json" --lib "$LIB" $(echo "$SHAPE" | grep -o -- '--hosts [^ ]*') >"$d/verify-oracle.txt" 2>&1 || true
    sed -n "/^$coll: geomean\|^  where the file keeps\|^  the tuned sizes against\|nothing to verify/p" "$d/verify-oracle.txt"
fi
# the ratio against the reference of the same run: the export's gain (1 / the geomean of
# verify's ratios, each size whose rule verify set back counted as 1, as the .verified.json
# it writes runs it; 1 where the export keeps the defaults) as a share of the oracle's, in
# logs, raw and held out, and of the oracle's choices verified as the export is (as chosen:
# each size as measured; as kept: the sizes verify set back counted as 1). Twice: with each
# size's ratio as measured, and with the sizes where both sides run the library's own choice
# counted as 1 (they differ only by the launches' state) and each tuned size against its
# controls where it has any ("vs ctl", that state taken out): session 35's controls read
# 1.181 as measured, which made a file whose one rule gained 1.87x read 0.975x.
python3 - "$d" "$coll" <<'PY'
import json, math, os, re, sys
d, coll = sys.argv[1], sys.argv[2]
o = open(f"{d}/oracle.txt").read()
raw = re.search(r"^oracle \(default time.*geomean ([0-9.]+)", o, re.M)
held = re.search(r"^oracle held out .*geomean ([0-9.]+)", o, re.M)
def table(vtxt):
    """verify's table rows (size, rule, ratio, vs ctl or "-"); None without its output"""
    if not os.path.exists(vtxt):
        return None
    return re.findall(r"^ +(\d+)  (\S+) +[0-9.]+ +[0-9.]+ +\d+ +([0-9.]+)  \[[0-9.]+, [0-9.]+\] +(\S+)",
                      open(vtxt).read(), re.M)
def gains(vtxt, cf, only=None):
    """verify's geomean gain (as measured, controls as 1) with the sizes counted as the file
    cf runs them, over the sizes in only (None: all); None without a verify table"""
    if not os.path.exists(vtxt) or not os.path.exists(cf):
        return None
    v = open(vtxt).read()
    # where cf keeps the library's own choice, the rule verify set back (or --try-ties tried
    # and set back) counts 1; rows with the same name are told apart by size, not name
    rows = [x for x in table(vtxt) if only is None or int(x[0]) in only]
    sets = [r for l in json.load(open(cf)).get("libraries", []) for r in l["rules"]
            if r["coll"] == coll]
    def own_at(size):  # the library's own choice at size in cf
        for x in (sets[0]["ranges"] if sets else []):
            if x["min_bytes"] <= size and (x["max_bytes"] is None or size < x["max_bytes"]):
                return x["id"] == 0
        return True
    out = []
    for logs in ([0.0 if r != "default" and own_at(int(z)) else math.log(float(q))
                  for z, r, q, c in rows],
                 [0.0 if own_at(int(z)) else math.log(float(c if c != "-" else q))
                  for z, r, q, c in rows]):
        out.append(math.exp(-sum(logs) / len(logs)) if logs
                   else 1.0 if "nothing to verify" in v else None)
    return None if None in out else out
cf = f"{d}/sweep/config.verified.json"  # the copy verify wrote; none written: CONFIG as it was
cf = cf if os.path.exists(cf) else f"{d}/sweep/config.json"
exp = gains(f"{d}/verify.txt", cf)
ochosen = gains(f"{d}/verify-oracle.txt", f"{d}/oracle.json")
okf = f"{d}/oracle.verified.json"
okf = okf if os.path.exists(okf) else f"{d}/oracle.json"
okept = gains(f"{d}/verify-oracle.txt", okf)
# verify measures each file at its own ranges' midpoints besides the sweep's sizes: the
# verified oracle against the export also on the sizes both verifies measured (an export
# with nothing to verify is 1 at every size)
et, ot = table(f"{d}/verify.txt"), table(f"{d}/verify-oracle.txt")
common = ({int(x[0]) for x in ot} & ({int(x[0]) for x in et} if et else {int(x[0]) for x in ot})
          if ot else set())
cexp, cchosen, ckept = (gains(f"{d}/verify.txt", cf, common),
                        gains(f"{d}/verify-oracle.txt", f"{d}/oracle.json", common),
                        gains(f"{d}/verify-oracle.txt", okf, common))
if exp is None:
    print(f"export vs oracle: no verify geomean for {coll}")
for m, how in enumerate(("as measured", "controls as 1, tuned vs ctl")):
    if exp is None:
        break
    on = f", on the {len(common)} sizes both verifies measured"
    refs = [("oracle", exp[m], float(raw.group(1)) if raw else None),
            ("oracle held out", exp[m], float(held.group(1)) if held else None),
            ("oracle's choices verified", exp[m], ochosen[m] if ochosen else None),
            ("oracle's choices as verify keeps them", exp[m], okept[m] if okept else None),
            ("oracle's choices verified" + on, cexp[m] if cexp else None,
             cchosen[m] if cchosen else None),
            ("oracle's choices as verify keeps them" + on, cexp[m] if cexp else None,
             ckept[m] if ckept else None)]
    for name, g, og in refs:
        if og is None or g is None:
            continue
        # a gain under verify's 3% bound is no share to take (0.983x against 1.01x read -177%)
        share = math.log(g) / math.log(og) if og >= 1.03 else float("nan")
        print(f"export vs {name} ({how}): {g:.3f}x against {og:.3f}x: "
              + (f"{share:.0%} of its gain" if og >= 1.03
                 else "no gain to take" if og <= 1 else "its gain is under 3%: no share to take"))
PY
done
echo "load after: $(uptime)"
