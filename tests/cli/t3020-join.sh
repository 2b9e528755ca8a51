#!/bin/sh
# colltune join: the configs of several sweeps (one shape each) as one, whose exports carry a
# section per rank count (Open MPI's comm-size sections, MPICH's comm_size tree); what a config
# cannot hold twice refused in one line, exit 2, nothing written; the verified marks of what
# the join leaves unchanged kept; verify over a joined config judges the set of its own shape
# and keeps the others. (The joined Open MPI file obeyed by the real library: t3000.)
. "$(dirname "$0")/lib.sh"
here=$(cd "$(dirname "$0")" && pwd)
FIX="$here/../fixtures/export"
O2="$FIX/config-ompi-2ranks.json" M2="$FIX/config-mpich-2ranks.json" C4="$FIX/config-4ranks.json"
J="$COLLTUNE join"

# variants of the 2-rank Open MPI config: KIND OUT (python3 edits its JSON)
variant() {
    python3 - "$O2" "$2" "$1" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
lib, kind = d["libraries"][0], sys.argv[3]
if kind in ("four", "four-env", "four-v5"):  # the same rules on 4 hosts x 1 rank, other ids
    d["fingerprint"].update(hosts=4, ranks_per_host=1, nranks=4)
    for s in lib["rules"]:
        s.update(nranks=4, nnodes=4, ranks_per_node=1)
        for r in s["ranges"]:
            if r["algo"] == "ring":
                r.update(algo="recursive_doubling", id=3)
if kind == "four-env":
    lib["env"] = [{"name": "OMPI_MCA_btl_vader_eager_limit", "value": "8192"}]
if kind == "four-v5":
    lib["version"] = "5.0.3"
json.dump(d, open(sys.argv[2], "w"), indent=1)
EOF
}
variant four "$TMP/o4.json" && variant four-env "$TMP/o4env.json" && variant four-v5 "$TMP/o4v5.json" \
    || { not_ok "python3 made the variants"; done_testing; exit; }

# ---- bad input: one line, exit 2, nothing written ---------------------------------------
usage_says "one config" "two configs or more to join, 1 given" -- $J "$O2" --out "$TMP/x.json"
usage_says "no config" "two configs or more to join, 0 given" -- $J --out "$TMP/x.json"
usage_says "no --out" "--out FILE" -- $J "$O2" "$TMP/o4.json"
# an --out that is not a regular file: a FIFO without a reader hung the write for ever
mkfifo "$TMP/fifo" && timeout 20 $J "$O2" "$TMP/o4.json" --out "$TMP/fifo" >"$TMP/out" 2>"$TMP/err"
rc=$?
[ $rc = 2 ] && grep -q "^colltune join: error: --out: cannot write '.*fifo': not a regular file" "$TMP/err" \
    && ok "a FIFO as --out: refused, exit 2" || not_ok "a FIFO as --out: exit $rc $(head -c 200 "$TMP/err")"
usage_says "a device as --out" "--out: cannot write '/dev/null': not a regular file" -- \
    $J "$O2" "$TMP/o4.json" --out /dev/null
usage_says "an empty --out" "--out: an empty path" -- $J "$O2" "$TMP/o4.json" --out ''
usage_says "unknown option" "unknown option '--bogus'" -- $J "$O2" "$TMP/o4.json" --bogus --out "$TMP/x.json"
usage_says "a config twice" "config-ompi-2ranks.json: a set of Open MPI's allreduce on 2 ranks, where .*config-ompi-2ranks.json has one already: a config holds one per collective and rank count" \
    -- $J "$O2" "$O2" --out "$TMP/x.json"
usage_says "a third config with a rank count of the two before" "o4.json: a set of Open MPI's allreduce on 4 ranks, where one of .*config-ompi-2ranks.json, .*o4.json has one already" \
    -- $J "$O2" "$TMP/o4.json" "$TMP/o4.json" --out "$TMP/x.json"
usage_says "two releases" "o4v5.json: Open MPI 5.0.3, where .*config-ompi-2ranks.json has 4.1.4: a rules file is one release's ids" \
    -- $J "$O2" "$TMP/o4v5.json" --out "$TMP/x.json"
usage_says "two lists of launch settings" "o4env.json: Open MPI rules measured with launch settings OMPI_MCA_btl_vader_eager_limit=8192; those of .*config-ompi-2ranks.json with no launch settings" \
    -- $J "$O2" "$TMP/o4env.json" --out "$TMP/x.json"
usage_says "colltune's own rules twice" "a set of colltune's own allreduce on 4 ranks, where .*config-4ranks.json has one already" -- $J "$C4" "$C4" --out "$TMP/x.json"
sed 's/"transport": "[^"]*"/"transport": "tcp"/' "$C4" | sed 's/"nranks": 4/"nranks": 8/; s/"nnodes": 1/"nnodes": 2/' >"$TMP/c8tcp.json"
usage_says "colltune's own rules of two transports" "c8tcp.json: colltune's own rules tuned over tcp, where .*config-4ranks.json has them over shm" \
    -- $J "$C4" "$TMP/c8tcp.json" --out "$TMP/x.json"
sed 's/"maxbytes": 134217728/"maxbytes": 1048576/' "$TMP/o4.json" >"$TMP/o4grid.json"
usage_says "another grid of sizes" "o4grid.json: swept over 8 B..1 MiB x8, float32 sum, where .*config-ompi-2ranks.json was over 8 B..128 MiB x8, float32 sum" \
    -- $J "$O2" "$TMP/o4grid.json" --out "$TMP/x.json"
usage_says "a missing config" "cannot read '.*nope.json'" -- $J "$O2" "$TMP/nope.json" --out "$TMP/x.json"
head -c 300 "$O2" >"$TMP/trunc.json"
usage_says "a truncated config" "trunc.json" -- $J "$O2" "$TMP/trunc.json" --out "$TMP/x.json"
usage_says "an unwritable --out" "--out: cannot write" -- $J "$O2" "$TMP/o4.json" --out "$TMP/no/x.json"
[ -z "$(ls -a "$TMP" | grep 'x\.json')" ] && [ ! -e "$TMP/no" ] && ok "nothing written by a refused join" \
    || not_ok "a refused join wrote: $(ls -a "$TMP" | tr '\n' ' ')"

# ---- two rank counts of Open MPI, MPICH's section beside: one config ---------------------
expect 0 "join 2 and 4 ranks of Open MPI and 2 of MPICH" -- $J "$O2" "$TMP/o4.json" "$M2" --out "$TMP/all.json"
grep -q "Open MPI 4.1.4: 4 sets on 2, 4 ranks" "$TMP/out" && grep -q "MPICH 4.0.2: 2 sets on 2 ranks" "$TMP/out" \
    && ok "says what it joined: $(tr '\n' ' ' <"$TMP/out")" || not_ok "join's summary: $(cat "$TMP/out")"
expect 0 "show the joined config" -- $COLLTUNE show "$TMP/all.json"
[ "$(grep -c "^Open MPI 4.1.4 (measured, --lib ompi)" "$TMP/out")" = 4 ] && grep -q "allreduce: 4 ranks (4 nodes x 1)" "$TMP/out" \
    && ok "show: Open MPI's sets of both rank counts" || not_ok "show: $(grep '^Open MPI' "$TMP/out")"
grep -q "^cluster: 1 host x 2 ranks (2 ranks), .*; other shapes where a rule set names one" "$TMP/out" \
    && ok "show: the first config's shape, and that sets name others" || not_ok "show's cluster line: $(grep cluster: "$TMP/out")"
# the cluster and sweep lines are one sweep's: said so (they read as the whole config's)
grep -q "^joined: 3 sweeps' configs (colltune join); the cluster and sweep lines are one of them's" "$TMP/out" \
    && grep -q '"joined": 3' "$TMP/all.json" && ok "show: joined from 3 configs, the lines one of them's" \
    || not_ok "show's joined line: $(grep -i joined "$TMP/out" "$TMP/all.json")"
# what MPICH's engine refused in its own sweep is kept beside the first config's sweep settings
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); d["sweep"]["refused"]="allreduce: mpich:smp cannot run this point in MPICH: Failure during collective (at 6 sizes)"; json.dump(d, open(sys.argv[2], "w"))' "$M2" "$TMP/m2ref.json"
expect 0 "join Open MPI's config and MPICH's with a refusal" -- $J "$O2" "$TMP/m2ref.json" --out "$TMP/ref.json"
$COLLTUNE show "$TMP/ref.json" | grep -q "^not measured where the engine refused them: allreduce: mpich:smp cannot run this point in MPICH: Failure during collective (at 6 sizes)\$" \
    && ok "show: MPICH's refusal, from the second config" || not_ok "show's refusals: $($COLLTUNE show "$TMP/ref.json" | grep refused)"
expect 0 "export the joined Open MPI rules" -- $COLLTUNE export "$TMP/all.json" --format ompi-rules --out "$TMP/r.conf"
# allreduce (2): sections from 0, 2 (ring from 4 KiB: 4), 3, 4 (recursive doubling: 3), 5 and up
awk '/^2 .*# allreduce/ { on = 1 } on && /# communicators of/ { print $1 }' "$TMP/r.conf" | tr '\n' ' ' >"$TMP/secs"
[ "$(cat "$TMP/secs")" = "0 2 3 4 5 " ] && grep -q "^4096 4 0 0 .*ring" "$TMP/r.conf" && grep -q "^4096 3 0 0 .*recursive_doubling" "$TMP/r.conf" \
    && ok "ompi-rules: a comm-size section of 2 ranks (ring) and of 4 (recursive doubling), the fixed decision between and above" \
    || not_ok "ompi-rules sections: $(cat "$TMP/secs")"
expect 0 "export the joined MPICH JSON" -- $COLLTUNE export "$TMP/all.json" --format mpich-json --out "$TMP/m.json"
python3 -c "import json,sys; json.load(open(sys.argv[1]))" "$TMP/m.json" && grep -q "comm_size<=2" "$TMP/m.json" \
    && ok "mpich-json of the joined config: valid, bounded to its 2 ranks" || not_ok "mpich-json: $(head -c 300 "$TMP/m.json")"
expect 0 "export --nranks 4: the 4-rank rules alone" -- $COLLTUNE export "$TMP/all.json" --format ompi-rules --nranks 4 --out "$TMP/r4.conf"
grep -q "^# measured on 1 host(s) x 2 ranks and 4 host(s) x 1 ranks, float32 sum\$" "$TMP/r.conf" \
    && ok "ompi-rules header: the shapes of its sets, the first config's first" || not_ok "header: $(sed -n 3p "$TMP/r.conf")"
grep -q "^# measured on 4 host(s) x 1 ranks, float32 sum\$" "$TMP/r4.conf" \
    && ok "--nranks 4's header: the shape of the sets it writes alone" || not_ok "--nranks 4's header: $(sed -n 3p "$TMP/r4.conf")"
grep -q "^# measured on 1 host(s) x 2 ranks, float32 sum\$" "$TMP/m.json.env" \
    && ok "mpich-json's header: MPICH's section's one shape, not Open MPI's other" || not_ok "mpich-json's header: $(sed -n 3p "$TMP/m.json.env")"
grep -q "^4096 3 0 0" "$TMP/r4.conf" && ! grep -q "^4096 4 0 0" "$TMP/r4.conf" \
    && ok "--nranks 4 picks the 4-rank section" || not_ok "--nranks 4: $(grep -v '^#' "$TMP/r4.conf" | head -20 | tr '\n' '|')"

# ---- marks: a set's stays, the settings' the one that found least, the whole export's goes
python3 - "$O2" "$TMP/o4.json" "$TMP/m2" "$TMP/m4" <<'EOF' || not_ok "python3 marked the configs"
import json, sys
for src, dst, at in ((sys.argv[1], sys.argv[3], "2026-12-01T00:00:00Z"), (sys.argv[2], sys.argv[4], "2026-12-02T00:00:00Z")):
    d = json.load(open(src))
    d["libraries"][0]["rules"][0]["verified"] = {"at": at, "geomean": 1.25, "tell": 1.1}
    d["libraries"][0]["env"] = [{"name": "OMPI_MCA_btl_vader_eager_limit", "value": "8192"}]
    d["libraries"][0]["env_verified"] = {"at": at, "geomean": 1.1 if at < "2026-12-02" else 1.05}
    d["libraries"][0]["whole_verified"] = {"at": at, "geomean": 1.2}
    json.dump(d, open(dst + ".json", "w"))
EOF
expect 0 "join two configs, each with a set's mark and a whole export's" -- $J "$TMP/m2.json" "$TMP/m4.json" --out "$TMP/m24.json"
python3 - "$TMP/m24.json" >"$TMP/py" 2>&1 <<'EOF'
import json, sys
l = json.load(open(sys.argv[1]))["libraries"][0]
marks = [s.get("verified", {}).get("at") for s in l["rules"]]
assert marks[0] == "2026-12-01T00:00:00Z" and marks[2] == "2026-12-02T00:00:00Z", marks
assert "whole_verified" not in l, l.get("whole_verified")
assert l["env_verified"]["geomean"] == 1.1, l["env_verified"]
EOF
[ $? = 0 ] && ok "each set's mark kept, the settings' the one that found least, the whole export's gone" || not_ok "marks: $(cat "$TMP/py")"
expect 0 "show the joined config with its marks" -- $COLLTUNE show "$TMP/m24.json"
[ "$(grep -c "^verified against the defaults with the launch settings at 2026-12-0[12]T00:00:00Z" "$TMP/out")" = 2 ] \
    && ok "show reads both sets' marks as valid" || not_ok "show's marks: $(grep -i verif "$TMP/out" | head -4)"
expect 0 "the joined config joins again (its output named as an input)" -- $J "$TMP/m24.json" "$M2" --out "$TMP/m24.json"
grep -q "MPICH 4.0.2: 2 sets" "$TMP/out" && $COLLTUNE show "$TMP/m24.json" | grep -q "^MPICH 4.0.2 (measured" \
    && ok "a config joined in place: the file holds MPICH's section" || not_ok "join in place: $(cat "$TMP/out")"
usage_says "/dev/full as --out" "--out: cannot write '/dev/full': not a regular file" -- \
    $J "$O2" "$TMP/o4.json" --out /dev/full
# ---- colltune's own rules: a verify of the joined config checks the sets of its rank count --
python3 - "$C4" "$TMP/n4.json" "$TMP/n2.json" <<'EOF' || not_ok "python3 made the native configs"
import json, sys
d = json.load(open(sys.argv[1]))  # allreduce alone, to 64 KiB: a short verify
d["sweep"]["maxbytes"] = 65536
d["rules"] = [s for s in d["rules"] if s["coll"] == "allreduce"]
json.dump(d, open(sys.argv[2], "w"))
d["rules"][0].update(nranks=2, nnodes=1, ranks_per_node=2)
json.dump(d, open(sys.argv[3], "w"))
EOF
expect 0 "join colltune's own rules of 4 and 2 ranks" -- $J "$TMP/n4.json" "$TMP/n2.json" --out "$TMP/n24.json"
$COLLTUNE sweep --local 2 --verify "$TMP/n24.json" >"$TMP/out" 2>"$TMP/err"; rc=$?
{ [ $rc = 0 ] || [ $rc = 3 ]; } && grep -q "^verifying .*n24.json: 2 ranks" "$TMP/out" && grep -q "^allreduce  *0 B\.\." "$TMP/out" \
    && grep -q "^allreduce  *on 4 ranks: not verified here (this run has 2 ranks)" "$TMP/out" \
    && ok "sweep --local 2 --verify of it: the 2-rank set checked, the 4-rank one said not verified here (exit $rc)" \
    || { not_ok "native verify of the joined config (exit $rc)"; sed 's/^/#   /' "$TMP/err" | head -5; }
usage_says "a verify on a rank count the joined config has no set of" "the allreduce rules were tuned for 4 ranks; this run has 3" \
    -- $COLLTUNE sweep --local 3 --verify "$TMP/n24.json"

# ---- verify over the joined config: each set on its own shape, the others kept as they are --
have() { command -v "$1" >/dev/null 2>&1; }
if have mpicc.openmpi && have mpirun.openmpi && [ -e "$(dirname "$COLLTUNE")/build/ct-lib-ompi.so" ]; then
    python3 - "$O2" "$TMP/v2.json" "$TMP/v4.json" <<'EOF' || not_ok "python3 made the small configs"
import json, sys
d = json.load(open(sys.argv[1]))  # allreduce alone, 3 sizes: a short verify
d["sweep"].update(minbytes=8, maxbytes=65536, stepfactor=64.0)
lib = d["libraries"][0]
lib["rules"] = [s for s in lib["rules"] if s["coll"] == "allreduce"]
r = lib["rules"][0]["ranges"]
lib["rules"][0]["ranges"] = [dict(r[0], max_bytes=4096), dict(r[1], min_bytes=4096, max_bytes=None)]
json.dump(d, open(sys.argv[2], "w"))
d["fingerprint"].update(hosts=4, ranks_per_host=1, nranks=4)
lib["rules"][0].update(nranks=4, nnodes=4, ranks_per_node=1)
json.dump(d, open(sys.argv[3], "w"))
EOF
    expect 0 "join the small configs of 2 local ranks and 4 hosts" -- $J "$TMP/v2.json" "$TMP/v4.json" --out "$TMP/v24.json"
    $COLLTUNE sweep --verify "$TMP/v24.json" --lib ompi >"$TMP/out" 2>"$TMP/err"; rc=$?
    { [ $rc = 0 ] || [ $rc = 3 ]; } && grep -q "^allreduce on 2 ranks: exported vs defaults" "$TMP/out" \
        && grep -q "^allreduce on 4 ranks, 4 nodes: not verified here (--hosts LIST runs it across hosts)" "$TMP/out" \
        && ok "verify without --local: the set of 2 ranks on 2 local ranks, the 4 hosts' said not verified here (exit $rc)" \
        || { not_ok "verify of the joined config (exit $rc)"; sed 's/^/#   /' "$TMP/err" | head -5; }
    python3 - "$TMP/v24.json" "$TMP/v24.verified.json" >"$TMP/py" 2>&1 <<'EOF'
import json, sys
a, b = (json.load(open(f))["libraries"][0]["rules"] for f in sys.argv[1:3])
assert len(b) == 2 and a[1] == b[1], "the 4-rank set changed: %s" % b[1:]
# its ring rule kept (shown faster): the set marked; set back (no gain shown, a tie on most
# machines): Open MPI's own choice everywhere changes nothing, and is not marked
if any(x["algo"] != "default" for x in b[0]["ranges"]):
    assert b[0]["verified"]["geomean"] > 0, b[0]
else:
    assert "verified" not in b[0], b[0]
EOF
    [ $? = 0 ] && ok "its .verified.json: the 2-rank set judged (marked where its rule holds), the 4-rank set as it was" || not_ok "verified.json: $(cat "$TMP/py")"
else
    skip "verify over the joined config (mpicc.openmpi/mpirun.openmpi or build/ct-lib-ompi.so not found)"
fi
expect 0 "join --help" -- $J --help
grep -q "usage: colltune join CONFIG CONFIG... --out FILE" "$TMP/out" && ok "--help's usage line" || not_ok "join --help"
done_testing
