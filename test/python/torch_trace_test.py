"""`python3 -m kairos run` on an unmodified script (fixed_train.py) with an iteration window:
- ProfilerStep#N present for exactly the configured iterations (3..5);
- per-step counts of every aten op in the kairos trace equal those of PyTorch's legacy
  profiler (use_kineto=False) run around the same step (4);
- a known matmul (64x32 @ 32x16) has Input Dims [[64, 32], [32, 16]] and Input type
  ["float", "float"], and agrees with the legacy profiler's input_shapes;
- cpu_op args carry Sequence number / Fwd thread id / Record function id; backward ops
  exist; user scopes are user_annotation."""
import os

import kt_util as k

k.need_torch()
f = k.Failures()
d = k.tmpdir()
trace_path = os.path.join(d, "trace.json")  # kairos writes trace_<pid>.json
legacy_path = os.path.join(d, "legacy.json")
cfg = ("PROFILE_START_ITERATION=3;ACTIVITIES_ITERATIONS=3;ACTIVITIES_WARMUP_ITERATIONS=1;"
       "PROFILE_REPORT_INPUT_SHAPES=true;KAIROS_SUMMARY=off;ACTIVITIES_LOG_FILE=" + trace_path +
       ";KAIROS_ITERATION_FALLBACK_TIMEOUT_MS=600000")  # torch import can be slow under load
p = k.run_kairos(os.path.join(k.HERE, "fixed_train.py"), ["8", "4", legacy_path], config=cfg)
print(p.stderr.strip())
written = k.trace_of(p)
f.check(written is not None and written.startswith(os.path.join(d, "trace_")), "trace path printed")
t = k.load(written)
legacy = k.load(legacy_path)

steps = k.step_ranges(t)
f.eq(sorted(steps), ["ProfilerStep#3", "ProfilerStep#4", "ProfilerStep#5"], "ProfilerStep ranges")
f.check(all("finished" not in s.get("args", {}) for s in steps.values()), "ProfilerSteps finished")

ours = k.ops_within(t, steps["ProfilerStep#4"])
theirs = legacy["counts"]
f.check(len(theirs) >= 10, "legacy profiler saw %d distinct aten ops" % len(theirs))
f.eq(dict(sorted(ours.items())), dict(sorted(theirs.items())), "per-op counts of step 4 vs legacy profiler")
for n in ("ProfilerStep#3", "ProfilerStep#5"):
    f.eq(dict(sorted(k.ops_within(t, steps[n]).items())), dict(sorted(theirs.items())),
         "%s has the same op counts (same work every step)" % n)

mm = [e for e in k.ops_within(t, steps["ProfilerStep#4"]) if e == "aten::mm"]
known = [e for e in k.events(t, cat="cpu_op", name="aten::mm")
         if e["args"].get("Input Dims") == [[64, 32], [32, 16]]]
f.eq(len(known), 3, "aten::mm with Input Dims [[64, 32], [32, 16]] once per recorded step")
if known:
    f.eq(known[0]["args"].get("Input type"), ["float", "float"], "known matmul Input type")
f.check([[64, 32], [32, 16]] in legacy["mm_shapes"], "legacy profiler agrees on the matmul shapes")

ops = k.events(t, cat="cpu_op", prefix="aten::")
f.check(all("Record function id" in e["args"] for e in ops), "every cpu_op has Record function id")
seq = [e for e in ops if "Sequence number" in e["args"]]
f.check(len(seq) > 0 and all("Fwd thread id" in e["args"] for e in seq),
        "ops with a Sequence number carry Fwd thread id (%d)" % len(seq))
bwd = k.events(t, cat="cpu_op", prefix="autograd::engine::evaluate_function")
f.check(len(bwd) > 0, "backward functions recorded (%d)" % len(bwd))
ua = {e["name"] for e in k.events(t, cat="user_annotation")}
f.check({"known_matmul", "forward", "Optimizer.step#SGD.step"} <= ua, "user scopes are user_annotation")
f.check(not k.events(t, cat="cpu_op", name="forward"), "user scopes are not cpu_op")
f.done()
