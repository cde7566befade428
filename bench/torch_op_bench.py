"""Per-operator overhead of the torch bridge, all in one process and one run:
  none       the loop with no RecordFunction callback registered
  idle       bridge attached, no kairos window recording (one flag load per op)
  recording  bridge attached, a kairos window recording (kairos.start)
  rec+shapes recording, bridge attached with record_shapes and PROFILE_REPORT_INPUT_SHAPES
  legacy     torch.autograd.profiler.profile(use_kineto=False), bridge detached
  legacy+sh  the same with record_shapes=True
Each mode: the best of REPS runs of N calls of torch.add on 1-element tensors (one aten op per
call); reported as ns per op and the overhead over `none`.
Usage: PYTHONPATH=build/python python3 bench/torch_op_bench.py [N] [REPS]"""
import ctypes
import os
import sys
import time

import torch

import kairos
from kairos import _torch

N = int(sys.argv[1]) if len(sys.argv) > 1 else 20000
REPS = int(sys.argv[2]) if len(sys.argv) > 2 else 7
torch.set_num_threads(1)
a = torch.ones(1)
b = torch.ones(1)


def loop():
    add = torch.add
    t0 = time.perf_counter_ns()
    for _ in range(N):
        add(a, b)
    return (time.perf_counter_ns() - t0) / N


def best(setup=None, teardown=None):
    times = []
    for _ in range(REPS):
        ctx = setup() if setup else None
        times.append(loop())
        if teardown:
            teardown(ctx)
    return min(times)


res = {}
loop()  # warm up
res["none"] = best()
kairos.init("KAIROS_CPU_BUFFER_KB_PER_THREAD=262144\nKAIROS_SUMMARY=off\n"
            "ACTIVITIES_LOG_FILE=/tmp/kairos_torch_bench.json")
_torch.attach(record_shapes=False)
res["idle"] = best()


def start(_=None):
    kairos.start()


def stop(_):
    kairos.flush()


res["recording"] = best(start, stop)
_torch._bridge.kairos_torch_uninstall()
_torch._bridge.kairos_torch_install(1, 1)
kairos.init("PROFILE_REPORT_INPUT_SHAPES=true")
res["rec+shapes"] = best(start, stop)
_torch._bridge.kairos_torch_uninstall()
res["none (again)"] = best()


def legacy_on(shapes):
    def f():
        p = torch.autograd.profiler.profile(use_kineto=False, record_shapes=shapes)
        p.__enter__()
        return p
    return f


def legacy_off(p):
    p.__exit__(None, None, None)


res["legacy"] = best(legacy_on(False), legacy_off)
res["legacy+shapes"] = best(legacy_on(True), legacy_off)
base = min(res["none"], res["none (again)"])
print("torch %s, %d ops x %d reps (best), ns per op:" % (torch.__version__, N, REPS))
for k, v in res.items():
    print("  %-14s %8.1f ns   overhead %+7.1f ns   ratio %.3f" % (k, v, v - base, v / base))
print("kairos recording overhead / legacy profiler overhead: %.2f"
      % ((res["recording"] - base) / max(res["legacy"] - base, 1e-9)))
print("kairos rec+shapes overhead / legacy+shapes overhead:  %.2f"
      % ((res["rec+shapes"] - base) / max(res["legacy+shapes"] - base, 1e-9)))
