#!/usr/bin/env bash
# Replays one libFuzzer target once over its seed corpus, for CTest (fuzz_replay_<target>,
# tests/CMakeLists.txt; the binaries come from the sanitizer build, fuzz/CMakeLists.txt):
#
#   tests/cli/fuzz_replay.sh BINARY INPUT...     INPUT: a seed file, or a folder of them (recursive)
#
# libFuzzer with -runs=0 executes every input once (and the empty input) and stops. A crash, a
# sanitizer report (ASan, UBSan and LeakSanitizer halt), an exception other than the reader's
# rejection, a timeout (10 s per input) or memory above 512 MB (fuzz/finding.sh) is a finding: the
# script prints what it is, the input's path and libFuzzer's report, goes on with the other inputs,
# and exits 1 at the end. Exit status: 0 no finding; 1 findings, or a missing binary or input.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../../fuzz/finding.sh
source "$here/../../fuzz/finding.sh"
bin=$1
shift
name=$(basename "$bin")
if [ ! -x "$bin" ]; then
  echo "fuzz_replay: $bin is not built (the normal build builds it in build/sanitize: ninja -C build)"
  exit 1
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/fuzz_replay.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir "$work/inputs" "$work/artifacts"
# Every input copied into one folder: libFuzzer checks each seed of a corpus folder for leaks on its
# own (it does not when it is given files), and the copies are numbered so a finding maps back.
n=0
add() {
  n=$((n + 1))
  local id
  id=$(printf 'in%05d' "$n")
  cp "$1" "$work/inputs/$id"
  printf '%s\t%s\n' "$id" "$1" >>"$work/names"
}
for input in "$@"; do
  if [ -d "$input" ]; then
    while IFS= read -r -d '' f; do add "$f"; done < <(find "$input" -type f ! -name '.*' -print0 | sort -z)
  elif [ -f "$input" ]; then
    add "$input"
  else
    echo "fuzz_replay: no such seed file or folder: $input"
    exit 1
  fi
done
if [ "$n" -eq 0 ]; then
  echo "fuzz_replay: no inputs in $*"
  exit 1
fi

findings=0
start=$EPOCHREALTIME
while :; do
  rm -f "$work/artifacts/"*
  rc=0
  # timeout: a bound on the whole run (inputs are small; each has -timeout=10), so that a stuck
  # process never outlives the test.
  timeout -k 10 240 "$bin" -runs=0 "${FUZZ_FLAGS[@]}" -artifact_prefix="$work/artifacts/" "$work/inputs" \
    >"$work/log" 2>&1 || rc=$?
  [ "$rc" -eq 0 ] && break
  artifact=$(find "$work/artifacts" -type f ! -name 'slow-unit-*' | head -n 1)
  if [ -z "$artifact" ]; then
    grep -v $'^\t0x' "$work/log"
    echo "fuzz_replay: $name failed ($(fuzz_finding "$work/log" "$rc")) without saving the input it failed on"
    exit 1
  fi
  match=""
  for f in "$work/inputs"/*; do
    if cmp -s "$f" "$artifact"; then
      match=$f
      break
    fi
  done
  findings=$((findings + 1))
  if [ -z "$match" ]; then
    what="an input that is none of the seeds (size $(stat -c %s "$artifact") bytes; the empty input if 0)"
  else
    what=$(grep "^$(basename "$match")	" "$work/names" | cut -f2-)
  fi
  echo "=== finding $findings: $(fuzz_finding "$work/log" "$rc")"
  echo "    input: $what"
  # libFuzzer's report, without its banner and the process map ASan prints on out-of-memory.
  sed -n '/^INFO: seed corpus:/,$p' "$work/log" | grep -v -e $'^\t0x' -e '^INFO: seed corpus:' || cat "$work/log"
  echo
  [ -n "$match" ] || break
  rm -f "$match"
  [ -n "$(ls -A "$work/inputs")" ] || break
done
elapsed=$(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')
if [ "$findings" -gt 0 ]; then
  echo "fuzz_replay: $name: $findings finding(s) in $n inputs, $elapsed s; reproduce with: $bin <input>"
  exit 1
fi
runs=$(grep -o 'Done [0-9]* runs' "$work/log" | grep -o '[0-9]*' || echo "?")
echo "fuzz_replay: $name: $n inputs (libFuzzer: $runs runs), no finding, $elapsed s"
