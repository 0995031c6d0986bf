"""Diagnosis pairs (tests/workloads/diag_pairs.txt): each pair's problem and fixed variants of
train_loop traced in the same run, interleaved; the problem's estimated_saving_ns for its
diagnosis against the measured difference of the two variants' loop times (the program's own
loop_ms, minimum over the repetitions: the simulation's noise on a loaded machine only adds
time), the estimate the smallest of the problem variant's runs (the noise adds to the idle time
and staging the estimates count too; the fastest run of a loaded batch can still carry it). Goal:
the estimate within GOAL_PAIR_ERR of the measured difference, and no such diagnosis on the
fixed variant's fastest run (the table also counts the fixed runs diagnosed: under load a host
woken late from a synchronization leaves the simulated GPU idle after it).

    python3 bench_pairs.py --build BUILD_DIR [--reps N] [--only ID]  (standalone; make bench
                                                                       imports it)
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import tempfile

GOAL_PAIR_ERR = 0.25


def read_pairs(path):
    """[(id, env dict, problem args, fixed args)] from diag_pairs.txt."""
    pairs = []
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            parts = line.split("|")
            if len(parts) != 6:
                raise RuntimeError("%s:%d: expected 6 fields separated by |, found %d"
                                   % (path, n, len(parts)))
            # (the shaped variants' arguments, parts[5], are make test's: test-pairs.c)
            pid, env, common, bad, good = (p.strip() for p in parts[:5])
            env = dict(kv.split("=", 1) for kv in env.split()) if env != "-" else {}
            opt = lambda s: [] if s == "-" else s.split()
            pairs.append((pid, env, common.split() + opt(bad), common.split() + opt(good)))
    return pairs


def trace_once(cutrace, workload, args, env, outdir):
    """Traces one variant; returns (loop_ms, summary JSON)."""
    shutil.rmtree(outdir, ignore_errors=True)
    p = subprocess.run([cutrace, "run", "-q", "--gpu-timing", "all", "-o", outdir, "--", workload]
                       + args, env=env, capture_output=True, text=True, timeout=600)
    if p.returncode != 0:
        raise RuntimeError("train_loop %s exited with %d: %s" % (" ".join(args), p.returncode,
                                                                 p.stderr[-1000:]))
    m = re.search(r"loop_ms=([0-9.]+)", p.stdout)
    if not m:
        raise RuntimeError("train_loop %s: no loop_ms in its output" % " ".join(args))
    s = subprocess.run([cutrace, "summary", "--json", outdir], env=env, capture_output=True,
                       text=True, timeout=600, check=True)
    return float(m.group(1)), json.loads(s.stdout)


def saving_ms(summary, diag_id):
    """The diagnosis's estimated saving in ms, or None when it did not fire."""
    for d in summary.get("diagnoses", []):
        if d["id"] == diag_id:
            return d["estimated_saving_ns"] / 1e6
    return None


def run_pairs(build, env, tmp, reps, only=None):
    """Returns rows: id, problem_ms, fixed_ms, measured_ms, estimate_ms, ratio, fixed_fires,
    verdict."""
    cutrace = os.path.join(build, "bin/cutrace")
    workload = os.path.join(build, "tests/workloads/train_loop")
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    rows = []
    for pid, extra, bad, good in read_pairs(os.path.join(root, "tests/workloads/diag_pairs.txt")):
        if only and pid != only:
            continue
        e = dict(env, **extra)
        loops = {"bad": [], "good": []}
        estimates, fixed_fires, fastest_fixed_fires = [], 0, False
        for r in range(reps):
            for kind, args in (("bad", bad), ("good", good)):
                ms, s = trace_once(cutrace, workload, args, e, os.path.join(tmp, "pair"))
                fastest = not loops[kind] or ms < min(loops[kind])
                loops[kind].append(ms)
                got = saving_ms(s, pid)
                if kind == "bad":
                    estimates.append(got or 0.0)
                else:
                    fixed_fires += got is not None
                    if fastest:
                        fastest_fixed_fires = got is not None
        measured = min(loops["bad"]) - min(loops["good"])
        estimate = min(estimates)
        ratio = estimate / measured if measured > 0 else None
        ok = (ratio is not None and abs(ratio - 1) <= GOAL_PAIR_ERR and not fastest_fixed_fires)
        rows.append({"id": pid, "problem_ms": min(loops["bad"]), "fixed_ms": min(loops["good"]),
                     "measured_ms": round(measured, 2), "estimate_ms": round(estimate, 2),
                     "ratio": None if ratio is None else round(ratio, 2),
                     "fixed_fires": fixed_fires, "fastest_fixed_fires": fastest_fixed_fires,
                     "verdict": "pass" if ok else "miss"})
    return rows


def table(rows, reps):
    lines = ["Diagnoses against their fixes: train_loop pairs (tests/workloads/diag_pairs.txt), "
             "traced with GPU timing, %d interleaved runs each; loop time = minimum loop_ms; "
             "estimate = smallest estimated_saving_ns of the problem variant's runs" % reps, "",
             "| diagnosis | problem loop ms | fixed loop ms | measured saving ms | estimate ms | "
             "estimate / measured (goal 1 +- %.2f) | fixed variant diagnosed: fastest run "
             "(goal no), all runs | verdict |" % GOAL_PAIR_ERR, "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append("| %s | %.1f | %.1f | %.1f | %.1f | %s | %s, %d of %d | %s |" % (
            r["id"], r["problem_ms"], r["fixed_ms"], r["measured_ms"], r["estimate_ms"],
            "-" if r["ratio"] is None else "%.2f" % r["ratio"],
            "yes" if r["fastest_fixed_fires"] else "no", r["fixed_fires"], reps, r["verdict"]))
    return "\n".join(lines + [""])


def bench(b):
    """For run_bench.py: the pairs into b.results (flat keys) and the table text."""
    reps = 1 if b.quick else 5
    env = dict(b.env, FAKECUDA_HOST_KERNELS=os.path.join(b.b, "tests/workloads/libworkload_kernels.so"))
    rows = run_pairs(b.b, env, b.tmp, reps)
    for r in rows:
        k = "pair_" + r["id"].replace("-", "_")
        b.results[k + "_measured_ms"] = r["measured_ms"]
        b.results[k + "_estimate_ms"] = r["estimate_ms"]
        b.results[k + "_ratio"] = r["ratio"]
        b.results[k + "_fixed_diagnosed"] = r["fixed_fires"]
    b.pairs_text = table(rows, reps)
    return {"pair_" + r["id"].replace("-", "_"): r["verdict"] for r in rows}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", required=True)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--only", help="the pair of this diagnosis id alone")
    a = ap.parse_args()
    build = os.path.abspath(a.build)
    env = dict(os.environ, LD_LIBRARY_PATH=os.path.join(build, "tests/fakecuda"),
               FAKECUDA_HOST_KERNELS=os.path.join(build, "tests/workloads/libworkload_kernels.so"))
    tmp = tempfile.mkdtemp(prefix="cutrace-pairs-")
    try:
        print(table(run_pairs(build, env, tmp, a.reps, a.only), a.reps))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
