#!/usr/bin/env python3
"""Bench report: colltune busbw per size and algorithm vs Open MPI and the limit kernel."""
import glob, json, math, os, sys

out = sys.argv[1]

def table(path):
    rows = {}
    for line in open(path):
        p = line.split()
        if len(p) == 3:
            rows[int(p[0])] = (float(p[1]), float(p[2]))
    return rows

ompi, limit = table(os.path.join(out, "ompi.txt")), table(os.path.join(out, "limit.txt"))
algos = {}
for f in sorted(glob.glob(os.path.join(out, "colltune-*.json"))):
    d = json.load(open(f))
    a = os.path.basename(f)[9:-5]
    algos[a] = {}
    for r in d["results"]:
        if r["placement"] == "out-of-place":
            algos[a][r["size"]] = (r["time_us"]["median"], r["busbw"])

def geo(xs):
    xs = [x for x in xs if x > 0]
    return math.exp(sum(map(math.log, xs)) / len(xs)) if xs else float("nan")

names = list(algos)
hdr = "%10s " % "size" + "".join("%10s " % a[:10] for a in names)
hdr += "%10s %10s %10s %9s %9s" % ("best", "ompi", "limit", "x ompi", "x limit")
print("# busbw GB/s, AllReduce float sum, 2 ranks, shm")
print(hdr)
r_ompi, r_lim = [], []
for s in sorted(ompi):
    vals = [algos[a].get(s, (0, 0))[1] for a in names]
    best = max(vals) if vals else 0
    o = ompi[s][1]
    l = limit.get(s, (0, 0))[1]
    xo = best / o if o else 0
    xl = best / l if l else 0
    if s <= 64 << 20:
        r_ompi.append(xo)
    if s >= 64 << 10:
        r_lim.append(xl)
    print("%10d " % s + "".join("%10.3f " % v for v in vals) +
          "%10.3f %10.3f %10.3f %9.2f %9.2f" % (best, o, l, xo, xl))
print()
print("geomean best/ompi over 8 B..64 MiB : %.2f (min %.2f)" % (geo(r_ompi), min(r_ompi) if r_ompi else 0))
print("geomean best/limit from 64 KiB     : %.2f (min %.2f)" % (geo(r_lim), min(r_lim) if r_lim else 0))
small = min(ompi)
lat = min((algos[a][small][0] for a in names if small in algos[a]), default=float("nan"))
print("latency at %d B: colltune %.2f us, ompi %.2f us, limit %.2f us" %
      (small, lat, ompi[small][0], limit.get(small, (float("nan"),))[0]))
