#!/usr/bin/env python3
"""No dependency cycle among the tracer's modules (preload/).

A module is a file stem: ctp_gpu.c and ctp_gpu.h are one module. Module A depends on module B when
a file of A #includes B's header (preload/*.c, preload/*.h, quoted includes of files that exist
there), or when A's object file uses a symbol that B's object file defines (nm on
build/preload/*.o: functions, and extern globals, which an include graph alone would miss).
Generated code (the wrappers, the function table) is outside: it only depends on modules.

usage: depcheck.py SRC_DIR OBJ_DIR   (exit 0: no cycle; 1: a cycle, printed on stderr; 2: bad
input). The test feeds it a small synthetic tree with a cycle too, so that it can fail.
"""
import os
import re
import subprocess
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def module(name):
    return os.path.splitext(os.path.basename(name))[0]


def include_edges(src):
    mods, edges = set(), {}
    files = [f for f in sorted(os.listdir(src)) if f.endswith((".c", ".h"))]
    if not files:
        sys.exit("depcheck: %s: expected preload sources (*.c, *.h), found none" % src)
    for f in files:
        mods.add(module(f))
    for f in files:
        with open(os.path.join(src, f)) as fh:
            for inc in INCLUDE.findall(fh.read()):
                if os.path.exists(os.path.join(src, inc)) and module(inc) != module(f):
                    edges.setdefault(module(f), {}).setdefault(module(inc), "%s includes %s" % (f, inc))
    return mods, edges


def nm_symbols(path):
    out = subprocess.run(["nm", path], capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit("depcheck: nm %s failed: %s" % (path, out.stderr.strip()))
    defined, used = set(), set()
    for line in out.stdout.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] == "U":
            used.add(parts[1])
        elif len(parts) == 3 and parts[1] in "TDBRCVWGS" and parts[1].isupper():
            defined.add(parts[2])
    return defined, used


def symbol_edges(obj, edges, mods):
    # An object whose source is gone (a stale build) is no module.
    objs = [f for f in sorted(os.listdir(obj)) if f.endswith(".o") and module(f) in mods]
    if not objs:
        sys.exit("depcheck: %s: expected the preload's object files (*.o), found none" % obj)
    owner, uses = {}, {}
    for o in objs:
        defined, used = nm_symbols(os.path.join(obj, o))
        for s in defined:
            owner[s] = module(o)
        uses[module(o)] = used
    for m, used in uses.items():
        for s in sorted(used):
            if s in owner and owner[s] != m:
                edges.setdefault(m, {}).setdefault(owner[s], "%s.o uses %s (%s.o)" % (m, s, owner[s]))


def find_cycle(mods, edges):
    """One cycle as a list of modules [a, b, ..., a], or None (iterative DFS, sorted order)."""
    state = {}
    for root in sorted(mods):
        if state.get(root):
            continue
        stack = [(root, iter(sorted(edges.get(root, {}))))]
        path = [root]
        state[root] = 1
        while stack:
            node, it = stack[-1]
            nxt = next(it, None)
            if nxt is None:
                state[node] = 2
                stack.pop()
                path.pop()
            elif state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            elif not state.get(nxt):
                state[nxt] = 1
                stack.append((nxt, iter(sorted(edges.get(nxt, {})))))
                path.append(nxt)
    return None


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    mods, edges = include_edges(sys.argv[1])
    symbol_edges(sys.argv[2], edges, mods)
    cycle = find_cycle(mods, edges)
    if cycle:
        print("depcheck: dependency cycle among preload modules: %s" % " -> ".join(cycle),
              file=sys.stderr)
        for a, b in zip(cycle, cycle[1:]):
            print("  %s -> %s: %s" % (a, b, edges[a][b]), file=sys.stderr)
        return 1
    print("depcheck: %d modules, %d dependencies, no cycle"
          % (len(mods), sum(len(v) for v in edges.values())))
    return 0


if __name__ == "__main__":
    sys.exit(main())
