"""PyTorch allocator events (issue 25 item 4, docs/MEMORY.md "PyTorch allocator events")
against PyTorch's own profiler on Debian's CPU torch.
The same training step (an MLP's forward, backward and SGD step: every tensor it allocates
is freed by its end) runs:
  1. under torch.autograd.profiler.profile(profile_memory=True),
  2. under kairos.profile(profile_memory=True),
  3. under torch's profiler again, right after kairos' window (torch's profiler must start:
     the bridge gave the thread's profiler slot back),
  4. under kairos.profile() without profile_memory (no [memory] event, nothing installed),
  5. under `python3 -m kairos run --profile-memory` (a subprocess, same step).
The CPU [memory] events of 1, 2, 3 and 5 are the same sequence: count, Bytes and Total
Allocated of every event, in order (addresses differ between runs). Every kairos [memory]
event has PyTorch's args (Device Type 0, Device Id -1, Total Reserved as the allocator
reports it: 0 on the CPU) and the External id of the cpu_op that allocated it."""
import ctypes
import json
import os
import subprocess
import sys

import kt_util as k

k.need_torch()
sys.path.insert(0, os.environ["KAIROS_PYTHONPATH"])
import torch  # noqa: E402

import kairos  # noqa: E402

torch.manual_seed(0)
torch.set_num_threads(1)
f = k.Failures()
d = k.tmpdir()

STEP_SRC = r'''
import torch
torch.manual_seed(0)
torch.set_num_threads(1)
model = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(), torch.nn.Linear(128, 10))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
x = torch.randn(32, 64)
y = torch.randint(0, 10, (32,))


def step():
    opt.zero_grad(set_to_none=False)
    loss = torch.nn.functional.cross_entropy(model(x), y)
    loss.backward()
    del loss  # freed before the optimizer step ends the iteration (kairos run's window edge)
    opt.step()
'''
ns = {}
exec(STEP_SRC, ns)
step = ns["step"]
for _ in range(3):  # warm-up: gradients exist, nothing allocated once stays
    step()


def memory_events(trace):
    out = [e for e in trace["traceEvents"] if e.get("name") == "[memory]"]
    out.sort(key=lambda e: float(e["ts"]))
    return out


def cpu_seq(events, ops=None):
    """(Bytes, Total Allocated, allocating op) of the CPU events; op None when not asked."""
    out = []
    for e in events:
        a = e["args"]
        if a.get("Device Type") != 0:
            continue
        op = None
        if ops is not None:
            x = a.get("External id")  # none: outside every op and scope
            op = None if x is None else ops[x]["name"] if x in ops else "?"
        out.append((a["Bytes"], a["Total Allocated"], op))
    return out


def torch_seq(inner=None):
    """The step under torch's profiler with profile_memory=True. Debian's torch 1.13 has no
    Kineto, so torch.autograd.profiler.profile(profile_memory=True) is its legacy profiler;
    it is driven here through the same calls (_enable/_disable_profiler_legacy with the
    config profile() builds) to get its raw records in order: each memory_alloc record's
    Bytes and the innermost op open around it. The legacy records carry no totals; PyTorch's
    "Total Allocated" for the CPU is its allocator's counter of blocks allocated while a
    profiler asks for memory (ProfiledCPUMemoryReporter): the running sum of these Bytes from
    0, as nothing the step allocates outlives it. Returns [(Bytes, Total Allocated, op)]."""
    from torch.autograd import ProfilerConfig, ProfilerState
    cfg = ProfilerConfig(ProfilerState.CPU, False, True, False, False, False,
                         torch._C._profiler._ExperimentalConfig())
    torch.autograd._enable_profiler_legacy(cfg)
    try:
        (inner or step)()
    finally:
        records = torch.autograd._disable_profiler_legacy()
    out, total = [], 0
    for thread in records:
        stack = []
        for r in thread:
            if r.kind() == "push":
                stack.append(r.name())
            elif r.kind() == "pop" and stack:
                stack.pop()
            elif r.kind() == "memory_alloc" and r.device() == -1:
                total += r.cpu_memory_usage()
                out.append((r.cpu_memory_usage(), total, stack[-1] if stack else None))
    return out


def bytes_totals(seq):
    return [(b, t) for b, t, _ in seq]


ref = torch_seq()
f.check(len(ref) >= 20, "torch's profiler saw %d CPU memory events in the step (expected many)"
        % len(ref))
f.check(any(b < 0 for b, _, _ in ref) and any(b > 0 for b, _, _ in ref),
        "the step allocates and frees: %s" % ref[:6])
f.check(ref[-1][1] == 0, "every block the step allocates is freed in it (total back to 0): %s"
        % ref[-1:])

with kairos.profile(path=os.path.join(d, "mem.json"), profile_memory=True,
                    activities=[torch.profiler.ProfilerActivity.CPU],
                    config="KAIROS_SUMMARY=off") as p:
    step()
trace = k.load(p.traces[0])
mem = memory_events(trace)
# Ops and user scopes (PyTorch's record_function, e.g. Optimizer.zero_grad#SGD.zero_grad).
ops = {e["args"]["External id"]: e for e in k.events(trace, cat="cpu_op") +
       k.events(trace, cat="user_annotation")}
got = cpu_seq(mem, ops)
f.check(len(got) == len(ref), "kairos [memory] events %d, torch's profiler %d" % (len(got), len(ref)))
f.check(bytes_totals(got) == bytes_totals(ref),
        "kairos' sequence (Bytes, Total Allocated) equals torch's:\n kairos %s\n torch  %s"
        % (bytes_totals(got)[:10], bytes_totals(ref)[:10]))
f.check([o for _, _, o in got] == [o for _, _, o in ref],
        "every event's allocating op equals the op torch's profiler had open: %s"
        % [(a[2], b[2]) for a, b in zip(got, ref) if a[2] != b[2]][:5])

# The format: PyTorch's args, the allocating op's External id, on the thread that allocated.
for e in mem:
    a = e["args"]
    f.check(e.get("cat") == "cpu_instant_event" and e.get("ph") == "i", "instant: %s" % e)
    keys = [key for key in a if key != "External id"]  # kairos writes it first on every event
    f.check(keys[:6] == ["Device Type", "Device Id", "Addr", "Bytes", "Total Allocated",
                            "Total Reserved"], "PyTorch's keys, in order: %s" % list(a))
    f.check(a["Device Id"] == -1 and a["Total Reserved"] == 0 and a["Addr"] != 0,
            "CPU memory as PyTorch reports it: %s" % a)
    f.check("memory kind" not in a and "allocated before window" not in a,
            "no CUPTI-only args on an allocator event: %s" % a)
    if "External id" not in a:
        continue  # outside every op (a Python-level free): torch's record has no op either
    op = ops.get(a["External id"])
    f.check(op is not None and op["tid"] == e["tid"] and
            float(op["ts"]) <= float(e["ts"]) <= float(op["ts"]) + float(op["dur"]),
            "[memory] event inside the cpu_op that allocated it: %s" % a)
allocs = [e for e in mem if e["args"]["Bytes"] > 0]
sites = {ops[e["args"]["External id"]]["name"] for e in allocs if e["args"].get("External id") in ops}
f.check("aten::empty" in sites or "aten::empty_strided" in sites,
        "allocations attributed to the allocating aten op: %s" % sorted(sites))
f.check(trace.get("kairos_stats", {}).get("framework_memory_events") == len(mem),
        "kairos_stats framework_memory_events %s == %d"
        % (trace.get("kairos_stats", {}).get("framework_memory_events"), len(mem)))

# The memory analysis reads them (kairos summarize): the host's peak is the reference's,
# every allocation freed, nothing left.
summ = subprocess.run([os.environ["KAIROS_CLI"], "summarize", "--format", "json", p.traces[0]],
                      capture_output=True, text=True, timeout=120)
f.check(summ.returncode == 0, "kairos summarize: %s" % summ.stderr)
hosts = [m for m in json.loads(summ.stdout or "{}").get("memory", []) if m["device_type"] == "cpu"]
f.check(len(hosts) == 1, "one host memory entry: %s" % hosts)
if hosts:
    h = hosts[0]
    want = {"allocs": sum(1 for b, _, _ in ref if b > 0), "frees": sum(1 for b, _, _ in ref if b < 0),
            "peak_allocated_bytes": max(t for _, t, _ in ref), "end_allocated_bytes": 0,
            "not_freed_count": 0, "start_allocated_bytes": 0}
    f.check({key: h.get(key) for key in want} == want, "summary %s == %s"
            % ({key: h.get(key) for key in want}, want))

# Torch's own profiler starts right after a kairos window on the same thread, and sees the
# same step the same way (the bridge's reporter left the slot).
after = torch_seq()
f.check(after == ref, "torch's profiler after kairos: %d events, equal: %s" % (len(after), after == ref))

# One profiler slot per thread (docs/MEMORY.md): torch's profiler running when a kairos
# memory window starts keeps it (kairos records no allocator event there and counts the
# thread); torch's profiler asked to start inside a kairos memory window refuses, and starts
# once the window is over.
from kairos import _torch  # noqa: E402
taken = _torch._bridge.kairos_torch_memory_slot_taken
taken.restype = ctypes.c_uint64
before = taken()
inner_traces = []


def kairos_inside():
    with kairos.profile(path=os.path.join(d, "inner.json"), profile_memory=True,
                        config="KAIROS_SUMMARY=off") as pi:
        step()
    inner_traces.extend(pi.traces)


nested = torch_seq(kairos_inside)
f.check(nested == ref, "torch's profiler around a kairos window: unchanged (%d events)" % len(nested))
f.check(len(inner_traces) == 1 and not memory_events(k.load(inner_traces[0])),
        "kairos records no allocator event while torch's profiler holds the slot")
f.check(taken() == before + 1, "the thread counted once: %d -> %d" % (before, taken()))
refused = None
with kairos.profile(path=os.path.join(d, "outer.json"), profile_memory=True,
                    config="KAIROS_SUMMARY=off"):
    step()  # the window's first op installs the reporter
    try:
        with torch.autograd.profiler.profile(profile_memory=True):
            pass
    except RuntimeError as e:
        refused = str(e)
f.check(refused is not None and "already enabled" in refused,
        "torch's profiler inside a kairos memory window refuses: %r" % refused)
f.check(torch_seq() == ref, "and starts once the window is over")

# Without profile_memory in the trace's config: no [memory] event.
with kairos.profile(path=os.path.join(d, "nomem.json"), config="KAIROS_SUMMARY=off") as p2:
    step()
t2 = k.load(p2.traces[0])
f.check(not memory_events(t2), "no [memory] event without PROFILE_PROFILE_MEMORY: %d"
        % len(memory_events(t2)))
f.check(any(e.get("cat") == "cpu_op" for e in t2["traceEvents"]), "the ops are there")

# `python3 -m kairos run --profile-memory`: the same step in a fresh process, one window
# around step 4 (iterations counted by the optimizer's step scope).
script = os.path.join(d, "mem_step.py")
with open(script, "w") as fh:
    fh.write(STEP_SRC + "\nfor _ in range(6):\n    step()\n")
proc = subprocess.run(
    [sys.executable, "-m", "kairos", "run", "--profile-memory", "--config",
     "PROFILE_START_ITERATION=4;ACTIVITIES_ITERATIONS=1;ACTIVITIES_WARMUP_ITERATIONS=1;"
     "KAIROS_ITERATION_FALLBACK_TIMEOUT_MS=600000;KAIROS_SUMMARY=off;ACTIVITIES_LOG_FILE="
     + os.path.join(d, "run.json"), script],
    env=k.env(), capture_output=True, text=True, timeout=300)
f.check(proc.returncode == 0, "kairos run --profile-memory: %d %s" % (proc.returncode, proc.stderr))
path = k.trace_of(proc)
if path:
    rt = k.load(path)
    steps = [e for e in rt["traceEvents"] if str(e.get("name", "")).startswith("ProfilerStep#")]
    f.check(len(steps) == 1, "one step: %s" % [e["name"] for e in steps])
    run_seq = bytes_totals(cpu_seq(memory_events(rt)))
    f.check(run_seq == bytes_totals(ref), "kairos run's step equals torch's: %d vs %d events; %s vs %s"
            % (len(run_seq), len(ref), run_seq[:8], bytes_totals(ref)[:8]))
else:
    f.check(False, "kairos run printed no trace: %s" % proc.stderr)
sys.exit(f.done())
