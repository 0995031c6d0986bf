"""What the structure checks share: a component's source tree (subfolders included), the object
each of its C files is built into, and what nm says an object defines and uses.

The build mirrors the sources: SRC/sub/X.c is compiled into OBJ/sub/X.o (Makefile, the
$(B)/%.o rule), so an object belongs to the tree when its source sits at the same place. An
object with no source there (one left by an older layout, or generated code) is not the
tree's; a C or assembler file with no object is an error, since what it calls would go unseen.
"""
import os
import subprocess
import sys

# nm's letters for a symbol an object defines and exports (lower case would be static), and for
# one it needs from elsewhere (w, v: weak references).
DEFINED = set("ABCDGRSTVW") | {"u", "i"}
USED = {"U", "w", "v"}


def fail(tool, message):
    """Bad input (not a finding): the message on stderr, exit status 2."""
    print("%s: %s" % (tool, message), file=sys.stderr)
    sys.exit(2)


def walk(root, exts):
    """Files under root whose names end with one of exts, as paths relative to root, sorted;
    hidden folders are skipped."""
    found = []
    for dirpath, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        for f in files:
            if f.endswith(exts):
                found.append(os.path.relpath(os.path.join(dirpath, f), root))
    return sorted(found)


def objects(tool, src, obj):
    """{C or assembler file relative to src: its object under obj}, one per such file."""
    found = {}
    for c in walk(src, (".c", ".S")):
        o = os.path.join(obj, os.path.splitext(c)[0] + ".o")
        if not os.path.isfile(o):
            fail(tool, "%s: expected its object %s (build it first), found none"
                 % (os.path.join(src, c), o))
        found[c] = o
    return found


def nm(tool, path):
    """(symbols the object defines and exports, symbols it uses from elsewhere)."""
    out = subprocess.run(["nm", "-P", path], capture_output=True, text=True)
    if out.returncode != 0:
        fail(tool, "nm %s: expected a symbol table, got: %s" % (path, out.stderr.strip()))
    defined, used = set(), set()
    for line in out.stdout.splitlines():
        parts = line.split()
        if len(parts) < 2:
            continue
        if parts[1] in DEFINED:
            defined.add(parts[0])
        elif parts[1] in USED:
            used.add(parts[0])
    return defined, used
