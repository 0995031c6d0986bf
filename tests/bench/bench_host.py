"""What host sampling costs (run_bench.py, section 9; issue 19).

`loader_tree` (tests/workloads): a main process using CUDA and 8 forked loader workers (1 + 8
processes, each sampled with its threads, plus the machine) holds for HOLD_MS while the main
process copies every 5 ms, under `cutrace run`, sampling every 100 ms (the default) and every
10 ms, interleaved. The sampler runs on the writer thread, whose own CPU time (on a CPU, from
the scheduler's statistics: exact, not to the clock tick) the trace records in its last sample;
the difference between the two rates' writer time over the difference of their samples
(HOST_SAMPLE records) is what one sample costs, everything else the writer does being the same.
The figure: that cost times the default rate, as a share of one core (median over the
repetitions). Goal: under 1% of one core.
"""
import os
import re
import shutil
import statistics

GOAL_PCT = 1.0
WORKERS = 8
PERIOD_MS = 100
FAST_MS = 10


def writer_cost(bench, outdir):
    """(HOST_SAMPLE records, the writer thread's run time in ns at its last sample)."""
    text, _, _, _ = bench.run([bench.cutrace, "dump", outdir])
    samples, writer, run = 0, None, {}
    for line in text.splitlines():
        if " host-sample " in line:
            samples += 1
            writer = re.search(r" tid=(\d+)", line).group(1)
        elif " proc-sample " in line and " thread=0 " not in line:
            m = re.search(r" thread=(\d+) .* run_ns=(\d+)", line)
            run[m.group(1)] = int(m.group(2))
    return samples, run.get(writer, 0)


def measure(bench):
    wl = os.path.join(bench.b, "tests/workloads/loader_tree")
    hold_ms = 500 if bench.quick else 5000
    reps = bench.reps if bench.quick else max(bench.reps, 3)
    per_sample = []
    for rep in range(reps):
        got = {}
        for period in (PERIOD_MS, FAST_MS):
            outdir = os.path.join(bench.tmp, "host-%d-%d" % (period, rep))
            data = os.path.join(bench.tmp, "host-data")
            cmd = bench.cutrace_cmd(outdir, ["--gpu-timing", "off"],
                                    [wl, str(WORKERS), "0", "4096", str(hold_ms), data])
            bench.run(cmd, env=dict(bench.env, CUTRACE_HOST_SAMPLE_MS=str(period)))
            got[period] = writer_cost(bench, outdir)
            shutil.rmtree(outdir, ignore_errors=True)
        (n_slow, t_slow), (n_fast, t_fast) = got[PERIOD_MS], got[FAST_MS]
        per_sample.append((t_fast - t_slow) / max(n_fast - n_slow, 1))
    us = [ns / 1000.0 for ns in per_sample]
    pct = [100.0 * ns * (1000.0 / PERIOD_MS) / 1e9 for ns in per_sample]
    bench.results["host_sample_us_per_sample"] = round(statistics.median(us), 1)
    bench.spread["host_sample_us_per_sample"] = [round(min(us), 1), round(max(us), 1)]
    key = "host_sample_cpu_pct_of_core"
    bench.results[key] = round(statistics.median(pct), 3)
    bench.spread[key] = [round(min(pct), 3), round(max(pct), 3)]
    bench.notes["host_sampling"] = (
        "loader_tree: 1 main + %d forked workers holding %d ms, `cutrace run --gpu-timing off` "
        "with CUTRACE_HOST_SAMPLE_MS=%d and %d, %d interleaved repetitions; a sample's cost = "
        "the writer thread's extra run time (schedstat, from the trace) over the extra samples; "
        "%% of one core at the default rate" % (WORKERS, hold_ms, PERIOD_MS, FAST_MS, reps))


def verdicts(results):
    return {"host_sampling": "pass" if results["host_sample_cpu_pct_of_core"] < GOAL_PCT else "miss"}


def row(results, spread, verdict):
    k = "host_sample_cpu_pct_of_core"
    return ("| host sampling, 1 + %d processes every %d ms, %% of one core | %.3f [%.3f..%.3f] "
            "(%.1f us a sample) | < %.0f | %s |" % (
                WORKERS, PERIOD_MS, results[k], spread[k][0], spread[k][1],
                results["host_sample_us_per_sample"], GOAL_PCT, verdict["host_sampling"]))
