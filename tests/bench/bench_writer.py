"""What the trace writer sustains and what threads beyond it lose (run_bench.py, section 13;
issue 29).

`probe stress T N` (tests/tracer): T threads, each N cuMemsetD8Async_v2 on its own stream, on
the simulation in instant mode (a call costs ~100 ns, far faster than any real launch), under
`cutrace run --gpu-timing off`; each call is one ring record, two records in the file (API and
COPY). The same number of calls, TOTAL, is made by 1, 8 and 64 threads, and by 8 processes of
one thread each started together (each its own writer, one directory):

- with `--on-full block`, where a thread whose ring is full waits for the writer, the records
  written over the run's wall time: the rate the writer sustains for that program (records/s;
  the program runs no faster than that, so every run writes every record). The 8-thread figure
  is the headline; each shape has its own, since the threads share the cores with the writer;
- paced (`probe stress T N R`: each thread R calls/s on average, in bursts of about a
  millisecond's calls between sleeps of at least 1 ms), the same calls at PACED (50% and 90%)
  of the rate that shape sustained in the run just before (the machine's other load varies over
  the bench), with `--on-full drop` (the default): the records lost at each; the verdict
  `writer_no_loss_below_sustained` passes when every one of them is 0;
- unpaced, as fast as the simulation allows, with `--on-full drop`: the share of the records
  lost ("buffers full") above the sustained rate;
- the tracing process's peak RSS at 64 threads, traced (drop, unpaced) and untraced.

Median of the repetitions (at least 3). Only the paced loss has a verdict.
"""
import os
import shutil
import statistics

TOTAL = 1536000  # calls, divisible by 1, 8 and 64
THREADS = (1, 8, 64)
SHAPES = THREADS + ("8p",)  # "8p": 8 processes of one thread
PACED = (50, 90)  # % of the sustained rate
RECORDS_PER_CALL = 2  # in the file: API and COPY


def stress(bench, threads, calls, rate):
    """probe stress: calls split across threads, at rate calls/s in all (0: unpaced)."""
    prog = [os.path.join(bench.b, "tests/tracer/probe"), "stress", str(threads),
            str(calls // threads)]
    return prog + ["%.1f" % (rate / threads)] if rate else prog


def run_probe(bench, outdir, threads, calls, mode, rate=0):
    """(records written, records lost, wall s, peak RSS MiB) of one traced (mode: drop or
    block) or untraced (mode None) run; rate: calls/s in all (0: unpaced)."""
    prog = stress(bench, threads, calls, rate)
    env = dict(bench.env, FAKECUDA_INSTANT="1")
    if mode is None:
        _, wall, _, rss = bench.run(prog, env)
        return 0, 0, wall, rss
    cmd = bench.cutrace_cmd(outdir, ["--gpu-timing", "off", "--on-full", mode], prog)
    _, wall, _, rss = bench.run(cmd, env)
    st = bench.trace_stats(bench.traces_in(outdir))
    shutil.rmtree(outdir, ignore_errors=True)
    return st["records"], st["lost"], wall, rss


def run_processes(bench, outdir, procs, calls, mode, rate=0):
    """(records written, records lost, wall s) of procs traced processes of one thread each,
    started together into one directory; rate: calls/s of them all (0: unpaced)."""
    prog = stress(bench, 1, calls // procs, rate / procs)
    one = " ".join(bench.cutrace_cmd(outdir, ["--gpu-timing", "off", "--on-full", mode], prog))
    script = "for i in $(seq %d); do %s >/dev/null & done; wait" % (procs, one)
    _, wall, _, _ = bench.run(["/bin/sh", "-c", script], dict(bench.env, FAKECUDA_INSTANT="1"))
    st = bench.trace_stats(bench.traces_in(outdir))
    shutil.rmtree(outdir, ignore_errors=True)
    return st["records"], st["lost"], wall


def run_shape(bench, shape, calls, mode, rate=0):
    """(records written, records lost, wall s, peak RSS MiB) of one shape ("8p": 8 processes,
    else a number of threads); the RSS is None for processes."""
    outdir = os.path.join(bench.tmp, "writer-%s-%s" % (shape, mode))
    if shape == "8p":
        return run_processes(bench, outdir, 8, calls, mode, rate) + (None,)
    return run_probe(bench, outdir, shape, calls, mode, rate)


def shape_key(shape):
    return "8_processes" if shape == "8p" else "%d_threads" % shape


def measure(bench):
    total = TOTAL // 64 if bench.quick else TOTAL
    reps = bench.reps if bench.quick else max(bench.reps, 3)
    lost, rate, rss = {k: [] for k in SHAPES}, {k: [] for k in SHAPES}, {"traced": [], "untraced": []}
    paced = {(pct, k): [] for pct in PACED for k in SHAPES}
    for rep in range(reps):
        for k in SHAPES:
            # the paced runs right after the rate they take a share of: the machine's other load
            # changes over a run of the bench, and with it what the writer sustains
            written, _, wall, _ = run_shape(bench, k, total, "block")
            rate[k].append(written / wall)
            for pct in PACED:
                calls_s = rate[k][-1] * pct / 100 / RECORDS_PER_CALL
                paced[pct, k].append(run_shape(bench, k, total, "drop", calls_s)[1])
            written, l, _, r = run_shape(bench, k, total, "drop")
            lost[k].append(100.0 * l / max(1, written + l))
            if k == 64:
                rss["traced"].append(r)
        rss["untraced"].append(run_probe(bench, None, 64, total, None)[3])
    for k in SHAPES:
        key = "writer_lost_pct_%s" % shape_key(k)
        bench.results[key] = round(statistics.median(lost[k]), 2)
        bench.spread[key] = [round(min(lost[k]), 2), round(max(lost[k]), 2)]
        key = "writer_records_per_s_sustained" + ("" if k == 8 else "_" + shape_key(k))
        bench.results[key] = round(statistics.median(rate[k]))
        bench.spread[key] = [round(min(rate[k])), round(max(rate[k]))]
        for pct in PACED:
            key = "writer_paced_%d_pct_lost_records_%s" % (pct, shape_key(k))
            bench.results[key] = statistics.median(paced[pct, k])
            bench.spread[key] = [min(paced[pct, k]), max(paced[pct, k])]
    for k, v in rss.items():
        bench.results["writer_rss_mib_64_threads_%s" % k] = round(statistics.median(v), 1)
    bench.notes["writer"] = (
        "probe stress: %d cuMemsetD8Async_v2 calls (2 records each) by 1, 8 and 64 threads and "
        "8 one-thread processes started together, instant simulation, `cutrace run --gpu-timing "
        "off`; sustained rate = records written / wall time with --on-full block (headline: 8 "
        "threads); paced: the same calls at %s%% of the rate that shape sustained just before, "
        "--on-full drop, records lost; unpaced: lost %% with --on-full drop; peak RSS of the "
        "64-thread run traced (drop) and untraced; %d repetitions, median [min..max]"
        % (total, " and ".join(str(p) for p in PACED), reps))


def verdicts(results):
    lost = [v for k, v in results.items() if k.startswith("writer_paced_")]
    return {"writer_no_loss_below_sustained": "pass" if lost and not any(lost) else "miss"}


def row(results, spread, verdict):
    r, s = results, spread

    def fig(key, fmt, scale=1):
        return (fmt + " [" + fmt + ".." + fmt + "]") % (r[key] / scale, s[key][0] / scale,
                                                      s[key][1] / scale)
    rates = " / ".join(fig("writer_records_per_s_sustained" + ("" if k == 8 else "_" + shape_key(k)),
                           "%.2f", 1e6) for k in SHAPES)
    paced = "; ".join("%d%%: %s" % (pct, " / ".join(
        fig("writer_paced_%d_pct_lost_records_%s" % (pct, shape_key(k)), "%d") for k in SHAPES))
        for pct in PACED)
    unpaced = " / ".join("%.1f%%" % r["writer_lost_pct_%s" % shape_key(k)] for k in SHAPES)
    return ("| trace writer: records/s sustained (--on-full block) at 1 / 8 / 64 threads / 8 "
            "processes | %s M/s | | |\n"
            "| trace writer: records lost at 50%% and 90%% of that rate (--on-full drop), 1 / 8 / "
            "64 threads / 8 processes | %s | 0 | %s |\n"
            "| trace writer: records lost unpaced, as fast as the instant simulation allows "
            "(--on-full drop), 1 / 8 / 64 threads / 8 processes; peak RSS at 64 threads, traced "
            "vs untraced | %s; %.0f vs %.0f MiB | | |" % (
                rates, paced, verdict["writer_no_loss_below_sustained"], unpaced,
                r["writer_rss_mib_64_threads_traced"], r["writer_rss_mib_64_threads_untraced"]))
