"""The cost of an NVTX push/pop pair (run_bench.py, section 8; issue 15: "cost in make bench").

bench_nvtx.c (N nvtxRangePushA/nvtxRangePop pairs in bursts) runs untraced (NVTX without a tool:
NVTX_INJECTION64_PATH unset, each call returns at once) and under `cutrace run --stacks none
--gpu-timing off` (libcutrace is the NVTX tool), with a fixed name and with a new PyTorch-style
name per pair, each configuration its own process, interleaved; reported: the medians of ns per
pair and of the per-repetition difference traced - untraced. Measured, not judged: no goal.
"""
import os
import shutil
import statistics

CONFIGS = [("untraced", "static"), ("traced", "static"), ("untraced", "dynamic"),
           ("traced", "dynamic")]


def measure(bench):
    prog = os.path.join(bench.b, "tests/bench/bench_nvtx")
    # Bursts of 5000 pairs (85,000 ring words) fit a thread's 1 MiB ring (131,072 words).
    n, burst, pause = (2000, 1000, 0) if bench.quick else (50000, 5000, 110)
    per = {c: [] for c in CONFIGS}
    lost = 0
    for rep in range(bench.reps):
        for config, names in CONFIGS:
            args = [prog, str(n), str(burst), str(pause), names]
            env = dict(bench.env, FAKECUDA_INSTANT="1")
            env.pop("NVTX_INJECTION64_PATH", None)
            outdir = os.path.join(bench.tmp, "nvtx-%s-%s-%d" % (config, names, rep))
            cmd = (bench.cutrace_cmd(outdir, ["--stacks", "none", "--gpu-timing", "off"], args)
                   if config == "traced" else args)
            text, _, _, _ = bench.run(cmd, env)
            per[(config, names)].append(float(bench.kv(text, "bench_nvtx:")["ns_per_pair"]))
            if config == "traced":  # measured recording, not dropping
                lost += bench.trace_stats(bench.traces_in(outdir))["lost"]
            shutil.rmtree(outdir, ignore_errors=True)
    for (config, names), v in per.items():
        key = "nvtx_pair_ns_%s_%s" % (config, names)
        bench.results[key] = round(statistics.median(v), 1)
        bench.spread[key] = [round(min(v), 1), round(max(v), 1)]
    for names in ("static", "dynamic"):
        added = [t - u for t, u in zip(per[("traced", names)], per[("untraced", names)])]
        key = "nvtx_pair_ns_added_%s" % names
        bench.results[key] = round(statistics.median(added), 1)
        bench.spread[key] = [round(min(added), 1), round(max(added), 1)]
    bench.results["nvtx_traced_records_lost"] = lost
    bench.notes["nvtx"] = (
        "bench_nvtx %d pairs in bursts of %d, %d ms apart: nvtxRangePushA+nvtxRangePop without "
        "a tool vs under `cutrace run --stacks none --gpu-timing off`; static: the name \"step\", "
        "dynamic: a new 38-byte name per pair; %d interleaved repetitions; records the traced "
        "runs lost: nvtx_traced_records_lost" % (n, burst, pause, bench.reps))


def row(results, spread):
    return "\n".join(
        "| NVTX push/pop pair, %s name, ns added (untraced %.0f ns, traced %.0f ns) | %.0f "
        "[%.0f..%.0f] | measured | |" % (
            names, results["nvtx_pair_ns_untraced_" + names],
            results["nvtx_pair_ns_traced_" + names], results["nvtx_pair_ns_added_" + names],
            spread["nvtx_pair_ns_added_" + names][0], spread["nvtx_pair_ns_added_" + names][1])
        for names in ("static", "dynamic"))
