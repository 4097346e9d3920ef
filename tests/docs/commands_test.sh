#!/usr/bin/env bash
# Every command in the ```sh blocks of README.md and docs/*.md runs as written from the checkout (after
# scripts/demo): it is run with bash from the checkout's root and must exit 0.
#
#   tests/docs/commands_test.sh SOURCE_DIR GPUFLEET_BINARY
#
# Conventions for the documentation (this test enforces them):
# - A ```sh block holds only commands that a reader can paste: one command per line (a line ending in
#   "\" continues on the next), no prompt ("$ "), no output, no <placeholder>. Blank lines and lines
#   that start with "#" are skipped. The binary is build/gpufleet, never a bare `gpufleet`.
# - Usage lines with placeholders (FILE, NAME, [--option]) and command output go in ```text blocks.
#   Every fence says its language (sh, text, yaml, json); a bare ``` is an error here.
# - A marker, an HTML comment on the line right before the opening ```sh (invisible when rendered):
#     <!-- doc-test: skip REASON -->        the block is not run; the test prints REASON.
#     <!-- doc-test: quick s/FROM/TO/ -->   each command of the block runs with this sed -E substitution
#                                           applied (for example fewer seeds), to keep the test short;
#                                           it must change at least one command of the block.
# - A command that reads ../shared/ (the traces) is skipped with a message when ../shared/traces is
#   absent beside the checkout. A command that exits 77 counts as skipped (the kube-scheduler
#   differential test does when its simulator is absent). A command whose program is a binary under
#   build/ that is not built (build/bench/ with -DGPUFLEET_BUILD_BENCH=OFF) is skipped with a message.
# - Each command has 120 s (the longest documented ones take about 30 s on an idle 2-core machine,
#   and the suite runs beside other tests). out/ is created first (scripts/demo creates it); commands may write there.
# - When GPUFLEET_BINARY is not SOURCE_DIR/build/gpufleet, "build/gpufleet" in a command runs it.
# The relative links of these files ([text](path#anchor)) must name a file of the checkout and a
# heading of it (GitHub's anchors: the heading in lower case, without punctuation, spaces as "-").
set -u
SRC=$(cd "$1" && pwd)
BIN=$(realpath "$2")
source "$(dirname "$0")/../cli/common.sh"
cd "$SRC" || exit 1
mkdir -p out

files=(README.md docs/*.md)
where=() cmds=() marks=() blocks=()
block=0
# Reads the ```sh blocks of $1 into where/cmds/marks, and checks the fences and the commands' form.
collect() {
  local file="$1" n=0 line in_block=0 lang="" mark="" block_mark="" cmd="" at=""
  while IFS= read -r line || [ -n "$line" ]; do
    n=$((n + 1))
    if [ "$in_block" = 0 ]; then
      if [[ $line =~ ^[[:space:]]*\`\`\`([A-Za-z]*)[[:space:]]*$ ]]; then
        in_block=1; lang="${BASH_REMATCH[1]}"; block_mark="$mark"; mark=""; block=$((block + 1))
        [ -n "$lang" ] || bad "$file:$n: a fence without a language (sh for commands, text for usage and output)"
        [[ $lang == sh || -z $block_mark ]] || bad "$file:$n: a doc-test marker before a $lang block"
      elif [[ $line =~ ^\<!--\ doc-test:\ (.*)\ --\>$ ]]; then
        mark="${BASH_REMATCH[1]}"
        [[ $mark =~ ^(skip\ .+|quick\ s.+)$ ]] || bad "$file:$n: unknown marker '$mark' (skip REASON | quick s/FROM/TO/)"
      else
        mark=""
      fi
      continue
    fi
    if [[ $line =~ ^[[:space:]]*\`\`\`[[:space:]]*$ ]]; then
      [ -z "$cmd" ] || bad "$file:$at: the command ends in '\\' at the end of its block"
      in_block=0; cmd=""; continue
    fi
    [ "$lang" = sh ] || continue
    if [ -z "$cmd" ]; then
      [[ $line =~ ^[[:space:]]*(#.*)?$ ]] && continue
      at=$n
    fi
    if [[ $line == *\\ ]]; then cmd+="${line%\\}"; continue; fi
    cmd+="$line"
    [[ $cmd =~ ^[[:space:]]*\$\  ]] && bad "$file:$at: a prompt ('\$ ') in a sh block: put output in a text block"
    [[ $cmd =~ (^|[[:space:]\;\|\&\(])gpufleet[[:space:]] ]] && bad "$file:$at: bare 'gpufleet': write build/gpufleet"
    [[ $cmd =~ \<[A-Za-z_-]+\> ]] && bad "$file:$at: a <placeholder> in a sh block: $cmd"
    where+=("$file:$at"); cmds+=("$cmd"); marks+=("$block_mark"); blocks+=("$block")
    cmd=""
  done < "$file"
  [ "$in_block" = 0 ] || bad "$file: a fence is not closed"
}
for f in "${files[@]}"; do collect "$f"; done

# The anchors of markdown file $1, one per line: its headings outside code blocks, as GitHub makes them.
anchors() {
  awk '/^[[:space:]]*```/ { code = !code; next } !code && /^#+ / { sub(/^#+ /, ""); print }' "$1" |
    tr '[:upper:]' '[:lower:]' | sed -E 's/[^a-z0-9 _-]//g; s/ /-/g'
}
for f in "${files[@]}"; do
  while IFS= read -r link; do
    target="${link%%#*}" anchor=""
    [[ $link == *#* ]] && anchor="${link#*#}"
    if [ -z "$target" ]; then path="$f"; else path=$(realpath -m --relative-to=. "$(dirname "$f")/$target"); fi
    if [ ! -e "$path" ]; then
      bad "$f: link to $link: no file $path"; continue
    fi
    if [ -n "$anchor" ] && ! anchors "$path" | grep -qx -- "$anchor"; then
      bad "$f: link to $link: $path has no heading with anchor #$anchor"
    else ok; fi
  done < <(grep -oE '\]\([^)[:space:]]+\)' "$f" | sed -E 's/^\]\((.*)\)$/\1/' | grep -vE '^(https?:|mailto:)')
done
[ "${#cmds[@]}" -ge 10 ] && ok || bad "found only ${#cmds[@]} commands in ${files[*]}: is the parser broken?"

same_bin=true
[ "$(realpath -m build/gpufleet)" = "$BIN" ] || same_bin=false
have_traces=false
[ -d ../shared/traces ] && have_traces=true
declare -A quick_changed=()
start=$SECONDS
for i in "${!cmds[@]}"; do
  cmd="${cmds[$i]}" mark="${marks[$i]}"
  case "$mark" in
    skip\ *) echo "skipped ${where[$i]}: ${mark#skip }: $cmd"; continue ;;
    quick\ *)
      quick=$(sed -E "${mark#quick }" <<< "$cmd") || bad "${where[$i]}: bad sed expression '${mark#quick }'"
      [ "$quick" = "$cmd" ] || quick_changed[${blocks[$i]}]=1
      quick_changed[${blocks[$i]}]=${quick_changed[${blocks[$i]}]:-0}
      cmd="$quick" ;;
  esac
  if [[ $cmd == *../shared/* ]] && ! $have_traces; then
    echo "skipped ${where[$i]}: ../shared/traces is absent: $cmd"; continue
  fi
  program=${cmd%% *}
  if [[ $program == build/* && $program != build/gpufleet && ! -x $program ]]; then
    echo "skipped ${where[$i]}: $program is not built: $cmd"; continue
  fi
  $same_bin || cmd="${cmd//build\/gpufleet/$BIN}"
  t0=$SECONDS
  timeout 120 bash -c "$cmd" > "$T/out.txt" 2> "$T/err.txt" < /dev/null
  rc=$?
  if [ "$rc" = 0 ]; then ok; echo "ok ${where[$i]} ($((SECONDS - t0)) s): $cmd"
  elif [ "$rc" = 77 ]; then echo "skipped ${where[$i]} (exit 77): $(cat "$T/out.txt" "$T/err.txt" | grep . | tail -1)"
  else bad "${where[$i]}: exit $rc$([ "$rc" = 124 ] && echo ' (timed out after 120 s)'): $cmd
$(tail -5 "$T/err.txt")"; fi
done
for b in "${!quick_changed[@]}"; do
  [ "${quick_changed[$b]}" = 1 ] || bad "a doc-test quick marker changes no command of its block (block $b)"
done
echo "${#cmds[@]} commands in ${#files[@]} files, $((SECONDS - start)) s"
finish
