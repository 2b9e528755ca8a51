#!/bin/sh
# Turn cmd/help/*.txt into C strings: ct_help_<name>[] for each file not starting with '_';
# a line "@include X" stands for cmd/help/X.txt. Usage: gen-help.sh cmd/help > help.c
dir=$1
echo "/* Generated from the .txt files in $dir by scripts/gen-help.sh: edit those. */"
for f in "$dir"/*.txt; do
    name=$(basename "$f" .txt)
    case $name in _*) continue ;; esac
    echo "const char ct_help_$name[] ="
    awk -v dir="$dir" '
        function emit(line) { gsub(/\\/, "\\\\", line); gsub(/"/, "\\\"", line); print "    \"" line "\\n\"" }
        /^@include / { f = dir "/" $2 ".txt"; while ((getline l < f) > 0) emit(l); close(f); next }
        { emit($0) }' "$f"
    echo "    ;"
done
