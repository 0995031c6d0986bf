#!/usr/bin/env bash
# The pytorch suite's virtual environment: VENV (the build passes ~/.cache/cutrace/venv, outside
# the clone, so that fresh clones reuse its 5 GB) with the packages of REQUIREMENTS. Reused when
# it imports them; otherwise PyPI is probed and, when it answers, the venv is created and the
# packages installed (about 3 GB to download). Writes STATUS for the suite: "ok VENV", or "skip
# WHY" when PyPI could not be reached (the suite's tests are then skipped, not failed). Exits
# non-zero only when PyPI answered and the installation failed.
#   tests/pytorch/venv.sh VENV REQUIREMENTS STATUS
set -u
venv=${1:?usage: venv.sh VENV REQUIREMENTS STATUS} req=${2:?} status=${3:?}
mkdir -p "$(dirname "$status")"
imports() { "$venv/bin/python" -c 'import torch, numpy, cuda.bindings.driver' 2>/dev/null; }
if imports; then
  echo "ok $venv" >"$status"
  exit 0
fi
probe=https://pypi.org/simple/torch/
if ! python3 -c "import sys, urllib.request; urllib.request.urlopen(sys.argv[1], timeout=30).read(1)" "$probe" 2>/dev/null; then
  echo "skip PyPI ($probe) could not be reached to create $venv" >"$status"
  echo "tests/pytorch/venv.sh: PyPI ($probe) could not be reached: the pytorch suite will be skipped" >&2
  exit 0
fi
echo "tests/pytorch/venv.sh: creating $venv from PyPI (about 3 GB to download)" >&2
python3 -m venv "$venv" && "$venv/bin/pip" install --quiet -r "$req" && imports || {
  echo "tests/pytorch/venv.sh: installing $req into $venv failed" >&2
  echo "fail installing $req into $venv failed" >"$status"
  exit 1
}
echo "ok $venv" >"$status"
