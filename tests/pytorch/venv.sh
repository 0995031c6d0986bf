#!/usr/bin/env bash
# A test suite's virtual environment: VENV (outside the clone, under ~/.cache/cutrace/, so that
# fresh clones reuse it: the pytorch suite's holds 5 GB) with the packages of REQUIREMENTS.
# Reused when it imports MODULES (a Python import list); otherwise PyPI is probed (the first
# requirement's page) and, when it answers, the venv is created and the packages installed.
# Writes STATUS for the suite: "ok VENV", or "skip WHY" when PyPI could not be reached (the
# suite's tests are then skipped, not failed). Exits non-zero only when PyPI answered and the
# installation failed. The pytorch suite's (torch, about 3 GB to download) and the analyzer's
# (duckdb, for the export test).
#   tests/pytorch/venv.sh VENV REQUIREMENTS STATUS MODULES
set -u
venv=${1:?usage: venv.sh VENV REQUIREMENTS STATUS MODULES} req=${2:?} status=${3:?} modules=${4:?}
mkdir -p "$(dirname "$status")"
imports() { "$venv/bin/python" -c "import $modules" 2>/dev/null; }
if imports; then
  echo "ok $venv" >"$status"
  exit 0
fi
probe=https://pypi.org/simple/$(sed -n '/^[A-Za-z]/{s/[=<>~ ].*//;p;q}' "$req")/
if ! python3 -c "import sys, urllib.request; urllib.request.urlopen(sys.argv[1], timeout=30).read(1)" "$probe" 2>/dev/null; then
  echo "skip PyPI ($probe) could not be reached to create $venv" >"$status"
  echo "tests/pytorch/venv.sh: PyPI ($probe) could not be reached: the tests that need $venv will be skipped" >&2
  exit 0
fi
echo "tests/pytorch/venv.sh: creating $venv from PyPI ($req)" >&2
python3 -m venv "$venv" && "$venv/bin/pip" install --quiet -r "$req" && imports || {
  echo "tests/pytorch/venv.sh: installing $req into $venv failed" >&2
  echo "fail installing $req into $venv failed" >"$status"
  exit 1
}
echo "ok $venv" >"$status"
