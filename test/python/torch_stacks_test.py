"""Python stacks with torch: `python3 -m kairos run --with-stack` of an unmodified training
script with an iteration window. Every cpu_op lies inside the Python frame that was running
when it started: aten::linear's innermost frame is nn.Linear's forward (called through
Module._call_impl from the script's step), aten::sum's is the script's step (out.sum() is a
C method, not a Python frame); python_function ids are dense and parents enclose children."""
import collections
import os
import subprocess
import sys

import kt_util as k

k.need_torch()
f = k.Failures()
d = k.tmpdir()
script = os.path.join(k.HERE, "stack_train.py")
cmd = [sys.executable, "-m", "kairos", "run", "--with-stack", "--config",
       "PROFILE_START_ITERATION=4;ACTIVITIES_WARMUP_ITERATIONS=2;ACTIVITIES_ITERATIONS=2;"
       "KAIROS_SUMMARY=off;"
       "KAIROS_ITERATION_FALLBACK_TIMEOUT_MS=600000;ACTIVITIES_LOG_FILE=%s" % os.path.join(d, "t.json"),
       script, "8"]
p = subprocess.run(cmd, env=k.env(), capture_output=True, text=True, timeout=600)
f.eq(p.returncode, 0, "run exit status (stderr: %s)" % p.stderr[-2000:])
path = k.trace_of(p)
f.check(path is not None, "trace written")
if path:
    t = k.load(path)
    steps = sorted(k.step_ranges(t))
    f.eq(steps, ["ProfilerStep#4", "ProfilerStep#5"], "iteration window")
    py = [e for e in t["traceEvents"] if e.get("cat") == "python_function"]
    f.check(len(py) > 0, "python_function events (%d)" % len(py))
    by_id = {e["args"]["Python id"]: e for e in py}
    f.check(sorted(by_id) == list(range(1, len(py) + 1)), "ids 1..N, each once")
    eps = 0.002

    def encloses(a, b):
        return a["tid"] == b["tid"] and a["ts"] <= b["ts"] + eps and \
            a["ts"] + a["dur"] >= b["ts"] + b["dur"] - eps

    bad = [e for e in py if e["args"].get("Python parent id") is not None and
           not encloses(by_id[e["args"]["Python parent id"]], e)]
    f.eq(len(bad), 0, "parents enclose their children")

    def innermost(op):
        best = None
        for e in py:
            if encloses(e, op) and (best is None or e["args"]["Python id"] > best["args"]["Python id"]):
                best = e
        return best

    def chain(e):
        names = []
        while e is not None:
            names.append(e["name"])
            e = by_id.get(e["args"].get("Python parent id"))
        return names

    ops = [e for e in t["traceEvents"] if e.get("cat") == "cpu_op"]
    lin = [e for e in ops if e["name"] == "aten::linear"]
    sums = [e for e in ops if e["name"] == "aten::sum"]
    f.eq(len(lin), 4, "two aten::linear per step, two steps")
    step_name = "%s(19): step" % script
    for op in lin:
        c = chain(innermost(op))
        f.check(c and c[0].endswith("): forward") and "nn/modules/linear.py(" in c[0] and
                any("): _call_impl" in n for n in c) and step_name in c,
                "aten::linear under Linear.forward <- _call_impl <- step: %s" % c[:4])
    # out.sum() in step (a C method: no frame of its own) and the bias gradients' sums in
    # loss.backward() (under Tensor.backward's frame).
    # (Counting outermost ops only: PyTorch may run an aten::sum inside an aten::sum.)
    outer = [op for op in sums if not any(o is not op and encloses(o, op) for o in ops)]
    fwd = [op for op in outer if chain(innermost(op))[:1] == [step_name]]
    f.eq(len(fwd), 2, "one outermost aten::sum directly under step per step")
    rest = [chain(innermost(op)) for op in sums
            if chain(innermost(op))[:1] != [step_name]]
    f.check(len(rest) > 0 and all(any("_tensor.py(" in n and n.endswith("): backward") for n in c)
                                  and step_name in c for c in rest),
            "the other aten::sum ops are under Tensor.backward <- step (%d)" % len(rest))
    # Python frames are on the thread that ran them, with the ops.
    f.eq({e["tid"] for e in lin} <= {e["tid"] for e in py}, True, "ops' thread has Python frames")

# --with-modules: Module._call_impl frames are named as PyTorch names module calls.
cmd[4] = "--with-modules"
p = subprocess.run(cmd, env=k.env(), capture_output=True, text=True, timeout=600)
f.eq(p.returncode, 0, "--with-modules run exit status (stderr: %s)" % p.stderr[-2000:])
path = k.trace_of(p)
f.check(path is not None, "--with-modules trace written")
if path:
    t = k.load(path)
    py = [e for e in t["traceEvents"] if e.get("cat") == "python_function"]
    by_id = {e["args"]["Python id"]: e for e in py}
    mods = collections.Counter(e["name"] for e in py if e["name"].startswith("nn.Module: "))
    f.eq(dict(mods), {"nn.Module: Sequential_0": 2, "nn.Module: Linear_0": 2,
                      "nn.Module: ReLU_0": 2, "nn.Module: Linear_1": 2},
         "one scope per module call, numbered per class in order of first call")
    f.eq(sum(1 for e in py if e["name"].endswith("): _call_impl")), 0, "no _call_impl frame left")
    lin = [e for e in t["traceEvents"] if e.get("cat") == "cpu_op" and e["name"] == "aten::linear"]
    chains = []
    for op in lin:
        inner = max((e for e in py if e["tid"] == op["tid"] and e["ts"] <= op["ts"] + 0.002 and
                     e["ts"] + e["dur"] >= op["ts"] + op["dur"] - 0.002),
                    key=lambda e: e["args"]["Python id"])
        c = []
        while inner is not None:
            c.append(inner["name"])
            inner = by_id.get(inner["args"].get("Python parent id"))
        chains.append(c)
    f.check(len(chains) == 4 and all(
        c[0].endswith("): forward") and c[1] in ("nn.Module: Linear_0", "nn.Module: Linear_1") and
        "nn.Module: Sequential_0" in c for c in chains),
        "aten::linear under Linear.forward <- nn.Module: Linear_N <- ... nn.Module: Sequential_0")
    f.eq([w for w in t.get("kairos_warnings", []) if "MODULES" in w], [], "no modules warning")
f.done()
