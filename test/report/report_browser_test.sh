#!/bin/bash
# File: report_browser_test.sh
# Layer: tests for kairos_report (end to end in a real browser). Writes a synthetic two-rank
# training run as JSON traces, runs `kairos report` on them, renders the page in headless
# Chromium (no network, fresh profile), and fails on any console message, on a page whose
# closing marker script did not run, or on a missing section. Leaves report.html,
# report.png (1280x800) and the DOM dump in OUT_DIR. Skipped (exit 77) only when no
# chromium binary is installed.
# usage: report_browser_test.sh KAIROS_BIN FIXTURE_BIN OUT_DIR
set -u
kairos=$1 fixture=$2 out=$3
browser=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
if [ -z "$browser" ]; then
  echo "SKIPPED: no chromium in PATH (apt-get install -y chromium) - the report was not rendered"
  exit 77
fi
rm -rf "$out" && mkdir -p "$out" || exit 1
"$fixture" "$out" || { echo "FAIL: fixture"; exit 1; }
"$kairos" report "$out/rank0.json" "$out/rank1.json" -o "$out/report.html" --title "kairos report (synthetic 2-rank run)" \
  || { echo "FAIL: kairos report"; exit 1; }

flags=(--headless --no-sandbox --disable-gpu --disable-background-networking --disable-component-update
       --disable-sync --no-first-run --disable-default-apps --disable-extensions --hide-scrollbars
       --enable-logging=stderr --v=0 --window-size=1280,800)
profile=$(mktemp -d)
timeout 120 "$browser" "${flags[@]}" --user-data-dir="$profile/a" --screenshot="$out/report.png" \
  "file://$out/report.html" > "$out/screenshot.log" 2>&1
shot_rc=$?
timeout 120 "$browser" "${flags[@]}" --user-data-dir="$profile/b" --dump-dom \
  "file://$out/report.html" > "$out/dom.html" 2> "$out/dom.log"
dom_rc=$?
rm -rf "$profile"
fail=0
[ $shot_rc -eq 0 ] || { echo "FAIL: screenshot run exited $shot_rc"; cat "$out/screenshot.log"; fail=1; }
[ $dom_rc -eq 0 ] || { echo "FAIL: dump-dom run exited $dom_rc"; cat "$out/dom.log"; fail=1; }
[ -s "$out/report.png" ] || { echo "FAIL: no screenshot"; fail=1; }
# PNG signature and a 1280x800 IHDR.
if [ -s "$out/report.png" ]; then
  dims=$(od -An -tu1 -j16 -N8 "$out/report.png" | tr -s ' ')
  [ "$dims" = " 0 0 5 0 0 0 3 32" ] || { echo "FAIL: screenshot is not 1280x800 ($dims)"; fail=1; }
fi
# The page logs nothing; any console line (errors, SVG attribute parse errors) is a defect.
if grep -h "CONSOLE" "$out/screenshot.log" "$out/dom.log"; then echo "FAIL: console messages above"; fail=1; fi
grep -q 'data-kairos-report="ok"' "$out/dom.html" || { echo "FAIL: the marker script did not run"; fail=1; }
for id in verdict findings utilisation breakdown steps kernels cpu-ranges host ranks; do
  grep -q "<section id=\"$id\">" "$out/dom.html" || { echo "FAIL: section $id missing from the DOM"; fail=1; }
done
grep -q "<tr><td>rank 1</td>" "$out/dom.html" || { echo "FAIL: no per-rank row for rank 1"; fail=1; }
grep -q "<svg class=\"chart\"" "$out/dom.html" || { echo "FAIL: no chart in the DOM"; fail=1; }
[ $fail -eq 0 ] && echo "OK: report rendered; screenshot $out/report.png"
exit $fail
