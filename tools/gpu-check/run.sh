#!/bin/bash
# File: tools/gpu-check/run.sh — the real-GPU kit's run step (docs/REAL_GPU.md). Runs on the
# lent GPU machine from the repository root, with the kit packed by pack.sh carried along:
#   tools/gpu-check/run.sh --kit gpu-kit --out "$OUT"
# and here, against the simulator, as the CPU-side dry run that keeps the kit from rotting:
#   tools/gpu-check/run.sh --kit build/gpu-kit-test --out DIR --sim build/sim/lib --quick
# Parts, each with its own time budget; a failing or overrunning part is recorded and the run
# carries on with the next:
#   info      the machine: nvidia-smi, driver, CUDA and CUPTI versions
#   a_trace   train_loop untraced, under LD_PRELOAD and under CUDA_INJECTION64_PATH; traces
#             checked for exact kernel/memcpy counts, correlation, flows, ordering
#   b_pm      PM sampling on a known duty cycle: SM active against the trace's busy fraction,
#             or the exact CUPTI error when profiling is not permitted
#   c_telem   telemetry lines for 30 s (3 s with --quick)
#   d_memory  memory records against alloc_pattern's known allocations
#   e_torch   builds the torch bridge against the machine's torch and traces a GPU training
#             loop under `python3 -m kairos run` (ops, kernels under ops, optimizer steps)
#   f_cost    train_loop untraced vs traced, alternated, several repetitions
# Everything (traces, summaries, logs, results.md, results.json) goes to --out.
# Exit status: 0 when every part that ran passed, 1 otherwise.
set -uo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
kit=""
out=""
sim=""
quick=0
torch_bridge=""
pytracer=""
py=""
no_torch=0
parts=""
while [ $# -gt 0 ]; do
  case "$1" in
    --kit) kit="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --sim) sim="$2"; shift 2 ;;
    --quick) quick=1; shift ;;
    --torch-bridge) torch_bridge="$2"; shift 2 ;;  # a prebuilt bridge: skip the build
    --pytracer) pytracer="$2"; shift 2 ;;  # a prebuilt kairos._pytracer: skip its build
    --python) py="$2"; shift 2 ;;  # the interpreter with torch (default: the first on PATH)
    --no-torch) no_torch=1; shift ;;
    --parts) parts=",$2,"; shift 2 ;;  # e.g. a_trace,e_torch: a rerun of what failed
    *) echo "run.sh: unknown argument: $1" >&2; exit 2 ;;
  esac
done
[ -n "$kit" ] || kit="$repo/gpu-kit"
[ -n "$out" ] || { echo "run.sh: --out DIR is required" >&2; exit 2; }
kit=$(cd "$kit" 2>/dev/null && pwd) || { echo "run.sh: no kit at $kit (run tools/gpu-check/pack.sh)" >&2; exit 2; }
# An empty folder: traces are found by name, and an earlier run's would be checked instead.
if [ -d "$out" ] && [ -n "$(ls -A "$out")" ]; then
  echo "run.sh: --out $out is not empty; give an empty or new folder" >&2; exit 2
fi
mkdir -p "$out" && out=$(cd "$out" && pwd)
[ -z "$sim" ] || sim=$(cd "$sim" && pwd)
work="$out/work"
mkdir -p "$work"
t_start=$(date +%s)
results="$out/results.tsv"
: > "$results"
if [ -z "$py" ]; then
  for c in python3 python /usr/bin/python3; do
    if command -v "$c" >/dev/null 2>&1; then py=$(command -v "$c"); break; fi
  done
fi

log() { echo "[$(( $(date +%s) - t_start )) s] $*"; }
# record PART STATUS SECONDS DETAIL  (STATUS: pass, fail, skip)
record() { printf '%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" >> "$results"; log "$1: $2 ($4)"; }

# Library path: the simulator first in a dry run; then only those of the kit's dependency
# libraries that this machine lacks (or has in too old a version), so the machine's own
# libstdc++ and friends win where they work.
needed="$work/deps-needed"
mkdir -p "$needed"
base_path="${sim:+$sim:}${LD_LIBRARY_PATH:-}"
# ldd cannot see past a library it cannot find (abseil's own abseil dependencies stay hidden
# until the first abseil library resolves), so resolve again with what was linked so far until
# nothing new is needed. Each pass links one more level; abseil is 4 levels deep.
for _pass in 1 2 3 4 5 6 7 8 9 10; do
  before=$(ls "$needed" | wc -l)
  probe_path="$needed${base_path:+:$base_path}"
  LD_LIBRARY_PATH="$probe_path" ldd "$kit/lib/libkairos.so" "$kit/lib/libkairos_core.so" "$kit/bin/kairos" 2>&1 |
    awk '/not found/ {print $1}' | sed 's/:$//' | sort -u | while read -r lib; do
      if [ -f "$kit/deps/$lib" ]; then ln -sf "$kit/deps/$lib" "$needed/$lib"; fi
    done
  # A library found but of too old a version ("version `GLIBCXX_3.4.30' not found (required
  # by ...)"): ship the kit's copy of the library that lacks the version.
  LD_LIBRARY_PATH="$probe_path" ldd "$kit/lib/libkairos.so" "$kit/lib/libkairos_core.so" "$kit/bin/kairos" 2>&1 |
    sed -n "s/.*: \(.*\): version .* not found.*/\1/p" | sort -u | while read -r path; do
      lib=$(basename "$path")
      if [ -f "$kit/deps/$lib" ]; then ln -sf "$kit/deps/$lib" "$needed/$lib"; fi
    done
  [ "$(ls "$needed" | wc -l)" = "$before" ] && break
done
export LD_LIBRARY_PATH="${sim:+$sim:}$needed${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
libk="$kit/lib/libkairos.so"
# A crashing workload prints its own stack (segv_trace.c); preloaded before kairos.
seg=""
[ -f "$kit/lib/segv_trace.so" ] && [ -z "$sim" ] && seg="$kit/lib/segv_trace.so "
cuda="$kit/cuda"
check="$repo/tools/gpu-check/check_trace.py"
[ -f "$check" ] || check="$kit/check/check_trace.py"
unmet=$(ldd "$libk" "$kit/lib/libkairos_core.so" "$kit/bin/kairos" 2>&1 | grep -c "not found")
log "kit $(cat "$kit/VERSION" 2>/dev/null), $(ls "$needed" | wc -l) kit libraries used, $unmet unresolved"
[ "$unmet" = 0 ] || ldd "$libk" "$kit/lib/libkairos_core.so" "$kit/bin/kairos" 2>&1 | grep "not found" | sed 's/^/  /'

# Budgets in seconds (quick: the dry run's shorter versions; its info part keeps 30 s: importing
# torch took over 10 s on a loaded 2-core CI machine).
if [ "$quick" = 1 ]; then
  b_info=30 b_a=60 b_b=60 b_c=30 b_d=30 b_e=90 b_f=60 telem_secs=3 cost_steps=40 cost_reps=1 duty_steps=60
else
  b_info=20 b_a=90 b_b=60 b_c=50 b_d=45 b_e=150 b_f=60 telem_secs=30 cost_steps=300 cost_reps=3 duty_steps=200
fi
sim_times="duty_spin=2000,touch=50"
export KAIROS_SIM_KERNEL_TIMES="$sim_times"  # read only by the simulator

# Kills a process and everything it started (a part's workload may be a grandchild: python3
# -m kairos run starting the script, a shell starting the program), children first.
kill_tree() {
  local c
  for c in $(pgrep -P "$1" 2>/dev/null); do kill_tree "$c"; done
  kill -KILL "$1" 2>/dev/null
}

# run_part NAME BUDGET FUNCTION: the function's own checks decide pass/fail; running past the
# budget is a failure with what it had written kept.
run_part() {
  local name="$1" budget="$2" fn="$3" t0 rc
  if [ -n "$parts" ] && [ "$name" != info ] && [ "${parts#*,$name,}" = "$parts" ]; then return 0; fi
  t0=$(date +%s)
  log "== $name (budget ${budget} s)"
  part_detail=""
  part_status=""
  ( "$fn" ) > "$out/$name.log" 2>&1 &
  local pid=$!
  local waited=0
  while kill -0 "$pid" 2>/dev/null; do
    if [ "$waited" -ge "$budget" ]; then
      kill_tree "$pid"
      break
    fi
    sleep 1; waited=$((waited + 1))
  done
  wait "$pid"; rc=$?
  local secs=$(( $(date +%s) - t0 ))
  local detail
  detail=$(grep -h '^DETAIL ' "$out/$name.log" | tail -1 | cut -c8-)
  if [ "$waited" -ge "$budget" ]; then
    record "$name" fail "$secs" "over its ${budget} s budget; ${detail}"
  elif grep -q '^SKIP' "$out/$name.log"; then
    record "$name" skip "$secs" "$(grep -h '^SKIP' "$out/$name.log" | head -1 | cut -c6-)"
  elif [ "$rc" = 0 ]; then
    record "$name" pass "$secs" "$detail"
  else
    record "$name" fail "$secs" "exit $rc; $(grep -h '^FAIL' "$out/$name.log" | head -3 | tr '\n' ' ')${detail}"
  fi
}

# A trace file written under a base name (kairos inserts _<pid>).
trace_of() { ls "$1"_*[0-9].json 2>/dev/null | head -1; }

part_info() {
  echo "glibc: $(ldd --version 2>/dev/null | head -1) (the kit needs >= $(cat "$kit/GLIBC_NEEDED" 2>/dev/null || echo '?'))"
  if command -v nvidia-smi >/dev/null 2>&1; then
    nvidia-smi --query-gpu=name,uuid,driver_version,memory.total,clocks.max.sm,compute_cap --format=csv
    nvidia-smi | head -5
  else
    echo "nvidia-smi: not on this machine${sim:+ (dry run on the simulator at $sim)}"
  fi
  command -v nvcc >/dev/null 2>&1 && nvcc --version | tail -2
  for d in /usr/local/cuda/extras/CUPTI/lib64 /usr/local/cuda/lib64 /usr/lib/x86_64-linux-gnu; do
    ls "$d"/libcupti.so.* 2>/dev/null
  done
  "$py" --version 2>&1
  # Bounded inside the part's budget: a cold or loaded disk can make importing torch take most
  # of it, and the versions are information, not a check.
  local t=$(( b_info - 5 ))
  timeout "$t" "$py" -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'available', torch.cuda.is_available())" 2>&1 | tail -1
  [ "${PIPESTATUS[0]}" = 124 ] && echo "torch: import did not finish in $t s (versions not read)"
  echo "DETAIL $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1 || echo simulator)"
}

tl_kernels="forward_gemm=80 forward_layernorm=80 backward_gemm_dgrad=80 backward_gemm_wgrad=80 AllReduce=20 adam_update=20"
# Steps are ~1 ms here; the first cuptiActivityEnable of a process can take far longer on a
# GPU, so 100 warm-up iterations (the trace reports a warm-up that was too short anyway).
tl_config() { echo "PROFILE_START_ITERATION=105;ACTIVITIES_ITERATIONS=20;ACTIVITIES_WARMUP_ITERATIONS=100;ACTIVITIES_LOG_FILE=$1;KAIROS_SUMMARY=file"; }
part_a_trace() {
  local rc=0
  "$cuda/train_loop" 130 || { echo "FAIL untraced train_loop exited $?"; rc=1; }
  LD_PRELOAD="$seg$libk" KAIROS_CONFIG_TEXT="$(tl_config "$out/a_preload.json")" "$cuda/train_loop" 130 || rc=1
  "$py" "$check" "$(trace_of "$out/a_preload")" --steps 20 --kernels $tl_kernels --memcpy 20 \
    --json "$out/a_preload.check.json" || rc=1
  LD_PRELOAD="$seg" CUDA_INJECTION64_PATH="$libk" KAIROS_CONFIG_TEXT="$(tl_config "$out/a_inject.json")" "$cuda/train_loop" 130 || rc=1
  "$py" "$check" "$(trace_of "$out/a_inject")" --steps 20 --kernels $tl_kernels --memcpy 20 \
    --json "$out/a_inject.check.json" || rc=1
  echo "DETAIL preload and injection: $(grep -h '^PASS\|^FAIL' "$out/a_trace.log" 2>/dev/null | grep -c PASS) checks passed"
  return $rc
}

part_b_pm() {
  local m="sm__cycles_active.avg.pct_of_peak_sustained_elapsed"
  LD_PRELOAD="$seg$libk" KAIROS_CONFIG_TEXT="PROFILE_START_ITERATION=30;ACTIVITIES_ITERATIONS=$((duty_steps - 40));ACTIVITIES_WARMUP_ITERATIONS=25;CUPTI_PM_SAMPLING_METRICS=$m;KAIROS_PM_SAMPLING_INTERVAL_US=1000;ACTIVITIES_LOG_FILE=$out/b_pm.json" \
    "$cuda/duty_cycle" "$duty_steps" 2000 2000 || { echo "FAIL duty_cycle exited"; return 1; }
  local t
  t=$(trace_of "$out/b_pm")
  # Profiling not permitted is a result, not a kit failure: report CUPTI's exact words.
  local warn
  warn=$("$py" -c "import json,sys; t=json.load(open(sys.argv[1])); print(' | '.join(w for w in (t.get('kairos_warnings') or []) if 'PM' in w or 'pm_' in w or 'sampl' in w))" "$t" 2>/dev/null)
  if [ -n "$warn" ]; then echo "SKIP PM sampling refused: $warn"; return 0; fi
  "$py" "$check" "$t" --pm duty_spin --json "$out/b_pm.check.json" || return 1
  echo "DETAIL $("$py" -c "import json,sys; v=json.load(open(sys.argv[1]))['values']; print('SM active %(sm_active_pct_mean)s%% vs busy %(busy_pct_from_trace)s%%, kernel SM active %(pm_kernel_sm_active_mean)s%%' % v)" "$out/b_pm.check.json")"
}

part_c_telem() {
  local steps=$(( telem_secs * 1000 / 4 + 250 ))
  # Base config only (docs/TELEMETRY.md): from KAIROS_CONFIG_TEXT, not a daemon request.
  LD_PRELOAD="$seg$libk" KAIROS_CONFIG_TEXT="KAIROS_TELEMETRY_INTERVAL_SECS=1;KAIROS_TELEMETRY_FILE=$out/c_telemetry.jsonl" \
    "$cuda/duty_cycle" "$steps" 2000 2000 || { echo "FAIL duty_cycle exited"; return 1; }
  "$py" - "$out/c_telemetry.jsonl" "$telem_secs" "${sim:+sim}" <<'PY'
import json, sys
path, secs, sim = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "sim"
try:
    lines = open(path).read().splitlines()
except OSError as e:
    print("FAIL no telemetry file: %s" % e); sys.exit(1)
rows = [json.loads(l) for l in lines if l.strip()]
def mean(k):
    v = [r[k] for r in rows if isinstance(r.get(k), (int, float))]
    return sum(v) / len(v) if v else None
busy, sm = mean("gpu_busy_pct"), mean("sm_active_pct")
print("DETAIL %d lines in %d s; mean gpu_busy %s%%, sm_active %s%%, occupancy %s%%" %
      (len(rows), secs, *(None if x is None else round(x, 1) for x in (busy, sm, mean("achieved_occupancy_pct")))))
ok = len(rows) >= secs - 2
print(("PASS" if ok else "FAIL") + " telemetry: %d lines (expected >= %d)" % (len(rows), secs - 2))
# duty_cycle keeps the GPU busy 2000 us of every ~4000-4100 us. On the simulator the idle
# half is the host's usleep, which a loaded CI machine stretches: there only the value's
# presence is checked.
busy_ok = busy is not None and (sim or 35 <= busy <= 55)
print(("PASS" if busy_ok else "FAIL") + " telemetry busy: mean gpu_busy_pct %s (expected 35..55 for a 50%% duty cycle%s)" % (busy, "; not checked on the simulator" if sim else ""))
sys.exit(0 if ok and busy_ok else 1)
PY
}

part_d_memory() {
  local rc=0
  LD_PRELOAD="$seg$libk" KAIROS_CONFIG_TEXT="PROFILE_START_ITERATION=25;ACTIVITIES_ITERATIONS=20;ACTIVITIES_WARMUP_ITERATIONS=20;PROFILE_PROFILE_MEMORY=true;ACTIVITIES_LOG_FILE=$out/d_memory.json" \
    "$cuda/alloc_pattern" 50 || { echo "FAIL alloc_pattern exited"; return 1; }
  # 20 whole steps: 5 allocations and 4 frees each (alloc_pattern.cu).
  "$py" "$check" "$(trace_of "$out/d_memory")" --steps 20 --memory 100,80 --json "$out/d_memory.check.json" || rc=1
  echo "DETAIL $("$py" -c "import json,sys; v=json.load(open(sys.argv[1]))['values']; print('%(memory_allocs)s allocations, %(memory_frees)s frees' % v)" "$out/d_memory.check.json")"
  return $rc
}

part_e_torch() {
  if [ "$no_torch" = 1 ]; then echo "SKIP --no-torch"; return 0; fi
  if ! "$py" -c "import torch" >/dev/null 2>&1; then echo "SKIP no torch in $py"; return 0; fi
  local pkg="$work/python"
  rm -rf "$pkg" && mkdir -p "$pkg" && cp -r "$kit/python/kairos" "$pkg/"
  if [ -n "$torch_bridge" ]; then
    cp "$torch_bridge" "$pkg/kairos/_kairos_torch.so"
  else
    # The bridge against this machine's torch: its headers, libraries and C++ ABI.
    local flags
    flags=$("$py" - <<'PY'
import os, torch
from torch.utils import cpp_extension
v = torch.__version__.split(".")
ver = int(v[0]) * 100 + int("".join(c for c in v[1] if c.isdigit()))
inc = " ".join("-isystem " + p for p in cpp_extension.include_paths())
lib = os.path.join(os.path.dirname(torch.__file__), "lib")
print("%s -DKAIROS_TORCH_VERSION=%d -D_GLIBCXX_USE_CXX11_ABI=%d -L%s -Wl,-rpath,%s" %
      (inc, ver, int(torch._C._GLIBCXX_USE_CXX11_ABI), lib, lib))
PY
)
    echo "bridge flags: $flags"
    # shellcheck disable=SC2086
    g++ -std=c++17 -O2 -shared -fPIC -Wno-unused-parameter -I"$kit/torch_bridge" $flags \
      -o "$pkg/kairos/_kairos_torch.so" "$kit/torch_bridge/kairos_torch_bridge.cc" \
      -ltorch_cpu -lc10 -L"$kit/lib" -lkairos || { echo "FAIL the torch bridge did not build"; return 1; }
  fi
  # The Python tracer (--with-stack) against this interpreter's headers, when it has them.
  local stacks=""
  if [ -n "$pytracer" ]; then
    cp "$pytracer" "$pkg/kairos/" && stacks="--with-stack"
  else
    local inc suffix
    inc=$("$py" -c "import sysconfig; print(sysconfig.get_paths()['include'])")
    suffix=$("$py" -c "import sysconfig; print(sysconfig.get_config_var('EXT_SUFFIX'))")
    if [ -f "$inc/Python.h" ] && cc -std=c11 -O2 -shared -fPIC -fvisibility=hidden -I"$inc" \
         -o "$pkg/kairos/_pytracer$suffix" "$kit/torch_bridge/pytracer.c"; then
      stacks="--with-stack"
    else
      echo "no Python headers under $inc: Python stacks not checked"
    fi
  fi
  # 40 steps for a 3-step window at 5: when CUPTI is on only after step 5 (a loaded machine,
  # a slow first cuptiActivityEnable) the window moves to the next boundary and still needs
  # its 3 steps before the script ends (docs/ACTIVITY.md, "Late recording").
  PYTHONPATH="$pkg" KAIROS_LIBRARY="$libk" "$py" -m kairos run $stacks \
    --config "PROFILE_START_ITERATION=5;ACTIVITIES_ITERATIONS=3;ACTIVITIES_WARMUP_ITERATIONS=2;ACTIVITIES_LOG_FILE=$out/e_torch.json" \
    "$kit/torch_bridge/torch_gpu_train.py" --steps 40 || { echo "FAIL python3 -m kairos run exited"; return 1; }
  local gpu_flag=""
  "$py" -c "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)" 2>/dev/null || gpu_flag="--cpu-only"
  "$py" "$check" "$(trace_of "$out/e_torch")" --steps 3 --torch $gpu_flag ${stacks:+--python-stacks} \
    --json "$out/e_torch.check.json" || return 1
  echo "DETAIL $("$py" -c "import json,sys; v=json.load(open(sys.argv[1]))['values']; print('%(cpu_ops)s ops, %(kernels_under_ops)s of %(kernels)s kernels under ops' % v + (', %(python_functions)s Python frames, %(ops_under_frames)s ops under a frame' % v if 'python_functions' in v else ''))" "$out/e_torch.check.json")"
}

part_f_cost() {
  "$py" - "$cuda/train_loop" "$libk" "$cost_steps" "$cost_reps" "$out" <<'PY'
import os, statistics, subprocess, sys, time
prog, lib, steps, reps, out = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
def run(env_extra):
    env = dict(os.environ, **env_extra)
    t = time.perf_counter()
    subprocess.run([prog, str(steps)], env=env, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - t
cfg = ("PROFILE_START_ITERATION=10;ACTIVITIES_ITERATIONS=%d;ACTIVITIES_WARMUP_ITERATIONS=1;"
       "ACTIVITIES_LOG_FILE=%s/f_cost.json" % (max(1, steps - 20), out))
base, traced = [], []
run({})  # warm the page cache and the driver before anything is measured
for _ in range(reps):  # alternated, so drift hits both alike
    base.append(run({}))
    traced.append(run({"LD_PRELOAD": lib, "KAIROS_CONFIG_TEXT": cfg}))
b, t = statistics.median(base), statistics.median(traced)
print("untraced %s s, traced %s s" % ([round(x, 3) for x in base], [round(x, 3) for x in traced]))
print("DETAIL %d steps: untraced %.3f s, traced %.3f s (median of %d), ratio %.3f" % (steps, b, t, reps, t / b))
PY
}

run_part info "$b_info" part_info
run_part a_trace "$b_a" part_a_trace
run_part b_pm "$b_b" part_b_pm
run_part c_telem "$b_c" part_c_telem
run_part d_memory "$b_d" part_d_memory
run_part e_torch "$b_e" part_e_torch
run_part f_cost "$b_f" part_f_cost

{
  echo "| part | status | seconds | detail |"
  echo "|---|---|---|---|"
  while IFS="$(printf '\t')" read -r p s secs d; do echo "| $p | $s | $secs | $d |"; done < "$results"
} > "$out/results.md"
"$py" - "$results" "$out/results.json" <<'PY'
import json, sys
rows = [dict(zip(("part", "status", "seconds", "detail"), l.rstrip("\n").split("\t")))
        for l in open(sys.argv[1]) if l.strip()]
json.dump(rows, open(sys.argv[2], "w"), indent=1)
PY
rm -rf "$work"
log "done: $out/results.md"
cat "$out/results.md"
! grep -q "	fail	" "$results"
