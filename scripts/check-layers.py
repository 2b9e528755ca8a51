#!/usr/bin/env python3
"""The house rules that the code layout must keep (run by `make test`):

1. Includes flow downward only: each folder may include only the folders listed for it
   in ALLOWED (the arrows of the README's "Layout" section).
2. Nothing below cmd/, tui/ and output/ writes to stdout or stderr (lib/err.c's abort
   path for internal bugs is the one exception).
3. No file under cmd/ has 250 lines or more: a cmd file parses, calls one function of a
   lower layer and prints.
4. No circle of calls between the files of the library: from the built objects (nm), a
   file that calls a function of another file must not be called back by it, directly
   or around a longer circle. A table file's references to its rows are not calls.
Usage: check-layers.py BUILD_DIR   (prints each breach; exit 1 if any)
"""
import os
import re
import subprocess
import sys

ALLOWED = {
    "cmd": None,  # the top: anything
    "tui": {"tune", "validate", "monitor", "model", "backend", "algos", "transport", "device",
            "probe", "lib"},
    "output": {"tune", "validate", "monitor", "model", "backend", "algos", "transport", "device",
               "probe", "plugin", "lib"},
    "tune": {"backend", "algos", "transport", "device", "lib"},
    "validate": {"tune", "monitor", "backend", "algos", "transport", "device", "probe", "lib"},
    "monitor": {"probe", "transport", "lib"},
    "model": {"backend", "algos", "transport", "device", "probe", "lib"},
    "backend": {"algos", "transport", "device", "lib"},
    "algos": {"transport", "device", "lib"},
    "transport": {"lib"},
    "device": {"lib"},
    "probe": {"lib"},
    "plugin": set(),  # the NCCL tuner plugin: libc + jansson only (output/ reads its rules)
    "lib": set(),
}
# Table files: their references to the rows' functions in their own folder are rows of a
# table, not calls (an algorithm, a transport, an emitter, a view is one file plus one row).
TABLES = {"algos/registry.c", "output/export.c", "tui/views.c", "transport/transports.c"}
QUIET = [d for d in ALLOWED if d not in ("cmd", "tui", "output")]
PRINT = re.compile(r"\b(printf|puts|perror|vprintf)\s*\(|\b(v?fprintf|fputs|fputc|fwrite)\s*\([^;]*\b(stdout|stderr)\b")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def sources(d):
    return sorted(os.path.join(d, f) for f in os.listdir(d) if f.endswith((".c", ".h")))


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else "build"
    bad = []
    for d, allowed in ALLOWED.items():
        if not os.path.isdir(d):
            continue
        for f in sources(d):
            text = open(f, encoding="utf-8").read()
            for inc in INCLUDE.findall(text):
                target = os.path.normpath(os.path.join(d, inc)).split(os.sep)[0]
                if target == d or allowed is None or target not in ALLOWED:
                    continue
                if target not in allowed:
                    bad.append(f"{f}: includes {inc}: {d}/ may not include {target}/")
            if d in QUIET and f != "lib/err.c":
                for n, line in enumerate(text.splitlines(), 1):
                    if PRINT.search(line):
                        bad.append(f"{f}:{n}: writes to stdout/stderr below cmd/, tui/, output/")
            if d == "cmd" and f.endswith(".c"):
                n = text.count("\n")
                if n >= 250:
                    bad.append(f"{f}: {n} lines (a cmd file stays under 250)")
    bad += call_circles(build)
    for b in bad:
        print("layers: " + b)
    print(f"layers: {len(bad)} breach(es)" if bad else "layers: ok")
    return 1 if bad else 0


def call_circles(build):
    """File-level call graph of the library from its objects; report every circle."""
    defs, undefs = {}, {}
    for d in ALLOWED:
        od = os.path.join(build, d)
        if d == "cmd" or not os.path.isdir(od):
            continue
        for f in sorted(os.listdir(od)):
            if not f.endswith(".o"):
                continue
            path = os.path.join(od, f)
            out = subprocess.run(["nm", path], capture_output=True, text=True).stdout
            name = f"{d}/{f[:-2]}.c"
            undefs[name] = set()
            for line in out.splitlines():
                parts = line.split()
                if len(parts) == 2 and parts[0] == "U":
                    undefs[name].add(parts[1])
                elif len(parts) == 3 and parts[1] in "TDBR":
                    defs[parts[2]] = name
    if not undefs:
        return [f"no objects under {build}/ to check the call graph (build first)"]
    def row(f, g):
        return f in TABLES and os.path.dirname(f) == os.path.dirname(g)

    graph = {f: {defs[s] for s in u if s in defs and defs[s] != f and not row(f, defs[s])}
             for f, u in undefs.items()}
    # strongly connected components (Tarjan); any with more than one file is a circle
    index, low, stack, on, comps, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                comps.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return ["call circle: " + " <-> ".join(c) for c in comps]


if __name__ == "__main__":
    sys.exit(main())
