#!/bin/sh
# sweep --verify CONFIG --lib ompi --each-setting: where a config's launch settings together are
# slower than Open MPI's defaults at a size (or show no gain), each is left out in turn, the
# others judged alone against the plain defaults, and the copy verify writes keeps the others
# that hold. A real case, made certain here: a site whose MCA parameter file sets vader's eager
# limit to 1024 (2 KiB takes the rendezvous path: 3.7-7.5 us against 0.6-0.9 us, three runs of 200 calls), a config
# whose settings set it back to 4096 (about 5x faster at 2 KiB) beside OMPI_MCA_btl=self,tcp
# (TCP over loopback, 3-4x slower there): together slower, the eager limit alone kept.
. "$(dirname "$0")/lib.sh"
have() { command -v "$1" >/dev/null 2>&1; }
V="$COLLTUNE sweep --verify"

usage_says "--each-setting without --verify" "--each-setting is for sweep --verify CONFIG" -- \
    $COLLTUNE sweep --lib ompi --local 2 --each-setting -e 64
usage_says "--each-setting without --lib" "--each-setting is for sweep --verify CONFIG --lib ompi or mpich" -- \
    $COLLTUNE sweep --each-setting -e 64
usage_says "run --each-setting" "--each-setting is for sweep --verify CONFIG --lib" -- \
    $COLLTUNE run --lib ompi --local 2 --each-setting

if ! have mpicc.openmpi || ! have mpirun.openmpi || ! have ompi_info; then
    skip "Open MPI engine (mpicc.openmpi/mpirun.openmpi/ompi_info not found)"
    done_testing; exit
fi
# the site's file first, then the files Open MPI reads by default (Debian's keeps UCX out)
own=$(ompi_info --parsable --level 9 --param mca base 2>/dev/null | sed -n 's/^mca:mca:base:param:mca_base_param_files:value://p')
echo "btl_vader_eager_limit = 1024" >"$TMP/site.conf"
OMPI_MCA_mca_base_param_files="$TMP/site.conf${own:+,$own}"
export OMPI_MCA_mca_base_param_files
# the rules of a sweep's config at FILE kept at Open MPI's own choice: the settings are what
# is judged
own_rules() {
    python3 -c 'import json, sys; d = json.load(open(sys.argv[1]))
for r in d["libraries"][0]["rules"][0]["ranges"]:
    r.update(algo="default", id=0, default=True, ties=[], params={"segsize": 0})
json.dump(d, open(sys.argv[1], "w"))' "$1"
}
# the copy at FILE keeps the eager limit alone, marked verified
keeps_eager() {
    python3 -c 'import json, sys; l = json.load(open(sys.argv[1]))["libraries"][0]
assert l["env"] == [{"name": "OMPI_MCA_btl_vader_eager_limit", "value": "4096"}], l["env"]
assert 0 < l["env_verified"]["geomean"] < 1 and l["env_verified"]["tell"] >= 1.03, l' "$1"
}
expect 0 "a sweep with the two settings" -- $COLLTUNE sweep --lib ompi --local 2 --coll allreduce \
    -b 2K -e 2K --env OMPI_MCA_btl_vader_eager_limit=4096 --env OMPI_MCA_btl=self,tcp --out "$TMP/s"
own_rules "$TMP/s/config.json"

$V "$TMP/s/config.json" --lib ompi --each-setting >"$TMP/out" 2>"$TMP/err"; rc=$?
[ $rc -eq 3 ] && grep -q "^the launch settings: SLOWER than the defaults at a size: judged again, each left out in turn (geomean [0-9.]*)$" "$TMP/out" \
    && grep -q "^--each-setting: the 2 launch settings judged again with each left out in turn\$" "$TMP/out" \
    && grep -q "^--each-setting: without OMPI_MCA_btl_vader_eager_limit: SLOWER than the defaults at a size" "$TMP/out" \
    && grep -q "^--each-setting: without OMPI_MCA_btl: faster, no size slower (geomean 0\.[0-9]*)\$" "$TMP/out" \
    && grep -q "^--each-setting: OMPI_MCA_btl=self,tcp left out: the other 1 held without it" "$TMP/out" \
    && grep -q "^colltune sweep: --each-setting: OMPI_MCA_btl=self,tcp left out of the copy: the 2 settings together did not hold, the other 1 did without it\$" "$TMP/err" \
    && keeps_eager "$TMP/s/config.verified.json" \
    && ok "together slower (exit 3): each left out in turn, the copy keeps the eager limit, marked verified" \
    || { not_ok "--each-setting (exit $rc)"; sed 's/^/#   /' "$TMP/err"; grep "^--each\|^the launch" "$TMP/out" | sed 's/^/#   /'; }
# the rules keep Open MPI's own choice at every size: nothing of them to judge, no launches
# (the same code on both sides), the copy written for the settings' mark, no warning on export
grep -q "^allreduce on 2 ranks: the file keeps Open MPI's own choice at every size, the same code on both sides: nothing to judge (the launch settings were, above)\$" "$TMP/out" \
    && ! grep -q "alternating launches (A B B A" "$TMP/out" \
    && python3 -c 'import json, sys; s = json.load(open(sys.argv[1]))["libraries"][0]["rules"][0]
assert "verified" not in s, s' "$TMP/s/config.verified.json" \
    && ok "the rules at Open MPI's own choice everywhere: not judged, said so, the set not marked" \
    || not_ok "own rules: $(grep "^allreduce on" "$TMP/out")"
# the rules (and the whole export) judged with the one kept, not the two
sed -n '/left out: the other 1 held/,$p' "$TMP/out" | tail -n +2 >"$TMP/after"
! grep -q "OMPI_MCA_btl=self,tcp" "$TMP/after" \
    && ok "the rest of the verify runs CONFIG without it" || not_ok "after: $(grep "self,tcp" "$TMP/after")"
expect 0 "its export" -- $COLLTUNE export "$TMP/s/config.verified.json" --for ompi --out "$TMP/x"
grep -q "^export OMPI_MCA_btl_vader_eager_limit='4096'\$" "$TMP/x.env" && ! grep -q "self,tcp" "$TMP/x.env" \
    && ok "the export sets the one kept, not the other" || not_ok "export: $(cat "$TMP/x.env")"
grep -q "^# allreduce on 2 ranks (1 x 2): keeps Open MPI's own choice at every size (measured best, or set back by sweep --verify): nothing of it to verify\$" "$TMP/x" \
    && ! grep -q "not verified" "$TMP/x" "$TMP/err" \
    && ok "the export: the collective at Open MPI's own, nothing of it to verify; no warning" \
    || not_ok "export of an own set: $(grep "allreduce\|verified" "$TMP/x" "$TMP/err")"

# together kept: each judged against it unset, the other on both sides. A
# setting at Open MPI's own value (vader's max send size, 32768) rides on the eager limit's
# gain: no gain beside it (or slower at a size, by chance), left out; the eager limit alone
# judged against the plain defaults holds; --reverify 1 verifies the copy again.
expect 0 "a sweep with a setting that gains and one at Open MPI's own value" -- $COLLTUNE sweep --lib ompi \
    --local 2 --coll allreduce -b 2K -e 2K --env OMPI_MCA_btl_vader_eager_limit=4096 \
    --env OMPI_MCA_btl_vader_max_send_size=32768 --out "$TMP/h"
own_rules "$TMP/h/config.json"
$V "$TMP/h/config.json" --lib ompi --each-setting --reverify 1 >"$TMP/out" 2>"$TMP/err"; rc=$?
[ $rc -eq 0 ] && grep -q "^the launch settings: faster, no size slower: kept" "$TMP/out" \
    && grep -q "^--each-setting: the 2 launch settings held together; each judged against it unset (Open MPI's or glibc's own value), the other 1 on both sides\$" "$TMP/out" \
    && grep -q "^--each-setting: OMPI_MCA_btl_vader_eager_limit beside the others: faster, no size slower (geomean 0\.[0-9]*)\$" "$TMP/out" \
    && grep -q "^--each-setting: OMPI_MCA_btl_vader_max_send_size beside the others: \(no gain shown\|SLOWER than without it at a size\)" "$TMP/out" \
    && grep -q "(A: the value judged, B: without it)" "$TMP/out" \
    && grep -q "^--each-setting: without OMPI_MCA_btl_vader_max_send_size: faster, no size slower" "$TMP/out" \
    && grep -q "^colltune sweep: --each-setting: OMPI_MCA_btl_vader_max_send_size=32768 left out of the copy: \(no gain shown\|slower than without it at a size\) beside the other 1, which held without it\$" "$TMP/err" \
    && grep -q "^--reverify: round 2 of at most 2" "$TMP/out" \
    && keeps_eager "$TMP/h/config.verified.json" \
    && ok "together kept (exit 0): each judged beside the other, the one at Open MPI's own value left out, the copy verified again" \
    || { not_ok "--each-setting, together kept (exit $rc)"; sed 's/^/#   /' "$TMP/err"; grep "^--each\|^the launch\|^--reverify" "$TMP/out" | sed 's/^/#   /'; }

# a setting the others need for room in vader's segment (an eager limit of 1 MiB beside the
# segment that holds its fragments): beside the others it is kept without a launch (without
# it they would run over TCP); the eager limit is judged beside the segment as any other
E=OMPI_MCA_btl_vader_eager_limit SEG=OMPI_MCA_btl_vader_segment_size
expect 0 "a sweep with an eager limit and the segment that holds it" -- $COLLTUNE sweep --lib ompi \
    --local 2 --coll allreduce -b 2K -e 2K --env $E=1048576 --env $SEG=9437184 --out "$TMP/g"
own_rules "$TMP/g/config.json"
$V "$TMP/g/config.json" --lib ompi --each-setting >"$TMP/out" 2>"$TMP/err"; rc=$?
[ $rc -eq 0 ] && grep -q "^the launch settings: faster, no size slower: kept" "$TMP/out" \
    && grep -q "^--each-setting: $E beside the others: faster, no size slower" "$TMP/out" \
    && grep -q "^--each-setting: $SEG beside the others: kept, not judged (the others need it): $E=1048576: .*set $SEG=9437184 beside it\$" "$TMP/out" \
    && [ "$(grep -c "^--each-setting: .*=.* against it unset, the other" "$TMP/out")" -eq 1 ] \
    && grep -q "^--each-setting: each of the 2 showed a gain beside the others: all kept" "$TMP/out" \
    && ok "the segment the eager limit needs: kept beside it without a launch over TCP" \
    || { not_ok "--each-setting, the segment (exit $rc)"; sed 's/^/#   /' "$TMP/err"; grep "^--each\|^the launch" "$TMP/out" | sed 's/^/#   /'; }

done_testing
