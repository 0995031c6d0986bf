#!/usr/bin/env python3
"""No dependency cycle in a component's source tree, between files or between folders.

usage: depcheck.py [--all] SRC_DIR [OBJ_DIR]

Modules. A module is a file stem: model/cta_join.c and model/cta_join.h are the module
model/cta_join. Files of several modules may share an internal header named after one of them,
X_int.h or X_internal.h beside X: it is a module of its own (a header, no object) whose edges
with X do not count, so the files that share it depend on it, never on each other through it;
when they call each other both ways, nm still finds the cycle.

Dependencies. Module A depends on module B when
  - a file of A #includes "..." a file of B. An include is resolved the way the compiler finds
    it: beside the including file, then in the -I folders, that is any file of the tree whose
    path ends with the included one; two such files are an error (exit 2), none means a file
    from outside the tree (another component, generated code), which is no module;
  - A's object uses a symbol that B's object defines (nm on OBJ_DIR/sub/X.o for each
    SRC_DIR/sub/X.c: functions, and extern globals, which includes alone would miss).
    Without OBJ_DIR only includes count.

Folders. Each folder holding sources is one unit, a subfolder a unit of its own (analyzer/ and
analyzer/model/ are two units, whatever their nesting). Folder F depends on folder G when a
module of F depends on one of G; a folder's own modules do not count.

Report. For each group of modules (then of folders) that reach each other, cycles that together
pass through every dependency inside the group, each with the file that makes each of its
edges (--all: every file and symbol that does, not the first). Exit 0: no cycle; 1: cycles,
printed on stderr; 2: bad input.
"""
import os
import re
import sys
from collections import deque

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import srctree  # noqa: E402

TOOL = "depcheck"
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
# Sources (C, assembler) and what they may include: headers and the lists X-macro headers expand.
SOURCES = (".c", ".S", ".h", ".def", ".inc")
INTERNAL = re.compile(r"^(.*)_int(ernal)?$")


def module(path):
    return os.path.splitext(path)[0]


def same_module(a, b):
    """a and b are one module's files for the graph: X and its internal header X_int/X_internal."""
    for x, y in ((a, b), (b, a)):
        m = INTERNAL.match(x)
        if m and m.group(1) == y:
            return True
    return False


class Graph:
    def __init__(self):
        self.nodes = set()
        self.edges = {}  # node -> {node: [reasons]}

    def add(self, a, b, why):
        if a != b and not same_module(a, b):
            self.edges.setdefault(a, {}).setdefault(b, []).append(why)


def resolve(files, by_name, includer, inc):
    """The tree's file that `#include "inc"` in includer names, or None (outside the tree)."""
    beside = os.path.normpath(os.path.join(os.path.dirname(includer), inc))
    if beside in files:
        return beside
    tail = os.path.normpath(inc)
    found = [f for f in by_name.get(os.path.basename(tail), []) if f == tail or f.endswith("/" + tail)]
    if len(found) > 1:
        srctree.fail(TOOL, '%s includes "%s": expected one file of the tree by that name, found %s'
                     % (includer, inc, ", ".join(found)))
    return found[0] if found else None


def include_edges(src, graph):
    files = srctree.walk(src, SOURCES)
    if not any(f.endswith(".c") for f in files):
        srctree.fail(TOOL, "%s: expected C sources (*.c, *.h) in it or its subfolders, found none" % src)
    by_name = {}
    for f in files:
        graph.nodes.add(module(f))
        by_name.setdefault(os.path.basename(f), []).append(f)
    fileset = set(files)
    for f in files:
        with open(os.path.join(src, f), errors="replace") as fh:
            for inc in INCLUDE.findall(fh.read()):
                target = resolve(fileset, by_name, f, inc)
                if target:
                    graph.add(module(f), module(target), "%s includes %s" % (f, inc))


def symbol_edges(src, obj, graph):
    owner, uses = {}, {}
    for c, o in srctree.objects(TOOL, src, obj).items():
        defined, used = srctree.nm(TOOL, o)
        for s in defined:
            owner[s] = module(c)
        uses[module(c)] = used
    for m in sorted(uses):
        for s in sorted(uses[m]):
            if s in owner:
                graph.add(m, owner[s], "%s.o uses %s (%s.o)" % (m, s, owner[s]))


def folder_graph(graph, top):
    def folder(m):
        d = os.path.dirname(m)
        return top + "/" + d + "/" if d else top + "/"

    folders = Graph()
    folders.nodes = {folder(m) for m in graph.nodes}
    for a in sorted(graph.edges):
        for b in sorted(graph.edges[a]):
            if folder(a) != folder(b):
                folders.add(folder(a), folder(b), "%s -> %s: %s" % (a, b, graph.edges[a][b][0]))
    return folders


def groups(graph):
    """The strongly connected components of more than one node, each sorted (Tarjan, iterative)."""
    index, low, on, stack, found = {}, {}, set(), [], []
    for root in sorted(graph.nodes):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.edges.get(root, {}))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on.add(root)
        while work:
            node, it = work[-1]
            nxt = next(it, None)
            if nxt is not None:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on.add(nxt)
                    work.append((nxt, iter(sorted(graph.edges.get(nxt, {})))))
                elif nxt in on:
                    low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    n = stack.pop()
                    on.discard(n)
                    comp.append(n)
                    if n == node:
                        break
                if len(comp) > 1:
                    found.append(sorted(comp))
    return sorted(found)


def path_back(graph, group, start, goal):
    """Shortest path start -> ... -> goal inside group (breadth first, sorted order)."""
    prev, queue = {start: None}, deque([start])
    while queue:
        n = queue.popleft()
        if n == goal:
            break
        for m in sorted(graph.edges.get(n, {})):
            if m in group and m not in prev:
                prev[m] = n
                queue.append(m)
    path, n = [], goal
    while n is not None:
        path.append(n)
        n = prev[n]
    return path[::-1]


def cycles(graph, group):
    """Cycles through every edge inside group: each uncovered edge a -> b closed by the shortest
    way back from b to a."""
    members, covered, found = set(group), set(), []
    for a in group:
        for b in sorted(graph.edges.get(a, {})):
            if b in members and (a, b) not in covered:
                cycle = [a] + path_back(graph, members, b, a)
                covered.update(zip(cycle, cycle[1:]))
                found.append(cycle)
    return found


def report(graph, what, every):
    """Prints graph's cycles on stderr; returns how many."""
    n = 0
    for group in groups(graph):
        print("%s in a cycle (%d): %s" % (what, len(group), " ".join(group)), file=sys.stderr)
        for cycle in cycles(graph, group):
            n += 1
            print("cycle between %s: %s" % (what, " -> ".join(cycle)), file=sys.stderr)
            for a, b in zip(cycle, cycle[1:]):
                why = graph.edges[a][b]
                more = "; ".join(why) if every else why[0] + (
                    " (+%d more)" % (len(why) - 1) if len(why) > 1 else "")
                print("  %s -> %s: %s" % (a, b, more), file=sys.stderr)
    return n


def main(argv):
    every = "--all" in argv
    args = [a for a in argv if a != "--all"]
    if len(args) not in (1, 2) or any(a.startswith("-") for a in args):
        print(__doc__, file=sys.stderr)
        return 2
    src = args[0].rstrip("/")
    graph = Graph()
    include_edges(src, graph)
    if len(args) == 2:
        symbol_edges(src, args[1], graph)
    top = os.path.basename(os.path.abspath(src))
    folders = folder_graph(graph, top)
    n = report(graph, "modules", every)
    n_folders = report(folders, "folders", every)
    summary = "%d modules in %d folders, %d dependencies%s" % (
        len(graph.nodes), len(folders.nodes), sum(len(v) for v in graph.edges.values()),
        "" if len(args) == 2 else " (includes only)")
    if n or n_folders:
        print("%s: %s: %s; %d cycles between modules, %d between folders"
              % (TOOL, src, summary, n, n_folders), file=sys.stderr)
        return 1
    print("%s: %s: %s, no cycle" % (TOOL, src, summary))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
