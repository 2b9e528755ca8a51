#!/bin/sh
# colltune export: bad input is one line and exit 2 with nothing written; every format writes
# atomically with its sidecars; env and slurm outputs work in a real shell; the real consumers
# accept and apply the files: Open MPI runs the algorithm the rules name for sizes at both ends
# of every range (seen through an LD_PRELOAD shim), MPICH loads the JSON through its CVAR and
# routes each size range to its leaf (seen through asserting probe leaves); pushes reach nginx
# (WebDAV PUT, TLS with a CA made here, auth header from a file) and a Prometheus Pushgateway,
# and a refusing port, a timeout, a 401 and a 503 each fail with exit 1 and one clear line.
. "$(dirname "$0")/lib.sh"
here=$(cd "$(dirname "$0")" && pwd)
FIX="$here/../fixtures/export"
C4="$FIX/config-4ranks.json"
CC="$FIX/config-cluster.json"
X="$COLLTUNE export"
PIDS=""
trap 'for p in $PIDS; do kill "$p" 2>/dev/null; done; wait 2>/dev/null; rm -rf "$TMP"' EXIT
have() { command -v "$1" >/dev/null 2>&1; }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# ---- bad input: one line, exit 2, nothing written ----------------------------------------
mkdir "$TMP/w"
usage_error "no config" -- $X --format json
usage_error "no format" -- $X "$C4"
usage_error "format typo" -- $X "$C4" --format ompi-rule --out "$TMP/w/x"
grep -q "did you mean 'ompi-rules'" "$TMP/err" && ok "typo gets a suggestion" || not_ok "typo gets a suggestion"
sed 's#"colltune-config/1"#"colltune-sweep/1"#' "$C4" >"$TMP/sweep-schema.json"
usage_error "results file instead of a config" -- $X "$TMP/sweep-schema.json" --format json
sed 's#"colltune-config/1"#"colltune-config/2"#' "$C4" >"$TMP/v2.json"
usage_error "config of another version" -- $X "$TMP/v2.json" --format json
head -c 300 "$C4" >"$TMP/trunc.json"
usage_error "truncated config" -- $X "$TMP/trunc.json" --format json
usage_error "missing config" -- $X "$TMP/nope.json" --format json
usage_error "env without --for" -- $X "$C4" --format env
usage_error "--for on a library format" -- $X "$C4" --format ompi-rules --for nccl
usage_error "unknown --for" -- $X "$C4" --format env --for openmpi
usage_error "ompi env without a rules file" -- $X "$C4" --format env --for ompi
nl='
'
usage_error "--out with a newline in it (it would start a line in the file's comments)" -- $X "$C4" --format ompi-rules --out "$TMP/a${nl}b"
[ ! -e "$TMP/a${nl}b" ] && ok "nothing written there" || not_ok "a file with a newline in its name"
usage_error "--rules-file with a newline in it" -- $X "$C4" --format env --for ompi --rules-file "$TMP/r${nl}x" --out "$TMP/e.env"
usage_error "bad --lib-version" -- $X "$C4" --format ompi-rules --lib-version five
usage_says "a release series colltune does not write for" "Open MPI 4.x to 6.x only" -- $X "$C4" --format ompi-rules --lib-version 9.9
usage_says "an Intel MPI release colltune does not write for" "Intel MPI 2019.x to 2021.x only" -- $X "$C4" --format env --for impi --lib-version 2023
usage_error "nccl-tuner for a version without the CSV plugin" -- $X "$C4" --format nccl-tuner --lib-version 2.26
usage_error "--nranks with no rules" -- $X "$C4" --format csv --nranks 7
# the push's own options without a push: refused, not ignored
for a in "--push-method POST" "--header X:env:HOME" "--insecure" "--push-timeout 5" "--push-retries 1"; do
    # shellcheck disable=SC2086
    usage_says "$a without --push" "is for --push or --push-metrics URL" -- $X "$C4" --format json $a
done
usage_says "--results without --push-metrics" "--results is for --push-metrics URL" -- $X "$C4" --format json --results /nonexist
usage_says "--push-retries 2.5 (a whole number)" "bad --push-retries '2.5'" -- $X "$C4" --format json --push-retries 2.5 --push http://127.0.0.1:1/x
usage_error "bad --nccl-proto" -- $X "$C4" --format nccl-tuner --nccl-proto LL
usage_error "unwritable --out" -- $X "$C4" --format ompi-rules --out /proc/colltune/rules
usage_error "--out is a folder" -- $X "$C4" --format ompi-rules --out "$TMP/w"
usage_error "--out in a missing folder" -- $X "$C4" --format csv --out "$TMP/w/no/such/x.csv"
# what a rename would put a regular file in place of (a device node, as root), and the config
# itself, are refused; options the format reads nowhere too (they were ignored)
mkfifo "$TMP/fifo"
usage_says "--out is a FIFO" "not a regular file" -- $X "$C4" --format csv --out "$TMP/fifo"
[ -p "$TMP/fifo" ] && ok "... the FIFO is left a FIFO" || not_ok "the FIFO was replaced"
cp "$C4" "$TMP/self.json"
usage_says "--out is the config read" "it is the config read" -- $X "$TMP/self.json" --format ompi-rules --out "$TMP/self.json"
usage_says "--rules-file is the config read" "it is the config read" -- $X "$TMP/self.json" --format env --for ompi --rules-file "$TMP/self.json" --out "$TMP/w/e.env"
cmp -s "$C4" "$TMP/self.json" && ok "... the config is unchanged" || not_ok "the config was written over"
usage_says "--rules-file beside a format that reads none" "applies to --format env and slurm" -- $X "$C4" --format ompi-rules --rules-file "$TMP/w/r"
usage_says "--for another library than the format's" "--for mpich: --format ompi-rules is Open MPI's file" -- $X "$C4" --format ompi-rules --for mpich
expect 0 "--for the format's own library" -- $X "$C4" --format ompi-rules --for ompi
usage_says "--nccl-proto beside Open MPI's format" "applies to NCCL's formats" -- $X "$C4" --format ompi-rules --nccl-proto ll
usage_says "--nccl-channels beside nccl-env" "applies to --format nccl-tuner" -- $X "$C4" --format nccl-env --nccl-channels 4
usage_says "an empty --out" "--out: an empty path" -- $X "$C4" --format csv --out ''
usage_says "--lib-version beside csv" "--lib-version applies to a library's formats" -- $X "$C4" --format csv --lib-version 5.0
usage_says "--lib-version beside json" "--lib-version applies to a library's formats" -- $X "$C4" --format json --lib-version 5.0
usage_says "--nranks beside json (the config whole)" "--nranks applies to the formats that write rules, not json" -- $X "$C4" --format json --nranks 4
usage_error "push to a non-HTTP URL" -- $X "$C4" --format csv --push ftp://127.0.0.1/x
usage_error "push URL without host" -- $X "$C4" --format csv --push http:///x
usage_error "header value on the command line" -- $X "$C4" --format csv --push http://127.0.0.1:9/x --header "Authorization: Bearer hunter2"
grep -q hunter2 "$TMP/err" "$TMP/out" && not_ok "literal header value never echoed" || ok "literal header value never echoed"
usage_error "header from an unset variable" -- $X "$C4" --format csv --push http://127.0.0.1:9/x --header "Authorization: env:CT_NO_SUCH_VAR"
usage_error "header from a missing file" -- $X "$C4" --format csv --push http://127.0.0.1:9/x --header "Authorization: @$TMP/nope"
usage_error "push-metrics without results" -- $X "$C4" --push-metrics http://127.0.0.1:9/
[ "$(ls -A "$TMP/w")" = "" ] && ok "nothing written by refused exports" || not_ok "refused exports wrote: $(ls "$TMP/w")"
# a mapped CSV leaves the channels to NCCL (0); --nccl-channels N sets them on every line
$X "$C4" --format nccl-tuner >"$TMP/ch0.csv" 2>/dev/null && $X "$C4" --format nccl-tuner --nccl-channels 4 >"$TMP/ch4.csv" 2>/dev/null
[ "$(grep -v '^#' "$TMP/ch0.csv" | cut -d, -f6 | sort -u)" = 0 ] && [ "$(grep -v '^#' "$TMP/ch4.csv" | cut -d, -f6 | sort -u)" = 4 ] \
    && ok "mapped CSV: channels 0 (NCCL's own), 4 with --nccl-channels 4" \
    || not_ok "mapped CSV channels: $(grep -v '^#' "$TMP/ch0.csv" | cut -d, -f6 | sort -u | tr '\n' ' ')"
# env --for nccl --rules-file writes the CSV: --nccl-channels is read there
expect 0 "env --for nccl --rules-file with --nccl-channels" -- $X "$C4" --format env --for nccl --rules-file "$TMP/nr.csv" --nccl-channels 4 --out "$TMP/nr.env"
[ "$(grep -v '^#' "$TMP/nr.csv" | cut -d, -f6 | sort -u)" = 4 ] && ok "... its CSV's lines on 4 channels" || not_ok "env --for nccl CSV channels"
# two outputs that are one file through a link: refused before anything is written (a rename
# failed midway, exit 1)
mkdir "$TMP/dup" && echo keep >"$TMP/dup/x" && ln -s x "$TMP/dup/r"
usage_says "--rules-file a link to --out" "two outputs would be written" -- $X "$C4" --format env --for ompi --rules-file "$TMP/dup/r" --out "$TMP/dup/x"
[ "$(cat "$TMP/dup/x")" = keep ] && ok "... nothing written" || not_ok "dup: $(head -2 "$TMP/dup/x")"
# a TaskProlog written over a file keeps being a script (its mode kept, execute bits added)
touch "$TMP/job.sh" && chmod 644 "$TMP/job.sh"
expect 0 "slurm over an existing file" -- $X "$C4" --format slurm --for ompi --out "$TMP/job.sh"
[ -x "$TMP/job.sh" ] && ok "... it is executable" || not_ok "slurm prolog mode $(stat -c %a "$TMP/job.sh")"
# a link is followed: the file it names is replaced (its mode kept) and the link stays
mkdir "$TMP/ln" && echo old >"$TMP/ln/real.csv" && chmod 600 "$TMP/ln/real.csv" && ln -s real.csv "$TMP/ln/link.csv"
expect 0 "--out through a link" -- $X "$C4" --format csv --out "$TMP/ln/link.csv"
[ -L "$TMP/ln/link.csv" ] && grep -q "^coll," "$TMP/ln/real.csv" && [ "$(stat -c %a "$TMP/ln/real.csv")" = 600 ] \
    && ok "... the link kept, the file it names written, mode 600 kept" \
    || not_ok "through a link: $(ls -l "$TMP/ln")"

# ---- every format: exit 0, atomic, sidecars, notes on stderr ------------------------------
for f in $($X --list | awk '{print $1}'); do
    extra=""
    case $f in env|slurm) extra="--for impi" ;; esac
    expect 0 "export $f" -- $X "$CC" --format "$f" $extra --out "$TMP/w/$f"
    [ -s "$TMP/w/$f" ] || not_ok "$f: file written"
done
for f in nccl-tuner nccl-env ompi-rules mpich-json; do
    [ -s "$TMP/w/$f.env" ] && ok "$f: loader lines beside it ($f.env)" || not_ok "$f: $f.env"
done
[ -s "$TMP/w/ompi-rules.mca.conf" ] && ok "ompi-rules: mca.conf beside it" || not_ok "ompi-rules: mca.conf"
[ -x "$TMP/w/slurm" ] && ok "slurm prolog is executable" || not_ok "slurm prolog is executable"
ls "$TMP/w" | grep -q tmp && not_ok "temp files left" || ok "no temp files left"
$X "$CC" --format ompi-rules --nranks 8 --out "$TMP/w/r8" 2>"$TMP/err"
grep -q "warning: allreduce on 8 ranks (2 x 4) \[1 MiB, inf): colltune 'mesh' has no Open MPI counterpart" "$TMP/err" \
    && grep -q "^1048576 0 0 0 .*'mesh' has no Open MPI counterpart" "$TMP/w/r8" \
    && ok "unmapped rule: said on stderr and in the file (alg 0)" || not_ok "unmapped rule reported"
grep -q "OMPI_MCA_coll_tuned_dynamic_rules_filename='$TMP/w/r8'" "$TMP/err" \
    && ok "loader lines on stderr name the file" || not_ok "loader lines on stderr"
$X "$CC" --format json | cmp -s - "$TMP/w/json" && ok "stdout and --out agree" || not_ok "stdout and --out agree"

# ---- --for LIB without --format: the library's own format ---------------------------------
for spec in ompi:ompi-rules mpich:mpich-json ucc:ucc impi:impi; do
    l=${spec%:*} f=${spec#*:}
    $X "$C4" --format "$f" >"$TMP/want" 2>/dev/null
    expect 0 "--for $l alone" -- $X "$C4" --for "$l"
    [ -s "$TMP/out" ] && cmp -s "$TMP/out" "$TMP/want" && ok "--for $l alone is --format $f" || not_ok "--for $l alone is --format $f"
done
mkdir "$TMP/fo"
expect 0 "--for ompi --out F" -- $X "$C4" --for ompi --out "$TMP/fo/r"
[ -s "$TMP/fo/r" ] && [ -s "$TMP/fo/r.env" ] && [ -s "$TMP/fo/r.mca.conf" ] \
    && ok "--for ompi --out writes the rules file and its loaders" || not_ok "--for ompi --out: $(ls "$TMP/fo")"
usage_error "--for nccl alone (three formats)" -- $X "$C4" --for nccl --out "$TMP/fo/n"
grep -q "nccl-tuner|nccl-env|nccl-plugin" "$TMP/err" && [ ! -e "$TMP/fo/n" ] \
    && ok "names NCCL's formats, writes nothing" || not_ok "--for nccl: $(cat "$TMP/err")"
$X --help | grep -q "without" && $X --help | grep -q "LIB's own format" \
    && ok "--help says what --for alone does" || not_ok "--help and --for"

# ---- env and slurm in a real shell -----------------------------------------------------
$X "$CC" --format env --for nccl --out "$TMP/nccl.env" 2>/dev/null
v=$(sh -c ". '$TMP/nccl.env' && echo \"\$NCCL_ALGO|\$NCCL_MAX_NCHANNELS\"")
[ "$v" = "allgather:PAT,Ring;reducescatter:PAT,Ring|" ] && ok "env file sources (no channel bound: it would cap every collective): $v" || not_ok "env file sources: '$v'"
$X "$C4" --format slurm --for ompi --out "$TMP/prolog" 2>/dev/null
mkdir "$TMP/node"
TMPDIR="$TMP/node" "$TMP/prolog" >"$TMP/prolog.out" && TMPDIR="$TMP/node" "$TMP/prolog" >/dev/null
rules=$(sed -n 's/^export OMPI_MCA_coll_tuned_dynamic_rules_filename=//p' "$TMP/prolog.out")
grep -qx "export OMPI_MCA_coll_tuned_use_dynamic_rules=1" "$TMP/prolog.out" && [ -n "$rules" ] \
    && $X "$C4" --format ompi-rules 2>/dev/null | cmp -s - "$rules" && [ "$(ls "$TMP/node" | wc -l)" -eq 1 ] \
    && ok "slurm prolog writes the rules once per node and exports their path" \
    || not_ok "slurm prolog: $(cat "$TMP/prolog.out")"
# a file of that name the user does not own, or a link (planted in a shared /tmp), is never
# read nor written over: the rules go to a folder of the task's own
if [ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1; then
    echo "1 2 0 0" >"$rules" && chown nobody "$rules"
    echo "1 2 0 0" >"$TMP/other" && ln -s "$TMP/other" "$rules.link"
    for kind in "another user's file" "a link"; do
        [ "$kind" = "a link" ] && rm -f "$rules" && mv "$rules.link" "$rules"
        r2=$(TMPDIR="$TMP/node" "$TMP/prolog" | sed -n 's/^export OMPI_MCA_coll_tuned_dynamic_rules_filename=//p')
        [ "${r2%/*}" != "$TMP/node" ] && [ "${r2%/*/*}" = "$TMP/node" ] && [ "$(stat -c %a "${r2%/*}")" = 700 ] \
            && $X "$C4" --format ompi-rules 2>/dev/null | cmp -s - "$r2" && [ "$(cat "$TMP/other")" = "1 2 0 0" ] \
            && grep -qx "1 2 0 0" "$rules" \
            && ok "slurm prolog: $kind of the rules' name is neither read nor written: ${r2#"$TMP/node/"}" \
            || not_ok "slurm prolog and $kind: '$r2': $(ls -l "$TMP/node")"
        rm -rf "${r2%/*}"
    done
else
    skip "slurm prolog and another user's file (needs root and a user nobody)"
    skip "slurm prolog and a link (needs root and a user nobody)"
fi

# ---- verified or not: env and slurm say it as the rules files do ---------------------------
# the AllReduce set as sweep --verify marks it (config.verified.json), the other set never verified
for l in ompi mpich; do
    sed 's/"coll": "allreduce",/"coll": "allreduce", "verified": {"at": "2026-11-29T14:00:00Z", "geomean": 0.875},/' \
        "$FIX/config-$l-2ranks.json" >"$TMP/$l.verified.json"
done
vline() { echo "# allreduce on 2 ranks (1 x 2): verified against $1 defaults at 2026-11-29T14:00:00Z (colltune sweep --verify: no size slower beyond its interval): geomean 0.875 exported/default"; }
nline() { echo "# $1 on 2 ranks (1 x 2): measured, not verified against $2 defaults; run \`colltune sweep --verify CONFIG --lib $3\`"; }
for spec in "ompi:Open MPI 4.1.4's:Open MPI's:alltoall" "mpich:MPICH 4.0.2's:MPICH's:allgather"; do
    l=${spec%%:*} r=${spec#*:}; yes=${r%%:*} r=${r#*:}; no=${r%%:*} other=${r#*:}
    for f in "env --rules-file $TMP/$l-r" slurm; do
        # the header: the comment lines before the first command (a prolog embeds the rules file)
        $X "$TMP/$l.verified.json" --format $f --for $l 2>/dev/null | sed -n '/^[^#]/q;p' >"$TMP/v.out"
        # Open MPI's alltoall keeps its own choice everywhere: nothing of it to verify, no warning
        if [ $l = ompi ]; then
            oline="# alltoall on 2 ranks (1 x 2): keeps Open MPI's own choice at every size (measured best, or set back by sweep --verify): nothing of it to verify"
        else
            oline=$(nline "$other" "$no" "$l")
        fi
        grep -qxF "$(vline "$yes")" "$TMP/v.out" && grep -qF "$oline" "$TMP/v.out" \
            && ok "${f%% *} --for $l: its header says the verified set verified, the other not (Open MPI's: at its own, nothing to verify)" \
            || { not_ok "${f%% *} --for $l: verified lines"; sed 's/^/#   /' "$TMP/v.out" | head -8; }
    done
done

# ---- mapped: a file that changes nothing is refused; MPICH's device layer stays on ---------
# colltune's own rules with no counterpart anywhere (symm, as a default sweep on one host picks
# for most sizes), and with none for AllReduce alone
python3 - "$C4" "$TMP/symm.json" "$TMP/noar.json" <<'EOF'
import json, sys
for out, colls in ((sys.argv[2], None), (sys.argv[3], ("allreduce",))):
    d = json.load(open(sys.argv[1]))
    for s in d["rules"]:
        if colls is None or s["coll"] in colls:
            for r in s["ranges"]:
                r["algo"] = "symm"
    json.dump(d, open(out, "w"))
EOF
mkdir "$TMP/nm"
usage_says "mapped ompi-rules of alg 0 only" "nothing to export: no rule of colltune's maps to an Open MPI 4.1 algorithm" -- $X "$TMP/symm.json" --format ompi-rules --out "$TMP/nm/r"
usage_says "mapped mpich-json of MPICH's default tree only" "nothing to export: no rule of colltune's maps to an MPICH 4.0 algorithm" -- $X "$TMP/symm.json" --format mpich-json --out "$TMP/nm/m.json"
usage_error "env --for mpich of it" -- $X "$TMP/symm.json" --format env --for mpich --rules-file "$TMP/nm/m2.json" --out "$TMP/nm/job.env"
usage_error "slurm --for ompi of it" -- $X "$TMP/symm.json" --format slurm --for ompi --out "$TMP/nm/prolog"
[ "$(ls -A "$TMP/nm")" = "" ] && ok "nothing written by the refused mapped exports" || not_ok "refused mapped exports wrote: $(ls "$TMP/nm")"
# UCC and Intel MPI (settings, and no engine of colltune's) alike: no export line is no file;
# so for a one-host sweep of ReduceScatter alone (`sweep --local 2 --coll reducescatter` here
# chose oneshot, then symm: no counterpart in either)
python3 - "$C4" "$TMP/rs.json" <<'EOF1'
import json, sys
d = json.load(open(sys.argv[1]))
d["rules"] = [s for s in d["rules"] if s["coll"] == "reducescatter"]
for r, a in zip(d["rules"][0]["ranges"], ("oneshot", "symm", "symm")):
    r["algo"] = a
json.dump(d, open(sys.argv[2], "w"))
EOF1
mkdir "$TMP/nu"
for spec in "ucc:a UCC 1.2:UCC_TL_UCP_TUNE entry" "impi:an Intel MPI 2019:I_MPI_ADJUST setting"; do
    l=${spec%%:*} r=${spec#*:}; lib=${r%%:*} what=${r#*:}
    usage_says "mapped $l of no setting" "nothing to export: no rule of colltune's maps to $lib algorithm, so no $what would follow" -- $X "$TMP/symm.json" --format $l --out "$TMP/nu/$l"
    usage_says "--for $l of a one-host ReduceScatter sweep" "nothing to export: no rule of colltune's maps to $lib algorithm" -- $X "$TMP/rs.json" --for $l --out "$TMP/nu/rs-$l"
    usage_error "env --for $l of it" -- $X "$TMP/symm.json" --format env --for $l --out "$TMP/nu/$l.env"
    usage_error "slurm --for $l of it" -- $X "$TMP/symm.json" --format slurm --for $l --out "$TMP/nu/$l.prolog"
    usage_error "$l to standard output" -- $X "$TMP/symm.json" --format $l
    [ ! -s "$TMP/out" ] && ok "... prints nothing there" || not_ok "$l printed: $(head -3 "$TMP/out")"
done
[ "$(ls -A "$TMP/nu")" = "" ] && ok "nothing written by the refused UCC and Intel MPI exports" || not_ok "refused UCC/Intel MPI exports wrote: $(ls "$TMP/nu")"
expect 0 "mapped mpich-json without an AllReduce range of its own" -- $X "$TMP/noar.json" --format mpich-json --out "$TMP/nm/m.json"
grep -q "^export MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE='$TMP/nm/m.json'" "$TMP/nm/m.json.env" \
    && ! grep -q "DEVICE_COLLECTIVES" "$TMP/nm/m.json.env" "$TMP/err" \
    && ok "its env lines leave MPICH's device collectives on" || not_ok "device collectives: $(grep -v '^#' "$TMP/nm/m.json.env")"
$X "$C4" --format mpich-json --out "$TMP/nm/c4.json" 2>/dev/null
grep -q "^export MPIR_CVAR_DEVICE_COLLECTIVES='none'" "$TMP/nm/c4.json.env" \
    && ok "with an AllReduce range of its own: device collectives off" || not_ok "C4: $(grep -v '^#' "$TMP/nm/c4.json.env")"

# ---- mapped NCCL: no rule with a counterpart is refused (no CSV line: 1 channel everywhere) -
mkdir "$TMP/nn"
usage_says "mapped nccl-tuner of no line" "nothing to export: no rule of colltune's maps to an NCCL 2.27.5 algorithm, so the file would have no line and NCCL's example plugin would run every call on 1 channel; no file written (tune NCCL itself: colltune sweep --lib nccl)" -- $X "$TMP/symm.json" --format nccl-tuner --out "$TMP/nn/t.csv"
usage_says "mapped nccl-env of no setting" "nothing to export: no rule of colltune's maps to an NCCL 2.27.5 algorithm, so no NCCL setting would follow" -- $X "$TMP/symm.json" --format nccl-env --out "$TMP/nn/nccl.conf"
usage_error "mapped nccl-plugin (no NCCL section) of no setting" -- $X "$TMP/symm.json" --format nccl-plugin --out "$TMP/nn/p.env"
usage_error "env --for nccl of it" -- $X "$TMP/symm.json" --format env --for nccl --out "$TMP/nn/job.env"
usage_error "env --for nccl --rules-file of it" -- $X "$TMP/symm.json" --format env --for nccl --rules-file "$TMP/nn/r.csv" --out "$TMP/nn/job2.env"
usage_error "slurm --for nccl of it" -- $X "$TMP/symm.json" --format slurm --for nccl --out "$TMP/nn/prolog"
[ "$(ls -A "$TMP/nn")" = "" ] && ok "nothing written by the refused NCCL exports" || not_ok "refused NCCL exports wrote: $(ls "$TMP/nn")"
# one AllReduce range of NCCL's tree (a CSV line: test_export checks it is written); NCCL_ALGO,
# which cannot follow sizes, leaves AllReduce unrestricted beside its 'symm' ranges: no setting
python3 - "$TMP/symm.json" "$TMP/tree1.json" <<'EOF2'
import json, sys
d = json.load(open(sys.argv[1]))
next(s for s in d["rules"] if s["coll"] == "allreduce")["ranges"][0]["algo"] = "rdh"
json.dump(d, open(sys.argv[2], "w"))
EOF2
usage_error "mapped nccl-env whose rules give no setting" -- $X "$TMP/tree1.json" --format nccl-env --nccl-proto ll --out "$TMP/nn/nccl.conf"
grep -q "nothing to export: no NCCL 2.27.5 setting follows from colltune's rules" "$TMP/err" && [ ! -e "$TMP/nn/nccl.conf" ] \
    && ok "says no setting follows, writes nothing" || not_ok "tree1 nccl-env: $(cat "$TMP/err")"

# ---- Open MPI: the algorithm it runs is the one the rules file names -----------------------
ompi_ok=1
if ! have mpicc || ! have mpirun || ! mpirun --version 2>/dev/null | grep -q "Open MPI"; then
    skip "Open MPI consumer (mpicc/mpirun of Open MPI not found)"; ompi_ok=0
fi
if [ $ompi_ok = 1 ]; then
    O="$TMP/ompi"; mkdir "$O"
    mpicc -O1 -o "$O/colls" "$here/consumers/colls.c" && \
        mpicc -O1 -shared -fPIC -o "$O/shim.so" "$here/../../backend/lib/ompi_spy.c" -ldl \
        && ok "built the MPI program and the coll/base shim" || not_ok "build with mpicc"
    # the 4-rank config joined with one of 2 ranks, of other algorithms: one file, a comm-size
    # section of each rank count
    python3 - "$C4" "$O/c2.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
two = {"allreduce": ["ring", "simple-ring"], "allgather": ["ring", "bruck"],
       "reducescatter": ["ring", "simple-ring"], "alltoall": ["ring", "mesh"]}
for t in d["rules"]:
    t.update(nranks=2, nnodes=1, ranks_per_node=2)
    r = t["ranges"][0]
    t["ranges"] = [dict(r, min_bytes=0, max_bytes=8192, algo=two[t["coll"]][0], params={}),
                   dict(r, min_bytes=8192, max_bytes=None, algo=two[t["coll"]][1], params={})]
json.dump(d, open(sys.argv[2], "w"))
EOF
    expect 0 "join the configs of 4 and 2 ranks" -- $COLLTUNE join "$C4" "$O/c2.json" --out "$O/c24.json"
    expect 0 "export ompi-rules for 2 and 4 ranks" -- $X "$O/c24.json" --format ompi-rules --out "$O/rules.conf"
    RUN="mpirun --oversubscribe -np 4 -x LD_PRELOAD=$O/shim.so"
    [ "$(id -u)" = 0 ] && RUN="$RUN --allow-run-as-root"
    SIZES="16 1008 1024 4080 4096 8176 8192 32752 32768 65520 65536 262144"
    # half the collectives load the rules through FILE.env, half through FILE.mca.conf
    ( . "$O/rules.conf.env" && $RUN "$O/colls" allreduce:std,reducescatter:std $SIZES ) >"$O/rules.out" 2>"$O/err" \
        && OMPI_MCA_mca_param_files="$O/rules.conf.mca.conf" $RUN "$O/colls" allgather:std,alltoall:std $SIZES >>"$O/rules.out" 2>>"$O/err" \
        && $RUN "$O/colls" allreduce:std,reducescatter:std,allgather:std,alltoall:std $SIZES >"$O/fixed.out" 2>>"$O/err" \
        || not_ok "Open MPI runs: $(head -3 "$O/err")"
    # on 2 ranks its own section; communicators of sizes not measured (3, between the two, and
    # 8): Open MPI's fixed decision (the file's sections between and after), as without the file
    TWO="16 4096 8176 8192 65536 262144" # whole elements on 2 ranks, both ends of 8 KiB
    THREE="48 1200 4104 8208 32760 65544 262152" EIGHT="32 1024 4096 8192 32768 65536 262144"
    for np in 2 3 8; do
        R="mpirun --oversubscribe -np $np -x LD_PRELOAD=$O/shim.so"
        [ "$(id -u)" = 0 ] && R="$R --allow-run-as-root"
        case $np in 2) S=$TWO ;; 3) S=$THREE ;; *) S=$EIGHT ;; esac
        ( . "$O/rules.conf.env" && $R "$O/colls" allreduce:std,reducescatter:std,allgather:std,alltoall:std $S ) >"$O/rules$np.out" 2>>"$O/err" \
            && $R "$O/colls" allreduce:std,reducescatter:std,allgather:std,alltoall:std $S >"$O/fixed$np.out" 2>>"$O/err" \
            || not_ok "Open MPI runs on $np ranks: $(head -3 "$O/err")"
        [ $np = 2 ] && continue
        sort "$O/rules$np.out" >"$O/a" && sort "$O/fixed$np.out" >"$O/b" && [ -s "$O/a" ] && cmp -s "$O/a" "$O/b" \
            && ok "on $np ranks (rules of 2 and 4): Open MPI's fixed decision at every size, as without the file" \
            || { not_ok "on $np ranks: the rules of 2 or 4 reached it"; diff "$O/a" "$O/b" | head -5 | sed 's/^/#   /'; }
    done
    ompi_ran() { # NP RAN FIXED SIZES...: what ran on NP ranks is what the file's section names
    python3 - "$O" "$@" >"$TMP/py" 2>&1 <<'EOF'
import re, sys
O, np, ranf, fixedf = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
sizes = [int(s) for s in sys.argv[5:]]
# Open MPI 4.1 coll_tuned_*_decision.c: do_this ids -> coll/base entry points
fns = {2: {1: "allreduce_intra_basic_linear", 2: "allreduce_intra_nonoverlapping",
           3: "allreduce_intra_recursivedoubling", 4: "allreduce_intra_ring",
           5: "allreduce_intra_ring_segmented", 6: "allreduce_intra_redscat_allgather"},
       0: {1: "allgather_intra_basic_linear", 2: "allgather_intra_bruck",
           3: "allgather_intra_recursivedoubling", 4: "allgather_intra_ring",
           5: "allgather_intra_neighborexchange", 6: "allgather_intra_two_procs"},
       12: {1: "reduce_scatter_intra_nonoverlapping", 2: "reduce_scatter_intra_basic_recursivehalving",
            3: "reduce_scatter_intra_ring", 4: "reduce_scatter_intra_butterfly"},
       3: {1: "alltoall_intra_basic_linear", 2: "alltoall_intra_pairwise", 3: "alltoall_intra_bruck",
           4: "alltoall_intra_linear_sync", 5: "alltoall_intra_two_procs"}}
ids = {"allreduce": 2, "allgather": 0, "reducescatter": 12, "alltoall": 3}
# the classic format as Open MPI reads it: numbers, '#' to end of line
nums = [int(t) for t in re.sub(r"#[^\n]*", "", open(O + "/rules.conf").read()).split()]
rules, i = {}, 1
for _ in range(nums[0]):
    cid, ncs = nums[i], nums[i + 1]; i += 2
    secs = []  # (comm size, rules): Open MPI takes the last whose size is not above the job's
    for _ in range(ncs):
        cs, nms = nums[i], nums[i + 1]; i += 2
        secs.append((cs, [tuple(nums[i + 4 * k:i + 4 * k + 4]) for k in range(nms)])); i += 4 * nms
    assert secs[0][0] == 0, "comm-size sections from key 0"
    rules[cid] = [r for cs, r in secs if cs <= np][-1]
def load(path):
    got = {}
    for line in open(path):
        rank, coll, variant, size, fn = line.split()
        got.setdefault((coll, int(size)), set()).add(fn.replace("ompi_coll_base_", ""))
    return got
ran, fixed = load(ranf), load(fixedf)
bad = 0
for coll, cid in ids.items():
    differs = False
    for s in sizes:
        rule = [r for r in rules[cid] if r[0] <= s][-1]
        want = fns[cid][rule[1]] if rule[1] else None  # alg 0: Open MPI's fixed decision
        got = ran.get((coll, s), set())
        if len(got) != 1 or (want and got != {want}) or (not want and got != fixed[(coll, s)]):
            print(f"{coll} {s}: file says alg {rule[1]} ({want or 'fixed'}), ran {sorted(got)}"); bad += 1
        differs |= got != fixed[(coll, s)]
    if not differs:
        print(f"{coll}: the rules never changed Open MPI's choice (no evidence)"); bad += 1
    print(f"{coll}: {len(sizes)} sizes checked" if bad == 0 else "")
sys.exit(1 if bad else 0)
EOF
    }
    ompi_ran 4 "$O/rules.out" "$O/fixed.out" $SIZES \
        && ok "on 4 ranks Open MPI ran the algorithm the file's 4-rank section names, at both ends of every range ($(grep -c checked "$TMP/py") collectives)" \
        || { not_ok "Open MPI ran what the rules file names on 4 ranks"; sed 's/^/#   /' "$TMP/py" | head -12; }
    ompi_ran 2 "$O/rules2.out" "$O/fixed2.out" $TWO \
        && ok "on 2 ranks Open MPI ran the algorithm the file's 2-rank section names ($(grep -c checked "$TMP/py") collectives)" \
        || { not_ok "Open MPI ran what the rules file names on 2 ranks"; sed 's/^/#   /' "$TMP/py" | head -12; }
fi

# ---- MPICH: loads the JSON through its CVAR and routes every size range to its leaf --------
if ! have mpicc.mpich || ! have mpiexec.mpich; then
    skip "MPICH consumer (mpicc.mpich/mpiexec.mpich not found: apt-get install mpich libmpich-dev)"
else
    M="$TMP/mpich"; mkdir "$M"
    mpicc.mpich -O1 -o "$M/colls" "$here/consumers/colls.c" && ok "built the MPICH program" || not_ok "build with mpicc.mpich"
    expect 0 "export mpich-json for 4 ranks" -- $X "$C4" --format mpich-json --out "$M/sel.json"
    python3 -c "import json,sys; json.load(open(sys.argv[1]))" "$M/sel.json" && ok "valid JSON" || not_ok "valid JSON"
    mrun() { ( . "$M/sel.json.env" && mpiexec.mpich -n "$@" ); }
    mrun 4 "$M/colls" allreduce:std,allreduce:userop,allgather:std,allgather:inplace,reducescatter:std,reducescatter:noncomm,alltoall:std,alltoall:inplace,allreduce:inter,allgather:inter,reducescatter:inter,alltoall:inter \
        16 1008 1024 4080 4096 8176 8192 32752 32768 65520 65536 262144 >"$M/out" 2>"$M/err" \
        && [ "$(grep -c . "$M/out")" -eq 576 ] \
        && ok "MPICH runs every collective on the exported tree, results checked (guards: user ops, in place; intercommunicators, MPICH's own branch kept)" \
        || not_ok "MPICH runs the exported tree: $(head -2 "$M/err")"
    sed 's/MPIR_Alltoall_intra_brucks/MPIR_Alltoall_intra_bogus/' "$M/sel.json" >"$M/bad.json"
    ( export MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE="$M/bad.json"; mpiexec.mpich -n 2 "$M/colls" allreduce:std 16 ) >/dev/null 2>"$M/err" \
        && not_ok "control: a corrupted file must abort MPICH" \
        || { grep -q "unrecognized key algorithm=MPIR_Alltoall_intra_bogus" "$M/err" \
            && ok "control: MPICH reads the file through the CVAR (a corrupted name aborts)" || not_ok "control: $(head -2 "$M/err")"; }
    # probes: in the whole exported tree, range k's leaf under comm_size<=4 becomes another
    # collective's algorithm, which MPICH's selection asserts on; on 4 ranks sizes inside the
    # range must abort, sizes outside must not (MPICH's own evaluator, our keys and units, and
    # the comm_size guards: MPICH 4.0 reads "comm_size<4" as <= 4, which took these calls to
    # the default subtree until the export wrote "comm_size<=3")
    probe() { # coll mpichname rangeindex in1 in2 out (colltune sizes)
        python3 - "$M/sel.json" "$M/probe.json" "$2" "$3" <<'EOF'
import json, sys
src, dst, coll, k = sys.argv[1:5]
marker = "MPIR_Alltoall_intra_brucks" if coll == "allreduce" else "MPIR_Allreduce_intra_recursive_doubling"
d = json.load(open(src))
def find(node, key):
    if isinstance(node, dict):
        if key in node: return node
        for v in node.values():
            r = find(v, key)
            if r is not None: return r
ranges = find(d["collective=" + coll]["comm_type=intra"], "comm_size<=4")["comm_size<=4"]
ranges[list(ranges)[int(k)]] = {"algorithm=" + marker: {}}
json.dump(d, open(dst, "w"))
EOF
        res=""
        for s in $4 $5 $6; do
            ( . "$M/sel.json.env"; export MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE="$M/probe.json"
              mpiexec.mpich -n 4 "$M/colls" "$1:std" "$s" ) >/dev/null 2>"$M/perr"
            if [ $? -ne 0 ] && grep -q "Assertion failed" "$M/perr"; then res="$res A"; else res="$res -"; fi
        done
        [ "$res" = " A A -" ] && ok "MPICH routes 4-rank $1 sizes $4 and $5 to range $3's leaf, $6 not" \
            || not_ok "MPICH probe $1: got '$res' for $4 $5 $6"
    }
    probe allreduce allreduce 0 16 1020 1024
    probe allgather allgather 1 4096 32752 32768
    probe reducescatter reduce_scatter 0 16 4080 4096
    probe alltoall alltoall 1 4096 32752 32768
    # a mapped export with no AllReduce range of its own leaves the device collectives on: MPICH
    # reaches the MPIR tree for the other three through CH4's composition alpha all the same
    $X "$TMP/noar.json" --format mpich-json --out "$M/sel.json" 2>/dev/null && ! grep -q DEVICE_COLLECTIVES "$M/sel.json.env" \
        && ok "exported a mapped tree without AllReduce ranges (device collectives on)" || not_ok "noar export"
    probe allgather allgather 1 4096 32752 32768
    probe reducescatter reduce_scatter 0 16 4080 4096
    probe alltoall alltoall 1 4096 32752 32768
fi

# ---- push: nginx (WebDAV PUT, TLS, auth) and failures ------------------------------------
if ! have nginx || ! nginx -V 2>&1 | grep -q http_dav_module || ! have openssl; then
    skip "push to nginx (nginx with the DAV module and openssl needed)"
else
    N="$TMP/nginx"; mkdir -p "$N/www" "$N/tmp"
    P=$(free_port); PS=$(free_port)
    openssl req -x509 -newkey rsa:2048 -nodes -keyout "$N/ca.key" -out "$N/ca.crt" -days 1 \
        -subj "/CN=colltune test CA" 2>/dev/null
    openssl req -newkey rsa:2048 -nodes -keyout "$N/srv.key" -out "$N/srv.csr" -subj "/CN=127.0.0.1" 2>/dev/null
    printf 'subjectAltName=IP:127.0.0.1\n' >"$N/ext.cnf"
    openssl x509 -req -in "$N/srv.csr" -CA "$N/ca.crt" -CAkey "$N/ca.key" -CAcreateserial \
        -out "$N/srv.crt" -days 1 -extfile "$N/ext.cnf" 2>/dev/null
    cat >"$N/nginx.conf" <<EOF
daemon off;
master_process off;
worker_processes 1;
pid $N/nginx.pid;
error_log $N/error.log;
events { worker_connections 64; }
http {
    access_log $N/access.log;
    client_body_temp_path $N/tmp; proxy_temp_path $N/tmp; fastcgi_temp_path $N/tmp;
    uwsgi_temp_path $N/tmp; scgi_temp_path $N/tmp;
    server {
        listen 127.0.0.1:$P;
        listen 127.0.0.1:$PS ssl;
        ssl_certificate $N/srv.crt;
        ssl_certificate_key $N/srv.key;
        root $N/www;
        location /flaky/ { return 503; }
        location /secure/ {
            if (\$http_authorization != "Bearer s3cret-t0ken") { return 401; }
            dav_methods PUT; create_full_put_path on;
        }
        location / { dav_methods PUT; create_full_put_path on; }
    }
}
EOF
    nginx -p "$N" -c "$N/nginx.conf" >"$N/out.log" 2>&1 &
    PIDS="$PIDS $!"
    for i in 1 2 3 4 5 6 7 8 9 10; do curl -s -o /dev/null "http://127.0.0.1:$P/" && break; sleep 0.1; done
    expect 0 "PUT the rules to nginx" -- $X "$C4" --format ompi-rules --push "http://127.0.0.1:$P/site/rules.conf"
    $X "$C4" --format ompi-rules 2>/dev/null | cmp -s - "$N/www/site/rules.conf" \
        && ok "the server holds exactly the export" || not_ok "the server holds exactly the export"
    expect 1 "TLS with an unknown CA is refused" -- $X "$C4" --format json --push "https://127.0.0.1:$PS/site/c.json"
    grep -q "TLS:.*certificate" "$TMP/err" && ok "says it is the certificate" || not_ok "TLS message: $(cat "$TMP/err")"
    expect 0 "TLS verified with --cacert" -- $X "$C4" --format json --push "https://127.0.0.1:$PS/site/c.json" --cacert "$N/ca.crt"
    $X "$C4" --format json 2>/dev/null | cmp -s - "$N/www/site/c.json" \
        && ok "TLS upload arrived intact" || not_ok "TLS upload arrived intact"
    expect 0 "--insecure only when asked" -- $X "$C4" --format json --push "https://127.0.0.1:$PS/site/i.json" --insecure
    printf 'Bearer s3cret-t0ken\n' >"$N/token"
    expect 0 "auth header from a file" -- $X "$C4" --format csv --push "http://127.0.0.1:$P/secure/c.csv" --header "Authorization: @$N/token"
    export CT_TOKEN="Bearer s3cret-t0ken"
    expect 0 "auth header from the environment" -- \
        $X "$C4" --format csv --push "http://127.0.0.1:$P/secure/d.csv" --header "Authorization: env:CT_TOKEN"
    unset CT_TOKEN
    expect 1 "wrong token: HTTP 401" -- $X "$C4" --format csv --push "http://127.0.0.1:$P/secure/e.csv" --header "Authorization: env:HOME"
    grep -q "HTTP 401 Unauthorized" "$TMP/err" && [ "$(wc -l <"$TMP/err")" -eq 1 ] \
        && ok "one line with the status" || not_ok "401 message: $(cat "$TMP/err")"
    grep -rq "s3cret" "$TMP/err" "$TMP/out" && not_ok "token never echoed" || ok "token never echoed"
    expect 1 "5xx is retried, then fails" -- $X "$C4" --format csv --push "http://127.0.0.1:$P/flaky/x" --push-retries 2
    grep -q "HTTP 503 .*(3 attempts)" "$TMP/err" && ok "503 after 3 attempts" || not_ok "503 message: $(cat "$TMP/err")"
    [ ! -e "$N/www/flaky" ] && ok "nothing stored on failure" || not_ok "nothing stored on failure"
fi
have python3 || skip "refused and timed-out pushes (python3 needed)"
if have python3; then
    P=$(free_port)
    expect 1 "a refusing port" -- $X "$C4" --format csv --push "http://127.0.0.1:$P/x" --push-retries 1
    grep -q "connect.*(2 attempts)" "$TMP/err" && ok "says it could not connect, after a retry" || not_ok "refused: $(cat "$TMP/err")"
    P=$(free_port)
    python3 -c "import socket,time; s=socket.socket(); s.bind(('127.0.0.1',$P)); s.listen(4); time.sleep(20)" &
    PIDS="$PIDS $!"
    sleep 0.3
    expect 1 "a server that never answers" -- $X "$C4" --format csv --push "http://127.0.0.1:$P/x" --push-timeout 0.5 --push-retries 1
    grep -q "timed out" "$TMP/err" && ok "says it timed out" || not_ok "timeout: $(cat "$TMP/err")"
fi

# ---- push-metrics to a real Pushgateway, read back -----------------------------------------
if ! have prometheus-pushgateway || ! have curl; then
    skip "Pushgateway (apt-get install prometheus-pushgateway curl)"
else
    G=$(free_port)
    prometheus-pushgateway --web.listen-address="127.0.0.1:$G" >"$TMP/pg.log" 2>&1 &
    PIDS="$PIDS $!"
    for i in $(seq 50); do curl -sf "http://127.0.0.1:$G/-/ready" >/dev/null && break; sleep 0.1; done
    cp "$C4" "$TMP/w/config.json" && cp "$FIX/results-4ranks.json" "$TMP/w/results.json"
    expect 0 "push-metrics (results.json found beside the config)" -- $X "$TMP/w/config.json" --push-metrics "http://127.0.0.1:$G"
    curl -sf "http://127.0.0.1:$G/metrics" >"$TMP/metrics"
    grep -q 'colltune_busbw_best_gbps{algo="ring",coll="allreduce",instance="testhost",job="colltune",nranks="4",size="65536"} 6.25' "$TMP/metrics" \
        && ok "best busbw per collective and size read back (the unverified 9.75 left out)" \
        || { not_ok "busbw read back"; grep colltune_busbw "$TMP/metrics" | sed 's/^/#   /'; }
    grep -q 'colltune_rules{coll="alltoall",.*} 3' "$TMP/metrics" && grep -q '^colltune_sweep_points{.*} 412' "$TMP/metrics" \
        && ok "rules and sweep figures read back" || not_ok "rules and sweep figures"
    expect 0 "POST merges into the group" -- $X "$TMP/w/config.json" --push-metrics "http://127.0.0.1:$G/metrics/job/colltune/instance/other" --push-method POST
    curl -sf "http://127.0.0.1:$G/metrics" | grep -q 'colltune_sweep_points{instance="other",job="colltune"} 412' \
        && ok "explicit group path kept" || not_ok "explicit group path kept"
fi
done_testing
