#!/bin/sh
# File: signal_test.sh
# Layer: test/capi. KAIROS_FLUSH_ON_SIGNAL=1: SIGTERM during a window closes and writes it,
# then the previous handler runs: the default action (the process dies of SIGTERM), or the
# program's own handler (installed before kairos). Without the variable nothing is written.
# Usage: signal_test.sh LIBKAIROS TARGET
set -u
lib=$1; target=$2
dir=$(mktemp -d /tmp/kairos_signal_XXXXXX)
trap 'rm -rf "$dir"' EXIT
export KAIROS_CUPTI_LIBRARY=$dir/none/libcupti.so.13 KAIROS_LOG_LEVEL=error

KAIROS_FLUSH_ON_SIGNAL=1 "$target" "$lib" "$dir/a.json"; rc=$?
[ "$rc" = 143 ] || { echo "FAIL: default action: exit status $rc, wanted 143 (SIGTERM)"; exit 1; }
python3 -c "
import json, sys
d = json.load(open(sys.argv[1]))
assert any(e.get('name') == 'before_signal' for e in d['traceEvents'])
" "$dir/a_"[0-9]*.json || { echo "FAIL: no trace with the range after SIGTERM"; ls "$dir"; exit 1; }

KAIROS_FLUSH_ON_SIGNAL=1 "$target" "$lib" "$dir/b.json" chain; rc=$?
[ "$rc" = 7 ] || { echo "FAIL: chained handler: exit status $rc, wanted 7"; exit 1; }
[ -e "$dir/b.json.chained" ] || { echo "FAIL: the previous handler did not run"; exit 1; }
ls "$dir"/b_[0-9]*.json >/dev/null 2>&1 || { echo "FAIL: no trace before the chained handler"; exit 1; }

"$target" "$lib" "$dir/c.json"; rc=$?
[ "$rc" = 143 ] || { echo "FAIL: without the option: exit status $rc"; exit 1; }
if ls "$dir"/c_*.json >/dev/null 2>&1; then echo "FAIL: a trace without the option"; exit 1; fi
echo "PASS"
