#!/usr/bin/env bash
# Seeds the fuzz corpora with real traces: the workloads run under `cutrace run` on the simulated
# CUDA stack (small sizes, stacks and GPU timing on) and tracegen's synthetic training loops,
# each kept as written (zstd chunks) and rewritten with stored chunks by rawify, so that mutations
# reach the records. Usage: seeds.sh BUILD_DIR CORPUS_DIR
set -eu
B=$1 OUT=$2
W=$B/tests/workloads
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$OUT"
export LD_LIBRARY_PATH=$B/tests/fakecuda FAKECUDA_HOST_KERNELS=$W/libworkload_kernels.so
run() { # NAME CUTRACE-RUN-OPTIONS... -- CMD...
  local name=$1; shift
  { "$B/bin/cutrace" run -q -o "$tmp/$name" "$@" >/dev/null 2>&1; } 2>/dev/null || true
}
run train    --stacks all --gpu-timing all -- "$W/train_loop" --iters 2 --layers 1 --loader-ms 1
run pinned   --gpu-timing 2 -- "$W/train_loop" --iters 2 --layers 1 --loader-ms 1 --memory pinned --prefetch
run threads  --gpu-timing all -- "$W/threads" --threads 3 --rounds 2
run vram     --stacks all -- "$W/vram_peak"
run driver   -- "$W/driver_api"
run killed   -- "$W/dies" --how kill --steps 3 --step-ms 150
run aborted  -- "$W/dies" --how abort --steps 2 --step-ms 10
# host samples of a process tree (forked workers, FORMAT.md 4.11), sampled often
CUTRACE_HOST_SAMPLE_MS=20 run tree -- "$W/loader_tree" 2 20 4096 100 "$tmp/tree.data"
"$B/tests/analyzer/tracegen" -o "$tmp/gen" --iters 3 --kernels 4 --churn --oom >/dev/null
"$B/tests/analyzer/tracegen" -o "$tmp/gen2" --iters 2 --kernels 2 --ranks 2 --prefetch --pinned >/dev/null
# a kernel name that is not UTF-8 and that a spreadsheet would run (the report's page, the CSV)
"$B/tests/analyzer/tracegen" -o "$tmp/name" --iters 2 --name $'=HYPERLINK("x")\xff\x01' >/dev/null
n=0
for f in "$tmp"/*/*.cutrace; do
  [ -f "$f" ] || continue
  base=$(basename "$(dirname "$f")")-$n
  # Large traces slow every execution; the loops they repeat add no coverage.
  [ "$(stat -c %s "$f")" -le 262144 ] || continue
  cp "$f" "$OUT/$base.cutrace"
  "$B/fuzz/rawify" "$f" "$OUT/$base-raw.cutrace" 2>/dev/null && \
    { [ "$(stat -c %s "$OUT/$base-raw.cutrace")" -le 262144 ] || rm -f "$OUT/$base-raw.cutrace"; }
  n=$((n + 1))
done
echo "fuzz seeds: $(ls "$OUT" | wc -l) traces in $OUT"
