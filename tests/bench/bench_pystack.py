"""The cost of a call stack with Python frames (run_bench.py, section 7; issue 14).

py_calls.py (cuCtxSynchronize from a 3-deep Python chain through ctypes, on the system's
python3) runs under `cutrace run --stacks none` and `--stacks default` (a synchronization gets a
call stack: the native frames unwound, the interpreter's frames read and spliced in), each its
own process, interleaved; the Python stack's cost is the median of the per-repetition differences
of ns per call. The goal: at most GOAL_RATIO times what a native call stack adds to a call
(section 1: cuLaunchKernel from C, `--stacks all` against `--stacks none`).
"""
import os
import shutil
import statistics

GOAL_RATIO = 2.0
PYTHON = "python3"


def measure(bench):
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "py_calls.py")
    n = 20000 if bench.quick else 200000
    per = {"none": [], "default": []}
    for rep in range(bench.reps):
        for mode in per:
            outdir = os.path.join(bench.tmp, "pystack-%s-%d" % (mode, rep))
            text, _, _, _ = bench.run(bench.cutrace_cmd(outdir, ["--stacks", mode],
                                                        [PYTHON, script, str(n)]))
            per[mode].append(float(bench.kv(text, "py_calls:")["ns_per_call"]))
            shutil.rmtree(outdir, ignore_errors=True)
    for mode in per:
        key = "python_sync_ns_stacks_%s" % mode
        bench.results[key] = round(statistics.median(per[mode]), 1)
        bench.spread[key] = [round(min(per[mode]), 1), round(max(per[mode]), 1)]
    added = [d - b for d, b in zip(per["default"], per["none"])]
    bench.results["python_stack_ns_added_per_call"] = round(statistics.median(added), 1)
    bench.spread["python_stack_ns_added_per_call"] = [round(min(added), 1), round(max(added), 1)]
    bench.notes["python_stack"] = (
        "%s py_calls.py %d: cuCtxSynchronize from Python through ctypes, `cutrace run --stacks "
        "none` vs `--stacks default`, %d interleaved repetitions" % (PYTHON, n, bench.reps))


def verdicts(results):
    native = (results["launch_ns_added_per_call_traced_stacks"] -
              results["launch_ns_added_per_call_traced"])
    results["native_stack_ns_added_per_call"] = round(native, 1)
    ok = results["python_stack_ns_added_per_call"] <= GOAL_RATIO * native
    return {"python_stack": "pass" if ok else "miss"}


def row(results, spread, verdict):
    k = "python_stack_ns_added_per_call"
    return ("| a call stack with Python frames, ns added per call (cuCtxSynchronize from Python; "
            "%.0f ns without a stack) | %.0f [%.0f..%.0f] (native stack from C: %.0f) | <= %.0f x "
            "native | %s |" % (results["python_sync_ns_stacks_none"], results[k], spread[k][0],
                               spread[k][1], results["native_stack_ns_added_per_call"], GOAL_RATIO,
                               verdict["python_stack"]))
