"""The fix a finding names, applied to a program nobody here wrote (run_bench.py, section 12;
issue 28, item 5).

PyTorch's imagenet example (tests/examples/example.py: resnet18 on FakeData, 12 batches of 32
and 2 of validation, from ../shared, unmodified) with its loading in the main process (`-j 0`,
broken) and with 2 DataLoader workers (`-j 2`, fixed: the fix dataloader-starvation names),
each traced by `cutrace run` on the pytorch suite's virtual environment and simulated driver,
interleaved over the repetitions. The prediction: the broken run's dataloader-starvation saving
(the median over its runs); the measurement: the change of the window (the GPU's first to last
activity, the breakdown's window_ns) between the broken and fixed runs' medians. Goals: the
prediction within GOAL_ERR of the measurement, or within GOAL_SMALL of the broken window when
the saving is small; and no finding claiming more than twice what applying its fix measured.
What the finding said of its cause (the host samples': cpu-bound, add-workers) is reported
beside: on a machine without a free core it says more workers will not help.

    python3 bench_examples.py --build BUILD_DIR [--reps N]  (standalone; make bench imports it)
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import tempfile

GOAL_ERR = 0.30
GOAL_SMALL = 0.03
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLES = os.path.abspath(os.path.join(ROOT, "..", "shared", "third_party", "pytorch-examples"))
ARGS = ["imagenet", "-a", "resnet18", "--dummy", "-b", "32", "--epochs", "1", "-p", "1"]
SIZES = "384,64"
VARIANTS = (("broken", "0"), ("fixed", "2"))


def python_of(build):
    """The pytorch suite's venv python (tests/pytorch/venv.sh's status), or None and why."""
    status = os.path.join(build, "tests/pytorch/venv.status")
    try:
        with open(status) as f:
            word, _, rest = f.read().strip().partition(" ")
    except OSError:
        return None, "%s: missing (make pytorch-venv)" % status
    return (os.path.join(rest, "bin/python"), None) if word == "ok" else (None, rest)


def trace_once(build, python, workers, env, outdir):
    """One traced run; returns (window ns, the starvation finding or None, the lead's id)."""
    shutil.rmtree(outdir, ignore_errors=True)
    os.makedirs(outdir + ".w", exist_ok=True)
    cutrace = os.path.join(build, "bin/cutrace")
    e = dict(env, FAKE_SIZE=SIZES, EX_ROOT=EXAMPLES, EX_WORKDIR=outdir + ".w",
             LD_LIBRARY_PATH=os.path.join(build, "tests/nvrt/driver"),
             CUTRACE_LIB=os.path.join(build, "lib/libcutrace.so"), PYTHONDONTWRITEBYTECODE="1")
    cmd = ([cutrace, "run", "-q", "--gpu-timing", "all", "-o", outdir, "--", python,
            os.path.join(ROOT, "tests/examples/example.py")] + ARGS[:1] + ["-j", workers]
           + ARGS[1:])
    p = subprocess.run(cmd, env=e, capture_output=True, text=True, timeout=900)
    if p.returncode != 0:
        raise RuntimeError("%s exited with %d: %s" % (" ".join(cmd), p.returncode, p.stderr[-1000:]))
    s = json.loads(subprocess.run([cutrace, "summary", "--json", outdir], env=e,
                                  capture_output=True, text=True, timeout=600, check=True).stdout)
    window = max(b["window_ns"] for b in s["breakdown"] if b.get("complete"))
    found = [d for d in s["diagnoses"] if d["id"] == "dataloader-starvation"]
    lead = s["diagnoses"][0]["id"] if s["diagnoses"] else None
    return window, (found[0] if found else None), lead


def run(build, python, env, tmp, reps):
    """The figures of section 12 (a flat dict, times in ms)."""
    windows = {k: [] for k, _ in VARIANTS}
    predicted, causes, leads = [], [], []
    for rep in range(reps):
        for kind, workers in VARIANTS:
            w, x, lead = trace_once(build, python, workers, env, os.path.join(tmp, "ex-" + kind))
            windows[kind].append(w / 1e6)
            if kind == "broken":
                predicted.append(x["estimated_saving_ns"] / 1e6 if x else 0.0)
                causes.append(",".join((x.get("cause") or {}).get("causes", [])) if x else "none")
                leads.append(lead or "none")
    broken, fixed = statistics.median(windows["broken"]), statistics.median(windows["fixed"])
    measured, pred = broken - fixed, statistics.median(predicted)
    return {"examples_imagenet_j0_window_ms": round(broken, 1),
            "examples_imagenet_j2_window_ms": round(fixed, 1),
            "examples_imagenet_measured_saving_ms": round(measured, 1),
            "examples_imagenet_predicted_saving_ms": round(pred, 1),
            "examples_imagenet_ratio": round(pred / measured, 2) if measured > 0 else None,
            "examples_windows": windows, "examples_causes": causes, "examples_leads": leads}


def verdicts(r):
    pred, meas = r["examples_imagenet_predicted_saving_ms"], r["examples_imagenet_measured_saving_ms"]
    close = (abs(pred - meas) <= GOAL_ERR * meas if meas > 0 else False) or \
        abs(pred - meas) <= GOAL_SMALL * r["examples_imagenet_j0_window_ms"]
    return {"examples_fix_priced": "pass" if close else "miss",
            "examples_no_double_claim": "pass" if pred <= 2 * max(meas, 0) else "miss"}


def row(r, v, reps, causes, leads):
    return ("| imagenet `-j 0` against `-j 2` (the fix dataloader-starvation names), %d "
            "interleaved traced runs each: window ms (median), predicted saving ms, measured ms, "
            "ratio; causes told; lead | %.0f -> %.0f; %.0f vs %.0f (%s); %s; %s | within %.0f%% "
            "(or %.0f%% of the window); at most 2x | %s; %s |" % (
                reps, r["examples_imagenet_j0_window_ms"], r["examples_imagenet_j2_window_ms"],
                r["examples_imagenet_predicted_saving_ms"],
                r["examples_imagenet_measured_saving_ms"],
                "-" if r["examples_imagenet_ratio"] is None else "%.2f" % r["examples_imagenet_ratio"],
                "/".join(causes), "/".join(leads), 100 * GOAL_ERR,
                100 * GOAL_SMALL, v["examples_fix_priced"], v["examples_no_double_claim"]))


def bench(b):
    """For run_bench.py: the figures into b.results, the verdicts, the table's row (or None and a
    note when the virtual environment or the examples are missing)."""
    reps = 1 if b.quick else 3
    python, why = python_of(b.b)
    if not python or not os.path.isdir(EXAMPLES):
        b.notes["examples"] = why or "%s: missing" % EXAMPLES
        return {}, None
    r = run(b.b, python, b.env, b.tmp, reps)
    windows, causes, leads = (r.pop(k) for k in ("examples_windows", "examples_causes",
                                                 "examples_leads"))
    for kind, key in (("broken", "examples_imagenet_j0_window_ms"),
                      ("fixed", "examples_imagenet_j2_window_ms")):
        b.spread[key] = [round(min(windows[kind]), 1), round(max(windows[kind]), 1)]
    b.notes["examples"] = "windows ms: broken %s, fixed %s; causes told %s; leads %s" % (
        windows["broken"], windows["fixed"], causes, leads)
    v = verdicts(r)
    b.results.update(r)
    return v, row(r, v, reps, causes, leads)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", required=True)
    ap.add_argument("--reps", type=int, default=3)
    a = ap.parse_args()
    build = os.path.abspath(a.build)
    python, why = python_of(build)
    if not python:
        raise SystemExit("bench_examples.py: " + why)
    tmp = tempfile.mkdtemp(prefix="cutrace-examples-")
    try:
        r = run(build, python, dict(os.environ), tmp, a.reps)
        causes, leads = r.pop("examples_causes"), r.pop("examples_leads")
        print(json.dumps(r, indent=1))
        print(row(r, verdicts(r), a.reps, causes, leads))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
