"""File: test/gpu_check/late_enable_test.py — an iteration window whose warm-up is shorter
than enabling CUPTI takes (the real first cuptiActivityEnable can be slow). Found by the
real-GPU kit's dry run under load (docs/REAL_GPU.md): the first steps of a window lost their GPU
records without a word. Now:
- the window's start moves to the first step boundary after CUPTI is on, with the requested
  number of iterations, and the trace says so (a warning naming both iterations and
  ACTIVITIES_WARMUP_ITERATIONS, stat window_start_moved_iterations): every kernel of the
  window is there;
- a job that exits between the planned start and the moved one keeps the planned start, and the
  loss is reported as before (stat cupti_enabled_late_us and its warning);
- a warm-up long enough changes nothing: every kernel, no warning.
Runs examples/cuda/train_loop on the simulator with KAIROS_SIM_CUPTI_ENABLE_DELAY_MS.
Usage: late_enable_test.py BUILD_DIR
"""
import glob
import json
import os
import re
import subprocess
import sys
import tempfile

build = sys.argv[1]
KERNELS_PER_STEP = 18


PM_METRIC = "sm__cycles_active.avg.pct_of_peak_sustained_elapsed"


def run(warmup, steps, start, delay_ms, iterations=20, pm_delay_ms=None):
    # The trace and its summary are read here and removed with the directory.
    with tempfile.TemporaryDirectory(prefix="kairos_late_") as d:
        config = ("PROFILE_START_ITERATION=%d;ACTIVITIES_ITERATIONS=%d;"
                  "ACTIVITIES_WARMUP_ITERATIONS=%d;ACTIVITIES_LOG_FILE=%s/t.json"
                  % (start, iterations, warmup, d))
        env = dict(os.environ,
                   LD_LIBRARY_PATH=os.path.join(build, "sim/lib"),
                   LD_PRELOAD=os.path.join(build, "lib/libkairos.so"),
                   KAIROS_SIM_CUPTI_ENABLE_DELAY_MS=str(delay_ms))
        if pm_delay_ms is not None:
            config += ";CUPTI_PM_SAMPLING_METRICS=%s;KAIROS_PM_SAMPLING_INTERVAL_US=1000" % PM_METRIC
            env["KAIROS_SIM_PM_START_DELAY_MS"] = str(pm_delay_ms)
        env["KAIROS_CONFIG_TEXT"] = config
        subprocess.run([os.path.join(build, "examples/cuda/train_loop"), str(steps)], env=env,
                       check=True, stdout=subprocess.DEVNULL)
        traces = [f for f in glob.glob(d + "/t_*.json") if not f.endswith(".summary.json")]
        assert len(traces) == 1, traces
        t = json.load(open(traces[0]))
        kernels = sum(1 for e in t["traceEvents"] if e.get("ph") == "X" and e.get("cat") == "kernel")
        steps_traced = sorted(int(e["name"][13:]) for e in t["traceEvents"]
                              if e.get("ph") == "X" and e.get("name", "").startswith("ProfilerStep#"))
    return t, kernels, steps_traced


failures = []


def check(cond, what):
    if not cond:
        failures.append(what)


# One warm-up iteration (~1.5 ms here) against a 30 ms enable: CUPTI is on only ~20 iterations
# after the planned start (5). The window moves past it; 200 steps leave room for a loaded
# machine's slower enable.
t, kernels, steps = run(warmup=1, steps=200, start=5, delay_ms=30)
stats, warnings = t["kairos_stats"], t.get("kairos_warnings", [])
moved = stats.get("window_start_moved_iterations")
print("short warm-up: %d kernels, steps %s, moved=%s, late=%s, warnings=%s"
      % (kernels, steps, moved, stats.get("cupti_enabled_late_us"), warnings))
check(moved is not None and moved >= 1, "the start did not move (stat %s): the test is void" % moved)
if moved:
    start = 5 + moved
    check(steps == list(range(start, start + 20)),
          "steps %s, expected the 20 from %d" % (steps, start))
    msg = [w for w in warnings if "ACTIVITIES_WARMUP_ITERATIONS" in w]
    check(len(msg) == 1 and ("the window starts at iteration %d instead of 5" % start) in msg[0],
          "expected one start-moved warning, got %s" % warnings)
check(kernels == 20 * KERNELS_PER_STEP, "%d kernels, expected %d" % (kernels, 20 * KERNELS_PER_STEP))
check("cupti_enabled_late_us" not in stats, "late stat in a moved window: %s" % stats)

# The job ends (8 steps, a few ms) long before a 1 s enable: the exit flush closes the window
# at its planned start (nothing is lost by moving), and the late recording is reported.
t, kernels, steps = run(warmup=1, steps=8, start=5, delay_ms=1000)
stats, warnings = t["kairos_stats"], t.get("kairos_warnings", [])
late = stats.get("cupti_enabled_late_us", 0)
print("exit before the moved start: %d kernels, steps %s, late=%s, warnings=%s"
      % (kernels, steps, late, warnings))
# Step 8 began at the last boundary and ends where the exit closed the window.
check(steps == [5, 6, 7, 8], "steps %s, expected [5, 6, 7, 8]" % steps)
check("window_start_moved_iterations" not in stats, "moved stat kept: %s" % stats)
check(late >= 500000, "cupti_enabled_late_us %s, expected >= 500000" % late)
check(len([w for w in warnings if "us after the window opened" in w]) == 1,
      "expected one late-recording warning, got %s" % warnings)

# Forty warm-up iterations (>= 60 ms) cover a 10 ms enable: all 18 x 20 kernels, no warning.
# (A 30 ms enable left a 2x margin, which a loaded machine's late enable thread ate once.)
t, kernels, steps = run(warmup=40, steps=70, start=45, delay_ms=10)
print("long warm-up: %d kernels, steps %s, stats %s, warnings=%s"
      % (kernels, steps, t["kairos_stats"], t.get("kairos_warnings")))
check(kernels == 20 * KERNELS_PER_STEP, "long warm-up: %d kernels, expected 360" % kernels)
check(steps == list(range(45, 65)), "long warm-up: steps %s" % steps)
check("cupti_enabled_late_us" not in t["kairos_stats"] and
      "window_start_moved_iterations" not in t["kairos_stats"] and not t.get("kairos_warnings"),
      "long warm-up: unexpected stats %s / warnings %s" % (t["kairos_stats"], t.get("kairos_warnings")))
# GPU counters whose first start (60 ms here; hundreds of ms on an H100, where libnvperf_host
# loads) outlasts the warm-up: the window moves past it like for CUPTI, the warning names the
# pm_sampling source, and the counter samples (1 ms) cover the moved window from its first
# step on. Before, the window opened with no samples for its first 60 ms (on the H100: none for
# the first 234 ms of a 410 ms window).
t, kernels, steps = run(warmup=1, steps=200, start=5, delay_ms=0, pm_delay_ms=60)
stats, warnings = t["kairos_stats"], t.get("kairos_warnings", [])
moved = stats.get("window_start_moved_iterations")
ev = t["traceEvents"]
step_ts = sorted(e["ts"] for e in ev if e.get("ph") == "X" and e.get("cat") == "user_annotation"
                 and e.get("name", "").startswith("ProfilerStep#"))
samples = sorted(e["ts"] for e in ev if e.get("ph") == "C" and e.get("name") == PM_METRIC)
gap_us = samples[0] - step_ts[0] if samples and step_ts else None
print("late PM start: %d kernels, steps %s, moved=%s, %d samples, first %s us after the first "
      "step, warnings=%s" % (kernels, steps[:1] + steps[-1:], moved, len(samples), gap_us, warnings))
check(moved is not None and moved >= 1, "late PM start: the start did not move (stat %s)" % moved)
check(any("source pm_sampling was recording only after" in w for w in warnings),
      "late PM start: no warning naming pm_sampling: %s" % warnings)
check(kernels == 20 * KERNELS_PER_STEP, "late PM start: %d kernels, expected 360" % kernels)
check(gap_us is not None and gap_us <= 2000,  # a sample is 1 ms; pre-fix: 60000
      "late PM start: the first sample came %s us after the window's first step" % gap_us)
for f in failures:
    print("FAIL", f)
sys.exit(1 if failures else 0)
