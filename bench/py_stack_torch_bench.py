"""Python stacks on an op-heavy torch script: kairos (ops through the torch bridge and every
Python call and return through the tracer) against PyTorch's legacy profiler with
with_stack=True (ops with their Python stacks), on the same script in one process:
  bare      no RecordFunction callback, no hook (the job without any profiler): the baseline
  none      bridge attached, no window (the job under kairos run outside windows)
  kairos    a kairos window with PROFILE_WITH_STACK recording ops and Python frames
  nolines   the same without the operator line source (no "Python line" on ops): the
            difference to `kairos` is what the ops' lines cost
  legacy    torch.autograd.profiler.profile(use_kineto=False, with_stack=True), bridge off
The workload is a Python loop: per iteration two small Python helpers and three torch ops on
1-element tensors (N iterations). Modes are interleaved round-robin for ROUNDS rounds, best
round kept, thread CPU time. Output: ns per iteration, the overhead over `bare`, and the
headline ratio kairos overhead / legacy overhead (issue 27 target: < 1).
Usage: PYTHONPATH=build/python python3 bench/py_stack_torch_bench.py [N] [ROUNDS]"""
import gc
import sys
import tempfile
import time

import torch

import kairos
from kairos import _pytracer, _stacks, _torch

N = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
ROUNDS = int(sys.argv[2]) if len(sys.argv) > 2 else 9
torch.set_num_threads(1)
a = torch.zeros(1)
b = torch.ones(1)


def scale(x):
    return torch.mul(x, 0.5)


def update(x, y):
    return torch.add(scale(x), y)


def work():
    x = a
    for _ in range(N):
        x = update(x, b)
        x = torch.relu(x)
    return x


def timed():
    # The legacy profiler leaves many objects behind: collected here, not inside the next
    # mode's timed loop.
    gc.collect()
    t0 = time.thread_time_ns()
    work()
    return (time.thread_time_ns() - t0) / N


# The traces; removed once the last one is read (and at exit if the run fails before).
_out = tempfile.TemporaryDirectory(prefix="kairos_pystack_torch_bench_")
out = _out.name
kairos.init("PROFILE_WITH_STACK=true\nKAIROS_SUMMARY=off\nKAIROS_HOST_METRICS_INTERVAL_MS=0\n"
            "ACTIVITIES_LOG_FILE=%s/t.json" % out)
_torch.attach(record_shapes=False)
_stacks.attach()
bridge = _torch._bridge


def none():
    bridge.kairos_torch_install(0, 0, 0)
    try:
        return timed()
    finally:
        bridge.kairos_torch_uninstall()


def bare():
    bridge.kairos_torch_uninstall()
    return timed()


def recording():
    bridge.kairos_torch_install(0, 0, 0)
    kairos.start()
    _stacks.install_now()
    try:
        return timed()
    finally:
        kairos.flush()
        bridge.kairos_torch_uninstall()


def nolines():
    # "kairos" without the operator line source (ops record no "Python line"): its cost.
    _pytracer._line_source(False)
    try:
        return recording()
    finally:
        _pytracer._line_source(True)


def legacy():
    bridge.kairos_torch_uninstall()
    with torch.autograd.profiler.profile(use_kineto=False, with_stack=True):
        t = timed()
    # The round after the legacy profiler ran slower whichever mode came first (its teardown
    # leaves the caches cold): one untimed loop absorbs it.
    work()
    return t


modes = {"bare": bare, "none": none, "kairos": recording, "nolines": nolines, "legacy": legacy}
order = list(modes)
for f in modes.values():  # warm up
    f()
best = {k: float("inf") for k in modes}
for _ in range(ROUNDS):
    for k, f in modes.items():
        best[k] = min(best[k], f())
base = best["bare"]
import glob, json, os  # noqa: E402,E401
last = max(glob.glob(out + "/t_*.json"), key=os.path.getmtime)
with open(last) as f:
    cats = [e.get("cat") for e in json.load(f)["traceEvents"]]
_out.cleanup()
print("last kairos trace: %d cpu_op, %d python_function" % (cats.count("cpu_op"), cats.count("python_function")))
print("torch %s, Python loop of %d iterations (2 Python calls, 3 ops each), best of %d rounds, "
      "ns per iteration:" % (torch.__version__, N, ROUNDS))
for k, v in best.items():
    print("  %-8s %9.1f ns   overhead %+9.1f ns   ratio %.3f" % (k, v, v - base, v / base))
print("HEADLINE kairos stacks+ops overhead / legacy with_stack overhead %.2f (target < 1)"
      % ((best["kairos"] - base) / (best["legacy"] - base)))
ops = cats.count("cpu_op") / float(N)  # cpu_ops per iteration, nested ones included
print("HEADLINE ops' Python lines cost %+.1f ns per op (kairos - nolines, %.0f ops per iteration)"
      % ((best["kairos"] - best["nolines"]) / ops, ops))
