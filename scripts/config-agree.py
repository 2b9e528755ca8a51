#!/usr/bin/env python3
"""How much of the byte range two tuned configs agree on, per collective, in log-size space.

Usage: config-agree.py A/config.json B/config.json
Over [minbytes, maxbytes] of A's sweep, sampled every 1/64 of a factor of 2, a size agrees
when both configs choose the same algorithm there, or either records a tie there with the
other's choice: a span of its range's "ties" (where that algorithm was acceptable at every
measured size) that holds the size, or its "tied_with" list (acceptable over the whole
range) in configs written before the spans, or the runner-up in configs older still.
Prints one line per collective and the lowest share.
"""
import json
import math
import sys


def ranges(cfg):
    out = {}
    for s in cfg["rules"]:
        out[s["coll"]] = s["ranges"]
    return out


def at(rs, size):
    for r in rs:
        hi = r["max_bytes"] if r["max_bytes"] is not None else float("inf")
        if r["min_bytes"] <= size < hi:
            return r
    return None


def tied(r, algo, size):
    if "ties" in r:
        return any(t["algo"] == algo and t["min_bytes"] <= size and
                   (t["max_bytes"] is None or size < t["max_bytes"]) for t in r["ties"])
    if "tied_with" in r:
        return algo in r["tied_with"]
    return r["tie"] and r["runner_up"] == algo


def main():
    a, b = (json.load(open(p)) for p in sys.argv[1:3])
    lo, hi = a["sweep"]["minbytes"], a["sweep"]["maxbytes"]
    ra, rb = ranges(a), ranges(b)
    worst = 1.0
    for coll in ra:
        if coll not in rb:
            continue
        n = agree = 0
        x = math.log2(lo)
        while x <= math.log2(hi) + 1e-9:
            size = int(round(2 ** x))
            p, q = at(ra[coll], size), at(rb[coll], size)
            n += 1
            if p and q and (p["algo"] == q["algo"] or tied(p, q["algo"], size) or
                           tied(q, p["algo"], size)):
                agree += 1
            x += 1 / 64
        share = agree / n if n else 1.0
        worst = min(worst, share)
        print(f"{coll}: {100 * share:.0f}% of the log-size range agrees "
              f"({len(ra[coll])} vs {len(rb[coll])} ranges)")
    print(f"lowest: {100 * worst:.0f}%")


if __name__ == "__main__":
    main()
