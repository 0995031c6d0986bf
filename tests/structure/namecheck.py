#!/usr/bin/env python3
"""Every symbol a component's objects export carries the component's prefix (DEVELOPERS.md).

usage: namecheck.py --prefix P [--prefix P]... [--except NAME]... [--except-map MAP]
                    SRC_DIR OBJ_DIR [SRC_DIR OBJ_DIR]...

The objects are those of each tree's C files (SRC_DIR/sub/X.c -> OBJ_DIR/sub/X.o; generated C
files sit with their objects, so their pair is the same folder twice). A symbol is exported when
nm shows it defined and global (static ones are the file's own business). It must start with one
of the prefixes, be named by --except, or be exported by the version script MAP (what a
linker version script lists under `global:`; the build's own script, so that the set of entry
points exported on purpose has one definition). Exit 0: all named so; 1: offenders, each with its
object, on stderr; 2: bad input.
"""
import os
import re
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import srctree  # noqa: E402

TOOL = "namecheck"


def map_exports(path):
    """The names a linker version script exports: its `global:` lists."""
    try:
        with open(path) as f:
            text = re.sub(r"/\*.*?\*/", "", f.read(), flags=re.S)
    except OSError as e:
        srctree.fail(TOOL, "%s: expected a linker version script: %s" % (path, e.strerror))
    names, exported = set(), False
    for tok in re.findall(r"[A-Za-z_.][A-Za-z0-9_.]*:|[^\s;{}]+|}", text):
        if tok.endswith(":"):
            exported = tok == "global:"
        elif tok == "}":
            exported = False
        elif exported:
            names.add(tok)
    if not names:
        srctree.fail(TOOL, "%s: expected exported names under global:, found none" % path)
    return names


def main(argv):
    prefixes, allowed, trees, maps = [], set(), [], []
    it = iter(argv)
    for a in it:
        if a in ("--prefix", "--except", "--except-map"):
            v = next(it, None)
            if v is None:
                break
            {"--prefix": prefixes.append, "--except": allowed.add, "--except-map": maps.append}[a](v)
        else:
            trees.append(a)
    if not prefixes or not trees or len(trees) % 2:
        print(__doc__, file=sys.stderr)
        return 2
    for m in maps:
        allowed |= map_exports(m)
    objs, bad = 0, []
    for src, obj in zip(trees[::2], trees[1::2]):
        for c, o in srctree.objects(TOOL, src, obj).items():
            objs += 1
            defined, _ = srctree.nm(TOOL, o)
            bad += [(o, s) for s in sorted(defined)
                    if not s.startswith(tuple(prefixes)) and s not in allowed]
    want = " or ".join(prefixes)
    if bad:
        for o, s in bad:
            print("%s: %s defines %s: expected a name starting with %s"
                  % (TOOL, o, s, want), file=sys.stderr)
        print("%s: %d of the symbols exported by %d objects lack the prefix %s"
              % (TOOL, len(bad), objs, want), file=sys.stderr)
        return 1
    print("%s: %d objects, every exported symbol named %s*%s"
          % (TOOL, objs, want, " or an exception" if allowed else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
