#!/usr/bin/env bash
# Mistyped commands and options: exit 2 and one error line that names the word, suggests the known
# one it is a typo of (edit distance, as git does), and lists the commands; an option given as
# --name=value is checked by its name; a known option never trips the check.
set -u
BIN="$1"
EXAMPLES="$2"
source "$(dirname "$0")/common.sh"

# expect_usage NAME EXPECTED_LINE ARGS...: exit 2, stderr exactly the one line.
expect_usage() {
  local name="$1" want="$2"
  shift 2
  "$BIN" "$@" > /dev/null 2> "$T/err.txt"
  local rc=$?
  [ "$rc" = 2 ] && ok || bad "$name: exit $rc, want 2"
  [ "$(cat "$T/err.txt")" = "$want" ] && ok || bad "$name: stderr is '$(cat "$T/err.txt")', want '$want'"
}

commands="pack, place, simulate, compare, plan, bench-serve, serve"
expect_usage "command typo" "gpufleet: error: unknown command 'simlate': did you mean 'simulate'? (commands: $commands)" simlate
expect_usage "command swap" "gpufleet: error: unknown command 'sreve': did you mean 'serve'? (commands: $commands)" sreve
expect_usage "unknown command" "gpufleet: error: unknown command 'xyzzy' (commands: $commands)" xyzzy
expect_usage "--seed for pack" "gpufleet: error: pack: unknown option '--seed': did you mean '--seeds'? (see gpufleet pack --help)" \
  pack --seed 42
expect_usage "--seeds for simulate" \
  "gpufleet: error: simulate: unknown option '--seeds': did you mean '--seed'? (see gpufleet simulate --help)" simulate --seeds 3
# The typo is said even when a required option is missing too (CLI11 alone would say only that).
expect_usage "option typo" "gpufleet: error: place: unknown option '--polcy': did you mean '--policy'? (see gpufleet place --help)" \
  place --polcy fgd
expect_usage "option=value typo" \
  "gpufleet: error: place: unknown option '--workloads': did you mean '--workload'? (see gpufleet place --help)" \
  place --cluster "$EXAMPLES" --workloads="$EXAMPLES"
expect_usage "far from every option" "gpufleet: error: place: unknown option '--zzzzzzzzzz' (see gpufleet place --help)" \
  place --zzzzzzzzzz
# Known options, with = or a negative value, pass the check (the policy's own error follows).
"$BIN" place --cluster "$EXAMPLES" --policy=nope -q > /dev/null 2> "$T/err.txt"
grep -q "^gpufleet: error: --policy: unknown policy 'nope'" "$T/err.txt" && ok || bad "known option=value: $(cat "$T/err.txt")"
"$BIN" place --cluster "$EXAMPLES" --workload "$EXAMPLES" --policy=fgd -q > /dev/null 2>&1 && ok || bad "place --policy=fgd should run"
finish
