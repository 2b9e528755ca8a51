#!/bin/sh
# Rewrite the golden files of tests that keep them (today: tests/golden/export/, written by
# tests/export/test_export.c with CT_REGEN_GOLDEN=1). Review the diff before committing.
# Usage: scripts/regen-golden.sh [BUILD_DIR]   (default build)
set -eu
cd "$(dirname "$0")/.."
build=${1:-build}
mkdir -p tests/golden/export
make --no-print-directory BUILD="$build" "$build/tests/export/test_export" >&2
CT_REGEN_GOLDEN=1 "$build/tests/export/test_export" --filter 'golden/*' >&2
git status --short tests/golden 2>/dev/null || true
# TUI views (tests/golden/tui/, written by tests/tui/test_views.c)
make --no-print-directory BUILD="$build" "$build/tests/tui/test_views" >&2
CT_REGEN_GOLDEN=1 "$build/tests/tui/test_views" --filter 'views/*golden*' >&2
git status --short tests/golden 2>/dev/null || true
