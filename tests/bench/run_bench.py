#!/usr/bin/env python3
"""cutrace benchmark driver (`make bench`; tests/bench/README.md says what and why).

    run_bench.py --build BUILD_DIR --out OUT_DIR [--reps N] [--quick]

Measures, on the simulated CUDA stack:
  1. per-call cost of cuLaunchKernel, cuMemcpyHtoDAsync (pinned), cuMemAlloc+cuMemFree and
     cudaLaunchKernel (bench_calls, instant mode), untraced, under cutrace in three modes, and
     under four baselines built from tests/bench/ (floor, naive, LTTng-UST, ltrace); every
     configuration is its own process, interleaved across repetitions, median and min-max;
  2. trace size of the training-loop workload (tracestat);
  3. `cutrace summary` and `cutrace timeline` on a 10-million-event tracegen trace;
  4. the tracer's peak RSS over an untraced run;
  5. each diagnosis's estimated saving against its fix's measured saving (bench_pairs.py).
  6. the wall time cutrace's defaults add to train_loop (bench_overhead.py).
  7. what a call stack with Python frames adds to a call from Python (bench_pystack.py).
  8. what an NVTX push/pop pair costs, untraced and traced (bench_nvtx.py).
  9. what host sampling costs, 1 main + 8 loader workers (bench_host.py).
 10. the analyzer against the analyzer of a base commit, on section 3's and the 64 ranks'
     traces (bench_base.py; --base REV, 58899c6 by default; --base-only: this section alone).
 11. what thread sampling costs, 1 and 4 threads 30 Python frames deep (bench_tsample.py).
 12. a finding's fix applied to PyTorch's imagenet example: predicted against measured saving
     (bench_examples.py).
 13. the trace writer's sustained rate, the loss at 1, 8 and 64 threads beyond it and at 50%
     and 90% of it (1, 8, 64 threads, 8 processes), and the memory of 64 traced threads
     (bench_writer.py; --writer-only: this section alone).
Writes OUT_DIR/results.json (flat numeric keys, units in the names; `null` plus a reason in
"notes" where a figure could not be measured) and OUT_DIR/results.md, and prints the tables.
Speed is reported, never asserted: the exit status is 0 unless a program fails to run.
"""
import argparse
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import tempfile
import time

import bench_pairs
import bench_overhead
import bench_pystack
import bench_nvtx
import bench_host
import bench_tsample
import bench_base
import bench_examples
import bench_writer

CALLS = ["launch", "memcpy", "alloc", "rtlaunch"]
CALL_KEY = {"launch": "launch", "memcpy": "memcpy", "alloc": "alloc", "rtlaunch": "runtime_launch"}
CALL_LABEL = {"launch": "cuLaunchKernel", "memcpy": "cuMemcpyHtoDAsync (pinned, 256 B)",
              "alloc": "cuMemAlloc+cuMemFree (4 KiB)", "rtlaunch": "cudaLaunchKernel"}
# Intercepted calls per iteration: by cutrace (the runtime's nested cuLaunchKernel is traced
# too) and by an LD_PRELOAD interposer (which cannot see calls made through cuGetProcAddress).
CALLS_PER_ITER = {"launch": 1, "memcpy": 1, "alloc": 2, "rtlaunch": 2}
IB_CALLS_PER_ITER = {"launch": 1, "memcpy": 1, "alloc": 2, "rtlaunch": 1}
CUTRACE_MODES = {  # config -> cutrace run options
    "traced": ["--stacks", "none", "--gpu-timing", "off"],
    "traced_gputime": ["--stacks", "none", "--gpu-timing", "all"],
    "traced_stacks": ["--stacks", "all", "--gpu-timing", "off"],
}
CONFIGS = ["untraced", "traced", "traced_gputime", "traced_stacks", "floor", "naive_interposer",
           "lttng"]
CONFIG_LABEL = {"untraced": "untraced", "traced": "cutrace (no stacks/GPU timing)",
                "traced_gputime": "+GPU timing", "traced_stacks": "+stacks (all)", "floor": "floor",
                "naive_interposer": "naive", "lttng": "LTTng-UST", "ltrace": "ltrace*"}
GOAL_FLOOR_RATIO = 1.3      # cutrace's added cost per call, in floors
GOAL_STACKS_NS = 1500       # added per call with native call stacks
GOAL_BYTES_PER_EVENT = 4.0  # on a training loop
GOAL_ANALYZER_EPS = 20e6    # events per second on one core
GOAL_REPORT_BYTES = 5 * 2**20  # issue 17: a 10-million-event trace gives a report of at most 5 MiB ...
GOAL_REPORT_S = 5.0            # ... in at most 5 s
GOAL_JOBS_SPEEDUP = 1.8        # issue 18: summary of many files on 2 cores, over 1


class Bench:
    def __init__(self, args):
        self.b = self.build = os.path.abspath(args.build)
        self.out = os.path.abspath(args.out)
        self.quick = args.quick
        self.base = args.base
        self.reps = args.reps or (1 if args.quick else 5)
        self.tmp = tempfile.mkdtemp(prefix="cutrace-bench-")
        try:
            self.b = self.snapshot(self.b)
        except (OSError, RuntimeError):
            shutil.rmtree(self.tmp, ignore_errors=True)
            raise
        self.results = {}
        self.kept = {}  # traces section 10 reads again: "analyzer" (a file), "ranks" (a folder)
        self.spread = {}
        self.notes = {}
        self.lost = {}
        # Baselines whose output held fewer events than the calls made: config -> reason. Their
        # figures are reported as null with that reason, never as a cost (a tracer that recorded
        # nothing would look cheapest).
        self.failed = {}
        self.prog = os.path.join(self.b, "tests/bench/bench_calls")
        self.cutrace = os.path.join(self.b, "bin/cutrace")
        self.tracestat = os.path.join(self.b, "tests/bench/tracestat")
        self.rusage = os.path.join(self.b, "tests/bench/rusage")
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("CUTRACE_", "FAKECUDA_", "LTTNG_")) and k != "LD_PRELOAD"}
        fake = os.path.join(self.b, "tests/fakecuda")
        env["LD_LIBRARY_PATH"] = fake + (":" + env["LD_LIBRARY_PATH"]
                                         if env.get("LD_LIBRARY_PATH") else "")
        self.env = env
        # Calls per process, in bursts separated by pauses longer than cutrace's writer period
        # (100 ms), so that every configuration is measured recording, not dropping, records:
        # with GPU timing a thread has 1024 events (512 operations) between writer passes.
        if self.quick:
            self.n, self.burst, self.pause_ms = 300, 150, 0  # 450 calls: within every buffer
        else:
            self.n, self.burst, self.pause_ms = 2500, 500, 110

    SNAPSHOT = ["bin/cutrace", "lib/libcutrace.so", "tests/fakecuda/libcuda.so.1",
                "tests/fakecuda/libcudart.so.13", "tests/bench/bench_calls", "tests/bench/tracestat",
                "tests/bench/rusage", "tests/bench/bench_nvtx", "tests/bench/libib_floor.so",
                "tests/bench/libib_naive.so",
                "tests/bench/libib_lttng.so", "tests/workloads/train_loop",
                "tests/workloads/loader_tree",
                "tests/analyzer/tracegen", "tests/workloads/libworkload_kernels.so",
                "tests/tracer/probe",
                "tests/nvrt/driver/libcuda.so.1", "tests/pytorch/venv.status"]
    # what sections 11 and 12 need for PyTorch's examples (NVIDIA's runtime on the simulated
    # driver, the pytorch suite's virtual environment): without them they say so and skip
    OPTIONAL = ("libib_lttng.so", "tests/nvrt/driver/libcuda.so.1", "tests/pytorch/venv.status")

    def snapshot(self, build):
        """Copies what the benchmark runs into its temporary directory, in the build's layout
        (cutrace finds libcutrace at ../lib): a rebuild during the run cannot change or remove
        the programs measured. Returns the copy's root."""
        root = os.path.join(self.tmp, "build")
        for rel in self.SNAPSHOT:
            src = os.path.join(build, rel)
            if not os.path.exists(src):
                if rel.endswith(self.OPTIONAL):
                    continue  # optional: its absence is reported by the section that needs it
                raise RuntimeError("%s: missing (run make first)" % src)
            os.makedirs(os.path.dirname(os.path.join(root, rel)), exist_ok=True)
            shutil.copy2(src, os.path.join(root, rel))
        return root

    # ---- processes ---------------------------------------------------------------------------
    def run(self, cmd, env=None, stderr_path=None, timeout=600):
        """Runs cmd (through rusage.c); returns (stdout text, wall s, CPU s, peak RSS MiB)."""
        out_path = os.path.join(self.tmp, "stdout.txt")
        err_path = stderr_path or os.path.join(self.tmp, "stderr.txt")
        report = os.path.join(self.tmp, "rusage.txt")
        with open(out_path, "w") as fo, open(err_path, "w") as fe:
            rc = subprocess.run([self.rusage, report] + cmd, env=env or self.env, stdout=fo,
                                stderr=fe, timeout=timeout).returncode
        with open(out_path) as f:
            text = f.read()
        if rc != 0:
            with open(err_path) as f:
                err = f.read()[-2000:]
            raise RuntimeError("%s exited with %d\n%s%s" % (" ".join(cmd), rc, text[-2000:], err))
        with open(report) as f:
            ru = {k: float(v) for k, v in re.findall(r"(\w+)=(\S+)", f.read())}
        # the elapsed time as rusage measured it: subprocess's wait polls (sleeps up to 50 ms)
        return text, ru["wall_s"], ru["user_s"] + ru["sys_s"], ru["maxrss_kb"] / 1024.0

    @staticmethod
    def kv(text, prefix):
        """key=value pairs of the output lines starting with prefix."""
        d = {}
        for line in text.splitlines():
            if line.startswith(prefix):
                for k, v in re.findall(r"(\w+)=(\S+)", line):
                    d[k] = v
        return d

    def trace_stats(self, files):
        text, _, _, _ = self.run([self.tracestat] + files)
        return {k: int(v) for k, v in self.kv(text, "tracestat:").items()}

    def cutrace_cmd(self, outdir, opts, cmd):
        return [self.cutrace, "run", "-q", "-o", outdir] + opts + ["--"] + cmd

    def traces_in(self, d):
        return sorted(os.path.join(d, f) for f in os.listdir(d) if f.endswith(".cutrace"))

    # ---- 1. per-call overhead ----------------------------------------------------------------
    def call_cmd(self, config, call, n, burst, pause_ms, tag):
        """Command, environment and stderr file of one bench_calls process."""
        args = [self.prog, call, str(n), str(burst), str(pause_ms)]
        env = dict(self.env, FAKECUDA_INSTANT="1")
        stderr = None
        if config in CUTRACE_MODES:
            outdir = os.path.join(self.tmp, "ct-" + tag)
            return self.cutrace_cmd(outdir, CUTRACE_MODES[config], args), env, None, outdir
        if config == "floor" or config == "naive_interposer" or config == "lttng":
            lib = {"floor": "floor", "naive_interposer": "naive", "lttng": "lttng"}[config]
            env["LD_PRELOAD"] = os.path.join(self.b, "tests/bench/libib_%s.so" % lib)
            if config == "naive_interposer":
                stderr = os.path.join(self.tmp, "naive.log")  # the naive tracer's output file
            if config == "lttng":
                env.update(self.lttng.env)
        return args, env, stderr, None

    def measure_call(self, config, call, n, burst, pause_ms, tag):
        """ns per call of one process; and (records lost, records written) for cutrace runs."""
        cmd, env, stderr, outdir = self.call_cmd(config, call, n, burst, pause_ms, tag)
        records_file = os.path.join(self.tmp, "ib-records.txt")
        if config == "floor":
            env["IB_RECORDS_FILE"] = records_file
        text, _, _, _ = self.run(cmd, env, stderr)
        out = self.kv(text, "bench_calls:")
        ns = float(out["ns_per_call_median_burst"])
        calls = int(out["calls_made"]) * IB_CALLS_PER_ITER.get(call, 0)
        lost = None
        if outdir:
            st = self.trace_stats(self.traces_in(outdir))
            lost = (st["lost"], st["records"])
            shutil.rmtree(outdir)
        if config == "floor":
            with open(records_file) as f:
                self.check_recorded(config, sum(int(x) for x in f.read().split()), calls,
                                    "records stored")
            os.unlink(records_file)
        elif config == "naive_interposer":
            with open(stderr) as f:
                self.check_recorded(config, sum(1 for _ in f), calls, "lines written")
        elif config == "lttng":
            self.lttng.calls += calls
        return ns, lost

    def check_recorded(self, config, recorded, calls, what):
        """A baseline that recorded fewer events than the calls made measured something else."""
        if recorded < calls and config not in self.failed:
            self.failed[config] = ("failed: %d %s for %d calls made, so its cost is not that of "
                                   "recording them" % (recorded, what, calls))

    def null_failed(self):
        """Replaces the figures of failed baselines by null, with the reason in notes."""
        for config, why in self.failed.items():
            for key in list(self.results):
                if key.endswith("_ns_" + config) or key.endswith("_ns_%s_sustained" % config):
                    self.results[key] = None
                    self.spread.pop(key, None)
            self.notes[config] = why

    def bench_calls(self):
        configs = [c for c in CONFIGS if c != "lttng" or self.lttng.ok]
        samples = {}
        for rep in range(self.reps):
            for call in CALLS:
                for config in configs:
                    ns, lost = self.measure_call(config, call, self.n, self.burst,
                                                 self.pause_ms, "%s-%s-%d" % (config, call, rep))
                    samples.setdefault((call, config), []).append(ns)
                    if lost:
                        key = "%s_%s" % (CALL_KEY[call], config)
                        self.lost[key] = self.lost.get(key, 0) + lost[0]
        for (call, config), v in samples.items():
            key = "%s_ns_%s" % (CALL_KEY[call], config)
            self.results[key] = round(statistics.median(v), 1)
            self.spread[key] = [round(min(v), 1), round(max(v), 1)]
        if not self.lttng.ok:
            for call in CALLS:
                self.results["%s_ns_lttng" % CALL_KEY[call]] = None
            self.notes["lttng"] = self.lttng.reason

    def bench_graph(self):
        """cuGraphLaunch of a one-kernel graph, in bursts as the calls above: the launch of a
        graph records its LAUNCH and a GRAPH record naming the exec (issue 16)."""
        samples = {}
        for rep in range(self.reps):
            for config in ["untraced", "traced", "traced_gputime"]:
                ns, _ = self.measure_call(config, "graph", self.n, self.burst, self.pause_ms,
                                          "graph-%s-%d" % (config, rep))
                samples.setdefault(config, []).append(ns)
        for config, v in samples.items():
            self.results["graph_launch_ns_%s" % config] = round(statistics.median(v), 1)

    def bench_sustained(self):
        """cuLaunchKernel without pauses: at this rate cutrace's buffers fill between writer
        cycles; reports what is lost next to the cost."""
        n = 2000 if self.quick else 200000
        configs = ["untraced", "traced"] + (["lttng"] if self.lttng.ok else [])
        samples, lost, written = {}, 0, 0
        for rep in range(1 if self.quick else 3):
            for config in configs:
                ns, l = self.measure_call(config, "launch", n, n, 0,
                                          "sustained-%s-%d" % (config, rep))
                samples.setdefault(config, []).append(ns)
                if l:
                    lost, written = lost + l[0], written + l[1]
        for config, v in samples.items():
            self.results["launch_ns_%s_sustained" % config] = round(statistics.median(v), 1)
        self.results["launch_lost_fraction_traced_sustained"] = round(
            lost / max(1, lost + written), 4)

    def bench_clocks(self):
        """What one clock read costs back to back (rdtsc, clock_gettime): the floor's and
        cutrace's timestamps, measured apart from any call."""
        for clock, key in (("tsc", "tsc_read_ns"), ("clock", "clock_gettime_ns")):
            v = [self.measure_call("untraced", clock, 20000 if self.quick else 1000000, 1000, 0,
                                   "clock")[0] for _ in range(3)]
            self.results[key] = round(statistics.median(v), 1)

    def bench_ltrace(self):
        ltrace = shutil.which("ltrace")
        if self.quick or not ltrace:
            for call in CALLS:
                self.results["%s_ns_ltrace" % CALL_KEY[call]] = None
            self.notes["ltrace"] = ("skipped (--quick)" if self.quick else
                                    "ltrace not installed (Debian package ltrace)")
            return
        n = 500
        fns = "cuLaunchKernel+cuMemcpyHtoDAsync_v2+cuMemAlloc_v2+cuMemFree_v2+cudaLaunchKernel"
        for call in CALLS:
            cmd = [ltrace, "-o", os.path.join(self.tmp, "ltrace.log"), "-e", fns, self.prog, call,
                   str(n), str(n), "0"]
            text, _, _, _ = self.run(cmd, dict(self.env, FAKECUDA_INSTANT="1"))
            out = self.kv(text, "bench_calls:")
            self.results["%s_ns_ltrace" % CALL_KEY[call]] = round(float(out["ns_per_call"]), 1)
            with open(os.path.join(self.tmp, "ltrace.log")) as f:
                traced = sum(1 for line in f if re.search(r"\b(cu|cuda)\w+\(", line))
            self.check_recorded("ltrace", traced, int(out["calls_made"]) * IB_CALLS_PER_ITER[call],
                                "calls logged")
        self.notes["ltrace"] = ("ltrace figures: %d calls per process (after %d warm-up calls), "
                                "one run, extrapolated to a per-call cost" % (n, n))

    # ---- 2. trace size -----------------------------------------------------------------------
    def bench_trace_size(self):
        wl = os.path.join(self.b, "tests/workloads/train_loop")
        iters = 20 if self.quick else 2000
        args = [wl, "--iters", str(iters), "--loader-ms", "1"]
        _, _, _, rss_plain = self.run(args)
        outdir = os.path.join(self.tmp, "train")
        _, wall, _, rss_traced = self.run(self.cutrace_cmd(outdir, [], args))
        st = self.trace_stats(self.traces_in(outdir))
        shutil.rmtree(outdir)
        ev = st["records"]
        self.results.update({
            "trace_events": ev,
            "trace_launches": st.get("launch", 0),
            "trace_file_bytes": st["file_bytes"],
            "trace_bytes_per_event": round(st["file_bytes"] / ev, 3),
            "trace_bytes_per_launch": round(st["file_bytes"] / max(1, st.get("launch", 0)), 2),
            "trace_raw_bytes_per_event": round(st["raw_bytes"] / ev, 3),
            "trace_payload_bytes_per_event": round(st["payload_bytes"] / ev, 3),
            "trace_lost_records": st["lost"],
            "train_loop_traced_wall_s": round(wall, 2),
            "train_loop_peak_rss_mb_untraced": round(rss_plain, 1),
            "train_loop_peak_rss_mb_traced": round(rss_traced, 1),
            "tracer_rss_overhead_mb": round(rss_traced - rss_plain, 1),
        })
        self.notes["trace_size"] = ("train_loop --iters %d --loader-ms 1 under `cutrace run` "
                                    "(defaults), real-time simulation; bytes per event = file "
                                    "bytes / records" % iters)

    # ---- 3. analyzer -------------------------------------------------------------------------
    def analyzer_trace(self, label):
        """The training-loop trace of section 3, "large" (10 million records) or "small" (a
        tenth): (its path, its records)."""
        gen = os.path.join(self.b, "tests/analyzer/tracegen")
        events = (100000 if self.quick else 10000000) // (10 if label == "small" else 1)
        gdir = os.path.join(self.tmp, "gen-" + label)
        text, _, _, _ = self.run([gen, "-o", gdir, "--events", str(int(events * 1.05)),
                                  "--workers", "4", "--kernels", "40", "--churn",
                                  "--prefetch", "--pinned"])
        return os.path.join(gdir, "rank-0.cutrace"), int(self.kv(text, "tracegen:")["records"])

    def bench_analyzer(self):
        d = {}
        # A small and a large trace: peak memory must not grow with trace length.
        for label in ("small", "large"):
            trace, records = self.analyzer_trace(label)
            _, swall, scpu, srss = self.run([self.cutrace, "summary", "-j", "1", trace])
            d[label] = (records, scpu, srss, swall)
            if label == "large":
                _, twall, tcpu, trss = self.run([self.cutrace, "timeline", "-o", "-", trace])
                html = os.path.join(self.tmp, "report.html")
                _, rwall, rcpu, rrss = self.run([self.cutrace, "report", "-o", html, trace])
                self.results.update({
                    "report_wall_s": round(rwall, 2),
                    "report_cpu_s": round(rcpu, 2),
                    "report_bytes": os.path.getsize(html),
                    "report_peak_rss_mb": round(rrss, 1),
                })
                os.unlink(html)
                self.results.update({
                    "analyzer_trace_events": records,
                    "analyzer_trace_bytes": os.path.getsize(trace),
                    "analyzer_events_per_sec": round(records / scpu),
                    "analyzer_events_per_sec_wall": round(records / swall),
                    "analyzer_peak_rss_mb": round(srss, 1),
                    "timeline_events_per_sec": round(records / tcpu),
                    "timeline_events_per_sec_wall": round(records / twall),
                    "timeline_peak_rss_mb": round(trss, 1),
                })
                self.kept["analyzer"] = trace
            else:
                shutil.rmtree(os.path.dirname(trace))
        self.results["analyzer_peak_rss_mb_small_trace"] = round(d["small"][2], 1)
        self.results["analyzer_small_trace_events"] = d["small"][0]
        self.notes["analyzer"] = ("events per second = trace records / CPU time (user+sys) of one "
                                  "single-threaded process; _wall variants use elapsed time; "
                                  "timeline JSON written to a pipe and discarded")

    def ranks_traces(self):
        """Section 9's 64 ranks: (their folder, their records)."""
        gen = os.path.join(self.b, "tests/analyzer/tracegen")
        gdir = os.path.join(self.tmp, "gen-ranks")
        text, _, _, _ = self.run([gen, "-o", gdir, "--ranks", "64", "--iters",
                                  "20" if self.quick else "3000", "--kernels", "8", "--churn"])
        return gdir, sum(int(n) for n in re.findall(
            r"^tracegen: rank=\d+ file=\S+ records=(\d+)", text, re.M))

    def bench_jobs(self):
        """summary --json of a 64-rank set with 1 and 2 workers (-j), interleaved; the fastest run
        of each (noise only adds time)."""
        gdir, records = self.ranks_traces()
        runs = {1: [], 2: []}
        for _ in range(max(self.reps, 1)):
            for jobs in (1, 2):
                _, wall, cpu, rss = self.run([self.cutrace, "summary", "-j", str(jobs), "--json", gdir])
                runs[jobs].append((wall, cpu, rss))
        self.kept["ranks"] = gdir
        best = {j: min(w for w, _, _ in r) for j, r in runs.items()}
        for jobs in (1, 2):
            self.results["jobs_events_per_sec_j%d" % jobs] = round(records / best[jobs])
            self.results["jobs_peak_rss_mb_j%d" % jobs] = round(max(m for _, _, m in runs[jobs]), 1)
            self.results["jobs_cpu_s_j%d" % jobs] = round(min(c for _, c, _ in runs[jobs]), 2)
            self.spread["jobs_events_per_sec_j%d" % jobs] = [
                round(records / max(w for w, _, _ in runs[jobs])), round(records / best[jobs])]
        self.results["jobs_trace_events"] = records
        self.results["jobs_files"] = 64
        self.results["jobs_speedup_j2"] = round(best[1] / best[2], 2)
        self.results["jobs_cores_online"] = os.cpu_count() or 1
        self.notes["jobs"] = ("summary --json of 64 ranks (tracegen), -j 1 and -j 2 interleaved over "
                              "%d repetitions: events/s = records / elapsed time of the fastest run; "
                              "speedup = its -j 1 time over its -j 2 time; on a machine other work "
                              "shares, the second core is not all ours and the speedup shows it"
                              % max(self.reps, 1))

    # ---- report ------------------------------------------------------------------------------
    def verdicts(self):
        r, v = self.results, {}
        for call in CALLS:
            k = CALL_KEY[call]
            base = r["%s_ns_untraced" % k]
            added = (r["%s_ns_traced" % k] - base) / CALLS_PER_ITER[call]
            floor = (r["%s_ns_floor" % k] - base) / IB_CALLS_PER_ITER[call] \
                if r["%s_ns_floor" % k] is not None else 0
            stacks = (r["%s_ns_traced_stacks" % k] - base) / CALLS_PER_ITER[call]
            r["%s_ns_added_per_call_traced" % k] = round(added, 1)
            r["%s_ns_added_per_call_floor" % k] = round(floor, 1)
            r["%s_ns_added_per_call_traced_stacks" % k] = round(stacks, 1)
            # A floor that adds nothing measurable (noise) leaves the ratio undefined.
            ratio = round(added / floor, 2) if floor > 0 else None
            r["%s_added_floor_ratio" % k] = ratio
            v["%s_overhead" % k] = ("n/a" if ratio is None else
                                    "pass" if ratio <= GOAL_FLOOR_RATIO else "miss")
            v["%s_stacks" % k] = "pass" if stacks <= GOAL_STACKS_NS else "miss"
        v["trace_bytes_per_event"] = ("pass" if r["trace_bytes_per_event"] <= GOAL_BYTES_PER_EVENT
                                      else "miss")
        v["analyzer_events_per_sec"] = ("pass" if r["analyzer_events_per_sec"] >= GOAL_ANALYZER_EPS
                                        else "miss")
        v["report_size_time"] = ("pass" if r["report_bytes"] <= GOAL_REPORT_BYTES and
                                 r["report_wall_s"] <= GOAL_REPORT_S else "miss")
        # Flat: ten times the records may not cost more than half again (plus allocator slack).
        small, large = r["analyzer_peak_rss_mb_small_trace"], r["analyzer_peak_rss_mb"]
        v["analyzer_memory_flat"] = "pass" if large <= 1.5 * small + 8 else "miss"
        v["jobs_speedup"] = ("n/a" if r["jobs_cores_online"] < 2 else
                             "pass" if r["jobs_speedup_j2"] >= GOAL_JOBS_SPEEDUP else "miss")
        v.update(bench_overhead.verdicts(r))
        v.update(bench_pystack.verdicts(r))
        v.update(bench_host.verdicts(r))
        v.update(bench_tsample.verdicts(r))
        v.update(bench_base.verdicts(r))
        v.update(bench_writer.verdicts(r))
        return v

    def tables(self, v):
        r, s = self.results, self.spread
        cols = CONFIGS + ["ltrace"]
        lines = ["Per-call cost, ns: median of %d interleaved runs [min-max]; each run %d calls in "
                 "bursts of %d %d ms apart, its figure the median burst; instant-mode simulated "
                 "CUDA" % (self.reps, self.n, self.burst, self.pause_ms), ""]
        lines.append("| call | " + " | ".join(CONFIG_LABEL[c] for c in cols) +
                     " | cutrace added/call | floor added/call | ratio (goal <= %.1f) | stacks added/call (goal <= %d) |"
                     % (GOAL_FLOOR_RATIO, GOAL_STACKS_NS))
        lines.append("|" + "---|" * (len(cols) + 5))
        for call in CALLS:
            k = CALL_KEY[call]
            cells = []
            for c in cols:
                key = "%s_ns_%s" % (k, c)
                val = r.get(key)
                if val is None:
                    cells.append("n/a")
                elif key in s:
                    cells.append("%.0f [%.0f-%.0f]" % (val, s[key][0], s[key][1]))
                else:
                    cells.append("%.0f" % val)
            ratio = r["%s_added_floor_ratio" % k]
            if r["%s_ns_floor" % k] is None:
                r["%s_ns_added_per_call_floor" % k] = None
            lines.append("| %s | %s | %.0f | %.0f | %s %s | %.0f %s |" % (
                CALL_LABEL[call], " | ".join(cells), r["%s_ns_added_per_call_traced" % k],
                r["%s_ns_added_per_call_floor" % k] or 0, "-" if ratio is None else "%.2f" % ratio,
                v["%s_overhead" % k], r["%s_ns_added_per_call_traced_stacks" % k], v["%s_stacks" % k]))
        lines += ["",
                  "Per intercepted call: alloc is 2 calls for every tracer; cudaLaunchKernel is 2 for "
                  "cutrace (it also traces the runtime's cuLaunchKernel) and 1 for the LD_PRELOAD "
                  "baselines. * %s." % self.notes.get("ltrace", ""),
                  "Sustained cuLaunchKernel (no pauses, %s calls): untraced %.0f ns, cutrace %.0f ns "
                  "with %.1f%% of records lost%s." % (
                      "2000" if self.quick else "200000", r["launch_ns_untraced_sustained"],
                      r["launch_ns_traced_sustained"],
                      100 * r["launch_lost_fraction_traced_sustained"],
                      ", LTTng-UST %.0f ns" % r["launch_ns_lttng_sustained"]
                      if r.get("launch_ns_lttng_sustained") is not None else ""),
                  "cuGraphLaunch (a one-kernel graph): untraced %.0f ns, cutrace %.0f ns, with GPU "
                  "timing %.0f ns." % (r["graph_launch_ns_untraced"], r["graph_launch_ns_traced"],
                                      r["graph_launch_ns_traced_gputime"]),
                  "One clock read, back to back: rdtsc %.1f ns, clock_gettime(CLOCK_MONOTONIC) "
                  "%.1f ns." % (r["tsc_read_ns"], r["clock_gettime_ns"]),
                  "LTTng-UST trace: %s bytes per event%s." % (
                      r.get("trace_bytes_per_event_lttng"),
                      "" if self.lttng.ok else " (%s)" % self.lttng.reason),
                  ""]
        lines += ["BASELINE %s %s" % (CONFIG_LABEL[c], why) for c, why in self.failed.items()]
        lost = {k: n for k, n in self.lost.items() if n}
        if lost:
            lines += ["WARNING: cutrace lost records in the burst runs, so those figures include "
                      "the cheaper drop path: %s" % lost, ""]
        lines += ["| figure | value | goal | verdict |", "|---|---|---|---|",
                  "| trace bytes per event (train_loop, %d events, zstd) | %.2f (uncompressed "
                  "encoding %.2f) | <= %.0f | %s |" % (
                      r["trace_events"], r["trace_bytes_per_event"], r["trace_raw_bytes_per_event"],
                      GOAL_BYTES_PER_EVENT, v["trace_bytes_per_event"]),
                  "| trace bytes per kernel launch | %.1f | | |" % r["trace_bytes_per_launch"],
                  bench_overhead.row(r, s, v),
                  bench_pystack.row(r, s, v),
                  bench_nvtx.row(r, s),
                  bench_host.row(r, s, v),
                  bench_writer.row(r, s, v),
                  bench_tsample.row(r, s, v),
                  bench_base.row(r, s, v, self.base),
                  "| cutrace summary, events/s (%d events, CPU time) | %.1f M (wall %.1f M) | >= %.0f M | %s |" % (
                      r["analyzer_trace_events"], r["analyzer_events_per_sec"] / 1e6,
                      r["analyzer_events_per_sec_wall"] / 1e6, GOAL_ANALYZER_EPS / 1e6,
                      v["analyzer_events_per_sec"]),
                  "| cutrace summary peak RSS, MiB (%d vs %d events) | %.1f vs %.1f | flat | %s |" % (
                      r["analyzer_trace_events"], r["analyzer_small_trace_events"],
                      r["analyzer_peak_rss_mb"], r["analyzer_peak_rss_mb_small_trace"],
                      v["analyzer_memory_flat"]),
                  "| cutrace report of the same trace: size, time | %.2f MiB, %.2f s wall (%.2f s CPU), peak RSS %.1f MiB | <= %.0f MiB, <= %.0f s | %s |" % (
                      r["report_bytes"] / 2**20, r["report_wall_s"], r["report_cpu_s"],
                      r["report_peak_rss_mb"], GOAL_REPORT_BYTES / 2**20, GOAL_REPORT_S,
                      v["report_size_time"]),
                  "| cutrace summary of %d ranks (%d events), events/s (elapsed): -j 1, -j 2 | %.1f M, %.1f M: %.2fx; peak RSS %.1f, %.1f MiB | >= %.1fx | %s |" % (
                      r["jobs_files"], r["jobs_trace_events"], r["jobs_events_per_sec_j1"] / 1e6,
                      r["jobs_events_per_sec_j2"] / 1e6, r["jobs_speedup_j2"],
                      r["jobs_peak_rss_mb_j1"], r["jobs_peak_rss_mb_j2"], GOAL_JOBS_SPEEDUP,
                      v["jobs_speedup"]),
                  "| cutrace timeline, events/s (CPU time) | %.2f M (wall %.2f M), peak RSS %.1f MiB | | |" % (
                      r["timeline_events_per_sec"] / 1e6, r["timeline_events_per_sec_wall"] / 1e6,
                      r["timeline_peak_rss_mb"]),
                  "| tracer peak RSS over untraced (train_loop, %d events) | %.1f MiB | | |" % (
                      r["trace_events"], r["tracer_rss_overhead_mb"]),
                  ""]
        return "\n".join(lines)

    def main_base_only(self):
        """Section 10 alone (--base-only): its row on stdout, its figures in results-base.json."""
        os.makedirs(self.out, exist_ok=True)
        bench_base.measure(self, self.base)
        v = bench_base.verdicts(self.results)
        doc = dict(self.results, spread_min_max=self.spread, verdicts=v, notes=self.notes)
        with open(os.path.join(self.out, "results-base.json"), "w") as f:
            json.dump(doc, f, indent=1, sort_keys=True, allow_nan=False)
        print(bench_base.row(self.results, self.spread, v, self.base))
        print(self.notes["vs_base"])

    def main_writer_only(self):
        """Section 13 alone (--writer-only): its row on stdout, its figures in
        results-writer.json."""
        os.makedirs(self.out, exist_ok=True)
        bench_writer.measure(self)
        v = bench_writer.verdicts(self.results)
        doc = dict(self.results, spread_min_max=self.spread, verdicts=v, notes=self.notes)
        with open(os.path.join(self.out, "results-writer.json"), "w") as f:
            json.dump(doc, f, indent=1, sort_keys=True, allow_nan=False)
        print(bench_writer.row(self.results, self.spread, v))
        print(self.notes["writer"])

    def main(self):
        os.makedirs(self.out, exist_ok=True)
        t0 = time.monotonic()
        self.lttng = Lttng(self, os.path.join(self.b, "tests/bench/libib_lttng.so"))
        try:
            if not self.quick:
                self.lttng.begin()
            else:
                self.lttng.reason = "skipped (--quick)"
            self.bench_calls()
            self.bench_graph()
            self.bench_sustained()
            self.bench_clocks()
        finally:
            self.lttng.end()
        self.results["trace_bytes_per_event_lttng"] = self.lttng.bytes_per_event
        if self.lttng.ok:
            self.results["lttng_discarded_events"] = self.lttng.discarded
            self.results["lttng_recorded_entries"] = self.lttng.recorded
            self.check_recorded("lttng", self.lttng.recorded or 0, self.lttng.calls,
                                "entry events in the session's trace")
        self.bench_ltrace()
        self.null_failed()
        self.bench_trace_size()
        bench_overhead.measure(self)
        bench_pystack.measure(self)
        bench_nvtx.measure(self)
        bench_host.measure(self)
        bench_writer.measure(self)
        bench_tsample.measure(self)
        self.bench_analyzer()
        self.bench_jobs()
        bench_base.measure(self, self.base)
        pair_verdicts = bench_pairs.bench(self)
        example_verdicts, example_row = bench_examples.bench(self)
        v = self.verdicts()
        v.update(pair_verdicts)
        v.update(example_verdicts)
        self.results["bench_wall_s"] = round(time.monotonic() - t0, 1)
        doc = dict(self.results)
        doc.update({"spread_min_max": self.spread, "verdicts": v, "notes": self.notes,
                    "lost_records": self.lost, "reps": self.reps, "calls_per_run": self.n,
                    "burst": self.burst, "pause_ms": self.pause_ms, "quick": self.quick})
        with open(os.path.join(self.out, "results.json"), "w") as f:
            json.dump(doc, f, indent=1, sort_keys=True, allow_nan=False)
        text = self.tables(v) + "\n" + self.pairs_text
        if example_row:
            text += "\n| figure | value | goal | verdict |\n|---|---|---|---|\n" + example_row + "\n"
        with open(os.path.join(self.out, "results.md"), "w") as f:
            f.write(text)
        print(text)
        print("bench: %.0f s; results in %s" % (self.results["bench_wall_s"],
                                                os.path.join(self.out, "results.json")))


class Lttng:
    """An LTTng session around the LTTng baseline's runs: a session daemon (ours, unless one is
    already running), a user-space session recording provider cutrace_bench to a temporary
    directory, torn down at the end (the daemon stopped only if we started it)."""

    def __init__(self, bench, lib):
        self.bench = bench
        self.lib = lib
        self.ok = False
        self.reason = None
        self.bytes_per_event = None
        self.calls = 0          # calls made by the processes it traced
        self.recorded = None    # entry events in its trace, counted by babeltrace2
        self.discarded = None
        self.daemon_pid = None
        self.session = "cutrace-bench-%d" % os.getpid()
        home = os.path.join(bench.tmp, "lttng-home")
        self.env = {"LTTNG_HOME": home}
        self.trace_dir = os.path.join(bench.tmp, "lttng-trace")

    def lttng(self, *args, check=True):
        p = subprocess.run(["lttng"] + list(args), env=dict(self.bench.env, **self.env),
                           capture_output=True, text=True, timeout=60)
        if check and p.returncode != 0:
            raise RuntimeError("lttng %s: %s%s" % (" ".join(args), p.stdout, p.stderr))
        return p.stdout

    def count_entries(self):
        """Entry events the session recorded (not the ones the runs were expected to make)."""
        p = subprocess.run(["babeltrace2", self.trace_dir],
                           capture_output=True, text=True, timeout=600)
        if p.returncode != 0:
            raise RuntimeError("babeltrace2 %s: %s" % (self.trace_dir, p.stderr[-300:]))
        return sum(1 for line in p.stdout.splitlines() if "cutrace_bench:entry" in line)

    def begin(self):
        if not shutil.which("lttng") or not shutil.which("lttng-sessiond"):
            self.reason = "lttng-tools not installed (Debian package lttng-tools)"
            return
        if not shutil.which("babeltrace2"):
            self.reason = ("babeltrace2 not installed (Debian package babeltrace2): the events "
                           "recorded cannot be counted")
            return
        if not os.path.exists(self.lib):
            self.reason = "LTTng interposer not built (Debian package liblttng-ust-dev missing)"
            return
        os.makedirs(self.env["LTTNG_HOME"], exist_ok=True)
        try:
            if subprocess.run(["lttng", "list"], env=dict(self.bench.env, **self.env),
                              capture_output=True).returncode != 0:
                p = subprocess.run(["lttng-sessiond", "--daemonize", "--no-kernel"],
                                   env=dict(self.bench.env, **self.env), capture_output=True,
                                   text=True, timeout=30)
                if p.returncode != 0:
                    self.reason = "lttng-sessiond could not start: %s" % (p.stderr.strip()[-300:])
                    return
                rundir = ("/var/run/lttng" if os.geteuid() == 0 else
                          os.path.join(self.env["LTTNG_HOME"], ".lttng"))
                with open(os.path.join(rundir, "lttng-sessiond.pid")) as f:
                    self.daemon_pid = int(f.read().strip())
            self.lttng("create", self.session, "--output=" + self.trace_dir)
            self.lttng("enable-channel", "-u", "-s", self.session, "--subbuf-size=1M",
                       "--num-subbuf=8", "ch")
            self.lttng("enable-event", "-u", "-s", self.session, "-c", "ch", "cutrace_bench:*")
            self.lttng("start", self.session)
            self.ok = True
        except (RuntimeError, OSError, subprocess.SubprocessError) as e:
            self.reason = "LTTng session setup failed: %s" % str(e)[-300:]

    def end(self):
        if self.ok:
            try:
                self.lttng("stop", self.session)
                listing = self.lttng("list", self.session, "-c", "ch")
                m = re.search(r"Discarded events:\s*(\d+)", listing)
                self.discarded = int(m.group(1)) if m else None
                self.lttng("destroy", self.session)
                size = sum(os.path.getsize(os.path.join(d, f))
                           for d, _, fs in os.walk(self.trace_dir) for f in fs)
                self.recorded = self.count_entries()
                self.bytes_per_event = round(size / max(1, 2 * self.recorded), 2) \
                    if self.recorded else None
            except (RuntimeError, OSError, subprocess.SubprocessError) as e:
                self.reason = "LTTng session teardown failed: %s" % str(e)[-300:]
        if self.daemon_pid:
            try:
                os.kill(self.daemon_pid, signal.SIGTERM)
                for _ in range(100):
                    os.kill(self.daemon_pid, 0)
                    time.sleep(0.05)
            except ProcessLookupError:
                pass
            self.daemon_pid = None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", required=True, help="the build directory (make's $(B))")
    ap.add_argument("--out", required=True, help="where results.json and results.md go")
    ap.add_argument("--reps", type=int, default=0, help="repetitions (default 5, 1 with --quick)")
    ap.add_argument("--quick", action="store_true",
                    help="tiny sizes, no LTTng/ltrace: checks the harness, measures nothing")
    ap.add_argument("--base", default="58899c6",
                    help="the commit whose analyzer section 10 compares with (default 58899c6)")
    ap.add_argument("--base-only", action="store_true", help="section 10 alone")
    ap.add_argument("--writer-only", action="store_true", help="section 13 alone")
    a = ap.parse_args()
    bench = Bench(a)
    try:
        (bench.main_base_only() if a.base_only else bench.main_writer_only() if a.writer_only
         else bench.main())
    finally:
        shutil.rmtree(bench.tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
