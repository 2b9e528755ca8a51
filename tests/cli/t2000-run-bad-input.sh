#!/bin/sh
# colltune run: every bad input gets one clear line on stderr and exit 2, nothing runs.
. "$(dirname "$0")/lib.sh"
R="$COLLTUNE run -n 1 -w 0"
usage_error "unknown flag" -- $R --frob
usage_says "-e beyond this host's memory (refused before any buffer is taken)" "more than the .* it has available" -- $R --local 2 -b 64 -e 1T
usage_says "an abbreviation of two options" "ambiguous option '--ma' (--maxbytes, --max-time)" -- $R --ma 3
usage_error "flag without value" -- $R -b
usage_error "unknown algorithm" -- $R --algo nosuch
usage_error "unknown datatype" -- $R -d float13
usage_error "unknown op" -- $R -o xor
usage_error "unknown collective" -- $R --coll broadcast
usage_error "unknown transport" -- $R --transport carrier-pigeon
usage_error "size overflow" -- $R -e 99999999999999999999
usage_error "size suffix overflow" -- $R -e 99999999999999T
usage_error "size garbage" -- $R -b 12Q
usage_error "negative size" -- $R -b -8
usage_error "size not a multiple of the datatype" -- $R -b 6 -e 6 -d float32
usage_error "min larger than max" -- $R -b 1M -e 1K
usage_error "step factor 1" -- $R -f 1
usage_error "zero ranks" -- $R --local 0
usage_error "absurd rank count" -- $R --local 100000
# the shm channels of 1,024 ranks (514 GiB): refused before a rank starts (256 of a 23 GiB
# host called the OOM killer)
if [ "$(awk '/^MemAvailable:/ { print ($2 < 600 * 1024 * 1024) }' /proc/meminfo)" = 1 ]; then
    usage_says "more ranks than shared memory holds channels for" "1024 ranks meeting in shared memory need [0-9.]* GiB for their channels (1024 x [0-9.]* MiB: .*more than the .* this host has free in" -- $R --local 1024 -b 8 -e 8
    usage_says "... and for a sweep's" "1024 ranks meeting in shared memory need" -- $COLLTUNE sweep --local 1024 --out "$TMP/nope"
    [ ! -e "$TMP/nope" ] && ok "... nothing written" || not_ok "sweep --local 1024 wrote $TMP/nope"
else
    skip "1,024 ranks' shared-memory channels (514 GiB) fit this host's memory"
fi
usage_error "chunk smaller than an element" -- $R --chunk 2 -d float64
usage_error "pipeline depth zero" -- $R --pipeline 0
usage_error "channels out of range" -- $R --channels 1000
usage_error "iterations zero" -- $R -n 0
usage_error "ranks per node without --local" -- $R --ranks-per-node 2
usage_error "ranks per node not dividing" -- $R --local 3 --ranks-per-node 2
usage_error "stray argument" -- $R extra
usage_error "bad torus" -- $R --torus 4by4
# options no part of the job reads are refused, not ignored
usage_says "--torus for an algorithm that maps no torus" "--torus: ring maps no torus (torus-ring, torus-rdh do)" -- $R --local 4 --torus 2x2 --algo ring
usage_says "--rails for an algorithm without rails" "--rails: mesh has no ring per rail (rail-ring does)" -- $R --local 2 --rails 2 --algo mesh
usage_says "--streams where the ranks meet in shared memory alone" "--streams [0-9]*: the ranks meet in shared memory alone" -- $R --local 2 --streams 4
usage_says "--streams over --transport shm" "--streams [0-9]*: the ranks meet in shared memory alone" -- $R --local 2 --transport shm --streams 4
usage_says "--provider without the fabric transport" "--provider is for --transport fabric" -- $R --local 2 --transport tcp --provider tcp
# a parameter nothing of the job reads: refused, not recorded as if it ran
usage_says "--streams over the fabric transport" "--streams 4: the fabric transport opens one endpoint a peer" -- $R --local 2 --transport fabric --streams 4
usage_says "--chunk for an algorithm without slices" "--chunk: oneshot reads no chunk" -- $R --local 2 --algo oneshot --chunk 4K
usage_says "--pipeline for symm" "--pipeline: symm reads no pipeline" -- $R --local 2 --algo symm --pipeline 8
# --intra/--inter beside an algorithm that runs no sub-algorithms (ring ran, exit 0, the
# option recorded nowhere)
usage_says "--intra for ring" "--intra: ring runs no sub-algorithms (--intra and --inter are for one that does: --algo hier)" -- $R --local 2 --intra mesh --inter rdh
usage_says "--inter for mesh" "--inter: mesh runs no sub-algorithms" -- $R --local 2 --algo mesh --inter rdh
# --sockbuf where no tcp connection opens (it ran on shm, exit 0)
usage_says "--sockbuf on one host over shm" "--sockbuf sizes tcp's socket buffers: the ranks meet in shared memory alone (one host) (--transport tcp)" -- $R --local 2 --sockbuf 1M
usage_says "--threads for ring" "--threads: ring reads no threads (colltune list algos --verbose: what each reads)" -- $R --local 2 --threads 2
expect 0 "--rails for rail-ring" -- $R --local 2 --rails 2 --algo rail-ring -b 8 -e 1K
expect 0 "--rails for hier with rail-ring between nodes (its sub-jobs keep the rails)" -- $R --local 4 --ranks-per-node 2 --algo hier --inter rail-ring --rails 2 -b 8 -e 1K
usage_says "--rails for hier without rail-ring" "--rails: hier has no ring per rail" -- $R --local 4 --ranks-per-node 2 --algo hier --rails 2
expect 0 "--streams between virtual nodes (tcp)" -- $R --local 4 --ranks-per-node 2 --streams 2 -b 8 -e 1K
usage_error "bad timeout" -- $R --timeout -1
usage_error "average out of range" -- $R -a 4
usage_error "average not a number" -- $R --average max
usage_error "average with a library engine" -- $R -a 1 --lib ompi
usage_error "place not a word run knows" -- $R --place outside
usage_error "max time zero" -- $R --max-time 0 --lib ompi
usage_error "max time without a library engine" -- $R --max-time 2
usage_error "batch zero" -- $R --batch 0
usage_error "batch not a number or auto" -- $R --batch many
usage_error "batch past 4096" -- $R --batch 4097
usage_error "more sizes than a run takes" -- $R -b 8 -e 1G -f 1.001
# more tcp streams than descriptors (ulimit -n): said at once with the cause (it read
# "timed out: " with nothing after the colon, after the whole --boot-timeout)
( ulimit -n 64 && exec $R --local 2 --transport tcp --streams 64 -b 8 -e 64K -n 1 --boot-timeout 30 ) \
    >"$TMP/out" 2>"$TMP/err"; rc=$?
[ $rc = 1 ] && grep -q "ulimit -n: too few file descriptors for the connections): Too many open files" "$TMP/err" \
    && ok "descriptors run out: exit 1, said with the cause" || not_ok "descriptors run out: exit $rc $(head -c 300 "$TMP/err")"
# a step that rounds to the size before gives it once (8 then 12, not 8 forty times)
expect 0 "-f 1.01: each size once" -- $R --local 2 -b 8 -e 64 -f 1.01 -n 1 -w 0
[ "$(grep -v '^#' "$TMP/out" | awk 'NF { print $1 }' | tr '\n' ' ')" = "8 12 16 20 24 28 32 36 40 44 48 52 56 60 " ] \
    && ok "... 8, 12, ..., 60 (the next step passes 64)" || not_ok "-f 1.01 sizes: $(grep -v '^#' "$TMP/out" | awk 'NF { print $1 }' | tr '\n' ' ')"
done_testing
