#!/bin/bash
# File: ddp_slow_gpu_test.sh
# Layer: end-to-end test of "kernels across ranks" (issue #26 item 5) on the simulated DDP job:
# three ranks of examples/cuda/ddp_train under LD_PRELOAD=libkairos.so, each tracing steps
# 10-19 from its own environment, where rank 1's simulated GPU runs kernels slower (a
# throttled GPU: kernel_wave_us 20 instead of the h100 preset's 4). `kairos summarize` of the
# three traces must show, for the Forward and Backward kernels, exactly the per-step times the
# simulator's documented duration model gives (docs/SIMULATOR.md: kernel_min_us + waves x
# kernel_wave_us x max(0.25, threads/256); ddp_train launches 4 layers of 64 blocks of 256
# threads: one wave): 4 x 6.5 us = 26.0 us on ranks 0 and 2, 4 x 22.5 us = 90.0 us on rank 1,
# with rank 1 as max_rank; the report's per-rank page must carry the same table.
# usage: ddp_slow_gpu_test.sh KAIROS_BIN LIBKAIROS RUN_DDP SIM_LIB_DIR OUT_DIR
set -u
kairos=$1 libkairos=$2 run_ddp=$3 simlib=$4 out=$5
rm -rf "$out" && mkdir -p "$out" || exit 1
LD_LIBRARY_PATH="$simlib" LD_PRELOAD="$libkairos" \
  KAIROS_CONFIG_TEXT="PROFILE_START_ITERATION=10;ACTIVITIES_ITERATIONS=10;ACTIVITIES_LOG_FILE=$out/t.json" \
  KAIROS_SIM_DEVICES='[{"preset":"h100"},{"preset":"h100","kernel_wave_us":20},{"preset":"h100"}]' \
  KAIROS_SIM_NCCL_LATENCY_US=8 KAIROS_SIM_NCCL_BW_GBPS=100 KAIROS_SIM_NCCL_TIMEOUT_MS=30000 \
  "$run_ddp" 3 --steps 30 --host-us 300 --params 16384 > "$out/ranks.log" 2>&1 \
  || { echo "FAIL: run_ddp.sh"; tail -20 "$out/ranks.log"; exit 1; }
traces=$(ls "$out"/t_rank*.json | grep -v '\.summary\.json$')
[ "$(echo "$traces" | wc -l)" = 3 ] || { echo "FAIL: traces:" $traces; exit 1; }
"$kairos" summarize --format json $traces > "$out/summary.json" 2> "$out/summary.err" \
  || { echo "FAIL: summarize"; cat "$out/summary.err"; exit 1; }
"$kairos" report -o "$out/report.html" $traces 2> "$out/report.err" \
  || { echo "FAIL: report"; cat "$out/report.err"; exit 1; }
python3 - "$out/summary.json" "$out/report.html" <<'EOF'
import json, sys
s = json.load(open(sys.argv[1]))
fail = []
# Each rank traces steps 10-19 from its own environment; a rank whose CUPTI came up late
# starts its window at the next step (window_start_moved_iterations), so the ranks share at
# least 5 of them under load. The per-step kernel times below are exact either way.
if s["ranks"] != 3 or not 5 <= s["common_steps"] <= 10 or not 10 <= s["first_step"] <= 15:
    fail.append(("steps", s["ranks"], s["common_steps"], s["first_step"]))
by_name = {k["name"].split("::")[-1].split("(")[0]: k for k in s["kernels"]}
for name in ("Forward", "Backward"):
    k = by_name.get(name)
    want = {"min_ns": 26000, "median_ns": 26000, "max_ns": 90000, "min_rank": 0, "max_rank": 1}
    if k is None or any(k[f] != v for f, v in want.items()):
        fail.append((name, k))
    elif abs(k["spread"] - (90000 - 26000) / 26000) > 1e-4:
        fail.append((name, "spread", k["spread"]))
# (Not asserted: that rank 1 is also named the straggler. It arrives last at the all-reduce
# on a quiet machine, but on a loaded one the host's scheduling can absorb 64 us per step;
# sim_ddp_job_trace covers the straggler with reruns.)
page = open(sys.argv[2], encoding="utf-8").read()
if "Kernels across ranks" not in page:
    fail.append("the report has no kernels-across-ranks table")
if fail:
    print("FAIL:", fail); print(json.dumps(s["kernels"], indent=1)); sys.exit(1)
print("kernels across ranks: Forward/Backward 26.0 us on ranks 0 and 2, 90.0 us on rank 1")
EOF
