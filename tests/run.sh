#!/usr/bin/env bash
# Runs every suite runner given as an argument and sums their verdicts into the one closing
# line CI reads: "N passed, N failed, N skipped". Exits non-zero if any test failed or a runner
# did not report.
set -u
pass=0 fail=0 skip=0
for runner in "$@"; do
  name=$(basename "$runner")
  log=$(mktemp)
  "$runner" 2>&1 | tee "$log"
  line=$(grep -E '^[A-Za-z0-9_-]+: [0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$' "$log" | tail -n 1)
  if [ -z "$line" ]; then
    echo "not ok $name: runner ended without a verdict"
    fail=$((fail + 1))
  else
    read -r p f s <<<"$(echo "$line" | sed -E 's/^[^:]+: ([0-9]+) passed, ([0-9]+) failed, ([0-9]+) skipped$/\1 \2 \3/')"
    pass=$((pass + p)) fail=$((fail + f)) skip=$((skip + s))
  fi
  rm -f "$log"
done
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
