#!/bin/sh
# colltune run --local N --transport fabric: every collective verified over libfabric
# (automatic provider: tcp;ofi_rxm here; also shm forced), blocking waits, provider errors.
. "$(dirname "$0")/lib.sh"
if ! $COLLTUNE list transports 2>/dev/null | grep -q '^fabric '; then
    skip "fabric transport is not in the transport table"; done_testing; exit
fi
if $COLLTUNE list transports | grep '^fabric ' | grep -q 'not built'; then
    skip "fabric transport not built (no libfabric headers)"; done_testing; exit
fi
if ! $COLLTUNE run --local 2 --transport fabric -b 8 -e 8 -n 1 -w 0 >"$TMP/out" 2>"$TMP/err"; then
    if grep -q "no libfabric provider" "$TMP/err"; then
        skip "no usable libfabric provider on this host: $(head -1 "$TMP/err")"; done_testing; exit
    fi
fi

run_ok() { # DESC -- colltune run arguments...: exit 0 and zero wrong values
    desc=$1; shift 2
    if $COLLTUNE run "$@" >"$TMP/out" 2>"$TMP/err" &&
        grep -q "Out of bounds values : 0 OK" "$TMP/out"; then
        ok "$desc"
    else
        not_ok "$desc"; sed 's/^/#   /' "$TMP/err" "$TMP/out" | tail -8
    fi
}

for nr in 2 4; do
    for coll in allreduce allgather reducescatter alltoall; do
        for algo in ring mesh; do
            d="--local $nr --transport fabric --coll $coll --algo $algo"
            run_ok "$d" -- $d -b 8 -e 1M -f 8 -n 3 -w 1 -c 1
        done
    done
done
d="--local 4 --transport fabric"
run_ok "$d --coll allreduce --algo rdh" -- $d --coll allreduce --algo rdh -b 8 -e 1M -f 8 -n 2 -w 1 -c 1
run_ok "$d --coll alltoall --algo bruck" -- $d --coll alltoall --algo bruck -b 8 -e 1M -f 8 -n 2 -w 1 -c 1
run_ok "$d --wait block (fd waits)" -- $d --wait block -b 8 -e 4M -f 16 -n 2 -w 1 -c 1
run_ok "$d odd size int8 max" -- $d -b 13 -e 13 -d int8 -o max -n 2 -w 0 -c 1
# intra-host provider, forced
if COLLTUNE_FI_PROVIDER=shm $COLLTUNE run --local 2 --transport fabric -b 8 -e 8 -n 1 -w 0 \
    >/dev/null 2>&1; then
    export COLLTUNE_FI_PROVIDER=shm
    for nr in 2 4; do
        run_ok "shm provider --local $nr allreduce" -- --local $nr --transport fabric \
            -b 8 -e 4M -f 8 -n 2 -w 1 -c 1
    done
    unset COLLTUNE_FI_PROVIDER
else
    skip "libfabric shm provider not usable here"
fi
# a provider that is not there: exit 2 (the request cannot be met here), the error names it
# and the rank
COLLTUNE_FI_PROVIDER=no-such-provider $COLLTUNE run --local 2 --transport fabric -b 8 -e 8 \
    >"$TMP/out" 2>"$TMP/err"
rc=$?
if [ $rc -eq 2 ] && grep -q "provider 'no-such-provider' is not available on rank" "$TMP/err"; then
    ok "unknown provider: $(head -1 "$TMP/err")"
else
    not_ok "unknown provider (exit $rc)"; sed 's/^/#   /' "$TMP/err" | head -4
fi
# --provider on the command line (same effect as COLLTUNE_FI_PROVIDER)
if $COLLTUNE run --local 2 --transport fabric --provider shm -b 8 -e 64K -f 64 -n 2 -w 0 -c 1 \
    >"$TMP/out" 2>"$TMP/err" && grep -q "Out of bounds values : 0 OK" "$TMP/out"; then
    ok "--provider shm"
else
    not_ok "--provider shm"; sed 's/^/#   /' "$TMP/err" | head -4
fi
usage_error "empty --provider" -- $COLLTUNE run --local 2 --transport fabric --provider "" -n 1
done_testing
