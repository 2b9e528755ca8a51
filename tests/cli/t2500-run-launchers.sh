#!/bin/sh
# How ranks are brought up: --print-bootstrap for each launcher, mis-launches refused (the
# "busbw 0" trap), real runs under Open MPI's mpirun (PMIx), MPICH's mpiexec.hydra (PMI-1),
# torchrun-style MASTER_ADDR/MASTER_PORT, and one `--local N` per node of a job.
. "$(dirname "$0")/lib.sh"
port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])'
}
small="-b 8 -e 64K -f 8 -n 2 -w 0"
# run without any launcher variable of the calling environment
clean() {
    env -u COLLTUNE_ROOT -u COLLTUNE_RANK -u COLLTUNE_SIZE -u COLLTUNE_TOKEN \
        -u OMPI_COMM_WORLD_RANK -u OMPI_COMM_WORLD_SIZE -u PMI_RANK -u PMI_SIZE -u PMI_FD \
        -u PMIX_RANK -u SLURM_PROCID -u SLURM_NTASKS -u SLURM_STEP_ID -u MASTER_ADDR \
        -u MASTER_PORT -u RANK -u WORLD_SIZE "$@"
}
# has DESC PATTERN FILE: FILE contains PATTERN
has() {
    if grep -q "$2" "$3"; then ok "$1"; else not_ok "$1"; head -3 "$3" | sed 's/^/#   /'; fi
}
# passed DESC RC FILE NRANKS: a run that exited 0 with NRANKS ranks and zero wrong
passed() {
    if [ "$2" -eq 0 ] && grep -q "nRanks $4" "$3" && grep -q "values : 0 OK" "$3"; then
        ok "$1"
    else
        not_ok "$1 (exit $2)"; tail -4 "$3" | sed 's/^/#   /'
    fi
}

# --print-bootstrap: what would happen, and the detection order
clean $COLLTUNE run --print-bootstrap >"$TMP/out" 2>&1
has "print-bootstrap: single process" "^bootstrap: single process" "$TMP/out"
has "print-bootstrap: the detection order" "^order: --local N; PMIx" "$TMP/out"
clean COLLTUNE_ROOT=n0:4000 COLLTUNE_RANK=1 COLLTUNE_SIZE=4 \
    $COLLTUNE run --print-bootstrap >"$TMP/out" 2>&1
has "print-bootstrap: environment rendezvous" \
    "bootstrap: env, rank 1 of 4 (COLLTUNE_RANK/COLLTUNE_SIZE), root n0:4000" "$TMP/out"
clean MASTER_ADDR=10.0.0.7 MASTER_PORT=29500 RANK=3 WORLD_SIZE=8 \
    $COLLTUNE run --print-bootstrap >"$TMP/out" 2>&1
has "print-bootstrap: torchrun variables" \
    "rank 3 of 8 (RANK/WORLD_SIZE), root 10.0.0.7:29500 (MASTER_ADDR/MASTER_PORT)" "$TMP/out"

# mis-launches: refused before anything runs, with the reason
clean OMPI_COMM_WORLD_RANK=0 OMPI_COMM_WORLD_SIZE=4 \
    $COLLTUNE run --print-bootstrap >"$TMP/out" 2>&1
has "print-bootstrap names the mis-launch" \
    "refused: mis-launch: the launcher started 4 processes" "$TMP/out"
usage_error "every process alone as rank 0 of 1 is refused" -- \
    clean OMPI_COMM_WORLD_RANK=1 OMPI_COMM_WORLD_SIZE=4 $COLLTUNE run $small
has "the refusal names the busbw 0 trap" "busbw 0" "$TMP/err"
usage_error "--local under a multi-process launcher is refused" -- \
    clean PMI_RANK=0 PMI_SIZE=2 $COLLTUNE run --local 2 $small
usage_error "sizes that disagree are refused" -- \
    clean COLLTUNE_ROOT=127.0.0.1:9 COLLTUNE_RANK=0 COLLTUNE_SIZE=1 OMPI_COMM_WORLD_RANK=0 \
    OMPI_COMM_WORLD_SIZE=2 $COLLTUNE run $small
usage_error "a short COLLTUNE_TOKEN is refused" -- clean COLLTUNE_TOKEN=abc $COLLTUNE run $small

# Open MPI's mpirun: PMIx
if ! command -v mpirun >/dev/null 2>&1 || ! $COLLTUNE --version | grep -q "pmix  *built"; then
    skip "mpirun (PMIx): mpirun or PMIx support missing"
else
    mpirun="timeout 60 mpirun --allow-run-as-root --oversubscribe"
    clean $mpirun -np 3 $COLLTUNE run $small >"$TMP/out" 2>&1
    passed "mpirun -np 3: PMIx bootstrap, zero wrong" $? "$TMP/out" 3
    clean $mpirun -np 2 $COLLTUNE run --print-bootstrap >"$TMP/out" 2>&1
    has "print-bootstrap under mpirun: pmix" "bootstrap: pmix, rank 1 of 2" "$TMP/out"
    # --streams where the ranks found themselves on one host (known after the bootstrap
    # alone): refused by every rank alike, said once, exit 2
    clean $mpirun -np 2 $COLLTUNE run --streams 4 $small >"$TMP/out" 2>"$TMP/err"; rc=$?
    [ $rc -ne 0 ] && [ "$(grep -c "error:" "$TMP/err")" -eq 1 ] \
        && grep -q "^colltune run: error: rank 0 (.*): --streams 4: the ranks meet in shared memory alone (one host): no connection to stream over (--transport tcp)\$" "$TMP/err" \
        && grep -q "Exit code: *2" "$TMP/err" && ! grep -q "^ *[0-9]" "$TMP/out" \
        && ok "mpirun -np 2 run --streams 4 on one host: refused after the bootstrap, one line, exit 2" \
        || { not_ok "--streams under mpirun on one host (exit $rc)"; sed 's/^/#   /' "$TMP/err" | head -5; }
    # colltune loads libpmix when the bootstrap runs (not linked: Open MPI 5's engine module
    # needs its own): a libpmix.so.2 first on the ranks' loader path without PMIx's entry
    # points (an older one) is passed over for the one colltune was built against
    mkdir -p "$TMP/oldpmix"
    echo 'int PMIx_Init_old_placeholder(void) { return 0; }' >"$TMP/oldpmix/p.c"
    if cc -shared -fPIC -o "$TMP/oldpmix/libpmix.so.2" "$TMP/oldpmix/p.c" 2>/dev/null; then
        clean $mpirun -np 2 -x LD_LIBRARY_PATH="$TMP/oldpmix" $COLLTUNE run --print-bootstrap \
            >"$TMP/out" 2>&1
        has "an old libpmix.so.2 first on the path: the one built against" \
            "bootstrap: pmix, rank 1 of 2" "$TMP/out"
    else
        skip "a stand-in libpmix.so.2: no C compiler"
    fi
    ldd "$COLLTUNE" | grep -q libpmix && not_ok "colltune links libpmix" \
        || ok "colltune does not link libpmix (loaded when the bootstrap runs)"
    # mpirun SIGKILLed: its ranks end with it (they measured on, unattended, for minutes)
    clean mpirun --allow-run-as-root --oversubscribe -np 2 $COLLTUNE run -b 4M -e 4M -n 100000 \
        >"$TMP/out" 2>&1 &
    mp=$!
    i=0
    while [ "$(pgrep -f -- "-e 4M -n 100000" | wc -l)" -lt 3 ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
    sleep 0.5
    kill -9 $(pgrep -x mpirun -P $(pgrep -P $mp | tr '\n' ',')$mp) 2>/dev/null; wait $mp 2>/dev/null
    i=0
    while pgrep -f -- "run -b 4M -e 4M -n 100000" >/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
    if pgrep -f -- "run -b 4M -e 4M -n 100000" >/dev/null; then
        not_ok "mpirun SIGKILLed: its ranks still run after 10 s"; ps -eo pid,ppid,stat,args | grep -- "-n 100000" | sed "s/^/#   /"; pkill -9 -f -- "run -b 4M -e 4M -n 100000"
    else
        ok "mpirun SIGKILLed: its ranks end with it (in $((i / 10)).$((i % 10)) s)"
    fi
fi

# MPICH's hydra: PMI-1 over PMI_FD
hydra=$(command -v mpiexec.hydra || command -v mpiexec.mpich)
if [ -z "$hydra" ]; then
    skip "mpiexec.hydra (PMI-1): not installed"
else
    clean timeout 60 "$hydra" -n 3 $COLLTUNE run $small >"$TMP/out" 2>&1
    passed "mpiexec.hydra -n 3: PMI-1 bootstrap, zero wrong" $? "$TMP/out" 3
    # a sweep under a launcher runs on its ranks (it asked for --local N of its own before)
    clean timeout 120 "$hydra" -n 2 $COLLTUNE sweep --coll allreduce -e 4K --budget 2 \
        --out "$TMP/hsweep" >"$TMP/out" 2>&1
    rc=$?
    if [ $rc -eq 0 ] && [ -s "$TMP/hsweep/config.json" ] && grep -q '"nranks": 2' \
        "$TMP/hsweep/results.json"; then
        ok "mpiexec.hydra -n 2 sweep: the launcher's 2 ranks, a config written"
    else
        not_ok "mpiexec.hydra -n 2 sweep (exit $rc)"; tail -3 "$TMP/out" | sed 's/^/#   /'
    fi
    # rank 0 refusing its output: every rank leaves at once, exit 2 (it waited 60 s for rank
    # 0's bootstrap, and hydra ORed 2 and 1 into 3), one line
    for cmd in "run $small --json $TMP/no/such.json" "validate --json $TMP/no/v.json" \
        "sweep --out /proc/no/such"; do
        start=$(date +%s)
        clean timeout 60 "$hydra" -n 2 $COLLTUNE $cmd >"$TMP/out" 2>&1
        rc=$? took=$(($(date +%s) - start))
        if [ $rc -eq 2 ] && [ $took -lt 20 ] && [ "$(grep -c 'error:' "$TMP/out")" -eq 1 ]; then
            ok "mpiexec.hydra -n 2 ${cmd%% *}, an output rank 0 cannot write: exit 2 in ${took} s"
        else
            not_ok "mpiexec.hydra ${cmd%% *}, unwritable output (exit $rc, ${took} s)"
            sed 's/^/#   /' "$TMP/out"
        fi
    done
fi

# a launcher's one task (srun --pty bash, srun -n 1 -c 8): colltune launches its own ranks
# there, and refuses an output at once (it ran the job and then failed, exit 1)
one="SLURM_PROCID=0 SLURM_NTASKS=1 SLURM_STEP_ID=0"
clean env $one $COLLTUNE run --local 2 $small --json "$TMP/no/such.json" >"$TMP/out" 2>&1; rc=$?
[ $rc -eq 2 ] && [ "$(grep -c 'error:' "$TMP/out")" -eq 1 ] && ! grep -q "nRanks" "$TMP/out" \
    && ok "one srun task, run --local 2 with an unwritable --json: exit 2 before any rank, one line" \
    || { not_ok "one srun task, unwritable --json (exit $rc)"; sed 's/^/#   /' "$TMP/out"; }
clean env $one $COLLTUNE sweep --coll allreduce -e 4K --budget 2 --out "$TMP/onesweep" >"$TMP/out" 2>&1; rc=$?
nr=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['fingerprint']['nranks'])" "$TMP/onesweep/results.json" 2>/dev/null)
[ $rc -eq 0 ] && [ "${nr:-0}" -ge 2 ] && ok "one srun task, sweep: its own ranks, one per core ($nr)" \
    || { not_ok "one srun task, sweep (exit $rc, ${nr:-no} ranks)"; tail -3 "$TMP/out" | sed 's/^/#   /'; }

# torchrun-style: MASTER_ADDR/MASTER_PORT with RANK/WORLD_SIZE
p=$(port)
clean MASTER_ADDR=127.0.0.1 MASTER_PORT=$p RANK=1 WORLD_SIZE=2 \
    $COLLTUNE run $small >"$TMP/r1" 2>&1 &
p1=$!
clean MASTER_ADDR=127.0.0.1 MASTER_PORT=$p RANK=0 WORLD_SIZE=2 $COLLTUNE run $small >"$TMP/r0" 2>&1
rc=$?
wait $p1 || rc=$((rc + 100))
passed "MASTER_ADDR/MASTER_PORT rendezvous" $rc "$TMP/r0" 2

# ranks started with other options than rank 0 (an MPMD launch, a script that differs) ran
# another job than the table said: "#wrong" in every row of ring's (rank 1 ran rdh), a stall
# of the whole --timeout (-n 50), "message of 1 bytes does not match": now every rank refuses
# at once, naming the first word that differs (exit 2)
for d in "--algo rdh" "-n 50" "--transport=tcp"; do
    p=$(port)
    clean MASTER_ADDR=127.0.0.1 MASTER_PORT=$p RANK=1 WORLD_SIZE=2 \
        timeout 60 $COLLTUNE run $small $d --timeout 5 >"$TMP/m1" 2>&1 &
    p1=$!
    clean MASTER_ADDR=127.0.0.1 MASTER_PORT=$p RANK=0 WORLD_SIZE=2 \
        timeout 60 $COLLTUNE run $small --timeout 5 >"$TMP/m0" 2>&1
    rc=$?
    wait $p1; rc1=$?
    case $d in
    -n*) w="'-n 50' where rank 0 has '-n 2'" ;;
    *) w="rank 1 has '$(echo "$d" | tr = ' ')', rank 0 not" ;;
    esac
    if [ $rc = 2 ] && [ $rc1 = 2 ] && grep -qF "rank 1 was started with other options than rank 0: $w" "$TMP/m0"; then
        ok "rank 1 started with '$d' alone: both refuse (exit 2): $w"
    else
        not_ok "rank 1 started with '$d' alone: exit $rc and $rc1"; cat "$TMP/m0" "$TMP/m1" | head -4 | sed 's/^/#   /'
    fi
done
# ... but one command line written two ways is one (--timeout=5 and --timeout 5, -n2 and -n 2,
# another order), and what a host sets its own way may differ (--boot-timeout, --no-bind)
p=$(port)
clean MASTER_ADDR=127.0.0.1 MASTER_PORT=$p RANK=1 WORLD_SIZE=2 \
    timeout 60 $COLLTUNE run -n2 -w 0 -e 64K -b 8 -f 8 --timeout=5 --boot-timeout 20 --no-bind >"$TMP/m1" 2>&1 &
p1=$!
clean MASTER_ADDR=127.0.0.1 MASTER_PORT=$p RANK=0 WORLD_SIZE=2 \
    timeout 60 $COLLTUNE run $small --timeout 5 >"$TMP/m0" 2>&1
rc=$?
wait $p1 || rc=$((rc + 100))
passed "one command line written two ways, and a host's own --boot-timeout, --no-bind" $rc "$TMP/m0" 2

# one `--local 2` per node: two "nodes" on this host make a 4-rank job
p=$(port)
clean COLLTUNE_ROOT=127.0.0.1:$p COLLTUNE_NNODES=2 COLLTUNE_NODE_RANK=1 \
    COLLTUNE_HOSTNAME=node-b $COLLTUNE run --local 2 $small >"$TMP/n1" 2>&1 &
p1=$!
clean COLLTUNE_ROOT=127.0.0.1:$p COLLTUNE_NNODES=2 COLLTUNE_NODE_RANK=0 \
    COLLTUNE_HOSTNAME=node-a $COLLTUNE run --local 2 $small >"$TMP/n0" 2>&1
rc=$?
wait $p1 || rc=$((rc + 100))
passed "--local 2 on each of 2 nodes: one 4-rank job" $rc "$TMP/n0" "4 nNodes 2"
# node 0's colltune alone writes the outputs and reads validate's --baseline: another node
# neither checks nor reads them (a path on node 0's disk alone); node 0's refusal ends the
# whole job at once, said once (the other node's ranks waited --boot-timeout for it)
nodes2() { # FILE0 FILE1 NODE0-ARGS -- NODE1-ARGS: start both, $rc0 $rc1 $secs
    f0=$1 f1=$2; shift 2
    a0=""; while [ "$1" != -- ]; do a0="$a0 $1"; shift; done; shift
    p=$(port); t0=$(date +%s)
    # shellcheck disable=SC2086
    clean COLLTUNE_ROOT=127.0.0.1:$p COLLTUNE_NNODES=2 COLLTUNE_NODE_RANK=1 \
        COLLTUNE_HOSTNAME=node-b timeout 60 $COLLTUNE "$@" --boot-timeout 20 >"$f1" 2>&1 &
    p1=$!
    # shellcheck disable=SC2086
    clean COLLTUNE_ROOT=127.0.0.1:$p COLLTUNE_NNODES=2 COLLTUNE_NODE_RANK=0 \
        COLLTUNE_HOSTNAME=node-a timeout 60 $COLLTUNE $a0 --boot-timeout 20 >"$f0" 2>&1
    rc0=$?; wait $p1; rc1=$?; secs=$(($(date +%s) - t0))
}
nodes2 "$TMP/n0" "$TMP/n1" run --local 2 $small --json "$TMP/n0.json" -- \
    run --local 2 $small --json "$TMP/no/such/n1.json"
[ $rc0 -eq 0 ] && [ $rc1 -eq 0 ] && grep -q "nRanks 4 nNodes 2" "$TMP/n0" && [ -s "$TMP/n0.json" ] \
    && [ ! -e "$TMP/no" ] && ok "--json a folder node 1 lacks: node 0 writes it, the job runs" \
    || { not_ok "node 1's --json checked (exit $rc0/$rc1)"; tail -n 3 "$TMP/n0" "$TMP/n1" | sed 's/^/#   /'; }
nodes2 "$TMP/n0" "$TMP/n1" run --local 2 $small --json "$TMP/no/such/n0.json" -- \
    run --local 2 $small
[ $rc0 -eq 2 ] && [ $rc1 -eq 2 ] && [ "$secs" -lt 10 ] && [ "$(grep -c 'error:' "$TMP/n0")" -eq 1 ] \
    && grep -q "cannot write '$TMP/no/such/n0.json'" "$TMP/n0" && ! grep -q "error:" "$TMP/n1" \
    && ! grep -q nRanks "$TMP/n0" "$TMP/n1" \
    && ok "node 0's unwritable --json: both nodes exit 2 in ${secs}s, node 0 says it once" \
    || { not_ok "node 0's refusal (exit $rc0/$rc1 after ${secs}s)"; cat "$TMP/n0" "$TMP/n1" | sed 's/^/#   /'; }
# a sweep's ranks where no --local says (one a CPU, torchrun's root): node 1's --out left to
# node 0 alike (it refused a path node 0 alone writes)
touch "$TMP/afile"
p=$(port)
sw="sweep -e 4K --budget 2 --coll allreduce --boot-timeout 20"
clean MASTER_ADDR=127.0.0.1 MASTER_PORT=$p COLLTUNE_NNODES=2 COLLTUNE_NODE_RANK=1 timeout 60 \
    $COLLTUNE $sw --out "$TMP/afile/sw1" >"$TMP/n1" 2>&1 &
p1=$!
clean MASTER_ADDR=127.0.0.1 MASTER_PORT=$p COLLTUNE_NNODES=2 COLLTUNE_NODE_RANK=0 timeout 60 \
    $COLLTUNE $sw --out "$TMP/sw0" >"$TMP/n0" 2>&1
rc0=$?; wait $p1; rc1=$?
[ $rc0 -eq 0 ] && [ $rc1 -eq 0 ] && [ -s "$TMP/sw0/config.json" ] \
    && ok "sweep without --local on 2 nodes: node 1's --out unchecked, node 0 writes its own" \
    || { not_ok "sweep's default ranks on node 1 (exit $rc0/$rc1)"; tail -n 3 "$TMP/n0" "$TMP/n1" | sed 's/^/#   /'; }
# node 0 refused alone (the other node never came): exit 2, said once, after --boot-timeout
p=$(port); t0=$(date +%s)
clean COLLTUNE_ROOT=127.0.0.1:$p COLLTUNE_NNODES=2 COLLTUNE_NODE_RANK=0 timeout 60 $COLLTUNE \
    run --local 2 $small --json "$TMP/no/such/n0.json" --boot-timeout 2 >"$TMP/n0" 2>&1; rc=$?
[ $rc -eq 2 ] && [ "$(wc -l <"$TMP/n0")" -eq 1 ] && grep -q "cannot write" "$TMP/n0" \
    && ok "node 0's refusal, the other node absent: exit 2 in $(($(date +%s) - t0))s, one line" \
    || { not_ok "node 0's refusal alone (exit $rc)"; sed 's/^/#   /' "$TMP/n0"; }
# no --local: the node variables left in the environment make no node of a launcher's rank
p=$(port)
clean MASTER_ADDR=127.0.0.1 MASTER_PORT=$p RANK=1 WORLD_SIZE=2 COLLTUNE_NNODES=2 \
    COLLTUNE_NODE_RANK=1 timeout 60 $COLLTUNE run $small --json "$TMP/no/such/r1.json" >"$TMP/n1" 2>&1 &
p1=$!
clean MASTER_ADDR=127.0.0.1 MASTER_PORT=$p RANK=0 WORLD_SIZE=2 COLLTUNE_NNODES=2 \
    COLLTUNE_NODE_RANK=1 timeout 60 $COLLTUNE run $small --json "$TMP/no/such/r0.json" >"$TMP/n0" 2>&1
rc0=$?; wait $p1; rc1=$?
[ $rc0 -eq 2 ] && [ $rc1 -eq 2 ] && grep -q "cannot write '$TMP/no/such/r0.json'" "$TMP/n0" \
    && ! grep -q nRanks "$TMP/n0" \
    && ok "torchrun's rank 0 with COLLTUNE_NODE_RANK=1 left over: rank 0 checks its --json (exit 2)" \
    || { not_ok "a leftover COLLTUNE_NODE_RANK (exit $rc0/$rc1)"; tail -n 3 "$TMP/n0" | sed 's/^/#   /'; }
clean $COLLTUNE validate --local 2 --no-coll --iters 2 --save-baseline "$TMP/base.json" >/dev/null 2>&1
nodes2 "$TMP/n0" "$TMP/n1" validate --local 2 --no-coll --iters 2 --baseline "$TMP/base.json" -- \
    validate --local 2 --no-coll --iters 2 --baseline "$TMP/none.json"
[ $rc0 -ne 2 ] && [ $rc1 -ne 2 ] && grep -q "node-b  *baseline $TMP/base.json: " "$TMP/n0" \
    && grep -q "host(s): " "$TMP/n0" && ! grep -q "error:" "$TMP/n1" \
    && ok "validate --baseline node 1 lacks: node 0 reads it, the job runs (exit $rc0)" \
    || { not_ok "node 1 read --baseline (exit $rc0/$rc1)"; tail -n 3 "$TMP/n0" "$TMP/n1" | sed 's/^/#   /'; }
done_testing
