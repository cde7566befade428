"""File: test/gpu_check/late_enable_test.py — an iteration window whose warm-up is shorter
than enabling CUPTI takes (the real first cuptiActivityEnable can be slow): the trace must say
so (stat cupti_enabled_late_us and a warning naming ACTIVITIES_WARMUP_ITERATIONS), and a
warm-up long enough gives every kernel of the window and no warning. Found by the real-GPU
kit's dry run under load (docs/REAL_GPU.md): the first step of a window lost its GPU records
without a word. Runs examples/cuda/train_loop on the simulator with
KAIROS_SIM_CUPTI_ENABLE_DELAY_MS=30.
Usage: late_enable_test.py BUILD_DIR
"""
import glob
import json
import os
import subprocess
import sys
import tempfile

build = sys.argv[1]


def run(warmup, steps, start):
    d = tempfile.mkdtemp(prefix="kairos_late_")
    env = dict(os.environ,
               LD_LIBRARY_PATH=os.path.join(build, "sim/lib"),
               LD_PRELOAD=os.path.join(build, "lib/libkairos.so"),
               KAIROS_SIM_CUPTI_ENABLE_DELAY_MS="30",
               KAIROS_CONFIG_TEXT="PROFILE_START_ITERATION=%d;ACTIVITIES_ITERATIONS=20;"
                                  "ACTIVITIES_WARMUP_ITERATIONS=%d;ACTIVITIES_LOG_FILE=%s/t.json"
                                  % (start, warmup, d))
    subprocess.run([os.path.join(build, "examples/cuda/train_loop"), str(steps)], env=env,
                   check=True, stdout=subprocess.DEVNULL)
    traces = [f for f in glob.glob(d + "/t_*.json") if not f.endswith(".summary.json")]
    assert len(traces) == 1, traces
    t = json.load(open(traces[0]))
    kernels = sum(1 for e in t["traceEvents"] if e.get("ph") == "X" and e.get("cat") == "kernel")
    return t, kernels


failures = []
# One warm-up iteration (~1.5 ms here) against a 30 ms enable: recording is fully on only
# ~30 ms into the window.
t, kernels = run(warmup=1, steps=30, start=5)
late = t["kairos_stats"].get("cupti_enabled_late_us", 0)
warn = [w for w in t.get("kairos_warnings", []) if "ACTIVITIES_WARMUP_ITERATIONS" in w]
print("short warm-up: %d kernels, cupti_enabled_late_us=%s, warnings=%s" % (kernels, late, warn))
if not 20000 <= late <= 2000000:
    failures.append("cupti_enabled_late_us %s not in [20000, 2000000]" % late)
if len(warn) != 1 or "us after the window opened" not in warn[0]:
    failures.append("expected one late-recording warning, got %s" % t.get("kairos_warnings"))
if kernels >= 360:
    failures.append("the simulated slow enable lost nothing (%d kernels): the test is void" % kernels)
# Forty warm-up iterations (>= 60 ms) cover the enable: all 18 x 20 kernels, no warning.
t, kernels = run(warmup=40, steps=70, start=45)
late = t["kairos_stats"].get("cupti_enabled_late_us")
print("long warm-up: %d kernels, cupti_enabled_late_us=%s, warnings=%s" % (kernels, late, t.get("kairos_warnings")))
if kernels != 360:
    failures.append("long warm-up: %d kernels, expected 360" % kernels)
if late is not None or t.get("kairos_warnings"):
    failures.append("long warm-up: unexpected late stat %s / warnings %s" % (late, t.get("kairos_warnings")))
for f in failures:
    print("FAIL", f)
sys.exit(1 if failures else 0)
