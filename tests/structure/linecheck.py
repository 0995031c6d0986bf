#!/usr/bin/env python3
"""No hand-written file outside tests/ longer than 800 lines (issue 27: a file that long holds
several jobs; split it by job).

usage: linecheck.py ROOT [LIMIT]

The files are those of the project: in a git checkout, the files git tracks plus the untracked
ones it does not ignore (a new file counts before it is committed); without git (a copy of the
sources), every file under ROOT but what .gitignore's patterns and .git name.

Hand-written means every text file the project keeps: C and assembler sources, headers, Python
and shell scripts, makefiles, the report page's HTML, JavaScript and CSS, and the Markdown
documents, since a long document is as hard to read and keep true as long code. What the build
generates lives in build/, which is ignored, so it is never counted. Not counted: tests/ (frozen
traces, expected outputs and table-driven tests are long by nature), binary files (a NUL byte,
as in the PNG screenshot) and data listings (.json, .csv, .tsv, .txt), which are records, not
code. Exit 0: none longer; 1: each longer file with its length on stderr; 2: bad input.
"""
import fnmatch
import os
import subprocess
import sys

TOOL = "linecheck"
DATA = (".json", ".csv", ".tsv", ".txt")


def git_files(root):
    """The checkout's files under root, or None when root is not one (or git is missing)."""
    try:
        out = subprocess.run(["git", "-C", root, "ls-files", "-z", "--cached", "--others",
                              "--exclude-standard"], capture_output=True)
    except OSError:
        return None
    files = [f.decode() for f in out.stdout.split(b"\0") if f]
    return sorted(set(files)) if out.returncode == 0 and files else None


def ignored(patterns, rel, is_dir):
    name = os.path.basename(rel)
    for p in patterns:
        if p.endswith("/") and not is_dir:
            continue
        p = p.rstrip("/")
        if p.startswith("/"):
            if fnmatch.fnmatch(rel, p[1:]):
                return True
        elif fnmatch.fnmatch(name, p) or fnmatch.fnmatch(rel, p):
            return True
    return False


def walked_files(root):
    """Every file under root that .gitignore's patterns (blank lines, comments and negations
    aside) leave in, for a copy of the sources without git."""
    patterns = []
    try:
        with open(os.path.join(root, ".gitignore")) as f:
            patterns = [ln.strip() for ln in f if ln.strip() and ln[0] not in "#!"]
    except OSError:
        pass
    files = []
    for dirpath, dirs, names in os.walk(root):
        rel_dir = os.path.relpath(dirpath, root)
        rel = (lambda n: n) if rel_dir == "." else (lambda n: rel_dir + "/" + n)
        dirs[:] = [d for d in dirs if d != ".git" and not ignored(patterns, rel(d), True)]
        files += [rel(n) for n in names if not ignored(patterns, rel(n), False)]
    return sorted(files)


def lines(path):
    """The file's line count, or None for a binary file."""
    with open(path, "rb") as f:
        data = f.read()
    if b"\0" in data:
        return None
    return len(data.splitlines())


def main(argv):
    if len(argv) not in (1, 2) or not os.path.isdir(argv[0]):
        print(__doc__, file=sys.stderr)
        return 2
    root, limit = argv[0], int(argv[1]) if len(argv) == 2 else 800
    files = git_files(root)
    how = "files git tracks or does not ignore"
    if files is None:
        files, how = walked_files(root), "files under it (no git checkout)"
    long_files, n = [], 0
    for f in files:
        path = os.path.join(root, f)
        if f.startswith("tests/") or f.endswith(DATA) or not os.path.isfile(path):
            continue
        count = lines(path)
        if count is None:
            continue
        n += 1
        if count > limit:
            long_files.append((f, count))
    if long_files:
        for f, count in long_files:
            print("%s: %s: %d lines, expected at most %d" % (TOOL, f, count, limit), file=sys.stderr)
        print("%s: %s: %d of %d hand-written files are over %d lines (%s)"
              % (TOOL, root, len(long_files), n, limit, how), file=sys.stderr)
        return 1
    print("%s: %s: %d hand-written files, none over %d lines (%s)" % (TOOL, root, n, limit, how))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
