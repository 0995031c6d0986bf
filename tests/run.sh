#!/usr/bin/env bash
# Runs every suite runner given as an argument and sums their verdicts into the one closing
# line CI reads: "N passed, N failed, N skipped". Exits non-zero if any test failed or a runner
# did not report.
#
# Suites run CT_TEST_JOBS at a time (default: the CPUs online, at most 4), in the order given:
# many tests wait on a program more than they compute, and the suite stays within its time on a
# 2-core machine only if two run at once. Each suite's output is shown whole when it ends, so
# two suites' lines never interleave. A timing check compares with the simulation's truth or the
# workload's own figures (README, "How it is tested"), so a suite beside another still holds.
set -u
jobs=${CT_TEST_JOBS:-$(nproc 2>/dev/null || echo 1)}
[ "$jobs" -ge 1 ] 2>/dev/null || jobs=1
[ "$jobs" -le 4 ] || jobs=4
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT

# Runs runner $2 into $logs/$1.log, then writes its verdict to $logs/$1.done.
run_one() {
  local i=$1 runner=$2
  "$runner" >"$logs/$i.log" 2>&1
  echo $? >"$logs/$i.done"
}

pass=0 fail=0 skip=0
# Shows suite $1's output and adds its verdict.
collect() {
  local i=$1 name line p f s
  name=$(basename "${runners[$i]}")
  cat "$logs/$i.log"
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
