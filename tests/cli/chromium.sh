# Shared by the report tests (sourced after common.sh): find headless Chromium (required: Debian
# package `chromium`, installed by scripts/install-deps; $CHROMIUM overrides it; when it is missing
# the test FAILS, it does not skip), open a page in it, and the checks every report page must pass.
CHROMIUM="${CHROMIUM:-$(command -v chromium || command -v chromium-browser || true)}"
if [ -z "$CHROMIUM" ] || ! [ -x "$CHROMIUM" ]; then
  bad "headless Chromium not found: install the Debian package 'chromium' (scripts/install-deps does) or set \$CHROMIUM"
  finish
fi

# Opens $1 in headless Chromium; the DOM goes to $1.dom, Chromium's log to $1.err.
open_in_chromium() {
  local profile
  profile=$(mktemp -d "$T/profile.XXXXXX")
  timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync --disable-extensions \
    --user-data-dir="$profile" --enable-logging=stderr --v=0 --virtual-time-budget=5000 \
    --dump-dom "file://$1" > "$1.dom" 2> "$1.err"
}

# Script errors and console output of the page, as Chromium logs them (its own dbus/GPU noise is not).
page_messages() { grep -E 'CONSOLE|Uncaught|SyntaxError' "$1.err"; }

# $1 = name, $2 = path: the page opens, renders (data-rendered="ok"), shows no error, logs nothing,
# and loads no script, stylesheet, image or frame from the network.
check_page_basics() {
  local name="$1" html="$2"
  open_in_chromium "$html"
  local rc=$?
  [ "$rc" = 0 ] && ok || bad "$name: chromium exited $rc: $(tail -5 "$html.err")"
  grep -q 'data-rendered="ok"' "$html.dom" && ok \
    || bad "$name: the page did not render (no data-rendered=\"ok\"): $(grep -o 'data-rendered="[a-z]*"' "$html.dom")"
  grep -q '<pre id="errors"></pre>' "$html.dom" && ok \
    || bad "$name: #errors is not empty: $(sed -n '/<pre id="errors">/,/<\/pre>/p' "$html.dom" | head -20)"
  page_messages "$html" > "$html.msgs"
  [ ! -s "$html.msgs" ] && ok || bad "$name: the page logged errors or console output: $(head -10 "$html.msgs")"
  if grep -Eio "<(script|link|img|iframe)[^>]*(src|href)=[\"']?(https?:)?//[^\"' >]*" "$html"; then
    bad "$name: references a network URL (above)"
  else ok; fi
}

# $1 = a good page: a copy whose render script throws must be caught (data-rendered="error", the
# message in #errors).
check_sabotage_is_caught() {
  sed 's|if (typeof Chart === "undefined")|throw new Error("sabotaged for the test"); &|' "$1" > "$T/broken.html"
  cmp -s "$1" "$T/broken.html" && bad "could not sabotage the report (render script changed?)" || ok
  open_in_chromium "$T/broken.html"
  grep -q 'data-rendered="error"' "$T/broken.html.dom" && ok || bad "sabotaged page: want data-rendered=\"error\""
  grep -q 'sabotaged for the test' "$T/broken.html.dom" && ok || bad "sabotaged page: error not shown in #errors"
  page_messages "$T/broken.html" | grep -q 'Uncaught' && ok || bad "sabotaged page: Chromium log lacks the Uncaught error"
}
