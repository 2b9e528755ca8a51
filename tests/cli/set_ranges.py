#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The CLI tests' library sections with chosen ranges.

Usage: set_ranges.py IN OUT [--shape RANKSxNODES] LO:HI:ALGO:ID ...

Reads config IN (a `sweep --lib` output), replaces the ranges of its first library's first
rule set with the given ones (HI "inf" for the last; each copies the first range's other
fields, `default` true where ID is 0) and writes OUT. With --shape, the rule set must be
for that many ranks on that many nodes (exit 1 otherwise).
"""
import json
import sys

args = sys.argv[1:]
src, dst, args = args[0], args[1], args[2:]
d = json.load(open(src))
rs = d["libraries"][0]["rules"][0]
if args and args[0] == "--shape":
    ranks, nodes = (int(x) for x in args[1].split("x"))
    if (rs["nranks"], rs["nnodes"]) != (ranks, nodes):
        sys.exit(f"set_ranges: the rule set is for {rs['nranks']} ranks on {rs['nnodes']} nodes")
    args = args[2:]
base = dict(rs["ranges"][0])
ranges = []
for spec in args:
    lo, hi, algo, rid = spec.split(":")
    r = dict(base)
    r.update(min_bytes=int(lo), max_bytes=None if hi == "inf" else int(hi), algo=algo,
             id=int(rid), default=int(rid) == 0)
    ranges.append(r)
rs["ranges"] = ranges
json.dump(d, open(dst, "w"))
