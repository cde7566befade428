#!/usr/bin/env python3
"""File: tools/gpu-check/check_trace.py — the real-GPU kit's trace checker (docs/REAL_GPU.md).

Checks one kairos Kineto JSON trace against what its workload issued, with the standard
library only (it runs on the GPU machine's own Python). Each check prints one line
"PASS|FAIL name: detail"; the exit status is 1 when any check failed. --json FILE also writes
the checks and the measured values for the results table.

  --steps N                exactly N ProfilerStep# ranges
  --kernels SUBSTR=N ...   exactly N kernels whose name contains SUBSTR
  --memcpy N               exactly N gpu_memcpy events
  --pm SUBSTR              PM sampling: kernels named SUBSTR carry "SM active %", and the
                           window's mean SM-active counter agrees with the trace's own busy
                           fraction (--pm-tolerance points, default 10)
  --memory ALLOCS,FREES    [memory] events: exactly ALLOCS with Bytes > 0 and FREES with
                           Bytes < 0 (frees are written with negative Bytes, as PyTorch does)
  --torch                  cpu_op events present, and every kernel launched under an op is
                           linked to it (its launch's "External id" names a cpu_op)
  --cpu-only               the workload ran without a GPU: no GPU events expected
  --python-stacks          python_function events with "Python id", and cpu_ops nested in them
Always: every kernel and memcpy is correlated to exactly one CPU launch and one flow pair, no
GPU activity starts before its launch, every launch lies inside a ProfilerStep# range of its
thread (when the trace has steps), and the trace counted no dropped records.
"""
import argparse
import collections
import json
import sys

GPU_CATS = ("kernel", "gpu_memcpy", "gpu_memset")
LAUNCH_CATS = ("cuda_runtime", "cuda_driver")


def load(path):
    with open(path, "rb") as f:
        return json.load(f)


class Checks:
    def __init__(self):
        self.rows = []
        self.values = {}

    def add(self, name, ok, detail):
        self.rows.append({"check": name, "ok": bool(ok), "detail": detail})
        print("%s %s: %s" % ("PASS" if ok else "FAIL", name, detail))

    def failed(self):
        return [r for r in self.rows if not r["ok"]]


def check_links(ev, c, cpu_only):
    launches = collections.defaultdict(list)
    for e in ev:
        if e.get("ph") == "X" and e.get("cat") in LAUNCH_CATS and "correlation" in e.get("args", {}):
            launches[e["args"]["correlation"]].append(e)
    starts = collections.Counter(e.get("id") for e in ev if e.get("ph") == "s" and e.get("cat") == "ac2g")
    ends = collections.Counter(e.get("id") for e in ev if e.get("ph") == "f" and e.get("cat") == "ac2g")
    gpu = [e for e in ev if e.get("ph") == "X" and e.get("cat") in GPU_CATS]
    uncorrelated, bad_flow, early = 0, 0, []
    for g in gpu:
        corr = g.get("args", {}).get("correlation")
        ls = launches.get(corr, [])
        if len(ls) != 1:
            uncorrelated += 1
            continue
        if starts.get(corr, 0) != 1 or ends.get(corr, 0) != 1:
            bad_flow += 1
        if g["ts"] < ls[0]["ts"]:
            early.append(ls[0]["ts"] - g["ts"])
    c.values["gpu_events"] = len(gpu)
    if cpu_only:
        c.add("cpu_only", not gpu, "%d GPU events in a CPU-only run" % len(gpu))
        return launches
    c.add("correlated", uncorrelated == 0 and gpu,
          "%d of %d GPU events have exactly one CPU launch" % (len(gpu) - uncorrelated, len(gpu)))
    c.add("one_flow_per_launch", bad_flow == 0 and gpu,
          "%d GPU events without exactly one ac2g start and end" % bad_flow)
    c.add("gpu_after_launch", not early,
          "%d GPU events start before their launch%s" %
          (len(early), " (by up to %.3f us)" % max(early) if early else ""))
    return launches


def check_in_steps(ev, launches, c):
    steps = collections.defaultdict(list)
    for e in ev:
        if (e.get("ph") == "X" and e.get("cat") != "gpu_user_annotation"
                and str(e.get("name", "")).startswith("ProfilerStep#")):
            steps[(e.get("pid"), e.get("tid"))].append((e["ts"], e["ts"] + e.get("dur", 0)))
    if not steps:
        return
    outside = 0
    total = 0
    for ls in launches.values():
        for l in ls:
            spans = steps.get((l.get("pid"), l.get("tid")))
            if not spans:
                continue
            total += 1
            end = l["ts"] + l.get("dur", 0)
            if not any(a <= l["ts"] and end <= b for a, b in spans):
                outside += 1
    c.add("launches_inside_steps", outside == 0,
          "%d of %d launches on stepping threads lie outside every ProfilerStep# range" % (outside, total))


def check_pm(ev, substr, tol, c):
    kernels = [e for e in ev if e.get("ph") == "X" and e.get("cat") == "kernel"]
    target = [k for k in kernels if substr in k.get("name", "")]
    with_pm = [k for k in target if "SM active %" in k.get("args", {})]
    c.values["pm_kernels_with_sm_active"] = len(with_pm)
    if with_pm:
        mean_k = sum(k["args"]["SM active %"] for k in with_pm) / len(with_pm)
        c.values["pm_kernel_sm_active_mean"] = round(mean_k, 2)
    c.add("pm_kernel_attribution", target and len(with_pm) >= len(target) // 2,
          "%d of %d %s kernels carry SM active %% (mean %s)" %
          (len(with_pm), len(target), substr, c.values.get("pm_kernel_sm_active_mean")))
    samples = sorted((e["ts"], list(e.get("args", {}).values())[0]) for e in ev
                     if e.get("ph") == "C" and e.get("name", "").startswith("sm__cycles_active"))
    if len(samples) < 3 or not kernels:
        c.add("pm_window_busy", False, "%d SM-active samples" % len(samples))
        return
    lo, hi = samples[0][0], samples[-1][0]
    busy = 0.0
    for k in kernels:
        a, b = max(k["ts"], lo), min(k["ts"] + k.get("dur", 0), hi)
        busy += max(0.0, b - a)
    frac = 100.0 * busy / (hi - lo)
    mean = sum(v for _, v in samples[:-1]) / (len(samples) - 1)
    c.values.update(pm_samples=len(samples), busy_pct_from_trace=round(frac, 2),
                    sm_active_pct_mean=round(mean, 2))
    c.add("pm_window_busy", abs(mean - frac) <= tol,
          "mean SM active %.1f%% over %d samples vs the trace's kernel-busy %.1f%% (tolerance %g)" %
          (mean, len(samples), frac, tol))


def check_memory(ev, spec, c):
    allocs, frees = (int(x) for x in spec.split(","))
    mem = [e for e in ev if e.get("name") == "[memory]"]
    a = sum(1 for e in mem if e.get("args", {}).get("Bytes", 0) > 0)
    f = sum(1 for e in mem if e.get("args", {}).get("Bytes", 0) < 0)
    c.values.update(memory_allocs=a, memory_frees=f)
    c.add("memory_events", a == allocs and f == frees,
          "%d allocations, %d frees (expected %d, %d)" % (a, f, allocs, frees))


def check_torch(ev, launches, c, cpu_only):
    ops = {e.get("args", {}).get("External id") for e in ev
           if e.get("ph") == "X" and e.get("cat") == "cpu_op"}
    ops.discard(None)
    c.values["cpu_ops"] = len(ops)
    c.add("torch_ops", len(ops) > 0, "%d cpu_op events with an External id" % len(ops))
    kernels = [e for e in ev if e.get("ph") == "X" and e.get("cat") == "kernel"]
    linked = 0
    for k in kernels:
        ls = launches.get(k.get("args", {}).get("correlation"), [])
        if ls and ls[0].get("args", {}).get("External id") in ops:
            linked += 1
    c.values.update(kernels=len(kernels), kernels_under_ops=linked)
    c.add("torch_kernels_under_ops", linked == len(kernels) and (kernels or cpu_only),
          "%d of %d kernels linked to their cpu_op by External id" % (linked, len(kernels)))


def check_python_stacks(ev, c):
    frames = [e for e in ev if e.get("ph") == "X" and e.get("cat") == "python_function"]
    with_id = sum(1 for f in frames if "Python id" in f.get("args", {}))
    by_tid = collections.defaultdict(list)
    for f in frames:
        by_tid[(f.get("pid"), f.get("tid"))].append((f["ts"], f["ts"] + f.get("dur", 0)))
    ops = [e for e in ev if e.get("ph") == "X" and e.get("cat") == "cpu_op"]
    under = sum(1 for o in ops if any(a <= o["ts"] and o["ts"] + o.get("dur", 0) <= b
                                     for a, b in by_tid.get((o.get("pid"), o.get("tid")), [])))
    c.values.update(python_functions=len(frames), ops_under_frames=under)
    c.add("python_stacks", frames and with_id == len(frames) and under > 0,
          "%d python_function events (%d with a Python id), %d of %d cpu_ops inside a frame" %
          (len(frames), with_id, under, len(ops)))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[2])
    p.add_argument("trace")
    p.add_argument("--steps", type=int)
    p.add_argument("--kernels", nargs="*", default=[])
    p.add_argument("--memcpy", type=int)
    p.add_argument("--pm")
    p.add_argument("--pm-tolerance", type=float, default=10.0)
    p.add_argument("--memory")
    p.add_argument("--torch", action="store_true")
    p.add_argument("--cpu-only", action="store_true")
    p.add_argument("--python-stacks", action="store_true")
    p.add_argument("--json")
    a = p.parse_args()
    c = Checks()
    try:
        t = load(a.trace)
        ev = t["traceEvents"]
    except (OSError, ValueError, KeyError) as e:
        c.add("readable", False, "%s: %s" % (a.trace, e))
        ev = None
    if ev is not None:
        stats = t.get("kairos_stats") or {}
        dropped = {k: v for k, v in stats.items() if "drop" in k and isinstance(v, (int, float)) and v}
        c.add("no_drops", not dropped, json.dumps(dropped) if dropped else "no dropped records")
        late = stats.get("cupti_enabled_late_us")
        c.add("recording_on_at_window_start", not late,
              "GPU recording fully on %s us after the window opened" % late if late else
              "GPU recording on before the window opened")
        if a.steps is not None:
            # CPU steps only: a GPU's trace of a PyTorch job also projects each step onto the
            # GPU (gpu_user_annotation, as Kineto does; seen on an H100).
            n = sum(1 for e in ev if e.get("ph") == "X" and e.get("cat") != "gpu_user_annotation"
                    and str(e.get("name", "")).startswith("ProfilerStep#"))
            c.add("steps", n == a.steps, "%d ProfilerStep# ranges (expected %d)" % (n, a.steps))
        for spec in a.kernels:
            sub, _, want = spec.rpartition("=")
            n = sum(1 for e in ev if e.get("ph") == "X" and e.get("cat") == "kernel" and sub in e.get("name", ""))
            c.add("kernels[%s]" % sub, n == int(want), "%d (expected %s)" % (n, want))
        if a.memcpy is not None:
            n = sum(1 for e in ev if e.get("ph") == "X" and e.get("cat") == "gpu_memcpy")
            c.add("memcpy", n == a.memcpy, "%d (expected %d)" % (n, a.memcpy))
        launches = check_links(ev, c, a.cpu_only)
        check_in_steps(ev, launches, c)
        if a.pm:
            check_pm(ev, a.pm, a.pm_tolerance, c)
        if a.memory:
            check_memory(ev, a.memory, c)
        if a.torch:
            check_torch(ev, launches, c, a.cpu_only)
        if a.python_stacks:
            check_python_stacks(ev, c)
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"trace": a.trace, "checks": c.rows, "values": c.values}, f, indent=1)
    return 1 if c.failed() else 0


if __name__ == "__main__":
    sys.exit(main())
