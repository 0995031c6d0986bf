"""The analyzer against the analyzer of a base commit (run_bench.py, section 10; issue 27).

The `cutrace` of commit BASE (run_bench.py --base, `make bench BENCH_BASE=...`; 58899c6, the
commit before issue 27, by default) is extracted with `git archive` into BUILD/bench/base-REV/
and built there by the same `make` with this run's environment (CC, CFLAGS and the command
line's variables reach it as they reached the new build), then copied beside the new one. Both
read the same traces: section 3's 10-million-event trace (`summary -j 1`, `timeline -o -`) and
section 9's 64 ranks (`summary -j 2 --json`), interleaved (each repetition runs the pair in the
other order than the last, so neither always runs on a warm cache), MIN_REPS repetitions at
least. The figure of each command is new/base of the median CPU times (user + sys: what the
analyzer does, less what else the machine runs); goal: at most GOAL_RATIO. Whether their outputs
are the same bytes is said (`vs_base_same_output`) and not judged: they were when issue 27 rebuilt
the analyzer, and later features added to them (tests/corpus holds the outputs).

Without git, or in a clone without the commit (a shallow one), or when the base does not build,
the figures are null and notes say why. With --quick the new analyzer is timed against itself:
the harness is checked, nothing is compared.
"""
import hashlib
import os
import shutil
import statistics
import subprocess

GOAL_RATIO = 1.05
MIN_REPS = 5
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
COMMANDS = ["summary", "timeline", "ranks"]


def git(*args):
    """git's stdout in the project's checkout, or None when git or the checkout is missing."""
    try:
        p = subprocess.run(["git", "-C", ROOT] + list(args), capture_output=True, text=True)
    except OSError:
        return None
    return p.stdout.strip() if p.returncode == 0 else None


def make_env():
    """This run's environment for the base's make, without the parent make's job server (its
    descriptors are not passed on; -j is given instead)."""
    env = dict(os.environ)
    flags = env.get("MAKEFLAGS", "").split(" -- ", 1)
    keep = [f for f in flags[0].split() if not f.startswith(("--jobserver", "-j")) and f != "j"]
    env["MAKEFLAGS"] = " ".join(keep + (["--", flags[1]] if len(flags) > 1 else []))
    return env


def build_base(bench, rev):
    """(path of the base's cutrace, None), or (None, why not)."""
    try:
        return extract_and_build(bench, rev)
    except OSError as e:
        return None, "the base %s could not be built: %s" % (rev, e)


def extract_and_build(bench, rev):
    if git("rev-parse", "--git-dir") is None:
        return None, "no git history (%s is not a git checkout, or git is missing)" % ROOT
    commit = git("rev-parse", "--verify", "--quiet", rev + "^{commit}")
    if not commit:
        return None, "commit %s is not in this clone (a shallow clone?)" % rev
    dest = os.path.join(bench.build, "bench", "base-" + commit[:12])
    if not os.path.exists(os.path.join(dest, ".extracted")):
        shutil.rmtree(dest, ignore_errors=True)
        os.makedirs(dest)
        archive = subprocess.Popen(["git", "-C", ROOT, "archive", commit], stdout=subprocess.PIPE)
        tar = subprocess.run(["tar", "-x", "-C", dest], stdin=archive.stdout, capture_output=True)
        if archive.wait() != 0 or tar.returncode != 0:
            return None, "git archive %s | tar -x -C %s failed: %s" % (commit, dest, tar.stderr[-300:])
        open(os.path.join(dest, ".extracted"), "w").close()
    log = os.path.join(dest, "build.log")
    with open(log, "w") as f:
        rc = subprocess.run(["make", "-C", dest, "-j%d" % (os.cpu_count() or 1), "build/bin/cutrace"],
                            env=make_env(), stdout=f, stderr=subprocess.STDOUT).returncode
    if rc != 0:
        with open(log) as f:
            return None, "the base %s did not build (%s): %s" % (commit[:12], log, f.read()[-300:])
    copy = os.path.join(bench.tmp, "base-cutrace")
    shutil.copy2(os.path.join(dest, "build/bin/cutrace"), copy)
    return copy, None


def measure(bench, rev):
    """Times both analyzers on the kept traces; adds results, spreads and a note to bench and
    removes the traces."""
    large, ranks = bench.kept.get("analyzer"), bench.kept.get("ranks")
    if large is None:
        large = bench.analyzer_trace("large")[0]
    if ranks is None:
        ranks = bench.ranks_traces()[0]
    if bench.quick:
        base, why = bench.cutrace, None
    else:
        base, why = build_base(bench, rev)
    if base is None:
        for name in COMMANDS:
            bench.results["vs_base_%s_ratio" % name] = None
        bench.results["vs_base_same_output"] = None
        bench.notes["vs_base"] = "not measured: " + why
    else:
        compare(bench, base, large, ranks, rev)
    shutil.rmtree(os.path.dirname(large), ignore_errors=True)
    shutil.rmtree(ranks, ignore_errors=True)


def compare(bench, base, large, ranks, rev):
    args = {"summary": ["summary", "-j", "1", large], "timeline": ["timeline", "-o", "-", large],
            "ranks": ["summary", "-j", "2", "--json", ranks]}
    reps = bench.reps if bench.quick else max(bench.reps, MIN_REPS)
    cpu = {(n, who): [] for n in COMMANDS for who in ("base", "new")}
    wall = {k: [] for k in cpu}
    digest, differ = {}, []
    for rep in range(reps):
        for name in COMMANDS:
            for who in (("base", "new") if rep % 2 == 0 else ("new", "base")):
                text, w, c, _ = bench.run([base if who == "base" else bench.cutrace] + args[name])
                cpu[name, who].append(c)
                wall[name, who].append(w)
                digest[name, who] = hashlib.sha256(text.encode()).hexdigest()
            if digest[name, "base"] != digest[name, "new"] and name not in differ:
                differ.append(name)
    r = bench.results
    for name in COMMANDS:
        med = {}
        for who in ("base", "new"):
            med[who] = statistics.median(cpu[name, who])
            r["vs_base_%s_cpu_s_%s" % (name, who)] = round(med[who], 3)
            r["vs_base_%s_wall_s_%s" % (name, who)] = round(statistics.median(wall[name, who]), 3)
        key = "vs_base_%s_ratio" % name
        r[key] = round(med["new"] / max(med["base"], 1e-6), 3)
        each = [n / max(b, 1e-6) for n, b in zip(cpu[name, "new"], cpu[name, "base"])]
        bench.spread[key] = [round(min(each), 3), round(max(each), 3)]
    r["vs_base_same_output"] = 0 if differ else 1
    bench.notes["vs_base"] = (
        "%s; new/base of the median CPU times over %d interleaved repetitions (per-repetition "
        "ratios' min-max in spread_min_max): summary = `summary -j 1` of section 3's trace, "
        "timeline = `timeline -o -` of it, ranks = `summary -j 2 --json` of section 9's 64 "
        "ranks%s" % ("--quick: the new analyzer timed against itself, which checks the harness "
                     "and compares nothing" if bench.quick else
                     "base %s built by make with this run's environment" % rev,
                     reps, "; outputs differ: " + ", ".join(differ) if differ else ""))


def verdicts(results):
    ratios = [results["vs_base_%s_ratio" % n] for n in COMMANDS]
    if None in ratios:
        return {"vs_base": "n/a"}
    return {"vs_base": "pass" if max(ratios) <= GOAL_RATIO else "miss"}


def row(results, spread, verdict, rev):
    """The line of the figures table."""
    if results["vs_base_summary_ratio"] is None:
        return "| analyzer vs %s's, CPU time new/base | not measured | <= %.2f | n/a |" % (
            rev, GOAL_RATIO)
    cells = []
    for name in COMMANDS:
        k = "vs_base_%s_ratio" % name
        cells.append("%s %.2f s vs %.2f s: %.3f [%.3f-%.3f]" % (
            name, results["vs_base_%s_cpu_s_new" % name], results["vs_base_%s_cpu_s_base" % name],
            results[k], spread[k][0], spread[k][1]))
    return "| analyzer vs %s's, CPU time new vs base: new/base | %s; %s | <= %.2f | %s |" % (
        rev, "; ".join(cells), "same output" if results["vs_base_same_output"] else
        "outputs differ (features added since)", GOAL_RATIO, verdict["vs_base"])
