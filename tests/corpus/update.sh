#!/usr/bin/env bash
# Writes tests/corpus/expected/ from the traces in tests/corpus/traces/ with the given cutrace:
# what `make test`'s corpus suite compares the analyzer's output with, byte for byte. Run it (from
# the top directory) only in a commit that changes an output on purpose, and say why there.
#   bash tests/corpus/update.sh build/bin/cutrace
set -euo pipefail
cutrace=${1:?usage: tests/corpus/update.sh CUTRACE_BINARY}
cd "$(dirname "$0")/../.."
out=tests/corpus/expected
rm -rf "$out" && mkdir -p "$out"
for dir in tests/corpus/traces/*/; do
  name=$(basename "$dir")
  "$cutrace" summary "$dir" >"$out/$name.summary.txt" 2>/dev/null
  "$cutrace" summary --json "$dir" >"$out/$name.summary.json" 2>/dev/null
  "$cutrace" timeline "$dir" -o - >"$out/$name.timeline.json" 2>/dev/null
  "$cutrace" dump "$dir" >"$out/$name.dump.txt" 2>/dev/null
done
