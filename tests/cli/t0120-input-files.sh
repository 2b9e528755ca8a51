#!/bin/sh
# A missing or unreadable input file is unusable input: exit 2 and one line, in every command;
# so is a device (show /dev/zero read until memory ran out: 840 MB in 5 s).
. "$(dirname "$0")/lib.sh"
for f in /nonexistent/in.json "$TMP" /dev/zero; do
    usage_error "validate --baseline $f" -- "$COLLTUNE" validate --local 2 --baseline "$f"
    usage_error "model --topology $f" -- "$COLLTUNE" model --topology "$f" -b 8 -e 8
    usage_error "model --calibrate $f" -- "$COLLTUNE" model --calibrate "$f" --out "$TMP/fit.json"
    usage_error "show $f" -- "$COLLTUNE" show "$f"
    usage_error "export $f" -- "$COLLTUNE" export "$f" --format json
done
usage_error "sweep --verify missing" -- "$COLLTUNE" sweep --local 2 --verify /nonexistent/config.json
usage_error "top --replay /dev/zero" -- "$COLLTUNE" top --replay /dev/zero
[ -e "$TMP/fit.json" ] && not_ok "nothing written" || ok "nothing written"
done_testing
