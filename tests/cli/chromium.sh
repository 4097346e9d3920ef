# Shared by the report tests (sourced after common.sh): find headless Chromium (required: Debian
# package `chromium`, installed by scripts/install-deps; $CHROMIUM overrides it; when it is missing
# the test FAILS, it does not skip), open a page in it, and the checks every report page must pass.
CHROMIUM="${CHROMIUM:-$(command -v chromium || command -v chromium-browser || true)}"
if [ -z "$CHROMIUM" ] || ! [ -x "$CHROMIUM" ]; then
  bad "headless Chromium not found: install the Debian package 'chromium' (scripts/install-deps does) or set \$CHROMIUM"
  finish
fi

# Opens $1 in headless Chromium, in a window $2 px wide if given (Chromium's default otherwise); the
# DOM goes to $1.dom, Chromium's log to $1.err.
open_in_chromium() {
  local profile
  profile=$(mktemp -d "$T/profile.XXXXXX")
  timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync --disable-extensions \
    --user-data-dir="$profile" --enable-logging=stderr --v=0 --virtual-time-budget=5000 ${2:+--window-size=$2,900} \
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

# $1 = name, $2 = page, $3 = window width in px, $4 = fit | contained. Every table of the page stays
# inside its card (the <section> around it) in a window that wide, and the page itself needs no
# horizontal scrolling. "fit": the table ends within the card's content box (nothing to scroll);
# "contained": the table fits, or it sits in a box with overflow-x auto or scroll that ends within the
# card's content box (the table scrolls inside the card). Measured by a script appended to a copy of
# the page (the parser moves it into <body>), which writes its verdict into <body data-tables="...">.
check_tables_in_cards() {
  local name="$1" page="$2" width="$3" mode="$4" copy="$T/tables-$1-$3.html"
  {
    cat "$page"
    cat <<JS
<script>
window.addEventListener("load", function () {
  var mode = "$mode", bad = [];
  var page = document.documentElement.scrollWidth;
  if (page > window.innerWidth) bad.push("the page scrolls sideways: " + page + " px in a " + window.innerWidth + " px window");
  document.querySelectorAll("table").forEach(function (t, i) {
    var card = t.closest("section"), cs = getComputedStyle(card);
    var right = card.getBoundingClientRect().right - parseFloat(cs.paddingRight) - parseFloat(cs.borderRightWidth) + 0.5;
    var end = t.getBoundingClientRect().right;
    if (end <= right) return;
    var where = "table " + i + " ends at " + Math.round(end) + " px, its card's content at " + Math.round(right) + " px";
    if (mode === "fit") { bad.push(where); return; }
    var box = t.parentElement;
    while (box !== card && !/^(auto|scroll)$/.test(getComputedStyle(box).overflowX)) box = box.parentElement;
    if (box === card) bad.push(where + ", and no box scrolls it");
    else if (box.getBoundingClientRect().right > right) bad.push(where + ", and its scrolling box ends past the card");
  });
  document.body.dataset.tables = bad.length ? "bad: " + bad.join("; ") : "ok";
});
</script>
JS
  } > "$copy"
  open_in_chromium "$copy" "$width"
  grep -q 'data-tables="ok"' "$copy.dom" && ok \
    || bad "$name at $width px ($mode): $(grep -o 'data-tables="[^"]*"' "$copy.dom" || echo 'no verdict: the check did not run')"
}

# $1 = name, $2 = page. The page's tables read as tables should: no header word is hyphenated or
# broken across lines (each word of a <th> lies on one line, and the page holds no soft hyphen), cells
# holding a number (or "-" / an en dash for none, or "mean ± sd") are right-aligned and every other cell is
# left-aligned. The verdict goes into <body data-cells="...">, as check_tables_in_cards does.
check_table_cells() {
  local name="$1" page="$2" copy="$T/cells-$1.html"
  {
    cat "$page"
    cat <<'JS'
<script>
window.addEventListener("load", function () {
  var bad = [];
  if (document.body.innerHTML.indexOf("\u00ad") >= 0) bad.push("a soft hyphen in the page");
  var figure = "(-|\u2013|[-+]?[0-9][0-9,]*(\\.[0-9]+)?%?)";
  var number = new RegExp("^" + figure + "( \u00b1 " + figure + ")?$");  // a value, or mean \u00b1 sd
  document.querySelectorAll("table").forEach(function (t, i) {
    t.querySelectorAll("th").forEach(function (th) {
      if (getComputedStyle(th).hyphens === "auto") bad.push("table " + i + ": hyphens: auto on '" + th.textContent + "'");
      var walker = document.createTreeWalker(th, NodeFilter.SHOW_TEXT), node;
      while ((node = walker.nextNode())) {
        var re = /\S+/g, m;
        while ((m = re.exec(node.data))) {
          var range = document.createRange();
          range.setStart(node, m.index);
          range.setEnd(node, m.index + m[0].length);
          var tops = {};
          Array.prototype.forEach.call(range.getClientRects(), function (r) { tops[Math.round(r.top)] = 1; });
          if (Object.keys(tops).length > 1) bad.push("table " + i + ": header word '" + m[0] + "' broken across lines");
        }
      }
    });
    t.querySelectorAll("tbody td").forEach(function (td) {
      if (td.colSpan > 1) return;
      var text = td.textContent.trim(), align = getComputedStyle(td).textAlign;
      var want = number.test(text) ? "right" : "left";
      if (align !== want && !(want === "left" && align === "start"))
        bad.push("table " + i + ": '" + text.slice(0, 30) + "' is " + align + "-aligned, want " + want);
    });
  });
  document.body.dataset.cells = bad.length ? "bad: " + bad.slice(0, 8).join("; ") : "ok";
});
</script>
JS
  } > "$copy"
  open_in_chromium "$copy" 1400
  grep -q 'data-cells="ok"' "$copy.dom" && ok \
    || bad "$name: table cells: $(grep -o 'data-cells="[^"]*"' "$copy.dom" || echo 'no verdict: the check did not run')"
}
