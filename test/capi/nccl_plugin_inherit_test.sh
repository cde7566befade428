#!/bin/sh
# File: nccl_plugin_inherit_test.sh
# Layer: test/capi. NCCL_PROFILER_PLUGIN, which a preloaded kairos sets for its process, is
# inherited by children. A rank the job starts with `env -u LD_PRELOAD` under a preloaded
# launcher opted out of kairos: NCCL still loads libkairos through the variable, and that
# kairos must stay inert (no trace from the environment's window; it wrote one before).
# Controls: the same rank preloaded traces its collectives; a user who sets
# NCCL_PROFILER_PLUGIN to libkairos without preloading (no ancestor's marker) gets a trace.
# Usage: nccl_plugin_inherit_test.sh LIBKAIROS RUN_DDP SIM_LIB_DIR
set -u
lib=$1; run_ddp=$2; sim=$3
dir=$(mktemp -d "${TMPDIR:-/tmp}/kairos_nccl_inherit_XXXXXX")
trap 'rm -rf "$dir"' EXIT
export LD_LIBRARY_PATH=$sim KAIROS_SIM_NCCL_TIMEOUT_MS=20000 KAIROS_LOG_LEVEL=error
unset NCCL_PROFILER_PLUGIN KAIROS_NCCL_PLUGIN_PID
window="ACTIVITIES_WARMUP_PERIOD_SECS=0;ACTIVITIES_DURATION_MSECS=20000"

# 1. Preloaded launcher, rank without LD_PRELOAD: no trace.
LD_PRELOAD=$lib KAIROS_CONFIG_TEXT="$window;ACTIVITIES_LOG_FILE=$dir/a.json" \
  sh -c 'env -u LD_PRELOAD "$0" 1 --steps 4 --host-us 500' "$run_ddp" >"$dir/a.out" 2>&1 ||
  { echo "FAIL: the opted-out rank failed"; cat "$dir/a.out"; exit 1; }
if ls "$dir"/a_*.json >/dev/null 2>&1; then
  echo "FAIL: a rank started without LD_PRELOAD wrote a trace through the inherited plugin"
  ls "$dir"; exit 1
fi

# 2. The same rank preloaded: a trace with its 4 all-reduces described by NCCL.
LD_PRELOAD=$lib KAIROS_CONFIG_TEXT="$window;ACTIVITIES_LOG_FILE=$dir/b.json" \
  "$run_ddp" 1 --steps 4 --host-us 500 >"$dir/b.out" 2>&1 || { cat "$dir/b.out"; exit 1; }
python3 -c "
import json, sys
d = json.load(open(sys.argv[1]))
assert d['kairos_stats']['nccl_collective_launches'] == 4, d['kairos_stats']
" "$(ls "$dir"/b_*.json | grep -v summary)" || { echo "FAIL: the preloaded rank's trace"; exit 1; }

# 3. NCCL_PROFILER_PLUGIN set by the user (no kairos ancestor), nothing preloaded: NCCL loads
# kairos and it works.
NCCL_PROFILER_PLUGIN=$lib KAIROS_CONFIG_TEXT="$window;ACTIVITIES_LOG_FILE=$dir/c.json" \
  "$run_ddp" 1 --steps 4 --host-us 500 >"$dir/c.out" 2>&1 || { cat "$dir/c.out"; exit 1; }
ls "$dir"/c_*.json >/dev/null 2>&1 || { echo "FAIL: a user-chosen plugin wrote no trace"; exit 1; }
echo "PASS"
