#!/usr/bin/env bash
# Runs every suite runner given as an argument and sums their verdicts into the one closing
# line CI reads: "N passed, N failed, N skipped". Exits non-zero if any test failed or a runner
# did not report.
#
# Suites run CT_TEST_JOBS at a time, in the order given (1 by default, below); with "auto", as
# many as the CPUs that other work leaves free, measured over a second before the first suite
# (at most 4, at least 1): many tests wait on a program more than they compute, and on a free
# 2-core machine the suite stays within 12 minutes only if two run at once; beside CPU-bound
# work one runs at a time, as the timing checks were made to hold beside such work. With
# several at once, each suite's output is shown whole when it ends, so two suites' lines never
# interleave; one at a time, as it comes.
set -u
cpus=$(nproc 2>/dev/null || echo 1)
# The CPUs free of other programs: all but the share of /proc/stat's time over a second spent
# in user mode (a CPU-bound program's); the kernel's own (the build's files written back just
# before) is not counted, as it passes.
free_cpus() {
  local a b
  a=($(head -n 1 /proc/stat 2>/dev/null)) || { echo "$cpus"; return; }
  sleep 1
  b=($(head -n 1 /proc/stat)) || { echo "$cpus"; return; }
  local total=0 user=$(( (b[1] - a[1]) + (b[2] - a[2]) ))
  for k in 1 2 3 4 5 6 7 8; do total=$((total + b[k] - a[k])); done
  [ "$total" -gt 0 ] || { echo "$cpus"; return; }
  echo $(( (cpus * (total - user) + total / 2) / total ))
}
# CT_TEST_JOBS: a number, or auto (the CPUs free). Two at once on the idle 2-core machine took
# 11 minutes at 45a5519 but 18 at f625f25 (one at a time: 14 at 1d19f90, 22 at 4699e81 the
# same day as the 18, the machine slower then), and were not green: each suite's
# simulated devices run at real-time priority, and two suites' devices take the cores from each
# other's programs as no real machine's other work does (the imagenet verdict, a fixed training
# loop's host descheduled and looking starved of data). One at a time by default.
jobs=${CT_TEST_JOBS:-1}
[ "$jobs" != auto ] || jobs=$(free_cpus)
[ "$jobs" -ge 1 ] 2>/dev/null || jobs=1
[ "$jobs" -le "$cpus" ] || jobs=$cpus
[ "$jobs" -le 4 ] || jobs=4
echo "running $# suites, $jobs at a time"
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT

# Runs runner $2 into $logs/$1.log (and to the terminal when alone), then marks it done.
run_one() {
  local i=$1 runner=$2
  if [ "$jobs" -eq 1 ]; then
    "$runner" 2>&1 | tee "$logs/$i.log"
  else
    "$runner" >"$logs/$i.log" 2>&1
  fi
  touch "$logs/$i.done"
}

pass=0 fail=0 skip=0
# Shows suite $1's output and adds its verdict.
collect() {
  local i=$1 name line p f s
  name=$(basename "${runners[$i]}")
  [ "$jobs" -eq 1 ] || cat "$logs/$i.log"
  line=$(grep -E '^[A-Za-z0-9_-]+: [0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$' "$logs/$i.log" | tail -n 1)
  if [ -z "$line" ]; then
    echo "not ok $name: runner ended without a verdict"
    fail=$((fail + 1))
  else
    read -r p f s <<<"$(echo "$line" | sed -E 's/^[^:]+: ([0-9]+) passed, ([0-9]+) failed, ([0-9]+) skipped$/\1 \2 \3/')"
    pass=$((pass + p)) fail=$((fail + f)) skip=$((skip + s))
  fi
}

runners=("$@")
running=() # indices of the suites under way
next=0
while [ "$next" -lt "${#runners[@]}" ] || [ "${#running[@]}" -gt 0 ]; do
  while [ "${#running[@]}" -lt "$jobs" ] && [ "$next" -lt "${#runners[@]}" ]; do
    run_one "$next" "${runners[$next]}" &
    running+=("$next")
    next=$((next + 1))
  done
  wait -n 2>/dev/null || true
  still=()
  for i in "${running[@]}"; do
    if [ -e "$logs/$i.done" ]; then
      collect "$i"
    else
      still+=("$i")
    fi
  done
  running=("${still[@]+"${still[@]}"}")
done
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
