#!/bin/sh
# File: py_package_configure_test.sh
# Layer: test/python. The Python package is in <build>/python/kairos as soon as CMake has
# configured, whatever targets are built: tools/demo.sh without torch builds only the C
# targets, and `python3 -m kairos run` then failed with "No module named kairos.__main__"
# (the package was copied by the kairos_python target only). Configures a fresh build tree
# (no build) and runs `python3 -m kairos --help` from it.
# Usage: py_package_configure_test.sh SOURCE_DIR PYTHON
set -eu
src="$1"
py="$2"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/kairos_pkgcfg_XXXXXX")
trap 'rm -rf "$tmp" "$tmp.log"' EXIT
cmake -S "$src" -B "$tmp" -DCMAKE_BUILD_TYPE=RelWithDebInfo >"$tmp.log" 2>&1 || {
  cat "$tmp.log"; rm -f "$tmp.log"; echo "FAIL: configure"; exit 1; }
rm -f "$tmp.log"
fail=0
for f in "$src"/bindings/python/kairos/*.py; do
  n=$(basename "$f")
  if ! cmp -s "$f" "$tmp/python/kairos/$n"; then
    echo "FAIL: $tmp/python/kairos/$n is missing or differs from the source after configure"
    fail=1
  fi
done
out=$(PYTHONPATH="$tmp/python" "$py" -m kairos --help 2>&1) || true
case "$out" in
  *"usage: python3 -m kairos"*) echo "ok   python3 -m kairos --help from a configured, unbuilt tree" ;;
  *) echo "FAIL: python3 -m kairos --help: $out"; fail=1 ;;
esac
[ "$fail" = 0 ] && echo "all checks passed"
exit "$fail"
