# Generates probe/nvlink_gen.h from probe/nvlink_gen.csv (see the CSV's header).
BEGIN {
    FS = ","
    print "/* SPDX-License-Identifier: MIT */"
    print "/* GENERATED from probe/nvlink_gen.csv by probe/nvlink_gen.awk: edit the CSV, then"
    print " * awk -f probe/nvlink_gen.awk probe/nvlink_gen.csv > probe/nvlink_gen.h */"
    print "/* kind, key, fabric, gen, link_gbs, links, nvswitch, source */"
}
/^#/ || /^[ \t]*$/ { next }
$1 == "kind" { next }
NF != 8 { print "nvlink_gen.csv:" NR ": expected 8 fields" > "/dev/stderr"; exit 1 }
{ printf "{\"%s\", \"%s\", \"%s\", \"%s\", %s, %s, \"%s\", \"%s\"},\n", $1, $2, $3, $4, $5, $6, $7, $8 }
