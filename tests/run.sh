#!/usr/bin/env bash
# Runs every suite runner given as an argument and sums their verdicts into the one closing
# line CI reads: "N passed, N failed, N skipped". Exits non-zero if any test failed or a runner
# did not report.
#
# Suites run CT_TEST_JOBS at a time, in the order given; by default ("auto") as many as the CPUs
# that other work leaves free, measured over a second before the first suite (at most 4, at
# least 1): many tests wait on a program more than they compute, and on a free 2-core machine
# two at once are the quickest; beside CPU-bound work one runs at a time, as the timing checks
# were made to hold beside such work. With
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
# CT_TEST_JOBS: a number, or auto (the CPUs free; the default). One suite's tests leave about
# half of the 2 cores idle (a CPU-bound build aside: 62% busy on average over 57a86de's run, one
# at a time, 18 minutes). Two at once took 18 minutes too at f625f25 and were not green: a test
# of how its own processes share the cores waited for the other suite's current test each time
# it asked for the machine alone (tracer suite 323 s -> 777 s), and the tests that had not asked
# were disturbed by the other suite's simulated devices, at real-time priority; such tests are
# now listed TEST_ALONE and run in one block per suite (tests/harness/ctt.h): two at once took
# 13.4 to 14.1 minutes at c3e5f4b..ce01c55, the build's 3 included, green.
jobs=${CT_TEST_JOBS:-auto}
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
  grep -E '^not ok ' "$logs/$i.log" >>"$logs/failed" || true
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
# Named again at the end, where a log cut to its head and tail (CI's) still shows them.
[ ! -s "$logs/failed" ] || { echo "what failed:"; cat "$logs/failed"; }
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
