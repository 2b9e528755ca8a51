#!/usr/bin/env python3
"""Does a predicted config (sweep --model) choose what was measured to win?

Usage: model-agree.py MEASURED/results.json PREDICTED/config.json [MARGIN]
At every size of the measured sweep, per collective: the measured winner is the algorithm
with the lowest median (its best parameters). The predicted choice agrees when it is that
algorithm, or when it was measured there and the winner does not beat it beyond both
intervals by MARGIN (default: the measured sweep's margin), i.e. a measured tie (the
planner's own rule, tune/select.h). Sizes are equally spaced in log size, so the share of
sizes is the share of the log-size range. Prints one line per collective and the lowest.
"""
import json
import sys


def main():
    res = json.load(open(sys.argv[1]))
    cfg = json.load(open(sys.argv[2]))
    margin = float(sys.argv[3]) if len(sys.argv) > 3 else res.get("sweep", {}).get("margin", 0.1)
    best = {}  # (coll, size, algo) -> the point with the lowest median
    for p in res["points"]:
        if p.get("wrong"):
            continue
        k = (p["coll"], p["size"], p["algo"])
        if k not in best or p["time_us"]["median"] < best[k]["time_us"]["median"]:
            best[k] = p
    worst = 1.0
    for s in cfg["rules"]:
        coll = s["coll"]
        sizes = sorted({k[1] for k in best if k[0] == coll})
        if not sizes:
            sys.exit(f"model-agree: {coll}: nothing was measured")
        n = agree = 0
        for size in sizes:
            rule = next((r for r in s["ranges"]
                         if r["min_bytes"] <= size < (r["max_bytes"] or float("inf"))), None)
            if rule is None:
                sys.exit(f"model-agree: {coll}: no range of the predicted config holds {size} B")
            here = {k[2]: p for k, p in best.items() if k[0] == coll and k[1] == size}
            win = min(here.values(), key=lambda p: p["time_us"]["median"])
            mine = here.get(rule["algo"])
            n += 1
            if mine is win or (mine and not
                               win["time_us"]["hi"] * (1 + margin) < mine["time_us"]["lo"]):
                agree += 1
        share = agree / n if n else 1.0
        worst = min(worst, share)
        print(f"{coll}: the predicted choice is the measured winner or tied with it at "
              f"{agree} of {n} sizes ({100 * share:.0f}%, margin {margin:g})")
    print(f"lowest: {100 * worst:.0f}%")


if __name__ == "__main__":
    main()
