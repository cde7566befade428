"""Bad input around the torch bridge and kairos.profile:
- the bridge attached twice: the second attach is a no-op (returns False) and every op is
  recorded once, not twice;
- kairos.profile nested, and from a second thread while one is active: RuntimeError, the
  outer one still writes its trace;
- an exception inside a kairos.profile block: the trace is written, the scopes the
  exception unwound are closed (no "finished": false);
- `python3 -m kairos run` on a script that raises inside the window: exit status 1, the
  trace is written, its ranges closed;
- a schedule: exactly the active steps are ProfilerStep ranges and on_trace_ready gets the path."""
import os
import subprocess
import sys
import threading

import kt_util as k

k.need_torch()
sys.path.insert(0, os.environ["KAIROS_PYTHONPATH"])
import torch  # noqa: E402

import kairos  # noqa: E402

f = k.Failures()
d = k.tmpdir()

f.eq(kairos.attach_torch(record_shapes=True), True, "first attach")
f.eq(kairos.attach_torch(record_shapes=True), False, "second attach is a no-op")

a = torch.ones(16, 8)
b = torch.ones(8, 4)
p1 = os.path.join(d, "once.json")
with kairos.profile(path=p1, record_shapes=True) as p:
    for _ in range(5):
        torch.mm(a, b)
f.eq(len(p.traces), 1, "one trace")
t = k.load(p.traces[0])
f.eq(len(k.events(t, cat="cpu_op", name="aten::mm")), 5, "5 mm calls recorded once each")
f.eq(k.events(t, cat="cpu_op", name="aten::mm")[0]["args"].get("Input Dims"), [[16, 8], [8, 4]],
     "record_shapes=True gives Input Dims")

# Nested and concurrent kairos.profile.
p2 = os.path.join(d, "outer.json")
errors = []
with kairos.profile(path=p2) as outer:
    try:
        with kairos.profile(path=os.path.join(d, "inner.json")):
            pass
    except RuntimeError as e:
        errors.append(str(e))

    def other():
        try:
            with kairos.profile(path=os.path.join(d, "thread.json")):
                pass
        except RuntimeError as e:
            errors.append(str(e))
    th = threading.Thread(target=other)
    th.start()
    th.join()
    torch.mm(a, b)
f.eq(len(errors), 2, "nested and second-thread kairos.profile raise")
f.check(all("another kairos.profile is active" in e for e in errors), "clear message")
written = sorted(os.listdir(d))
f.check(len(outer.traces) == 1 and not [n for n in written if n.startswith(("inner", "thread"))],
        "outer trace written, inner and thread ones not: %s" % written)
outer_mm = k.events(k.load(outer.traces[0]), cat="cpu_op", name="aten::mm")
f.eq(len(outer_mm), 1, "outer trace has its op")
f.check(outer_mm and "Input Dims" not in outer_mm[0]["args"],
        "record_shapes=False: no Input Dims although the bridge gets inputs")

# Exception inside the block.
p3 = os.path.join(d, "raised.json")
raised = kairos.profile(path=p3)
try:
    with raised:
        with torch.autograd.profiler.record_function("failing_scope"):
            torch.mm(a, b)
            raise ValueError("inside the window")
except ValueError:
    pass
t = k.load(raised.traces[0]) if raised.traces else {"traceEvents": []}
scope = k.events(t, cat="user_annotation", name="failing_scope")
f.eq(len(scope), 1, "trace written after an exception, with the scope")
f.check(scope and "finished" not in scope[0].get("args", {}), "the scope was closed by the exception")

# Schedule: wait 1, warmup 1, active 2 -> steps 2 and 3 of the block are recorded.
p4 = os.path.join(d, "sched.json")
ready = []
opt_model = torch.nn.Linear(4, 2)
opt = torch.optim.SGD(opt_model.parameters(), lr=0.1)
with kairos.profile(path=p4, schedule=kairos.schedule(wait=1, warmup=1, active=2),
                    on_trace_ready=ready.append) as p:
    start_iter = kairos.current_iteration()
    for i in range(6):
        opt_model(torch.ones(3, 4)).sum().backward()
        opt.step()  # does not count while kairos.profile counts with p.step()
        p.step()
f.check(len(ready) == 1 and ready[0].startswith(os.path.join(d, "sched_")),
        "on_trace_ready called once with the path: %s" % ready)
steps = sorted(k.step_ranges(k.load(ready[0]))) if ready else []
f.eq(steps, ["ProfilerStep#%d" % (start_iter + 2), "ProfilerStep#%d" % (start_iter + 3)],
     "exactly the active steps")

# kairos run on a script that raises inside the window.
p5 = os.path.join(d, "run_raise.json")
cfg = ("PROFILE_START_ITERATION=1;ACTIVITIES_ITERATIONS=5;KAIROS_SUMMARY=off;"
       "KAIROS_ITERATION_FALLBACK_TIMEOUT_MS=600000;ACTIVITIES_LOG_FILE=" + p5)
r = k.run_kairos(os.path.join(k.HERE, "fixed_train.py"), ["6", "-1", os.path.join(d, "x.json"), "2"],
                 config=cfg, check=False)
f.eq(r.returncode, 1, "kairos run exits 1 when the script raises")
f.check("boom at step 2" in r.stderr, "the script's traceback is printed")
p5 = k.trace_of(r)
f.check(p5 is not None and os.path.exists(p5), "trace written although the script raised")
if p5:
    t = k.load(p5)
    fail = k.events(t, cat="user_annotation", name="about_to_fail")
    f.eq(len(fail), 1, "the scope the exception left is in the trace")
    f.check(fail and "finished" not in fail[0].get("args", {}), "closed at the exception")
    f.eq(sorted(k.step_ranges(t)), ["ProfilerStep#1", "ProfilerStep#2"], "steps up to the failure")
f.done()
