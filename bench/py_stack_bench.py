"""Cost of Python stacks (PROFILE_WITH_STACK, docs/PYTHON_STACKS.md) on a call-heavy script,
all modes in one process and one run:
  none      no profiling hook
  py hook   an empty pure-Python sys.setprofile hook (the baseline of issue 27's target)
  idle      the kairos tracer attached, no window open (its hook is not installed)
  kairos    a kairos window with PROFILE_WITH_STACK open: every Python call and return
            recorded by the C tracer into kairos' per-thread ring
The workload is pure Python: fib(20) (21,891 calls) and 20,000 method calls, 83,784 events
(a call and a return each). Modes are interleaved round-robin for ROUNDS rounds and the best
round of each is kept, so load from other processes hits every mode alike; times are the
thread's CPU time. Output: ns per event (call or return), the overhead over `none`, and the
headline ratios: kairos / py hook, by overhead per event and by total time.
Usage: PYTHONPATH=build/python python3 bench/py_stack_bench.py [ROUNDS]"""
import os
import sys
import tempfile
import time

import kairos
from kairos import _pytracer, _stacks

ROUNDS = int(sys.argv[1]) if len(sys.argv) > 1 else 15


def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


class C:
    def m(self, x):
        return x + 1


def work():
    fib(20)
    c = C()
    for i in range(20000):
        c.m(i)


CALLS = 21891 + 20000  # fib(20) calls + method calls (work itself is outside the window)
EVENTS = 2 * CALLS


def timed():
    t0 = time.thread_time_ns()
    work()
    return time.thread_time_ns() - t0


def empty_hook(frame, event, arg):
    return None


def none():
    return timed()


def py_hook():
    sys.setprofile(empty_hook)
    try:
        return timed()
    finally:
        sys.setprofile(None)


def idle():
    assert not _pytracer.thread_hooked()
    return timed()


# The traces; removed once the last one is read (and at exit if the run fails before).
_out = tempfile.TemporaryDirectory(prefix="kairos_pystack_bench_")
out = _out.name


def recording():
    kairos.start()
    _stacks.install_now()
    assert _pytracer.thread_hooked()
    try:
        return timed()
    finally:
        kairos.flush()


kairos.init("PROFILE_WITH_STACK=true\nKAIROS_SUMMARY=off\nKAIROS_HOST_METRICS_INTERVAL_MS=0\n"
            "ACTIVITIES_LOG_FILE=%s/t.json" % out)
_stacks.attach()
work()  # warm the code objects' names and caches
modes = [("none", none), ("py hook", py_hook), ("idle", idle), ("kairos", recording)]
best = {name: float("inf") for name, _ in modes}
for _ in range(ROUNDS):
    for name, fn in modes:
        best[name] = min(best[name], fn())

# The last trace holds exactly this many frames (plus the frames of the benchmark around them).
import json  # noqa: E402
import glob  # noqa: E402
last = max(glob.glob(out + "/t_*.json"), key=os.path.getmtime)
with open(last) as f:
    frames = sum(1 for e in json.load(f)["traceEvents"] if e.get("cat") == "python_function")
_out.cleanup()

base = best["none"] / EVENTS
print("python stacks, %d events per round, best of %d rounds (thread CPU time):" % (EVENTS, ROUNDS))
for name, _ in modes:
    ns = best[name] / EVENTS
    print("  %-8s %7.1f ns/event  overhead %+7.1f ns/event" % (name, ns, ns - base))
over_k = best["kairos"] / EVENTS - base
over_p = best["py hook"] / EVENTS - base
print("  frames in the last kairos trace: %d (workload %d)" % (frames, CALLS))
print("HEADLINE kairos/py-hook overhead ratio %.2f (target <= 1.5)" % (over_k / over_p))
print("HEADLINE kairos/py-hook time ratio %.2f" % (best["kairos"] / best["py hook"]))
print("HEADLINE idle/none time ratio %.3f" % (best["idle"] / best["none"]))
