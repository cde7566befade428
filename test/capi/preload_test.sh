#!/bin/sh
# File: preload_test.sh
# Layer: test/capi. LD_PRELOAD of libkairos.so into an unmodified program:
#   1. with no trace configured it starts no thread and prints nothing;
#   2. with KAIROS_CONFIG_TEXT naming a duration window it writes a trace that parses when
#      the program recorded something of its own (and, never loading CUDA, prints no CUPTI
#      warning), and no file at all when it did not (a launcher such as `sh` or `timeout`
#      that inherited LD_PRELOAD);
#   3. the same with no CUPTI to be had (a CPU-only job on a machine without CUDA): exit 0,
#      a CPU trace, and in CUDA builds exactly one warning line, also in the trace;
#   4. NCCL_PROFILER_PLUGIN names libkairos (absolute path) unless the user set it or opted out;
#   5. with telemetry on, shell tools leave no file and no warning; a stepping process writes;
#   6. libkairos.so is a shim (issue 29 item 1): with nothing configured (also with the NCCL
#      variables a preloaded launcher hands its children) the implementation,
#      libkairos_core.so, is not loaded; a KAIROS_* setting loads it before main, the first
#      control call loads it otherwise; without the core beside the shim the program still
#      runs, with one error line, and control calls fail with KAIROS_ERR_UNAVAILABLE.
# Usage: preload_test.sh LIBKAIROS TARGET
set -eu
lib=$1; target=$2
dir=$(mktemp -d "${TMPDIR:-/tmp}/kairos_preload_XXXXXX")
trap 'rm -rf "$dir"' EXIT
pre=$lib
# Sanitizer builds: the sanitizer runtimes must come first in the preload list.
for rt in asan ubsan tsan; do
  p=$(ldd "$lib" | awk -v r="lib$rt" '$1 ~ r {print $3}' | head -n1)
  if [ -n "$p" ]; then pre="$p $pre"; fi
done
export ASAN_OPTIONS=${ASAN_OPTIONS:-}:verify_asan_link_order=0:detect_leaks=0

out=$(env -u KAIROS_CONFIG -u KINETO_CONFIG -u KAIROS_CONFIG_TEXT LD_PRELOAD="$pre" "$target" 0 2>"$dir/err1")
[ "$out" = "threads=1" ] || { echo "FAIL: idle preload: '$out'"; exit 1; }
[ ! -s "$dir/err1" ] || { echo "FAIL: idle preload wrote to stderr:"; cat "$dir/err1"; exit 1; }

KAIROS_CONFIG_TEXT="ACTIVITIES_WARMUP_PERIOD_SECS=0;ACTIVITIES_DURATION_MSECS=100;ACTIVITIES_LOG_FILE=$dir/pre.json" \
  LD_PRELOAD="$pre" "$target" 300 range >/dev/null 2>"$dir/err2"
n=$(ls "$dir" | grep -c '^pre_[0-9]*\.json$' || true)
[ "$n" = 1 ] || { echo "FAIL: expected one trace, found $n"; ls "$dir"; cat "$dir/err2"; exit 1; }
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert 'traceEvents' in d" "$dir"/pre_*.json \
  || { echo "FAIL: trace does not parse"; exit 1; }
# A CPU-only program never loads CUPTI (it has not loaded CUDA): no CUPTI/driver warning.
if grep -q -i 'cupti\|driver' "$dir/err2"; then echo "FAIL: CPU-only program warned:"; cat "$dir/err2"; exit 1; fi
# 2b. Launchers that record nothing of their own leave no file, window open at exit or not.
idle=$dir/idle; mkdir "$idle"
for cmd in "$target 300" "$target 0" "sh -c true" "sh -c 'sleep 0.2'"; do
  KAIROS_CONFIG_TEXT="ACTIVITIES_WARMUP_PERIOD_SECS=0;ACTIVITIES_DURATION_MSECS=100;ACTIVITIES_LOG_FILE=$idle/l.json" \
    LD_PRELOAD="$pre" sh -c "$cmd" >/dev/null 2>"$dir/err_idle" || { echo "FAIL: $cmd"; cat "$dir/err_idle"; exit 1; }
  [ -z "$(ls "$idle")" ] || { echo "FAIL: '$cmd' recorded nothing but left files:"; ls "$idle"; exit 1; }
done
# 3. No CUDA at all: KAIROS_CUPTI_LIBRARY names a library that does not exist.
nocuda=$dir/no-cuda/libcupti.so.13
KAIROS_CUPTI_LIBRARY=$nocuda \
  KAIROS_CONFIG_TEXT="ACTIVITIES_WARMUP_PERIOD_SECS=0;ACTIVITIES_DURATION_MSECS=100;ACTIVITIES_LOG_FILE=$dir/nocuda.json" \
  LD_PRELOAD="$pre" "$target" 300 range >/dev/null 2>"$dir/err3" || { echo "FAIL: no-CUDA run failed"; cat "$dir/err3"; exit 1; }
reason=""
if nm -D --defined-only "$lib" | grep -q ' InitializeInjection$'; then
  reason="cannot load CUPTI library '$nocuda': $nocuda: cannot open shared object file: No such file or directory; GPU activity disabled, CPU trace continues"
  printf 'kairos: warning: %s\n' "$reason" > "$dir/want3"
else
  : > "$dir/want3"  # CPU-only build: no GPU source, nothing to report
fi
cmp -s "$dir/err3" "$dir/want3" || { echo "FAIL: no-CUDA stderr:"; cat "$dir/err3"; echo "wanted:"; cat "$dir/want3"; exit 1; }
python3 -c "
import json, sys
d = json.load(open(sys.argv[1]))
assert 'traceEvents' in d
assert d.get('gpu_data_missing_reason', '') == sys.argv[2], d.get('gpu_data_missing_reason')
assert not any(e.get('cat') in ('kernel', 'gpu_memcpy', 'cuda_runtime') for e in d['traceEvents'])
" "$(ls "$dir"/nocuda_*.json | grep -v summary)" "$reason" || { echo "FAIL: no-CUDA trace"; exit 1; }
# 4. NCCL_PROFILER_PLUGIN: a preloaded kairos names itself by absolute path (also when
# preloaded by a relative one), never over the user's value, not with KAIROS_NCCL_PLUGIN=0.
real=$(realpath "$lib")
rel_pre=$(echo "$pre" | sed "s|$lib\$|./$(basename "$lib")|")  # sanitizer runtimes stay first
got=$(cd "$(dirname "$lib")" && env -u NCCL_PROFILER_PLUGIN LD_PRELOAD="$rel_pre" sh -c 'echo "$NCCL_PROFILER_PLUGIN"')
[ "$got" = "$real" ] || { echo "FAIL: NCCL_PROFILER_PLUGIN='$got', wanted '$real'"; exit 1; }
got=$(NCCL_PROFILER_PLUGIN=mine LD_PRELOAD="$pre" sh -c 'echo "$NCCL_PROFILER_PLUGIN"')
[ "$got" = "mine" ] || { echo "FAIL: the user's NCCL_PROFILER_PLUGIN became '$got'"; exit 1; }
got=$(env -u NCCL_PROFILER_PLUGIN KAIROS_NCCL_PLUGIN=0 LD_PRELOAD="$pre" sh -c 'echo "[$NCCL_PROFILER_PLUGIN]"')
[ "$got" = "[]" ] || { echo "FAIL: KAIROS_NCCL_PLUGIN=0 still set '$got'"; exit 1; }
# 5. Telemetry in a job's environment: the shell tools a script runs under LD_PRELOAD are not
# training processes, so they write no telemetry file and no warning (each one did).
mkdir "$dir/telem"
env -u KAIROS_CONFIG -u KINETO_CONFIG \
  KAIROS_CONFIG_TEXT="KAIROS_TELEMETRY_INTERVAL_SECS=1;KAIROS_TELEMETRY_FILE=$dir/telem/t_{pid}.jsonl" \
  LD_PRELOAD="$pre" sh -c 'for i in 1 2 3 4 5 6 7 8 9 10; do true; /bin/true; ls / >/dev/null; done' 2>"$dir/err5"
[ ! -s "$dir/err5" ] || { echo "FAIL: shell tools with telemetry wrote to stderr:"; cat "$dir/err5"; exit 1; }
n=$(ls "$dir/telem" | wc -l)
[ "$n" = 0 ] || { echo "FAIL: shell tools left $n telemetry files"; ls "$dir/telem"; exit 1; }
# ... while a process that steps (the target's "step" mode) gets its lines at exit.
env -u KAIROS_CONFIG -u KINETO_CONFIG \
  KAIROS_CONFIG_TEXT="KAIROS_TELEMETRY_INTERVAL_SECS=1;KAIROS_TELEMETRY_FILE=$dir/telem/t_{pid}.jsonl" \
  LD_PRELOAD="$pre" "$target" 1500 step >/dev/null 2>"$dir/err6"
n=$(cat "$dir"/telem/t_*.jsonl 2>/dev/null | wc -l)
[ "$n" -ge 1 ] || { echo "FAIL: a stepping process wrote no telemetry line"; cat "$dir/err6"; exit 1; }
# 6. The shim loads the core only when something needs it.
maps() { env -u KAIROS_CONFIG -u KINETO_CONFIG -u KAIROS_CONFIG_TEXT PRELOAD_TARGET_MAPS=1 "$@"; }
out=$(maps LD_PRELOAD="$pre" "$target" 0 2>"$dir/err7")
[ "$out" = "$(printf 'threads=1\ncore=0')" ] || { echo "FAIL: idle preload loaded the core: '$out'"; exit 1; }
out=$(maps NCCL_PROFILER_PLUGIN="$real" KAIROS_NCCL_PLUGIN_PID=1 KAIROS_CONFIG_TEXT= LD_PRELOAD="$pre" "$target" 0 2>>"$dir/err7")
[ "$out" = "$(printf 'threads=1\ncore=0')" ] || { echo "FAIL: a launcher's child loaded the core: '$out'"; exit 1; }
out=$(maps KAIROS_TRACE_DIR="$dir" LD_PRELOAD="$pre" "$target" 0 2>>"$dir/err7")
[ "$out" = "$(printf 'threads=1\ncore=1')" ] || { echo "FAIL: KAIROS_TRACE_DIR did not load the core: '$out'"; exit 1; }
out=$(maps LD_PRELOAD="$pre" "$target" 0 init 2>>"$dir/err7")
[ "$out" = "$(printf 'init=0 \nthreads=1\ncore=1')" ] || { echo "FAIL: kairos_init did not load the core: '$out'"; exit 1; }
# Preloaded by a relative path, the program changes directory before its first call: the core
# is still found beside the shim (its directory was resolved at load).
out=$(cd "$(dirname "$lib")" && maps LD_PRELOAD="$rel_pre" PRELOAD_TARGET_CHDIR=/ "$target" 0 init 2>>"$dir/err7")
[ "$out" = "$(printf 'init=0 \nthreads=1\ncore=1')" ] || { echo "FAIL: relative preload, chdir, kairos_init: '$out'"; exit 1; }
# The same for a run-time load by a relative path (Python's ctypes): nothing configured, so the
# core is loaded only by the call after the chdir.
rel_lib=./$(basename "$lib")
out=$(cd "$(dirname "$lib")" && maps LD_PRELOAD="$(echo "$pre" | sed "s|$lib\$||")" PRELOAD_TARGET_DLOPEN="$rel_lib" PRELOAD_TARGET_CHDIR=/ "$target" 0 init 2>>"$dir/err7")
[ "$out" = "$(printf 'init=0 \nthreads=1\ncore=1')" ] || { echo "FAIL: dlopen by a relative path, chdir, kairos_init: '$out'"; exit 1; }
# Eight threads make the first control call at once: every one succeeds, against one core.
out=$(maps LD_PRELOAD="$pre" "$target" 0 race 2>>"$dir/err7")
[ "$out" = "$(printf 'race=8\nthreads=1\ncore=1')" ] || { echo "FAIL: concurrent first calls: '$out'"; exit 1; }
[ ! -s "$dir/err7" ] || { echo "FAIL: stderr:"; cat "$dir/err7"; exit 1; }
# Without the core: the shim alone in a directory of its own.
mkdir "$dir/alone"
cp "$(realpath "$lib")" "$dir/alone/libkairos.so"
alone_pre=$(echo "$pre" | sed "s|$lib\$|$dir/alone/libkairos.so|")
want="kairos: error: kairos unavailable: cannot load the implementation: $dir/alone/libkairos_core.so: cannot open shared object file: No such file or directory"
out=$(maps LD_PRELOAD="$alone_pre" "$target" 0 init 2>"$dir/err8")
[ "$out" = "$(printf 'init=-3 %s\nthreads=1\ncore=0' "${want#kairos: error: }")" ] || { echo "FAIL: no core, init: '$out'"; exit 1; }
[ "$(cat "$dir/err8")" = "$want" ] || { echo "FAIL: no core, stderr:"; cat "$dir/err8"; exit 1; }
out=$(maps KAIROS_CONFIG_TEXT="ACTIVITIES_WARMUP_PERIOD_SECS=0;ACTIVITIES_DURATION_MSECS=100" LD_PRELOAD="$alone_pre" "$target" 0 range 2>"$dir/err9")
[ "$out" = "$(printf 'threads=1\ncore=0')" ] || { echo "FAIL: no core, configured: '$out'"; exit 1; }
[ "$(cat "$dir/err9")" = "$want" ] || { echo "FAIL: no core, configured, stderr:"; cat "$dir/err9"; exit 1; }
echo "PASS"
