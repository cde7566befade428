#!/bin/sh
# File: symbols_test.sh
# Layer: test/capi. The dynamic symbols libkairos.so defines must equal the checked-in list
# (exported_symbols.txt): a new export is a deliberate ABI change. Update the list when
# adding an entry point.
# Usage: symbols_test.sh LIBKAIROS LIST [EXTRA_LIST]   (EXTRA_LIST: CUDA builds)
set -eu
actual=$(nm -D --defined-only "$1" | awk '$2 ~ /^[TDBRVW]$/ {print $3}' | sed 's/@.*//' | \
  grep -v -E '^(_init|_fini|_edata|_end|__bss_start)$' | sort -u)
expected=$(cat "$2" ${3:+"$3"} | grep -v '^#' | sed '/^$/d' | sort -u)
if [ "$actual" != "$expected" ]; then
  echo "FAIL: exported symbols differ from $2 (< expected, > actual):"
  tmp=${TMPDIR:-/tmp}
  printf '%s\n' "$expected" > "$tmp/kairos_sym_expected.$$"
  printf '%s\n' "$actual" > "$tmp/kairos_sym_actual.$$"
  diff "$tmp/kairos_sym_expected.$$" "$tmp/kairos_sym_actual.$$" || true
  rm -f "$tmp/kairos_sym_expected.$$" "$tmp/kairos_sym_actual.$$"
  exit 1
fi
echo "PASS: $(printf '%s\n' "$actual" | wc -l) symbols"
