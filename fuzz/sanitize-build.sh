#!/usr/bin/env bash
# Configures the sanitizer build in build/sanitize if it is not configured yet (clang++, ASan + UBSan,
# GPUFLEET_SANITIZE=ON; the same flags as the ExternalProject of the normal build, fuzz/CMakeLists.txt)
# and builds the given ninja targets there (default: fuzz, every fuzz target). Used by scripts/fuzz and
# `scripts/test --sanitize`. Installs missing Debian packages first, as scripts/build does.
# GPUFLEET_JOBS sets the parallel jobs (default: the number of cores).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps
dir=build/sanitize
mkdir -p build
# One ninja at a time in build/sanitize: the normal build's ExternalProject takes the same lock.
exec 9>build/sanitize.lock
if ! flock -n 9; then
  echo "waiting for another build in $dir (build/sanitize.lock)" >&2
  flock 9
fi
if [ ! -f "$dir/build.ninja" ]; then
  clang=$(command -v clang++ || true)
  if [ -z "$clang" ]; then
    echo "fuzz/sanitize-build.sh: clang++ not found; scripts/install-deps installs clang and libclang-rt-14-dev" >&2
    exit 1
  fi
  echo "configuring $dir (clang++, ASan + UBSan)" >&2
  cmake -S . -B "$dir" -G Ninja -DCMAKE_CXX_COMPILER="$clang" -DCMAKE_BUILD_TYPE=Debug \
    -DGPUFLEET_SANITIZE=ON -DGPUFLEET_BUILD_BENCH=OFF >/dev/null
fi
[ $# -gt 0 ] || set -- fuzz
ninja -C "$dir" -j "${GPUFLEET_JOBS:-$(nproc)}" "$@"
