#!/usr/bin/env bash
# Builds one layering probe target (tests/CMakeLists.txt, gpufleet_layer_probe in cmake/Layers.cmake)
# and checks the outcome.
#   probe.sh BUILD_DIR TARGET ok                 the probe must build
#   probe.sh BUILD_DIR TARGET missing HEADER     the probe must fail because HEADER is not found
#                                                (g++: "HEADER: No such file or directory";
#                                                clang: "'HEADER' file not found")
set -uo pipefail
build_dir=$1 target=$2 expect=$3 header=${4:-}
# Remove the probe's object first so that the compiler runs every time.
find "$build_dir" -path "*/${target}.dir/*" -name '*.o' -delete 2>/dev/null
out=$(cmake --build "$build_dir" --target "$target" 2>&1)
rc=$?
if [ "$expect" = ok ]; then
  if [ $rc -ne 0 ]; then
    printf '%s\n' "$out"
    echo "FAIL: $target did not build; the layers it uses must be visible"
    exit 1
  fi
  echo "ok: $target builds"
  exit 0
fi
line=$(printf '%s\n' "$out" | grep -E -m1 "(${header}: No such file or directory|'${header}' file not found)")
if [ $rc -eq 0 ] || [ -z "$line" ]; then
  printf '%s\n' "$out"
  echo "FAIL: $target was expected to fail to build because ${header} is not visible to its layer"
  exit 1
fi
echo "ok: $target fails to build, as it must:"
echo "$line"
