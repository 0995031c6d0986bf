"""What the trace writer sustains and what threads beyond it lose (run_bench.py, section 13;
issue 29).

`probe stress T N` (tests/tracer): T threads, each N cuMemsetD8Async_v2 on its own stream, on
the simulation in instant mode (a call costs ~100 ns, far faster than any real launch), under
`cutrace run --gpu-timing off`; each call is one ring record, two records in the file (API and
COPY). The same number of calls, TOTAL, is made by 1, 8 and 64 threads:

- with `--on-full drop` (the default), the share of the records lost ("buffers full");
- with `--on-full block` at 8 threads, where a thread whose ring is full waits for the writer,
  the records written over the run's wall time: the rate the writer sustains (records/s; the
  program runs no faster than that, so every run writes every record);
- the tracing process's peak RSS at 64 threads, traced (drop) and untraced;
- the same calls by 8 processes of one thread each, started together, each its own writer
  (`--on-full drop`): the share of their records lost.

Median of the repetitions (at least 3). Nothing is asserted.
"""
import os
import shutil
import statistics

TOTAL = 1536000  # calls, divisible by 1, 8 and 64
THREADS = (1, 8, 64)


def run_probe(bench, outdir, threads, calls, mode):
    """(records written, records lost, wall s, peak RSS MiB) of one traced (mode: drop or
    block) or untraced (mode None) run."""
    prog = [os.path.join(bench.b, "tests/tracer/probe"), "stress", str(threads),
            str(calls // threads)]
    env = dict(bench.env, FAKECUDA_INSTANT="1")
    if mode is None:
        _, wall, _, rss = bench.run(prog, env)
        return 0, 0, wall, rss
    cmd = bench.cutrace_cmd(outdir, ["--gpu-timing", "off", "--on-full", mode], prog)
    _, wall, _, rss = bench.run(cmd, env)
    st = bench.trace_stats(bench.traces_in(outdir))
    shutil.rmtree(outdir, ignore_errors=True)
    return st["records"], st["lost"], wall, rss


def run_processes(bench, outdir, procs, calls):
    """(records written, records lost) of procs traced processes of one thread each, started
    together into one directory."""
    prog = [os.path.join(bench.b, "tests/tracer/probe"), "stress", "1", str(calls // procs)]
    one = " ".join(bench.cutrace_cmd(outdir, ["--gpu-timing", "off"], prog))
    script = "for i in $(seq %d); do %s >/dev/null & done; wait" % (procs, one)
    bench.run(["/bin/sh", "-c", script], dict(bench.env, FAKECUDA_INSTANT="1"))
    st = bench.trace_stats(bench.traces_in(outdir))
    shutil.rmtree(outdir, ignore_errors=True)
    return st["records"], st["lost"]


def measure(bench):
    total = TOTAL // 64 if bench.quick else TOTAL
    reps = bench.reps if bench.quick else max(bench.reps, 3)
    lost, rate, rss = {t: [] for t in THREADS}, [], {"traced": [], "untraced": []}
    plost = []
    for rep in range(reps):
        for t in THREADS:
            written, l, _, r = run_probe(bench, os.path.join(bench.tmp, "writer-%d" % t), t,
                                         total, "drop")
            lost[t].append(100.0 * l / max(1, written + l))
            if t == 64:
                rss["traced"].append(r)
        written, l, wall, _ = run_probe(bench, os.path.join(bench.tmp, "writer-block"), 8, total,
                                        "block")
        rate.append(written / wall)
        rss["untraced"].append(run_probe(bench, None, 64, total, None)[3])
        written, l = run_processes(bench, os.path.join(bench.tmp, "writer-procs"), 8, total)
        plost.append(100.0 * l / max(1, written + l))
    for t in THREADS:
        key = "writer_lost_pct_%d_threads" % t
        bench.results[key] = round(statistics.median(lost[t]), 2)
        bench.spread[key] = [round(min(lost[t]), 2), round(max(lost[t]), 2)]
    bench.results["writer_lost_pct_8_processes"] = round(statistics.median(plost), 2)
    bench.spread["writer_lost_pct_8_processes"] = [round(min(plost), 2), round(max(plost), 2)]
    bench.results["writer_records_per_s_sustained"] = round(statistics.median(rate))
    bench.spread["writer_records_per_s_sustained"] = [round(min(rate)), round(max(rate))]
    for k, v in rss.items():
        bench.results["writer_rss_mib_64_threads_%s" % k] = round(statistics.median(v), 1)
    bench.notes["writer"] = (
        "probe stress: %d cuMemsetD8Async_v2 calls (2 records each) by 1, 8 and 64 threads, "
        "instant simulation, `cutrace run --gpu-timing off`; lost %% with --on-full drop; the "
        "sustained rate = records written / wall time with --on-full block at 8 threads; peak "
        "RSS of the 64-thread run traced (drop) and untraced; the same calls by 8 one-thread "
        "processes started together, lost %%; %d repetitions, median"
        % (total, reps))


def row(results, spread):
    r, s = results, spread
    return ("| trace writer: records/s sustained (8 threads waiting for it, --on-full block); "
            "records lost at 1 / 8 / 64 threads calling as fast as the instant simulation allows (--on-full drop); peak "
            "RSS at 64 threads, traced vs untraced; lost by 8 one-thread processes | %.2f M/s "
            "[%.2f..%.2f]; %.1f%% / %.1f%% / %.1f%%; %.0f vs %.0f MiB; %.1f%% | | |" % (
                r["writer_records_per_s_sustained"] / 1e6,
                s["writer_records_per_s_sustained"][0] / 1e6,
                s["writer_records_per_s_sustained"][1] / 1e6,
                r["writer_lost_pct_1_threads"], r["writer_lost_pct_8_threads"],
                r["writer_lost_pct_64_threads"], r["writer_rss_mib_64_threads_traced"],
                r["writer_rss_mib_64_threads_untraced"], r["writer_lost_pct_8_processes"]))
