"""The cost of a call stack with Python frames (run_bench.py, section 7; issue 14).

py_calls.py (cuCtxSynchronize from a 3-deep Python chain through ctypes, on the system's
python3) runs under `cutrace run` with `--stacks none`, with `--stacks default` and
CUTRACE_PYTHON_FRAMES=0 (a synchronization gets a call stack, native frames only: what a stack of
that call costs without Python frames), and with `--stacks default` (the interpreter's frames
read and spliced in), each its own process, interleaved. A stack's cost is the median of the
per-repetition differences of ns per call against `none`. The goal: the stack with Python frames
at most GOAL_RATIO times the native stack of the same call.
"""
import os
import shutil
import statistics

GOAL_RATIO = 2.0
PYTHON = "python3"


def measure(bench):
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "py_calls.py")
    n = 20000 if bench.quick else 200000
    modes = {"none": ("none", None), "native": ("default", "0"), "default": ("default", None)}
    per = {mode: [] for mode in modes}
    for rep in range(bench.reps):
        for mode, (stacks, frames) in modes.items():
            outdir = os.path.join(bench.tmp, "pystack-%s-%d" % (mode, rep))
            env = dict(bench.env, CUTRACE_PYTHON_FRAMES=frames) if frames else None
            text, _, _, _ = bench.run(bench.cutrace_cmd(outdir, ["--stacks", stacks],
                                                        [PYTHON, script, str(n)]), env)
            per[mode].append(float(bench.kv(text, "py_calls:")["ns_per_call"]))
            shutil.rmtree(outdir, ignore_errors=True)
    for mode in per:
        key = "python_sync_ns_stacks_%s" % mode
        bench.results[key] = round(statistics.median(per[mode]), 1)
        bench.spread[key] = [round(min(per[mode]), 1), round(max(per[mode]), 1)]
    for mode, key in (("default", "python_stack"), ("native", "python_native_stack")):
        added = [d - b for d, b in zip(per[mode], per["none"])]
        bench.results["%s_ns_added_per_call" % key] = round(statistics.median(added), 1)
        bench.spread["%s_ns_added_per_call" % key] = [round(min(added), 1), round(max(added), 1)]
    bench.notes["python_stack"] = (
        "%s py_calls.py %d: cuCtxSynchronize from Python through ctypes, `cutrace run --stacks "
        "none` vs `--stacks default` with CUTRACE_PYTHON_FRAMES=0 (native) and without, %d "
        "interleaved repetitions" % (PYTHON, n, bench.reps))


def verdicts(results):
    ok = (results["python_stack_ns_added_per_call"] <=
          GOAL_RATIO * results["python_native_stack_ns_added_per_call"])
    return {"python_stack": "pass" if ok else "miss"}


def row(results, spread, verdict):
    k, nk = "python_stack_ns_added_per_call", "python_native_stack_ns_added_per_call"
    return ("| a call stack with Python frames, ns added per call (cuCtxSynchronize from Python; "
            "%.0f ns without a stack) | %.0f [%.0f..%.0f] (the same call's native stack: %.0f "
            "[%.0f..%.0f]) | <= %.0f x native | %s |" % (
                results["python_sync_ns_stacks_none"], results[k], spread[k][0], spread[k][1],
                results[nk], spread[nk][0], spread[nk][1], GOAL_RATIO, verdict["python_stack"]))
