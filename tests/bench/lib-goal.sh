#!/bin/sh
# The library engines' goal as a benchmark (not a test): a library's four collectives,
# float32 sum, 8 B..128 MiB x16, swept with launch settings, then the sweep's config verified
# against the library's plain defaults measured in the same run (verify's alternating
# launches, `--reverify 2`). Prints, per verify of the same config (BENCH_GOAL_REPS, default
# 1), the export as a job runs it against the defaults (the copy's `whole_verified`, or the
# settings alone where the copy keeps no rule of its own: `env_verified`; each a geomean over
# the sweep's own sizes, the goal's, as verify records it since session 54) and its speedup
# beside the goal's 1.5x (Open MPI's; not printed for MPICH), and verify's exit code (0: no
# size slower beyond its interval); where verify keeps neither a setting nor a rule (it
# left the settings out on this machine), it says so: the defaults left in place, 1.00x.
# It does not pass or fail on them.
# BENCH_LIB: ompi (default) or mpich; BENCH_SHAPE: how the ranks are placed (default
# "--local 2"); BENCH_GOAL_ENV: the launch settings, space-separated NAME=VALUE (default for
# Open MPI 4.x GLIBC_TUNABLES=glibc.malloc.hugetlb=1, as --env-search picked it in session
# 55, and a vader segment of 32 MiB, which holds the eager fragments of the eager limits
# searched (colltune refuses a setting whose fragments the segment does not hold: Open MPI
# would run the ranks over TCP); for 5.x the sm eager limit 786432 (the others not searched
# there; its sm segment is 16 MiB by default); each beside glibc's MALLOC_MMAP_MAX_=0
# MALLOC_TRIM_THRESHOLD_=4294967296; for MPICH those two alone); BENCH_GOAL_SEARCH: values
# the sweep searches on this machine beside them (--env-search NAME=V1,..., space-separated,
# at most two; default for Open MPI 4.x with the default settings the vader eager limit
# 65536 (session 54's pick, in the default segment) or 1048576 (session 77's: AllReduce at
# 128 KiB-1 MiB 2x faster, once the segment holds it), the finer step between them with it;
# until session 77 the bench carried 65536 and searched the single-copy mechanism none, then
# its max send size 131072: the pick of session 56 on the Zen 5 VM, 1.3-2.8x slower at 128
# KiB-8 MiB on session 55's VM and 1.25x on session 59's Zen 4 VM, found by neither search
# on sessions 60-76's VMs: BENCH_GOAL_SEARCH names them where a machine may pay for them;
# none otherwise);
# BENCH_BUDGET: the sweep's budget in s (default 900); BENCH_GOAL_VERIFY: more options for
# each verify (e.g. --try-ties: the rows the sweep found tied with the library's own choice
# tried in fresh launches; default none). Usage: tests/bench/lib-goal.sh [OUTDIR]
set -eu
cd "$(dirname "$0")/../.."
out=${1:-build/bench-goal}
LIB=${BENCH_LIB:-ompi}
SHAPE=${BENCH_SHAPE:---local 2}
BUDGET=${BENCH_BUDGET:-900}
REPS=${BENCH_GOAL_REPS:-1}
X=./colltune
alloc="MALLOC_MMAP_MAX_=0 MALLOC_TRIM_THRESHOLD_=4294967296"
if [ -z "${BENCH_GOAL_ENV:-}" ]; then
    case $LIB in
    ompi)
        info=$(command -v ompi_info.openmpi || command -v ompi_info || true)
        [ -n "$info" ] || { echo "library goal: skipped (no ompi_info: Open MPI is not installed)"; exit 0; }
        case $("$info" --version 2>/dev/null | head -1) in
        *v[0-4].*) BENCH_GOAL_ENV="$alloc GLIBC_TUNABLES=glibc.malloc.hugetlb=1 OMPI_MCA_btl_vader_segment_size=33554432"
            BENCH_GOAL_SEARCH=${BENCH_GOAL_SEARCH-OMPI_MCA_btl_vader_eager_limit=65536,1048576} ;;
        *) BENCH_GOAL_ENV="OMPI_MCA_btl_sm_eager_limit=786432 $alloc" ;;
        esac
        ;;
    *) BENCH_GOAL_ENV=$alloc ;;
    esac
fi
envs=
for e in $BENCH_GOAL_ENV; do envs="$envs --env $e"; done
for e in ${BENCH_GOAL_SEARCH:-}; do envs="$envs --env-search $e"; done
rm -rf "$out"
mkdir -p "$out"
echo "library goal: load before: $(uptime)"
start=$(date +%s)
# shellcheck disable=SC2086
if ! $X sweep --lib "$LIB" $SHAPE -b 8 -e 128M -f 16 --budget "$BUDGET" $envs \
    --out "$out/sweep" >"$out/sweep.txt" 2>&1; then
    echo "library goal: the sweep failed: $(tail -1 "$out/sweep.txt")"
    exit 0
fi
echo "library goal: sweep --lib $LIB $SHAPE, the four, 8 B..128 MiB x16,$envs: $(($(date +%s) - start)) s"
[ -z "${BENCH_GOAL_SEARCH:-}" ] || echo "library goal: the search on this machine: $(grep -- '^--env-search: the sweep runs with\|^the sweep runs with\|^found: \|^no value is faster' "$out/sweep.txt" | tr '\n' ' ')"
rep=1
while [ "$rep" -le "$REPS" ]; do
    cp "$out/sweep/config.json" "$out/config-$rep.json"
    start=$(date +%s)
    rc=0
    # shellcheck disable=SC2086
    $X sweep --verify "$out/config-$rep.json" --lib "$LIB" $SHAPE --reverify 2 \
        ${BENCH_GOAL_VERIFY:-} >"$out/verify-$rep.txt" 2>&1 || rc=$?
    secs=$(($(date +%s) - start))
    python3 - "$out/config-$rep.verified.json" "$rep" "$rc" "$secs" "$LIB" <<'EOF'
import json, sys
path, rep, rc, secs, name = sys.argv[1:6]
goal = " (the goal: 1.5x)" if name == "ompi" else ""  # the goal is Open MPI's
head = f"library goal: verify {rep}: exit {rc} in {secs} s:"
try:
    lib = json.load(open(path))["libraries"][0]
except (OSError, ValueError, KeyError, IndexError):
    print(head, "no verified copy written")
    sys.exit(0)
tuned = any(r["algo"] != "default" for c in lib.get("rules", []) for r in c["ranges"])
whole, env = lib.get("whole_verified"), lib.get("env_verified")
if whole:
    g, what = whole["geomean"], "the export as a job runs it (rules and settings)"
elif env and not tuned:
    g, what = env["geomean"], "the export as a job runs it (the settings; no rule kept)"
else:
    g = None
if g is None and not tuned and not lib.get("env"):
    print(head, "the copy keeps no setting and no rule: the defaults left in place (1.00x); "
          "verify left the settings out here (its exit code says whether one was slower): "
          "search them on this machine (--env-search)")
elif g is None:
    per = ", ".join(f'{c["coll"]} {c["verified"]["geomean"]:.3f}'
                    for c in lib.get("rules", []) if c.get("verified"))
    print(head, "no one measure of the whole export; the rules' own:", per or "none verified")
else:
    print(head, f"{what}: {g:.3f} of the defaults' time over the four at the sweep's sizes, "
          f"{1 / g:.2f}x{goal}")
EOF
    rep=$((rep + 1))
done
echo "library goal: load after: $(uptime)"
