"""File: test/gpu_check/exit_teardown_test.py — a job that exits while a window with GPU
counters (PM sampling) records. Found on a real H100 (docs/REAL_GPU.md): the exit flush closed
the window after libnvperf_host's static destructors had run, its cuptiProfilerHostDeinitialize
double-freed, and glibc aborted the job. The simulator's libcupti aborts the same way when a
host object is deinitialized after its own exit teardown. kairos registers its exit flush again
once libcupti and the PM sampler are loaded, so the window is written while they are whole.
Checks: the job exits 0, the trace is written with its steps, the PM samples and the kernels.
Runs examples/cuda/train_loop on the simulator; the window (iterations 20..59) is still open when
the loop ends at 40.
Usage: exit_teardown_test.py BUILD_DIR
"""
import glob
import json
import os
import subprocess
import sys
import tempfile

build = sys.argv[1]
failures = []
# Both directories (traces, summaries) are removed when the checks are done.
with tempfile.TemporaryDirectory(prefix="kairos_exit_pm_") as d, \
        tempfile.TemporaryDirectory(prefix="kairos_exit_early_") as d2:
    env = dict(os.environ,
               LD_LIBRARY_PATH=os.path.join(build, "sim/lib"),
               LD_PRELOAD=os.path.join(build, "lib/libkairos.so"),
               KAIROS_CONFIG_TEXT="PROFILE_START_ITERATION=20;ACTIVITIES_ITERATIONS=40;"
                                  "ACTIVITIES_WARMUP_ITERATIONS=10;"
                                  "CUPTI_PM_SAMPLING_METRICS=sm__cycles_active.avg.pct_of_peak_sustained_elapsed;"
                                  "KAIROS_PM_SAMPLING_INTERVAL_US=1000;ACTIVITIES_LOG_FILE=%s/t.json" % d)
    p = subprocess.run([os.path.join(build, "examples/cuda/train_loop"), "40"], env=env,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        failures.append("train_loop exited %d: %s" % (p.returncode, p.stderr.strip()[-600:]))
    traces = [f for f in glob.glob(d + "/t_*.json") if not f.endswith(".summary.json")]
    if len(traces) != 1:
        failures.append("expected one trace, found %s" % traces)
    else:
        t = json.load(open(traces[0]))
        ev = t["traceEvents"]
        steps = sorted(int(e["name"][13:]) for e in ev if e.get("ph") == "X"
                       and e.get("cat") == "user_annotation" and e.get("name", "").startswith("ProfilerStep#"))
        kernels = sum(1 for e in ev if e.get("ph") == "X" and e.get("cat") == "kernel")
        samples = sum(1 for e in ev if e.get("ph") == "C"
                      and e.get("name") == "sm__cycles_active.avg.pct_of_peak_sustained_elapsed")
        print("steps %s..%s, %d kernels, %d SM-active samples" % (steps[:1], steps[-1:], kernels, samples))
        # The window opens at 20 (or later, if the first CUPTI enable outlasted the warm-up) and is
        # closed by the exit: every step from its start on, the last (40) begun at the loop's last
        # boundary and ended by the exit, without kernels.
        if not steps or steps != list(range(steps[0], 41)) or steps[0] < 20:
            failures.append("steps %s, expected a run ending at 40" % steps)
        if kernels != 18 * (len(steps) - 1):
            failures.append("%d kernels, expected %d" % (kernels, 18 * (len(steps) - 1)))
        if samples == 0:
            failures.append("no SM-active counter samples in the trace")
    # A job that ends before its iteration window's start: no trace, and one warning that says so
    # (the process's own config waits for its first step instead of falling back, so silence here
    # would leave the user guessing).
    env2 = dict(env, KAIROS_CONFIG_TEXT="PROFILE_START_ITERATION=100;ACTIVITIES_ITERATIONS=5;"
                                        "ACTIVITIES_LOG_FILE=%s/t.json" % d2)
    p2 = subprocess.run([os.path.join(build, "examples/cuda/train_loop"), "40"], env=env2,
                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    warn = [l for l in p2.stderr.splitlines() if "before the window at iteration" in l]
    print("early exit: rc %d, files %s, warnings %s" % (p2.returncode, os.listdir(d2), warn))
    if p2.returncode != 0:
        failures.append("early exit: train_loop exited %d" % p2.returncode)
    if os.listdir(d2):
        failures.append("early exit: files written: %s" % os.listdir(d2))
    if warn != ["kairos: warning: the process exits at iteration 40, before the window at "
                "iteration 100 opened: no trace"]:
        failures.append("early exit: expected one warning, got %s" % warn)
for f in failures:
    print("FAIL", f)
sys.exit(1 if failures else 0)
