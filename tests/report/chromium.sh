#!/usr/bin/env bash
# The report suite's browser: Debian's chromium, installed with apt-get when missing (CI runs
# as root). Writes STATUS for the suite: "ok PATH", or "skip WHY" when it is not installed and
# could not be (not root, no apt-get, the installation failed: the suite's browser tests are then
# skipped, not failed). Run before the suite every time; cheap when chromium is there.
#   tests/report/chromium.sh STATUS
set -u
status=${1:?usage: chromium.sh STATUS}
mkdir -p "$(dirname "$status")"
works() { command -v chromium >/dev/null && timeout 60 chromium --version >/dev/null 2>&1; }
if ! works; then
  if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
    why="chromium is not installed and this is not root with apt-get (apt-get install -y chromium)"
  else
    echo "tests/report/chromium.sh: installing chromium with apt-get" >&2
    log=$(mktemp)
    export DEBIAN_FRONTEND=noninteractive # no question may wait for an answer
    { apt-get install -y -qq chromium || { apt-get update -qq && apt-get install -y -qq chromium; }; } \
      >"$log" 2>&1
    why="apt-get install -y chromium failed: $(tail -n 1 "$log")"
    rm -f "$log"
  fi
  if ! works; then
    echo "skip $why" >"$status"
    echo "tests/report/chromium.sh: $why: the report suite's browser tests will be skipped" >&2
    exit 0
  fi
fi
echo "ok $(command -v chromium)" >"$status"
