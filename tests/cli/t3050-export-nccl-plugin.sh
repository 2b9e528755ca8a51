#!/bin/sh
# colltune export --format nccl-plugin: a config with a measured NCCL section gives export lines
# that load colltune's NCCL tuner plugin (absolute paths that exist, usable from a shell); one
# without gives the mapped NCCL settings labelled "not measured" in the file and on stderr; an
# NCCL section the plugin would refuse, or a missing plugin, is one line and exit 2. Each
# measured rule is said verified (sweep --verify --lib nccl's record) or not, as for the MPI
# libraries' exports.
. "$(dirname "$0")/lib.sh"
here=$(cd "$(dirname "$0")" && pwd)
C4="$here/../fixtures/export/config-4ranks.json"
X="$COLLTUNE export"
LABEL="mapped from colltune's own algorithms, not measured"

# the fixture plus an NCCL section ($1: its rules array)
with_nccl() {
    python3 - "$C4" "$1" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
c["libraries"] = [{"library": "nccl", "name": "NCCL", "version": "2.28.9",
                   "rules": json.loads(sys.argv[2])}]
print(json.dumps(c, indent=1))
PY
}
with_nccl '[{"coll": "allreduce", "nnodes": 1, "ranks_per_node": 8, "nranks": 8,
  "dtype": "float32", "op": "sum", "ranges": [
  {"min_bytes": 0, "max_bytes": 65536, "algo": "ring", "id": 1,
   "params": {"proto": "LL", "channels": 8}, "confidence": 0.9, "tie": false,
   "runner_up": "tree", "gain": 1.3, "default": false},
  {"min_bytes": 65536, "max_bytes": null, "algo": "ring", "params": {"proto": "Simple"},
   "default": true}]}]' >"$TMP/measured.json"
with_nccl '[{"coll": "allreduce", "nnodes": 1, "nranks": 8, "ranges": [
  {"min_bytes": 0, "max_bytes": 64, "algo": "ring", "params": {"proto": "LLX"}}]}]' >"$TMP/bad.json"
# the same rule as NCCL's verify marks it (sweep --verify --lib nccl on a GPU host)
sed 's/"coll": "allreduce",/"coll": "allreduce", "verified": {"at": "2026-11-29T14:00:00Z", "geomean": 0.875},/' \
    "$TMP/measured.json" >"$TMP/verified.json"
sed 's/"geomean": 0.875/"geomean": -1/' "$TMP/verified.json" >"$TMP/badrec.json"
NV="allreduce on 8 ranks (1 x 8): measured, not verified against NCCL's defaults; run \`colltune sweep --verify CONFIG --lib nccl\`"
YV="# allreduce on 8 ranks (1 x 8): verified against NCCL 2.28.9's defaults at 2026-11-29T14:00:00Z (colltune sweep --verify: no size slower beyond its interval): geomean 0.875 exported/default"

# ---- measured: the plugin and the config, by absolute path ---------------------------------
expect 0 "measured NCCL section" -- $X "$TMP/measured.json" --format nccl-plugin --out "$TMP/p.env"
. "$TMP/p.env"
case "$NCCL_TUNER_PLUGIN" in
/*/libnccl-tuner-colltune.so) [ -r "$NCCL_TUNER_PLUGIN" ] && ok "NCCL_TUNER_PLUGIN is the built plugin: $NCCL_TUNER_PLUGIN" || not_ok "plugin $NCCL_TUNER_PLUGIN unreadable" ;;
*) not_ok "NCCL_TUNER_PLUGIN='$NCCL_TUNER_PLUGIN'" ;;
esac
[ "$COLLTUNE_CONFIG" = "$TMP/measured.json" ] && ok "COLLTUNE_CONFIG is the config" || not_ok "COLLTUNE_CONFIG='$COLLTUNE_CONFIG'"
grep -q "1 NCCL rule(s) measured with NCCL 2.28.9" "$TMP/p.env" && ok "header names the section" || not_ok "header: $(head -8 "$TMP/p.env")"
grep -q "$LABEL" "$TMP/p.env" "$TMP/err" && not_ok "measured output labelled mapped" || ok "measured output is not labelled mapped"
grep -q "^# $NV" "$TMP/p.env" && grep -q "$NV" "$TMP/err" && ok "not verified: said in the file and on stderr" || not_ok "unverified: $(cat "$TMP/err")"
unset NCCL_TUNER_PLUGIN COLLTUNE_CONFIG
expect 0 "verified NCCL section" -- $X "$TMP/verified.json" --format nccl-plugin --out "$TMP/v.env"
grep -qxF "$YV" "$TMP/v.env" && ok "the verify record in the header" || not_ok "header: $(head -12 "$TMP/v.env")"
grep -q "not verified" "$TMP/v.env" "$TMP/err" && not_ok "verified section called unverified" || ok "no unverified note"
COLLTUNE_NCCL_PLUGIN="$TMP/p.env" expect 0 "COLLTUNE_NCCL_PLUGIN overrides" -- $X "$TMP/measured.json" --format nccl-plugin
grep -q "NCCL_TUNER_PLUGIN='$TMP/p.env'" "$TMP/out" && ok "override used" || not_ok "override: $(cat "$TMP/out")"

# ---- no measured section: mapped settings, labelled -------------------------------------------
expect 0 "no NCCL section" -- $X "$C4" --format nccl-plugin --out "$TMP/m.env"
head -5 "$TMP/m.env" | grep -q "^# $LABEL" && ok "file header labelled" || not_ok "file: $(head -3 "$TMP/m.env")"
grep -q "$LABEL" "$TMP/err" && ok "stderr labelled" || not_ok "stderr: $(cat "$TMP/err")"
grep -q "NCCL_TUNER_PLUGIN" "$TMP/m.env" && not_ok "mapped output loads the plugin" || ok "mapped output does not load the plugin"
sh -n "$TMP/m.env" && ok "mapped output is valid sh" || not_ok "mapped output is not valid sh"

# ---- nccl-tuner: the example plugin's CSV from the measured section, or mapped and labelled -----
expect 0 "nccl-tuner from the measured section" -- $X "$TMP/measured.json" --format nccl-tuner --out "$TMP/t.csv"
grep -qx "allreduce,0,65535,ring,ll,8,1,8" "$TMP/t.csv" && ok "the measured line" || not_ok "csv: $(grep -v '^#' "$TMP/t.csv")"
[ "$(grep -vc '^#' "$TMP/t.csv")" = 1 ] && ok "NCCL's own choice gets no line" || not_ok "lines: $(grep -v '^#' "$TMP/t.csv")"
grep -q "NCCL's own choice measured best" "$TMP/err" && ok "and says so" || not_ok "stderr: $(cat "$TMP/err")"
grep -q "$LABEL" "$TMP/t.csv" "$TMP/err" && not_ok "measured CSV labelled mapped" || ok "measured CSV not labelled mapped"
# what NCCL's verify checks is colltune's plugin: the example plugin's CSV is never said verified
CV="not verified: \`colltune sweep --verify --lib nccl\` checks colltune's own tuner plugin"
# the measured lines carry NCCL's own protocol and channels: options that would not be read
usage_says "nccl-tuner --nccl-proto of a measured section" "NCCL section was measured" -- $X "$TMP/measured.json" --format nccl-tuner --nccl-proto ll128
usage_says "nccl-plugin --nccl-channels of a measured section" "applies to --format nccl-tuner" -- $X "$TMP/measured.json" --format nccl-plugin --nccl-channels 3
usage_says "nccl-plugin --nccl-proto of a measured section" "NCCL section was measured" -- $X "$TMP/measured.json" --format nccl-plugin --nccl-proto ll128
expect 0 "nccl-tuner from a verified section" -- $X "$TMP/verified.json" --format nccl-tuner --out "$TMP/v.csv"
grep -q "^# $CV" "$TMP/v.csv" && grep -q "$CV" "$TMP/err" && ! grep -qF "$YV" "$TMP/v.csv" \
    && ok "CSV: not what verify checked, said in the file and on stderr" || not_ok "CSV: $(head -12 "$TMP/v.csv")"
expect 0 "nccl-tuner without a section" -- $X "$C4" --format nccl-tuner --out "$TMP/tm.csv"
grep -q "^# $LABEL; run \`colltune sweep --lib nccl\` on a GPU host" "$TMP/tm.csv" && grep -q "$LABEL" "$TMP/err" \
    && ok "mapped CSV labelled in the file and on stderr" || not_ok "mapped CSV: $(head -8 "$TMP/tm.csv")"
for f in ucc impi; do
    expect 0 "$f export" -- $X "$C4" --format $f
    grep -q "^# $LABEL (colltune has no" "$TMP/out" && grep -q "$LABEL" "$TMP/err" \
        && ok "$f labelled mapped" || not_ok "$f: $(head -6 "$TMP/out")"
done

# ---- refusals ---------------------------------------------------------------------------------
usage_error "NCCL section the plugin refuses" -- $X "$TMP/bad.json" --format nccl-plugin --out "$TMP/w.env"
grep -q "libraries\[0\].rules\[0\].ranges\[0\].params.proto" "$TMP/err" && ok "names the field" || not_ok "field not named"
[ ! -e "$TMP/w.env" ] && ok "nothing written" || not_ok "wrote $TMP/w.env"
usage_error "malformed verify record" -- $X "$TMP/badrec.json" --format nccl-tuner --out "$TMP/w.csv"
grep -q "libraries\[0\].rules\[0\].verified.geomean" "$TMP/err" && ok "names the record's field" || not_ok "record: $(cat "$TMP/err")"
[ ! -e "$TMP/w.csv" ] && ok "nothing written" || not_ok "wrote $TMP/w.csv"
COLLTUNE_NCCL_PLUGIN="$TMP/nope.so" usage_error "missing plugin" -- $X "$TMP/measured.json" --format nccl-plugin
done_testing
