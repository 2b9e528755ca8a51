#!/bin/sh
# Global help, version, dispatch errors; every subcommand answers -h and is in the man page.
. "$(dirname "$0")/lib.sh"
man="$(dirname "$0")/../../man/colltune.1"

expect 0 "--help" -- "$COLLTUNE" --help
grep -q "commands:" "$TMP/out" && ok "--help lists commands" || not_ok "--help lists commands"
expect 0 "--version" -- "$COLLTUNE" --version
grep -q "transports:" "$TMP/out" && grep -q "shm" "$TMP/out" && ok "--version lists transports" || not_ok "--version lists transports"
usage_error "no command" -- "$COLLTUNE"
usage_error "unknown command" -- "$COLLTUNE" frobnicate
usage_error "unknown global option" -- "$COLLTUNE" --frob
usage_error "help of unknown command" -- "$COLLTUNE" help frob
for c in $("$COLLTUNE" --help | awk '/^  [a-z]+ /{print $1}'); do
    expect 0 "$c -h" -- "$COLLTUNE" "$c" -h
    expect 0 "help $c" -- "$COLLTUNE" help "$c"
    grep -q "^\.SS $c\b\|^\.B colltune $c\|colltune $c" "$man" && ok "man page documents $c" || not_ok "man page documents $c"
done
expect 0 "list algos" -- "$COLLTUNE" list algos
grep -q "^ring .*allreduce" "$TMP/out" && ok "list algos: ring supports allreduce" || not_ok "list algos: ring"
expect 0 "list transports" -- "$COLLTUNE" list transports
expect 0 "list datatypes" -- "$COLLTUNE" list datatypes
[ "$(wc -l <"$TMP/out")" -eq 10 ] && ok "ten datatypes" || not_ok "ten datatypes"
usage_error "list nothing" -- "$COLLTUNE" list
usage_error "list garbage" -- "$COLLTUNE" list garbage
done_testing
