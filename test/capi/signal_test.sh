#!/bin/sh
# File: signal_test.sh
# Layer: test/capi. KAIROS_FLUSH_ON_SIGNAL=1: SIGTERM during a window closes and writes it,
# then the previous handler runs: the default action (the process dies of SIGTERM), or the
# program's own handler (installed before kairos), also when the signal lands on a thread
# that holds a lock the flush needs. Without the variable nothing is written.
# Usage: signal_test.sh LIBKAIROS TARGET
set -u
lib=$1; target=$2
dir=$(mktemp -d "${TMPDIR:-/tmp}/kairos_signal_XXXXXX")
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

# SIGTERM delivered to a thread that holds a lock the flush needs (the session mutex in
# kairos_set_metadata; its name table in kairos_range_push): the handler must not wait for
# the flush, or the process hangs for the whole bound (61 s before) and writes nothing.
for mode in metadata names; do
  t0=$(date +%s)
  KAIROS_FLUSH_ON_SIGNAL=1 KAIROS_EXIT_FLUSH_TIMEOUT_MS=2000 timeout 45 "$target" "$lib" "$dir/$mode.json" $mode
  rc=$?
  took=$(( $(date +%s) - t0 ))
  [ "$rc" = 143 ] || { echo "FAIL: $mode: exit status $rc, wanted 143 (SIGTERM) within the bound"; exit 1; }
  [ "$took" -le 20 ] || { echo "FAIL: $mode: took $took s with KAIROS_EXIT_FLUSH_TIMEOUT_MS=2000"; exit 1; }
  python3 -c "
import json, sys
d = json.load(open(sys.argv[1]))
assert any(e.get('name') == 'before_signal' for e in d['traceEvents'])
" "$dir/${mode}_"[0-9]*.json || { echo "FAIL: $mode: no trace with the range"; ls "$dir"; exit 1; }
done

"$target" "$lib" "$dir/c.json"; rc=$?
[ "$rc" = 143 ] || { echo "FAIL: without the option: exit status $rc"; exit 1; }
if ls "$dir"/c_*.json >/dev/null 2>&1; then echo "FAIL: a trace without the option"; exit 1; fi
echo "PASS"
