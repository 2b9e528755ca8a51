#!/bin/sh
# run/sweep --mem: host runs as before; cuda on a host that cannot use it (no library, no
# driver, no GPU) is one line naming what is missing and exit 2; on a GPU host it stops with
# one line too (the native engine moves host memory only so far). --gpu-map is checked.
# run and sweep --lib nccl (the NCCL engine) fail the same way where they cannot run; a sweep
# refuses another tuner plugin, a missing plugin of colltune's, and --verify (not built).
. "$(dirname "$0")/lib.sh"
R="$COLLTUNE run --local 2 --maxbytes 4096"
expect 0 "--mem host runs and checks" -- $R --mem host
grep -q "Out of bounds values : 0 OK" "$TMP/out" && ok "host results correct" || not_ok "host results: $(tail -3 "$TMP/out")"
usage_error "--mem cuda here" -- $R --mem cuda
grep -q -- "--mem cuda: CUDA memory: " "$TMP/err" && ok "names CUDA" || not_ok "message: $(cat "$TMP/err")"
COLLTUNE_CUDART=/nonexistent/libcudart.so.13 usage_error "missing libcudart" -- $R --mem cuda
grep -q "cannot load the CUDA runtime /nonexistent/libcudart.so.13" "$TMP/err" && ok "names the library" || not_ok "message: $(cat "$TMP/err")"
COLLTUNE_CUDART=/nonexistent/libcudart.so.13 usage_error "sweep: missing libcudart" -- $COLLTUNE sweep --local 2 --mem cuda
usage_error "unknown kind" -- $R --mem rocm
usage_error "--gpu-map without --mem cuda" -- $R --gpu-map 0,1
usage_error "bad --gpu-map" -- $R --mem cuda --gpu-map 0,,1
# --lib nccl: the NCCL engine needs libnccl, libcudart, a driver and a GPU
usage_error "--lib nccl here" -- $R --lib nccl
grep -q -- "--lib nccl: " "$TMP/err" && ok "names the engine" || not_ok "message: $(cat "$TMP/err")"
COLLTUNE_LIBNCCL=/nonexistent/libnccl.so.2 usage_error "missing libnccl" -- $R --lib nccl
grep -q "cannot load NCCL /nonexistent/libnccl.so.2" "$TMP/err" && ok "names libnccl" || not_ok "message: $(cat "$TMP/err")"
usage_error "unknown --lib" -- $R --lib rccl
usage_error "--lib nccl on host memory" -- $R --lib nccl --mem host
# sweep --lib nccl: NCCL's choices forced through colltune's tuner plugin, which it sets
usage_error "sweep --lib nccl here" -- $COLLTUNE sweep --local 2 --lib nccl
grep -q -- "--lib nccl: " "$TMP/err" && ok "names the engine" || not_ok "message: $(cat "$TMP/err")"
NCCL_TUNER_PLUGIN=/opt/other/libnccl-tuner.so usage_error "sweep --lib nccl, another tuner" -- $COLLTUNE sweep --local 2 --lib nccl
grep -q "NCCL_TUNER_PLUGIN=/opt/other/libnccl-tuner.so names another: unset it" "$TMP/err" && ok "names the other tuner" || not_ok "message: $(cat "$TMP/err")"
COLLTUNE_NCCL_PLUGIN=/nonexistent/p.so usage_error "sweep --lib nccl, no plugin" -- $COLLTUNE sweep --local 2 --lib nccl
grep -q "COLLTUNE_NCCL_PLUGIN=/nonexistent/p.so: cannot read" "$TMP/err" && ok "names the plugin" || not_ok "message: $(cat "$TMP/err")"
usage_error "sweep --verify --lib nccl" -- $COLLTUNE sweep --local 2 --lib nccl --verify "$TMP/none.json"
grep -q "not built yet" "$TMP/err" && ok "says it is not built" || not_ok "message: $(cat "$TMP/err")"
usage_error "validate --lib nccl" -- $COLLTUNE validate --local 2 --lib nccl
done_testing
