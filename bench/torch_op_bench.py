"""Per-operator overhead of the torch bridge, all modes in one process and one run:
  none        no RecordFunction callback registered
  empty cb    a global callback that does nothing (PyTorch's own cost of any callback)
  empty+in    the same asking for the operator inputs (PyTorch's own cost of any callback
              that records shapes)
  floor       the floor of the work (bench/torch_floor_callback.cc, built with
              `cmake --build build --target torch_floor_callback`; the modes are skipped
              without it): two TSC reads and the op's metadata stored in a bare per-thread
              buffer, nothing else
  floor+sh    the same with the inputs read by the bridge's own capture into that buffer
  idle        bridge attached, no kairos window recording (one flag load per op)
  recording   bridge attached, a kairos window recording (kairos.start)
  rec+shapes  bridge attached with record_shapes, recording with PROFILE_REPORT_INPUT_SHAPES
  rec+flops   bridge attached with_flops, recording with PROFILE_WITH_FLOPS (aten::add has a
              formula, so every op computes one)
  rec+sh+fl   both
  rec+memory  bridge attached reporting PyTorch's allocator events, recording with
              PROFILE_PROFILE_MEMORY (each torch.add allocates its result and frees the old
              one: two [memory] events per op)
  legacy      torch.autograd.profiler.profile(use_kineto=False), bridge detached
  legacy+mem  the same with profile_memory=True
  legacy+sh   the same with record_shapes=True
  legacy+fl   the same with with_flops=True (PyTorch records shapes for it too)
The loop is TorchScript (torch.add on 1-element tensors, N per call), so each op is the
dispatcher plus RecordFunction without Python per op. Modes are interleaved round-robin for
ROUNDS rounds and the best round of each is kept, so load from other processes hits every
mode alike; times are the thread's CPU time. Output: ns per op and the overhead over `none`.
Usage: PYTHONPATH=build/python python3 bench/torch_op_bench.py [N] [ROUNDS]
(bench_all runs it through bench/torch_bridge_benchmark.py, which prints its headline lines.)"""
import ctypes
import os
import sys
import tempfile
import time

import torch

import kairos
from kairos import _torch

import torch_add_loop

N = int(sys.argv[1]) if len(sys.argv) > 1 else 20000
ROUNDS = int(sys.argv[2]) if len(sys.argv) > 2 else 15
ops, a, b = torch_add_loop.make()


def timed():
    # Thread CPU time: on a shared machine wall time mostly measures the scheduler.
    t0 = time.thread_time_ns()
    ops(a, b, N)
    return (time.thread_time_ns() - t0) / N


# Every window's trace goes here, removed at the end (and at exit if the run fails before).
_out = tempfile.TemporaryDirectory(prefix="kairos_torch_bench_")


def init(keys=""):
    """kairos.init with the mode's keys and the settings every window shares. Each kairos.init
    replaces the whole config, so each carries them all: no summary, no host sampler thread
    beside the timed loop, the trace in _out; the default per-thread buffer, as a job gets it
    (until session 17 only the first call set these, and the windows ran with the host sampler
    on and a summary written at each flush)."""
    kairos.init(keys + "\nKAIROS_SUMMARY=off\nKAIROS_HOST_METRICS_INTERVAL_MS=0\n"
                "ACTIVITIES_LOG_FILE=%s/t.json" % _out.name)


init()
_torch.attach(record_shapes=False)
bridge = _torch._bridge
bridge.kairos_torch_uninstall()


def none():
    return timed()


def empty():
    bridge.kairos_torch_install_empty()
    try:
        return timed()
    finally:
        bridge.kairos_torch_uninstall()


def empty_inputs():
    bridge.kairos_torch_install_empty_inputs()
    try:
        return timed()
    finally:
        bridge.kairos_torch_uninstall()


_FLOOR_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "build", "bench",
                           "torch_floor_callback.so")
floor_lib = ctypes.CDLL(os.environ.get("KAIROS_TORCH_FLOOR", _FLOOR_PATH)) \
    if os.path.exists(os.environ.get("KAIROS_TORCH_FLOOR", _FLOOR_PATH)) else None


def floor(shapes):
    def run():
        if floor_lib.kairos_torch_floor_install(1 if shapes else 0) != 0:
            raise SystemExit("floor callback refused")
        before = floor_lib.kairos_torch_floor_ops()
        try:
            return timed()
        finally:
            floor_lib.kairos_torch_floor_uninstall()
            # N torch.add and the TorchScript function's own scope.
            if floor_lib.kairos_torch_floor_ops() - before != N + 1:
                raise SystemExit("floor callback saw %d ops of %d"
                                 % (floor_lib.kairos_torch_floor_ops() - before, N + 1))
    return run


def idle():
    bridge.kairos_torch_install(0, 0, 0)
    try:
        return timed()
    finally:
        bridge.kairos_torch_uninstall()


def recording(shapes, flops=False):
    def run():
        bridge.kairos_torch_install(1 if shapes else 0, 0, 1 if flops else 0)
        init("PROFILE_REPORT_INPUT_SHAPES=%s\nPROFILE_WITH_FLOPS=%s"
             % ("true" if shapes else "false", "true" if flops else "false"))
        kairos.start()
        try:
            return timed()
        finally:
            kairos.flush()
            bridge.kairos_torch_uninstall()
    return run


def rec_memory():
    bridge.kairos_torch_install(0, 0, 0)
    bridge.kairos_torch_set_profile_memory(1)
    init("PROFILE_PROFILE_MEMORY=true")
    kairos.start()
    try:
        return timed()
    finally:
        kairos.flush()
        bridge.kairos_torch_set_profile_memory(0)
        bridge.kairos_torch_memory_release()  # the profiler slot back for the legacy modes
        bridge.kairos_torch_uninstall()


def legacy(shapes, flops=False, memory=False):
    def run():
        with torch.autograd.profiler.profile(use_kineto=False, record_shapes=shapes,
                                             with_flops=flops, profile_memory=memory):
            return timed()
    return run


modes = {"none": none, "empty cb": empty, "empty+in": empty_inputs}
if floor_lib is not None:
    floor_lib.kairos_torch_floor_ops.restype = ctypes.c_uint64
    modes.update({"floor": floor(False), "floor+sh": floor(True)})
modes.update({"idle": idle, "recording": recording(False),
         "rec+shapes": recording(True), "rec+flops": recording(False, True),
         "rec+sh+flops": recording(True, True), "rec+memory": rec_memory, "legacy": legacy(False),
         "legacy+shapes": legacy(True), "legacy+flops": legacy(False, True),
         "legacy+memory": legacy(False, memory=True)})
for f in modes.values():  # warm up (TorchScript profiling executor, allocations)
    f()
best = {k: float("inf") for k in modes}
for _ in range(ROUNDS):
    for k, f in modes.items():
        best[k] = min(best[k], f())
base = best["none"]
print("torch %s, TorchScript loop of %d torch.add, best of %d interleaved rounds, ns per op:"
      % (torch.__version__, N, ROUNDS))
for k, v in best.items():
    print("  %-14s %8.1f ns   overhead %+7.1f ns   ratio %.3f" % (k, v, v - base, v / base))
print("kairos recording overhead / legacy profiler overhead:  %.2f"
      % ((best["recording"] - base) / (best["legacy"] - base)))
print("kairos rec+shapes overhead / legacy+shapes overhead:   %.2f"
      % ((best["rec+shapes"] - base) / (best["legacy+shapes"] - base)))
print("floor (PyTorch's own callback cost) / legacy overhead:        %.2f   (with inputs / legacy+shapes: %.2f)"
      % ((best["empty cb"] - base) / (best["legacy"] - base),
         (best["empty+in"] - base) / (best["legacy+shapes"] - base)))
if floor_lib is not None:
    print("floor of the work / legacy overhead:                   %.2f   (with shapes / legacy+shapes: %.2f)"
          % ((best["floor"] - base) / (best["legacy"] - base),
             (best["floor+sh"] - base) / (best["legacy+shapes"] - base)))
    print("kairos overhead / floor overhead:                      %.2f   (with shapes: %.2f)"
          % ((best["recording"] - base) / (best["floor"] - base),
             (best["rec+shapes"] - base) / (best["floor+sh"] - base)))
print("kairos rec+flops overhead / legacy+flops overhead:     %.2f"
      % ((best["rec+flops"] - base) / (best["legacy+flops"] - base)))
print("kairos rec+sh+flops overhead / legacy+flops overhead:  %.2f"
      % ((best["rec+sh+flops"] - base) / (best["legacy+flops"] - base)))
print("kairos rec+memory overhead / legacy+memory overhead:   %.2f   (added by memory: kairos %.1f ns, legacy %.1f ns per op)"
      % ((best["rec+memory"] - base) / (best["legacy+memory"] - base),
         best["rec+memory"] - best["recording"], best["legacy+memory"] - best["legacy"]))
# The headline lines (bench/bench_headline.h's format; bench_all runs this script through
# bench/torch_bridge_benchmark.py): the issue 29 targets, 0.3x without shapes, 0.5x with.
for metric, mine, theirs, target in (("recording_vs_legacy", "recording", "legacy", "0.3"),
                                     ("shapes_vs_legacy_shapes", "rec+shapes", "legacy+shapes", "0.5"),
                                     ("memory_vs_legacy_memory", "rec+memory", "legacy+memory", "-")):
    print("KAIROS_HEADLINE torch_bridge_benchmark %s %.4g lower %s x"
          % (metric, (best[mine] - base) / (best[theirs] - base), target))

_out.cleanup()
