# Sourced by scripts/fuzz and tests/cli/fuzz_replay.sh: the fuzzing settings they share, and a
# one-line description of a libFuzzer finding.

# Memory: ASan's hard_rss_limit_mb enforces the 512 MB limit (quick: it saves the input and exits).
# libFuzzer's own -rss_limit_mb is only a backstop above it, because its out-of-memory path first
# prints a heap profile that takes minutes on a large heap (seen with yaml-cpp 0.7 looping on ',').
# Single allocations above 512 MB are caught by -malloc_limit_mb. ASan's quarantine of freed memory
# (kept to find use-after-free) is cut from 256 to 64 MB: with the default, a long run's RSS creeps
# to 512 MB with no input at fault (seen on json_request_fuzz after 20 s; 64 MB: flat at 180 MB).
FUZZ_MEMORY_MB=512
FUZZ_FLAGS=(-timeout=10 -rss_limit_mb=2048 "-malloc_limit_mb=$FUZZ_MEMORY_MB")
export ASAN_OPTIONS="halt_on_error=1:detect_leaks=1:hard_rss_limit_mb=$FUZZ_MEMORY_MB:quarantine_size_mb=64${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"

# fuzz_finding LOG [EXIT_STATUS]: what libFuzzer reported in LOG, in one line.
fuzz_finding() {
  local log=$1 rc=${2:-?} line
  if line=$(grep -m1 "terminate called after throwing an instance of" "$log"); then
    local type what
    type=$(sed "s/.*instance of '\(.*\)'.*/\1/" <<<"$line")
    what=$(grep -m1 "^  what(): " "$log" | sed 's/^  what(): *//' || true)
    echo "uncaught exception $type${what:+: $what}"
  elif line=$(grep -m1 "fuzz invariant failed: " "$log"); then
    echo "${line#*fuzz }"
  elif line=$(grep -m1 "runtime error: " "$log"); then
    echo "UndefinedBehaviorSanitizer: ${line##*/}"
  elif line=$(grep -m1 -E "hard rss limit exhausted|ERROR: libFuzzer: out-of-memory" "$log"); then
    echo "out of memory (over $FUZZ_MEMORY_MB MB): $(sed 's/^==[0-9]*== *//' <<<"$line")"
  elif grep -q "ERROR: libFuzzer: timeout" "$log"; then
    echo "timeout: an input ran longer than 10 s"
  elif grep -q "ERROR: LeakSanitizer" "$log"; then
    echo "LeakSanitizer: $(grep -m1 -E '^(Direct|Indirect) leak of' "$log" || echo "memory leak")"
  elif line=$(grep -m1 "ERROR: AddressSanitizer: " "$log"); then
    line=${line#*ERROR: AddressSanitizer: }
    # The kind and, for where, the first stack frame in gpufleet's own code.
    local where
    where=$(grep -m1 -oE ' /[^ ]*/(src|fuzz)/[^ ]+:[0-9]+(:[0-9]+)?$' "$log" | sed -E 's#^ .*/((src|fuzz)/)#\1#' || true)
    echo "AddressSanitizer: ${line%% on *}${where:+ in $where}"
  elif line=$(grep -m1 "ERROR: libFuzzer: " "$log"); then
    echo "libFuzzer: ${line#*ERROR: libFuzzer: }"
  else
    echo "exit status $rc"
  fi
}
