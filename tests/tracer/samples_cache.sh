#!/bin/sh
# cuda-samples' build (samples.mk) kept outside the clone, as the suites' virtual environments are,
# so that a fresh clone does not run nvcc for 140 CPU-seconds on sources that did not change. The
# key is everything the build reads: nvcc's and the host compiler's versions, samples.mk, and the
# contents of the sample directories and Common/ of ../shared's cuda-samples.
#
#   samples_cache.sh restore CACHE OUT SAMPLES NVCC
#       once per build directory: if CACHE holds the key's build, copies it into OUT with fresh
#       times (make then finds every program up to date) and prints where it came from
#   samples_cache.sh store CACHE OUT SAMPLES NVCC
#       after a complete build of every sample: copies OUT into CACHE under the key
#
# An empty CACHE turns both off. A store is written aside and renamed into place, so that a build
# killed half-way is never taken for a whole one.
set -eu
op=$1 cache=$2 out=$3 samples=$4 nvcc=$5
[ -n "$cache" ] || exit 0
mark="$out/.samples-cache"
[ ! -e "$mark" ] || exit 0

key=$( {
    "$nvcc" --version
    for c in gcc g++; do "$c" --version 2>/dev/null | head -n 1; done
    sha256sum < "$(dirname "$0")/samples.mk"
    cd "$samples" && find Samples/0_Introduction Common -type f -print0 | LC_ALL=C sort -z |
        xargs -0 sha256sum
} | sha256sum | cut -c1-32)
dir="$cache/$key"

case $op in
restore)
    [ -e "$dir/.complete" ] || exit 0
    mkdir -p "$out"
    cp -a "$dir/." "$out/"
    find "$out" -exec touch {} +
    echo "$key" > "$mark"
    echo "cuda-samples: nvcc's build restored from $dir (built $(cat "$dir/.complete"))"
    ;;
store)
    [ ! -e "$dir/.complete" ] || exit 0
    mkdir -p "$cache"
    tmp=$(mktemp -d "$cache/.new.XXXXXX")
    trap 'rm -rf "$tmp"' EXIT
    cp -a "$out/." "$tmp/"
    date -u +%Y-%m-%dT%H:%M:%SZ > "$tmp/.complete"
    # another run may have stored the same key meanwhile: its copy stands
    mv -T "$tmp" "$dir" 2>/dev/null || true
    echo "$key" > "$mark"
    echo "cuda-samples: nvcc's build kept in $dir"
    ;;
*)
    echo "samples_cache.sh: expected restore or store, found '$op'" >&2
    exit 2
    ;;
esac
