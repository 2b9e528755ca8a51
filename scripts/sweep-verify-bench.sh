#!/bin/sh
# Trustworthiness of the main job: N times `colltune sweep` then `colltune sweep --verify`
# on this machine; prints each run's verify verdict and worst regret, the measuring share,
# the agreement of consecutive configs (scripts/config-agree.py), then the pass rate, the
# range of measuring shares and the lowest agreement per collective.
# Usage: scripts/sweep-verify-bench.sh [N] [sweep options...]   (default N=3; KEEP=1 keeps
# the sweeps, configs and verify outputs in the directory it names)
set -u
bin=${COLLTUNE:-./colltune}
n=${1:-3}
[ $# -gt 0 ] && shift
dir=$(mktemp -d /tmp/colltune-svb.XXXXXX)
[ -n "${KEEP:-}" ] && echo "keeping $dir" || trap 'rm -rf "$dir"' EXIT
pass=0
prev=
for i in $(seq 1 "$n"); do
    out="$dir/run$i"
    "$bin" sweep --out "$out" "$@" >"$out.sweep" 2>&1 || { echo "run $i: sweep failed"; cat "$out.sweep"; continue; }
    "$bin" sweep --verify "$out/config.json" "$@" >"$out.verify" 2>&1
    rc=$?
    [ "$rc" -eq 0 ] && pass=$((pass + 1))
    worst=$(sed -n 's/^worst regret \([0-9.]*\).*/\1/p' "$out.verify")
    share=$(sed -n 's/.*measuring \([0-9]* s of [0-9]* s ([0-9]*%)\).*/\1/p' "$out.sweep")
    grep -q '(ran out' "$out.sweep" && share="$share, ran out"
    ranges=$(awk '/^[a-z]+: [0-9]+ ranks/{c=$1} /^  [0-9]/{n[c]++} END{for(k in n) printf "%s%d ", k, n[k]}' "$out.sweep")
    echo "run $i: verify exit $rc, worst regret $worst; measuring $share; ranges $ranges"
    grep ' FAIL$' "$out.verify" | sed 's/^/  /'
    if [ -n "$prev" ]; then
        python3 "$(dirname "$0")/config-agree.py" "$prev/config.json" "$out/config.json" |
            tee -a "$dir/agree" | sed "s/^/  agreement with run $((i - 1)): /"
    fi
    echo "$share" | sed -n 's/.*(\([0-9]*\)%).*/\1/p' >>"$dir/share"
    prev=$out
done
echo "sweep+verify: $pass of $n passed"
[ -s "$dir/share" ] && echo "measuring share: $(sort -n "$dir/share" | sed -n '1p')-$(sort -n "$dir/share" | sed -n '$p')% of each sweep's wall time ($(awk '$1 < 60' "$dir/share" | wc -l) of $(wc -l <"$dir/share") below 60%)"
[ -s "$dir/agree" ] && awk '/% of the log-size range agrees/ {c = $1; sub(":", "", c); v = $2 + 0; if (!(c in lo) || v < lo[c]) lo[c] = v}
    END {s = ""; for (c in lo) s = s sprintf("%s %s %d%%", s ? "," : "", c, lo[c]); print "agreement of consecutive sweeps, lowest per collective:" s}' "$dir/agree"
