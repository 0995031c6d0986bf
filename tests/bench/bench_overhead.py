"""Wall-time overhead of cutrace's default settings on a training loop (run_bench.py, section 5).

`train_loop` with its default arguments (20 iterations of a 50 ms data loader, a 4 MiB pageable
batch copy and 33 kernels of about 5 us each on the simulated H100, in real time) runs untraced,
under `cutrace run` with no options (the defaults: GPU timing of every kernel, copy and set,
call stacks of allocations, copies and synchronizations) and under `cutrace run --gpu-timing
off`, each its own process, interleaved (A B C A B C ...). The figure is the median over the
repetitions of each repetition's traced/untraced wall-time ratio, with its min-max: pairing the
runs of one repetition cancels the machine's slow drifts. The goal: at most GOAL_PCT added.
"""
import os
import shutil
import statistics

GOAL_PCT = 2.0
MIN_REPS = 7
CONFIGS = [("untraced", None), ("default", []), ("gpu_timing_off", ["--gpu-timing", "off"])]


def measure(bench):
    """Runs the configurations; adds results, spreads and a note to bench."""
    wl = os.path.join(bench.b, "tests/workloads/train_loop")
    args = [wl] + (["--iters", "3", "--loader-ms", "5"] if bench.quick else [])
    reps = bench.reps if bench.quick else max(bench.reps, MIN_REPS)
    walls = {name: [] for name, _ in CONFIGS}
    for rep in range(reps):
        for name, opts in CONFIGS:
            outdir = os.path.join(bench.tmp, "overhead-%s-%d" % (name, rep))
            cmd = args if opts is None else bench.cutrace_cmd(outdir, opts, args)
            _, wall, _, _ = bench.run(cmd)
            walls[name].append(wall)
            shutil.rmtree(outdir, ignore_errors=True)
    for name, _ in CONFIGS:
        key = "train_loop_wall_s_%s" % name
        bench.results[key] = round(statistics.median(walls[name]), 4)
        bench.spread[key] = [round(min(walls[name]), 4), round(max(walls[name]), 4)]
        if name == "untraced":
            continue
        pct = [100.0 * (t / u - 1.0) for t, u in zip(walls[name], walls["untraced"])]
        key = "train_loop_overhead_pct_%s" % name
        bench.results[key] = round(statistics.median(pct), 2)
        bench.spread[key] = [round(min(pct), 2), round(max(pct), 2)]
    bench.notes["overhead"] = (
        "train_loop %s, untraced vs `cutrace run` (defaults) vs `cutrace run --gpu-timing off`, "
        "%d interleaved repetitions; overhead = median of the per-repetition wall-time ratios "
        "(min-max in spread_min_max)" % (" ".join(args[1:]) or "(default arguments)", reps))


def verdicts(results):
    pct = results["train_loop_overhead_pct_default"]
    return {"train_loop_overhead": "pass" if pct <= GOAL_PCT else "miss"}


def row(results, spread, verdict):
    """The line of the figures table."""
    d, o = "train_loop_overhead_pct_default", "train_loop_overhead_pct_gpu_timing_off"
    return ("| added wall time, train_loop defaults (%.2f s untraced), %% | %+.2f [%+.2f..%+.2f] "
            "(GPU timing off: %+.2f [%+.2f..%+.2f]) | <= %.0f | %s |" % (
                results["train_loop_wall_s_untraced"], results[d], spread[d][0], spread[d][1],
                results[o], spread[o][0], spread[o][1], GOAL_PCT, verdict["train_loop_overhead"]))
